package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/strata-memory/strata"
)

// errNoTiers is what Demote and Expire return: this store keeps every
// span hot until its tiers (warm blocks, archive segments in a table)
// are written.
func errNoTiers(what string) error {
	return fmt.Errorf("postgres: %s: storage tiers are not implemented in the PostgreSQL store yet: every span stays hot", what)
}

// Demote is not implemented yet; see errNoTiers.
func (s *Store) Demote(ctx context.Context, namespace, conversation string, ids []string, to strata.Tier, at time.Time) ([]strata.Move, error) {
	return nil, errNoTiers("demote")
}

// Expire is not implemented yet; see errNoTiers.
func (s *Store) Expire(ctx context.Context, namespace, conversation string, ids []string, rule string, at time.Time, dryRun bool) ([]strata.Expiry, error) {
	return nil, errNoTiers("expire")
}

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
		var days *string
		var at int64
		var coldAt, newest *int64
		if err := rows.Scan(&e.Conversation, &e.NodeID, &e.FirstSeq, &e.LastSeq, &e.Turns, &e.Bytes, &days, &e.Rule, &at,
			&coldAt, &newest); err != nil {
			return nil, fmt.Errorf("postgres: expiries: %w", err)
		}
		e.ColdAt, e.NewestTurn = fromNanos(coldAt), fromNanos(newest)
		if days != nil {
			if err := json.Unmarshal([]byte(*days), &e.Segments); err != nil {
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
