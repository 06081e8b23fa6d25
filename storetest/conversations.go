package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

func testEnsureConversation(t *testing.T, s strata.Store) {
	in := strata.Conversation{Namespace: "ns", ID: "c1", Policy: "chunks", Created: base}
	c, err := s.EnsureConversation(ctx(t), in)
	if err != nil {
		t.Fatalf("EnsureConversation: %v", err)
	}
	if c.Namespace != "ns" || c.ID != "c1" || c.Policy != "chunks" || !c.Created.Equal(base) || c.Turns != 0 {
		t.Errorf("EnsureConversation created %+v, want ns/c1 policy chunks created %v with no turns", c, base)
	}

	again, err := s.EnsureConversation(ctx(t), strata.Conversation{Namespace: "ns", ID: "c1", Policy: "other",
		Created: base.Add(time.Hour)})
	if err != nil {
		t.Fatalf("EnsureConversation of an existing conversation: %v", err)
	}
	if again.Policy != "chunks" || !again.Created.Equal(base) {
		t.Errorf("EnsureConversation of an existing conversation returned policy %q created %v, want the stored chunks, %v",
			again.Policy, again.Created, base)
	}

	got, err := s.Conversation(ctx(t), "ns", "c1")
	if err != nil {
		t.Fatalf("Conversation: %v", err)
	}
	if got.Namespace != "ns" || got.ID != "c1" || got.Policy != "chunks" || !got.Created.Equal(base) {
		t.Errorf("Conversation = %+v, want what EnsureConversation stored: %+v", got, c)
	}

	now, err := s.EnsureConversation(ctx(t), strata.Conversation{Namespace: "ns", ID: "c2"})
	if err != nil {
		t.Fatalf("EnsureConversation without a creation time: %v", err)
	}
	if now.Created.IsZero() {
		t.Errorf("EnsureConversation without a creation time stored the zero time, want the current time")
	}

	_, err = s.EnsureConversation(ctx(t), strata.Conversation{Namespace: "ns"})
	wantCode(t, "EnsureConversation with an empty id", err, strata.EINVALID)
}

func testConversationNotFound(t *testing.T, s strata.Store) {
	_, err := s.Conversation(ctx(t), "ns", "missing")
	wantCode(t, "Conversation of a missing id", err, strata.ENOTFOUND)
	ensure(t, s, "a", "c1")
	_, err = s.Conversation(ctx(t), "b", "c1")
	wantCode(t, "Conversation of an id that exists in another namespace", err, strata.ENOTFOUND)
}

func testConversations(t *testing.T, s strata.Store) {
	for _, id := range []string{"b", "a", "c"} {
		ensure(t, s, "ns1", id)
	}
	for _, id := range []string{"z", "a"} {
		ensure(t, s, "ns2", id)
	}
	for _, tc := range []struct {
		ns   string
		want []string
	}{
		{"ns1", []string{"a", "b", "c"}},
		{"ns2", []string{"a", "z"}},
		{"ns3", nil},
	} {
		got, err := s.Conversations(ctx(t), tc.ns)
		if err != nil {
			t.Fatalf("Conversations(%q): %v", tc.ns, err)
		}
		var ids []string
		for _, c := range got {
			ids = append(ids, c.ID)
			if c.Namespace != tc.ns {
				t.Errorf("Conversations(%q) returned %q of namespace %q", tc.ns, c.ID, c.Namespace)
			}
		}
		if !slices.Equal(ids, tc.want) {
			t.Errorf("Conversations(%q) = %q, want %q", tc.ns, ids, tc.want)
		}
	}
}

func testConversationCounts(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "empty")
	c, err := s.Conversation(ctx(t), "ns", "empty")
	if err != nil {
		t.Fatalf("Conversation: %v", err)
	}
	if c.Turns != 0 || c.Sessions != 0 || !c.First.IsZero() || !c.Last.IsZero() {
		t.Errorf("Conversation without turns = %+v, want no turns, no sessions, zero first and last", c)
	}

	ensure(t, s, "ns", "c")
	turns := mkTurns("t", 5)
	for i, sess := range []int{1, 1, 2, 2, 3} {
		turns[i].Session = sess
	}
	appendTurns(t, s, "ns", "c", turns[:3])
	appendTurns(t, s, "ns", "c", turns[3:])
	c, err = s.Conversation(ctx(t), "ns", "c")
	if err != nil {
		t.Fatalf("Conversation: %v", err)
	}
	if c.Turns != 5 || c.Sessions != 3 {
		t.Errorf("Conversation reports %d turns and %d sessions, want 5 and 3", c.Turns, c.Sessions)
	}
	if !c.First.Equal(turns[0].Time) || !c.Last.Equal(turns[4].Time) {
		t.Errorf("Conversation reports first %v and last %v, want %v and %v", c.First, c.Last, turns[0].Time, turns[4].Time)
	}
}

