package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/postgres"
	"github.com/strata-memory/strata/storetest"
)

// testDSN returns the database the tests use, from STRATA_TEST_POSTGRES,
// or skips the test when it is not set.
func testDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("STRATA_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("STRATA_TEST_POSTGRES is not set: start a private cluster with scripts/pgtest " +
			`(export "$(scripts/pgtest)") or set it to a postgres:// URL of a database the tests may write to`)
	}
	return dsn
}

// newSchema creates an empty schema in the database at dsn, drops it when
// t ends, and returns a DSN whose search_path starts with it (public
// follows, for the extensions' types).
func newSchema(t testing.TB, dsn string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connecting to STRATA_TEST_POSTGRES: %v", err)
	}
	defer conn.Close(ctx)
	// The extensions live in public, so that dropping a test's schema
	// leaves them for the next.
	for _, ext := range []string{"vector", "unaccent"} {
		if _, err := conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS `+ext+` SCHEMA public`); err != nil {
			t.Fatalf("creating extension %s: %v", ext, err)
		}
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := "strata_test_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatalf("creating schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		t.Fatalf("STRATA_TEST_POSTGRES: want a postgres:// URL (%v)", err)
	}
	q := u.Query()
	q.Set("search_path", schema+",public")
	u.RawQuery = q.Encode()
	return u.String()
}

// openStore opens a store in a new schema, closed when t ends.
func openStore(t testing.TB, dsn string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), newSchema(t, dsn))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	dsn := testDSN(t)
	storetest.Run(t, func(t *testing.T) strata.Store { return openStore(t, dsn) })
}

// TestConcurrentRollups appends through two stores over one schema, as two
// processes would.
func TestConcurrentRollups(t *testing.T) {
	dsn := testDSN(t)
	storetest.RunConcurrentRollups(t, func(t *testing.T) (strata.Store, strata.Store, func()) {
		at := newSchema(t, dsn)
		var two [2]*postgres.Store
		for i := range two {
			s, err := postgres.Open(context.Background(), at)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			two[i] = s
		}
		return two[0], two[1], func() { two[0].Close(); two[1].Close() }
	})
}

func TestTokens(t *testing.T) {
	dsn := testDSN(t)
	storetest.RunTokens(t, func(t *testing.T) strata.TokenStore { return openStore(t, dsn) })
}

// TestDaySegments: a store whose archive holds the day segments of earlier
// versions reads them, and writes month segments beside them.
func TestDaySegments(t *testing.T) {
	dsn := testDSN(t)
	storetest.RunDaySegments(t, func(t *testing.T) (strata.Store, storetest.Legacy) {
		s := openStore(t, dsn)
		return s, postgres.DaySegments(s)
	})
}
