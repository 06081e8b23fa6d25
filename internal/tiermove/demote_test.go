package tiermove

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/internal/spanfmt"
)

// journal is a DemoteTx over spans held in memory that writes down each
// primitive it is asked for, in order.
type journal struct {
	spans map[string]Span
	rows  map[string][]Row
	log   []string
}

func (j *journal) Spans(_ context.Context, ids []string) ([]Span, error) {
	var out []Span
	for _, id := range ids {
		sp, ok := j.spans[id]
		if !ok {
			return nil, strata.Errorf(strata.ENOTFOUND, "node %q", id)
		}
		out = append(out, sp)
	}
	return out, nil
}

func (j *journal) SpanRows(_ context.Context, sp Span) ([]Row, error) { return j.rows[sp.ID], nil }

func (j *journal) SetWarm(_ context.Context, sp Span, block []byte) error {
	j.log = append(j.log, "warm "+sp.ID)
	return nil
}

func (j *journal) Slim(_ context.Context, sp Span, tier int, first, last int64) (int64, error) {
	j.log = append(j.log, fmt.Sprintf("slim %s %d-%d", sp.ID, first, last))
	return last - first + 1, nil
}

func (j *journal) SegmentBytes(context.Context, string) (int64, error) { return 0, nil }

func (j *journal) MergeRecords(_ context.Context, period string, recs []archive.Record) error {
	j.log = append(j.log, fmt.Sprintf("merge %s %d", period, len(recs)))
	return nil
}

func (j *journal) SetCold(_ context.Context, sp Span, periods []string, at time.Time) error {
	j.log = append(j.log, "cold "+sp.ID+" "+strings.Join(periods, ","))
	return nil
}

// twoSpans is a journal of two hot spans, a (turns 1-2, in January) and
// b (turns 3-4, January and February), turn 2 pinned.
func twoSpans() *journal {
	jan := time.Date(2025, 1, 31, 23, 0, 0, 0, time.UTC)
	turn := func(seq int64, at time.Time, importance float64) Row {
		return Row{Tier: spanfmt.TierHot, Turn: strata.Turn{Seq: seq, Role: strata.RoleUser, Content: fmt.Sprint("turn ", seq), Time: at, Importance: importance}}
	}
	return &journal{
		spans: map[string]Span{
			"a": {PK: 1, ID: "a", Level: 1, First: 1, Last: 2},
			"b": {PK: 2, ID: "b", Level: 1, First: 3, Last: 4},
		},
		rows: map[string][]Row{
			"a": {turn(1, jan, 0), turn(2, jan, 1)},
			"b": {turn(3, jan, 0), turn(4, jan.Add(2*time.Hour), 0)},
		},
	}
}

// TestDemoteColdOrder checks the order the package doc settles: every
// segment is merged before any node names it, and a node's rows are
// slimmed only after it names its segments.
func TestDemoteColdOrder(t *testing.T) {
	j := twoSpans()
	moves, err := Demote(context.Background(), j, []string{"a", "b"}, strata.TierCold, time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"merge 2025-01 3", "merge 2025-02 1", "cold a 2025-01", "slim a 1-2", "cold b 2025-01,2025-02", "slim b 3-4"}
	if !slices.Equal(j.log, want) {
		t.Errorf("primitives called\n%q\nwant\n%q", j.log, want)
	}
	// The pinned turn 2 keeps its row: it is not counted as moved.
	if len(moves) != 2 || moves[0].Turns != 1 || moves[1].Turns != 2 || moves[0].From != strata.TierHot || moves[0].To != strata.TierCold {
		t.Errorf("moves %+v", moves)
	}
}

func TestDemoteWarmSkipsMovedSpans(t *testing.T) {
	j := twoSpans()
	sp := j.spans["b"]
	sp.Tier = spanfmt.TierCold
	j.spans["b"] = sp
	moves, err := Demote(context.Background(), j, []string{"a", "b"}, strata.TierWarm, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"warm a", "slim a 1-2"}; !slices.Equal(j.log, want) {
		t.Errorf("primitives called %q, want %q (b is cold already)", j.log, want)
	}
	if len(moves) != 1 || moves[0].NodeID != "a" {
		t.Errorf("moves %+v, want a's only", moves)
	}
}

func TestCheckDemote(t *testing.T) {
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		to   strata.Tier
		at   time.Time
		code string
	}{
		{strata.TierWarm, time.Time{}, ""},
		{strata.TierCold, at, ""},
		{strata.TierCold, time.Time{}, strata.EINVALID},
		{strata.TierHot, at, strata.EINVALID},
		{strata.TierExpired, at, strata.EINVALID},
	} {
		err := CheckDemote("c", c.to, c.at)
		if got := strata.ErrorCode(err); (err == nil) != (c.code == "") || (err != nil && got != c.code) {
			t.Errorf("CheckDemote(%s, %v) = %v, want code %q", c.to, c.at, err, c.code)
		}
	}
}
