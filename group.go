package strata

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// This file closes the spans of session and calendar levels. A count level
// closes a node every N children (rollup.go); a session or calendar level
// groups consecutive children by a key (the session, or the period of the
// child's first turn) and closes a group when the key changes, or when
// its session or period is over relative to the clock:
//
//   - a calendar group closes when the next child (or the first turn the
//     level below has not covered yet) lies in a later period, or when its
//     period has ended by the later of the newest turn and now; imported
//     history therefore closes at once and a live day closes at midnight
//     in the conversation's time zone;
//   - a session group closes when a later session starts, or when the
//     session gap has passed since its last turn.
//
// A month level cuts the week and session levels below it at month ends
// (Policy.MonthCut): their key is the week or session and the month, so a
// week or session that runs across the end of a month makes one node in
// each month, and every month node holds whole children and covers its
// calendar month exactly. The first part keeps the plain label
// ("2026-W40", "session 12"); a later part adds its month
// ("2026-W40 (2026-10)"). A plain label's month is that of the node's last
// turn: every turn of a part lies in its month, but for one stamped
// earlier than the turn before it (see below).
//
// Keys never go backwards within a level: a turn stamped earlier than the
// turn before it belongs to its predecessor's group. A child that falls in
// the group of the level's last node after that node closed (a late turn
// of a day the clock had ended, the next turn of a session the gap had
// closed, or an out-of-order turn clamped into it) reopens the node: it is
// replaced, with the nodes above it, by the node of the longer span, in
// the run's next write (see reopen). So turns appended in any split end in
// the nodes one import of them makes. The one exception is a level-1 node
// whose span expired: its turns are gone, so it stays, and the late
// children form a node of their own with the same key. Node ids still
// derive from the span, so two processes closing the same groups write the
// same nodes.

// groupKey orders a child within a level: the session number, or the start
// of its period, then, on a level cut at month ends, the month.
type groupKey struct {
	n      int64  // the session number, or the start of base
	m      int64  // the start of month on a level cut at month ends, else 0
	base   Period // calendar levels: the day, week or month
	period Period // calendar levels: base, within month on a cut level
	month  Period // cut levels: the month
}

// cmp orders keys: by session or period, then by month.
func (k groupKey) cmp(o groupKey) int {
	switch {
	case k.n != o.n:
		return cmpInt64(k.n, o.n)
	default:
		return cmpInt64(k.m, o.m)
	}
}

// grouping is what a session or calendar level needs to know about its
// conversation.
type grouping struct {
	level    Level
	cut      bool   // the level is cut at month ends
	below    *Level // the level below, nil for level 1
	belowCut bool   // the level below is cut at month ends
	loc      *time.Location
	ref      time.Time // the later of the newest turn and now
	now      time.Time
	gap      time.Duration
}

// keyAt is the key of a child that starts at at, of the given session.
func (g *grouping) keyAt(at time.Time, session int64) groupKey {
	var k groupKey
	if g.level.Kind == KindSession {
		k.n = session
	} else {
		k.base = PeriodOf(g.level.Period, at, g.loc)
		k.period, k.n = k.base, k.base.Start.UnixNano()
	}
	if g.cut {
		k.month = PeriodOf(PeriodMonth, at, g.loc)
		k.m = k.month.Start.UnixNano()
		if k.base.Kind != "" {
			k.period = within(k.base, k.month)
		}
	}
	return k
}

// turnKey is the key of a turn at this level (level 1), or of the first
// turn of the level below's open tail. The nodes of a calendar level below
// nest in this level's periods, so the turn's own time places them.
func (g *grouping) turnKey(t *Turn) groupKey {
	return g.keyAt(t.Time, int64(t.Session))
}

// nodeKey is the key of a child node of the level below: that of the start
// of its period (its part of a week cut at a month end) for a calendar
// child, else of its first turn, moved to the start of its month if the
// child is cut at month ends and holds turns stamped before it.
func (g *grouping) nodeKey(c *Node) groupKey {
	at := c.Start
	if g.below != nil {
		if k, ok := parseLabel(*g.below, g.belowCut, c, g.loc); ok {
			switch {
			case g.below.Kind == KindCalendar:
				at = k.period.Start
			case g.belowCut && at.Before(k.month.Start):
				at = k.month.Start
			}
		}
	}
	return g.keyAt(at, 0)
}

