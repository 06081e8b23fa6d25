package formats

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"regexp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/strata-memory/strata"
)

// Format names accepted by Open.
const (
	Auto   = "auto"
	JSONL  = "jsonl"
	OpenAI = "openai"
	LoCoMo = "locomo"
	// ClaudeCode is a Claude Code session file
	// (~/.claude/projects/<project>/<session>.jsonl).
	ClaudeCode = "claude-code"
	// Codex is a Codex CLI rollout file
	// (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl).
	Codex = "codex"
	// ChatGPT is a ChatGPT data export's conversations.json.
	ChatGPT = "chatgpt"
	// Anthropic is Anthropic Messages request bodies.
	Anthropic = "anthropic"
)

// Formats returns the format names Open accepts, "auto" first.
func Formats() []string {
	return []string{Auto, JSONL, OpenAI, LoCoMo, ClaudeCode, Codex, ChatGPT, Anthropic}
}

// Record is one parsed turn with the conversation it belongs to.
type Record struct {
	// Conversation is the conversation id the source names; "" means the
	// caller's default conversation.
	Conversation string
	// Turn is the parsed turn. It passes Turn.Validate, its ExtID is always
	// set (derived with strata.DeriveExtID when the source has none), and
	// SessionLabel is set when the source names a session. Seq, Session and
	// Tokens are left zero: the engine assigns them on ingest.
	Turn strata.Turn
	// Line is the 1-based line of the source where the turn starts.
	Line int
	// DerivedExtID reports that the source gave the turn no ext_id and
	// Turn.ExtID was derived.
	DerivedExtID bool
}

// Reader yields the records of one input in order, one at a time, so that
// an input of any size never sits in memory at once (see the package
// documentation for what each format buffers). Next returns io.EOF after the
// last record.
//
// A *ParseError about one record leaves the reader after that record: a
// caller that wants to skip bad records may call Next again. Errors that end
// the input (malformed JSON in the openai and locomo formats, read errors)
// are returned again by every later call.
type Reader interface {
	Next() (Record, error)
}

// peekSize is how much of the input auto detection looks at.
const peekSize = 64 << 10

var bom = []byte{0xEF, 0xBB, 0xBF}

