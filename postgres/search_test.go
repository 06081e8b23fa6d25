package postgres_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/postgres"
	"github.com/strata-memory/strata/sqlite"
)

// rankCorpus is a conversation where a word of most turns ("meeting")
// says little and rare words say much.
var rankCorpus = []string{
	"the meeting ran long, the meeting ended late, and another meeting is tomorrow",
	"I finally bought the saxophone I wanted",
	"meeting notes: budget review with Anna",
	"meeting notes: hiring plan and the new office",
	"meeting moved to Thursday because of the holiday",
	"short meeting about the garden party",
	"after the meeting we went for lunch at the harbour",
	"the weekly meeting was cancelled again",
	"Anna plays the saxophone in a jazz band on Fridays and teaches children on weekends",
	"weather report: rain all week, then sun by the weekend",
	"quarterly meeting with the whole team about the roadmap and the budget",
	"the harbour festival has boats, music and fireworks",
}

// TestSearchBM25 ranks as BM25: a rare word outweighs a common one
// repeated, a short turn about a word ranks above a long one mentioning
// it, and the order of hits is the sqlite store's (FTS5's bm25) on the
// same turns.
func TestSearchBM25(t *testing.T) {
	ctx := context.Background()
	pg := openStore(t, testDSN(t))
	lite, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	for _, s := range []strata.Store{pg, lite} {
		if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: "c"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendTurns(ctx, "ns", "c", turnsOf("t", rankCorpus...)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		q     string
		first string
	}{
		{"meeting saxophone", "c/t2"},     // saxophone is rare: the short turn with it first
		{"saxophone", "c/t2"},             // the short turn before the long one
		{"harbour meeting lunch", "c/t7"}, // three words, two rare
	} {
		q := strata.SearchQuery{Namespace: "ns", Conversation: "c", Text: tc.q, K: 20, Kind: strata.KindTurn}
		got := hitKeys(t, pg, q)
		if len(got) == 0 || got[0] != tc.first {
			t.Errorf("Search(%q) = %v, want %s first", tc.q, got, tc.first)
		}
		if want := hitKeys(t, lite, q); !slices.Equal(got, want) {
			t.Errorf("Search(%q) = %v, want the sqlite store's order %v", tc.q, got, want)
		}
	}
}

// TestSearchBM25Scope takes the statistics of the scope searched: the
// conversation when the query names one, the namespace otherwise. In b,
// "apple" is as rare as "banana", and the turn saying apple three times
// comes first; in the namespace, a says apple in every turn, so apple
// weighs almost nothing and the banana turn comes first.
func TestSearchBM25Scope(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, testDSN(t))
	var a []string
	for i := range 10 {
		a = append(a, fmt.Sprintf("apple harvest report number %d", i))
	}
	for conv, texts := range map[string][]string{
		"a": a,
		"b": {"apple apple apple pie", "banana bread", "rain again today", "the train was late", "a new bicycle", "dinner at eight"},
	} {
		if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: conv}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendTurns(ctx, "ns", conv, turnsOf(conv, texts...)); err != nil {
			t.Fatal(err)
		}
	}
	if got := hitKeys(t, s, strata.SearchQuery{Namespace: "ns", Conversation: "b", Text: "apple banana", Kind: strata.KindTurn}); !slices.Equal(got, []string{"b/b1", "b/b2"}) {
		t.Errorf("search of b = %v, want [b/b1 b/b2]", got)
	}
	got := hitKeys(t, s, strata.SearchQuery{Namespace: "ns", Text: "apple banana", K: 20, Kind: strata.KindTurn})
	if len(got) != 12 || got[0] != "b/b2" {
		t.Errorf("search of the namespace = %v, want b/b2 first of 12", got)
	}
}

