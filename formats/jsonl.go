package formats

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"strata"
)

// jsonlFields are the keys a jsonl line may have, in the order they are
// checked.
var jsonlFields = []string{
	"conversation", "session", "ext_id", "role", "name", "content", "time", "model",
	"metadata", "importance", "tags", "tool_calls", "tool_results", "tokens",
}

var jsonlKnown = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range jsonlFields {
		m[f] = true
	}
	return m
}()

type jsonlReader struct {
	name string
	br   *bufio.Reader
	ids  *idDeriver
	line int
	buf  []byte
	err  error // sticky: io.EOF or a read error
}

func (r *jsonlReader) Next() (Record, error) {
	for r.err == nil {
		line, err := r.readLine()
		if err != nil && err != io.EOF {
			r.err = fmt.Errorf("%s:%d: %w", r.name, r.line+1, err)
			return Record{}, r.err
		}
		if err == io.EOF {
			r.err = io.EOF
			if len(line) == 0 {
				break
			}
		}
		r.line++
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		rec, perr := r.parse(line)
		if cap(r.buf) > 4<<20 {
			r.buf = nil // do not keep a huge line's buffer
		}
		return rec, perr
	}
	return Record{}, r.err
}

// readLine returns the next line, with its newline, however long. The slice
// is valid until the next call.
func (r *jsonlReader) readLine() ([]byte, error) {
	r.buf = r.buf[:0]
	for {
		chunk, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			r.buf = append(r.buf, chunk...)
			continue
		}
		if len(r.buf) == 0 {
			return chunk, err
		}
		r.buf = append(r.buf, chunk...)
		return r.buf, err
	}
}

func (r *jsonlReader) parse(line []byte) (Record, error) {
	if line[0] != '{' {
		return Record{}, &ParseError{File: r.name, Line: r.line, Msg: "want a JSON object per line, got " + kind(line)}
	}
	o, err := parseObject(r.name, r.line, "", line)
	if err != nil {
		return Record{}, err
	}
	if err := checkKeys(o, jsonlKnown, jsonlFields); err != nil {
		return Record{}, err
	}
	var t strata.Turn
	conv, err := o.id("conversation")
	if err != nil {
		return Record{}, err
	}
	if t.SessionLabel, err = o.id("session"); err != nil {
		return Record{}, err
	}
	if t.ExtID, err = o.id("ext_id"); err != nil {
		return Record{}, err
	}
	role, err := o.str("role")
	if err != nil {
		return Record{}, err
	}
	if role == "" {
		return Record{}, o.errf("role", "missing (want user, assistant, system or tool)")
	}
	if t.Role, err = strata.ParseRole(role); err != nil {
		return Record{}, o.errf("role", "%s", err.(*strata.Error).Message)
	}
	if t.Name, err = o.str("name"); err != nil {
		return Record{}, err
	}
	if t.Content, err = o.str("content"); err != nil {
		return Record{}, err
	}
	if t.Time, err = jsonlTime(o); err != nil {
		return Record{}, err
	}
	if t.Model, err = o.str("model"); err != nil {
		return Record{}, err
	}
	if v, ok, err := o.text("metadata"); err != nil {
		return Record{}, err
	} else if ok {
		if v[0] != '{' {
			return Record{}, o.errf("metadata", "want an object, got %s", kind(v))
		}
		if err := json.Unmarshal(v, &t.Metadata); err != nil {
			return Record{}, o.errf("metadata", "%s", jsonMsg(err))
		}
		if len(t.Metadata) == 0 {
			t.Metadata = nil
		}
	}
	if v, ok := o.get("importance"); ok {
		if kind(v) != "a number" {
			return Record{}, o.errf("importance", "want a number from 0 to 1, got %s", kind(v))
		}
		if err := json.Unmarshal(v, &t.Importance); err != nil || t.Importance < 0 || t.Importance > 1 {
			return Record{}, o.errf("importance", "%s is outside 0..1", v)
		}
	}
	if v, ok, err := o.text("tags"); err != nil {
		return Record{}, err
	} else if ok {
		if json.Unmarshal(v, &t.Tags) != nil {
			return Record{}, o.errf("tags", "want an array of strings, got %s", kind(v))
		}
	}
	if t.ToolCalls, err = jsonlToolCalls(o); err != nil {
		return Record{}, err
	}
	if t.ToolResults, err = jsonlToolResults(o); err != nil {
		return Record{}, err
	}
	return finish(r.ids, r.name, r.line, "", conv, &t, "content", false)
}

