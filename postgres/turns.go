package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/textseg"
)

// turnCols are the columns scanTurn reads, for a turns table aliased t.
const turnCols = `t.seq, t.ext_id, t.session, t.session_label, t.role, t.name, t.content, t.time,
	t.model, t.tool_calls, t.tool_results, t.tokens, t.importance, t.tags, t.metadata, t.crc`

// turnCopyCols are the columns AppendTurns copies in, in order.
var turnCopyCols = []string{"conversation", "seq", "ext_id", "session", "session_label", "role", "name",
	"content", "time", "model", "tool_calls", "tool_results", "tokens", "importance", "tags", "metadata", "size", "crc"}

// storedToolCall is a strata.ToolCall as stored: the arguments are kept as
// the exact text the model produced (encoding/json would compact a
// json.RawMessage and escape HTML in it), or as bytes if they are not
// valid UTF-8.
type storedToolCall struct {
	ID        string  `json:"id,omitempty"`
	Name      string  `json:"name"`
	Arguments *string `json:"arguments,omitempty"`
	ArgBytes  []byte  `json:"arguments_bytes,omitempty"`
}

// encodedTurn is a turn's column values that need encoding, prepared before
// the write transaction begins.
type encodedTurn struct {
	time                                   *int64
	toolCalls, toolResults, tags, metadata *string
	index                                  []string // the parts of its words for turn_index
}

// encodeTurn prepares t's encoded columns.
func encodeTurn(t *strata.Turn, i int) (encodedTurn, error) {
	var e encodedTurn
	var err error
	if e.time, err = toNanos(t.Time, fmt.Sprintf("turns[%d].time", i)); err != nil {
		return e, err
	}
	if len(t.ToolCalls) > 0 {
		calls := make([]storedToolCall, len(t.ToolCalls))
		for k, c := range t.ToolCalls {
			calls[k] = storedToolCall{ID: c.ID, Name: c.Name}
			switch {
			case len(c.Arguments) == 0:
			case utf8.Valid(c.Arguments):
				a := string(c.Arguments)
				calls[k].Arguments = &a
			default:
				calls[k].ArgBytes = c.Arguments
			}
		}
		if e.toolCalls, err = jsonText(calls, i, "tool_calls"); err != nil {
			return e, err
		}
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
	e.index = indexParts(t.Text()) // content, tool calls and tool results
	return e, nil
}

// jsonText returns v as JSON text, or an EINVALID error naming the field.
func jsonText(v any, i int, field string) (*string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, strata.Errorf(strata.EINVALID, "turns[%d].%s: %v", i, field, err)
	}
	s := string(b)
	return &s, nil
}

// partBytes bounds the words of one index row. A tsvector holds at most
// 1 MB of lexemes; a part's lexemes are at most its bytes (accents removed
// and case folded), so a part of this size always fits, whatever it holds.
const partBytes = 256 << 10

// indexParts returns the words of text (textseg.Words) in parts of at most
// partBytes, cut between words; none for a text with no word.
func indexParts(text string) []string {
	w := textseg.Words(text)
	var parts []string
	for len(w) > 0 {
		if len(w) <= partBytes {
			parts = append(parts, w)
			break
		}
		cut := strings.LastIndexByte(w[:partBytes], ' ')
		if cut <= 0 {
			// One word longer than a part: PostgreSQL skips words over
			// 2,047 bytes anyway; cut it at a character boundary.
			cut = partBytes
			for cut > 0 && !utf8.RuneStart(w[cut]) {
				cut--
			}
		}
		parts = append(parts, w[:cut])
		w = strings.TrimLeft(w[cut:], " ")
	}
	return parts
}

// indexTurns is the statement that indexes turns of conversation $1: $2
// their seqs, $3 the parts' numbers, $4 the parts (with their lengths in
// words, for search's BM25).
const indexTurns = `INSERT INTO turn_index (conversation, seq, part, fts, words)
	SELECT $1, u.seq, u.part, to_tsvector('strata_text', u.words), strata_fts_length(u.words)
	FROM unnest($2::bigint[], $3::integer[], $4::text[]) AS u(seq, part, words)`

