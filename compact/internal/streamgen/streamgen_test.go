package streamgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/strata-memory/strata/compact/internal/opsgen"
	"github.com/strata-memory/strata/tiktoken"
)

// session caches the generated sessions the tests share.
var sessions sync.Map

func session(t *testing.T, seed uint64, long bool) *opsgen.Transcript {
	t.Helper()
	key := fmt.Sprint(seed, long)
	if v, ok := sessions.Load(key); ok {
		return v.(*opsgen.Transcript)
	}
	o := Standard()
	if long {
		o = Long()
	}
	tr := Generate(seed, o)
	sessions.Store(key, tr)
	return tr
}

type namedSession struct {
	name string
	seed uint64
	long bool
}

func cases(t *testing.T) []namedSession {
	cs := []namedSession{{"standard-1", 1, false}, {"standard-2", 2, false}}
	if !testing.Short() {
		cs = append(cs, namedSession{"long-1", 1, true})
	}
	return cs
}

func TestDeterminism(t *testing.T) {
	a := Generate(7, Standard())
	b := Generate(7, Standard())
	if !bytes.Equal(a.OpenAI(), b.OpenAI()) {
		t.Fatal("two sessions of seed 7 differ in the OpenAI form")
	}
	if !bytes.Equal(a.Anthropic(), b.Anthropic()) {
		t.Fatal("two sessions of seed 7 differ in the Anthropic form")
	}
	c := Generate(8, Standard())
	if bytes.Equal(a.OpenAI(), c.OpenAI()) {
		t.Fatal("seeds 7 and 8 give the same session")
	}
}

