package strata

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// PeriodKind names a calendar period.
type PeriodKind string

// The kinds of calendar period.
const (
	PeriodDay   PeriodKind = "day"
	PeriodWeek  PeriodKind = "week"  // ISO week, Monday to Sunday
	PeriodMonth PeriodKind = "month" // calendar month
	PeriodRange PeriodKind = "range" // any [Start, End) given by the caller
)

// Period is the half-open interval [Start, End) of a calendar period in a
// location. Days, weeks and months start at local midnight, so a day lasts
// 23 or 25 hours across a daylight saving change.
type Period struct {
	Kind  PeriodKind
	Start time.Time // inclusive; in the period's location
	End   time.Time // exclusive
}

// PeriodOf returns the period of the given kind that contains t in loc: for
// PeriodDay the local day, for PeriodWeek the ISO week (Monday 00:00 local
// to the next Monday), for PeriodMonth the calendar month. A nil loc means
// UTC. PeriodOf returns the zero Period for PeriodRange and for unknown
// kinds, since neither is determined by a single instant.
func PeriodOf(kind PeriodKind, t time.Time, loc *time.Location) Period {
	if loc == nil {
		loc = time.UTC
	}
	y, m, d := t.In(loc).Date()
	switch kind {
	case PeriodDay:
		return dayPeriod(y, m, d, loc)
	case PeriodWeek:
		return weekPeriod(y, m, d, loc)
	case PeriodMonth:
		return monthPeriod(y, m, loc)
	}
	return Period{}
}

// Label returns the period's name: "2023-05-08" for a day, "2023-W19" for a
// week (ISO year and week), "2023-05" for a month, and
// "2023-05-08..2023-05-10" for a range (the date of Start, then the date of
// the last instant before End). Label returns "" for a Period of unknown kind.
// ParsePeriod reads every label back.
func (p Period) Label() string {
	switch p.Kind {
	case PeriodDay:
		return p.Start.Format(time.DateOnly)
	case PeriodWeek:
		y, w := p.Start.ISOWeek()
		return fmt.Sprintf("%04d-W%02d", y, w)
	case PeriodMonth:
		return p.Start.Format("2006-01")
	case PeriodRange:
		return p.Start.Format(time.DateOnly) + ".." + p.End.Add(-time.Nanosecond).Format(time.DateOnly)
	}
	return ""
}

// Contains reports whether t lies in [Start, End).
func (p Period) Contains(t time.Time) bool {
	return !t.Before(p.Start) && t.Before(p.End)
}

// Next returns the period of the same kind that starts at p.End. For a
// range it is a range of the same length: the same number of calendar days
// if both ends are local midnights, otherwise the same duration.
func (p Period) Next() Period {
	loc := p.Start.Location()
	switch p.Kind {
	case PeriodDay, PeriodWeek, PeriodMonth:
		return PeriodOf(p.Kind, p.End, loc)
	case PeriodRange:
		if n, ok := p.wholeDays(); ok {
			y, m, d := p.End.In(loc).Date()
			return Period{Kind: PeriodRange, Start: p.End, End: localMidnight(y, m, d+n, loc)}
		}
		return Period{Kind: PeriodRange, Start: p.End, End: p.End.Add(p.End.Sub(p.Start))}
	}
	return Period{}
}

// Prev returns the period of the same kind that ends at p.Start. For a
// range it is a range of the same length, as for Next.
func (p Period) Prev() Period {
	loc := p.Start.Location()
	switch p.Kind {
	case PeriodDay, PeriodWeek, PeriodMonth:
		return PeriodOf(p.Kind, p.Start.Add(-time.Nanosecond), loc)
	case PeriodRange:
		if n, ok := p.wholeDays(); ok {
			y, m, d := p.Start.Date()
			return Period{Kind: PeriodRange, Start: localMidnight(y, m, d-n, loc), End: p.Start}
		}
		return Period{Kind: PeriodRange, Start: p.Start.Add(-p.End.Sub(p.Start)), End: p.Start}
	}
	return Period{}
}

// wholeDays returns the number of calendar days a range spans when both of
// its ends are local midnights in Start's location.
func (p Period) wholeDays() (int, bool) {
	loc := p.Start.Location()
	ys, ms, ds := p.Start.Date()
	ye, me, de := p.End.In(loc).Date()
	if !p.Start.Equal(localMidnight(ys, ms, ds, loc)) || !p.End.Equal(localMidnight(ye, me, de, loc)) {
		return 0, false
	}
	n := int(civilDate(ye, me, de).Sub(civilDate(ys, ms, ds)) / (24 * time.Hour))
	return n, n > 0
}

