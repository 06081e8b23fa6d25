package strata

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// DefaultUploadBytes is the byte cap of an upload package when the request
// gives none: 35 KB, the ceiling 003 sets so that the package fits a
// model's context with room for the conversation itself.
const DefaultUploadBytes = 35840

// Upload section kinds: the tier a section of an upload package stands for.
const (
	UploadFixed   = "fixed"   // a caller's fixed section
	UploadMonthly = "monthly" // long-term context
	UploadWeekly  = "weekly"  // this week, or a week of the weekly fallback
	UploadDaily   = "daily"   // a day of the daily fallback
	UploadSession = "session" // one of today's sessions, raw
)

// Fallback limits of an upload package (003): without a monthly summary it
// shows up to this many weeklies, and without a weekly this many dailies.
const (
	UploadMaxWeeklies = 4
	UploadMaxDailies  = 7
)

// UploadRequest asks for an upload package: the fixed-size Markdown file
// 003 hands a new chat (long-term context, this week, today's sessions).
type UploadRequest struct {
	Conversation string
	// Now is the reference time: "today" is the day of Now in the
	// conversation's time zone, and only calendar periods that ended by
	// the start of today are shown as summaries. Zero means the time of
	// the conversation's newest turn. The package's Generated line shows
	// it, so the same request over the same store gives the same bytes.
	Now time.Time
	// MaxBytes caps the package's size in bytes; zero means
	// DefaultUploadBytes.
	MaxBytes int
	// Budget caps the package's tokens as counted by the Memory's
	// tokenizer; zero means no token limit besides MaxBytes.
	Budget int
	// Sections are fixed texts placed first, counted against both limits;
	// if they do not fit with the package's header, Upload fails.
	Sections []Section
}

// UploadSection describes one section of an upload package.
type UploadSection struct {
	Title string `json:"title"`
	// Kind is UploadFixed, UploadMonthly, UploadWeekly, UploadDaily or
	// UploadSession.
	Kind string `json:"kind"`
	// Key names what the section shows: a node's key ("2023-05",
	// "2023-W19", "2023-05-08", "session 12"), "turns 1-100" for a node of
	// a count level, or "session 12" for one of today's sessions.
	Key string `json:"key,omitempty"`
	// Bytes is the section's size in the package, heading and separator
	// included.
	Bytes int `json:"bytes"`
}

// UploadPackage is an assembled upload package.
type UploadPackage struct {
	Conversation string          `json:"conversation"`
	Generated    time.Time       `json:"generated"` // the reference time
	Today        string          `json:"today"`     // the day of Generated, "2023-05-08"
	Markdown     string          `json:"markdown"`
	Bytes        int             `json:"bytes"`
	Tokens       int             `json:"tokens"`
	Tokenizer    string          `json:"tokenizer"`
	MaxBytes     int             `json:"max_bytes"`
	Budget       int             `json:"budget,omitempty"`
	Sections     []UploadSection `json:"sections"`
	// Dropped names the sections left out to stay within the limits
	// ("This Week", "Today Session 01"), in the order they were dropped.
	Dropped []string `json:"dropped"`
	// Warnings say what the reader of the package loses: a section that
	// alone exceeds the limits, or one of today's sessions left out.
	Warnings []string `json:"warnings"`
}

// uploadPart is one candidate section of an upload package.
type uploadPart struct {
	UploadSection
	text string // rendered: heading, body, separator
	drop int    // order of dropping: lower goes first
	// today marks one of today's sessions: dropping it is said in the
	// package as well as in the warnings.
	today bool
	label string // how a warning names it
}

// uploadSeparator closes every section, as 003 does.
const uploadSeparator = "\n\n---\n\n"

// renderUploadPart renders a section: its heading, body and separator.
func renderUploadPart(title, body string) string {
	return "## " + title + "\n\n" + strings.TrimRight(body, "\n") + uploadSeparator
}

