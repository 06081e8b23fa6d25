package strata

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// DefaultUploadBytes is the byte cap of an upload package when the request
// gives none: 35 KB, the ceiling 003 sets so that the package fits a
// model's context with room for the conversation itself.
const DefaultUploadBytes = 35840

// Upload section kinds: what a section of an upload package stands for.
const (
	UploadFixed   = "fixed"   // a caller's fixed section
	UploadMonthly = "monthly" // a month, or a node of the coarsest level shown
	UploadWeekly  = "weekly"  // a week, or a node of the next finer level
	UploadDaily   = "daily"   // a day, or a node of a finer level still
	// UploadSummary is a summary written for the package: an overview of
	// older closed history that does not fit as it is, or the turns since
	// the last closed period (today's, mostly) that are not shown raw.
	UploadSummary = "summary"
	UploadSession = "session" // one of today's sessions, raw (its newest turns when not all fit)
	UploadTurns   = "turns"   // the turns of a session before today, raw
)

// uploadCoverageShare is the share of an upload package's room (what its
// limits leave after the title and the fixed sections) that the
// summaries of the closed periods before today may take; what they leave
// goes to raw turns.
const uploadCoverageShare = 0.5

// uploadMaxOpen bounds the turns since the last closed period that an
// upload package reads; older ones are listed as omitted.
const uploadMaxOpen = 4096

// UploadRequest asks for an upload package: the fixed-size Markdown file
// 003 hands a new chat (long-term context, this week, today's sessions).
type UploadRequest struct {
	Conversation string
	// Now is the reference time: "today" is the day of Now in the
	// conversation's time zone, the package covers the turns up to the end
	// of today, and only calendar periods that ended by the start of today
	// are shown as their summaries. Zero means the time of the
	// conversation's newest turn. The package's Generated line shows it,
	// so the same request over the same store gives the same bytes.
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
	// Kind is UploadFixed, UploadMonthly, UploadWeekly, UploadDaily,
	// UploadSummary, UploadSession or UploadTurns.
	Kind string `json:"kind"`
	// Key names what the section shows: a node's key ("2023-05",
	// "2023-W19", "2023-05-08", "session 12"), "turns 1-100" for a node of
	// a count level or a summary of turns written for the package, the
	// keys an overview merges ("2022-09 .. 2023-03"), or "session 12" for
	// the raw turns of a session.
	Key string `json:"key,omitempty"`
	// FirstSeq and LastSeq are the span of turns the section covers (none
	// for a fixed section). The raw turns of a session may leave out,
	// with a line that says so, a turn too long to show; a summary above
	// covers it.
	FirstSeq int64 `json:"first_seq,omitempty"`
	LastSeq  int64 `json:"last_seq,omitempty"`
	// Bytes is the section's size in the package, heading and separator
	// included.
	Bytes int `json:"bytes"`
}

// UploadPackage is an assembled upload package.
type UploadPackage struct {
	Conversation string    `json:"conversation"`
	Generated    time.Time `json:"generated"` // the reference time
	Today        string    `json:"today"`     // the day of Generated, "2023-05-08"
	// Turns is the history the package covers: turns 1 to Turns, the
	// last turn before the end of today.
	Turns     int64           `json:"turns"`
	Markdown  string          `json:"markdown"`
	Bytes     int             `json:"bytes"`
	Tokens    int             `json:"tokens"`
	Tokenizer string          `json:"tokenizer"`
	MaxBytes  int             `json:"max_bytes"`
	Budget    int             `json:"budget,omitempty"`
	Sections  []UploadSection `json:"sections"`
	// Omitted lists the turns of the history that the package neither
	// shows raw nor covers by a summary; the package says so too.
	Omitted []Omission `json:"omitted"`
	// Merged names the closed periods whose summaries did not fit as they
	// are and are covered by an overview written for the package
	// ("Monthly Context (2023-03)"), oldest first.
	Merged []string `json:"merged"`
	// Dropped names the sections the limits left out with nothing
	// standing for them, oldest first: closed periods some of whose turns
	// are omitted ("Weekly Context (2023-W18)"), and today's sessions all
	// of whose turns are omitted ("Today Session 01").
	Dropped []string `json:"dropped"`
	// Warnings say what the reader of the package loses: today's turns
	// shown only as a summary, turns omitted.
	Warnings []string `json:"warnings"`
}

// uploadPart is a section of an upload package: a summary, or the raw
// turns of one session on one day.
type uploadPart struct {
	UploadSection
	text string // rendered: heading, body, separator
	cost ucost
	node *Node // the closed period a summary section shows
}

// uploadSeparator closes every section, as 003 does.
const uploadSeparator = "\n\n---\n\n"

// renderUploadPart renders a section: its heading, body and separator.
func renderUploadPart(title, body string) string {
	return "## " + title + "\n\n" + strings.TrimRight(body, "\n") + uploadSeparator
}

// ucost is the size of a piece of an upload package in bytes and in
// tokens; tokens are counted only when the package has a token budget.
type ucost struct{ b, t int }

func (x ucost) plus(y ucost) ucost  { return ucost{x.b + y.b, x.t + y.t} }
func (x ucost) minus(y ucost) ucost { return ucost{x.b - y.b, x.t - y.t} }
func (x ucost) scale(f float64) ucost {
	return ucost{int(float64(x.b) * f), int(float64(x.t) * f)}
}

