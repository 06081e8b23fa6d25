package storetest

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// setImportance sets the importance of turn seq and fails the test on
// error.
func setImportance(t *testing.T, s strata.Store, ns, conv string, seq int64, importance float64) strata.Turn {
	t.Helper()
	got, err := s.SetImportance(ctx(t), ns, conv, seq, importance)
	if err != nil {
		t.Fatalf("SetImportance(%q, %q, %d, %v): %v", ns, conv, seq, importance, err)
	}
	return got
}

// setAndCheck sets the importance of turn seq, updates want (the turns of
// the conversation, seq i at index i-1) to match, and checks the turn
// returned against it.
func setAndCheck(t *testing.T, s strata.Store, ns, conv string, want []strata.Turn, seq int64, importance float64) {
	t.Helper()
	got := setImportance(t, s, ns, conv, seq, importance)
	want[seq-1].Importance = importance
	if d := diffTurn(want[seq-1], got); d != "" {
		t.Errorf("SetImportance(%d, %v) returned %s", seq, importance, d)
	}
}

// pinnedSeqs returns the seqs of the conversation's pinned turns.
func pinnedSeqs(t *testing.T, s strata.Store, ns, conv string) string {
	t.Helper()
	got, err := s.Turns(ctx(t), strata.TurnFilter{Namespace: ns, Conversation: conv, PinnedOnly: true})
	if err != nil {
		t.Fatalf("Turns(PinnedOnly): %v", err)
	}
	return fmt.Sprint(seqs(got))
}

// wantHit fails unless searching turn seq's unique word finds it, whole.
func wantHit(t *testing.T, s strata.Store, ns, conv string, want []strata.Turn, seq int64) {
	t.Helper()
	h := turnHit(t, s, ns, conv, fmt.Sprintf("uniqword%d", seq))
	if h == nil {
		t.Errorf("turn %d is not found by search", seq)
		return
	}
	if d := diffTurn(want[seq-1], *h); d != "" {
		t.Errorf("search hit of turn %d: %s", seq, d)
	}
}

// wantNoHit fails if searching turn seq's unique word finds a turn.
func wantNoHit(t *testing.T, s strata.Store, ns, conv string, seq int64) {
	t.Helper()
	if h := turnHit(t, s, ns, conv, fmt.Sprintf("uniqword%d", seq)); h != nil {
		t.Errorf("turn %d is a turn hit, want none: %+v", seq, h)
	}
}

// convStats returns the per-conversation stats of conv, with its tiers by
// name.
func convStats(t *testing.T, s strata.Store, ns, conv string) (strata.ConversationStats, map[strata.Tier]strata.TierStats) {
	t.Helper()
	st, err := s.Stats(ctx(t), ns)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range st.PerConversation {
		if c.ID == conv {
			tiers := map[strata.Tier]strata.TierStats{}
			for _, x := range c.Tiers {
				tiers[x.Tier] = x
			}
			return c, tiers
		}
	}
	t.Fatalf("Stats has no conversation %q", conv)
	return strata.ConversationStats{}, nil
}

// expire expires the level-1 node first..last and returns its record.
func expire(t *testing.T, s strata.Store, ns, conv string, first, last int64) strata.Expiry {
	t.Helper()
	ex, err := s.Expire(ctx(t), ns, conv, []string{strata.NodeID(ns, conv, 1, first, last)}, "rule", base.Add(5000*time.Hour), false)
	if err != nil {
		t.Fatalf("Expire(%d-%d): %v", first, last, err)
	}
	if len(ex) != 1 {
		t.Fatalf("Expire(%d-%d) = %+v, want one record", first, last, ex)
	}
	return ex[0]
}

