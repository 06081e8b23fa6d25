package storetest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/strata-memory/strata"
)

// searchCorpus stores the turns and nodes the search tests query, in
// namespace "ns": conversation "main" with turns 1..20 and one summary,
// conversation "other" with one turn.
func searchCorpus(t *testing.T, s strata.Store) (summaryID string) {
	ensure(t, s, "ns", "main")
	ensure(t, s, "ns", "other")
	texts := []string{
		"We deployed the new billing service to production yesterday.",
		"The Kubernetes cluster is deploying slowly today.",
		"Let's discuss the marketing plan for the next quarter.",
		"Pelican pelican pelican.",
		"A long message that mentions a pelican once among many other words about weather, lunch, travel, music, gardens and books.",
		"Zebra crossings are painted white.",
	}
	for i := len(texts); i < 20; i++ {
		texts = append(texts, fmt.Sprintf("Filler note number %d about nothing in particular.", i+1))
	}
	turns := make([]strata.Turn, len(texts))
	for i, tx := range texts {
		turns[i] = strata.Turn{ExtID: fmt.Sprintf("m%d", i+1), Role: strata.RoleUser, Content: tx, Time: base}
	}
	appendTurns(t, s, "ns", "main", turns)
	appendTurns(t, s, "ns", "other", []strata.Turn{
		{ExtID: "o1", Role: strata.RoleUser, Content: "Zebra stripes, in the other conversation.", Time: base},
	})
	n := mkNode("ns", "main", 1, 1, 10, "The team discussed the zebra migration and the billing rollout.")
	if err := s.PutNodes(ctx(t), "ns", "main", []strata.Node{n}); err != nil {
		t.Fatalf("PutNodes: %v", err)
	}
	return n.ID
}

// hitKey names a hit for comparisons: conversation/seq for a turn,
// conversation/node id for a summary (whose Node.Conversation must be the
// hit's).
func hitKey(h strata.Hit) string {
	switch {
	case h.Kind == strata.KindTurn && h.Turn != nil && h.Node == nil:
		return fmt.Sprintf("%s/%d", h.Conversation, h.Turn.Seq)
	case h.Kind == strata.KindSummary && h.Node != nil && h.Turn == nil && h.Node.Conversation == h.Conversation:
		return h.Conversation + "/" + h.Node.ID
	}
	return fmt.Sprintf("malformed hit %+v", h)
}

// checkOrder fails the test unless hits are in descending score order.
func checkOrder(t *testing.T, what string, hits []strata.Hit) {
	t.Helper()
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Errorf("%s: hit %d has score %v above hit %d's %v: want best (highest) first",
				what, i, hits[i].Score, i-1, hits[i-1].Score)
		}
	}
}

