// Package primers writes a conversation's memory as 003's tree of primer
// files: one Markdown file per day and session, per closed ISO week and
// per closed month, the upload package, and a quarterly archive of the
// dailies and weeklies past 003's retention.
//
//	daily/2023-05-08_session_01.md   a day's session: header, summary, facts
//	weekly/2023-W19.md               a closed week: summary, facts, themes
//	monthly/2023-05.md               a closed month: the same (kept for good)
//	upload/UPLOAD_PACKAGE.md         strata.Memory.Upload's Markdown
//	archive/2023-Q2/                 dailies older than 30 days and weeklies
//	                                 older than 12 weeks, moved here
//
// The tree is derived from the store alone: exporting twice with the same
// reference time writes nothing the second time, and exporting again
// later only adds files, replaces the ones whose content changed, and
// moves dailies and weeklies to the archive as they age. Export never
// deletes a file, and leaves alone every file it does not name.
package primers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

// Summary budgets, in tokens, of the summaries Export writes itself (003's
// per-file targets). A weekly or monthly file shows the pyramid's node
// where the policy has one and uses its budget instead.
const (
	DailyBudget   = 1000
	WeeklyBudget  = 2000
	MonthlyBudget = 2500
)

// 003's retention of the live folders: a daily stays in daily/ while its
// day is at most DailyKeepDays days before the reference day, a weekly in
// weekly/ while its week is at most WeeklyKeepWeeks weeks before the
// reference week; older ones move to the archive. Monthlies stay.
const (
	DailyKeepDays   = 30
	WeeklyKeepWeeks = 12
)

// The tree's folders and the upload package's path within it.
const (
	DailyDir   = "daily"
	WeeklyDir  = "weekly"
	MonthlyDir = "monthly"
	ArchiveDir = "archive"
	UploadFile = "upload/UPLOAD_PACKAGE.md"
)

// Result says what an Export did. Every file it manages is counted once,
// as written (created or replaced) or unchanged; Moved counts the dailies
// that were moved to the archive besides.
type Result struct {
	Written   int `json:"written"`
	Unchanged int `json:"unchanged"`
	Moved     int `json:"moved"`
	// WrittenInArchive counts the files of Written that are in the
	// archive: primers first exported when already old enough to be
	// archived, and archived primers whose content changed.
	WrittenInArchive int `json:"written_in_archive"`
	// Files lists every file of the tree Export manages, relative to its
	// directory with slashes, sorted.
	Files []string `json:"files"`
}

