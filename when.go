package strata

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// TimeMatch is a time expression found in a query.
type TimeMatch struct {
	Period Period // the period the expression names
	Text   string // the matched text, as written in the query
	Start  int    // byte offset of Text in the query
	End    int    // byte offset just past Text
}

// FindTimes returns the time expressions in query, in order of appearance
// and not overlapping, each resolved relative to ref (the "now" of the
// conversation: its newest turn, or the clock) in loc (nil means UTC).
// Matching is English and case-insensitive, on word boundaries; where
// expressions could overlap, the one that starts first wins, then the
// longest.
//
// Days:
//   - "2023-05-25" (a trailing ISO time such as "T10:00Z" is taken into the
//     match and ignored), "25 May 2023", "25th May, 2023", "May 25, 2023",
//     "May 25th 2023", "the 25th of May 2023", optionally after a weekday
//     ("Thursday, 25 May 2023"); without a year ("May 25", "25 May") the
//     latest such date on or before ref's date. Month names may be full or
//     abbreviated ("Sep", "Sept."). Dates that do not exist ("31 February
//     2023") are not matches. Lower-case "may" before a plain number and no
//     year ("all 25 may come") is read as the verb.
//   - "today", "tonight", "this morning" (afternoon, evening), "yesterday",
//     "last night", "the day before yesterday", "N days ago".
//   - "Tuesday", "on Tuesday" and "last Tuesday": the latest Tuesday before
//     ref's day (a week back if ref is a Tuesday); "this Tuesday" and
//     "Tuesday of this week": the Tuesday of ref's ISO week; "Tuesday of
//     last week": the Tuesday of the ISO week before.
//
// Weeks: "this week", "last week", "the week before last", "N weeks ago",
// "2023-W19".
//
// Months: "this month", "last month", "the month before last", "N months
// ago", "2023-05", "May 2023", "May of 2023"; a full month name without a
// year only after "in", "during", "of", "early", "mid", "mid-" or "late"
// ("in March": the latest March that began on or before ref's month),
// after "last" ("last March": the latest March before ref's month), or
// standing alone (see below).
//
// Ranges: "2023-05-08..2023-05-10" (both days included), "this year",
// "last year", "the year before last", "N years ago", and a year from 1900
// to 2199 after "in", "during", "of", "year", "early", "mid" or "late" ("in
// 2023", unless a unit follows, as in "in 2000 words") or standing alone,
// each over the calendar year; "this weekend" and "last weekend"
// (Saturday and Sunday of ref's ISO week or the one before); "the last 3
// days", "past two weeks", "the past month", "the last couple of years":
// the span ending with ref's day.
//
// A month name or a year stands alone when it is all the query says, apart
// from a leading "in", "on", "during" or "at", an "early", "mid" or "late",
// and closing punctuation ("March", "May?", "2023", "mid-2022"): a query that is only a time expression names
// that period, as ParseWhen reads it.
//
// N is written in digits, as a word from one to twelve, or as "a couple of";
// before "ago" also as "a" or "an". Apart from the spans above ("the last
// week"), "last" after "the" or before "of" means final, not previous: "the
// last Tuesday of May" and "the last night of the trip" name no period
// relative to ref (though "May" still matches).
//
// Not recognized: slash dates ("5/25/2023", ambiguous between orders),
// weekday abbreviations ("Tue"), a month abbreviation without a day or year
// ("in Jan"), a bare year ("2023 tokens"), a day without a month ("on the
// 9th"), times of day, open-ended or vague spans ("since May", "a few days
// ago", "recently"), seasons, and the future ("tomorrow", "next week"): a
// memory holds only what has been said.
func FindTimes(query string, ref time.Time, loc *time.Location) []TimeMatch {
	if loc == nil {
		loc = time.UTC
	}
	toks := whenTokenize(query)
	y, m, d := ref.In(loc).Date()
	var out []TimeMatch
	for i := 0; i < len(toks); {
		var best Period
		bestEnd := -1
		for _, rule := range whenRules {
			s := &whenScan{toks: toks, i: i, y: y, m: m, d: d, loc: loc}
			p, ok := rule(s)
			if !ok || s.i <= i || s.i <= bestEnd || !whenBoundary(toks, i, s.i) {
				continue
			}
			best, bestEnd = p, s.i
		}
		if bestEnd < 0 {
			i++
			continue
		}
		if !best.Start.Before(best.End) {
			// Words that name no period ("31 February 2023") are no
			// match, and no part of them is one either.
			i = bestEnd
			continue
		}
		start, end := toks[i].start, toks[bestEnd-1].end
		out = append(out, TimeMatch{Period: best, Text: query[start:end], Start: start, End: end})
		i = bestEnd
	}
	return out
}

