package strata

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// What every store keeps. strata has one definition of valid input, the
// strictest any of its stores needs, and checks it before anything is
// written, whatever the path (the Go API, HTTP, MCP, each importer,
// 'strata add', 'strata copy'): input one store takes is never refused
// by another half way through a write.
//
//   - Text is valid UTF-8 without NUL (U+0000). PostgreSQL's text columns
//     hold neither invalid UTF-8 nor NUL; SQLite would keep both, so they
//     are refused everywhere, in every text field of a turn (content
//     included: summaries and search terms are made from it and land in
//     text columns).
//   - An id (a conversation id, an ext_id, a namespace) is 1 to MaxIDBytes
//     bytes: PostgreSQL indexes them, and an index entry is bounded.
//   - A turn is at most MaxTurnBytes bytes, all its text together.
//   - A time is within MinTime..MaxTime (see CheckTime); an explicit zero
//     time (0001-01-01T00:00:00Z) is refused by every reader of external
//     input, which alone can tell it from a time not given.
const (
	// MaxIDBytes bounds a conversation id, an ext_id and a namespace.
	MaxIDBytes = 256
	// MaxTurnBytes bounds a turn: its content, tool calls, tool results,
	// name, labels, tags and metadata together. It is far below what
	// either store takes in one value (SQLite 1e9 bytes, PostgreSQL 1 GiB)
	// so that a warm block, an import batch (see importBuffer) or the
	// copy of a turn in a transaction never meets those limits, and above
	// the HTTP server's default body limit (16 MiB), so that any turn the
	// server takes by default fits.
	MaxTurnBytes = 32 << 20
)

// CheckText returns an EINVALID error naming field if s is not text every
// store keeps: valid UTF-8 without NUL.
func CheckText(field, s string) error {
	if !utf8.ValidString(s) {
		at := 0
		for at < len(s) {
			r, size := utf8.DecodeRuneInString(s[at:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			at += size
		}
		return Errorf(EINVALID, "%s: invalid UTF-8 (at byte %d)", field, at)
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		return Errorf(EINVALID, "%s: contains a NUL character (U+0000) at byte %d, which no store keeps", field, i)
	}
	return nil
}

// Storable returns s as text every store keeps: invalid UTF-8 and NUL
// become U+FFFD. It is for text strata makes or receives from a model,
// never for a user's input, which is refused instead (CheckText).
func Storable(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// checkBytes is CheckText for text held as bytes.
func checkBytes(field string, b []byte) error {
	if utf8.Valid(b) && !strings.Contains(string(b), "\x00") {
		return nil
	}
	return CheckText(field, string(b))
}

// CheckID returns an EINVALID error naming what (like "conversation id")
// if id cannot name a record in every store: empty, longer than
// MaxIDBytes, or not text (see CheckText).
func CheckID(what, id string) error {
	switch {
	case id == "":
		return Errorf(EINVALID, "%s is empty", what)
	case len(id) > MaxIDBytes:
		return Errorf(EINVALID, "%s is %d bytes long, at most %d", what, len(id), MaxIDBytes)
	}
	return CheckText(what, id)
}

// ValidateNamespace reports whether ns can name a namespace.
func ValidateNamespace(ns string) error { return CheckID("namespace", ns) }

// lookupID returns nil if id can name a stored conversation, else the
// ENOTFOUND error a store gives for a conversation it does not hold: no
// store can hold one by that id, and asking PostgreSQL for it would fail
// instead of finding nothing.
func lookupID(namespace, id string) error {
	if ValidateConversationID(id) != nil {
		return Errorf(ENOTFOUND, "conversation %q not found in namespace %q", id, namespace)
	}
	return nil
}

// checkNodeID is lookupID for a node id.
func checkNodeID(id string) error {
	if id == "" || len(id) > MaxIDBytes || CheckText("", id) != nil {
		return Errorf(ENOTFOUND, "node %q not found", id)
	}
	return nil
}

// Size returns the bytes of text a turn carries, as MaxTurnBytes counts
// them.
func (t *Turn) Size() int {
	n := len(t.ExtID) + len(t.Role) + len(t.Name) + len(t.Content) + len(t.SessionLabel) + len(t.Model)
	for _, c := range t.ToolCalls {
		n += len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	for _, r := range t.ToolResults {
		n += len(r.CallID) + len(r.Name) + len(r.Content)
	}
	for _, tag := range t.Tags {
		n += len(tag)
	}
	n += metadataSize(t.Metadata)
	return n
}

// metadataSize is the bytes of the keys and string values of v.
func metadataSize(v any) int {
	n := 0
	switch v := v.(type) {
	case string:
		n += len(v)
	case map[string]any:
		for k, x := range v {
			n += len(k) + metadataSize(x)
		}
	case []any:
		for _, x := range v {
			n += metadataSize(x)
		}
	}
	return n
}

// checkMetadata checks every key and string value of v, at path.
func checkMetadata(path string, v any) error {
	switch v := v.(type) {
	case string:
		return CheckText(path, v)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys) // the first bad field named is always the same one
		for _, k := range keys {
			if err := CheckText(path+" key "+fmt.Sprintf("%q", k), k); err != nil {
				return err
			}
			if err := checkMetadata(path+"."+k, v[k]); err != nil {
				return err
			}
		}
	case []any:
		for i, x := range v {
			if err := checkMetadata(fmt.Sprintf("%s[%d]", path, i), x); err != nil {
				return err
			}
		}
	}
	return nil
}

// ValidateConversationID reports whether id can name a conversation in
// every store: 1 to MaxIDBytes bytes of text (see CheckText).
func ValidateConversationID(id string) error {
	return CheckID("conversation id", id)
}
