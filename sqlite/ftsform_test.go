package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/strata-memory/strata"
)

// ftsMatches counts the turns_fts rows matching expr.
func ftsMatches(t *testing.T, s *Store, expr string) int {
	t.Helper()
	var n int
	if err := s.w.QueryRowContext(t.Context(), `SELECT count(*) FROM turns_fts WHERE turns_fts MATCH ?`, expr).Scan(&n); err != nil {
		t.Fatalf("matching %s: %v", expr, err)
	}
	return n
}

func appendTexts(t testing.TB, s *Store, conv string, texts ...string) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: conv, Policy: "chunks"}); err != nil {
		t.Fatal(err)
	}
	var ts []strata.Turn
	for i, text := range texts {
		ts = append(ts, strata.Turn{Role: strata.RoleUser, Content: text, Time: time.Unix(int64(i+1), 0)})
	}
	if _, err := s.AppendTurns(ctx, "ns", conv, ts); err != nil {
		t.Fatal(err)
	}
}

// A new store indexes words without stop words; a store that held text
// when it was migrated to schema 25 keeps indexing whole texts, and its
// rows still leave the index cleanly.
func TestFTSForm(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := Open(ctx, filepath.Join(dir, "new.db"))
	if err != nil {
		t.Fatal(err)
	}
	if s.fts != ftsContent {
		t.Fatalf("a new store's form is %d, want %d", s.fts, ftsContent)
	}
	appendTexts(t, s, "c", "The otter and THE heron were there", "Then a weir")
	if n := ftsMatches(t, s, `text : "the"`); n != 0 {
		t.Errorf("a stop word is indexed in %d rows of a new store", n)
	}
	if n := ftsMatches(t, s, `text : "otter"`); n != 1 {
		t.Errorf("otter matches %d rows, want 1", n)
	}
	s.Close()

	// An older store: its rows were written whole before schema 25.
	path := filepath.Join(dir, "old.db")
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.ExecContext(ctx, `DROP TABLE fts_form; DELETE FROM schema_migrations WHERE version = 25`); err != nil {
		t.Fatal(err)
	}
	s.fts = ftsWhole // as the build before schema 25 wrote
	appendTexts(t, s, "c", "The otter and THE heron were there", "Then a weir")
	s.Close()
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.fts != ftsWhole {
		t.Fatalf("a store migrated with rows has form %d, want %d", s.fts, ftsWhole)
	}
	appendTexts(t, s, "d", "the mill by the ferry")
	if n := ftsMatches(t, s, `text : "the"`); n != 2 {
		t.Errorf("the matches %d rows of the older store, want 2 (it keeps whole texts)", n)
	}
	for _, conv := range []string{"c", "d"} {
		if _, err := s.DeleteConversation(ctx, "ns", conv, "test", time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	ftsIntact(t, s, "after deleting every conversation")
	if n := ftsMatches(t, s, `text : "the" OR text : "otter" OR text : "ferry"`); n != 0 {
		t.Errorf("%d rows left in turns_fts after deleting every conversation", n)
	}
}

// TestFTSFormsFindTheSameTurns: whatever the texts (stop words and case
// included) and the query, a store indexing content words finds exactly
// the turns a store indexing whole texts finds. The two stores serve
// every case, each case a conversation of its own (opening two stores a
// case made the test 75 s long under the race detector).
func TestFTSFormsFindTheSameTurns(t *testing.T) {
	vocab := []string{"otter", "heron", "weir", "The", "the", "and", "it's", "don't", "won't", "Mill", "ferry",
		"themselves", "THEM", "ours", "over", "lock", "去北京", "café", "x1", "Its"}
	ctx := context.Background()
	dir := t.TempDir()
	stores := map[ftsForm]*Store{}
	for _, form := range []ftsForm{ftsWhole, ftsContent} {
		s, err := Open(ctx, filepath.Join(dir, fmt.Sprintf("f%d.db", form)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		s.fts = form
		stores[form] = s
	}
	cases := 0
	rapid.Check(t, func(rt *rapid.T) {
		cases++
		conv := fmt.Sprintf("c%d", cases)
		var texts []string
		for range rapid.IntRange(1, 20).Draw(rt, "turns") {
			var w []string
			for range rapid.IntRange(1, 6).Draw(rt, "words") {
				w = append(w, rapid.SampledFrom(vocab).Draw(rt, "word"))
			}
			texts = append(texts, strings.Join(w, rapid.SampledFrom([]string{" ", ", ", "-"}).Draw(rt, "sep")))
		}
		var query []string
		for range rapid.IntRange(1, 3).Draw(rt, "query words") {
			query = append(query, rapid.SampledFrom(vocab).Draw(rt, "query word"))
		}
		found := map[ftsForm][]int64{}
		for _, form := range []ftsForm{ftsWhole, ftsContent} {
			s := stores[form]
			appendTexts(t, s, conv, texts...)
			hits, err := s.Search(ctx, strata.SearchQuery{Namespace: "ns", Conversation: conv, Text: strings.Join(query, " "),
				K: 100, Kind: strata.KindTurn})
			if err != nil {
				rt.Fatal(err)
			}
			for _, h := range hits {
				found[form] = append(found[form], h.Turn.Seq)
			}
			slices.Sort(found[form])
		}
		if !slices.Equal(found[ftsWhole], found[ftsContent]) {
			rt.Fatalf("query %q: whole texts find %v, content words %v", query, found[ftsWhole], found[ftsContent])
		}
	})
}
