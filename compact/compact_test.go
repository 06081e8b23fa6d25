package compact_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/checkpoint"
)

var now = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// newCompactor returns a compactor with compaction on, a 2,000-token
// threshold, 500 recent tokens kept and no output headroom, changed by
// change.
func newCompactor(t testing.TB, cp compact.Checkpointer, change func(*compact.Config), hook compact.Hook) *compact.Compactor {
	t.Helper()
	cfg := compact.DefaultConfig()
	cfg.CompactionEnabled = true
	cfg.CompactionThreshold = 2000
	cfg.KeepRecentTokens = 500
	cfg.OutputHeadroom = 0
	if change != nil {
		change(&cfg)
	}
	c, err := compact.New(compact.Options{Config: cfg, Checkpointer: cp, PreCompact: hook, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// chat returns n turns of a user message and an assistant reply, each of
// size characters (size/4 + 4 tokens), with rounds tool rounds between
// them whose output is out characters.
func chat(p compact.Provider, n, size, rounds, out int) []string {
	var msgs []string
	for i := 0; i < n; i++ {
		msgs = append(msgs, user(p, fmt.Sprintf("u%03d ", i)+strings.Repeat("u", size-5)))
		for k := 0; k < rounds; k++ {
			msgs = append(msgs, toolRound(p, fmt.Sprintf("c%d_%d", i, k), "bash", `{"cmd":"ls"}`,
				fmt.Sprintf("o%03d ", i)+strings.Repeat("o", out-5))...)
		}
		msgs = append(msgs, assistant(p, fmt.Sprintf("a%03d ", i)+strings.Repeat("a", size-5)))
	}
	return msgs
}

func compactOK(t testing.TB, c *compact.Compactor, req compact.Request) compact.Result {
	t.Helper()
	res, err := c.Compact(context.Background(), req)
	if err != nil {
		t.Fatalf("Compact: %v", err)
	}
	return res
}

// firstText returns the start of a message's text, for messages
// numbered by chat ("u007 ...").
func firstText(m *compact.Message) string {
	s := m.Text()
	if len(s) > 4 {
		return s[:4]
	}
	return s
}

func TestCompactUnderThresholdDoesNothing(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			cp := &fakeCheckpointer{}
			c := newCompactor(t, cp, nil, nil)
			doc := list(chat(p, 9, 400, 0, 0)...) // 9 * 208 = 1,872 tokens
			tr := mustParse(t, p, doc)
			res := compactOK(t, c, compact.Request{Transcript: tr})
			if res.Compacted || res.Reason != compact.ReasonUnderThreshold || cp.calls != 0 {
				t.Fatalf("compacted=%v reason=%q calls=%d, want nothing done", res.Compacted, res.Reason, cp.calls)
			}
			if res.TokensBefore != 9*208 || res.TokensAfter != 9*208 {
				t.Fatalf("tokens %d -> %d, want 1872", res.TokensBefore, res.TokensAfter)
			}
			if marshal(t, res.Transcript) != doc || res.State != (strata.CompactionState{}) {
				t.Fatal("list or state changed")
			}
		})
	}
}

func TestCompactOverThresholdCompacts(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			cp := &fakeCheckpointer{}
			c := newCompactor(t, cp, nil, nil)
			tr := mustParse(t, p, list(chat(p, 10, 400, 0, 0)...)) // 2,080 tokens
			res := compactOK(t, c, compact.Request{Transcript: tr})
			if !res.Compacted || cp.calls != 1 {
				t.Fatalf("compacted=%v calls=%d reason=%q", res.Compacted, cp.calls, res.Reason)
			}
			if res.TokensAfter >= res.TokensBefore {
				t.Fatalf("tokens %d -> %d", res.TokensBefore, res.TokensAfter)
			}
		})
	}
}

// The output headroom counts toward the threshold: the request's, else
// the list's max_tokens, else Config.OutputHeadroom.
func TestCompactCountsOutputHeadroom(t *testing.T) {
	msgs := list(chat(compact.Anthropic, 9, 400, 0, 0)...) // 1,872 tokens
	tests := []struct {
		name   string
		doc    string
		output int
		cfg    int
		want   bool
	}{
		{"none", msgs, 0, 0, false},
		{"request", msgs, 200, 0, true},
		{"list max_tokens", `{"max_tokens":200,"messages":` + msgs + `}`, 0, 0, true},
		{"request over list", `{"max_tokens":200,"messages":` + msgs + `}`, 100, 0, false},
		{"config", msgs, 0, 129, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCompactor(t, &fakeCheckpointer{}, func(c *compact.Config) { c.OutputHeadroom = tt.cfg }, nil)
			res := compactOK(t, c, compact.Request{Transcript: mustParse(t, compact.Anthropic, tt.doc), OutputTokens: tt.output})
			if res.Compacted != tt.want {
				t.Fatalf("compacted = %v, want %v (%s)", res.Compacted, tt.want, res.Reason)
			}
		})
	}
}

