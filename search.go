package strata

import (
	"context"
	"fmt"
	"sort"
)

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
	return m.browse.search(ctx, conversation, query, k)
}

// search is Memory.Search.
func (b *browser) search(ctx context.Context, conversation, query string, k int) ([]Hit, error) {
	if k <= 0 {
		k = 10
	}
	if conversation != "" {
		if err := lookupID(b.ns, conversation); err != nil {
			return nil, err
		}
	}
	hits, err := b.vec.hybridSearch(ctx, conversation, query, k)
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
		if t := b.bestTurn(ctx, h, words); t != nil && !turnSeen[fmt.Sprintf("%s\x00%d", h.Conversation, t.Seq)] {
			turnSeen[fmt.Sprintf("%s\x00%d", h.Conversation, t.Seq)] = true
			out = append(out, Hit{Kind: KindTurn, Conversation: h.Conversation, Score: h.Score * 0.999, Turn: t})
		}
		// Up: the derived nodes above it.
		up, err := b.ancestors(ctx, h.Conversation, *h.Node)
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
func (b *browser) ancestors(ctx context.Context, conv string, n Node) ([]Node, error) {
	var out []Node
	for lvl := n.Level + 1; ; lvl++ {
		ns, err := b.store.Nodes(ctx, NodeFilter{Namespace: b.ns, Conversation: conv, Level: lvl, Covers: n.FirstSeq, Limit: 1})
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
func (b *browser) bestTurn(ctx context.Context, h Hit, words []string) *Turn {
	if h.Node.Level != 1 || h.Node.Tier == TierExpired || len(words) == 0 {
		return nil
	}
	ts, err := b.store.Turns(ctx, TurnFilter{Namespace: b.ns, Conversation: h.Conversation,
		FromSeq: h.Node.FirstSeq, ToSeq: h.Node.LastSeq})
	if err != nil {
		b.log.Warn("search: cannot read the turns of a summary hit", "node", h.Node.ID, "error", err)
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
