package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/postgres"
)

var day0 = time.Date(2024, 2, 28, 9, 0, 0, 0, time.UTC)

// spans stores 48 turns over 4 days across a month's end (12 a day, turn
// 7 pinned) under 6 level-1 nodes of 8 turns, so that most spans cross a
// day and one crosses the month (archive segments cover a month), and
// returns the node ids and the turns as stored.
func spans(t *testing.T, s strata.Store, ns, conv string) ([]string, []strata.Turn) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: ns, ID: conv}); err != nil {
		t.Fatal(err)
	}
	in := make([]strata.Turn, 48)
	for i := range in {
		in[i] = strata.Turn{ExtID: fmt.Sprintf("x%d", i+1), Session: 1 + i/12, Role: strata.RoleUser, Name: "Bo",
			Content: fmt.Sprintf("turn %d about word%d", i+1, i+1), Time: day0.Add(time.Duration(i) * 2 * time.Hour), Tokens: 5}
		if i%2 == 1 {
			in[i].Role, in[i].Model = strata.RoleAssistant, "m"
		}
	}
	in[6].Importance = 0.9
	if _, err := s.AppendTurns(ctx, ns, conv, in); err != nil {
		t.Fatal(err)
	}
	var ids []string
	var nodes []strata.Node
	for i := 0; i < 6; i++ {
		id := fmt.Sprintf("%s-l1-%d", conv, i)
		ids = append(ids, id)
		first, last := int64(8*i+1), int64(8*i+8)
		nodes = append(nodes, strata.Node{ID: id, Level: 1, FirstSeq: first, LastSeq: last,
			Start: in[first-1].Time, End: in[last-1].Time, Summary: fmt.Sprintf("span %d", i)})
	}
	if err := s.PutNodes(ctx, ns, conv, nodes); err != nil {
		t.Fatal(err)
	}
	turns, err := s.Turns(ctx, strata.TurnFilter{Namespace: ns, Conversation: conv})
	if err != nil {
		t.Fatal(err)
	}
	return ids, turns
}

// consistent fails unless the archive of the conversation holds exactly
// one record per turn of its cold spans and nothing else, the segments
// rows (Stats) describe the blobs, and Turns reads want.
func consistent(t *testing.T, s *postgres.Store, ns, conv string, want []strata.Turn) {
	t.Helper()
	ctx := context.Background()
	nodes, err := s.Nodes(ctx, strata.NodeFilter{Namespace: ns, Conversation: conv, Level: 1})
	if err != nil {
		t.Fatal(err)
	}
	owned := map[int64]bool{}
	for _, n := range nodes {
		if n.Tier == strata.TierCold {
			for q := n.FirstSeq; q <= n.LastSeq; q++ {
				owned[q] = true
			}
		}
	}
	seg := archive.Segments{Blobs: s.Blobs()}
	periods, err := archive.Periods(ctx, s.Blobs(), ns, conv)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]int{}
	var records int64
	for _, p := range periods {
		recs, err := seg.Read(ctx, archive.Key(ns, conv, p), math.MinInt64, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			got[r.Seq]++
			records++
		}
	}
	for q, n := range got {
		if n != 1 || !owned[q] {
			t.Errorf("turn %d has %d records in the archive; owned by a cold span: %v", q, n, owned[q])
		}
	}
	for q := range owned {
		if got[q] == 0 {
			t.Errorf("turn %d of a cold span has no record in the archive", q)
		}
	}
	st, err := s.Stats(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	if st.Archive.Records != records || st.Archive.Segments != len(periods) {
		t.Errorf("stats say %d records in %d segments, the archive holds %d in %d", st.Archive.Records, st.Archive.Segments, records, len(periods))
	}
	turns, err := s.Turns(ctx, strata.TurnFilter{Namespace: ns, Conversation: conv})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(turns, want) {
		t.Errorf("Turns changed: %d turns, want %d", len(turns), len(want))
	}
}