func TestCompactionOptInAndForce(t *testing.T) {
	cp := &fakeCheckpointer{}
	c := newCompactor(t, cp, func(c *compact.Config) { c.CompactionEnabled = false }, nil)
	tr := mustParse(t, compact.OpenAI, list(chat(compact.OpenAI, 30, 400, 0, 0)...))
	res := compactOK(t, c, compact.Request{Transcript: tr})
	if res.Compacted || res.Reason != compact.ReasonDisabled {
		t.Fatalf("disabled: compacted=%v reason=%q", res.Compacted, res.Reason)
	}
	res = compactOK(t, c, compact.Request{Transcript: tr, Force: true})
	if !res.Compacted {
		t.Fatalf("forced: not compacted (%s)", res.Reason)
	}
	// Force under the threshold too.
	small := mustParse(t, compact.OpenAI, list(chat(compact.OpenAI, 4, 400, 0, 0)...))
	if res := compactOK(t, newCompactor(t, cp, nil, nil), compact.Request{Transcript: small, Force: true}); !res.Compacted {
		t.Fatalf("forced under threshold: not compacted (%s)", res.Reason)
	}
}

func TestFindCutPointKeepsRecent(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			// Each message is 104 tokens. Walking back, 500 tokens are
			// reached at the 5th message from the end (an assistant
			// reply, index 15); the cut moves forward to the next user
			// message, index 16: the last two turns stay.
			c := newCompactor(t, &fakeCheckpointer{}, nil, nil)
			tr := mustParse(t, p, list(chat(p, 10, 400, 0, 0)...))
			res := compactOK(t, c, compact.Request{Transcript: tr})
			if res.Cut != 16 || res.MessagesCompacted != 16 {
				t.Fatalf("cut %d, compacted %d; want 16, 16", res.Cut, res.MessagesCompacted)
			}
			ms := res.Transcript.Messages
			if len(ms) != 2+4 || firstText(ms[2]) != "u008" {
				t.Fatalf("%d messages, first kept %q; want the pair + turns 8 and 9", len(ms), firstText(ms[2]))
			}
			// Reached exactly on a user message (6 messages, 624 tokens):
			// the cut stays there.
			c = newCompactor(t, &fakeCheckpointer{}, func(c *compact.Config) { c.KeepRecentTokens = 600 }, nil)
			res = compactOK(t, c, compact.Request{Transcript: tr, Force: true})
			if res.Cut != 14 {
				t.Fatalf("keep 600: cut %d, want 14", res.Cut)
			}
		})
	}
}

func TestCutAtUserBoundary(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			// Turns with three tool rounds each: the token walk lands
			// inside a tool loop; the cut must move to a real user message,
			// never to a tool-result message or an assistant's call.
			c := newCompactor(t, &fakeCheckpointer{}, func(c *compact.Config) { c.ToolPruningEnabled = false }, nil)
			for keep := 100; keep < 1900; keep += 37 {
				c = newCompactor(t, &fakeCheckpointer{}, func(c *compact.Config) {
					c.ToolPruningEnabled = false
					c.KeepRecentTokens = keep
				}, nil)
				tr := mustParse(t, p, list(chat(p, 6, 200, 3, 300)...))
				res := compactOK(t, c, compact.Request{Transcript: tr, Force: true})
				if !res.Compacted {
					t.Fatalf("keep %d: not compacted (%s)", keep, res.Reason)
				}
				at := tr.Messages[res.Cut]
				if at.Role() != "user" || at.IsToolResult() {
					t.Fatalf("keep %d: cut at a %s message (tool result %v)", keep, at.Role(), at.IsToolResult())
				}
				checkValid(t, p, marshal(t, res.Transcript))
			}
		})
	}
}

// When no user message follows the point the token walk reached, the cut
// moves back to the previous one (keeping more than asked).
func TestCutMovesBackWhenNoLaterUser(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			msgs := chat(p, 4, 400, 0, 0)
			msgs = append(msgs, chat(p, 1, 400, 6, 800)...) // a long last turn: 6 rounds of 204 tokens
			c := newCompactor(t, &fakeCheckpointer{}, func(c *compact.Config) { c.ToolPruningEnabled = false }, nil)
			tr := mustParse(t, p, list(msgs...))
			res := compactOK(t, c, compact.Request{Transcript: tr, Force: true})
			if res.Cut != 8 {
				t.Fatalf("cut %d, want 8 (the last turn's user message)", res.Cut)
			}
		})
	}
}

func TestNoUserBoundaryLeavesHistory(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			// One user message and a long tool loop: only pruning can help.
			cp := &fakeCheckpointer{}
			c := newCompactor(t, cp, nil, nil)
			tr := mustParse(t, p, list(chat(p, 1, 400, 12, 4000)...))
			res := compactOK(t, c, compact.Request{Transcript: tr})
			if res.Compacted || res.Reason != compact.ReasonNoBoundary || cp.calls != 0 {
				t.Fatalf("compacted=%v reason=%q", res.Compacted, res.Reason)
			}
			if res.Prune.Cleared == 0 || res.TokensAfter >= res.TokensBefore {
				t.Fatalf("layer 1 did not run: %+v", res.Prune)
			}
		})
	}
}

