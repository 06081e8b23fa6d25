package checkpoint_test

import (
	"reflect"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact/checkpoint"
)

func TestFormatParseRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		s    checkpoint.Sections
	}{
		{"empty", checkpoint.Sections{}},
		{"full", checkpoint.Sections{
			Goal:        "Fix the failing TestLogin without changing the API.",
			Constraints: []string{"Don't change the public API.", "Keep the timeout at 30s."},
			Done:        []string{"Edited `internal/auth/login.go`", "`go test ./...` passes"},
			InProgress:  []string{"`go vet ./...` fails: x.go:1:2: unused"},
			Decisions:   []string{"Rounding: half up, since totals are compared to the cent."},
			NextSteps:   []string{"Add a test for negative amounts.", "Deploy."},
			Notes:       []string{"The staging database is read-only until Friday."},
			Ledger: []checkpoint.Identifier{
				{Kind: "path", Text: "internal/auth/login.go"}, {Kind: "path", Text: "go.mod"},
				{Kind: "command", Text: "go test ./internal/auth/ -run TestLogin, -v"},
				{Kind: "error", Text: "login_test.go:12: got 401, want 200"},
				{Kind: "symbol", Text: "handleLogin"},
				{Kind: "url", Text: "https://example.com/a?x=1,2"},
				{Kind: "id", Text: "#412"}, {Kind: "id", Text: "3f9c2ab"},
				{Kind: "number", Text: "$4, 500 odd"}, {Kind: "number", Text: "30s"},
			},
		}},
		{"only ledger", checkpoint.Sections{Ledger: []checkpoint.Identifier{{Kind: "error", Text: "Error: a, b, c"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := tt.s.Format()
			got, err := checkpoint.Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(norm(got), norm(tt.s)) {
				t.Fatalf("round trip:\n%s\ngot  %#v\nwant %#v", text, got, tt.s)
			}
			if again := got.Format(); again != text {
				t.Fatalf("format is not stable:\n%s\n---\n%s", text, again)
			}
		})
	}
}

// norm makes nil and empty lists equal.
func norm(s checkpoint.Sections) checkpoint.Sections {
	fix := func(l []string) []string {
		if len(l) == 0 {
			return nil
		}
		return l
	}
	s.Constraints, s.Done, s.InProgress = fix(s.Constraints), fix(s.Done), fix(s.InProgress)
	s.Decisions, s.NextSteps, s.Notes = fix(s.Decisions), fix(s.NextSteps), fix(s.Notes)
	if len(s.Ledger) == 0 {
		s.Ledger = nil
	}
	return s
}

func TestFormatShape(t *testing.T) {
	text := checkpoint.Sections{Goal: "Ship it.", Done: []string{"a"}, NextSteps: []string{"b", "c"},
		Ledger: []checkpoint.Identifier{{Kind: "path", Text: "a.go"}, {Kind: "path", Text: "b.go"}, {Kind: "command", Text: "go test ./..."}}}.Format()
	want := "## Goal\nShip it.\n\n## Progress\n### Done\n- [x] a\n\n## Next Steps\n1. b\n2. c\n\n" +
		"## Critical Context\n- paths: a.go, b.go\n- command: go test ./..."
	if text != want {
		t.Errorf("format:\n%s\nwant (empty sections left out, no placeholder):\n%s", text, want)
	}
	// Still a checkpoint: an update reads it back as one.
	if s, err := checkpoint.Parse(text); err != nil || s.Goal != "Ship it." || len(s.Constraints) != 0 || len(s.NextSteps) != 2 {
		t.Errorf("parsed back: %+v, %v", s, err)
	}
	empty := checkpoint.Sections{Goal: "Ship it.", Constraints: []string{"None identified"}}.Format()
	if empty != "## Goal\nShip it.\n\n## Critical Context" {
		t.Errorf("a section of nothing but a placeholder is written:\n%s", empty)
	}
}

func TestParseVariants(t *testing.T) {
	reply := `Here is the summary.

**Goal:** Make checkout faster
without a cache.

### Constraints and Preferences
* Don't add a cache.
+ Keep p99 under 200ms.

# Progress
- [x] Profiled the search path
- [ ] Rewrite sortResults

## Key decisions:
1) **Sort once**: per query, on the cursor.

Next Steps:
1. Run the benchmark
   again after the change.
2. N/A

## Critical Context
- None
- The cursor keeps the order.
- paths: ` + "`src/search/sort.go`" + `, src/search/cursor.go
- errors: panic: boom, really
`
	got, err := checkpoint.Parse(reply)
	if err != nil {
		t.Fatal(err)
	}
	want := checkpoint.Sections{
		Goal:        "Make checkout faster without a cache.",
		Constraints: []string{"Don't add a cache.", "Keep p99 under 200ms."},
		Done:        []string{"Profiled the search path"},
		InProgress:  []string{"Rewrite sortResults"},
		Decisions:   []string{"Sort once: per query, on the cursor."},
		NextSteps:   []string{"Run the benchmark again after the change."},
		Notes:       []string{"The cursor keeps the order."},
		Ledger: []checkpoint.Identifier{{Kind: "path", Text: "src/search/sort.go"}, {Kind: "path", Text: "src/search/cursor.go"},
			{Kind: "error", Text: "panic: boom, really"}},
	}
	if !reflect.DeepEqual(norm(got), norm(want)) {
		t.Fatalf("got  %#v\nwant %#v", got, want)
	}
}

func TestParseNotACheckpoint(t *testing.T) {
	for _, text := range []string{"", "The user asked for a fix and the assistant made it.", "- a\n- b"} {
		_, err := checkpoint.Parse(text)
		if strata.ErrorCode(err) != strata.EINVALID {
			t.Errorf("Parse(%q) error = %v, want EINVALID", text, err)
		}
	}
}
