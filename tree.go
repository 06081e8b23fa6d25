package strata

import (
	"context"
	"time"
)

// Tree is a conversation's pyramid.
type Tree struct {
	Conversation string      `json:"conversation"`
	Policy       string      `json:"policy"`
	Turns        int64       `json:"turns"`
	Sessions     int         `json:"sessions"`
	TimeZone     string      `json:"time_zone,omitempty"`
	Levels       []TreeLevel `json:"levels"`
	// Counters are 002's session counters, derived from the store: for
	// each level, "<name>_seq" is how many of its closed nodes no node of
	// the level above covers yet (for the top level: all of them). For the
	// sessions policy: session_seq 0..7, core_seq 0..7, sphere_seq.
	Counters map[string]int `json:"counters"`
	Nodes    []TreeNode     `json:"nodes"`
}

// TreeLevel summarizes one level: how many closed nodes it has and how many
// of the newest turns no node of it covers yet.
type TreeLevel struct {
	Level     int    `json:"level"`
	Name      string `json:"name"`
	Nodes     int    `json:"nodes"`
	OpenTurns int64  `json:"open_turns"`
	// Pending is how many of this level's closed nodes no node of the
	// level above covers yet (all of them for the top level).
	Pending int `json:"pending"`
}

// TreeNode is one node as trees show it.
type TreeNode struct {
	ID           string      `json:"id"`
	Level        int         `json:"level"`
	Key          string      `json:"key,omitempty"` // the node's period or session, if its level has one
	FirstSeq     int64       `json:"first_seq"`
	LastSeq      int64       `json:"last_seq"`
	Start        time.Time   `json:"start"`
	End          time.Time   `json:"end"`
	Tokens       int         `json:"tokens"`
	SourceTokens int         `json:"source_tokens"`
	Status       string      `json:"status"`
	Tier         Tier        `json:"tier,omitempty"` // level-1 nodes: where the span's raw content lives
	Themes       []string    `json:"themes,omitempty"`
	Aggregates   *Aggregates `json:"aggregates,omitempty"`
	Summary      string      `json:"summary"`
}

// Tree returns the conversation's pyramid, coarsest level first.
func (m *Memory) Tree(ctx context.Context, conversation string) (*Tree, error) {
	return m.browse.tree(ctx, conversation)
}

// tree is Memory.Tree.
func (b *browser) tree(ctx context.Context, conversation string) (*Tree, error) {
	conv, err := b.conversation(ctx, conversation)
	if err != nil {
		return nil, err
	}
	p, err := b.policyFor(conv)
	if err != nil {
		return nil, err
	}
	t := &Tree{Conversation: conv.ID, Policy: p.Name, Turns: conv.Turns, Sessions: conv.Sessions, TimeZone: conv.TimeZone,
		Levels: []TreeLevel{}, Nodes: []TreeNode{}}
	if t.Counters, err = b.counters(ctx, conversation, p); err != nil {
		return nil, err
	}
	for lvl := len(p.Levels); lvl >= 1; lvl-- {
		ns, err := b.store.Nodes(ctx, NodeFilter{Namespace: b.ns, Conversation: conversation, Level: lvl})
		if err != nil {
			return nil, err
		}
		covered := int64(0)
		if len(ns) > 0 {
			covered = ns[len(ns)-1].LastSeq
		}
		t.Levels = append(t.Levels, TreeLevel{Level: lvl, Name: p.LevelName(lvl), Nodes: len(ns), OpenTurns: conv.Turns - covered,
			Pending: t.Counters[p.LevelName(lvl)+"_seq"]})
		for _, n := range ns {
			t.Nodes = append(t.Nodes, TreeNode{ID: n.ID, Level: n.Level, Key: n.Key, FirstSeq: n.FirstSeq, LastSeq: n.LastSeq,
				Start: n.Start, End: n.End, Tokens: n.Tokens, SourceTokens: n.SourceTokens, Status: n.Status, Tier: n.Tier,
				Themes: n.Themes, Aggregates: n.Aggregates, Summary: n.Summary})
		}
	}
	return t, nil
}

// Node returns one node of this namespace by id; ENOTFOUND if none.
func (m *Memory) Node(ctx context.Context, id string) (Node, string, error) {
	return m.browse.node(ctx, id)
}

// node is Memory.Node.
func (b *browser) node(ctx context.Context, id string) (Node, string, error) {
	if err := checkNodeID(id); err != nil {
		return Node{}, "", err
	}
	ns, err := b.store.Nodes(ctx, NodeFilter{Namespace: b.ns, IDs: []string{id}})
	if err != nil {
		return Node{}, "", err
	}
	if len(ns) == 0 {
		return Node{}, "", Errorf(ENOTFOUND, "node %q not found", id)
	}
	return ns[0], ns[0].Conversation, nil
}

// Expand returns the exact source turns of a node, in order, whatever tier
// they are in: hot rows, a warm block or an archive segment (a missing or
// corrupt segment is an error naming it). A span whose raw content expired
// under a retention rule returns its node, the pinned turns that remain,
// and an ENOTFOUND error saying so.
func (m *Memory) Expand(ctx context.Context, id string) (Node, []Turn, error) {
	return m.browse.expand(ctx, id)
}

// expand is Memory.Expand.
func (b *browser) expand(ctx context.Context, id string) (Node, []Turn, error) {
	n, conv, err := b.node(ctx, id)
	if err != nil {
		return Node{}, nil, err
	}
	ts, err := b.store.Turns(ctx, TurnFilter{Namespace: b.ns, Conversation: conv, FromSeq: n.FirstSeq, ToSeq: n.LastSeq})
	if err != nil {
		return n, nil, err
	}
	if int64(len(ts)) != n.Turns() && b.expiredIn(ctx, conv, n) {
		return n, ts, Errorf(ENOTFOUND, "node %s: the raw content of %d of its %d turns expired under a retention rule (see strata retention); its summary and %d pinned turns remain",
			id, n.Turns()-int64(len(ts)), n.Turns(), len(ts))
	}
	if int64(len(ts)) != n.Turns() {
		return n, ts, Errorf(EINTERNAL, "node %s covers %d turns but %d are stored", id, n.Turns(), len(ts))
	}
	return n, ts, nil
}

// expiredIn reports whether some level-1 span under n has expired.
func (b *browser) expiredIn(ctx context.Context, conv string, n Node) bool {
	if n.Level == 1 {
		return n.Tier == TierExpired
	}
	ns, err := b.store.Nodes(ctx, NodeFilter{Namespace: b.ns, Conversation: conv, Level: 1,
		FromSeq: n.FirstSeq, ToSeq: n.LastSeq, Tiers: []Tier{TierExpired}, Limit: 1})
	return err == nil && len(ns) > 0
}

// counters derives 002's counters: for each level, how many of its closed
// nodes no node of the level above covers yet (the top level: all).
func (b *browser) counters(ctx context.Context, conv string, p Policy) (map[string]int, error) {
	out := map[string]int{}
	above := int64(0)
	for lvl := len(p.Levels); lvl >= 1; lvl-- {
		f := NodeFilter{Namespace: b.ns, Conversation: conv, Level: lvl}
		if lvl < len(p.Levels) {
			f.FromSeq = above + 1
		}
		ns, err := b.store.Nodes(ctx, f)
		if err != nil {
			return nil, err
		}
		out[p.LevelName(lvl)+"_seq"] = len(ns)
		if len(ns) > 0 {
			above = ns[len(ns)-1].LastSeq
		}
	}
	return out, nil
}
