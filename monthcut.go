package strata

import (
	"context"
	"fmt"
	"time"
)

// This file brings a pyramid built before month levels cut the week and
// session levels below them at month ends (Policy.MonthCut) up to that
// rule. Then a week belonged to the month of its Thursday and a session
// to the month of its first turn, so a month node could start in the month
// before its own or end in the month after, and a week or session node
// could run across the end of a month.
//
// The first rollup of a conversation in a process checks its month nodes,
// and the nodes of the cut levels that no month node covers yet, against
// the rule (a few reads: the month nodes, and the first turn of a node
// whose times leave its month). A pyramid that fails is rebuilt in the
// same run: a level-1 node that runs across the end of a month is split
// into its parts in place (its span comes back hot first if it was warm or
// cold, as when a late turn reopens it; a span whose content expired stays
// as it is), and every level above level 1 is built again from its
// children, in the run's writes, so the store never holds two pyramids.
// The result is the pyramid one import of the same turns makes.

// shapeChecked reports whether this Memory has checked conv's pyramid
// against the month cut.
func (py *pyramid) shapeChecked(conv string) bool {
	py.mu.Lock()
	defer py.mu.Unlock()
	return py.shaped[conv]
}

// setShapeChecked records that conv's pyramid follows the month cut.
func (py *pyramid) setShapeChecked(conv string) {
	py.mu.Lock()
	defer py.mu.Unlock()
	if py.shaped == nil {
		py.shaped = map[string]bool{}
	}
	py.shaped[conv] = true
}

// monthCut checks the run's conversation against the month cut once per
// Memory and, if its pyramid was built before it, schedules the rebuild
// described above. The run's next writes carry it out.
func (r *rollupRun) monthCut(ctx context.Context) error {
	month := r.p.LevelOf(PeriodMonth)
	if month == 0 || r.py.shapeChecked(r.conv) {
		return nil
	}
	var cuts []int
	for lvl := 1; lvl < month; lvl++ {
		if r.p.MonthCut(lvl) {
			cuts = append(cuts, lvl)
		}
	}
	if len(cuts) == 0 {
		return nil
	}
	r.checked = true
	c, err := r.conversation(ctx)
	if err != nil {
		return err
	}
	stale, err := r.staleMonths(ctx, c, month, cuts)
	if err != nil || !stale {
		return err
	}
	r.py.log.Info("rebuilding a pyramid built before month levels cut weeks and sessions at month ends", "conversation", r.conv)
	for lvl := 2; lvl <= len(r.p.Levels); lvl++ {
		ns, err := r.py.store.Nodes(ctx, NodeFilter{Namespace: r.py.ns, Conversation: r.conv, Level: lvl})
		if err != nil {
			return err
		}
		for _, n := range ns {
			r.replace = append(r.replace, n.ID)
		}
	}
	if r.p.MonthCut(1) {
		return r.splitLevel1(ctx, c)
	}
	return nil
}

// staleMonths reports whether a month node, or a node of a cut level that
// no month node covers yet, breaks the month cut.
func (r *rollupRun) staleMonths(ctx context.Context, c Conversation, month int, cuts []int) (bool, error) {
	py := r.py
	months, err := py.store.Nodes(ctx, NodeFilter{Namespace: py.ns, Conversation: r.conv, Level: month})
	if err != nil {
		return false, err
	}
	g := r.grouping(c, month)
	for i := range months {
		if bad, err := r.misplaced(ctx, g, &months[i]); bad || err != nil {
			return bad, err
		}
	}
	from := int64(1)
	if len(months) > 0 {
		from = months[len(months)-1].LastSeq + 1
	}
	for _, lvl := range cuts {
		ns, err := py.store.Nodes(ctx, NodeFilter{Namespace: py.ns, Conversation: r.conv, Level: lvl, FromSeq: from})
		if err != nil {
			return false, err
		}
		g := r.grouping(c, lvl)
		for i := range ns {
			if bad, err := r.misplaced(ctx, g, &ns[i]); bad || err != nil {
				return bad, err
			}
		}
	}
	return false, nil
}

// misplaced reports whether n, a node of a month level or of a level cut
// at month ends, breaks the month cut: it ends outside its month, or its
// first turn lies outside it. (A later turn stamped before the month is
// one that joined its predecessor's period, as keys never go backwards.)
// A node whose key this rule cannot read, or whose first turn expired, is
// left as it is.
func (r *rollupRun) misplaced(ctx context.Context, g *grouping, n *Node) (bool, error) {
	k, ok := g.parseKey(n)
	if !ok {
		return false, nil
	}
	in := k.month
	if !g.cut {
		in = k.base // the month level itself
	}
	if in.Contains(n.Start) && in.Contains(n.End) {
		return false, nil
	}
	if !in.Contains(n.End) {
		return true, nil
	}
	ts, err := r.py.store.Turns(ctx, TurnFilter{Namespace: r.py.ns, Conversation: r.conv, FromSeq: n.FirstSeq, ToSeq: n.FirstSeq})
	if err != nil || len(ts) == 0 {
		return false, err
	}
	return !in.Contains(ts[0].Time), nil
}

