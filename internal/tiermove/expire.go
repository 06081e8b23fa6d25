package tiermove

import (
	"context"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/spanfmt"
)

// ExpireTx is what Expire needs of a store, inside the transaction of
// one conversation (read-only for a dry run).
type ExpireTx interface {
	// Spans is DemoteTx.Spans.
	Spans(ctx context.Context, ids []string) ([]Span, error)
	// Figures sets the Turns, Bytes, ColdAt and NewestTurn of ex, the
	// expiry of cold span sp.
	Figures(ctx context.Context, sp Span, ex *strata.Expiry) error
	// ExpireSpan records the audit record ex and marks node sp and its
	// cold rows expired, out of the full-text index; sp keeps naming its
	// segments.
	ExpireSpan(ctx context.Context, sp Span, ex strata.Expiry) error
	// DropRecords removes the records of the expired span sp from the
	// segments it names and clears its list of them, in the transaction
	// or after it commits (see the package doc).
	DropRecords(ctx context.Context, sp Span) error
}

// CheckExpire checks the arguments of an Expire.
func CheckExpire(rule string) error {
	if rule == "" {
		return strata.Errorf(strata.EINVALID, "expire: a rule is required for the audit record")
	}
	return nil
}

// Expire deletes the archived raw content of the cold level-1 nodes ids
// of conversation, except pinned turns, and keeps an audit record per
// node; see strata.TierStore. It returns the expiries, which a dry run
// only reports. Spans already expired are skipped, but their records
// are dropped if they still name segments (an Expire whose drop did not
// happen); any other tier is EINVALID.
func Expire(ctx context.Context, tx ExpireTx, conversation string, ids []string, rule string, at time.Time, dryRun bool) ([]strata.Expiry, error) {
	out := []strata.Expiry{}
	at = at.UTC()
	if len(ids) == 0 {
		return out, nil
	}
	spans, err := tx.Spans(ctx, ids)
	if err != nil {
		return nil, err
	}
	var drop []Span
	for _, sp := range spans {
		if sp.Tier == spanfmt.TierExpired {
			if len(sp.Periods) > 0 && !dryRun {
				drop = append(drop, sp)
			}
			continue
		}
		if sp.Tier != spanfmt.TierCold {
			return nil, strata.Errorf(strata.EINVALID, "node %s of %q is %s: only cold spans expire", sp.ID, conversation, spanfmt.TierName(sp.Tier))
		}
		ex := strata.Expiry{Conversation: conversation, NodeID: sp.ID, FirstSeq: sp.First, LastSeq: sp.Last,
			Segments: sp.Periods, Rule: rule, At: at}
		if err := tx.Figures(ctx, sp, &ex); err != nil {
			return nil, err
		}
		out = append(out, ex)
		if dryRun {
			continue
		}
		if err := tx.ExpireSpan(ctx, sp, ex); err != nil {
			return nil, err
		}
		sp.Tier = spanfmt.TierExpired
		drop = append(drop, sp)
	}
	for _, sp := range drop {
		if err := tx.DropRecords(ctx, sp); err != nil {
			return nil, err
		}
	}
	return out, nil
}
