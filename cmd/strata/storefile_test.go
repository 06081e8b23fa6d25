package main

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"testing"

	"github.com/strata-memory/strata/internal/sqlitetest"
	"github.com/strata-memory/strata/sqlite"
)

// newStoreFile writes a new, empty, migrated SQLite store at path, which
// must not exist: a copy of a store migrated once (see package
// sqlitetest).
func newStoreFile(t *testing.T, path string) {
	t.Helper()
	sqlitetest.NewFile(t, path)
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