func testSetImportanceHot(t *testing.T, s strata.Store) {
	orig := tierCorpus(t, s, "ns", "c")
	want := slices.Clone(orig)
	setAndCheck(t, s, "ns", "c", want, 3, 0.95)
	setAndCheck(t, s, "ns", "c", want, 5, 0.25)
	setAndCheck(t, s, "ns", "c", want, 12, strata.PinnedImportance) // exactly 0.8 pins
	setAndCheck(t, s, "ns", "c", want, 13, 0.5)
	sameTurns(t, "Turns after SetImportance in hot spans", want, allTurns(t, s, "ns", "c"))
	if got := pinnedSeqs(t, s, "ns", "c"); got != "[3 12 25]" {
		t.Errorf("pinned turns = %s, want [3 12 25]", got)
	}
	for _, seq := range []int64{3, 5, 12, 13} {
		wantHit(t, s, "ns", "c", want, seq)
	}
	// A turn under no node.
	more := appendTurns(t, s, "ns", "c", mkTurns("late", 1))
	late := setImportance(t, s, "ns", "c", more[0].Seq, 1)
	if late.Seq != 31 || late.Importance != 1 || late.Content != more[0].Content {
		t.Errorf("SetImportance of a turn under no node returned %+v", late)
	}
	// And back.
	setAndCheck(t, s, "ns", "c", want, 3, 0)
	setAndCheck(t, s, "ns", "c", want, 5, 0.9)
	setAndCheck(t, s, "ns", "c", want, 12, 0)
	setAndCheck(t, s, "ns", "c", want, 13, 0)
	sameTurns(t, "Turns after the round trip", orig, allTurns(t, s, "ns", "c")[:30])
}

func testSetImportanceWarm(t *testing.T, s strata.Store) {
	orig := tierCorpus(t, s, "ns", "c")
	demote(t, s, "ns", "c", strata.TierWarm, [2]int64{1, 10})
	want := slices.Clone(orig)
	setAndCheck(t, s, "ns", "c", want, 3, 0.9) // a warm turn pinned
	setAndCheck(t, s, "ns", "c", want, 5, 0.3) // a pinned turn of a warm span unpinned
	setAndCheck(t, s, "ns", "c", want, 7, 0.5) // a warm turn given another importance, unpinned
	sameTurns(t, "Turns after SetImportance in a warm span", want, allTurns(t, s, "ns", "c"))
	if got := pinnedSeqs(t, s, "ns", "c"); got != "[3 25]" {
		t.Errorf("pinned turns = %s, want [3 25]", got)
	}
	for _, seq := range []int64{3, 5, 7} {
		wantHit(t, s, "ns", "c", want, seq) // warm turns stay searchable, pinned or not
	}
	// Round trip.
	setAndCheck(t, s, "ns", "c", want, 3, 0)
	setAndCheck(t, s, "ns", "c", want, 5, 0.9)
	setAndCheck(t, s, "ns", "c", want, 7, 0)
	sameTurns(t, "Turns after the round trip", orig, allTurns(t, s, "ns", "c"))
	if tiersOf(t, s, "ns", "c")[1] != strata.TierWarm {
		t.Errorf("SetImportance changed the tier of the span")
	}

	// What was pinned or unpinned while warm goes cold and expires as such.
	setAndCheck(t, s, "ns", "c", want, 5, 0.3)
	setAndCheck(t, s, "ns", "c", want, 3, 0.9)
	setAndCheck(t, s, "ns", "c", want, 8, 0.6)
	demote(t, s, "ns", "c", strata.TierCold, [2]int64{1, 10})
	sameTurns(t, "Turns after going cold", want, allTurns(t, s, "ns", "c"))
	wantHit(t, s, "ns", "c", want, 3)
	wantHit(t, s, "ns", "c", want, 5) // cold turns stay searchable
	if _, tiers := convStats(t, s, "ns", "c"); tiers[strata.TierCold].Turns != 9 {
		t.Errorf("cold stats = %+v, want 9 turns (turn 3 is pinned)", tiers[strata.TierCold])
	}
	if ex := expire(t, s, "ns", "c", 1, 10); ex.Turns != 9 {
		t.Errorf("Expire = %+v, want 9 turns", ex)
	}
	rest := allTurns(t, s, "ns", "c")
	if len(rest) != 21 || rest[0].Seq != 3 || rest[1].Seq != 11 {
		t.Fatalf("after expiry Turns has seqs %v, want 3 (pinned) and 11..30", seqs(rest))
	}
	sameTurns(t, "Turns after expiry", append([]strata.Turn{want[2]}, want[10:]...), rest)
	wantHit(t, s, "ns", "c", want, 3) // pinned: kept in its row
	wantNoHit(t, s, "ns", "c", 5)     // expired: no words left to be found by
}

