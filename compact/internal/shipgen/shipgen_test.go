package shipgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact/internal/opsgen"
	"github.com/strata-memory/strata/tiktoken"
)

func TestSameSeedSameSession(t *testing.T) {
	a, b := Generate(11, Standard()), Generate(11, Standard())
	if !bytes.Equal(a.OpenAI(), b.OpenAI()) || !bytes.Equal(a.Anthropic(), b.Anthropic()) {
		t.Fatal("one seed gave two sessions")
	}
	if !slices.Equal(a.Labels, b.Labels) {
		t.Fatal("one seed gave two label sets")
	}
	if c := Generate(12, Standard()); bytes.Equal(a.OpenAI(), c.OpenAI()) {
		t.Fatal("two seeds gave one session")
	}
}

func TestBothFormsParse(t *testing.T) {
	tr := Generate(4, Standard())
	var msgs []struct {
		Role       string `json:"role"`
		ToolCalls  []any  `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
	}
	if err := json.Unmarshal(tr.OpenAI(), &msgs); err != nil {
		t.Fatalf("OpenAI form: %v", err)
	}
	var body struct {
		System   string            `json:"system"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(tr.Anthropic(), &body); err != nil {
		t.Fatalf("Anthropic form: %v", err)
	}
	if msgs[0].Role != "system" || body.System == "" || len(body.Messages) < 10 {
		t.Fatalf("forms too short: %d OpenAI messages, %d Anthropic", len(msgs), len(body.Messages))
	}
	calls, results := 0, 0
	for _, m := range msgs {
		calls += len(m.ToolCalls)
		if m.Role == "tool" {
			results++
		}
	}
	if calls != tr.ToolCalls || results != tr.ToolCalls {
		t.Errorf("OpenAI form: %d calls and %d results for %d tool calls", calls, results, tr.ToolCalls)
	}
}

// TestCallsAnswered checks that each call's result comes in the next
// message in the same order, and that roles follow one another as both
// serializers need.
func TestCallsAnswered(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		tr := Generate(seed, Standard())
		ms := tr.Messages
		if ms[0].Role != "user" {
			t.Fatalf("seed %d: first message is %s", seed, ms[0].Role)
		}
		if last := ms[len(ms)-1]; last.Role != "assistant" || len(last.Calls) > 0 {
			t.Errorf("seed %d: the session does not end with the agent's answer", seed)
		}
		ids := map[string]bool{}
		n := 0
		for i, m := range ms {
			prev := ""
			if i > 0 {
				prev = ms[i-1].Role
			}
			switch m.Role {
			case "user":
				if i > 0 && prev != "assistant" {
					t.Fatalf("seed %d: message %d: user after %s", seed, i, prev)
				}
			case "assistant":
				next := ""
				if i+1 < len(ms) {
					next = ms[i+1].Role
				}
				if len(m.Calls) == 0 {
					if next != "" && next != "user" {
						t.Fatalf("seed %d: message %d: answer followed by %s", seed, i, next)
					}
					continue
				}
				if next != "tool" || len(ms[i+1].Results) != len(m.Calls) {
					t.Fatalf("seed %d: message %d: calls not answered", seed, i)
				}
				for k, c := range m.Calls {
					r := ms[i+1].Results[k]
					if r.CallID != c.ID {
						t.Fatalf("seed %d: message %d: result %d answers %q, not %q", seed, i, k, r.CallID, c.ID)
					}
					if ids[c.ID] {
						t.Fatalf("seed %d: call id %q twice", seed, c.ID)
					}
					ids[c.ID] = true
					if c.Writes() && r.Failed() {
						t.Errorf("seed %d: a write failed", seed)
					}
					if c.Name == "read_file" || c.Name == "search" {
						if !r.Read {
							t.Errorf("seed %d: %s not marked as a read", seed, c.Name)
						}
					}
				}
				n += len(m.Calls)
			case "tool":
				if prev != "assistant" || len(ms[i-1].Calls) == 0 {
					t.Fatalf("seed %d: message %d: results of nothing", seed, i)
				}
			default:
				t.Fatalf("seed %d: role %q", seed, m.Role)
			}
		}
		if n != tr.ToolCalls {
			t.Errorf("seed %d: ToolCalls says %d, counted %d", seed, tr.ToolCalls, n)
		}
	}
}

// spot is one piece of text of a session with the class of its place
// ("" when it is of no class: the system prompt, the agent's text and
// commands, a failed command's context lines).
type spot struct {
	msg, item, line int
	what            string
	class           opsgen.Class
	writePath       bool // the path argument of a write
	text            string
}

