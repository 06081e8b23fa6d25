package sqlite

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
)

// coldWord searches turn seq's unique word and returns the turn hit, or
// nil.
func coldWord(t *testing.T, s *Store, seq int64) *strata.Turn {
	t.Helper()
	hits, err := s.Search(t.Context(), strata.SearchQuery{Namespace: pyNS, Conversation: pyConv,
		Text: fmt.Sprintf("uniqword%d", seq), Kind: strata.KindTurn})
	if err != nil {
		t.Fatalf("search for turn %d: %v", seq, err)
	}
	for _, h := range hits {
		if h.Turn != nil && h.Turn.Seq == seq {
			return h.Turn
		}
	}
	return nil
}

// unindexCold takes the cold rows of s out of turns_fts and lists their
// spans in cold_unindexed, as a store written before schema 21 holds
// them.
func unindexCold(t *testing.T, s *Store, want []strata.Turn) []int64 {
	t.Helper()
	ctx := t.Context()
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT t.pk, t.seq, t.conversation FROM turns t WHERE t.tier = ?`, tierCold)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ pk, seq, conv int64 }
	var cold []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.pk, &r.seq, &r.conv); err != nil {
			t.Fatal(err)
		}
		cold = append(cold, r)
	}
	rows.Close()
	var seqs []int64
	for _, r := range cold {
		if _, err := tx.ExecContext(ctx, `INSERT INTO turns_fts (turns_fts, rowid, text, scope) VALUES ('delete', ?, ?, ?)`,
			r.pk, s.fts.text(want[r.seq-1].Text()), scope(r.conv, pyNS)); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, r.seq)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO cold_unindexed (node) SELECT pk FROM nodes WHERE level = 1 AND tier = ?`, tierCold); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if len(seqs) == 0 {
		t.Fatal("the corpus has no cold turn")
	}
	return seqs
}

// ftsIntact runs FTS5's integrity check of turns_fts.
func ftsIntact(t *testing.T, s *Store, when string) {
	t.Helper()
	if _, err := s.w.ExecContext(t.Context(), `INSERT INTO turns_fts (turns_fts, rank) VALUES ('integrity-check', 0)`); err != nil {
		t.Errorf("%s: turns_fts fails its integrity check: %v", when, err)
	}
}

// A store whose cold turns an earlier version took out of the index gets
// them back at Open, and from then on expiry and deletion take them out
// again without harming the index.
func TestColdTurnsIndexedAgainAtOpen(t *testing.T) {
	s, want := openCorpus(t)
	seqs := unindexCold(t, s, want)
	for _, seq := range seqs {
		if h := coldWord(t, s, seq); h != nil {
			t.Fatalf("turn %d is found before the store is opened again", seq)
		}
	}
	path := s.path
	s.Close()
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var listed int
	if err := s.w.QueryRowContext(t.Context(), `SELECT count(*) FROM cold_unindexed`).Scan(&listed); err != nil || listed != 0 {
		t.Fatalf("after Open %d spans are still listed (%v)", listed, err)
	}
	for _, seq := range seqs {
		h := coldWord(t, s, seq)
		if h == nil || !strings.Contains(h.Content, fmt.Sprintf("uniqword%d ", seq)) {
			t.Errorf("cold turn %d is not found whole after Open: %+v", seq, h)
		}
	}
	ftsIntact(t, s, "after Open")
	id := strata.NodeID(pyNS, pyConv, 1, 11, 20)
	if _, err := s.Expire(t.Context(), pyNS, pyConv, []string{id}, "test", time.Now(), false); err != nil {
		t.Fatal(err)
	}
	if h := coldWord(t, s, 12); h != nil {
		t.Errorf("expired turn 12 is still found: %+v", h)
	}
	if h := coldWord(t, s, 22); h == nil {
		t.Errorf("cold turn 22 of the other span is lost by the expiry")
	}
	ftsIntact(t, s, "after Expire")
	if _, err := s.DeleteConversation(t.Context(), pyNS, pyConv, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	ftsIntact(t, s, "after DeleteConversation")
	var n int
	if err := s.w.QueryRowContext(t.Context(), `SELECT count(*) FROM turns_fts WHERE turns_fts MATCH 'uniqword22'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("after the deletion %d entries of turn 22 are left (%v)", n, err)
	}
}

// A listed span whose segments are gone stays listed, and the store
// opens, searches, pins and deletes all the same, its index intact.
func TestColdSpanUnreadableAtOpen(t *testing.T) {
	s, want := openCorpus(t)
	unindexCold(t, s, want)
	f, ok := s.seg.Blobs.(*archive.Files)
	if !ok {
		t.Fatalf("the store keeps its segments in %T, not files", s.seg.Blobs)
	}
	keys, err := f.List(t.Context(), "")
	if err != nil || len(keys) == 0 {
		t.Fatalf("segments: %v %v", keys, err)
	}
	for _, k := range keys {
		if err := os.Remove(f.Locate(k)); err != nil {
			t.Fatal(err)
		}
	}
	path := s.path
	s.Close()
	s, err = Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open with unreadable cold spans: %v", err)
	}
	defer s.Close()
	var listed int
	if err := s.w.QueryRowContext(t.Context(), `SELECT count(*) FROM cold_unindexed`).Scan(&listed); err != nil || listed == 0 {
		t.Fatalf("after Open %d spans are listed (%v), want the unreadable ones", listed, err)
	}
	if h := coldWord(t, s, 12); h != nil {
		t.Errorf("turn 12, unreadable, is found: %+v", h)
	}
	if h := coldWord(t, s, 3); h == nil {
		t.Errorf("warm turn 3 is not found")
	}
	ftsIntact(t, s, "after Open")
	if _, err := s.DeleteConversation(t.Context(), pyNS, pyConv, "test", time.Now()); err != nil {
		t.Fatal(err)
	}
	ftsIntact(t, s, "after DeleteConversation")
	if err := s.w.QueryRowContext(t.Context(), `SELECT count(*) FROM cold_unindexed`).Scan(&listed); err != nil || listed != 0 {
		t.Errorf("after the deletion %d spans are listed (%v)", listed, err)
	}
}
