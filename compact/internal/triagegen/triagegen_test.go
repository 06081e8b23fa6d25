package triagegen

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

func TestDeterministic(t *testing.T) {
	a, b := Generate(7, Standard()), Generate(7, Standard())
	if !bytes.Equal(a.OpenAI(), b.OpenAI()) || !bytes.Equal(a.Anthropic(), b.Anthropic()) {
		t.Fatal("the same seed gave different sessions")
	}
	c := Generate(8, Standard())
	if bytes.Equal(a.OpenAI(), c.OpenAI()) || bytes.Equal(a.Anthropic(), c.Anthropic()) {
		t.Fatal("different seeds gave the same session")
	}
}

func TestValidJSON(t *testing.T) {
	tr := Generate(3, Standard())
	var msgs []map[string]any
	if err := json.Unmarshal(tr.OpenAI(), &msgs); err != nil {
		t.Fatalf("OpenAI: %v", err)
	}
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	if err := json.Unmarshal(tr.Anthropic(), &body); err != nil {
		t.Fatalf("Anthropic: %v", err)
	}
	if len(msgs) < 2 || len(body.Messages) < 2 {
		t.Fatalf("too few messages: %d, %d", len(msgs), len(body.Messages))
	}
}

// TestPairs checks that every call is answered by the next message, in
// order, and that roles alternate as the serializers need.
func TestPairs(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		tr := Generate(seed, Standard())
		if len(tr.Messages) == 0 || tr.Messages[0].Role != "user" {
			t.Fatalf("seed %d: the session does not start with a user message", seed)
		}
		calls := 0
		for i, m := range tr.Messages {
			switch m.Role {
			case "assistant":
				if len(m.Calls) == 0 {
					if i+1 < len(tr.Messages) && tr.Messages[i+1].Role != "user" {
						t.Fatalf("seed %d: message %d: text-only assistant message followed by %s", seed, i, tr.Messages[i+1].Role)
					}
					continue
				}
				if i+1 >= len(tr.Messages) || tr.Messages[i+1].Role != "tool" {
					t.Fatalf("seed %d: message %d: calls without results", seed, i)
				}
				res := tr.Messages[i+1].Results
				if len(res) != len(m.Calls) {
					t.Fatalf("seed %d: message %d: %d calls, %d results", seed, i, len(m.Calls), len(res))
				}
				for k, c := range m.Calls {
					if res[k].CallID != c.ID {
						t.Fatalf("seed %d: message %d: result %d answers %q, not %q", seed, i, k, res[k].CallID, c.ID)
					}
					if c.Writes() && res[k].Failed() {
						t.Errorf("seed %d: a write failed", seed)
					}
				}
				calls += len(m.Calls)
			case "tool":
				if i == 0 || tr.Messages[i-1].Role != "assistant" || len(tr.Messages[i-1].Calls) == 0 {
					t.Fatalf("seed %d: message %d: results of nothing", seed, i)
				}
			case "user":
				if i > 0 && tr.Messages[i-1].Role != "assistant" {
					t.Fatalf("seed %d: message %d: user after %s", seed, i, tr.Messages[i-1].Role)
				}
			default:
				t.Fatalf("seed %d: role %q", seed, m.Role)
			}
		}
		if calls != tr.ToolCalls {
			t.Errorf("seed %d: ToolCalls %d, counted %d", seed, tr.ToolCalls, calls)
		}
		if last := tr.Messages[len(tr.Messages)-1]; last.Role != "assistant" || len(last.Calls) != 0 {
			t.Errorf("seed %d: the session does not end with the agent's answer", seed)
		}
	}
}

// place is where a text of the session is: its class, where it is in
// the session (message, call or result, line), and its text.
type place struct {
	msg, item int // message, call or result index
	line      int // line of a result, -1 otherwise
	what      string
	class     opsgen.Class // the class the place is of, "" for none
	pathArg   bool         // the path argument of a write
	text      string
}