// Open returns a Reader over r in the named format: "jsonl", "openai",
// "locomo" or "auto" (see Detect). name names the input in errors (a file
// name; "" reads as "input"). A leading UTF-8 byte order mark is skipped. An
// empty input, or one of only white space, yields no records: Next returns
// io.EOF at once. An unknown format name is an EINVALID *strata.Error; an
// input auto detection cannot place is a *ParseError.
func Open(format, name string, r io.Reader) (Reader, error) {
	if name == "" {
		name = "input"
	}
	format = strings.ToLower(strings.TrimSpace(format))
	switch format {
	case Auto, JSONL, OpenAI, LoCoMo, ClaudeCode, Codex, ChatGPT, Anthropic:
	default:
		return nil, strata.Errorf(strata.EINVALID, "unknown format %q (want %s)", format, strings.Join(Formats(), ", "))
	}
	br := bufio.NewReaderSize(r, peekSize)
	if b, err := br.Peek(len(bom)); bytes.Equal(b, bom) {
		br.Discard(len(bom))
	} else if err != nil && err != io.EOF {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if format == Auto {
		peek, err := br.Peek(peekSize)
		if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		f, err := Detect(peek)
		if err != nil {
			return nil, &ParseError{File: name, Msg: err.Error()}
		}
		format = f
	}
	ids := newIDDeriver()
	switch format {
	case JSONL:
		return &jsonlReader{name: name, br: br, ids: ids}, nil
	case OpenAI:
		return &openaiReader{docReader: docReader{name: name, br: br, ids: ids}}, nil
	case ClaudeCode:
		return &claudeReader{lines: lineSource{name: name, br: br}, ids: ids, project: projectFolder(name), names: map[string]string{}}, nil
	case Codex:
		return newCodexReader(name, lineSource{name: name, br: br}, ids), nil
	case ChatGPT:
		return &chatgptReader{docReader: docReader{name: name, br: br, ids: ids}}, nil
	case Anthropic:
		return &anthropicReader{docReader: docReader{name: name, br: br, ids: ids}}, nil
	default:
		return &locomoReader{docReader: docReader{name: name, br: br, ids: ids}}, nil
	}
}

// Detect names the format of an input from its first bytes (Open's auto
// format looks at the first 64 KiB):
//
//   - a JSON array whose first element is an object with a key sample_id,
//     qa, or conversation holding an object: "locomo";
//   - a JSON array whose first element is an object with a key mapping or
//     current_node: "chatgpt";
//   - a JSON array whose first element is an object with a key role,
//     content, messages or tool_calls, or an empty array: "openai", unless
//     the bytes read hold an Anthropic content block ("type": "tool_use",
//     "tool_result", "thinking" or "redacted_thinking") or a key "system"
//     or "anthropic_version": "anthropic";
//   - a JSON object with a top-level key "mapping": "chatgpt";
//   - a JSON object with a top-level key "messages": "openai", or
//     "anthropic" on the same marks;
//   - a line (the first) that is a JSON object with the keys type and
//     payload: "codex";
//   - a line that is a JSON object with a key sessionId, parentUuid,
//     leafUuid or isSidechain, or whose type is file-history-snapshot,
//     queue-operation or summary: "claude-code";
//   - any other input starting with '{': "jsonl";
//   - empty or blank input: "jsonl" (which yields no records).
//
// The keys that make a line codex or claude-code are not jsonl fields, so
// no input the jsonl format reads is detected as either.
//
// Anything else is an EINVALID error saying what the input starts with.
func Detect(peek []byte) (string, error) {
	peek = bytes.TrimPrefix(peek, bom)
	i := 0
	for i < len(peek) && isSpace(peek[i]) {
		i++
	}
	if i == len(peek) {
		return JSONL, nil
	}
	peek = peek[i:]
	switch peek[0] {
	case '{':
		if f := detectAgentLine(peek); f != "" {
			return f, nil
		}
		if hasTopKey(peek, "mapping") {
			return ChatGPT, nil
		}
		if hasTopKey(peek, "messages") {
			if anthropicMarks.Match(peek) {
				return Anthropic, nil
			}
			return OpenAI, nil
		}
		return JSONL, nil
	case '[':
		f, err := detectArray(peek)
		if f == OpenAI && anthropicMarks.Match(peek) {
			return Anthropic, nil
		}
		return f, err
	}
	return "", strata.Errorf(strata.EINVALID,
		"cannot detect the format: the input starts with %q, not a JSON array or object (want jsonl, openai or locomo)",
		snippet(peek))
}

func detectArray(peek []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(peek))
	dec.Token() // '['
	t, err := dec.Token()
	switch {
	case err != nil:
		return "", strata.Errorf(strata.EINVALID, "cannot detect the format: the input starts with a JSON array but its first element cannot be read")
	case t == json.Delim(']'):
		return OpenAI, nil
	case t != json.Delim('{'):
		return "", strata.Errorf(strata.EINVALID, "cannot detect the format: the input is a JSON array of %s, not of objects (want openai messages or locomo samples)", tokenKind(t))
	}
	for {
		t, err := dec.Token()
		if err != nil || t == json.Delim('}') {
			break
		}
		key, _ := t.(string)
		switch key {
		case "sample_id", "qa":
			return LoCoMo, nil
		case "mapping", "current_node":
			return ChatGPT, nil
		case "role", "content", "messages", "tool_calls":
			return OpenAI, nil
		case "conversation":
			v, err := dec.Token()
			if err != nil {
				break
			}
			if v == json.Delim('{') {
				return LoCoMo, nil
			}
			if _, ok := v.(json.Delim); !ok {
				continue // a scalar: an openai conversation id
			}
			if skipRest(dec, 1) != nil {
				break
			}
			continue
		}
		if skipValue(dec) != nil {
			break
		}
	}
	return "", strata.Errorf(strata.EINVALID, "cannot detect the format: the first element of the JSON array has none of the keys sample_id, qa, conversation (locomo) or role, content, messages (openai)")
}

// anthropicMarks finds what only Anthropic messages hold: a content block
// of an Anthropic type, or a key "system" or "anthropic_version". Inside a
// JSON string the quotes would be escaped, so text that merely mentions
// them does not match.
var anthropicMarks = regexp.MustCompile(`"type"\s*:\s*"(?:tool_use|tool_result|thinking|redacted_thinking)"|"(?:system|anthropic_version)"\s*:`)

