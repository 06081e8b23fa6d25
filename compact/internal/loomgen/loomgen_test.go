package loomgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-memory/strata/compact/internal/opsgen"
	"github.com/strata-memory/strata/tiktoken"
)

// standard caches the standard sessions of the seeds the tests share.
var standard = struct {
	sync.Mutex
	m map[uint64]*opsgen.Transcript
}{m: map[uint64]*opsgen.Transcript{}}

func std(seed uint64) *opsgen.Transcript {
	standard.Lock()
	defer standard.Unlock()
	if t, ok := standard.m[seed]; ok {
		return t
	}
	t := Generate(seed, Standard())
	standard.m[seed] = t
	return t
}

func tokens(t *testing.T, b []byte) int {
	t.Helper()
	tok, err := tiktoken.New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	return tok.Count(string(b))
}

func TestDeterministic(t *testing.T) {
	a := Generate(7, Standard())
	b := Generate(7, Standard())
	if !bytes.Equal(a.OpenAI(), b.OpenAI()) {
		t.Fatal("same seed, different OpenAI bytes")
	}
	if !bytes.Equal(a.Anthropic(), b.Anthropic()) {
		t.Fatal("same seed, different Anthropic bytes")
	}
	if fmt.Sprint(a.Labels) != fmt.Sprint(b.Labels) {
		t.Fatal("same seed, different labels")
	}
	if bytes.Equal(a.OpenAI(), std(1).OpenAI()) {
		t.Fatal("seeds 7 and 1 give the same session")
	}
	z := Generate(1, opsgen.Options{})
	if !bytes.Equal(z.OpenAI(), std(1).OpenAI()) {
		t.Fatal("zero options are not Standard")
	}
}

func TestSizes(t *testing.T) {
	type want struct {
		o            opsgen.Options
		name         string
		callLo, hi   int
		tokLo, tokHi int
	}
	cases := []struct {
		seed uint64
		want
	}{
		{1, want{Standard(), "standard", 110, 130, 300_000, 360_000}},
		{2, want{Standard(), "standard", 110, 130, 300_000, 360_000}},
	}
	if !testing.Short() {
		cases = append(cases, struct {
			seed uint64
			want
		}{1, want{Long(), "long", 340, 420, 750_000, 1_000_000}})
	}
	for _, c := range cases {
		var tr *opsgen.Transcript
		start := time.Now()
		if c.name == "standard" {
			tr = std(c.seed)
		} else {
			tr = Generate(c.seed, c.o)
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("%s seed %d: generation took %v", c.name, c.seed, d)
			}
		}
		n := tokens(t, tr.OpenAI())
		counts := map[opsgen.Class]int{}
		for _, l := range tr.Labels {
			counts[l.Class]++
		}
		t.Logf("%s seed %d: %d calls, %d tokens, labels %v", c.name, c.seed, tr.ToolCalls, n, counts)
		if tr.ToolCalls < c.callLo || tr.ToolCalls > c.hi {
			t.Errorf("%s seed %d: %d tool calls, want %d-%d", c.name, c.seed, tr.ToolCalls, c.callLo, c.hi)
		}
		if n < c.tokLo || n > c.tokHi {
			t.Errorf("%s seed %d: %d tokens, want %d-%d", c.name, c.seed, n, c.tokLo, c.tokHi)
		}
	}
}

func TestJSON(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		tr := std(seed)
		oa := tr.OpenAI()
		var msgs []map[string]any
		if err := json.Unmarshal(oa, &msgs); err != nil {
			t.Fatalf("seed %d: OpenAI form: %v", seed, err)
		}
		calls, results := 0, 0
		for _, m := range msgs {
			if tc, ok := m["tool_calls"].([]any); ok {
				for _, c := range tc {
					args := c.(map[string]any)["function"].(map[string]any)["arguments"].(string)
					if !json.Valid([]byte(args)) {
						t.Fatalf("seed %d: arguments are not JSON: %.80s", seed, args)
					}
					calls++
				}
			}
			if m["role"] == "tool" {
				results++
			}
		}
		if calls != tr.ToolCalls || results != tr.ToolCalls {
			t.Errorf("seed %d: OpenAI form has %d calls and %d results, want %d", seed, calls, results, tr.ToolCalls)
		}
		var body struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(tr.Anthropic(), &body); err != nil {
			t.Fatalf("seed %d: Anthropic form: %v", seed, err)
		}
		for i := 1; i < len(body.Messages); i++ {
			if body.Messages[i].Role == body.Messages[i-1].Role {
				t.Errorf("seed %d: Anthropic messages %d and %d are both %s", seed, i-1, i, body.Messages[i].Role)
			}
		}
	}
}

