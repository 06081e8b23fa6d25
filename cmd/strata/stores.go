package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/postgres"
	"github.com/strata-memory/strata/sqlite"
)

// store is what the commands need of a store: the engine's contract and
// the server's bearer tokens. Both stores have both.
type store interface {
	strata.Store
	strata.TokenStore
}

var (
	_ store = (*sqlite.Store)(nil)
	_ store = (*postgres.Store)(nil)
)

// isPostgres reports whether a --db value names a PostgreSQL database
// rather than an SQLite file.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// openStore opens the store a --db value names: a postgres:// URL, or the
// path of an SQLite file (created if missing). Either is migrated to the
// newest schema this build knows. longRunning keeps SQLite's in-memory
// summary index, which pays for its loading over many queries.
func openStore(ctx context.Context, db string, longRunning bool) (store, error) {
	if isPostgres(db) {
		st, err := postgres.Open(ctx, db)
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	st, err := sqlite.Open(ctx, db, sqlite.WithSummaryIndex(longRunning))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", db, err)
	}
	return st, nil
}

// showDB is a --db value as messages print it: a URL's password masked.
func showDB(db string) string {
	if isPostgres(db) {
		return postgres.Redact(db)
	}
	return db
}