// parseKey reads back the key of a stored node of this level.
func (g *grouping) parseKey(n *Node) (groupKey, bool) {
	return parseLabel(g.level, g.cut, n, g.loc)
}

// parseLabel reads back the key of a stored node of level l (cut at month
// ends if cut): its label, and on a cut level its month, from the label's
// suffix or else from the node's last turn.
func parseLabel(l Level, cut bool, n *Node, loc *time.Location) (groupKey, bool) {
	label := n.Key
	var month Period
	if cut {
		if b, m, ok := splitPartLabel(label); ok {
			p, err := ParsePeriod(m, loc)
			if err != nil || p.Kind != PeriodMonth {
				return groupKey{}, false
			}
			label, month = b, p
		} else {
			month = PeriodOf(PeriodMonth, n.End, loc)
		}
	}
	var k groupKey
	if l.Kind == KindSession {
		s, ok := strings.CutPrefix(label, "session ")
		v, err := strconv.ParseInt(s, 10, 64)
		if !ok || err != nil {
			return groupKey{}, false
		}
		k.n = v
	} else {
		p, err := ParsePeriod(label, loc)
		if err != nil {
			return groupKey{}, false
		}
		k.base, k.period, k.n = p, p, p.Start.UnixNano()
	}
	if cut {
		k.month, k.m = month, month.Start.UnixNano()
		if k.base.Kind != "" {
			k.period = within(k.base, month)
		}
	}
	return k, true
}

// label names a group of key k that follows the group of key prev (nil if
// none): "session 12" or the period's label, and on a cut level, for a
// part after the first of its week or session, its month in parentheses.
func (g *grouping) label(k groupKey, prev *groupKey) string {
	s := k.base.Label()
	if g.level.Kind == KindSession {
		s = "session " + strconv.FormatInt(k.n, 10)
	}
	if g.cut && prev != nil && prev.n == k.n && prev.m != k.m {
		s += " (" + k.month.Label() + ")"
	}
	return s
}

// splitPartLabel splits the label of a later part of a week or session cut
// at a month end, "2026-W40 (2026-10)", into its base label and month.
func splitPartLabel(label string) (base, month string, ok bool) {
	b, rest, found := strings.Cut(label, " (")
	m, closed := strings.CutSuffix(rest, ")")
	if !found || !closed || len(m) != 7 || m[4] != '-' {
		return label, "", false
	}
	return b, m, true
}

// PartBase returns the label of the week or session a node's key names: the
// key without the month a later part of a week or session cut at a month
// end carries ("2026-W40 (2026-10)" gives "2026-W40"); other keys as they
// are.
func PartBase(key string) string {
	b, _, _ := splitPartLabel(key)
	return b
}

// within is the part of p inside q (p's kind); empty if they do not meet.
func within(p, q Period) Period {
	out := p
	if q.Start.After(out.Start) {
		out.Start = q.Start
	}
	if q.End.Before(out.End) {
		out.End = q.End
	}
	return out
}

// over reports whether a group whose last child ends at last is over by
// the clock alone, with no later child to say so: a session part also
// when its month has ended.
func (g *grouping) over(k groupKey, last time.Time) bool {
	if g.level.Kind == KindSession {
		return !g.now.Before(last.Add(g.gap)) || (g.cut && !g.ref.Before(k.month.End))
	}
	return !g.ref.Before(k.period.End)
}

// group is a run of consecutive children with one key.
type group struct {
	key        groupKey
	from, to   int // children indexes, to exclusive
	closed     bool
	lastActive time.Time
}

// split groups keys (one per child, already clamped) and says which groups
// are closed: every group followed by another, and the last one if next
// (the key of what follows the children, if anything does) differs from
// it, or if it is over by the clock.
func (g *grouping) split(keys []groupKey, ends []time.Time, next *groupKey) []group {
	var gs []group
	for i, k := range keys {
		if len(gs) == 0 || gs[len(gs)-1].key.cmp(k) != 0 {
			if len(gs) > 0 {
				gs[len(gs)-1].closed = true
			}
			gs = append(gs, group{key: k, from: i})
		}
		last := &gs[len(gs)-1]
		last.to = i + 1
		if ends[i].After(last.lastActive) {
			last.lastActive = ends[i]
		}
	}
	if n := len(gs); n > 0 {
		last := &gs[n-1]
		switch {
		case next != nil:
			last.closed = next.cmp(last.key) != 0
		default:
			last.closed = g.over(last.key, last.lastActive)
		}
	}
	return gs
}

