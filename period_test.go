package strata

import (
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones below, wherever the system lacks them
)

// loadZone returns the named location or fails the test.
func loadZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load location %s: %v", name, err)
	}
	return loc
}

// periodAt returns y-m-d hh:mm in loc.
func periodAt(y int, m time.Month, d, hh, mm int, loc *time.Location) time.Time {
	return time.Date(y, m, d, hh, mm, 0, 0, loc)
}

func TestPeriodOf(t *testing.T) {
	ny := loadZone(t, "America/New_York")
	berlin := loadZone(t, "Europe/Berlin")
	tests := []struct {
		name       string
		kind       PeriodKind
		t          time.Time
		loc        *time.Location
		label      string
		start, end string // RFC 3339, in loc
		hours      float64
	}{
		{"day", PeriodDay, periodAt(2023, 5, 8, 15, 4, time.UTC), nil, "2023-05-08", "2023-05-08T00:00:00Z", "2023-05-09T00:00:00Z", 24},
		{"day in loc", PeriodDay, periodAt(2023, 5, 8, 2, 0, time.UTC), ny, "2023-05-07", "2023-05-07T00:00:00-04:00", "2023-05-08T00:00:00-04:00", 24},
		{"spring forward ny", PeriodDay, periodAt(2023, 3, 12, 12, 0, ny), ny, "2023-03-12", "2023-03-12T00:00:00-05:00", "2023-03-13T00:00:00-04:00", 23},
		{"fall back ny", PeriodDay, periodAt(2023, 11, 5, 12, 0, ny), ny, "2023-11-05", "2023-11-05T00:00:00-04:00", "2023-11-06T00:00:00-05:00", 25},
		{"spring forward berlin", PeriodDay, periodAt(2023, 3, 26, 12, 0, berlin), berlin, "2023-03-26", "2023-03-26T00:00:00+01:00", "2023-03-27T00:00:00+02:00", 23},
		{"fall back berlin", PeriodDay, periodAt(2023, 10, 29, 2, 30, berlin), berlin, "2023-10-29", "2023-10-29T00:00:00+02:00", "2023-10-30T00:00:00+01:00", 25},
		{"week", PeriodWeek, periodAt(2023, 5, 10, 9, 0, time.UTC), nil, "2023-W19", "2023-05-08T00:00:00Z", "2023-05-15T00:00:00Z", 168},
		{"week sunday", PeriodWeek, periodAt(2023, 5, 14, 23, 59, time.UTC), nil, "2023-W19", "2023-05-08T00:00:00Z", "2023-05-15T00:00:00Z", 168},
		{"week monday", PeriodWeek, periodAt(2023, 5, 15, 0, 0, time.UTC), nil, "2023-W20", "2023-05-15T00:00:00Z", "2023-05-22T00:00:00Z", 168},
		{"jan 3 2021 in 2020-W53", PeriodWeek, periodAt(2021, 1, 3, 12, 0, time.UTC), nil, "2020-W53", "2020-12-28T00:00:00Z", "2021-01-04T00:00:00Z", 168},
		{"jan 1 2023 in 2022-W52", PeriodWeek, periodAt(2023, 1, 1, 12, 0, time.UTC), nil, "2022-W52", "2022-12-26T00:00:00Z", "2023-01-02T00:00:00Z", 168},
		{"dec 29 2025 in 2026-W01", PeriodWeek, periodAt(2025, 12, 29, 0, 0, time.UTC), nil, "2026-W01", "2025-12-29T00:00:00Z", "2026-01-05T00:00:00Z", 168},
		{"dec 31 2024 in 2025-W01", PeriodWeek, periodAt(2024, 12, 31, 0, 0, time.UTC), nil, "2025-W01", "2024-12-30T00:00:00Z", "2025-01-06T00:00:00Z", 168},
		{"dec 31 2026 in 2026-W53", PeriodWeek, periodAt(2026, 12, 31, 0, 0, time.UTC), nil, "2026-W53", "2026-12-28T00:00:00Z", "2027-01-04T00:00:00Z", 168},
		{"week over dst ny", PeriodWeek, periodAt(2023, 3, 12, 12, 0, ny), ny, "2023-W10", "2023-03-06T00:00:00-05:00", "2023-03-13T00:00:00-04:00", 167},
		{"week over dst berlin", PeriodWeek, periodAt(2023, 10, 29, 12, 0, berlin), berlin, "2023-W43", "2023-10-23T00:00:00+02:00", "2023-10-30T00:00:00+01:00", 169},
		{"month", PeriodMonth, periodAt(2023, 5, 31, 23, 59, time.UTC), nil, "2023-05", "2023-05-01T00:00:00Z", "2023-06-01T00:00:00Z", 744},
		{"february leap", PeriodMonth, periodAt(2024, 2, 10, 0, 0, time.UTC), nil, "2024-02", "2024-02-01T00:00:00Z", "2024-03-01T00:00:00Z", 696},
		{"december", PeriodMonth, periodAt(2023, 12, 10, 0, 0, time.UTC), nil, "2023-12", "2023-12-01T00:00:00Z", "2024-01-01T00:00:00Z", 744},
		{"month over dst berlin", PeriodMonth, periodAt(2023, 3, 1, 0, 0, berlin), berlin, "2023-03", "2023-03-01T00:00:00+01:00", "2023-04-01T00:00:00+02:00", 743},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := PeriodOf(tt.kind, tt.t, tt.loc)
			if p.Kind != tt.kind {
				t.Errorf("kind=%q, want %q", p.Kind, tt.kind)
			}
			if got := p.Label(); got != tt.label {
				t.Errorf("label=%q, want %q", got, tt.label)
			}
			if got := p.Start.Format(time.RFC3339); got != tt.start {
				t.Errorf("start=%s, want %s", got, tt.start)
			}
			if got := p.End.Format(time.RFC3339); got != tt.end {
				t.Errorf("end=%s, want %s", got, tt.end)
			}
			if got := p.End.Sub(p.Start).Hours(); got != tt.hours {
				t.Errorf("length=%vh, want %vh", got, tt.hours)
			}
			if !p.Contains(tt.t) {
				t.Errorf("period %s does not contain %s", p.Label(), tt.t)
			}
		})
	}
}

