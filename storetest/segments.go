package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/internal/spanfmt"
)

// monthEnd is the time of the first turn of monthCorpus: its first span
// crosses from February into March.
var monthEnd = time.Date(2024, 2, 27, 12, 0, 0, 0, time.UTC)

// monthCorpus stores 30 turns 7 hours apart from monthEnd under three
// level-1 nodes (1-10, from February 27 to March 1; 11-20 and 21-30, in
// March), turns 5 and 25 pinned, and returns them as stored.
func monthCorpus(t *testing.T, s strata.Store, ns, conv string) []strata.Turn {
	t.Helper()
	ensure(t, s, ns, conv)
	in := make([]strata.Turn, 30)
	for i := range in {
		n := i + 1
		in[i] = strata.Turn{ExtID: fmt.Sprintf("m%d", n), Session: 1 + i/10, Role: strata.RoleUser, Name: "Ada",
			Content: fmt.Sprintf("turn %d monthword%d", n, n), Time: monthEnd.Add(time.Duration(i) * 7 * time.Hour), Tokens: 5}
		if i%2 == 1 {
			in[i].Role, in[i].Model = strata.RoleAssistant, "model-x"
		}
		if n == 5 || n == 25 {
			in[i].Importance = 0.9
		}
	}
	appendTurns(t, s, ns, conv, in)
	nodes := []strata.Node{
		mkNode(ns, conv, 1, 1, 10, "first span"),
		mkNode(ns, conv, 1, 11, 20, "second span"),
		mkNode(ns, conv, 1, 21, 30, "third span"),
	}
	for i := range nodes {
		nodes[i].Start, nodes[i].End = in[nodes[i].FirstSeq-1].Time, in[nodes[i].LastSeq-1].Time
	}
	if err := s.PutNodes(ctx(t), ns, conv, nodes); err != nil {
		t.Fatal(err)
	}
	return allTurns(t, s, ns, conv)
}

// segmentsOf returns the segment periods the cold level-1 node first-last
// names, as a dry run of Expire reports them.
func segmentsOf(t *testing.T, s strata.Store, ns, conv string, first, last int64) []string {
	t.Helper()
	ex, err := s.Expire(ctx(t), ns, conv, []string{strata.NodeID(ns, conv, 1, first, last)}, "test", coldAt, true)
	if err != nil || len(ex) != 1 {
		t.Fatalf("dry run of Expire of %d-%d = %+v, %v", first, last, ex, err)
	}
	return ex[0].Segments
}

// testTiersColdMonths: a move to cold writes one archive segment per UTC
// month, a span crossing a month's end names both months, and expiring it
// removes its records from both (the month left empty goes).
func testTiersColdMonths(t *testing.T, s strata.Store) {
	want := monthCorpus(t, s, "ns", "c")
	demote(t, s, "ns", "c", strata.TierCold, [2]int64{1, 10}, [2]int64{11, 20})
	sameTurns(t, "Turns after cold", want, allTurns(t, s, "ns", "c"))
	if got := segmentsOf(t, s, "ns", "c", 1, 10); !slices.Equal(got, []string{"2024-02", "2024-03"}) {
		t.Errorf("span 1-10 names segments %q, want the months 2024-02 and 2024-03", got)
	}
	if got := segmentsOf(t, s, "ns", "c", 11, 20); !slices.Equal(got, []string{"2024-03"}) {
		t.Errorf("span 11-20 names segments %q, want the month 2024-03", got)
	}
	st, err := s.Stats(ctx(t), "ns")
	if err != nil {
		t.Fatal(err)
	}
	if st.Archive.Segments != 2 || st.Archive.Records != 20 {
		t.Errorf("archive stats = %+v, want 20 records in 2 segments (one per month)", st.Archive)
	}
	// Unpinning a turn of a month-segment span writes it to its month.
	if _, err := s.SetImportance(ctx(t), "ns", "c", 5, 0.2); err != nil {
		t.Fatal(err)
	}
	want[4].Importance = 0.2
	sameTurns(t, "Turns after unpinning turn 5", want, allTurns(t, s, "ns", "c"))
	if got := segmentsOf(t, s, "ns", "c", 1, 10); !slices.Equal(got, []string{"2024-02", "2024-03"}) {
		t.Errorf("after unpinning turn 5, span 1-10 names segments %q", got)
	}
	ex, err := s.Expire(ctx(t), "ns", "c", []string{strata.NodeID("ns", "c", 1, 1, 10)}, "test", coldAt, false)
	if err != nil || len(ex) != 1 || !slices.Equal(ex[0].Segments, []string{"2024-02", "2024-03"}) {
		t.Fatalf("Expire of 1-10 = %+v, %v; want one record naming both months", ex, err)
	}
	sameTurns(t, "Turns after expiry", want[10:], allTurns(t, s, "ns", "c"))
	if st, err = s.Stats(ctx(t), "ns"); err != nil {
		t.Fatal(err)
	}
	if st.Archive.Segments != 1 || st.Archive.Records != 10 {
		t.Errorf("archive stats after expiry = %+v, want the 10 records of 11-20 in one segment", st.Archive)
	}
}

