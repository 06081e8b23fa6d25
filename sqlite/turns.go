package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/spanfmt"
)

// turnCols are the columns scanTurn reads, for a turns table aliased t.
const turnCols = `t.seq, t.ext_id, t.session, t.session_label, t.role, t.name, t.content, t.time,
	t.model, t.tool_calls, t.tool_results, t.tokens, t.importance, t.tags, t.metadata, t.crc`

// insertTurn appends one turn unless its ext_id is already stored; the
// caller checks rows affected, so a skipped turn consumes no seq.
const insertTurn = `INSERT INTO turns (conversation, seq, ext_id, session, session_label, role, name,
	content, time, model, tool_calls, tool_results, tokens, importance, tags, metadata, size, crc)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (conversation, ext_id) DO NOTHING`

// encodedTurn is a turn's column values that need encoding, prepared before
// the write transaction begins.
type encodedTurn struct {
	extID, time                            any
	toolCalls, toolResults, tags, metadata any
	fts                                    string
}

// encodeTurn prepares t's encoded columns.
func encodeTurn(t *strata.Turn, i int) (encodedTurn, error) {
	var e encodedTurn
	var err error
	e.extID = nullString(t.ExtID)
	if e.time, err = toNanos(t.Time, fmt.Sprintf("turns[%d].time", i)); err != nil {
		return e, err
	}
	if len(t.ToolCalls) > 0 {
		b, err := spanfmt.ToolCallsJSON(t.ToolCalls)
		if err != nil {
			return e, strata.Errorf(strata.EINVALID, "turns[%d].tool_calls: %v", i, err)
		}
		e.toolCalls = string(b)
	}
	if len(t.ToolResults) > 0 {
		if e.toolResults, err = jsonText(t.ToolResults, i, "tool_results"); err != nil {
			return e, err
		}
	}
	if len(t.Tags) > 0 {
		if e.tags, err = jsonText(t.Tags, i, "tags"); err != nil {
			return e, err
		}
	}
	if len(t.Metadata) > 0 {
		if e.metadata, err = jsonText(t.Metadata, i, "metadata"); err != nil {
			return e, err
		}
	}
	return e, nil
}

// jsonText returns v as JSON text, or an EINVALID error naming the field.
func jsonText(v any, i int, field string) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, strata.Errorf(strata.EINVALID, "turns[%d].%s: %v", i, field, err)
	}
	return string(b), nil
}

// AppendTurns appends turns at the end of the conversation in one
// transaction, skipping those whose ExtID is already stored (including
// earlier in the same call). Turns with an empty ExtID are never skipped.
// It returns copies of the appended turns with Seq set. ENOTFOUND if the
// conversation does not exist.
func (s *Store) AppendTurns(ctx context.Context, namespace, conversation string, turns []strata.Turn) ([]strata.Turn, error) {
	return s.appendTurns(ctx, namespace, conversation, -1, turns)
}

// AppendTurnsAfter appends turns as AppendTurns does if the conversation
// ends at seq after; see strata.TurnStore.
func (s *Store) AppendTurnsAfter(ctx context.Context, namespace, conversation string, after int64, turns []strata.Turn) ([]strata.Turn, error) {
	if after < 0 {
		return nil, strata.Errorf(strata.EINVALID, "append turns to %q after seq %d: want 0 or more", conversation, after)
	}
	return s.appendTurns(ctx, namespace, conversation, after, turns)
}

