package strata

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Rollup closes every complete span of the conversation's pyramid that has
// no node yet, and returns how many nodes it made. It is idempotent: a
// second run makes nothing, and a node is never made twice because its id
// derives from its span.
func (m *Memory) Rollup(ctx context.Context, conversation string) (int, error) {
	return m.pyramid.rollupOf(ctx, conversation)
}

// pyramid builds conversations' pyramids: it closes the spans that are
// complete into nodes, level by level (group.go for calendar levels,
// monthcut.go for the month cut), and then, unless tiers are deferred,
// has the tiering move what is due.
type pyramid struct {
	scope
	tok        Tokenizer
	sum        Summarizer
	llm        LLMOptions    // which levels wait for a model summary
	gap        time.Duration // Config.SessionGap, for session levels
	workers    int           // spans summarized at once
	tiers      *tiering
	deferTiers bool // Config.DeferTiers

	mu sync.Mutex
	// shaped holds the conversations whose pyramid was checked against
	// the month cut (monthcut.go).
	shaped map[string]bool
}

func (py *pyramid) rollupOf(ctx context.Context, conversation string) (int, error) {
	conv, err := py.conversation(ctx, conversation)
	if err != nil {
		return 0, err
	}
	p, err := py.policyFor(conv)
	if err != nil {
		return 0, err
	}
	return py.rollup(ctx, conversation, p, nil)
}

// rollupPage bounds how many spans are summarized and written per
// transaction, so a rollup over a long backlog holds little in memory.
const rollupPage = 256

// rollup runs the levels bottom up and writes their nodes together (see
// rollupRun), so a kill at any instant leaves either all of them or none,
// or, past pendingLimit, closed nodes whose parents are not made yet: the
// next rollup makes them.
//
// fresh, when given, holds the turns just appended (in seq order): they
// and the nodes made from them are used from memory instead of being read
// back from the store.
func (py *pyramid) rollup(ctx context.Context, conv string, p Policy, fresh []Turn) (int, error) {
	lock := py.rollLock(conv)
	lock.Lock()
	defer lock.Unlock()
	return py.rollupLocked(ctx, conv, p, fresh)
}

// rollupAndTier rolls up, then runs a tiering pass unless tiers are
// deferred, under one hold of the conversation's roll lock: what Ingest
// and Import run. It returns the nodes made and the spans moved.
func (py *pyramid) rollupAndTier(ctx context.Context, conv string, p Policy, fresh []Turn) (int, int, error) {
	return py.rollupThenTier(ctx, conv, p, fresh, !py.deferTiers)
}

// rollupThenTier rolls conv up and, if tier, moves the spans that are due.
func (py *pyramid) rollupThenTier(ctx context.Context, conv string, p Policy, fresh []Turn, tier bool) (int, int, error) {
	lock := py.rollLock(conv)
	lock.Lock()
	defer lock.Unlock()
	n, err := py.rollupLocked(ctx, conv, p, fresh)
	if err != nil || !tier || py.tiers.rules.Off || p.Name == "" {
		return n, 0, err
	}
	res, err := py.tiers.tier(ctx, conv, false, true)
	if errors.Is(err, errTiersClaimed) {
		// Another process is moving this conversation's spans; what it
		// leaves, the next pass moves.
		py.log.Debug("tiers left to the process that holds their claim", "conversation", conv)
		return n, 0, nil
	}
	if err != nil {
		return n, len(res.Moves), fmt.Errorf("tiering: %w", err)
	}
	return n, len(res.Moves) + len(res.Expired), nil
}

// replaceTries bounds how many times a rollup starts again because another
// process changed the pyramid between its read and its write. Each new try
// first waits (replaceWait), so that two writers appending to one
// conversation in a tight loop stop colliding.
const replaceTries = 12

// maxReplaceWait caps one wait between tries.
const maxReplaceWait = 2 * time.Second

