package ctf

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/strata-memory/strata"
)

// The turn fields, in canonical order.
const (
	colSeq = iota
	colExtID
	colSession
	colSessionLabel
	colRole
	colName
	colContent
	colTime
	colModel
	colToolCalls
	colToolResults
	colTokens
	colImportance
	colTags
	colMetadata
	numTurnCols
)

var turnNames = [numTurnCols]string{
	"seq", "ext_id", "session", "session_label", "role", "name", "content",
	"time", "model", "tool_calls", "tool_results", "tokens", "importance",
	"tags", "metadata",
}

// timestampField is the original sketch's name for the time field.
const timestampField = "timestamp"

// TurnFields returns the names of the turn fields in canonical order: seq,
// ext_id, session, session_label, role, name, content, time, model,
// tool_calls, tool_results, tokens, importance, tags, metadata. Decoding
// also accepts "timestamp" for "time".
func TurnFields() []string { return append([]string(nil), turnNames[:]...) }

// TurnsType is the type= attribute of a turn block. Encoders leave it out;
// decoders of turns accept a block without type= or with this one.
const TurnsType = "turns"

// turnCols resolves field names; line is the line to blame (1 when
// decoding, 0 when encoding).
func turnCols(fields []string, line int) ([]int, error) {
	cols := make([]int, len(fields))
	seen := [numTurnCols]bool{}
	for i, f := range fields {
		c := -1
		for j, n := range turnNames {
			if n == f {
				c = j
			}
		}
		if f == timestampField {
			c = colTime
		}
		if c < 0 {
			return nil, &Error{Line: line, Field: f, Msg: "not a turn field (want " + strings.Join(turnNames[:], ", ") + ")"}
		}
		if seen[c] {
			return nil, &Error{Line: line, Field: f, Msg: "names the same turn field as an earlier one"}
		}
		seen[c] = true
		cols[i] = c
	}
	return cols, nil
}

// turnEmpty reports whether field c of t holds its zero value.
func turnEmpty(t *strata.Turn, c int) bool {
	switch c {
	case colSeq:
		return t.Seq == 0
	case colExtID:
		return t.ExtID == ""
	case colSession:
		return t.Session == 0
	case colSessionLabel:
		return t.SessionLabel == ""
	case colRole:
		return t.Role == ""
	case colName:
		return t.Name == ""
	case colContent:
		return t.Content == ""
	case colTime:
		return t.Time.IsZero()
	case colModel:
		return t.Model == ""
	case colToolCalls:
		return len(t.ToolCalls) == 0
	case colToolResults:
		return len(t.ToolResults) == 0
	case colTokens:
		return t.Tokens == 0
	case colImportance:
		return t.Importance == 0
	case colTags:
		return len(t.Tags) == 0
	default:
		return len(t.Metadata) == 0
	}
}

// defaultTurnFields returns the fields non-empty in at least one turn, in
// canonical order; role and content when there are none.
func defaultTurnFields(turns []strata.Turn) []string {
	var used [numTurnCols]bool
	n := 0
	for i := range turns {
		for c := range used {
			if !used[c] && !turnEmpty(&turns[i], c) {
				used[c] = true
				n++
			}
		}
		if n == numTurnCols {
			break
		}
	}
	if n == 0 {
		return []string{turnNames[colRole], turnNames[colContent]}
	}
	fields := make([]string, 0, n)
	for c, u := range used {
		if u {
			fields = append(fields, turnNames[c])
		}
	}
	return fields
}

// wireCall is a tool call as written: the arguments are a JSON string that
// holds their exact bytes.
type wireCall struct {
	ID        string  `json:"id,omitempty"`
	Name      string  `json:"name"`
	Arguments *string `json:"arguments,omitempty"`
}

// wireCallIn is a tool call as read: arguments may also be raw JSON.
type wireCallIn struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// turnWriter appends turns as rows.
type turnWriter struct {
	fields []string
	cols   []int
	js     jsonWriter
	calls  []wireCall
	args   []string
}

// appendTurn appends the fields of t, tab-separated, without the LF.
func (w *turnWriter) appendTurn(dst []byte, t *strata.Turn, row int) ([]byte, error) {
	for i, c := range w.cols {
		if i > 0 {
			dst = append(dst, '\t')
		}
		var msg string
		switch c {
		case colSeq:
			dst = appendInt(dst, t.Seq)
		case colExtID:
			dst, msg = appendText(dst, t.ExtID)
		case colSession:
			dst = appendInt(dst, int64(t.Session))
		case colSessionLabel:
			dst, msg = appendText(dst, t.SessionLabel)
		case colRole:
			dst, msg = appendText(dst, string(t.Role))
		case colName:
			dst, msg = appendText(dst, t.Name)
		case colContent:
			dst, msg = appendText(dst, t.Content)
		case colTime:
			dst, msg = appendTime(dst, t.Time)
		case colModel:
			dst, msg = appendText(dst, t.Model)
		case colToolCalls:
			dst, msg = w.appendCalls(dst, t.ToolCalls)
		case colToolResults:
			dst, msg = w.appendResults(dst, t.ToolResults)
		case colTokens:
			dst = appendInt(dst, int64(t.Tokens))
		case colImportance:
			dst = appendFloat(dst, t.Importance)
		case colTags:
			dst, msg = w.js.appendStrings(dst, t.Tags)
		case colMetadata:
			if len(t.Metadata) > 0 {
				if msg = validJSONText(t.Metadata, "metadata"); msg == "" {
					dst, msg = w.js.appendJSON(dst, t.Metadata)
				}
			}
		}
		if msg != "" {
			return dst, &Error{Row: row, Field: w.fields[i], Msg: msg}
		}
	}
	return dst, nil
}

