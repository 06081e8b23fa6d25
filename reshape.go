package strata

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// This file changes a pyramid after the fact: pinning a turn, marking a
// period important, and moving a conversation to another policy.

// Pin sets the importance of the turn seq (0..1; PinnedImportance and
// above makes it a milestone) and rewrites the summaries of the nodes
// over it, so that a milestone is quoted in them (and one no longer
// pinned is not). A milestone keeps its content in its row in every tier
// and is never expired. It returns the turn.
func (m *Memory) Pin(ctx context.Context, conversation string, seq int64, importance float64) (Turn, error) {
	return m.pyramid.pin(ctx, conversation, seq, importance)
}

func (py *pyramid) pin(ctx context.Context, conversation string, seq int64, importance float64) (Turn, error) {
	c, err := py.conversation(ctx, conversation)
	if err != nil {
		return Turn{}, err
	}
	p, err := py.policyFor(c)
	if err != nil {
		return Turn{}, err
	}
	lock := py.rollLock(conversation)
	lock.Lock()
	defer lock.Unlock()
	t, err := py.store.SetImportance(ctx, py.ns, conversation, seq, importance)
	if err != nil {
		return Turn{}, err
	}
	over, err := py.store.Nodes(ctx, NodeFilter{Namespace: py.ns, Conversation: conversation, Covers: seq})
	if err != nil {
		return t, err
	}
	if err := py.remake(ctx, c, p, over); err != nil {
		return t, fmt.Errorf("rewrite the summaries over turn %d: %w", seq, err)
	}
	return t, nil
}

// MarkImportant marks the period label ("2023-05-08"; a day, week or
// month) of the conversation important, or clears the mark: the nodes of
// an important period are summarized with their level's ImportantBudget
// (001, Phase 4). The nodes of that period and those over them are
// rewritten at once. It returns the conversation's marks.
func (m *Memory) MarkImportant(ctx context.Context, conversation, label string, important bool) ([]string, error) {
	return m.pyramid.markImportant(ctx, conversation, label, important)
}

func (py *pyramid) markImportant(ctx context.Context, conversation, label string, important bool) ([]string, error) {
	c, err := py.conversation(ctx, conversation)
	if err != nil {
		return nil, err
	}
	per, err := ParsePeriod(label, c.Location())
	if err != nil {
		return nil, err
	}
	if per.Kind == PeriodRange {
		return nil, Errorf(EINVALID, "period %q: mark a day, week or month, not a range", label)
	}
	label = per.Label()
	p, err := py.policyFor(c)
	if err != nil {
		return nil, err
	}
	lock := py.rollLock(conversation)
	lock.Lock()
	defer lock.Unlock()
	marks := slices.DeleteFunc(slices.Clone(c.Important), func(s string) bool { return s == label })
	if important {
		marks = append(marks, label)
		slices.Sort(marks)
	}
	if c, err = py.store.UpdateConversation(ctx, py.ns, conversation, ConversationUpdate{Important: &marks}); err != nil {
		return nil, err
	}
	// The period's nodes: on a level cut at month ends, a week that runs
	// across the end of a month has a second part, labelled with its month.
	keys := []string{label}
	if last := PeriodOf(PeriodMonth, per.End.Add(-time.Nanosecond), per.Start.Location()); per.Kind == PeriodWeek && last.Start.After(per.Start) {
		keys = append(keys, label+" ("+last.Label()+")")
	}
	var ns []Node
	for _, k := range keys {
		kn, err := py.store.Nodes(ctx, NodeFilter{Namespace: py.ns, Conversation: conversation, Key: k})
		if err != nil {
			return marks, err
		}
		ns = append(ns, kn...)
	}
	var over []Node
	for _, n := range ns {
		// The node and the nodes over it: every node of its level or above
		// that holds its first turn.
		up, err := py.store.Nodes(ctx, NodeFilter{Namespace: py.ns, Conversation: conversation, Covers: n.FirstSeq})
		if err != nil {
			return marks, err
		}
		for _, u := range up {
			if u.Level >= n.Level {
				over = append(over, u)
			}
		}
	}
	if err := py.remake(ctx, c, p, over); err != nil {
		return marks, fmt.Errorf("rewrite the summaries of %s: %w", label, err)
	}
	return marks, nil
}

