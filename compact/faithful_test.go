package compact_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

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
			// Outputs longer than a failing digest's room: one that
			// fits is kept whole, and clearing it saves nothing.
			tr := mustParse(t, p, list(agentLoop(p, 14, compact.DigestFailMaxChars+200, func(k int) string {
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

// digestOutput is a shell output whose identifiers a hard-cleared result
// keeps in its digest.
func digestOutput(k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "$ docker compose up api\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "api-1  | %02d:00:%02d INFO request served in %dms\n", k, i, 3+i)
	}
	fmt.Fprintf(&b, "api-1  | listening on port 80%02d\n", k)
	fmt.Fprintf(&b, "api-1  | GET https://billing.internal.example.com/v2/invoices/%d failed\n", 4000+k)
	fmt.Fprintf(&b, "api-1  | Error: connect ECONNREFUSED 10.2.0.%d:6379\n", k)
	fmt.Fprintf(&b, "api-1  | reading /srv/api/config/worker-%02d.yaml\n", k)
	fmt.Fprintf(&b, "api-1  | npm ERR! code ERR_SOCKET_TIMEOUT_%02d\n", k)
	return b.String()
}

// A hard-cleared result keeps, after the placeholder, one line naming the
// identifiers it held (error codes, URLs, paths, ports), deduplicated and
// within DigestFailMaxChars (the output has error lines);
// ToolClearDigest false leaves the bare placeholder.
func TestClearedResultDigest(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			doc := results(p, 10, digestOutput)
			tr := mustParse(t, p, doc)
			cfg := compact.DefaultConfig()
			st := prune(t, tr, cfg)
			if st.Cleared != 4 {
				t.Fatalf("cleared %d results, want 4", st.Cleared)
			}
			got := resultText(t, tr, 0)
			head, digest, ok := strings.Cut(got, "\n")
			if !ok || head != compact.ClearedPlaceholder || strings.Contains(digest, "\n") {
				t.Fatalf("cleared result is not the placeholder and one digest line:\n%s", got)
			}
			for _, want := range []string{"ECONNREFUSED", "10.2.0.0:6379", "https://billing.internal.example.com/v2/invoices/4000",
				"/srv/api/config/worker-00.yaml", "ERR_SOCKET_TIMEOUT_00", "8000"} {
				if !strings.Contains(digest, want) {
					t.Errorf("the digest lacks %q: %s", want, digest)
				}
			}
			if n := utf8.RuneCountInString(digest); n > compact.DigestFailMaxChars {
				t.Errorf("the digest has %d characters, over %d", n, compact.DigestFailMaxChars)
			}
			// Pruning again leaves the cleared result as it is.
			again := tr.Clone()
			prune(t, again, cfg)
			if resultText(t, again, 0) != got {
				t.Fatalf("a second prune changed the cleared result:\n%s", resultText(t, again, 0))
			}

			tr = mustParse(t, p, doc)
			cfg.ToolClearDigest = false
			prune(t, tr, cfg)
			if got := resultText(t, tr, 0); got != compact.ClearedPlaceholder {
				t.Fatalf("with the digest off, the cleared result is %q", got)
			}
		})
	}
}

func TestClearDigestSetting(t *testing.T) {
	if !compact.DefaultConfig().ToolClearDigest {
		t.Fatal("the digest is off by default")
	}
	cfg, err := compact.ConfigFromEnv(func(k string) string {
		if k == "STRATA_TOOL_CLEAR_DIGEST" {
			return "false"
		}
		return ""
	})
	if err != nil || cfg.ToolClearDigest {
		t.Fatalf("STRATA_TOOL_CLEAR_DIGEST=false: digest %v, %v", cfg.ToolClearDigest, err)
	}
	_, err = compact.ConfigFromEnv(func(k string) string {
		if k == "STRATA_TOOL_CLEAR_DIGEST" {
			return "maybe"
		}
		return ""
	})
	if err == nil || !strings.Contains(err.Error(), "STRATA_TOOL_CLEAR_DIGEST") {
		t.Fatalf("a bad STRATA_TOOL_CLEAR_DIGEST: %v", err)
	}
}