// Upload assembles the conversation's upload package (003): a title, a
// Generated line showing the reference time, the caller's fixed sections,
// then the whole history up to the end of today, every turn shown raw,
// under a summary, or listed as omitted:
//
//   - the closed periods before today as their summaries, oldest first:
//     every closed month, then the closed weeks after the last of them,
//     then the closed days after the last week. The latest month is
//     "Long-Term Context", the latest week after it "This Week", the
//     others "Monthly Context (2023-03)", "Weekly Context (2023-W18)",
//     "Daily Context (2023-05-08)". A policy without calendar levels
//     (chunks, sessions) tiles the history the same way with its own
//     levels: the latest node of its coarsest level shown is the
//     long-term context, the latest of the next finer level "This Week",
//     the others "Macro Context (turns 1-100)", "Session Context (session
//     9)";
//   - the turns after those periods (today's, and those of a period not
//     rolled up yet), newest first, raw as far as they fit: "Today Session
//     NN" for each session of today, NN counting today's sessions from 01,
//     "Session 12 (2023-05-08)" for a session of an earlier day; one
//     "[HH:MM] Speaker: text" line per turn (a turn of several lines
//     continues on indented lines). A turn that alone takes more than a
//     quarter of the limits is a line that says so. The turns not shown
//     raw are summarized in one section written for the package, as a
//     context package summarizes its open turns: "Earlier Today", or
//     "Today (Summary)" when it holds a turn too long to show, or "Recent
//     Turns (Summary)" when they are not all of today;
//   - when all of those are raw, the raw turns go on into the closed
//     periods, newest first, as far as the limits allow; a period all of
//     whose turns are raw loses its summary to them.
//
// The summaries of closed periods take at most half of what the limits
// leave after the title and the fixed sections: when they do not fit it
// as they are, the newest stay as they are and the older are merged into
// overview summaries written for the package ("Earlier History
// (2022-09-01 .. 2023-04-01)"), and what even those cannot cover is
// listed as omitted, in the package and in Omitted. The summary of the
// turns not shown raw takes at most half of what is left, and not the
// room of the newest turn unless nothing else covers the turns. So a
// package whose history does not fit its limits raw fills them, short by
// about one turn and a section heading at most. With nothing before the
// end of today it says there is no history.
//
// The package stays within req.MaxBytes and req.Budget tokens. Fixed
// sections that do not fit with the title are an EINVALID error.
func (m *Memory) Upload(ctx context.Context, req UploadRequest) (*UploadPackage, error) {
	return m.assembly.upload(ctx, req)
}

// upload is Memory.Upload.
func (as *assembly) upload(ctx context.Context, req UploadRequest) (*UploadPackage, error) {
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
	c, err := as.conversation(ctx, req.Conversation)
	if err != nil {
		return nil, err
	}
	p, err := as.policyFor(c)
	if err != nil {
		return nil, err
	}
	loc := c.Location()
	ref := req.Now
	if ref.IsZero() {
		ref = c.Last
	}
	if ref.IsZero() {
		ref = as.now()
	}
	ref = ref.In(loc)
	u := &uploader{as: as, ctx: ctx, c: c, p: p, loc: loc, today: PeriodOf(PeriodDay, ref, loc),
		limit: ucost{req.MaxBytes, req.Budget}, tokens: req.Budget > 0,
		head:    "# Knowledge Primer -- Upload Package\n\nGenerated: " + ref.Format(time.RFC3339) + "\nConversation: " + c.ID + "\n",
		limits:  fmt.Sprintf("%d bytes", req.MaxBytes),
		skipped: map[int64]bool{}, cache: map[int64]Turn{}, missing: map[int64]bool{}}
	if !u.tokens {
		u.limit.t = math.MaxInt / 2
	} else {
		u.limits += fmt.Sprintf(" and %d tokens", req.Budget)
	}
	var fixed strings.Builder
	for _, s := range req.Sections {
		t := renderUploadPart(s.Title, s.Text)
		fixed.WriteString(t)
		u.fixed = append(u.fixed, uploadPart{UploadSection: UploadSection{Title: s.Title, Kind: UploadFixed}, text: t})
	}
	pkg := &UploadPackage{Conversation: c.ID, Generated: ref, Today: u.today.Label(), Tokenizer: as.tok.Name(),
		MaxBytes: req.MaxBytes, Budget: req.Budget, Sections: []UploadSection{}, Omitted: []Omission{},
		Merged: []string{}, Dropped: []string{}, Warnings: []string{}}
	if md := u.head + "\n" + fixed.String(); !u.within(u.cost(md), u.limit) {
		what := "the package's title"
		if len(req.Sections) > 0 {
			what = fmt.Sprintf("the title and %d fixed sections", len(req.Sections))
		}
		if len(md) > req.MaxBytes {
			return nil, Errorf(EINVALID, "upload: max bytes %d is too small: %s take %d bytes", req.MaxBytes, what, len(md))
		}
		return nil, Errorf(EINVALID, "upload: budget %d is too small: %s take %d tokens", req.Budget, what, as.tok.Count(md))
	}
	if err := u.assemble(); err != nil {
		return nil, err
	}
	md, err := u.fit()
	if err != nil {
		return nil, err
	}
	u.describe(pkg, md)
	return pkg, nil
}

// describe fills pkg with the rendered package md and what it holds,
// merged, dropped and omitted.
func (u *uploader) describe(pkg *UploadPackage, md string) {
	pkg.Turns = u.last
	for _, q := range u.parts() {
		q.Bytes = len(q.text)
		pkg.Sections = append(pkg.Sections, q.UploadSection)
	}
	pkg.Omitted = append(pkg.Omitted, u.omitted()...)
	merged, lost := u.dropped()
	pkg.Merged = append(pkg.Merged, merged...)
	pkg.Dropped = append(pkg.Dropped, lost...)
	pkg.Warnings = append(pkg.Warnings, u.warnings()...)
	pkg.Markdown, pkg.Bytes, pkg.Tokens = md, len(md), u.as.tok.Count(md)
}

