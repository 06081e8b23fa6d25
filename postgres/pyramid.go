package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/internal/spanfmt"
	"github.com/strata-memory/strata/internal/tiermove"
)

// This file changes what the tier code settled: the importance of one
// turn (which decides whether its row keeps its content), and the nodes
// of a conversation (whose level-1 nodes own the warm and cold copies of
// their spans). Each change is one transaction holding the conversation's
// row lock, archive segments included, so a kill at any instant leaves
// the change made or not made.
//
// A span's copy (warm block or archive records) holds every turn of the
// span, pinned ones included: Demote packs and archives them all. The copy
// of a turn whose row holds its content (tier 0) is never read, so it may
// carry an importance older than the row's; whenever a row gives its
// content up, or changes its importance while its content is in the copy,
// the copy is rewritten with the turn as it is now, because reading a
// stub takes the whole turn, importance included, from the copy.

// SetImportance sets the importance of one turn and returns it, whole;
// see strata.TurnStore and tiermove.SetImportance, which this runs in one
// transaction holding the conversation's row lock. Cold turns keep their
// rows in turn_index whatever their importance (coldindex.go).
func (s *Store) SetImportance(ctx context.Context, namespace, conversation string, seq int64, importance float64) (strata.Turn, error) {
	if err := strata.CheckImportance(seq, importance); err != nil {
		return strata.Turn{}, err
	}
	var t strata.Turn
	err := s.tierTx(ctx, namespace, conversation, true, func(tx *tierTx) (err error) {
		t, err = tiermove.SetImportance(ctx, tx, conversation, seq, importance)
		return err
	})
	if err != nil {
		return strata.Turn{}, wrap(fmt.Sprintf("setting the importance of turn %d of %q", seq, conversation), err)
	}
	return t, nil
}

func (t *tierTx) TurnRow(ctx context.Context, seq int64) (spanRow, *int64, error) {
	var r spanRow
	var sp *int64
	var err error
	r.Turn, err = scanTurn(t.tx.QueryRow(ctx, `SELECT `+turnCols+`, t.tier, t.span FROM turns t
		WHERE t.conversation = $1 AND t.seq = $2`, t.pk, seq), &r.Tier, &sp)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, nil, tiermove.ErrNoRow
	}
	return r, sp, err
}

func (t *tierTx) SpansAt(ctx context.Context, seq int64) ([]span, error) {
	// Literals, so that the partial index nodes_tiered applies.
	rows, err := t.tx.Query(ctx, `SELECT `+spanCols+` FROM nodes
		WHERE conversation = $1 AND level = 1 AND tier > 0 AND first_seq <= $2 AND last_seq >= $2
		ORDER BY first_seq`, t.pk, seq)
	if err != nil {
		return nil, err
	}
	return collectSpans(rows)
}

func (t *tierTx) Span(ctx context.Context, pk int64) (span, error) {
	return scanSpan(t.tx.QueryRow(ctx, `SELECT `+spanCols+` FROM nodes WHERE pk = $1`, pk))
}

func (t *tierTx) FromCopy(ctx context.Context, r spanRow, pk int64) (strata.Turn, bool, error) {
	whole, err := t.s.hydrate(ctx, t.tx, t.namespace, t.conversation, []strata.Turn{r.Turn}, []stub{{index: 0, tier: r.Tier, span: &pk}})
	if err != nil || len(whole) != 1 {
		return strata.Turn{}, false, err
	}
	return whole[0], true, nil
}

func (t *tierTx) PutBlock(ctx context.Context, sp span, block []byte) error {
	_, err := t.tx.Exec(ctx, `UPDATE nodes SET block = $1 WHERE pk = $2`, block, sp.PK)
	return err
}

func (t *tierTx) ReadRecords(ctx context.Context, period string, first, last int64) ([]archive.Record, string, error) {
	seg := t.s.segmentsIn(t.tx)
	key := archive.Key(t.namespace, t.conversation, period)
	recs, err := seg.Read(ctx, key, first, last)
	return recs, seg.Blobs.Locate(key), err
}

func (t *tierTx) SetPeriods(ctx context.Context, sp span, periods []string) error {
	_, err := t.tx.Exec(ctx, `UPDATE nodes SET segments = $1 WHERE pk = $2`, jsonList(periods), sp.PK)
	return err
}

func (t *tierTx) SetImportance(ctx context.Context, r spanRow, importance float64) error {
	_, err := t.tx.Exec(ctx, `UPDATE turns SET importance = $1 WHERE conversation = $2 AND seq = $3`, importance, t.pk, r.Turn.Seq)
	return err
}

func (t *tierTx) Restore(ctx context.Context, sp span, r spanRow) error {
	return restoreRows(ctx, t.tx, t.pk, []spanRow{r})
}

