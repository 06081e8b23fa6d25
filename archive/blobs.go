package archive

import (
	"context"
	"slices"
	"strings"
)

// Blobs is where segments are kept: whole byte strings by key, with no
// notion of records. Segments reads and writes segments through it; Files
// is the implementation over a folder, and a store may give another (a
// database table, an object store) so that every replica reads the same
// segments. Package archive/blobtest checks an implementation against
// this contract.
//
// A key is a relative, slash-separated path, such as
// Key(namespace, conversation, period): components of bytes a-z, 0-9,
// '-', '_' and '~', and file names like "2023-05.jsonl.zst" (or
// "2023-05-08.jsonl.zst", a day segment of earlier versions). No
// component is empty or starts with a dot.
//
// Every method is safe for concurrent use. Concurrent Puts of one key
// within a process each succeed and leave one of them, whole; readers
// meanwhile see one whole version or another. Segments also serializes
// its own read-modify-writes of one key within a process; across
// processes, serializing writers is the caller's job (an implementation
// may fail a Put then, but never leaves a blob part written).
type Blobs interface {
	// Get returns the whole content of the blob at key. A missing blob is
	// an error for which errors.Is(err, fs.ErrNotExist) holds.
	Get(ctx context.Context, key string) ([]byte, error)

	// Put stores data as the blob at key, replacing any blob there,
	// atomically and durably: once it returns nil the new blob survives a
	// crash, and a kill or failure at any instant leaves the old blob or
	// the new one, never a mix or a part. If check is not nil, Put reads
	// the data back from where it wrote it and calls check on what it read
	// before the new blob replaces the old; if check fails, the old blob
	// stays and Put returns an error wrapping check's.
	Put(ctx context.Context, key string, data []byte, check func(back []byte) error) error

	// Delete removes the blob at key, durably. A missing blob is an error
	// for which errors.Is(err, fs.ErrNotExist) holds.
	Delete(ctx context.Context, key string) error

	// DeletePrefix removes every blob whose key starts with prefix, and
	// whatever the implementation keeps for them (the temps of killed
	// writes, folders); no blob is no error. Deleting a conversation
	// removes its prefix, Prefix(namespace, conversation).
	DeletePrefix(ctx context.Context, prefix string) error

	// Stat returns the size in bytes of the blob at key; a missing blob is
	// an error for which errors.Is(err, fs.ErrNotExist) holds.
	Stat(ctx context.Context, key string) (int64, error)

	// List returns the keys that start with prefix, sorted; "" lists
	// every blob. A prefix that holds nothing is an empty list, not an
	// error.
	List(ctx context.Context, prefix string) ([]string, error)

	// Locate names the blob at key for messages: Files returns its file
	// path. Locate("") names the whole set (Files: its root folder).
	Locate(key string) string
}

// Prefix returns the key prefix of a conversation's segments:
// "<escaped namespace>/<escaped conversation>/", each id escaped as Dir
// explains.
func Prefix(namespace, conversation string) string {
	return escape(namespace) + "/" + escape(conversation) + "/"
}

// Key returns the key of a conversation's segment of period (Period's
// "YYYY-MM", or DayPeriod's "YYYY-MM-DD" for a day segment of earlier
// versions): Prefix(namespace, conversation) + period + Ext. Files keeps
// it at Dir(root, namespace, conversation)/<period>.jsonl.zst.
func Key(namespace, conversation, period string) string {
	return Prefix(namespace, conversation) + period + Ext
}

// Periods returns the periods of the segments kept under a
// conversation's prefix, sorted, each once: the stems of its .jsonl.zst
// and .jsonl.gz keys, months and days alike.
func Periods(ctx context.Context, b Blobs, namespace, conversation string) ([]string, error) {
	prefix := Prefix(namespace, conversation)
	keys, err := b.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	var periods []string
	for _, k := range keys {
		name := strings.TrimPrefix(k, prefix)
		if strings.Contains(name, "/") {
			continue
		}
		for _, ext := range []string{Ext, GzipExt} {
			if p, ok := strings.CutSuffix(name, ext); ok {
				periods = append(periods, p)
			}
		}
	}
	slices.Sort(periods)
	return slices.Compact(periods), nil
}