// ParseWhen reads text that names one period on its own, as a caller names
// the period to zoom into: a period label ("2023-05-08", "2023-W19",
// "2023-05", "2023-05-08..2023-05-10") or a time expression ("yesterday",
// "last week", "on Tuesday", "in March", "March", "25 May 2023"), relative
// ones resolved against ref in loc (nil means UTC). It is FindTimes applied
// to text as a whole query, so a query and a zoom read the same words the
// same way: text must hold that one expression and nothing else, apart
// from a leading "in", "on", "during" or "at", an "early", "mid" or "late",
// and closing punctuation. Anything else is an EINVALID error naming text.
func ParseWhen(text string, ref time.Time, loc *time.Location) (Period, error) {
	toks := whenTokenize(text)
	lead, tail := whenBounds(toks)
	ms := FindTimes(text, ref, loc)
	if len(ms) == 1 && lead < tail && ms[0].Start == toks[lead].start && ms[0].End == toks[tail-1].end {
		return writablePeriod(text, ms[0].Period)
	}
	switch {
	case strings.TrimSpace(text) == "":
		return Period{}, Errorf(EINVALID, "period %q: empty", text)
	case len(ms) > 1:
		return Period{}, Errorf(EINVALID, "period %q: names %d periods (%q is %s, %q is %s); name one",
			text, len(ms), ms[0].Text, ms[0].Period.Label(), ms[1].Text, ms[1].Period.Label())
	case len(ms) == 1:
		return Period{}, Errorf(EINVALID, "period %q: %q names %s, but the rest is not part of a time expression",
			text, ms[0].Text, ms[0].Period.Label())
	}
	if t := strings.TrimSpace(text); t[0] >= '0' && t[0] <= '9' {
		// A label with a fault: ParsePeriod names it ("day 30 is
		// outside 1..28").
		if _, err := ParsePeriod(text, loc); err != nil {
			return Period{}, err
		}
	}
	return Period{}, Errorf(EINVALID, "period %q: not a period label (2023-05-08, 2023-W19, 2023-05, "+
		"2023-05-08..2023-05-10) nor a time expression strata reads (yesterday, last week, on Tuesday, in March, 25 May 2023)", text)
}

// whenLeads are the words that may come before a time expression standing
// alone ("in March", "on Tuesday").
var whenLeads = map[string]bool{"in": true, "on": true, "during": true, "at": true}

// whenPartOf are the words that may come before a month or a year standing
// alone ("in mid-March", "early 2023").
var whenPartOf = map[string]bool{"early": true, "mid": true, "late": true}

// whenBounds returns where the words of toks begin and end once a leading
// word of whenLeads, then one of whenPartOf (with its "-"), and closing
// punctuation are left out.
func whenBounds(toks []whenToken) (lead, tail int) {
	tail = len(toks)
	for tail > 0 && toks[tail-1].class == whenPunct && strings.Contains("?.!", toks[tail-1].text) {
		tail--
	}
	if lead < tail-1 && whenLeads[toks[lead].lower] {
		lead++
	}
	if lead < tail-1 && whenPartOf[toks[lead].lower] {
		lead++
		if lead < tail-1 && toks[lead].text == "-" {
			lead++
		}
	}
	return lead, tail
}