// detectAgentLine names the agent transcript format of the first line of
// peek, or returns "".
func detectAgentLine(peek []byte) string {
	line := peek
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	keys := map[string]bool{}
	typ := ""
	for {
		t, err := dec.Token()
		if err != nil || t == json.Delim('}') {
			break
		}
		key, _ := t.(string)
		keys[key] = true
		if key == "type" {
			v, err := dec.Token()
			if err != nil {
				break
			}
			if s, ok := v.(string); ok {
				typ = s
				continue
			}
			if d, ok := v.(json.Delim); ok && (d == '{' || d == '[') && skipRest(dec, 1) != nil {
				break
			}
			continue
		}
		if skipValue(dec) != nil {
			break
		}
	}
	switch {
	case keys["type"] && keys["payload"]:
		return Codex
	case keys["sessionId"] || keys["parentUuid"] || keys["leafUuid"] || keys["isSidechain"]:
		return ClaudeCode
	case typ == "file-history-snapshot" || typ == "queue-operation" || typ == "summary":
		return ClaudeCode
	}
	return ""
}

// hasTopKey reports whether the JSON object at the start of b has the
// top-level key key, within the bytes available.
func hasTopKey(b []byte, key string) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for {
		t, err := dec.Token()
		if err != nil || t == json.Delim('}') {
			return false
		}
		if t == key {
			return true
		}
		if skipValue(dec) != nil {
			return false
		}
	}
}

// skipValue reads past the next JSON value of dec.
func skipValue(dec *json.Decoder) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); ok && (d == '{' || d == '[') {
		return skipRest(dec, 1)
	}
	return nil
}