// testTiersFullMonth: once a month's segment holds
// spanfmt.MaxMonthBytes (lowered to one byte here), spans of that month
// going cold in a later move go to day segments, and read, pin and expire
// as the others.
func testTiersFullMonth(t *testing.T, s strata.Store) {
	old := spanfmt.MaxMonthBytes
	spanfmt.MaxMonthBytes = 1
	defer func() { spanfmt.MaxMonthBytes = old }()
	want := monthCorpus(t, s, "ns", "c")
	demote(t, s, "ns", "c", strata.TierCold, [2]int64{11, 20})
	demote(t, s, "ns", "c", strata.TierCold, [2]int64{21, 30})
	sameTurns(t, "Turns after cold", want, allTurns(t, s, "ns", "c"))
	if got := segmentsOf(t, s, "ns", "c", 11, 20); !slices.Equal(got, []string{"2024-03"}) {
		t.Errorf("span 11-20 names segments %q, want the month 2024-03", got)
	}
	days := segmentsOf(t, s, "ns", "c", 21, 30)
	if len(days) < 2 || slices.ContainsFunc(days, func(p string) bool { return len(p) != len("2024-03-01") }) {
		t.Errorf("span 21-30, made cold after its month's segment was full, names %q, want its days", days)
	}
	// Turn 25 (pinned) is unpinned: its record goes to its day.
	if _, err := s.SetImportance(ctx(t), "ns", "c", 25, 0.2); err != nil {
		t.Fatal(err)
	}
	want[24].Importance = 0.2
	sameTurns(t, "Turns after unpinning turn 25", want, allTurns(t, s, "ns", "c"))
	if got := segmentsOf(t, s, "ns", "c", 21, 30); !slices.Equal(got, days) {
		t.Errorf("after unpinning turn 25, span 21-30 names %q, want %q", got, days)
	}
	if _, err := s.Expire(ctx(t), "ns", "c", []string{strata.NodeID("ns", "c", 1, 21, 30)}, "test", coldAt, false); err != nil {
		t.Fatal(err)
	}
	sameTurns(t, "Turns after expiry", want[:20], allTurns(t, s, "ns", "c"))
}

// Legacy is what RunDaySegments needs of a store beyond the Store
// contract, to lay its archive out as versions before month segments did.
type Legacy struct {
	// Blobs holds the store's archive segments.
	Blobs archive.Blobs
	// SetPeriods sets the segment periods the level-1 node id names.
	SetPeriods func(ctx context.Context, ns, conv, id string, periods []string) error
	// PutSegment records what the segment of period holds (no row when
	// info.Records is 0), as the store does after writing one.
	PutSegment func(ctx context.Context, ns, conv, period string, info archive.Info) error
	// Orphans says whether a move to cold killed before its commit can
	// leave records in segments (a store that writes them outside the
	// transaction of the move); RunDaySegments then adds such records, as
	// an earlier version left them in day segments.
	Orphans bool
}

// toDays rewrites the cold span first-last, whose records are in month
// segments, as an earlier version left it: its records in the segments of
// their UTC days, and the node naming those days.
func (l Legacy) toDays(t *testing.T, s strata.Store, ns, conv string, first, last int64, turns []strata.Turn) {
	t.Helper()
	c := ctx(t)
	seg := archive.Segments{Blobs: l.Blobs}
	months := segmentsOf(t, s, ns, conv, first, last)
	byDay := map[string][]archive.Record{}
	for _, m := range months {
		recs, err := seg.Read(c, archive.Key(ns, conv, m), first, last)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			d := archive.DayPeriod(turns[r.Seq-1].Time)
			byDay[d] = append(byDay[d], archive.Record{Seq: r.Seq, Line: slices.Clone(r.Line)})
		}
		info, err := seg.Remove(c, archive.Key(ns, conv, m), first, last)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.PutSegment(c, ns, conv, m, info); err != nil {
			t.Fatal(err)
		}
	}
	var days []string
	for d, recs := range byDay {
		info, err := seg.Merge(c, archive.Key(ns, conv, d), recs)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.PutSegment(c, ns, conv, d, info); err != nil {
			t.Fatal(err)
		}
		days = append(days, d)
	}
	slices.Sort(days)
	if err := l.SetPeriods(c, ns, conv, strata.NodeID(ns, conv, 1, first, last), days); err != nil {
		t.Fatal(err)
	}
	if got := segmentsOf(t, s, ns, conv, first, last); !slices.Equal(got, days) {
		t.Fatalf("after the rewrite span %d-%d names %q, want %q", first, last, got, days)
	}
}

