package tiermove

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/internal/spanfmt"
)

// DemoteTx is what Demote needs of a store, inside the transaction of
// one conversation that holds the store's lock on its writes.
type DemoteTx interface {
	// Spans returns the level-1 nodes ids of the conversation in seq
	// order: ENOTFOUND for an id it does not have, EINVALID for a node of
	// another level.
	Spans(ctx context.Context, ids []string) ([]Span, error)
	// SpanRows returns every turn of sp, whole, in seq order: an error if
	// a row is missing or expired.
	SpanRows(ctx context.Context, sp Span) ([]Row, error)
	// SetWarm makes node sp warm with block as its copy.
	SetWarm(ctx context.Context, sp Span, block []byte) error
	// Slim leaves the unpinned rows of seqs first..last below tier
	// without their content, pointing at node sp, and returns how many
	// it changed.
	Slim(ctx context.Context, sp Span, tier int, first, last int64) (int64, error)
	// SegmentBytes returns the size of the conversation's segment of
	// period, 0 if it has none.
	SegmentBytes(ctx context.Context, period string) (int64, error)
	// MergeRecords merges recs into the segment of period and records
	// what it holds afterwards.
	MergeRecords(ctx context.Context, period string, recs []archive.Record) error
	// SetCold makes node sp cold, naming periods as its segments, at
	// time at, and drops its warm block.
	SetCold(ctx context.Context, sp Span, periods []string, at time.Time) error
}

// CheckDemote checks the arguments of a Demote of conversation's spans
// to tier to at time at.
func CheckDemote(conversation string, to strata.Tier, at time.Time) error {
	if to != strata.TierWarm && to != strata.TierCold {
		return strata.Errorf(strata.EINVALID, "demote: cannot move spans to tier %q (want warm or cold)", to)
	}
	if to == strata.TierCold && at.IsZero() {
		return strata.Errorf(strata.EINVALID, "demote: moving spans of %q to cold needs the time of the move (retention counts from it)", conversation)
	}
	return nil
}

// Demote moves the raw content of the level-1 nodes ids to the warm or
// cold tier (checked by CheckDemote); see strata.TierStore. Spans
// already there or beyond are left as they are.
//
// Warm: each span's turns are packed into a CTF block, checked by
// decoding it, stored on the node, and the rows keep only what filters
// and orders them. Cold: the turns are merged into the archive segments
// of their UTC months, or days in a full month (spanfmt.ColdMove), then
// each node names its segments and drops its block, and its rows are
// slimmed; the turns keep their full-text entries (cold moves a turn's
// content, never its findability).
func Demote(ctx context.Context, tx DemoteTx, ids []string, to strata.Tier, at time.Time) ([]strata.Move, error) {
	if len(ids) == 0 {
		return []strata.Move{}, nil
	}
	spans, err := tx.Spans(ctx, ids)
	if err != nil {
		return nil, err
	}
	code := spanfmt.TierCode(to)
	var work []moving
	for _, sp := range spans {
		if sp.Tier >= code {
			continue
		}
		rows, err := tx.SpanRows(ctx, sp)
		if err != nil {
			return nil, err
		}
		work = append(work, moving{sp, rows})
	}
	if to == strata.TierWarm {
		err = demoteWarm(ctx, tx, work)
	} else {
		err = demoteCold(ctx, tx, work, at)
	}
	if err != nil {
		return nil, err
	}
	moves := make([]strata.Move, len(work))
	for i, m := range work {
		moves[i] = m.move(to)
	}
	return moves, nil
}

// moving is a span on its way to another tier, with its turns.
type moving struct {
	sp   Span
	rows []Row
}

// move reports m, moved to tier to: its unpinned turns below to count.
func (m moving) move(to strata.Tier) strata.Move {
	code := spanfmt.TierCode(to)
	mv := strata.Move{NodeID: m.sp.ID, FirstSeq: m.sp.First, LastSeq: m.sp.Last, From: spanfmt.TierName(m.sp.Tier), To: to}
	for _, r := range m.rows {
		if r.Tier < code && !r.Turn.Pinned() {
			mv.Turns++
			mv.Bytes += int64(len(r.Turn.Content))
		}
	}
	return mv
}

// demoteWarm packs each span's turns into a block, checks it by decoding
// it, stores it on the node and slims the rows.
func demoteWarm(ctx context.Context, tx DemoteTx, work []moving) error {
	for _, m := range work {
		turns := make([]strata.Turn, len(m.rows))
		for i, r := range m.rows {
			turns[i] = r.Turn
		}
		block, err := spanfmt.EncodeBlock(turns)
		if err != nil {
			return fmt.Errorf("packing node %s: %w", m.sp.ID, err)
		}
		if err := spanfmt.CheckBlock(block, turns); err != nil {
			return fmt.Errorf("checking the block of node %s: %w", m.sp.ID, err)
		}
		if err := tx.SetWarm(ctx, m.sp, block); err != nil {
			return err
		}
		if _, err := tx.Slim(ctx, m.sp, spanfmt.TierWarm, m.sp.First, m.sp.Last); err != nil {
			return err
		}
	}
	return nil
}

// demoteCold writes the segments first, one per month the spans' turns
// lie in, or per day in a month whose segment is full; then points the
// nodes at them and slims the rows.
func demoteCold(ctx context.Context, tx DemoteTx, work []moving, at time.Time) error {
	cold := spanfmt.ColdMove{Size: func(period string) (int64, error) { return tx.SegmentBytes(ctx, period) }}
	for i, m := range work {
		for _, r := range m.rows {
			if err := cold.Add(i, &r.Turn); err != nil {
				return err
			}
		}
	}
	for _, p := range cold.Periods() {
		if err := tx.MergeRecords(ctx, p, cold.Records[p]); err != nil {
			return err
		}
	}
	for i, m := range work {
		if err := tx.SetCold(ctx, m.sp, cold.SpanPeriods(i), at); err != nil {
			return err
		}
		if _, err := tx.Slim(ctx, m.sp, spanfmt.TierCold, m.sp.First, m.sp.Last); err != nil {
			return err
		}
	}
	return nil
}
