package checkpoint_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact/checkpoint"
	"github.com/strata-memory/strata/tiktoken"
)

// longErrorSpan is a session of many failing runs whose error lines are
// long log lines: each names an error code, an upstream host:port, the
// file:line it was raised at and a request id. Listing the identifiers
// takes a fraction of listing the lines. It returns the span, the
// identifiers on its error lines and the commands it ran.
func longErrorSpan(runs int) (span []checkpoint.Entry, ids, cmds []string) {
	span = append(span, checkpoint.Entry{Role: "user", Kind: "text",
		Text: "The gateway keeps failing its smoke runs against the staging upstreams; find out why and fix it."})
	for i := 0; i < runs; i++ {
		var out strings.Builder
		out.WriteString("starting smoke run\n")
		for j := 0; j < 2; j++ {
			n := i*2 + j
			code := fmt.Sprintf("GW%04d", 1000+n*37)
			host := fmt.Sprintf("10.%d.%d.%d:8443", 20+n%7, n%11, 10+n)
			site := fmt.Sprintf("internal/proxy/forward_%d.go:%d", n%9, 40+n*3)
			req := fmt.Sprintf("req_%08x", 0x3a7f10+n*7919)
			fmt.Fprintf(&out, "2026-12-07T10:%02d:%02dZ level=error msg=\"upstream call failed after three retries, giving up on this request and returning a gateway error to the caller\" code=%s upstream=%s at=%s request=%s\n",
				n%60, (n*7)%60, code, host, site, req)
			ids = append(ids, code, host, site, req)
		}
		out.WriteString("exit status 1\n")
		cmd := fmt.Sprintf("./scripts/smoke.sh --stage %d", i)
		cmds = append(cmds, cmd)
		span = append(span, run(fmt.Sprintf("c%d", i), cmd, out.String())...)
		span = append(span, checkpoint.Entry{Role: "assistant", Kind: "text", Text: "The run failed again; trying the next stage."})
	}
	return span, ids, cmds
}

// When the long error lines of a span do not fit the budget but the
// identifiers on them do, every identifier survives: the lines past
// their share give way to their identifiers, listed on their own.
func TestLongErrorLinesLeaveRoomForTheirIdentifiers(t *testing.T) {
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	span, ids, cmds := longErrorSpan(45)
	var lines []string
	for _, e := range span {
		if e.Kind == "tool_result" {
			for _, l := range strings.Split(e.Text, "\n") {
				if strings.Contains(l, "level=error") {
					lines = append(lines, l)
				}
			}
		}
	}
	if n := tok.Count(strings.Join(lines, "\n")); n <= checkpoint.DefaultBudget {
		t.Fatalf("the error lines take %d tokens, within the budget: the case does not test the rule", n)
	}
	if n := tok.Count(strings.Join(ids, "\n")); n > checkpoint.DefaultBudget/2 {
		t.Fatalf("listing the %d identifiers takes %d tokens, more than half the budget: the case does not test the rule", len(ids), n)
	}
	res, err := newWriter(t, checkpoint.Options{Tokenizer: tok}).Checkpoint(context.Background(), span, "")
	if err != nil {
		t.Fatal(err)
	}
	var lost []string
	for _, id := range append(ids, cmds...) {
		if !containsToken(res.Text, id) {
			lost = append(lost, id)
		}
	}
	if len(lost) > 0 {
		t.Errorf("%d of %d identifiers and commands lost: %q\n%s", len(lost), len(ids)+len(cmds), lost, res.Text)
	}
	// Some whole lines still say what the failure was.
	if !strings.Contains(res.Text, "giving up on this request") {
		t.Errorf("no error line kept whole:\n%s", res.Text)
	}
}

// A line that reports a failure in words other than an error line's
// shape (a JSON body's "error" field, a runner's "... FAILED") names
// failure evidence: its identifiers rank ahead of those a line that
// reports none shows, and a count of none ("errors: 0") reports none.
func TestFailureWordsNameEvidence(t *testing.T) {
	span := []checkpoint.Entry{user("Why does checkout time out?")}
	span = append(span, run("c1", "curl -s localhost:8080/v1/checkout",
		`{"error":{"code":"UPSTREAM_TIMEOUT","upstream":"10.4.7.19:8443","request_id":"req_7hk2mq9x"}}`)...)
	span = append(span, run("c2", "./scripts/load.sh",
		"target 10.9.1.33:9090 requests: 48104  errors: 0  p50: 17ms\nupstream 10.9.1.34:9090 ok")...)
	ids := checkpoint.Ledger(span, "")
	for _, failing := range []string{"10.4.7.19:8443", "req_7hk2mq9x"} {
		i := index(ids, failing)
		if i < 0 {
			t.Fatalf("%q of a failure's body not in the ledger: %v", failing, ids)
		}
		for _, passing := range []string{"10.9.1.33:9090", "10.9.1.34:9090"} {
			if j := index(ids, passing); j >= 0 && j < i {
				t.Errorf("%q of a run with no failure ranks before %q of a failure: %v", passing, failing, ids)
			}
		}
	}
}
