package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

// learningCols are the columns scanLearning reads, for a learnings table
// aliased l joined with its conversations row aliased c.
const learningCols = `l.pk, c.id, l.subject, l.text, l.node, l.first_seq, l.last_seq, l.status,
	l.superseded_by, l.created, l.updated`

// activeLearning is the condition on a learnings row aliased l that it is
// in force. It spells the predicate of the index learnings_active, so
// that queries with it can use the index.
const activeLearning = `l.status IN ('auto', 'confirmed')`

// scanLearning reads a row of learningCols.
func scanLearning(row interface{ Scan(...any) error }) (strata.Learning, error) {
	var l strata.Learning
	var by sql.NullInt64
	var created, updated int64
	if err := row.Scan(&l.ID, &l.Conversation, &l.Subject, &l.Text, &l.Node, &l.FirstSeq, &l.LastSeq, &l.Status,
		&by, &created, &updated); err != nil {
		return strata.Learning{}, err
	}
	l.SupersededBy = by.Int64
	l.Created, l.Updated = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
	return l, nil
}

// AddLearnings stores new learnings of a conversation in one transaction,
// skipping repeats of active learnings and superseding active learnings of
// the same subject; see strata.LearningStore.
func (s *Store) AddLearnings(ctx context.Context, namespace, conversation string, ls []strata.Learning) ([]strata.Learning, error) {
	now := time.Now()
	type encoded struct {
		norm             string
		created, updated int64
	}
	enc := make([]encoded, len(ls))
	for i := range ls {
		l, e := &ls[i], &enc[i]
		if l.Conversation != "" && l.Conversation != conversation {
			return nil, strata.Errorf(strata.EINVALID, "learnings[%d]: belongs to conversation %q, not %q",
				i, l.Conversation, conversation)
		}
		if strings.TrimSpace(l.Subject) == "" {
			return nil, strata.Errorf(strata.EINVALID, "learnings[%d]: subject is empty", i)
		}
		if e.norm = strata.NormalizeLearningText(l.Text); e.norm == "" {
			return nil, strata.Errorf(strata.EINVALID, "learnings[%d]: text is empty", i)
		}
		switch l.Status {
		case "", strata.LearningAuto, strata.LearningConfirmed, strata.LearningRejected:
		default:
			return nil, strata.Errorf(strata.EINVALID, "learnings[%d]: status %q: want auto, confirmed or rejected", i, l.Status)
		}
		created, updated := l.Created, l.Updated
		if created.IsZero() {
			created = now
		}
		if updated.IsZero() {
			updated = created
		}
		c, err := toNanos(created, fmt.Sprintf("learnings[%d].created", i))
		if err != nil {
			return nil, err
		}
		u, err := toNanos(updated, fmt.Sprintf("learnings[%d].updated", i))
		if err != nil {
			return nil, err
		}
		e.created, e.updated = c.(int64), u.(int64)
	}
	fail := func(err error) error { return fmt.Errorf("sqlite: add learnings of %q: %w", conversation, err) }

	tx, pk, err := s.beginIn(ctx, s.w, namespace, conversation, fail)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	out := make([]strata.Learning, 0, len(ls))
	for i, l := range ls {
		e := enc[i]
		old, err := scanLearning(tx.QueryRowContext(ctx, `SELECT `+learningCols+`
			FROM learnings l JOIN conversations c ON c.pk = l.conversation
			WHERE l.conversation = ? AND l.subject = ? AND l.status <> 'superseded' AND l.norm = ?
			ORDER BY l.pk LIMIT 1`, pk, l.Subject, e.norm))
		switch {
		case err == nil:
			out = append(out, old) // a repeat
			continue
		case !errors.Is(err, sql.ErrNoRows):
			return nil, fail(fmt.Errorf("learnings[%d]: %w", i, err))
		}
		if l.Status == "" {
			l.Status = strata.LearningAuto
		}
		if err := tx.QueryRowContext(ctx, `INSERT INTO learnings (conversation, subject, text, norm, node,
			first_seq, last_seq, status, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`,
			pk, l.Subject, l.Text, e.norm, l.Node, l.FirstSeq, l.LastSeq, l.Status, e.created, e.updated,
		).Scan(&l.ID); err != nil {
			return nil, fail(fmt.Errorf("learnings[%d]: %w", i, err))
		}
		// The superseded learnings' update is the new one's creation.
		if _, err := tx.ExecContext(ctx, `UPDATE learnings AS l SET status = ?, superseded_by = ?, updated = ?
			WHERE l.conversation = ? AND l.subject = ? AND `+activeLearning+` AND l.pk <> ?`,
			strata.LearningSuperseded, l.ID, e.created, pk, l.Subject, l.ID); err != nil {
			return nil, fail(fmt.Errorf("learnings[%d]: superseding: %w", i, err))
		}
		l.Conversation, l.SupersededBy = conversation, 0
		l.Created, l.Updated = time.Unix(0, e.created).UTC(), time.Unix(0, e.updated).UTC()
		out = append(out, l)
	}
	if err := tx.Commit(); err != nil {
		return nil, fail(err)
	}
	return out, nil
}