// places lists every text of the session in order: a result line by
// line, so a place is of one class.
func places(tr *opsgen.Transcript) []place {
	ps := []place{{msg: -1, line: -1, what: "system", text: tr.System}}
	for i, m := range tr.Messages {
		switch m.Role {
		case "user":
			ps = append(ps, place{msg: i, line: -1, what: "user", class: opsgen.UserTurn, text: m.Text})
		case "assistant":
			ps = append(ps, place{msg: i, line: -1, what: "assistant text", text: m.Text})
			for k, c := range m.Calls {
				for _, a := range c.Args {
					p := place{msg: i, item: k, line: -1, what: "call " + c.Name + "." + a.Key, text: a.Value}
					if c.Writes() {
						p.class = opsgen.FileWritten
						p.pathArg = a.Key == "path"
					}
					ps = append(ps, p)
				}
			}
		case "tool":
			for k, r := range m.Results {
				errs := map[int]bool{}
				for _, e := range r.ErrLines {
					errs[e] = true
				}
				for n, l := range strings.Split(r.Output, "\n") {
					p := place{msg: i, item: k, line: n, what: "result", text: l}
					switch {
					case errs[n]:
						p.class = opsgen.ErrorLine
					case !r.Failed():
						p.class = opsgen.PassingOutput
					}
					ps = append(ps, p)
				}
			}
		}
	}
	return ps
}

// checkLabels checks the class invariant: each planted identifier occurs,
// and only in places of its class.
func checkLabels(t *testing.T, name string, tr *opsgen.Transcript) {
	t.Helper()
	ps := places(tr)
	var all strings.Builder
	for _, p := range ps {
		all.WriteString(p.text)
		all.WriteByte(0)
	}
	joined := all.String()
	bad := 0
	fail := func(format string, a ...any) {
		bad++
		if bad <= 20 {
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
			fail("%q has no digit or punctuation", l.Text)
		}
		if !strings.Contains(joined, l.Text) {
			fail("%s %s %q does not occur", l.Class, l.Kind, l.Text)
			continue
		}
		first := true
		type where struct{ msg, item int }
		var at []where
		for _, p := range ps {
			if !strings.Contains(p.text, l.Text) {
				continue
			}
			at = append(at, where{p.msg, p.item})
			switch {
			case l.Class == opsgen.FileWritten && l.Kind == "path":
				if first && !p.pathArg {
					fail("path %q first named in %s (message %d)", l.Text, p.what, p.msg)
				}
				if p.what == "user" || p.what == "assistant text" || p.what == "system" {
					fail("path %q named in %s (message %d)", l.Text, p.what, p.msg)
				}
			case p.class != l.Class:
				fail("%s %s %q in %s of class %q (message %d line %d): %s", l.Class, l.Kind, l.Text, p.what, p.class, p.msg, p.line, clip(p.text))
			}
			first = false
		}
		if l.Class != opsgen.ErrorLine && !(l.Class == opsgen.FileWritten && l.Kind == "path") {
			for _, w := range at[1:] {
				if w != at[0] {
					fail("%s %s %q occurs in two places (messages %d and %d)", l.Class, l.Kind, l.Text, at[0].msg, w.msg)
					break
				}
			}
		}
	}
	texts := make([]string, 0, len(tr.Labels))
	for _, l := range tr.Labels {
		texts = append(texts, l.Text)
	}
	for i, a := range texts {
		for j, b := range texts {
			if i != j && strings.Contains(b, a) {
				fail("%q is part of %q", a, b)
			}
		}
	}
}

func clip(s string) string {
	if len(s) > 160 {
		return s[:160] + "..."
	}
	return s
}

func TestLabels(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4, 5, 6}
	if testing.Short() {
		seeds = seeds[:2]
	}
	for _, seed := range seeds {
		tr := Generate(seed, Standard())
		checkLabels(t, fmt.Sprintf("standard seed %d", seed), tr)
	}
	if !testing.Short() {
		checkLabels(t, "long seed 1", Generate(1, Long()))
	}
}

// TestErrLines checks the indices of failure lines, and that every
// error_line identifier is on one of them.
func TestErrLines(t *testing.T) {
	tr := Generate(1, Standard())
	var errText strings.Builder
	failing, withErr := 0, 0
	for _, m := range tr.Messages {
		for _, r := range m.Results {
			n := strings.Count(r.Output, "\n") + 1
			if !sort.IntsAreSorted(r.ErrLines) || len(slices.Compact(slices.Clone(r.ErrLines))) != len(r.ErrLines) {
				t.Errorf("result %s: ErrLines not sorted and unique", r.CallID)
			}
			lines := strings.Split(r.Output, "\n")
			for _, e := range r.ErrLines {
				if e < 0 || e >= n {
					t.Fatalf("result %s: error line %d of %d", r.CallID, e, n)
				}
				errText.WriteString(lines[e] + "\n")
			}
			if r.Failed() {
				failing++
				if len(r.ErrLines) == 0 {
					t.Errorf("result %s failed with no error line: %s", r.CallID, clip(r.Output))
				}
			}
			if len(r.ErrLines) > 0 {
				withErr++
			}
		}
	}
	for _, l := range tr.Labels {
		if l.Class == opsgen.ErrorLine && !strings.Contains(errText.String(), l.Text) {
			t.Errorf("%q is on no error line", l.Text)
		}
	}
	if failing < 8 || withErr < failing {
		t.Errorf("%d failing results, %d with error lines", failing, withErr)
	}
}

