package storetest

import (
	"slices"
	"testing"
	"time"

	"strata"
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