// checkKeys reports the first (in sorted order) key of o that is not known.
func checkKeys(o *object, known map[string]bool, list []string) error {
	var unknown []string
	for k := range o.m {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return o.errf(unknown[0], "unknown field (want %s)", strings.Join(list, ", "))
}

// jsonlTime reads "time": an RFC 3339 string or a number of unix seconds.
func jsonlTime(o *object) (time.Time, error) {
	v, ok := o.get("time")
	if !ok {
		return time.Time{}, nil
	}
	if v[0] == '"' {
		s, err := o.str("time")
		if err != nil {
			return time.Time{}, err
		}
		if s == "" {
			return time.Time{}, nil
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return time.Time{}, o.errf("time", "cannot parse %q as a time (want RFC 3339)", s)
		}
		return t.UTC(), nil
	}
	if kind(v) != "a number" {
		return time.Time{}, o.errf("time", "want an RFC 3339 string or unix seconds, got %s", kind(v))
	}
	t, ok := unixSeconds(string(v))
	if !ok {
		return time.Time{}, o.errf("time", "unix seconds %s are out of range (want years 1 to 9999; milliseconds?)", v)
	}
	return t, nil
}

// unixSeconds parses a JSON number of seconds since 1970 exactly (to the
// nanosecond) and checks the year is within 1..9999.
func unixSeconds(s string) (time.Time, bool) {
	var t time.Time
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Abs(f) > 1e12 {
			return time.Time{}, false
		}
		sec := math.Floor(f)
		t = time.Unix(int64(sec), int64((f-sec)*1e9))
	} else {
		intPart, frac, _ := strings.Cut(s, ".")
		sec, err := strconv.ParseInt(intPart, 10, 64)
		if err != nil || sec > 1e12 || sec < -1e12 {
			return time.Time{}, false
		}
		var ns int64
		if frac != "" {
			if len(frac) > 9 {
				frac = frac[:9]
			}
			frac += strings.Repeat("0", 9-len(frac))
			ns, _ = strconv.ParseInt(frac, 10, 64)
			if strings.HasPrefix(intPart, "-") {
				ns = -ns
			}
		}
		t = time.Unix(sec, ns)
	}
	t = t.UTC()
	if y := t.Year(); y < 1 || y > 9999 {
		return time.Time{}, false
	}
	return t, true
}

var (
	toolCallFields   = []string{"id", "name", "arguments"}
	toolCallKnown    = map[string]bool{"id": true, "name": true, "arguments": true}
	toolResultFields = []string{"call_id", "name", "content", "is_error"}
	toolResultKnown  = map[string]bool{"call_id": true, "name": true, "content": true, "is_error": true}
)

// elements returns the elements of an array member, each as an object.
func elements(o *object, name string) ([]*object, error) {
	v, ok, err := o.text(name)
	if !ok || err != nil {
		return nil, err
	}
	if v[0] != '[' {
		return nil, o.errf(name, "want an array of objects, got %s", kind(v))
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(v, &raws); err != nil {
		return nil, o.errf(name, "%s", jsonMsg(err))
	}
	out := make([]*object, len(raws))
	for i, raw := range raws {
		e, err := parseObject(o.file, o.line, fmt.Sprintf("%s%s[%d].", o.prefix, name, i), raw)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func jsonlToolCalls(o *object) ([]strata.ToolCall, error) {
	els, err := elements(o, "tool_calls")
	if err != nil {
		return nil, err
	}
	var calls []strata.ToolCall
	for _, e := range els {
		if err := checkKeys(e, toolCallKnown, toolCallFields); err != nil {
			return nil, err
		}
		var c strata.ToolCall
		if c.ID, err = e.id("id"); err != nil {
			return nil, err
		}
		if c.Name, err = e.str("name"); err != nil {
			return nil, err
		}
		if c.Name == "" {
			return nil, e.errf("name", "missing")
		}
		c.Arguments = toolArgs(e.m["arguments"])
		calls = append(calls, c)
	}
	return calls, nil
}

func jsonlToolResults(o *object) ([]strata.ToolResult, error) {
	els, err := elements(o, "tool_results")
	if err != nil {
		return nil, err
	}
	var results []strata.ToolResult
	for _, e := range els {
		if err := checkKeys(e, toolResultKnown, toolResultFields); err != nil {
			return nil, err
		}
		var r strata.ToolResult
		if r.CallID, err = e.id("call_id"); err != nil {
			return nil, err
		}
		if r.Name, err = e.str("name"); err != nil {
			return nil, err
		}
		if r.Content, err = looseText(e, "content"); err != nil {
			return nil, err
		}
		if r.IsError, err = e.boolean("is_error"); err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, nil
}

// looseText reads a member that should be a string but may be any JSON
// value, which is then kept as its JSON text.
func looseText(o *object, name string) (string, error) {
	v, ok, err := o.text(name)
	if !ok || err != nil {
		return "", err
	}
	if v[0] == '"' {
		return o.str(name)
	}
	return string(v), nil
}
