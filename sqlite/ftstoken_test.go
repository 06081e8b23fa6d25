package sqlite

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-memory/strata/internal/synth"
)

// ftsTokensSQL returns the tokens FTS5 makes of each text, in order, read
// back from an fts5vocab table over a table with the store's tokenizer.
func ftsTokensSQL(t *testing.T, texts []string) [][]string {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "tok.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE VIRTUAL TABLE f USING fts5 (text, tokenize = "` + tokenizer + `")`,
		`CREATE VIRTUAL TABLE v USING fts5vocab (f, 'instance')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range texts {
		if _, err := tx.ExecContext(ctx, `INSERT INTO f (rowid, text) VALUES (?, ?)`, i+1, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	out := make([][]string, len(texts))
	rows, err := db.QueryContext(ctx, `SELECT term, doc, offset FROM v ORDER BY doc, offset`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var term string
		var doc, off int
		if err := rows.Scan(&term, &doc, &off); err != nil {
			t.Fatal(err)
		}
		toks := out[doc-1]
		for len(toks) < off {
			toks = append(toks, "") // an empty token: FTS5 counts it but indexes nothing
		}
		out[doc-1] = append(toks, term)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func goTokens(s string) []string {
	var out []string
	ftsTokens(s, func(tok []byte) { out = append(out, string(tok)) })
	return out
}

// TestTokensMatchFTS5 checks that ftsTokens splits and stems text as the
// full-text tables' tokenizer does, on English prose that was not written
// for it (this repository's documentation), generated conversation text,
// words chosen for each of Porter's rules, and text with accents.
func TestTokensMatchFTS5(t *testing.T) {
	var texts []string
	docs, _ := filepath.Glob("../docs/*.md")
	docs = append(docs, "../README.md")
	for _, p := range docs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, strings.Split(string(b), "\n\n")...)
	}
	g := synth.New(7)
	for _, turn := range g.Turns(300) {
		texts = append(texts, turn.Text())
	}
	texts = append(texts,
		"caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled sized hopping tanned falling hissing fizzed failing filing happy sky",
		"relational conditional rational valenci hesitanci digitizer conformabli radicalli differentli vileli analogousli vietnamization predication operator feudalism decisiveness hopefulness callousness formaliti sensitiviti sensibiliti",
		"triplicate formative formalize electriciti electrical hopeful goodness revival allowance inference airliner gyroscopic adjustable defensible irritant replacement adjustment dependent adoption homologou communism activate angulariti homologous effective bowdlerize",
		"probate rate cease controll roll generalizations oscillators sses ies eed ed ing abc ab a yyy syzygy",
		"Café naïve résumé Ångström façade Überprüfung ÉCOLE straße Øresund ﬁne",
		"東京 日本語の テキスト", "données 12345 x86_64 don't e-mail foo.bar/baz",
	)
	want := ftsTokensSQL(t, texts)
	bad := 0
	for i, s := range texts {
		got := goTokens(s)
		if strings.Join(got, " ") != strings.Join(want[i], " ") {
			bad++
			if bad <= 10 {
				t.Errorf("text %d %.80q:\n got %q\nwant %q", i, s, got, want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d texts tokenized differently", bad, len(texts))
	}
}