// clamp makes keys non-decreasing from floor.
func clamp(keys []groupKey, floor *groupKey) {
	prev := floor
	for i := range keys {
		if prev != nil && keys[i].cmp(*prev) < 0 {
			keys[i] = *prev
		}
		prev = &keys[i]
	}
}

// clampNext is clamp over keys and, after them, next (the key of what
// follows them, if any): it returns both clamped.
func clampNext(keys []groupKey, floor, next *groupKey) ([]groupKey, *groupKey) {
	var n groupKey
	if next != nil {
		n = *next
	}
	all := append(keys, n)
	clamp(all, floor)
	if next != nil {
		next = &all[len(all)-1]
	}
	return all[:len(keys)], next
}

// groupedLevel closes the complete groups of a session or calendar level.
func (r *rollupRun) groupedLevel(ctx context.Context, lvl int) error {
	py, conv, p := r.py, r.conv, r.p
	// Children are read from the store: write what waits first.
	if err := r.flush(ctx); err != nil {
		return err
	}
	c, err := r.conversation(ctx)
	if err != nil {
		return err
	}
	g := r.grouping(c, lvl)
	from, floor, err := r.groupStart(ctx, c, g, lvl)
	if err != nil {
		return err
	}
	page := rollupPage * 16
	for from <= c.Turns {
		var pg *childPage
		if lvl == 1 {
			pg, err = r.turnPage(ctx, g, from, page)
		} else {
			pg, err = r.nodePage(ctx, c, g, lvl, from, page)
		}
		if pg == nil {
			return err // nothing left to group, or an error
		}
		keys, next := clampNext(pg.keys, floor, pg.next)
		groups := g.split(keys, pg.ends, next)
		reqs, gkeys := closedGroups(c, g, groups, pg, floor)
		nodes, err := py.makeNodes(ctx, conv, p, lvl, reqs, gkeys)
		if err != nil {
			return err
		}
		if err := r.add(ctx, nodes, false); err != nil {
			return err
		}
		if len(nodes) > 0 {
			last := nodes[len(nodes)-1]
			from = last.LastSeq + 1
			k := keys[groups[len(nodes)-1].from]
			floor = &k
		}
		if !pg.full {
			return nil
		}
		if len(nodes) == 0 {
			// One group fills the whole page: read a larger one.
			if page >= 1<<22 {
				return Errorf(EINTERNAL, "level %d: a group of more than %d children", lvl, page)
			}
			page *= 4
		}
	}
	return nil
}

// groupStart returns the first turn level lvl has not closed and the key
// of its last node (nil if none, or unreadable). When that node's period
// received a child after it closed, the node is reopened (see reopen):
// the level groups again from its first child, under the key of the node
// before it.
func (r *rollupRun) groupStart(ctx context.Context, c Conversation, g *grouping, lvl int) (int64, *groupKey, error) {
	py := r.py
	last, err := py.lastNode(ctx, r.conv, lvl)
	if err != nil {
		return 0, nil, err
	}
	from := int64(1)
	var floor *groupKey
	if last != nil {
		from = last.LastSeq + 1
		if k, ok := g.parseKey(last); ok {
			floor = &k
		}
	}
	if last == nil || floor == nil {
		return from, floor, nil
	}
	reopen, err := r.reopens(ctx, g, lvl, from, *floor)
	if err != nil {
		return 0, nil, err
	}
	if !reopen || (lvl == 1 && last.Tier == TierExpired) {
		return from, floor, nil
	}
	// The last node's period received a child after it closed: group
	// again from its first child, under the key of the node before it,
	// and replace it (and its ancestors) with what the group makes.
	if err := r.reopen(ctx, c, lvl, last); err != nil {
		return 0, nil, err
	}
	from, floor = last.FirstSeq, nil
	prev, err := py.store.Nodes(ctx, NodeFilter{Namespace: py.ns, Conversation: r.conv, Level: lvl,
		ToSeq: last.FirstSeq - 1, Newest: true, Limit: 1})
	if err != nil {
		return 0, nil, err
	}
	if len(prev) == 1 {
		if k, ok := g.parseKey(&prev[0]); ok {
			floor = &k
		}
	}
	return from, floor, nil
}

