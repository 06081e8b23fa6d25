package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

// learningCols are the columns scanLearning reads, for a learnings table
// aliased l joined with its conversations row aliased c.
const learningCols = `l.pk, c.id, l.subject, l.text, l.node, l.first_seq, l.last_seq, l.status,
	l.superseded_by, l.created, l.updated, l.about, l.attribute, l.value, l.fact_when, l.sources`

// scanLearning reads a row of learningCols.
func scanLearning(row interface{ Scan(...any) error }) (strata.Learning, error) {
	var l strata.Learning
	var by sql.NullInt64
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
	l.SupersededBy = by.Int64
	l.Created, l.Updated = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
	return l, nil
}

// AddLearnings stores new learnings of a conversation in one transaction;
// see strata.LearningStore. Which learnings repeat or supersede others is
// strata.PlanLearnings' decision: the store reads the learnings of the
// call's subjects that are not superseded and writes the plan's rows.
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
	fail := func(err error) error { return fmt.Errorf("sqlite: add learnings of %q: %w", conversation, err) }

	tx, pk, err := s.beginIn(ctx, s.w, namespace, conversation, fail)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	stored, err := storedLearnings(ctx, tx, pk, ls)
	if err != nil {
		return nil, fail(err)
	}
	// Times are stored as nanoseconds, and read back in UTC.
	plan := strata.PlanLearnings(conversation, stored, ls, time.Unix(0, time.Now().UnixNano()).UTC())
	add := func(l strata.Learning) (int64, error) {
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO learnings (conversation, subject, text, norm, node,
			first_seq, last_seq, status, created, updated, about, attribute, value, fact_when, sources)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`,
			pk, l.Subject, l.Text, strata.NormalizeLearningText(l.Text), l.Node, l.FirstSeq, l.LastSeq, l.Status,
			l.Created.UnixNano(), l.Updated.UnixNano(), l.About, l.Attribute, l.Value, l.When,
			strata.EncodeLearningSources(l.Sources)).Scan(&id)
		if err != nil {
			return 0, fail(fmt.Errorf("learning %q: %w", l.Text, err))
		}
		return id, nil
	}
	supersede := func(ids []int64, by int64, at time.Time) error {
		b, _ := json.Marshal(ids) // an []int64 always marshals
		if _, err := tx.ExecContext(ctx, `UPDATE learnings SET status = ?, superseded_by = ?, updated = ?
			WHERE conversation = ? AND pk IN (SELECT value FROM json_each(?))`,
			strata.LearningSuperseded, by, at.UnixNano(), pk, string(b)); err != nil {
			return fail(fmt.Errorf("superseding learnings %v: %w", ids, err))
		}
		return nil
	}
	out, err := plan.Apply(add, supersede)
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fail(err)
	}
	for i := range out {
		out[i].Created, out[i].Updated = out[i].Created.UTC(), out[i].Updated.UTC()
	}
	return out, nil
}

// storedLearnings returns the learnings of conversation pk that are not
// superseded and have the subject of one of ls, oldest first.
func storedLearnings(ctx context.Context, tx *sql.Tx, pk int64, ls []strata.Learning) ([]strata.Learning, error) {
	q, err := tx.PrepareContext(ctx, `SELECT `+learningCols+`
		FROM learnings l JOIN conversations c ON c.pk = l.conversation
		WHERE l.conversation = ? AND l.subject = ? AND l.status <> 'superseded'`)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	var out []strata.Learning
	seen := map[string]bool{}
	for _, l := range ls {
		if seen[l.Subject] {
			continue
		}
		seen[l.Subject] = true
		rows, err := q.QueryContext(ctx, pk, l.Subject)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			x, err := scanLearning(rows)
			if err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, x)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out, func(a, b strata.Learning) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// Learnings returns the learnings that match f, oldest first or, with
// f.Newest, newest first; see
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
	if f.Newest {
		q += ` DESC`
	}
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
// see strata.LearningStore. The change is strata.ChangeLearningStatus'.
func (s *Store) SetLearningStatus(ctx context.Context, namespace string, id int64, status string) (strata.Learning, error) {
	if err := strata.CheckLearningStatus(id, status); err != nil {
		return strata.Learning{}, err
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
	}
	l, changed, err := strata.ChangeLearningStatus(l, status, time.Unix(0, time.Now().UnixNano()).UTC())
	if err != nil {
		return strata.Learning{}, err
	}
	if !changed {
		return l, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE learnings SET status = ?, updated = ? WHERE pk = ?`,
		l.Status, l.Updated.UnixNano(), id); err != nil {
		return strata.Learning{}, fail(err)
	}
	if err := tx.Commit(); err != nil {
		return strata.Learning{}, fail(err)
	}
	return l, nil
}
