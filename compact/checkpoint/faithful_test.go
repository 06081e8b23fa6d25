package checkpoint_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact/checkpoint"
	"github.com/strata-memory/strata/compact/internal/agentgen"
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

// The ledger spends a tight budget on distinct identifiers: error lines
// that differ only in numbers or hex collapse into one, and every kind
// the span holds is listed before any kind is listed whole; identifiers
// only tool output shows (URLs, ports, error codes) fill what room is
// left.
func TestLedgerSpendsBudgetOnDistinctIdentifiers(t *testing.T) {
	span := []checkpoint.Entry{user("The export job keeps failing on staging; find out why and fix `internal/export/writer.go`.")}
	for i := 0; i < 30; i++ {
		out := ""
		for j := 0; j < 3; j++ {
			out += fmt.Sprintf("FAIL line 7 of output %04x%02x: checksum mismatch\n", 0xbeef+i, j)
		}
		out += fmt.Sprintf("symbol exportBatch%02d\n", i)
		span = append(span, run(fmt.Sprintf("c%d", i), fmt.Sprintf("./scripts/verify-export.sh --shard %d", i), out)...)
	}
	span = append(span, run("u1", "curl -s http://staging.internal:8443/healthz",
		"upstream https://export-store.staging.example.com/v1/blobs answered 503\nError: connect ECONNREFUSED 10.4.1.9:6379")...)
	span = append(span, said("The shard verifier is not the problem; the cache at port 6379 refuses connections."))
	res, err := newWriter(t, checkpoint.Options{Budget: 700}).Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(res.Text, "FAIL line 7 of output"); n > 1 {
		t.Errorf("near-duplicate error lines listed %d times:\n%s", n, res.Text)
	}
	for _, want := range []string{"internal/export/writer.go", "http://staging.internal:8443/healthz",
		"https://export-store.staging.example.com/v1/blobs", "ECONNREFUSED", "10.4.1.9:6379"} {
		if !agentgen.Contains(res.Text, want) {
			t.Errorf("the checkpoint lacks %q:\n%s", want, res.Text)
		}
	}
	if res.Tokens < 600 && res.Omitted > 0 {
		t.Errorf("%d of 700 tokens used while %d identifiers were left out", res.Tokens, res.Omitted)
	}
}
