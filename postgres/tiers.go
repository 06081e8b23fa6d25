package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
	"github.com/strata-memory/strata/internal/spanfmt"
	"github.com/strata-memory/strata/internal/tiermove"
)

// This file moves the raw turns of level-1 spans between tiers, as
// docs/tiers.md describes, with the formats of package spanfmt: a warm
// span's turns are one CTF block on its node, a cold span's are records
// of archive segments (package archive) kept in the archive table.
//
// Since the segments live in the same database as the rows, every move
// is one transaction: the new copy is written and read back (the warm
// block decoded and compared, the segment read back through Blobs.Put's
// check), the node is pointed at it, the rows are slimmed and the
// full-text entries of cold turns removed, and all of it commits or none
// does. A kill at any instant leaves the span as it was or moved, never
// half-way, and no record outlives the span that owns it. Writers of one
// conversation, in any process, take their turns on its row's lock
// (conversationPK with lock), which every write to a conversation takes
// first: two processes moving the same span one after the other find it
// moved the second time, and skip it.

// stub is a turn row whose content lives with its span.
type stub struct {
	index int    // in the result being filled
	tier  int    // turns.tier
	span  *int64 // pk of the level-1 node holding the content
}

// scanStubbed reads rows of turnCols, tier and span, and closes them: the
// turns, and a stub for each turn whose content lives with its span
// (every tier but hot; with withExpired, an expired turn's row keeps its
// text and is no stub either).
func scanStubbed(rows pgx.Rows, withExpired bool) ([]strata.Turn, []stub, error) {
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
	rows.Close()
	return turns, stubs, rows.Err()
}

// span is a level-1 node as the tier code reads it.
type span = tiermove.Span

const spanCols = `pk, id, level, first_seq, last_seq, tier, block, segments`

func scanSpan(row pgx.Row) (span, error) {
	var sp span
	var periods *string
	if err := row.Scan(&sp.PK, &sp.ID, &sp.Level, &sp.First, &sp.Last, &sp.Tier, &sp.Block, &periods); err != nil {
		return sp, err
	}
	if periods != nil {
		if err := json.Unmarshal([]byte(*periods), &sp.Periods); err != nil {
			return sp, fmt.Errorf("node %s: segments: %w", sp.ID, err)
		}
	}
	return sp, nil
}

