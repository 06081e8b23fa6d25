package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/strata-memory/strata/sqlite"
)

// migratedStore returns the bytes of a store that Open created and
// migrated in a folder of its own and then closed, made once per test
// binary. Creating a store runs every schema migration, which under the
// race detector took about a third of a second: the suites that want
// many new, empty stores (TestConformance, a store a subtest) copy this
// one, and the tests of creating and migrating a file (TestWAL,
// TestMigrationsIdempotent, TestUpgradeKeepsData, ...) open new files.
var migratedStore = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "strata-migrated-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "t.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		return nil, err
	}
	if err := st.Close(); err != nil {
		return nil, err
	}
	// The copy is of the database file alone: closing must have left
	// nothing beside it (no write-ahead log, no archive folder).
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return nil, fmt.Errorf("a new store left %v after Close, want only t.db", names)
	}
	return os.ReadFile(path)
})

// newStoreFile writes a copy of migratedStore at path, which must not
// exist, for Open to find migrated already.
func newStoreFile(t *testing.T, path string) {
	t.Helper()
	b, err := migratedStore()
	if err != nil {
		t.Fatalf("migrating a new store: %v", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// openNew is openTemp over a copy of migratedStore: a new, empty store
// in a new temporary directory, closed when t ends.
func openNew(t *testing.T) *sqlite.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.db")
	newStoreFile(t, path)
	return openAt(t, path)
}
