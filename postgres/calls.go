package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
)

// RecordCalls appends calls to the conversation's log of model calls, in
// one transaction; see strata.CallStore.
func (s *Store) RecordCalls(ctx context.Context, namespace, conversation string, calls []strata.Call) error {
	ats := make([]int64, len(calls))
	for i, c := range calls {
		at, err := toNanos(c.At, fmt.Sprintf("calls[%d].at", i))
		if err != nil {
			return err
		}
		if at == nil {
			ats[i] = time.Now().UnixNano()
		} else {
			ats[i] = *at
		}
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		pk, err := conversationPK(ctx, tx, namespace, conversation, false)
		if err != nil {
			return err
		}
		rows := make([][]any, len(calls))
		for i, c := range calls {
			rows[i] = []any{pk, c.Node, c.Level, c.Provider, c.Model, c.Attempt, c.TokensIn, c.TokensOut,
				c.Elapsed.Milliseconds(), c.Outcome, ats[i]}
		}
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"llm_calls"}, []string{"conversation", "node", "level", "provider",
			"model", "attempt", "tokens_in", "tokens_out", "elapsed_ms", "outcome", "at"}, pgx.CopyFromRows(rows))
		return err
	})
	return wrap(fmt.Sprintf("record model calls of %q", conversation), err)
}

// Calls returns the log of model calls of a conversation, or of the whole
// namespace if conversation is "", oldest first.
func (s *Store) Calls(ctx context.Context, namespace, conversation string) ([]strata.Call, error) {
	q := `SELECT c.id, l.node, l.level, l.provider, l.model, l.attempt, l.tokens_in, l.tokens_out, l.elapsed_ms,
		l.outcome, l.at FROM llm_calls l JOIN conversations c ON c.pk = l.conversation WHERE c.namespace = $1`
	args := []any{namespace}
	if conversation != "" {
		pk, err := conversationPK(ctx, s.pool, namespace, conversation, false)
		if err != nil {
			return nil, err
		}
		q += ` AND l.conversation = $2`
		args = append(args, pk)
	}
	rows, err := s.pool.Query(ctx, q+` ORDER BY l.pk`, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: model calls: %w", err)
	}
	defer rows.Close()
	out := []strata.Call{}
	for rows.Next() {
		var c strata.Call
		var ms, at int64
		if err := rows.Scan(&c.Conversation, &c.Node, &c.Level, &c.Provider, &c.Model, &c.Attempt, &c.TokensIn,
			&c.TokensOut, &ms, &c.Outcome, &at); err != nil {
			return nil, fmt.Errorf("postgres: model calls: %w", err)
		}
		c.Elapsed = time.Duration(ms) * time.Millisecond
		c.At = time.Unix(0, at).UTC()
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: model calls: %w", err)
	}
	return out, nil
}
