package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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

// openMode is how openStore opens an SQLite store.
type openMode int

const (
	readWrite         openMode = iota // created if missing, migrated
	readOnly                          // sqlite.ReadOnly: nothing written
	readPreferred                     // read-only if the file exists with this build's schema
	readWriteExisting                 // migrated, never created
)

// openStore opens the store a --db value names: a postgres:// URL, or the
// path of an SQLite file. Read-write, a missing file is created (and
// openStore says so on stderr, if not nil) and either store is migrated
// to the newest schema this build knows. Read-only, an SQLite file is
// opened with sqlite.ReadOnly. readPreferred (the commands that only
// read) opens it read-only too, but read-write where that is refused
// because the file has an older schema, so that the first read after an
// upgrade migrates it; if that open fails too, the read-only refusal is
// the error, which says what to do. A command that only reads never
// creates a store: a missing file is an ENOTFOUND error naming it; nor
// does readWriteExisting, which opens it read-write. A
// PostgreSQL store is always opened read-write. longRunning keeps
// SQLite's in-memory summary index, which pays for its loading over many
// queries.
func openStore(ctx context.Context, db string, longRunning bool, mode openMode, stderr io.Writer) (store, error) {
	if isPostgres(db) {
		st, err := postgres.Open(ctx, db)
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	_, statErr := os.Stat(db)
	missing := errors.Is(statErr, fs.ErrNotExist)
	if missing && (mode == readPreferred || mode == readWriteExisting) {
		return nil, strata.Errorf(strata.ENOTFOUND,
			"no store at %s: nothing has been imported there (check --db or STRATA_DB; 'strata import' or 'strata add' creates it)", db)
	}
	opts := []sqlite.Option{sqlite.WithSummaryIndex(longRunning)}
	if mode == readOnly || mode == readPreferred {
		st, err := sqlite.Open(ctx, db, append(opts, sqlite.ReadOnly())...)
		if err == nil {
			return st, nil
		}
		if mode == readOnly || strata.ErrorCode(err) != strata.ECONFLICT {
			return nil, fmt.Errorf("open %s: %w", db, err)
		}
		st2, err2 := sqlite.Open(ctx, db, opts...)
		if err2 != nil {
			return nil, fmt.Errorf("open %s: %w", db, err)
		}
		return st2, nil
	}
	st, err := sqlite.Open(ctx, db, opts...)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", db, err)
	}
	if missing && stderr != nil {
		fmt.Fprintf(stderr, "strata: created a new store at %s\n", db)
	}
	return st, nil
}

// explainer is a store that can say a full disk or a read-only file in
// words (sqlite.Store.Explain).
type explainer interface{ Explain(error) error }

var _ explainer = (*sqlite.Store)(nil)

// showDB is a --db value as messages print it: a URL's password masked.
func showDB(db string) string {
	if isPostgres(db) {
		return postgres.Redact(db)
	}
	return db
}