func TestHistoryFitsInKeepRecent(t *testing.T) {
	c := newCompactor(t, &fakeCheckpointer{}, nil, nil)
	res := compactOK(t, c, compact.Request{Transcript: mustParse(t, compact.OpenAI, list(chat(compact.OpenAI, 2, 400, 0, 0)...)), Force: true})
	if res.Compacted || res.Reason != compact.ReasonFits {
		t.Fatalf("compacted=%v reason=%q", res.Compacted, res.Reason)
	}
}

func TestAlternationPreserved(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			c := newCompactor(t, &fakeCheckpointer{}, nil, nil)
			tr := mustParse(t, p, list(chat(p, 8, 300, 2, 500)...))
			res := compactOK(t, c, compact.Request{Transcript: tr, Force: true})
			if !res.Compacted {
				t.Fatal(res.Reason)
			}
			out := marshal(t, res.Transcript)
			checkValid(t, p, out)
			ms := res.Transcript.Messages
			if ms[0].Role() != "user" || !strings.HasPrefix(ms[0].Text(), compact.SummaryPrefix) ||
				ms[1].Role() != "assistant" || ms[1].Text() != compact.Acknowledgement {
				t.Fatalf("no summary pair at the head: %s", out[:200])
			}
		})
	}
}

// The token walk stops on an assistant message; the recent window must
// not start with it: the cut moves forward to the next user message.
func TestAlternationLeadingAssistant(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			// Assistant replies are big: the 500 tokens are reached on
			// the last assistant reply but one.
			var msgs []string
			for i := 0; i < 6; i++ {
				msgs = append(msgs, user(p, fmt.Sprintf("u%03d short", i)), assistant(p, fmt.Sprintf("a%03d ", i)+strings.Repeat("a", 1800)))
			}
			c := newCompactor(t, &fakeCheckpointer{}, nil, nil)
			tr := mustParse(t, p, list(msgs...))
			res := compactOK(t, c, compact.Request{Transcript: tr, Force: true})
			if res.Cut != 10 || tr.Messages[9].Role() != "assistant" {
				t.Fatalf("cut %d, want 10 (after the assistant reply at 9)", res.Cut)
			}
			ms := res.Transcript.Messages
			if ms[2].Role() != "user" || firstText(ms[2]) != "u005" {
				t.Fatalf("recent window starts with %s %q", ms[2].Role(), firstText(ms[2]))
			}
			checkValid(t, p, marshal(t, res.Transcript))
		})
	}
}

func TestOpenAISystemStaysFirst(t *testing.T) {
	msgs := append([]string{oaSystem("You are careful."), js(map[string]any{"role": "developer", "content": "Use tools."})},
		chat(compact.OpenAI, 10, 400, 0, 0)...)
	cp := &fakeCheckpointer{}
	c := newCompactor(t, cp, nil, nil)
	tr := mustParse(t, compact.OpenAI, list(msgs...))
	res := compactOK(t, c, compact.Request{Transcript: tr, Force: true})
	ms := res.Transcript.Messages
	if ms[0] != tr.Messages[0] || ms[1] != tr.Messages[1] {
		t.Fatal("the system and developer messages are not first, unchanged")
	}
	if !strings.HasPrefix(ms[2].Text(), compact.SummaryPrefix) {
		t.Fatal("the summary pair does not follow the system messages")
	}
	for _, e := range cp.spans[0] {
		if e.Role == "system" {
			t.Fatal("a system message was compacted")
		}
	}
	checkValid(t, compact.OpenAI, marshal(t, res.Transcript))
}

// A second compaction hands the first checkpoint to the checkpointer as
// the previous one (the UPDATE path), and leaves one summary pair. (The
// update prompt itself belongs to the checkpoint writer; this is the
// spec's iterative-update test as far as package compact goes.)
func TestIterativeUpdatePrompt(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			cp := &fakeCheckpointer{}
			c := newCompactor(t, cp, nil, nil)
			first := compactOK(t, c, compact.Request{Transcript: mustParse(t, p, list(chat(p, 10, 400, 0, 0)...))})
			if !first.Compacted || cp.previous[0] != "" || first.Update {
				t.Fatalf("first: compacted=%v previous=%q update=%v", first.Compacted, cp.previous[0], first.Update)
			}
			// The agent goes on: ten more turns on the compacted list.
			doc := marshal(t, first.Transcript)
			doc = doc[:len(doc)-1] + "," + strings.Join(chat(p, 10, 400, 0, 0), ",") + "]"
			second := compactOK(t, c, compact.Request{Transcript: mustParse(t, p, doc), State: first.State})
			if !second.Compacted || cp.calls != 2 {
				t.Fatalf("second: compacted=%v (%s)", second.Compacted, second.Reason)
			}
			if cp.previous[1] != first.State.Checkpoint || !second.Update || !second.Checkpoint.Update {
				t.Fatalf("second: previous=%q update=%v, want the first checkpoint", cp.previous[1], second.Update)
			}
			for _, e := range cp.spans[1] {
				if strings.Contains(e.Text, "[Previous conversation summary]") || e.Text == compact.Acknowledgement {
					t.Fatalf("the old summary pair was handed over as conversation: %q", e.Text)
				}
			}
			n := 0
			for _, m := range second.Transcript.Messages {
				if strings.HasPrefix(m.Text(), compact.SummaryPrefix) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("%d summary messages, want 1", n)
			}
			if got := second.Transcript.Messages[0].Text(); got != compact.SummaryPrefix+second.Checkpoint.Text {
				t.Fatalf("summary = %.80q", got)
			}
			if second.State.CompactionCount != 2 || second.State.TurnCount != first.MessagesCompacted+second.MessagesCompacted {
				t.Fatalf("state = %+v", second.State)
			}
			checkValid(t, p, marshal(t, second.Transcript))
		})
	}
}

