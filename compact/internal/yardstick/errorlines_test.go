package yardstick_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/internal/evidgen"
	"github.com/strata-memory/strata/compact/internal/yardstick"
	"github.com/strata-memory/strata/tiktoken"
)

func TestErrorLines(t *testing.T) {
	out := "=== RUN   TestA\n" +
		"    server_test.go:41: gateway listening on 127.0.0.1:40001\n" +
		"--- FAIL: TestReloadOrder/host_502 (0.98s)\n" +
		"panic: runtime error: index out of range [5] with length 5\n" +
		"\t/home/dev/gatewayd/internal/router/table.go:217 +0x2c5\n" +
		"request failed: dial tcp 127.0.0.1:40002: connect: connection refused\n" +
		"HTTP/1.1 502 Bad Gateway\n" +
		"\treturn nil, fmt.Errorf(\"no route\")\n" +
		"exit status 2\n" +
		"ok  \tgithub.com/acme/gatewayd/internal/router\t0.41s"
	got := yardstick.ErrorLines(out)
	want := []string{
		"--- FAIL: TestReloadOrder/host_502 (0.98s)",
		"panic: runtime error: index out of range [5] with length 5",
		"request failed: dial tcp 127.0.0.1:40002: connect: connection refused",
		"HTTP/1.1 502 Bad Gateway",
		"exit status 2",
		"\t/home/dev/gatewayd/internal/router/table.go:217 +0x2c5",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("error lines:\n%q\nwant\n%q", got, want)
	}
	if got := yardstick.ErrorLines("ok\nPASS\n\t/x/table.go:12 +0x1"); got != nil {
		t.Errorf("a passing output has error lines %q", got)
	}
	// A JSON document on one line is data, whatever words it holds.
	blob := `{"type":"snapshot","files":["` + strings.Repeat(`docs/notes.md","`, 80) + `"],"last":"error"}`
	if got := yardstick.ErrorLines(blob); got != nil {
		t.Errorf("a %d-byte line of data is an error line", len(blob))
	}
	ids := yardstick.Identifiers(`level=error code=E4821 upstream=https://billing-3.acme.test:8443/v2/charge request_id=req_7Hk2mQ9xA1bC at internal/proxy/retry.go:217 (ECONNREFUSED) sha 9c1e7ab2 deadbeef TestRetryBudget/upstream_502`)
	want = []string{"E4821", "https://billing-3.acme.test:8443/v2/charge", "req_7Hk2mQ9xA1bC", "internal/proxy/retry.go:217", "ECONNREFUSED", "9c1e7ab2", "TestRetryBudget/upstream_502"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("identifiers %q, want %q", ids, want)
	}
	for _, c := range []struct {
		s, id string
		ok    bool
	}{{"x E1234 y", "E1234", true}, {"E12345", "E1234", false}, {"a/b.go:12,", "a/b.go:12", true}, {"a/b.go:123", "a/b.go:12", false}, {"[127.0.0.1:80]", "127.0.0.1:80", true}} {
		if evidgen.ContainsToken(c.s, c.id) != c.ok {
			t.Errorf("ContainsToken(%q, %q) = %v", c.s, c.id, !c.ok)
		}
	}
}

// TestMeasureLabelled compacts a short evidgen session and checks the
// per-class accounting: every class is counted, kept never exceeds the
// total, and the lost labels are the difference.
func TestMeasureLabelled(t *testing.T) {
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	tr := evidgen.Generate(3, evidgen.Options{ToolCalls: 40, Scale: 0.5})
	cfg := compact.DefaultConfig()
	cfg.CompactionEnabled, cfg.CompactionThreshold, cfg.KeepRecentTokens = true, 8000, 2000
	for _, p := range []compact.Provider{compact.OpenAI, compact.Anthropic} {
		body := tr.OpenAI()
		if p == compact.Anthropic {
			body = tr.Anthropic()
		}
		row, err := yardstick.MeasureLabelled(context.Background(), "small", p, body, cfg, tok, labels(tr))
		if err != nil {
			t.Fatal(err)
		}
		if !row.Compacted {
			t.Fatalf("%s: not compacted (%s)", p, row.Reason)
		}
		kept, total := 0, 0
		for _, c := range evidgen.Classes {
			k := row.ByClass[string(c)]
			if k[1] == 0 {
				t.Errorf("%s: no %s identifier in the span", p, c)
			}
			kept, total = kept+k[0], total+k[1]
		}
		if kept > total || total-kept != len(row.LostLabels) || row.LabelTokens == 0 {
			t.Errorf("%s: kept %d of %d, %d lost, %d tokens", p, kept, total, len(row.LostLabels), row.LabelTokens)
		}
		if row.ErrorIDs == 0 || row.ErrorIDsKept > row.ErrorIDs {
			t.Errorf("%s: error-line identifiers %d kept of %d", p, row.ErrorIDsKept, row.ErrorIDs)
		}
		if !row.PairsOK || !row.RolesOK {
			t.Errorf("%s: %s", p, row.Problem)
		}
	}
}
