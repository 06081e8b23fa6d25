package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/strata-memory/strata/internal/sqlitetest"
	"github.com/strata-memory/strata/sqlite"
)

// newStoreFile writes a new, empty, migrated store at path, which must
// not exist (see package sqlitetest).
func newStoreFile(t *testing.T, path string) {
	t.Helper()
	sqlitetest.NewFile(t, path)
}

// openNew is openTemp over a copy of a store migrated once: a new, empty store
// in a new temporary directory, closed when t ends.
func openNew(t *testing.T) *sqlite.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	newStoreFile(t, path)
	return openAt(t, path)
}