// alone reports whether the token at the cursor is all the query says,
// apart from what whenBounds leaves out.
func (s *whenScan) alone() bool {
	lead, tail := whenBounds(s.toks)
	return s.i == lead && tail == s.i+1
}

// Token classes.
const (
	whenPunct  = iota // one other character
	whenLetter        // a run of letters (and marks, non-ASCII digits, '_')
	whenDigit         // a run of ASCII digits
)

// whenToken is a token of a query: a run of letters, a run of ASCII digits,
// or one other non-space character.
type whenToken struct {
	text       string
	lower      string
	class      int
	start, end int
}

// whenTokenize splits s into tokens, keeping their byte offsets.
func whenTokenize(s string) []whenToken {
	var toks []whenToken
	classOf := func(r rune) int {
		switch {
		case r >= '0' && r <= '9':
			return whenDigit
		case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			return whenLetter
		}
		return whenPunct
	}
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if unicode.IsSpace(r) {
			i += w
			continue
		}
		c := classOf(r)
		j := i + w
		if c != whenPunct {
			for j < len(s) {
				r2, w2 := utf8.DecodeRuneInString(s[j:])
				if classOf(r2) != c {
					break
				}
				j += w2
			}
		}
		t := whenToken{text: s[i:j], class: c, start: i, end: j}
		t.lower = t.text
		if c == whenLetter {
			t.lower = lowerASCII(t.text)
		}
		toks = append(toks, t)
		i = j
	}
	return toks
}

// lowerASCII lower-cases the ASCII letters of s, keeping its length, so
// that offsets stay valid; the keywords are all ASCII.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// whenBoundary reports whether toks[i:j] stands alone: not glued to a
// letter or digit on either side, and, where it starts or ends with a
// number, not part of a longer number such as "3.5" or "5/25/2023".
func whenBoundary(toks []whenToken, i, j int) bool {
	glued := func(a, b int) bool { return toks[a].end == toks[b].start }
	if i > 0 && glued(i-1, i) && toks[i-1].class != whenPunct {
		return false
	}
	if j < len(toks) && glued(j-1, j) && toks[j].class != whenPunct {
		return false
	}
	if toks[i].class == whenDigit && i >= 2 && glued(i-1, i) && glued(i-2, i-1) &&
		whenNumSep(toks[i-1].text) && toks[i-2].class == whenDigit {
		return false
	}
	if toks[j-1].class == whenDigit && j+1 < len(toks) && glued(j-1, j) && glued(j, j+1) &&
		whenNumSep(toks[j].text) && toks[j+1].class == whenDigit {
		return false
	}
	return true
}

// whenNumSep reports whether s joins the parts of a number, date or time.
func whenNumSep(s string) bool {
	switch s {
	case "-", "/", ".", ":":
		return true
	}
	return false
}

// whenRules are the recognizers FindTimes tries at each token. Each
// consumes tokens from s and returns the period they name; a rule returns
// the zero Period and true for words that it reads but that name no period,
// such as "31 February 2023", so that no part of them matches.
var whenRules = []func(s *whenScan) (Period, bool){
	(*whenScan).isoRange,
	(*whenScan).isoDate,
	(*whenScan).isoWeek,
	(*whenScan).isoMonth,
	(*whenScan).dayMonthYear,
	(*whenScan).monthDayYear,
	(*whenScan).monthYear,
	(*whenScan).monthAfterCue,
	(*whenScan).weekday,
	(*whenScan).dayWord,
	(*whenScan).ago,
	(*whenScan).thisOrLast,
	(*whenScan).beforeLast,
	(*whenScan).rolling,
	(*whenScan).yearAfterCue,
}

// whenScan is a cursor over the tokens of a query, with the reference date.
type whenScan struct {
	toks []whenToken
	i    int
	y    int
	m    time.Month
	d    int
	loc  *time.Location
}

// peek returns the next token, or nil at the end.
func (s *whenScan) peek() *whenToken {
	if s.i < len(s.toks) {
		return &s.toks[s.i]
	}
	return nil
}

