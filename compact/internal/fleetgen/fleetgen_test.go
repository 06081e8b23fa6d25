package fleetgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact/internal/opsgen"
	"github.com/strata-memory/strata/tiktoken"
)

func TestDeterministic(t *testing.T) {
	a, b := Generate(5, Standard()), Generate(5, Standard())
	if !bytes.Equal(a.OpenAI(), b.OpenAI()) || !bytes.Equal(a.Anthropic(), b.Anthropic()) {
		t.Fatal("the same seed gave different sessions")
	}
	if c := Generate(6, Standard()); bytes.Equal(a.OpenAI(), c.OpenAI()) {
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
	if len(msgs) < 10 || len(body.Messages) < 10 {
		t.Fatalf("too few messages: %d, %d", len(msgs), len(body.Messages))
	}
}

// TestPairs checks that each message of calls is followed by their
// results in order, and that roles follow each other as the forms need.
func TestPairs(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		tr := Generate(seed, Standard())
		if tr.Messages[0].Role != "user" {
			t.Fatalf("seed %d: the session does not start with the user", seed)
		}
		calls := 0
		for i, m := range tr.Messages {
			switch m.Role {
			case "assistant":
				if len(m.Calls) == 0 {
					if i+1 < len(tr.Messages) && tr.Messages[i+1].Role != "user" {
						t.Fatalf("seed %d: message %d: text-only answer followed by %s", seed, i, tr.Messages[i+1].Role)
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
				if i == 0 || len(tr.Messages[i-1].Calls) == 0 {
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

// spot is a text of the session and the class of its place.
type spot struct {
	msg, item int
	what      string
	class     opsgen.Class // "" for a place of no class
	pathArg   bool
	text      string
}

// spots lists the texts of the session, a result line by line.
func spots(tr *opsgen.Transcript) []spot {
	ss := []spot{{msg: -1, what: "system", text: tr.System}}
	for i, m := range tr.Messages {
		switch m.Role {
		case "user":
			ss = append(ss, spot{msg: i, what: "user", class: opsgen.UserTurn, text: m.Text})
		case "assistant":
			ss = append(ss, spot{msg: i, what: "assistant text", text: m.Text})
			for k, c := range m.Calls {
				for _, a := range c.Args {
					s := spot{msg: i, item: k, what: c.Name + "." + a.Key, text: a.Value}
					if c.Writes() {
						s.class, s.pathArg = opsgen.FileWritten, a.Key == "path"
					}
					ss = append(ss, s)
				}
			}
		case "tool":
			for k, r := range m.Results {
				errs := map[int]bool{}
				for _, e := range r.ErrLines {
					errs[e] = true
				}
				for n, l := range strings.Split(r.Output, "\n") {
					s := spot{msg: i, item: k, what: "result", text: l}
					if errs[n] {
						s.class = opsgen.ErrorLine
					} else if !r.Failed() {
						s.class = opsgen.PassingOutput
					}
					ss = append(ss, s)
				}
			}
		}
	}
	return ss
}

// checkLabels checks that each label occurs, only in places of its
// class, in one place unless it is an error line or a written path, and
// that no label is part of another.
func checkLabels(t *testing.T, name string, tr *opsgen.Transcript) {
	t.Helper()
	ss := spots(tr)
	bad := 0
	fail := func(format string, a ...any) {
		if bad++; bad <= 15 {
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
			fail("%q has no digit or mark", l.Text)
		}
		written := l.Class == opsgen.FileWritten && l.Kind == "path"
		type at struct{ msg, item int }
		var where []at
		for _, s := range ss {
			if !strings.Contains(s.text, l.Text) {
				continue
			}
			if written {
				if len(where) == 0 && !s.pathArg {
					fail("path %q first named in %s (message %d)", l.Text, s.what, s.msg)
				}
				if s.what == "user" || s.what == "assistant text" || s.what == "system" {
					fail("path %q named in %s", l.Text, s.what)
				}
			} else if s.class != l.Class {
				fail("%s %s %q in %s of class %q (message %d): %.160s", l.Class, l.Kind, l.Text, s.what, s.class, s.msg, s.text)
			}
			where = append(where, at{s.msg, s.item})
		}
		if len(where) == 0 {
			fail("%s %s %q does not occur", l.Class, l.Kind, l.Text)
			continue
		}
		if l.Class != opsgen.ErrorLine && !written {
			for _, w := range where[1:] {
				if w != where[0] {
					fail("%s %q occurs in two places", l.Class, l.Text)
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

func TestLabels(t *testing.T) {
	seeds := []uint64{1, 2, 3, 4}
	if testing.Short() {
		seeds = seeds[:2]
	}
	for _, seed := range seeds {
		checkLabels(t, fmt.Sprintf("standard seed %d", seed), Generate(seed, Standard()))
	}
	if !testing.Short() {
		checkLabels(t, "long seed 1", Generate(1, Long()))
	}
}

// TestErrLines checks the failure line indices, and that each error_line
// label is on one of them.
func TestErrLines(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		tr := Generate(seed, Standard())
		var errText strings.Builder
		failing := 0
		for _, m := range tr.Messages {
			for _, r := range m.Results {
				lines := strings.Split(r.Output, "\n")
				if !sort.IntsAreSorted(r.ErrLines) {
					t.Errorf("result %s: ErrLines not sorted", r.CallID)
				}
				for k, e := range r.ErrLines {
					if e < 0 || e >= len(lines) || (k > 0 && e == r.ErrLines[k-1]) {
						t.Fatalf("result %s: error line %d of %d", r.CallID, e, len(lines))
					}
					errText.WriteString(lines[e] + "\n")
				}
				if r.Failed() {
					failing++
					if len(r.ErrLines) == 0 {
						t.Errorf("result %s failed with no error line", r.CallID)
					}
				}
			}
		}
		for _, l := range tr.Labels {
			if l.Class == opsgen.ErrorLine && !strings.Contains(errText.String(), l.Text) {
				t.Errorf("seed %d: %q is on no error line", seed, l.Text)
			}
		}
		if failing < 8 {
			t.Errorf("seed %d: %d failing results", seed, failing)
		}
	}
}

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
		lo, hi         int
		callLo, callHi int
		errLo, errHi   int
	}
	sizes := []size{{"standard", Standard(), []uint64{1, 2}, 300_000, 380_000, 110, 150, 35, 80}}
	if !testing.Short() {
		sizes = append(sizes, size{"long", Long(), []uint64{1}, 800_000, 1_000_000, 340, 420, 100, 220})
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
			errs := 0
			for _, l := range tr.Labels {
				if l.Class == opsgen.ErrorLine {
					errs++
				}
			}
			if errs < s.errLo || errs > s.errHi {
				t.Errorf("%s seed %d: %d error_line labels, want %d-%d", s.name, seed, errs, s.errLo, s.errHi)
			}
		}
	}
}
