// Package spanfmt holds the formats of a level-1 span's turns once they
// leave their rows: the warm block kept beside the span's node, the
// archive record kept in a cold segment, and the JSON text of a turn's
// tool calls that both the record and a store's turn rows use. Every
// store encodes and checks spans with this package, so a turn demoted by
// one store reads back the same from any other, and the round-trip rules
// (write, decode, compare, only then drop the old copy) live in one place.
//
// The segments themselves (compression, verification, where they are
// kept) are package archive's; the CTF codec of blocks is package ctf's.
package spanfmt

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/ctf"
)

// Period is the period of the archive segment that holds, or is to hold,
// the record of a turn of time t of a span whose node names the segment
// periods named: the turn's UTC date ("YYYY-MM-DD", archive.DayPeriod)
// when named holds it, since the span went cold before segments covered a
// month and its records are in day segments; else the turn's UTC month
// ("YYYY-MM", archive.Period), where every new record goes. A span going
// cold names no period yet, so its turns go to their months. A turn with
// no time belongs to "0001-01".
//
// Keeping a turn of a day-segment span in its day segment keeps the rule
// every reader relies on: a span holds one record per turn, in one of the
// segments it names.
func Period(named []string, t time.Time) string {
	if len(named) > 0 {
		if d := archive.DayPeriod(t); slices.Contains(named, d) {
			return d
		}
	}
	return archive.Period(t)
}

// EncodeBlock packs turns into a warm block: CTF, compressed as one zstd
// frame with its checksum.
func EncodeBlock(turns []strata.Turn) ([]byte, error) {
	b, err := ctf.EncodeTurns(turns, nil)
	if err != nil {
		return nil, err
	}
	return archive.Compress(b), nil
}

// DecodeBlock unpacks a warm block. The turns have the shape a store's
// row scan gives: nil for empty lists and maps, times in UTC.
func DecodeBlock(b []byte) ([]strata.Turn, error) {
	raw, err := archive.Decompress(b)
	if err != nil {
		return nil, err
	}
	ts, err := ctf.DecodeTurns(raw)
	if err != nil {
		return nil, err
	}
	for i := range ts {
		Normalize(&ts[i])
	}
	return ts, nil
}

// CheckBlock decodes block and reports an error unless it holds turns,
// each one the same (SameTurn). A store calls it before the block
// replaces the turns' other copy.
func CheckBlock(block []byte, turns []strata.Turn) error {
	back, err := DecodeBlock(block)
	if err != nil {
		return err
	}
	if len(back) != len(turns) {
		return fmt.Errorf("%d turns, want %d", len(back), len(turns))
	}
	for i := range turns {
		if !SameTurn(&back[i], &turns[i]) {
			return fmt.Errorf("turn %d does not round-trip", turns[i].Seq)
		}
	}
	return nil
}

// Normalize gives a decoded turn the shape a row scan gives: nil for
// empty lists and maps, UTC times.
func Normalize(t *strata.Turn) {
	if len(t.ToolCalls) == 0 {
		t.ToolCalls = nil
	}
	for i := range t.ToolCalls {
		if len(t.ToolCalls[i].Arguments) == 0 {
			t.ToolCalls[i].Arguments = nil
		}
	}
	if len(t.ToolResults) == 0 {
		t.ToolResults = nil
	}
	if len(t.Tags) == 0 {
		t.Tags = nil
	}
	if len(t.Metadata) == 0 {
		t.Metadata = nil
	}
	if t.Time.IsZero() {
		t.Time = time.Time{}
	} else {
		t.Time = t.Time.UTC()
	}
}

// SameTurn reports whether two turns are equal field by field, tool-call
// arguments byte for byte, times as instants.
func SameTurn(a, b *strata.Turn) bool {
	x, y := *a, *b
	Normalize(&x)
	Normalize(&y)
	if len(x.ToolCalls) != len(y.ToolCalls) {
		return false
	}
	for i := range x.ToolCalls {
		if !bytes.Equal(x.ToolCalls[i].Arguments, y.ToolCalls[i].Arguments) {
			return false
		}
	}
	x.ToolCalls, y.ToolCalls = nil, nil
	return x.Time.Equal(y.Time) && reflect.DeepEqual(withoutTime(x), withoutTime(y))
}

func withoutTime(t strata.Turn) strata.Turn {
	t.Time = time.Time{}
	return t
}