// Learnings returns the learnings that match f, oldest first; see
// strata.LearningStore.
func (s *Store) Learnings(ctx context.Context, f strata.LearningFilter) ([]strata.Learning, error) {
	q := `SELECT ` + learningCols + ` FROM learnings l JOIN conversations c ON c.pk = l.conversation
		WHERE c.namespace = ?`
	args := []any{f.Namespace}
	if f.Conversation != "" {
		pk, err := conversationPK(ctx, s.r, f.Namespace, f.Conversation)
		if err != nil {
			return nil, err
		}
		q += ` AND l.conversation = ?`
		args = append(args, pk)
	}
	if f.Subject != "" {
		q += ` AND l.subject = ?`
		args = append(args, f.Subject)
	}
	if len(f.Statuses) > 0 {
		q += ` AND l.status IN (?` + strings.Repeat(", ?", len(f.Statuses)-1) + `)`
		for _, st := range f.Statuses {
			args = append(args, st)
		}
	}
	if len(f.IDs) > 0 {
		q += ` AND l.pk IN (SELECT value FROM json_each(?))`
		b, _ := json.Marshal(f.IDs) // an []int64 always marshals
		args = append(args, string(b))
	}
	q += ` ORDER BY l.pk`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: learnings: %w", err)
	}
	defer rows.Close()
	out := []strata.Learning{}
	for rows.Next() {
		l, err := scanLearning(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: learnings: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: learnings: %w", err)
	}
	return out, nil
}

// SetLearningStatus sets the status of a learning that is not superseded;
// see strata.LearningStore.
func (s *Store) SetLearningStatus(ctx context.Context, namespace string, id int64, status string) (strata.Learning, error) {
	switch status {
	case strata.LearningAuto, strata.LearningConfirmed, strata.LearningRejected:
	default:
		return strata.Learning{}, strata.Errorf(strata.EINVALID,
			"learning %d: status %q: want auto, confirmed or rejected", id, status)
	}
	fail := func(err error) error { return fmt.Errorf("sqlite: set the status of learning %d: %w", id, err) }
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return strata.Learning{}, fail(err)
	}
	defer tx.Rollback()
	l, err := scanLearning(tx.QueryRowContext(ctx, `SELECT `+learningCols+`
		FROM learnings l JOIN conversations c ON c.pk = l.conversation WHERE l.pk = ? AND c.namespace = ?`,
		id, namespace))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return strata.Learning{}, strata.Errorf(strata.ENOTFOUND, "learning %d not found in namespace %q", id, namespace)
	case err != nil:
		return strata.Learning{}, fail(err)
	case l.Status == strata.LearningSuperseded:
		return strata.Learning{}, strata.Errorf(strata.EINVALID,
			"learning %d is superseded by learning %d: its history is fixed", id, l.SupersededBy)
	case l.Status == status:
		return l, nil
	}
	now := time.Now().UTC()
	if _, err := tx.ExecContext(ctx, `UPDATE learnings SET status = ?, updated = ? WHERE pk = ?`,
		status, now.UnixNano(), id); err != nil {
		return strata.Learning{}, fail(err)
	}
	if err := tx.Commit(); err != nil {
		return strata.Learning{}, fail(err)
	}
	l.Status, l.Updated = status, now
	return l, nil
}