// uploader holds the state of one Upload call.
type uploader struct {
	as     *assembly
	ctx    context.Context
	c      Conversation
	p      Policy
	loc    *time.Location
	today  Period
	limit  ucost
	tokens bool   // a token budget applies
	limits string // the limits, as the package states them
	head   string // the title, Generated and Conversation lines
	fixed  []uploadPart

	last     int64        // the history's last turn: the newest before the end of today
	boundary int64        // the last turn the closed periods cover
	tiles    []uploadPart // the closed periods shown as their summaries, newest first
	merged   []uploadPart // overviews of older closed periods, newest first
	left     []uploadPart // closed periods merged or omitted, newest first
	open     []Turn       // the turns after boundary, newest first
	openAll  bool         // open holds every turn after boundary
	sum      *uploadPart  // the summary of the open turns not shown raw
	sumSeqs  []int64      // the turns it summarizes, oldest first
	raw      []Turn       // shown raw, newest first
	skipped  map[int64]bool
	todayNo  map[int]int // today's sessions: their number in the day, from 1
	todayN   int         // today's turns read
	cache    map[int64]Turn
	missing  map[int64]bool // seqs read and not found
}

func (u *uploader) cost(s string) ucost {
	if !u.tokens {
		return ucost{b: len(s)}
	}
	return ucost{len(s), u.as.tok.Count(s)}
}

func (u *uploader) within(c, limit ucost) bool { return c.b <= limit.b && c.t <= limit.t }

// assemble chooses what the package shows.
func (u *uploader) assemble() error {
	if err := u.history(); err != nil {
		return err
	}
	if u.last == 0 {
		return nil
	}
	room := u.limit.minus(u.cost(u.head + "\n" + u.fixedText()))
	if err := u.cover(room.scale(uploadCoverageShare)); err != nil {
		return err
	}
	return u.fill(room)
}

// history finds the history's last turn, the closed periods before today
// and the turns after them.
func (u *uploader) history() error {
	u.last = u.c.Turns
	if !u.c.Last.Before(u.today.End) {
		ts, err := u.as.store.Turns(u.ctx, TurnFilter{Namespace: u.as.ns, Conversation: u.c.ID, Until: u.today.End,
			Newest: true, Limit: 1})
		if err != nil {
			return err
		}
		u.last = 0
		if len(ts) == 1 {
			u.last = ts[0].Seq
		}
	}
	if u.last == 0 {
		return nil
	}
	nodes, err := u.closedTiles()
	if err != nil {
		return err
	}
	u.tiles = u.tileParts(nodes)
	if len(nodes) > 0 {
		u.boundary = nodes[0].LastSeq
	}
	// The turns after the closed periods, newest first.
	u.todayNo = map[int]int{}
	for to := u.last; to > u.boundary && len(u.open) < uploadMaxOpen; to -= 256 {
		ts, err := u.as.store.Turns(u.ctx, TurnFilter{Namespace: u.as.ns, Conversation: u.c.ID,
			FromSeq: max(u.boundary+1, to-255), ToSeq: to, Newest: true})
		if err != nil {
			return err
		}
		u.open = append(u.open, ts...)
	}
	u.open = u.open[:min(len(u.open), uploadMaxOpen)]
	for _, t := range u.open {
		u.cache[t.Seq] = t
	}
	u.openAll = len(u.open) == 0 || u.open[len(u.open)-1].Seq == u.boundary+1
	for i := len(u.open) - 1; i >= 0; i-- {
		t := u.open[i]
		if u.isToday(t) {
			u.todayN++
			if _, ok := u.todayNo[t.Session]; !ok {
				u.todayNo[t.Session] = len(u.todayNo) + 1
			}
		}
	}
	return nil
}

func (u *uploader) isToday(t Turn) bool {
	return !t.Time.Before(u.today.Start) && t.Time.Before(u.today.End)
}

// closedTiles returns the closed nodes that tile the history before today,
// newest first: the coarsest level's, then each finer level's after them.
func (u *uploader) closedTiles() ([]Node, error) {
	var tiles []Node
	boundary := int64(0)
	for lvl := len(u.p.Levels); lvl >= 1; lvl-- {
		ns, err := u.as.store.Nodes(u.ctx, NodeFilter{Namespace: u.as.ns, Conversation: u.c.ID, Level: lvl,
			FromSeq: boundary + 1, ToSeq: u.last, Newest: true, Overlaps: Period{End: u.today.Start}, Limit: maxTopTiles})
		if err != nil {
			return nil, err
		}
		level := u.p.Levels[lvl-1]
		ns = slices.DeleteFunc(ns, func(n Node) bool {
			if level.Kind == KindCalendar {
				return NodePeriod(n, level.Period, u.loc).End.After(u.today.Start)
			}
			return !n.End.Before(u.today.Start)
		})
		if len(ns) > 0 {
			tiles = append(ns, tiles...)
			boundary = ns[0].LastSeq
		}
	}
	slices.SortStableFunc(tiles, func(x, y Node) int { return cmpInt64(y.LastSeq, x.LastSeq) })
	return tiles, nil
}

// tileParts renders the closed periods (newest first) as sections.
func (u *uploader) tileParts(nodes []Node) []uploadPart {
	// The long-term context is the latest month (calendar policies) or
	// the latest node of the coarsest level shown; this week is the
	// latest node of the level below it (the latest week).
	long, week := 0, 0
	if u.p.Calendar() {
		long, week = u.p.LevelOf(PeriodMonth), u.p.LevelOf(PeriodWeek)
	} else if len(nodes) > 0 {
		for _, n := range nodes {
			long = max(long, n.Level)
		}
		week = long - 1
	}
	hasLong := slices.ContainsFunc(nodes, func(n Node) bool { return n.Level == long })
	seen := map[int]bool{}
	out := make([]uploadPart, 0, len(nodes))
	for _, n := range nodes {
		level := u.p.Levels[n.Level-1]
		title := u.levelTitle(level) + " Context (" + nodeKey(n) + ")"
		switch {
		case n.Level == long && !seen[n.Level]:
			title = "Long-Term Context"
		case n.Level == week && hasLong && !seen[n.Level]:
			title = "This Week"
		}
		seen[n.Level] = true
		kind := UploadDaily
		switch {
		case level.Kind == KindCalendar && level.Period == PeriodMonth, level.Kind != KindCalendar && n.Level == long:
			kind = UploadMonthly
		case level.Kind == KindCalendar && level.Period == PeriodWeek, level.Kind != KindCalendar && n.Level == long-1:
			kind = UploadWeekly
		}
		out = append(out, u.nodePart(title, kind, n))
	}
	return out
}