// Upload assembles the conversation's upload package (003): a title, a
// Generated line showing the reference time, the caller's fixed sections,
// then
//
//   - "Long-Term Context": the summary of the latest month that ended by
//     the start of today;
//   - "This Week": the summary of the latest week that ended by then, shown
//     only when there is a long-term context;
//   - "Today Session NN": each session of today, its turns raw, one
//     "[HH:MM] Speaker: text" line each (a turn of several lines continues
//     on indented lines), NN counting today's sessions from 01.
//
// Without a month summary it falls back to up to UploadMaxWeeklies of the
// latest weeks ("Weekly Context (2023-W19)"), without a week summary to up
// to UploadMaxDailies of the latest days ("Daily Context (2023-05-08)");
// with nothing to show at all it says there is no history.
//
// A policy without calendar levels (chunks, sessions) has no months or
// weeks: the latest node of its coarsest level that ended before today is
// the long-term context, and the latest node of the next finer level that
// follows it and ended before today is "This Week".
//
// The package stays within req.MaxBytes and req.Budget tokens. Over
// either, sections are dropped whole, never cut: first the fallback
// extras (the oldest first), then This Week, then the long-term context;
// today's sessions go only when they alone exceed the limits, the oldest
// first, and the package then says so in a note as well as in Warnings. A
// section that alone exceeds the limits is dropped with a warning. Fixed
// sections that do not fit with the title are an EINVALID error.
func (m *Memory) Upload(ctx context.Context, req UploadRequest) (*UploadPackage, error) {
	if err := ValidateConversationID(req.Conversation); err != nil {
		return nil, err
	}
	if req.MaxBytes < 0 {
		return nil, Errorf(EINVALID, "upload: max bytes %d is negative", req.MaxBytes)
	}
	if req.Budget < 0 {
		return nil, Errorf(EINVALID, "upload: budget %d is negative", req.Budget)
	}
	if req.MaxBytes == 0 {
		req.MaxBytes = DefaultUploadBytes
	}
	for i, s := range req.Sections {
		if s.Title == "" || strings.ContainsAny(s.Title, "\n\r") {
			return nil, Errorf(EINVALID, "upload: section %d: a title is one line of text, and not empty", i+1)
		}
	}
	c, err := m.store.Conversation(ctx, m.ns, req.Conversation)
	if err != nil {
		return nil, err
	}
	p, err := m.policyFor(c)
	if err != nil {
		return nil, err
	}
	loc := c.Location()
	ref := req.Now
	if ref.IsZero() {
		ref = c.Last
	}
	if ref.IsZero() {
		ref = m.now()
	}
	ref = ref.In(loc)
	today := PeriodOf(PeriodDay, ref, loc)

	var history []uploadPart
	if p.Calendar() {
		history, err = m.uploadCalendar(ctx, c, p, today.Start)
	} else {
		history, err = m.uploadLevels(ctx, c, p, today.Start)
	}
	if err != nil {
		return nil, err
	}
	sessions, err := m.uploadToday(ctx, c, today)
	if err != nil {
		return nil, err
	}

	pkg := &UploadPackage{Conversation: c.ID, Generated: ref, Today: today.Label(), Tokenizer: m.tok.Name(),
		MaxBytes: req.MaxBytes, Budget: req.Budget, Sections: []UploadSection{}, Dropped: []string{}, Warnings: []string{}}
	head := "# Knowledge Primer -- Upload Package\n\nGenerated: " + ref.Format(time.RFC3339) + "\nConversation: " + c.ID + "\n"
	var fixed []uploadPart
	for _, s := range req.Sections {
		fixed = append(fixed, uploadPart{UploadSection: UploadSection{Title: s.Title, Kind: UploadFixed},
			text: renderUploadPart(s.Title, s.Text)})
	}
	limits := fmt.Sprintf("%d bytes", req.MaxBytes)
	if req.Budget > 0 {
		limits += fmt.Sprintf(" and %d tokens", req.Budget)
	}
	fits := func(md string) bool {
		return len(md) <= req.MaxBytes && (req.Budget == 0 || m.tok.Count(md) <= req.Budget)
	}
	// render writes the package with the given sections of history and
	// of today, in the order given.
	render := func(parts []uploadPart) string {
		var b strings.Builder
		b.WriteString(head)
		b.WriteString(todayNote(parts, sessions, limits))
		b.WriteString("\n")
		for _, f := range fixed {
			b.WriteString(f.text)
		}
		for _, q := range parts {
			b.WriteString(q.text)
		}
		if len(history) == 0 && len(sessions) == 0 {
			fmt.Fprintf(&b, "No history yet: no summary of a period before %s and no turn on %s.\n", pkg.Today, pkg.Today)
		}
		return b.String()
	}
	if md := render(nil); !fits(md) {
		what := "the package's title"
		if len(fixed) > 0 {
			what = fmt.Sprintf("the title and %d fixed sections", len(fixed))
		}
		if len(md) > req.MaxBytes {
			return nil, Errorf(EINVALID, "upload: max bytes %d is too small: %s take %d bytes", req.MaxBytes, what, len(md))
		}
		return nil, Errorf(EINVALID, "upload: budget %d is too small: %s take %d tokens", req.Budget, what, m.tok.Count(md))
	}

	// Every candidate, in the order the package shows them.
	all := append(append([]uploadPart{}, history...), sessions...)
	keep := make([]bool, len(all))
	for i := range all {
		keep[i] = true
	}
	kept := func() []uploadPart {
		var out []uploadPart
		for i, q := range all {
			if keep[i] {
				out = append(out, q)
			}
		}
		return out
	}
	drop := func(i int) {
		keep[i] = false
		pkg.Dropped = append(pkg.Dropped, all[i].Title)
	}
	// A section that alone exceeds the limits goes first, with a warning.
	for i, q := range all {
		if !fits(render([]uploadPart{q})) {
			drop(i)
			pkg.Warnings = append(pkg.Warnings, fmt.Sprintf("%s (%d bytes, %d tokens) alone exceeds the limit of %s: left out",
				q.label, len(q.text), m.tok.Count(q.text), limits))
		}
	}
	// Then the others, in drop order, until the package fits.
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return all[a].drop - all[b].drop })
	for _, i := range order {
		if fits(render(kept())) {
			break
		}
		if !keep[i] {
			continue
		}
		drop(i)
		if all[i].today {
			pkg.Warnings = append(pkg.Warnings, fmt.Sprintf("%s left out: today's sessions alone exceed the limit of %s", all[i].label, limits))
		}
	}
	parts := kept()
	md := render(parts)
	if !fits(md) {
		// Only the title and the fixed sections are left, and they fit.
		return nil, Errorf(EINTERNAL, "upload: %d bytes after dropping every section", len(md))
	}
	for _, q := range append(fixed, parts...) {
		q.Bytes = len(q.text)
		pkg.Sections = append(pkg.Sections, q.UploadSection)
	}
	pkg.Markdown, pkg.Bytes, pkg.Tokens = md, len(md), m.tok.Count(md)
	return pkg, nil
}

