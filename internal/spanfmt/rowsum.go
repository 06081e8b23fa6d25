package spanfmt

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"unsafe"
)

// A hot turn's row holds the turn's whole content, and nothing else
// checks it: warm blocks, archive segments and compressed node texts
// carry checksums, and neither database checks the values of a row. So
// each hot row keeps in its crc column the CRC-32C of its content fields
// (Row.Sum), computed on insert and on every write that changes them,
// and checked whenever the row is read (SumError): a row changed behind
// the store's back (a flipped bit on disk, an edit by hand, a restore
// gone wrong) is an error that names the turn instead of a turn served
// silently. A row whose content moved to its span (warm or cold) has crc
// NULL: its content is checked with the span's block or segment. Both
// stores sum the same fields the same way, so they agree on a turn's
// checksum, though nothing relies on it.

// RowText is a text column of a turn row; Valid is false for NULL.
type RowText struct {
	S     string
	Valid bool
}

// Row is a hot turn row's content fields as stored: every content
// column but the importance, which a pin changes and which is not
// content.
type Row struct {
	Seq                    int64
	ExtID                  RowText
	Session                int64
	Label, Role, Name      string
	Content                RowText
	Time                   int64 // unix nanoseconds, if HasTime
	HasTime                bool
	Model                  string
	ToolCalls, ToolResults RowText
	Tokens                 int64
	Tags, Metadata         RowText
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Sum is the row's checksum: CRC-32C over each field in the order of Row,
// integers as 8 little-endian bytes, the time as 0, or 1 and its unix
// nanoseconds, texts as a NULL marker and their length before their
// bytes.
func (r *Row) Sum() uint32 {
	var b [9]byte
	c := uint32(0)
	num := func(n int64) {
		binary.LittleEndian.PutUint64(b[:8], uint64(n))
		c = crc32.Update(c, castagnoli, b[:8])
	}
	text := func(t RowText) {
		if !t.Valid {
			b[0] = 0
			c = crc32.Update(c, castagnoli, b[:1])
			return
		}
		b[0] = 1
		binary.LittleEndian.PutUint64(b[1:9], uint64(len(t.S)))
		c = crc32.Update(c, castagnoli, b[:9])
		c = crc32.Update(c, castagnoli, unsafe.Slice(unsafe.StringData(t.S), len(t.S)))
	}
	num(r.Seq)
	text(r.ExtID)
	num(r.Session)
	text(RowText{r.Label, true})
	text(RowText{r.Role, true})
	text(RowText{r.Name, true})
	text(r.Content)
	if r.HasTime {
		num(1)
		num(r.Time)
	} else {
		num(0)
	}
	text(RowText{r.Model, true})
	text(r.ToolCalls)
	text(r.ToolResults)
	num(r.Tokens)
	text(r.Tags)
	text(r.Metadata)
	return c
}

// SumError is the error for the row of turn seq whose checksum is got
// but whose crc column recorded stored; damaged names what may be
// damaged ("the file", "the database").
func SumError(seq int64, got uint32, stored int64, damaged string) error {
	return fmt.Errorf("turn %d: its stored row fails its checksum (CRC-32C %08x, the row records %08x): "+
		"the row was changed outside strata or %s is damaged; restore it from a backup", seq, got, uint32(stored), damaged)
}
