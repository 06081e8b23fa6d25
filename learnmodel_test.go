package strata_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-memory/strata"
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
