package strata

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestFindTimes(t *testing.T) {
	ny := loadZone(t, "America/New_York")
	wed := time.Date(2023, 5, 10, 12, 0, 0, 0, time.UTC) // a Wednesday in 2023-W19
	tests := []struct {
		query string
		ref   time.Time
		loc   *time.Location
		want  []string // "text=label", in order
	}{
		// Questions in the style of LoCoMo.
		{"What did Melanie tell Caroline on 25 May 2023?", wed, nil, []string{"25 May 2023=2023-05-25"}},
		{"When did Caroline go to the LGBTQ support group?", wed, nil, nil},
		{"What happened last week?", wed, nil, []string{"last week=2023-W18"}},
		{"What did we talk about in March?", wed, nil, []string{"March=2023-03"}},
		{"What did we talk about in March?", time.Date(2023, 2, 10, 0, 0, 0, 0, time.UTC), nil, []string{"March=2022-03"}},
		{"What did Melanie paint last year?", wed, nil, []string{"last year=2022-01-01..2022-12-31"}},
		{"Where did Caroline move from 4 years ago?", wed, nil, []string{"4 years ago=2019-01-01..2019-12-31"}},
		{"What did Caroline do on 9 June 2023 and last Friday?", wed, nil, []string{"9 June 2023=2023-06-09", "last Friday=2023-05-05"}},

		// Resolution happens in loc: 00:30 UTC is the previous evening in New York.
		{"What did I say yesterday?", time.Date(2023, 5, 8, 0, 30, 0, 0, time.UTC), ny, []string{"yesterday=2023-05-06"}},
		{"What did I say yesterday?", time.Date(2023, 5, 8, 0, 30, 0, 0, time.UTC), nil, []string{"yesterday=2023-05-07"}},

		// The verb "may".
		{"may I ask what you did?", wed, nil, nil},
		{"May I ask what you did?", wed, nil, nil},
		{"I May 2023", wed, nil, []string{"May 2023=2023-05"}},
		{"all 25 may come", wed, nil, nil},
		{"what happened in may", wed, nil, []string{"may=2023-05"}},
		{"what happened on may 5", wed, nil, []string{"may 5=2023-05-05"}},

		// Explicit dates.
		{"2023-05-25", wed, nil, []string{"2023-05-25=2023-05-25"}},
		{"at 2023-05-25T10:00:00Z sharp", wed, nil, []string{"2023-05-25T10:00:00Z=2023-05-25"}},
		{"25th May 2023", wed, nil, []string{"25th May 2023=2023-05-25"}},
		{"on 25 May, 2023, we met", wed, nil, []string{"25 May, 2023=2023-05-25"}},
		{"on May 25, 2023, we met", wed, nil, []string{"May 25, 2023=2023-05-25"}},
		{"May 25th 2023", wed, nil, []string{"May 25th 2023=2023-05-25"}},
		{"the 25th of May 2023", wed, nil, []string{"the 25th of May 2023=2023-05-25"}},
		{"Thursday, 25 May 2023", wed, nil, []string{"Thursday, 25 May 2023=2023-05-25"}},
		{"on Sept. 5, 2022", wed, nil, []string{"Sept. 5, 2022=2022-09-05"}},
		{"on Sep 5 2022", wed, nil, []string{"Sep 5 2022=2022-09-05"}},
		{"on 1 JANUARY 2000", wed, nil, []string{"1 JANUARY 2000=2000-01-01"}},
		{"on May 25", wed, nil, []string{"May 25=2022-05-25"}},
		{"on 25 May", wed, nil, []string{"25 May=2022-05-25"}},
		{"on May 10", wed, nil, []string{"May 10=2023-05-10"}},
		{"on 29 Feb", wed, nil, []string{"29 Feb=2020-02-29"}},
		{"between May 1 and May 5", wed, nil, []string{"May 1=2023-05-01", "May 5=2023-05-05"}},
		{"31 February 2023", wed, nil, nil},
		{"June 31, 2023", wed, nil, nil},
		{"on 30 Feb", wed, nil, nil},
		{"2023-02-30", wed, nil, nil},
		{"5/25/2023", wed, nil, nil},
		{"25.05.2023", wed, nil, nil},
		{"May 5-7", wed, nil, nil},
		{"2023-05-25,2023-05-26", wed, nil, []string{"2023-05-25=2023-05-25", "2023-05-26=2023-05-26"}},
		{"2023-05-25-01", wed, nil, nil},
		{"2023-05-25x", wed, nil, nil},

		// Days.
		{"today", wed, nil, []string{"today=2023-05-10"}},
		{"Today's plan", wed, nil, []string{"Today=2023-05-10"}},
		{"todays", wed, nil, nil},
		{"today2", wed, nil, nil},
		{"this morning and last night", wed, nil, []string{"this morning=2023-05-10", "last night=2023-05-09"}},
		{"the day before yesterday", wed, nil, []string{"the day before yesterday=2023-05-08"}},
		{"3 days ago", wed, nil, []string{"3 days ago=2023-05-07"}},
		{"three days ago", wed, nil, []string{"three days ago=2023-05-07"}},
		{"a day ago", wed, nil, []string{"a day ago=2023-05-09"}},
		{"a couple of days ago", wed, nil, []string{"a couple of days ago=2023-05-08"}},
		{"3.5 days ago", wed, nil, nil},

		// Weekdays.
		{"on Tuesday", wed, nil, []string{"Tuesday=2023-05-09"}},
		{"Wednesday", wed, nil, []string{"Wednesday=2023-05-03"}},
		{"last Wednesday", wed, nil, []string{"last Wednesday=2023-05-03"}},
		{"Thursday", wed, nil, []string{"Thursday=2023-05-04"}},
		{"this Friday", wed, nil, []string{"this Friday=2023-05-12"}},
		{"this Monday", wed, nil, []string{"this Monday=2023-05-08"}},
		{"on Tuesday of last week", wed, nil, []string{"Tuesday of last week=2023-05-02"}},
		{"Friday of this week", wed, nil, []string{"Friday of this week=2023-05-12"}},
		{"Sunday of last week", wed, nil, []string{"Sunday of last week=2023-05-07"}},
		{"sunday", wed, nil, []string{"sunday=2023-05-07"}},
		{"I was satisfied on Sat and Tue", wed, nil, nil},
		{"Mondays are slow", wed, nil, nil},

		// Weeks.
		{"this week", wed, nil, []string{"this week=2023-W19"}},
		{"the week before last", wed, nil, []string{"the week before last=2023-W17"}},
		{"2 weeks ago", wed, nil, []string{"2 weeks ago=2023-W17"}},
		{"a week ago", wed, nil, []string{"a week ago=2023-W18"}},
		{"in 2023-W19", wed, nil, []string{"2023-W19=2023-W19"}},
		{"in 2020-w53", wed, nil, []string{"2020-w53=2020-W53"}},
		{"in 2023-W53", wed, nil, nil},
		{"last week", time.Date(2021, 1, 6, 0, 0, 0, 0, time.UTC), nil, []string{"last week=2020-W53"}},

		// Months.
		{"this month", wed, nil, []string{"this month=2023-05"}},
		{"last month", wed, nil, []string{"last month=2023-04"}},
		{"last month", time.Date(2023, 1, 15, 0, 0, 0, 0, time.UTC), nil, []string{"last month=2022-12"}},
		{"the month before last", wed, nil, []string{"the month before last=2023-03"}},
		{"two months ago", wed, nil, []string{"two months ago=2023-03"}},
		{"in March 2023", wed, nil, []string{"March 2023=2023-03"}},
		{"May of 2021", wed, nil, []string{"May of 2021=2021-05"}},
		{"in 2023-05", wed, nil, []string{"2023-05=2023-05"}},
		{"during June", wed, nil, []string{"June=2022-06"}},
		{"in mid-May", wed, nil, []string{"May=2023-05"}},
		{"in May", wed, nil, []string{"May=2023-05"}},
		{"last May", wed, nil, []string{"last May=2022-05"}},
		{"last March", wed, nil, []string{"last March=2023-03"}},
		{"in the last week of May", wed, nil, []string{"May=2023-05"}},
		{"March on", wed, nil, nil},
		{"March", wed, nil, []string{"March=2023-03"}},
		{"in mid-March?", wed, nil, []string{"March=2023-03"}},
		{"I like March", wed, nil, nil},
		{"2022", wed, nil, []string{"2022=2022-01-01..2022-12-31"}},
		{"2022 was long", wed, nil, nil},
		{"from 2023-05-01..2023-05-03 on", wed, nil, []string{"2023-05-01..2023-05-03=2023-05-01..2023-05-03"}},
		{"in Jan", wed, nil, nil},

		// Years.
		{"this year", wed, nil, []string{"this year=2023-01-01..2023-12-31"}},
		{"the year before last", wed, nil, []string{"the year before last=2021-01-01..2021-12-31"}},
		{"in 2023", wed, nil, []string{"2023=2023-01-01..2023-12-31"}},
		{"the summer of 2019", wed, nil, []string{"2019=2019-01-01..2019-12-31"}},
		{"in 2000 words", wed, nil, nil},
		{"2023 tokens", wed, nil, nil},
		{"in 1850", wed, nil, nil},

		// Spans ending with the reference day.
		{"in the last 3 days", wed, nil, []string{"the last 3 days=2023-05-08..2023-05-10"}},
		{"last 3 days", wed, nil, []string{"last 3 days=2023-05-08..2023-05-10"}},
		{"over the past two weeks", wed, nil, []string{"the past two weeks=2023-04-27..2023-05-10"}},
		{"this past week", wed, nil, []string{"past week=2023-05-04..2023-05-10"}},
		{"the past month", wed, nil, []string{"the past month=2023-04-11..2023-05-10"}},
		{"the past month", time.Date(2023, 3, 31, 9, 0, 0, 0, time.UTC), nil, []string{"the past month=2023-03-01..2023-03-31"}},
		{"the past year", wed, nil, []string{"the past year=2022-05-11..2023-05-10"}},
		{"the last couple of years", wed, nil, []string{"the last couple of years=2021-05-11..2023-05-10"}},
		{"on the last day", wed, nil, nil},
		{"on the last night of the trip", wed, nil, nil},
		{"the last Tuesday of May", wed, nil, []string{"May=2023-05"}},
		{"last Tuesday of the month", wed, nil, nil},
		{"the last weekend", wed, nil, nil},
		{"last weekend", wed, nil, []string{"last weekend=2023-05-06..2023-05-07"}},
		{"this weekend", wed, nil, []string{"this weekend=2023-05-13..2023-05-14"}},

		// Several, and overlaps: the earliest start, then the longest, wins.
		{"Between last Tuesday and today, or 2023-05-01?", wed, nil,
			[]string{"last Tuesday=2023-05-09", "today=2023-05-10", "2023-05-01=2023-05-01"}},
		{"Was it on Tuesday, 9 May?", wed, nil, []string{"Tuesday, 9 May=2023-05-09"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			ms := FindTimes(tt.query, tt.ref, tt.loc)
			var got []string
			for _, m := range ms {
				got = append(got, m.Text+"="+m.Period.Label())
				if tt.query[m.Start:m.End] != m.Text {
					t.Errorf("query[%d:%d]=%q, want %q", m.Start, m.End, tt.query[m.Start:m.End], m.Text)
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFindTimesLocation checks that periods are local days, even over a
// daylight saving change.
func TestFindTimesLocation(t *testing.T) {
	berlin := loadZone(t, "Europe/Berlin")
	ref := time.Date(2023, 10, 29, 22, 30, 0, 0, time.UTC) // 23:30 in Berlin, the day clocks went back
	tests := []struct {
		query string
		kind  PeriodKind
		start string
		hours float64
	}{
		{"today", PeriodDay, "2023-10-29T00:00:00+02:00", 25},
		{"yesterday", PeriodDay, "2023-10-28T00:00:00+02:00", 24},
		{"this week", PeriodWeek, "2023-10-23T00:00:00+02:00", 169},
		{"the last 2 days", PeriodRange, "2023-10-28T00:00:00+02:00", 49},
		{"on 26 March 2023", PeriodDay, "2023-03-26T00:00:00+01:00", 23},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			ms := FindTimes(tt.query, ref, berlin)
			if len(ms) != 1 {
				t.Fatalf("got %d matches, want 1", len(ms))
			}
			p := ms[0].Period
			if p.Kind != tt.kind {
				t.Errorf("kind=%s, want %s", p.Kind, tt.kind)
			}
			if got := p.Start.Format(time.RFC3339); got != tt.start {
				t.Errorf("start=%s, want %s", got, tt.start)
			}
			if got := p.End.Sub(p.Start).Hours(); got != tt.hours {
				t.Errorf("length=%vh, want %vh", got, tt.hours)
			}
		})
	}
}

// checkTimeMatches reports what is wrong with FindTimes' answer for query.
func checkTimeMatches(t *testing.T, query string, ms []TimeMatch) {
	t.Helper()
	prev := 0
	for _, m := range ms {
		if m.Start < prev || m.End <= m.Start || m.End > len(query) {
			t.Fatalf("match %q at [%d,%d) out of order or bounds (previous end %d, len %d)", m.Text, m.Start, m.End, prev, len(query))
		}
		if query[m.Start:m.End] != m.Text {
			t.Fatalf("query[%d:%d]=%q, want %q", m.Start, m.End, query[m.Start:m.End], m.Text)
		}
		if !m.Period.Start.Before(m.Period.End) {
			t.Fatalf("match %q: period %s..%s is empty", m.Text, m.Period.Start, m.Period.End)
		}
		if m.Period.Label() == "" {
			t.Fatalf("match %q: period of kind %q has no label", m.Text, m.Period.Kind)
		}
		prev = m.End
	}
}

func FuzzFindTimes(f *testing.F) {
	for _, s := range []string{
		"What did Melanie tell Caroline on 25 May 2023?",
		"the day before yesterday, last week and 3 days ago",
		"2023-05-25T10:00:00Z 2023-W19 2023-05 in 2023",
		"the 25th of May, 2023; Thursday, 25 May; Sept. 5",
		"the last couple of years, this past weekend, in mid-May",
		"5/25/2023 3.5 days ago 31 February 2023",
		"ünïcödé todäy\xff\xfe May 2023",
		"",
	} {
		f.Add(s, int64(1683720000), uint8(0))
	}
	zones := []*time.Location{time.UTC, loadZone(f, "America/New_York"), loadZone(f, "Europe/Berlin"), loadZone(f, "America/Sao_Paulo")}
	f.Fuzz(func(t *testing.T, query string, unix int64, zone uint8) {
		// References from 1900 to 2100 keep the arithmetic far from the
		// limits of time.Time.
		unix = -2208988800 + unix%(200*365*86400+1)
		if unix < -2208988800 {
			unix += 200 * 365 * 86400
		}
		ref := time.Unix(unix, 0)
		ms := FindTimes(query, ref, zones[int(zone)%len(zones)])
		checkTimeMatches(t, query, ms)
		if utf8.ValidString(query) {
			for _, m := range ms {
				if !utf8.ValidString(m.Text) {
					t.Fatalf("match %q splits a character", m.Text)
				}
			}
		}
	})
}

// TestParseWhenLabels: every label a period has reads back as that period,
// through the same parser as the time expressions.
func TestParseWhenLabels(t *testing.T) {
	ny := loadZone(t, "America/New_York")
	ref := time.Date(2023, 5, 10, 12, 0, 0, 0, time.UTC)
	for _, loc := range []*time.Location{time.UTC, ny} {
		for d := time.Date(2019, 12, 20, 12, 0, 0, 0, loc); d.Year() < 2022; d = d.AddDate(0, 0, 3) {
			day := PeriodOf(PeriodDay, d, loc)
			rng := Period{Kind: PeriodRange, Start: day.Start, End: PeriodOf(PeriodDay, d.AddDate(0, 0, d.Day()%9), loc).End}
			for _, p := range []Period{day, PeriodOf(PeriodWeek, d, loc), PeriodOf(PeriodMonth, d, loc), rng} {
				got, err := ParseWhen(p.Label(), ref, loc)
				if err != nil || !got.Start.Equal(p.Start) || !got.End.Equal(p.End) || got.Kind != p.Kind {
					t.Fatalf("ParseWhen(%q) = %s %s..%s, %v; want %s..%s", p.Label(), got.Kind, got.Start, got.End, err, p.Start, p.End)
				}
			}
		}
	}
}

// TestParseWhenErrors: text that is more or less than one time expression
// is refused, saying why.
func TestParseWhenErrors(t *testing.T) {
	ref := time.Date(2023, 5, 10, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct{ text, want string }{
		{"last week and yesterday", `names 2 periods ("last week" is 2023-W18, "yesterday" is 2023-05-09)`},
		{"in the summer of 2019", `"2019" names 2019-01-01..2019-12-31, but the rest is not part of a time expression`},
		{"2023-02-30", "day 30 is outside 1..28"},
		{"2023-W53", "2023 has 52 ISO weeks"},
		{"soon", "not a period label"},
		{"  ", "empty"},
	} {
		_, err := ParseWhen(tt.text, ref, nil)
		if ErrorCode(err) != EINVALID || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseWhen(%q): %v, want EINVALID saying %s", tt.text, err, tt.want)
		}
	}
}

// TestParseWhenYear9999 names periods that end past the year 9999, which
// no RFC 3339 time can hold: an EINVALID error naming the text, where the
// period used to reach a JSON answer that could not be written.
func TestParseWhenYear9999(t *testing.T) {
	ref := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, zone := range []string{"UTC", "Asia/Kathmandu", "America/New_York"} {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{"9999-12-31", "9999-12", "9999-W52", "in December 9999", "9999-12-30..9999-12-31"} {
			p, err := ParseWhen(text, ref, loc)
			if err != nil {
				t.Errorf("ParseWhen(%q) in %s: %v", text, zone, err)
				continue
			}
			// Its end is writable, in UTC and in its zone, and it holds
			// the last day of 9999.
			for _, at := range []time.Time{p.End.UTC(), p.End} {
				if _, err := at.MarshalJSON(); err != nil {
					t.Errorf("ParseWhen(%q) in %s ends at %v, which JSON cannot write: %v", text, zone, at, err)
				}
			}
			if noon := time.Date(9999, 12, 31, 12, 0, 0, 0, time.UTC); !p.Contains(noon) {
				t.Errorf("ParseWhen(%q) in %s = %v..%v, without %v", text, zone, p.Start, p.End, noon)
			}
		}
	}
	for _, label := range []string{"9999-12-31", "9999-12", "9999-W52"} {
		if p, err := ParsePeriod(label, time.UTC); err != nil || p.Label() != label {
			t.Errorf("ParsePeriod(%q): %v %v", label, p.Label(), err)
		}
	}
	if p, err := ParseWhen("9999-12-30", ref, time.UTC); err != nil || p.Label() != "9999-12-30" {
		t.Errorf("ParseWhen(9999-12-30): %v %v", p, err)
	}
}