// TestSearchStatistics checks the statistics BM25 reads against a recount
// of the index after each kind of write: appends, node writes and
// replacements, a pyramid reset and a conversation's deletion.
func TestSearchStatistics(t *testing.T) {
	ctx := context.Background()
	dsn := newSchema(t, testDSN(t))
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	check := func(step string) {
		t.Helper()
		var diff int
		err := conn.QueryRow(ctx, `WITH
			kept AS (SELECT conversation, kind, lexeme, docs FROM fts_terms WHERE docs <> 0),
			recount AS (
				SELECT i.conversation, 0::smallint AS kind, u.lexeme, count(*) AS docs FROM turn_index i, unnest(i.fts) u GROUP BY 1, 3
				UNION ALL
				SELECT i.conversation, 1::smallint, u.lexeme, count(*) FROM node_index i, unnest(i.fts) u GROUP BY 1, 3),
			docs AS (SELECT conversation, kind, docs, words FROM fts_docs WHERE docs <> 0 OR words <> 0),
			redocs AS (
				SELECT conversation, 0::smallint AS kind, count(*) AS docs, sum(words) AS words FROM turn_index GROUP BY 1
				UNION ALL
				SELECT conversation, 1::smallint, count(*), sum(words) FROM node_index GROUP BY 1)
			SELECT (SELECT count(*) FROM ((TABLE kept EXCEPT ALL TABLE recount) UNION ALL (TABLE recount EXCEPT ALL TABLE kept)) d)
			     + (SELECT count(*) FROM ((TABLE docs EXCEPT ALL TABLE redocs) UNION ALL (TABLE redocs EXCEPT ALL TABLE docs)) d)`).Scan(&diff)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if diff != 0 {
			t.Errorf("%s: the statistics differ from a recount of the index in %d rows", step, diff)
		}
		var words int
		if err := conn.QueryRow(ctx, `SELECT coalesce(sum(words), 0) FROM turn_index`).Scan(&words); err != nil {
			t.Fatal(err)
		}
		if words == 0 {
			t.Errorf("%s: the index holds no words", step)
		}
	}
	for _, c := range []string{"c", "d"} {
		if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: c}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendTurns(ctx, "ns", c, turnsOf(c, rankCorpus...)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AppendTurns(ctx, "ns", "c", turnsOf("x", "one more meeting", "明天去北京开会")); err != nil {
		t.Fatal(err)
	}
	check("appends")
	var pk int64
	if err := conn.QueryRow(ctx, `SELECT pk FROM conversations WHERE id = 'c'`).Scan(&pk); err != nil {
		t.Fatal(err)
	}
	// A document's length is its content words, stop words left out
	// (migration 12); unspaced text counts its characters and pairs. A
	// row written without its length counts up to its last lexeme (here,
	// not the final "again").
	if _, err := conn.Exec(ctx, `INSERT INTO turn_index (conversation, seq, part, fts)
		VALUES ($1, 8, 1, to_tsvector('strata_text', 'the weekly meeting was cancelled again'))`, pk); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		seq         int64
		part, words int
	}{{1, 0, 9}, {14, 0, 13}, {8, 0, 3}, {8, 1, 5}} {
		var words int
		if err := conn.QueryRow(ctx, `SELECT words FROM turn_index WHERE conversation = $1 AND seq = $2 AND part = $3`,
			pk, tc.seq, tc.part).Scan(&words); err != nil {
			t.Fatal(err)
		}
		if words != tc.words {
			t.Errorf("turn %d of c, part %d: %d words, want %d", tc.seq, tc.part, words, tc.words)
		}
	}
	check("a row written without its length")
	var n int64
	if err := conn.QueryRow(ctx, `SELECT docs FROM fts_docs WHERE conversation = $1 AND kind = 0`, pk).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 15 {
		t.Errorf("conversation c: %d documents, want 15 (14 turns, one in two parts)", n)
	}

	n1 := node("ns", "c", 1, 1, 4, "meetings about the budget and a saxophone")
	n2 := node("ns", "c", 1, 5, 8, "lunch at the harbour after the meeting")
	if err := s.PutNodes(ctx, "ns", "c", []strata.Node{n1, n2}); err != nil {
		t.Fatal(err)
	}
	check("nodes")
	n1.Summary = "a new summary of the meetings with other words entirely"
	if err := s.PutNodes(ctx, "ns", "c", []strata.Node{n1}); err != nil {
		t.Fatal(err)
	}
	check("a summary replaced")
	n3 := node("ns", "c", 1, 1, 8, "one summary of both spans")
	if _, err := s.ReplaceNodes(ctx, "ns", "c", []string{n1.ID, n2.ID}, []strata.Node{n3}); err != nil {
		t.Fatal(err)
	}
	check("nodes replaced")
	if _, err := s.ResetPyramid(ctx, "ns", "c", ""); err != nil {
		t.Fatal(err)
	}
	check("pyramid reset")
	if _, err := s.DeleteConversation(ctx, "ns", "c", "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	check("conversation deleted")
	var left int
	if err := conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM fts_terms WHERE conversation = $1)
		+ (SELECT count(*) FROM fts_docs WHERE conversation = $1)`, pk).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d rows of statistics of the deleted conversation are left", left)
	}
}
