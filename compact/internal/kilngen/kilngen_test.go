package kilngen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/strata-memory/strata/compact/internal/opsgen"
	"github.com/strata-memory/strata/tiktoken"
)

// sessions caches the generated sessions the tests share.
var sessions sync.Map

type key struct {
	seed uint64
	long bool
}

func session(t testing.TB, seed uint64, long bool) *opsgen.Transcript {
	t.Helper()
	if v, ok := sessions.Load(key{seed, long}); ok {
		return v.(*opsgen.Transcript)
	}
	o := Standard()
	if long {
		o = Long()
	}
	tr := Generate(seed, o)
	sessions.Store(key{seed, long}, tr)
	return tr
}

func tokens(t testing.TB, tr *opsgen.Transcript) int {
	t.Helper()
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	return tok.Count(string(tr.OpenAI()))
}

func TestDeterministic(t *testing.T) {
	a := session(t, 1, false).OpenAI()
	b := Generate(1, Standard()).OpenAI()
	if !bytes.Equal(a, b) {
		t.Fatal("seed 1 gave two different sessions")
	}
	if !bytes.Equal(session(t, 1, false).Anthropic(), Generate(1, Standard()).Anthropic()) {
		t.Fatal("seed 1 gave two different Anthropic forms")
	}
	if bytes.Equal(a, session(t, 2, false).OpenAI()) {
		t.Fatal("seeds 1 and 2 gave the same session")
	}
}

func TestSizes(t *testing.T) {
	cases := []struct {
		seed             uint64
		long             bool
		callLo, callHi   int
		tokenLo, tokenHi int
	}{
		{1, false, 110, 130, 280_000, 380_000},
		{2, false, 110, 130, 280_000, 380_000},
		{1, true, 340, 420, 750_000, 1_000_000},
	}
	for _, c := range cases {
		tr := session(t, c.seed, c.long)
		n := tokens(t, tr)
		t.Logf("seed %d long=%v: %d tool calls, %d o200k tokens, %d messages", c.seed, c.long, tr.ToolCalls, n, len(tr.Messages))
		if tr.ToolCalls < c.callLo || tr.ToolCalls > c.callHi {
			t.Errorf("seed %d long=%v: %d tool calls, want %d-%d", c.seed, c.long, tr.ToolCalls, c.callLo, c.callHi)
		}
		if n < c.tokenLo || n > c.tokenHi {
			t.Errorf("seed %d long=%v: %d tokens, want %d-%d", c.seed, c.long, n, c.tokenLo, c.tokenHi)
		}
	}
}

func TestJSON(t *testing.T) {
	for _, long := range []bool{false, true} {
		tr := session(t, 1, long)
		var a []map[string]any
		if err := json.Unmarshal(tr.OpenAI(), &a); err != nil {
			t.Fatalf("OpenAI form: %v", err)
		}
		var b map[string]any
		if err := json.Unmarshal(tr.Anthropic(), &b); err != nil {
			t.Fatalf("Anthropic form: %v", err)
		}
		if len(a) != len(tr.Messages)+1+countResults(tr)-countToolMsgs(tr) {
			t.Errorf("OpenAI form has %d messages", len(a))
		}
	}
}

func countResults(tr *opsgen.Transcript) (n int) {
	for _, m := range tr.Messages {
		n += len(m.Results)
	}
	return n
}

func countToolMsgs(tr *opsgen.Transcript) (n int) {
	for _, m := range tr.Messages {
		if m.Role == "tool" {
			n++
		}
	}
	return n
}

