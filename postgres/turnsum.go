package postgres

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"unsafe"

	"github.com/jackc/pgx/v5"

	"github.com/strata-memory/strata"
)

// A hot turn's row holds the turn's whole content, and nothing else
// checks it: warm blocks, archive segments and compressed node texts
// carry checksums, and PostgreSQL's page checksums (when the cluster has
// them at all) catch a damaged page, not a value changed by a statement.
// So each hot row keeps in its crc column the CRC-32C of its content
// fields (the columns turnRow holds: every content column of the row but
// the importance, which a pin changes and which is not content), computed
// in Go on insert and on every write that changes them, and checked
// whenever a row is read: a row changed behind the store's back (an edit
// by hand, a restore gone wrong, a bit flipped on disk) is an error that
// names the turn instead of a turn served silently. A row whose content
// moved to its span (warm or cold) has crc NULL: its content is checked
// with the span's block or segment.
//
// The sum is the sqlite store's (same fields, same order, same
// encoding), so the two stores agree on a turn's checksum, though
// nothing relies on it.

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

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sum is the row's checksum: CRC-32C over each field in the order of the
// table's columns, integers as 8 little-endian bytes, texts (and the
// content's bytes) as a NULL marker and their length before their bytes.
func (r *turnRow) sum() uint32 {
	var b [9]byte
	c := uint32(0)
	num := func(n int64) {
		binary.LittleEndian.PutUint64(b[:8], uint64(n))
		c = crc32.Update(c, castagnoli, b[:8])
	}
	bytes := func(p []byte, valid bool) {
		if !valid {
			b[0] = 0
			c = crc32.Update(c, castagnoli, b[:1])
			return
		}
		b[0] = 1
		binary.LittleEndian.PutUint64(b[1:9], uint64(len(p)))
		c = crc32.Update(c, castagnoli, b[:9])
		c = crc32.Update(c, castagnoli, p)
	}
	text := func(s string, valid bool) {
		bytes(unsafe.Slice(unsafe.StringData(s), len(s)), valid)
	}
	nullText := func(s *string) {
		if s == nil {
			text("", false)
		} else {
			text(*s, true)
		}
	}
	num(r.seq)
	nullText(r.extID)
	num(r.session)
	text(r.label, true)
	text(r.role, true)
	text(r.name, true)
	bytes(r.content, r.content != nil)
	if r.time != nil {
		num(1)
		num(*r.time)
	} else {
		num(0)
	}
	text(r.model, true)
	nullText(r.toolCalls)
	nullText(r.toolResults)
	num(r.tokens)
	nullText(r.tags)
	nullText(r.metadata)
	return c
}

// check compares the row's checksum with stored, the crc column (NULL: a
// row whose content is with its span).
func (r *turnRow) check(stored *int64) error {
	if stored == nil {
		return nil
	}
	if got := r.sum(); int64(got) != *stored {
		return fmt.Errorf("turn %d: its stored row fails its checksum (CRC-32C %08x, the row records %08x): "+
			"the row was changed outside strata or the database is damaged; restore it from a backup",
			r.seq, got, uint32(*stored))
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