func testSetImportanceCold(t *testing.T, s strata.Store) {
	orig := tierCorpus(t, s, "ns", "c")
	demote(t, s, "ns", "c", strata.TierWarm, [2]int64{21, 30})
	demote(t, s, "ns", "c", strata.TierCold, [2]int64{1, 10}, [2]int64{21, 30})
	want := slices.Clone(orig)
	setAndCheck(t, s, "ns", "c", want, 7, 0.9)  // a cold turn pinned
	setAndCheck(t, s, "ns", "c", want, 25, 0.1) // a pinned turn of a cold span unpinned
	setAndCheck(t, s, "ns", "c", want, 27, 0.5) // a cold turn given another importance, unpinned
	sameTurns(t, "Turns after SetImportance in cold spans", want, allTurns(t, s, "ns", "c"))
	if got := pinnedSeqs(t, s, "ns", "c"); got != "[5 7]" {
		t.Errorf("pinned turns = %s, want [5 7]", got)
	}
	wantHit(t, s, "ns", "c", want, 7)  // pinned
	wantHit(t, s, "ns", "c", want, 25) // unpinned: cold, and still found by its own words
	wantHit(t, s, "ns", "c", want, 27)
	if _, tiers := convStats(t, s, "ns", "c"); tiers[strata.TierCold].Turns != 18 || tiers[strata.TierHot].Turns != 12 {
		t.Errorf("tier stats = %+v, want 18 cold turns and 12 hot (10 of a hot span, 2 pinned)", tiers)
	}
	// Round trip.
	setAndCheck(t, s, "ns", "c", want, 7, 0)
	setAndCheck(t, s, "ns", "c", want, 25, 0.9)
	setAndCheck(t, s, "ns", "c", want, 27, 0)
	sameTurns(t, "Turns after the round trip", orig, allTurns(t, s, "ns", "c"))
	wantHit(t, s, "ns", "c", want, 7)
	wantHit(t, s, "ns", "c", want, 25)

	// Unpinned, a turn expires with its span; expired, it cannot be
	// pinned back.
	setAndCheck(t, s, "ns", "c", want, 25, 0.1)
	if ex := expire(t, s, "ns", "c", 21, 30); ex.Turns != 10 {
		t.Errorf("Expire = %+v, want 10 turns (none pinned)", ex)
	}
	_, err := s.SetImportance(ctx(t), "ns", "c", 25, 0.9)
	wantCode(t, "SetImportance of an expired turn", err, strata.ECONFLICT)
	// A pinned turn of an expired span cannot be unpinned: its row holds
	// the only copy.
	expire(t, s, "ns", "c", 1, 10)
	before := allTurns(t, s, "ns", "c")
	if fmt.Sprint(seqs(before)) != fmt.Sprint(append([]int64{5}, seqRange(11, 20)...)) {
		t.Fatalf("after expiry Turns has seqs %v, want 5 and 11..20", seqs(before))
	}
	_, err = s.SetImportance(ctx(t), "ns", "c", 5, 0.2)
	wantCode(t, "unpinning a turn of an expired span", err, strata.ECONFLICT)
	sameTurns(t, "Turns after a refused unpin", before, allTurns(t, s, "ns", "c"))
	setAndCheck(t, s, "ns", "c", want, 5, 1) // still pinned: allowed
	sameTurns(t, "the pinned turn of an expired span", []strata.Turn{want[4]}, allTurns(t, s, "ns", "c")[:1])
	wantHit(t, s, "ns", "c", want, 5)
}