// appendTurns appends turns; with after >= 0, only if the conversation
// ends at seq after.
func (s *Store) appendTurns(ctx context.Context, namespace, conversation string, after int64, turns []strata.Turn) ([]strata.Turn, error) {
	enc := make([]encodedTurn, len(turns))
	for i := range turns {
		var err error
		if enc[i], err = encodeTurn(&turns[i], i); err != nil {
			return nil, err
		}
		enc[i].fts = s.fts.text(turns[i].Text()) // content, tool calls and tool results
	}
	fail := func(err error) ([]strata.Turn, error) {
		if strata.ErrorCode(err) != strata.EINTERNAL {
			return nil, err
		}
		return nil, fmt.Errorf("sqlite: append turns to %q: %w", conversation, err)
	}

	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()

	tot, err := readTotals(ctx, tx, namespace, conversation)
	if err == sql.ErrNoRows {
		return nil, notFound(namespace, conversation)
	}
	if err != nil {
		return fail(err)
	}
	var seq int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM turns WHERE conversation = ?`, tot.pk).
		Scan(&seq); err != nil {
		return fail(err)
	}
	if after >= 0 && seq != after {
		return nil, strata.Errorf(strata.ECONFLICT, "append turns to %q: it ends at turn %d, not %d: another writer appended", conversation, seq, after)
	}
	if len(turns) == 0 {
		return []strata.Turn{}, nil
	}
	out, err := insertTurns(ctx, tx, &tot, scope(tot.pk, namespace), seq, turns, enc)
	if err != nil {
		return fail(err)
	}
	if len(out) == 0 {
		return out, nil // nothing written: the deferred rollback ends the transaction
	}
	if _, err := tx.ExecContext(ctx, `UPDATE conversations SET turns = ?, sessions = ?, content_bytes = ?,
		tokens = ?, first_time = ?, last_time = ? WHERE pk = ?`,
		tot.count, tot.sessions, tot.bytes, tot.tokens, tot.first, tot.last, tot.pk); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return out, nil
}

// turnTotals are the totals a conversation's row keeps of its turns.
type turnTotals struct {
	pk                   int64
	count, bytes, tokens int64
	sessions             int
	first, last          sql.NullInt64
}

// readTotals reads the totals of a conversation; sql.ErrNoRows if there
// is no such conversation.
func readTotals(ctx context.Context, tx *sql.Tx, namespace, conversation string) (turnTotals, error) {
	var c turnTotals
	err := tx.QueryRowContext(ctx, `SELECT pk, turns, sessions, content_bytes, tokens, first_time, last_time
		FROM conversations WHERE namespace = ? AND id = ?`, namespace, conversation).
		Scan(&c.pk, &c.count, &c.sessions, &c.bytes, &c.tokens, &c.first, &c.last)
	return c, err
}

// add counts turn t, encoded as e, in the totals.
func (c *turnTotals) add(t *strata.Turn, e *encodedTurn) {
	c.count++
	c.bytes += int64(len(t.Content))
	c.tokens += int64(t.Tokens)
	c.sessions = max(c.sessions, t.Session)
	if n, ok := e.time.(int64); ok {
		if !c.first.Valid || n < c.first.Int64 {
			c.first = sql.NullInt64{Int64: n, Valid: true}
		}
		if !c.last.Valid || n > c.last.Int64 {
			c.last = sql.NullInt64{Int64: n, Valid: true}
		}
	}
}

// insertTurns inserts the rows of turns, encoded as enc, after seq, and
// indexes them under the FTS scope sc; a turn whose ext_id is stored is
// left out. It counts those inserted in tot and returns them, numbered.
func insertTurns(ctx context.Context, tx *sql.Tx, tot *turnTotals, sc string, seq int64, turns []strata.Turn, enc []encodedTurn) ([]strata.Turn, error) {
	ins, err := tx.PrepareContext(ctx, insertTurn)
	if err != nil {
		return nil, err
	}
	defer ins.Close()
	fts, err := tx.PrepareContext(ctx, `INSERT INTO turns_fts (rowid, text, scope) VALUES (?, ?, ?)`)
	if err != nil {
		return nil, err
	}
	defer fts.Close()

	// The rows go in under a context the driver cannot cancel: with a
	// cancellable one, modernc.org/sqlite starts a goroutine per statement
	// to watch it, which costs a tenth of the insert. Cancellation is
	// checked here between rows instead, and database/sql rolls the
	// transaction back when ctx ends.
	rowCtx := context.WithoutCancel(ctx)
	out := make([]strata.Turn, 0, len(turns))
	for i := range turns {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t, e := &turns[i], &enc[i]
		row := encodedRow(seq+1, t.Session, t.SessionLabel, string(t.Role), t.Name, t.Content, t.Model, t.Tokens, e)
		res, err := ins.ExecContext(rowCtx, tot.pk, seq+1, e.extID, t.Session, t.SessionLabel, string(t.Role), t.Name,
			t.Content, e.time, t.Model, e.toolCalls, e.toolResults, t.Tokens, t.Importance, e.tags, e.metadata,
			len(t.Content), int64(row.sum()))
		if err != nil {
			return nil, fmt.Errorf("turn %q: %w", t.ExtID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, err
		} else if n == 0 {
			continue // ext_id already stored
		}
		rowid, err := res.LastInsertId()
		if err != nil {
			return nil, err
		}
		if _, err := fts.ExecContext(rowCtx, rowid, e.fts, sc); err != nil {
			return nil, fmt.Errorf("indexing turn %q: %w", t.ExtID, err)
		}
		seq++
		c := *t
		c.Seq = seq
		out = append(out, c)
		tot.add(t, e)
	}
	return out, nil
}

// ExistingExtIDs returns the subset of extIDs stored in the conversation,
// empty if the conversation does not exist.
func (s *Store) ExistingExtIDs(ctx context.Context, namespace, conversation string, extIDs []string) (map[string]bool, error) {
	found := map[string]bool{}
	if len(extIDs) == 0 {
		return found, nil
	}
	ids, err := json.Marshal(extIDs)
	if err != nil {
		return nil, strata.Errorf(strata.EINVALID, "ext ids: %v", err)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT t.ext_id FROM conversations c
		JOIN turns t ON t.conversation = c.pk
		WHERE c.namespace = ? AND c.id = ? AND t.ext_id IN (SELECT value FROM json_each(?))`,
		namespace, conversation, string(ids))
	if err != nil {
		return nil, fmt.Errorf("sqlite: existing ext ids of %q: %w", conversation, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("sqlite: existing ext ids of %q: %w", conversation, err)
		}
		found[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: existing ext ids of %q: %w", conversation, err)
	}
	return found, nil
}