// testDeleteConversation deletes a conversation whose spans are hot, warm
// and cold, with vectors, learnings, calls and compaction state: nothing
// of it is found afterwards, another conversation keeps everything, the
// audit record says what went, and the id can be used again from empty.
func testDeleteConversation(t *testing.T, s strata.Store) {
	want := tierCorpus(t, s, "ns", "c")
	other := tierCorpus(t, s, "ns", "d")
	for _, conv := range []string{"c", "d"} {
		demote(t, s, "ns", conv, strata.TierWarm, [2]int64{1, 10}, [2]int64{21, 30})
		demote(t, s, "ns", conv, strata.TierCold, [2]int64{11, 20}, [2]int64{21, 30})
	}
	space := strata.EmbedSpace{Model: "m", Dim: 2}
	if err := s.PutEmbeddings(ctx(t), "ns", "c", space, []strata.Embedding{{EmbedRef: strata.EmbedRef{Seq: 1}, Vector: []float32{1, 0}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddLearnings(ctx(t), "ns", "c", []strata.Learning{{Subject: "s", Text: "a fact"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCompactionState(ctx(t), "ns", "c", strata.CompactionState{Checkpoint: "cp", TurnCount: 3}); err != nil {
		t.Fatal(err)
	}
	dBefore, _ := convStats(t, s, "ns", "d")
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	d, err := s.DeleteConversation(ctx(t), "ns", "c", "asked by the user", at)
	if err != nil {
		t.Fatalf("DeleteConversation: %v", err)
	}
	if d.Turns != int64(len(want)) || d.Nodes != 4 || d.Segments == 0 || d.ContentBytes == 0 || !d.At.Equal(at) || d.Reason != "asked by the user" {
		t.Errorf("deletion record %+v: want %d turns, 4 nodes, some segments and bytes, the time and the reason", d, len(want))
	}
	if _, err := s.Conversation(ctx(t), "ns", "c"); strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Errorf("Conversation after the deletion: %v, want ENOTFOUND", err)
	}
	for _, q := range []strata.SearchQuery{
		{Namespace: "ns", Text: "uniqword5 uniqword15 uniqword25 alpha beta gamma"},
		{Namespace: "ns", Conversation: "d", Text: "uniqword5"},
	} {
		hits, err := s.Search(ctx(t), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.Conversation == "c" {
				t.Errorf("search %q still finds the deleted conversation: %+v", q.Text, h)
			}
		}
	}
	sameTurns(t, "the other conversation after the deletion", other, allTurns(t, s, "ns", "d"))
	if dAfter, _ := convStats(t, s, "ns", "d"); dAfter.Archive != dBefore.Archive {
		t.Errorf("the other conversation's archive went from %+v to %+v", dBefore.Archive, dAfter.Archive)
	}
	if st, err := s.CompactionState(ctx(t), "ns", "c"); err != nil || st.Checkpoint != "" {
		t.Errorf("compaction state after the deletion: %+v, %v", st, err)
	}
	ds, err := s.Deletions(ctx(t), "ns")
	if err != nil || len(ds) != 1 || ds[0].Conversation != "c" || ds[0].Turns != d.Turns || !ds[0].At.Equal(at) {
		t.Errorf("Deletions = %+v, %v; want the one record", ds, err)
	}
	if ds, _ := s.Deletions(ctx(t), "other"); len(ds) != 0 {
		t.Errorf("another namespace sees %d deletion records", len(ds))
	}
	_, err = s.DeleteConversation(ctx(t), "ns", "c", "", at)
	wantCode(t, "deleting it again", err, strata.ENOTFOUND)

	// The id starts empty: no turn, vector, learning or record of before.
	ensure(t, s, "ns", "c")
	if got := allTurns(t, s, "ns", "c"); len(got) != 0 {
		t.Fatalf("a conversation created again holds %d turns", len(got))
	}
	appendTurns(t, s, "ns", "c", mkTurns("new", 3))
	if hits := turnHit(t, s, "ns", "c", "uniqword5"); hits != nil {
		t.Errorf("the new conversation finds a deleted turn: %+v", hits)
	}
	if ls, err := s.Learnings(ctx(t), strata.LearningFilter{Namespace: "ns", Conversation: "c"}); err != nil || len(ls) != 0 {
		t.Errorf("the new conversation has %d learnings (%v)", len(ls), err)
	}
	if cs, _ := convStats(t, s, "ns", "c"); cs.Archive.Segments != 0 {
		t.Errorf("the new conversation has %d archive segments", cs.Archive.Segments)
	}
}
