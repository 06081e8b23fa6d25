package compact

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-memory/strata"
)

// StoreState keeps compaction states in a strata.Store, under one
// namespace: the state of a conversation survives a restart of the agent
// (it is the store's CompactionState row, one per namespace and
// conversation).
type StoreState struct {
	Store     strata.CompactionStore
	Namespace string
}

var _ StateStore = StoreState{}

// Load implements StateStore.
func (s StoreState) Load(ctx context.Context, conversation string) (strata.CompactionState, error) {
	return s.Store.CompactionState(ctx, s.namespace(), conversation)
}

// Save implements StateStore.
func (s StoreState) Save(ctx context.Context, conversation string, st strata.CompactionState) error {
	return s.Store.SaveCompactionState(ctx, s.namespace(), conversation, st)
}

func (s StoreState) namespace() string {
	if s.Namespace == "" {
		return strata.DefaultNamespace
	}
	return s.Namespace
}

// Remember returns the hook that hands every span compaction takes out
// of the list to m, as turns of conversation (created if need be), before
// the checkpoint is written: what compaction drops from the list stays in
// memory, whole, searchable and summarized like any other turns. Its
// turns come from SpanTurns, so a retried compaction adds nothing twice.
// clock stamps the turns; nil is time.Now.
func Remember(m *strata.Memory, conversation string, clock func() time.Time) Hook {
	return func(ctx context.Context, span Span) error {
		if len(span.Messages) == 0 {
			return nil
		}
		if _, err := m.Ingest(ctx, strata.Batch{Conversation: conversation, Turns: SpanTurns(span, clock)}); err != nil {
			return fmt.Errorf("remember compacted span %d of %q: %w", span.Number, conversation, err)
		}
		return nil
	}
}

// Hooks runs hooks in order, stopping at the first error (nil hooks are
// skipped): e.g. the caller's own hook, then Remember, so that a hook that
// fails aborts the compaction before anything is stored.
func Hooks(hooks ...Hook) Hook {
	return func(ctx context.Context, span Span) error {
		for _, h := range hooks {
			if h == nil {
				continue
			}
			if err := h(ctx, span); err != nil {
				return err
			}
		}
		return nil
	}
}
