package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"

	sqlitedrv "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite reports a full disk as SQLITE_FULL only when a write to the
// database file fails; on a full disk every command, reads included, can
// fail first with an I/O error while creating or growing the -shm file
// (SQLITE_IOERR_SHMSIZE, "disk I/O error (4874)"), and a read-only folder
// gives "unable to open database file" (SQLITE_CANTOPEN). Neither says
// why. explain turns such errors into ones that say "disk full" or
// "read-only" in words and name the file, keeping the original in the
// chain.

// storageError is an error of the store's file system: kind is "disk
// full" or "read-only", and the message says so.
type storageError struct {
	kind string
	err  error
}

func (e *storageError) Error() string { return e.kind + ": " + e.err.Error() }

// StorageFault says what is wrong, "disk full" or "read-only", without
// the file's path: what a server may tell its clients.
func (e *storageError) StorageFault() string { return e.kind }
func (e *storageError) Unwrap() error        { return e.err }

// lowSpace is the free space under which an I/O error is put down to a
// full disk: less than SQLite needs to grow its -shm file by one chunk or
// to write a few pages.
const lowSpace = 1 << 20

// Explain returns err with its message saying in words that the store's
// disk is full or that its file or folder is read-only, when an SQLite
// error shows it (SQLITE_FULL; an I/O error while the disk holding the
// file has less than a megabyte free; SQLITE_READONLY; SQLITE_CANTOPEN in
// a folder that cannot be written); any other error is returned as it is.
// The store's methods return SQLite's own errors: a caller that shows
// errors to a user passes them through Explain.
func (s *Store) Explain(err error) error { return explain(err, s.path, s.readOnly) }

// explain is Explain for the store at path.
func explain(err error, path string, readOnly bool) error {
	var se *storageError
	if err == nil || errors.As(err, &se) {
		return err
	}
	var le *sqlitedrv.Error
	if !errors.As(err, &le) {
		if errors.Is(err, errROFS) {
			return &storageError{kind: "read-only", err: fmt.Errorf("%w (the file system holding %s is mounted read-only; "+
				"read it with the read-only option)", err, path)}
		}
		if errors.Is(err, errNoSpace) {
			return &storageError{kind: "disk full", err: fmt.Errorf("%w (the disk holding %s is full)", err, path)}
		}
		return err
	}
	switch le.Code() & 0xff {
	case sqlite3.SQLITE_FULL:
		return &storageError{kind: "disk full", err: fmt.Errorf("%w (%s cannot grow: its disk is full, "+
			"or the file reached SQLite's page limit; %s); free space, then retry", err, path, free(path))}
	case sqlite3.SQLITE_IOERR:
		if n, ok := freeBytes(path); ok && n < lowSpace {
			return &storageError{kind: "disk full", err: fmt.Errorf("%w (the disk holding %s is full: %s); "+
				"free space, then retry (reads work read-only meanwhile)", err, path, free(path))}
		}
	case sqlite3.SQLITE_READONLY:
		if readOnly {
			return &storageError{kind: "read-only", err: fmt.Errorf("%w (%s is open read-only)", err, path)}
		}
		return &storageError{kind: "read-only", err: fmt.Errorf("%w (%s, its -wal or -shm file or its folder cannot be "+
			"written, or its file system is mounted read-only; read it with the read-only option)", err, path)}
	case sqlite3.SQLITE_CANTOPEN:
		if !writable(filepath.Dir(absPath(path))) {
			return &storageError{kind: "read-only", err: fmt.Errorf("%w (the folder of %s cannot be written, so SQLite "+
				"cannot create the -wal and -shm files it needs to write; read it with the read-only option)", err, path)}
		}
	}
	return err
}

// free describes the free space of the disk holding path.
func free(path string) string {
	n, ok := freeBytes(path)
	if !ok {
		return "free space unknown"
	}
	return fmt.Sprintf("%d bytes free", n)
}

// absPath is path made absolute, or path if that fails.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// cannotOpen reports whether err is SQLite failing to open or map a file
// (the database, its -wal or its -shm): the errors a read-only folder or a
// full disk gives a read-only connection.
func cannotOpen(err error) bool {
	var le *sqlitedrv.Error
	if !errors.As(err, &le) {
		return false
	}
	switch le.Code() & 0xff {
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL:
		return true
	}
	return false
}
