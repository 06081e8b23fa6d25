// Package archive stores the cold raw turns of a conversation in archive
// segments: one zstd-compressed JSON Lines blob per conversation and
// period, at key Key(namespace, conversation, period) =
// "<escaped namespace>/<escaped conversation>/<period>.jsonl.zst". New
// records go to the segment of their UTC month, period "YYYY-MM"
// (Period); earlier versions wrote one segment per UTC day, period
// "YYYY-MM-DD" (DayPeriod), and those are still read, merged into and
// removed from like any other: a segment is found by the period its
// caller stored, never by recomputing it from a time.
//
// # Blobs
//
// Segments are kept in a Blobs: whole byte strings by key, with get, an
// atomic and durable put (which reads the data back for a check before it
// replaces the old blob), delete, stat and list by prefix. The segment
// format and its rules (merge, verification, the gzip fallback, the order
// of deletions that keeps a kill harmless) are this package's, in
// Segments; where the bytes live is the Blobs'. Files keeps them as files
// under a root folder, the layout below, and is what a store uses unless
// it is given another; a store on a server database can keep them in a
// table so that every replica reads the same segments, and
// archive/blobtest checks any implementation against the contract. The
// path functions Merge, Remove, Read and Stat are Segments over the Files
// of the path's folder.
//
// The caller serializes each turn as one JSON value (an array or an
// object); this package treats it as opaque JSON plus a key (Record.Seq).
//
// # On-disk format
//
// The decompressed segment is UTF-8 text, one line per record, sorted by
// Seq with no Seq twice, each line ending in "\n":
//
//	[41,<the record's JSON value>]
//	[42,["D1:3","session_1","user","Joanna","2023-05-08T13:56:00Z","Hi!"]]
//
// The whole is one zstd frame with its content checksum (XXH64) on. Read
// verifies the frame checksum and the Seq order; any failure is an error
// that wraps ErrCorrupt. A segment never holds zero records: Remove deletes
// the blob instead.
//
// Format 1, which earlier versions wrote, is still read: each line is
// {"seq":41,"rec":<object>}, and a last trailer line
// {"checksum":"sha256:<64 hex digits>","records":N} holds the SHA-256 of
// every byte before it and the number of records; the trailer and the
// count are verified when present. Merge and Remove keep the values of
// the format 1 records they carry over and write every line in format 2.
// Format 2 dropped the trailer: on segments of a few kilobytes (a day of
// chat) its incompressible digest cost 3 to 4% of the archive, and the
// frame checksum already covers every byte.
//
// Reads also accept <stem>.jsonl.gz when <stem>.jsonl.zst does not exist
// (or a key ending in .gz): same lines in either format, gzip's CRC
// checked at EOF, every line validated as JSON. Merge and Remove always
// write the .zst form and then delete the .gz sibling, which the .zst
// shadows anyway.
//
// # Crash safety
//
// Merge and Remove write the new segment with Blobs.Put, whose check
// decodes what was written and compares it with the records before the new
// segment replaces the old one. A kill at any instant leaves the old or the
// new segment, never a mix. With Files, the segment is written to a temp
// file in the folder's .tmp folder named "." + <segment name> + ".tmp-" +
// <random digits> (for example ".tmp/.2023-05.jsonl.zst.tmp-2750191632"),
// fsynced, read back and verified, renamed over the segment, and the folder
// fsynced. Temp names start with "." and do not end in ".jsonl.zst", so
// they are never taken for segments; the next Merge or Remove in the folder
// deletes the temps of its own segment, and any temp older than an hour.
//
// # Concurrency
//
// All functions are safe for concurrent use. Merge and Remove calls on the
// same segment within one process are serialized by the package. Across
// processes, serializing writers of one segment is the caller's job; Files'
// unique temp names and atomic renames keep the segment whole even then,
// but one writer's update can be lost or fail with an error.
//
// Files creates files 0600 and folders 0700: they hold private
// conversations.
package archive

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Ext is the extension of a segment file; GzipExt that of the gzip form
// that reads also accept.
const (
	Ext     = ".jsonl.zst"
	GzipExt = ".jsonl.gz"
)

// maxDecoded bounds what one zstd input may decompress to, so that a
// corrupt frame header cannot make the reader allocate without bound.
const maxDecoded = 1 << 30

// ErrCorrupt is wrapped by every error about a segment or block whose
// content fails verification (as opposed to I/O errors).
var ErrCorrupt = errors.New("corrupt")

var (
	encoder, _ = zstd.NewWriter(nil,
		zstd.WithEncoderCRC(true),
		zstd.WithZeroFrames(true))
	// Segments are written once and read rarely: they take the strongest
	// level (about 15% smaller than the default on chat text).
	segmentEncoder, _ = zstd.NewWriter(nil,
		zstd.WithEncoderCRC(true),
		zstd.WithZeroFrames(true),
		zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	decoder, _ = zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(0),
		zstd.WithDecoderMaxMemory(maxDecoded))
)