func (w *turnWriter) appendCalls(dst []byte, calls []strata.ToolCall) ([]byte, string) {
	if len(calls) == 0 {
		return dst, ""
	}
	w.calls = w.calls[:0]
	w.args = w.args[:0]
	for i := range calls {
		c := &calls[i]
		if !utf8.ValidString(c.ID) || !utf8.ValidString(c.Name) || !utf8.ValidString(string(c.Arguments)) {
			return dst, fmt.Sprintf("call %d: invalid UTF-8", i)
		}
		w.calls = append(w.calls, wireCall{ID: c.ID, Name: c.Name})
		if len(c.Arguments) > 0 {
			w.args = append(w.args, string(c.Arguments))
		} else {
			w.args = append(w.args, "")
		}
	}
	for i := range w.calls {
		if len(calls[i].Arguments) > 0 {
			w.calls[i].Arguments = &w.args[i]
		}
	}
	return w.js.appendJSON(dst, w.calls)
}

func (w *turnWriter) appendResults(dst []byte, results []strata.ToolResult) ([]byte, string) {
	if len(results) == 0 {
		return dst, ""
	}
	for i := range results {
		r := &results[i]
		if !utf8.ValidString(r.CallID) || !utf8.ValidString(r.Name) || !utf8.ValidString(r.Content) {
			return dst, fmt.Sprintf("result %d: invalid UTF-8", i)
		}
	}
	return w.js.appendJSON(dst, results)
}

func newTurnWriter(fields []string) (*turnWriter, error) {
	cols, err := turnCols(fields, 0)
	if err != nil {
		return nil, err
	}
	return &turnWriter{fields: fields, cols: cols}, nil
}

// EncodeTurns returns the turns as a block with the header attribute
// turns=N. fields chooses the fields, in order (see TurnFields); nil means
// every field that is non-empty in at least one turn, in canonical order
// (role and content when none is).
//
// Times are written in UTC, so a decoded time is in UTC; the zero time is
// null. Empty strings, zero numbers and empty lists are written as they
// are (an empty field for strings and lists). Every string, including those
// inside tool calls, results, tags and metadata, must be valid UTF-8: else
// the error names the row and field.
func EncodeTurns(turns []strata.Turn, fields []string) ([]byte, error) {
	if fields == nil {
		fields = defaultTurnFields(turns)
	}
	w, err := newTurnWriter(fields)
	if err != nil {
		return nil, err
	}
	h := Header{Fields: fields, Attrs: []Attr{CountAttr("turns", len(turns))}}
	if err := h.Validate(); err != nil {
		return nil, err
	}
	size := 64
	for i := range turns {
		size += len(turns[i].Content) + 16*len(fields)
	}
	b := h.appendTo(make([]byte, 0, size))
	b = append(b, '\n')
	for i := range turns {
		if b, err = w.appendTurn(b, &turns[i], i+1); err != nil {
			return nil, err
		}
		b = append(b, '\n')
	}
	return b, nil
}

// TurnEncoder writes turns to a stream.
type TurnEncoder struct {
	e *Encoder
	w *turnWriter
}

// NewTurnEncoder returns an encoder of turns with the given fields (nil
// means all of TurnFields). If n >= 0 the header says turns=n and Close
// checks that n turns were written.
func NewTurnEncoder(w io.Writer, fields []string, n int) (*TurnEncoder, error) {
	if fields == nil {
		fields = TurnFields()
	}
	tw, err := newTurnWriter(fields)
	if err != nil {
		return nil, err
	}
	h := Header{Fields: fields}
	if n >= 0 {
		h.Attrs = []Attr{CountAttr("turns", n)}
	}
	e, err := NewEncoder(w, h)
	if err != nil {
		return nil, err
	}
	return &TurnEncoder{e: e, w: tw}, nil
}

// Encode writes one turn.
func (e *TurnEncoder) Encode(t *strata.Turn) error {
	return e.e.encodeRaw(func(dst []byte, row int) ([]byte, error) { return e.w.appendTurn(dst, t, row) })
}

// Close flushes the output and checks the turn count of the header.
func (e *TurnEncoder) Close() error { return e.e.Close() }