// orphans writes records of turns (of a span that is not cold) into the
// segments of their UTC days, as a move to cold by an earlier version,
// killed before its commit, left them: the node names none of them.
func (l Legacy) orphans(t *testing.T, ns, conv string, turns []strata.Turn) {
	t.Helper()
	c := ctx(t)
	seg := archive.Segments{Blobs: l.Blobs}
	byDay := map[string][]archive.Record{}
	for i := range turns {
		// A different text, so that reading the orphan instead of the
		// span's own record shows.
		stale := turns[i]
		stale.Content = fmt.Sprintf("stale copy of turn %d", stale.Seq)
		rec, err := spanfmt.Record(&stale)
		if err != nil {
			t.Fatal(err)
		}
		d := archive.DayPeriod(turns[i].Time)
		byDay[d] = append(byDay[d], rec)
	}
	for d, recs := range byDay {
		if _, err := seg.Merge(c, archive.Key(ns, conv, d), recs); err != nil {
			t.Fatal(err)
		}
	}
}

// blobCount returns the number of segments kept under the conversation's
// prefix.
func (l Legacy) blobCount(t *testing.T, ns, conv string) int {
	t.Helper()
	periods, err := archive.Periods(ctx(t), l.Blobs, ns, conv)
	if err != nil {
		t.Fatal(err)
	}
	return len(periods)
}

// statsMatch fails unless st counts the segments the archive of conv
// holds: all of them, except those only orphan records went to (no row
// of the segments table describes them until a scrub).
func statsMatch(t *testing.T, what string, st strata.Stats, l Legacy, conv string) {
	t.Helper()
	n := l.blobCount(t, "ns", conv)
	if st.Archive.Segments != n && !(l.Orphans && st.Archive.Segments < n) {
		t.Errorf("%s: stats count %d segments, the archive holds %d", what, st.Archive.Segments, n)
	}
}

// RunDaySegments checks that a store whose archive holds day segments,
// as versions before month segments wrote them (one per conversation and
// UTC day, named by the nodes of the spans made cold then), reads them,
// moves more spans to cold (into month segments), rewrites a turn of a
// day-segment span in its day segment when it is unpinned, expires spans
// of either kind, gives its turns back on a pyramid reset, and deletes
// every segment with the conversation, with no turn lost. open returns a
// new, empty store and what the test needs of it beyond the contract.
func RunDaySegments(t *testing.T, open func(t *testing.T) (strata.Store, Legacy)) {
	t.Helper()
	t.Run("ReadDemoteExpire", func(t *testing.T) {
		s, l := open(t)
		testDaySegmentsReadDemoteExpire(t, s, l)
	})
	t.Run("ResetPyramid", func(t *testing.T) {
		s, l := open(t)
		testDaySegmentsReset(t, s, l)
	})
}

// daySegmentsSetup makes span 1-10 cold in day segments (and, where a
// killed move can leave them, orphan records of span 11-20 in day
// segments) and then moves spans 11-20 and 21-30 to cold with the new
// code. It returns the conversation's turns.
func daySegmentsSetup(t *testing.T, s strata.Store, l Legacy, conv string) []strata.Turn {
	t.Helper()
	want := monthCorpus(t, s, "ns", conv)
	demote(t, s, "ns", conv, strata.TierCold, [2]int64{1, 10})
	l.toDays(t, s, "ns", conv, 1, 10, want)
	sameTurns(t, "Turns read from day segments", want, allTurns(t, s, "ns", conv))
	if l.Orphans {
		l.orphans(t, "ns", conv, want[10:20])
	}
	demote(t, s, "ns", conv, strata.TierWarm, [2]int64{11, 20})
	demote(t, s, "ns", conv, strata.TierCold, [2]int64{11, 20}, [2]int64{21, 30})
	sameTurns(t, "Turns after more spans went cold", want, allTurns(t, s, "ns", conv))
	if got := segmentsOf(t, s, "ns", conv, 11, 20); !slices.Equal(got, []string{"2024-03"}) {
		t.Errorf("span 11-20 went cold into segments %q, want the month 2024-03", got)
	}
	if got := segmentsOf(t, s, "ns", conv, 1, 10); !slices.Equal(got, []string{"2024-02-27", "2024-02-28", "2024-02-29", "2024-03-01"}) {
		t.Errorf("span 1-10 names %q, want its four days", got)
	}
	return want
}