// With the state lost (a zero State), the checkpoint carried by the list's
// summary pair is the previous one.
func TestPreviousCheckpointFromList(t *testing.T) {
	cp := &fakeCheckpointer{}
	c := newCompactor(t, cp, nil, nil)
	first := compactOK(t, c, compact.Request{Transcript: mustParse(t, compact.Anthropic, list(chat(compact.Anthropic, 10, 400, 0, 0)...))})
	doc := marshal(t, first.Transcript)
	doc = doc[:len(doc)-1] + "," + strings.Join(chat(compact.Anthropic, 10, 400, 0, 0), ",") + "]"
	compactOK(t, c, compact.Request{Transcript: mustParse(t, compact.Anthropic, doc)})
	if cp.previous[1] != first.State.Checkpoint {
		t.Fatalf("previous = %q, want the list's checkpoint", cp.previous[1])
	}
}

func TestSummarizationFailureFallback(t *testing.T) {
	dead := errors.New("model endpoint: 503 overloaded")
	for _, p := range providers {
		for _, previous := range []string{"", "## Goal\nShip v2."} {
			t.Run(fmt.Sprintf("%s/previous=%v", p, previous != ""), func(t *testing.T) {
				cp := &fakeCheckpointer{answer: func(int, []checkpoint.Entry, string) (checkpoint.Result, error) {
					return checkpoint.Result{}, dead
				}}
				c := newCompactor(t, cp, func(c *compact.Config) { c.ToolPruningEnabled = false }, nil)
				tr := mustParse(t, p, list(chat(p, 10, 400, 1, 200)...))
				state := strata.CompactionState{Checkpoint: previous, TurnCount: 40, CompactionCount: 3}
				res := compactOK(t, c, compact.Request{Transcript: tr, State: state})
				if !res.Compacted || !res.Fallback || !errors.Is(res.Err, dead) || res.Mode != compact.ModeTruncate {
					t.Fatalf("compacted=%v fallback=%v err=%v mode=%q", res.Compacted, res.Fallback, res.Err, res.Mode)
				}
				ms := res.Transcript.Messages
				if previous != "" {
					if ms[0].Text() != compact.SummaryPrefix+previous || ms[1].Text() != compact.Acknowledgement {
						t.Fatal("the previous checkpoint is not the prefix")
					}
					ms = ms[2:]
				}
				// The recent window is kept whole.
				recent := tr.Messages[res.Cut:]
				if len(ms) != len(recent) {
					t.Fatalf("%d recent messages kept, want %d", len(ms), len(recent))
				}
				for i := range recent {
					if string(ms[i].JSON()) != string(recent[i].JSON()) {
						t.Fatalf("recent message %d changed", i)
					}
				}
				want := strata.CompactionState{Checkpoint: previous, TurnCount: 40 + res.MessagesCompacted, CompactionCount: 3, Updated: now}
				if res.State != want {
					t.Fatalf("state = %+v, want %+v", res.State, want)
				}
				checkValid(t, p, marshal(t, res.Transcript))
			})
		}
	}
	// An empty checkpoint is a failure too.
	cp := &fakeCheckpointer{answer: func(int, []checkpoint.Entry, string) (checkpoint.Result, error) {
		return checkpoint.Result{Text: " \n"}, nil
	}}
	res := compactOK(t, newCompactor(t, cp, nil, nil), compact.Request{Transcript: mustParse(t, compact.OpenAI, list(chat(compact.OpenAI, 10, 400, 0, 0)...))})
	if !res.Fallback || res.Err == nil {
		t.Fatalf("empty checkpoint: fallback=%v err=%v", res.Fallback, res.Err)
	}
}

// A checkpoint cut short by the caller's context is an error, not a
// fallback: the caller is going away.
func TestCompactCanceledDuringCheckpoint(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cp := &fakeCheckpointer{answer: func(int, []checkpoint.Entry, string) (checkpoint.Result, error) {
		cancel()
		return checkpoint.Result{}, context.Canceled
	}}
	c := newCompactor(t, cp, nil, nil)
	_, err := c.Compact(ctx, compact.Request{Transcript: mustParse(t, compact.OpenAI, list(chat(compact.OpenAI, 10, 400, 0, 0)...))})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestConversationStateUpdated(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			c := newCompactor(t, &fakeCheckpointer{}, nil, nil)
			state := strata.CompactionState{TurnCount: 7, CompactionCount: 0}
			res := compactOK(t, c, compact.Request{Transcript: mustParse(t, p, list(chat(p, 10, 400, 0, 0)...)), State: state})
			want := strata.CompactionState{Checkpoint: res.Checkpoint.Text, TurnCount: 7 + 16, CompactionCount: 1, Updated: now}
			if res.State != want {
				t.Fatalf("state = %+v, want %+v", res.State, want)
			}
			if res.Identifiers != 1 || res.Mode != checkpoint.ModeExtractive {
				t.Fatalf("identifiers=%d mode=%q", res.Identifiers, res.Mode)
			}
		})
	}
}

