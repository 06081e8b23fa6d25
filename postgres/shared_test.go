package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/postgres"
)

// newDatabase creates an empty database beside the one at dsn, drops it
// when t ends, and returns its DSN. The tests of extensions need one:
// extensions belong to a database, and the test database has them in
// public already. A role that may not create databases skips the test.
func newDatabase(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connecting to STRATA_TEST_POSTGRES: %v", err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	rand.Read(b)
	name := "strata_test_db_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+name); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42501" {
			t.Skipf("the role of STRATA_TEST_POSTGRES may not create databases: %v", err)
		}
		t.Fatalf("creating database %s: %v", name, err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("dropping database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP DATABASE `+name+` WITH (FORCE)`); err != nil {
			t.Errorf("dropping database %s: %v", name, err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		t.Fatalf("STRATA_TEST_POSTGRES: want a postgres:// URL (%v)", err)
	}
	u.Path = "/" + name
	return u.String()
}

// inSchema creates the schema in the database at dsn and returns a DSN
// whose search_path is the schema, then path (as docs/postgres.md shows:
// "team_b,public").
func inSchema(t *testing.T, dsn, schema, path string) string {
	t.Helper()
	exec(t, dsn, `CREATE SCHEMA `+schema)
	u, _ := url.Parse(dsn)
	q := u.Query()
	if path != "" {
		schema += "," + path
	}
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// exec runs statements on a connection of its own.
func exec(t *testing.T, dsn, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// extensionSchemas returns the schema of each extension strata uses.
func extensionSchemas(t *testing.T, dsn string) map[string]string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, _ := conn.Query(ctx, `SELECT e.extname::text, n.nspname::text FROM pg_extension e
		JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname IN ('vector', 'unaccent')`)
	out := map[string]string{}
	var name, schema string
	if _, err := pgx.ForEachRow(rows, []any{&name, &schema}, func() error { out[name] = schema; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// openAt opens the store at dsn, closed when t ends.
func openAt(t *testing.T, dsn string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn)
	if err != nil {
		t.Fatalf("Open %s: %v", postgres.Redact(dsn), err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var sharedSpace = strata.EmbedSpace{Model: "m", Dim: 3}

// useStore writes a conversation with accented words and a vector to s,
// under the id conv, and checks that a search without the accents finds
// it and that the vector reads back.
func useStore(t *testing.T, s strata.Store, conv string) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.EnsureConversation(ctx, strata.Conversation{Namespace: "ns", ID: conv}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendTurns(ctx, "ns", conv, turnsOf(conv+"-", "un café crème à Gdańsk", "nothing else")); err != nil {
		t.Fatalf("append to %s: %v", conv, err)
	}
	if err := s.PutEmbeddings(ctx, "ns", conv, sharedSpace, []strata.Embedding{
		{EmbedRef: strata.EmbedRef{Seq: 1}, Vector: []float32{1, 2, 3}}}); err != nil {
		t.Fatalf("vectors of %s: %v", conv, err)
	}
	checkStore(t, s, conv)
}

// checkStore checks what useStore wrote to s.
func checkStore(t *testing.T, s strata.Store, conv string) {
	t.Helper()
	ctx := context.Background()
	hits, err := s.Search(ctx, strata.SearchQuery{Namespace: "ns", Conversation: conv, Text: "cafe creme gdansk", K: 5})
	if err != nil {
		t.Fatalf("search %s: %v", conv, err)
	}
	if len(hits) != 1 || hits[0].Turn == nil || hits[0].Turn.Seq != 1 {
		t.Errorf("search of %s for the words without accents: %d hits, want turn 1", conv, len(hits))
	}
	var got [][]float32
	err = s.Vectors(ctx, strata.VectorFilter{Namespace: "ns", Conversation: conv, Space: sharedSpace}, func(v strata.Vector) error {
		got = append(got, v.Values)
		return nil
	})
	if err != nil || len(got) != 1 || len(got[0]) != 3 || got[0][2] != 3 {
		t.Errorf("vectors of %s: %v, %v; want [[1 2 3]]", conv, got, err)
	}
}

// TestSharedDatabase: two stores in two schemas of one database both
// migrate and work, the extensions land outside both, and dropping one
// store's schema leaves the other working, reopened included.
func TestSharedDatabase(t *testing.T) {
	db := newDatabase(t, testDSN(t))
	a := openAt(t, inSchema(t, db, "team_a", "public"))
	useStore(t, a, "a")
	bDSN := inSchema(t, db, "team_b", "public")
	b := openAt(t, bDSN)
	useStore(t, b, "b")
	checkStore(t, a, "a")
	if got := extensionSchemas(t, db); got["vector"] != "public" || got["unaccent"] != "public" {
		t.Errorf("extensions in %v, want both in public", got)
	}

	a.Close()
	exec(t, db, `DROP SCHEMA team_a CASCADE`)
	checkStore(t, b, "b")
	b.Close()
	b = openAt(t, bDSN)
	checkStore(t, b, "b")
	useStore(t, b, "b2")
}

// TestSharedDatabaseSearchPath: a store whose search_path names its
// schema alone (the extensions' schema not on it) migrates and works, as
// does a second one beside it.
func TestSharedDatabaseSearchPath(t *testing.T) {
	db := newDatabase(t, testDSN(t))
	a := openAt(t, inSchema(t, db, "team_a", ""))
	useStore(t, a, "a")
	b := openAt(t, inSchema(t, db, "team_b", ""))
	useStore(t, b, "b")
}

// TestOldLayoutUpgrade: a store migrated by earlier versions, which put
// the extensions in the store's own schema, upgrades: its data stays
// readable, the extensions move out of its schema, a second store beside
// it migrates (before the upgrade or after it), and dropping the old
// store's schema leaves the new one working.
func TestOldLayoutUpgrade(t *testing.T) {
	for _, newFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "upgraded first", true: "new store first"}[newFirst], func(t *testing.T) {
			testOldLayoutUpgrade(t, newFirst)
		})
	}
}

func testOldLayoutUpgrade(t *testing.T, newFirst bool) {
	ctx := context.Background()
	db := newDatabase(t, testDSN(t))
	aDSN := inSchema(t, db, "team_a", "public")
	if err := postgres.MigrateAsBefore(ctx, aDSN, 7); err != nil {
		t.Fatal(err)
	}
	if got := extensionSchemas(t, db); got["vector"] != "team_a" || got["unaccent"] != "team_a" {
		t.Fatalf("the earlier layout has the extensions in %v, want both in team_a", got)
	}
	// A conversation written by version 7: a turn with its index row and
	// a vector.
	exec(t, aDSN, `
		INSERT INTO conversations (namespace, id, created, turns) VALUES ('ns', 'old', 1, 1);
		INSERT INTO turns (conversation, seq, ext_id, role, content, time, size)
			SELECT pk, 1, 'old-1', 'user', convert_to('un café crème à Gdańsk', 'UTF8'), 1700000000000000000, 26 FROM conversations;
		INSERT INTO turn_index (conversation, seq, part, fts, words)
			SELECT pk, 1, 0, to_tsvector('strata_text', 'un café crème à gdańsk'), 5 FROM conversations;
		INSERT INTO vector_state (conversation, version) SELECT pk, 1 FROM conversations;
		INSERT INTO turn_vectors (conversation, seq, model, dim, version, vec)
			SELECT pk, 1, 'm', 3, 1, '[1,2,3]' FROM conversations;`)

	bDSN := inSchema(t, db, "team_b", "public")
	var b *postgres.Store
	if newFirst {
		b = openAt(t, bDSN)
		useStore(t, b, "b")
	}
	a := openAt(t, aDSN)
	if v, err := a.Version(ctx); err != nil || v != postgres.SchemaVersion() {
		t.Fatalf("upgraded store at version %d (%v), want %d", v, err, postgres.SchemaVersion())
	}
	checkStore(t, a, "old")
	useStore(t, a, "a")
	if got := extensionSchemas(t, db); got["vector"] != "public" || got["unaccent"] != "public" {
		t.Errorf("after the upgrade the extensions are in %v, want both in public", got)
	}
	if !newFirst {
		b = openAt(t, bDSN)
		useStore(t, b, "b")
	}

	a.Close()
	exec(t, db, `DROP SCHEMA team_a CASCADE`)
	checkStore(t, b, "b")
	useStore(t, b, "b2")
}

// TestSharedDatabaseTriggers: a statement on one store's tables from a
// session whose search_path starts with another store's schema changes
// nothing of the other store: the triggers it fires find their own
// store's tables.
func TestSharedDatabaseTriggers(t *testing.T) {
	db := newDatabase(t, testDSN(t))
	aDSN := inSchema(t, db, "team_a", "public")
	a := openAt(t, aDSN)
	useStore(t, a, "a")
	b := openAt(t, inSchema(t, db, "team_b", "public"))
	useStore(t, b, "b")
	// Both conversations have the key 1 in their own store.
	exec(t, aDSN, `DELETE FROM team_b.conversations`)
	checkStore(t, a, "a")
	if _, err := b.Conversation(context.Background(), "ns", "b"); strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Errorf("the deleted conversation of team_b: %v, want ENOTFOUND", err)
	}
}

// TestSharedDatabaseConcurrentMigrations: stores in several schemas of a
// new database migrating at the same moment each migrate, the extensions
// created once, in public.
func TestSharedDatabaseConcurrentMigrations(t *testing.T) {
	db := newDatabase(t, testDSN(t))
	const n = 4
	dsns := make([]string, n)
	for i := range dsns {
		dsns[i] = inSchema(t, db, fmt.Sprintf("team_%d", i), "public")
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, dsn := range dsns {
		wg.Go(func() { _, _, errs[i] = postgres.Migrate(context.Background(), dsn) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("migrating team_%d: %v", i, err)
		}
	}
	if got := extensionSchemas(t, db); got["vector"] != "public" || got["unaccent"] != "public" {
		t.Errorf("extensions in %v, want both in public", got)
	}
	for i, dsn := range dsns {
		useStore(t, openAt(t, dsn), fmt.Sprintf("c%d", i))
	}
}
