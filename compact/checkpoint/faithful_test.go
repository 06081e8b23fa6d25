package checkpoint_test

import (
	"context"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact/checkpoint"
)

// run is a tool call of a shell command and its result.
func run(id, command, output string) []checkpoint.Entry {
	return []checkpoint.Entry{
		{Role: "assistant", Kind: "tool_call", Name: "bash", CallID: id, Text: `{"command": "` + command + `"}`},
		{Role: "tool", Kind: "tool_result", Name: "bash", CallID: id, Text: output},
	}
}

// A checkpoint states a check's outcome only from the output it read: a
// run whose output says FAIL (Go's bare summary line), panicked or
// errored never passes, and one whose output was cleared before the
// writer saw it is listed without an outcome.
func TestOutcomesOnlyFromEvidence(t *testing.T) {
	span := []checkpoint.Entry{user("Make the whole test suite pass, package by package.")}
	span = append(span, run("c1", "go test ./internal/cart/", "FAIL\texample.com/shop/internal/cart\t0.031s")...)
	span = append(span, run("c2", "pytest tests/test_orders.py", "collected 4 items\n\ntests/test_orders.py ..F.\n\n=== 1 failed, 3 passed in 0.21s ===")...)
	span = append(span, run("c3", "go test ./internal/ledger/", "[Tool output cleared — content was processed in earlier turns]")...)
	span = append(span, run("c4", "go test ./internal/tax/", "ok  \texample.com/shop/internal/tax\t0.004s")...)
	span = append(span, run("c5", "npm test", "> shop@1.0.0 test\n> jest\n\nTests:       2 failed, 14 passed, 16 total\nnpm ERR! Test failed.  See above for more details.")...)
	span = append(span, said("I'll look at the cart package next."))
	res, err := newWriter(t, checkpoint.Options{}).Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := checkpoint.Parse(res.Text)
	if err != nil {
		t.Fatal(err)
	}
	done := strings.Join(s.Done, "\n")
	for _, cmd := range []string{"go test ./internal/cart/", "pytest tests/test_orders.py", "npm test", "go test ./internal/ledger/"} {
		if strings.Contains(done, "`"+cmd+"` passes") {
			t.Errorf("%s is listed as passing:\n%s", cmd, res.Text)
		}
	}
	if !strings.Contains(done, "`go test ./internal/tax/` passes") {
		t.Errorf("the passing run is not listed as passing:\n%s", res.Text)
	}
	doing := strings.Join(s.InProgress, "\n")
	for _, cmd := range []string{"go test ./internal/cart/", "pytest tests/test_orders.py", "npm test"} {
		if !strings.Contains(doing, "`"+cmd+"` fails") {
			t.Errorf("%s is not listed as failing:\n%s", cmd, res.Text)
		}
	}
	// The cleared run is listed, without an outcome.
	all := done + "\n" + doing
	if !strings.Contains(all, "`go test ./internal/ledger/`") || strings.Contains(all, "`go test ./internal/ledger/` fails") {
		t.Errorf("the run whose output was cleared is not listed without an outcome:\n%s", res.Text)
	}
}
