package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// This file keeps cold turns in the full-text index. A turn moving to the
// cold tier leaves its row's content for an archive segment but keeps its
// rows in turn_index, so that search finds it by its own words, as it
// finds a hot or a warm turn; only expiry (which deletes the content) and
// deletion take them out. Stores written by earlier versions took a cold
// span's turns out of the index: migration 7 lists their level-1 nodes in
// cold_unindexed, and Open indexes them again from their segments, one
// node per transaction, so a kill leaves each node either listed and out
// of the index or indexed and no longer listed. Indexing a turn again is
// a no-op (indexTurnsAgain), so a restore that puts a turn back need not
// know whether it was listed. A node whose segments cannot be read (a
// blob removed by hand) stays listed, and the next Open tries again.

// indexColdBatch is how many listed nodes one read of indexCold takes.
const indexColdBatch = 256

// indexTurnsAgain is indexTurns for turns that may be indexed already.
const indexTurnsAgain = indexTurns + ` ON CONFLICT DO NOTHING`

// indexCold puts the cold turns of every node listed in cold_unindexed
// back into turn_index and unlists the node; nodes whose turns cannot be
// read stay listed. Several processes may run it at once: each node is
// taken under a row lock, and one taken by another is skipped.
func (s *Store) indexCold(ctx context.Context) error {
	after := int64(0)
	for {
		var batch []int64
		err := s.readTx(ctx, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `SELECT node FROM cold_unindexed WHERE node > $1 ORDER BY node LIMIT $2`, after, indexColdBatch)
			if err != nil {
				return err
			}
			batch, err = pgx.CollectRows(rows, pgx.RowTo[int64])
			return err
		})
		if err != nil {
			return fmt.Errorf("postgres: indexing cold turns: %w", err)
		}
		if len(batch) == 0 {
			return nil
		}
		for _, node := range batch {
			after = node
			if err := s.indexColdNode(ctx, node); err != nil {
				return err
			}
		}
	}
}

// errUnreadable rolls back the indexing of a node whose turns cannot be
// read; the node stays listed.
var errUnreadable = errors.New("unreadable span")

// indexColdNode indexes the cold turns of the listed node.
func (s *Store) indexColdNode(ctx context.Context, node int64) error {
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var listed int64
		err := tx.QueryRow(ctx, `SELECT node FROM cold_unindexed WHERE node = $1 FOR UPDATE SKIP LOCKED`, node).Scan(&listed)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // done by another process, or being done
		}
		if err != nil {
			return err
		}
		var namespace, conversation string
		var pk int64
		if err := tx.QueryRow(ctx, `SELECT c.namespace, c.id, c.pk FROM nodes n JOIN conversations c ON c.pk = n.conversation
			WHERE n.pk = $1`, node).Scan(&namespace, &conversation, &pk); err != nil {
			return err
		}
		sp, err := scanSpan(tx.QueryRow(ctx, `SELECT `+spanCols+` FROM nodes WHERE pk = $1`, node))
		if err != nil {
			return err
		}
		if sp.Tier == tierCold {
			rows, err := s.spanTurns(ctx, tx, namespace, conversation, pk, sp)
			if err != nil {
				return errUnreadable
			}
			var idxSeqs []int64
			var idxParts []int32
			var idxWords []string
			for _, r := range rows {
				if r.Tier != tierCold {
					continue
				}
				for p, w := range indexParts(r.Turn.Text()) {
					idxSeqs, idxParts, idxWords = append(idxSeqs, r.Turn.Seq), append(idxParts, int32(p)), append(idxWords, w)
				}
			}
			if len(idxSeqs) > 0 {
				if _, err := tx.Exec(ctx, indexTurnsAgain, pk, idxSeqs, idxParts, idxWords); err != nil {
					return err
				}
			}
		}
		_, err = tx.Exec(ctx, `DELETE FROM cold_unindexed WHERE node = $1`, node)
		return err
	})
	if err != nil && !errors.Is(err, errUnreadable) {
		return fmt.Errorf("postgres: indexing the cold turns of node %d: %w", node, err)
	}
	return nil
}