// splitLevel1 schedules the replacement of every level-1 node that runs
// across the end of a month by its parts, past the last expired span.
func (r *rollupRun) splitLevel1(ctx context.Context, c Conversation) error {
	py := r.py
	g := r.grouping(c, 1)
	var prev *Node
	from := int64(1)
	ex, err := py.store.Nodes(ctx, NodeFilter{Namespace: py.ns, Conversation: r.conv, Level: 1,
		Tiers: []Tier{TierExpired}, Newest: true, Limit: 1})
	if err != nil {
		return err
	}
	if len(ex) == 1 {
		prev, from = &ex[0], ex[0].LastSeq+1
	}
	back := int64(-1) // where the learning pass goes back to, if it must
	const page = 512
	for {
		ns, err := py.store.Nodes(ctx, NodeFilter{Namespace: py.ns, Conversation: r.conv, Level: 1, FromSeq: from, Limit: page})
		if err != nil {
			return err
		}
		for i := range ns {
			n := &ns[i]
			bad, err := r.misplaced(ctx, g, n)
			if err != nil {
				return err
			}
			if bad {
				parts, err := r.splitNode(ctx, c, g, prev, n)
				if err != nil {
					return fmt.Errorf("split %s %s at the end of its month: %w", g.level.Name, n.Key, err)
				}
				if len(parts) > 0 {
					r.replace = append(r.replace, n.ID)
					if err := r.add(ctx, parts, true); err != nil {
						return err
					}
					if back < 0 && c.LearnedSeq >= n.FirstSeq {
						back = n.FirstSeq - 1
					}
				}
			}
			prev = n
		}
		if len(ns) < page {
			break
		}
		from = ns[len(ns)-1].LastSeq + 1
	}
	if back >= 0 {
		// The parts' facts are learned again (repeats add nothing), as
		// for a reopened node.
		if _, err := py.store.UpdateConversation(ctx, py.ns, r.conv, ConversationUpdate{LearnedSeq: &back}); err != nil {
			return fmt.Errorf("moving the learning pass back: %w", err)
		}
		if r.conv0 != nil {
			r.conv0.LearnedSeq = back
		}
	}
	return nil
}

// splitNode groups the turns of n, a level-1 node, again under the month
// cut, after prev (the node before it, nil if none), and returns the
// nodes of its closed groups: all of them unless n is the level's last
// node and the clock has not closed its last part, whose turns the level
// then closes as it does any open turns. It returns nil if n's turns are
// not all readable.
func (r *rollupRun) splitNode(ctx context.Context, c Conversation, g *grouping, prev, n *Node) ([]Node, error) {
	py := r.py
	ts, err := py.store.Turns(ctx, TurnFilter{Namespace: py.ns, Conversation: r.conv, FromSeq: n.FirstSeq, ToSeq: n.LastSeq + 1})
	if err != nil {
		return nil, err
	}
	var next *groupKey
	if len(ts) > 0 && ts[len(ts)-1].Seq == n.LastSeq+1 {
		k := g.turnKey(&ts[len(ts)-1])
		next = &k
		ts = ts[:len(ts)-1]
	}
	if int64(len(ts)) != n.Turns() {
		return nil, nil
	}
	var floor *groupKey
	if prev != nil {
		if k, ok := g.parseKey(prev); ok {
			floor = &k
		}
	}
	keys := make([]groupKey, len(ts), len(ts)+1)
	ends := make([]time.Time, len(ts))
	for i := range ts {
		keys[i], ends[i] = g.turnKey(&ts[i]), ts[i].Time
	}
	keys, next = clampNext(keys, floor, next)
	var reqs []SummaryRequest
	var labels []string
	last := floor
	for _, gr := range g.split(keys, ends, next) {
		if !gr.closed {
			break
		}
		label := g.label(gr.key, last)
		last = &gr.key
		reqs = append(reqs, SummaryRequest{Budget: g.level.BudgetFor(c.IsImportant(label)), Turns: ts[gr.from:gr.to]})
		labels = append(labels, label)
	}
	return py.makeNodes(ctx, r.conv, r.p, 1, reqs, labels)
}