func TestEveryCallHasResult(t *testing.T) {
	for _, long := range []bool{false, true} {
		tr := session(t, 1, long)
		calls := 0
		for i, m := range tr.Messages {
			if m.Role == "tool" && (i == 0 || len(tr.Messages[i-1].Calls) == 0) {
				t.Fatalf("message %d: results without calls", i)
			}
			if len(m.Calls) == 0 {
				continue
			}
			calls += len(m.Calls)
			if i+1 >= len(tr.Messages) || tr.Messages[i+1].Role != "tool" {
				t.Fatalf("message %d: calls without results", i)
			}
			rs := tr.Messages[i+1].Results
			if len(rs) != len(m.Calls) {
				t.Fatalf("message %d: %d calls, %d results", i, len(m.Calls), len(rs))
			}
			for j, c := range m.Calls {
				if rs[j].CallID != c.ID {
					t.Fatalf("message %d: result %d answers %q, not %q", i, j, rs[j].CallID, c.ID)
				}
				r := rs[j]
				if r.Read && r.Exit != 0 && c.Name == "read_file" {
					t.Errorf("read_file %q failed", c.ID)
				}
				for _, e := range r.ErrLines {
					if e < 0 || e >= strings.Count(r.Output, "\n")+1 {
						t.Fatalf("call %s: error line %d out of range", c.ID, e)
					}
				}
			}
		}
		if calls != tr.ToolCalls {
			t.Errorf("ToolCalls is %d, the messages hold %d", tr.ToolCalls, calls)
		}
	}
}

// place is where a text of the session is, and the class it stands for
// ("" for the agent's own text and arguments, "failed" for a failed
// command's output off its failure lines).
type place struct {
	class opsgen.Class
	what  string
	text  string
}

func places(tr *opsgen.Transcript) []place {
	var ps []place
	for i, m := range tr.Messages {
		switch m.Role {
		case "user":
			ps = append(ps, place{opsgen.UserTurn, fmt.Sprintf("user message %d", i), m.Text})
		case "assistant":
			ps = append(ps, place{"", fmt.Sprintf("assistant text %d", i), m.Text})
			for _, c := range m.Calls {
				cl := opsgen.Class("")
				if c.Writes() {
					cl = opsgen.FileWritten
				}
				for _, a := range c.Args {
					ps = append(ps, place{cl, fmt.Sprintf("argument %s of %s %s", a.Key, c.Name, c.ID), a.Value})
				}
			}
		case "tool":
			for _, r := range m.Results {
				bad := map[int]bool{}
				for _, e := range r.ErrLines {
					bad[e] = true
				}
				for j, l := range strings.Split(r.Output, "\n") {
					cl := opsgen.PassingOutput
					switch {
					case bad[j]:
						cl = opsgen.ErrorLine
					case r.Exit != 0:
						cl = "failed"
					}
					ps = append(ps, place{cl, fmt.Sprintf("line %d of result %s", j, r.CallID), l})
				}
			}
		}
	}
	return ps
}

// violations lists every way the labels of tr break their invariants.
func violations(tr *opsgen.Transcript) []string {
	var v []string
	seen := map[string]bool{}
	for _, l := range tr.Labels {
		if seen[l.Text] {
			v = append(v, fmt.Sprintf("label %q twice", l.Text))
		}
		seen[l.Text] = true
		if strings.TrimSpace(l.Text) != l.Text || l.Text == "" || strings.Contains(l.Text, "\n") {
			v = append(v, fmt.Sprintf("label %q is not a clean token", l.Text))
		}
	}
	// No label hides inside another.
	texts := make([]string, 0, len(tr.Labels))
	for _, l := range tr.Labels {
		texts = append(texts, l.Text)
	}
	sort.Slice(texts, func(i, j int) bool { return len(texts[i]) < len(texts[j]) })
	for i, a := range texts {
		for _, b := range texts[i+1:] {
			if strings.Contains(b, a) {
				v = append(v, fmt.Sprintf("label %q is inside label %q", a, b))
			}
		}
	}
	// Each label is where its class says, and only there.
	ps := places(tr)
	var big strings.Builder
	for _, p := range ps {
		big.WriteString(p.text)
		big.WriteByte(0)
	}
	all := big.String()
	for _, l := range tr.Labels {
		if !strings.Contains(all, l.Text) {
			v = append(v, fmt.Sprintf("label %q (%s) occurs nowhere", l.Text, l.Class))
			continue
		}
		found := false
		for _, p := range ps {
			if !strings.Contains(p.text, l.Text) {
				continue
			}
			if p.class == l.Class {
				found = true
				continue
			}
			if l.Class == opsgen.FileWritten && l.Kind == "path" {
				continue // a created file is named by later commands
			}
			v = append(v, fmt.Sprintf("label %q (%s) in %s (%s): %.160s", l.Text, l.Class, p.what, p.class, p.text))
		}
		if !found {
			v = append(v, fmt.Sprintf("label %q (%s) never in a place of its class", l.Text, l.Class))
		}
	}
	return v
}