// collectSpans reads the rows of spanCols.
func collectSpans(rows pgx.Rows) ([]span, error) {
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

// hydrate replaces the stubs of out (turn rows whose content lives with
// their span) by the whole turns from the spans' warm blocks or archive
// segments, and drops expired ones (spanfmt.Hydrate).
func (s *Store) hydrate(ctx context.Context, tx pgx.Tx, namespace, conversation string, out []strata.Turn, stubs []stub) ([]strata.Turn, error) {
	return s.hydrateStubs(ctx, tx, namespace, conversation, out, fmtStubs(stubs))
}

// hydrateStubs is hydrate over spanfmt's stubs.
func (s *Store) hydrateStubs(ctx context.Context, tx pgx.Tx, namespace, conversation string, out []strata.Turn, stubs []spanfmt.Stub) ([]strata.Turn, error) {
	if len(stubs) == 0 {
		return out, nil
	}
	return spanfmt.Hydrate(ctx, "postgres", s.segmentsIn(tx), namespace, conversation, out, stubs, func(pk int64) (spanfmt.Span, error) {
		sp, err := scanSpan(tx.QueryRow(ctx, `SELECT `+spanCols+` FROM nodes WHERE pk = $1`, pk))
		return spanfmt.Span{ID: sp.ID, First: sp.First, Last: sp.Last, Tier: sp.Tier, Block: sp.Block, Periods: sp.Periods}, err
	})
}

// fmtStubs returns stubs as spanfmt's.
func fmtStubs(stubs []stub) []spanfmt.Stub {
	sts := make([]spanfmt.Stub, len(stubs))
	for i, st := range stubs {
		sts[i] = spanfmt.Stub{Index: st.index, Tier: st.tier, HasSpan: st.span != nil}
		if st.span != nil {
			sts[i].Span = *st.span
		}
	}
	return sts
}

// loadSpans reads the level-1 nodes ids of conversation pk, in seq order:
// ENOTFOUND for an id the conversation does not have, EINVALID for a node
// of another level.
func loadSpans(ctx context.Context, tx pgx.Tx, pk int64, conversation string, ids []string) ([]span, error) {
	rows, err := tx.Query(ctx, `SELECT `+spanCols+` FROM nodes WHERE conversation = $1 AND id = ANY($2)
		ORDER BY first_seq`, pk, ids)
	if err != nil {
		return nil, err
	}
	spans, err := collectSpans(rows)
	if err != nil {
		return nil, err
	}
	found := map[string]bool{}
	for _, sp := range spans {
		if sp.Level != 1 {
			return nil, strata.Errorf(strata.EINVALID, "node %s of %q is at level %d: only level-1 spans change tier", sp.ID, conversation, sp.Level)
		}
		found[sp.ID] = true
	}
	for _, id := range ids {
		if !found[id] {
			return nil, strata.Errorf(strata.ENOTFOUND, "node %q not found in conversation %q", id, conversation)
		}
	}
	return spans, nil
}

// spanRow is a turn of a span being moved, with its tier.
type spanRow = tiermove.Row

// spanTurns reads a span's whole turns (from rows, its warm block or its
// segments).
func (s *Store) spanTurns(ctx context.Context, tx pgx.Tx, namespace, conversation string, pk int64, sp span) ([]spanRow, error) {
	rows, err := tx.Query(ctx, `SELECT `+turnCols+`, t.tier, t.span FROM turns t
		WHERE t.conversation = $1 AND t.seq BETWEEN $2 AND $3 ORDER BY t.seq`, pk, sp.First, sp.Last)
	if err != nil {
		return nil, fmt.Errorf("turns of node %s: %w", sp.ID, err)
	}
	turns, stubs, err := scanStubbed(rows, false)
	if err != nil {
		return nil, fmt.Errorf("turns of node %s: %w", sp.ID, err)
	}
	out := make([]spanRow, len(turns)) // hot (tier 0) but where a stub says otherwise
	for _, st := range stubs {
		out[st.index].Tier = st.tier
	}
	if int64(len(out)) != sp.Last-sp.First+1 {
		return nil, fmt.Errorf("node %s covers turns %d-%d but %d are stored", sp.ID, sp.First, sp.Last, len(out))
	}
	turns, err = s.hydrate(ctx, tx, namespace, conversation, turns, stubs)
	if err != nil {
		return nil, err
	}
	if len(turns) != len(out) {
		return nil, fmt.Errorf("node %s has expired turns", sp.ID)
	}
	for i := range out {
		out[i].Turn = turns[i]
	}
	return out, nil
}

// slim leaves the unpinned rows of a span ($4..$5 of conversation $3)
// below tier $1 without their content, pointing at the span's node $2;
// cold rows also leave their speaker name and session label to the
// segment.
const slim = `UPDATE turns SET tier = $1, span = $2, content = NULL, model = '', tool_calls = NULL,
	tool_results = NULL, tags = NULL, metadata = NULL, crc = NULL,
	name = CASE WHEN $1 >= 2 THEN '' ELSE name END,
	session_label = CASE WHEN $1 >= 2 THEN '' ELSE session_label END
	WHERE conversation = $3 AND seq BETWEEN $4 AND $5 AND tier < $1 AND importance < 0.8`

// Demote moves the raw content of level-1 nodes to the warm or cold tier;
// see strata.TierStore and tiermove.Demote, which this runs in one
// transaction holding the conversation's row lock. The archive segments
// are rows of the same database, written in the same transaction (each
// read back and compared by archive.Segments before it replaces the old
// one): a kill before the commit changes nothing.
func (s *Store) Demote(ctx context.Context, namespace, conversation string, ids []string, to strata.Tier, at time.Time) ([]strata.Move, error) {
	if err := tiermove.CheckDemote(conversation, to, at); err != nil {
		return nil, err
	}
	if _, err := toNanos(at, "demote: time of the move"); err != nil {
		return nil, err
	}
	var moves []strata.Move
	err := s.tierTx(ctx, namespace, conversation, true, func(t *tierTx) (err error) {
		moves, err = tiermove.Demote(ctx, t, ids, to, at)
		return err
	})
	if err != nil {
		return nil, wrap(fmt.Sprintf("moving spans of %q to %s", conversation, to), err)
	}
	return moves, nil
}

// tierTx is a transaction of one conversation as package tiermove drives
// it: its exported methods are the primitives of tiermove.Tx, documented
// there.
type tierTx struct {
	s                       *Store
	tx                      pgx.Tx
	namespace, conversation string
	pk                      int64
}

var _ tiermove.Tx = (*tierTx)(nil)

// tierTx runs fn in a transaction of conversation, holding its row lock
// if lock.
func (s *Store) tierTx(ctx context.Context, namespace, conversation string, lock bool, fn func(*tierTx) error) error {
	return s.tx(ctx, func(tx pgx.Tx) error {
		pk, err := conversationPK(ctx, tx, namespace, conversation, lock)
		if err != nil {
			return err
		}
		return fn(&tierTx{s: s, tx: tx, namespace: namespace, conversation: conversation, pk: pk})
	})
}

func (t *tierTx) Spans(ctx context.Context, ids []string) ([]span, error) {
	return loadSpans(ctx, t.tx, t.pk, t.conversation, ids)
}

func (t *tierTx) SpanRows(ctx context.Context, sp span) ([]spanRow, error) {
	return t.s.spanTurns(ctx, t.tx, t.namespace, t.conversation, t.pk, sp)
}

func (t *tierTx) SetWarm(ctx context.Context, sp span, block []byte) error {
	_, err := t.tx.Exec(ctx, `UPDATE nodes SET tier = $1, block = $2 WHERE pk = $3`, tierWarm, block, sp.PK)
	return err
}

func (t *tierTx) Slim(ctx context.Context, sp span, tier int, first, last int64) (int64, error) {
	tag, err := t.tx.Exec(ctx, slim, tier, sp.PK, t.pk, first, last)
	return tag.RowsAffected(), err
}

func (t *tierTx) SegmentBytes(ctx context.Context, period string) (int64, error) {
	var n int64
	err := t.tx.QueryRow(ctx, `SELECT bytes FROM segments WHERE conversation = $1 AND day = $2`, t.pk, period).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

func (t *tierTx) MergeRecords(ctx context.Context, period string, recs []archive.Record) error {
	info, err := t.s.segmentsIn(t.tx).Merge(ctx, archive.Key(t.namespace, t.conversation, period), recs)
	if err != nil {
		return err
	}
	return putSegment(ctx, t.tx, t.pk, period, info)
}

// SetCold points the node at its segments. Its turns keep their rows in
// turn_index (coldindex.go).
func (t *tierTx) SetCold(ctx context.Context, sp span, periods []string, at time.Time) error {
	coldAt, err := toNanos(at, "demote: time of the move")
	if err != nil {
		return err
	}
	dj, _ := json.Marshal(periods) // a []string always marshals
	_, err = t.tx.Exec(ctx, `UPDATE nodes SET tier = $1, block = NULL, segments = $2, cold_at = $3 WHERE pk = $4`,
		tierCold, string(dj), coldAt, sp.PK)
	return err
}

// putSegment records what the segment of period of conversation pk holds
// after it was written: its row in the segments table, or no row if it
// holds no record. The table's column day holds the segment's period: a
// month ("YYYY-MM") since segments cover months, a day ("YYYY-MM-DD") for
// the day segments of earlier versions; the name is the schema's first.
func putSegment(ctx context.Context, tx pgx.Tx, pk int64, period string, info archive.Info) error {
	var err error
	if info.Records == 0 {
		_, err = tx.Exec(ctx, `DELETE FROM segments WHERE conversation = $1 AND day = $2`, pk, period)
	} else {
		_, err = tx.Exec(ctx, `INSERT INTO segments (conversation, day, records, bytes, raw_bytes)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT (conversation, day) DO UPDATE SET
			records = excluded.records, bytes = excluded.bytes, raw_bytes = excluded.raw_bytes`,
			pk, period, info.Records, info.Bytes, info.RawBytes)
	}
	if err != nil {
		return fmt.Errorf("segment %s: %w", period, err)
	}
	return nil
}

// dropRecords removes the records of seqs first..last from the segments
// of periods, and records what each segment holds afterwards.
func (s *Store) dropRecords(ctx context.Context, tx pgx.Tx, namespace, conversation string, pk int64, periods []string, first, last int64) error {
	seg := s.segmentsIn(tx)
	for _, period := range periods {
		info, err := seg.Remove(ctx, archive.Key(namespace, conversation, period), first, last)
		if err != nil {
			return err
		}
		if err := putSegment(ctx, tx, pk, period, info); err != nil {
			return err
		}
	}
	return nil
}

// Expire deletes the archived raw content of cold level-1 nodes, except
// pinned turns, and keeps an audit record per node; see strata.TierStore
// and tiermove.Expire. One transaction, holding the conversation's row
// lock, records each expiry, marks the node and its rows expired,
// rewrites the span's segments without its records (deleting those left
// empty) and clears the node's list of segments.
func (s *Store) Expire(ctx context.Context, namespace, conversation string, ids []string, rule string, at time.Time, dryRun bool) ([]strata.Expiry, error) {
	if err := tiermove.CheckExpire(rule); err != nil {
		return nil, err
	}
	atNanos, err := toNanos(at.UTC(), "expire: time")
	if err != nil {
		return nil, err
	}
	if atNanos == nil {
		return nil, strata.Errorf(strata.EINVALID, "expire: the time of the expiry is zero")
	}
	var out []strata.Expiry
	err = s.tierTx(ctx, namespace, conversation, !dryRun, func(t *tierTx) (err error) {
		if out, err = tiermove.Expire(ctx, t, conversation, ids, rule, at, dryRun); err != nil {
			return err
		}
		if dryRun {
			return errDryRun // roll back: nothing changes
		}
		return nil
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return nil, wrap(fmt.Sprintf("expiring spans of %q", conversation), err)
	}
	return out, nil
}

func (t *tierTx) Figures(ctx context.Context, sp span, ex *strata.Expiry) error {
	if err := t.tx.QueryRow(ctx, `SELECT count(*), coalesce(sum(size), 0)::bigint FROM turns
		WHERE conversation = $1 AND seq BETWEEN $2 AND $3 AND tier = $4`, t.pk, sp.First, sp.Last, tierCold).
		Scan(&ex.Turns, &ex.Bytes); err != nil {
		return err
	}
	var coldAt, newest *int64
	if err := t.tx.QueryRow(ctx, `SELECT cold_at, "end" FROM nodes WHERE pk = $1`, sp.PK).Scan(&coldAt, &newest); err != nil {
		return err
	}
	ex.ColdAt, ex.NewestTurn = fromNanos(coldAt), fromNanos(newest)
	return nil
}

func (t *tierTx) ExpireSpan(ctx context.Context, sp span, ex strata.Expiry) error {
	at, err := toNanos(ex.At, "expire: time")
	if err != nil {
		return err
	}
	coldAt, _ := toNanos(ex.ColdAt, "cold_at") // read from the node: in range
	newest, _ := toNanos(ex.NewestTurn, "end")
	if _, err := t.tx.Exec(ctx, `INSERT INTO expiries (conversation, node, first_seq, last_seq, turns, bytes, segments, rule, at, cold_at, newest_turn)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, t.pk, sp.ID, sp.First, sp.Last, ex.Turns, ex.Bytes,
		jsonList(sp.Periods), ex.Rule, at, coldAt, newest); err != nil {
		return err
	}
	if _, err := t.tx.Exec(ctx, `UPDATE nodes SET tier = $1 WHERE pk = $2`, tierExpired, sp.PK); err != nil {
		return err
	}
	// An expired turn has no words left to be found by.
	if _, err := t.tx.Exec(ctx, `DELETE FROM turn_index i USING turns t
		WHERE i.conversation = $1 AND i.seq BETWEEN $2 AND $3 AND t.conversation = i.conversation AND t.seq = i.seq AND t.tier = $4`,
		t.pk, sp.First, sp.Last, tierCold); err != nil {
		return err
	}
	_, err = t.tx.Exec(ctx, `UPDATE turns SET tier = $1 WHERE conversation = $2 AND seq BETWEEN $3 AND $4 AND tier = $5`,
		tierExpired, t.pk, sp.First, sp.Last, tierCold)
	return err
}

// DropRecords rewrites the segments in the transaction.
func (t *tierTx) DropRecords(ctx context.Context, sp span) error {
	if err := t.s.dropRecords(ctx, t.tx, t.namespace, t.conversation, t.pk, sp.Periods, sp.First, sp.Last); err != nil {
		return fmt.Errorf("node %s: %w", sp.ID, err)
	}
	_, err := t.tx.Exec(ctx, `UPDATE nodes SET segments = NULL WHERE pk = $1`, sp.PK)
	return err
}

// errDryRun rolls back the transaction of a dry run.
var errDryRun = errors.New("dry run")

// Expiries returns the audit records of the conversation (of the whole
// namespace if conversation is ""), oldest first; see strata.TierStore.
func (s *Store) Expiries(ctx context.Context, namespace, conversation string) ([]strata.Expiry, error) {
	q := `SELECT c.id, e.node, e.first_seq, e.last_seq, e.turns, e.bytes, e.segments, e.rule, e.at, e.cold_at, e.newest_turn
		FROM expiries e JOIN conversations c ON c.pk = e.conversation WHERE c.namespace = $1`
	args := []any{namespace}
	if conversation != "" {
		if _, err := conversationPK(ctx, s.pool, namespace, conversation, false); err != nil {
			return nil, err
		}
		q += ` AND c.id = $2`
		args = append(args, conversation)
	}
	rows, err := s.pool.Query(ctx, q+` ORDER BY e.pk`, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: expiries: %w", err)
	}
	defer rows.Close()
	out := []strata.Expiry{}
	for rows.Next() {
		var e strata.Expiry
		var periods *string
		var at int64
		var coldAt, newest *int64
		if err := rows.Scan(&e.Conversation, &e.NodeID, &e.FirstSeq, &e.LastSeq, &e.Turns, &e.Bytes, &periods, &e.Rule, &at,
			&coldAt, &newest); err != nil {
			return nil, fmt.Errorf("postgres: expiries: %w", err)
		}
		e.ColdAt, e.NewestTurn = fromNanos(coldAt), fromNanos(newest)
		if periods != nil {
			if err := json.Unmarshal([]byte(*periods), &e.Segments); err != nil {
				return nil, fmt.Errorf("postgres: expiries: node %s: segments: %w", e.NodeID, err)
			}
		}
		e.At = time.Unix(0, at).UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: expiries: %w", err)
	}
	return out, nil
}
