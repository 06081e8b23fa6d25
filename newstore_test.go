package strata_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/strata-memory/strata/sqlite"
)

// migratedStore returns the bytes of a store that sqlite.Open created and
// migrated in a folder of its own and then closed, made once per test
// binary. Creating a store runs every schema migration, which under the
// race detector took about a third of a second, and the package's tests
// open a few hundred new stores; the sqlite package's tests cover
// creating and migrating a new file.
var migratedStore = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "strata-migrated-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "strata.db")
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
		return nil, fmt.Errorf("a new store left %v after Close, want only strata.db", names)
	}
	return os.ReadFile(path)
})

// openNewStore opens a new, empty store at path, which must not exist:
// a copy of migratedStore, so that Open finds it migrated already.
func openNewStore(t fataler, path string) *sqlite.Store {
	b, err := migratedStore()
	if err != nil {
		t.Fatalf("migrating a new store: %v", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		t.Fatalf("%v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("%v", err)
	}
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return st
}
