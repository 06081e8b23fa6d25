package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/postgres"
)

var t0 = time.Date(2024, 3, 1, 12, 0, 0, 123456789, time.UTC)

func turnsOf(prefix string, texts ...string) []strata.Turn {
	out := make([]strata.Turn, len(texts))
	for i, tx := range texts {
		out[i] = strata.Turn{ExtID: fmt.Sprintf("%s%d", prefix, i+1), Role: strata.RoleUser, Content: tx,
			Time: t0.Add(time.Duration(i) * time.Minute), Tokens: 3}
	}
	return out
}

func node(ns, conv string, level int, first, last int64, summary string) strata.Node {
	return strata.Node{ID: strata.NodeID(ns, conv, level, first, last), Level: level, FirstSeq: first, LastSeq: last,
		Start: t0, End: t0.Add(time.Hour), Summary: summary, Method: strata.MethodExtractive, Status: strata.StatusOK}
}

func hitKeys(t *testing.T, s strata.Store, q strata.SearchQuery) []string {
	t.Helper()
	hits, err := s.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("Search(%q): %v", q.Text, err)
	}
	var out []string
	for _, h := range hits {
		if h.Turn != nil {
			out = append(out, fmt.Sprintf("%s/%s", h.Conversation, h.Turn.ExtID))
		} else {
			out = append(out, h.Conversation+"/"+h.Node.ID)
		}
	}
	return out
}

// TestMigrateConcurrently opens one new schema from several goroutines at
// once: the advisory lock lets one of them migrate it, and the others find
// it migrated.
func TestMigrateConcurrently(t *testing.T) {
	ctx := context.Background()
	dsn := newSchema(t, testDSN(t))
	var wg sync.WaitGroup
	errs := make([]error, 6)
	froms := make([]int, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			froms[i], _, errs[i] = postgres.Migrate(ctx, dsn)
		}()
	}
	wg.Wait()
	fresh := 0
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Migrate %d: %v", i, err)
		}
		if froms[i] == 0 {
			fresh++
		}
	}
	if fresh != 1 {
		t.Errorf("%d of %d migrations started from version 0, want exactly 1", fresh, len(errs))
	}
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Version(ctx); err != nil || v != postgres.SchemaVersion() {
		t.Errorf("Version = %d, %v; want %d", v, err, postgres.SchemaVersion())
	}
}