// skipRest reads tokens until depth open delimiters are closed.
func skipRest(dec *json.Decoder, depth int) error {
	for depth > 0 {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

func tokenKind(t json.Token) string {
	switch t.(type) {
	case string:
		return "strings"
	case float64, json.Number:
		return "numbers"
	case bool:
		return "booleans"
	case nil:
		return "nulls"
	}
	if t == json.Delim('[') {
		return "arrays"
	}
	return "values"
}

func snippet(b []byte) string {
	if len(b) > 20 {
		b = b[:20]
	}
	s := string(b)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// ParseError is bad input: it names the file, the 1-based line (0 when the
// error is about the input as a whole) and the field (a JSON path such as
// "tool_calls[0].name" or "[3].content"; "" when the error is about the
// record as a whole). It carries strata.EINVALID: strata.ErrorCode of a
// ParseError, or of an error wrapping one, is EINVALID.
type ParseError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

// Error reads like `chat.jsonl:12: field "time": cannot parse "yesterday"
// as a time (want RFC 3339)`.
func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File == "" {
		b.WriteString("input")
	} else {
		b.WriteString(e.File)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap returns the error as an EINVALID *strata.Error, so that
// strata.ErrorCode and errors.As see the code.
func (e *ParseError) Unwrap() error {
	return &strata.Error{Code: strata.EINVALID, Message: e.Error()}
}

// idDeriver gives turns without an ext_id one derived from the turn
// (strata.DeriveExtID), counting occurrences of the same derived base id per
// conversation so identical turns stay distinct and a re-read of the same
// input derives the same ids. It keeps 16 bytes per derived turn, not the
// turns: a 64-bit FNV hash of the base id. Two different base ids whose
// hashes collide only get a different (still unique, still deterministic)
// occurrence suffix.
type idDeriver struct {
	convs map[string]uint32
	seen  map[idKey]int
}

type idKey struct {
	conv uint32
	h    uint64
}

func newIDDeriver() *idDeriver {
	return &idDeriver{convs: map[string]uint32{}, seen: map[idKey]int{}}
}

func (d *idDeriver) derive(conv string, t *strata.Turn) string {
	c, ok := d.convs[conv]
	if !ok {
		c = uint32(len(d.convs))
		d.convs[conv] = c
	}
	base := strata.DeriveExtID(t, 0)
	h := fnv.New64a()
	io.WriteString(h, base)
	k := idKey{conv: c, h: h.Sum64()}
	n := d.seen[k]
	d.seen[k] = n + 1
	if n == 0 {
		return base
	}
	return strata.DeriveExtID(t, n)
}

// finish checks a parsed turn the way every format does, then derives its
// ext_id if the source has none. prefix is the JSON path of the turn's
// object ("" or like "[3]."). It returns the record or a *ParseError.
func finish(ids *idDeriver, file string, line int, prefix, conv string, t *strata.Turn, contentField string, allowEmpty bool) (Record, error) {
	if t.Content == "" && len(t.ToolCalls) == 0 && len(t.ToolResults) == 0 && !allowEmpty {
		return Record{}, &ParseError{File: file, Line: line, Field: prefix + contentField,
			Msg: "missing or empty (a turn needs content, tool calls or tool results)"}
	}
	if err := t.Validate(); err != nil {
		field, msg := "", err.Error()
		var se *strata.Error
		if errors.As(err, &se) {
			msg = se.Message
		}
		if i := strings.Index(msg, ": "); i > 0 && !strings.ContainsAny(msg[:i], " \"") {
			field, msg = prefix+msg[:i], msg[i+2:]
		}
		return Record{}, &ParseError{File: file, Line: line, Field: field, Msg: msg}
	}
	derived := t.ExtID == ""
	if derived {
		t.ExtID = ids.derive(conv, t)
	}
	return Record{Conversation: conv, Turn: *t, Line: line, DerivedExtID: derived}, nil
}

// badText reports whether the raw JSON value holds text that is not valid
// UTF-8: invalid bytes, or a \u escape of a lone UTF-16 surrogate.
// encoding/json silently turns both into U+FFFD, so this looks at the
// source bytes.
func badText(raw []byte) bool {
	if !utf8.Valid(raw) {
		return true
	}
	i := bytes.IndexByte(raw, '\\')
	if i < 0 {
		return false
	}
	for ; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++ // the escaped byte
		if i >= len(raw) || raw[i] != 'u' {
			continue
		}
		r, ok := hex4(raw[i+1:])
		if !ok {
			return false // malformed: the JSON decoder reports it
		}
		i += 4
		if !utf16.IsSurrogate(r) {
			continue
		}
		if r >= 0xDC00 {
			return true // a low surrogate first
		}
		// A high surrogate must be followed by \u and a low one.
		if i+6 >= len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' {
			return true
		}
		lo, ok := hex4(raw[i+3:])
		if !ok || lo < 0xDC00 || lo > 0xDFFF {
			return true
		}
		i += 6
	}
	return false
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// kind names the JSON type of a raw value, for errors, or says it is not
// JSON at all.
func kind(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return "a number"
	}
	return "text that is not JSON"
}

// object is one JSON object's members, with what is needed to report a bad
// one: the file, the line, and the JSON path prefix of the object.
type object struct {
	file   string
	line   int
	prefix string // "" or a path ending in '.', like "[3]."
	m      map[string]json.RawMessage
	// jsonl, when not nil, holds the members instead of m: those of a
	// jsonl line read by scanJSONL, by their index in jsonlFields (nil
	// when absent). last then holds strings of the last lines' members,
	// reused when a line repeats them (see stringOf).
	jsonl *jsonlMembers
	last  *jsonlStrings
}

// parseObject decodes raw, which must be a JSON object.
func parseObject(file string, line int, prefix string, raw []byte) (*object, error) {
	o := &object{file: file, line: line, prefix: prefix}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		field := strings.TrimSuffix(prefix, ".")
		return nil, &ParseError{File: file, Line: line, Field: field, Msg: "want a JSON object, got " + kind(raw)}
	}
	if err := json.Unmarshal(raw, &o.m); err != nil {
		return nil, &ParseError{File: file, Line: line, Field: strings.TrimSuffix(prefix, "."), Msg: "malformed JSON: " + jsonMsg(err)}
	}
	return o, nil
}

func jsonMsg(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}

func (o *object) errf(field, format string, args ...any) *ParseError {
	return &ParseError{File: o.file, Line: o.line, Field: o.prefix + field, Msg: fmt.Sprintf(format, args...)}
}

// member returns the raw value of a member, as o.m[name] would.
func (o *object) member(name string) (json.RawMessage, bool) {
	if o.jsonl != nil {
		if i := jsonlFieldIndex(name); i >= 0 && o.jsonl[i] != nil {
			return o.jsonl[i], true
		}
		return nil, false
	}
	v, ok := o.m[name]
	return v, ok
}

// get returns the raw value of a member that is present and not null.
func (o *object) get(name string) (json.RawMessage, bool) {
	v, ok := o.member(name)
	if !ok || len(v) == 0 || string(v) == "null" {
		return nil, false
	}
	return v, true
}

// text returns raw if it is valid text, or an error naming the field.
func (o *object) text(name string) (json.RawMessage, bool, error) {
	v, ok := o.get(name)
	if ok && badText(v) {
		return nil, false, o.errf(name, "invalid UTF-8")
	}
	return v, ok, nil
}

// str returns a string member ("" when absent or null).
func (o *object) str(name string) (string, error) {
	v, ok, err := o.text(name)
	if !ok || err != nil {
		return "", err
	}
	if v[0] != '"' {
		return "", o.errf(name, "want a string, got %s", kind(v))
	}
	if len(v) >= 2 && v[len(v)-1] == '"' && bytes.IndexByte(v, '\\') < 0 {
		return o.stringOf(name, v[1:len(v)-1]), nil // no escapes: the bytes are the string
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", o.errf(name, "%s", jsonMsg(err))
	}
	return s, nil
}

// id returns a member that is a string or a number, as a string (a number
// as written in the source).
func (o *object) id(name string) (string, error) {
	v, ok := o.get(name)
	if ok && v[0] != '"' && v[0] != '{' && v[0] != '[' && v[0] != 't' && v[0] != 'f' {
		return o.stringOf(name, v), nil
	}
	s, err := o.str(name)
	if err != nil && ok && v[0] != '"' {
		return "", o.errf(name, "want a string or a number, got %s", kind(v))
	}
	return s, err
}

// stringOf returns b as a string. For the members of a jsonl line that
// most lines repeat (conversation, session, role, name, model) it returns
// the string of one of the last two lines when the bytes are the same,
// saving the copy.
func (o *object) stringOf(name string, b []byte) string {
	if o.last != nil {
		switch i := jsonlFieldIndex(name); i {
		case 0, 1, 3, 4, 7:
			// The last two values: speakers and roles alternate.
			last := &o.last[i]
			if last[0] == string(b) {
				return last[0]
			}
			if last[1] == string(b) {
				return last[1]
			}
			s := string(b)
			last[0], last[1] = s, last[0]
			return s
		}
	}
	return string(b)
}

// boolean returns a boolean member (false when absent or null).
func (o *object) boolean(name string) (bool, error) {
	v, ok := o.get(name)
	if !ok {
		return false, nil
	}
	switch string(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, o.errf(name, "want a boolean, got %s", kind(v))
}

// anyValue returns a member decoded as any (nil when absent or null).
func (o *object) anyValue(name string) (any, error) {
	v, ok, err := o.text(name)
	if !ok || err != nil {
		return nil, err
	}
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return nil, o.errf(name, "%s", jsonMsg(err))
	}
	return x, nil
}

// toolArgs returns tool-call arguments as the exact bytes given: a JSON
// string is the text it holds (valid JSON or not, its spacing kept), an
// empty string or null is no arguments, and any other JSON value is kept
// as written.
func toolArgs(v json.RawMessage) (json.RawMessage, error) {
	if len(v) == 0 || string(v) == "null" {
		return nil, nil
	}
	if v[0] != '"' {
		return append(json.RawMessage(nil), v...), nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, err
	}
	if s == "" {
		return nil, nil
	}
	return json.RawMessage(s), nil
}

// toolArgsOf reads the tool-call arguments member name of o with toolArgs,
// refusing text that is not valid UTF-8.
func toolArgsOf(o *object, name string) (json.RawMessage, error) {
	v, _, err := o.text(name)
	if err != nil {
		return nil, err
	}
	a, err := toolArgs(v)
	if err != nil {
		return nil, o.errf(name, "%s", jsonMsg(err))
	}
	return a, nil
}

// lineTracker counts lines of a stream read by a json.Decoder, so that a
// byte offset the decoder reports (InputOffset) can be turned into a line.
// It keeps only the offsets of newlines read ahead of the last lookup.
type lineTracker struct {
	r    io.Reader
	off  int64   // bytes read so far
	nl   []int64 // offsets of newlines at or after the last lookup
	line int     // newlines before the last lookup
}

func (t *lineTracker) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	b := p[:n]
	for base := t.off; ; {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		t.nl = append(t.nl, base+int64(i))
		base += int64(i + 1)
		b = b[i+1:]
	}
	t.off += int64(n)
	return n, err
}

