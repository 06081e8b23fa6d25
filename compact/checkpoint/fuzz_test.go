package checkpoint_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact/checkpoint"
)

var fuzzSeeds = []string{
	"Fix internal/billing/invoice.go:42 (see #412, commit 3f9c2ab, v1.4.2), timeout 30s, 512 MB, $4,500.",
	"panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.(*S).f(0x1)\n\t/src/main.go:20 +0x1d",
	"```bash\ngo test ./...\n```\n$ git diff --stat\n`npm run build` and `parseAmount()`",
	"E       AssertionError: assert 1 == 2\nFAILED tests/a.py::test_b - x\nsrc/a.ts(1,2): error TS1: y",
	"https://example.com/a?b=(c)) localhost:8080 PORT=8080 --x=1 lodash@4.17.21 ^1.2.3 C:\\a\\b.py ~/x ./... /",
	"`", "``", "$ ", "--- FAIL: ", "a=b= c==d ::x a::b ..:/ :1: ::::",
	"\xff\xfe broken \xc3 utf8 \u2028 line\rreturn",
	"==31337==\n==31337== Invalid read of size 4\n==31337==    at 0x4005: solve (solver.f90:88)\n==31337==",
}

// FuzzLedger checks that the scanner never panics, and that every
// identifier it finds in text is one line of that text, verbatim.
func FuzzLedger(f *testing.F) {
	for i, s := range fuzzSeeds {
		f.Add(s, uint8(i))
	}
	f.Fuzz(func(t *testing.T, text string, which uint8) {
		var e checkpoint.Entry
		switch which % 4 {
		case 0:
			e = user(text)
		case 1:
			e = output("bash", text)
		case 2:
			e = checkpoint.Entry{Role: "assistant", Kind: "thinking", Text: text}
		default:
			e = call("bash", text)
		}
		for _, d := range []string{checkpoint.Digest(text, 400, 1400), checkpoint.DigestFailed(text, 400, 1400)} {
			if strings.ContainsAny(d, "\n") {
				t.Fatalf("a digest of two lines: %q", d)
			}
		}
		ids := checkpoint.Ledger([]checkpoint.Entry{e}, text)
		for _, id := range ids {
			if strings.TrimSpace(id.Text) == "" || strings.ContainsAny(id.Text, "\r\n") {
				t.Fatalf("bad identifier %q", id)
			}
			switch id.Kind {
			case "path", "command", "url", "number", "error", "symbol", "id":
			default:
				t.Fatalf("bad kind %q", id.Kind)
			}
			if e.Kind != "tool_call" && !strings.Contains(text, id.Text) {
				t.Fatalf("%v is not in the text %q", id, text)
			}
		}
		w, err := checkpoint.New(checkpoint.Options{Budget: checkpoint.MinBudget})
		if err != nil {
			t.Fatal(err)
		}
		res, err := w.Checkpoint(context.Background(), []checkpoint.Entry{e, said(text)}, text)
		if err != nil {
			t.Fatal(err)
		}
		if n := (strata.CharEstimator{}).Count(res.Text); n > checkpoint.MinBudget {
			t.Fatalf("%d tokens over %d", n, checkpoint.MinBudget)
		}
	})
}

// FuzzParse checks that Parse never panics and that what it reads formats
// to a text that reads back the same.
func FuzzParse(f *testing.F) {
	f.Add(checkpoint.Sections{Goal: "g", Done: []string{"a"}, Ledger: []checkpoint.Identifier{{Kind: "path", Text: "a.go"}}}.Format())
	f.Add("**Goal:** x\n# Progress\n- [ ] y\n- [x] z\n## Critical Context\n- paths: a, b\n- error: e, f\n- note")
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := checkpoint.Parse(text)
		if err != nil {
			return
		}
		out := s.Format()
		s2, err := checkpoint.Parse(out)
		if err != nil {
			t.Fatalf("Format's output does not parse: %v\n%s", err, out)
		}
		if again := s2.Format(); again != out {
			t.Fatalf("not stable:\n%s\n---\n%s", out, again)
		}
	})
}

// TestPathologicalInputs checks that large inputs of one repeated shape
// (about 1 MB each) stay fast in every role, and as the previous
// checkpoint.
func TestPathologicalInputs(t *testing.T) {
	inputs := map[string]string{
		"abbreviations": strings.Repeat("a. B. c.d.e.f. ", 70000),
		"parentheses":   strings.Repeat(")", 300) + " " + strings.Repeat("(a)", 200000),
		"empty lines":   strings.Repeat("x\n", 500000),
		"wrapped item":  "## Done\n- a\n" + strings.Repeat("more words here\n", 60000),
		"code spans":    strings.Repeat("`a b` ", 150000),
		"errors":        strings.Repeat("Error: x\n", 100000),
		"symbols":       strings.Repeat("abcDef_ghi ", 100000),
		"paths":         strings.Repeat("a/b/c.go ", 100000),
		"numbers":       strings.Repeat("12 MB ", 150000),
		"long goal":     "# Goal\n" + strings.Repeat("word ", 200000),
	}
	w, _ := checkpoint.New(checkpoint.Options{})
	for name, in := range inputs {
		for _, e := range []checkpoint.Entry{user(in), output("bash", in), call("bash", in)} {
			start := time.Now()
			if _, err := w.Checkpoint(context.Background(), []checkpoint.Entry{e}, in); err != nil {
				t.Fatal(err)
			}
			// A bound for a blow-up (quadratic work on a megabyte takes
			// hours), not for speed: BenchmarkCheckpoint measures that.
			if d := time.Since(start); d > 2*time.Minute {
				t.Errorf("%s as %s: %v", name, e.Kind, d)
			}
		}
	}
}
