package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/internal/spanfmt"
	"github.com/strata-memory/strata/internal/tiermove"
)

// Tiers as stored in turns.tier and nodes.tier: the codes every store
// shares (spanfmt).
const (
	tierHot     = spanfmt.TierHot
	tierWarm    = spanfmt.TierWarm
	tierCold    = spanfmt.TierCold
	tierExpired = spanfmt.TierExpired
)

var (
	tierCode = spanfmt.TierCode
	tierName = spanfmt.TierName
)

// stub is a turn row whose content lives with its span.
type stub struct {
	index int           // in the result being filled
	tier  int           // turns.tier
	span  sql.NullInt64 // pk of the level-1 node holding the content
}

// scanStubbed reads rows of turnCols, tier and span, and closes them: the
// turns, and a stub for each turn whose content lives with its span
// (every tier but hot; with withExpired, an expired turn's row keeps its
// text and is no stub either).
func scanStubbed(rows *sql.Rows, withExpired bool) ([]strata.Turn, []stub, error) {
	defer rows.Close()
	turns := []strata.Turn{}
	var stubs []stub
	for rows.Next() {
		var st stub
		t, err := scanTurn(rows, &st.tier, &st.span)
		if err != nil {
			return nil, nil, err
		}
		if st.tier != tierHot && !(withExpired && st.tier == tierExpired) {
			st.index = len(turns)
			stubs = append(stubs, st)
		}
		turns = append(turns, t)
	}
	return turns, stubs, rows.Err()
}

// span is a level-1 node as the tier code reads it.
type span = tiermove.Span

const spanCols = `pk, id, level, first_seq, last_seq, tier, block, segments`

func scanSpan(row interface{ Scan(...any) error }) (span, error) {
	var sp span
	var periods sql.NullString
	if err := row.Scan(&sp.PK, &sp.ID, &sp.Level, &sp.First, &sp.Last, &sp.Tier, &sp.Block, &periods); err != nil {
		return sp, err
	}
	if periods.Valid {
		if err := json.Unmarshal([]byte(periods.String), &sp.Periods); err != nil {
			return sp, fmt.Errorf("node %s: segments: %w", sp.ID, err)
		}
	}
	return sp, nil
}

// hydrate replaces the stubs of out (turn rows whose content lives with
// their span) by the whole turns from the spans' warm blocks or archive
// segments, and drops expired ones (spanfmt.Hydrate).
func (s *Store) hydrate(ctx context.Context, q querier, namespace, conversation string, out []strata.Turn, stubs []stub) ([]strata.Turn, error) {
	return s.hydrateStubs(ctx, q, namespace, conversation, out, fmtStubs(stubs))
}

// hydrateStubs is hydrate over spanfmt's stubs.
func (s *Store) hydrateStubs(ctx context.Context, q querier, namespace, conversation string, out []strata.Turn, stubs []spanfmt.Stub) ([]strata.Turn, error) {
	if len(stubs) == 0 {
		return out, nil
	}
	return spanfmt.Hydrate(ctx, "sqlite", s.seg, namespace, conversation, out, stubs, func(pk int64) (spanfmt.Span, error) {
		sp, err := scanSpan(q.QueryRowContext(ctx, `SELECT `+spanCols+` FROM nodes WHERE pk = ?`, pk))
		return spanfmt.Span{ID: sp.ID, First: sp.First, Last: sp.Last, Tier: sp.Tier, Block: sp.Block, Periods: sp.Periods}, err
	})
}

// fmtStubs returns stubs as spanfmt's.
func fmtStubs(stubs []stub) []spanfmt.Stub {
	sts := make([]spanfmt.Stub, len(stubs))
	for i, st := range stubs {
		sts[i] = spanfmt.Stub{Index: st.index, Tier: st.tier, Span: st.span.Int64, HasSpan: st.span.Valid}
	}
	return sts
}