// todayNote is the line that says which of today's sessions were left out
// ("" when none was).
func todayNote(kept, today []uploadPart, limits string) string {
	in := map[string]bool{}
	for _, q := range kept {
		if q.today {
			in[q.Title] = true
		}
	}
	var out []string
	for _, q := range today {
		if !in[q.Title] {
			out = append(out, strings.TrimPrefix(q.Title, "Today Session "))
		}
	}
	switch len(out) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("Note: today's session %s is left out, to keep the package within %s.\n", out[0], limits)
	}
	return fmt.Sprintf("Note: today's sessions %s are left out, to keep the package within %s.\n", strings.Join(out, ", "), limits)
}

// uploadCalendar returns the history sections of a calendar policy: the
// latest month and week closed by before, or the fallbacks.
func (m *Memory) uploadCalendar(ctx context.Context, c Conversation, p Policy, before time.Time) ([]uploadPart, error) {
	loc := c.Location()
	month, err := m.closedNodes(ctx, c.ID, p.LevelOf(PeriodMonth), PeriodMonth, loc, before, 1)
	if err != nil {
		return nil, err
	}
	weeks, err := m.closedNodes(ctx, c.ID, p.LevelOf(PeriodWeek), PeriodWeek, loc, before, UploadMaxWeeklies)
	if err != nil {
		return nil, err
	}
	if len(month) > 0 {
		out := []uploadPart{nodePart("Long-Term Context", UploadMonthly, month[0], loc, 2)}
		if len(weeks) > 0 {
			out = append(out, nodePart("This Week", UploadWeekly, weeks[0], loc, 1))
		}
		return out, nil
	}
	if len(weeks) > 0 {
		return fallbackParts("Weekly Context", UploadWeekly, weeks, loc), nil
	}
	days, err := m.closedNodes(ctx, c.ID, p.LevelOf(PeriodDay), PeriodDay, loc, before, UploadMaxDailies)
	if err != nil {
		return nil, err
	}
	return fallbackParts("Daily Context", UploadDaily, days, loc), nil
}