func testSearch(t *testing.T, s strata.Store) {
	sum := searchCorpus(t, s)
	for _, tc := range []struct {
		name string
		q    strata.SearchQuery
		want []string // hit keys; in order if ordered, else as a set
		ord  bool
	}{
		{"word", strata.SearchQuery{Text: "kubernetes", Kind: strata.KindTurn}, []string{"main/2"}, true},
		{"case-insensitive", strata.SearchQuery{Text: "KUBERNETES Cluster"}, []string{"main/2"}, true},
		{"inflections", strata.SearchQuery{Text: "deploy", Kind: strata.KindTurn}, []string{"main/1", "main/2"}, false},
		{"better match first", strata.SearchQuery{Text: "pelican", Kind: strata.KindTurn}, []string{"main/4", "main/5"}, true},
		{"k", strata.SearchQuery{Text: "pelican", K: 1}, []string{"main/4"}, true},
		{"k of many", strata.SearchQuery{Text: "filler", K: 3}, nil, false}, // checked by count below
		{"summaries", strata.SearchQuery{Text: "zebra", Kind: strata.KindSummary}, []string{"main/" + sum}, true},
		{"turns of a conversation", strata.SearchQuery{Conversation: "main", Text: "zebra", Kind: strata.KindTurn}, []string{"main/6"}, true},
		{"both kinds", strata.SearchQuery{Conversation: "main", Text: "zebra"}, []string{"main/6", "main/" + sum}, false},
		{"namespace", strata.SearchQuery{Text: "zebra", Kind: strata.KindTurn}, []string{"main/6", "other/1"}, false},
		{"other conversation", strata.SearchQuery{Conversation: "other", Text: "zebra"}, []string{"other/1"}, true},
		{"summary word in turns only", strata.SearchQuery{Text: "migration", Kind: strata.KindTurn}, nil, true},
		{"no match", strata.SearchQuery{Text: "xylophone"}, nil, true},
		{"other namespace", strata.SearchQuery{Namespace: "elsewhere", Text: "zebra"}, nil, true},
	} {
		q := tc.q
		if q.Namespace == "" {
			q.Namespace = "ns"
		}
		if q.K == 0 {
			q.K = 10
		}
		hits, err := s.Search(ctx(t), q)
		if err != nil {
			t.Errorf("%s: Search(%+v): %v", tc.name, q, err)
			continue
		}
		checkOrder(t, tc.name, hits)
		var keys []string
		for _, h := range hits {
			keys = append(keys, hitKey(h))
			if q.Kind != "" && h.Kind != q.Kind {
				t.Errorf("%s: hit of kind %q, want only %q", tc.name, h.Kind, q.Kind)
			}
		}
		if tc.name == "k of many" {
			if len(hits) != 3 {
				t.Errorf("%s: Search(%+v) returned %d hits, want K = 3", tc.name, q, len(hits))
			}
			continue
		}
		want := tc.want
		if !tc.ord {
			keys, want = slices.Sorted(slices.Values(keys)), slices.Sorted(slices.Values(want))
		}
		if !slices.Equal(keys, want) {
			t.Errorf("%s: Search(%+v) = %q, want %q", tc.name, q, keys, tc.want)
		}
	}

	hits, err := s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Conversation: "main", Text: "billing", K: 10})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	for _, h := range hits {
		switch {
		case h.Turn != nil && (h.Turn.Content != "We deployed the new billing service to production yesterday." ||
			h.Turn.ExtID != "m1" || h.Turn.Role != strata.RoleUser || !h.Turn.Time.Equal(base)):
			t.Errorf("turn hit carries %+v, want the whole stored turn m1", *h.Turn)
		case h.Node != nil && (h.Node.ID != sum || h.Node.Level != 1 || h.Node.LastSeq != 10 || len(h.Node.Facts) != 2):
			t.Errorf("summary hit carries %+v, want the whole stored node", *h.Node)
		}
	}
	if len(hits) != 2 {
		t.Errorf("Search(billing) = %d hits, want the turn and the summary", len(hits))
	}

	_, err = s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Conversation: "missing", Text: "zebra", K: 5})
	wantCode(t, "Search of a missing conversation", err, strata.ENOTFOUND)
}

func testSearchSyntax(t *testing.T, s strata.Store) {
	searchCorpus(t, s)
	for _, text := range []string{
		`"kubernetes`, `kubernetes"`, `"kubernetes"`, `kubernetes*`, `kuber*`, `-kubernetes`, `kubernetes -cluster`,
		`text:kubernetes`, `content : kubernetes`, `{content}: kubernetes`, `(kubernetes`, `kubernetes)`,
		`kubernetes AND`, `AND kubernetes`, `kubernetes OR`, `kubernetes NOT cluster`, `NEAR(kubernetes cluster)`,
		`NEAR(kubernetes cluster, 2)`, `^kubernetes`, `kubernetes + cluster`, `'kubernetes'`, `kubernetes\`,
		`kubernetes; DROP TABLE turns; --`, `kubernetes%`, `kubernetes_`, `kubernetes?`, `#kubernetes!`,
	} {
		hits, err := s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Text: text, K: 10})
		if err != nil {
			t.Errorf("Search(%q): %v", text, err)
			continue
		}
		found := false
		for _, h := range hits {
			found = found || hitKey(h) == "main/2"
		}
		if text == `kuber*` {
			continue // a prefix operator may or may not be honoured; it must not fail
		}
		if !found {
			t.Errorf("Search(%q) did not find the turn that says Kubernetes", text)
		}
	}
	for _, text := range []string{`*`, `"`, `""`, `()`, `-`, `:`, `^`, `{}`, `NEAR`, `NEAR()`, `AND OR NOT`, `a:b:c`, `"a" "b`} {
		if _, err := s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Text: text, K: 10}); err != nil {
			t.Errorf("Search(%q): %v", text, err)
		}
	}
}

func testSearchNoWords(t *testing.T, s strata.Store) {
	searchCorpus(t, s)
	for _, text := range []string{"", "   ", "\t\n", "?!...", "the and of a", "The", "to be or not to be", "***"} {
		for _, kind := range []string{"", strata.KindTurn, strata.KindSummary} {
			hits, err := s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Text: text, K: 10, Kind: kind})
			if err != nil || len(hits) != 0 {
				t.Errorf("Search(%q, kind %q) = %d hits, %v; want none and no error", text, kind, len(hits), err)
			}
		}
	}
}

