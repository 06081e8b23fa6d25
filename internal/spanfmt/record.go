package spanfmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/archive"
)

// storedToolCall is a strata.ToolCall as stored: the arguments are kept as
// the exact text the model produced (encoding/json would compact a
// json.RawMessage and escape HTML in it), or as bytes if they are not
// valid UTF-8.
type storedToolCall struct {
	ID        string  `json:"id,omitempty"`
	Name      string  `json:"name"`
	Arguments *string `json:"arguments,omitempty"`
	ArgBytes  []byte  `json:"arguments_bytes,omitempty"`
}

// ToolCallsJSON returns the JSON text tool calls are stored as, in a
// store's turn rows and in archive records: an array of
// {"id","name","arguments"} objects whose arguments are the exact text the
// model produced ("arguments_bytes", base64, when that text is not valid
// UTF-8).
func ToolCallsJSON(calls []strata.ToolCall) ([]byte, error) {
	out := make([]storedToolCall, len(calls))
	for k, c := range calls {
		out[k] = storedToolCall{ID: c.ID, Name: c.Name}
		switch {
		case len(c.Arguments) == 0:
		case utf8.Valid(c.Arguments):
			a := string(c.Arguments)
			out[k].Arguments = &a
		default:
			out[k].ArgBytes = c.Arguments
		}
	}
	return json.Marshal(out)
}

// ParseToolCalls reverses ToolCallsJSON.
func ParseToolCalls(text []byte) ([]strata.ToolCall, error) {
	var calls []storedToolCall
	if err := json.Unmarshal(text, &calls); err != nil {
		return nil, err
	}
	out := make([]strata.ToolCall, len(calls))
	for k, c := range calls {
		out[k] = strata.ToolCall{ID: c.ID, Name: c.Name}
		if c.Arguments != nil {
			out[k].Arguments = json.RawMessage(*c.Arguments)
		} else if c.ArgBytes != nil {
			out[k].Arguments = json.RawMessage(c.ArgBytes)
		}
	}
	return out, nil
}

// A turn as an archive segment holds it (format 2) is one JSON array:
//
//	[ext_id, session_label, role, name, time, content]
//	[ext_id, session_label, role, name, time, content, {more}]
//
// time is RFC 3339 in UTC ("" when unknown), and the optional seventh
// element holds the fields a chat turn rarely has: model, tool_calls
// (ToolCallsJSON), tool_results, importance, tags and metadata. The
// session number and the token count are not archived: both are derived
// at import, and the cold row keeps them. Format 1 records, one JSON
// object per turn with every field by name (recordV1), are still read.
type recordV1 struct {
	ExtID        string          `json:"ext_id,omitempty"`
	Session      int             `json:"session,omitempty"`
	SessionLabel string          `json:"session_label,omitempty"`
	Role         string          `json:"role"`
	Name         string          `json:"name,omitempty"`
	Content      string          `json:"content"`
	Time         string          `json:"time,omitempty"`
	Model        string          `json:"model,omitempty"`
	ToolCalls    json.RawMessage `json:"tool_calls,omitempty"`
	ToolResults  json.RawMessage `json:"tool_results,omitempty"`
	Tokens       int             `json:"tokens"`
	Importance   float64         `json:"importance,omitempty"`
	Tags         json.RawMessage `json:"tags,omitempty"`
	Metadata     json.RawMessage `json:"metadata,omitempty"`
}

// recordMore is the optional seventh element of a format 2 record.
type recordMore struct {
	Model       string          `json:"model,omitempty"`
	ToolCalls   json.RawMessage `json:"tool_calls,omitempty"`
	ToolResults json.RawMessage `json:"tool_results,omitempty"`
	Importance  float64         `json:"importance,omitempty"`
	Tags        json.RawMessage `json:"tags,omitempty"`
	Metadata    json.RawMessage `json:"metadata,omitempty"`
}

var recordFields = [...]string{"ext_id", "session_label", "role", "name", "time", "content"}

