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
)

// convCols are the columns scanConversation reads.
const convCols = `namespace, id, policy, created, turns, sessions, first_time, last_time, time_zone, important, learned_seq`

// scanConversation reads a row of convCols.
func scanConversation(row pgx.Row) (strata.Conversation, error) {
	var c strata.Conversation
	var created int64
	var first, last *int64
	var important *string
	if err := row.Scan(&c.Namespace, &c.ID, &c.Policy, &created, &c.Turns, &c.Sessions, &first, &last,
		&c.TimeZone, &important, &c.LearnedSeq); err != nil {
		return strata.Conversation{}, err
	}
	if err := unmarshalColumn(important, &c.Important); err != nil {
		return strata.Conversation{}, fmt.Errorf("conversation %q: important: %w", c.ID, err)
	}
	c.Created = time.Unix(0, created).UTC()
	c.First, c.Last = fromNanos(first), fromNanos(last)
	return c, nil
}

// unmarshalColumn decodes a JSON column into v, leaving v alone if NULL.
func unmarshalColumn(col *string, v any) error {
	if col == nil {
		return nil
	}
	return json.Unmarshal([]byte(*col), v)
}

// jsonList returns a string list as JSON text, or NULL if it is empty.
func jsonList(l []string) *string {
	if len(l) == 0 {
		return nil
	}
	b, _ := json.Marshal(l) // a []string always marshals
	s := string(b)
	return &s
}

// EnsureConversation creates c if (c.Namespace, c.ID) does not exist, with
// c.Created or, if zero, the current time, and returns the stored
// conversation either way; see strata.ConversationStore.
func (s *Store) EnsureConversation(ctx context.Context, c strata.Conversation) (strata.Conversation, error) {
	if c.ID == "" {
		return strata.Conversation{}, strata.Errorf(strata.EINVALID, "conversation: id is empty")
	}
	created := c.Created
	if created.IsZero() {
		created = time.Now()
	}
	nanos, err := toNanos(created, "conversation created")
	if err != nil {
		return strata.Conversation{}, err
	}
	// One statement: a conversation another process creates at the same
	// instant makes this insert do nothing, and the select reads it.
	got, err := scanConversation(s.pool.QueryRow(ctx, `WITH ins AS (
			INSERT INTO conversations (namespace, id, policy, created, time_zone, important)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (namespace, id) DO NOTHING
			RETURNING `+convCols+`)
		SELECT `+convCols+` FROM ins
		UNION ALL
		SELECT `+convCols+` FROM conversations WHERE namespace = $1 AND id = $2 AND NOT EXISTS (SELECT 1 FROM ins)`,
		c.Namespace, c.ID, c.Policy, nanos, c.TimeZone, jsonList(c.Important)))
	if errors.Is(err, pgx.ErrNoRows) {
		// The row another process was inserting is not visible to this
		// statement's snapshot yet: it is once that process commits.
		got, err = s.Conversation(ctx, c.Namespace, c.ID)
	}
	if err != nil {
		return strata.Conversation{}, wrap(fmt.Sprintf("ensure conversation %q", c.ID), err)
	}
	return got, nil
}

