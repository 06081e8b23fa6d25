package sqlite

import (
	"database/sql"
	"database/sql/driver"
	"fmt"

	sqlitedrv "modernc.org/sqlite"

	"github.com/strata-memory/strata/internal/spanfmt"
)

// Each hot row keeps in its crc column the checksum of its content
// fields (turnSumCols; spanfmt.Row says which and how), since SQLite's
// integrity_check checks pages and indexes, not values.

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

// sum is the row's checksum (spanfmt.Row.Sum).
func (r *turnRow) sum() uint32 {
	f := spanfmt.Row{Seq: r.seq, ExtID: rowText(r.extID), Session: r.session, Label: r.label, Role: r.role, Name: r.name,
		Content: spanfmt.RowText{S: r.content, Valid: true}, Time: r.time.Int64, HasTime: r.time.Valid, Model: r.model,
		ToolCalls: rowText(r.toolCalls), ToolResults: rowText(r.toolResults), Tokens: r.tokens,
		Tags: rowText(r.tags), Metadata: rowText(r.metadata)}
	return f.Sum()
}

func rowText(s sql.NullString) spanfmt.RowText { return spanfmt.RowText{S: s.String, Valid: s.Valid} }

// check compares the row's checksum with stored, the crc column (NULL: a
// row whose content is with its span).
func (r *turnRow) check(stored sql.NullInt64) error {
	if !stored.Valid {
		return nil
	}
	if got := r.sum(); int64(got) != stored.Int64 {
		return spanfmt.SumError(r.seq, got, stored.Int64, "the file")
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
