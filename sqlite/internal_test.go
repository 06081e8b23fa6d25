package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
		{s.w, "write", "busy_timeout", "10000"},
		{s.w, "write", "foreign_keys", "1"},
		{s.w, "write", "query_only", "0"},
		{s.r, "read", "journal_mode", "wal"},
		{s.r, "read", "synchronous", "1"},
		{s.r, "read", "busy_timeout", "10000"},
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