// fallbackParts shows nodes (newest first) oldest first; the oldest is
// dropped first.
func fallbackParts(title, kind string, nodes []Node, loc *time.Location) []uploadPart {
	out := make([]uploadPart, 0, len(nodes))
	for i := len(nodes) - 1; i >= 0; i-- {
		key := nodeKey(nodes[i])
		out = append(out, nodePart(title+" ("+key+")", kind, nodes[i], loc, len(nodes)-1-i))
	}
	return out
}

// uploadLevels returns the history sections of a policy without calendar
// levels: the latest node of the coarsest level that has one before
// before, and the latest node of the next finer level after it.
func (m *Memory) uploadLevels(ctx context.Context, c Conversation, p Policy, before time.Time) ([]uploadPart, error) {
	loc := c.Location()
	for lvl := len(p.Levels); lvl >= 1; lvl-- {
		lt, err := m.nodesBefore(ctx, NodeFilter{Namespace: m.ns, Conversation: c.ID, Level: lvl, Newest: true}, before)
		if err != nil {
			return nil, err
		}
		if lt == nil {
			continue
		}
		out := []uploadPart{nodePart("Long-Term Context", UploadMonthly, *lt, loc, 2)}
		if lvl > 1 {
			wk, err := m.nodesBefore(ctx, NodeFilter{Namespace: m.ns, Conversation: c.ID, Level: lvl - 1, Newest: true,
				FromSeq: lt.LastSeq + 1}, before)
			if err != nil {
				return nil, err
			}
			if wk != nil {
				out = append(out, nodePart("This Week", UploadWeekly, *wk, loc, 1))
			}
		}
		return out, nil
	}
	return nil, nil
}

// nodesBefore returns the newest node matching f whose last turn is before
// before, or nil.
func (m *Memory) nodesBefore(ctx context.Context, f NodeFilter, before time.Time) (*Node, error) {
	f.Overlaps = Period{End: before}
	for limit := 8; ; limit *= 4 {
		f.Limit = limit
		ns, err := m.store.Nodes(ctx, f)
		if err != nil {
			return nil, err
		}
		for i := range ns {
			if ns[i].End.Before(before) {
				return &ns[i], nil
			}
		}
		if len(ns) < limit {
			return nil, nil
		}
	}
}

// closedNodes returns up to n of the newest nodes of calendar level lvl
// (none if lvl is 0) whose period ended by before, newest first.
func (m *Memory) closedNodes(ctx context.Context, conv string, lvl int, kind PeriodKind, loc *time.Location, before time.Time, n int) ([]Node, error) {
	if lvl == 0 {
		return nil, nil
	}
	f := NodeFilter{Namespace: m.ns, Conversation: conv, Level: lvl, Newest: true, Overlaps: Period{End: before}}
	for limit := n + 8; ; limit *= 4 {
		f.Limit = limit
		ns, err := m.store.Nodes(ctx, f)
		if err != nil {
			return nil, err
		}
		var out []Node
		for _, nd := range ns {
			if !NodePeriod(nd, kind, loc).End.After(before) {
				out = append(out, nd)
				if len(out) == n {
					return out, nil
				}
			}
		}
		if len(ns) < limit {
			return out, nil
		}
	}
}