// levelTitle names a level in a section title: "Monthly", "Weekly",
// "Daily" for calendar levels, else the level's name ("Macro").
func (u *uploader) levelTitle(l Level) string {
	if l.Kind == KindCalendar {
		switch l.Period {
		case PeriodMonth:
			return "Monthly"
		case PeriodWeek:
			return "Weekly"
		case PeriodDay:
			return "Daily"
		}
	}
	r := []rune(l.Name)
	if len(r) == 0 {
		return "Level"
	}
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// nodeKey names a node in a section title: its key, or its span of turns.
func nodeKey(n Node) string {
	if n.Key != "" {
		return n.Key
	}
	return fmt.Sprintf("turns %d-%d", n.FirstSeq, n.LastSeq)
}

// days writes the days from start to end in loc: "2023-05-08" or
// "2023-05-08 .. 2023-05-10".
func (u *uploader) days(start, end time.Time) string {
	s := start.In(u.loc).Format(time.DateOnly)
	if e := end.In(u.loc).Format(time.DateOnly); e != s {
		s += " .. " + e
	}
	return s
}

// nodePart renders a node as a section.
func (u *uploader) nodePart(title, kind string, n Node) uploadPart {
	key := nodeKey(n)
	body := fmt.Sprintf("Covers %s: turns %d-%d, %s.\n\n%s", key, n.FirstSeq, n.LastSeq, u.days(n.Start, n.End),
		strings.TrimSpace(n.Summary))
	text := renderUploadPart(title, body)
	return uploadPart{UploadSection: UploadSection{Title: title, Kind: kind, Key: key, FirstSeq: n.FirstSeq, LastSeq: n.LastSeq},
		text: text, cost: u.cost(text), node: &n}
}

func (u *uploader) fixedText() string {
	var b strings.Builder
	for _, f := range u.fixed {
		b.WriteString(f.text)
	}
	return b.String()
}

func (u *uploader) coverCost() ucost {
	var c ucost
	for _, q := range u.tiles {
		c = c.plus(q.cost)
	}
	for _, q := range u.merged {
		c = c.plus(q.cost)
	}
	return c
}

// cover keeps the summaries of the closed periods within share: as they
// are when they all fit, else the newest as they are within three
// quarters of it and the older ones merged into overviews in the rest.
func (u *uploader) cover(share ucost) error {
	if u.within(u.coverCost(), share) {
		return nil
	}
	var kept ucost
	keep := 0
	for _, q := range u.tiles {
		if !u.within(kept.plus(q.cost), share.scale(0.75)) {
			break
		}
		kept = kept.plus(q.cost)
		keep++
	}
	older := u.tiles[keep:]
	u.tiles = u.tiles[:keep]
	u.left = append(u.left, older...)
	nodes := make([]Node, len(older))
	for i, q := range older {
		nodes[i] = *q.node
	}
	parts, err := u.overview(nodes, share.minus(kept), u.overviewPart)
	if err != nil {
		return err
	}
	slices.Reverse(parts) // newest first
	u.merged = parts
	return nil
}

// overviewPart renders an overview of closed periods.
func (u *uploader) overviewPart(it *Item) uploadPart {
	key := fmt.Sprintf("turns %d-%d", it.FirstSeq, it.LastSeq)
	if len(it.parts) > 0 && it.parts[0].Key != "" {
		key = it.parts[0].Key
		if k := it.parts[len(it.parts)-1].Key; k != key {
			key += " .. " + k
		}
	}
	body := fmt.Sprintf("Covers %s: turns %d-%d, %s; a summary of %d closed periods, written for this package.\n\n%s",
		key, it.FirstSeq, it.LastSeq, u.days(it.Start, it.End), len(it.parts), strings.TrimSpace(it.Text))
	title := "Earlier History (" + u.days(it.Start, it.End) + ")"
	text := renderUploadPart(title, body)
	return uploadPart{UploadSection: UploadSection{Title: title, Kind: UploadSummary, Key: key,
		FirstSeq: it.FirstSeq, LastSeq: it.LastSeq}, text: text, cost: u.cost(text)}
}

// overview merges nodes (newest first) into overview summaries, rendered
// by render, within limit, as a context package merges the tiles that do
// not fit its coverage share (assembler.overview); it returns them oldest
// first, none if they do not fit. The overviews are written to a budget
// in tokens: the limit in bytes is turned into tokens by the bytes per
// token of the nodes' summaries, and tightened while the sections come
// out over the limit.
func (u *uploader) overview(nodes []Node, limit ucost, render func(*Item) uploadPart) ([]uploadPart, error) {
	if len(nodes) == 0 || limit.b <= 0 || limit.t <= 0 {
		return nil, nil
	}
	var sample strings.Builder
	for _, n := range nodes {
		sample.WriteString(n.Summary)
	}
	perByte := float64(u.as.tok.Count(sample.String())+1) / float64(sample.Len()+1)
	toks := int(float64(limit.b) * perByte)
	if u.tokens {
		toks = min(toks, limit.t)
	}
	r, err := NewRenderer(FormatMarkdown)
	if err != nil {
		return nil, err
	}
	for try := 0; try < 4 && toks > 0; try++ {
		a := &assembler{as: u.as, ctx: u.ctx, req: ContextRequest{Conversation: u.c.ID, Budget: toks}, conv: u.c,
			policy: u.p, r: r, turns: map[int64]bool{}, turnAt: map[int64]*Item{}, nodes: map[string]bool{}}
		if _, err := a.overview(slices.Clone(nodes), toks); err != nil {
			return nil, err
		}
		if len(a.items) == 0 {
			return nil, nil
		}
		parts := make([]uploadPart, len(a.items))
		var c ucost
		for i, it := range a.items {
			parts[i] = render(it)
			c = c.plus(parts[i].cost)
		}
		if u.within(c, limit) {
			return parts, nil
		}
		f := float64(limit.b) / float64(c.b)
		if u.tokens {
			f = min(f, float64(limit.t)/float64(max(c.t, 1)))
		}
		toks = int(float64(toks) * f * 0.97)
	}
	return nil, nil
}

// fill spends what room leaves after the summaries of closed periods on
// raw turns, newest first: the open turns, and when they all fit, the
// turns of the closed periods before them. The open turns that do not
// fit raw are summarized (sum): the summary takes at most half of what
// the closed periods leave, and not the room of the newest turn unless
// the turns cannot be covered otherwise.
func (u *uploader) fill(room ucost) error {
	r, err := u.fillOpen(room.minus(u.coverCost()))
	if err != nil {
		return err
	}
	all := func(r *rawRun) bool { return r.n == len(u.open) && u.openAll }
	if all(r) && len(r.skipped) == 0 {
		return u.fillClosed(r, room)
	}
	// Some open turns are summarized: the package says so in a note,
	// which is reserved for. An omission is rare enough to be made room
	// for at the end (fit).
	note := u.cost(fmt.Sprintf("Note: %d of today's %d turns are summarized in Recent Turns (Summary), not shown raw, to keep the package within %s.\n",
		u.todayN, u.todayN, u.limits))
	room = room.minus(note)
	avail := room.minus(u.coverCost()) // for the raw turns and the summary
	half := avail.scale(0.5)
	limit := half
	if one := u.firstCost(); u.within(one, avail) {
		rest := avail.minus(one)
		limit = ucost{min(half.b, rest.b), min(half.t, rest.t)}
	}
	var reserve ucost
	for try := 0; try < 4; try++ {
		if r, err = u.fillOpen(avail.minus(reserve)); err != nil {
			return err
		}
		u.raw, u.skipped = r.turns, r.skipped
		if err := u.summarizeOpen(limit); err != nil {
			return err
		}
		if u.sum == nil && limit != half {
			// Covering the turns comes before showing the newest raw.
			limit = half
			if err := u.summarizeOpen(limit); err != nil {
				return err
			}
		}
		if u.sum == nil {
			// No summary fits: the turns not raw are omitted, and the
			// package has no note about a summary.
			if r, err = u.fillOpen(avail.plus(note)); err != nil {
				return err
			}
			u.raw, u.skipped = r.turns, r.skipped
			break
		}
		if u.within(r.cost.plus(u.sum.cost), avail) {
			break
		}
		if !u.within(u.firstCost().plus(u.sum.cost), avail) {
			// Not even the newest turn fits beside the summary: the
			// summary takes all the room.
			u.raw, u.skipped = nil, map[int64]bool{}
			return u.summarizeOpen(avail)
		}
		reserve = u.sum.cost.plus(u.sum.cost.scale(0.02 * float64(try+1))).plus(ucost{32, 8})
	}
	if !all(r) {
		return nil
	}
	// Only turns too long to show are summarized: the raw turns go on
	// into the closed periods.
	if u.sum != nil {
		room = room.minus(u.sum.cost)
	}
	return u.fillClosed(r, room)
}

// firstCost is the cost of the newest open turn raw, in its section.
func (u *uploader) firstCost() ucost {
	if len(u.open) == 0 {
		return ucost{}
	}
	one := u.newRun()
	one.add(u.open[0], nil, u.limit)
	return one.cost
}

// fillOpen adds the open turns raw, newest first, within room.
func (u *uploader) fillOpen(room ucost) (*rawRun, error) {
	r := u.newRun()
	for _, t := range u.open {
		prev, err := u.turn(t.Seq - 1)
		if err != nil {
			return nil, err
		}
		if !r.add(t, prev, room) {
			break
		}
	}
	return r, nil
}

// turn returns the turn seq, nil if there is none (or its content
// expired); it reads the store a page at a time, newest first.
func (u *uploader) turn(seq int64) (*Turn, error) {
	if seq < 1 {
		return nil, nil
	}
	if t, ok := u.cache[seq]; ok {
		return &t, nil
	}
	if u.missing[seq] {
		return nil, nil
	}
	from := max(1, seq-255)
	ts, err := u.as.store.Turns(u.ctx, TurnFilter{Namespace: u.as.ns, Conversation: u.c.ID, FromSeq: from, ToSeq: seq})
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		u.cache[t.Seq] = t
	}
	for s := from; s <= seq; s++ {
		if _, ok := u.cache[s]; !ok {
			u.missing[s] = true
		}
	}
	if t, ok := u.cache[seq]; ok {
		return &t, nil
	}
	return nil, nil
}

