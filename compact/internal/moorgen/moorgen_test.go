package moorgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact/internal/opsgen"
	"github.com/strata-memory/strata/tiktoken"
)

// small is a quick session for the tests that need many of them.
var small = opsgen.Options{ToolCalls: 40, OutputScale: 0.3}

func TestDeterministic(t *testing.T) {
	for _, o := range []opsgen.Options{small, Standard()} {
		for _, seed := range []uint64{1, 7, 1 << 40} {
			if o == Standard() && seed != 1 {
				continue
			}
			a, b := Generate(seed, o), Generate(seed, o)
			if !bytes.Equal(a.OpenAI(), b.OpenAI()) || !bytes.Equal(a.Anthropic(), b.Anthropic()) {
				t.Fatalf("seed %d: two runs differ", seed)
			}
			if fmt.Sprint(a.Labels) != fmt.Sprint(b.Labels) || a.ToolCalls != b.ToolCalls {
				t.Fatalf("seed %d: labels or call counts differ", seed)
			}
			if c := Generate(seed+1, o); bytes.Equal(a.OpenAI(), c.OpenAI()) {
				t.Fatalf("seeds %d and %d give the same session", seed, seed+1)
			}
		}
	}
}

// ---- the label contract, checked on the serialized OpenAI form ----

type where int

const (
	wSystem where = iota
	wUser
	wAssistant
	wCall  // arguments of a call that does not write
	wWrite // arguments of write_file and replace_in_file
	wError // a failure line of a failed result
	wPass  // any other line of a result
)

var whereName = []string{"system", "user", "assistant", "call", "write", "error line", "passing output"}

var classHome = map[opsgen.Class]where{opsgen.ErrorLine: wError, opsgen.PassingOutput: wPass, opsgen.FileWritten: wWrite, opsgen.UserTurn: wUser}

type spot struct {
	w    where
	text string
}

// spots parses the OpenAI body into texts in order, each with its place.
// The failure lines of a tool message come from the transcript's record
// of the result its tool_call_id names.
func spots(t *testing.T, tr *opsgen.Transcript) []spot {
	t.Helper()
	results := map[string]opsgen.Result{}
	for _, m := range tr.Messages {
		for _, r := range m.Results {
			results["call_"+r.CallID] = r
		}
	}
	var msgs []struct {
		Role      string  `json:"role"`
		Content   *string `json:"content"`
		ToolCalls []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
	}
	if err := json.Unmarshal(tr.OpenAI(), &msgs); err != nil {
		t.Fatal(err)
	}
	var out []spot
	for i, m := range msgs {
		text := ""
		if m.Content != nil {
			text = *m.Content
		}
		switch m.Role {
		case "system":
			if i != 0 {
				t.Fatalf("system message at %d", i)
			}
			out = append(out, spot{wSystem, text})
		case "user":
			out = append(out, spot{wUser, text})
		case "assistant":
			out = append(out, spot{wAssistant, text})
			for _, c := range m.ToolCalls {
				var args map[string]string
				if err := json.Unmarshal([]byte(c.Function.Arguments), &args); err != nil {
					t.Fatalf("arguments of %s: %v", c.Function.Name, err)
				}
				w := wCall
				if c.Function.Name == "write_file" || c.Function.Name == "replace_in_file" {
					w = wWrite
				}
				keys := make([]string, 0, len(args))
				for k := range args {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					out = append(out, spot{w, args[k]})
				}
			}
		case "tool":
			r, ok := results[m.ToolCallID]
			if !ok || r.Output != text {
				t.Fatalf("tool message %s does not match its result", m.ToolCallID)
			}
			errs := map[int]bool{}
			for _, k := range r.ErrLines {
				errs[k] = true
			}
			for k, l := range strings.Split(text, "\n") {
				w := wPass
				if errs[k] && r.Exit != 0 {
					w = wError
				}
				out = append(out, spot{w, l})
			}
		default:
			t.Fatalf("role %q", m.Role)
		}
	}
	return out
}

// found is where a label occurs: every kind of place, and the first.
type found struct {
	in    map[where]bool
	first where
	any   bool
}

// find finds each label in every spot, by substring. Labels are indexed
// by their first four bytes so each text is scanned once.
func find(labels []opsgen.Label, ss []spot) []found {
	idx := map[string][]int{}
	for i, l := range labels {
		idx[l.Text[:4]] = append(idx[l.Text[:4]], i)
	}
	fs := make([]found, len(labels))
	for i := range fs {
		fs[i].in = map[where]bool{}
	}
	for _, s := range ss {
		for i := 0; i+4 <= len(s.text); i++ {
			for _, c := range idx[s.text[i:i+4]] {
				if strings.HasPrefix(s.text[i:], labels[c].Text) {
					if !fs[c].any {
						fs[c].any, fs[c].first = true, s.w
					}
					fs[c].in[s.w] = true
				}
			}
		}
	}
	return fs
}

