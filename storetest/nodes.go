package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// mkNode makes a node of conversation conv in namespace ns with a derived
// id and every field set.
func mkNode(ns, conv string, level int, first, last int64, summary string) strata.Node {
	return strata.Node{
		ID:           strata.NodeID(ns, conv, level, first, last),
		Conversation: conv,
		Level:        level,
		FirstSeq:     first,
		LastSeq:      last,
		Start:        base.Add(time.Duration(first-1) * time.Minute),
		End:          base.Add(time.Duration(last-1)*time.Minute + 999),
		Summary:      summary,
		Facts:        []string{"fact one", "fact two"},
		Themes:       []string{"theme"},
		SourceTokens: int(last-first+1) * 10,
		Tokens:       level * 7,
		Method:       strata.MethodExtractive,
		Status:       strata.StatusOK,
		Created:      base.Add(24 * time.Hour),
	}
}

func testPutNodes(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	n := mkNode("ns", "c", 2, 1, 20, "The team chose Postgres over MySQL.")
	n.Children = []string{strata.NodeID("ns", "c", 1, 1, 10), strata.NodeID("ns", "c", 1, 11, 20)}
	n.Fallback = "model reply over budget: 812 tokens for a budget of 300 after 3 tries"
	n.Status = strata.StatusOverBudget
	n.Rejected = &strata.RejectedReply{Summary: "The team deliberated over every option, at length.", Tokens: 812, Budget: 300,
		Model: "m-1", Status: strata.StatusOverBudget}
	// Zero times, no lists, no conversation: it is the conversation PutNodes
	// is given.
	bare := strata.Node{ID: "bare", Level: 1, FirstSeq: 21, LastSeq: 30}
	if err := s.PutNodes(ctx(t), "ns", "c", []strata.Node{n, bare}); err != nil {
		t.Fatalf("PutNodes: %v", err)
	}
	got, err := s.Nodes(ctx(t), strata.NodeFilter{Namespace: "ns", IDs: []string{n.ID, bare.ID}})
	if err != nil {
		t.Fatalf("Nodes: %v", err)
	}
	if len(got) != 2 {
		t.Fatalf("Nodes returned %d nodes, want 2", len(got))
	}
	// Level 1 sorts before level 2.
	bare.Conversation = "c"
	if d := diffNode(bare, got[0]); d != "" {
		t.Error(d)
	}
	if d := diffNode(n, got[1]); d != "" {
		t.Error(d)
	}
	// A rejected reply is kept, not served: search does not find it.
	if hits, err := s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Text: "deliberated", K: 10, Kind: strata.KindSummary}); err != nil || len(hits) != 0 {
		t.Errorf("Search for a word of a rejected reply: %d hits, %v; want none", len(hits), err)
	}

	replaced := n
	replaced.Summary = "The team chose SQLite after all."
	replaced.Tokens, replaced.Status, replaced.Fallback, replaced.Rejected = 99, strata.StatusOK, "", nil
	replaced.Facts = nil
	for range 2 {
		if err := s.PutNodes(ctx(t), "ns", "c", []strata.Node{replaced}); err != nil {
			t.Fatalf("PutNodes of a stored id: %v", err)
		}
	}
	got, err = s.Nodes(ctx(t), strata.NodeFilter{Namespace: "ns", Conversation: "c", Level: 2})
	if err != nil {
		t.Fatalf("Nodes: %v", err)
	}
	if len(got) != 1 {
		t.Fatalf("after putting a node id three times, Nodes returned %d nodes, want 1", len(got))
	}
	if d := diffNode(replaced, got[0]); d != "" {
		t.Errorf("replaced %s", d)
	}
	for _, tc := range []struct {
		word string
		want int
	}{{"postgres", 0}, {"sqlite", 1}} {
		hits, err := s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Text: tc.word, K: 10, Kind: strata.KindSummary})
		if err != nil {
			t.Fatalf("Search(%q): %v", tc.word, err)
		}
		if len(hits) != tc.want {
			t.Errorf("Search(%q) after replacing the summary: %d hits, want %d", tc.word, len(hits), tc.want)
		}
	}

	putNodesRefused(t, s, n)
}