// AppendTurns appends turns at the end of the conversation in one
// transaction, skipping those whose ExtID is already stored (including
// earlier in the same call); see strata.TurnStore. Appends to one
// conversation take their turns on its row's lock, from any process.
func (s *Store) AppendTurns(ctx context.Context, namespace, conversation string, turns []strata.Turn) ([]strata.Turn, error) {
	return s.appendTurns(ctx, namespace, conversation, -1, turns)
}

// AppendTurnsAfter appends turns as AppendTurns does if the conversation
// ends at seq after; see strata.TurnStore. The conversation's row lock
// makes the check and the append one step.
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
	}
	var out []strata.Turn
	err := s.tx(ctx, func(tx pgx.Tx) error {
		tot, err := lockTotals(ctx, tx, namespace, conversation)
		if err != nil {
			return err
		}
		out = []strata.Turn{}
		if after >= 0 {
			var end int64
			if err := tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM turns WHERE conversation = $1`, tot.pk).Scan(&end); err != nil {
				return err
			}
			if end != after {
				return strata.Errorf(strata.ECONFLICT, "append turns to %q: it ends at turn %d, not %d: another writer appended", conversation, end, after)
			}
		}
		if len(turns) == 0 {
			return nil
		}
		var ids []string
		for i := range turns {
			if turns[i].ExtID != "" {
				ids = append(ids, turns[i].ExtID)
			}
		}
		seen := map[string]bool{}
		if len(ids) > 0 {
			if seen, err = existingExtIDs(ctx, tx, tot.pk, ids); err != nil {
				return err
			}
		}
		var seq int64
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM turns WHERE conversation = $1`, tot.pk).Scan(&seq); err != nil {
			return err
		}
		var b turnBatch
		out = b.add(&tot, seq, turns, enc, seen, out)
		if len(b.rows) == 0 {
			return nil
		}
		return b.write(ctx, tx, &tot)
	})
	if err != nil {
		return nil, wrap(fmt.Sprintf("append turns to %q", conversation), err)
	}
	return out, nil
}

// turnTotals are the totals a conversation's row keeps of its turns.
type turnTotals struct {
	pk                   int64
	count, bytes, tokens int64
	sessions             int
	first, last          *int64
}

// lockTotals reads the totals of a conversation and locks its row, which
// makes appends to it one after the other.
func lockTotals(ctx context.Context, tx pgx.Tx, namespace, conversation string) (turnTotals, error) {
	var c turnTotals
	err := tx.QueryRow(ctx, `SELECT pk, turns, sessions, content_bytes, tokens, first_time, last_time
		FROM conversations WHERE namespace = $1 AND id = $2 FOR UPDATE`, namespace, conversation).
		Scan(&c.pk, &c.count, &c.sessions, &c.bytes, &c.tokens, &c.first, &c.last)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, notFound(namespace, conversation)
	}
	return c, err
}

// A turnBatch is the rows of the turns one append writes, and the parts
// of their words for turn_index.
type turnBatch struct {
	rows     [][]any
	idxSeqs  []int64
	idxParts []int32
	idxWords []string
}