var kinds = map[string]bool{"url": true, "hostport": true, "code": true, "site": true, "test": true, "hash": true, "uuid": true, "id": true, "path": true}

func knownClass(c opsgen.Class) bool { _, ok := classHome[c]; return ok }

// contractViolations lists every break of the label contract in tr.
func contractViolations(t *testing.T, tr *opsgen.Transcript) []string {
	var bad []string
	seen := map[string]bool{}
	for _, l := range tr.Labels {
		switch {
		case len(l.Text) < 4:
			bad = append(bad, fmt.Sprintf("label %q is too short to check", l.Text))
		case seen[l.Text]:
			bad = append(bad, fmt.Sprintf("label %q listed twice", l.Text))
		case !kinds[l.Kind]:
			bad = append(bad, fmt.Sprintf("label %q has kind %q", l.Text, l.Kind))
		case !knownClass(l.Class):
			bad = append(bad, fmt.Sprintf("label %q has class %q", l.Text, l.Class))
		case strings.ContainsAny(l.Text, "<>&\"\\\n"):
			// JSON escapes these; a label must read the same in the
			// serialized bytes.
			bad = append(bad, fmt.Sprintf("label %q holds a character JSON escapes", l.Text))
		}
		seen[l.Text] = true
	}
	if len(bad) > 0 {
		return bad
	}
	byLen := append([]opsgen.Label(nil), tr.Labels...)
	sort.Slice(byLen, func(i, j int) bool { return len(byLen[i].Text) < len(byLen[j].Text) })
	for i, a := range byLen {
		for _, b := range byLen[i+1:] {
			if strings.Contains(b.Text, a.Text) {
				bad = append(bad, fmt.Sprintf("label %q is inside label %q", a.Text, b.Text))
			}
		}
	}
	ss := spots(t, tr)
	fs := find(tr.Labels, ss)
	for i, l := range tr.Labels {
		f, home := fs[i], classHome[l.Class]
		if !f.in[home] {
			bad = append(bad, fmt.Sprintf("%s label %q (%s) is in no %s place", l.Class, l.Text, l.Kind, whereName[home]))
			continue
		}
		if l.Class == opsgen.FileWritten && l.Kind == "path" {
			if f.first != wWrite {
				bad = append(bad, fmt.Sprintf("written path %q is named (in a %s place) before it is written", l.Text, whereName[f.first]))
			}
			continue
		}
		for w := range f.in {
			if w != home {
				bad = append(bad, fmt.Sprintf("%s label %q (%s) also occurs in a %s place", l.Class, l.Text, l.Kind, whereName[w]))
			}
		}
	}
	return bad
}

func checkContract(t *testing.T, tr *opsgen.Transcript) {
	t.Helper()
	if bad := contractViolations(t, tr); len(bad) > 0 {
		t.Fatalf("%d violations, the first: %s", len(bad), strings.Join(bad[:min(5, len(bad))], "; "))
	}
}

func TestLabelContract(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		tr, dropped := generate(seed, Standard())
		checkContract(t, tr)
		// The generator takes back a label that chance put in a wrong
		// place; that must stay rare.
		if dropped > len(tr.Labels)/100 {
			t.Errorf("seed %d: %d labels taken back of %d", seed, dropped, len(tr.Labels))
		}
	}
	for seed := uint64(3); seed <= 12; seed++ {
		checkContract(t, Generate(seed, small))
	}
}

// TestManySeeds runs short sessions over many seeds and output scales,
// tiny ones included, through the whole contract.
func TestManySeeds(t *testing.T) {
	scales := []float64{0.02, 0.3, 1, 2.5}
	for seed := uint64(100); seed < 140; seed++ {
		o := opsgen.Options{ToolCalls: 1 + int(seed%37), OutputScale: scales[seed%4]}
		tr, _ := generate(seed, o)
		if tr.ToolCalls < o.ToolCalls {
			t.Fatalf("seed %d: %d calls, asked for at least %d", seed, tr.ToolCalls, o.ToolCalls)
		}
		checkContract(t, tr)
	}
}