// putNodesRefused: PutNodes of nothing is no error; of node n of ns/c to
// a missing conversation, to another namespace's or another conversation,
// or of a node without an id, is refused.
func putNodesRefused(t *testing.T, s strata.Store, n strata.Node) {
	if err := s.PutNodes(ctx(t), "ns", "c", nil); err != nil {
		t.Errorf("PutNodes(nil): %v", err)
	}
	lost := n
	lost.Conversation = "missing"
	err := s.PutNodes(ctx(t), "ns", "missing", []strata.Node{lost})
	wantCode(t, "PutNodes to a missing conversation", err, strata.ENOTFOUND)
	err = s.PutNodes(ctx(t), "other", "c", []strata.Node{n})
	wantCode(t, "PutNodes to a conversation of another namespace", err, strata.ENOTFOUND)
	err = s.PutNodes(ctx(t), "ns", "c", []strata.Node{{Level: 1, FirstSeq: 1, LastSeq: 10}})
	wantCode(t, "PutNodes of a node without an id", err, strata.EINVALID)
	ensure(t, s, "ns", "d")
	err = s.PutNodes(ctx(t), "ns", "d", []strata.Node{n}) // n.Conversation is "c"
	wantCode(t, "PutNodes of a node of conversation c to conversation d", err, strata.EINVALID)
}

func testNodesFilter(t *testing.T, s strata.Store) {
	ids, names, dn, on := putFilterNodes(t, s)
	for _, tc := range []struct {
		name string
		f    strata.NodeFilter
		want []string
	}{
		{"all", strata.NodeFilter{Conversation: "c"}, []string{"a", "b", "c", "d", "e", "f", "g"}},
		{"level", strata.NodeFilter{Conversation: "c", Level: 1}, []string{"a", "b", "c", "d"}},
		{"level newest", strata.NodeFilter{Conversation: "c", Level: 1, Newest: true}, []string{"d", "c", "b", "a"}},
		{"newest", strata.NodeFilter{Conversation: "c", Newest: true}, []string{"g", "f", "e", "d", "c", "b", "a"}},
		{"from", strata.NodeFilter{Conversation: "c", FromSeq: 11}, []string{"b", "c", "d", "f"}},
		{"to", strata.NodeFilter{Conversation: "c", ToSeq: 20}, []string{"a", "b", "e"}},
		{"from to", strata.NodeFilter{Conversation: "c", FromSeq: 11, ToSeq: 30}, []string{"b", "c"}},
		{"limit", strata.NodeFilter{Conversation: "c", Limit: 2}, []string{"a", "b"}},
		{"level newest limit", strata.NodeFilter{Conversation: "c", Level: 2, Newest: true, Limit: 1}, []string{"f"}},
		{"ids without conversation", strata.NodeFilter{IDs: []string{ids["g"], ids["a"], "nope"}}, []string{"a", "g"}},
		{"ids of two conversations", strata.NodeFilter{IDs: []string{ids["b"], dn.ID}}, []string{"d/a", "b"}},
		{"ids and level", strata.NodeFilter{Conversation: "c", IDs: []string{ids["a"], ids["c"], ids["e"]}, Level: 1}, []string{"a", "c"}},
		{"ids of another namespace", strata.NodeFilter{IDs: []string{on.ID}}, nil},
		{"other conversation", strata.NodeFilter{Conversation: "d"}, []string{"d/a"}},
	} {
		f := tc.f
		f.Namespace = "ns"
		got, err := s.Nodes(ctx(t), f)
		if err != nil {
			t.Errorf("%s: Nodes(%+v): %v", tc.name, f, err)
			continue
		}
		var gotNames []string
		for _, n := range got {
			gotNames = append(gotNames, names[n.ID])
			if want := map[string]string{dn.ID: "d"}[n.ID]; want != "" && n.Conversation != want ||
				want == "" && n.Conversation != "c" {
				t.Errorf("%s: node %s carries conversation %q, want its own", tc.name, names[n.ID], n.Conversation)
			}
		}
		if !slices.Equal(gotNames, tc.want) {
			t.Errorf("%s: Nodes(%+v) = %q, want %q", tc.name, f, gotNames, tc.want)
		}
	}
	_, err := s.Nodes(ctx(t), strata.NodeFilter{Namespace: "ns"})
	wantCode(t, "Nodes without a conversation or ids", err, strata.EINVALID)
	_, err = s.Nodes(ctx(t), strata.NodeFilter{Namespace: "ns", Conversation: "missing"})
	wantCode(t, "Nodes of a missing conversation", err, strata.ENOTFOUND)
}