// remake summarizes nodes again over their current turns and children,
// finest level first, and stores them under the same ids. The caller holds
// the conversation's roll lock.
func (py *pyramid) remake(ctx context.Context, c Conversation, p Policy, nodes []Node) error {
	slices.SortFunc(nodes, func(a, b Node) int {
		if a.Level != b.Level {
			return a.Level - b.Level
		}
		return cmpInt64(a.FirstSeq, b.FirstSeq)
	})
	nodes = slices.CompactFunc(nodes, func(a, b Node) bool { return a.ID == b.ID })
	for _, n := range nodes {
		level := p.Levels[n.Level-1]
		req := SummaryRequest{Budget: level.BudgetFor(c.IsImportant(n.Key))}
		var err error
		if n.Level == 1 {
			req.Turns, err = py.store.Turns(ctx, TurnFilter{Namespace: py.ns, Conversation: c.ID, FromSeq: n.FirstSeq, ToSeq: n.LastSeq})
			if err == nil && int64(len(req.Turns)) != n.Turns() {
				err = Errorf(ECONFLICT, "node %s: %d of its %d turns are readable (expired spans keep their summaries as they are)",
					n.ID, len(req.Turns), n.Turns())
			}
		} else {
			req.Children, err = py.store.Nodes(ctx, NodeFilter{Namespace: py.ns, Conversation: c.ID, Level: n.Level - 1,
				FromSeq: n.FirstSeq, ToSeq: n.LastSeq})
		}
		if err != nil {
			return err
		}
		made, err := py.makeNodes(ctx, c.ID, p, n.Level, []SummaryRequest{req}, []string{n.Key})
		if err != nil {
			return err
		}
		if made[0].ID != n.ID {
			return Errorf(EINTERNAL, "node %s was remade as %s", n.ID, made[0].ID)
		}
		if err := py.store.PutNodes(ctx, py.ns, c.ID, made); err != nil {
			return err
		}
	}
	return nil
}

// PolicyChange says what SetPolicy did.
type PolicyChange struct {
	Conversation string `json:"conversation"`
	From         string `json:"from"`
	To           string `json:"to"`
	Removed      int    `json:"removed"` // nodes of the old pyramid
	Made         int    `json:"made"`    // nodes of the new one
	Moved        int    `json:"moved"`   // spans that changed tier after the rebuild
}

// SetPolicy moves a conversation to the policy named (a preset or one of
// the configuration's) and rebuilds its pyramid from the turns: the old
// nodes go (raw content that had moved to warm or cold storage comes back
// to the turn rows first, nothing is lost), the new pyramid is rolled up,
// and tiering runs again. A conversation with an expired span cannot
// change policy (ECONFLICT): the summaries are all that is left of it.
// Setting the policy it already has rebuilds it too.
func (m *Memory) SetPolicy(ctx context.Context, conversation, policy string) (PolicyChange, error) {
	return m.pyramid.setPolicy(ctx, conversation, policy)
}

func (py *pyramid) setPolicy(ctx context.Context, conversation, policy string) (PolicyChange, error) {
	ch := PolicyChange{Conversation: conversation, To: policy}
	p, err := py.policyNamed(policy)
	if err != nil {
		return ch, err
	}
	c, err := py.conversation(ctx, conversation)
	if err != nil {
		return ch, err
	}
	ch.From = c.Policy
	lock := py.rollLock(conversation)
	lock.Lock()
	defer lock.Unlock()
	if ch.Removed, err = py.store.ResetPyramid(ctx, py.ns, conversation, p.Name); err != nil {
		return ch, err
	}
	if ch.Made, err = py.rollupLocked(ctx, conversation, p, nil); err != nil {
		return ch, fmt.Errorf("rollup under policy %s: %w", p.Name, err)
	}
	if !py.tiers.rules.Off {
		res, err := py.tiers.tier(ctx, conversation, false, false)
		if err != nil {
			return ch, fmt.Errorf("tiering: %w", err)
		}
		ch.Moved = len(res.Moves) + len(res.Expired)
	}
	return ch, nil
}