func testPyramidInvalid(t *testing.T, s strata.Store) {
	want := tierCorpus(t, s, "ns", "c")
	for _, imp := range []float64{-0.01, 1.01, math.NaN(), math.Inf(1)} {
		_, err := s.SetImportance(ctx(t), "ns", "c", 3, imp)
		wantCode(t, fmt.Sprintf("SetImportance(%v)", imp), err, strata.EINVALID)
	}
	for _, seq := range []int64{0, 31, -1} {
		_, err := s.SetImportance(ctx(t), "ns", "c", seq, 0.5)
		wantCode(t, fmt.Sprintf("SetImportance of turn %d", seq), err, strata.ENOTFOUND)
	}
	_, err := s.SetImportance(ctx(t), "ns", "missing", 1, 0.5)
	wantCode(t, "SetImportance in a missing conversation", err, strata.ENOTFOUND)
	_, err = s.SetImportance(ctx(t), "other", "c", 1, 0.5)
	wantCode(t, "SetImportance in another namespace", err, strata.ENOTFOUND)
	_, err = s.ResetPyramid(ctx(t), "ns", "missing", "chunks")
	wantCode(t, "ResetPyramid of a missing conversation", err, strata.ENOTFOUND)
	_, err = s.ResetPyramid(ctx(t), "other", "c", "chunks")
	wantCode(t, "ResetPyramid in another namespace", err, strata.ENOTFOUND)
	sameTurns(t, "Turns after failed calls", want, allTurns(t, s, "ns", "c"))
	if nodes, err := s.Nodes(ctx(t), strata.NodeFilter{Namespace: "ns", Conversation: "c"}); err != nil || len(nodes) != 4 {
		t.Errorf("after failed calls: %d nodes (%v), want 4", len(nodes), err)
	}
}

// checkReset checks a conversation whose pyramid was just reset to policy:
// no nodes, the policy set, want as its turns, every one a search hit.
func checkReset(t *testing.T, s strata.Store, ns, conv, policy string, want []strata.Turn) {
	t.Helper()
	nodes, err := s.Nodes(ctx(t), strata.NodeFilter{Namespace: ns, Conversation: conv})
	if err != nil || len(nodes) != 0 {
		t.Errorf("after ResetPyramid: %d nodes (%v), want none", len(nodes), err)
	}
	c, err := s.Conversation(ctx(t), ns, conv)
	if err != nil || c.Policy != policy || c.Turns != int64(len(want)) {
		t.Errorf("after ResetPyramid: conversation %+v (%v), want policy %q and %d turns", c, err, policy, len(want))
	}
	sameTurns(t, "Turns after ResetPyramid", want, allTurns(t, s, ns, conv))
	for _, tt := range want {
		wantHit(t, s, ns, conv, want, tt.Seq)
	}
	hits, err := s.Search(ctx(t), strata.SearchQuery{Namespace: ns, Conversation: conv, Text: "alpha beta gamma", Kind: strata.KindSummary})
	if err != nil || len(hits) != 0 {
		t.Errorf("after ResetPyramid the removed summaries are still hits: %+v (%v)", hits, err)
	}
	cs, tiers := convStats(t, s, ns, conv)
	if cs.Archive.Records != 0 || cs.Archive.Segments != 0 {
		t.Errorf("after ResetPyramid archive stats = %+v, want no segments or records", cs.Archive)
	}
	if h := tiers[strata.TierHot]; h.Turns != int64(len(want)) || h.Spans != 0 {
		t.Errorf("after ResetPyramid hot stats = %+v, want %d turns and no span", h, len(want))
	}
	for _, tier := range []strata.Tier{strata.TierWarm, strata.TierCold, strata.TierExpired} {
		if x := tiers[tier]; x.Turns != 0 || x.Spans != 0 {
			t.Errorf("after ResetPyramid %s stats = %+v, want none", tier, x)
		}
	}
}