// testDaySegmentsReadDemoteExpire rewrites turns of the day-segment span
// in their day segments, expires spans of both kinds and deletes the
// conversation.
func testDaySegmentsReadDemoteExpire(t *testing.T, s strata.Store, l Legacy) {
	want := daySegmentsSetup(t, s, l, "c")
	// Turn 5 (pinned, in the day-segment span) is unpinned: its record
	// goes to its day's segment, which the span names already.
	if _, err := s.SetImportance(ctx(t), "ns", "c", 5, 0.3); err != nil {
		t.Fatal(err)
	}
	want[4].Importance = 0.3
	// Turn 12 (a stub of a month-segment span) changes importance.
	if _, err := s.SetImportance(ctx(t), "ns", "c", 12, 0.4); err != nil {
		t.Fatal(err)
	}
	want[11].Importance = 0.4
	sameTurns(t, "Turns after importance changes", want, allTurns(t, s, "ns", "c"))
	if got := segmentsOf(t, s, "ns", "c", 1, 10); len(got) != 4 {
		t.Errorf("after unpinning turn 5, span 1-10 names %q, want its four days", got)
	}
	// Pinned again and back: whole in its row, then in its day segment.
	for _, imp := range []float64{0.95, 0.3} {
		if _, err := s.SetImportance(ctx(t), "ns", "c", 5, imp); err != nil {
			t.Fatal(err)
		}
	}
	sameTurns(t, "Turns after pinning and unpinning turn 5", want, allTurns(t, s, "ns", "c"))

	st, err := s.Stats(ctx(t), "ns")
	if err != nil {
		t.Fatal(err)
	}
	statsMatch(t, "before expiry", st, l, "c")
	if st.Archive.Records < 29 { // 30 turns, 25 pinned
		t.Errorf("archive stats = %+v, want every unpinned turn's record", st.Archive)
	}

	// Expiring the day-segment span leaves the others whole.
	ex, err := s.Expire(ctx(t), "ns", "c", []string{strata.NodeID("ns", "c", 1, 1, 10)}, "test", coldAt, false)
	if err != nil || len(ex) != 1 || ex[0].Turns != 10 || len(ex[0].Segments) != 4 {
		t.Fatalf("Expire of the day-segment span = %+v, %v", ex, err)
	}
	sameTurns(t, "Turns after expiring the day-segment span", want[10:], allTurns(t, s, "ns", "c"))
	// Then a month-segment span.
	ex, err = s.Expire(ctx(t), "ns", "c", []string{strata.NodeID("ns", "c", 1, 11, 20)}, "test", coldAt, false)
	if err != nil || len(ex) != 1 || !slices.Equal(ex[0].Segments, []string{"2024-03"}) {
		t.Fatalf("Expire of a month-segment span = %+v, %v", ex, err)
	}
	sameTurns(t, "Turns after expiring a month-segment span", want[20:], allTurns(t, s, "ns", "c"))
	if st, err = s.Stats(ctx(t), "ns"); err != nil {
		t.Fatal(err)
	}
	statsMatch(t, "after expiry", st, l, "c")
	if _, err := s.DeleteConversation(ctx(t), "ns", "c", "test", coldAt); err != nil {
		t.Fatal(err)
	}
	if n := l.blobCount(t, "ns", "c"); n != 0 {
		t.Errorf("%d segments left after the conversation was deleted", n)
	}
}

// testDaySegmentsReset gives the turns of both kinds of segments back on
// a pyramid reset.
func testDaySegmentsReset(t *testing.T, s strata.Store, l Legacy) {
	want := daySegmentsSetup(t, s, l, "r")
	if _, err := s.ResetPyramid(ctx(t), "ns", "r", "p"); err != nil {
		t.Fatal(err)
	}
	sameTurns(t, "Turns after a pyramid reset", want, allTurns(t, s, "ns", "r"))
	if n := l.blobCount(t, "ns", "r"); n != 0 {
		t.Errorf("%d segments left after a pyramid reset", n)
	}
	st, err := s.Stats(ctx(t), "ns")
	if err != nil {
		t.Fatal(err)
	}
	statsMatch(t, "after the reset", st, l, "r")
}