// summarizeOpen summarizes the open turns not shown raw within limit, as
// a context package summarizes its open turns (assembler.openTile), and
// tighter when that summary does not fit.
func (u *uploader) summarizeOpen(limit ucost) error {
	var rest []Turn // newest first
	shown := map[int64]bool{}
	for _, t := range u.raw {
		if !u.skipped[t.Seq] {
			shown[t.Seq] = true
		}
	}
	for _, t := range u.open {
		if !shown[t.Seq] {
			rest = append(rest, t)
		}
	}
	u.sum, u.sumSeqs = nil, nil
	if len(rest) == 0 {
		return nil
	}
	a := &assembler{as: u.as, ctx: u.ctx, req: ContextRequest{Conversation: u.c.ID}, conv: u.c, policy: u.p,
		turns: map[int64]bool{}}
	tile, err := a.openTile(rest)
	if err != nil || tile == nil {
		return err
	}
	seqs := make([]int64, 0, len(rest))
	today := true
	for i := len(rest) - 1; i >= 0; i-- {
		seqs = append(seqs, rest[i].Seq)
		today = today && u.isToday(rest[i])
	}
	title := "Recent Turns (Summary)"
	if today {
		title = "Today (Summary)"
		if len(u.raw) == 0 || seqs[len(seqs)-1] < u.raw[len(u.raw)-1].Seq {
			title = "Earlier Today"
		}
	}
	render := func(text string) uploadPart { return u.openPart(title, seqs, today, tile.Start, tile.End, text) }
	q := render(tile.Summary)
	if !u.within(q.cost, limit) {
		parts, err := u.overview([]Node{*tile}, limit, func(it *Item) uploadPart { return render(it.Text) })
		if err != nil || len(parts) != 1 {
			return err
		}
		q = parts[0]
	}
	u.sum, u.sumSeqs = &q, seqs
	return nil
}