// add adds the rows of turns, encoded as enc, numbered after seq, but for
// those whose ext_id is seen; it counts them in tot and appends them,
// numbered, to out.
func (b *turnBatch) add(tot *turnTotals, seq int64, turns []strata.Turn, enc []encodedTurn, seen map[string]bool, out []strata.Turn) []strata.Turn {
	for i := range turns {
		t, e := &turns[i], &enc[i]
		if t.ExtID != "" {
			if seen[t.ExtID] {
				continue
			}
			seen[t.ExtID] = true
		}
		seq++
		row := encodedRow(seq, t, e)
		b.rows = append(b.rows, []any{tot.pk, seq, row.extID, t.Session, t.SessionLabel, string(t.Role), t.Name,
			row.content, e.time, t.Model, e.toolCalls, e.toolResults, t.Tokens, t.Importance, e.tags, e.metadata,
			int64(len(t.Content)), int64(row.sum())})
		for p, w := range e.index {
			b.idxSeqs, b.idxParts, b.idxWords = append(b.idxSeqs, seq), append(b.idxParts, int32(p)), append(b.idxWords, w)
		}
		c := *t
		c.Seq = seq
		out = append(out, c)
		tot.count++
		tot.bytes += int64(len(t.Content))
		tot.tokens += int64(t.Tokens)
		tot.sessions = max(tot.sessions, t.Session)
		if e.time != nil {
			if tot.first == nil || *e.time < *tot.first {
				tot.first = e.time
			}
			if tot.last == nil || *e.time > *tot.last {
				tot.last = e.time
			}
		}
	}
	return out
}

// write copies the rows in, indexes their words and stores the totals.
func (b *turnBatch) write(ctx context.Context, tx pgx.Tx, tot *turnTotals) error {
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"turns"}, turnCopyCols, pgx.CopyFromRows(b.rows)); err != nil {
		return err
	}
	if len(b.idxSeqs) > 0 {
		if _, err := tx.Exec(ctx, indexTurns, tot.pk, b.idxSeqs, b.idxParts, b.idxWords); err != nil {
			return fmt.Errorf("indexing: %w", err)
		}
	}
	_, err := tx.Exec(ctx, `UPDATE conversations SET turns = $1, sessions = $2, content_bytes = $3,
		tokens = $4, first_time = $5, last_time = $6 WHERE pk = $7`,
		tot.count, tot.sessions, tot.bytes, tot.tokens, tot.first, tot.last, tot.pk)
	return err
}

// existingExtIDs returns which of ids conversation pk holds.
func existingExtIDs(ctx context.Context, q querier, pk int64, ids []string) (map[string]bool, error) {
	found := map[string]bool{}
	rows, err := q.Query(ctx, `SELECT ext_id FROM turns WHERE conversation = $1 AND ext_id = ANY($2)`, pk, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		found[id] = true
	}
	return found, rows.Err()
}

// ExistingExtIDs returns the subset of extIDs stored in the conversation,
// empty if the conversation does not exist.
func (s *Store) ExistingExtIDs(ctx context.Context, namespace, conversation string, extIDs []string) (map[string]bool, error) {
	if len(extIDs) == 0 {
		return map[string]bool{}, nil
	}
	var pk int64
	err := s.pool.QueryRow(ctx, `SELECT pk FROM conversations WHERE namespace = $1 AND id = $2`, namespace, conversation).Scan(&pk)
	if errors.Is(err, pgx.ErrNoRows) {
		return map[string]bool{}, nil
	}
	if err == nil {
		var found map[string]bool
		if found, err = existingExtIDs(ctx, s.pool, pk, extIDs); err == nil {
			return found, nil
		}
	}
	return nil, fmt.Errorf("postgres: existing ext ids of %q: %w", conversation, err)
}

// Turns returns the turns of one conversation that match f, in seq order,
// newest first if f.Newest, whole whatever their tier; see
// strata.TurnStore. The rows and the spans' copies are read in one
// snapshot, so a span moved meanwhile is read from one place or the other.
func (s *Store) Turns(ctx context.Context, f strata.TurnFilter) ([]strata.Turn, error) {
	var out []strata.Turn
	err := s.readTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = s.turns(ctx, tx, f)
		return err
	})
	if err != nil {
		return nil, wrap(fmt.Sprintf("turns of %q", f.Conversation), err)
	}
	return out, nil
}