// putFilterNodes puts a pyramid of nodes a to g in ns/c, not in order,
// and one node in ns/d (dn) and in other/c (on). It returns the ids of
// a to g by name, and the names by id.
func putFilterNodes(t *testing.T, s strata.Store) (ids, names map[string]string, dn, on strata.Node) {
	ensure(t, s, "ns", "c")
	ensure(t, s, "ns", "d")
	ensure(t, s, "other", "c")
	spans := map[string]struct {
		level       int
		first, last int64
	}{
		"a": {1, 1, 10}, "b": {1, 11, 20}, "c": {1, 21, 30}, "d": {1, 31, 40},
		"e": {2, 1, 20}, "f": {2, 21, 40},
		"g": {3, 1, 40},
	}
	ids, names = map[string]string{}, map[string]string{}
	var nodes []strata.Node
	for _, name := range []string{"f", "c", "g", "a", "e", "d", "b"} { // not in order
		sp := spans[name]
		n := mkNode("ns", "c", sp.level, sp.first, sp.last, "summary "+name)
		ids[name], names[n.ID] = n.ID, name
		nodes = append(nodes, n)
	}
	if err := s.PutNodes(ctx(t), "ns", "c", nodes[:3]); err != nil {
		t.Fatalf("PutNodes: %v", err)
	}
	if err := s.PutNodes(ctx(t), "ns", "c", nodes[3:]); err != nil {
		t.Fatalf("PutNodes: %v", err)
	}
	// The same spans in another conversation and another namespace.
	dn = mkNode("ns", "d", 1, 1, 10, "summary of d")
	on = mkNode("other", "c", 1, 1, 10, "summary of other")
	if err := s.PutNodes(ctx(t), "ns", "d", []strata.Node{dn}); err != nil {
		t.Fatalf("PutNodes: %v", err)
	}
	if err := s.PutNodes(ctx(t), "other", "c", []strata.Node{on}); err != nil {
		t.Fatalf("PutNodes: %v", err)
	}
	names[dn.ID], names[on.ID] = "d/a", "other/a"
	return ids, names, dn, on
}

// testDerivedNodes: a node marked Derived round-trips the mark and is kept
// out of search; replacing it flips its searchability both ways.
func testDerivedNodes(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	n := mkNode("ns", "c", 2, 1, 20, "Quokka sightings were logged near the ferry terminal.")
	n.Derived = true
	put := func(n strata.Node) {
		t.Helper()
		if err := s.PutNodes(ctx(t), "ns", "c", []strata.Node{n}); err != nil {
			t.Fatalf("PutNodes: %v", err)
		}
	}
	hits := func() int {
		t.Helper()
		h, err := s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Conversation: "c", Text: "quokka ferry", K: 5})
		if err != nil {
			t.Fatalf("Search: %v", err)
		}
		return len(h)
	}
	put(n)
	got, err := s.Nodes(ctx(t), strata.NodeFilter{Namespace: "ns", Conversation: "c"})
	if err != nil || len(got) != 1 || !got[0].Derived {
		t.Fatalf("Nodes = %+v (err %v), want one derived node", got, err)
	}
	if h := hits(); h != 0 {
		t.Fatalf("a derived node is found by Search (%d hits)", h)
	}
	n.Derived = false
	put(n)
	if h := hits(); h != 1 {
		t.Fatalf("after replacing it by a plain node: %d hits, want 1", h)
	}
	n.Derived = true
	put(n)
	if h := hits(); h != 0 {
		t.Fatalf("after replacing it by a derived node again: %d hits, want 0", h)
	}
}

// testPutNodesTwiceInOneCall: the same node twice in one PutNodes keeps the
// last version, found by Search once, and the first not at all.
func testPutNodesTwiceInOneCall(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	a := mkNode("ns", "c", 1, 1, 10, "The heron waited by the sluice gate.")
	b := a
	b.Summary = "The kingfisher dived from the willow."
	if err := s.PutNodes(ctx(t), "ns", "c", []strata.Node{a, b}); err != nil {
		t.Fatalf("PutNodes: %v", err)
	}
	for word, want := range map[string]int{"heron": 0, "kingfisher": 1} {
		h, err := s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Conversation: "c", Text: word, K: 5})
		if err != nil || len(h) != want {
			t.Fatalf("Search(%q) = %d hits (%v), want %d", word, len(h), err, want)
		}
	}
	// Replace it again in a later call: still one hit, on the new text.
	c := a
	c.Summary = "The otter slid down the bank."
	if err := s.PutNodes(ctx(t), "ns", "c", []strata.Node{c}); err != nil {
		t.Fatalf("PutNodes: %v", err)
	}
	for word, want := range map[string]int{"kingfisher": 0, "otter": 1} {
		h, err := s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Conversation: "c", Text: word, K: 5})
		if err != nil || len(h) != want {
			t.Fatalf("Search(%q) after replacing = %d hits (%v), want %d", word, len(h), err, want)
		}
	}
}