// TestContractCheckCanFail plants breaches of the contract in a session and
// checks that each is reported.
func TestContractCheckCanFail(t *testing.T) {
	first := func(tr *opsgen.Transcript, c opsgen.Class, kind string) opsgen.Label {
		for _, l := range tr.Labels {
			if l.Class == c && (kind == "" || l.Kind == kind) {
				return l
			}
		}
		t.Fatalf("no %s label", c)
		return opsgen.Label{}
	}
	cases := map[string]func(tr *opsgen.Transcript){
		"user label in assistant text": func(tr *opsgen.Transcript) {
			u := first(tr, opsgen.UserTurn, "")
			for i, m := range tr.Messages {
				if m.Role == "assistant" {
					tr.Messages[i].Text += " " + u.Text
					return
				}
			}
		},
		"error label in a call argument": func(tr *opsgen.Transcript) {
			e := first(tr, opsgen.ErrorLine, "")
			for i, m := range tr.Messages {
				if len(m.Calls) > 0 && !m.Calls[0].Writes() {
					tr.Messages[i].Calls[0].Args[0].Value += " " + e.Text
					return
				}
			}
		},
		"failure line not recorded": func(tr *opsgen.Transcript) {
			for i, m := range tr.Messages {
				for j, r := range m.Results {
					if len(r.ErrLines) > 0 {
						tr.Messages[i].Results[j].ErrLines = nil
					}
				}
			}
		},
		"passing label on a failure line": func(tr *opsgen.Transcript) {
			p := first(tr, opsgen.PassingOutput, "")
			for i, m := range tr.Messages {
				for j, r := range m.Results {
					if len(r.ErrLines) > 0 {
						lines := strings.Split(r.Output, "\n")
						lines[r.ErrLines[0]] += " " + p.Text
						tr.Messages[i].Results[j].Output = strings.Join(lines, "\n")
						return
					}
				}
			}
		},
		"label inside another": func(tr *opsgen.Transcript) {
			p := first(tr, opsgen.PassingOutput, "")
			tr.Labels = append(tr.Labels, opsgen.Label{Text: p.Text[:len(p.Text)-1], Class: opsgen.PassingOutput, Kind: p.Kind})
		},
		"written content named again": func(tr *opsgen.Transcript) {
			w := first(tr, opsgen.FileWritten, "code")
			tr.Messages[len(tr.Messages)-1].Text += " " + w.Text
		},
	}
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		tr := Generate(5, opsgen.Options{ToolCalls: 80, OutputScale: 0.3})
		cases[name](tr)
		if len(contractViolations(t, tr)) == 0 {
			t.Errorf("%s: not reported", name)
		}
	}
}

func TestErrLines(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		tr := Generate(seed, Standard())
		failed := 0
		for _, m := range tr.Messages {
			for _, r := range m.Results {
				n := strings.Count(r.Output, "\n") + 1
				prev := -1
				for _, i := range r.ErrLines {
					if i < 0 || i >= n || i <= prev {
						t.Fatalf("seed %d: failure line %d of a %d-line output (after %d)", seed, i, n, prev)
					}
					prev = i
				}
				// The rule: a result has failure lines exactly when its
				// command exited non-zero.
				if (r.Exit != 0) != (len(r.ErrLines) > 0) {
					t.Fatalf("seed %d: exit %d with %d failure lines:\n%s", seed, r.Exit, len(r.ErrLines), r.Output)
				}
				if r.Read && r.Exit != 0 {
					t.Fatalf("seed %d: a read failed", seed)
				}
				if r.Exit != 0 {
					failed++
				}
			}
		}
		if failed < 8 {
			t.Errorf("seed %d: only %d failed commands", seed, failed)
		}
	}
}

func TestSizes(t *testing.T) {
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	type size struct {
		name             string
		seed             uint64
		o                opsgen.Options
		callLo, callHi   int
		tokenLo, tokenHi int
	}
	sizes := []size{
		{"standard", 1, Standard(), 110, 145, 300_000, 380_000},
		{"standard", 2, Standard(), 110, 145, 300_000, 380_000},
		{"long", 1, Long(), 340, 420, 800_000, 1_000_000},
	}
	for _, s := range sizes {
		if s.name == "long" && testing.Short() {
			continue
		}
		tr := Generate(s.seed, s.o)
		n := tok.Count(string(tr.OpenAI()))
		t.Logf("%s seed %d: %d tool calls, %d tokens", s.name, s.seed, tr.ToolCalls, n)
		if tr.ToolCalls < s.callLo || tr.ToolCalls > s.callHi {
			t.Errorf("%s seed %d: %d tool calls, want %d to %d", s.name, s.seed, tr.ToolCalls, s.callLo, s.callHi)
		}
		if n < s.tokenLo || n > s.tokenHi {
			t.Errorf("%s seed %d: %d tokens, want %d to %d", s.name, s.seed, n, s.tokenLo, s.tokenHi)
		}
		calls := 0
		for _, m := range tr.Messages {
			calls += len(m.Calls)
		}
		if calls != tr.ToolCalls {
			t.Errorf("%s: ToolCalls is %d, the messages hold %d", s.name, tr.ToolCalls, calls)
		}
		if tr.System == "" {
			t.Errorf("%s: no system prompt", s.name)
		}
	}
}