// Anchor returns the instant that names p's place in a coarser period. For
// a week it is the start of its Thursday, whose year is the week's ISO year
// (the ISO rule); for other kinds it is Start. (The pyramid does not place
// weeks by it: a month level cuts a week at the end of its month, see
// Policy.MonthCut.)
func (p Period) Anchor() time.Time {
	if p.Kind != PeriodWeek {
		return p.Start
	}
	y, m, d := p.Start.Date()
	return localMidnight(y, m, d+3, p.Start.Location())
}

// ParsePeriod reads a period label in loc (nil means UTC): "2023-05-08" (a
// day), "2023-W19" or "2023-w19" (an ISO week), "2023-05" (a month), or
// "2023-05-08..2023-05-10" (a range over both dates, inclusive).
// Surrounding spaces are ignored. ParsePeriod returns EINVALID, naming the
// label and the fault, for anything else.
func ParsePeriod(label string, loc *time.Location) (Period, error) {
	p, err := parsePeriod(label, loc)
	if err != nil {
		return Period{}, err
	}
	return writablePeriod(label, p)
}

// writablePeriod returns p, or an EINVALID error naming text if p starts
// outside the years 0 to 9999. RFC 3339, and so every JSON answer and
// store that holds a time, cannot write a time past the year 9999, and the
// last day, week or month of 9999 ends in 10000: such an end is moved back
// to the last nanosecond of 9999 (in UTC and in p's zone, whichever comes
// first), so "--to 9999-12-31" still means "until the end of time", and
// that nanosecond alone falls outside.
func writablePeriod(text string, p Period) (Period, error) {
	if y := p.Start.Year(); y < 0 || y > 9999 {
		return Period{}, Errorf(EINVALID, "period %q: starts in the year %d, outside 0 to 9999", text, y)
	}
	last := time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	if l := time.Date(9999, 12, 31, 23, 59, 59, 999999999, p.End.Location()); l.Before(last) {
		last = l
	}
	if p.End.After(last) {
		p.End = last.In(p.End.Location())
	}
	return p, nil
}

// parsePeriod is ParsePeriod without the bound on years.
func parsePeriod(label string, loc *time.Location) (Period, error) {
	if loc == nil {
		loc = time.UTC
	}
	s := strings.TrimSpace(label)
	if a, b, ok := strings.Cut(s, ".."); ok {
		a, b = strings.TrimSpace(a), strings.TrimSpace(b)
		ya, ma, da, err := parseDateLabel(label, a)
		if err != nil {
			return Period{}, err
		}
		yb, mb, db, err := parseDateLabel(label, b)
		if err != nil {
			return Period{}, err
		}
		if civilDate(yb, mb, db).Before(civilDate(ya, ma, da)) {
			return Period{}, Errorf(EINVALID, "period %q: end %s is before start %s", label, b, a)
		}
		return Period{Kind: PeriodRange, Start: localMidnight(ya, ma, da, loc), End: localMidnight(yb, mb, db+1, loc)}, nil
	}
	switch {
	case len(s) == 10 && s[4] == '-' && s[7] == '-':
		y, m, d, err := parseDateLabel(label, s)
		if err != nil {
			return Period{}, err
		}
		return dayPeriod(y, m, d, loc), nil
	case len(s) == 8 && s[4] == '-' && (s[5] == 'W' || s[5] == 'w'):
		y, okY := atoiDigits(s[:4])
		w, okW := atoiDigits(s[6:])
		if !okY || !okW {
			break
		}
		n := isoWeeksIn(y)
		if w > n {
			return Period{}, Errorf(EINVALID, "period %q: %04d has %d ISO weeks", label, y, n)
		}
		if w < 1 {
			return Period{}, Errorf(EINVALID, "period %q: week %d is outside 1..%d", label, w, n)
		}
		return isoWeekPeriod(y, w, loc), nil
	case len(s) == 7 && s[4] == '-':
		y, okY := atoiDigits(s[:4])
		m, okM := atoiDigits(s[5:])
		if !okY || !okM {
			break
		}
		if m < 1 || m > 12 {
			return Period{}, Errorf(EINVALID, "period %q: month %d is outside 1..12", label, m)
		}
		return monthPeriod(y, time.Month(m), loc), nil
	}
	return Period{}, Errorf(EINVALID, "period %q: want YYYY-MM-DD, YYYY-Www, YYYY-MM or YYYY-MM-DD..YYYY-MM-DD", label)
}