// turns is Turns in tx.
func (s *Store) turns(ctx context.Context, tx pgx.Tx, f strata.TurnFilter) ([]strata.Turn, error) {
	pk, err := conversationPK(ctx, tx, f.Namespace, f.Conversation, false)
	if err != nil {
		return nil, err
	}
	var q strings.Builder
	q.WriteString(`SELECT ` + turnCols + `, t.tier, t.span FROM turns t WHERE t.conversation = $1`)
	args := []any{pk}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if f.FromSeq > 0 {
		q.WriteString(` AND t.seq >= ` + arg(f.FromSeq))
	}
	if f.ToSeq > 0 {
		q.WriteString(` AND t.seq <= ` + arg(f.ToSeq))
	}
	// Rows keep their time in every tier, so time bounds filter here.
	if !f.Since.IsZero() {
		q.WriteString(` AND t.time >= ` + arg(f.Since.UnixNano()))
	}
	if !f.Until.IsZero() {
		q.WriteString(` AND t.time < ` + arg(f.Until.UnixNano()))
	}
	if len(f.Seqs) > 0 {
		q.WriteString(` AND t.seq = ANY(` + arg(f.Seqs) + `)`)
	}
	if len(f.ExtIDs) > 0 {
		q.WriteString(` AND t.ext_id = ANY(` + arg(f.ExtIDs) + `)`)
	}
	if f.PinnedOnly {
		// A literal, so that the partial index turns_pinned applies.
		q.WriteString(` AND t.importance >= 0.8`)
	}
	if f.Newest {
		q.WriteString(` ORDER BY t.seq DESC`)
	} else {
		q.WriteString(` ORDER BY t.seq`)
	}
	if f.Limit > 0 {
		q.WriteString(` LIMIT ` + arg(f.Limit))
	}
	rows, err := tx.Query(ctx, q.String(), args...)
	if err != nil {
		return nil, err
	}
	out, stubs, err := scanStubbed(rows, f.WithExpired)
	if err != nil {
		return nil, err
	}
	return s.hydrate(ctx, tx, f.Namespace, f.Conversation, out, stubs)
}

// scanTurn reads a row of turnCols followed by extra, and checks the
// row's checksum (turnsum.go).
func scanTurn(row pgx.Row, extra ...any) (strata.Turn, error) {
	var (
		t   strata.Turn
		r   turnRow
		crc *int64
	)
	dest := append([]any{&r.seq, &r.extID, &r.session, &r.label, &r.role, &r.name, &r.content, &r.time,
		&r.model, &r.toolCalls, &r.toolResults, &r.tokens, &t.Importance, &r.tags, &r.metadata, &crc}, extra...)
	if err := row.Scan(dest...); err != nil {
		return t, err
	}
	if err := r.check(crc); err != nil {
		return t, err
	}
	t.Seq, t.ExtID, t.Session, t.SessionLabel, t.Role, t.Name, t.Content = r.seq, deref(r.extID), int(r.session),
		r.label, strata.Role(r.role), r.name, string(r.content)
	t.Time, t.Model, t.Tokens = fromNanos(r.time), r.model, int(r.tokens)
	return t, decodeColumns(&t, r.toolCalls, r.toolResults, r.tags, r.metadata)
}

// decodeColumns sets t's structured fields from their JSON columns.
func decodeColumns(t *strata.Turn, toolCalls, toolResults, tags, metadata *string) error {
	if toolCalls != nil {
		var calls []storedToolCall
		if err := json.Unmarshal([]byte(*toolCalls), &calls); err != nil {
			return fmt.Errorf("turn %d: tool_calls: %w", t.Seq, err)
		}
		t.ToolCalls = make([]strata.ToolCall, len(calls))
		for k, c := range calls {
			t.ToolCalls[k] = strata.ToolCall{ID: c.ID, Name: c.Name}
			if c.Arguments != nil {
				t.ToolCalls[k].Arguments = json.RawMessage(*c.Arguments)
			} else if c.ArgBytes != nil {
				t.ToolCalls[k].Arguments = json.RawMessage(c.ArgBytes)
			}
		}
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