func TestPeriodOfUnknownKind(t *testing.T) {
	for _, kind := range []PeriodKind{PeriodRange, "", "fortnight"} {
		if p := PeriodOf(kind, time.Now(), nil); p != (Period{}) {
			t.Errorf("PeriodOf(%q)=%+v, want the zero Period", kind, p)
		}
	}
	if got := (Period{}).Label(); got != "" {
		t.Errorf("zero Period label=%q, want empty", got)
	}
}

// TestPeriodSkippedMidnight checks days whose midnight does not exist:
// clocks in Sao Paulo went from 00:00 to 01:00 on 2018-11-04.
func TestPeriodSkippedMidnight(t *testing.T) {
	tests := []struct {
		zone  string
		t     time.Time
		start string
	}{
		{"America/Sao_Paulo", time.Date(2018, 11, 4, 15, 0, 0, 0, time.UTC), "2018-11-04T01:00:00-02:00"},
		{"America/Havana", time.Date(2023, 3, 12, 15, 0, 0, 0, time.UTC), "2023-03-12T01:00:00-04:00"},
		{"Asia/Beirut", time.Date(2023, 3, 26, 15, 0, 0, 0, time.UTC), "2023-03-26T01:00:00+03:00"},
	}
	for _, tt := range tests {
		t.Run(tt.zone, func(t *testing.T) {
			loc := loadZone(t, tt.zone)
			p := PeriodOf(PeriodDay, tt.t, loc)
			if got := p.Start.Format(time.RFC3339); got != tt.start {
				t.Errorf("start=%s, want %s", got, tt.start)
			}
			if got := p.Prev().End; !got.Equal(p.Start) {
				t.Errorf("previous day ends at %s, want %s", got, p.Start)
			}
			if got := p.Label(); got != tt.t.In(loc).Format(time.DateOnly) {
				t.Errorf("label=%s", got)
			}
		})
	}
}