func testResetPyramidHot(t *testing.T, s strata.Store) {
	want := tierCorpus(t, s, "ns", "c")
	other := tierCorpus(t, s, "ns", "d")
	n, err := s.ResetPyramid(ctx(t), "ns", "c", "sessions")
	if err != nil || n != 4 {
		t.Fatalf("ResetPyramid = %d, %v; want 4 nodes removed", n, err)
	}
	checkReset(t, s, "ns", "c", "sessions", want)
	// Again: nothing left to remove.
	if n, err := s.ResetPyramid(ctx(t), "ns", "c", "calendar"); err != nil || n != 0 {
		t.Errorf("second ResetPyramid = %d, %v; want 0", n, err)
	}
	checkReset(t, s, "ns", "c", "calendar", want)
	// The other conversation keeps its pyramid.
	if nodes, err := s.Nodes(ctx(t), strata.NodeFilter{Namespace: "ns", Conversation: "d"}); err != nil || len(nodes) != 4 {
		t.Errorf("the other conversation has %d nodes (%v), want 4", len(nodes), err)
	}
	sameTurns(t, "the other conversation", other, allTurns(t, s, "ns", "d"))
}

func testResetPyramidTiers(t *testing.T, s strata.Store) {
	orig := tierCorpus(t, s, "ns", "c")
	other := tierCorpus(t, s, "ns", "d")
	// The same tiers in both: 1-10 warm, 11-20 cold from hot, 21-30 cold
	// from warm.
	for _, conv := range []string{"c", "d"} {
		demote(t, s, "ns", conv, strata.TierWarm, [2]int64{1, 10}, [2]int64{21, 30})
		demote(t, s, "ns", conv, strata.TierCold, [2]int64{11, 20}, [2]int64{21, 30})
	}
	want := slices.Clone(orig)
	setAndCheck(t, s, "ns", "c", want, 15, 0.9) // pinned while cold
	setAndCheck(t, s, "ns", "c", want, 25, 0.2) // unpinned while cold
	setAndCheck(t, s, "ns", "c", want, 3, 0.4)  // changed while warm
	sameTurns(t, "Turns before ResetPyramid", want, allTurns(t, s, "ns", "c"))
	dStats, _ := convStats(t, s, "ns", "d")

	n, err := s.ResetPyramid(ctx(t), "ns", "c", "calendar")
	if err != nil || n != 4 {
		t.Fatalf("ResetPyramid = %d, %v; want 4 nodes removed", n, err)
	}
	checkReset(t, s, "ns", "c", "calendar", want)
	// The other conversation keeps its tiers and its archive.
	sameTurns(t, "the other conversation", other, allTurns(t, s, "ns", "d"))
	if got := tiersOf(t, s, "ns", "d"); got[1] != strata.TierWarm || got[11] != strata.TierCold || got[21] != strata.TierCold {
		t.Errorf("the other conversation's tiers = %v, want warm, cold, cold", got)
	}
	if ds, _ := convStats(t, s, "ns", "d"); ds.Archive != dStats.Archive {
		t.Errorf("the other conversation's archive went from %+v to %+v", dStats.Archive, ds.Archive)
	}

	// A new pyramid over the same turns goes through the tiers again,
	// with no record twice.
	nodes := []strata.Node{
		mkNode("ns", "c", 1, 1, 10, "first span about alpha"),
		mkNode("ns", "c", 1, 11, 20, "second span about beta"),
		mkNode("ns", "c", 1, 21, 30, "third span about gamma"),
	}
	if err := s.PutNodes(ctx(t), "ns", "c", nodes); err != nil {
		t.Fatal(err)
	}
	demote(t, s, "ns", "c", strata.TierWarm, [2]int64{1, 10}, [2]int64{21, 30})
	demote(t, s, "ns", "c", strata.TierCold, [2]int64{11, 20}, [2]int64{21, 30})
	sameTurns(t, "Turns after a new pyramid went cold", want, allTurns(t, s, "ns", "c"))
	cs, _ := convStats(t, s, "ns", "c")
	if cs.Archive.Records != dStats.Archive.Records || cs.Archive.Segments != dStats.Archive.Segments {
		t.Errorf("archive after a reset and a new pyramid = %+v, want the records and segments of the same spans in a fresh conversation, %+v",
			cs.Archive, dStats.Archive)
	}
	wantHit(t, s, "ns", "c", want, 15)
	wantHit(t, s, "ns", "c", want, 25)
}

