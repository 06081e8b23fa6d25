package opsgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/internal/yardstick"
	"pgregory.net/rapid"
)

// hasToken says s holds id with no letter, digit or underscore right
// before or after it.
func hasToken(s, id string) bool {
	word := func(b byte) bool {
		return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
	}
	for from := 0; ; {
		i := strings.Index(s[from:], id)
		if i < 0 {
			return false
		}
		i += from
		j := i + len(id)
		if (i == 0 || !word(s[i-1])) && (j == len(s) || !word(s[j])) {
			return true
		}
		from = i + 1
	}
}

// place is a piece of the session with the class of place it is: one of
// the Classes, or "assistant", "call", "read" (what a read printed) and
// "failing_context" (a line of a failed command's output that the
// generator did not write as the failure).
type place struct {
	class string
	text  string
}

// places splits a session into its places, from the generator's own
// record of where it wrote what.
func places(tr *Transcript) []place {
	var out []place
	for _, m := range tr.Messages {
		switch m.Role {
		case "user":
			out = append(out, place{string(UserTurn), m.Text})
		case "assistant":
			out = append(out, place{"assistant", m.Text})
			for _, c := range m.Calls {
				cl := "call"
				if c.Writes() {
					cl = string(FileWritten)
				}
				for _, a := range c.Args {
					out = append(out, place{cl, a.Value})
				}
			}
		case "tool":
			for _, r := range m.Results {
				errs := map[int]bool{}
				for _, i := range r.ErrLines {
					errs[i] = true
				}
				for i, l := range strings.Split(r.Output, "\n") {
					cl := string(PassingOutput)
					switch {
					case errs[i]:
						cl = string(ErrorLine)
					case r.Read:
						cl = "read"
					case r.Failed():
						cl = "failing_context"
					}
					out = append(out, place{cl, l})
				}
			}
		}
	}
	return out
}

// checkLabels checks that each label occurs in a place of its class and,
// but for the paths of files written (which later commands name), in no
// place of another class.
func checkLabels(t interface {
	Fatalf(string, ...any)
}, tr *Transcript) {
	ps := places(tr)
	seen := map[string]bool{}
	for _, l := range tr.Labels {
		if seen[l.Text] {
			t.Fatalf("label %q listed twice", l.Text)
		}
		seen[l.Text] = true
		in := map[string]bool{}
		for _, p := range ps {
			if hasToken(p.text, l.Text) {
				in[p.class] = true
			}
		}
		if !in[string(l.Class)] {
			t.Fatalf("label %q (%s, %s) is in no %s place; found in %v", l.Text, l.Class, l.Kind, l.Class, in)
		}
		if l.Class == FileWritten && l.Kind == "path" {
			continue
		}
		for c := range in {
			if c != string(l.Class) {
				t.Fatalf("label %q (%s, %s) also occurs in a %s place", l.Text, l.Class, l.Kind, c)
			}
		}
	}
}

// checkForms checks that both provider forms parse, pair every tool call
// with its result, keep a valid role order and carry every label.
func checkForms(t interface {
	Fatalf(string, ...any)
}, tr *Transcript) {
	for _, p := range []compact.Provider{compact.OpenAI, compact.Anthropic} {
		body := tr.OpenAI()
		if p == compact.Anthropic {
			body = tr.Anthropic()
		}
		if _, err := compact.Parse(p, body); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if pairs, roles, problem := yardstick.Valid(p, body); !pairs || !roles {
			t.Fatalf("%s: %s", p, problem)
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var all strings.Builder
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case string:
				all.WriteString(x + "\n")
			case []any:
				for _, e := range x {
					walk(e)
				}
			case map[string]any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(v)
		for _, l := range tr.Labels {
			if !hasToken(all.String(), l.Text) {
				t.Fatalf("%s: label %q missing from the body", p, l.Text)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		o := Options{ToolCalls: rapid.IntRange(1, 60).Draw(t, "calls"), OutputScale: 0.3}
		a, b := Generate(seed, o), Generate(seed, o)
		if !bytes.Equal(a.OpenAI(), b.OpenAI()) || !bytes.Equal(a.Anthropic(), b.Anthropic()) {
			t.Fatalf("seed %d: two runs differ", seed)
		}
		if fmt.Sprint(a.Labels) != fmt.Sprint(b.Labels) {
			t.Fatalf("seed %d: labels differ", seed)
		}
		if c := Generate(seed+1, o); bytes.Equal(a.OpenAI(), c.OpenAI()) {
			t.Fatalf("seeds %d and %d give the same session", seed, seed+1)
		}
	})
}

func TestLabelsAndPairing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		tr := Generate(seed, Options{ToolCalls: rapid.IntRange(1, 80).Draw(t, "calls"), OutputScale: 0.3})
		checkLabels(t, tr)
		checkForms(t, tr)
	})
}