// childPage is a page of the children of a grouped level, from its first
// turn not closed: turns at level 1, nodes of the level below otherwise.
type childPage struct {
	keys     []groupKey  // one per child, not clamped yet
	ends     []time.Time // when each child ends
	turns    []Turn
	children []Node
	next     *groupKey // the key of what follows the page, if known
	full     bool      // more children follow the page
}

// turnPage reads up to page turns of level 1 from from; nil and no error
// if there are none.
func (r *rollupRun) turnPage(ctx context.Context, g *grouping, from int64, page int) (*childPage, error) {
	py := r.py
	turns, err := py.store.Turns(ctx, TurnFilter{Namespace: py.ns, Conversation: r.conv, FromSeq: from, ToSeq: from + int64(page)})
	if err != nil || len(turns) == 0 {
		return nil, err
	}
	if turns[0].Seq != from {
		return nil, Errorf(EINTERNAL, "level 1: next turn is %d, want %d", turns[0].Seq, from)
	}
	pg := &childPage{}
	if len(turns) > page { // one more than the page: it says what follows
		k := g.turnKey(&turns[page])
		pg.next = &k
		turns = turns[:page]
		pg.full = true
	}
	for i := range turns {
		pg.keys = append(pg.keys, g.turnKey(&turns[i]))
		pg.ends = append(pg.ends, turns[i].Time)
	}
	pg.turns = turns
	return pg, nil
}

// nodePage reads up to page nodes of the level below lvl from from; nil
// if there are none, or if they do not start at from (realign's error,
// if any).
func (r *rollupRun) nodePage(ctx context.Context, c Conversation, g *grouping, lvl int, from int64, page int) (*childPage, error) {
	py := r.py
	children, err := py.store.Nodes(ctx, NodeFilter{Namespace: py.ns, Conversation: r.conv, Level: lvl - 1,
		FromSeq: from, Limit: page + 1})
	if err != nil || len(children) == 0 {
		return nil, err
	}
	if children[0].FirstSeq != from {
		return nil, r.realign(ctx, lvl, from, children[0].FirstSeq)
	}
	pg := &childPage{}
	if len(children) > page {
		k := g.nodeKey(&children[page])
		pg.next = &k
		children = children[:page]
		pg.full = true
	} else if tail := children[len(children)-1].LastSeq + 1; tail <= c.Turns {
		// The level below has turns it has not closed yet: the
		// first of them says where its next child will fall.
		ts, err := py.store.Turns(ctx, TurnFilter{Namespace: py.ns, Conversation: r.conv, FromSeq: tail, ToSeq: tail})
		if err != nil {
			return nil, err
		}
		if len(ts) == 1 {
			k := g.turnKey(&ts[0])
			pg.next = &k
		}
	}
	for i := range children {
		pg.keys = append(pg.keys, g.nodeKey(&children[i]))
		pg.ends = append(pg.ends, children[i].End)
	}
	pg.children = children
	return pg, nil
}

// closedGroups returns the summary requests and labels of the closed
// groups of pg, in order, up to the first open one.
func closedGroups(c Conversation, g *grouping, groups []group, pg *childPage, floor *groupKey) ([]SummaryRequest, []string) {
	var reqs []SummaryRequest
	var gkeys []string
	prev := floor
	for _, gr := range groups {
		if !gr.closed {
			break
		}
		label := g.label(gr.key, prev)
		prev = &gr.key
		req := SummaryRequest{Budget: g.level.BudgetFor(c.IsImportant(label))}
		if pg.turns != nil {
			req.Turns = pg.turns[gr.from:gr.to]
		} else {
			req.Children = pg.children[gr.from:gr.to]
		}
		reqs = append(reqs, req)
		gkeys = append(gkeys, label)
	}
	return reqs, gkeys
}