// glued reports whether the next token directly follows the previous one.
func (s *whenScan) glued() bool {
	return s.i > 0 && s.i < len(s.toks) && s.toks[s.i-1].end == s.toks[s.i].start
}

// word consumes the next token if it is one of ws (lower case).
func (s *whenScan) word(ws ...string) bool {
	_, ok := s.pick(ws...)
	return ok
}

// pick consumes the next token if it is one of ws and returns it.
func (s *whenScan) pick(ws ...string) (string, bool) {
	t := s.peek()
	if t == nil {
		return "", false
	}
	for _, w := range ws {
		if t.lower == w {
			s.i++
			return w, true
		}
	}
	return "", false
}

// gluedWord consumes the next token if it is w and directly follows the
// previous one.
func (s *whenScan) gluedWord(w string) bool {
	if s.glued() && s.toks[s.i].lower == w {
		s.i++
		return true
	}
	return false
}

// digits consumes a run of lo to hi digits and returns its value.
func (s *whenScan) digits(lo, hi int) (int, bool) {
	t := s.peek()
	if t == nil || t.class != whenDigit || len(t.text) < lo || len(t.text) > hi {
		return 0, false
	}
	n, ok := atoiDigits(t.text)
	if ok {
		s.i++
	}
	return n, ok
}

// gluedDigits is digits for a run that directly follows the previous token.
func (s *whenScan) gluedDigits(lo, hi int) (int, bool) {
	if !s.glued() {
		return 0, false
	}
	return s.digits(lo, hi)
}

// year consumes a four-digit year.
func (s *whenScan) year() (int, bool) {
	return s.digits(4, 4)
}

// dayNumber consumes a day of the month, 1 to 31, with an optional ordinal
// suffix ("25th"), and reports whether the suffix was there.
func (s *whenScan) dayNumber() (day int, ordinal bool, ok bool) {
	d, ok := s.digits(1, 2)
	if !ok || d < 1 || d > 31 {
		return 0, false, false
	}
	if s.glued() {
		if _, ok := s.pick("st", "nd", "rd", "th"); ok {
			return d, true, true
		}
	}
	return d, false, true
}

// month consumes a month name; abbreviations ("Sep", "Sept.") only if abbr.
// It also reports whether the name was the lower-case word "may".
func (s *whenScan) month(abbr bool) (m time.Month, verbMay bool, ok bool) {
	t := s.peek()
	if t == nil {
		return 0, false, false
	}
	if m, ok := whenMonths[t.lower]; ok {
		s.i++
		return m, t.text == "may", true
	}
	if m, ok := whenMonthAbbrs[t.lower]; ok && abbr {
		s.i++
		s.gluedWord(".")
		return m, false, true
	}
	return 0, false, false
}

// weekdayName consumes a full weekday name.
func (s *whenScan) weekdayName() (time.Weekday, bool) {
	t := s.peek()
	if t == nil {
		return 0, false
	}
	wd, ok := whenWeekdays[t.lower]
	if ok {
		s.i++
	}
	return wd, ok
}

// count consumes a count: digits (1 to 9999), a number word, or "a couple
// of"; with article, also "a" or "an" for one.
func (s *whenScan) count(article bool) (int, bool) {
	if n, ok := s.digits(1, 4); ok {
		return n, n >= 1
	}
	t := s.peek()
	if t == nil {
		return 0, false
	}
	if n, ok := whenNumbers[t.lower]; ok {
		s.i++
		return n, true
	}
	save := s.i
	a := s.word("a")
	if s.word("couple") {
		s.word("of")
		return 2, true
	}
	if a && article {
		return 1, true
	}
	s.i = save
	if article && s.word("an") {
		return 1, true
	}
	return 0, false
}

// unit consumes a calendar unit, singular or plural.
func (s *whenScan) unit() (string, bool) {
	t := s.peek()
	if t == nil {
		return "", false
	}
	u, ok := whenUnits[t.lower]
	if ok {
		s.i++
	}
	return u, ok
}

