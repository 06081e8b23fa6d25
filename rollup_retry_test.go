package strata_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/sqlite"
)

// losingStore is a store whose next lose writes of nodes find the pyramid
// changed, as when another process writes first.
type losingStore struct {
	strata.Store
	lose  int
	tries int
}

func (s *losingStore) ReplaceNodes(ctx context.Context, namespace, conversation string, ids []string, nodes []strata.Node) (int, error) {
	s.tries++
	if s.lose > 0 {
		s.lose--
		return 0, strata.Errorf(strata.ENOTFOUND, "node %q not found in conversation %q", "gone", conversation)
	}
	return s.Store.ReplaceNodes(ctx, namespace, conversation, ids, nodes)
}

// TestRollupOutlastsLostRaces has a rollup lose its write to another
// writer again and again: it reads the pyramid again after a wait that
// grows with each try, and an ingest succeeds as long as one try of
// ReplaceTries wins; when none does, the turns are stored, the rollup is
// reported deferred, and the next rollup makes the nodes.
func TestRollupOutlastsLostRaces(t *testing.T) {
	ctx := context.Background()
	for _, lose := range []int{strata.ReplaceTries - 1, strata.ReplaceTries} {
		st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "strata.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ls := &losingStore{Store: st, lose: lose}
		var waits []time.Duration
		defer strata.SetReplaceSleep(func(d time.Duration) { waits = append(waits, d) })()
		m, err := strata.New(strata.Config{Store: ls, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
			Policy: strata.Policy{Name: "pairs", Levels: []strata.Level{{Name: "pair", Kind: strata.KindCount, Span: 2, Budget: 100}}},
			Tiers:  &strata.TierPolicy{Off: true}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.Ingest(ctx, strata.Batch{Conversation: "c", Turns: []strata.Turn{
			{Role: strata.RoleUser, Content: "the invoice for Lisbon is due Friday."},
			{Role: strata.RoleAssistant, Content: "noted: the Lisbon invoice, Friday."},
		}})
		if err != nil {
			t.Fatalf("lose %d: %v", lose, err)
		}
		if ls.tries != strata.ReplaceTries || len(waits) != strata.ReplaceTries-1 {
			t.Fatalf("lose %d: %d tries and %d waits, want %d and %d", lose, ls.tries, len(waits), strata.ReplaceTries, strata.ReplaceTries-1)
		}
		made := 0
		if lose < strata.ReplaceTries {
			if res.RollupDeferred != "" {
				t.Fatalf("lose %d: rollup deferred: %s", lose, res.RollupDeferred)
			}
		} else {
			if res.RollupDeferred == "" || res.Added != 2 {
				t.Fatalf("lose %d: stored %d, deferred %q; want 2 stored and the rollup deferred", lose, res.Added, res.RollupDeferred)
			}
			if made, err = m.Rollup(ctx, "c"); err != nil || made != 1 {
				t.Fatalf("lose %d: the next rollup made %d nodes (%v), want 1", lose, made, err)
			}
		}
		if ns := nodesAt(t, m, "c", 1); len(ns) != 1 || ns[0].FirstSeq != 1 || ns[0].LastSeq != 2 {
			t.Fatalf("lose %d: nodes %+v, want one over turns 1-2", lose, ns)
		}
	}
}

// TestReplaceWaitGrows checks the wait between tries: within a window that
// starts at the lost try's length (at least 5ms), doubles with each try,
// and stops at 2s.
func TestReplaceWaitGrows(t *testing.T) {
	longest := func(n int64) int64 { return n - 1 }
	for _, c := range []struct {
		try  int
		took time.Duration
		want time.Duration // the window
	}{
		{1, time.Millisecond, 5 * time.Millisecond},
		{2, time.Millisecond, 10 * time.Millisecond},
		{1, 80 * time.Millisecond, 80 * time.Millisecond},
		{3, 80 * time.Millisecond, 320 * time.Millisecond},
		{6, 80 * time.Millisecond, 2 * time.Second},
		{11, 5 * time.Millisecond, 2 * time.Second},
		{2, 3 * time.Second, 2 * time.Second},
	} {
		if got := strata.ReplaceWait(c.try, c.took, longest); got != c.want-1 {
			t.Errorf("try %d after %v: longest wait %v, want %v", c.try, c.took, got, c.want-1)
		}
		if got := strata.ReplaceWait(c.try, c.took, func(int64) int64 { return 0 }); got != 0 {
			t.Errorf("try %d after %v: shortest wait %v, want 0", c.try, c.took, got)
		}
	}
}