func TestFormsAndPairs(t *testing.T) {
	for _, c := range cases(t) {
		t.Run(c.name, func(t *testing.T) {
			tr := session(t, c.seed, c.long)
			oa, an := tr.OpenAI(), tr.Anthropic()
			if !json.Valid(oa) || !json.Valid(an) {
				t.Fatal("a form is not valid JSON")
			}

			var msgs []struct {
				Role       string  `json:"role"`
				Content    *string `json:"content"`
				ToolCallID string  `json:"tool_call_id"`
				ToolCalls  []struct {
					ID       string `json:"id"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			}
			if err := json.Unmarshal(oa, &msgs); err != nil {
				t.Fatal(err)
			}
			calls, results := map[string]int{}, map[string]int{}
			var pending []string
			for _, m := range msgs {
				switch m.Role {
				case "assistant":
					if len(pending) > 0 {
						t.Fatalf("assistant message before the results of %v", pending)
					}
					for _, c := range m.ToolCalls {
						calls[c.ID]++
						pending = append(pending, c.ID)
						if !json.Valid([]byte(c.Function.Arguments)) {
							t.Fatalf("call %s has invalid arguments", c.ID)
						}
					}
				case "tool":
					results[m.ToolCallID]++
					if len(pending) == 0 || pending[0] != m.ToolCallID {
						t.Fatalf("result %s is not the next one expected", m.ToolCallID)
					}
					pending = pending[1:]
				case "user":
					if len(pending) > 0 {
						t.Fatalf("user message before the results of %v", pending)
					}
				}
			}
			if len(calls) != tr.ToolCalls {
				t.Fatalf("%d distinct call ids, transcript says %d calls", len(calls), tr.ToolCalls)
			}
			for id, n := range calls {
				if n != 1 || results[id] != 1 {
					t.Fatalf("call %s: %d calls, %d results", id, n, results[id])
				}
			}

			var body struct {
				Messages []struct {
					Role    string          `json:"role"`
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(an, &body); err != nil {
				t.Fatal(err)
			}
			uses, res := map[string]int{}, map[string]int{}
			for _, m := range body.Messages {
				var blocks []struct {
					Type      string `json:"type"`
					ID        string `json:"id"`
					ToolUseID string `json:"tool_use_id"`
				}
				if json.Unmarshal(m.Content, &blocks) != nil {
					continue // a plain string
				}
				for _, b := range blocks {
					switch b.Type {
					case "tool_use":
						uses[b.ID]++
					case "tool_result":
						res[b.ToolUseID]++
					}
				}
			}
			if len(uses) != tr.ToolCalls {
				t.Fatalf("%d tool_use blocks, want %d", len(uses), tr.ToolCalls)
			}
			for id := range uses {
				if uses[id] != 1 || res[id] != 1 {
					t.Fatalf("tool_use %s: %d uses, %d results", id, uses[id], res[id])
				}
			}
		})
	}
}

// spot is a piece of session text and the class of its place.
type spot struct {
	text  string
	class opsgen.Class
	msg   int
}

// spots walks a transcript's messages and cuts them into places.
func spots(t *testing.T, tr *opsgen.Transcript) []spot {
	t.Helper()
	out := []spot{{tr.System, "", -1}}
	for i, m := range tr.Messages {
		switch m.Role {
		case "user":
			out = append(out, spot{m.Text, opsgen.UserTurn, i})
		case "assistant":
			out = append(out, spot{m.Text, "", i})
			for _, c := range m.Calls {
				cl := opsgen.Class("")
				if c.Writes() {
					cl = opsgen.FileWritten
				}
				for _, a := range c.Args {
					out = append(out, spot{a.Value, cl, i})
				}
			}
		case "tool":
			for _, r := range m.Results {
				lines := strings.Split(r.Output, "\n")
				isErr := map[int]bool{}
				for _, e := range r.ErrLines {
					if e < 0 || e >= len(lines) {
						t.Fatalf("message %d: ErrLine %d out of range (%d lines)", i, e, len(lines))
					}
					isErr[e] = true
				}
				for li, l := range lines {
					cl := opsgen.Class("")
					if isErr[li] {
						cl = opsgen.ErrorLine
					} else if r.Exit == 0 {
						cl = opsgen.PassingOutput
					}
					out = append(out, spot{l, cl, i})
				}
			}
		}
	}
	return out
}

func TestLabels(t *testing.T) {
	for _, c := range cases(t) {
		t.Run(c.name, func(t *testing.T) {
			tr := session(t, c.seed, c.long)
			ss := spots(t, tr)
			seen := map[string]bool{}
			for _, l := range tr.Labels {
				if l.Text == "" || seen[l.Text] {
					t.Fatalf("empty or repeated label %q", l.Text)
				}
				seen[l.Text] = true
				if strings.ContainsAny(l.Text, "\n<>&\"\\") {
					t.Fatalf("label %q holds a character JSON would escape", l.Text)
				}
				own, firstOwn := 0, -1
				for _, s := range ss {
					if !strings.Contains(s.text, l.Text) {
						continue
					}
					switch {
					case s.class == l.Class:
						own++
						if firstOwn < 0 {
							firstOwn = s.msg
						}
					case l.Class == opsgen.FileWritten && l.Kind == "path" && firstOwn >= 0 && s.msg > firstOwn:
						// A written file may be named later.
					default:
						t.Fatalf("label %q (%s, %s) occurs in a place of class %q: %.200q", l.Text, l.Class, l.Kind, s.class, s.text)
					}
				}
				if own == 0 {
					t.Fatalf("label %q (%s) occurs in no place of its class", l.Text, l.Class)
				}
			}
			texts := make([]string, 0, len(tr.Labels))
			for _, l := range tr.Labels {
				texts = append(texts, l.Text)
			}
			sort.Strings(texts)
			for i, a := range texts {
				for j, b := range texts {
					if i != j && strings.Contains(b, a) {
						t.Fatalf("label %q is a substring of label %q", a, b)
					}
				}
			}
		})
	}
}

func TestErrorLabelsOnErrLines(t *testing.T) {
	for _, c := range cases(t) {
		t.Run(c.name, func(t *testing.T) {
			tr := session(t, c.seed, c.long)
			found := map[string]bool{}
			for _, m := range tr.Messages {
				for _, r := range m.Results {
					lines := strings.Split(r.Output, "\n")
					for _, e := range r.ErrLines {
						if e < 0 || e >= len(lines) {
							t.Fatalf("ErrLine %d out of range (%d lines)", e, len(lines))
						}
						for _, l := range tr.Labels {
							if l.Class == opsgen.ErrorLine && strings.Contains(lines[e], l.Text) {
								found[l.Text] = true
							}
						}
					}
					if r.Failed() && len(r.ErrLines) == 0 {
						t.Fatalf("failed command without failure lines: %.200q", r.Output)
					}
				}
			}
			for _, l := range tr.Labels {
				if l.Class == opsgen.ErrorLine && !found[l.Text] {
					t.Fatalf("error_line label %q is on no ErrLine", l.Text)
				}
			}
		})
	}
}

func TestSizes(t *testing.T) {
	enc, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases(t) {
		t.Run(c.name, func(t *testing.T) {
			tr := session(t, c.seed, c.long)
			tokens := enc.Count(string(tr.OpenAI()))
			loT, hiT, loC, hiC := 300_000, 380_000, 110, 150
			if c.long {
				loT, hiT, loC, hiC = 800_000, 1_000_000, 340, 420
			}
			per := map[string]int{}
			kinds := map[opsgen.Class]map[string]int{}
			for _, l := range tr.Labels {
				per[string(l.Class)]++
				if kinds[l.Class] == nil {
					kinds[l.Class] = map[string]int{}
				}
				kinds[l.Class][l.Kind]++
			}
			var parts []string
			for _, cl := range opsgen.Classes {
				var ks []string
				for k := range kinds[cl] {
					ks = append(ks, k)
				}
				sort.Strings(ks)
				var kv []string
				for _, k := range ks {
					kv = append(kv, fmt.Sprintf("%s=%d", k, kinds[cl][k]))
				}
				parts = append(parts, fmt.Sprintf("%s=%d (%s)", cl, per[string(cl)], strings.Join(kv, " ")))
			}
			t.Logf("%s: %d tokens, %d tool calls, %d messages, labels %s", c.name, tokens, tr.ToolCalls, len(tr.Messages), strings.Join(parts, "; "))
			if tokens < loT || tokens > hiT {
				t.Errorf("%d tokens, want %d-%d", tokens, loT, hiT)
			}
			if tr.ToolCalls < loC || tr.ToolCalls > hiC {
				t.Errorf("%d tool calls, want %d-%d", tr.ToolCalls, loC, hiC)
			}
			min := 35
			if c.long {
				min = 80
			}
			for _, cl := range opsgen.Classes {
				if per[string(cl)] < min*2/3 {
					t.Errorf("%d labels of class %s, want at least %d", per[string(cl)], cl, min*2/3)
				}
			}
			if per[string(opsgen.ErrorLine)] < min {
				t.Errorf("%d error_line labels, want at least %d", per[string(opsgen.ErrorLine)], min)
			}
		})
	}
}

// TestPruneKeepsLabels checks that the generator itself rarely had to
// drop a label because its text landed in a place of another class.
func TestPruneKeepsLabels(t *testing.T) {
	g := newGen(1, Standard())
	g.run()
	before := len(g.t.Labels)
	g.prune()
	t.Logf("labels planted %d, dropped %d", before, g.dropped)
	if g.dropped*20 > before {
		t.Errorf("%d of %d labels dropped", g.dropped, before)
	}
}

// TestAnthropicAlternation checks that the Anthropic form's messages
// alternate user and assistant, starting with a user message, as the
// Messages API requires.
func TestAnthropicAlternation(t *testing.T) {
	cs := []namedSession{{"standard-1", 1, false}, {"standard-2", 2, false}, {"standard-3", 3, false}, {"standard-4", 4, false}}
	if !testing.Short() {
		cs = append(cs, namedSession{"long-1", 1, true})
	}
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) {
			tr := session(t, c.seed, c.long)
			var body struct {
				Messages []struct {
					Role    string          `json:"role"`
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(tr.Anthropic(), &body); err != nil {
				t.Fatal(err)
			}
			if len(body.Messages) == 0 {
				t.Fatal("no messages")
			}
			for i, m := range body.Messages {
				want := "user"
				if i%2 == 1 {
					want = "assistant"
				}
				if m.Role != want {
					t.Fatalf("message %d is %s, want %s", i, m.Role, want)
				}
				if len(m.Content) == 0 || string(m.Content) == "null" || string(m.Content) == `""` || string(m.Content) == "[]" {
					t.Fatalf("message %d (%s) has empty content", i, m.Role)
				}
			}
		})
	}
}