func testResetPyramidExpired(t *testing.T, s strata.Store) {
	want := tierCorpus(t, s, "ns", "c")
	demote(t, s, "ns", "c", strata.TierWarm, [2]int64{11, 20})
	demote(t, s, "ns", "c", strata.TierCold, [2]int64{1, 10}, [2]int64{21, 30})
	expire(t, s, "ns", "c", 1, 10)
	nodesBefore, err := s.Nodes(ctx(t), strata.NodeFilter{Namespace: "ns", Conversation: "c"})
	if err != nil {
		t.Fatal(err)
	}
	turnsBefore := allTurns(t, s, "ns", "c")
	statsBefore, _ := convStats(t, s, "ns", "c")

	_, err = s.ResetPyramid(ctx(t), "ns", "c", "calendar")
	wantCode(t, "ResetPyramid with an expired span", err, strata.ECONFLICT)

	nodes, err := s.Nodes(ctx(t), strata.NodeFilter{Namespace: "ns", Conversation: "c"})
	if err != nil || len(nodes) != len(nodesBefore) {
		t.Fatalf("after a refused reset: %d nodes (%v), want %d", len(nodes), err, len(nodesBefore))
	}
	for i := range nodes {
		if d := diffNode(nodesBefore[i], nodes[i]); d != "" || nodes[i].Tier != nodesBefore[i].Tier {
			t.Errorf("after a refused reset: %s (tier %s, was %s)", d, nodes[i].Tier, nodesBefore[i].Tier)
		}
	}
	if c, err := s.Conversation(ctx(t), "ns", "c"); err != nil || c.Policy != "chunks" {
		t.Errorf("after a refused reset the policy is %q (%v), want chunks", c.Policy, err)
	}
	sameTurns(t, "Turns after a refused reset", turnsBefore, allTurns(t, s, "ns", "c"))
	wantHit(t, s, "ns", "c", want, 15) // warm
	wantHit(t, s, "ns", "c", want, 27) // cold
	wantHit(t, s, "ns", "c", want, 25) // pinned
	if st, _ := convStats(t, s, "ns", "c"); st.Archive != statsBefore.Archive {
		t.Errorf("after a refused reset the archive went from %+v to %+v", statsBefore.Archive, st.Archive)
	}
	hits, err := s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Conversation: "c", Text: "alpha", Kind: strata.KindSummary})
	if err != nil || len(hits) == 0 {
		t.Errorf("after a refused reset the expired span's summary is not found: %v", err)
	}
}

