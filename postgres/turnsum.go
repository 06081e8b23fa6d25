package postgres

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/spanfmt"
)

// Each hot row keeps in its crc column the checksum of its content
// fields (the columns turnRow holds; spanfmt.Row says which and how),
// computed in Go, since PostgreSQL's page checksums (when the cluster has
// them at all) catch a damaged page, not a value changed by a statement.

// turnRow is the stored values of a turn row's content fields, as
// scanTurn reads them.
type turnRow struct {
	seq                                    int64
	extID                                  *string
	session                                int64
	label, role, name                      string
	content                                []byte // NULL in a stub
	time                                   *int64
	model                                  string
	toolCalls, toolResults, tags, metadata *string
	tokens                                 int64
}

// sum is the row's checksum (spanfmt.Row.Sum).
func (r *turnRow) sum() uint32 {
	content := spanfmt.RowText{S: unsafe.String(unsafe.SliceData(r.content), len(r.content)), Valid: r.content != nil}
	f := spanfmt.Row{Seq: r.seq, ExtID: rowText(r.extID), Session: r.session, Label: r.label, Role: r.role, Name: r.name,
		Content: content, Model: r.model, ToolCalls: rowText(r.toolCalls), ToolResults: rowText(r.toolResults),
		Tokens: r.tokens, Tags: rowText(r.tags), Metadata: rowText(r.metadata)}
	if r.time != nil {
		f.Time, f.HasTime = *r.time, true
	}
	return f.Sum()
}

// rowText is a nullable text column as spanfmt.Row holds it.
func rowText(s *string) spanfmt.RowText {
	if s == nil {
		return spanfmt.RowText{}
	}
	return spanfmt.RowText{S: *s, Valid: true}
}

// check compares the row's checksum with stored, the crc column (NULL: a
// row whose content is with its span).
func (r *turnRow) check(stored *int64) error {
	if stored == nil {
		return nil
	}
	if got := r.sum(); int64(got) != *stored {
		return spanfmt.SumError(r.seq, got, *stored, "the database")
	}
	return nil
}

// encodedRow is the row the store writes for turn t (encoded as e) at seq.
func encodedRow(seq int64, t *strata.Turn, e *encodedTurn) turnRow {
	content := []byte(t.Content)
	if content == nil {
		content = []byte{} // an empty content is stored as such, not NULL
	}
	return turnRow{seq: seq, extID: nullString(t.ExtID), session: int64(t.Session), label: t.SessionLabel,
		role: string(t.Role), name: t.Name, content: content, time: e.time, model: t.Model,
		toolCalls: e.toolCalls, toolResults: e.toolResults, tags: e.tags, metadata: e.metadata, tokens: int64(t.Tokens)}
}

// sumBatch is how many rows fillTurnSums reads and updates at once.
const sumBatch = 2000

// fillTurnSums gives every hot row its checksum, in key order, sumBatch
// rows at a time: the Go step of migration 9, which adds the column
// (PostgreSQL has no CRC-32C of its own to fill it with). It runs in the
// migration's transaction, so a failure leaves the store at version 8.
func fillTurnSums(ctx context.Context, tx pgx.Tx) error {
	after := int64(0)
	for {
		rows, err := tx.Query(ctx, `SELECT t.pk, t.seq, t.ext_id, t.session, t.session_label, t.role, t.name, t.content,
			t.time, t.model, t.tool_calls, t.tool_results, t.tokens, t.tags, t.metadata
			FROM turns t WHERE t.tier = $1 AND t.pk > $2 ORDER BY t.pk LIMIT $3`, tierHot, after, sumBatch)
		if err != nil {
			return fmt.Errorf("checksums of hot rows: %w", err)
		}
		var pks, sums []int64
		var r turnRow
		_, err = pgx.ForEachRow(rows, []any{&after, &r.seq, &r.extID, &r.session, &r.label, &r.role, &r.name, &r.content,
			&r.time, &r.model, &r.toolCalls, &r.toolResults, &r.tokens, &r.tags, &r.metadata}, func() error {
			pks, sums = append(pks, after), append(sums, int64(r.sum()))
			return nil
		})
		if err != nil {
			return fmt.Errorf("checksums of hot rows: %w", err)
		}
		if len(pks) == 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, `UPDATE turns t SET crc = u.crc FROM unnest($1::bigint[], $2::bigint[]) AS u(pk, crc)
			WHERE t.pk = u.pk`, pks, sums); err != nil {
			return fmt.Errorf("checksums of hot rows: %w", err)
		}
	}
}
