package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
)

// deleteBatch is how many indexed turns DeleteConversation takes out of the
// full-text index per read.
const deleteBatch = 1024

// DeleteConversation removes a conversation and everything it holds; see
// strata.ConversationStore.
//
// One transaction takes the conversation's turns and summaries out of the
// full-text indexes (they are contentless: each entry is deleted with the
// text it was indexed with, read from the row or, for a warm turn, from
// its span's block), deletes the conversation row (its turns, nodes,
// vectors, learnings, calls, segments rows and expiries go with it by
// foreign key), its live-compaction state, and writes the audit record.
// After the commit the archive segments (Blobs.DeletePrefix: with Files,
// the archive folder) are removed. A kill in between leaves segments no
// conversation owns; EnsureConversation removes them before a
// conversation of the same id is created again, so their records can
// never mix with a new conversation's.
func (s *Store) DeleteConversation(ctx context.Context, namespace, id, reason string, at time.Time) (strata.Deletion, error) {
	d := strata.Deletion{Namespace: namespace, Conversation: id, Reason: reason, At: at.UTC()}
	atNanos, err := toNanos(at, "deletion time")
	if err != nil {
		return d, err
	}
	fail := func(err error) error {
		if strata.ErrorCode(err) != strata.EINTERNAL {
			return err
		}
		return fmt.Errorf("sqlite: deleting conversation %q: %w", id, err)
	}
	tx, pk, err := s.beginIn(ctx, s.w, namespace, id, fail)
	if err != nil {
		return d, err
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, `SELECT turns, content_bytes FROM conversations WHERE pk = ?`, pk).
		Scan(&d.Turns, &d.ContentBytes); err != nil {
		return d, fail(err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM segments WHERE conversation = ?`, pk).Scan(&d.Segments); err != nil {
		return d, fail(err)
	}
	if err := s.unindexTurns(ctx, tx, namespace, id, pk); err != nil {
		return d, fail(err)
	}
	n, err := s.dropNodes(ctx, tx, namespace, pk)
	if err != nil {
		return d, fail(err)
	}
	d.Nodes = int64(n)
	if _, err := tx.ExecContext(ctx, `DELETE FROM conversations WHERE pk = ?`, pk); err != nil {
		return d, fail(err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM compaction_state WHERE namespace = ? AND conversation = ?`, namespace, id); err != nil {
		return d, fail(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO deletions (namespace, conversation, turns, nodes, content_bytes, segments, reason, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, namespace, id, d.Turns, d.Nodes, d.ContentBytes, d.Segments, reason, atNanos); err != nil {
		return d, fail(err)
	}
	pyramidAt("delete-written")
	if err := tx.Commit(); err != nil {
		return d, fail(err)
	}
	pyramidAt("delete-committed")
	if err := s.seg.Blobs.DeletePrefix(ctx, archive.Prefix(namespace, id)); err != nil {
		return d, fmt.Errorf("sqlite: conversation %q was deleted, but its archive folder was not removed (creating the conversation again removes it): %w", id, err)
	}
	return d, nil
}

// unindexTurns deletes the full-text entries of conversation pk's turns:
// those whose row holds its content (hot, or pinned in any tier), warm
// stubs (their text in the span's block) and cold stubs (their text in
// the archive; coldfts.go), but not the cold stubs of spans an earlier
// version left out of the index. Expired stubs left the index when they
// expired. A cold span whose segments cannot be read (a file removed by
// hand) keeps its entries: they name rows that no longer exist, and no
// search returns them.
func (s *Store) unindexTurns(ctx context.Context, tx *sql.Tx, namespace, conversation string, pk int64) error {
	del, err := tx.PrepareContext(ctx, `INSERT INTO turns_fts (turns_fts, rowid, text, scope) VALUES ('delete', ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer del.Close()
	sc := scope(pk, namespace)
	for _, tiers := range [][2]int{{tierHot, tierWarm}, {tierCold, tierCold}} {
		after := int64(math.MinInt64)
		for {
			turns, stubs, pks, err := rowBatch(ctx, tx, pk, tiers[0], tiers[1], after, math.MaxInt64, deleteBatch)
			if err != nil {
				return err
			}
			if len(turns) == 0 {
				break
			}
			after = turns[len(turns)-1].Seq
			if tiers[0] == tierCold {
				turns, stubs, pks, err = s.indexedCold(ctx, tx, turns, stubs, pks)
				if err != nil {
					return err
				}
			}
			whole, err := s.hydrate(ctx, tx, namespace, conversation, turns, stubs)
			if err != nil && tiers[0] == tierCold {
				continue // unreadable segments: see above
			}
			if err != nil {
				return err
			}
			if len(whole) != len(turns) {
				return fmt.Errorf("%d of %d indexed turns could not be read", len(turns)-len(whole), len(turns))
			}
			for i, t := range whole {
				if _, err := del.ExecContext(ctx, pks[i], s.fts.text(t.Text()), sc); err != nil {
					return fmt.Errorf("unindexing turn %d: %w", t.Seq, err)
				}
			}
		}
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM cold_unindexed WHERE node IN (SELECT pk FROM nodes WHERE conversation = ?)`, pk)
	return err
}

// indexedCold keeps, of a batch of cold rows (all stubs), those whose
// span is in the full-text index (coldIndexed).
func (s *Store) indexedCold(ctx context.Context, tx *sql.Tx, turns []strata.Turn, stubs []stub, pks []int64) ([]strata.Turn, []stub, []int64, error) {
	known := map[int64]bool{}
	var kt []strata.Turn
	var ks []stub
	var kp []int64
	for i, st := range stubs {
		ok, seen := known[st.span.Int64]
		if !seen {
			var err error
			if ok, err = coldIndexed(ctx, tx, st.span.Int64); err != nil {
				return nil, nil, nil, err
			}
			known[st.span.Int64] = ok
		}
		if ok {
			st.index = len(kt)
			kt, ks, kp = append(kt, turns[i]), append(ks, st), append(kp, pks[i])
		}
	}
	return kt, ks, kp, nil
}

// Deletions returns the audit records of deleted conversations of the
// namespace, oldest first.
func (s *Store) Deletions(ctx context.Context, namespace string) ([]strata.Deletion, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT conversation, turns, nodes, content_bytes, segments, reason, at
		FROM deletions WHERE namespace = ? ORDER BY pk`, namespace)
	if err != nil {
		return nil, fmt.Errorf("sqlite: deletions of %q: %w", namespace, err)
	}
	defer rows.Close()
	var out []strata.Deletion
	for rows.Next() {
		d := strata.Deletion{Namespace: namespace}
		var at int64
		if err := rows.Scan(&d.Conversation, &d.Turns, &d.Nodes, &d.ContentBytes, &d.Segments, &d.Reason, &at); err != nil {
			return nil, fmt.Errorf("sqlite: deletions of %q: %w", namespace, err)
		}
		d.At = time.Unix(0, at).UTC()
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: deletions of %q: %w", namespace, err)
	}
	return out, nil
}

// removeOrphanArchive removes the archive segments of a conversation that
// does not exist: what a DeleteConversation killed after its commit left.
func (s *Store) removeOrphanArchive(ctx context.Context, namespace, id string) error {
	err := s.seg.Blobs.DeletePrefix(ctx, archive.Prefix(namespace, id))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("sqlite: removing the archive folder a deleted conversation %q left: %w", id, err)
	}
	return nil
}
