package strata

import (
	"context"
	"time"
)

// WatchState is how far a watch (strata watch, which follows transcript
// files as they grow) has read one file: the bytes and lines it has
// imported, and a fingerprint of the file's first bytes, so that after a
// restart it goes on where it stopped, and starts the file over when the
// file was truncated or replaced by another.
type WatchState struct {
	// Offset is the number of bytes read and imported: always the end of
	// a whole line.
	Offset int64 `json:"offset"`
	// Lines is the number of lines in those bytes, so that errors about
	// later lines name their line in the file.
	Lines int64 `json:"lines"`
	// HeadLen is how many of the file's first bytes Head fingerprints (at
	// most Offset).
	HeadLen int64 `json:"head_len"`
	// Head is the fingerprint of the file's first HeadLen bytes, opaque
	// to stores ("" when HeadLen is 0).
	Head string `json:"head,omitempty"`
	// Updated is when the state was saved (stamped by the store if zero).
	Updated time.Time `json:"updated,omitzero"`
}

// WatchStore keeps a WatchState per (namespace, path). Paths are opaque
// to stores and compared exactly, byte for byte (they need not be UTF-8).
type WatchStore interface {
	// WatchState returns the state saved for (namespace, path), or the
	// zero state if none was saved.
	WatchState(ctx context.Context, namespace, path string) (WatchState, error)

	// SaveWatchState stores s as the state of (namespace, path),
	// replacing the one saved before (the last writer wins). A store
	// checks s with CheckWatchState first: EINVALID, changing nothing,
	// for what it refuses.
	SaveWatchState(ctx context.Context, namespace, path string, s WatchState) error

	// WatchStates returns every state saved in the namespace, ordered by
	// path (byte order).
	WatchStates(ctx context.Context, namespace string) ([]WatchFile, error)
}

// WatchFile is the watch state saved for one path.
type WatchFile struct {
	Path string `json:"path"`
	WatchState
}

// CheckWatchState reports whether s can be saved as the state of path:
// EINVALID for an empty path, a negative count, more lines than bytes,
// a HeadLen beyond Offset, or a HeadLen without a Head (or a Head without
// a HeadLen).
func CheckWatchState(path string, s WatchState) error {
	switch {
	case path == "":
		return Errorf(EINVALID, "watch state: empty path")
	case s.Offset < 0 || s.Lines < 0 || s.HeadLen < 0:
		return Errorf(EINVALID, "watch state of %q: negative count (offset %d, lines %d, head_len %d)", path, s.Offset, s.Lines, s.HeadLen)
	case s.Lines > s.Offset:
		return Errorf(EINVALID, "watch state of %q: %d lines in %d bytes (every line ends with a byte)", path, s.Lines, s.Offset)
	case s.HeadLen > s.Offset:
		return Errorf(EINVALID, "watch state of %q: head_len %d beyond offset %d", path, s.HeadLen, s.Offset)
	case (s.HeadLen > 0) != (s.Head != ""):
		return Errorf(EINVALID, "watch state of %q: head_len %d with a head of %d bytes (both or neither)", path, s.HeadLen, len(s.Head))
	}
	return nil
}