// UpdateConversation changes the settings u names of a conversation and
// returns it; see strata.ConversationStore.
func (s *Store) UpdateConversation(ctx context.Context, namespace, id string, u strata.ConversationUpdate) (strata.Conversation, error) {
	if u.TimeZone != nil {
		if _, err := strata.LoadTimeZone(*u.TimeZone); err != nil {
			return strata.Conversation{}, err
		}
	}
	var important *string
	if u.Important != nil {
		important = jsonList(*u.Important)
	}
	c, err := scanConversation(s.pool.QueryRow(ctx, `UPDATE conversations SET
			time_zone = CASE WHEN $3 THEN $4 ELSE time_zone END,
			important = CASE WHEN $5 THEN $6 ELSE important END,
			learned_seq = coalesce($7, learned_seq)
		WHERE namespace = $1 AND id = $2 RETURNING `+convCols,
		namespace, id, u.TimeZone != nil, deref(u.TimeZone), u.Important != nil, important, u.LearnedSeq))
	if errors.Is(err, pgx.ErrNoRows) {
		return strata.Conversation{}, notFound(namespace, id)
	}
	if err != nil {
		return strata.Conversation{}, wrap(fmt.Sprintf("update conversation %q", id), err)
	}
	return c, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Conversation returns the conversation with its turn and session counts
// and its earliest and latest turn times. ENOTFOUND if it does not exist.
func (s *Store) Conversation(ctx context.Context, namespace, id string) (strata.Conversation, error) {
	c, err := scanConversation(s.pool.QueryRow(ctx, `SELECT `+convCols+` FROM conversations
		WHERE namespace = $1 AND id = $2`, namespace, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return strata.Conversation{}, notFound(namespace, id)
	}
	if err != nil {
		return strata.Conversation{}, fmt.Errorf("postgres: conversation %q: %w", id, err)
	}
	return c, nil
}

// Conversations lists the namespace's conversations by id, with their
// counts.
func (s *Store) Conversations(ctx context.Context, namespace string) ([]strata.Conversation, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+convCols+` FROM conversations
		WHERE namespace = $1 ORDER BY id COLLATE "C"`, namespace)
	if err != nil {
		return nil, fmt.Errorf("postgres: conversations: %w", err)
	}
	defer rows.Close()
	out := []strata.Conversation{}
	for rows.Next() {
		c, err := scanConversation(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: conversations: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: conversations: %w", err)
	}
	return out, nil
}

// Namespaces lists the namespaces that hold anything (a conversation, a
// compaction or watch state, a token, a deletion record); see
// strata.ConversationStore.
func (s *Store) Namespaces(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT ns FROM (SELECT namespace FROM conversations UNION SELECT namespace FROM compaction_state
		UNION SELECT namespace FROM watch_state UNION SELECT namespace FROM tokens UNION SELECT namespace FROM deletions) AS x (ns)
		ORDER BY ns COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("postgres: namespaces: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var ns string
		if err := rows.Scan(&ns); err != nil {
			return nil, fmt.Errorf("postgres: namespaces: %w", err)
		}
		out = append(out, ns)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: namespaces: %w", err)
	}
	return out, nil
}

// DeleteConversation removes a conversation and everything it holds, in
// one transaction, and keeps the audit record; see
// strata.ConversationStore. Its turns, nodes, index entries, vectors,
// learnings, calls and segments rows go with its row, by foreign key; its
// archive segments are deleted by their key prefix in the same
// transaction, so none outlives it.
func (s *Store) DeleteConversation(ctx context.Context, namespace, id, reason string, at time.Time) (strata.Deletion, error) {
	d := strata.Deletion{Namespace: namespace, Conversation: id, Reason: reason, At: at.UTC()}
	atNanos, err := toNanos(at, "deletion time")
	if err != nil {
		return d, err
	}
	if atNanos == nil {
		return d, strata.Errorf(strata.EINVALID, "deleting conversation %q: the time of the deletion is zero", id)
	}
	err = s.tx(ctx, func(tx pgx.Tx) error {
		pk, err := conversationPK(ctx, tx, namespace, id, true)
		if err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT turns, content_bytes,
				(SELECT count(*) FROM nodes WHERE conversation = $1),
				(SELECT count(*) FROM segments WHERE conversation = $1) FROM conversations WHERE pk = $1`, pk).
			Scan(&d.Turns, &d.ContentBytes, &d.Nodes, &d.Segments); err != nil {
			return err
		}
		if err := s.blobsIn(tx).DeletePrefix(ctx, archive.Prefix(namespace, id)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM conversations WHERE pk = $1`, pk); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM compaction_state WHERE namespace = $1 AND conversation = $2`, namespace, id); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO deletions (namespace, conversation, turns, nodes, content_bytes, segments, reason, at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, namespace, id, d.Turns, d.Nodes, d.ContentBytes, d.Segments, reason, *atNanos)
		return err
	})
	if err != nil {
		return d, wrap(fmt.Sprintf("deleting conversation %q", id), err)
	}
	return d, nil
}

// Deletions returns the audit records of deleted conversations of the
// namespace, oldest first.
func (s *Store) Deletions(ctx context.Context, namespace string) ([]strata.Deletion, error) {
	rows, err := s.pool.Query(ctx, `SELECT conversation, turns, nodes, content_bytes, segments, reason, at
		FROM deletions WHERE namespace = $1 ORDER BY pk`, namespace)
	if err != nil {
		return nil, fmt.Errorf("postgres: deletions of %q: %w", namespace, err)
	}
	defer rows.Close()
	var out []strata.Deletion
	for rows.Next() {
		d := strata.Deletion{Namespace: namespace}
		var at int64
		if err := rows.Scan(&d.Conversation, &d.Turns, &d.Nodes, &d.ContentBytes, &d.Segments, &d.Reason, &at); err != nil {
			return nil, fmt.Errorf("postgres: deletions of %q: %w", namespace, err)
		}
		d.At = time.Unix(0, at).UTC()
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: deletions of %q: %w", namespace, err)
	}
	return out, nil
}