// openPart renders the summary of the open turns not shown raw.
func (u *uploader) openPart(title string, seqs []int64, today bool, start, end time.Time, summary string) uploadPart {
	when := u.days(start, end)
	if today {
		when = start.In(u.loc).Format("15:04") + " .. " + end.In(u.loc).Format("15:04")
	}
	n := "turns"
	if len(seqs) == 1 {
		n = "turn"
	}
	body := fmt.Sprintf("Covers %d %s not shown raw below (turns %s), %s; a summary written for this package.\n\n%s",
		len(seqs), n, seqRanges(seqs), when, strings.TrimSpace(summary))
	text := renderUploadPart(title, body)
	return uploadPart{UploadSection: UploadSection{Title: title, Kind: UploadSummary,
		Key: fmt.Sprintf("turns %d-%d", seqs[0], seqs[len(seqs)-1]), FirstSeq: seqs[0], LastSeq: seqs[len(seqs)-1]},
		text: text, cost: u.cost(text)}
}

// seqRanges writes sorted seqs as ranges: "1-40, 45, 47-50".
func seqRanges(seqs []int64) string {
	var b strings.Builder
	for i := 0; i < len(seqs); {
		j := i
		for j+1 < len(seqs) && seqs[j+1] == seqs[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(seqs[i], 10))
		if j > i {
			b.WriteString("-" + strconv.FormatInt(seqs[j], 10))
		}
		i = j + 1
	}
	return b.String()
}

// fillClosed goes on with the turns of the closed periods, newest first,
// once every open turn is raw; a period whose turns are all raw gives
// its room to more of them, and so does a period whose remaining turns
// fit raw in the room of its summary (swap).
func (u *uploader) fillClosed(r *rawRun, room ucost) error {
	defer func() { u.raw, u.skipped = r.turns, r.skipped }()
	for seq := u.boundary; seq >= 1; seq-- {
		t, err := u.turn(seq)
		if err != nil {
			return err
		}
		if t == nil {
			continue
		}
		prev, err := u.turn(seq - 1)
		if err != nil {
			return err
		}
		if r.add(*t, prev, room.minus(u.coverCost())) {
			u.release(r)
			continue
		}
		ok, err := u.swap(r, *t, room)
		if err != nil || !ok {
			return err
		}
		seq = r.oldest
	}
	return nil
}

// swap shows raw the turns of the newest period that holds t, from t
// back to the period's first, in place of its summary, if they all fit
// raw in what the package has left with that summary's room.
func (u *uploader) swap(r *rawRun, t Turn, room ucost) (bool, error) {
	var p *uploadPart
	for _, q := range append(slices.Clone(u.tiles), u.merged...) {
		if q.FirstSeq <= t.Seq && t.Seq <= q.LastSeq {
			p = &q
			break
		}
	}
	if p == nil || t.Seq-p.FirstSeq >= uploadMaxSwap {
		return false, nil
	}
	trial := r.clone()
	limit := room.minus(u.coverCost()).plus(p.cost)
	for seq := t.Seq; seq >= p.FirstSeq; seq-- {
		x, err := u.turn(seq)
		if err != nil {
			return false, err
		}
		if x == nil {
			continue
		}
		prev, err := u.turn(seq - 1)
		if err != nil {
			return false, err
		}
		if !trial.add(*x, prev, limit) || trial.skipped[x.Seq] {
			return false, nil
		}
	}
	*r = *trial
	u.release(r)
	return true, nil
}

// uploadMaxSwap bounds the turns swap reads for a period.
const uploadMaxSwap = 2000

// release drops the summaries of closed periods whose turns are all shown
// raw.
func (u *uploader) release(r *rawRun) {
	gone := func(q uploadPart) bool {
		if q.FirstSeq < r.oldest {
			return false
		}
		for s := q.FirstSeq; s <= q.LastSeq; s++ {
			if !r.shown[s] {
				return false
			}
		}
		return true
	}
	u.tiles = slices.DeleteFunc(u.tiles, gone)
	u.merged = slices.DeleteFunc(u.merged, gone)
}

// rawRun is the raw turns chosen so far, newest first, with what they
// cost rendered.
type rawRun struct {
	u       *uploader
	turns   []Turn // newest first
	skipped map[int64]bool
	shown   map[int64]bool // raw, not skipped
	oldest  int64
	n       int // turns added, raw or skipped
	misses  int // skipped in a row
	cost    ucost
	// The oldest section: its key, and the cost of its heading, first
	// line and separator.
	sec  rawKey
	head ucost
}

type rawKey struct {
	day     string
	session int
}

func (r *rawRun) clone() *rawRun {
	c := *r
	c.turns = slices.Clone(r.turns)
	c.skipped = maps.Clone(r.skipped)
	c.shown = maps.Clone(r.shown)
	return &c
}