// cue reports whether the token before the cursor is one of ws, or is the
// "-" of "mid-".
func (s *whenScan) cue(ws ...string) bool {
	if s.i == 0 {
		return false
	}
	prev := s.toks[s.i-1]
	if prev.text == "-" && s.i >= 2 && s.toks[s.i-2].lower == "mid" &&
		s.toks[s.i-2].end == prev.start && prev.end == s.toks[s.i].start {
		return true
	}
	for _, w := range ws {
		if prev.lower == w {
			return true
		}
	}
	return false
}

// last consumes "last" where it means the one before now: not after "the",
// as in "the last night of the trip".
func (s *whenScan) last() bool {
	if s.i > 0 && s.toks[s.i-1].lower == "the" {
		return false
	}
	return s.word("last")
}

// followedBy reports whether the next token is w, without consuming it.
func (s *whenScan) followedBy(w string) bool {
	t := s.peek()
	return t != nil && t.lower == w
}

// optional runs f and rewinds the cursor if it fails.
func (s *whenScan) optional(f func() bool) bool {
	save := s.i
	if f() {
		return true
	}
	s.i = save
	return false
}

// dayAt returns the day off days from the reference date.
func (s *whenScan) dayAt(off int) Period { return dayPeriod(s.y, s.m, s.d+off, s.loc) }

// weekAt returns the ISO week off weeks from the reference date's.
func (s *whenScan) weekAt(off int) Period { return weekPeriod(s.y, s.m, s.d+7*off, s.loc) }

// monthAt returns the month off months from the reference date's.
func (s *whenScan) monthAt(off int) Period {
	return monthPeriod(s.y, s.m+time.Month(off), s.loc)
}

// yearAt returns, as a range, the year off years from the reference date's.
func (s *whenScan) yearAt(off int) Period { return yearRange(s.y+off, s.loc) }

// refWeekday returns the weekday of the reference date.
func (s *whenScan) refWeekday() time.Weekday {
	return civilDate(s.y, s.m, s.d).Weekday()
}

// weekendAt returns Saturday and Sunday of the ISO week off weeks from the
// reference week.
func (s *whenScan) weekendAt(off int) Period {
	monday := s.d - (int(s.refWeekday())+6)%7 + 7*off
	return Period{Kind: PeriodRange, Start: localMidnight(s.y, s.m, monday+5, s.loc), End: localMidnight(s.y, s.m, monday+7, s.loc)}
}

// dateIn returns the day y-m-d, or the zero Period if there is none. It
// always reports true: the date was read, whether or not it exists.
func (s *whenScan) dateIn(y int, m time.Month, d int) (Period, bool) {
	if d < 1 || d > daysInMonth(y, m) {
		return Period{}, true
	}
	return dayPeriod(y, m, d, s.loc), true
}

// recentDate returns the latest day m-d on or before the reference date,
// or the zero Period if there is none (February 30). It always reports
// true, as dateIn does.
func (s *whenScan) recentDate(m time.Month, d int) (Period, bool) {
	ref := civilDate(s.y, s.m, s.d)
	for y := s.y; y >= s.y-8; y-- {
		if d >= 1 && d <= daysInMonth(y, m) && !civilDate(y, m, d).After(ref) {
			return dayPeriod(y, m, d, s.loc), true
		}
	}
	return Period{}, true
}

// isoRange reads "2023-05-08..2023-05-10", the label of a range of whole
// days; a range that ends before it starts names no period.
func (s *whenScan) isoRange() (Period, bool) {
	a, ok := s.isoDate()
	if !ok || !s.word(".") || !s.gluedWord(".") {
		return Period{}, false
	}
	b, ok := s.isoDate()
	if !ok {
		return Period{}, false
	}
	if a.Kind == "" || b.Kind == "" || b.Start.Before(a.Start) {
		return Period{}, true
	}
	return Period{Kind: PeriodRange, Start: a.Start, End: b.End}, true
}