// NodePeriod returns the calendar period of a node of a calendar level of
// the given kind: the period its key names, or, for a node without a
// readable key, the period of its first turn, in loc.
func NodePeriod(n Node, kind PeriodKind, loc *time.Location) Period {
	if p, err := ParsePeriod(n.Key, loc); err == nil && p.Kind == kind {
		return p
	}
	return PeriodOf(kind, n.Start, loc)
}

// nodeKey names a node in a section title: its key, or its span of turns.
func nodeKey(n Node) string {
	if n.Key != "" {
		return n.Key
	}
	return fmt.Sprintf("turns %d-%d", n.FirstSeq, n.LastSeq)
}

// nodePart renders a node as an upload section.
func nodePart(title, kind string, n Node, loc *time.Location, drop int) uploadPart {
	key := nodeKey(n)
	span := n.Start.In(loc).Format(time.DateOnly)
	if e := n.End.In(loc).Format(time.DateOnly); e != span {
		span += " .. " + e
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Covers %s: turns %d-%d, %s.\n\n", key, n.FirstSeq, n.LastSeq, span)
	b.WriteString(strings.TrimSpace(n.Summary))
	return uploadPart{UploadSection: UploadSection{Title: title, Kind: kind, Key: key},
		text: renderUploadPart(title, b.String()), drop: drop, label: title}
}

// uploadToday returns today's sessions as sections, oldest first.
func (m *Memory) uploadToday(ctx context.Context, c Conversation, today Period) ([]uploadPart, error) {
	if c.Turns == 0 {
		return nil, nil
	}
	turns, err := m.Zoom(ctx, c.ID, today)
	if err != nil {
		return nil, err
	}
	loc := c.Location()
	groups := SessionsOfDay(turns)
	out := make([]uploadPart, 0, len(groups))
	for i, g := range groups {
		title := fmt.Sprintf("Today Session %02d", i+1)
		var b strings.Builder
		first, last := g[0].Time, g[0].Time
		for _, t := range g {
			if t.Time.Before(first) {
				first = t.Time
			}
			if t.Time.After(last) {
				last = t.Time
			}
		}
		n := "turns"
		if len(g) == 1 {
			n = "turn"
		}
		fmt.Fprintf(&b, "Session %d of the conversation, %s .. %s, %d %s.\n\n", g[0].Session,
			first.In(loc).Format("15:04"), last.In(loc).Format("15:04"), len(g), n)
		for _, t := range g {
			b.WriteString(turnLine(t, loc))
			b.WriteByte('\n')
		}
		out = append(out, uploadPart{UploadSection: UploadSection{Title: title, Kind: UploadSession,
			Key: fmt.Sprintf("session %d", g[0].Session)}, text: renderUploadPart(title, b.String()),
			drop: 100 + i, today: true, label: fmt.Sprintf("%s (session %d, %d %s)", title, g[0].Session, len(g), n)})
	}
	return out, nil
}

// SessionsOfDay splits the turns of one day (in seq order) by session, in
// the order the sessions first appear: the day's first session, its
// second, and so on.
func SessionsOfDay(turns []Turn) [][]Turn {
	idx := map[int]int{}
	var out [][]Turn
	for _, t := range turns {
		i, ok := idx[t.Session]
		if !ok {
			i = len(out)
			idx[t.Session] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], t)
	}
	return out
}

// turnLine renders a turn as one line, "[HH:MM] Speaker: text", with the
// time in loc. A text of several lines continues on lines indented by two
// spaces, so that every line of the turn stays visibly inside it.
func turnLine(t Turn, loc *time.Location) string {
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(t.Text(), "\r\n", "\n"), "\n"), "\n")
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "" {
			lines[i] = "  " + lines[i]
		}
	}
	return "[" + t.Time.In(loc).Format("15:04") + "] " + t.Speaker() + ": " + strings.Join(lines, "\n")
}