// testSearchToolText: the text of tool calls and tool results is
// searchable, like content.
func testSearchToolText(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "c")
	turns := []strata.Turn{
		{ExtID: "a", Role: strata.RoleAssistant, Time: base,
			ToolCalls: []strata.ToolCall{{ID: "c1", Name: "lookup_warehouse", Arguments: []byte(`{"sku":"ZX-81"}`)}}},
		{ExtID: "b", Role: strata.RoleTool, Time: base,
			ToolResults: []strata.ToolResult{{CallID: "c1", Content: "aisle fourteen, bin marmalade"}}},
	}
	if _, err := s.AppendTurns(ctx(t), "ns", "c", turns); err != nil {
		t.Fatalf("AppendTurns: %v", err)
	}
	for word, want := range map[string]string{"marmalade": "b", "lookup_warehouse": "a"} {
		h, err := s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Conversation: "c", Text: word, K: 5, Kind: strata.KindTurn})
		if err != nil || len(h) != 1 || h[0].Turn.ExtID != want {
			t.Fatalf("Search(%q) = %d hits (%v), want turn %q", word, len(h), err, want)
		}
	}
}

// testSearchFromSeq: a search of a conversation's turns from a seq on
// returns exactly the unrestricted search's hits from that seq on, with
// the same scores; summaries are not restricted; rows of another
// conversation written between the conversation's own are never hits.
func testSearchFromSeq(t *testing.T, s strata.Store) {
	ensure(t, s, "ns", "r")
	ensure(t, s, "ns", "x")
	words := []string{"apple", "banana", "cherry", "damson"}
	for b := range 6 {
		var rt []strata.Turn
		for i := b*10 + 1; i <= b*10+10; i++ {
			text := fmt.Sprintf("Turn %d mentions %s %s.", i, words[i%4], words[(i/4)%4])
			if i%3 == 0 {
				text += " And " + words[(i+1)%4] + " with more words besides."
			}
			rt = append(rt, strata.Turn{ExtID: fmt.Sprintf("r%d", i), Role: strata.RoleUser, Content: text, Time: base})
		}
		appendTurns(t, s, "ns", "r", rt)
		appendTurns(t, s, "ns", "x", []strata.Turn{{ExtID: fmt.Sprintf("x%d", b), Role: strata.RoleUser, Content: "apple banana cherry damson", Time: base}})
	}
	if err := s.PutNodes(ctx(t), "ns", "r", []strata.Node{mkNode("ns", "r", 1, 1, 10, "Ten turns about apple and cherry.")}); err != nil {
		t.Fatalf("PutNodes: %v", err)
	}
	search := func(text string, from int64) []strata.Hit {
		t.Helper()
		hits, err := s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Conversation: "r", Text: text, K: 1000, FromSeq: from})
		if err != nil {
			t.Fatalf("Search(%q, from %d): %v", text, from, err)
		}
		checkOrder(t, "from_seq", hits)
		return hits
	}
	type scored struct {
		key   string
		score float64
	}
	keyed := func(hits []strata.Hit) []scored {
		out := make([]scored, len(hits))
		for i, h := range hits {
			out[i] = scored{hitKey(h), h.Score}
		}
		slices.SortFunc(out, func(a, b scored) int { return strings.Compare(a.key, b.key) })
		return out
	}
	for _, text := range []string{"apple", "banana cherry", "damson apple words"} {
		all := search(text, 0)
		for _, from := range []int64{1, 2, 10, 11, 31, 59, 60, 61, 500} {
			var want []strata.Hit
			for _, h := range all {
				if h.Turn == nil || h.Turn.Seq >= from {
					want = append(want, h)
				}
			}
			g, w := keyed(search(text, from)), keyed(want)
			same := len(g) == len(w)
			for i := 0; same && i < len(g); i++ {
				same = g[i].key == w[i].key && math.Abs(g[i].score-w[i].score) <= 1e-9*max(1, math.Abs(w[i].score))
			}
			if !same {
				t.Errorf("Search(%q, from %d) = %v\nwant the unrestricted search's from there: %v", text, from, g, w)
			}
		}
		got, err := s.Search(ctx(t), strata.SearchQuery{Namespace: "ns", Conversation: "r", Text: text, K: 2, FromSeq: 31, Kind: strata.KindTurn})
		if err != nil || len(got) != 2 {
			t.Errorf("Search(%q, K 2, from 31) = %d hits, %v; want 2", text, len(got), err)
		}
	}
	for _, q := range []strata.SearchQuery{
		{Namespace: "ns", Text: "apple", FromSeq: 3},
		{Namespace: "ns", Conversation: "r", Text: "apple", FromSeq: -1},
	} {
		if _, err := s.Search(ctx(t), q); strata.ErrorCode(err) != strata.EINVALID {
			t.Errorf("Search(%+v): %v, want EINVALID", q, err)
		}
	}
}
