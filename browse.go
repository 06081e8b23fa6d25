package strata

import (
	"context"
	"fmt"
	"slices"
)

// browser answers the reads of what a conversation holds: its pyramid's
// nodes page by page (browse.go), its turns by period or page (zoom.go),
// its tree and a node's turns (tree.go), search hits with their
// ancestors (search.go); and it writes a node's summary again on request.
type browser struct {
	scope
	vec     *vectors // hybrid search
	pyramid *pyramid // Resummarize's rewrite
}

// NodesIn returns a page of one level's nodes whose spans meet the turns
// from..to (seqs; to 0 means the last turn), in seq order, at most limit
// (default 200, at most 2,000) of them, and the from of the following
// page (0 when this one ends the range). It reads only the nodes asked
// for, so a browser can show a level of a long conversation a window at a
// time.
func (m *Memory) NodesIn(ctx context.Context, conversation string, level int, from, to int64, limit int) ([]Node, int64, error) {
	return m.browse.nodesIn(ctx, conversation, level, from, to, limit)
}

// nodesIn is Memory.NodesIn.
func (b *browser) nodesIn(ctx context.Context, conversation string, level int, from, to int64, limit int) ([]Node, int64, error) {
	c, err := b.conversation(ctx, conversation)
	if err != nil {
		return nil, 0, err
	}
	p, err := b.policyFor(c)
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
	first, err := b.store.Nodes(ctx, NodeFilter{Namespace: b.ns, Conversation: conversation, Level: level, Covers: from})
	if err != nil {
		return nil, 0, err
	}
	out = append(out, first...)
	start := from
	if len(first) > 0 {
		start = first[len(first)-1].LastSeq + 1
	}
	if start <= to && len(out) < limit+1 {
		rest, err := b.store.Nodes(ctx, NodeFilter{Namespace: b.ns, Conversation: conversation, Level: level,
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
	return m.browse.resummarize(ctx, id)
}

// resummarize is Memory.Resummarize.
func (b *browser) resummarize(ctx context.Context, id string) (Node, error) {
	n, conv, err := b.node(ctx, id)
	if err != nil {
		return Node{}, err
	}
	c, err := b.conversation(ctx, conv)
	if err != nil {
		return Node{}, err
	}
	p, err := b.policyFor(c)
	if err != nil {
		return Node{}, err
	}
	lock := b.rollLock(conv)
	lock.Lock()
	defer lock.Unlock()
	up, err := b.store.Nodes(ctx, NodeFilter{Namespace: b.ns, Conversation: conv, Covers: n.FirstSeq})
	if err != nil {
		return Node{}, err
	}
	up = slices.DeleteFunc(up, func(u Node) bool { return u.Level < n.Level })
	if err := b.pyramid.remake(ctx, c, p, up); err != nil {
		return Node{}, fmt.Errorf("resummarize %s: %w", id, err)
	}
	n, _, err = b.node(ctx, id)
	return n, err
}