// isoDate reads "2023-05-25", with an optional ISO time after it.
func (s *whenScan) isoDate() (Period, bool) {
	y, ok := s.year()
	if !ok || !s.gluedWord("-") {
		return Period{}, false
	}
	m, ok := s.gluedDigits(1, 2)
	if !ok || m < 1 || m > 12 || !s.gluedWord("-") {
		return Period{}, false
	}
	d, ok := s.gluedDigits(1, 2)
	if !ok {
		return Period{}, false
	}
	p, _ := s.dateIn(y, time.Month(m), d)
	s.optional(func() bool {
		if !s.gluedWord("t") {
			return false
		}
		if _, ok := s.gluedDigits(1, 2); !ok {
			return false
		}
		for s.glued() {
			t := s.toks[s.i]
			if t.class != whenDigit && t.lower != ":" && t.lower != "." && t.lower != "+" && t.lower != "-" && t.lower != "z" {
				break
			}
			s.i++
		}
		return true
	})
	return p, true
}

// isoWeek reads "2023-W19".
func (s *whenScan) isoWeek() (Period, bool) {
	y, ok := s.year()
	if !ok || !s.gluedWord("-") || !s.gluedWord("w") {
		return Period{}, false
	}
	w, ok := s.gluedDigits(1, 2)
	if !ok {
		return Period{}, false
	}
	if w < 1 || w > isoWeeksIn(y) {
		return Period{}, true
	}
	return isoWeekPeriod(y, w, s.loc), true
}

// isoMonth reads "2023-05".
func (s *whenScan) isoMonth() (Period, bool) {
	y, ok := s.year()
	if !ok || !s.gluedWord("-") {
		return Period{}, false
	}
	m, ok := s.gluedDigits(1, 2)
	if !ok || m < 1 || m > 12 {
		return Period{}, false
	}
	return monthPeriod(y, time.Month(m), s.loc), true
}

// weekdayPrefix consumes an optional "Thursday," before a date.
func (s *whenScan) weekdayPrefix() {
	s.optional(func() bool {
		if _, ok := s.weekdayName(); !ok {
			return false
		}
		s.word(",")
		return true
	})
}

// commaYear consumes an optional ", 2023" or "2023" and returns the year.
func (s *whenScan) commaYear() (int, bool) {
	y := 0
	ok := s.optional(func() bool {
		s.word(",")
		var ok bool
		y, ok = s.year()
		return ok
	})
	return y, ok
}

// dayMonthYear reads "25 May 2023", "25th May, 2023", "the 25th of May
// 2023" and the same without the year.
func (s *whenScan) dayMonthYear() (Period, bool) {
	s.weekdayPrefix()
	s.word("the")
	d, ordinal, ok := s.dayNumber()
	if !ok {
		return Period{}, false
	}
	of := s.word("of")
	m, verbMay, ok := s.month(true)
	if !ok {
		return Period{}, false
	}
	if y, ok := s.commaYear(); ok {
		return s.dateIn(y, m, d)
	}
	if verbMay && !ordinal && !of {
		return Period{}, false
	}
	return s.recentDate(m, d)
}

// monthDayYear reads "May 25, 2023", "May 25th 2023" and "May 25".
func (s *whenScan) monthDayYear() (Period, bool) {
	s.weekdayPrefix()
	m, _, ok := s.month(true)
	if !ok {
		return Period{}, false
	}
	d, _, ok := s.dayNumber()
	if !ok {
		return Period{}, false
	}
	if y, ok := s.commaYear(); ok {
		return s.dateIn(y, m, d)
	}
	return s.recentDate(m, d)
}

// monthYear reads "May 2023", "May, 2023" and "May of 2023".
func (s *whenScan) monthYear() (Period, bool) {
	m, _, ok := s.month(true)
	if !ok {
		return Period{}, false
	}
	if !s.word(",") {
		s.word("of")
	}
	y, ok := s.year()
	if !ok {
		return Period{}, false
	}
	return monthPeriod(y, m, s.loc), true
}