// TestNewerSchema refuses a schema migrated by a newer build, changing
// nothing.
func TestNewerSchema(t *testing.T) {
	ctx := context.Background()
	dsn := newSchema(t, testDSN(t))
	if _, _, err := postgres.Migrate(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES ($1, 'from the future', 0)`,
		postgres.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(ctx, dsn)
	if strata.ErrorCode(err) != strata.ECONFLICT {
		t.Errorf("Open of a newer schema: %v, want ECONFLICT", err)
	}
}

// TestSearchWords finds words inside URLs, paths and hyphenated words,
// words without their accents, and substrings of text written without
// spaces, as the sqlite store does.
func TestSearchWords(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, testDSN(t))
	if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: "c"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendTurns(ctx, "ns", "c", turnsOf("t",
		"see https://docs.example.org/guide/install-steps for details",
		"the log is at /var/log/strata-server.log",
		"we met at the café in Zürich",
		"明天去北京开会",
		"nothing to see here",
	)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ q, want string }{
		{"example", "c/t1"},
		{"install", "c/t1"},
		{"strata", "c/t2"},
		{"cafe zurich", "c/t3"},
		{"Café", "c/t3"},
		{"北京", "c/t4"},
		{"开会", "c/t4"},
	} {
		got := hitKeys(t, s, strata.SearchQuery{Namespace: "ns", Text: tc.q})
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("Search(%q) = %v, want [%s]", tc.q, got, tc.want)
		}
	}
}

// TestDeleteConversationHot deletes a conversation with turns, nodes,
// vectors, learnings, calls and compaction state (all hot: the suite's
// DeleteConversation subtest needs tiers): nothing of it is found
// afterwards, the other conversation is intact, the audit record is kept,
// and a conversation created again with the same id starts empty.
func TestDeleteConversationHot(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, testDSN(t))
	for _, id := range []string{"c", "d"} {
		if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: id}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendTurns(ctx, "ns", id, turnsOf(id, "alpha pelican", "beta pelican", "gamma pelican")); err != nil {
			t.Fatal(err)
		}
		if err := s.PutNodes(ctx, "ns", id, []strata.Node{node("ns", id, 1, 1, 3, "pelicans everywhere")}); err != nil {
			t.Fatal(err)
		}
	}
	space := strata.EmbedSpace{Model: "m", Dim: 2}
	if err := s.PutEmbeddings(ctx, "ns", "c", space, []strata.Embedding{
		{EmbedRef: strata.EmbedRef{Seq: 1}, Vector: []float32{1, 0}},
		{EmbedRef: strata.EmbedRef{Node: strata.NodeID("ns", "c", 1, 1, 3), Level: 1, Seq: 1}, Vector: []float32{0, 1}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddLearnings(ctx, "ns", "c", []strata.Learning{{Subject: "s", Text: "a fact"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordCalls(ctx, "ns", "c", []strata.Call{{Node: "n", Level: 1, Provider: "p", Model: "m", Attempt: 1, Outcome: "ok"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveCompactionState(ctx, "ns", "c", strata.CompactionState{Checkpoint: "cp", TurnCount: 3}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d, err := s.DeleteConversation(ctx, "ns", "c", "asked by the user", at)
	if err != nil {
		t.Fatalf("DeleteConversation: %v", err)
	}
	if d.Turns != 3 || d.Nodes != 1 || d.ContentBytes != int64(len("alpha pelican")+len("beta pelican")+len("gamma pelican")) ||
		!d.At.Equal(at) || d.Reason != "asked by the user" {
		t.Errorf("deletion record %+v: want 3 turns, 1 node, their bytes, the time and the reason", d)
	}
	if _, err := s.Conversation(ctx, "ns", "c"); strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Errorf("Conversation after the deletion: %v, want ENOTFOUND", err)
	}
	if got := hitKeys(t, s, strata.SearchQuery{Namespace: "ns", Text: "pelican", K: 20}); len(got) != 4 {
		t.Errorf("search after the deletion = %v, want the 3 turns and the summary of d", got)
	} else {
		for _, k := range got {
			if k[:2] != "d/" {
				t.Errorf("search after the deletion finds %s", k)
			}
		}
	}
	if st, err := s.CompactionState(ctx, "ns", "c"); err != nil || st.Checkpoint != "" {
		t.Errorf("compaction state after the deletion: %+v, %v", st, err)
	}
	ds, err := s.Deletions(ctx, "ns")
	if err != nil || len(ds) != 1 || ds[0].Conversation != "c" || ds[0].Turns != 3 || !ds[0].At.Equal(at) {
		t.Errorf("Deletions = %+v, %v; want the one record", ds, err)
	}
	if _, err := s.DeleteConversation(ctx, "ns", "c", "", at); strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Errorf("deleting it again: %v, want ENOTFOUND", err)
	}

	if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: "c"}); err != nil {
		t.Fatal(err)
	}
	turns, _ := s.Turns(ctx, strata.TurnFilter{Namespace: "ns", Conversation: "c"})
	nodes, _ := s.Nodes(ctx, strata.NodeFilter{Namespace: "ns", Conversation: "c"})
	ls, _ := s.Learnings(ctx, strata.LearningFilter{Namespace: "ns", Conversation: "c"})
	calls, _ := s.Calls(ctx, "ns", "c")
	vv, _ := s.VectorVersion(ctx, "ns", "c")
	if len(turns)+len(nodes)+len(ls)+len(calls) != 0 || vv != (strata.VectorVersion{}) {
		t.Errorf("the conversation created again holds %d turns, %d nodes, %d learnings, %d calls, vectors %+v; want none",
			len(turns), len(nodes), len(ls), len(calls), vv)
	}
	if got, err := s.Turns(ctx, strata.TurnFilter{Namespace: "ns", Conversation: "d"}); err != nil || len(got) != 3 {
		t.Errorf("the other conversation: %d turns, %v; want 3", len(got), err)
	}
}

// TestReplaceNodesHot replaces hot nodes (the suite's ReplaceNodes
// subtest needs tiers): the removed summaries are no longer found, the new
// ones are, the count is of nodes not stored before, and an unknown id is
// ENOTFOUND, changing nothing.
func TestReplaceNodesHot(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, testDSN(t))
	if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: "c"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendTurns(ctx, "ns", "c", turnsOf("t", "one", "two", "three", "four")); err != nil {
		t.Fatal(err)
	}
	a, b := node("ns", "c", 1, 1, 2, "about walruses"), node("ns", "c", 1, 3, 4, "about narwhals")
	if err := s.PutNodes(ctx, "ns", "c", []strata.Node{a, b}); err != nil {
		t.Fatal(err)
	}
	whole := node("ns", "c", 1, 1, 4, "about seals")
	n, err := s.ReplaceNodes(ctx, "ns", "c", []string{a.ID, b.ID}, []strata.Node{whole, whole})
	if err != nil || n != 1 {
		t.Fatalf("ReplaceNodes = %d, %v; want 1 new node", n, err)
	}
	for q, want := range map[string]int{"walruses": 0, "narwhals": 0, "seals": 1} {
		if got := hitKeys(t, s, strata.SearchQuery{Namespace: "ns", Text: q}); len(got) != want {
			t.Errorf("Search(%q) = %v, want %d hits", q, got, want)
		}
	}
	if n, err := s.ReplaceNodes(ctx, "ns", "c", nil, []strata.Node{whole}); err != nil || n != 0 {
		t.Errorf("ReplaceNodes putting a stored node again = %d, %v; want 0 new", n, err)
	}
	_, err = s.ReplaceNodes(ctx, "ns", "c", []string{whole.ID, "no-such-node"}, nil)
	if strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Errorf("ReplaceNodes of an unknown id: %v, want ENOTFOUND", err)
	}
	if nodes, _ := s.Nodes(ctx, strata.NodeFilter{Namespace: "ns", Conversation: "c"}); len(nodes) != 1 || nodes[0].ID != whole.ID {
		t.Errorf("nodes after the failed replacement: %+v, want the one", nodes)
	}
	_, err = s.ReplaceNodes(ctx, "ns", "c", nil, []strata.Node{node("ns", "c", 1, 4, 5, "overlapping")})
	if strata.ErrorCode(err) != strata.ECONFLICT {
		t.Errorf("ReplaceNodes with a node overlapping a stored one: %v, want ECONFLICT", err)
	}
}