// parseDateLabel reads s as YYYY-MM-DD; label names the whole input in errors.
func parseDateLabel(label, s string) (int, time.Month, int, error) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, 0, 0, Errorf(EINVALID, "period %q: want YYYY-MM-DD, YYYY-Www, YYYY-MM or YYYY-MM-DD..YYYY-MM-DD", label)
	}
	y, okY := atoiDigits(s[:4])
	m, okM := atoiDigits(s[5:7])
	d, okD := atoiDigits(s[8:])
	if !okY || !okM || !okD {
		return 0, 0, 0, Errorf(EINVALID, "period %q: %q is not a YYYY-MM-DD date", label, s)
	}
	if m < 1 || m > 12 {
		return 0, 0, 0, Errorf(EINVALID, "period %q: month %d is outside 1..12", label, m)
	}
	if n := daysInMonth(y, time.Month(m)); d < 1 || d > n {
		return 0, 0, 0, Errorf(EINVALID, "period %q: day %d is outside 1..%d for %04d-%02d", label, d, n, y, m)
	}
	return y, time.Month(m), d, nil
}

// atoiDigits parses s, which must be ASCII digits only.
func atoiDigits(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// Quarter returns the calendar quarter that contains t, in t's location,
// as "2026-Q1".
func Quarter(t time.Time) string {
	return fmt.Sprintf("%04d-Q%d", t.Year(), (int(t.Month())-1)/3+1)
}

// localMidnight returns the first instant of the local day y-m-d in loc; the
// date is normalized as by time.Date. Where a daylight saving change skips
// midnight, the day starts at the end of the gap.
func localMidnight(y int, m time.Month, d int, loc *time.Location) time.Time {
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	wy, wm, wd := civilDate(y, m, d).Date()
	if ty, tm, td := t.Date(); ty != wy || tm != wm || td != wd {
		// time.Date chose the offset before the gap and so landed on the
		// previous evening; the day begins where that zone ends.
		_, end := t.ZoneBounds()
		if !end.IsZero() {
			t = end
		}
	}
	return t
}

// civilDate returns y-m-d at midnight UTC, for arithmetic on dates alone.
func civilDate(y int, m time.Month, d int) time.Time {
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// daysInMonth returns the number of days in month m of year y.
func daysInMonth(y int, m time.Month) int {
	return civilDate(y, m+1, 0).Day()
}

// isoWeeksIn returns the number of ISO weeks (52 or 53) in ISO year y.
func isoWeeksIn(y int) int {
	_, w := civilDate(y, time.December, 28).ISOWeek()
	return w
}

// dayPeriod returns the local day y-m-d in loc.
func dayPeriod(y int, m time.Month, d int, loc *time.Location) Period {
	return Period{Kind: PeriodDay, Start: localMidnight(y, m, d, loc), End: localMidnight(y, m, d+1, loc)}
}

// weekPeriod returns the ISO week that contains the local day y-m-d in loc.
func weekPeriod(y int, m time.Month, d int, loc *time.Location) Period {
	monday := d - (int(civilDate(y, m, d).Weekday())+6)%7
	return Period{Kind: PeriodWeek, Start: localMidnight(y, m, monday, loc), End: localMidnight(y, m, monday+7, loc)}
}

// isoWeekPeriod returns week w of ISO year y in loc. Week 1 is the week that
// holds January 4.
func isoWeekPeriod(y, w int, loc *time.Location) Period {
	return weekPeriod(y, time.January, 4+7*(w-1), loc)
}

// monthPeriod returns month m of year y in loc.
func monthPeriod(y int, m time.Month, loc *time.Location) Period {
	return Period{Kind: PeriodMonth, Start: localMidnight(y, m, 1, loc), End: localMidnight(y, m+1, 1, loc)}
}

// yearRange returns year y in loc as a range.
func yearRange(y int, loc *time.Location) Period {
	return Period{Kind: PeriodRange, Start: localMidnight(y, time.January, 1, loc), End: localMidnight(y+1, time.January, 1, loc)}
}
