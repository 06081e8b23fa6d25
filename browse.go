package strata

import (
	"context"
	"fmt"
	"slices"
)

// NodesIn returns a page of one level's nodes whose spans meet the turns
// from..to (seqs; to 0 means the last turn), in seq order, at most limit
// (default 200, at most 2,000) of them, and the from of the following
// page (0 when this one ends the range). It reads only the nodes asked
// for, so a browser can show a level of a long conversation a window at a
// time.
func (m *Memory) NodesIn(ctx context.Context, conversation string, level int, from, to int64, limit int) ([]Node, int64, error) {
	c, err := m.conversation(ctx, conversation)
	if err != nil {
		return nil, 0, err
	}
	p, err := m.policyFor(c)
	if err != nil {
		return nil, 0, err
	}
	if level < 1 || level > len(p.Levels) {
		return nil, 0, Errorf(EINVALID, "level %d: conversation %q has levels 1 to %d", level, conversation, len(p.Levels))
	}
	if limit <= 0 {
		limit = 200
	}
	if limit > 2000 {
		return nil, 0, Errorf(EINVALID, "limit %d: at most 2000 nodes per page", limit)
	}
	if from < 1 {
		from = 1
	}
	if to <= 0 || to > c.Turns {
		to = c.Turns
	}
	if from > to {
		return []Node{}, 0, nil
	}
	// A level's nodes do not overlap: the one holding from may start
	// before it, and the others start within the range.
	out := []Node{}
	first, err := m.store.Nodes(ctx, NodeFilter{Namespace: m.ns, Conversation: conversation, Level: level, Covers: from})
	if err != nil {
		return nil, 0, err
	}
	out = append(out, first...)
	start := from
	if len(first) > 0 {
		start = first[len(first)-1].LastSeq + 1
	}
	if start <= to && len(out) < limit+1 {
		rest, err := m.store.Nodes(ctx, NodeFilter{Namespace: m.ns, Conversation: conversation, Level: level,
			FromSeq: start, Limit: limit + 1 - len(out)})
		if err != nil {
			return nil, 0, err
		}
		for _, n := range rest {
			if n.FirstSeq > to {
				break
			}
			out = append(out, n)
		}
	}
	var next int64
	if len(out) > limit {
		next = out[limit].FirstSeq
		out = out[:limit]
	}
	return out, next, nil
}

// Resummarize writes a node's summary again from its turns (level 1) or
// its children, and the summaries of the nodes over it: what a reviewer
// asks for when a summary needs review. A level summarized by a model is
// left pending, so the next pass asks the model again. It returns the node
// as now stored.
func (m *Memory) Resummarize(ctx context.Context, id string) (Node, error) {
	n, conv, err := m.Node(ctx, id)
	if err != nil {
		return Node{}, err
	}
	c, err := m.conversation(ctx, conv)
	if err != nil {
		return Node{}, err
	}
	p, err := m.policyFor(c)
	if err != nil {
		return Node{}, err
	}
	lock := m.rollLock(conv)
	lock.Lock()
	defer lock.Unlock()
	up, err := m.store.Nodes(ctx, NodeFilter{Namespace: m.ns, Conversation: conv, Covers: n.FirstSeq})
	if err != nil {
		return Node{}, err
	}
	up = slices.DeleteFunc(up, func(u Node) bool { return u.Level < n.Level })
	if err := m.pyramid.remake(ctx, c, p, up); err != nil {
		return Node{}, fmt.Errorf("resummarize %s: %w", id, err)
	}
	n, _, err = m.Node(ctx, id)
	return n, err
}
