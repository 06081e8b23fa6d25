package storetest

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

func testNamespaces(t *testing.T, s strata.Store) {
	if got, err := s.Namespaces(ctx(t)); err != nil || len(got) != 0 {
		t.Errorf("Namespaces of an empty store = %q (err %v), want none", got, err)
	}
	ensure(t, s, "B", "c")
	ensure(t, s, "A", "c")
	if got, err := s.Namespaces(ctx(t)); err != nil || !slices.Equal(got, []string{"A", "B"}) {
		t.Errorf("Namespaces = %q (err %v), want [A B]", got, err)
	}
	a, b := testNamespacesTurns(t, s)
	testNamespacesNodes(t, s)
	testNamespacesSearch(t, s)
	testNamespacesStats(t, s, a, b)
}

// testNamespacesTurns appends the same ext_ids in namespaces A and B:
// each namespace stores its own. It returns the turns of each.
func testNamespacesTurns(t *testing.T, s strata.Store) (a, b []strata.Turn) {
	a = []strata.Turn{
		{ExtID: "x", Role: strata.RoleUser, Content: "apple orchard in spring", Time: base, Tokens: 4},
		{ExtID: "y", Role: strata.RoleAssistant, Content: "pears too", Time: base.Add(time.Minute), Tokens: 2},
	}
	b = []strata.Turn{
		{ExtID: "x", Role: strata.RoleUser, Content: "apple pie recipe", Time: base.Add(time.Hour), Tokens: 3},
	}
	if got := appendTurns(t, s, "A", "c", a); !slices.Equal(seqs(got), []int64{1, 2}) {
		t.Errorf("AppendTurns in A returned seqs %v, want [1 2]", seqs(got))
	}
	if got := appendTurns(t, s, "B", "c", b); !slices.Equal(seqs(got), []int64{1}) {
		t.Errorf("AppendTurns in B of an ext_id stored in A returned seqs %v, want [1]", seqs(got))
	}
	for _, tc := range []struct {
		ns       string
		contents []string
	}{{"A", []string{"apple orchard in spring", "pears too"}}, {"B", []string{"apple pie recipe"}}} {
		var got []string
		for _, tr := range allTurns(t, s, tc.ns, "c") {
			got = append(got, tr.Content)
		}
		if !slices.Equal(got, tc.contents) {
			t.Errorf("Turns of %s/c = %q, want %q", tc.ns, got, tc.contents)
		}
		c, err := s.Conversation(ctx(t), tc.ns, "c")
		if err != nil || c.Turns != int64(len(tc.contents)) {
			t.Errorf("Conversation(%s, c) = %d turns (err %v), want %d", tc.ns, c.Turns, err, len(tc.contents))
		}
	}
	if got, err := s.ExistingExtIDs(ctx(t), "B", "c", []string{"x", "y"}); err != nil || len(got) != 1 || !got["x"] {
		t.Errorf("ExistingExtIDs(B, c, [x y]) = %v, %v; want only x", got, err)
	}
	return a, b
}

// testNamespacesNodes puts a node in each namespace and reads each from
// its own only.
func testNamespacesNodes(t *testing.T, s strata.Store) {
	na := mkNode("A", "c", 1, 1, 2, "apple summary of A")
	nb := mkNode("B", "c", 1, 1, 1, "apple summary of B")
	if err := s.PutNodes(ctx(t), "A", "c", []strata.Node{na}); err != nil {
		t.Fatalf("PutNodes: %v", err)
	}
	if err := s.PutNodes(ctx(t), "B", "c", []strata.Node{nb}); err != nil {
		t.Fatalf("PutNodes: %v", err)
	}
	for _, tc := range []struct {
		ns   string
		f    strata.NodeFilter
		want []string
	}{
		{"A", strata.NodeFilter{Conversation: "c"}, []string{na.ID}},
		{"B", strata.NodeFilter{Conversation: "c"}, []string{nb.ID}},
		{"A", strata.NodeFilter{IDs: []string{na.ID, nb.ID}}, []string{na.ID}},
		{"B", strata.NodeFilter{IDs: []string{na.ID}}, nil},
	} {
		tc.f.Namespace = tc.ns
		got, err := s.Nodes(ctx(t), tc.f)
		if err != nil {
			t.Errorf("Nodes(%+v): %v", tc.f, err)
			continue
		}
		var ids []string
		for _, n := range got {
			ids = append(ids, n.ID)
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("Nodes(%+v) = %q, want %q", tc.f, ids, tc.want)
		}
	}
}

