package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/internal/spanfmt"
	"github.com/strata-memory/strata/internal/tiermove"
)

// This file changes what the tier code settled: the importance of one
// turn (which decides whether its row keeps its content), and the whole
// pyramid of a conversation (whose level-1 nodes own the warm and cold
// copies of their spans).
//
// A span's copy (warm block or archive records) holds every turn of the
// span, pinned ones included: Demote packs and archives them all. The copy
// of a turn whose row holds its content (tier 0) is never read, so it may
// carry an importance older than the row's; whenever a row gives its
// content up, or changes its importance while its content is in the copy,
// the copy is rewritten with the turn as it is now, because reading a
// stub takes the whole turn, importance included, from the copy.

// pyramidHook, when set (by tests), is called at the named points of
// SetImportance and ResetPyramid so that a test can kill the process
// there.
var pyramidHook func(point string)

func pyramidAt(point string) {
	if pyramidHook != nil {
		pyramidHook(point)
	}
}

// SetImportance sets the importance of one turn; see strata.TurnStore
// and tiermove.SetImportance, which this runs in one transaction holding
// the write lock. A cold row also leaves the full-text index when it
// gives its content up, and comes back into it when it takes its content
// back, if its span is one an earlier version left unindexed
// (coldfts.go).
//
// A kill at any instant loses nothing. Giving a turn up to a cold span
// writes the segment first: a kill before the commit leaves the row
// pinned and whole, and a record it does not read. Changing the importance
// of a cold stub also merges its record first: a kill before the commit
// leaves the row with its old importance and the record with the new one
// (both below the pin threshold, so no filter changes); calling again
// settles it. The other cases are one transaction.
func (s *Store) SetImportance(ctx context.Context, namespace, conversation string, seq int64, importance float64) (strata.Turn, error) {
	if err := strata.CheckImportance(seq, importance); err != nil {
		return strata.Turn{}, err
	}
	fail := func(err error) error {
		if strata.ErrorCode(err) != strata.EINTERNAL {
			return err
		}
		return fmt.Errorf("sqlite: setting the importance of turn %d of %q: %w", seq, conversation, err)
	}
	tx, err := s.beginTier(ctx, s.w, namespace, conversation, fail)
	if err != nil {
		return strata.Turn{}, err
	}
	defer tx.tx.Rollback()
	t, err := tiermove.SetImportance(ctx, tx, conversation, seq, importance)
	if err != nil {
		return strata.Turn{}, fail(err)
	}
	pyramidAt("importance-written")
	if err := tx.tx.Commit(); err != nil {
		return strata.Turn{}, fail(err)
	}
	return t, nil
}

func (t *tierTx) TurnRow(ctx context.Context, seq int64) (spanRow, *int64, error) {
	var r spanRow
	var sp sql.NullInt64
	var err error
	r.Turn, err = scanTurn(t.tx.QueryRowContext(ctx, `SELECT `+turnCols+`, t.tier, t.span, t.pk FROM turns t
		WHERE t.conversation = ? AND t.seq = ?`, t.pk, seq), &r.Tier, &sp, &r.Key)
	if errors.Is(err, sql.ErrNoRows) {
		return r, nil, tiermove.ErrNoRow
	}
	if !sp.Valid {
		return r, nil, err
	}
	return r, &sp.Int64, err
}

