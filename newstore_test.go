package strata_test

import (
	"context"

	"github.com/strata-memory/strata/internal/sqlitetest"
	"github.com/strata-memory/strata/sqlite"
)

// openNewStore opens a new, empty store at path, which must not exist:
// a copy of a store migrated once (see package sqlitetest).
func openNewStore(t fataler, path string) *sqlite.Store {
	sqlitetest.NewFile(t, path)
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return st
}