// TurnDecoder reads turns from a block.
type TurnDecoder struct {
	d    *Decoder
	cols []int
}

// NewTurnDecoder reads the header of a turn block from r.
func NewTurnDecoder(r io.Reader) (*TurnDecoder, error) { return newTurnDecoder(NewDecoder(r)) }

func newTurnDecoder(d *Decoder) (*TurnDecoder, error) {
	h, err := d.Header()
	if err != nil {
		return nil, err
	}
	if typ, ok := h.Attr("type"); ok && typ != TurnsType {
		return nil, &Error{Line: 1, Msg: fmt.Sprintf("type=%s is not a turn block", typ)}
	}
	cols, err := turnCols(h.Fields, 1)
	if err != nil {
		return nil, err
	}
	d.reuse = true
	return &TurnDecoder{d: d, cols: cols}, nil
}

// Header returns the header of the block.
func (d *TurnDecoder) Header() Header { return d.d.h }

// Line returns the line of the turn Next returned last (the header is
// line 1).
func (d *TurnDecoder) Line() int { return d.d.line }

// Next returns the next turn, or io.EOF after the last one.
func (d *TurnDecoder) Next() (strata.Turn, error) {
	row, err := d.d.Next()
	if err != nil {
		return strata.Turn{}, err
	}
	var t strata.Turn
	for i, c := range d.cols {
		v := row[i]
		var msg string
		var n int64
		if !utf8.ValidString(v.S) {
			// Turn fields are text; JSON decoding below would turn the
			// bad bytes into U+FFFD without a word.
			err := &Error{Line: d.d.line, Field: d.d.h.Fields[i], Msg: "invalid UTF-8"}
			d.d.err = err
			return strata.Turn{}, err
		}
		switch c {
		case colSeq:
			t.Seq, msg = parseInt(v, 64)
		case colExtID:
			t.ExtID = v.S
		case colSession:
			n, msg = parseInt(v, strconv.IntSize)
			t.Session = int(n)
		case colSessionLabel:
			t.SessionLabel = v.S
		case colRole:
			t.Role = strata.Role(v.S)
		case colName:
			t.Name = v.S
		case colContent:
			t.Content = v.S
		case colTime:
			t.Time, msg = parseTime(v)
		case colModel:
			t.Model = v.S
		case colToolCalls:
			t.ToolCalls, msg = parseCalls(v)
		case colToolResults:
			var ok bool
			if ok, msg = parseJSON(v, &t.ToolResults, "an array of tool results"); ok && len(t.ToolResults) == 0 {
				t.ToolResults = nil
			}
		case colTokens:
			n, msg = parseInt(v, strconv.IntSize)
			t.Tokens = int(n)
		case colImportance:
			t.Importance, msg = parseFloat(v)
		case colTags:
			t.Tags, msg = parseStrings(v)
		case colMetadata:
			var ok bool
			if ok, msg = parseJSON(v, &t.Metadata, "an object"); ok && len(t.Metadata) == 0 {
				t.Metadata = nil
			}
		}
		if msg != "" {
			err := &Error{Line: d.d.line, Field: d.d.h.Fields[i], Msg: msg}
			d.d.err = err
			return strata.Turn{}, err
		}
	}
	return t, nil
}

func parseCalls(v Value) ([]strata.ToolCall, string) {
	var in []wireCallIn
	if _, msg := parseJSON(v, &in, "an array of tool calls"); msg != "" || len(in) == 0 {
		return nil, msg
	}
	calls := make([]strata.ToolCall, len(in))
	for i, c := range in {
		calls[i] = strata.ToolCall{ID: c.ID, Name: c.Name}
		a := c.Arguments
		switch {
		case len(a) == 0 || string(a) == "null":
		case a[0] == '"':
			var s string
			if err := json.Unmarshal(a, &s); err != nil {
				return nil, fmt.Sprintf("call %d: arguments: %v", i, err)
			}
			if s != "" {
				calls[i].Arguments = json.RawMessage(s)
			}
		default:
			calls[i].Arguments = append(json.RawMessage(nil), a...)
		}
	}
	return calls, ""
}

// DecodeTurns decodes a turn block: one written by EncodeTurns, or by the
// original sketch (fields role, content, timestamp, model, with times
// without a zone read as UTC). Null fields read as zero values. A field
// that is not a turn field is an error, as is a type= other than turns.
// DecodeTurns(EncodeTurns(ts, nil)) equals ts, times taken in UTC and
// empty lists and maps read as nil.
func DecodeTurns(data []byte) ([]strata.Turn, error) {
	d, err := newTurnDecoder(newStringDecoder(string(data)))
	if err != nil {
		return nil, err
	}
	turns := make([]strata.Turn, 0, min(max(d.d.want, 0), 1<<16))
	for {
		t, err := d.Next()
		if err == io.EOF {
			return turns, nil
		}
		if err != nil {
			return nil, err
		}
		turns = append(turns, t)
	}
}