// counts returns the labels per class and per class/kind.
func counts(tr *opsgen.Transcript) (map[opsgen.Class]int, map[string]int) {
	byClass, byKind := map[opsgen.Class]int{}, map[string]int{}
	for _, l := range tr.Labels {
		byClass[l.Class]++
		byKind[string(l.Class)+"/"+l.Kind]++
	}
	return byClass, byKind
}

func summary(tr *opsgen.Transcript, tokens int) string {
	byClass, byKind := counts(tr)
	var kinds []string
	for k, n := range byKind {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	var b strings.Builder
	fmt.Fprintf(&b, "%d tokens, %d tool calls, %d messages;", tokens, tr.ToolCalls, len(tr.Messages))
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
	type size struct {
		name           string
		o              opsgen.Options
		seeds          []uint64
		lo, hi         int // tokens
		callLo, callHi int
		classLo        map[opsgen.Class]int
		classHi        map[opsgen.Class]int
	}
	sizes := []size{{"standard", Standard(), []uint64{1, 2}, 300_000, 380_000, 110, 145,
		map[opsgen.Class]int{opsgen.ErrorLine: 40, opsgen.PassingOutput: 60, opsgen.FileWritten: 20, opsgen.UserTurn: 20},
		map[opsgen.Class]int{opsgen.ErrorLine: 80, opsgen.PassingOutput: 150, opsgen.FileWritten: 60, opsgen.UserTurn: 60}}}
	if !testing.Short() {
		sizes = append(sizes, size{"long", Long(), []uint64{1}, 800_000, 1_000_000, 340, 420,
			map[opsgen.Class]int{opsgen.ErrorLine: 120, opsgen.PassingOutput: 180, opsgen.FileWritten: 60, opsgen.UserTurn: 60},
			map[opsgen.Class]int{opsgen.ErrorLine: 260, opsgen.PassingOutput: 450, opsgen.FileWritten: 180, opsgen.UserTurn: 180}})
	}
	for _, s := range sizes {
		for _, seed := range s.seeds {
			tr := Generate(seed, s.o)
			n := tok.Count(string(tr.OpenAI()))
			t.Logf("%s seed %d: %s", s.name, seed, summary(tr, n))
			if n < s.lo || n > s.hi {
				t.Errorf("%s seed %d: %d tokens, want %d-%d", s.name, seed, n, s.lo, s.hi)
			}
			if tr.ToolCalls < s.callLo || tr.ToolCalls > s.callHi {
				t.Errorf("%s seed %d: %d tool calls, want %d-%d", s.name, seed, tr.ToolCalls, s.callLo, s.callHi)
			}
			byClass, _ := counts(tr)
			for _, c := range opsgen.Classes {
				if byClass[c] < s.classLo[c] || byClass[c] > s.classHi[c] {
					t.Errorf("%s seed %d: %d %s identifiers, want %d-%d", s.name, seed, byClass[c], c, s.classLo[c], s.classHi[c])
				}
			}
		}
	}
}

// TestErrorLinesInLongOutputs checks that most error_line identifiers
// sit in long outputs, among lines that report nothing.
func TestErrorLinesInLongOutputs(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		tr := Generate(seed, Standard())
		var long, short strings.Builder
		for _, m := range tr.Messages {
			for _, r := range m.Results {
				if len(r.ErrLines) == 0 {
					continue
				}
				if n := strings.Count(r.Output, "\n") + 1; n >= 80 && n-len(r.ErrLines) >= 25 {
					long.WriteString(r.Output)
				} else {
					short.WriteString(r.Output)
				}
			}
		}
		in, all := 0, 0
		for _, l := range tr.Labels {
			if l.Class != opsgen.ErrorLine {
				continue
			}
			all++
			if strings.Contains(long.String(), l.Text) {
				in++
			}
		}
		if in*100 < all*55 {
			t.Errorf("seed %d: %d of %d error_line identifiers are in long outputs", seed, in, all)
		}
	}
}