func TestPeriodLabelRoundTrip(t *testing.T) {
	ny := loadZone(t, "America/New_York")
	berlin := loadZone(t, "Europe/Berlin")
	labels := []string{
		"2023-05-08", "2024-02-29", "2023-03-12", "2023-11-05", "2023-10-29",
		"2023-W01", "2023-W19", "2023-W52", "2020-W53", "2026-W53", "2015-W53", "2025-W01", "2026-W01",
		"2023-01", "2023-05", "2023-12", "2024-02",
		"2023-05-08..2023-05-10", "2023-05-08..2023-05-08", "2023-03-10..2023-03-14", "2023-12-30..2024-01-02",
	}
	for _, loc := range []*time.Location{time.UTC, ny, berlin} {
		for _, label := range labels {
			t.Run(loc.String()+"/"+label, func(t *testing.T) {
				p, err := ParsePeriod(label, loc)
				if err != nil {
					t.Fatal(err)
				}
				if got := p.Label(); got != label {
					t.Errorf("label=%q, want %q", got, label)
				}
				if !p.Start.Before(p.End) {
					t.Errorf("start %s not before end %s", p.Start, p.End)
				}
				if p.Start.Location() != loc {
					t.Errorf("start in %s, want %s", p.Start.Location(), loc)
				}
				if h, m, s := p.Start.Clock(); h != 0 || m != 0 || s != 0 {
					t.Errorf("start %s is not midnight", p.Start)
				}
				if p.Kind != PeriodRange {
					if q := PeriodOf(p.Kind, p.Start, loc); q != p {
						t.Errorf("PeriodOf(start)=%s..%s, want %s..%s", q.Start, q.End, p.Start, p.End)
					}
					if q := PeriodOf(p.Kind, p.End.Add(-time.Nanosecond), loc); q != p {
						t.Errorf("PeriodOf(end-1ns)=%s, want %s", q.Label(), label)
					}
				}
			})
		}
	}
}