// Stands for the spec's turn_contexts cleanup test: strata keeps no
// per-turn side list, so the equivalent is that the span leaves the list
// whole (not partly), goes to the hook, and the state's TurnCount
// accounts for it: nothing is kept twice and nothing is lost.
func TestSpanLeavesListAndAdvancesTurnCount(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			var got compact.Span
			c := newCompactor(t, &fakeCheckpointer{}, nil, func(_ context.Context, s compact.Span) error { got = s; return nil })
			tr := mustParse(t, p, list(chat(p, 10, 400, 1, 100)...))
			res := compactOK(t, c, compact.Request{Transcript: tr, State: strata.CompactionState{TurnCount: 5}})
			if len(got.Messages) != res.MessagesCompacted || res.Cut != res.MessagesCompacted {
				t.Fatalf("span %d messages, compacted %d, cut %d", len(got.Messages), res.MessagesCompacted, res.Cut)
			}
			if len(res.Transcript.Messages) != 2+len(tr.Messages)-res.Cut {
				t.Fatalf("%d messages after, want the pair + %d", len(res.Transcript.Messages), len(tr.Messages)-res.Cut)
			}
			for i, m := range got.Messages {
				if m != tr.Messages[i] {
					t.Fatalf("span message %d is not the input's", i)
				}
			}
			if res.State.TurnCount != 5+res.MessagesCompacted || got.FirstTurn != 5 || got.Number != 1 {
				t.Fatalf("turn count %d, span first turn %d number %d", res.State.TurnCount, got.FirstTurn, got.Number)
			}
		})
	}
}

func TestPreCompactHook(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			var spans []compact.Span
			hook := func(ctx context.Context, s compact.Span) error { spans = append(spans, s); return nil }
			cp := &fakeCheckpointer{}
			c := newCompactor(t, cp, nil, hook)
			tr := mustParse(t, p, list(chat(p, 10, 400, 1, 100)...))
			res := compactOK(t, c, compact.Request{Transcript: tr, State: strata.CompactionState{CompactionCount: 4, TurnCount: 100}})
			if len(spans) != 1 {
				t.Fatalf("hook ran %d times", len(spans))
			}
			s := spans[0]
			if s.Number != 5 || s.FirstTurn != 100 || s.Provider != p || len(s.Messages) != res.MessagesCompacted {
				t.Fatalf("span number %d first turn %d provider %s messages %d", s.Number, s.FirstTurn, s.Provider, len(s.Messages))
			}
			// Its JSON is a list in the provider's shape with the same messages.
			back, err := compact.Parse(p, s.JSON())
			if err != nil || len(back.Messages) != len(s.Messages) {
				t.Fatalf("span JSON: %v", err)
			}
			for i := range s.Messages {
				if string(back.Messages[i].JSON()) != string(tr.Messages[i].JSON()) {
					t.Fatalf("span JSON message %d differs", i)
				}
			}
			// Entries: one per message here (a user text, a tool call,
			// its result, an assistant text).
			if len(s.Entries) != res.MessagesCompacted {
				t.Fatalf("%d entries for %d messages", len(s.Entries), res.MessagesCompacted)
			}
			e := s.Entries[1]
			if e.Kind != "tool_call" || e.Name != "bash" || e.CallID != "c0_0" || e.Text != `{"cmd":"ls"}` {
				t.Fatalf("entry 1 = %+v", e)
			}
			e = s.Entries[2]
			if e.Kind != "tool_result" || e.Role != "tool" || e.Name != "bash" || e.CallID != "c0_0" || !strings.HasPrefix(e.Text, "o000") {
				t.Fatalf("entry 2 = %+v", e)
			}
		})
	}
}

func TestPreCompactHookErrorAborts(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			stop := errors.New("memory is read-only")
			cp := &fakeCheckpointer{}
			c := newCompactor(t, cp, nil, func(context.Context, compact.Span) error { return stop })
			doc := list(chat(p, 10, 400, 3, 6000)...)
			tr := mustParse(t, p, doc)
			res, err := c.Compact(context.Background(), compact.Request{Transcript: tr, State: strata.CompactionState{TurnCount: 3}})
			if !errors.Is(err, stop) {
				t.Fatalf("err = %v, want the hook's", err)
			}
			if cp.calls != 0 || res.Transcript != nil || res.State != (strata.CompactionState{}) {
				t.Fatal("the compaction went on")
			}
			if marshal(t, tr) != doc {
				t.Fatal("the input changed")
			}
		})
	}
}