// Released has nothing to do: a cold turn keeps its rows in turn_index.
func (t *tierTx) Released(ctx context.Context, sp span, r spanRow) error { return nil }

// restoreRows writes each whole turn into its row, a stub of its tier,
// and makes it hot, in one round trip: each row must have recorded the
// content size the turn has, and must read back as the turn. Turns that
// were cold are indexed again, which is a no-op unless an earlier version
// took them out of the full-text index (coldindex.go).
func restoreRows(ctx context.Context, tx pgx.Tx, pk int64, rs []spanRow) error {
	if len(rs) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	var idxSeqs []int64
	var idxParts []int32
	var idxWords []string
	for i := range rs {
		r := &rs[i]
		t := &r.Turn
		e, err := encodeTurn(t, 0)
		if err != nil {
			return fmt.Errorf("turn %d: %w", t.Seq, err)
		}
		// The row keeps its seq, ext_id, session, role, time and tokens:
		// its checksum, computed from the copy's, holds only if they are
		// the copy's, which the read back below checks.
		row := encodedRow(t.Seq, t, &e)
		b.Queue(`UPDATE turns t SET tier = $1, span = NULL, session_label = $2, name = $3, content = $4, model = $5,
			tool_calls = $6, tool_results = $7, importance = $8, tags = $9, metadata = $10, crc = $15
			WHERE t.conversation = $11 AND t.seq = $12 AND t.tier = $13 AND t.size = $14
			RETURNING `+turnCols,
			tierHot, t.SessionLabel, t.Name, row.content, t.Model, e.toolCalls, e.toolResults, t.Importance,
			e.tags, e.metadata, pk, t.Seq, r.Tier, int64(len(t.Content)), int64(row.sum())).
			QueryRow(func(row pgx.Row) error {
				back, err := scanTurn(row)
				if errors.Is(err, pgx.ErrNoRows) {
					return fmt.Errorf("turn %d: its row is not a %s stub of %d content bytes, as its copy is", t.Seq, tierName(r.Tier), len(t.Content))
				}
				if err != nil {
					return fmt.Errorf("turn %d: %w", t.Seq, err)
				}
				if !spanfmt.SameTurn(&back, t) {
					return fmt.Errorf("turn %d: the row does not read back as the copy holds it", t.Seq)
				}
				return nil
			})
		if r.Tier == tierCold {
			for p, w := range e.index {
				idxSeqs, idxParts, idxWords = append(idxSeqs, t.Seq), append(idxParts, int32(p)), append(idxWords, w)
			}
		}
	}
	if len(idxSeqs) > 0 {
		b.Queue(indexTurnsAgain, pk, idxSeqs, idxParts, idxWords)
	}
	return tx.SendBatch(ctx, b).Close()
}

// ResetPyramid removes every node of the conversation and sets its
// policy; see strata.NodeStore and tiermove.ResetPyramid. One
// transaction, holding the conversation's row lock, does all of it,
// deleting the nodes (their index entries and vectors go with them) and
// the conversation's archive segments.
func (s *Store) ResetPyramid(ctx context.Context, namespace, conversation, policy string) (int, error) {
	n := 0
	err := s.tierTx(ctx, namespace, conversation, true, func(t *tierTx) (err error) {
		n, err = tiermove.ResetPyramid(ctx, t, conversation, policy)
		return err
	})
	if err != nil {
		return 0, wrap(fmt.Sprintf("resetting the pyramid of %q", conversation), err)
	}
	return n, nil
}

func (t *tierTx) ExpiredNode(ctx context.Context) (string, error) {
	var id string
	err := t.tx.QueryRow(ctx, `SELECT id FROM nodes WHERE conversation = $1 AND level = 1 AND tier = $2
		ORDER BY first_seq LIMIT 1`, t.pk, tierExpired).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return id, err
}

func (t *tierTx) ExpiredTurn(ctx context.Context) (int64, bool, error) {
	var seq int64
	err := t.tx.QueryRow(ctx, `SELECT seq FROM turns WHERE conversation = $1 AND tier = $2 LIMIT 1`, t.pk, tierExpired).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	return seq, err == nil, err
}

func (t *tierTx) DropAllNodes(ctx context.Context) (int, error) {
	tag, err := t.tx.Exec(ctx, `DELETE FROM nodes WHERE conversation = $1`, t.pk)
	return int(tag.RowsAffected()), err
}

func (t *tierTx) SetPolicy(ctx context.Context, policy string) error {
	_, err := t.tx.Exec(ctx, `UPDATE conversations SET policy = $1 WHERE pk = $2`, policy, t.pk)
	return err
}

func (t *tierTx) DropArchive(ctx context.Context) error {
	if err := t.s.blobsIn(t.tx).DeletePrefix(ctx, archive.Prefix(t.namespace, t.conversation)); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, `DELETE FROM segments WHERE conversation = $1`, t.pk)
	return err
}

