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

	"github.com/strata-memory/strata"
)

// jsonlFields are the keys a jsonl line may have, in the order they are
// checked.
var jsonlFields = []string{
	"conversation", "session", "ext_id", "role", "name", "content", "time", "model",
	"metadata", "importance", "tags", "tool_calls", "tool_results", "tokens",
}

// jsonlMembers are the members of a jsonl line by their index in
// jsonlFields: raw JSON values, nil when absent.
type jsonlMembers [14]json.RawMessage

// jsonlStrings are the last two strings of members by their index in
// jsonlFields.
type jsonlStrings [14][2]string

// jsonlFieldIndex returns the index of key in jsonlFields, or -1.
func jsonlFieldIndex[T string | []byte](key T) int {
	switch string(key) {
	case "conversation":
		return 0
	case "session":
		return 1
	case "ext_id":
		return 2
	case "role":
		return 3
	case "name":
		return 4
	case "content":
		return 5
	case "time":
		return 6
	case "model":
		return 7
	case "metadata":
		return 8
	case "importance":
		return 9
	case "tags":
		return 10
	case "tool_calls":
		return 11
	case "tool_results":
		return 12
	case "tokens":
		return 13
	}
	return -1
}

var jsonlKnown = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range jsonlFields {
		m[f] = true
	}
	return m
}()

type jsonlReader struct {
	name    string
	br      *bufio.Reader
	ids     *idDeriver
	line    int
	buf     []byte
	err     error // sticky: io.EOF or a read error
	obj     object
	members jsonlMembers
	last    jsonlStrings // see object.stringOf
	turn    strata.Turn  // the turn being parsed
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
	o, err := r.object(line)
	if err != nil {
		return Record{}, err
	}
	t := &r.turn // not a fresh Turn each line: finish copies it out
	*t = strata.Turn{}
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
	if err := jsonlAnnotations(o, t); err != nil {
		return Record{}, err
	}
	if t.ToolCalls, err = jsonlToolCalls(o); err != nil {
		return Record{}, err
	}
	if t.ToolResults, err = jsonlToolResults(o); err != nil {
		return Record{}, err
	}
	return finish(r.ids, r.name, r.line, "", conv, t, "content", false)
}

// object returns the members of a line, which must be a JSON object of
// known keys.
func (r *jsonlReader) object(line []byte) (*object, error) {
	if line[0] != '{' {
		return nil, &ParseError{File: r.name, Line: r.line, Msg: "want a JSON object per line, got " + kind(line)}
	}
	if !jsonlGeneral && scanJSONL(line, &r.members) {
		// The common line: its members are sub-slices of line, read in
		// one pass without a map (see scanJSONL). They are known keys.
		r.obj = object{file: r.name, line: r.line, jsonl: &r.members, last: &r.last}
		return &r.obj, nil
	}
	o, err := parseObject(r.name, r.line, "", line)
	if err != nil {
		return nil, err
	}
	if err := checkKeys(o, jsonlKnown, jsonlFields); err != nil {
		return nil, err
	}
	return o, nil
}