func (u *uploader) newRun() *rawRun {
	return &rawRun{u: u, skipped: map[int64]bool{}, shown: map[int64]bool{}, sec: rawKey{session: -1}}
}

func (u *uploader) rawKey(t Turn) rawKey {
	return rawKey{t.Time.In(u.loc).Format(time.DateOnly), t.Session}
}

// add adds t (older than every turn added) raw if it fits room, else, if
// it alone would take more than a quarter of the package's limits and few
// were left out in a row, as a line that says it is left out; it reports
// whether it did either.
func (r *rawRun) add(t Turn, prev *Turn, room ucost) bool {
	u := r.u
	k := u.rawKey(t)
	cut := prev != nil && u.rawKey(*prev) == k
	var full ucost
	for _, skip := range []bool{false, true} {
		line := rawLine(t, u.loc, skip)
		lc := u.cost(line)
		if !skip {
			full = lc
		} else if r.misses >= 8 || u.within(full, u.limit.scale(0.25)) {
			return false
		}
		ts := []Turn{t}
		if k == r.sec {
			ts = append(ts, r.sectionTurns()...)
		}
		// The section's last line loses its newline to the separator.
		head := u.cost("## " + u.rawTitle(t) + "\n\n" + u.rawHead(ts, cut) + uploadSeparator).minus(ucost{b: 1})
		delta := lc.plus(head)
		if k == r.sec {
			delta = delta.minus(r.head)
		}
		if !u.within(r.cost.plus(delta), room) {
			continue
		}
		r.sec, r.head = k, head
		r.cost = r.cost.plus(delta)
		r.turns = append(r.turns, t)
		r.oldest = t.Seq
		r.n++
		if skip {
			r.skipped[t.Seq] = true
			r.misses++
		} else {
			r.shown[t.Seq] = true
			r.misses = 0
		}
		return true
	}
	return false
}

// sectionTurns returns the turns of the oldest section, newest first.
func (r *rawRun) sectionTurns() []Turn {
	i := len(r.turns)
	for i > 0 && r.u.rawKey(r.turns[i-1]) == r.sec {
		i--
	}
	return r.turns[i:]
}

// rawLine is a turn's line: the turn, or a line saying it is left out.
func rawLine(t Turn, loc *time.Location, skip bool) string {
	if !skip {
		return turnLine(t, loc) + "\n"
	}
	return fmt.Sprintf("[%s] %s: (turn %d, %d bytes: too long to show raw)\n",
		t.Time.In(loc).Format("15:04"), t.Speaker(), t.Seq, len(t.Text()))
}

// rawHead renders the first line of the section of ts (one session on
// one day, newest first); cut says that the turns before them in the
// session and day are not in the section.
func (u *uploader) rawHead(ts []Turn, cut bool) string {
	t := ts[0]
	first, last := t.Time, t.Time
	for _, x := range ts {
		if x.Time.Before(first) {
			first = x.Time
		}
		if x.Time.After(last) {
			last = x.Time
		}
	}
	n := "turns"
	if len(ts) == 1 {
		n = "turn"
	}
	when := first.In(u.loc).Format("15:04") + " .. " + last.In(u.loc).Format("15:04")
	if !u.isToday(t) {
		when = first.In(u.loc).Format(time.DateOnly) + " " + when
	}
	if cut {
		return fmt.Sprintf("Session %d of the conversation, %s: its newest %d %s, the ones before not shown raw.\n\n",
			t.Session, when, len(ts), n)
	}
	return fmt.Sprintf("Session %d of the conversation, %s, %d %s.\n\n", t.Session, when, len(ts), n)
}

func (u *uploader) rawTitle(t Turn) string {
	if u.isToday(t) {
		return fmt.Sprintf("Today Session %02d", u.todayNo[t.Session])
	}
	return fmt.Sprintf("Session %d (%s)", t.Session, t.Time.In(u.loc).Format(time.DateOnly))
}

// rawParts renders the raw turns as sections, oldest first.
func (u *uploader) rawParts() []uploadPart {
	var out []uploadPart
	for i := len(u.raw); i > 0; {
		k := u.rawKey(u.raw[i-1])
		j := i
		for j > 0 && u.rawKey(u.raw[j-1]) == k {
			j--
		}
		ts := u.raw[j:i] // newest first
		// Cut: the turn before the section's oldest is in its session and
		// day but not in the package raw.
		cut := false
		if i == len(u.raw) {
			prev, err := u.turn(ts[len(ts)-1].Seq - 1)
			cut = err == nil && prev != nil && u.rawKey(*prev) == k
		}
		var b strings.Builder
		for x := len(ts) - 1; x >= 0; x-- {
			b.WriteString(rawLine(ts[x], u.loc, u.skipped[ts[x].Seq]))
		}
		title := u.rawTitle(ts[0])
		text := renderUploadPart(title, u.rawHead(ts, cut)+b.String())
		kind := UploadTurns
		if u.isToday(ts[0]) {
			kind = UploadSession
		}
		out = append(out, uploadPart{UploadSection: UploadSection{Title: title, Kind: kind,
			Key: fmt.Sprintf("session %d", ts[0].Session), FirstSeq: ts[len(ts)-1].Seq, LastSeq: ts[0].Seq},
			text: text, cost: u.cost(text)})
		i = j
	}
	return out
}

// parts returns every section, in the order the package shows them.
func (u *uploader) parts() []uploadPart {
	out := slices.Clone(u.fixed)
	for i := len(u.merged) - 1; i >= 0; i-- {
		out = append(out, u.merged[i])
	}
	for i := len(u.tiles) - 1; i >= 0; i-- {
		out = append(out, u.tiles[i])
	}
	if u.sum != nil {
		out = append(out, *u.sum)
	}
	return append(out, u.rawParts()...)
}

