package postgres_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/internal/synth"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/storecopy"
)

// tieredSQLite builds an SQLite store whose conversations hold hot, warm,
// cold and expired spans and pinned turns, as the engine leaves them.
func tieredSQLite(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clock := time.Date(2023, 1, 20, 0, 0, 0, 0, time.UTC)
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Now: func() time.Time { return clock }, Tiers: &strata.TierPolicy{HotChunks: 1, WarmMaxTurns: 120, ColdRetentionDays: 10}})
	if err != nil {
		t.Fatal(err)
	}
	g := synth.New(11)
	for _, c := range []struct{ id, policy string }{{"a", "calendar"}, {"b", "chunks"}} {
		turns := g.Turns(400)
		for i := 0; i < len(turns); i += 100 {
			if _, err := m.Ingest(ctx, strata.Batch{Conversation: c.id, Policy: c.policy, Turns: turns[i : i+100]}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := m.Pin(ctx, c.id, 5, 1); err != nil {
			t.Fatal(err)
		}
	}
	clock = clock.Add(60 * 24 * time.Hour)
	if _, err := m.Retention(ctx, "a", false); err != nil {
		t.Fatal(err)
	}
	stats, err := st.Stats(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range stats.Tiers {
		if ts.Spans == 0 {
			t.Fatalf("the source has no %s span: %+v", ts.Tier, stats.Tiers)
		}
	}
	return st
}

// userViews is what a user reads of a memory: each conversation's tree
// and the turns under each of its nodes, as JSON.
func userViews(t *testing.T, st strata.Store) string {
	t.Helper()
	ctx := context.Background()
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Tiers: &strata.TierPolicy{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range []string{"a", "b"} {
		tree, err := m.Tree(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		j, _ := json.Marshal(tree)
		b.Write(j)
		for _, n := range tree.Nodes {
			_, turns, err := m.Expand(ctx, n.ID)
			if err != nil && strata.ErrorCode(err) != strata.ENOTFOUND { // expired spans say so
				t.Fatal(err)
			}
			j, _ := json.Marshal(turns)
			b.Write(j)
		}
	}
	return b.String()
}

// TestCopyTiersFromSQLite copies an SQLite store with warm, cold and
// expired spans into PostgreSQL and back, as `strata copy` does: the
// verification pass finds no difference, trees and expanded turns are
// the same, the PostgreSQL copy has the same tiers and archive records,
// and copying again writes nothing.
func TestCopyTiersFromSQLite(t *testing.T) {
	dsn := testDSN(t)
	ctx := context.Background()
	dir := t.TempDir()
	src := tieredSQLite(t, filepath.Join(dir, "src.db"))
	dst := openStore(t, dsn)
	if _, err := storecopy.Copy(ctx, src, dst, storecopy.Options{}); err != nil {
		t.Fatal(err)
	}
	if ms, err := storecopy.Verify(ctx, src, dst, nil); err != nil || len(ms) != 0 {
		t.Fatalf("verify: %v %v", ms, err)
	}
	if a, b := userViews(t, src), userViews(t, dst); a != b {
		t.Errorf("tree and expand differ between SQLite and its PostgreSQL copy")
	}
	a, err := src.Stats(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	b, err := dst.Stats(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	// Expired turns are copied as the stubs their rows keep, so their
	// bytes are not carried; and the archive record of a turn pinned
	// after its span went cold carries its old importance at the source
	// and its new one in the copy (the row is read, never that record):
	// the archive's bytes may differ by that much.
	for i := range a.Tiers {
		x, y := a.Tiers[i], b.Tiers[i]
		if x.Spans != y.Spans || x.Turns != y.Turns || (x.Tier != strata.TierExpired && x.Bytes != y.Bytes) {
			t.Errorf("tier %s: SQLite %+v, PostgreSQL %+v", x.Tier, x, y)
		}
	}
	if a.Archive.Records != b.Archive.Records || a.Archive.Segments != b.Archive.Segments {
		t.Errorf("archive: SQLite %+v, PostgreSQL %+v", a.Archive, b.Archive)
	}
	again, err := storecopy.Copy(ctx, src, dst, storecopy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range again.Conversations {
		if c.Turns+c.Nodes+c.Moves+c.Expired+c.Learnings+c.Calls != 0 {
			t.Errorf("a second copy wrote %+v", c)
		}
	}
	back, err := sqlite.Open(ctx, filepath.Join(dir, "back.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if _, err := storecopy.Copy(ctx, dst, back, storecopy.Options{}); err != nil {
		t.Fatal(err)
	}
	if ms, err := storecopy.Verify(ctx, src, back, nil); err != nil || len(ms) != 0 {
		t.Fatalf("verify the round trip: %v %v", ms, err)
	}
	if a, b := userViews(t, src), userViews(t, back); a != b {
		t.Errorf("tree and expand differ after the round trip through PostgreSQL")
	}
}