func (t *tierTx) SpansAt(ctx context.Context, seq int64) ([]span, error) {
	rows, err := t.tx.QueryContext(ctx, `SELECT `+spanCols+` FROM nodes
		WHERE conversation = ? AND level = 1 AND tier > ? AND first_seq <= ? AND last_seq >= ?
		ORDER BY first_seq`, t.pk, tierHot, seq, seq)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []span
	for rows.Next() {
		sp, err := scanSpan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	return out, rows.Err()
}

func (t *tierTx) Span(ctx context.Context, pk int64) (span, error) {
	return scanSpan(t.tx.QueryRowContext(ctx, `SELECT `+spanCols+` FROM nodes WHERE pk = ?`, pk))
}

func (t *tierTx) FromCopy(ctx context.Context, r spanRow, pk int64) (strata.Turn, bool, error) {
	whole, err := t.s.hydrate(ctx, t.tx, t.namespace, t.conversation, []strata.Turn{r.Turn},
		[]stub{{index: 0, tier: r.Tier, span: sql.NullInt64{Int64: pk, Valid: true}}})
	if err != nil || len(whole) != 1 {
		return strata.Turn{}, false, err
	}
	return whole[0], true, nil
}

func (t *tierTx) PutBlock(ctx context.Context, sp span, block []byte) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE nodes SET block = ? WHERE pk = ?`, block, sp.PK)
	return err
}

func (t *tierTx) ReadRecords(ctx context.Context, period string, first, last int64) ([]archive.Record, string, error) {
	key := archive.Key(t.namespace, t.conversation, period)
	recs, err := t.s.seg.Read(ctx, key, first, last)
	return recs, t.s.seg.Blobs.Locate(key), err
}

func (t *tierTx) SetPeriods(ctx context.Context, sp span, periods []string) error {
	pj, _ := json.Marshal(periods)
	_, err := t.tx.ExecContext(ctx, `UPDATE nodes SET segments = ? WHERE pk = ?`, string(pj), sp.PK)
	return err
}

func (t *tierTx) SetImportance(ctx context.Context, r spanRow, importance float64) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE turns SET importance = ? WHERE pk = ?`, importance, r.Key)
	return err
}

// Restore puts a cold turn back into turns_fts if its span is one an
// earlier version left unindexed (a cold row keeps its entry otherwise).
func (t *tierTx) Restore(ctx context.Context, sp span, r spanRow) error {
	if err := restoreRow(ctx, t.tx, r.Key, r.Tier, r.Turn); err != nil {
		return err
	}
	if r.Tier != tierCold {
		return nil
	}
	indexed, err := coldIndexed(ctx, t.tx, sp.PK)
	if err != nil || indexed {
		return err
	}
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO turns_fts (rowid, text, scope) VALUES (?, ?, ?)`,
		r.Key, t.s.fts.text(r.Turn.Text()), scope(t.pk, t.namespace)); err != nil {
		return fmt.Errorf("indexing the turn: %w", err)
	}
	return nil
}

// Released takes a turn given up to a cold span out of turns_fts if the
// span is one an earlier version left unindexed.
func (t *tierTx) Released(ctx context.Context, sp span, r spanRow) error {
	if sp.Tier != tierCold {
		return nil
	}
	indexed, err := coldIndexed(ctx, t.tx, sp.PK)
	if err != nil || indexed {
		return err
	}
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO turns_fts (turns_fts, rowid, text, scope) VALUES ('delete', ?, ?, ?)`,
		r.Key, t.s.fts.text(r.Turn.Text()), scope(t.pk, t.namespace)); err != nil {
		return fmt.Errorf("unindexing the turn: %w", err)
	}
	return nil
}