// loadSpans reads the level-1 nodes ids of conversation pk: ENOTFOUND for
// an id the conversation does not have, EINVALID for a node of another
// level.
func loadSpans(ctx context.Context, q querier, pk int64, conversation string, ids []string) ([]span, error) {
	b, err := json.Marshal(ids)
	if err != nil {
		return nil, strata.Errorf(strata.EINVALID, "node ids: %v", err)
	}
	rows, err := q.QueryContext(ctx, `SELECT `+spanCols+` FROM nodes
		WHERE conversation = ? AND id IN (SELECT value FROM json_each(?)) ORDER BY first_seq`, pk, string(b))
	if err != nil {
		return nil, fmt.Errorf("sqlite: nodes of %q: %w", conversation, err)
	}
	defer rows.Close()
	var out []span
	found := map[string]bool{}
	for rows.Next() {
		sp, err := scanSpan(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: nodes of %q: %w", conversation, err)
		}
		if sp.Level != 1 {
			return nil, strata.Errorf(strata.EINVALID, "node %s of %q is at level %d: only level-1 spans change tier", sp.ID, conversation, sp.Level)
		}
		found[sp.ID] = true
		out = append(out, sp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: nodes of %q: %w", conversation, err)
	}
	for _, id := range ids {
		if !found[id] {
			return nil, strata.Errorf(strata.ENOTFOUND, "node %q not found in conversation %q", id, conversation)
		}
	}
	return out, nil
}

// spanRow is a turn of a span being moved, with its row key and tier.
type spanRow = tiermove.Row

// spanTurns reads a span's whole turns (from rows and its warm block).
func (s *Store) spanTurns(ctx context.Context, q querier, namespace, conversation string, pk int64, sp span) ([]spanRow, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+turnCols+`, t.tier, t.span, t.pk FROM turns t
		WHERE t.conversation = ? AND t.seq BETWEEN ? AND ? ORDER BY t.seq`, pk, sp.First, sp.Last)
	if err != nil {
		return nil, fmt.Errorf("sqlite: turns of node %s of %q: %w", sp.ID, conversation, err)
	}
	defer rows.Close()
	var out []spanRow
	var turns []strata.Turn
	var stubs []stub
	for rows.Next() {
		var st stub
		var r spanRow
		t, err := scanTurn(rows, &st.tier, &st.span, &r.Key)
		if err != nil {
			return nil, fmt.Errorf("sqlite: turns of node %s of %q: %w", sp.ID, conversation, err)
		}
		r.Tier = st.tier
		if st.tier != tierHot {
			st.index = len(turns)
			stubs = append(stubs, st)
		}
		out = append(out, r)
		turns = append(turns, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: turns of node %s of %q: %w", sp.ID, conversation, err)
	}
	rows.Close()
	if int64(len(out)) != sp.Last-sp.First+1 {
		return nil, fmt.Errorf("sqlite: node %s of %q covers turns %d-%d but %d are stored", sp.ID, conversation, sp.First, sp.Last, len(out))
	}
	turns, err = s.hydrate(ctx, q, namespace, conversation, turns, stubs)
	if err != nil {
		return nil, err
	}
	if len(turns) != len(out) {
		return nil, fmt.Errorf("sqlite: node %s of %q has expired turns", sp.ID, conversation)
	}
	for i := range out {
		out[i].Turn = turns[i]
	}
	return out, nil
}

// slim is the update that leaves a turn row without its content; cold
// rows also leave their role, speaker name and session label to the
// segment (a cold row is read through its segment's record, which holds
// them; 6.5 bytes a turn on a million synthetic ones).
const slim = `UPDATE turns SET tier = ?1, span = ?2, content = '', model = '', tool_calls = NULL,
	tool_results = NULL, tags = NULL, metadata = NULL, crc = NULL,
	role = iif(?1 >= 2, '', role), name = iif(?1 >= 2, '', name), session_label = iif(?1 >= 2, '', session_label)
	WHERE conversation = ?3 AND seq BETWEEN ?4 AND ?5 AND tier < ?6 AND importance < ` + pinnedLiteral

// Demote moves the raw content of level-1 nodes to the warm or cold tier;
// see strata.TierStore and tiermove.Demote, which this runs in one
// transaction holding the write lock. Cold segments are files, merged
// (written to a temporary file, verified, renamed into place) before the
// transaction that points the nodes at them commits. A kill between the
// two leaves records in a segment for a span still warm: nothing is lost,
// and the next Demote rewrites them in place if it picks the same segment.
// If it picks another (the month filled meanwhile, or a day segment of an
// earlier version holds them), they stay: a span's seqs are looked up
// only in the segments it names, so they are never read, and the next
// scrub of the archive (scrubArchive) removes them. The write lock is
// held throughout, so that no other process rewrites the same segment at
// the same time.
func (s *Store) Demote(ctx context.Context, namespace, conversation string, ids []string, to strata.Tier, at time.Time) ([]strata.Move, error) {
	if err := tiermove.CheckDemote(conversation, to, at); err != nil {
		return nil, err
	}
	fail := func(err error) error {
		if strata.ErrorCode(err) != strata.EINTERNAL {
			return err
		}
		return fmt.Errorf("sqlite: moving spans of %q to %s: %w", conversation, to, err)
	}
	t, err := s.beginTier(ctx, s.w, namespace, conversation, fail)
	if err != nil {
		return nil, err
	}
	defer t.tx.Rollback()
	moves, err := tiermove.Demote(ctx, t, ids, to, at)
	if err == nil {
		err = t.tx.Commit()
	}
	if err != nil {
		return nil, fail(err)
	}
	return moves, nil
}

// tierTx is a transaction of one conversation as package tiermove drives
// it: its exported methods are the primitives of tiermove.Tx, documented
// there.
type tierTx struct {
	s                       *Store
	tx                      *sql.Tx
	namespace, conversation string
	pk                      int64
	expired                 []span         // spans whose records dropExpired removes after the commit
	scrub                   bool           // whether scrubArchive runs after the commit
	unindexed               map[int64]bool // by cold span restored: whether cold_unindexed lists it
}

var _ tiermove.Tx = (*tierTx)(nil)

// beginTier begins a transaction of conversation on db for tiermove.
func (s *Store) beginTier(ctx context.Context, db *sql.DB, namespace, conversation string, wrap func(error) error) (*tierTx, error) {
	tx, pk, err := s.beginIn(ctx, db, namespace, conversation, wrap)
	if err != nil {
		return nil, err
	}
	return &tierTx{s: s, tx: tx, namespace: namespace, conversation: conversation, pk: pk}, nil
}

func (t *tierTx) Spans(ctx context.Context, ids []string) ([]span, error) {
	return loadSpans(ctx, t.tx, t.pk, t.conversation, ids)
}

func (t *tierTx) SpanRows(ctx context.Context, sp span) ([]spanRow, error) {
	return t.s.spanTurns(ctx, t.tx, t.namespace, t.conversation, t.pk, sp)
}

func (t *tierTx) SetWarm(ctx context.Context, sp span, block []byte) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE nodes SET tier = ?, block = ? WHERE pk = ?`, tierWarm, block, sp.PK)
	return err
}

func (t *tierTx) Slim(ctx context.Context, sp span, tier int, first, last int64) (int64, error) {
	res, err := t.tx.ExecContext(ctx, slim, tier, sp.PK, t.pk, first, last, tier)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t *tierTx) SegmentBytes(ctx context.Context, period string) (int64, error) {
	var n int64
	err := t.tx.QueryRowContext(ctx, `SELECT bytes FROM segments WHERE conversation = ? AND day = ?`, t.pk, period).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// MergeRecords writes the segment file before the transaction commits
// (see Demote).
func (t *tierTx) MergeRecords(ctx context.Context, period string, recs []archive.Record) error {
	info, err := t.s.seg.Merge(ctx, archive.Key(t.namespace, t.conversation, period), recs)
	if err != nil {
		return err
	}
	pyramidAt("importance-archived") // where the kill tests stop a SetImportance
	return putSegment(ctx, t.tx, t.pk, period, info)
}

// SetCold points the node at its segments. Its turns keep their entries
// in turns_fts (coldfts.go).
func (t *tierTx) SetCold(ctx context.Context, sp span, periods []string, at time.Time) error {
	pj, _ := json.Marshal(periods)
	_, err := t.tx.ExecContext(ctx, `UPDATE nodes SET tier = ?, block = NULL, segments = ?, cold_at = ? WHERE pk = ?`,
		tierCold, string(pj), at.UnixNano(), sp.PK)
	return err
}

// Expire deletes the archived raw content of cold level-1 nodes, except
// pinned turns, and keeps an audit record per node; see strata.TierStore
// and tiermove.Expire. One transaction records the expiry and marks the
// node and its rows; the segments are rewritten without the span
// afterwards, in a second one that holds the write lock (the node keeps
// naming its segments until then, so a kill in between is finished by the
// next Expire or Demote).
func (s *Store) Expire(ctx context.Context, namespace, conversation string, ids []string, rule string, at time.Time, dryRun bool) ([]strata.Expiry, error) {
	fail := func(err error) error {
		if strata.ErrorCode(err) != strata.EINTERNAL {
			return err
		}
		return fmt.Errorf("sqlite: expiring spans of %q: %w", conversation, err)
	}
	if err := tiermove.CheckExpire(rule); err != nil {
		return nil, err
	}
	db := s.w
	if dryRun {
		db = s.r
	}
	t, err := s.beginTier(ctx, db, namespace, conversation, fail)
	if err != nil {
		return nil, err
	}
	defer t.tx.Rollback()
	out, err := tiermove.Expire(ctx, t, conversation, ids, rule, at, dryRun)
	if err != nil {
		return nil, fail(err)
	}
	if dryRun {
		return out, nil
	}
	if err := t.tx.Commit(); err != nil {
		return nil, fail(err)
	}
	if err := s.dropExpired(ctx, namespace, conversation, t.pk, t.expired); err != nil {
		return out, err
	}
	return out, nil
}

func (t *tierTx) Figures(ctx context.Context, sp span, ex *strata.Expiry) error {
	if err := t.tx.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(size), 0) FROM turns
		WHERE conversation = ? AND seq BETWEEN ? AND ? AND tier = ?`, t.pk, sp.First, sp.Last, tierCold).
		Scan(&ex.Turns, &ex.Bytes); err != nil {
		return err
	}
	var coldAt, newest sql.NullInt64
	if err := t.tx.QueryRowContext(ctx, `SELECT cold_at, "end" FROM nodes WHERE pk = ?`, sp.PK).Scan(&coldAt, &newest); err != nil {
		return err
	}
	ex.ColdAt, ex.NewestTurn = fromNanos(coldAt), fromNanos(newest)
	return nil
}

