package strata

import (
	"context"
	"fmt"
	"time"
)

// RollupResult counts the nodes a rollup made, per level (index 0 = level 1).
type RollupResult struct {
	Conversation string `json:"conversation"`
	Made         []int  `json:"made"`
}

// Rollup closes every complete span of the conversation's pyramid that has
// no node yet. It is idempotent: a second run makes nothing, and a node is
// never made twice because its id derives from its span.
func (m *Memory) Rollup(ctx context.Context, conversation string) (int, error) {
	lock := m.convLock(conversation)
	lock.Lock()
	defer lock.Unlock()
	conv, err := m.store.Conversation(ctx, m.ns, conversation)
	if err != nil {
		return 0, err
	}
	p, err := m.policyFor(conv)
	if err != nil {
		return 0, err
	}
	return m.rollup(ctx, conversation, p)
}

// rollupPage bounds how many spans are summarized and written per
// transaction, so a rollup over a long backlog holds little in memory.
const rollupPage = 256

// rollup runs the levels bottom up. Each level's nodes are written in one
// transaction per page, after the level below, so a kill at any instant
// leaves closed nodes whose parents are simply not made yet.
func (m *Memory) rollup(ctx context.Context, conv string, p Policy) (int, error) {
	made := 0
	for lvl := 1; lvl <= len(p.Levels); lvl++ {
		for {
			n, err := m.rollupLevel(ctx, conv, p, lvl)
			if err != nil {
				return made, fmt.Errorf("level %d (%s): %w", lvl, p.LevelName(lvl), err)
			}
			made += n
			if n < rollupPage {
				break
			}
		}
	}
	return made, nil
}

// lastNode returns the newest node of a level, or nil.
func (m *Memory) lastNode(ctx context.Context, conv string, lvl int) (*Node, error) {
	ns, err := m.store.Nodes(ctx, NodeFilter{Namespace: m.ns, Conversation: conv, Level: lvl, Newest: true, Limit: 1})
	if err != nil || len(ns) == 0 {
		return nil, err
	}
	return &ns[0], nil
}

// rollupLevel makes up to rollupPage nodes of one level and returns how many.
func (m *Memory) rollupLevel(ctx context.Context, conv string, p Policy, lvl int) (int, error) {
	level := p.Levels[lvl-1]
	from := int64(1)
	last, err := m.lastNode(ctx, conv, lvl)
	if err != nil {
		return 0, err
	}
	if last != nil {
		from = last.LastSeq + 1
	}
	var reqs []SummaryRequest
	if lvl == 1 {
		turns, err := m.store.Turns(ctx, TurnFilter{Namespace: m.ns, Conversation: conv,
			FromSeq: from, ToSeq: from + int64(rollupPage*level.Span) - 1})
		if err != nil {
			return 0, err
		}
		for i := 0; i+level.Span <= len(turns); i += level.Span {
			span := turns[i : i+level.Span]
			if span[0].Seq != from+int64(i) || span[len(span)-1].Seq != span[0].Seq+int64(level.Span)-1 {
				return 0, Errorf(EINTERNAL, "turns %d..%d are not contiguous", from+int64(i), from+int64(i+level.Span)-1)
			}
			reqs = append(reqs, SummaryRequest{Turns: span})
		}
	} else {
		children, err := m.store.Nodes(ctx, NodeFilter{Namespace: m.ns, Conversation: conv,
			Level: lvl - 1, FromSeq: from, Limit: rollupPage * level.Span})
		if err != nil {
			return 0, err
		}
		for i := 0; i+level.Span <= len(children); i += level.Span {
			reqs = append(reqs, SummaryRequest{Children: children[i : i+level.Span]})
		}
	}
	if len(reqs) == 0 {
		return 0, nil
	}
	nodes := make([]Node, len(reqs))
	errs := make([]error, len(reqs))
	now := m.now().UTC()
	parallel(len(reqs), m.workers, func(i int) {
		r := &reqs[i]
		r.Conversation, r.Level, r.LevelName, r.Budget, r.Tokenizer = conv, lvl, level.Name, level.Budget, m.tok
		nodes[i], errs[i] = m.makeNode(ctx, *r, now)
	})
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	if err := m.store.PutNodes(ctx, m.ns, conv, nodes); err != nil {
		return 0, err
	}
	return len(nodes), nil
}

// makeNode summarizes one span into a node.
func (m *Memory) makeNode(ctx context.Context, r SummaryRequest, now time.Time) (Node, error) {
	n := Node{Conversation: r.Conversation, Level: r.Level, Status: StatusOK, Created: now}
	if len(r.Turns) > 0 {
		first, last := r.Turns[0], r.Turns[len(r.Turns)-1]
		n.FirstSeq, n.LastSeq, n.Start, n.End = first.Seq, last.Seq, first.Time, last.Time
		for _, t := range r.Turns {
			n.SourceTokens += t.Tokens
			if t.Time.Before(n.Start) {
				n.Start = t.Time
			}
			if t.Time.After(n.End) {
				n.End = t.Time
			}
		}
	} else {
		first, last := r.Children[0], r.Children[len(r.Children)-1]
		n.FirstSeq, n.LastSeq, n.Start, n.End = first.FirstSeq, last.LastSeq, first.Start, last.End
		for _, c := range r.Children {
			n.SourceTokens += c.SourceTokens
			n.Children = append(n.Children, c.ID)
			if c.Start.Before(n.Start) {
				n.Start = c.Start
			}
			if c.End.After(n.End) {
				n.End = c.End
			}
		}
	}
	n.ID = NodeID(m.ns, r.Conversation, r.Level, n.FirstSeq, n.LastSeq)
	s, err := m.sum.Summarize(ctx, r)
	if err != nil {
		return Node{}, fmt.Errorf("summarize %s %d..%d: %w", r.LevelName, n.FirstSeq, n.LastSeq, err)
	}
	n.Summary, n.Facts, n.Themes, n.Method = s.Text, s.Facts, s.Themes, s.Method
	if n.Method == "" {
		n.Method = MethodExtractive
	}
	n.Tokens = m.tok.Count(n.Summary)
	if n.Tokens > r.Budget {
		n.Status = StatusOverBudget
	}
	return n, nil
}
