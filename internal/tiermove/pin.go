package tiermove

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/internal/spanfmt"
)

// ErrNoRow is what PinTx.TurnRow returns for a seq the conversation has
// no turn at.
var ErrNoRow = errors.New("no such turn row")

// PinTx is what SetImportance needs of a store, inside the transaction of
// one conversation that holds the store's lock on its writes.
type PinTx interface {
	// TurnRow returns the row of turn seq as it is stored (a stub keeps
	// no content) and the key of the node its stub points at (nil if
	// none); ErrNoRow if there is no such row.
	TurnRow(ctx context.Context, seq int64) (Row, *int64, error)
	// SpansAt returns the level-1 nodes beyond the hot tier whose span
	// holds seq, in seq order.
	SpansAt(ctx context.Context, seq int64) ([]Span, error)
	// Span returns the node of key pk.
	Span(ctx context.Context, pk int64) (Span, error)
	// FromCopy returns the whole turn of the stub row from the copy of
	// its span, node pk; false if the copy holds none.
	FromCopy(ctx context.Context, row Row, pk int64) (strata.Turn, bool, error)
	// PutBlock stores block as the warm block of node sp.
	PutBlock(ctx context.Context, sp Span, block []byte) error
	// MergeRecords is DemoteTx.MergeRecords.
	MergeRecords(ctx context.Context, period string, recs []archive.Record) error
	// ReadRecords returns the records of seqs first..last in the segment
	// of period, and where that segment is kept (for messages).
	ReadRecords(ctx context.Context, period string, first, last int64) ([]archive.Record, string, error)
	// SetPeriods names periods as the segments of node sp.
	SetPeriods(ctx context.Context, sp Span, periods []string) error
	// SetImportance sets the importance of row.
	SetImportance(ctx context.Context, row Row, importance float64) error
	// Restore writes row.Turn, whole, into row, a stub of span sp, and
	// makes it hot, checking it against what the row kept and reading it
	// back; a cold turn goes back into the full-text index.
	Restore(ctx context.Context, sp Span, row Row) error
	// Slim is DemoteTx.Slim.
	Slim(ctx context.Context, sp Span, tier int, first, last int64) (int64, error)
	// Released brings the full-text index in line with row, just slimmed
	// into the copy of sp.
	Released(ctx context.Context, sp Span, row Row) error
}

// SetImportance sets the importance of turn seq of conversation and
// returns the turn, whole; see strata.TurnStore. What becomes of its
// content is strata.DecidePin's decision; this carries it out.
//
// The row decides, not the span: a row that holds its content (hot, or
// pinned in any tier) and stays pinned, or lies in no warm or cold span,
// only changes its importance. One that stops being pinned in a warm or
// cold span first writes itself, with its new importance, into the
// span's copy (the warm block rewritten and checked; the archive record
// merged into its segment and read back), then leaves its row slim, as
// Demote leaves it. A stub (a row whose content is in its span's copy)
// that becomes pinned takes its whole turn back from the copy into its
// row; the copy is left as it is. A stub that stays unpinned has its
// copy rewritten with the new importance. A stub of an expired span, or
// unpinning a turn of an expired span, is ECONFLICT.
func SetImportance(ctx context.Context, tx PinTx, conversation string, seq int64, importance float64) (strata.Turn, error) {
	row, spanPK, err := tx.TurnRow(ctx, seq)
	if errors.Is(err, ErrNoRow) {
		return strata.Turn{}, strata.Errorf(strata.ENOTFOUND, "turn %d not found in conversation %q", seq, conversation)
	}
	if err != nil {
		return strata.Turn{}, err
	}
	// The span whose copy holds the turn, or may: the one covering a row
	// that holds its content, or the one a stub points at.
	var sp *Span
	switch row.Tier {
	case spanfmt.TierHot:
		if sp, err = coveringSpan(ctx, tx, conversation, seq); err != nil {
			return strata.Turn{}, err
		}
	case spanfmt.TierWarm, spanfmt.TierCold:
		if spanPK == nil {
			return strata.Turn{}, fmt.Errorf("%s row with no span", spanfmt.TierName(row.Tier))
		}
		x, err := tx.Span(ctx, *spanPK)
		if err != nil {
			return strata.Turn{}, fmt.Errorf("span of the row: %w", err)
		}
		if x.Tier != row.Tier {
			return strata.Turn{}, fmt.Errorf("the row is %s but its span, node %s, is %s", spanfmt.TierName(row.Tier), x.ID, spanfmt.TierName(x.Tier))
		}
		sp = &x
		whole, ok, err := tx.FromCopy(ctx, row, *spanPK)
		if err != nil {
			return strata.Turn{}, err
		}
		if !ok {
			return strata.Turn{}, fmt.Errorf("node %s holds no copy of the turn", sp.ID)
		}
		row.Turn = whole // with the importance its copy holds
	}
	var spanTier strata.Tier
	var spanID string
	if sp != nil {
		spanTier, spanID = spanfmt.TierName(sp.Tier), sp.ID
	}
	move, err := strata.DecidePin(conversation, seq, spanfmt.TierName(row.Tier), spanTier, spanID, row.Turn.Importance, importance)
	if err != nil {
		return strata.Turn{}, err
	}
	row.Turn.Importance = importance

	// writeCopy writes the turn into the copy of its span.
	writeCopy := func() error {
		if sp.Tier == spanfmt.TierWarm {
			return rewriteBlock(ctx, tx, *sp, conversation, row.Turn)
		}
		return archiveTurn(ctx, tx, *sp, row.Turn)
	}
	switch move {
	case strata.PinKeep:
		err = tx.SetImportance(ctx, row, importance)
	case strata.PinRewrite:
		if err = writeCopy(); err == nil {
			err = tx.SetImportance(ctx, row, importance)
		}
	case strata.PinRestore:
		if err = tx.Restore(ctx, *sp, row); err != nil {
			err = fmt.Errorf("node %s: %w", sp.ID, err)
		}
	case strata.PinRelease:
		err = release(ctx, tx, *sp, row, writeCopy)
	default:
		err = fmt.Errorf("unknown pin move %v", move)
	}
	if err != nil {
		return strata.Turn{}, err
	}
	return row.Turn, nil
}

