package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-memory/strata"
)

// RecordCalls appends calls to the conversation's log of model calls, in
// one transaction; see strata.CallStore.
func (s *Store) RecordCalls(ctx context.Context, namespace, conversation string, calls []strata.Call) error {
	fail := func(err error) error { return fmt.Errorf("sqlite: record model calls of %q: %w", conversation, err) }
	tx, pk, err := s.beginIn(ctx, s.w, namespace, conversation, fail)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for i, c := range calls {
		at, err := toNanos(c.At, fmt.Sprintf("calls[%d].at", i))
		if err != nil {
			return err
		}
		if at == nil {
			at = time.Now().UnixNano()
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO llm_calls (conversation, node, level, provider, model, attempt,
			tokens_in, tokens_out, elapsed_ms, outcome, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			pk, c.Node, c.Level, c.Provider, c.Model, c.Attempt, c.TokensIn, c.TokensOut, c.Elapsed.Milliseconds(),
			c.Outcome, at); err != nil {
			return fail(err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}

// Calls returns the log of model calls of a conversation, or of the whole
// namespace if conversation is "", oldest first.
func (s *Store) Calls(ctx context.Context, namespace, conversation string) ([]strata.Call, error) {
	q := `SELECT c.id, l.node, l.level, l.provider, l.model, l.attempt, l.tokens_in, l.tokens_out, l.elapsed_ms,
		l.outcome, l.at FROM llm_calls l JOIN conversations c ON c.pk = l.conversation WHERE c.namespace = ?`
	args := []any{namespace}
	if conversation != "" {
		pk, err := conversationPK(ctx, s.r, namespace, conversation)
		if err != nil {
			return nil, err
		}
		q += ` AND l.conversation = ?`
		args = append(args, pk)
	}
	rows, err := s.r.QueryContext(ctx, q+` ORDER BY l.pk`, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: model calls: %w", err)
	}
	defer rows.Close()
	out := []strata.Call{}
	for rows.Next() {
		var c strata.Call
		var ms, at int64
		if err := rows.Scan(&c.Conversation, &c.Node, &c.Level, &c.Provider, &c.Model, &c.Attempt, &c.TokensIn,
			&c.TokensOut, &ms, &c.Outcome, &at); err != nil {
			return nil, fmt.Errorf("sqlite: model calls: %w", err)
		}
		c.Elapsed = time.Duration(ms) * time.Millisecond
		c.At = time.Unix(0, at).UTC()
		out = append(out, c)
	}
	return out, rows.Err()
}
