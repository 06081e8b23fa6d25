package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// pragma returns the value of PRAGMA name on a connection of db.
func pragma(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var v string
	if err := db.QueryRow(`PRAGMA ` + name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

func TestConnectionSettings(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		db         *sql.DB
		pool, name string
		want       string
	}{
		{s.w, "write", "journal_mode", "wal"},
		{s.w, "write", "synchronous", "1"}, // NORMAL
		{s.w, "write", "busy_timeout", strconv.FormatInt(BusyTimeout.Milliseconds(), 10)},
		{s.w, "write", "foreign_keys", "1"},
		{s.w, "write", "query_only", "0"},
		{s.r, "read", "journal_mode", "wal"},
		{s.r, "read", "synchronous", "1"},
		{s.r, "read", "busy_timeout", strconv.FormatInt(BusyTimeout.Milliseconds(), 10)},
		{s.r, "read", "query_only", "1"},
	} {
		if got := pragma(t, tc.db, tc.name); got != tc.want {
			t.Errorf("%s connection: PRAGMA %s = %s, want %s", tc.pool, tc.name, got, tc.want)
		}
	}
	if n := s.w.Stats().MaxOpenConnections; n != 1 {
		t.Errorf("write pool allows %d connections, want 1", n)
	}
	if _, err := s.r.Exec(`CREATE TABLE x (a)`); err == nil {
		t.Errorf("a read connection could write")
	}
}

func TestQueryTerms(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{"The deploy, the DEPLOY!", []string{"deploy"}},
		{`"unbalanced (quote* -minus col:val NEAR(a b) AND x`, []string{"unbalanced", "quote", "minus", "col", "val", "near", "b", "x"}},
		{"don't stop", []string{"stop"}},
		{"snake_case v2.0 $100", []string{"snake", "case", "v2", "0", "100"}},
		{"Café naïve", []string{"café", "naïve"}},
		{"北京", []string{"北京"}},
		{"去北京", []string{"去北", "北京"}},
		{"猫", []string{"猫"}},
		{"iPhone12を買った", []string{"iphone12", "を買", "買っ", "った"}},
		{"สวัสดี", []string{"สวั", "วัส", "สดี"}},
		{"नमस्ते", []string{"नमस्ते"}},
		{"\u0301", nil}, // a lone combining mark
		{"😀 ✓ — …", nil},
	} {
		if got := queryTerms(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("queryTerms(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
	many := strings.Repeat("word ", 10) + strings.Join(strings.Fields("a1 a2 a3 a4 a5 a6 a7 a8 a9 b1 b2 b3 b4 b5 b6 b7 b8 b9 c1 c2 c3 c4 c5 c6 c7 c8 c9 d1 d2 d3 d4 d5 d6 d7 d8 d9 e1 e2 e3 e4 e5 e6 e7 e8 e9 f1 f2 f3 f4 f5 f6 f7 f8 f9 g1 g2 g3 g4 g5 g6 g7 g8 g9 h1 h2 h3"), " ")
	if got := queryTerms(many); len(got) != maxTerms || got[0] != "word" {
		t.Errorf("queryTerms of %d distinct words kept %d, want the first %d", 67, len(got), maxTerms)
	}
}

func TestFTSText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain ascii, unchanged", "plain ascii, unchanged"},
		{"Café — ünïcode", "Café — ünïcode"},
		{"去北京", "去 北 京 去北 北京 "},
		{"see 東京!", "see 東 京 東京 "},
		{"ไทย", "ไ ท ย ไท ทย "},
	} {
		if got := ftsText(tc.in); got != tc.want {
			t.Errorf("ftsText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMatchExpr(t *testing.T) {
	got := matchExpr("c7", []string{"deploy", `we"ird`})
	want := `scope : "c7" AND text : ("deploy" OR "we""ird")`
	if got != want {
		t.Errorf("matchExpr = %s, want %s", got, want)
	}
}

func TestMatchExprUnscoped(t *testing.T) {
	if got, want := matchExpr("", []string{"a", "b"}), `text : ("a" OR "b")`; got != want {
		t.Errorf("matchExpr = %s, want %s", got, want)
	}
}

// TestUpgradeKeepsData opens a store written at schema version 2, with a
// node in it, under this build: the node survives the upgrade, searchable,
// and new columns take their defaults.
func TestUpgradeKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Rebuild the file as version 2 wrote it.
	os.Remove(path)
	old := &Store{path: path}
	old.w, err = sql.Open("sqlite", dsn(path, []string{"journal_mode(WAL)"}, "immediate"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.w.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:2] {
		if err := old.apply(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := old.w.Exec(`INSERT INTO conversations (namespace, id, policy, created) VALUES ('ns', 'c', 'chunks', 0);
		INSERT INTO nodes (id, conversation, level, first_seq, last_seq, summary) VALUES ('n1', 1, 1, 1, 10, 'The otter crossed the weir.');
		INSERT INTO nodes_fts (rowid, text, scope) VALUES (1, 'The otter crossed the weir.', 'c1 ` + namespaceScope("ns") + `');`); err != nil {
		t.Fatal(err)
	}
	old.w.Close()

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := s.r.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil || v != SchemaVersion() {
		t.Fatalf("user_version %d (%v), want %d", v, err, SchemaVersion())
	}
	ns, err := s.Nodes(ctx, strata.NodeFilter{Namespace: "ns", Conversation: "c"})
	if err != nil || len(ns) != 1 || ns[0].Derived || ns[0].Summary != "The otter crossed the weir." {
		t.Fatalf("nodes after upgrade: %+v (%v)", ns, err)
	}
	hits, err := s.Search(ctx, strata.SearchQuery{Namespace: "ns", Conversation: "c", Text: "otter", K: 3})
	if err != nil || len(hits) != 1 {
		t.Fatalf("search after upgrade: %d hits (%v)", len(hits), err)
	}
}

// TestStoredNodesInvalidUTF8: PutNodes finds the row it replaces even when
// the node's ID is not valid UTF-8 (and so cannot go through JSON).
func TestStoredNodesInvalidUTF8(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: "c", Policy: "chunks"}); err != nil {
		t.Fatal(err)
	}
	nodes := []strata.Node{
		{ID: "bad\xff", Level: 1, FirstSeq: 1, LastSeq: 2, Summary: "walrus talk"},
		{ID: "good", Level: 1, FirstSeq: 3, LastSeq: 4, Summary: "otter talk"},
	}
	if err := s.PutNodes(ctx, "ns", "c", nodes); err != nil {
		t.Fatal(err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	got, err := storedNodes(ctx, tx, newTextCodec(minCompressed), 1, append(nodes, strata.Node{ID: "new"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["bad\xff"].summary != "walrus talk" || got["good"].summary != "otter talk" {
		t.Errorf("storedNodes = %+v, want the two stored nodes", got)
	}
}

// TestUpgradeColdSpans opens a store whose spans went cold and expired
// before nodes recorded when they went cold: a cold span takes the time of
// the upgrade (so that retention counts from then, never deleting sooner
// than its rule), the others none, and an old audit record gains its
// span's newest turn time, its cold time left unknown.
func TestUpgradeColdSpans(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	old := &Store{path: path}
	var err error
	old.w, err = sql.Open("sqlite", dsn(path, []string{"journal_mode(WAL)"}, "immediate"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.w.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations {
		if m.version >= 13 {
			break
		}
		if err := old.apply(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	end := time.Date(2023, 5, 8, 14, 0, 0, 0, time.UTC)
	if _, err := old.w.Exec(`INSERT INTO conversations (namespace, id, policy, created) VALUES ('ns', 'c', 'chunks', 0);
		INSERT INTO nodes (id, conversation, level, first_seq, last_seq, "end", tier) VALUES
			('expired', 1, 1, 1, 10, ?1, 3), ('cold', 1, 1, 11, 20, ?1, 2), ('warm', 1, 1, 21, 30, ?1, 1), ('above', 1, 2, 1, 20, ?1, 0);
		INSERT INTO expiries (conversation, node, first_seq, last_seq, turns, bytes, rule, at)
			VALUES (1, 'expired', 1, 10, 10, 100, 'cold_retention_days=1', 5);`, end.UnixNano()); err != nil {
		t.Fatal(err)
	}
	old.w.Close()

	before := time.Now().Truncate(time.Second)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	after := time.Now()
	ns, err := s.Nodes(ctx, strata.NodeFilter{Namespace: "ns", Conversation: "c"})
	if err != nil || len(ns) != 4 {
		t.Fatalf("nodes after upgrade: %+v (%v)", ns, err)
	}
	for _, n := range ns {
		if n.ID == "cold" {
			if n.ColdAt.Before(before) || n.ColdAt.After(after) {
				t.Errorf("the cold span went cold at %v, want the upgrade's time (%v .. %v)", n.ColdAt, before, after)
			}
		} else if !n.ColdAt.IsZero() {
			t.Errorf("node %s (%s) has a cold time %v after the upgrade", n.ID, n.Tier, n.ColdAt)
		}
	}
	ex, err := s.Expiries(ctx, "ns", "c")
	if err != nil || len(ex) != 1 {
		t.Fatalf("expiries after upgrade: %+v (%v)", ex, err)
	}
	if !ex[0].NewestTurn.Equal(end) || !ex[0].ColdAt.IsZero() {
		t.Errorf("old audit record after upgrade: newest turn %v, cold at %v; want %v and unknown", ex[0].NewestTurn, ex[0].ColdAt, end)
	}
}

// TestFrameCache: the newest entries are found with their own text, older
// ones fall out, and a frame that shares nothing is a miss.
func TestFrameCache(t *testing.T) {
	f := newTextCodec(minCompressed)
	if _, ok := f.cached("x"); ok {
		t.Fatal("a hit in an empty cache")
	}
	n := 3*frameCacheSize + 17
	for i := range n {
		f.keep(fmt.Sprintf("frame %d", i), fmt.Sprintf("text %d", i))
	}
	for i := n - frameCacheSize; i < n; i++ {
		if got, ok := f.cached(fmt.Sprintf("frame %d", i)); !ok || got != fmt.Sprintf("text %d", i) {
			t.Fatalf("frame %d: %q, %v; want its text", i, got, ok)
		}
	}
	if _, ok := f.cached("frame 0"); ok {
		t.Fatal("the oldest frame is still there after three generations")
	}
	held := 0
	for i := range n {
		if _, ok := f.cached(fmt.Sprintf("frame %d", i)); ok {
			held++
		}
	}
	if held > 2*frameCacheSize {
		t.Fatalf("%d entries, more than two generations", held)
	}
}

// TestConvIndexesBounded: the store keeps the indexes of the conversations
// searched last, at most maxConvIndexes, and the same one while kept.
func TestConvIndexesBounded(t *testing.T) {
	var x convIndexes[sumIndex]
	first := x.get(1)
	for c := int64(2); c <= maxConvIndexes+5; c++ {
		x.get(c)
		if x.get(1) != first {
			t.Fatalf("conversation 1, searched all along, lost its index at %d", c)
		}
	}
	if len(x.byConv) != maxConvIndexes {
		t.Fatalf("%d indexes kept, want %d", len(x.byConv), maxConvIndexes)
	}
	if _, ok := x.byConv[2]; ok {
		t.Fatal("conversation 2, searched least recently, is still kept")
	}
}

// TestTurnSumGolden: the store's row gives spanfmt.Row the fields it
// sums (the value is spanfmt's golden one for the same row).
func TestTurnSumGolden(t *testing.T) {
	r := turnRow{seq: 12345, extID: sql.NullString{String: "msg-0001", Valid: true}, session: 3, label: "s3", role: "assistant", name: "Ana",
		content: "the otter crossed the weir ünïcode", time: sql.NullInt64{Int64: 1700000000123456789, Valid: true}, model: "m",
		toolCalls: sql.NullString{String: `[{"id":"c1"}]`, Valid: true}, tokens: 250, metadata: sql.NullString{String: `{"k":"v"}`, Valid: true}}
	if got := r.sum(); got != 0xc1380d9b {
		t.Errorf("sum %08x, want c1380d9b", got)
	}
}
