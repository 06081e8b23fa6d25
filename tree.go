package strata

import (
	"context"
	"fmt"
	"sort"
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
	conv, err := m.conversation(ctx, conversation)
	if err != nil {
		return nil, err
	}
	p, err := m.policyFor(conv)
	if err != nil {
		return nil, err
	}
	t := &Tree{Conversation: conv.ID, Policy: p.Name, Turns: conv.Turns, Sessions: conv.Sessions, TimeZone: conv.TimeZone,
		Levels: []TreeLevel{}, Nodes: []TreeNode{}}
	if t.Counters, err = m.counters(ctx, conversation, p); err != nil {
		return nil, err
	}
	for lvl := len(p.Levels); lvl >= 1; lvl-- {
		ns, err := m.store.Nodes(ctx, NodeFilter{Namespace: m.ns, Conversation: conversation, Level: lvl})
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
	if err := checkNodeID(id); err != nil {
		return Node{}, "", err
	}
	ns, err := m.store.Nodes(ctx, NodeFilter{Namespace: m.ns, IDs: []string{id}})
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
	n, conv, err := m.Node(ctx, id)
	if err != nil {
		return Node{}, nil, err
	}
	ts, err := m.store.Turns(ctx, TurnFilter{Namespace: m.ns, Conversation: conv, FromSeq: n.FirstSeq, ToSeq: n.LastSeq})
	if err != nil {
		return n, nil, err
	}
	if int64(len(ts)) != n.Turns() && m.expiredIn(ctx, conv, n) {
		return n, ts, Errorf(ENOTFOUND, "node %s: the raw content of %d of its %d turns expired under a retention rule (see strata retention); its summary and %d pinned turns remain",
			id, n.Turns()-int64(len(ts)), n.Turns(), len(ts))
	}
	if int64(len(ts)) != n.Turns() {
		return n, ts, Errorf(EINTERNAL, "node %s covers %d turns but %d are stored", id, n.Turns(), len(ts))
	}
	return n, ts, nil
}

// expiredIn reports whether some level-1 span under n has expired.
func (m *Memory) expiredIn(ctx context.Context, conv string, n Node) bool {
	if n.Level == 1 {
		return n.Tier == TierExpired
	}
	ns, err := m.store.Nodes(ctx, NodeFilter{Namespace: m.ns, Conversation: conv, Level: 1,
		FromSeq: n.FirstSeq, ToSeq: n.LastSeq, Tiers: []Tier{TierExpired}, Limit: 1})
	return err == nil && len(ns) > 0
}

// Search ranks the conversation's turns and summaries against query and
// returns at most k hits: by BM25, fused with vector similarity when an
// embedder is configured and the conversation has vectors (see
// hybridSearch). An empty conversation id searches every conversation of
// the namespace. Every turn is searched by its own words, whatever its
// tier. Summaries of every level are found: those written by a model by
// their own words, and the derived ones (upper levels made of their
// children's sentences, which the index does not hold twice) through
// their children. Each summary hit is followed, scored just below it, by
// the nodes above it (a matching span leads to the part of the history it
// belongs to) and, for a level-1 hit, by the turn under it that holds the
// most query words (and down to the evidence).
func (m *Memory) Search(ctx context.Context, conversation, query string, k int) ([]Hit, error) {
	if k <= 0 {
		k = 10
	}
	if conversation != "" {
		if err := lookupID(m.ns, conversation); err != nil {
			return nil, err
		}
	}
	hits, err := m.vec.hybridSearch(ctx, conversation, query, k)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, h := range hits {
		if h.Node != nil {
			seen[h.Node.ID] = true
		}
	}
	turnSeen := map[string]bool{}
	for _, h := range hits {
		if h.Turn != nil {
			turnSeen[fmt.Sprintf("%s\x00%d", h.Conversation, h.Turn.Seq)] = true
		}
	}
	words := queryWords(query)
	out := make([]Hit, 0, len(hits))
	for _, h := range hits {
		out = append(out, h)
		if h.Node == nil {
			continue
		}
		// Down: the turn of a level-1 hit that holds the most query
		// words follows it, unless it is a hit already.
		if t := m.bestTurn(ctx, h, words); t != nil && !turnSeen[fmt.Sprintf("%s\x00%d", h.Conversation, t.Seq)] {
			turnSeen[fmt.Sprintf("%s\x00%d", h.Conversation, t.Seq)] = true
			out = append(out, Hit{Kind: KindTurn, Conversation: h.Conversation, Score: h.Score * 0.999, Turn: t})
		}
		// Up: the derived nodes above it.
		up, err := m.ancestors(ctx, h.Conversation, *h.Node)
		if err != nil {
			return nil, err
		}
		score := h.Score
		for _, n := range up {
			score *= 0.999
			if !n.Derived || seen[n.ID] {
				continue // found by its own words, or already listed
			}
			seen[n.ID] = true
			out = append(out, Hit{Kind: KindSummary, Conversation: h.Conversation, Score: score, Node: &n})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if len(out) > k {
		out = out[:k]
	}
	return out, nil
}

// ancestors returns the nodes above n in its conversation's pyramid,
// finest first.
func (m *Memory) ancestors(ctx context.Context, conv string, n Node) ([]Node, error) {
	var out []Node
	for lvl := n.Level + 1; ; lvl++ {
		ns, err := m.store.Nodes(ctx, NodeFilter{Namespace: m.ns, Conversation: conv, Level: lvl, Covers: n.FirstSeq, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(ns) == 0 {
			return out, nil
		}
		out = append(out, ns[0])
	}
}

// bestTurn returns the turn under the level-1 summary hit h that holds
// the most of words, or nil (another level, no word held, or turns that
// cannot be read, which are logged).
func (m *Memory) bestTurn(ctx context.Context, h Hit, words []string) *Turn {
	if h.Node.Level != 1 || h.Node.Tier == TierExpired || len(words) == 0 {
		return nil
	}
	ts, err := m.store.Turns(ctx, TurnFilter{Namespace: m.ns, Conversation: h.Conversation,
		FromSeq: h.Node.FirstSeq, ToSeq: h.Node.LastSeq})
	if err != nil {
		m.log.Warn("search: cannot read the turns of a summary hit", "node", h.Node.ID, "error", err)
		return nil
	}
	best, score := -1, 0
	for i := range ts {
		if sc := overlap(words, ts[i].Text()); sc > score {
			best, score = i, sc
		}
	}
	if best < 0 {
		return nil
	}
	return &ts[best]
}
