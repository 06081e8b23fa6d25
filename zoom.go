package strata

import (
	"context"
	"time"
)

// ZoomLimit bounds the turns one Zoom returns.
const ZoomLimit = 100000

// Zoom returns the whole turns of the conversation whose time lies in the
// period p, in seq order, whatever tier holds them (hot rows, warm blocks
// or archive segments), as Expand does. A calendar month of the
// conversation's time zone that its pyramid's month level has closed is
// read as its month node's span, which holds exactly that month's turns
// (but for a turn stamped earlier than the turn before it, which stays
// with its predecessor's period, there as in the pyramid). Turns whose content
// expired under a retention rule are left out. More than ZoomLimit turns
// is an EINVALID error asking for a shorter period.
func (m *Memory) Zoom(ctx context.Context, conversation string, p Period) ([]Turn, error) {
	return m.browse.zoom(ctx, conversation, p)
}

// zoom is Memory.Zoom.
func (b *browser) zoom(ctx context.Context, conversation string, p Period) ([]Turn, error) {
	if !p.Start.Before(p.End) {
		return nil, Errorf(EINVALID, "zoom: the period %s is empty", p.Label())
	}
	c, err := b.conversation(ctx, conversation)
	if err != nil {
		return nil, err
	}
	f := TurnFilter{Namespace: b.ns, Conversation: conversation, Since: p.Start, Until: p.End, Limit: ZoomLimit + 1}
	if n, err := b.monthNode(ctx, c, p); err != nil {
		return nil, err
	} else if n != nil {
		f = TurnFilter{Namespace: b.ns, Conversation: conversation, FromSeq: n.FirstSeq, ToSeq: n.LastSeq, Limit: ZoomLimit + 1}
	}
	ts, err := b.store.Turns(ctx, f)
	if err != nil {
		return nil, err
	}
	if len(ts) > ZoomLimit {
		return nil, Errorf(EINVALID, "zoom: %s holds more than %d turns; zoom to a shorter period", p.Label(), ZoomLimit)
	}
	return ts, nil
}

// monthNode returns the month node of p, if p is a calendar month of c's
// time zone and c's pyramid has closed its month node; else nil.
func (b *browser) monthNode(ctx context.Context, c Conversation, p Period) (*Node, error) {
	if p.Kind != PeriodMonth {
		return nil, nil
	}
	if mp := PeriodOf(PeriodMonth, p.Start, c.Location()); !mp.Start.Equal(p.Start) || !mp.End.Equal(p.End) {
		return nil, nil
	}
	pol, err := b.policyFor(c)
	if err != nil {
		return nil, nil // a policy this configuration lacks: zoom by time
	}
	lvl := pol.LevelOf(PeriodMonth)
	if lvl == 0 {
		return nil, nil
	}
	ns, err := b.store.Nodes(ctx, NodeFilter{Namespace: b.ns, Conversation: c.ID, Level: lvl, Key: p.Label(), Limit: 1})
	if err != nil || len(ns) == 0 {
		return nil, err
	}
	if !p.Contains(ns[0].Start) || !p.Contains(ns[0].End) {
		// It holds a turn stamped out of order, or it was built before
		// month nodes covered their month and no rollup has rebuilt it
		// yet: zoom by time.
		return nil, nil
	}
	return &ns[0], nil
}

// ZoomPeriod reads what a caller names a period by, with ParseWhen: a
// label ("2023-05-08", "2023-W19", "2023-05", "2023-05-08..2023-05-10") or
// a time expression ("yesterday", "last week", "in March") resolved
// against now if given, else the conversation's newest turn, as a context
// query's time expressions are. The period is in the conversation's time
// zone.
func (m *Memory) ZoomPeriod(ctx context.Context, conversation, what string, now time.Time) (Period, error) {
	return m.browse.zoomPeriod(ctx, conversation, what, now)
}

// zoomPeriod is Memory.ZoomPeriod.
func (b *browser) zoomPeriod(ctx context.Context, conversation, what string, now time.Time) (Period, error) {
	c, err := b.conversation(ctx, conversation)
	if err != nil {
		return Period{}, err
	}
	ref := now
	if ref.IsZero() {
		ref = c.Last
		if ref.IsZero() {
			ref = b.now()
		}
	}
	return ParseWhen(what, ref, c.Location())
}

// RangePeriod is the period from the start of from's day to the end of
// to's day, in loc: what --from and --to name.
func RangePeriod(from, to time.Time, loc *time.Location) (Period, error) {
	if loc == nil {
		loc = time.UTC
	}
	start := PeriodOf(PeriodDay, from, loc).Start
	end := PeriodOf(PeriodDay, to, loc).End
	if !start.Before(end) {
		return Period{}, Errorf(EINVALID, "zoom: --from %s is after --to %s", from.Format("2006-01-02"), to.Format("2006-01-02"))
	}
	return Period{Kind: PeriodRange, Start: start, End: end}, nil
}

// TurnsPageLimit bounds the turns one Turns call returns.
const TurnsPageLimit = 1000

// Turns returns a page of the conversation's turns in seq order from seq
// from (1 if from < 1) to seq to (the last turn if to < 1), at most limit
// of them (100 if limit < 1; TurnsPageLimit at most), whole whatever tier
// holds them. next is the seq to ask for the following page, 0 when none
// is left. Turns whose content expired are left out.
func (m *Memory) Turns(ctx context.Context, conversation string, from, to int64, limit int) (turns []Turn, next int64, err error) {
	return m.browse.turns(ctx, conversation, from, to, limit)
}

// turns is Memory.Turns.
func (b *browser) turns(ctx context.Context, conversation string, from, to int64, limit int) (turns []Turn, next int64, err error) {
	if limit < 1 {
		limit = 100
	}
	if limit > TurnsPageLimit {
		return nil, 0, Errorf(EINVALID, "turns: limit %d is over %d", limit, TurnsPageLimit)
	}
	if from < 1 {
		from = 1
	}
	if to > 0 && to < from {
		return nil, 0, Errorf(EINVALID, "turns: to %d is before from %d", to, from)
	}
	if _, err := b.conversation(ctx, conversation); err != nil {
		return nil, 0, err
	}
	ts, err := b.store.Turns(ctx, TurnFilter{Namespace: b.ns, Conversation: conversation, FromSeq: from, ToSeq: to, Limit: limit + 1})
	if err != nil {
		return nil, 0, err
	}
	if len(ts) > limit {
		next = ts[limit].Seq
		ts = ts[:limit]
	}
	return ts, next, nil
}
