package compact_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/checkpoint"
	"github.com/strata-memory/strata/internal/race"
)

// toolIDs returns the ids of the tool calls a message makes and of those
// it answers, read from its JSON with encoding/json (independently of the
// package's parser).
func toolIDs(t testing.TB, raw []byte) (calls, results []string) {
	var m struct {
		ToolCalls []struct {
			ID string `json:"id"`
		} `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
		Content    json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, c := range m.ToolCalls {
		calls = append(calls, c.ID)
	}
	if m.ToolCallID != "" {
		results = append(results, m.ToolCallID)
	}
	var blocks []struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		ToolUseID string `json:"tool_use_id"`
	}
	if len(m.Content) > 0 && m.Content[0] == '[' {
		json.Unmarshal(m.Content, &blocks)
	}
	for _, b := range blocks {
		switch b.Type {
		case "tool_use":
			calls = append(calls, b.ID)
		case "tool_result":
			results = append(results, b.ToolUseID)
		}
	}
	return calls, results
}

// Over random transcripts of both providers, random settings and a
// checkpointer that sometimes fails: the cut never separates a tool call
// from its result, falls on a real user message, keeps the recent window
// as layer 1 left it, and the output always follows the provider's rules;
// a second compaction over the grown list does too, and updates the first
// checkpoint.
func TestPropertyCompactKeepsPairsAndAlternation(t *testing.T) {
	race.SkipOneGoroutine(t)
	iterations := 600
	if testing.Short() {
		iterations = 100
	}
	r := rand.New(rand.NewSource(20260302))
	compacted, fallbacks, updates := 0, 0, 0
	for it := 0; it < iterations; it++ {
		p := providers[it%2]
		o := genOptions{turns: 1 + r.Intn(25), maxRounds: r.Intn(5), maxParallel: 1 + r.Intn(3), maxOutput: 1 + r.Intn(6000),
			system: r.Intn(2) == 0, images: r.Intn(3) == 0, thinking: r.Intn(2) == 0, idPrefix: "a"}
		doc, _ := genTranscript(r, p, o)
		checkValid(t, p, doc) // the generator's own output is valid

		keep := 50 + r.Intn(6000)
		cfg := compact.DefaultConfig()
		cfg.ToolPruningEnabled = r.Intn(3) > 0
		cfg.KeepLastToolResults = r.Intn(4)
		cfg.ToolHardClearAfter = r.Intn(9)
		cfg.CompactionEnabled = true
		cfg.KeepRecentTokens = keep
		cfg.CompactionThreshold = keep + 1 + r.Intn(20000)
		fail := r.Intn(4) == 0
		cp := &fakeCheckpointer{answer: func(n int, span []checkpoint.Entry, previous string) (checkpoint.Result, error) {
			if fail {
				return checkpoint.Result{}, errors.New("down")
			}
			return goodCheckpoint(n, span, previous)
		}}
		c, err := compact.New(compact.Options{Config: cfg, Checkpointer: cp})
		if err != nil {
			t.Fatal(err)
		}
		tr := mustParse(t, p, doc)
		req := compact.Request{Transcript: tr, Force: r.Intn(2) == 0, State: strata.CompactionState{TurnCount: r.Intn(50)}}
		res, err := c.Compact(context.Background(), req)
		if err != nil {
			t.Fatalf("iteration %d: %v", it, err)
		}
		where := fmt.Sprintf("iteration %d (%s, keep %d)", it, p, keep)
		out := string(res.Transcript.JSON())
		checkValid(t, p, out)
		if !res.Compacted {
			continue
		}
		compacted++
		if res.Fallback {
			fallbacks++
		}
		// The cut is a real user message, or the assistant message that
		// opens the tool rounds layer 1 protects, and no pair straddles it.
		at := tr.Messages[res.Cut]
		if calls, _ := toolIDs(t, at.JSON()); (at.Role() != "user" || at.IsToolResult()) && !(at.Role() == "assistant" && len(calls) > 0) {
			t.Fatalf("%s: cut at a %s message", where, at.Role())
		}
		before := map[string]bool{}
		for _, m := range tr.Messages[:res.Cut] {
			calls, _ := toolIDs(t, m.JSON())
			for _, id := range calls {
				before[id] = true
			}
		}
		for _, m := range tr.Messages[res.Cut:] {
			_, results := toolIDs(t, m.JSON())
			for _, id := range results {
				if before[id] {
					t.Fatalf("%s: call %s compacted, its result kept", where, id)
				}
			}
		}
		// The recent window is the input's tail as layer 1 left it.
		pruned := tr.Clone()
		if _, err := compact.Prune(pruned, cfg); err != nil {
			t.Fatal(err)
		}
		recent := pruned.Messages[res.Cut:]
		got := res.Transcript.Messages[len(res.Transcript.Messages)-len(recent):]
		for i := range recent {
			if string(got[i].JSON()) != string(recent[i].JSON()) {
				t.Fatalf("%s: recent message %d changed", where, i)
			}
		}
		if res.State.TurnCount != req.State.TurnCount+res.MessagesCompacted {
			t.Fatalf("%s: turn count %d", where, res.State.TurnCount)
		}

		// The agent goes on; compact again.
		o.system, o.idPrefix, o.turns = false, "b", 1+r.Intn(25)
		more, _ := genTranscript(r, p, o)
		grown := out[:len(out)-1] + "," + more[1:]
		if len(res.Transcript.Messages) == 0 {
			grown = more
		}
		res2, err := c.Compact(context.Background(), compact.Request{Transcript: mustParse(t, p, grown), State: res.State, Force: true})
		if err != nil {
			t.Fatalf("%s: second: %v", where, err)
		}
		checkValid(t, p, string(res2.Transcript.JSON()))
		if res2.Compacted && !res.Fallback && !res2.Fallback {
			updates++
			if cp.previous[len(cp.previous)-1] != res.State.Checkpoint || !res2.Update {
				t.Fatalf("%s: second compaction did not update the first checkpoint", where)
			}
		}
	}
	if compacted < iterations/4 || fallbacks == 0 || updates == 0 {
		t.Fatalf("weak coverage: %d compacted, %d fallbacks, %d updates of %d", compacted, fallbacks, updates, iterations)
	}
	t.Logf("%d iterations: %d compacted, %d fallbacks, %d updates", iterations, compacted, fallbacks, updates)
}

// Prune over random transcripts: it never changes a message that is not a
// tool-result message, its output parses, and pruning again changes
// nothing.
func TestPropertyPruneTouchesOnlyToolResults(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for it := 0; it < 200; it++ {
		p := providers[it%2]
		doc, _ := genTranscript(r, p, genOptions{turns: 1 + r.Intn(10), maxRounds: 1 + r.Intn(6), maxParallel: 1 + r.Intn(3),
			maxOutput: 1 + r.Intn(20000), system: true, images: true, thinking: true})
		tr := mustParse(t, p, doc)
		before := tr.Clone()
		cfg := compact.DefaultConfig()
		cfg.KeepLastToolResults = r.Intn(3)
		cfg.ToolHardClearAfter = r.Intn(8)
		if _, err := compact.Prune(tr, cfg); err != nil {
			t.Fatal(err)
		}
		for i, m := range tr.Messages {
			if !m.IsToolResult() && string(m.JSON()) != string(before.Messages[i].JSON()) {
				t.Fatalf("iteration %d: %s message %d changed", it, m.Role(), i)
			}
		}
		out := tr.JSON()
		again := mustParse(t, p, string(out))
		if st, _ := compact.Prune(again, cfg); st.Trimmed+st.Cleared != 0 {
			t.Fatalf("iteration %d: second prune did %+v", it, st)
		}
		checkValid(t, p, string(out))
	}
}
