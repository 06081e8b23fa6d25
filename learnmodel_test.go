package strata_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/synth"
)

// learningsCall reports whether req asks for learnings, not a summary.
func learningsCall(req strata.CompletionRequest) bool {
	return strings.Contains(req.System, "durable facts")
}

// TestModelLearnings: with a model, learnings come from its reply, with
// their parts and source turns, the calls are logged with the summaries'
// (retried as they are); a reply that cannot be read leaves the span to
// the offline rules.
func TestModelLearnings(t *testing.T) {
	ctx := context.Background()
	var mode string
	model := &fakeModel{}
	model.answer = func(n int, req strata.CompletionRequest) (strata.Completion, error) {
		if !learningsCall(req) {
			return goodReply(n, req)
		}
		switch mode {
		case "flaky":
			mode = "good"
			return strata.Completion{}, &strata.ProviderError{Provider: "fake", Status: 503, Retryable: true, Msg: "busy"}
		case "garbage":
			return strata.Completion{Text: "Sure! Here are some facts.", OutputTokens: 5}, nil
		}
		// The first turn of the span the prompt lists, and one the span
		// does not hold.
		var first int64
		fmt.Sscanf(req.User[strings.Index(req.User, "[turn ")+6:], "%d", &first)
		text := fmt.Sprintf(`{"facts": [
			{"about": "Ana", "attribute": "lives in", "value": "Porto", "text": "Ana lives in Porto.", "when": "2023-05-07", "turns": [%d]},
			{"about": "Ana", "attribute": "likes", "value": "tea", "text": "Ana likes tea.", "when": "yesterday", "turns": [%d]},
			{"about": "Bo", "text": "Bo went to Mars.", "turns": [99999]}]}`, first, first)
		return strata.Completion{Text: text, InputTokens: len(req.User) / 4, OutputTokens: 60, FinishReason: "stop"}, nil
	}
	m := newLLMMemory(t, filepath.Join(t.TempDir(), "s.db"), model, strata.LLMOptions{Learnings: true})
	turns := synth.New(3).Turns(20)
	turns[14].Content = "I moved to Braga last week and love it."
	turns[14].Role, turns[14].Name = strata.RoleUser, "Ana"
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: turns[:10]}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SummarizePending(ctx, strata.PendingOptions{}); err != nil {
		t.Fatal(err)
	}
	mode = "flaky"
	res, err := m.Learn(ctx, "c")
	if err != nil || res.Calls != 2 || res.Fallbacks != 0 {
		t.Fatalf("Learn: %+v, %v; want two calls (one retried), no fallback", res, err)
	}
	ls, err := m.Learnings(ctx, strata.LearningFilter{Conversation: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].Subject != "ana|lives in" || ls[0].When != "2023-05-07" || ls[0].Value != "Porto" ||
		len(ls[0].Sources) != 1 || ls[0].Sources[0].Seq != 1 || ls[0].Sources[0].ExtID != turns[0].ExtID ||
		ls[1].Subject != "ana|ana likes tea" || ls[1].When != "" {
		t.Fatalf("learnings from the model: %+v", ls)
	}
	cost, err := m.Cost(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if in := cost.Models["fake-1"]; in[1] == 0 {
		t.Errorf("cost report %+v does not count the learnings call", cost)
	}

	// A reply that is not the JSON asked for: the offline rules read the
	// next span, and the call is logged.
	mode = "garbage"
	if _, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: turns[10:]}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SummarizePending(ctx, strata.PendingOptions{}); err != nil {
		t.Fatal(err)
	}
	before := model.calls
	res, err = m.Learn(ctx, "c")
	if err != nil || res.Fallbacks == 0 || model.calls == before {
		t.Fatalf("Learn over a garbage reply: %+v, %v", res, err)
	}
	now, err := m.Learnings(ctx, strata.LearningFilter{Conversation: "c", Subject: "ana|lives in"})
	if err != nil {
		t.Fatal(err)
	}
	if len(now) != 2 || now[0].Status != strata.LearningSuperseded || !strings.HasPrefix(now[1].Text, "Ana moved to Braga last week (") {
		t.Fatalf("ana|lives in: %+v; want the offline learning of turn 15 superseding the model's", now)
	}
}