// testReplaceNodes replaces a warm and a cold span, and a node above them,
// with nodes over the same turns: the turns come back hot, whole and
// searchable, the removed summaries and vectors are gone, and the other
// spans keep their tiers.
func testReplaceNodes(t *testing.T, s strata.Store) {
	want := tierCorpus(t, s, "ns", "c")
	demote(t, s, "ns", "c", strata.TierWarm, [2]int64{1, 10}, [2]int64{21, 30})
	demote(t, s, "ns", "c", strata.TierCold, [2]int64{11, 20}, [2]int64{21, 30})
	space := strata.EmbedSpace{Model: "m", Dim: 2}
	old := strata.NodeID("ns", "c", 1, 11, 20)
	if err := s.PutEmbeddings(ctx(t), "ns", "c", space, []strata.Embedding{{EmbedRef: strata.EmbedRef{Level: 1, Node: old}, Vector: []float32{1, 0}}}); err != nil {
		t.Fatal(err)
	}
	ids := []string{strata.NodeID("ns", "c", 1, 1, 10), old, strata.NodeID("ns", "c", 2, 1, 20)}
	repl := mkNode("ns", "c", 1, 1, 20, "one span about delta")
	if _, err := s.ReplaceNodes(ctx(t), "ns", "c", ids, []strata.Node{repl}); err != nil {
		t.Fatalf("ReplaceNodes: %v", err)
	}
	nodes, err := s.Nodes(ctx(t), strata.NodeFilter{Namespace: "ns", Conversation: "c"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range nodes {
		got = append(got, fmt.Sprintf("%d:%d-%d", n.Level, n.FirstSeq, n.LastSeq))
	}
	if fmt.Sprint(got) != "[1:1-20 1:21-30]" {
		t.Errorf("after ReplaceNodes the nodes are %v, want [1:1-20 1:21-30]", got)
	}
	if tiers := tiersOf(t, s, "ns", "c"); tiers[1] != strata.TierHot || tiers[21] != strata.TierCold {
		t.Errorf("tiers after ReplaceNodes = %v, want the new span hot and 21-30 still cold", tiers)
	}
	sameTurns(t, "Turns after ReplaceNodes", want, allTurns(t, s, "ns", "c"))
	for seq := int64(1); seq <= 20; seq++ {
		wantHit(t, s, "ns", "c", want, seq)
	}
	wantHit(t, s, "ns", "c", want, 27) // cold, untouched
	for word, n := range map[string]int{"beta": 0, "delta": 1} {
		hits, err := s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Conversation: "c", Text: word, Kind: strata.KindSummary})
		if err != nil || len(hits) != n {
			t.Errorf("summary search %q after ReplaceNodes: %d hits (%v), want %d", word, len(hits), err, n)
		}
	}
	vc, err := s.VectorCounts(ctx(t), "ns", "c")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range vc {
		for _, sp := range c.Spaces {
			if sp.Nodes != 0 {
				t.Errorf("%d node vectors after ReplaceNodes, want the removed node's gone", sp.Nodes)
			}
		}
	}
	cs, _ := convStats(t, s, "ns", "c")
	if cs.Archive.Records != 10 {
		t.Errorf("archive after ReplaceNodes holds %d records, want 10 (span 21-30 only)", cs.Archive.Records)
	}

	// An unknown id is ENOTFOUND and changes nothing; so is an unknown
	// conversation.
	_, err = s.ReplaceNodes(ctx(t), "ns", "c", []string{repl.ID, "nope"}, nil)
	wantCode(t, "ReplaceNodes with an unknown id", err, strata.ENOTFOUND)
	if ns, _ := s.Nodes(ctx(t), strata.NodeFilter{Namespace: "ns", Conversation: "c", IDs: []string{repl.ID}}); len(ns) != 1 {
		t.Errorf("a refused ReplaceNodes removed node %s", repl.ID)
	}
	_, err = s.ReplaceNodes(ctx(t), "ns", "zz", []string{repl.ID}, nil)
	wantCode(t, "ReplaceNodes of an unknown conversation", err, strata.ENOTFOUND)

	// An expired span cannot be replaced.
	expire(t, s, "ns", "c", 21, 30)
	_, err = s.ReplaceNodes(ctx(t), "ns", "c", []string{strata.NodeID("ns", "c", 1, 21, 30)}, nil)
	wantCode(t, "ReplaceNodes of an expired span", err, strata.ECONFLICT)
	if tiers := tiersOf(t, s, "ns", "c"); tiers[21] != strata.TierExpired {
		t.Errorf("a refused ReplaceNodes changed the expired span: %v", tiers)
	}
}