// TestAnthropicForm checks the Anthropic body: roles alternate strictly,
// the first is the user's, and every tool_use is answered by a
// tool_result in the next message, which holds nothing else.
func TestAnthropicForm(t *testing.T) {
	for _, seed := range []uint64{1, 2, 9} {
		o := Standard()
		if seed == 9 {
			o = small
		}
		var body struct {
			System   string `json:"system"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(Generate(seed, o).Anthropic(), &body); err != nil {
			t.Fatal(err)
		}
		if body.System == "" || len(body.Messages) == 0 || body.Messages[0].Role != "user" {
			t.Fatalf("seed %d: bad start", seed)
		}
		var pending map[string]bool
		for i, m := range body.Messages {
			if i > 0 && m.Role == body.Messages[i-1].Role {
				t.Fatalf("seed %d: two %s messages in a row at %d", seed, m.Role, i)
			}
			var blocks []struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
				Text      string `json:"text"`
			}
			if m.Content[0] == '"' {
				if m.Role != "user" {
					t.Fatalf("seed %d: %s message with plain content", seed, m.Role)
				}
				if pending != nil {
					t.Fatalf("seed %d: user text at %d while tool uses are unanswered", seed, i)
				}
				continue
			}
			if err := json.Unmarshal(m.Content, &blocks); err != nil || len(blocks) == 0 {
				t.Fatalf("seed %d: message %d: %v", seed, i, err)
			}
			switch m.Role {
			case "assistant":
				if pending != nil {
					t.Fatalf("seed %d: assistant at %d while tool uses are unanswered", seed, i)
				}
				uses := map[string]bool{}
				for _, b := range blocks {
					switch b.Type {
					case "tool_use":
						uses[b.ID] = true
					case "text":
						if b.Text == "" {
							t.Fatalf("seed %d: empty text block at %d", seed, i)
						}
					default:
						t.Fatalf("seed %d: assistant block %q", seed, b.Type)
					}
				}
				if len(uses) > 0 {
					pending = uses
				}
			case "user":
				if pending == nil {
					t.Fatalf("seed %d: tool results at %d answer nothing", seed, i)
				}
				for _, b := range blocks {
					if b.Type != "tool_result" || !pending[b.ToolUseID] {
						t.Fatalf("seed %d: message %d holds a %s block for %q", seed, i, b.Type, b.ToolUseID)
					}
					delete(pending, b.ToolUseID)
				}
				if len(pending) > 0 {
					t.Fatalf("seed %d: %d tool uses unanswered at %d", seed, len(pending), i)
				}
				pending = nil
			}
		}
		if last := body.Messages[len(body.Messages)-1]; last.Role != "assistant" || pending != nil {
			t.Fatalf("seed %d: the session does not end with the agent", seed)
		}
	}
}

func TestLabelCounts(t *testing.T) {
	minimum := map[opsgen.Class]int{opsgen.ErrorLine: 30, opsgen.PassingOutput: 100, opsgen.FileWritten: 15, opsgen.UserTurn: 12}
	for seed := uint64(1); seed <= 2; seed++ {
		tr := Generate(seed, Standard())
		n := map[opsgen.Class]int{}
		k := map[string]int{}
		for _, l := range tr.Labels {
			n[l.Class]++
			k[string(l.Class)+"/"+l.Kind]++
		}
		t.Logf("seed %d: %v", seed, n)
		for _, c := range opsgen.Classes {
			if n[c] < minimum[c] {
				t.Errorf("seed %d: %d %s labels, want at least %d", seed, n[c], c, minimum[c])
			}
		}
		for _, want := range []string{"error_line/site", "error_line/test", "error_line/id", "passing_output/hash", "file_written/path", "user_turn/url"} {
			if k[want] == 0 {
				t.Errorf("seed %d: no %s label", seed, want)
			}
		}
	}
}

// TestBaseNames checks the world: no file's base name ends another's, so a
// site planted for one ("uplink.c:214") can never be read inside a site of
// the other.
func TestBaseNames(t *testing.T) {
	fs := allFiles()
	for _, a := range fs {
		for _, b := range fs {
			x, y := path.Base(a), path.Base(b)
			if x != y && strings.HasSuffix(y, x) {
				t.Errorf("%s ends %s", x, y)
			}
		}
	}
}