// Export writes the primer tree of conversation under dir (created if
// missing). now is the reference time: a week or month is closed, and
// gets its file, once it ended by the start of now's day in the
// conversation's time zone; zero means the time of the newest turn.
//
//   - A daily file is written for every (day, session) pair of the
//     conversation, its session numbered within the day from 01: a
//     header (conversation, date, session, time span, turns), then the
//     extractive summary of the turns and its facts.
//   - A weekly or monthly file shows the pyramid's node of that period
//     (summary, facts, themes, statistics) when the policy has a week or
//     month level, and otherwise a summary of the period's turns.
//   - A daily whose day is more than DailyKeepDays days before now's day,
//     and a weekly whose week is more than WeeklyKeepWeeks weeks before
//     now's week, are archived: moved from daily/ or weekly/ to
//     archive/<quarter>/ (the quarter of the day, or of the week's
//     Thursday), or written there directly if they were never written.
//   - A primer once archived stays archived: an export with an earlier
//     reference time, for which it is young again, keeps it in the
//     archive and never re-creates it in daily/ or weekly/. Its content
//     is kept current there like any other file's (rewritten only if it
//     changed, say after a late turn); Result.WrittenInArchive counts
//     those writes.
//
// A file is written only when its content differs, through a temporary
// file in the same folder renamed over it, so a reader never sees half a
// file. Errors name the file.
func Export(ctx context.Context, m *strata.Memory, conversation, dir string, now time.Time) (Result, error) {
	res := Result{Files: []string{}}
	if dir == "" {
		return res, strata.Errorf(strata.EINVALID, "primers: no directory given")
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return res, strata.Errorf(strata.EINVALID, "primers: %s is not a directory", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return res, fmt.Errorf("primers: %w", err)
	}
	c, err := m.Conversation(ctx, conversation)
	if err != nil {
		return res, err
	}
	p, err := m.PolicyOf(ctx, conversation)
	if err != nil {
		return res, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, fmt.Errorf("primers: %w", err)
	}
	e := &exporter{ctx: ctx, m: m, c: c, p: p, loc: c.Location(), dir: dir, res: &res}
	ref := now
	if ref.IsZero() {
		ref = c.Last
	}
	if !ref.IsZero() {
		e.before = strata.PeriodOf(strata.PeriodDay, ref, e.loc).Start
	}
	if err := e.run(now); err != nil {
		return res, err
	}
	slices.Sort(res.Files)
	return res, nil
}

// exporter holds the state of one Export.
type exporter struct {
	ctx    context.Context
	m      *strata.Memory
	c      strata.Conversation
	p      strata.Policy
	loc    *time.Location
	dir    string
	before time.Time // the start of today: periods that ended by then are closed
	res    *Result
}

// civilDay numbers t's calendar day in the conversation's time zone, so
// that differences count days whatever the length of each (DST).
func (e *exporter) civilDay(t time.Time) int64 {
	y, m, d := t.In(e.loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// daysOld is how many calendar days the day starting at start lies before
// the reference day; 0 without a reference.
func (e *exporter) daysOld(start time.Time) int64 {
	if e.before.IsZero() {
		return 0
	}
	return e.civilDay(e.before) - e.civilDay(start)
}

// weeksOld is how many ISO weeks the week starting at start lies before
// the reference day's week; 0 without a reference.
func (e *exporter) weeksOld(start time.Time) int64 {
	if e.before.IsZero() {
		return 0
	}
	ref := strata.PeriodOf(strata.PeriodWeek, e.before, e.loc).Start
	return (e.civilDay(ref) - e.civilDay(start)) / 7
}

// daily is one (day, session) pair.
type daily struct {
	day   strata.Period
	n     int // the session's ordinal within the day, from 1
	turns []strata.Turn
}

func (e *exporter) run(now time.Time) error {
	weeks, months, dailies, err := e.turnPeriods()
	if err != nil {
		return err
	}
	if err := e.nodePeriods(weeks, months); err != nil {
		return err
	}
	for _, k := range []strata.PeriodKind{strata.PeriodWeek, strata.PeriodMonth} {
		set := weeks
		if k == strata.PeriodMonth {
			set = months
		}
		if err := e.writePeriods(k, set); err != nil {
			return err
		}
	}
	for _, d := range dailies {
		name := fmt.Sprintf("%s_session_%02d.md", d.day.Label(), d.n)
		text, err := e.daily(d)
		if err != nil {
			return err
		}
		if err := e.place(DailyDir+"/"+name, strata.Quarter(d.day.Start)+"/"+name, e.daysOld(d.day.Start) > DailyKeepDays, text); err != nil {
			return err
		}
	}

	pkg, err := e.m.Upload(e.ctx, strata.UploadRequest{Conversation: e.c.ID, Now: now})
	if err != nil {
		return fmt.Errorf("primers: %s: %w", filepath.Join(e.dir, filepath.FromSlash(UploadFile)), err)
	}
	return e.write(UploadFile, pkg.Markdown)
}

// turnPeriods returns the weeks and months that have turns, by label, and
// each day's sessions.
func (e *exporter) turnPeriods() (weeks, months map[string]strata.Period, dailies []daily, err error) {
	weeks, months = map[string]strata.Period{}, map[string]strata.Period{}
	if e.c.Turns == 0 {
		return weeks, months, nil, nil
	}
	first := strata.PeriodOf(strata.PeriodMonth, e.c.First, e.loc)
	for mp := first; !mp.Start.After(e.c.Last); mp = mp.Next() {
		ts, err := e.m.Zoom(e.ctx, e.c.ID, mp)
		if err != nil {
			return nil, nil, nil, err
		}
		byDay := map[string][]strata.Turn{}
		var days []string
		for _, t := range ts {
			d := strata.PeriodOf(strata.PeriodDay, t.Time, e.loc).Label()
			if _, ok := byDay[d]; !ok {
				days = append(days, d)
			}
			byDay[d] = append(byDay[d], t)
		}
		slices.Sort(days)
		for _, d := range days {
			dp, err := strata.ParsePeriod(d, e.loc)
			if err != nil {
				return nil, nil, nil, err
			}
			for i, s := range strata.SessionsOfDay(byDay[d]) {
				dailies = append(dailies, daily{day: dp, n: i + 1, turns: s})
			}
			w := strata.PeriodOf(strata.PeriodWeek, dp.Start, e.loc)
			weeks[w.Label()] = w
			months[mp.Label()] = mp
		}
	}
	return weeks, months, dailies, nil
}

// nodePeriods adds to weeks and months those with a node (a week cut at
// the end of a month is one week here, made of its nodes in both months).
func (e *exporter) nodePeriods(weeks, months map[string]strata.Period) error {
	for _, k := range []strata.PeriodKind{strata.PeriodWeek, strata.PeriodMonth} {
		lvl := e.p.LevelOf(k)
		if lvl == 0 {
			continue
		}
		ns, err := e.m.Store().Nodes(e.ctx, strata.NodeFilter{Namespace: e.m.Namespace(), Conversation: e.c.ID, Level: lvl})
		if err != nil {
			return err
		}
		set := weeks
		if k == strata.PeriodMonth {
			set = months
		}
		for _, n := range ns {
			n.Key = strata.PartBase(n.Key)
			pp := strata.NodePeriod(n, k, e.loc)
			set[pp.Label()] = pp
		}
	}
	return nil
}

// writePeriods writes the primers of the ended periods of kind k in set, in
// label order: a month's in its folder, a week's by its quarter.
func (e *exporter) writePeriods(k strata.PeriodKind, set map[string]strata.Period) error {
	folder := WeeklyDir
	if k == strata.PeriodMonth {
		folder = MonthlyDir
	}
	for _, label := range sortedKeys(set) {
		pp := set[label]
		if e.before.IsZero() || pp.End.After(e.before) {
			continue
		}
		text, err := e.period(k, pp)
		if err != nil {
			return err
		}
		if text == "" {
			continue
		}
		name := label + ".md"
		if k == strata.PeriodMonth {
			if err := e.write(folder+"/"+name, text); err != nil {
				return err
			}
			continue
		}
		thursday := pp.Start.AddDate(0, 0, 3)
		if err := e.place(folder+"/"+name, strata.Quarter(thursday)+"/"+name, e.weeksOld(pp.Start) > WeeklyKeepWeeks, text); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys(m map[string]strata.Period) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// daily renders the file of one day's session.
func (e *exporter) daily(d daily) (string, error) {
	s, err := e.m.Summarize(e.ctx, strata.SummaryRequest{Conversation: e.c.ID, Level: 1, LevelName: "daily",
		Budget: DailyBudget, Turns: d.turns})
	if err != nil {
		return "", fmt.Errorf("primers: %s %s session %02d: %w", e.c.ID, d.day.Label(), d.n, err)
	}
	first, last := d.turns[0].Time, d.turns[0].Time
	lo, hi := d.turns[0].Seq, d.turns[0].Seq
	for _, t := range d.turns {
		first, last = minTime(first, t.Time), maxTime(last, t.Time)
		lo, hi = min(lo, t.Seq), max(hi, t.Seq)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Daily Primer -- %s Session %02d\n\n", d.day.Label(), d.n)
	fmt.Fprintf(&b, "Conversation: %s\n", e.c.ID)
	fmt.Fprintf(&b, "Date: %s (%s)\n", d.day.Label(), d.day.Start.Weekday())
	fmt.Fprintf(&b, "Session: %02d of the day (session %d of the conversation)\n", d.n, d.turns[0].Session)
	fmt.Fprintf(&b, "Time: %s .. %s (%s)\n", first.In(e.loc).Format("15:04"), last.In(e.loc).Format("15:04"), e.loc)
	fmt.Fprintf(&b, "Turns: %d (seq %d-%d)\n", len(d.turns), lo, hi)
	writeBody(&b, s.Text, s.Facts, nil, nil)
	return b.String(), nil
}

// period renders the file of a closed week or month: its nodes, or a
// summary of its turns if it has none. It returns "" for a period with
// neither.
func (e *exporter) period(k strata.PeriodKind, pp strata.Period) (string, error) {
	title, what, budget, name := "Weekly Primer", "Week", WeeklyBudget, "weekly"
	if k == strata.PeriodMonth {
		title, what, budget, name = "Monthly Primer", "Month", MonthlyBudget, "monthly"
	}
	label := pp.Label()
	var b strings.Builder
	fmt.Fprintf(&b, "# %s -- %s\n\n", title, label)
	fmt.Fprintf(&b, "Conversation: %s\n", e.c.ID)
	fmt.Fprintf(&b, "%s: %s, %s .. %s\n", what, label, pp.Start.Format(time.DateOnly), pp.End.Add(-time.Nanosecond).Format(time.DateOnly))
	var nodes []strata.Node
	if lvl := e.p.LevelOf(k); lvl > 0 {
		// A week cut at the end of a month has a node in each month; the
		// second carries its month in its key.
		keys := []string{label}
		if last := strata.PeriodOf(strata.PeriodMonth, pp.End.Add(-time.Nanosecond), e.loc); k == strata.PeriodWeek && last.Start.After(pp.Start) {
			keys = append(keys, label+" ("+last.Label()+")")
		}
		for _, key := range keys {
			ns, err := e.m.Store().Nodes(e.ctx, strata.NodeFilter{Namespace: e.m.Namespace(), Conversation: e.c.ID, Level: lvl, Key: key})
			if err != nil {
				return "", err
			}
			nodes = append(nodes, ns...)
		}
	}
	if len(nodes) > 0 {
		var sums, facts, themes, ids []string
		aggs := make([]*strata.Aggregates, 0, len(nodes))
		lo, hi := nodes[0].FirstSeq, nodes[0].LastSeq
		for _, n := range nodes {
			lo, hi = min(lo, n.FirstSeq), max(hi, n.LastSeq)
			sums = append(sums, strings.TrimSpace(n.Summary))
			facts = appendNew(facts, n.Facts...)
			themes = appendNew(themes, n.Themes...)
			ids = append(ids, n.ID)
			aggs = append(aggs, n.Aggregates)
		}
		fmt.Fprintf(&b, "Turns: seq %d-%d\n", lo, hi)
		fmt.Fprintf(&b, "Source: %s node %s\n", e.p.LevelName(nodes[0].Level), strings.Join(ids, ", "))
		writeBody(&b, strings.Join(sums, "\n\n"), facts, themes, strata.MergeAggregates(aggs))
		return b.String(), nil
	}
	ts, err := e.m.Zoom(e.ctx, e.c.ID, pp)
	if err != nil {
		return "", err
	}
	if len(ts) == 0 {
		return "", nil
	}
	s, err := e.m.Summarize(e.ctx, strata.SummaryRequest{Conversation: e.c.ID, Level: 1, LevelName: name, Budget: budget, Turns: ts})
	if err != nil {
		return "", fmt.Errorf("primers: %s %s: %w", e.c.ID, label, err)
	}
	fmt.Fprintf(&b, "Turns: %d (seq %d-%d)\n", len(ts), ts[0].Seq, ts[len(ts)-1].Seq)
	fmt.Fprintf(&b, "Source: a summary of the %s's turns\n", strings.ToLower(what))
	writeBody(&b, s.Text, s.Facts, s.Themes, strata.AggregateTurns(ts))
	return b.String(), nil
}

// writeBody writes a primer's summary, facts, themes and statistics.
func writeBody(b *strings.Builder, summary string, facts, themes []string, agg *strata.Aggregates) {
	b.WriteString("\n## Summary\n\n")
	if s := strings.TrimSpace(summary); s != "" {
		b.WriteString(s + "\n")
	} else {
		b.WriteString("(empty)\n")
	}
	if len(facts) > 0 {
		b.WriteString("\n## Key Facts\n\n")
		for _, f := range facts {
			b.WriteString("- " + strings.Join(strings.Fields(f), " ") + "\n")
		}
	}
	if len(themes) > 0 {
		b.WriteString("\n## Themes\n\n" + strings.Join(themes, ", ") + "\n")
	}
	if s := agg.String(); s != "" {
		b.WriteString("\n## Statistics\n\n" + s + "\n")
	}
}

// appendNew appends the items of add that out does not hold yet.
func appendNew(out []string, add ...string) []string {
	for _, s := range add {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// path returns the file system path of rel, a slash-separated path in
// the tree.
func (e *exporter) path(rel string) string { return filepath.Join(e.dir, filepath.FromSlash(rel)) }

// place writes a daily or weekly primer: at live, or at arch (a path
// inside the archive folder) if it is old or was archived before, moving
// the live file there first if there is one.
func (e *exporter) place(live, arch string, old bool, text string) error {
	arch = ArchiveDir + "/" + arch
	if !old {
		switch _, err := os.Lstat(e.path(arch)); {
		case errors.Is(err, fs.ErrNotExist):
			return e.write(live, text)
		case err != nil:
			return fmt.Errorf("primers: %s: %w", e.path(arch), err)
		}
	}
	if err := e.move(live, arch); err != nil {
		return err
	}
	written := e.res.Written
	if err := e.write(arch, text); err != nil {
		return err
	}
	e.res.WrittenInArchive += e.res.Written - written
	return nil
}

// move renames the primer from to the archive path to, unless to exists
// already or from does not.
func (e *exporter) move(from, to string) error {
	src, dst := e.path(from), e.path(to)
	if _, err := os.Lstat(dst); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("primers: %s: %w", dst, err)
	}
	fi, err := os.Lstat(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("primers: %s: %w", src, err)
	}
	if !fi.Mode().IsRegular() {
		return strata.Errorf(strata.EINVALID, "primers: %s is not a regular file", src)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("primers: %s: %w", dst, err)
	}
	if err := os.Rename(src, dst); err != nil {
		return fmt.Errorf("primers: move %s to %s: %w", src, dst, err)
	}
	e.res.Moved++
	return nil
}

// write makes the file rel hold text, writing only if its content differs.
func (e *exporter) write(rel, text string) error {
	path := e.path(rel)
	e.res.Files = append(e.res.Files, rel)
	old, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(old, []byte(text)):
		e.res.Unchanged++
		return nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("primers: %s: %w", path, err)
	}
	if err := writeAtomic(path, []byte(text)); err != nil {
		return err
	}
	e.res.Written++
	return nil
}

// writeAtomic writes data to path through a temporary file in the same
// folder, renamed over path once it is complete and synced.
func writeAtomic(path string, data []byte) error {
	fail := func(err error) error { return fmt.Errorf("primers: write %s: %w", path, err) }
	d := filepath.Dir(path)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return fail(err)
	}
	f, err := os.CreateTemp(d, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fail(err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp) // our own temporary file, never a file of the tree
		return fail(err)
	}
	return nil
}
