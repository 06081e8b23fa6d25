package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
)

// CompactionState returns the live-compaction state of (namespace,
// conversation), zero if none was saved; see strata.CompactionStore.
func (s *Store) CompactionState(ctx context.Context, namespace, conversation string) (strata.CompactionState, error) {
	var st strata.CompactionState
	var checkpoint []byte
	var updated int64
	err := s.pool.QueryRow(ctx, `SELECT checkpoint, turn_count, compaction_count, updated FROM compaction_state
		WHERE namespace = $1 AND conversation = $2`, namespace, conversation).
		Scan(&checkpoint, &st.TurnCount, &st.CompactionCount, &updated)
	if errors.Is(err, pgx.ErrNoRows) {
		return strata.CompactionState{}, nil
	}
	if err != nil {
		return st, fmt.Errorf("postgres: compaction state of %q: %w", conversation, err)
	}
	st.Checkpoint = string(checkpoint)
	st.Updated = time.Unix(0, updated).UTC()
	return st, nil
}

// CompactionStates returns every live-compaction state of the namespace;
// see strata.CompactionStore.
func (s *Store) CompactionStates(ctx context.Context, namespace string) ([]strata.ConversationCompaction, error) {
	rows, err := s.pool.Query(ctx, `SELECT conversation, checkpoint, turn_count, compaction_count, updated FROM compaction_state
		WHERE namespace = $1 ORDER BY conversation COLLATE "C"`, namespace)
	if err != nil {
		return nil, fmt.Errorf("postgres: compaction states: %w", err)
	}
	defer rows.Close()
	out := []strata.ConversationCompaction{}
	for rows.Next() {
		var c strata.ConversationCompaction
		var checkpoint []byte
		var updated int64
		if err := rows.Scan(&c.Conversation, &checkpoint, &c.TurnCount, &c.CompactionCount, &updated); err != nil {
			return nil, fmt.Errorf("postgres: compaction states: %w", err)
		}
		c.Checkpoint = string(checkpoint)
		c.Updated = time.Unix(0, updated).UTC()
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: compaction states: %w", err)
	}
	return out, nil
}

// SaveCompactionState replaces the live-compaction state of (namespace,
// conversation); see strata.CompactionStore.
func (s *Store) SaveCompactionState(ctx context.Context, namespace, conversation string, st strata.CompactionState) error {
	if conversation == "" {
		return strata.Errorf(strata.EINVALID, "compaction state: empty conversation id")
	}
	if st.TurnCount < 0 || st.CompactionCount < 0 {
		return strata.Errorf(strata.EINVALID, "compaction state of %q: negative count (turn_count %d, compaction_count %d)",
			conversation, st.TurnCount, st.CompactionCount)
	}
	updated, err := toNanos(st.Updated, "compaction state: updated")
	if err != nil {
		return err
	}
	if updated == nil {
		now := time.Now().UnixNano()
		updated = &now
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO compaction_state
		(namespace, conversation, checkpoint, turn_count, compaction_count, updated) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (namespace, conversation) DO UPDATE SET checkpoint = excluded.checkpoint,
		turn_count = excluded.turn_count, compaction_count = excluded.compaction_count, updated = excluded.updated`,
		namespace, conversation, []byte(st.Checkpoint), st.TurnCount, st.CompactionCount, *updated); err != nil {
		return fmt.Errorf("postgres: save compaction state of %q: %w", conversation, err)
	}
	return nil
}