// Turns returns the turns of one conversation that match f, in seq order,
// newest first if f.Newest. ENOTFOUND if the conversation does not exist.
func (s *Store) Turns(ctx context.Context, f strata.TurnFilter) ([]strata.Turn, error) {
	pk, err := conversationPK(ctx, s.r, f.Namespace, f.Conversation)
	if err != nil {
		return nil, err
	}
	var q strings.Builder
	q.WriteString(`SELECT ` + turnCols + `, t.tier, t.span FROM turns t WHERE t.conversation = ?`)
	args := []any{pk}
	if f.FromSeq > 0 {
		q.WriteString(` AND t.seq >= ?`)
		args = append(args, f.FromSeq)
	}
	if f.ToSeq > 0 {
		q.WriteString(` AND t.seq <= ?`)
		args = append(args, f.ToSeq)
	}
	// Rows keep their time in every tier, so time bounds filter here.
	if !f.Since.IsZero() {
		q.WriteString(` AND t.time >= ?`)
		args = append(args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		q.WriteString(` AND t.time < ?`)
		args = append(args, f.Until.UnixNano())
	}
	if len(f.Seqs) > 0 {
		b, _ := json.Marshal(f.Seqs)
		q.WriteString(` AND t.seq IN (SELECT value FROM json_each(?))`)
		args = append(args, string(b))
	}
	if len(f.ExtIDs) > 0 {
		b, err := json.Marshal(f.ExtIDs)
		if err != nil {
			return nil, strata.Errorf(strata.EINVALID, "ext ids: %v", err)
		}
		q.WriteString(` AND t.ext_id IN (SELECT value FROM json_each(?))`)
		args = append(args, string(b))
	}
	if f.PinnedOnly {
		// A literal, so that the partial index turns_pinned applies.
		q.WriteString(` AND t.importance >= ` + pinnedLiteral)
	}
	if f.Newest {
		q.WriteString(` ORDER BY t.seq DESC`)
	} else {
		q.WriteString(` ORDER BY t.seq`)
	}
	if f.Limit > 0 {
		q.WriteString(` LIMIT ?`)
		args = append(args, f.Limit)
	}
	rows, err := s.r.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: turns of %q: %w", f.Conversation, err)
	}
	out, stubs, err := scanStubbed(rows, f.WithExpired)
	if err != nil {
		return nil, fmt.Errorf("sqlite: turns of %q: %w", f.Conversation, err)
	}
	return s.hydrate(ctx, s.r, f.Namespace, f.Conversation, out, stubs)
}

// scanTurn reads a row of turnCols followed by extra, and checks the
// row's checksum (turnsum.go).
func scanTurn(row interface{ Scan(...any) error }, extra ...any) (strata.Turn, error) {
	var (
		t   strata.Turn
		r   turnRow
		crc sql.NullInt64
	)
	dest := append([]any{&r.seq, &r.extID, &r.session, &r.label, &r.role, &r.name, &r.content, &r.time,
		&r.model, &r.toolCalls, &r.toolResults, &r.tokens, &t.Importance, &r.tags, &r.metadata, &crc}, extra...)
	if err := row.Scan(dest...); err != nil {
		return t, err
	}
	if err := r.check(crc); err != nil {
		return t, err
	}
	t.Seq, t.ExtID, t.Session, t.SessionLabel, t.Role, t.Name, t.Content = r.seq, r.extID.String, int(r.session),
		r.label, strata.Role(r.role), r.name, r.content
	t.Time, t.Model, t.Tokens = fromNanos(r.time), r.model, int(r.tokens)
	return t, decodeColumns(&t, r.toolCalls, r.toolResults, r.tags, r.metadata)
}

// decodeColumns sets t's structured fields from their JSON columns.
func decodeColumns(t *strata.Turn, toolCalls, toolResults, tags, metadata sql.NullString) error {
	if toolCalls.Valid {
		calls, err := spanfmt.ParseToolCalls([]byte(toolCalls.String))
		if err != nil {
			return fmt.Errorf("turn %d: tool_calls: %w", t.Seq, err)
		}
		t.ToolCalls = calls
	}
	if err := unmarshalColumn(toolResults, &t.ToolResults); err != nil {
		return fmt.Errorf("turn %d: tool_results: %w", t.Seq, err)
	}
	if err := unmarshalColumn(tags, &t.Tags); err != nil {
		return fmt.Errorf("turn %d: tags: %w", t.Seq, err)
	}
	if err := unmarshalColumn(metadata, &t.Metadata); err != nil {
		return fmt.Errorf("turn %d: metadata: %w", t.Seq, err)
	}
	return nil
}

// unmarshalColumn decodes a JSON column into v, leaving v alone if NULL.
func unmarshalColumn(col sql.NullString, v any) error {
	if !col.Valid {
		return nil
	}
	return json.Unmarshal([]byte(col.String), v)
}
