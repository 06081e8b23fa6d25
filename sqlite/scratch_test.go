package sqlite

import (
	"database/sql"
	"fmt"
	"testing"

	_ "modernc.org/sqlite"
)

func TestScratch(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+t.TempDir()+"/x.db?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	must := func(q string, args ...any) {
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	must(`CREATE VIRTUAL TABLE f USING fts5(text, scope, content='', contentless_delete=1, tokenize="porter unicode61 remove_diacritics 2 categories 'L* N* Co M*'")`)
	must(`CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance')`)
	for i, s := range []string{"We deployed it, deploying now", "नमस्ते दुनिया", "สวัสดีครับ", "東京の天気", "café naïve résumé cafe\u0301 n\u0308ai", "emoji 😀 here $100 a+b snake_case don't", "Ｆｕｌｌｗｉｄｔｈ"} {
		must(`INSERT INTO f(rowid, text, scope) VALUES(?, ?, ?)`, i+1, s, fmt.Sprintf("c%d n123", i))
	}
	rows, err := db.Query(`SELECT term, doc, col, offset FROM v`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var term, col string
		var doc, off int
		rows.Scan(&term, &doc, &col, &off)
		t.Logf("%d %s %d %q", doc, col, off, term)
	}
	for _, q := range []string{`text : ("deploy" OR "x")`, `scope : "c0" AND text : ("deploy" OR "zzz")`, `scope : "c1" AND text : ("deploy")`, `{text} : "cafe"`} {
		rows, err := db.Query(`SELECT rowid, bm25(f, 1.0, 0.0) FROM f WHERE f MATCH ? ORDER BY 2`, q)
		if err != nil {
			t.Fatal(q, err)
		}
		for rows.Next() {
			var id int
			var s float64
			rows.Scan(&id, &s)
			t.Logf("%s -> %d %g", q, id, s)
		}
	}
	must(`DELETE FROM f WHERE rowid=1`)
	must(`CREATE TABLE x(a INTEGER PRIMARY KEY, b TEXT UNIQUE)`)
	r, err := db.Exec(`INSERT INTO x(b) VALUES('a') ON CONFLICT(b) DO NOTHING`)
	n, _ := r.RowsAffected()
	id, _ := r.LastInsertId()
	t.Log(n, id, err)
	r, err = db.Exec(`INSERT INTO x(b) VALUES('a') ON CONFLICT(b) DO NOTHING`)
	n, _ = r.RowsAffected()
	id, _ = r.LastInsertId()
	t.Log(n, id, err)
}
