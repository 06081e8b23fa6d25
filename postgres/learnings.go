package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
)

// learningCols are the columns scanLearning reads, for a learnings table
// aliased l joined with its conversations row aliased c.
const learningCols = `l.pk, c.id, l.subject, l.text, l.node, l.first_seq, l.last_seq, l.status,
	l.superseded_by, l.created, l.updated`

// scanLearning reads a row of learningCols.
func scanLearning(row pgx.Row) (strata.Learning, error) {
	var l strata.Learning
	var by *int64
	var created, updated int64
	if err := row.Scan(&l.ID, &l.Conversation, &l.Subject, &l.Text, &l.Node, &l.FirstSeq, &l.LastSeq, &l.Status,
		&by, &created, &updated); err != nil {
		return strata.Learning{}, err
	}
	if by != nil {
		l.SupersededBy = *by
	}
	l.Created, l.Updated = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
	return l, nil
}

// AddLearnings stores new learnings of a conversation in one transaction,
// skipping repeats of active learnings and superseding active learnings of
// the same subject; see strata.LearningStore. The conversation's row is
// locked meanwhile, so that two processes adding learnings of one subject
// supersede in turn.
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
		e.created, e.updated = *c, *u
	}
	var out []strata.Learning
	err := s.tx(ctx, func(tx pgx.Tx) error {
		pk, err := conversationPK(ctx, tx, namespace, conversation, true)
		if err != nil {
			return err
		}
		out = make([]strata.Learning, 0, len(ls))
		for i, l := range ls {
			e := enc[i]
			old, err := scanLearning(tx.QueryRow(ctx, `SELECT `+learningCols+`
				FROM learnings l JOIN conversations c ON c.pk = l.conversation
				WHERE l.conversation = $1 AND l.subject = $2 AND l.status <> 'superseded' AND l.norm = $3
				ORDER BY l.pk LIMIT 1`, pk, l.Subject, e.norm))
			switch {
			case err == nil:
				out = append(out, old) // a repeat
				continue
			case !errors.Is(err, pgx.ErrNoRows):
				return fmt.Errorf("learnings[%d]: %w", i, err)
			}
			if l.Status == "" {
				l.Status = strata.LearningAuto
			}
			if err := tx.QueryRow(ctx, `INSERT INTO learnings (conversation, subject, text, norm, node,
				first_seq, last_seq, status, created, updated) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING pk`,
				pk, l.Subject, l.Text, e.norm, l.Node, l.FirstSeq, l.LastSeq, l.Status, e.created, e.updated,
			).Scan(&l.ID); err != nil {
				return fmt.Errorf("learnings[%d]: %w", i, err)
			}
			// The superseded learnings' update is the new one's creation.
			if _, err := tx.Exec(ctx, `UPDATE learnings SET status = $1, superseded_by = $2, updated = $3
				WHERE conversation = $4 AND subject = $5 AND status IN ('auto', 'confirmed') AND pk <> $2`,
				strata.LearningSuperseded, l.ID, e.created, pk, l.Subject); err != nil {
				return fmt.Errorf("learnings[%d]: superseding: %w", i, err)
			}
			l.Conversation, l.SupersededBy = conversation, 0
			l.Created, l.Updated = time.Unix(0, e.created).UTC(), time.Unix(0, e.updated).UTC()
			out = append(out, l)
		}
		return nil
	})
	if err != nil {
		return nil, wrap(fmt.Sprintf("add learnings of %q", conversation), err)
	}
	return out, nil
}

// Learnings returns the learnings that match f, oldest first; see
// strata.LearningStore.
func (s *Store) Learnings(ctx context.Context, f strata.LearningFilter) ([]strata.Learning, error) {
	q := `SELECT ` + learningCols + ` FROM learnings l JOIN conversations c ON c.pk = l.conversation
		WHERE c.namespace = $1`
	args := []any{f.Namespace}
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if f.Conversation != "" {
		pk, err := conversationPK(ctx, s.pool, f.Namespace, f.Conversation, false)
		if err != nil {
			return nil, err
		}
		q += ` AND l.conversation = ` + arg(pk)
	}
	if f.Subject != "" {
		q += ` AND l.subject = ` + arg(f.Subject)
	}
	if len(f.Statuses) > 0 {
		q += ` AND l.status = ANY(` + arg(f.Statuses) + `)`
	}
	if len(f.IDs) > 0 {
		q += ` AND l.pk = ANY(` + arg(f.IDs) + `)`
	}
	q += ` ORDER BY l.pk`
	if f.Limit > 0 {
		q += ` LIMIT ` + arg(f.Limit)
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: learnings: %w", err)
	}
	defer rows.Close()
	out := []strata.Learning{}
	for rows.Next() {
		l, err := scanLearning(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: learnings: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: learnings: %w", err)
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
	var l strata.Learning
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		l, err = scanLearning(tx.QueryRow(ctx, `SELECT `+learningCols+`
			FROM learnings l JOIN conversations c ON c.pk = l.conversation WHERE l.pk = $1 AND c.namespace = $2
			FOR UPDATE OF l`, id, namespace))
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return strata.Errorf(strata.ENOTFOUND, "learning %d not found in namespace %q", id, namespace)
		case err != nil:
			return err
		case l.Status == strata.LearningSuperseded:
			return strata.Errorf(strata.EINVALID,
				"learning %d is superseded by learning %d: its history is fixed", id, l.SupersededBy)
		case l.Status == status:
			return nil
		}
		now := time.Now().UTC()
		if _, err := tx.Exec(ctx, `UPDATE learnings SET status = $1, updated = $2 WHERE pk = $3`,
			status, now.UnixNano(), id); err != nil {
			return err
		}
		l.Status, l.Updated = status, now
		return nil
	})
	if err != nil {
		return strata.Learning{}, wrap(fmt.Sprintf("set the status of learning %d", id), err)
	}
	return l, nil
}