// lineAt returns the 1-based line of byte offset off. Offsets must not
// decrease from one call to the next.
func (t *lineTracker) lineAt(off int64) int {
	i := 0
	for i < len(t.nl) && t.nl[i] < off {
		i++
	}
	t.line += i
	t.nl = t.nl[i:]
	if len(t.nl) == 0 {
		t.nl = t.nl[:0:0]
	}
	return t.line + 1
}

// lineCounter turns offsets into an in-memory JSON value into lines, given
// the line the value starts on. Lookups are cheapest in increasing order.
type lineCounter struct {
	data  []byte
	first int // line of data[0]
	pos   int
	line  int // line of data[pos]
}

func newLineCounter(data []byte, first int) *lineCounter {
	return &lineCounter{data: data, first: first, line: first}
}

func (c *lineCounter) at(off int) int {
	if off < c.pos {
		c.pos, c.line = 0, c.first
	}
	off = min(off, len(c.data))
	c.line += bytes.Count(c.data[c.pos:off], []byte{'\n'})
	c.pos = off
	return c.line
}

// member is one member of a JSON object or element of an array held in
// memory: its key ("" for an array element), its raw value and the value's
// offset in the enclosing bytes.
type member struct {
	key string
	val json.RawMessage
	off int
}

// members lists the members of the JSON object (or the elements of the
// array) raw, which must be well-formed JSON.
func members(raw []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	isObj := t == json.Delim('{')
	var out []member
	for dec.More() {
		var m member
		if isObj {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			m.key, _ = k.(string)
		}
		if err := dec.Decode(&m.val); err != nil {
			return nil, err
		}
		m.off = int(dec.InputOffset()) - len(m.val)
		out = append(out, m)
	}
	return out, nil
}