// coveringSpan returns the level-1 node beyond the hot tier whose span
// holds seq, or nil if there is none.
func coveringSpan(ctx context.Context, tx PinTx, conversation string, seq int64) (*Span, error) {
	out, err := tx.SpansAt(ctx, seq)
	if err != nil {
		return nil, err
	}
	switch len(out) {
	case 0:
		return nil, nil
	case 1:
		return &out[0], nil
	}
	return nil, fmt.Errorf("turn %d of %q lies in two spans beyond the hot tier, nodes %s and %s", seq, conversation, out[0].ID, out[1].ID)
}

// release writes row's turn into the copy of sp, with its new importance,
// and leaves the row slim.
func release(ctx context.Context, tx PinTx, sp Span, row Row, writeCopy func() error) error {
	if err := writeCopy(); err != nil {
		return err
	}
	if err := tx.SetImportance(ctx, row, row.Turn.Importance); err != nil {
		return err
	}
	seq := row.Turn.Seq
	n, err := tx.Slim(ctx, sp, sp.Tier, seq, seq)
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("slimming the row: %d rows changed", n)
	}
	return tx.Released(ctx, sp, row)
}

// rewriteBlock rewrites the warm block of sp with t in place of the turn
// of the same seq (or added to it), and checks the new block by decoding
// it before storing it.
func rewriteBlock(ctx context.Context, tx PinTx, sp Span, conversation string, t strata.Turn) error {
	turns, err := spanfmt.DecodeBlock(sp.Block)
	if err != nil {
		return fmt.Errorf("warm block of node %s of %q: %w", sp.ID, conversation, err)
	}
	i := slices.IndexFunc(turns, func(x strata.Turn) bool { return x.Seq == t.Seq })
	if i >= 0 {
		turns[i] = t
	} else {
		turns = append(turns, t)
		sort.SliceStable(turns, func(a, b int) bool { return turns[a].Seq < turns[b].Seq })
	}
	block, err := spanfmt.EncodeBlock(turns)
	if err != nil {
		return fmt.Errorf("packing node %s: %w", sp.ID, err)
	}
	if err := spanfmt.CheckBlock(block, turns); err != nil {
		return fmt.Errorf("checking the block of node %s: %w", sp.ID, err)
	}
	return tx.PutBlock(ctx, sp, block)
}

// archiveTurn merges t into its archive segment as a record of the cold
// span sp (its UTC month's, or its UTC day's if sp names that day: a span
// made cold when segments were days keeps its records there; see
// spanfmt.Period), reads the record back, and, if sp did not name that
// period yet, adds it to sp's periods.
func archiveTurn(ctx context.Context, tx PinTx, sp Span, t strata.Turn) error {
	rec, err := spanfmt.Record(&t)
	if err != nil {
		return fmt.Errorf("archiving turn %d: %w", t.Seq, err)
	}
	period := spanfmt.Period(sp.Periods, t.Time)
	if err := tx.MergeRecords(ctx, period, []archive.Record{rec}); err != nil {
		return fmt.Errorf("node %s: %w", sp.ID, err)
	}
	got, where, err := tx.ReadRecords(ctx, period, t.Seq, t.Seq)
	if err != nil {
		return fmt.Errorf("node %s: %w", sp.ID, err)
	}
	if len(got) != 1 {
		return fmt.Errorf("archive segment %s of node %s: %d records of turn %d after writing it", where, sp.ID, len(got), t.Seq)
	}
	if err := spanfmt.CheckRecord(got[0].Line, &t); err != nil {
		return fmt.Errorf("archive segment %s of node %s: turn %d: %w", where, sp.ID, t.Seq, err)
	}
	if !slices.Contains(sp.Periods, period) {
		periods := append(slices.Clone(sp.Periods), period)
		sort.Strings(periods)
		return tx.SetPeriods(ctx, sp, periods)
	}
	return nil
}
