package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
)

// learningCols are the columns scanLearning reads, for a learnings table
// aliased l joined with its conversations row aliased c.
const learningCols = `l.pk, c.id, l.subject, l.text, l.node, l.first_seq, l.last_seq, l.status,
	l.superseded_by, l.created, l.updated, l.about, l.attribute, l.value, l.fact_when, l.sources`

// scanLearning reads a row of learningCols.
func scanLearning(row pgx.Row) (strata.Learning, error) {
	var l strata.Learning
	var by *int64
	var created, updated int64
	var sources string
	if err := row.Scan(&l.ID, &l.Conversation, &l.Subject, &l.Text, &l.Node, &l.FirstSeq, &l.LastSeq, &l.Status,
		&by, &created, &updated, &l.About, &l.Attribute, &l.Value, &l.When, &sources); err != nil {
		return strata.Learning{}, err
	}
	var err error
	if l.Sources, err = strata.DecodeLearningSources(sources); err != nil {
		return strata.Learning{}, fmt.Errorf("learning %d: %w", l.ID, err)
	}
	if by != nil {
		l.SupersededBy = *by
	}
	l.Created, l.Updated = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
	return l, nil
}

// AddLearnings stores new learnings of a conversation in one transaction;
// see strata.LearningStore. Which learnings repeat or supersede others is
// strata.PlanLearnings' decision: the store locks the conversation's row
// (so that two servers adding learnings of one subject plan in turn),
// reads the learnings of the call's subjects that are not superseded, and
// writes the plan's rows.
func (s *Store) AddLearnings(ctx context.Context, namespace, conversation string, ls []strata.Learning) ([]strata.Learning, error) {
	if err := strata.CheckLearnings(conversation, ls); err != nil {
		return nil, err
	}
	for i := range ls {
		if _, err := toNanos(ls[i].Created, fmt.Sprintf("learnings[%d].created", i)); err != nil {
			return nil, err
		}
		if _, err := toNanos(ls[i].Updated, fmt.Sprintf("learnings[%d].updated", i)); err != nil {
			return nil, err
		}
	}
	var out []strata.Learning
	err := s.tx(ctx, func(tx pgx.Tx) error {
		pk, err := conversationPK(ctx, tx, namespace, conversation, true)
		if err != nil {
			return err
		}
		subjects := make([]string, 0, len(ls))
		for _, l := range ls {
			subjects = append(subjects, l.Subject)
		}
		rows, err := tx.Query(ctx, `SELECT `+learningCols+`
			FROM learnings l JOIN conversations c ON c.pk = l.conversation
			WHERE l.conversation = $1 AND l.subject = ANY($2) AND l.status <> 'superseded' ORDER BY l.pk`, pk, subjects)
		if err != nil {
			return err
		}
		stored, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (strata.Learning, error) { return scanLearning(r) })
		if err != nil {
			return err
		}
		// Times are stored as nanoseconds, and read back in UTC.
		plan := strata.PlanLearnings(conversation, stored, ls, time.Unix(0, time.Now().UnixNano()).UTC())
		add := func(l strata.Learning) (int64, error) {
			var id int64
			err := tx.QueryRow(ctx, `INSERT INTO learnings (conversation, subject, text, norm, node,
				first_seq, last_seq, status, created, updated, about, attribute, value, fact_when, sources)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING pk`,
				pk, l.Subject, l.Text, strata.NormalizeLearningText(l.Text), l.Node, l.FirstSeq, l.LastSeq, l.Status,
				l.Created.UnixNano(), l.Updated.UnixNano(), l.About, l.Attribute, l.Value, l.When,
				strata.EncodeLearningSources(l.Sources)).Scan(&id)
			if err != nil {
				return 0, fmt.Errorf("learning %q: %w", l.Text, err)
			}
			return id, nil
		}
		supersede := func(ids []int64, by int64, at time.Time) error {
			if _, err := tx.Exec(ctx, `UPDATE learnings SET status = $1, superseded_by = $2, updated = $3
				WHERE conversation = $4 AND pk = ANY($5)`, strata.LearningSuperseded, by, at.UnixNano(), pk, ids); err != nil {
				return fmt.Errorf("superseding learnings %v: %w", ids, err)
			}
			return nil
		}
		out, err = plan.Apply(add, supersede)
		return err
	})
	if err != nil {
		return nil, wrap(fmt.Sprintf("add learnings of %q", conversation), err)
	}
	for i := range out {
		out[i].Created, out[i].Updated = out[i].Created.UTC(), out[i].Updated.UTC()
	}
	return out, nil
}

// Learnings returns the learnings that match f, oldest first or, with
// f.Newest, newest first; see
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
	if f.Newest {
		q += ` DESC`
	}
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
	if err := strata.CheckLearningStatus(id, status); err != nil {
		return strata.Learning{}, err
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
		}
		var changed bool
		l, changed, err = strata.ChangeLearningStatus(l, status, time.Unix(0, time.Now().UnixNano()).UTC())
		if err != nil || !changed {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE learnings SET status = $1, updated = $2 WHERE pk = $3`, l.Status, l.Updated.UnixNano(), id)
		return err
	})
	if err != nil {
		return strata.Learning{}, wrap(fmt.Sprintf("set the status of learning %d", id), err)
	}
	return l, nil
}