// testNamespacesSearch finds the turns and nodes of a namespace in it
// only.
func testNamespacesSearch(t *testing.T, s strata.Store) {
	for _, tc := range []struct {
		q    strata.SearchQuery
		want []string // contents or summaries
	}{
		{strata.SearchQuery{Namespace: "A", Text: "apple"}, []string{"apple orchard in spring", "apple summary of A"}},
		{strata.SearchQuery{Namespace: "B", Text: "apple"}, []string{"apple pie recipe", "apple summary of B"}},
		{strata.SearchQuery{Namespace: "A", Conversation: "c", Text: "apple", Kind: strata.KindTurn}, []string{"apple orchard in spring"}},
		{strata.SearchQuery{Namespace: "B", Conversation: "c", Text: "apple", Kind: strata.KindSummary}, []string{"apple summary of B"}},
		{strata.SearchQuery{Namespace: "B", Text: "orchard"}, nil},
		{strata.SearchQuery{Namespace: "C", Text: "apple"}, nil},
	} {
		tc.q.K = 10
		hits, err := s.Search(ctx(t), tc.q)
		if err != nil {
			t.Errorf("Search(%+v): %v", tc.q, err)
			continue
		}
		var got []string
		for _, h := range hits {
			if h.Conversation != "c" {
				t.Errorf("Search(%+v): hit of conversation %q, want c", tc.q, h.Conversation)
			}
			switch {
			case h.Turn != nil:
				got = append(got, h.Turn.Content)
			case h.Node != nil:
				got = append(got, h.Node.Summary)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Search(%+v) = %q, want %q", tc.q, got, tc.want)
		}
	}
}

// testNamespacesStats counts the turns a and b and a node in namespaces A
// and B.
func testNamespacesStats(t *testing.T, s strata.Store, a, b []strata.Turn) {
	for _, tc := range []struct {
		ns           string
		turns, bytes int64
		tokens       int64
		nodes        int64
	}{{"A", 2, int64(len(a[0].Content) + len(a[1].Content)), 6, 1}, {"B", 1, int64(len(b[0].Content)), 3, 1}} {
		st, err := s.Stats(ctx(t), tc.ns)
		if err != nil {
			t.Errorf("Stats(%s): %v", tc.ns, err)
			continue
		}
		if st.Conversations != 1 || st.Turns != tc.turns || st.ContentBytes != tc.bytes || st.TurnTokens != tc.tokens ||
			len(st.Levels) != 1 || st.Levels[0].Nodes != tc.nodes {
			t.Errorf("Stats(%s) = %+v, want 1 conversation, %d turns, %d content bytes, %d tokens, %d level-1 node",
				tc.ns, st, tc.turns, tc.bytes, tc.tokens, tc.nodes)
		}
	}
}

// testNamespacesWithoutConversations: a namespace that holds only a
// compaction state, a watch state, a token or the audit record of a
// deleted conversation is listed.
func testNamespacesWithoutConversations(t *testing.T, s strata.Store) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	if err := s.SaveCompactionState(ctx(t), "compaction", "agent", strata.CompactionState{TurnCount: 1, Updated: at}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveWatchState(ctx(t), "watch", "/w.jsonl", strata.WatchState{Offset: 5, Lines: 1, Updated: at}); err != nil {
		t.Fatal(err)
	}
	ensure(t, s, "gone", "c")
	if _, err := s.DeleteConversation(ctx(t), "gone", "c", "test", at); err != nil {
		t.Fatal(err)
	}
	ensure(t, s, "memory", "c")
	want := []string{"compaction", "gone", "memory", "watch"}
	if ts, ok := s.(strata.TokenStore); ok {
		_, tok, err := strata.NewToken("keys", "ci", at)
		if err != nil {
			t.Fatal(err)
		}
		if err := ts.PutToken(ctx(t), tok); err != nil {
			t.Fatal(err)
		}
		want = []string{"compaction", "gone", "keys", "memory", "watch"}
	}
	if got, err := s.Namespaces(ctx(t)); err != nil || !slices.Equal(got, want) {
		t.Errorf("Namespaces = %q (err %v), want %q", got, err, want)
	}
}

func testStats(t *testing.T, s strata.Store) {
	st, err := s.Stats(ctx(t), "ns")
	if err != nil {
		t.Fatalf("Stats of an empty namespace: %v", err)
	}
	if st.Conversations != 0 || st.Turns != 0 || st.ContentBytes != 0 || st.TurnTokens != 0 || len(st.Levels) != 0 {
		t.Errorf("Stats of an empty namespace = %+v, want zero counts", st)
	}

	ensure(t, s, "ns", "c1")
	ensure(t, s, "ns", "c2")
	ensure(t, s, "ns", "empty")
	t1 := mkTurns("a", 3) // times base .. base+2m, tokens 5, 6, 7
	t2 := mkTurns("b", 2)
	t2[0].Time = base.Add(-time.Hour) // the oldest turn
	t2[1].Time = base.Add(time.Hour)  // the newest
	t2[1].Content = "ünïcödé: bytes, not runes"
	appendTurns(t, s, "ns", "c1", t1)
	appendTurns(t, s, "ns", "c2", t2)
	var bytes, tokens int64
	for _, tr := range append(slices.Clone(t1), t2...) {
		bytes += int64(len(tr.Content))
		tokens += int64(tr.Tokens)
	}
	nodes := []strata.Node{mkNode("ns", "c1", 1, 1, 2, "x"), mkNode("ns", "c1", 1, 3, 3, "y"), mkNode("ns", "c1", 2, 1, 3, "z")}
	if err := s.PutNodes(ctx(t), "ns", "c1", nodes); err != nil {
		t.Fatalf("PutNodes: %v", err)
	}
	if err := s.PutNodes(ctx(t), "ns", "c2", []strata.Node{mkNode("ns", "c2", 1, 1, 2, "w")}); err != nil {
		t.Fatalf("PutNodes: %v", err)
	}

	st, err = s.Stats(ctx(t), "ns")
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	if st.Conversations != 3 || st.Turns != 5 || st.ContentBytes != bytes || st.TurnTokens != tokens {
		t.Errorf("Stats = %d conversations, %d turns, %d content bytes, %d tokens; want 3, 5, %d, %d",
			st.Conversations, st.Turns, st.ContentBytes, st.TurnTokens, bytes, tokens)
	}
	// mkNode: tokens = level*7, source tokens = 10 per turn covered.
	want := []strata.LevelStats{
		{Level: 1, Nodes: 3, SummaryTokens: 21, SourceTokens: 20 + 10 + 20},
		{Level: 2, Nodes: 1, SummaryTokens: 14, SourceTokens: 30},
	}
	if !slices.Equal(st.Levels, want) {
		t.Errorf("Stats.Levels = %+v, want %+v", st.Levels, want)
	}
	if !st.Oldest.Equal(t2[0].Time) || !st.Newest.Equal(t2[1].Time) {
		t.Errorf("Stats oldest %v newest %v, want %v and %v", st.Oldest, st.Newest, t2[0].Time, t2[1].Time)
	}
}

func testConcurrentAppend(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	const (
		writers = 4
		batches = 10
		perCall = 10
	)
	// Distinct ext_ids: nothing lost, no seq twice.
	var (
		mu       sync.Mutex
		returned []strata.Turn
		wg       sync.WaitGroup
		errs     = make(chan error, writers*batches)
	)
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				turns := mkTurns(fmt.Sprintf("w%d-b%d", w, b), perCall)
				got, err := s.AppendTurns(ctx(t), "ns", "c", turns)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				returned = append(returned, got...)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent AppendTurns: %v", err)
	}
	const n = writers * batches * perCall
	checkConcurrent(t, s, returned, n, n)

	// The same ext_ids from every writer, in different orders: one copy each.
	const same = 50
	returned = nil
	errs = make(chan error, writers*same)
	for w := range writers {
		wg.Go(func() {
			for i := range same / perCall {
				b := (i + w) % (same / perCall) // each writer starts at another batch
				turns := mkTurns("same", same)[b*perCall : (b+1)*perCall]
				got, err := s.AppendTurns(ctx(t), "ns", "c", turns)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				returned = append(returned, got...)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent AppendTurns of the same ext_ids: %v", err)
	}
	checkConcurrent(t, s, returned, same, n+same)
}

// checkConcurrent checks that writers were returned wantReturned turns
// with distinct seqs, and that the conversation holds seqs 1..wantTotal,
// each ext_id once.
func checkConcurrent(t *testing.T, s strata.Store, returned []strata.Turn, wantReturned, wantTotal int) {
	t.Helper()
	if len(returned) != wantReturned {
		t.Errorf("writers were returned %d appended turns, want %d", len(returned), wantReturned)
	}
	seen := map[int64]bool{}
	var twice []int64
	for _, tr := range returned {
		if seen[tr.Seq] {
			twice = append(twice, tr.Seq)
		}
		seen[tr.Seq] = true
	}
	if len(twice) > 0 {
		t.Errorf("%d seqs were returned to two writers, e.g. %v", len(twice), twice[:min(len(twice), 5)])
	}
	all := allTurns(t, s, "ns", "c")
	if !slices.Equal(seqs(all), seqRange(1, int64(wantTotal))) {
		t.Errorf("stored seqs are not 1..%d: %d turns, first %v", wantTotal, len(all), seqs(all)[:min(len(all), 5)])
	}
	ids := map[string]bool{}
	var dups []string
	for _, tr := range all {
		if ids[tr.ExtID] {
			dups = append(dups, tr.ExtID)
		}
		ids[tr.ExtID] = true
	}
	if len(dups) > 0 {
		t.Errorf("%d ext_ids are stored twice, e.g. %q", len(dups), dups[:min(len(dups), 5)])
	}
	if c, err := s.Conversation(ctx(t), "ns", "c"); err != nil || c.Turns != int64(wantTotal) {
		t.Errorf("Conversation = %d turns (err %v), want %d", c.Turns, err, wantTotal)
	}
}