// ReplaceNodes removes the nodes ids of a conversation and stores nodes,
// in one transaction holding the conversation's row lock; see
// strata.NodeStore and tiermove.ReplaceNodes. The removed nodes are
// deleted (their index rows and vectors go with them, by foreign key),
// a cold one's records leave its segments in the same transaction, and
// nodes are put as PutNodes puts them.
func (s *Store) ReplaceNodes(ctx context.Context, namespace, conversation string, ids []string, nodes []strata.Node) (int, error) {
	enc, err := encodeNodes(conversation, nodes)
	if err != nil {
		return 0, err
	}
	made := 0
	err = s.tierTx(ctx, namespace, conversation, true, func(t *tierTx) (err error) {
		made, err = tiermove.ReplaceNodes(ctx, t, conversation, ids, nodes, func() (int, error) {
			return putNodes(ctx, t.tx, t.pk, nodes, enc)
		})
		return err
	})
	if err != nil {
		return 0, wrap(fmt.Sprintf("replacing nodes of %q", conversation), err)
	}
	return made, nil
}

func (t *tierTx) Node(ctx context.Context, id string) (span, error) {
	sp, err := scanSpan(t.tx.QueryRow(ctx, `SELECT `+spanCols+` FROM nodes WHERE conversation = $1 AND id = $2`, t.pk, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return sp, tiermove.ErrNoRow
	}
	return sp, err
}

func (t *tierTx) Above(ctx context.Context, sp span) ([]string, error) {
	rows, err := t.tx.Query(ctx, `SELECT id FROM nodes WHERE conversation = $1 AND level > $2 AND last_seq >= $3 AND first_seq <= $4`,
		t.pk, sp.Level, sp.First, sp.Last)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func (t *tierTx) StoredNodes(ctx context.Context, ids []string) ([]string, error) {
	rows, err := t.tx.Query(ctx, `SELECT id FROM nodes WHERE conversation = $1 AND id = ANY($2)`, t.pk, ids)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func (t *tierTx) RestoreStubs(ctx context.Context, first, last int64) error {
	return tiermove.RestoreStubs(ctx, t, first, last)
}

func (t *tierTx) StubRows(ctx context.Context, after, to int64, limit int) ([]spanRow, []spanfmt.Stub, error) {
	rows, err := t.tx.Query(ctx, `SELECT `+turnCols+`, t.tier, t.span FROM turns t
		WHERE t.conversation = $1 AND t.tier IN ($2, $3) AND t.seq > $4 AND t.seq <= $5 ORDER BY t.seq LIMIT $6`,
		t.pk, tierWarm, tierCold, after, to, limit)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var out []spanRow
	var stubs []stub
	for rows.Next() {
		st := stub{index: len(out)}
		turn, err := scanTurn(rows, &st.tier, &st.span)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, spanRow{Tier: st.tier, Turn: turn})
		stubs = append(stubs, st)
	}
	return out, fmtStubs(stubs), rows.Err()
}

func (t *tierTx) FromCopies(ctx context.Context, ts []strata.Turn, stubs []spanfmt.Stub) ([]strata.Turn, error) {
	return t.s.hydrateStubs(ctx, t.tx, t.namespace, t.conversation, ts, stubs)
}

// Kept: a stub row keeps its ext_id and its role.
func (t *tierTx) Kept() tiermove.Kept { return tiermove.Kept{ExtID: true, ColdRole: true} }

func (t *tierTx) NodeName(ctx context.Context, pk int64) string {
	var id string
	if err := t.tx.QueryRow(ctx, `SELECT id FROM nodes WHERE pk = $1`, pk).Scan(&id); err != nil {
		return fmt.Sprintf("node #%d", pk)
	}
	return "node " + id
}

func (t *tierTx) RestoreRows(ctx context.Context, rows []spanRow, _ []spanfmt.Stub) error {
	return restoreRows(ctx, t.tx, t.pk, rows)
}

func (t *tierTx) Stubs(ctx context.Context, first, last int64) (int64, error) {
	var n int64
	err := t.tx.QueryRow(ctx, `SELECT count(*) FROM turns WHERE conversation = $1 AND tier <> $2 AND seq BETWEEN $3 AND $4`,
		t.pk, tierHot, first, last).Scan(&n)
	return n, err
}

// DropRestored rewrites the span's segments without its records, in the
// transaction.
func (t *tierTx) DropRestored(ctx context.Context, sp span) error {
	return t.s.dropRecords(ctx, t.tx, t.namespace, t.conversation, t.pk, sp.Periods, sp.First, sp.Last)
}

func (t *tierTx) DropNodes(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := t.tx.Exec(ctx, `DELETE FROM nodes WHERE conversation = $1 AND id = ANY($2)`, t.pk, ids)
	return err
}