// TestModelLearningsClaimed: two Memories over one store (two workers)
// learn one conversation at the same moment, with a model reading the
// learnings. The one that comes second finds the conversation claimed and
// leaves it to the first, so each span goes to the model once; once the
// first is done, nothing is left to read, and a span closed later is read
// by whichever pass comes next, once.
func TestModelLearningsClaimed(t *testing.T) {
	ctx := context.Background()
	started, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	perSpan := map[int64]int{} // learnings calls by the span's first turn
	model := &fakeModel{}
	model.answer = func(n int, req strata.CompletionRequest) (strata.Completion, error) {
		if !learningsCall(req) {
			return goodReply(n, req)
		}
		var first int64
		fmt.Sscanf(req.User[strings.Index(req.User, "[turn ")+6:], "%d", &first)
		mu.Lock()
		perSpan[first]++
		calls := 0
		for _, c := range perSpan {
			calls += c
		}
		mu.Unlock()
		if calls == 1 { // the first call waits until the other worker has had its go
			close(started)
			<-release
		}
		text := fmt.Sprintf(`{"facts": [{"about": "Ana", "attribute": "likes", "value": "tea", "text": "Ana likes tea %d.", "turns": [%d]}]}`,
			first, first)
		return strata.Completion{Text: text, InputTokens: len(req.User) / 4, OutputTokens: 20, FinishReason: "stop"}, nil
	}
	st := openNewStore(t, filepath.Join(t.TempDir(), "s.db"))
	t.Cleanup(func() { st.Close() })
	open := func() *strata.Memory {
		m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
			Policy: llmPolicy, Tiers: &strata.TierPolicy{Off: true},
			LLM: strata.LLMOptions{Completer: model, Learnings: true, Backoff: time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b := open(), open()
	turns := synth.New(5).Turns(40)
	if _, err := a.Ingest(ctx, strata.Batch{Conversation: "c", Turns: turns[:30]}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SummarizePending(ctx, strata.PendingOptions{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan strata.LearnResult)
	go func() {
		res, err := a.Learn(ctx, "c")
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	<-started
	resB, err := b.Learn(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	resA := <-done
	if resB.Claimed != 1 || resB.Calls != 0 || resB.Nodes != 0 {
		t.Errorf("the second worker: %+v, want the conversation left to the first (claimed 1, no call)", resB)
	}
	if resA.Calls == 0 || resA.Claimed != 0 {
		t.Errorf("the first worker: %+v, want it to read every span", resA)
	}
	// Nothing is left: another pass of either calls no model.
	for _, m := range []*strata.Memory{b, a} {
		if res, err := m.Learn(ctx, "c"); err != nil || res.Calls != 0 || res.Claimed != 0 {
			t.Errorf("a pass after the first: %+v, %v; want nothing to do", res, err)
		}
	}
	// More turns close more spans: the next pass, of the other worker, reads them.
	if _, err := a.Ingest(ctx, strata.Batch{Conversation: "c", Turns: turns[30:]}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.SummarizePending(ctx, strata.PendingOptions{}); err != nil {
		t.Fatal(err)
	}
	if res, err := b.Learn(ctx, "c"); err != nil || res.Calls == 0 || res.Claimed != 0 {
		t.Errorf("the other worker on the new spans: %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	level1 := 0
	for _, n := range allNodes(t, a, "c") {
		if n.Level == 1 {
			level1++
			if perSpan[n.FirstSeq] != 1 {
				t.Errorf("span %d-%d went to the model for learnings %d times, want once", n.FirstSeq, n.LastSeq, perSpan[n.FirstSeq])
			}
		}
	}
	if len(perSpan) != level1 {
		t.Errorf("learnings calls for %d spans, %d level-1 spans: %v", len(perSpan), level1, perSpan)
	}
}