func TestParsePeriod(t *testing.T) {
	tests := []struct {
		in    string
		kind  PeriodKind
		label string
		err   string // substring of the error; "" for none
	}{
		{"2023-05-08", PeriodDay, "2023-05-08", ""},
		{" 2023-05-08 ", PeriodDay, "2023-05-08", ""},
		{"2023-W19", PeriodWeek, "2023-W19", ""},
		{"2023-w19", PeriodWeek, "2023-W19", ""},
		{"2020-W53", PeriodWeek, "2020-W53", ""},
		{"2023-05", PeriodMonth, "2023-05", ""},
		{"2023-05-08..2023-05-10", PeriodRange, "2023-05-08..2023-05-10", ""},
		{"2023-05-08 .. 2023-05-10", PeriodRange, "2023-05-08..2023-05-10", ""},
		{"2023-W54", "", "", `period "2023-W54": 2023 has 52 ISO weeks`},
		{"2023-W53", "", "", `period "2023-W53": 2023 has 52 ISO weeks`},
		{"2023-W00", "", "", `period "2023-W00": week 0 is outside 1..52`},
		{"2023-13", "", "", `period "2023-13": month 13 is outside 1..12`},
		{"2023-00", "", "", `period "2023-00": month 0 is outside 1..12`},
		{"2023-02-29", "", "", `period "2023-02-29": day 29 is outside 1..28 for 2023-02`},
		{"2023-04-31", "", "", `day 31 is outside 1..30 for 2023-04`},
		{"2023-13-01", "", "", `month 13 is outside 1..12`},
		{"May", "", "", `period "May": want YYYY-MM-DD, YYYY-Www, YYYY-MM or YYYY-MM-DD..YYYY-MM-DD`},
		{"", "", "", `period "": want`},
		{"2023", "", "", `want YYYY-MM-DD`},
		{"2023-W5", "", "", `want YYYY-MM-DD`},
		{"2023-5-8", "", "", `want YYYY-MM-DD`},
		{"2023-ab-08", "", "", `"2023-ab-08" is not a YYYY-MM-DD date`},
		{"2023-05-10..2023-05-08", "", "", `end 2023-05-08 is before start 2023-05-10`},
		{"2023-05-10..2023-05", "", "", `want YYYY-MM-DD`},
		{"2023-05-10..2023-02-30", "", "", `day 30 is outside 1..28`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, err := ParsePeriod(tt.in, nil)
			if tt.err != "" {
				if err == nil {
					t.Fatalf("got %s, want error %q", p.Label(), tt.err)
				}
				if ErrorCode(err) != EINVALID {
					t.Errorf("code=%q, want %q", ErrorCode(err), EINVALID)
				}
				if !strings.Contains(err.Error(), tt.err) {
					t.Errorf("error=%q, want it to contain %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Kind != tt.kind || p.Label() != tt.label {
				t.Errorf("got %s %s, want %s %s", p.Kind, p.Label(), tt.kind, tt.label)
			}
			if p.Start.Location() != time.UTC {
				t.Errorf("nil location gave %s, want UTC", p.Start.Location())
			}
		})
	}
}

func TestPeriodNextPrev(t *testing.T) {
	ny := loadZone(t, "America/New_York")
	berlin := loadZone(t, "Europe/Berlin")
	tests := []struct {
		label      string
		loc        *time.Location
		next, prev string
	}{
		{"2023-05-08", time.UTC, "2023-05-09", "2023-05-07"},
		{"2023-03-11", ny, "2023-03-12", "2023-03-10"},
		{"2023-03-12", ny, "2023-03-13", "2023-03-11"},
		{"2023-10-29", berlin, "2023-10-30", "2023-10-28"},
		{"2023-12-31", time.UTC, "2024-01-01", "2023-12-30"},
		{"2020-W53", time.UTC, "2021-W01", "2020-W52"},
		{"2026-W01", berlin, "2026-W02", "2025-W52"},
		{"2023-W10", ny, "2023-W11", "2023-W09"},
		{"2023-12", time.UTC, "2024-01", "2023-11"},
		{"2023-03", berlin, "2023-04", "2023-02"},
		{"2023-05-08..2023-05-10", time.UTC, "2023-05-11..2023-05-13", "2023-05-05..2023-05-07"},
		{"2023-03-10..2023-03-12", ny, "2023-03-13..2023-03-15", "2023-03-07..2023-03-09"},
		{"2023-10-28..2023-10-29", berlin, "2023-10-30..2023-10-31", "2023-10-26..2023-10-27"},
	}
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			p, err := ParsePeriod(tt.label, tt.loc)
			if err != nil {
				t.Fatal(err)
			}
			next, prev := p.Next(), p.Prev()
			if next.Label() != tt.next || prev.Label() != tt.prev {
				t.Errorf("next=%s prev=%s, want %s %s", next.Label(), prev.Label(), tt.next, tt.prev)
			}
			if !next.Start.Equal(p.End) || !prev.End.Equal(p.Start) {
				t.Errorf("not contiguous: prev ends %s, p is %s..%s, next starts %s", prev.End, p.Start, p.End, next.Start)
			}
			if next.Kind != p.Kind || prev.Kind != p.Kind {
				t.Errorf("kinds %s %s, want %s", next.Kind, prev.Kind, p.Kind)
			}
			if got := next.Prev(); got != p {
				t.Errorf("next.Prev()=%s, want %s", got.Label(), p.Label())
			}
			if got := prev.Next(); got != p {
				t.Errorf("prev.Next()=%s, want %s", got.Label(), p.Label())
			}
		})
	}
}

// TestPeriodWalk steps a day, a week and a month at a time over four years
// in several zones and checks that the periods tile time.
func TestPeriodWalk(t *testing.T) {
	for _, name := range []string{"UTC", "America/New_York", "Europe/Berlin", "America/Sao_Paulo", "Australia/Lord_Howe"} {
		loc := loadZone(t, name)
		for _, kind := range []PeriodKind{PeriodDay, PeriodWeek, PeriodMonth} {
			p := PeriodOf(kind, time.Date(2018, 1, 1, 0, 0, 0, 0, loc), loc)
			stop := time.Date(2022, 1, 1, 0, 0, 0, 0, loc)
			for p.Start.Before(stop) {
				next := p.Next()
				if !next.Start.Equal(p.End) || !p.Start.Before(p.End) {
					t.Fatalf("%s %s: %s..%s then %s..%s", name, kind, p.Start, p.End, next.Start, next.End)
				}
				if got, err := ParsePeriod(p.Label(), loc); err != nil || got != p {
					t.Fatalf("%s: ParsePeriod(%q)=%s, %v", name, p.Label(), got.Label(), err)
				}
				if mid := p.Start.Add(p.End.Sub(p.Start) / 2); PeriodOf(kind, mid, loc) != p {
					t.Fatalf("%s: PeriodOf(%s) is not %s", name, mid, p.Label())
				}
				p = next
			}
		}
	}
}