// jsonlAnnotations reads into t the metadata, importance and tags of a
// line, if it has them.
func jsonlAnnotations(o *object, t *strata.Turn) error {
	if v, ok, err := o.text("metadata"); err != nil {
		return err
	} else if ok {
		if v[0] != '{' {
			return o.errf("metadata", "want an object, got %s", kind(v))
		}
		if err := json.Unmarshal(v, &t.Metadata); err != nil {
			return o.errf("metadata", "%s", jsonMsg(err))
		}
		if len(t.Metadata) == 0 {
			t.Metadata = nil
		}
	}
	if v, ok := o.get("importance"); ok {
		if kind(v) != "a number" {
			return o.errf("importance", "want a number from 0 to 1, got %s", kind(v))
		}
		if err := json.Unmarshal(v, &t.Importance); err != nil || t.Importance < 0 || t.Importance > 1 {
			return o.errf("importance", "%s is outside 0..1", v)
		}
	}
	if v, ok, err := o.text("tags"); err != nil {
		return err
	} else if ok {
		if json.Unmarshal(v, &t.Tags) != nil {
			return o.errf("tags", "want an array of strings, got %s", kind(v))
		}
	}
	return nil
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
// An empty string or no member is no time (the turn is stamped with the
// clock); a time given as 0001-01-01T00:00:00Z, Go's zero time, is refused
// rather than read as no time. The storable range is checked later, by
// Turn.Validate.
func jsonlTime(o *object) (time.Time, error) {
	t, err := jsonlTimeValue(o)
	if err == nil && t.IsZero() {
		if v, ok := o.get("time"); ok && !(len(v) == 2 && v[0] == '"') {
			return time.Time{}, o.errf("time", "%s is the zero time, which reads as no time (omit the field to stamp the turn when it is stored)", v)
		}
	}
	return t, err
}

// jsonlTimeValue parses the "time" member, if any.
func jsonlTimeValue(o *object) (time.Time, error) {
	v, ok := o.get("time")
	if !ok {
		return time.Time{}, nil
	}
	if v[0] == '"' {
		if o.jsonl != nil && len(v) >= 2 && v[len(v)-1] == '"' {
			if t, ok := parseRFC3339(v[1 : len(v)-1]); ok {
				return t, nil // as time.Parse below, without a copy of v
			}
		}
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
		if c.Arguments, err = toolArgsOf(e, "arguments"); err != nil {
			return nil, err
		}
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

// jsonlGeneral makes every line take the general path, for tests.
var jsonlGeneral = false

// scanJSONL reads line, a JSON object, into m when it is well-formed JSON
// (as json.Unmarshal has it), each of its keys is one of jsonlFields
// written without escapes, and no key repeats: then m holds the raw value
// of every member, as decoding line into a map of json.RawMessage would,
// but as sub-slices of line. It reports false for any other line, which
// the general path then reads and reports on; m is then undefined.
func scanJSONL(line []byte, m *jsonlMembers) bool {
	*m = jsonlMembers{}
	if len(line) == 0 || line[0] != '{' {
		return false
	}
	i := skipSpace(line, 1)
	if i < len(line) && line[i] == '}' {
		return skipSpace(line, i+1) == len(line)
	}
	var seen uint32
	for {
		// A key: a known field name, so plain ASCII without escapes.
		if i >= len(line) || line[i] != '"' {
			return false
		}
		j := i + 1
		for j < len(line) && line[j] != '"' {
			if line[j] == '\\' || line[j] < 0x20 {
				return false
			}
			j++
		}
		if j >= len(line) {
			return false
		}
		k := jsonlFieldIndex(line[i+1 : j])
		if k < 0 || seen&(1<<k) != 0 {
			return false
		}
		seen |= 1 << k
		i = skipSpace(line, j+1)
		if i >= len(line) || line[i] != ':' {
			return false
		}
		i = skipSpace(line, i+1)
		end := skipJSON(line, i, 0)
		if end < 0 {
			return false
		}
		m[k] = line[i:end:end]
		i = skipSpace(line, end)
		if i >= len(line) {
			return false
		}
		switch line[i] {
		case ',':
			i = skipSpace(line, i+1)
		case '}':
			return skipSpace(line, i+1) == len(line)
		default:
			return false
		}
	}
}

// maxScanDepth is how deeply scanJSONL follows nested values; deeper ones
// are left to encoding/json.
const maxScanDepth = 32

// skipSpace returns the index of the first byte at or after i of b that is
// not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// plainStringByte marks the bytes that a JSON string holds as they are:
// all but '"', '\\' and control characters. Bytes of invalid UTF-8 are
// plain too: encoding/json accepts them (and turns them into U+FFFD).
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skipJSON returns the end of the well-formed JSON value starting at b[i],
// or -1 if there is none (a syntax error, or nesting beyond maxScanDepth).
func skipJSON(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '-' || c >= '0' && c <= '9':
		return skipNumber(b, i)
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	case c == '{' || c == '[':
		if depth >= maxScanDepth {
			return -1
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == closer {
			return i + 1
		}
		for {
			if c == '{' {
				if i >= len(b) || b[i] != '"' {
					return -1
				}
				if i = skipString(b, i); i < 0 {
					return -1
				}
				i = skipSpace(b, i)
				if i >= len(b) || b[i] != ':' {
					return -1
				}
				i = skipSpace(b, i+1)
			}
			if i = skipJSON(b, i, depth+1); i < 0 {
				return -1
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return -1
			}
			if b[i] == closer {
				return i + 1
			}
			if b[i] != ',' {
				return -1
			}
			i = skipSpace(b, i+1)
		}
	}
	return -1
}

// skipString returns the end of the JSON string starting at b[i] (a '"'),
// or -1 if it is malformed.
func skipString(b []byte, i int) int {
	i++
	for {
		for i < len(b) && plainStringByte[b[i]] {
			i++
		}
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(b[i+2:]); !ok {
					return -1
				}
				i += 6
			default:
				return -1
			}
		default:
			return -1 // a control character
		}
	}
}

// skipNumber returns the end of the JSON number starting at b[i], or -1 if
// it is malformed: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func skipLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// parseRFC3339 parses b, a time in the common RFC 3339 forms
// "2006-01-02T15:04:05Z" and "2006-01-02T15:04:05.999999999-07:00" (with
// 1 to 9 fractional digits, or none), as time.Parse with RFC3339Nano
// would, in UTC. It reports false for any other text, and for values out
// of range: time.Parse then decides.
func parseRFC3339(b []byte) (time.Time, bool) {
	if len(b) < len("2006-01-02T15:04:05Z") || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	num := func(s []byte, max int) int {
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		if n > max {
			return -1
		}
		return n
	}
	year, month := num(b[0:4], 9999), num(b[5:7], 12)
	day, hour, min, sec := num(b[8:10], 31), num(b[11:13], 23), num(b[14:16], 59), num(b[17:19], 59)
	if year < 0 || month < 1 || day < 1 || hour < 0 || min < 0 || sec < 0 || day > daysIn(time.Month(month), year) {
		return time.Time{}, false
	}
	rest := b[19:]
	nsec := 0
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 1 || n > 10 {
			return time.Time{}, false
		}
		for k := 1; k < 10; k++ {
			nsec *= 10
			if k < n {
				nsec += int(rest[k] - '0')
			}
		}
		rest = rest[n:]
	}
	t := time.Date(year, time.Month(month), day, hour, min, sec, nsec, time.UTC)
	switch {
	case len(rest) == 1 && rest[0] == 'Z':
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		hr, mm := num(rest[1:3], 23), num(rest[4:6], 59)
		if hr < 0 || mm < 0 {
			return time.Time{}, false
		}
		offset := time.Duration(hr*60+mm) * time.Minute
		if rest[0] == '-' {
			offset = -offset
		}
		t = t.Add(-offset)
	default:
		return time.Time{}, false
	}
	return t.UTC(), true
}

// daysIn returns the number of days in month of year.
func daysIn(m time.Month, year int) int {
	if m == time.February {
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 30 + int((m+m/8)%2)
}