func counts(tr *opsgen.Transcript) map[opsgen.Class]int {
	c := map[opsgen.Class]int{}
	for _, l := range tr.Labels {
		c[l.Class]++
	}
	return c
}

func TestLabels(t *testing.T) {
	type rng struct{ lo, hi int }
	std := map[opsgen.Class]rng{
		opsgen.ErrorLine:     {40, 50},
		opsgen.PassingOutput: {40, 300},
		opsgen.FileWritten:   {20, 30},
		opsgen.UserTurn:      {20, 30},
	}
	long := map[opsgen.Class]rng{
		opsgen.ErrorLine:     {120, 150},
		opsgen.PassingOutput: {120, 900},
		opsgen.FileWritten:   {60, 90},
		opsgen.UserTurn:      {60, 90},
	}
	for _, c := range []struct {
		seed uint64
		long bool
	}{{1, false}, {2, false}, {3, false}, {4, false}, {1, true}} {
		tr := session(t, c.seed, c.long)
		for _, s := range violations(tr) {
			t.Errorf("seed %d long=%v: %s", c.seed, c.long, s)
		}
		want := std
		if c.long {
			want = long
		}
		got := counts(tr)
		t.Logf("seed %d long=%v: %v", c.seed, c.long, got)
		for _, cl := range opsgen.Classes {
			if got[cl] < want[cl].lo || got[cl] > want[cl].hi {
				t.Errorf("seed %d long=%v: %d %s labels, want %d-%d", c.seed, c.long, got[cl], cl, want[cl].lo, want[cl].hi)
			}
		}
		kinds := map[string]bool{}
		for _, l := range tr.Labels {
			kinds[l.Kind] = true
			if !slices.Contains(opsgen.Classes, l.Class) {
				t.Errorf("label %q has class %q", l.Text, l.Class)
			}
		}
		if len(kinds) < 6 {
			t.Errorf("seed %d: only %d kinds of label", c.seed, len(kinds))
		}
	}
}

// TestFailuresVary checks failing outputs do not all look alike: some end
// with a harness exit line, most do not, and the failure is not always on
// the last line.
func TestFailuresVary(t *testing.T) {
	tr := session(t, 1, true)
	failed, trailer, notLast, okWithErr := 0, 0, 0, 0
	for _, m := range tr.Messages {
		for _, r := range m.Results {
			lines := strings.Split(r.Output, "\n")
			if r.Exit == 0 {
				if len(r.ErrLines) > 0 {
					okWithErr++
				}
				continue
			}
			failed++
			last := lines[len(lines)-1]
			for _, s := range exitStyles {
				if strings.HasPrefix(last, strings.SplitN(s, "%", 2)[0]) {
					trailer++
					break
				}
			}
			if len(r.ErrLines) == 0 {
				t.Errorf("failed call %s has no failure lines", r.CallID)
				continue
			}
			if r.ErrLines[len(r.ErrLines)-1] < len(lines)-1 {
				notLast++
			}
		}
	}
	t.Logf("%d failed results: %d with an exit line, %d with the failure before the end; %d passing results report a failure", failed, trailer, notLast, okWithErr)
	if trailer == 0 || trailer > failed/2 {
		t.Errorf("%d of %d failed results end with an exit line", trailer, failed)
	}
	if notLast < failed*3/10 {
		t.Errorf("only %d of %d failed results have the failure before the end", notLast, failed)
	}
}