// EncodeRecord returns t as an archive record (format 2) keyed by its seq.
func EncodeRecord(t *strata.Turn) (archive.Record, error) {
	var more recordMore
	var err error
	more.Model, more.Importance = t.Model, t.Importance
	if len(t.ToolCalls) > 0 {
		if more.ToolCalls, err = ToolCallsJSON(t.ToolCalls); err != nil {
			return archive.Record{}, fmt.Errorf("tool_calls: %w", err)
		}
	}
	for _, f := range []struct {
		name string
		v    any
		n    int
		dst  *json.RawMessage
	}{
		{"tool_results", t.ToolResults, len(t.ToolResults), &more.ToolResults},
		{"tags", t.Tags, len(t.Tags), &more.Tags},
		{"metadata", t.Metadata, len(t.Metadata), &more.Metadata},
	} {
		if f.n == 0 {
			continue
		}
		if *f.dst, err = json.Marshal(f.v); err != nil {
			return archive.Record{}, fmt.Errorf("%s: %w", f.name, err)
		}
	}
	var tm string
	if !t.Time.IsZero() {
		tm = t.Time.UTC().Format(time.RFC3339Nano)
	}
	row := []any{t.ExtID, t.SessionLabel, string(t.Role), t.Name, tm, t.Content}
	if more.Model != "" || more.ToolCalls != nil || more.ToolResults != nil || more.Importance != 0 || more.Tags != nil || more.Metadata != nil {
		row = append(row, more)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(row); err != nil {
		return archive.Record{}, err
	}
	return archive.Record{Seq: t.Seq, Line: bytes.TrimSuffix(b.Bytes(), []byte("\n"))}, nil
}

// Record returns t as an archive record after checking that the record
// decodes back to t (SameTurn). A store archives only checked records.
func Record(t *strata.Turn) (archive.Record, error) {
	rec, err := EncodeRecord(t)
	if err != nil {
		return archive.Record{}, err
	}
	if err := CheckRecord(rec.Line, t); err != nil {
		return archive.Record{}, err
	}
	return rec, nil
}

// CheckRecord reports an error unless the record line decodes to t.
func CheckRecord(line []byte, t *strata.Turn) error {
	back, err := DecodeRecord(line, t)
	if err != nil || !SameTurn(&back, t) {
		return fmt.Errorf("it does not round-trip (%v)", err)
	}
	return nil
}

// DecodeRecord decodes an archived turn of either format. row is the
// turn's row in the store (or the turn itself, when checking a record
// before it is written): its seq, and for format 2 its session number and
// token count, which that format leaves to the row.
func DecodeRecord(line []byte, row *strata.Turn) (strata.Turn, error) {
	var r recordV1
	if len(line) > 0 && line[0] == '[' {
		var a []json.RawMessage
		if err := json.Unmarshal(line, &a); err != nil {
			return strata.Turn{}, err
		}
		if len(a) != 6 && len(a) != 7 {
			return strata.Turn{}, fmt.Errorf("record has %d elements, want 6 or 7", len(a))
		}
		for i, f := range []*string{&r.ExtID, &r.SessionLabel, &r.Role, &r.Name, &r.Time, &r.Content} {
			if err := json.Unmarshal(a[i], f); err != nil {
				return strata.Turn{}, fmt.Errorf("%s: %w", recordFields[i], err)
			}
		}
		if len(a) == 7 {
			var m recordMore
			if err := json.Unmarshal(a[6], &m); err != nil {
				return strata.Turn{}, fmt.Errorf("more: %w", err)
			}
			r.Model, r.ToolCalls, r.ToolResults, r.Importance, r.Tags, r.Metadata = m.Model, m.ToolCalls, m.ToolResults, m.Importance, m.Tags, m.Metadata
		}
		r.Session, r.Tokens = row.Session, row.Tokens
	} else if err := json.Unmarshal(line, &r); err != nil {
		return strata.Turn{}, err
	}
	t := strata.Turn{Seq: row.Seq, ExtID: r.ExtID, Session: r.Session, SessionLabel: r.SessionLabel,
		Role: strata.Role(r.Role), Name: r.Name, Content: r.Content, Model: r.Model, Tokens: r.Tokens,
		Importance: r.Importance}
	if r.Time != "" {
		tm, err := time.Parse(time.RFC3339Nano, r.Time)
		if err != nil {
			return t, fmt.Errorf("time: %w", err)
		}
		t.Time = tm.UTC()
	}
	if present(r.ToolCalls) {
		calls, err := ParseToolCalls(r.ToolCalls)
		if err != nil {
			return t, fmt.Errorf("turn %d: tool_calls: %w", t.Seq, err)
		}
		t.ToolCalls = calls
	}
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  any
	}{
		{"tool_results", r.ToolResults, &t.ToolResults},
		{"tags", r.Tags, &t.Tags},
		{"metadata", r.Metadata, &t.Metadata},
	} {
		if !present(f.raw) {
			continue
		}
		if err := json.Unmarshal(f.raw, f.dst); err != nil {
			return t, fmt.Errorf("turn %d: %s: %w", t.Seq, f.name, err)
		}
	}
	return t, nil
}

// present reports whether a record field holds a value (not absent, not
// null), as a NULL column does not.
func present(m json.RawMessage) bool { return len(m) > 0 && string(m) != "null" }