// Compress returns b compressed as one zstd frame with its checksum on
// (default level). Used for warm blocks kept in the database.
func Compress(b []byte) []byte {
	return encoder.EncodeAll(b, make([]byte, 0, len(b)/3+64))
}

// Decompress reverses Compress, verifying the frame checksum. Empty input,
// garbage, a truncated frame or a checksum mismatch is an error wrapping
// ErrCorrupt.
func Decompress(b []byte) ([]byte, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("archive: decompress: empty input: %w", ErrCorrupt)
	}
	out, err := decoder.DecodeAll(b, nil)
	if err != nil {
		return nil, fmt.Errorf("archive: decompress: %v: %w", err, ErrCorrupt)
	}
	return out, nil
}

// Period returns the period of the segment a record of time t is written
// to: its UTC month, "YYYY-MM" ("2023-05"). A zero time gives "0001-01".
//
// Segments of a month compress better than segments of a day (3.4 times
// against 2.7 on a million synthetic chat turns: a day of chat is a few
// kilobytes, too little for zstd to find its repeats) and make one file
// where there were up to 31.
func Period(t time.Time) string { return t.UTC().Format("2006-01") }

// DayPeriod returns the period of the day segment that versions before
// month segments wrote a record of time t to: its UTC date, "YYYY-MM-DD"
// ("2023-05-08"). Nothing new is written to such a period, but a caller
// that stored day periods keeps using them.
func DayPeriod(t time.Time) string { return t.UTC().Format("2006-01-02") }

// Name returns the file name of the segment a record of time t is written
// to, Period(t) + Ext, e.g. "2023-05.jsonl.zst".
func Name(t time.Time) string {
	return Period(t) + Ext
}

// Dir returns the folder of a conversation's segments in the Files of
// root: root/<escaped namespace>/<escaped conversation>, the folder of
// Prefix(namespace, conversation).
//
// Each id is escaped to one safe path component, the same on every run and
// different for different ids, even on case-insensitive file systems:
// bytes a-z, 0-9, '-' and '_' are kept, every other byte (upper case
// letters, '.', '/', '~', NUL, each byte of a multibyte UTF-8 character...)
// becomes '~' and two lower-case hex digits ("A" -> "~41", "a/b" ->
// "a~2fb", ".." -> "~2e~2e"). The empty id becomes "~". A result that is a
// reserved device name on Windows (con, nul, com1...) has its first byte
// escaped too ("con" -> "~63on"). A result longer than 100 bytes is cut to
// its first 64 bytes (at an escape boundary) followed by "~~" and 32 hex
// digits of the SHA-256 of the id; "~~" occurs in no other result.
func Dir(root, namespace, conversation string) string {
	return filepath.Join(root, escape(namespace), escape(conversation))
}

const (
	maxComponent = 100
	longPrefix   = 64
)

func escape(id string) string {
	if id == "" {
		return "~"
	}
	const hexdig = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(id))
	cut := 0 // length of b at the last escape boundary <= longPrefix
	for i := 0; i < len(id); i++ {
		c := id[i]
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
		} else {
			b.WriteByte('~')
			b.WriteByte(hexdig[c>>4])
			b.WriteByte(hexdig[c&15])
		}
		if b.Len() <= longPrefix {
			cut = b.Len()
		}
	}
	s := b.String()
	if len(s) > maxComponent {
		sum := sha256.Sum256([]byte(id))
		return s[:cut] + "~~" + hex.EncodeToString(sum[:16])
	}
	if reserved(s) {
		return "~" + hex.EncodeToString([]byte{s[0]}) + s[1:]
	}
	return s
}

// reserved reports whether s (lower case, no dots) is a Windows device name.
func reserved(s string) bool {
	switch s {
	case "con", "prn", "aux", "nul":
		return true
	}
	if len(s) == 4 && (s[:3] == "com" || s[:3] == "lpt") && '0' <= s[3] && s[3] <= '9' {
		return true
	}
	return false
}

// segError is an error about one segment: "archive segment <path>: <msg>".
type segError struct {
	path string
	msg  string
	err  error // wrapped; may be nil
}

func (e *segError) Error() string { return "archive segment " + e.path + ": " + e.msg }
func (e *segError) Unwrap() error { return e.err }

// corrupt returns an error wrapping ErrCorrupt.
func corrupt(path, format string, args ...any) error {
	return &segError{path: path, msg: fmt.Sprintf(format, args...) + " (corrupt)", err: ErrCorrupt}
}

// ioError reports a failed file operation on the segment at path, keeping
// the cause (so errors.Is(err, fs.ErrNotExist) works) without repeating
// the path.
func ioError(path, op string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &segError{path: path, msg: op + ": " + err.Error(), err: err}
}

func invalid(path, format string, args ...any) error {
	return &segError{path: path, msg: fmt.Sprintf(format, args...)}
}