// TestTiersConcurrentMoves: two stores on one database (as two processes
// are) and several goroutines each move the same spans to warm and cold
// and expire them at the same time. Each span moves to each tier once,
// is expired once, and the archive holds one record per cold turn.
func TestTiersConcurrentMoves(t *testing.T) {
	dsn := newSchema(t, testDSN(t))
	ctx := context.Background()
	var stores []*postgres.Store
	for range 2 {
		s, err := postgres.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	ids, want := spans(t, stores[0], "default", "c")
	at := day0.AddDate(0, 2, 0)

	moved := map[string]map[strata.Tier]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 6 {
		s := stores[w%2]
		order := rand.Perm(len(ids))
		wg.Go(func() {
			for _, i := range order {
				for _, to := range []strata.Tier{strata.TierWarm, strata.TierCold} {
					if w%3 == 0 && to == strata.TierWarm {
						continue // straight from hot to cold
					}
					ms, err := s.Demote(ctx, "default", "c", []string{ids[i]}, to, at)
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					for _, m := range ms {
						if moved[m.NodeID] == nil {
							moved[m.NodeID] = map[strata.Tier]int{}
						}
						moved[m.NodeID][m.To]++
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, id := range ids {
		if moved[id][strata.TierCold] != 1 || moved[id][strata.TierWarm] > 1 {
			t.Errorf("node %s moved %v times, want to cold once and to warm at most once", id, moved[id])
		}
	}
	consistent(t, stores[0], "default", "c", want)

	// Expire every span from every goroutine at once: one audit record each.
	errs = make(chan error, 16)
	for w := range 4 {
		s := stores[w%2]
		wg.Go(func() {
			if _, err := s.Expire(ctx, "default", "c", ids, "retention", at.AddDate(0, 1, 0), false); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ex, err := stores[1].Expiries(ctx, "default", "c")
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != len(ids) {
		t.Fatalf("%d audit records after concurrent expiries of %d spans", len(ex), len(ids))
	}
	left, err := stores[1].Turns(ctx, strata.TurnFilter{Namespace: "default", Conversation: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].Seq != 7 {
		t.Fatalf("after expiry Turns holds %d turns, want only the pinned turn 7", len(left))
	}
	if keys, err := stores[0].Blobs().List(ctx, ""); err != nil || len(keys) != 0 {
		t.Fatalf("the archive holds %q (%v) after every span expired", keys, err)
	}
}

// TestTiersInterrupted: moves cut at random instants (their context
// canceled, which aborts the transaction) leave each span moved or not
// moved, never half-way: the archive holds exactly the records of the
// cold spans, and Turns reads the same turns. A move run again finishes.
func TestTiersInterrupted(t *testing.T) {
	s := openStore(t, testDSN(t))
	ctx := context.Background()
	ids, want := spans(t, s, "default", "c")
	at := day0.AddDate(0, 2, 0)
	cut := 0
	for i := 0; i < 40; i++ {
		// Short and longer budgets, so that some moves finish.
		budget := []int{3000, 20000}[i/4%2]
		c, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(budget))*time.Microsecond)
		k := rand.IntN(len(ids))
		var err error
		switch i % 4 {
		case 0:
			_, err = s.Demote(c, "default", "c", ids[k:], strata.TierWarm, at)
		case 1, 2:
			_, err = s.Demote(c, "default", "c", ids[k:], strata.TierCold, at)
		case 3:
			_, err = s.ReplaceNodes(c, "default", "c", []string{ids[k]}, []strata.Node{{ID: ids[k], Level: 1,
				FirstSeq: int64(8*k + 1), LastSeq: int64(8*k + 8), Summary: fmt.Sprintf("span %d again", k)}})
		}
		cancel()
		if err != nil {
			if !errors.Is(err, context.DeadlineExceeded) && c.Err() == nil {
				t.Fatalf("move %d: %v", i, err)
			}
			cut++
		}
		consistent(t, s, "default", "c", want)
		if t.Failed() {
			t.Fatalf("after move %d (cut: %v)", i, err != nil)
		}
	}
	t.Logf("%d of 40 moves were cut", cut)
	if _, err := s.Demote(ctx, "default", "c", ids, strata.TierCold, at); err != nil {
		t.Fatal(err)
	}
	consistent(t, s, "default", "c", want)
}

// TestTiersFailedMoveChangesNothing: a move to cold that fails on its
// last segment (a corrupt blob already at the key of the last turn's
// month) leaves no trace of the segment it wrote before: the move is one
// transaction.
func TestTiersFailedMoveChangesNothing(t *testing.T) {
	s := openStore(t, testDSN(t))
	ctx := context.Background()
	ids, want := spans(t, s, "default", "c")
	last := archive.Key("default", "c", archive.Period(want[len(want)-1].Time))
	if err := s.Blobs().Put(ctx, last, []byte("not a segment"), nil); err != nil {
		t.Fatal(err)
	}
	_, err := s.Demote(ctx, "default", "c", ids, strata.TierCold, day0.AddDate(0, 2, 0))
	if !errors.Is(err, archive.ErrCorrupt) {
		t.Fatalf("Demote over a corrupt segment = %v, want an error wrapping archive.ErrCorrupt", err)
	}
	keys, err := s.Blobs().List(ctx, "")
	if err != nil || len(keys) != 1 || keys[0] != last {
		t.Fatalf("the archive holds %q (%v), want only the corrupt blob", keys, err)
	}
	nodes, err := s.Nodes(ctx, strata.NodeFilter{Namespace: "default", Conversation: "c", Level: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Tier != strata.TierHot {
			t.Errorf("node %s is %s after a failed move", n.ID, n.Tier)
		}
	}
	if err := s.Blobs().Delete(ctx, last); err != nil {
		t.Fatal(err)
	}
	consistent(t, s, "default", "c", want)
	// Search finds every turn by its word, as before.
	hits, err := s.Search(ctx, strata.SearchQuery{Namespace: "default", Conversation: "c", Text: "word48", Kind: strata.KindTurn})
	if err != nil || len(hits) != 1 {
		t.Fatalf("search after the failed move: %d hits, %v", len(hits), err)
	}
}