// The span handed to memory is the caller's messages, whole, and the
// checkpointer reads the same: not as this call's pruning left them.
func TestSpanAndCheckpointerUnpruned(t *testing.T) {
	var span compact.Span
	cp := &fakeCheckpointer{}
	c := newCompactor(t, cp, func(c *compact.Config) { c.KeepRecentTokens = 1500; c.CompactionThreshold = 5000 }, func(_ context.Context, s compact.Span) error { span = s; return nil })
	p := compact.OpenAI
	tr := mustParse(t, p, list(chat(p, 12, 400, 1, 9000)...))
	res := compactOK(t, c, compact.Request{Transcript: tr})
	if !res.Compacted || res.Prune.Cleared == 0 {
		t.Fatalf("compacted=%v prune=%+v", res.Compacted, res.Prune)
	}
	full, seen := 0, 0
	for _, e := range span.Entries {
		if e.Kind == "tool_result" && len(e.Text) == 9000 {
			full++
		}
	}
	for _, e := range cp.spans[0] {
		if e.Kind == "tool_result" && len(e.Text) == 9000 {
			seen++
		}
	}
	if full != res.MessagesCompacted/4 || seen != full {
		t.Fatalf("span has %d whole results, the checkpointer read %d", full, seen)
	}
}

// Stands for the spec's test of the reworked, asynchronous
// message-preparation gate: Compact is safe to call again and again
// (before every model call), and from several goroutines; it never
// changes its input, and on its own output it has nothing more to do.
func TestCompactRepeatedCalls(t *testing.T) {
	for _, p := range providers {
		t.Run(string(p), func(t *testing.T) {
			cp := &fakeCheckpointer{answer: func(_ int, span []checkpoint.Entry, previous string) (checkpoint.Result, error) {
				return goodCheckpoint(1, span, previous)
			}}
			c := newCompactor(t, cp, nil, nil)
			doc := list(chat(p, 10, 400, 2, 5000)...)
			tr := mustParse(t, p, doc)
			var wg sync.WaitGroup
			outs := make([]string, 8)
			for i := range outs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := c.Compact(context.Background(), compact.Request{Transcript: tr})
					if err != nil {
						t.Error(err)
						return
					}
					outs[i] = string(res.Transcript.JSON())
				}()
			}
			wg.Wait()
			for _, o := range outs[1:] {
				if o != outs[0] {
					t.Fatal("concurrent calls disagree")
				}
			}
			if marshal(t, tr) != doc {
				t.Fatal("the input changed")
			}
			first := compactOK(t, c, compact.Request{Transcript: tr})
			again := compactOK(t, c, compact.Request{Transcript: first.Transcript, State: first.State})
			if again.Compacted || again.Prune != (compact.PruneStats{}) || again.State != first.State {
				t.Fatalf("second call: compacted=%v prune=%+v", again.Compacted, again.Prune)
			}
			if marshal(t, again.Transcript) != marshal(t, first.Transcript) {
				t.Fatal("second call changed the list")
			}
		})
	}
}

func TestCompactNeedsCheckpointer(t *testing.T) {
	c := newCompactor(t, nil, nil, nil)
	tr := mustParse(t, compact.OpenAI, list(chat(compact.OpenAI, 10, 400, 0, 0)...))
	if _, err := c.Compact(context.Background(), compact.Request{Transcript: tr}); strata.ErrorCode(err) != strata.EINVALID {
		t.Fatalf("err = %v, want EINVALID", err)
	}
	small := mustParse(t, compact.OpenAI, list(chat(compact.OpenAI, 2, 400, 0, 0)...))
	if _, err := c.Compact(context.Background(), compact.Request{Transcript: small}); err != nil {
		t.Fatalf("under the threshold: %v", err)
	}
}

func TestCompactRejectsBadRequest(t *testing.T) {
	c := newCompactor(t, &fakeCheckpointer{}, nil, nil)
	tr := mustParse(t, compact.OpenAI, `[]`)
	for _, req := range []compact.Request{
		{},
		{Transcript: tr, SystemTokens: -1},
		{Transcript: tr, OutputTokens: -1},
		{Transcript: tr, State: strata.CompactionState{TurnCount: -1}},
	} {
		if _, err := c.Compact(context.Background(), req); strata.ErrorCode(err) != strata.EINVALID {
			t.Fatalf("%+v: err = %v", req, err)
		}
	}
	if _, err := compact.New(compact.Options{Config: compact.Config{ToolSoftTrimChars: 10}}); err == nil {
		t.Fatal("New accepted a bad config")
	}
}