func (t *tierTx) ExpireSpan(ctx context.Context, sp span, ex strata.Expiry) error {
	pj, _ := json.Marshal(sp.Periods)
	coldAt, _ := toNanos(ex.ColdAt, "cold_at") // read from the node: in range
	newest, _ := toNanos(ex.NewestTurn, "end")
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO expiries (conversation, node, first_seq, last_seq, turns, bytes, segments, rule, at, cold_at, newest_turn)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, t.pk, sp.ID, sp.First, sp.Last, ex.Turns, ex.Bytes, string(pj), ex.Rule, ex.At.UnixNano(),
		coldAt, newest); err != nil {
		return err
	}
	if err := t.s.expireRows(ctx, t.tx, t.namespace, t.conversation, t.pk, sp); err != nil {
		return err
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE nodes SET tier = ? WHERE pk = ?`, tierExpired, sp.PK); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `UPDATE turns SET tier = ? WHERE conversation = ? AND seq BETWEEN ? AND ? AND tier = ?`,
		tierExpired, t.pk, sp.First, sp.Last, tierCold)
	return err
}

// DropRecords leaves sp to dropExpired, after the commit: segment files
// are rewritten under the write lock once the span is expired for good.
func (t *tierTx) DropRecords(ctx context.Context, sp span) error {
	t.expired = append(t.expired, sp)
	return nil
}

// putSegment records what the segment of period holds after it was
// written: its row in the segments table, or no row if it holds no
// record. The table's column day holds the segment's period: a month
// ("YYYY-MM") since segments cover months, a day ("YYYY-MM-DD") for the
// day segments of earlier versions; the name is the schema's first.
func putSegment(ctx context.Context, q querier, pk int64, period string, info archive.Info) error {
	var err error
	if info.Records == 0 {
		_, err = q.ExecContext(ctx, `DELETE FROM segments WHERE conversation = ? AND day = ?`, pk, period)
	} else {
		_, err = q.ExecContext(ctx, `INSERT INTO segments (conversation, day, records, bytes, raw_bytes)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (conversation, day) DO UPDATE SET
			records = excluded.records, bytes = excluded.bytes, raw_bytes = excluded.raw_bytes`,
			pk, period, info.Records, info.Bytes, info.RawBytes)
	}
	if err != nil {
		return fmt.Errorf("segment %s: %w", period, err)
	}
	return nil
}

// expireRows readies the cold rows of span sp, about to expire: it takes
// them out of turns_fts (an expired turn has no words left to be found
// by) and gives them their roles back from the span's segments (an
// expired turn's row is all that is left of it, and it keeps its role as
// a warm row does). A span whose segments cannot be read (a file removed
// by hand) expires anyway: its rows keep no role, and their index entries
// stay; search drops a hit on a turn that has no content.
func (s *Store) expireRows(ctx context.Context, tx *sql.Tx, namespace, conversation string, pk int64, sp span) error {
	indexed, err := coldIndexed(ctx, tx, sp.PK)
	if err != nil {
		return err
	}
	var missing int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM turns WHERE conversation = ? AND seq BETWEEN ? AND ? AND tier = ? AND role = ''`,
		pk, sp.First, sp.Last, tierCold).Scan(&missing); err != nil {
		return err
	}
	if missing == 0 && !indexed {
		return nil
	}
	rows, err := s.spanTurns(ctx, tx, namespace, conversation, pk, sp)
	if err != nil {
		return nil
	}
	up, err := tx.PrepareContext(ctx, `UPDATE turns SET role = ? WHERE pk = ? AND tier = ? AND role = ''`)
	if err != nil {
		return err
	}
	defer up.Close()
	del, err := tx.PrepareContext(ctx, `INSERT INTO turns_fts (turns_fts, rowid, text, scope) VALUES ('delete', ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer del.Close()
	sc := scope(pk, namespace)
	for _, r := range rows {
		if r.Tier != tierCold {
			continue
		}
		if missing > 0 {
			if _, err := up.ExecContext(ctx, string(r.Turn.Role), r.Key, tierCold); err != nil {
				return fmt.Errorf("turn %d: %w", r.Turn.Seq, err)
			}
		}
		if indexed {
			if _, err := del.ExecContext(ctx, r.Key, s.fts.text(r.Turn.Text()), sc); err != nil {
				return fmt.Errorf("unindexing turn %d: %w", r.Turn.Seq, err)
			}
		}
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM cold_unindexed WHERE node = ?`, sp.PK)
	return err
}

