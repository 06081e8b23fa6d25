package strata_test

import (
	"context"
	"errors"
	"testing"

	"github.com/strata-memory/strata"
)

// cancellingCounter is a tokenizer during whose counting the caller's
// deadline passes, as it does for a turn of many megabytes.
type cancellingCounter struct {
	strata.CharEstimator
	cancel context.CancelFunc
}

func (c cancellingCounter) CountContext(ctx context.Context, s string) (int, error) {
	c.cancel()
	return 0, ctx.Err()
}

// TestIngestDeadlineWhileCountingLeavesNothing: a batch whose context
// ends while its tokens are counted is refused with the context's error
// and stores nothing, not even its conversation (before, the conversation
// was created first and left behind empty).
func TestIngestDeadlineWhileCountingLeavesNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := newMemory(t, cancellingCounter{cancel: cancel})
	_, err := m.Ingest(ctx, strata.Batch{Conversation: "big", Turns: []strata.Turn{{Role: strata.RoleUser, Content: "a long turn"}}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ingest: %v, want context.Canceled", err)
	}
	convs, err := m.Conversations(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 0 {
		t.Errorf("after the refused batch: conversations %+v, want none", convs)
	}
}
