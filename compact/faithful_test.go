package compact_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/checkpoint"
)

// agentLoop returns a coding agent's transcript: a request, then rounds
// tool rounds whose outputs (about size characters of log each) end with
// a line that only that round's output holds, then a final reply and a
// new request.
func agentLoop(p compact.Provider, rounds, size int, last func(k int) string) []string {
	msgs := []string{user(p, "Please get the integration suite green again; don't touch the public API.")}
	for k := 0; k < rounds; k++ {
		var b strings.Builder
		for b.Len() < size {
			fmt.Fprintf(&b, "ok  \tgithub.com/acme/shop/internal/step%02d\t0.%03ds\n", k, b.Len()%1000)
		}
		b.WriteString(last(k))
		msgs = append(msgs, toolRound(p, fmt.Sprintf("call_%02d", k), "bash",
			fmt.Sprintf(`{"command":"go test ./internal/step%02d/..."}`, k), b.String())...)
	}
	msgs = append(msgs, assistant(p, "The suite is green again."), user(p, "Thanks. Now write the changelog entry."))
	return msgs
}

// The checkpoint reads the span as the caller sent it, before layer 1
// cleared its old tool results: an error only a cleared result held is
// in the checkpoint.
func TestCheckpointReadsSpanBeforePruning(t *testing.T) {
	w, err := checkpoint.New(checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			c := newCompactor(t, w, func(c *compact.Config) {
				c.CompactionThreshold = 4000
				c.KeepRecentTokens = 600
			}, nil)
			tr := mustParse(t, p, list(agentLoop(p, 14, 1200, func(k int) string {
				return fmt.Sprintf("panic: order %d: dial tcp 10.0.%d.7:5432: connect: connection refused\n", 9100+k, k)
			})...))
			res := compactOK(t, c, compact.Request{Transcript: tr, Force: true})
			if !res.Compacted || res.Prune.Cleared == 0 {
				t.Fatalf("compacted=%v prune=%+v; want results cleared and a compaction", res.Compacted, res.Prune)
			}
			cp := res.State.Checkpoint
			// The oldest round's error was cleared by layer 1.
			want := "panic: order 9100: dial tcp 10.0.0.7:5432: connect: connection refused"
			if !strings.Contains(cp, want) {
				t.Fatalf("the checkpoint lacks %q, which only a cleared result held:\n%s", want, cp)
			}
		})
	}
}