// omitted returns the turns of the history that no section covers:
// shown raw (a line that says a turn is left out does not count), or
// under a summary.
func (u *uploader) omitted() []Omission {
	var spans [][2]int64
	for _, q := range append(slices.Clone(u.tiles), u.merged...) {
		spans = append(spans, [2]int64{q.FirstSeq, q.LastSeq})
	}
	for _, s := range u.sumSeqs {
		spans = append(spans, [2]int64{s, s})
	}
	for _, t := range u.raw {
		if !u.skipped[t.Seq] {
			spans = append(spans, [2]int64{t.Seq, t.Seq})
		}
	}
	slices.SortFunc(spans, func(x, y [2]int64) int { return cmpInt64(x[0], y[0]) })
	var out []Omission
	next := int64(1)
	for _, sp := range spans {
		if sp[0] > next {
			out = append(out, Omission{FirstSeq: next, LastSeq: sp[0] - 1})
		}
		next = max(next, sp[1]+1)
	}
	if next <= u.last {
		out = append(out, Omission{FirstSeq: next, LastSeq: u.last})
	}
	return out
}

// dropped names, oldest first, the closed periods merged into an
// overview (merged) and the sections left out with nothing standing for
// them (lost): closed periods with a turn omitted, and today's sessions
// all of whose turns are omitted.
func (u *uploader) dropped() (merged, lost []string) {
	om := u.omitted()
	in := func(seq int64) bool {
		for _, o := range om {
			if o.FirstSeq <= seq && seq <= o.LastSeq {
				return true
			}
		}
		return false
	}
	for i := len(u.left) - 1; i >= 0; i-- {
		q := u.left[i]
		hit := false
		for _, o := range om {
			hit = hit || o.FirstSeq <= q.LastSeq && q.FirstSeq <= o.LastSeq
		}
		if hit {
			lost = append(lost, q.Title)
		} else {
			merged = append(merged, q.Title)
		}
	}
	kept := map[int]bool{}
	for _, t := range u.open {
		if u.isToday(t) && !in(t.Seq) {
			kept[t.Session] = true
		}
	}
	no := make([]int, len(u.todayNo)+1)
	for s, i := range u.todayNo {
		no[i] = s
	}
	for i := 1; i < len(no); i++ {
		if !kept[no[i]] {
			lost = append(lost, fmt.Sprintf("Today Session %02d", i))
		}
	}
	return merged, lost
}

// notes are the lines under the title that say what the package does not
// show raw or at all.
func (u *uploader) notes() string {
	var b strings.Builder
	if n := u.todaySummarized(); n > 0 {
		fmt.Fprintf(&b, "Note: %d of today's %d turns are summarized in %s, not shown raw, to keep the package within %s.\n",
			n, u.todayN, u.sum.Title, u.limits)
	}
	if om := u.omitted(); len(om) > 0 {
		var seqs []string
		for _, o := range om {
			s := strconv.FormatInt(o.FirstSeq, 10)
			if o.LastSeq > o.FirstSeq {
				s += "-" + strconv.FormatInt(o.LastSeq, 10)
			}
			seqs = append(seqs, s)
		}
		fmt.Fprintf(&b, "Omitted: turns %s, neither shown nor summarized, to keep the package within %s.\n",
			strings.Join(seqs, ", "), u.limits)
	}
	return b.String()
}

// todaySummarized counts today's turns in the summary of the open turns.
func (u *uploader) todaySummarized() int {
	if u.sum == nil {
		return 0
	}
	in := map[int64]bool{}
	for _, s := range u.sumSeqs {
		in[s] = true
	}
	n := 0
	for _, t := range u.open {
		if in[t.Seq] && u.isToday(t) {
			n++
		}
	}
	return n
}

// render writes the package.
func (u *uploader) render() string {
	var b strings.Builder
	b.WriteString(u.head)
	b.WriteString(u.notes())
	b.WriteString("\n")
	for _, q := range u.parts() {
		b.WriteString(q.text)
	}
	if u.last == 0 {
		fmt.Fprintf(&b, "No history yet: no turn before the end of %s.\n", u.today.Label())
	}
	return b.String()
}

// fit renders the package and, while it exceeds the limits (the notes and
// the counts of a rendering as a whole can differ a little from the sum
// of its parts), leaves out the oldest raw turn but the newest, then the
// summaries of closed periods, oldest first, then the summary of the
// open turns, then the newest turn.
func (u *uploader) fit() (string, error) {
	for {
		md := u.render()
		if u.within(u.cost(md), u.limit) {
			return md, nil
		}
		switch {
		case len(u.raw) > 1:
			t := u.raw[len(u.raw)-1]
			u.raw = u.raw[:len(u.raw)-1]
			delete(u.skipped, t.Seq)
		case len(u.merged) > 0:
			u.merged = u.merged[:len(u.merged)-1]
		case len(u.tiles) > 0:
			u.left = append(u.left, u.tiles[len(u.tiles)-1])
			u.tiles = u.tiles[:len(u.tiles)-1]
		case u.sum != nil:
			u.sum, u.sumSeqs = nil, nil
		case len(u.raw) > 0:
			u.raw, u.skipped = nil, map[int64]bool{}
		default:
			return "", Errorf(EINTERNAL, "upload: %d bytes with no section left", len(md))
		}
	}
}

// warnings say what the reader of the package loses.
func (u *uploader) warnings() []string {
	var out []string
	if n := u.todaySummarized(); n > 0 {
		out = append(out, fmt.Sprintf("%d of today's %d turns are shown only as a summary: today alone exceeds what the limit of %s leaves",
			n, u.todayN, u.limits))
	}
	for _, o := range u.omitted() {
		out = append(out, fmt.Sprintf("turns %d-%d are neither shown nor summarized: over the limit of %s", o.FirstSeq, o.LastSeq, u.limits))
	}
	return out
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