// TestStandardAndLong checks the two sizes the yardstick measures: the
// labels, the pairing, every class present, and the size in tool calls.
func TestStandardAndLong(t *testing.T) {
	if testing.Short() {
		t.Skip("generates about 5M tokens")
	}
	for _, c := range []struct {
		name string
		o    Options
	}{{"standard", Standard()}, {"long", Long()}} {
		tr := Generate(1, c.o)
		checkLabels(t, tr)
		checkForms(t, tr)
		if tr.ToolCalls < c.o.ToolCalls || tr.ToolCalls > c.o.ToolCalls+30 {
			t.Errorf("%s: %d tool calls, want %d to %d", c.name, tr.ToolCalls, c.o.ToolCalls, c.o.ToolCalls+30)
		}
		n := map[Class]int{}
		for _, l := range tr.Labels {
			n[l.Class]++
		}
		for _, cl := range Classes {
			if n[cl] == 0 {
				t.Errorf("%s: no %s label", c.name, cl)
			}
		}
		t.Logf("%s: %d messages, %d tool calls, labels %v", c.name, len(tr.Messages), tr.ToolCalls, n)
	}
}

// TestErrorLinesAreFailures checks the generator's record of failure
// lines against the outputs: every recorded index is a line of the
// output, every failed command has a recorded failure, and reads and
// writes have none.
func TestErrorLinesAreFailures(t *testing.T) {
	tr := Generate(7, Options{ToolCalls: 200, OutputScale: 0.5})
	failed := 0
	for _, m := range tr.Messages {
		for _, r := range m.Results {
			lines := strings.Count(r.Output, "\n") + 1
			for _, i := range r.ErrLines {
				if i < 0 || i >= lines {
					t.Fatalf("error line %d of a %d-line output", i, lines)
				}
			}
			if r.Failed() {
				failed++
				if len(r.ErrLines) == 0 {
					t.Fatalf("failed command with no failure line:\n%s", r.Output)
				}
			}
			if r.Read && len(r.ErrLines) > 0 {
				t.Fatalf("a read with failure lines:\n%s", r.Output)
			}
		}
	}
	if failed == 0 {
		t.Fatal("no command failed")
	}
}

// TestLabelClassesFailWhenMisplaced checks that the place check is not
// vacuous: a user-turn label copied into a tool call is caught.
func TestLabelClassesFailWhenMisplaced(t *testing.T) {
	tr := Generate(3, Options{ToolCalls: 30, OutputScale: 0.3})
	var u Label
	for _, l := range tr.Labels {
		if l.Class == UserTurn {
			u = l
			break
		}
	}
	if u.Text == "" {
		t.Fatal("no user-turn label")
	}
	for i, m := range tr.Messages {
		if len(m.Calls) > 0 {
			tr.Messages[i].Calls[0].Args[0].Value += " " + u.Text
			break
		}
	}
	ft := &fatalRecorder{}
	func() {
		defer func() { _ = recover() }()
		checkLabels(ft, tr)
	}()
	if ft.msg == "" {
		t.Fatal("a user-turn label in a tool call went unnoticed")
	}
}

type fatalRecorder struct{ msg string }

func (f *fatalRecorder) Fatalf(format string, a ...any) {
	f.msg = fmt.Sprintf(format, a...)
	panic(f.msg)
}