// testReplaceNodesParents: removing a node removes the nodes above it, and
// a parent over a child that is not stored is refused.
func testReplaceNodesParents(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	appendTurns(t, s, "ns", "c", mkTurns("p", 40))
	a, b, c := mkNode("ns", "c", 1, 1, 10, "a"), mkNode("ns", "c", 1, 11, 20, "b"), mkNode("ns", "c", 1, 21, 30, "c")
	p := mkNode("ns", "c", 2, 1, 20, "p")
	p.Children = []string{a.ID, b.ID}
	q := mkNode("ns", "c", 3, 1, 20, "q")
	q.Children = []string{p.ID}
	if _, err := s.ReplaceNodes(ctx(t), "ns", "c", nil, []strata.Node{a, b, c, p, q}); err != nil {
		t.Fatalf("ReplaceNodes of a pyramid whose children come first: %v", err)
	}
	spans := func() string {
		t.Helper()
		ns, err := s.Nodes(ctx(t), strata.NodeFilter{Namespace: "ns", Conversation: "c"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range ns {
			got = append(got, fmt.Sprintf("%d:%d-%d", n.Level, n.FirstSeq, n.LastSeq))
		}
		return fmt.Sprint(got)
	}
	if got := spans(); got != "[1:1-10 1:11-20 1:21-30 2:1-20 3:1-20]" {
		t.Fatalf("nodes %s", got)
	}

	// A node put back under its id (a new summary of the same span)
	// keeps its parents.
	if _, err := s.ReplaceNodes(ctx(t), "ns", "c", []string{b.ID}, []strata.Node{b}); err != nil {
		t.Fatalf("ReplaceNodes of a node by itself: %v", err)
	}
	if got := spans(); got != "[1:1-10 1:11-20 1:21-30 2:1-20 3:1-20]" {
		t.Fatalf("after putting a node back under its id the nodes are %s: its parents must stand", got)
	}

	// Session 11-20 reopens into 11-30: its parent and grandparent go
	// with it, though the caller named neither.
	bc := mkNode("ns", "c", 1, 11, 30, "bc")
	if _, err := s.ReplaceNodes(ctx(t), "ns", "c", []string{b.ID, c.ID}, []strata.Node{bc}); err != nil {
		t.Fatalf("ReplaceNodes: %v", err)
	}
	if got := spans(); got != "[1:1-10 1:11-30]" {
		t.Errorf("after replacing a child the nodes are %s, want [1:1-10 1:11-30]: no parent over a removed child", got)
	}

	// A writer that read the pyramid before: its parent over the removed
	// child is refused, and nothing of its call is stored.
	d := mkNode("ns", "c", 1, 31, 40, "d")
	_, err := s.ReplaceNodes(ctx(t), "ns", "c", nil, []strata.Node{d, p})
	wantCode(t, "ReplaceNodes of a parent over a removed child", err, strata.ECONFLICT)
	if got := spans(); got != "[1:1-10 1:11-30]" {
		t.Errorf("a refused ReplaceNodes stored nodes: %s", got)
	}

	// Children stored, or in the same call, are fine.
	p2 := mkNode("ns", "c", 2, 1, 40, "p2")
	p2.Children = []string{a.ID, bc.ID, d.ID}
	if _, err := s.ReplaceNodes(ctx(t), "ns", "c", nil, []strata.Node{d, p2}); err != nil {
		t.Fatalf("ReplaceNodes of a parent over stored children and one of the call: %v", err)
	}
	if got := spans(); got != "[1:1-10 1:11-30 1:31-40 2:1-40]" {
		t.Errorf("nodes %s, want [1:1-10 1:11-30 1:31-40 2:1-40]", got)
	}
}
