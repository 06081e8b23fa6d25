package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// This file keeps cold turns in the full-text index. A turn moving to the
// cold tier leaves its row's content for an archive segment but keeps its
// entry in turns_fts, so that search finds it by its own words, as it
// finds a hot or a warm turn; only expiry (which deletes the content) and
// deletion take it out. Stores written by earlier versions took a cold
// span's turns out of the index: migration 21 lists their level-1 nodes in
// cold_unindexed, and Open indexes them again from their segments, one
// node per transaction, so a kill leaves each node either listed and out
// of the index or indexed and no longer listed. A node whose segments
// cannot be read (a file removed by hand) stays listed, and the next Open
// tries again; the code that would take a listed node's cold turns out of
// the index (expiry, deletion, a pin released) or put them back in (a pin,
// a pyramid reset, another process's Open) asks coldIndexed first.

// indexColdBatch is how many listed nodes one call of indexCold reads.
const indexColdBatch = 256

// indexCold puts the cold turns of every node listed in cold_unindexed
// back into turns_fts and unlists the node. Nodes whose turns cannot be
// read stay listed; it reports how many were indexed.
func (s *Store) indexCold(ctx context.Context) (int, error) {
	done := 0
	after := int64(0)
	for {
		rows, err := s.w.QueryContext(ctx, `SELECT u.node, c.namespace, c.id, c.pk FROM cold_unindexed u
			JOIN nodes n ON n.pk = u.node JOIN conversations c ON c.pk = n.conversation
			WHERE u.node > ? ORDER BY u.node LIMIT ?`, after, indexColdBatch)
		if err != nil {
			return done, fmt.Errorf("sqlite: indexing cold turns: %w", err)
		}
		type listed struct {
			node, conv   int64
			ns, convName string
		}
		var batch []listed
		for rows.Next() {
			var l listed
			if err := rows.Scan(&l.node, &l.ns, &l.convName, &l.conv); err != nil {
				rows.Close()
				return done, fmt.Errorf("sqlite: indexing cold turns: %w", err)
			}
			batch = append(batch, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return done, fmt.Errorf("sqlite: indexing cold turns: %w", err)
		}
		if len(batch) == 0 {
			break
		}
		for _, l := range batch {
			after = l.node
			ok, err := s.indexColdNode(ctx, l.ns, l.convName, l.conv, l.node)
			if err != nil {
				return done, err
			}
			if ok {
				done++
			}
		}
	}
	// Listed rows whose node is gone (replaced or deleted by an earlier
	// version between two opens) name nothing. They are looked for
	// first: a DELETE takes the write lock even when it removes nothing,
	// and every Open comes here.
	var stale bool
	if err := s.w.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM cold_unindexed WHERE node NOT IN (SELECT pk FROM nodes))`).Scan(&stale); err != nil {
		return done, fmt.Errorf("sqlite: indexing cold turns: %w", err)
	}
	if stale {
		if _, err := s.w.ExecContext(ctx, `DELETE FROM cold_unindexed WHERE node NOT IN (SELECT pk FROM nodes)`); err != nil {
			return done, fmt.Errorf("sqlite: indexing cold turns: %w", err)
		}
	}
	return done, nil
}

// indexColdNode indexes the cold turns of the listed node pk in one
// transaction; false if its turns cannot be read (it stays listed).
func (s *Store) indexColdNode(ctx context.Context, namespace, conversation string, conv, node int64) (bool, error) {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("sqlite: indexing cold turns: %w", err)
	}
	defer tx.Rollback()
	// Another process opening the same file may have indexed it since
	// the list was read: a second insert of the same rows would count
	// them twice in the index's BM25 statistics.
	if indexed, err := coldIndexed(ctx, tx, node); err != nil || indexed {
		return false, err
	}
	sp, err := scanSpan(tx.QueryRowContext(ctx, `SELECT `+spanCols+` FROM nodes WHERE pk = ?`, node))
	if errors.Is(err, sql.ErrNoRows) {
		_, err = tx.ExecContext(ctx, `DELETE FROM cold_unindexed WHERE node = ?`, node)
		if err == nil {
			err = tx.Commit()
		}
		return false, err
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: indexing cold turns: %w", err)
	}
	if sp.Tier == tierCold {
		rows, err := s.spanTurns(ctx, tx, namespace, conversation, conv, sp)
		if err != nil {
			return false, nil // unreadable: stays listed
		}
		ins, err := tx.PrepareContext(ctx, `INSERT INTO turns_fts (rowid, text, scope) VALUES (?, ?, ?)`)
		if err != nil {
			return false, err
		}
		defer ins.Close()
		sc := scope(conv, namespace)
		for _, r := range rows {
			if r.Tier != tierCold {
				continue
			}
			if _, err := ins.ExecContext(ctx, r.Key, s.fts.text(r.Turn.Text()), sc); err != nil {
				return false, fmt.Errorf("sqlite: indexing cold turn %d of %q: %w", r.Turn.Seq, conversation, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM cold_unindexed WHERE node = ?`, node); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// coldIndexed reports whether the cold rows of level-1 node pk are in
// turns_fts: true unless the node is listed in cold_unindexed.
func coldIndexed(ctx context.Context, q querier, node int64) (bool, error) {
	var listed bool
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM cold_unindexed WHERE node = ?)`, node).Scan(&listed)
	return !listed, err
}

// unindexedSpans is the set of nodes listed in cold_unindexed (almost
// always none).
func unindexedSpans(ctx context.Context, q querier) (map[int64]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT node FROM cold_unindexed`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var n int64
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out[n] = true
	}
	return out, rows.Err()
}
