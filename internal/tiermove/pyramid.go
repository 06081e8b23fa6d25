package tiermove

import (
	"context"
	"errors"
	"fmt"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/spanfmt"
)

// PyramidTx is what ReplaceNodes needs of a store, inside
// the transaction of one conversation that holds the store's lock on its
// writes.
type PyramidTx interface {
	// Node returns the node id, of any level; ErrNoRow if there is none.
	Node(ctx context.Context, id string) (Span, error)
	// Above returns the ids of the nodes of a level above sp's whose span
	// meets sp's.
	Above(ctx context.Context, sp Span) ([]string, error)
	// StoredNodes returns those of ids the conversation has a node of.
	StoredNodes(ctx context.Context, ids []string) ([]string, error)
	// RestoreStubs brings every warm and cold turn whose seq lies in
	// first..last back into its row (checked against what the row kept,
	// read back byte for byte, cold turns back into the full-text index).
	RestoreStubs(ctx context.Context, first, last int64) error
	// DropRestored removes the records of the cold span sp, whose turns
	// are back in their rows, from the archive: in the transaction or
	// after it commits (see the package doc).
	DropRestored(ctx context.Context, sp Span) error
	// DropNodes unindexes and deletes the nodes ids, which exist.
	DropNodes(ctx context.Context, ids []string) error
}

// ReplaceNodes removes the nodes ids of conversation and stores nodes
// with put; see strata.NodeStore. It returns what put returns: how many
// of nodes are new.
//
// The stored nodes above a removed one that nodes does not put back go
// too (withAncestors). A removed level-1 node beyond the hot tier gives
// its span back to the rows first, as ResetPyramid does for every span,
// and a cold one's records leave the archive (DropRestored); a node whose
// span expired cannot be removed (strata.CheckNodeRemoval). A node of
// nodes whose child is neither in nodes nor stored is ECONFLICT
// (checkChildren).
func ReplaceNodes(ctx context.Context, tx PyramidTx, conversation string, ids []string, nodes []strata.Node, put func() (int, error)) (int, error) {
	var spans []Span
	for _, id := range ids {
		sp, err := tx.Node(ctx, id)
		if errors.Is(err, ErrNoRow) {
			return 0, strata.Errorf(strata.ENOTFOUND, "node %q not found in conversation %q", id, conversation)
		}
		if err != nil {
			return 0, err
		}
		spans = append(spans, sp)
	}
	ids, err := withAncestors(ctx, tx, spans, ids, nodes)
	if err != nil {
		return 0, err
	}
	for _, sp := range spans {
		restore, err := strata.CheckNodeRemoval(conversation, strata.Node{ID: sp.ID, Level: sp.Level, Tier: spanfmt.TierName(sp.Tier)})
		if err != nil {
			return 0, err
		}
		if !restore {
			continue
		}
		if err := tx.RestoreStubs(ctx, sp.First, sp.Last); err != nil {
			return 0, fmt.Errorf("node %s: %w", sp.ID, err)
		}
		if sp.Tier == spanfmt.TierCold {
			if err := tx.DropRestored(ctx, sp); err != nil {
				return 0, fmt.Errorf("node %s: %w", sp.ID, err)
			}
		}
	}
	if err := tx.DropNodes(ctx, ids); err != nil {
		return 0, err
	}
	if len(nodes) == 0 {
		return 0, nil
	}
	if err := checkChildren(ctx, tx, conversation, nodes); err != nil {
		return 0, err
	}
	return put()
}

// withAncestors returns ids and, after them, the stored nodes above the
// nodes of spans (those of a higher level whose span meets theirs) that
// nodes does not put back (a node put back keeps its span and its id, so
// its parents stand): a parent never stands over a removed child. Another
// process may have closed a parent over a node after the caller read the
// pyramid; the store's lock orders the two writes.
func withAncestors(ctx context.Context, tx PyramidTx, spans []Span, ids []string, nodes []strata.Node) ([]string, error) {
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		seen[id] = true
	}
	back := make(map[string]bool, len(nodes))
	for i := range nodes {
		back[nodes[i].ID] = true
	}
	out := ids
	for _, sp := range spans {
		if back[sp.ID] {
			continue
		}
		above, err := tx.Above(ctx, sp)
		if err != nil {
			return nil, err
		}
		for _, id := range above {
			if !seen[id] {
				seen[id] = true
				out = append(out[:len(out):len(out)], id)
			}
		}
	}
	return out, nil
}

// checkChildren refuses, with ECONFLICT, a node whose child is neither in
// nodes nor stored: another process replaced the child (a session or
// period that reopened) after the caller read it, and the caller must read
// the pyramid again rather than stand a parent over a span no child tiles.
func checkChildren(ctx context.Context, tx PyramidTx, conversation string, nodes []strata.Node) error {
	have := make(map[string]bool, len(nodes))
	for i := range nodes {
		have[nodes[i].ID] = true
	}
	parent := map[string]string{} // a child to look up -> the first node over it
	var want []string
	for i := range nodes {
		for _, c := range nodes[i].Children {
			if _, ok := parent[c]; !ok && !have[c] {
				parent[c] = nodes[i].ID
				want = append(want, c)
			}
		}
	}
	if len(want) == 0 {
		return nil
	}
	stored, err := tx.StoredNodes(ctx, want)
	if err != nil {
		return err
	}
	for _, id := range stored {
		have[id] = true
	}
	for _, c := range want {
		if !have[c] {
			return strata.Errorf(strata.ECONFLICT, "node %s of %q: child %s is not stored (another writer replaced it)", parent[c], conversation, c)
		}
	}
	return nil
}
