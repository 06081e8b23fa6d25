package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/strata-memory/strata/sqlite"
)

// migratedStore returns the bytes of an SQLite store that sqlite.Open
// created and migrated in a folder of its own and then closed, made once
// per test binary. Creating a store runs every schema migration, which
// under the race detector took about a third of a second; the reference
// stores that the tests of servers sharing a store, or killed, import
// into start as copies of this one.
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

// newStoreFile writes a new, empty, migrated SQLite store at path, which
// must not exist: a copy of migratedStore.
func newStoreFile(t *testing.T, path string) {
	t.Helper()
	b, err := migratedStore()
	if err != nil {
		t.Fatalf("migrating a new store: %v", err)
	}
	writeNew(t, path, func(w io.Writer) error { _, err := w.Write(b); return err })
}

// copyStoreFile copies the SQLite store at from, closed by every process
// that opened it, to the new file to. A closed store is its database file
// alone: no write-ahead log beside it and no archive folder (no span of it
// went cold), which copyStoreFile checks.
func copyStoreFile(t *testing.T, from, to string) {
	t.Helper()
	for _, p := range []string{from + "-wal", sqlite.ArchiveRoot(from)} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("copying the store %s: %s exists (%v)", from, p, err)
		}
	}
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	writeNew(t, to, func(w io.Writer) error { _, err := io.Copy(w, src); return err })
}

// writeNew creates the file at path, which must not exist, with what
// write writes.
func writeNew(t *testing.T, path string, write func(io.Writer) error) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := write(f); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