// monthAfterCue reads a full month name after "in", "during", "of",
// "early", "mid" or "late", "last March", and a month name standing alone.
func (s *whenScan) monthAfterCue() (Period, bool) {
	last := s.last()
	if !last && !s.cue("in", "during", "of", "early", "mid", "late") && !s.alone() {
		return Period{}, false
	}
	m, _, ok := s.month(false)
	if !ok {
		return Period{}, false
	}
	y := s.y
	if m > s.m || (last && m == s.m) {
		y--
	}
	return monthPeriod(y, m, s.loc), true
}

// weekday reads "Tuesday", "last Tuesday", "this Tuesday" and "Tuesday of
// last week". "the last Tuesday" and "last Tuesday of" name a final
// Tuesday, not a recent one: they are read and resolve to nothing.
func (s *whenScan) weekday() (Period, bool) {
	this := s.word("this")
	last, final := false, false
	if !this && s.followedBy("last") {
		last, final = true, s.i > 0 && s.toks[s.i-1].lower == "the"
		s.i++
	}
	wd, ok := s.weekdayName()
	if !ok {
		return Period{}, false
	}
	if last && (final || s.followedBy("of")) {
		return Period{}, true
	}
	mondayBased := func(w time.Weekday) int { return (int(w) + 6) % 7 }
	ref := s.refWeekday()
	if !this && !last {
		var week int
		ok := s.optional(func() bool {
			if !s.word("of") {
				return false
			}
			if s.word("this") {
				week = 0
			} else if s.last() {
				week = -1
			} else {
				return false
			}
			return s.word("week")
		})
		if ok {
			return s.dayAt(7*week + mondayBased(wd) - mondayBased(ref)), true
		}
	}
	if this {
		return s.dayAt(mondayBased(wd) - mondayBased(ref)), true
	}
	back := (int(ref) - int(wd) + 7) % 7
	if back == 0 {
		back = 7
	}
	return s.dayAt(-back), true
}

// dayWord reads "today", "tonight", "this morning", "yesterday", "last
// night" and "the day before yesterday".
func (s *whenScan) dayWord() (Period, bool) {
	if w, ok := s.pick("today", "tonight", "yesterday"); ok {
		if w == "yesterday" {
			return s.dayAt(-1), true
		}
		return s.dayAt(0), true
	}
	if s.word("this") {
		if s.word("morning", "afternoon", "evening") {
			return s.dayAt(0), true
		}
		return Period{}, false
	}
	if s.last() {
		if s.word("night") && !s.followedBy("of") {
			return s.dayAt(-1), true
		}
		return Period{}, false
	}
	s.word("the")
	if s.word("day") && s.word("before") && s.word("yesterday") {
		return s.dayAt(-2), true
	}
	return Period{}, false
}

// ago reads "3 days ago", "two weeks ago", "a month ago", "a couple of
// years ago".
func (s *whenScan) ago() (Period, bool) {
	n, ok := s.count(true)
	if !ok {
		return Period{}, false
	}
	u, ok := s.unit()
	if !ok || !s.word("ago") {
		return Period{}, false
	}
	return s.unitAt(u, -n), true
}

// unitAt returns the period of unit u that is off units from the reference
// date's.
func (s *whenScan) unitAt(u string, off int) Period {
	switch u {
	case "day":
		return s.dayAt(off)
	case "week":
		return s.weekAt(off)
	case "month":
		return s.monthAt(off)
	}
	return s.yearAt(off)
}

// thisOrLast reads "this week", "last month", "this year", "last weekend".
// "last week of" is left alone: it names the end of a longer period.
func (s *whenScan) thisOrLast() (Period, bool) {
	off := 0
	if !s.word("this") {
		if !s.last() {
			return Period{}, false
		}
		off = -1
	}
	u, ok := s.pick("weekend", "week", "month", "year")
	if !ok || (off < 0 && s.followedBy("of")) {
		return Period{}, false
	}
	if u == "weekend" {
		return s.weekendAt(off), true
	}
	return s.unitAt(u, off), true
}

