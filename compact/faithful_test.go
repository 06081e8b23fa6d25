package compact_test

import (
	"errors"
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

// The newest tool calls and results, which layer 1 protects, stay in the
// recent window whole even when they alone exceed keep_recent_tokens:
// the cut does not snap forward past them to the final user message, and
// the checkpoint takes everything older. Roles stay valid and no call is
// parted from its result.
func TestCutKeepsProtectedToolResults(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			msgs := chat(p, 4, 400, 1, 400)
			msgs = append(msgs, user(p, "u004 run the migrations and show me the logs"))
			for k := 0; k < 4; k++ {
				msgs = append(msgs, toolRound(p, fmt.Sprintf("m%d", k), "bash", `{"command":"make migrate"}`,
					fmt.Sprintf("log%d ", k)+strings.Repeat("x", 3995))...)
			}
			msgs = append(msgs, assistant(p, "a004 the migrations ran."), user(p, "u005 ok, and now?"))
			c := newCompactor(t, &fakeCheckpointer{}, nil, nil) // keep 500 tokens; each protected result is 1,000
			tr := mustParse(t, p, list(msgs...))
			res := compactOK(t, c, compact.Request{Transcript: tr, Force: true})
			if !res.Compacted {
				t.Fatalf("not compacted: %s", res.Reason)
			}
			out := marshal(t, res.Transcript)
			checkValid(t, p, out)
			for _, k := range []int{2, 3} { // the last KeepLastToolResults (2) results
				want := fmt.Sprintf("log%d ", k) + strings.Repeat("x", 3995)
				if !strings.Contains(out, want) {
					t.Fatalf("the protected result log%d is not in the recent window whole (cut %d of %d)", k, res.Cut, len(tr.Messages))
				}
			}
			if strings.Contains(out, "log1 ") {
				t.Fatalf("the recent window keeps an older result than the protected ones: the checkpoint should take it")
			}
			// A failing checkpointer with no earlier checkpoint: the list
			// still opens with a user turn.
			down := &fakeCheckpointer{answer: func(int, []checkpoint.Entry, string) (checkpoint.Result, error) {
				return checkpoint.Result{}, errors.New("model down")
			}}
			res = compactOK(t, newCompactor(t, down, nil, nil), compact.Request{Transcript: tr, Force: true})
			out = marshal(t, res.Transcript)
			checkValid(t, p, out)
			if !res.Fallback || res.Transcript.Messages[0].Text() != compact.TruncatedNotice {
				t.Fatalf("fallback %v, first message %q", res.Fallback, res.Transcript.Messages[0].Text())
			}
		})
	}
}
