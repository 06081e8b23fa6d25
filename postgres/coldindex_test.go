package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/postgres"
)

// A store whose cold turns an earlier version took out of turn_index gets
// them back at Open; expiry then takes an expired span's turns out again.
func TestColdTurnsIndexedAgainAtOpen(t *testing.T) {
	ctx := context.Background()
	dsn := newSchema(t, testDSN(t))
	s, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := spans(t, s, "ns", "c")
	if _, err := s.Demote(ctx, "ns", "c", ids[:3], strata.TierCold, day0.Add(1000*time.Hour)); err != nil {
		t.Fatal(err)
	}
	find := func(s *postgres.Store, seq int) bool {
		t.Helper()
		hits, err := s.Search(ctx, strata.SearchQuery{Namespace: "ns", Conversation: "c", Text: fmt.Sprintf("word%d", seq), Kind: strata.KindTurn})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.Turn != nil && h.Turn.Seq == int64(seq) && h.Turn.Content == fmt.Sprintf("turn %d about word%d", seq, seq) {
				return true
			}
		}
		return false
	}
	if !find(s, 10) {
		t.Fatal("cold turn 10 is not found after Demote")
	}
	// As an earlier version left them: cold turns out of the index.
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `DELETE FROM turn_index i USING turns t WHERE t.conversation = i.conversation AND t.seq = i.seq AND t.tier = 2`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO cold_unindexed (node) SELECT pk FROM nodes WHERE level = 1 AND tier = 2`); err != nil {
		t.Fatal(err)
	}
	if find(s, 10) {
		t.Fatal("turn 10 is found with its index rows deleted")
	}
	s.Close()
	s, err = postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var listed int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM cold_unindexed`).Scan(&listed); err != nil || listed != 0 {
		t.Fatalf("after Open %d spans are still listed (%v)", listed, err)
	}
	for seq := 1; seq <= 24; seq++ {
		if !find(s, seq) {
			t.Errorf("turn %d is not found whole after Open", seq)
		}
	}
	if _, err := s.Expire(ctx, "ns", "c", ids[1:2], "test", day0.Add(2000*time.Hour), false); err != nil {
		t.Fatal(err)
	}
	if find(s, 10) {
		t.Error("expired turn 10 is still found")
	}
	if !find(s, 20) {
		t.Error("cold turn 20 of another span is lost by the expiry")
	}
	var rows int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM turn_index WHERE seq BETWEEN 9 AND 16`).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("the expired span keeps %d index rows (%v)", rows, err)
	}
}
