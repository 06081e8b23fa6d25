package checkpoint_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact/checkpoint"
)

func index(ids []checkpoint.Identifier, text string) int {
	for i, id := range ids {
		if id.Text == text {
			return i
		}
	}
	return -1
}

func TestLedgerDedupe(t *testing.T) {
	span := []checkpoint.Entry{
		user("Look at ./internal/auth/token.go and `parseClaims()`."),
		call("read_file", `{"path": "internal/auth/token.go"}`),
		output("read_file", "func parseClaims(s string) (Claims, error) {"),
		said("The bug is in Internal/Auth/Token.go, in parseClaims."),
	}
	ids := checkpoint.Ledger(span, "")
	var paths, syms []string
	for _, id := range ids {
		switch id.Kind {
		case "path":
			paths = append(paths, id.Text)
		case "symbol":
			syms = append(syms, id.Text)
		}
	}
	// One path, as the tool call wrote it; one symbol.
	if len(paths) != 1 || paths[0] != "internal/auth/token.go" {
		t.Errorf("paths = %q, want the tool call's internal/auth/token.go once", paths)
	}
	if len(syms) != 1 || syms[0] != "parseClaims" {
		t.Errorf("symbols = %q, want parseClaims once", syms)
	}
}

func TestLedgerRanking(t *testing.T) {
	span := []checkpoint.Entry{
		call("bash", `{"command": "go test ./..."}`),
		output("bash", "--- FAIL: TestCharge (0.00s)\n    pay_test.go:9: got 1, want 2\nfunc noiseHelper() {}\nuses someOtherName\n"+
			"panic: boom\nexample.com/pay.settleCard(0x1)\n\t/src/pay/settle.go:20 +0x1d\n"),
		{Role: "assistant", Kind: "thinking", Text: "Maybe `thoughtName` matters."},
		said("Both `saidName` and `frequentName`, `frequentName`, `frequentName` matter."),
		user("Fix `userName`; the limit is 25 MB."),
	}
	ids := checkpoint.Ledger(span, "")
	rank := func(s string) int {
		i := index(ids, s)
		if i < 0 {
			t.Fatalf("%q missing from %v", s, ids)
		}
		return i
	}
	// The user beats the assistant, which beats its thinking; frequency
	// counts; an error and a command beat a name only a stack frame gives;
	// names only in the rest of the output are not listed.
	if !(rank("userName") < rank("saidName") && rank("saidName") < rank("thoughtName")) {
		t.Errorf("user, assistant, thinking: %v", ids)
	}
	if rank("frequentName") > rank("saidName") {
		t.Errorf("frequency does not count: %v", ids)
	}
	if rank("pay_test.go:9: got 1, want 2") > rank("pay.settleCard") || rank("go test ./...") > rank("pay.settleCard") {
		t.Errorf("an error or a command ranks below a frame's name: %v", ids)
	}
	if rank("25 MB") > rank("/src/pay/settle.go") {
		t.Errorf("the user's number ranks below a frame's path: %v", ids)
	}
	for _, s := range []string{"noiseHelper", "someOtherName"} {
		if index(ids, s) >= 0 {
			t.Errorf("%q, only in output, is listed: %v", s, ids)
		}
	}
}

// manyIdentifiers is a span with n distinct paths, commands and errors.
func manyIdentifiers(n int) []checkpoint.Entry {
	var span []checkpoint.Entry
	span = append(span, user("Please refactor the storage layer; keep the API."))
	for i := 0; i < n; i++ {
		args := fmt.Sprintf(`{"command": "go test ./internal/store%d/... -run TestCase%d"}`, i, i)
		span = append(span, call("bash", args),
			output("bash", fmt.Sprintf("internal/store%d/db_%d.go:%d:3: undefined: helperNumber%d\n", i, i, i+10, i)))
	}
	return span
}

func TestLedgerBudget(t *testing.T) {
	span := manyIdentifiers(200)
	all := checkpoint.Ledger(span, "")
	tok := strata.CharEstimator{}
	for _, budget := range []int{256, 600, 1000, 3000} {
		w, err := checkpoint.New(checkpoint.Options{Budget: budget})
		if err != nil {
			t.Fatal(err)
		}
		res, err := w.Checkpoint(context.Background(), span, "")
		if err != nil {
			t.Fatal(err)
		}
		if n := tok.Count(res.Text); n > budget || n != res.Tokens {
			t.Fatalf("budget %d: %d tokens (Result.Tokens %d)", budget, n, res.Tokens)
		}
		if res.Omitted == 0 || len(res.Ledger) == 0 {
			t.Fatalf("budget %d: %d carried, %d omitted: the ledger should have to rank", budget, len(res.Ledger), res.Omitted)
		}
		// Carried in rank order, each one said by the text. Whole error
		// lines past their share of the budget move behind the other
		// failure evidence, so they keep the rank order among
		// themselves, and the others among themselves.
		last := map[bool]int{false: -1, true: -1}
		for _, id := range res.Ledger {
			i := index(all, id.Text)
			isErr := id.Kind == "error"
			if i < 0 || i < last[isErr] {
				t.Fatalf("budget %d: %q out of rank order", budget, id.Text)
			}
			last[isErr] = i
			if !strings.Contains(strings.ToLower(res.Text), strings.ToLower(id.Text)) {
				t.Fatalf("budget %d: %q carried but not in the text", budget, id.Text)
			}
		}
		// The ledger lines read back as listed identifiers.
		sec, err := checkpoint.Parse(res.Text)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range sec.Ledger {
			if !has(res.Ledger, id.Kind, id.Text) {
				t.Fatalf("budget %d: listed %v is not in Result.Ledger", budget, id)
			}
		}
	}
}