func TestEveryCallHasResult(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		tr := std(seed)
		seen := map[string]bool{}
		n := 0
		for i, m := range tr.Messages {
			if m.Role == "tool" {
				if i == 0 || len(tr.Messages[i-1].Calls) == 0 {
					t.Fatalf("seed %d: results at %d follow no calls", seed, i)
				}
				continue
			}
			if len(m.Calls) == 0 {
				continue
			}
			if m.Role != "assistant" {
				t.Fatalf("seed %d: %s message %d has calls", seed, m.Role, i)
			}
			if i+1 >= len(tr.Messages) || tr.Messages[i+1].Role != "tool" {
				t.Fatalf("seed %d: calls at %d have no results", seed, i)
			}
			rs := tr.Messages[i+1].Results
			if len(rs) != len(m.Calls) {
				t.Fatalf("seed %d: %d calls, %d results at %d", seed, len(m.Calls), len(rs), i)
			}
			for j, c := range m.Calls {
				if rs[j].CallID != c.ID {
					t.Fatalf("seed %d: result %q answers call %q", seed, rs[j].CallID, c.ID)
				}
				if seen[c.ID] {
					t.Fatalf("seed %d: call id %q used twice", seed, c.ID)
				}
				seen[c.ID] = true
				lines := strings.Count(rs[j].Output, "\n") + 1
				if !slices.IsSorted(rs[j].ErrLines) {
					t.Fatalf("seed %d: error lines of %s are not sorted", seed, c.ID)
				}
				for _, k := range rs[j].ErrLines {
					if k < 0 || k >= lines {
						t.Fatalf("seed %d: error line %d out of %d lines", seed, k, lines)
					}
				}
				if (c.Name == "read_file" || c.Name == "grep") != rs[j].Read {
					t.Errorf("seed %d: %s result has Read=%v", seed, c.Name, rs[j].Read)
				}
				n++
			}
		}
		if n != tr.ToolCalls {
			t.Errorf("seed %d: %d calls answered, ToolCalls says %d", seed, n, tr.ToolCalls)
		}
	}
}

// places splits a session's text by the class of place it is.
type places struct {
	errLines, passLines, written, user []string
	// not* hold everything outside the class's places, joined.
	notErr, notPass, notUser string
}

func split(tr *opsgen.Transcript) places {
	var p places
	var notErr, notPass, notUser []string
	other := func(s string) { // in no exclusive place
		notErr = append(notErr, s)
		notPass = append(notPass, s)
		notUser = append(notUser, s)
	}
	other(tr.System)
	for _, m := range tr.Messages {
		switch m.Role {
		case "user":
			p.user = append(p.user, m.Text)
			notErr = append(notErr, m.Text)
			notPass = append(notPass, m.Text)
		case "assistant":
			other(m.Text)
			for _, c := range m.Calls {
				for _, a := range c.Args {
					other(a.Value)
					if c.Writes() {
						p.written = append(p.written, a.Value)
					}
				}
			}
		case "tool":
			for _, r := range m.Results {
				bad := map[int]bool{}
				for _, k := range r.ErrLines {
					bad[k] = true
				}
				for k, l := range strings.Split(r.Output, "\n") {
					notUser = append(notUser, l)
					switch {
					case bad[k]:
						p.errLines = append(p.errLines, l)
						notPass = append(notPass, l)
					case r.Exit == 0:
						p.passLines = append(p.passLines, l)
						notErr = append(notErr, l)
					default:
						notErr = append(notErr, l)
						notPass = append(notPass, l)
					}
				}
			}
		}
	}
	j := func(xs []string) string { return strings.Join(xs, "\x00") }
	p.notErr, p.notPass, p.notUser = j(notErr), j(notPass), j(notUser)
	return p
}