// spots cuts a session into its places; a result line by line.
func spots(tr *opsgen.Transcript) []spot {
	ps := []spot{{msg: -1, line: -1, what: "system", text: tr.System}}
	for i, m := range tr.Messages {
		switch m.Role {
		case "user":
			ps = append(ps, spot{msg: i, line: -1, what: "user", class: opsgen.UserTurn, text: m.Text})
		case "assistant":
			ps = append(ps, spot{msg: i, line: -1, what: "assistant", text: m.Text})
			for k, c := range m.Calls {
				for _, a := range c.Args {
					s := spot{msg: i, item: k, line: -1, what: c.Name + "." + a.Key, text: a.Value}
					if c.Writes() {
						s.class = opsgen.FileWritten
						s.writePath = a.Key == "path"
					}
					ps = append(ps, s)
				}
			}
		case "tool":
			for k, r := range m.Results {
				errs := map[int]bool{}
				for _, e := range r.ErrLines {
					errs[e] = true
				}
				for n, l := range strings.Split(r.Output, "\n") {
					s := spot{msg: i, item: k, line: n, what: "result", text: l}
					switch {
					case errs[n]:
						s.class = opsgen.ErrorLine
					case !r.Failed():
						s.class = opsgen.PassingOutput
					}
					ps = append(ps, s)
				}
			}
		}
	}
	return ps
}

// checkContract checks the label contract: every label occurs, only in
// places of its class, and no label is part of another.
func checkContract(t *testing.T, name string, tr *opsgen.Transcript) {
	t.Helper()
	ps := spots(tr)
	var all strings.Builder
	for _, p := range ps {
		all.WriteString(p.text)
		all.WriteByte(0)
	}
	joined := all.String()
	bad := 0
	fail := func(format string, a ...any) {
		bad++
		if bad <= 25 {
			t.Errorf(name+": "+format, a...)
		}
	}
	seen := map[string]bool{}
	for _, l := range tr.Labels {
		if seen[l.Text] {
			fail("%q planted twice", l.Text)
		}
		seen[l.Text] = true
		if !strings.ContainsAny(l.Text, "0123456789-_.:/()[]") {
			fail("%q has neither digit nor punctuation", l.Text)
		}
		if !strings.Contains(joined, l.Text) {
			fail("%s %s %q occurs nowhere", l.Class, l.Kind, l.Text)
			continue
		}
		type where struct{ msg, item int }
		var at []where
		first := true
		for _, p := range ps {
			if !strings.Contains(p.text, l.Text) {
				continue
			}
			at = append(at, where{p.msg, p.item})
			switch {
			case l.Class == opsgen.FileWritten && l.Kind == "path":
				if first && !p.writePath {
					fail("written path %q first named in %s (message %d)", l.Text, p.what, p.msg)
				}
				if p.what == "user" || p.what == "assistant" || p.what == "system" {
					fail("written path %q named in %s (message %d)", l.Text, p.what, p.msg)
				}
			case p.class != l.Class:
				fail("%s %s %q in %s of class %q (message %d, line %d): %s", l.Class, l.Kind, l.Text, p.what, p.class, p.msg, p.line, clip(p.text))
			}
			first = false
		}
		if l.Class != opsgen.ErrorLine && !(l.Class == opsgen.FileWritten && l.Kind == "path") {
			for _, w := range at[1:] {
				if w != at[0] {
					fail("%s %s %q in two places (messages %d and %d)", l.Class, l.Kind, l.Text, at[0].msg, w.msg)
					break
				}
			}
		}
	}
	for i, a := range tr.Labels {
		for j, b := range tr.Labels {
			if i != j && strings.Contains(b.Text, a.Text) {
				fail("%q is part of %q", a.Text, b.Text)
			}
		}
	}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

func TestLabelContract(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8}
	if testing.Short() {
		seeds = seeds[:3]
	}
	for _, seed := range seeds {
		checkContract(t, fmt.Sprintf("standard seed %d", seed), Generate(seed, Standard()))
	}
	if !testing.Short() {
		checkContract(t, "long seed 1", Generate(1, Long()))
	}
}

// TestErrLines checks the failure lines: in range, sorted, on every
// failed result, and holding every error_line identifier.
func TestErrLines(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		tr := Generate(seed, Standard())
		var errText strings.Builder
		failed, withErr := 0, 0
		for _, m := range tr.Messages {
			for _, r := range m.Results {
				lines := strings.Split(r.Output, "\n")
				if !sort.IntsAreSorted(r.ErrLines) || len(slices.Compact(slices.Clone(r.ErrLines))) != len(r.ErrLines) {
					t.Errorf("seed %d: result %s: error lines not sorted and unique", seed, r.CallID)
				}
				for _, e := range r.ErrLines {
					if e < 0 || e >= len(lines) {
						t.Fatalf("seed %d: result %s: error line %d of %d", seed, r.CallID, e, len(lines))
					}
					errText.WriteString(lines[e])
					errText.WriteByte('\n')
				}
				if r.Failed() {
					failed++
					if len(r.ErrLines) == 0 {
						t.Errorf("seed %d: result %s failed without error lines: %s", seed, r.CallID, clip(r.Output))
					}
				}
				if len(r.ErrLines) > 0 {
					withErr++
				}
			}
		}
		for _, l := range tr.Labels {
			if l.Class == opsgen.ErrorLine && !strings.Contains(errText.String(), l.Text) {
				t.Errorf("seed %d: %q is on no error line", seed, l.Text)
			}
		}
		if failed < 8 || withErr <= failed {
			t.Errorf("seed %d: %d failed results, %d with error lines; want at least 8 failed and some reads that show a failure", seed, failed, withErr)
		}
	}
}

