package compact_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/checkpoint"
	"github.com/strata-memory/strata/compact/internal/agentgen"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/sqlite"
)

// openMemory opens a Memory over the SQLite file path.
func openMemory(t *testing.T, path string) (*strata.Memory, *sqlite.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New()})
	if err != nil {
		t.Fatal(err)
	}
	return m, st
}

// agentCompactor wires a compactor the way an agent would: extractive
// checkpoints, the compacted span remembered in m, state in m's store.
func agentCompactor(t *testing.T, m *strata.Memory, keep int, hooked *int) *compact.Compactor {
	t.Helper()
	w, err := checkpoint.New(checkpoint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := compact.DefaultConfig()
	cfg.KeepRecentTokens = keep
	clock := func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }
	c, err := compact.New(compact.Options{Config: cfg, Checkpointer: w, Now: clock,
		PreCompact: compact.Hooks(func(ctx context.Context, s compact.Span) error {
			*hooked += len(s.Messages)
			return nil
		}, compact.Remember(m, "agent-1", clock))})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCompactedSpanLandsInMemory: what a compaction takes out of the list
// becomes turns of the conversation, whole, before the checkpoint; the
// state is saved in the store and found again by a new process, whose
// next compaction merges into the first checkpoint; a retried compaction
// adds no turn twice.
func TestCompactedSpanLandsInMemory(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "strata.db")
	gen := agentgen.Generate(7, agentgen.Options{Tasks: 8})
	tr, err := compact.Parse(compact.OpenAI, gen.OpenAI())
	if err != nil {
		t.Fatal(err)
	}

	m, st := openMemory(t, path)
	hooked := 0
	c := agentCompactor(t, m, 2500, &hooked)
	states := compact.StoreState{Store: st}
	first, err := c.CompactConversation(ctx, states, "agent-1", compact.Request{Transcript: tr, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if !first.Compacted || first.Fallback || first.MessagesCompacted == 0 {
		t.Fatalf("first compaction: compacted %v (%s), fallback %v (%v), %d messages, %d tokens", first.Compacted, first.Reason, first.Fallback, first.Err, first.MessagesCompacted, first.TokensBefore)
	}
	turns, err := st.Turns(ctx, strata.TurnFilter{Namespace: strata.DefaultNamespace, Conversation: "agent-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != first.MessagesCompacted || hooked != first.MessagesCompacted {
		t.Fatalf("%d turns in memory, hook saw %d messages; want the span's %d", len(turns), hooked, first.MessagesCompacted)
	}
	// Every message of the span is in memory, its text whole.
	for i, msg := range first.Span.Messages {
		if want := msg.Text(); want != "" && !strings.Contains(turns[i].Text(), want) {
			t.Fatalf("turn %d does not hold message %d's text %.80q", turns[i].Seq, i, want)
		}
	}

	// A retry of the same compaction (the state before it, the same list)
	// remembers nothing twice.
	if _, err := c.Compact(ctx, compact.Request{Transcript: tr, Force: true}); err != nil {
		t.Fatal(err)
	}
	again, _ := st.Turns(ctx, strata.TurnFilter{Namespace: strata.DefaultNamespace, Conversation: "agent-1"})
	if len(again) != len(turns) {
		t.Fatalf("a retried compaction left %d turns, want %d", len(again), len(turns))
	}

	// A new process over the same file resumes: the state is there, and
	// the next compaction merges into the first checkpoint.
	st.Close()
	m2, st2 := openMemory(t, path)
	saved, err := st2.CompactionState(ctx, strata.DefaultNamespace, "agent-1")
	if err != nil {
		t.Fatal(err)
	}
	if saved.Checkpoint != first.State.Checkpoint || saved.CompactionCount != 1 || saved.TurnCount != first.MessagesCompacted {
		t.Fatalf("state after restart: %d compactions, %d turns; want 1, %d and the first checkpoint",
			saved.CompactionCount, saved.TurnCount, first.MessagesCompacted)
	}
	c2 := agentCompactor(t, m2, 800, &hooked)
	second, err := c2.CompactConversation(ctx, compact.StoreState{Store: st2}, "agent-1",
		compact.Request{Transcript: first.Transcript, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if !second.Compacted || !second.Update || second.State.CompactionCount != 2 {
		t.Fatalf("second compaction: compacted %v, update %v, count %d; want an update, count 2",
			second.Compacted, second.Update, second.State.CompactionCount)
	}
	all, _ := st2.Turns(ctx, strata.TurnFilter{Namespace: strata.DefaultNamespace, Conversation: "agent-1"})
	if len(all) != first.MessagesCompacted+second.MessagesCompacted {
		t.Fatalf("%d turns after two compactions, want %d + %d", len(all), first.MessagesCompacted, second.MessagesCompacted)
	}
	// The first checkpoint's ledger lives on in the second.
	for _, id := range first.Checkpoint.Ledger[:min(5, len(first.Checkpoint.Ledger))] {
		if !strings.Contains(second.State.Checkpoint, id.Text) {
			t.Errorf("identifier %q of the first checkpoint is missing from the second", id.Text)
		}
	}
	// The remembered turns are searchable like any others.
	if hits, err := m2.Search(ctx, "agent-1", gen.Truth[0].Text, 3); err != nil || len(hits) == 0 {
		t.Errorf("search for %q in the remembered turns: %v, %d hits", gen.Truth[0].Text, err, len(hits))
	}
}