// docReader is the part of the openai and locomo readers that streams the
// elements of a top-level JSON array.
type docReader struct {
	name    string
	br      *bufio.Reader
	ids     *idDeriver
	lt      *lineTracker
	dec     *json.Decoder
	started bool
	err     error    // sticky: ends the input
	pending []result // records (or errors) parsed ahead
	index   int      // index of the next array element
}

type result struct {
	rec Record
	err error
}

// start skips leading white space and returns the first byte of the
// document, or io.EOF for an empty input.
func (d *docReader) start() (byte, error) {
	d.started = true
	line := 0
	for {
		c, err := d.br.ReadByte()
		if err != nil {
			if err == io.EOF {
				return 0, io.EOF
			}
			return 0, fmt.Errorf("%s: %w", d.name, err)
		}
		if !isSpace(c) {
			d.br.UnreadByte()
			d.lt = &lineTracker{r: d.br, line: line}
			d.dec = json.NewDecoder(d.lt)
			return c, nil
		}
		if c == '\n' {
			line++
		}
	}
}

// element decodes the next element of the top-level array. It returns
// io.EOF after the closing bracket.
func (d *docReader) element() (raw json.RawMessage, line int, err error) {
	if !d.dec.More() {
		if _, err := d.dec.Token(); err != nil { // ']'
			return nil, 0, d.syntax(err)
		}
		if _, err := d.dec.Token(); err != io.EOF {
			return nil, 0, &ParseError{File: d.name, Line: d.lt.lineAt(d.dec.InputOffset()), Msg: "malformed JSON: data after the closing ]"}
		}
		return nil, 0, io.EOF
	}
	if err := d.dec.Decode(&raw); err != nil {
		return nil, 0, d.syntax(err)
	}
	end := d.dec.InputOffset()
	return raw, d.lt.lineAt(end - int64(len(raw))), nil
}

// syntax turns an error of the top-level decoder into a *ParseError
// naming the line of the offending byte, or wraps a read error.
func (d *docReader) syntax(err error) error {
	off := d.dec.InputOffset()
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		// The decoder's offsets do not count bytes read as tokens; rescan
		// the buffered rest of the value to find the offending byte.
		b, _ := io.ReadAll(d.dec.Buffered())
		var se2 *json.SyntaxError
		if e := json.Unmarshal(b, new(json.RawMessage)); errors.As(e, &se2) && se2.Error() == se.Error() && se2.Offset > 0 {
			off += se2.Offset - 1
		}
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		off = d.lt.off
		err = errors.New("unexpected end of input")
	default:
		return fmt.Errorf("%s: %w", d.name, err) // a read error
	}
	return &ParseError{File: d.name, Line: d.lt.lineAt(off), Msg: "malformed JSON: " + jsonMsg(err)}
}

// next returns a parsed-ahead result, if any.
func (d *docReader) next() (Record, error, bool) {
	if len(d.pending) == 0 {
		return Record{}, nil, false
	}
	r := d.pending[0]
	d.pending[0] = result{}
	d.pending = d.pending[1:]
	return r.rec, r.err, true
}
