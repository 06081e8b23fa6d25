// Package sqlitetest gives tests new, empty SQLite stores without paying
// for their migrations each time: a store is created and migrated once
// per test binary, and each new store is a copy of its file. Creating a
// store runs every schema migration, about a third of a second under the
// race detector, and the test suites open hundreds of new stores. The
// sqlite package's own tests of creating and migrating a file
// (TestWAL, TestMigrationsIdempotent, TestUpgradeKeepsData, ...) open
// new files instead.
package sqlitetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/strata-memory/strata/sqlite"
)

// T is what NewFile needs of a test (testing.TB, rapid.T).
type T interface {
	Fatalf(format string, args ...any)
}

// migrated returns the bytes of a store that sqlite.Open created and
// migrated in a folder of its own and then closed.
var migrated = sync.OnceValues(func() ([]byte, error) {
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

// NewFile writes a new, empty, migrated store at path, which must not
// exist, for sqlite.Open to find migrated already.
func NewFile(t T, path string) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	b, err := migrated()
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
}