func TestPeriodRangeOfDuration(t *testing.T) {
	start := time.Date(2023, 5, 8, 10, 0, 0, 0, time.UTC)
	p := Period{Kind: PeriodRange, Start: start, End: start.Add(90 * time.Minute)}
	if got := p.Next(); !got.Start.Equal(p.End) || got.End.Sub(got.Start) != 90*time.Minute {
		t.Errorf("next=%s..%s", got.Start, got.End)
	}
	if got := p.Prev(); !got.End.Equal(p.Start) || got.End.Sub(got.Start) != 90*time.Minute {
		t.Errorf("prev=%s..%s", got.Start, got.End)
	}
	if got := p.Label(); got != "2023-05-08..2023-05-08" {
		t.Errorf("label=%s", got)
	}
}

func TestPeriodContains(t *testing.T) {
	p, err := ParsePeriod("2023-05-08", nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		t    time.Time
		want bool
	}{
		{p.Start, true},
		{p.Start.Add(-time.Nanosecond), false},
		{p.End.Add(-time.Nanosecond), true},
		{p.End, false},
		{time.Date(2023, 5, 8, 1, 0, 0, 0, loadZone(t, "Europe/Berlin")), false}, // 23:00 UTC on May 7
	}
	for _, tt := range tests {
		if got := p.Contains(tt.t); got != tt.want {
			t.Errorf("Contains(%s)=%v, want %v", tt.t, got, tt.want)
		}
	}
}

func TestPeriodAnchor(t *testing.T) {
	berlin := loadZone(t, "Europe/Berlin")
	tests := []struct {
		label  string
		anchor string // the anchor's date
		month  string // the month that holds the anchor
	}{
		{"2023-W22", "2023-06-01", "2023-06"}, // May 29 to June 4: June
		{"2023-W26", "2023-06-29", "2023-06"}, // June 26 to July 2: June
		{"2023-W35", "2023-08-31", "2023-08"}, // August 28 to September 3: August
		{"2020-W53", "2020-12-31", "2020-12"}, // December 28 to January 3: 2020
		{"2026-W01", "2026-01-01", "2026-01"}, // December 29 to January 4: 2026
		{"2023-W13", "2023-03-30", "2023-03"}, // over the Berlin change to summer time
		{"2023-05-08", "2023-05-08", "2023-05"},
		{"2023-05", "2023-05-01", "2023-05"},
		{"2023-05-30..2023-06-02", "2023-05-30", "2023-05"},
	}
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			p, err := ParsePeriod(tt.label, berlin)
			if err != nil {
				t.Fatal(err)
			}
			a := p.Anchor()
			if got := a.Format(time.DateOnly); got != tt.anchor {
				t.Errorf("anchor=%s, want %s", got, tt.anchor)
			}
			if h, m, _ := a.Clock(); h != 0 || m != 0 {
				t.Errorf("anchor %s is not local midnight", a)
			}
			if got := PeriodOf(PeriodMonth, a, berlin).Label(); got != tt.month {
				t.Errorf("month=%s, want %s", got, tt.month)
			}
			if !p.Contains(a) {
				t.Errorf("%s does not contain its anchor %s", tt.label, a)
			}
		})
	}
}

func TestQuarter(t *testing.T) {
	ny := loadZone(t, "America/New_York")
	tests := []struct {
		t    time.Time
		want string
	}{
		{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "2026-Q1"},
		{time.Date(2026, 3, 31, 23, 59, 0, 0, time.UTC), "2026-Q1"},
		{time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), "2026-Q2"},
		{time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC), "2026-Q2"},
		{time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC), "2026-Q3"},
		{time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), "2026-Q4"},
		{time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), "2026-Q4"},
		{time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC).In(ny), "2025-Q4"}, // in t's location
	}
	for _, tt := range tests {
		if got := Quarter(tt.t); got != tt.want {
			t.Errorf("Quarter(%s)=%s, want %s", tt.t, got, tt.want)
		}
	}
}