// restoreRow writes the whole turn t into the row rowPK, a stub of tier
// tier, and makes it hot; it checks the content size the row recorded
// and reads the row back. The full-text index is the caller's.
func restoreRow(ctx context.Context, tx *sql.Tx, rowPK int64, tier int, t strata.Turn) error {
	e, err := encodeTurn(&t, 0)
	if err != nil {
		return fmt.Errorf("turn %d: %w", t.Seq, err)
	}
	// The row keeps its seq, ext_id, session, time and tokens, which the
	// read back below compares with t's.
	row := encodedRow(t.Seq, t.Session, t.SessionLabel, string(t.Role), t.Name, t.Content, t.Model, t.Tokens, &e)
	res, err := tx.ExecContext(ctx, `UPDATE turns SET tier = ?, span = NULL, role = ?, session_label = ?, name = ?,
		content = ?, model = ?, tool_calls = ?, tool_results = ?, importance = ?, tags = ?, metadata = ?, crc = ?
		WHERE pk = ? AND tier = ? AND size = ?`,
		tierHot, string(t.Role), t.SessionLabel, t.Name, t.Content, t.Model, e.toolCalls, e.toolResults, t.Importance,
		e.tags, e.metadata, int64(row.sum()), rowPK, tier, len(t.Content))
	if err != nil {
		return fmt.Errorf("turn %d: %w", t.Seq, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("turn %d: %w", t.Seq, err)
	} else if n != 1 {
		var size int64
		tx.QueryRowContext(ctx, `SELECT size FROM turns WHERE pk = ?`, rowPK).Scan(&size)
		return fmt.Errorf("turn %d: the copy holds %d content bytes, its row recorded %d", t.Seq, len(t.Content), size)
	}
	back, err := scanTurn(tx.QueryRowContext(ctx, `SELECT `+turnCols+` FROM turns t WHERE t.pk = ?`, rowPK))
	if err != nil {
		return fmt.Errorf("turn %d: reading the row back: %w", t.Seq, err)
	}
	if !spanfmt.SameTurn(&back, &t) {
		return fmt.Errorf("turn %d: the row does not read back as the copy holds it", t.Seq)
	}
	return nil
}

// ResetPyramid removes every node of a conversation and sets its policy
// name; see strata.NodeStore and tiermove.ResetPyramid.
//
// One transaction, holding the write lock as Demote does, refuses if any
// span expired, restores every warm and cold stub (the whole turn, from its
// span's block or segment, into its row, each row checked against the
// size it recorded and read back byte for byte; cold turns go back into
// the full-text index, warm ones never left it), unindexes and deletes the
// nodes, and sets the policy. Only after it commits are the conversation's
// archive segments cleaned (scrubArchive, under the write lock again): the
// records of the spans just restored are removed, and segments left with
// none are deleted with their segments rows.
//
// A kill between the commit and the end of the cleanup leaves records in
// segments (and the segments rows counting them) for turns that are hot
// again. They are harmless:
//   - Turns, Search and hydrate never read them: a hot row is read from
//     itself, and hydrate looks up only the seqs of stubs, whose span's
//     Demote wrote their records.
//   - archive.Merge replaces a stored record of the same seq, so a later
//     Demote to cold of the same turns into the same segment rewrites
//     those records in place. One into another segment (their month
//     filled meanwhile, or they are in a day segment of an earlier
//     version) leaves them, but a span's seqs are looked up only in the
//     segments it names, so none reads them.
//   - Expire removes its span's seq range from the segments it names,
//     stale records in that range included.
//   - Stats counts them in Archive (and the cold tier's stored bytes) until
//     they are removed: the segments rows describe the files as they are.
//
// The next ResetPyramid removes them (its cleanup removes every record no
// cold span owns), and so would a Demote that ran scrubArchive.
func (s *Store) ResetPyramid(ctx context.Context, namespace, conversation, policy string) (int, error) {
	fail := func(err error) error {
		if strata.ErrorCode(err) != strata.EINTERNAL {
			return err
		}
		return fmt.Errorf("sqlite: resetting the pyramid of %q: %w", conversation, err)
	}
	t, err := s.beginTier(ctx, s.w, namespace, conversation, fail)
	if err != nil {
		return 0, err
	}
	defer t.tx.Rollback()
	n, err := tiermove.ResetPyramid(ctx, t, conversation, policy)
	if err != nil {
		return 0, fail(err)
	}
	pyramidAt("reset-restored")
	if err := t.tx.Commit(); err != nil {
		return 0, fail(err)
	}
	pyramidAt("reset-committed")
	if err := s.scrubArchive(ctx, namespace, conversation, t.pk); err != nil {
		return n, fmt.Errorf("sqlite: the pyramid of %q was reset, but its archive segments were not cleaned (the next reset finishes it): %w", conversation, err)
	}
	return n, nil
}

func (t *tierTx) ExpiredNode(ctx context.Context) (string, error) {
	var id string
	err := t.tx.QueryRowContext(ctx, `SELECT id FROM nodes WHERE conversation = ? AND level = 1 AND tier = ?
		ORDER BY first_seq LIMIT 1`, t.pk, tierExpired).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

func (t *tierTx) ExpiredTurn(ctx context.Context) (int64, bool, error) {
	var seq int64
	err := t.tx.QueryRowContext(ctx, `SELECT seq FROM turns WHERE conversation = ? AND tier = ? LIMIT 1`, t.pk, tierExpired).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return seq, err == nil, err
}

func (t *tierTx) DropAllNodes(ctx context.Context) (int, error) {
	return t.s.dropNodes(ctx, t.tx, t.namespace, t.pk)
}

func (t *tierTx) SetPolicy(ctx context.Context, policy string) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE conversations SET policy = ? WHERE pk = ?`, policy, t.pk)
	return err
}

// DropArchive leaves the segments to scrubArchive, which ResetPyramid
// runs after the commit.
func (t *tierTx) DropArchive(ctx context.Context) error {
	t.scrub = true
	return nil
}

// rowBatch reads up to limit turn rows of conversation pk in one of the
// tiers a and b whose seq lies in (after, to], in seq order, with their row
// keys; a row whose content is not in it (not hot) is also a stub, indexed
// into turns, for hydrate.
func rowBatch(ctx context.Context, tx *sql.Tx, pk int64, a, b int, after, to int64, limit int) ([]strata.Turn, []stub, []int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+turnCols+`, t.tier, t.span, t.pk FROM turns t
		WHERE t.conversation = ? AND t.tier IN (?, ?) AND t.seq > ? AND t.seq <= ? ORDER BY t.seq LIMIT ?`,
		pk, a, b, after, to, limit)
	if err != nil {
		return nil, nil, nil, err
	}
	defer rows.Close()
	var turns []strata.Turn
	var stubs []stub
	var pks []int64
	for rows.Next() {
		var st stub
		var rowPK int64
		t, err := scanTurn(rows, &st.tier, &st.span, &rowPK)
		if err != nil {
			return nil, nil, nil, err
		}
		if st.tier != tierHot {
			st.index = len(turns)
			stubs = append(stubs, st)
		}
		turns = append(turns, t)
		pks = append(pks, rowPK)
	}
	return turns, stubs, pks, rows.Err()
}

// nodeName names the node of row key pk for an error message.
func nodeName(ctx context.Context, q querier, pk int64) string {
	var id string
	if err := q.QueryRowContext(ctx, `SELECT id FROM nodes WHERE pk = ?`, pk).Scan(&id); err != nil {
		return fmt.Sprintf("node #%d", pk)
	}
	return "node " + id
}

// dropNodes unindexes and deletes every node of conversation pk and
// returns how many there were.
func (s *Store) dropNodes(ctx context.Context, tx *sql.Tx, namespace string, pk int64) (int, error) {
	rows, err := tx.QueryContext(ctx, `SELECT pk, summary FROM nodes WHERE conversation = ? AND derived = 0`, pk)
	if err != nil {
		return 0, err
	}
	type indexed struct {
		pk      int64
		summary string
	}
	var idx []indexed
	for rows.Next() {
		var x indexed
		if err := rows.Scan(&x.pk, &x.summary); err != nil {
			rows.Close()
			return 0, err
		}
		if x.summary, err = s.text.text(ctx, tx, x.summary); err != nil {
			rows.Close()
			return 0, err
		}
		idx = append(idx, x)
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return 0, err
	}
	del, err := tx.PrepareContext(ctx, `INSERT INTO nodes_fts (nodes_fts, rowid, text, scope) VALUES ('delete', ?, ?, ?)`)
	if err != nil {
		return 0, err
	}
	defer del.Close()
	sc := scope(pk, namespace)
	for _, x := range idx {
		if _, err := del.ExecContext(ctx, x.pk, s.fts.text(x.summary), sc); err != nil {
			return 0, fmt.Errorf("unindexing node #%d: %w", x.pk, err)
		}
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM nodes WHERE conversation = ?`, pk)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// scrubArchive removes from the archive segments of conversation pk every
// record that no span owns (a span owns the records of its seq range in
// the segment periods it names while it is cold, and while it is expired
// until Expire has rewritten its segments), deletes segments left empty,
// and brings the segments rows in line with the blobs. It reads the
// periods of the segments table and of the conversation's archive blobs
// (a Demote killed before its commit leaves a segment with no row), months
// and the days of earlier versions alike.
//
// Such records are left by a ResetPyramid killed between its commit and
// its cleanup, and by a Demote to cold killed before its commit (records
// of a span still warm; they stay unowned for good if the span, going
// cold later, is written to other segments: when its month filled
// meanwhile, or when an earlier version wrote them to a day segment). It
// holds the write lock throughout, so that no Demote adds records it
// would take for unowned.
func (s *Store) scrubArchive(ctx context.Context, namespace, conversation string, pk int64) error {
	fail := func(err error) error {
		return fmt.Errorf("sqlite: cleaning the archive of %q: %w", conversation, err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	owned := map[string][][2]int64{}
	rows, err := tx.QueryContext(ctx, `SELECT `+spanCols+` FROM nodes
		WHERE conversation = ? AND level = 1 AND tier IN (?, ?) AND segments IS NOT NULL`, pk, tierCold, tierExpired)
	if err != nil {
		return fail(err)
	}
	for rows.Next() {
		sp, err := scanSpan(rows)
		if err != nil {
			rows.Close()
			return fail(err)
		}
		for _, p := range sp.Periods {
			owned[p] = append(owned[p], [2]int64{sp.First, sp.Last})
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return fail(err)
	}
	periods := map[string]bool{}
	prows, err := tx.QueryContext(ctx, `SELECT day FROM segments WHERE conversation = ?`, pk)
	if err != nil {
		return fail(err)
	}
	for prows.Next() {
		var p string
		if err := prows.Scan(&p); err != nil {
			prows.Close()
			return fail(err)
		}
		periods[p] = true
	}
	err = prows.Err()
	prows.Close()
	if err != nil {
		return fail(err)
	}
	kept, err := archive.Periods(ctx, s.seg.Blobs, namespace, conversation)
	if err != nil {
		return fail(err)
	}
	for _, p := range kept {
		periods[p] = true
	}
	order := make([]string, 0, len(periods))
	for p := range periods {
		order = append(order, p)
	}
	sort.Strings(order)
	for _, p := range order {
		info, err := s.scrubSegment(ctx, archive.Key(namespace, conversation, p), owned[p])
		if err != nil {
			return fail(err)
		}
		pyramidAt("scrubbed")
		if err := putSegment(ctx, tx, pk, p, info); err != nil {
			return fail(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}

// scrubSegment rewrites the segment at key without the records whose seq
// lies in none of the ranges owned, and returns what it holds afterwards.
func (s *Store) scrubSegment(ctx context.Context, key string, owned [][2]int64) (archive.Info, error) {
	if len(owned) == 0 {
		return s.seg.Remove(ctx, key, math.MinInt64, math.MaxInt64)
	}
	recs, err := s.seg.Read(ctx, key, math.MinInt64, 0)
	if err != nil {
		return archive.Info{}, err
	}
	isOwned := func(seq int64) bool {
		for _, r := range owned {
			if seq >= r[0] && seq <= r[1] {
				return true
			}
		}
		return false
	}
	// Runs of consecutive unowned records: removing each run's seq range
	// removes no owned record, since the records are sorted by seq.
	var runs [][2]int64
	open := false
	for _, r := range recs {
		switch {
		case isOwned(r.Seq):
			open = false
		case open:
			runs[len(runs)-1][1] = r.Seq
		default:
			runs = append(runs, [2]int64{r.Seq, r.Seq})
			open = true
		}
	}
	for _, r := range runs {
		if _, err := s.seg.Remove(ctx, key, r[0], r[1]); err != nil {
			return archive.Info{}, err
		}
	}
	return s.seg.Stat(ctx, key)
}

// ReplaceNodes removes the nodes ids of a conversation and stores nodes,
// in one transaction; see strata.NodeStore and tiermove.ReplaceNodes.
// The removed nodes are unindexed and deleted (their vectors go with
// them, by the foreign key), and nodes are put as PutNodes puts them.
// After the commit, if a cold span was restored, the conversation's
// archive is cleaned of the records no span owns any more; a kill before
// that leaves harmless records, as ResetPyramid explains.
func (s *Store) ReplaceNodes(ctx context.Context, namespace, conversation string, ids []string, nodes []strata.Node) (int, error) {
	enc, err := encodeNodes(conversation, nodes)
	if err != nil {
		return 0, err
	}
	fail := func(err error) error {
		if strata.ErrorCode(err) != strata.EINTERNAL {
			return err
		}
		return fmt.Errorf("sqlite: replacing nodes of %q: %w", conversation, err)
	}
	t, err := s.beginTier(ctx, s.w, namespace, conversation, fail)
	if err != nil {
		return 0, err
	}
	defer t.tx.Rollback()
	made, err := tiermove.ReplaceNodes(ctx, t, conversation, ids, nodes, func() (int, error) {
		return putNodes(ctx, t.tx, s.text, s.fts, namespace, t.pk, nodes, enc)
	})
	if err == nil {
		err = t.tx.Commit()
	}
	if err != nil {
		return 0, fail(err)
	}
	pyramidAt("replace-committed")
	if t.scrub {
		if err := s.scrubArchive(ctx, namespace, conversation, t.pk); err != nil {
			return made, fmt.Errorf("sqlite: nodes of %q were replaced, but the archive segments of their spans were not cleaned (the next reset or replacement finishes it): %w", conversation, err)
		}
	}
	return made, nil
}

func (t *tierTx) Node(ctx context.Context, id string) (span, error) {
	sp, err := scanSpan(t.tx.QueryRowContext(ctx, `SELECT `+spanCols+` FROM nodes WHERE conversation = ? AND id = ?`, t.pk, id))
	if errors.Is(err, sql.ErrNoRows) {
		return sp, tiermove.ErrNoRow
	}
	return sp, err
}

func (t *tierTx) Above(ctx context.Context, sp span) ([]string, error) {
	return nodeIDs(ctx, t.tx, `SELECT id FROM nodes WHERE conversation = ? AND level > ? AND last_seq >= ? AND first_seq <= ?`,
		t.pk, sp.Level, sp.First, sp.Last)
}

func (t *tierTx) StoredNodes(ctx context.Context, ids []string) ([]string, error) {
	b, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	return nodeIDs(ctx, t.tx, `SELECT id FROM nodes WHERE conversation = ? AND id IN (SELECT value FROM json_each(?))`, t.pk, string(b))
}

// nodeIDs returns the ids the query q selects.
func nodeIDs(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// RestoreStubs runs tiermove.RestoreStubs, then takes the cold spans
// whose turns it put back into turns_fts off the list of those an
// earlier version left unindexed (coldfts.go).
func (t *tierTx) RestoreStubs(ctx context.Context, first, last int64) error {
	t.unindexed = map[int64]bool{}
	if err := tiermove.RestoreStubs(ctx, t, first, last); err != nil {
		return err
	}
	for span, listed := range t.unindexed {
		if listed {
			if _, err := t.tx.ExecContext(ctx, `DELETE FROM cold_unindexed WHERE node = ?`, span); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *tierTx) StubRows(ctx context.Context, after, to int64, limit int) ([]spanRow, []spanfmt.Stub, error) {
	turns, stubs, pks, err := rowBatch(ctx, t.tx, t.pk, tierWarm, tierCold, after, to, limit)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]spanRow, len(turns))
	for i := range turns {
		rows[i] = spanRow{Key: pks[i], Tier: stubs[i].tier, Turn: turns[i]}
	}
	return rows, fmtStubs(stubs), nil
}

func (t *tierTx) FromCopies(ctx context.Context, ts []strata.Turn, stubs []spanfmt.Stub) ([]strata.Turn, error) {
	return t.s.hydrateStubs(ctx, t.tx, t.namespace, t.conversation, ts, stubs)
}

// Kept: a cold row of this version leaves its role to its segment.
func (t *tierTx) Kept() tiermove.Kept { return tiermove.Kept{} }

func (t *tierTx) NodeName(ctx context.Context, pk int64) string { return nodeName(ctx, t.tx, pk) }

// RestoreRows restores row by row, then indexes the batch's cold turns
// whose span an earlier version left out of turns_fts, so that FTS5
// flushes once per batch.
func (t *tierTx) RestoreRows(ctx context.Context, rows []spanRow, stubs []spanfmt.Stub) error {
	for i, r := range rows {
		if err := restoreRow(ctx, t.tx, r.Key, r.Tier, r.Turn); err != nil {
			return fmt.Errorf("%s: %w", nodeName(ctx, t.tx, stubs[i].Span), err)
		}
	}
	for _, st := range stubs {
		if st.Tier == tierCold {
			if _, seen := t.unindexed[st.Span]; !seen {
				ok, err := coldIndexed(ctx, t.tx, st.Span)
				if err != nil {
					return err
				}
				t.unindexed[st.Span] = !ok
			}
		}
	}
	ins, err := t.tx.PrepareContext(ctx, `INSERT INTO turns_fts (rowid, text, scope) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	sc := scope(t.pk, t.namespace)
	for i, r := range rows {
		if r.Tier == tierCold && t.unindexed[stubs[i].Span] {
			if _, err := ins.ExecContext(ctx, r.Key, t.s.fts.text(r.Turn.Text()), sc); err != nil {
				return fmt.Errorf("indexing turn %d: %w", r.Turn.Seq, err)
			}
		}
	}
	return nil
}

func (t *tierTx) Stubs(ctx context.Context, first, last int64) (int64, error) {
	var n int64
	err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM turns WHERE conversation = ? AND tier <> ? AND seq BETWEEN ? AND ?`,
		t.pk, tierHot, first, last).Scan(&n)
	return n, err
}

// DropRestored leaves the records to scrubArchive, after the commit.
func (t *tierTx) DropRestored(ctx context.Context, sp span) error {
	t.scrub = true
	return nil
}

func (t *tierTx) DropNodes(ctx context.Context, ids []string) error {
	if err := t.s.dropNodesByID(ctx, t.tx, t.namespace, t.pk, ids); err != nil {
		return err
	}
	pyramidAt("replace-removed")
	return nil
}

// dropNodesByID unindexes and deletes the nodes ids of conversation pk,
// which the caller has checked exist.
func (s *Store) dropNodesByID(ctx context.Context, tx *sql.Tx, namespace string, pk int64, ids []string) error {
	del, err := tx.PrepareContext(ctx, `INSERT INTO nodes_fts (nodes_fts, rowid, text, scope) VALUES ('delete', ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer del.Close()
	if err := unframeParents(ctx, tx, s.text, pk, ids); err != nil {
		return err
	}
	sc := scope(pk, namespace)
	for _, id := range ids {
		var rowid int64
		var summary string
		var derived bool
		err := tx.QueryRowContext(ctx, `DELETE FROM nodes WHERE conversation = ? AND id = ? RETURNING pk, summary, derived`, pk, id).
			Scan(&rowid, &summary, &derived)
		if err != nil {
			return fmt.Errorf("removing node %s: %w", id, err)
		}
		if derived {
			continue
		}
		if summary, err = s.text.text(ctx, tx, summary); err != nil {
			return fmt.Errorf("removing node %s: %w", id, err)
		}
		if _, err := del.ExecContext(ctx, rowid, s.fts.text(summary), sc); err != nil {
			return fmt.Errorf("unindexing node %s: %w", id, err)
		}
	}
	return nil
}