// Stands for the spec's history-text-with-summary test: Render puts the
// checkpoint before the recent messages.
func TestRenderWithSummary(t *testing.T) {
	c := newCompactor(t, &fakeCheckpointer{}, nil, nil)
	p := compact.Anthropic
	msgs := chat(p, 10, 400, 0, 0)
	msgs = append(msgs, toolRound(p, "r1", "bash", `{"cmd":"date"}`, "Mon Mar  2")...)
	msgs = append(msgs, assistant(p, "It is Monday."))
	res := compactOK(t, c, compact.Request{Transcript: mustParse(t, p, list(msgs...))})
	got := compact.Render(res.Transcript, res.State.Checkpoint, 3)
	want := "[Previous context summary]\n" + res.State.Checkpoint + "\n\n\n" +
		"Assistant: [tool call bash id=r1] {\"cmd\":\"date\"}\n\n" +
		"Tool: [tool result bash id=r1] Mon Mar  2\n\n" +
		"Assistant: It is Monday."
	if got != want {
		t.Fatalf("Render =\n%s\nwant\n%s", got, want)
	}
	// With no checkpoint given, the list's summary pair supplies it, and
	// the pair itself is not rendered as messages.
	all := compact.Render(res.Transcript, "", 0)
	if !strings.HasPrefix(all, "[Previous context summary]\n"+res.State.Checkpoint) || strings.Contains(all, compact.Acknowledgement) {
		t.Fatalf("Render without checkpoint:\n%.300s", all)
	}
	if got := compact.Render(mustParse(t, p, list(anUser("hi"), anAssistant("hello"))), "", 0); got != "User: hi\n\nAssistant: hello" {
		t.Fatalf("Render without summary = %q", got)
	}
}

type memStore struct {
	mu     sync.Mutex
	states map[string]strata.CompactionState
	saves  int
}

func (m *memStore) Load(ctx context.Context, conv string) (strata.CompactionState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.states[conv], nil
}

func (m *memStore) Save(ctx context.Context, conv string, s strata.CompactionState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.states[conv] = s
	m.saves++
	return nil
}

var _ compact.StateStore = (*memStore)(nil)

// The checkpoint survives a restart: a new compactor reading the saved
// state updates it.
func TestCompactConversationWithStateStore(t *testing.T) {
	st := &memStore{states: map[string]strata.CompactionState{}}
	p := compact.OpenAI
	cp := &fakeCheckpointer{}
	c := newCompactor(t, cp, nil, nil)
	res, err := c.CompactConversation(context.Background(), st, "c1", compact.Request{Transcript: mustParse(t, p, list(chat(p, 10, 400, 0, 0)...))})
	if err != nil || !res.Compacted || st.saves != 1 || st.states["c1"] != res.State {
		t.Fatalf("first: %v compacted=%v saves=%d", err, res.Compacted, st.saves)
	}
	// Restart: a fresh list (the agent lost it), a fresh compactor.
	c2 := newCompactor(t, cp, nil, nil)
	res2, err := c2.CompactConversation(context.Background(), st, "c1", compact.Request{Transcript: mustParse(t, p, list(chat(p, 10, 400, 0, 0)...))})
	if err != nil || cp.previous[1] != res.State.Checkpoint || res2.State.CompactionCount != 2 {
		t.Fatalf("after restart: %v previous=%q count=%d", err, cp.previous[1], res2.State.CompactionCount)
	}
	// Nothing to do: nothing saved.
	if _, err := c2.CompactConversation(context.Background(), st, "c1", compact.Request{Transcript: mustParse(t, p, `[]`)}); err != nil || st.saves != 2 {
		t.Fatalf("no-op: %v saves=%d", err, st.saves)
	}
}

func TestSpanTurns(t *testing.T) {
	p := compact.Anthropic
	doc := list(
		anUser("Deploy /srv/app to prod."),
		js(map[string]any{"role": "assistant", "content": []any{
			map[string]any{"type": "thinking", "thinking": "check first", "signature": "S"},
			map[string]any{"type": "text", "text": "Checking."},
			map[string]any{"type": "tool_use", "id": "t1", "name": "bash", "input": map[string]any{"cmd": "make deploy"}},
		}}),
		anResults(result{id: "t1", content: "error: disk full", isError: true}),
		anAssistant("The disk is full."),
	)
	var spans []compact.Span
	c := newCompactor(t, &fakeCheckpointer{}, nil, func(_ context.Context, s compact.Span) error { spans = append(spans, s); return nil })
	msgs := []string{doc[1 : len(doc)-1]}
	msgs = append(msgs, chat(p, 10, 400, 0, 0)...)
	tr := mustParse(t, p, list(msgs...))
	state := strata.CompactionState{TurnCount: 12, CompactionCount: 1}
	compactOK(t, c, compact.Request{Transcript: tr, State: state})
	turns := compact.SpanTurns(spans[0], func() time.Time { return now })
	if len(turns) != len(spans[0].Messages) {
		t.Fatalf("%d turns for %d messages", len(turns), len(spans[0].Messages))
	}
	ids := map[string]bool{}
	for i, tn := range turns {
		if err := tn.Validate(); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		if ids[tn.ExtID] || !strings.HasPrefix(tn.ExtID, fmt.Sprintf("compact-%d-", 13+i)) {
			t.Fatalf("turn %d: ext_id %q", i, tn.ExtID)
		}
		ids[tn.ExtID] = true
		if !tn.Time.Equal(now) || tn.Metadata["compaction"] != 2 {
			t.Fatalf("turn %d: time %v metadata %v", i, tn.Time, tn.Metadata)
		}
	}
	if turns[0].Role != strata.RoleUser || turns[0].Content != "Deploy /srv/app to prod." {
		t.Fatalf("turn 0 = %+v", turns[0])
	}
	a := turns[1]
	if a.Role != strata.RoleAssistant || a.Content != "Checking." || len(a.ToolCalls) != 1 ||
		a.ToolCalls[0].Name != "bash" || string(a.ToolCalls[0].Arguments) != `{"cmd":"make deploy"}` {
		t.Fatalf("turn 1 = %+v", a)
	}
	if raw, ok := a.Metadata["message"].(json.RawMessage); !ok || !strings.Contains(string(raw), `"thinking":"check first"`) {
		t.Fatalf("the thinking block is not kept: %v", a.Metadata)
	}
	r := turns[2]
	if r.Role != strata.RoleTool || len(r.ToolResults) != 1 || r.ToolResults[0] != (strata.ToolResult{CallID: "t1", Name: "bash", Content: "error: disk full", IsError: true}) {
		t.Fatalf("turn 2 = %+v", r)
	}
	if r.Metadata["message"] != nil {
		t.Fatal("a plain tool result keeps its raw message")
	}

	// A retry of the same compaction (same state), with the list pruned
	// in the meantime, derives the same ids.
	cfg := compact.DefaultConfig()
	cfg.KeepLastToolResults, cfg.ToolHardClearAfter = 0, 1
	prune(t, tr, cfg)
	compactOK(t, c, compact.Request{Transcript: tr, State: state})
	again := compact.SpanTurns(spans[1], func() time.Time { return now.Add(time.Hour) })
	for i := range turns {
		if again[i].ExtID != turns[i].ExtID {
			t.Fatalf("turn %d: ext_id %q on retry, was %q", i, again[i].ExtID, turns[i].ExtID)
		}
	}
}