func anyHolds(xs []string, s string) bool {
	for _, x := range xs {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}

func TestLabels(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		tr := std(seed)
		p := split(tr)
		counts := map[opsgen.Class]int{}
		for _, l := range tr.Labels {
			counts[l.Class]++
			var home []string
			var away string
			switch l.Class {
			case opsgen.ErrorLine:
				home, away = p.errLines, p.notErr
			case opsgen.PassingOutput:
				home, away = p.passLines, p.notPass
			case opsgen.FileWritten:
				home = p.written
			case opsgen.UserTurn:
				home, away = p.user, p.notUser
			default:
				t.Fatalf("seed %d: label %q has class %q", seed, l.Text, l.Class)
			}
			if l.Text == "" || l.Kind == "" {
				t.Errorf("seed %d: empty label %+v", seed, l)
			}
			if !anyHolds(home, l.Text) {
				t.Errorf("seed %d: %s label %q is in no place of its class", seed, l.Class, l.Text)
			}
			if away != "" && strings.Contains(away, l.Text) {
				t.Errorf("seed %d: %s label %q occurs outside its class", seed, l.Class, l.Text)
			}
		}
		for i, a := range tr.Labels {
			for j, b := range tr.Labels {
				if i != j && strings.Contains(a.Text, b.Text) {
					t.Errorf("seed %d: label %q holds label %q", seed, a.Text, b.Text)
				}
			}
		}
		for _, c := range opsgen.Classes {
			if counts[c] == 0 {
				t.Errorf("seed %d: no %s label", seed, c)
			}
		}
		if n := counts[opsgen.ErrorLine]; n < 35 || n > 75 {
			t.Errorf("seed %d: %d error_line labels, want about 40-60", seed, n)
		}
		t.Logf("seed %d: %v", seed, counts)
	}
}

var errWord = regexp.MustCompile(`(?i)error|fail`)

func TestFailuresVary(t *testing.T) {
	digits := regexp.MustCompile(`[0-9a-f]{2,}|[0-9]+`)
	for _, seed := range []uint64{1, 2} {
		tr := std(seed)
		plain, total := 0, 0
		shapes := map[string]bool{}
		plainShapes := map[string]bool{}
		okWithFailure, failed, withStatus := 0, 0, 0
		for _, m := range tr.Messages {
			for _, r := range m.Results {
				if len(r.ErrLines) == 0 {
					continue
				}
				lines := strings.Split(r.Output, "\n")
				if r.Exit == 0 {
					okWithFailure++
				} else {
					failed++
					if strings.HasPrefix(lines[len(lines)-1], "exit status ") {
						withStatus++
					}
				}
				for _, k := range r.ErrLines {
					l := strings.TrimSpace(lines[k])
					if l == "" {
						continue
					}
					total++
					shape := digits.ReplaceAllString(l, "#")
					if len(shape) > 40 {
						shape = shape[:40]
					}
					shapes[shape] = true
					if !errWord.MatchString(l) {
						plain++
						plainShapes[shape] = true
					}
				}
			}
		}
		t.Logf("seed %d: %d failure lines, %d without error/fail (%d shapes), %d shapes; %d failed results (%d with an exit status line), %d successful results printing failures",
			seed, total, plain, len(plainShapes), len(shapes), failed, withStatus, okWithFailure)
		if len(plainShapes) < 10 {
			t.Errorf("seed %d: only %d shapes of failure line without error/fail", seed, len(plainShapes))
		}
		if len(shapes) < 40 {
			t.Errorf("seed %d: only %d shapes of failure line", seed, len(shapes))
		}
		if okWithFailure < 3 {
			t.Errorf("seed %d: only %d successful commands print a failure", seed, okWithFailure)
		}
		if withStatus == failed || withStatus == 0 && failed > 4 {
			t.Errorf("seed %d: %d of %d failed results end with an exit status line; want some, not all", seed, withStatus, failed)
		}
	}
}

func TestVocab(t *testing.T) {
	lists := map[string][]string{"py": pyWords, "jl": jlWords, "r": rWords, "clj": cljWords, "lua": luaWords, "zig": zigWords, "key": keyWords, "upper": upperWords}
	for name, ws := range lists {
		for i, a := range ws {
			for j, b := range ws {
				if i != j && strings.HasPrefix(b, a) {
					t.Errorf("%s: %q is a prefix of %q", name, a, b)
				}
			}
		}
	}
}
