package tiermove

import (
	"context"
	"math"

	"github.com/strata-memory/strata"
)

// ResetTx is what ResetPyramid needs of a store, inside the transaction
// of one conversation that holds the store's lock on its writes.
type ResetTx interface {
	// RestoreStubs is PyramidTx.RestoreStubs.
	RestoreStubs(ctx context.Context, first, last int64) error
	// ExpiredNode returns the id of the conversation's first expired
	// level-1 node, "" if none expired.
	ExpiredNode(ctx context.Context) (string, error)
	// ExpiredTurn returns the seq of an expired turn of the
	// conversation; false if none expired.
	ExpiredTurn(ctx context.Context) (int64, bool, error)
	// DropAllNodes unindexes and deletes every node of the conversation
	// and returns how many there were.
	DropAllNodes(ctx context.Context) (int, error)
	// SetPolicy sets the conversation's policy name.
	SetPolicy(ctx context.Context, policy string) error
	// DropArchive removes every archive segment of the conversation: in
	// the transaction or after it commits.
	DropArchive(ctx context.Context) error
}

// ResetPyramid removes every node of conversation and sets its policy
// name; see strata.NodeStore. It refuses (ECONFLICT) if any span or turn
// expired, brings every warm and cold turn back into its row, deletes
// the nodes, sets the policy and drops the archive, which no span owns
// any more. It returns how many nodes it removed.
func ResetPyramid(ctx context.Context, tx ResetTx, conversation, policy string) (int, error) {
	node, err := tx.ExpiredNode(ctx)
	if err != nil {
		return 0, err
	}
	if node != "" {
		return 0, strata.Errorf(strata.ECONFLICT,
			"the pyramid of %q cannot be reset: node %s expired, and its summary is all that is left of its turns", conversation, node)
	}
	seq, expired, err := tx.ExpiredTurn(ctx)
	if err != nil {
		return 0, err
	}
	if expired {
		return 0, strata.Errorf(strata.ECONFLICT,
			"the pyramid of %q cannot be reset: turn %d expired, and only its span's summary is left", conversation, seq)
	}
	if err := tx.RestoreStubs(ctx, math.MinInt64, math.MaxInt64); err != nil {
		return 0, err
	}
	n, err := tx.DropAllNodes(ctx)
	if err != nil {
		return 0, err
	}
	if err := tx.SetPolicy(ctx, policy); err != nil {
		return 0, err
	}
	return n, tx.DropArchive(ctx)
}