// beforeLast reads "the week before last" (month, year).
func (s *whenScan) beforeLast() (Period, bool) {
	s.word("the")
	u, ok := s.pick("week", "month", "year")
	if !ok || !s.word("before") || !s.word("last") {
		return Period{}, false
	}
	return s.unitAt(u, -2), true
}

// rolling reads "the last 3 days", "past two weeks", "the past month" and
// "the last year": a range of whole days ending with the reference day.
func (s *whenScan) rolling() (Period, bool) {
	the := s.word("the")
	w, ok := s.pick("last", "past")
	if !ok {
		return Period{}, false
	}
	n, counted := s.count(false)
	if !counted {
		n = 1
		if w == "last" && !the {
			// "last week" is the calendar week: see thisOrLast.
			return Period{}, false
		}
	}
	u, ok := s.unit()
	if !ok || s.followedBy("of") || (!counted && w == "last" && u == "day") {
		// "the last day" is most often the final one, not today.
		return Period{}, false
	}
	end := localMidnight(s.y, s.m, s.d+1, s.loc)
	var start time.Time
	switch u {
	case "day":
		start = localMidnight(s.y, s.m, s.d-n+1, s.loc)
	case "week":
		start = localMidnight(s.y, s.m, s.d-7*n+1, s.loc)
	default:
		// The day after the same date n months or years back, clamped to
		// the month's end: the past month from March 31 starts March 1.
		months := n
		if u == "year" {
			months = 12 * n
		}
		first := civilDate(s.y, s.m-time.Month(months), 1)
		y, m := first.Year(), first.Month()
		start = localMidnight(y, m, min(s.d, daysInMonth(y, m))+1, s.loc)
	}
	return Period{Kind: PeriodRange, Start: start, End: end}, true
}

// yearAfterCue reads a year from 1900 to 2199 after "in", "during", "of",
// "year", "early", "mid" or "late", unless a unit follows ("in 2000 words"),
// and a year standing alone.
func (s *whenScan) yearAfterCue() (Period, bool) {
	if !s.cue("in", "during", "of", "year", "early", "mid", "late") && !s.alone() {
		return Period{}, false
	}
	y, ok := s.year()
	if !ok || y < 1900 || y > 2199 {
		return Period{}, false
	}
	if t := s.peek(); t != nil && whenQuantityUnits[t.lower] {
		return Period{}, false
	}
	return yearRange(y, s.loc), true
}

var whenMonths = map[string]time.Month{
	"january": time.January, "february": time.February, "march": time.March,
	"april": time.April, "may": time.May, "june": time.June,
	"july": time.July, "august": time.August, "september": time.September,
	"october": time.October, "november": time.November, "december": time.December,
}

var whenMonthAbbrs = map[string]time.Month{
	"jan": time.January, "feb": time.February, "mar": time.March,
	"apr": time.April, "jun": time.June, "jul": time.July,
	"aug": time.August, "sep": time.September, "sept": time.September,
	"oct": time.October, "nov": time.November, "dec": time.December,
}

var whenWeekdays = map[string]time.Weekday{
	"monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
	"sunday": time.Sunday,
}

var whenNumbers = map[string]int{
	"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
	"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}

var whenUnits = map[string]string{
	"day": "day", "days": "day", "week": "week", "weeks": "week",
	"month": "month", "months": "month", "year": "year", "years": "year",
}

// whenQuantityUnits are words that make a number after "in" a quantity
// rather than a year.
var whenQuantityUnits = map[string]bool{
	"words": true, "tokens": true, "characters": true, "chars": true,
	"letters": true, "lines": true, "bytes": true, "items": true,
	"steps": true, "rows": true, "pages": true, "people": true,
	"users": true, "points": true, "dollars": true, "euros": true,
	"pounds": true, "calories": true, "miles": true, "meters": true,
	"metres": true, "km": true, "feet": true, "ms": true,
	"seconds": true, "minutes": true, "hours": true, "days": true,
	"weeks": true, "months": true, "years": true, "times": true,
	"units": true, "%": true,
}