func TestSpanTurnsOpenAI(t *testing.T) {
	p := compact.OpenAI
	msgs := []string{
		js(map[string]any{"role": "user", "name": "maya", "content": []any{
			map[string]any{"type": "text", "text": "What is in this?"},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64,AAAA"}},
		}}),
		js(map[string]any{"role": "assistant", "content": "Let me look.", "tool_calls": []any{
			map[string]any{"id": "k1", "type": "function", "function": map[string]any{"name": "ocr", "arguments": `{"page":1}`}},
			map[string]any{"id": "k2", "type": "function", "function": map[string]any{"name": "ocr", "arguments": `{page: 2`}},
		}}),
		oaTool("k1", "a receipt"), oaTool("k2", "a stamp"),
		oaAssistant("A receipt and a stamp."),
	}
	msgs = append(msgs, chat(p, 10, 400, 0, 0)...)
	var span compact.Span
	c := newCompactor(t, &fakeCheckpointer{}, nil, func(_ context.Context, s compact.Span) error { span = s; return nil })
	compactOK(t, c, compact.Request{Transcript: mustParse(t, p, list(msgs...))})
	turns := compact.SpanTurns(span, nil)
	u := turns[0]
	if u.Role != strata.RoleUser || u.Name != "maya" || u.Content != "What is in this?\n[image_url]" || u.Metadata["message"] == nil {
		t.Fatalf("turn 0 = %+v", u)
	}
	a := turns[1]
	if len(a.ToolCalls) != 2 || string(a.ToolCalls[0].Arguments) != `{"page":1}` || string(a.ToolCalls[1].Arguments) != `{page: 2` {
		t.Fatalf("turn 1 calls = %+v", a.ToolCalls)
	}
	if turns[3].Role != strata.RoleTool || turns[3].ToolResults[0] != (strata.ToolResult{CallID: "k2", Name: "ocr", Content: "a stamp"}) {
		t.Fatalf("turn 3 = %+v", turns[3])
	}
	for i, tn := range turns {
		if err := tn.Validate(); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
	}
}

// unreachable is a model that cannot be reached.
type unreachable struct{}

func (unreachable) Name() string { return "unreachable" }
func (unreachable) Complete(context.Context, strata.CompletionRequest) (strata.Completion, error) {
	return strata.Completion{}, errors.New("dial tcp 127.0.0.1:9: connect: connection refused")
}

// A checkpoint writer whose model cannot be reached writes the extractive
// checkpoint: the span is summarized, not dropped, and the statistics say
// why the model's checkpoint was not used.
func TestUnreachableModelFallsBackToExtractive(t *testing.T) {
	w, err := checkpoint.New(checkpoint.Options{LLM: unreachable{}, Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := newCompactor(t, w, func(c *compact.Config) { c.ToolPruningEnabled = false }, nil)
	res := compactOK(t, c, compact.Request{Transcript: mustParse(t, compact.OpenAI, list(chat(compact.OpenAI, 10, 400, 1, 200)...))})
	if !res.Compacted || res.Fallback || res.Mode != checkpoint.ModeExtractive || res.State.Checkpoint == "" {
		t.Fatalf("compacted=%v fallback=%v (%v) mode=%q checkpoint %q", res.Compacted, res.Fallback, res.Err, res.Mode, res.State.Checkpoint)
	}
	st := compact.NewStats(compact.OpenAI, "chars/4", "", res, 0)
	if !strings.Contains(st.ModelFallback, "connection refused") || st.Mode != "extractive" || st.Fallback {
		t.Fatalf("stats: mode %q fallback %v model_fallback %q", st.Mode, st.Fallback, st.ModelFallback)
	}
}
