package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/strata-memory/strata"
)

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// convCols are the columns scanConversation reads.
const convCols = `namespace, id, policy, created, turns, sessions, first_time, last_time, time_zone, important, learned_seq`

// scanConversation reads a row of convCols.
func scanConversation(row interface{ Scan(...any) error }) (strata.Conversation, error) {
	var c strata.Conversation
	var created int64
	var first, last sql.NullInt64
	var important sql.NullString
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

// EnsureConversation creates c if (c.Namespace, c.ID) does not exist, with
// c.Created or, if zero, the current time, and returns the stored
// conversation either way. An existing conversation keeps its policy and
// creation time. An empty ID is EINVALID.
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
	if got, err := s.Conversation(ctx, c.Namespace, c.ID); err == nil {
		return got, nil // the common case, without taking the write lock
	}
	// A conversation of this id may have been deleted by a process killed
	// before it removed the archive folder: nothing owns that folder, and
	// its records must not mix with the new conversation's.
	if err := s.removeOrphanArchive(ctx, c.Namespace, c.ID); err != nil {
		return strata.Conversation{}, err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return strata.Conversation{}, fmt.Errorf("sqlite: ensure conversation %q: %w", c.ID, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO conversations (namespace, id, policy, created, time_zone, important)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (namespace, id) DO NOTHING`,
		c.Namespace, c.ID, c.Policy, nanos, c.TimeZone, jsonList(c.Important)); err != nil {
		return strata.Conversation{}, fmt.Errorf("sqlite: ensure conversation %q: %w", c.ID, err)
	}
	got, err := scanConversation(tx.QueryRowContext(ctx, `SELECT `+convCols+` FROM conversations
		WHERE namespace = ? AND id = ?`, c.Namespace, c.ID))
	if err != nil {
		return strata.Conversation{}, fmt.Errorf("sqlite: ensure conversation %q: %w", c.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return strata.Conversation{}, fmt.Errorf("sqlite: ensure conversation %q: %w", c.ID, err)
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
	fail := func(err error) (strata.Conversation, error) {
		return strata.Conversation{}, fmt.Errorf("sqlite: update conversation %q: %w", id, err)
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	pk, err := conversationPK(ctx, tx, namespace, id)
	if err != nil {
		return strata.Conversation{}, err
	}
	if u.TimeZone != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE conversations SET time_zone = ? WHERE pk = ?`, *u.TimeZone, pk); err != nil {
			return fail(err)
		}
	}
	if u.Important != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE conversations SET important = ? WHERE pk = ?`, jsonList(*u.Important), pk); err != nil {
			return fail(err)
		}
	}
	if u.LearnedSeq != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE conversations SET learned_seq = ? WHERE pk = ?`, *u.LearnedSeq, pk); err != nil {
			return fail(err)
		}
	}
	c, err := scanConversation(tx.QueryRowContext(ctx, `SELECT `+convCols+` FROM conversations WHERE pk = ?`, pk))
	if err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return c, nil
}

// Conversation returns the conversation with its turn and session counts
// and its earliest and latest turn times. ENOTFOUND if it does not exist.
func (s *Store) Conversation(ctx context.Context, namespace, id string) (strata.Conversation, error) {
	c, err := scanConversation(s.r.QueryRowContext(ctx, `SELECT `+convCols+` FROM conversations
		WHERE namespace = ? AND id = ?`, namespace, id))
	if errors.Is(err, sql.ErrNoRows) {
		return strata.Conversation{}, notFound(namespace, id)
	}
	if err != nil {
		return strata.Conversation{}, fmt.Errorf("sqlite: conversation %q: %w", id, err)
	}
	return c, nil
}

// Conversations lists the namespace's conversations by id, with their
// counts.
func (s *Store) Conversations(ctx context.Context, namespace string) ([]strata.Conversation, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+convCols+` FROM conversations
		WHERE namespace = ? ORDER BY id`, namespace)
	if err != nil {
		return nil, fmt.Errorf("sqlite: conversations: %w", err)
	}
	defer rows.Close()
	out := []strata.Conversation{}
	for rows.Next() {
		c, err := scanConversation(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: conversations: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: conversations: %w", err)
	}
	return out, nil
}

// Namespaces lists the namespaces that hold anything (a conversation, a
// compaction or watch state, a token, a deletion record); see
// strata.ConversationStore.
func (s *Store) Namespaces(ctx context.Context) ([]string, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT namespace FROM conversations UNION SELECT namespace FROM compaction_state
		UNION SELECT namespace FROM watch_state UNION SELECT namespace FROM tokens UNION SELECT namespace FROM deletions
		ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: namespaces: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var ns string
		if err := rows.Scan(&ns); err != nil {
			return nil, fmt.Errorf("sqlite: namespaces: %w", err)
		}
		out = append(out, ns)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: namespaces: %w", err)
	}
	return out, nil
}

// conversationPK returns the integer key of a conversation, ENOTFOUND if it
// does not exist.
func conversationPK(ctx context.Context, q querier, namespace, id string) (int64, error) {
	var pk int64
	err := q.QueryRowContext(ctx, `SELECT pk FROM conversations WHERE namespace = ? AND id = ?`,
		namespace, id).Scan(&pk)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, notFound(namespace, id)
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: conversation %q: %w", id, err)
	}
	return pk, nil
}

// beginIn opens a transaction on db (s.w to write, s.r to read one
// snapshot) and finds the conversation's key in it, the opening of every
// write to one conversation and of reads that need a snapshot. A failure
// to begin is returned through wrap; a conversation that does not exist
// is ENOTFOUND, as conversationPK reports it. On error no transaction is
// left open.
func (s *Store) beginIn(ctx context.Context, db *sql.DB, namespace, conversation string, wrap func(error) error) (*sql.Tx, int64, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, 0, wrap(err)
	}
	pk, err := conversationPK(ctx, tx, namespace, conversation)
	if err != nil {
		tx.Rollback()
		return nil, 0, err
	}
	return tx, pk, nil
}

// notFound is the error for a missing conversation.
func notFound(namespace, id string) error {
	return strata.Errorf(strata.ENOTFOUND, "conversation %q not found in namespace %q", id, namespace)
}

// conversationScope is the FTS token that every indexed row of the
// conversation with key pk carries in its scope column.
func conversationScope(pk int64) string { return "c" + strconv.FormatInt(pk, 10) }

// namespaceScope is the FTS token that every indexed row of the namespace
// carries: a 64-bit hash of its name. Search still checks the namespace of
// the rows it returns, so a hash collision could only hide hits.
func namespaceScope(namespace string) string {
	h := fnv.New64a()
	h.Write([]byte(namespace))
	return "n" + strconv.FormatUint(h.Sum64(), 10)
}

// scope is the value of the scope column of a row of conversation pk.
func scope(pk int64, namespace string) string {
	return conversationScope(pk) + " " + namespaceScope(namespace)
}
