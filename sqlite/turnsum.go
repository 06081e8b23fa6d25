package sqlite

import (
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"unsafe"

	sqlitedrv "modernc.org/sqlite"
)

// A hot turn's row holds the turn's whole content, and nothing else
// checks it: warm blocks, archive segments and compressed node texts
// carry checksums, and SQLite's integrity_check checks pages and indexes,
// not values. So each hot row keeps in its crc column the CRC-32C of its
// content fields (turnSumCols, importance aside: a pin changes it, and it
// is not content), computed on insert and on every write that changes
// them, and checked whenever a row is read: a row changed behind the
// store's back (a flipped bit on disk, an edit by hand) is an error that
// names the turn instead of a turn served silently. A row whose content
// moved to its span (warm or cold) has crc NULL: its content is checked
// with the span's block or segment.

// turnRow is the stored values of a turn row's content fields, as
// scanTurn reads them.
type turnRow struct {
	seq                                    int64
	extID                                  sql.NullString
	session                                int64
	label, role, name, content             string
	time                                   sql.NullInt64
	model                                  string
	toolCalls, toolResults, tags, metadata sql.NullString
	tokens                                 int64
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sum is the row's checksum: CRC-32C over each field in turnSumCols
// order, integers as 8 little-endian bytes, texts as a NULL marker and
// their length before their bytes.
func (r *turnRow) sum() uint32 {
	var b [9]byte
	c := uint32(0)
	num := func(n int64) {
		binary.LittleEndian.PutUint64(b[:8], uint64(n))
		c = crc32.Update(c, castagnoli, b[:8])
	}
	text := func(s string, valid bool) {
		if !valid {
			b[0] = 0
			c = crc32.Update(c, castagnoli, b[:1])
			return
		}
		b[0] = 1
		binary.LittleEndian.PutUint64(b[1:9], uint64(len(s)))
		c = crc32.Update(c, castagnoli, b[:9])
		c = crc32.Update(c, castagnoli, unsafe.Slice(unsafe.StringData(s), len(s)))
	}
	num(r.seq)
	text(r.extID.String, r.extID.Valid)
	num(r.session)
	text(r.label, true)
	text(r.role, true)
	text(r.name, true)
	text(r.content, true)
	if r.time.Valid {
		num(1)
		num(r.time.Int64)
	} else {
		num(0)
	}
	text(r.model, true)
	text(r.toolCalls.String, r.toolCalls.Valid)
	text(r.toolResults.String, r.toolResults.Valid)
	num(r.tokens)
	text(r.tags.String, r.tags.Valid)
	text(r.metadata.String, r.metadata.Valid)
	return c
}

// check compares the row's checksum with stored, the crc column (NULL: a
// row whose content is with its span).
func (r *turnRow) check(stored sql.NullInt64) error {
	if !stored.Valid {
		return nil
	}
	if got := r.sum(); int64(got) != stored.Int64 {
		return fmt.Errorf("turn %d: its stored row fails its checksum (CRC-32C %08x, the row records %08x): "+
			"the row was changed outside strata or the file is damaged; restore it from a backup", r.seq, got, uint32(stored.Int64))
	}
	return nil
}

// encodedRow is the row the store writes for turn t (encoded as e) at seq.
func encodedRow(seq int64, session int, label, role, name, content, model string, tokens int, e *encodedTurn) turnRow {
	r := turnRow{seq: seq, session: int64(session), label: label, role: role, name: name, content: content,
		model: model, tokens: int64(tokens)}
	if s, ok := e.extID.(string); ok {
		r.extID = sql.NullString{String: s, Valid: true}
	}
	if n, ok := e.time.(int64); ok {
		r.time = sql.NullInt64{Int64: n, Valid: true}
	}
	r.toolCalls = nullText(e.toolCalls)
	r.toolResults = nullText(e.toolResults)
	r.tags = nullText(e.tags)
	r.metadata = nullText(e.metadata)
	return r
}

func nullText(v any) sql.NullString {
	s, ok := v.(string)
	return sql.NullString{String: s, Valid: ok}
}

// turnSumCols are the arguments of the SQL function strata_turn_crc, for
// a turns table: the migration that added the column fills it with them.
const turnSumCols = `seq, ext_id, session, session_label, role, name, content, time, model,
	tool_calls, tool_results, tokens, tags, metadata`

func init() {
	// The function is registered with the driver, so every connection of
	// this process has it; nothing but the migration calls it.
	if err := sqlitedrv.RegisterDeterministicScalarFunction("strata_turn_crc", 14, sqlTurnSum); err != nil {
		panic("sqlite: registering strata_turn_crc: " + err.Error())
	}
}

// sqlTurnSum is strata_turn_crc(turnSumCols): turnRow.sum of a stored row.
func sqlTurnSum(_ *sqlitedrv.FunctionContext, args []driver.Value) (driver.Value, error) {
	str := func(v driver.Value) sql.NullString {
		switch v := v.(type) {
		case string:
			return sql.NullString{String: v, Valid: true}
		case []byte:
			return sql.NullString{String: string(v), Valid: true}
		case nil:
			return sql.NullString{}
		}
		return sql.NullString{String: fmt.Sprint(v), Valid: true}
	}
	num := func(v driver.Value) sql.NullInt64 {
		switch v := v.(type) {
		case int64:
			return sql.NullInt64{Int64: v, Valid: true}
		case float64:
			return sql.NullInt64{Int64: int64(v), Valid: true}
		}
		return sql.NullInt64{}
	}
	r := turnRow{seq: num(args[0]).Int64, extID: str(args[1]), session: num(args[2]).Int64,
		label: str(args[3]).String, role: str(args[4]).String, name: str(args[5]).String, content: str(args[6]).String,
		time: num(args[7]), model: str(args[8]).String, toolCalls: str(args[9]), toolResults: str(args[10]),
		tokens: num(args[11]).Int64, tags: str(args[12]), metadata: str(args[13])}
	return int64(r.sum()), nil
}