// TestErrorLinesInLongOutputs checks that most error_line identifiers
// sit in long outputs, among many lines that report nothing.
func TestErrorLinesInLongOutputs(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		tr := Generate(seed, Standard())
		var long strings.Builder
		for _, m := range tr.Messages {
			for _, r := range m.Results {
				n := strings.Count(r.Output, "\n") + 1
				if len(r.ErrLines) > 0 && n >= 80 && n-len(r.ErrLines) >= 25 {
					long.WriteString(r.Output)
					long.WriteByte(0)
				}
			}
		}
		in, all := 0, 0
		for _, l := range tr.Labels {
			if l.Class == opsgen.ErrorLine {
				all++
				if strings.Contains(long.String(), l.Text) {
					in++
				}
			}
		}
		if in*100 < all*55 {
			t.Errorf("seed %d: %d of %d error_line identifiers in long outputs", seed, in, all)
		}
	}
}

// summary tells a session's size and its labels per class and kind.
func summary(tr *opsgen.Transcript, tokens int) string {
	byClass, byKind := map[opsgen.Class]int{}, map[string]int{}
	for _, l := range tr.Labels {
		byClass[l.Class]++
		byKind[string(l.Class)+"/"+l.Kind]++
	}
	var kinds []string
	for k, n := range byKind {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	var b strings.Builder
	fmt.Fprintf(&b, "%d tokens, %d bytes, %d tool calls, %d messages;", tokens, len(tr.OpenAI()), tr.ToolCalls, len(tr.Messages))
	for _, c := range opsgen.Classes {
		fmt.Fprintf(&b, " %s %d", c, byClass[c])
	}
	b.WriteString("\n  " + strings.Join(kinds, ", "))
	return b.String()
}

func TestSizes(t *testing.T) {
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		name           string
		o              opsgen.Options
		seeds          []uint64
		lo, hi         int // o200k tokens of the OpenAI form
		callLo, callHi int
		classLo        map[opsgen.Class]int
		classHi        map[opsgen.Class]int
	}
	ws := []want{{"standard", Standard(), []uint64{1, 2}, 300_000, 380_000, 110, 145,
		map[opsgen.Class]int{opsgen.ErrorLine: 35, opsgen.PassingOutput: 50, opsgen.FileWritten: 20, opsgen.UserTurn: 20},
		map[opsgen.Class]int{opsgen.ErrorLine: 90, opsgen.PassingOutput: 160, opsgen.FileWritten: 70, opsgen.UserTurn: 70}}}
	if !testing.Short() {
		ws = append(ws, want{"long", Long(), []uint64{1}, 800_000, 1_000_000, 340, 420,
			map[opsgen.Class]int{opsgen.ErrorLine: 100, opsgen.PassingOutput: 150, opsgen.FileWritten: 60, opsgen.UserTurn: 60},
			map[opsgen.Class]int{opsgen.ErrorLine: 260, opsgen.PassingOutput: 450, opsgen.FileWritten: 200, opsgen.UserTurn: 200}})
	}
	for _, w := range ws {
		for _, seed := range w.seeds {
			tr := Generate(seed, w.o)
			n := tok.Count(string(tr.OpenAI()))
			t.Logf("%s seed %d: %s", w.name, seed, summary(tr, n))
			if n < w.lo || n > w.hi {
				t.Errorf("%s seed %d: %d tokens, want %d-%d", w.name, seed, n, w.lo, w.hi)
			}
			if tr.ToolCalls < w.callLo || tr.ToolCalls > w.callHi {
				t.Errorf("%s seed %d: %d tool calls, want %d-%d", w.name, seed, tr.ToolCalls, w.callLo, w.callHi)
			}
			byClass := map[opsgen.Class]int{}
			for _, l := range tr.Labels {
				byClass[l.Class]++
			}
			for _, c := range opsgen.Classes {
				if byClass[c] < w.classLo[c] || byClass[c] > w.classHi[c] {
					t.Errorf("%s seed %d: %d %s identifiers, want %d-%d", w.name, seed, byClass[c], c, w.classLo[c], w.classHi[c])
				}
			}
		}
	}
}