// dropExpired rewrites the segments of expired spans without them, then
// clears the spans' segment lists.
func (s *Store) dropExpired(ctx context.Context, namespace, conversation string, pk int64, spans []span) error {
	if len(spans) == 0 {
		return nil
	}
	fail := func(err error) error {
		return fmt.Errorf("sqlite: removing expired turns of %q: %w", conversation, err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	for _, sp := range spans {
		for _, p := range sp.Periods {
			info, err := s.seg.Remove(ctx, archive.Key(namespace, conversation, p), sp.First, sp.Last)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fail(err)
			}
			if err := putSegment(ctx, tx, pk, p, info); err != nil {
				return fail(err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE nodes SET segments = NULL WHERE pk = ?`, sp.PK); err != nil {
			return fail(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}

// Expiries returns the retention audit records, oldest first.
func (s *Store) Expiries(ctx context.Context, namespace, conversation string) ([]strata.Expiry, error) {
	q := `SELECT c.id, e.node, e.first_seq, e.last_seq, e.turns, e.bytes, e.segments, e.rule, e.at, e.cold_at, e.newest_turn
		FROM expiries e JOIN conversations c ON c.pk = e.conversation WHERE c.namespace = ?`
	args := []any{namespace}
	if conversation != "" {
		if _, err := conversationPK(ctx, s.r, namespace, conversation); err != nil {
			return nil, err
		}
		q += ` AND c.id = ?`
		args = append(args, conversation)
	}
	rows, err := s.r.QueryContext(ctx, q+` ORDER BY e.pk`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: expiries: %w", err)
	}
	defer rows.Close()
	out := []strata.Expiry{}
	for rows.Next() {
		var e strata.Expiry
		var periods sql.NullString
		var at int64
		var coldAt, newest sql.NullInt64
		if err := rows.Scan(&e.Conversation, &e.NodeID, &e.FirstSeq, &e.LastSeq, &e.Turns, &e.Bytes, &periods, &e.Rule, &at,
			&coldAt, &newest); err != nil {
			return nil, fmt.Errorf("sqlite: expiries: %w", err)
		}
		e.ColdAt, e.NewestTurn = fromNanos(coldAt), fromNanos(newest)
		if periods.Valid {
			_ = json.Unmarshal([]byte(periods.String), &e.Segments)
		}
		e.At = time.Unix(0, at).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: expiries: %w", err)
	}
	return out, nil
}

// tierStats fills the tier and archive figures of st, per conversation and
// in total.
func (s *Store) tierStats(ctx context.Context, namespace string, st *strata.Stats) error {
	per := map[string]*strata.ConversationStats{}
	for i := range st.PerConversation {
		c := &st.PerConversation[i]
		c.Tiers = emptyTiers()
		per[c.ID] = c
	}
	st.Tiers = emptyTiers()
	add := func(id string, tier int, f func(*strata.TierStats)) {
		if c := per[id]; c != nil {
			f(&c.Tiers[tier])
		}
		f(&st.Tiers[tier])
	}
	queries := []struct {
		sql  string
		scan func(id string, tier int, a, b int64)
	}{
		{`SELECT c.id, t.tier, count(*), coalesce(sum(t.size), 0) FROM turns t JOIN conversations c ON c.pk = t.conversation
			WHERE c.namespace = ? GROUP BY c.id, t.tier`, func(id string, tier int, n, b int64) {
			add(id, tier, func(x *strata.TierStats) {
				x.Turns += n
				x.Bytes += b
				if tier == tierHot {
					x.StoredBytes += b
				}
			})
		}},
		{`SELECT c.id, n.tier, count(*), coalesce(sum(length(n.block)), 0) FROM nodes n JOIN conversations c ON c.pk = n.conversation
			WHERE c.namespace = ? AND n.level = 1 GROUP BY c.id, n.tier`, func(id string, tier int, n, b int64) {
			add(id, tier, func(x *strata.TierStats) {
				x.Spans += n
				if tier == tierWarm {
					x.StoredBytes += b
				}
			})
		}},
	}
	for _, q := range queries {
		rows, err := s.r.QueryContext(ctx, q.sql, namespace)
		if err != nil {
			return fmt.Errorf("sqlite: stats: %w", err)
		}
		for rows.Next() {
			var id string
			var tier int
			var a, b int64
			if err := rows.Scan(&id, &tier, &a, &b); err != nil {
				rows.Close()
				return fmt.Errorf("sqlite: stats: %w", err)
			}
			if tier >= tierHot && tier <= tierExpired {
				q.scan(id, tier, a, b)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("sqlite: stats: %w", err)
		}
	}
	return s.archiveStats(ctx, namespace, st, per)
}

// archiveStats adds to st, and to the conversations of per, the sizes of
// their archive segments, which count as stored bytes of the cold tier.
func (s *Store) archiveStats(ctx context.Context, namespace string, st *strata.Stats, per map[string]*strata.ConversationStats) error {
	rows, err := s.r.QueryContext(ctx, `SELECT c.id, count(*), sum(g.records), sum(g.bytes), sum(g.raw_bytes)
		FROM segments g JOIN conversations c ON c.pk = g.conversation WHERE c.namespace = ? GROUP BY c.id`, namespace)
	if err != nil {
		return fmt.Errorf("sqlite: stats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var a strata.ArchiveStats
		if err := rows.Scan(&id, &a.Segments, &a.Records, &a.Bytes, &a.RawBytes); err != nil {
			return fmt.Errorf("sqlite: stats: %w", err)
		}
		if c := per[id]; c != nil {
			c.Archive = withRatio(a)
			c.Tiers[tierCold].StoredBytes += a.Bytes
		}
		st.Archive.Segments += a.Segments
		st.Archive.Records += a.Records
		st.Archive.Bytes += a.Bytes
		st.Archive.RawBytes += a.RawBytes
		st.Tiers[tierCold].StoredBytes += a.Bytes
	}
	st.Archive = withRatio(st.Archive)
	return rows.Err()
}

func emptyTiers() []strata.TierStats {
	out := make([]strata.TierStats, len(strata.Tiers))
	for i, t := range strata.Tiers {
		out[i].Tier = t
	}
	return out
}

func withRatio(a strata.ArchiveStats) strata.ArchiveStats {
	if a.Bytes > 0 {
		a.Ratio = float64(a.RawBytes) / float64(a.Bytes)
	}
	return a
}

// archiveBytes is the size of every segment of the store, whatever the
// namespace.
func (s *Store) archiveBytes(ctx context.Context) (int64, error) {
	var n int64
	err := s.r.QueryRowContext(ctx, `SELECT coalesce(sum(bytes), 0) FROM segments`).Scan(&n)
	return n, err
}

// Vacuum compresses the node texts (training the store's dictionary
// first if it has none and holds enough text; see textcodec.go), merges
// the full-text indexes (so that the entries of turns moved to the
// archive are dropped, not just marked deleted) and rebuilds the database
// file, so that the pages freed by tiering and retention return to the
// file system.
func (s *Store) Vacuum(ctx context.Context) error {
	if _, err := s.CompressNodeTexts(ctx); err != nil {
		return fmt.Errorf("sqlite: vacuum %s: %w", s.path, err)
	}
	for _, q := range []string{
		`INSERT INTO turns_fts (turns_fts) VALUES ('optimize')`,
		`INSERT INTO nodes_fts (nodes_fts) VALUES ('optimize')`,
		`VACUUM`,
		`PRAGMA wal_checkpoint(TRUNCATE)`, // in WAL mode the file shrinks at the checkpoint
	} {
		if _, err := s.w.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("sqlite: vacuum %s: %w", s.path, err)
		}
	}
	return nil
}
