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
	"maps"
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
// ("YYYY-MM", archive.Period). A turn with no time belongs to "0001-01".
// A span going cold names no period yet: ColdMove chooses its turns'.
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

// MaxMonthBytes bounds the month segments spans going cold are merged
// into: a segment is rewritten whole on every move to cold, and the month
// of a conversation of 1,000 turns a day (30,000 records, 1.4 MB) took
// 236-256 ms a move against 7 ms for a month of 360 records
// (BenchmarkColdMove). Once a month's segment holds this many compressed
// bytes (about 1,400 synthetic turns), spans going cold put that month's
// turns in day segments, as earlier versions did for every span. The
// months of a million synthetic turns, 24 a day, stay below it (29 KB at
// most). A variable so that tests can lower it.
var MaxMonthBytes int64 = 64 << 10

// ColdMove gathers the archive records of the spans going cold in one
// move, by the period of the segment each goes to: a turn's UTC month, or
// its UTC day once the month's segment holds MaxMonthBytes. Size reports
// the compressed bytes a stored segment holds (0 for none); it is asked
// once per month. A move decides each month once, so a span's turns of
// one month share a segment and the segment grows past the bound by one
// move at most.
type ColdMove struct {
	Size func(period string) (int64, error)
	// Records holds the records of each period, in the order added.
	Records map[string][]archive.Record
	spans   [][]string // the periods each span's turns went to, in the order met
	full    map[string]bool
}

// Add adds turn t of span i (counted from 0, in the order the caller
// keeps its spans).
func (m *ColdMove) Add(i int, t *strata.Turn) error {
	rec, err := Record(t)
	if err != nil {
		return fmt.Errorf("archiving turn %d: %w", t.Seq, err)
	}
	p, err := m.period(t.Time)
	if err != nil {
		return err
	}
	if m.Records == nil {
		m.Records = map[string][]archive.Record{}
	}
	m.Records[p] = append(m.Records[p], rec)
	for len(m.spans) <= i {
		m.spans = append(m.spans, nil)
	}
	if !slices.Contains(m.spans[i], p) {
		m.spans[i] = append(m.spans[i], p)
	}
	return nil
}

// SpanPeriods returns the periods the turns of span i went to, in the
// order met (none if none was added).
func (m *ColdMove) SpanPeriods(i int) []string {
	if i >= len(m.spans) {
		return nil
	}
	return m.spans[i]
}

// Periods returns the periods of the move's segments, sorted.
func (m *ColdMove) Periods() []string {
	return slices.Sorted(maps.Keys(m.Records))
}

// period returns the period of the segment a turn of time t goes to.
func (m *ColdMove) period(t time.Time) (string, error) {
	month := archive.Period(t)
	full, ok := m.full[month]
	if !ok {
		n, err := m.Size(month)
		if err != nil {
			return "", err
		}
		if m.full == nil {
			m.full = map[string]bool{}
		}
		full = n >= MaxMonthBytes
		m.full[month] = full
	}
	if full {
		return archive.DayPeriod(t), nil
	}
	return month, nil
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