// reopens reports whether the first child at from (a turn at level 1, a
// node of the level below otherwise, or the turn at from while the level
// below has not closed that node) falls in the group of floor, the key
// of the level's last node: that node's period received a child after it
// closed. Keys never go backwards, so a child keyed before floor joins
// floor's group too.
func (r *rollupRun) reopens(ctx context.Context, g *grouping, lvl int, from int64, floor groupKey) (bool, error) {
	py := r.py
	var k groupKey
	if lvl == 1 {
		ts, err := py.store.Turns(ctx, TurnFilter{Namespace: py.ns, Conversation: r.conv, FromSeq: from, ToSeq: from})
		if err != nil || len(ts) == 0 {
			return false, err
		}
		k = g.turnKey(&ts[0])
	} else {
		cs, err := py.store.Nodes(ctx, NodeFilter{Namespace: py.ns, Conversation: r.conv, Level: lvl - 1, FromSeq: from, Limit: 1})
		if err != nil {
			return false, err
		}
		if len(cs) == 1 {
			k = g.nodeKey(&cs[0])
		} else {
			// The level below has not closed a child there yet, but a turn
			// at from says where that child will fall, as it holds a group
			// open in groupedLevel: a late turn in a closed month whose
			// week is still open reopens the month now.
			ts, err := py.store.Turns(ctx, TurnFilter{Namespace: py.ns, Conversation: r.conv, FromSeq: from, ToSeq: from})
			if err != nil || len(ts) == 0 {
				return false, err
			}
			k = g.turnKey(&ts[0])
		}
	}
	return k.cmp(floor) <= 0, nil
}

// reopen schedules the removal of last, a closed node of level lvl whose
// period received a child, and of the nodes above it that cover it: the
// next write of the run removes them and stores what replaces them, in one
// transaction (see flush). A level-1 node's facts are learned again from
// its replacement (repeats add nothing), so the learning pass is moved
// back to the node's first turn first: a kill after that only makes the
// pass read facts it already has.
func (r *rollupRun) reopen(ctx context.Context, c Conversation, lvl int, last *Node) error {
	py := r.py
	ids := []string{last.ID}
	for up := lvl + 1; up <= len(r.p.Levels); up++ {
		ns, err := py.store.Nodes(ctx, NodeFilter{Namespace: py.ns, Conversation: r.conv, Level: up, Covers: last.FirstSeq})
		if err != nil {
			return err
		}
		for _, n := range ns {
			ids = append(ids, n.ID)
		}
	}
	if lvl == 1 && c.LearnedSeq >= last.FirstSeq {
		back := last.FirstSeq - 1
		if _, err := py.store.UpdateConversation(ctx, py.ns, r.conv, ConversationUpdate{LearnedSeq: &back}); err != nil {
			return fmt.Errorf("moving the learning pass back: %w", err)
		}
		if r.conv0 != nil {
			r.conv0.LearnedSeq = back
		}
	}
	py.log.Debug("reopening a closed period", "conversation", r.conv, "level", lvl, "node", last.ID, "key", last.Key)
	r.replace = append(r.replace, ids...)
	return nil
}

// grouping returns the grouping of level lvl of the run's policy.
func (r *rollupRun) grouping(c Conversation, lvl int) *grouping {
	g := &grouping{level: r.p.Levels[lvl-1], cut: r.p.MonthCut(lvl), loc: c.Location(), now: r.py.now(), gap: r.py.gap}
	if lvl > 1 {
		g.below, g.belowCut = &r.p.Levels[lvl-2], r.p.MonthCut(lvl-1)
	}
	g.ref = g.now
	if c.Last.After(g.ref) {
		g.ref = c.Last
	}
	return g
}

// conversation returns the conversation being rolled up, read once per run.
func (r *rollupRun) conversation(ctx context.Context) (Conversation, error) {
	if r.conv0 != nil {
		return *r.conv0, nil
	}
	c, err := r.py.store.Conversation(ctx, r.py.ns, r.conv)
	if err != nil {
		return Conversation{}, fmt.Errorf("read conversation: %w", err)
	}
	r.conv0 = &c
	return c, nil
}
