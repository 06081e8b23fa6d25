package tiermove

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/spanfmt"
)

// StubTx is what RestoreStubs needs of a store, inside the transaction of
// one conversation that holds the store's lock on its writes.
type StubTx interface {
	// StubRows returns up to limit warm and cold rows whose seq lies in
	// (after, to], in seq order, as stored (without their content), and
	// a stub for each (Index its place in rows).
	StubRows(ctx context.Context, after, to int64, limit int) ([]Row, []spanfmt.Stub, error)
	// FromCopies returns the whole turns of the stubs of ts from their
	// spans' copies, in order, dropping expired ones (spanfmt.Hydrate).
	FromCopies(ctx context.Context, ts []strata.Turn, stubs []spanfmt.Stub) ([]strata.Turn, error)
	// Kept says which fields the store's stub rows keep.
	Kept() Kept
	// NodeName names the node of key pk in a message.
	NodeName(ctx context.Context, pk int64) string
	// RestoreRows writes each whole turn rows[i].Turn into its row, a
	// stub of the span stubs[i] names, and makes it hot: the row must
	// have recorded the content size the turn has, and must read back as
	// the turn. Cold turns go back into the full-text index where they
	// left it.
	RestoreRows(ctx context.Context, rows []Row, stubs []spanfmt.Stub) error
	// Stubs returns how many rows whose seq lies in first..last are not
	// hot.
	Stubs(ctx context.Context, first, last int64) (int64, error)
}

// restoreBatch is how many stubs RestoreStubs restores per read of their
// copies: segments shared by the batch's spans are read once.
const restoreBatch = 512

// RestoreStubs brings every warm and cold turn whose seq lies in
// first..last back into its row, batch by batch in seq order, each
// checked against the fields its row kept; an error if any is left out.
func RestoreStubs(ctx context.Context, tx StubTx, first, last int64) error {
	after := first - 1
	if first == math.MinInt64 {
		after = first
	}
	for {
		rows, stubs, err := tx.StubRows(ctx, after, last, restoreBatch)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			break
		}
		ts := make([]strata.Turn, len(rows))
		for i, r := range rows {
			ts[i] = r.Turn
		}
		whole, err := tx.FromCopies(ctx, ts, stubs)
		if err != nil {
			return err
		}
		if len(whole) != len(rows) {
			return fmt.Errorf("%d of %d turns have no copy", len(rows)-len(whole), len(rows))
		}
		for i, t := range whole {
			if d := stubMismatch(rows[i].Turn, t, rows[i].Tier, tx.Kept()); d != "" {
				return fmt.Errorf("turn %d: the %s copy of %s does not match its row: %s",
					t.Seq, spanfmt.TierName(rows[i].Tier), tx.NodeName(ctx, stubs[i].Span), d)
			}
			rows[i].Turn = t
		}
		if err := tx.RestoreRows(ctx, rows, stubs); err != nil {
			return err
		}
		after = whole[len(whole)-1].Seq
	}
	left, err := tx.Stubs(ctx, first, last)
	if err != nil {
		return err
	}
	if left != 0 {
		return fmt.Errorf("%d turns are still out of their rows after restoring", left)
	}
	return nil
}

// Kept says which fields a store's stub rows keep, besides those every
// store's keep: the session, time and tokens, the role (of a warm row,
// and of a cold one unless ColdRole is false), and a warm row's speaker
// name and session label.
type Kept struct {
	ExtID    bool // the ext_id
	ColdRole bool // the role of a cold row; if false, a cold row may have left it to its segment (its role is "")
}

// stubMismatch returns how the copy c of a turn differs from its stub
// row r of tier in the fields the row keeps, or "".
func stubMismatch(r, c strata.Turn, tier int, kept Kept) string {
	var d []string
	if kept.ExtID && r.ExtID != c.ExtID {
		d = append(d, fmt.Sprintf("ext_id %q, row %q", c.ExtID, r.ExtID))
	}
	if r.Role != c.Role && (kept.ColdRole || tier != spanfmt.TierCold || r.Role != "") {
		d = append(d, fmt.Sprintf("role %q, row %q", c.Role, r.Role))
	}
	if r.Session != c.Session {
		d = append(d, fmt.Sprintf("session %d, row %d", c.Session, r.Session))
	}
	if !r.Time.Equal(c.Time) {
		d = append(d, fmt.Sprintf("time %s, row %s", c.Time, r.Time))
	}
	if r.Tokens != c.Tokens {
		d = append(d, fmt.Sprintf("tokens %d, row %d", c.Tokens, r.Tokens))
	}
	if tier == spanfmt.TierWarm && (r.Name != c.Name || r.SessionLabel != c.SessionLabel) {
		d = append(d, fmt.Sprintf("name and session label %q %q, row %q %q", c.Name, c.SessionLabel, r.Name, r.SessionLabel))
	}
	return strings.Join(d, "; ")
}