// replaceSleep waits d or until ctx ends; tests replace it.
var replaceSleep = func(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (py *pyramid) rollupLocked(ctx context.Context, conv string, p Policy, fresh []Turn) (int, error) {
	made := 0
	for try := 1; ; try++ {
		start := time.Now()
		n, err := py.rollupOnce(ctx, conv, p, fresh)
		made += n
		var lost *replacedError
		if !errors.As(err, &lost) || try == replaceTries {
			return made, err
		}
		// Another writer changed the pyramid first: read it again.
		wait := replaceWait(try, time.Since(start), rand.Int64N)
		py.log.Debug("another writer changed the pyramid; rolling up again", "conversation", conv, "try", try, "wait", wait, "error", lost.err)
		fresh = nil
		if err := replaceSleep(ctx, wait); err != nil {
			return made, err
		}
	}
}

// replaceWait is how long a rollup waits after losing try number try,
// which took took: a random share (rnd(n) is in [0, n)) of a window that
// starts at the try's own length, the time another writer had to write
// first, and doubles with each try, up to maxReplaceWait. A window of a
// fixed few milliseconds is shorter than one try of a slow writer (a
// loaded machine, a distant database), so two such writers could stay
// in step, each read overtaken by the other's write.
func replaceWait(try int, took time.Duration, rnd func(int64) int64) time.Duration {
	window := max(took, 5*time.Millisecond)
	for i := 1; i < try && window < maxReplaceWait; i++ {
		window *= 2
	}
	window = min(window, maxReplaceWait)
	return time.Duration(rnd(int64(window)))
}

// replacedError is a write that found the pyramid changed since the
// rollup read it: a node to replace is gone, or a new node overlaps one
// another process stored.
type replacedError struct{ err error }

// raced marks the store errors that say another writer got there first.
func raced(err error) error {
	if c := ErrorCode(err); c == ENOTFOUND || c == ECONFLICT {
		return &replacedError{err}
	}
	return err
}

func (e *replacedError) Error() string { return e.err.Error() }
func (e *replacedError) Unwrap() error { return e.err }

func (py *pyramid) rollupOnce(ctx context.Context, conv string, p Policy, fresh []Turn) (int, error) {
	r := &rollupRun{py: py, conv: conv, p: p}
	if err := r.monthCut(ctx); err != nil {
		return 0, fmt.Errorf("month cut: %w", err)
	}
	var below []Node // nodes just made at the level below, when kept
	for lvl := 1; lvl <= len(p.Levels); lvl++ {
		var nodes []Node
		var err error
		switch {
		case p.Levels[lvl-1].Kind != KindCount:
			err = r.groupedLevel(ctx, lvl)
		case lvl == 1:
			nodes, err = r.turns(ctx, fresh)
		default:
			nodes, err = r.nodes(ctx, lvl, below)
		}
		if err != nil {
			return r.written, fmt.Errorf("level %d (%s): %w", lvl, p.LevelName(lvl), err)
		}
		below = nodes
	}
	if err := r.flush(ctx); err != nil {
		return r.written, err
	}
	if r.checked {
		py.setShapeChecked(conv)
	}
	return r.written, nil
}

// rollupRun is one rollup of a conversation. Nodes made from memory wait
// in pending and are written together, every level in one transaction, so
// that the full-text index of summaries is flushed once per ingest rather
// than once per level. A node's parent is never written before the node.
type rollupRun struct {
	py      *pyramid
	conv    string
	p       Policy
	pending []Node
	written int
	conv0   *Conversation // read once, by the first level that needs it
	// replace holds the ids of nodes to remove with the next write: a
	// node whose period reopened, and the nodes above it.
	replace []string
	// checked says the run checked the pyramid against the month cut
	// (monthcut.go), so a successful run records it.
	checked bool
}

// pendingLimit bounds the nodes a rollup holds before writing them.
const pendingLimit = 4096

func (r *rollupRun) flush(ctx context.Context) error {
	if len(r.pending) == 0 && len(r.replace) == 0 {
		return nil
	}
	// Only the nodes not stored before count as made: another process
	// may have written the same spans first.
	made, err := r.py.store.ReplaceNodes(ctx, r.py.ns, r.conv, r.replace, r.pending)
	if err != nil {
		return raced(err)
	}
	r.replace = nil
	r.written += made
	r.pending = r.pending[:0]
	return nil
}

// add queues nodes; when they are not kept for the level above (which then
// reads the store), or too many wait, it writes them at once.
func (r *rollupRun) add(ctx context.Context, nodes []Node, kept bool) error {
	r.pending = append(r.pending, nodes...)
	if !kept || len(r.pending) >= pendingLimit {
		return r.flush(ctx)
	}
	return nil
}

// lastNode returns the newest node of a level, or nil.
func (py *pyramid) lastNode(ctx context.Context, conv string, lvl int) (*Node, error) {
	ns, err := py.store.Nodes(ctx, NodeFilter{Namespace: py.ns, Conversation: conv, Level: lvl, Newest: true, Limit: 1})
	if err != nil || len(ns) == 0 {
		return nil, err
	}
	return &ns[0], nil
}

// nextSeq returns the first seq that no node of level lvl covers yet.
func (py *pyramid) nextSeq(ctx context.Context, conv string, lvl int) (int64, error) {
	last, err := py.lastNode(ctx, conv, lvl)
	if err != nil || last == nil {
		return 1, err
	}
	return last.LastSeq + 1, nil
}

// keepLimit bounds the nodes a rollup keeps in memory for the level above;
// past it, that level reads its children from the store page by page.
const keepLimit = 4096

// turns closes level-1 spans. It returns the nodes it made, or nil when
// there were too many to keep.
func (r *rollupRun) turns(ctx context.Context, fresh []Turn) ([]Node, error) {
	py, conv, p := r.py, r.conv, r.p
	span := p.Levels[0].Span
	from, err := py.nextSeq(ctx, conv, 1)
	if err != nil {
		return nil, err
	}
	for len(fresh) > 0 && fresh[0].Seq < from {
		fresh = fresh[1:]
	}
	var kept []Node
	keep := true
	for {
		// The turns of the next page: from memory when the fresh turns
		// start within one span of from, else from the store.
		var turns []Turn
		want := from + int64(rollupPage*span) - 1
		if len(fresh) > 0 && fresh[0].Seq-from < int64(span) {
			if fresh[0].Seq > from {
				turns, err = py.store.Turns(ctx, TurnFilter{Namespace: py.ns, Conversation: conv, FromSeq: from, ToSeq: fresh[0].Seq - 1})
				if err != nil {
					return nil, err
				}
			}
			n := min(len(fresh), int(want-fresh[0].Seq+1))
			turns = append(turns, fresh[:n]...)
			fresh = fresh[n:]
		} else {
			fresh = nil
			turns, err = py.store.Turns(ctx, TurnFilter{Namespace: py.ns, Conversation: conv, FromSeq: from, ToSeq: want})
			if err != nil {
				return nil, err
			}
		}
		var reqs []SummaryRequest
		for i := 0; i+span <= len(turns); i += span {
			s := turns[i : i+span]
			if s[0].Seq != from+int64(i) || s[span-1].Seq != s[0].Seq+int64(span)-1 {
				return nil, Errorf(EINTERNAL, "turns %d..%d are not contiguous", from+int64(i), from+int64(i+span)-1)
			}
			reqs = append(reqs, SummaryRequest{Turns: s})
		}
		nodes, err := py.makeNodes(ctx, conv, p, 1, reqs, nil)
		if err != nil {
			return nil, err
		}
		if keep = keep && len(kept)+len(nodes) <= keepLimit; keep {
			kept = append(kept, nodes...)
		} else {
			kept = nil
		}
		if err := r.add(ctx, nodes, keep); err != nil {
			return nil, err
		}
		if len(nodes) < rollupPage {
			return kept, nil
		}
		from += int64(len(nodes) * span)
	}
}

// nodes closes spans of level lvl > 1 over the level below. below holds
// the nodes that level just made, if it kept them.
func (r *rollupRun) nodes(ctx context.Context, lvl int, below []Node) ([]Node, error) {
	py, conv, p := r.py, r.conv, r.p
	if below == nil {
		// The children come from the store: write what waits first.
		if err := r.flush(ctx); err != nil {
			return nil, err
		}
	}
	span := p.Levels[lvl-1].Span
	from, err := py.nextSeq(ctx, conv, lvl)
	if err != nil {
		return nil, err
	}
	var kept []Node
	keep := true
	for {
		var children []Node
		if len(below) > 0 {
			// The few older children not yet under a node, then the new.
			if below[0].FirstSeq > from {
				children, err = py.store.Nodes(ctx, NodeFilter{Namespace: py.ns, Conversation: conv,
					Level: lvl - 1, FromSeq: from, ToSeq: below[0].FirstSeq - 1})
				if err != nil {
					return nil, err
				}
			}
			for _, n := range below {
				if n.FirstSeq >= from {
					children = append(children, n)
				}
			}
			below = nil
		} else {
			children, err = py.store.Nodes(ctx, NodeFilter{Namespace: py.ns, Conversation: conv,
				Level: lvl - 1, FromSeq: from, Limit: rollupPage * span})
			if err != nil {
				return nil, err
			}
		}
		if len(children) > 0 && children[0].FirstSeq != from {
			return nil, r.realign(ctx, lvl, from, children[0].FirstSeq)
		}
		var reqs []SummaryRequest
		for i := 0; i+span <= len(children); i += span {
			reqs = append(reqs, SummaryRequest{Children: children[i : i+span]})
		}
		nodes, err := py.makeNodes(ctx, conv, p, lvl, reqs, nil)
		if err != nil {
			return nil, err
		}
		if keep = keep && len(kept)+len(nodes) <= keepLimit; keep {
			kept = append(kept, nodes...)
		} else {
			kept = nil
		}
		if err := r.add(ctx, nodes, keep); err != nil {
			return nil, err
		}
		if len(nodes) == 0 || len(children) < rollupPage*span {
			return kept, nil
		}
		from = nodes[len(nodes)-1].LastSeq + 1
	}
}

// realign repairs level lvl when its newest node ends inside a node of the
// level below instead of at one's end (the level below has no child that
// starts at from, the turn after it; its next starts at got): a pyramid
// written before the stores refused a parent over a replaced child. It
// removes the level's nodes from the newest back, with the nodes above
// them, until one ends where a child of the level below ends, and returns
// a replacedError, so that the rollup reads the pyramid again and closes
// those spans anew.
func (r *rollupRun) realign(ctx context.Context, lvl int, from, got int64) error {
	py := r.py
	py.log.Warn("a level's nodes do not end where the level below's do; rebuilding them",
		"conversation", r.conv, "level", lvl, "want_child_at", from, "next_child_at", got)
	for {
		last, err := py.lastNode(ctx, r.conv, lvl)
		if err != nil || last == nil {
			return err
		}
		r.replace = append(r.replace, last.ID)
		if err := r.flush(ctx); err != nil {
			return err
		}
		if last.FirstSeq == 1 {
			break
		}
		prev, err := py.store.Nodes(ctx, NodeFilter{Namespace: py.ns, Conversation: r.conv, Level: lvl - 1,
			ToSeq: last.FirstSeq - 1, Newest: true, Limit: 1})
		if err != nil {
			return err
		}
		if len(prev) == 1 && prev[0].LastSeq == last.FirstSeq-1 {
			break
		}
	}
	return &replacedError{Errorf(ECONFLICT, "level %d: next child started at turn %d, want %d", lvl-1, got, from)}
}

// makeNodes summarizes spans in parallel. A request's Budget, when set,
// overrides the level's; keys, when given, are the nodes' keys.
func (py *pyramid) makeNodes(ctx context.Context, conv string, p Policy, lvl int, reqs []SummaryRequest, keys []string) ([]Node, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	level := p.Levels[lvl-1]
	nodes := make([]Node, len(reqs))
	errs := make([]error, len(reqs))
	now := py.now().UTC()
	parallel(len(reqs), py.workers, func(i int) {
		r := &reqs[i]
		r.Conversation, r.Level, r.LevelName, r.Tokenizer = conv, lvl, level.Name, py.tok
		if r.Budget == 0 {
			r.Budget = level.Budget
		}
		nodes[i], errs[i] = py.makeNode(ctx, *r, now)
		if keys != nil {
			nodes[i].Key = keys[i]
		}
		switch {
		case level.Summarizer == MethodAggregate:
			py.aggregateSummary(&nodes[i], r.Budget)
		case py.llm.wantsModel(level) && !(py.llm.Defer && lvl == 1):
			nodes[i].Pending = true // the extractive summary stands until the model's is written
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return nodes, nil
}

// makeNode summarizes one span into a node.
func (py *pyramid) makeNode(ctx context.Context, r SummaryRequest, now time.Time) (Node, error) {
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
		n.Aggregates = AggregateTurns(r.Turns)
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
		aggs := make([]*Aggregates, len(r.Children))
		for i := range r.Children {
			aggs[i] = r.Children[i].Aggregates
		}
		n.Aggregates = MergeAggregates(aggs)
	}
	n.ID = NodeID(py.ns, r.Conversation, r.Level, n.FirstSeq, n.LastSeq)
	s, err := py.sum.Summarize(ctx, r)
	if err != nil {
		return Node{}, fmt.Errorf("summarize %s %d..%d: %w", r.LevelName, n.FirstSeq, n.LastSeq, err)
	}
	n.Summary, n.Facts, n.Themes, n.Method = s.Text, s.Facts, s.Themes, s.Method
	n.Derived = s.Derived && len(r.Children) > 0
	if n.Method == "" {
		n.Method = MethodExtractive
	}
	n.Tokens = py.tok.Count(n.Summary)
	if n.Tokens > r.Budget {
		n.Status = StatusOverBudget
	}
	return n, nil
}

// aggregateSummary makes a node of an aggregate level: 002's statistics of
// its span, then as many of its key facts as the budget holds. A span
// without statistics keeps its extractive summary.
func (py *pyramid) aggregateSummary(n *Node, budget int) {
	stats := n.Aggregates.String()
	if stats == "" {
		return
	}
	text := "Statistics: " + stats
	for _, f := range n.Facts {
		next := text + "\n- " + f
		if py.tok.Count(next) > budget {
			break
		}
		text = next
	}
	n.Summary, n.Method, n.Derived = text, MethodAggregate, false
	n.Tokens = py.tok.Count(text)
	n.Status = StatusOK
	if n.Tokens > budget {
		n.Status = StatusOverBudget
	}
}