func TestLedgerSaidOnce(t *testing.T) {
	span := []checkpoint.Entry{
		user("Edit internal/billing/invoice.go please."),
		said("Done: `invoice.go` now rounds."),
	}
	w, _ := checkpoint.New(checkpoint.Options{})
	res, err := w.Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	sec, _ := checkpoint.Parse(res.Text)
	// The goal quotes the path, and the path contains invoice.go: neither
	// is listed again.
	if len(sec.Ledger) != 0 {
		t.Errorf("listed again: %v\n%s", sec.Ledger, res.Text)
	}
	if !has(res.Ledger, "path", "internal/billing/invoice.go") || !has(res.Ledger, "path", "invoice.go") {
		t.Errorf("carried = %v", res.Ledger)
	}
}

func previousCheckpoint(ids ...checkpoint.Identifier) string {
	return checkpoint.Sections{Goal: "Keep the service running.", Ledger: ids}.Format()
}

func TestUpdateKeepsAndSupersedes(t *testing.T) {
	prev := previousCheckpoint(
		checkpoint.Identifier{Kind: "path", Text: "internal/legacy/old.go"},
		checkpoint.Identifier{Kind: "path", Text: "internal/cache/lru.go"},
		checkpoint.Identifier{Kind: "path", Text: "cmd/tool/main.go"},
		checkpoint.Identifier{Kind: "path", Text: "docs/notes.md"},
		checkpoint.Identifier{Kind: "path", Text: "internal/keep/me.go"},
		checkpoint.Identifier{Kind: "id", Text: "WORKERS=4"},
		checkpoint.Identifier{Kind: "number", Text: "--timeout=30s"},
		checkpoint.Identifier{Kind: "error", Text: "internal/cache/lru.go:12:3: undefined: evict"},
		checkpoint.Identifier{Kind: "error", Text: "--- FAIL: TestEvict"},
		checkpoint.Identifier{Kind: "error", Text: "--- FAIL: TestStillBroken"},
		checkpoint.Identifier{Kind: "error", Text: "dial tcp 10.0.0.5:5432: connection refused"},
		checkpoint.Identifier{Kind: "command", Text: "make deploy"},
	)
	span := []checkpoint.Entry{
		user("Clean up, then set WORKERS=8."),
		call("bash", `{"command": "git rm -r internal/legacy && git mv cmd/tool cmd/cli"}`),
		output("bash", ""),
		call("delete_file", `{"path": "docs"}`),
		output("delete_file", "deleted"),
		call("bash", `{"command": "go build ./internal/cache/"}`),
		output("bash", ""),
		call("bash", `{"command": "go test ./internal/cache/ -run TestEvict"}`),
		output("bash", "ok  \texample.com/x/internal/cache\t0.01s"),
		call("bash", `{"command": "go test ./internal/other/ -run TestStillBroken"}`),
		output("bash", "--- FAIL: TestStillBroken (0.00s)\nFAIL"),
		said("Set --timeout=30s as before."),
	}
	ids := checkpoint.Ledger(span, prev)
	gone := []string{"internal/legacy/old.go", "cmd/tool/main.go", "docs/notes.md", "WORKERS=4",
		"internal/cache/lru.go:12:3: undefined: evict", "--- FAIL: TestEvict"}
	for _, g := range gone {
		if index(ids, g) >= 0 {
			t.Errorf("%q should be superseded: %v", g, ids)
		}
	}
	kept := []string{"internal/cache/lru.go", "internal/keep/me.go", "--timeout=30s", "--- FAIL: TestStillBroken",
		"dial tcp 10.0.0.5:5432: connection refused", "make deploy", "WORKERS=8"}
	for _, k := range kept {
		if index(ids, k) < 0 {
			t.Errorf("%q should be kept: %v", k, ids)
		}
	}
	// Older entries go last: everything of the span comes before what only
	// the previous checkpoint had.
	if index(ids, "make deploy") < index(ids, "WORKERS=8") || index(ids, "internal/keep/me.go") < index(ids, "go build ./internal/cache/") {
		t.Errorf("older entries are not last: %v", ids)
	}
}

func TestUpdateOlderLastWhenShort(t *testing.T) {
	var old []checkpoint.Identifier
	for i := 0; i < 300; i++ {
		old = append(old, checkpoint.Identifier{Kind: "path", Text: fmt.Sprintf("internal/old%d/file%d.go", i, i)})
	}
	span := []checkpoint.Entry{
		user("Now fix internal/new/thing.go, the timeout must be 45s."),
		call("bash", `{"command": "go test ./internal/new/..."}`),
		output("bash", "ok"),
	}
	w, _ := checkpoint.New(checkpoint.Options{Budget: 600})
	res, err := w.Checkpoint(context.Background(), span, previousCheckpoint(old...))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Update || res.Omitted == 0 {
		t.Fatalf("update %v, omitted %d", res.Update, res.Omitted)
	}
	for _, want := range []string{"internal/new/thing.go", "45s", "go test ./internal/new/...", "internal/old0/file0.go"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("missing %q:\n%s", want, res.Text)
		}
	}
	if strings.Contains(res.Text, "internal/old299/file299.go") {
		t.Errorf("the last of the older entries should not fit:\n%s", res.Text)
	}
}
