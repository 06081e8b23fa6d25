package compact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/strata-memory/strata"
)

// Provider names the shape of a message list.
type Provider string

// The two message shapes strata compacts.
const (
	// OpenAI is the Chat Completions shape: roles system, developer, user,
	// assistant and tool; assistant tool_calls; tool messages answer them
	// by tool_call_id.
	OpenAI Provider = "openai"
	// Anthropic is the Messages API shape: user and assistant messages of
	// content blocks (text, image, tool_use, tool_result, thinking,
	// redacted_thinking); tool results ride in user messages.
	Anthropic Provider = "anthropic"
)

// ParseProvider returns the Provider named by s (case-insensitive), or an
// EINVALID error naming the value.
func ParseProvider(s string) (Provider, error) {
	switch p := Provider(strings.ToLower(strings.TrimSpace(s))); p {
	case OpenAI, Anthropic:
		return p, nil
	}
	return "", strata.Errorf(strata.EINVALID, "unknown provider %q (want openai or anthropic)", s)
}

// Transcript is a provider's message list, parsed so that strata can
// prune and compact it and write it back. Every message and content block
// keeps the bytes it was read from: what strata does not change (unknown
// fields, unknown block types, other top-level fields, whitespace) is
// written back byte for byte, and only the values strata changed are
// re-encoded. (After a compaction, the messages array itself is written
// anew, each message in it still as read.)
//
// Messages are not modified in place: Prune and Compact put changed copies
// into a transcript's Messages slice, so a *Message read from a transcript
// stays as it was. A Transcript is not safe for concurrent modification.
type Transcript struct {
	Provider Provider
	Messages []*Message

	top       []member // the document's members when it is an object
	system    string   // text of the top-level system prompt and tools, for counting
	maxTokens int      // the request's max_tokens, 0 if absent
	orig      []byte   // the document as read
	origMsgs  []*Message
	listAt    [2]int   // where the messages array starts and ends in orig
	msgAt     [][2]int // where each original message starts and ends in orig
}

// Message is one message of a Transcript. Its fields are read through
// methods; a Message never changes once parsed.
type Message struct {
	role       string
	raw        []byte // the encoding as read; nil once changed
	src        []byte // the encoding as read, kept when changed
	members    []member
	content    content
	calls      []toolCall // OpenAI assistant tool_calls
	callID     string     // OpenAI tool message: the call it answers
	name       string     // OpenAI: the name field
	toolResult bool
	// failed: an OpenAI tool message whose tool reported failure, which
	// the form has no field for (see Transcript.MarkFailed).
	failed bool
}

// content is a message's content, or a tool result's.
type content struct {
	form  contentForm
	text  string // formString
	runes int    // rune count of text
	parts []*part
}

type contentForm uint8

const (
	formNone   contentForm = iota // absent or null
	formString                    // a JSON string
	formParts                     // an array of parts or blocks
)

// part is one content part (OpenAI) or content block (Anthropic).
type part struct {
	typ     string
	raw     []byte // nil once changed
	src     []byte // as read, kept when changed; nil for a part strata made
	members []member
	text    string // text, thinking, refusal, or redacted data
	runes   int
	id      string // tool_use: its id; tool_result: tool_use_id
	name    string // tool_use: the tool's name
	input   []byte // tool_use: the input JSON
	isError bool
	result  content // tool_result: its content
}

// toolCall is one entry of an OpenAI assistant's tool_calls.
type toolCall struct {
	id   string
	name string // the tool's name, or the call's type if it names none
	args string // as the model wrote them: usually JSON, in a string
}

// Parse reads a message list in the provider's shape: a JSON array of
// messages, or an object with "messages" (and, for Anthropic, an optional
// "system"). Every other top-level field is kept and written back. Errors
// are EINVALID and name the message index and field, such as
// "messages[12].content[3]: tool_result without tool_use_id". The
// transcript keeps data: do not modify it afterwards.
func Parse(p Provider, data []byte) (*Transcript, error) {
	if p != OpenAI && p != Anthropic {
		return nil, strata.Errorf(strata.EINVALID, "unknown provider %q (want openai or anthropic)", p)
	}
	if !json.Valid(data) {
		var v json.RawMessage
		err := json.Unmarshal(data, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, strata.Errorf(strata.EINVALID, "malformed JSON at byte %d: %s", se.Offset, se.Error())
		}
		return nil, strata.Errorf(strata.EINVALID, "malformed JSON: %v", err)
	}
	t := &Transcript{Provider: p, orig: data}
	docAt := skipSpace(data, 0)
	doc := data[docAt:skipValue(data, docAt)]
	var list []byte
	start := docAt // where list starts in data
	switch doc[0] {
	case '[':
		list = doc
	case '{':
		t.top = objectMembers(doc)
		for _, m := range t.top {
			if m.key == "messages" {
				list, start = m.val, docAt+m.off
			}
		}
		if isNull(list) {
			return nil, strata.Errorf(strata.EINVALID, "messages: missing")
		}
		if list[0] != '[' {
			return nil, strata.Errorf(strata.EINVALID, "messages: want an array of messages, got %s", kindOf(list))
		}
		if err := t.readTop(); err != nil {
			return nil, err
		}
	default:
		return nil, strata.Errorf(strata.EINVALID, "want a JSON array of messages or an object with \"messages\", got %s", kindOf(doc))
	}
	els, offs := arrayElementsAt(list)
	t.listAt = [2]int{start, start + len(list)}
	t.Messages = make([]*Message, len(els))
	t.msgAt = make([][2]int, len(els))
	for i, raw := range els {
		m, err := parseMessage(p, i, raw)
		if err != nil {
			return nil, err
		}
		t.Messages[i] = m
		t.msgAt[i] = [2]int{start + offs[i], start + offs[i] + len(raw)}
	}
	t.origMsgs = append([]*Message(nil), t.Messages...)
	return t, nil
}

// readTop reads the top-level fields strata uses: the system prompt and
// tools (counted as system tokens) and max_tokens (the output headroom).
func (t *Transcript) readTop() error {
	var sys strings.Builder
	if v, ok := lookup(t.top, "system"); ok && t.Provider == Anthropic && !isNull(v) {
		switch v[0] {
		case '"':
			sys.WriteString(decodeString(v))
		case '[':
			for j, el := range arrayElements(v) {
				if el[0] != '{' {
					return strata.Errorf(strata.EINVALID, "system[%d]: want a content block, got %s", j, kindOf(el))
				}
				ms := objectMembers(el)
				if tv, ok := lookup(ms, "text"); ok && tv[0] == '"' {
					sys.WriteString(decodeString(tv))
				} else {
					sys.Write(el)
				}
				sys.WriteByte('\n')
			}
		default:
			return strata.Errorf(strata.EINVALID, "system: want a string or an array of text blocks, got %s", kindOf(v))
		}
	}
	if v, ok := lookup(t.top, "tools"); ok && !isNull(v) {
		sys.Write(v)
	}
	t.system = sys.String()
	for _, k := range []string{"max_tokens", "max_completion_tokens"} {
		if v, ok := lookup(t.top, k); ok && !isNull(v) {
			n, err := strconv.Atoi(string(v))
			if err != nil || n < 0 {
				return strata.Errorf(strata.EINVALID, "%s: want a non-negative integer, got %s", k, v)
			}
			t.maxTokens = n
		}
	}
	return nil
}

// Clone returns a copy of t that shares its (unchanging) messages: pruning
// or compacting the copy leaves t as it was.
func (t *Transcript) Clone() *Transcript {
	c := *t
	c.Messages = append([]*Message(nil), t.Messages...)
	return &c
}

// Field returns the value of the top-level member key of the object t
// was parsed from, as written (nil when it has none, or was an array).
// Of a key written twice, the last counts, as encoding/json reads it.
func (t *Transcript) Field(key string) []byte {
	var v []byte
	for _, m := range t.top {
		if m.key == key {
			v = m.val
		}
	}
	return v
}

// unchanged reports whether t still holds exactly the messages it was
// parsed with.
func (t *Transcript) unchanged() bool {
	if t.orig == nil || len(t.Messages) != len(t.origMsgs) {
		return false
	}
	for i, m := range t.Messages {
		if m != t.origMsgs[i] {
			return false
		}
	}
	return true
}

// JSON writes the transcript in the shape it was read in (an array, or
// the object with all its other fields). A transcript nothing has changed
// is written back as the exact bytes it was parsed from; otherwise each
// message strata did not change keeps its bytes.
func (t *Transcript) JSON() []byte {
	if t.unchanged() {
		return bytes.Clone(t.orig)
	}
	if t.orig != nil && len(t.Messages) == len(t.origMsgs) {
		// The same number of messages: write the changed ones over the
		// originals, keeping every byte around them.
		out := make([]byte, 0, len(t.orig))
		pos := 0
		for i, m := range t.Messages {
			if m == t.origMsgs[i] {
				continue
			}
			out = append(out, t.orig[pos:t.msgAt[i][0]]...)
			out = m.appendJSON(out)
			pos = t.msgAt[i][1]
		}
		return append(out, t.orig[pos:]...)
	}
	list := appendMessages(nil, t.Messages)
	if t.orig == nil {
		return list
	}
	out := append([]byte(nil), t.orig[:t.listAt[0]]...)
	out = append(out, list...)
	return append(out, t.orig[t.listAt[1]:]...)
}

// MarshalJSON returns t.JSON(). Note that encoding/json compacts, and
// HTML-escapes, what a MarshalJSON method returns: write t.JSON() itself
// to keep the exact bytes.
func (t *Transcript) MarshalJSON() ([]byte, error) {
	return t.JSON(), nil
}

func appendMessages(dst []byte, ms []*Message) []byte {
	dst = append(dst, '[')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = m.appendJSON(dst)
	}
	return append(dst, ']')
}

// Role returns the message's role as written ("user", "assistant", and
// for OpenAI "system", "developer" or "tool").
func (m *Message) Role() string { return m.role }

// IsToolResult reports whether the message carries tool output: an OpenAI
// tool message, or an Anthropic user message with tool_result blocks.
func (m *Message) IsToolResult() bool { return m.toolResult }

// Text returns the message's text content, its text parts joined by
// newlines (tool calls, tool results and images are left out; a tool
// message's text is its output).
func (m *Message) Text() string {
	return m.content.joined(false)
}

// JSON returns the message's encoding: the bytes it was read from, or, if
// strata changed it, its fields with the changed ones re-encoded.
func (m *Message) JSON() json.RawMessage {
	if m.raw != nil {
		return bytes.Clone(m.raw)
	}
	return m.appendJSON(nil)
}

func (m *Message) appendJSON(dst []byte) []byte {
	if m.raw != nil {
		return append(dst, m.raw...)
	}
	val := m.content.appendJSON(nil)
	if out, ok := splice(dst, m.src, m.members, "content", val); ok {
		return out
	}
	return appendObject(dst, m.members, map[string][]byte{"content": val}, []string{"content"})
}

// realUser reports whether m starts a turn: a user message that is not a
// tool-result message.
func (m *Message) realUser() bool { return m.role == "user" && !m.toolResult }

// callIDs appends the ids of the tool calls m makes.
func (m *Message) callIDs(dst []string) []string {
	for _, c := range m.calls {
		dst = append(dst, c.id)
	}
	if m.content.form == formParts {
		for _, p := range m.content.parts {
			if p.typ == "tool_use" {
				dst = append(dst, p.id)
			}
		}
	}
	return dst
}

// resultIDs appends the ids of the tool calls m answers.
func (m *Message) resultIDs(dst []string) []string {
	if m.role == "tool" {
		return append(dst, m.callID)
	}
	if m.toolResult {
		for _, p := range m.content.parts {
			if p.typ == "tool_result" {
				dst = append(dst, p.id)
			}
		}
	}
	return dst
}

// joined returns the text of c: the string, or its text parts joined by
// newlines. With all, other parts contribute a short marker such as
// "[image]".
func (c *content) joined(all bool) string {
	switch c.form {
	case formString:
		return c.text
	case formParts:
		var b strings.Builder
		for _, p := range c.parts {
			s := ""
			switch {
			case p.typ == "text" || p.typ == "refusal":
				s = p.text
			case all:
				s = "[" + p.typ + "]"
			default:
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(s)
		}
		return b.String()
	}
	return ""
}

// allText reports whether c is a string or made of text parts only.
func (c *content) allText() bool {
	if c.form != formParts {
		return true
	}
	for _, p := range c.parts {
		if p.typ != "text" {
			return false
		}
	}
	return true
}

// textRunes is the rune count of joined(false) for all-text content.
func (c *content) textRunes() int {
	if c.form == formString {
		return c.runes
	}
	n := 0
	for i, p := range c.parts {
		if i > 0 {
			n++
		}
		n += p.runes
	}
	return n
}

func (c *content) appendJSON(dst []byte) []byte {
	switch c.form {
	case formString:
		return appendString(dst, c.text)
	case formParts:
		dst = append(dst, '[')
		for i, p := range c.parts {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = p.appendJSON(dst)
		}
		return append(dst, ']')
	}
	return append(dst, "null"...)
}

func (p *part) appendJSON(dst []byte) []byte {
	if p.raw != nil {
		return append(dst, p.raw...)
	}
	key, val := "text", []byte(nil)
	switch p.typ {
	case "text":
		val = appendString(nil, p.text)
	case "tool_result":
		key, val = "content", p.result.appendJSON(nil)
	default:
		return append(dst, p.src...)
	}
	if p.src != nil {
		if out, ok := splice(dst, p.src, p.members, key, val); ok {
			return out
		}
	}
	return appendObject(dst, p.members, map[string][]byte{key: val}, []string{key})
}

// parser reads one message, naming the place of an error.
type parser struct {
	at  string // "messages[3]"
	ms  []member
	msg *Message
}

func (ps *parser) errf(field, format string, args ...any) error {
	where := ps.at
	if field != "" {
		where += "." + field
	}
	return strata.Errorf(strata.EINVALID, "%s: %s", where, fmt.Sprintf(format, args...))
}

// str returns the string member key ("" if absent or null), or an error if
// it is another type.
func (ps *parser) str(ms []member, field, key string) (string, bool, error) {
	v, ok := lookup(ms, key)
	if !ok || isNull(v) {
		return "", false, nil
	}
	if v[0] != '"' {
		return "", false, ps.errf(field, "want a string, got %s", kindOf(v))
	}
	return decodeString(v), true, nil
}

func parseMessage(p Provider, i int, raw []byte) (*Message, error) {
	ps := &parser{at: fmt.Sprintf("messages[%d]", i)}
	if raw[0] != '{' {
		return nil, ps.errf("", "want a message object, got %s", kindOf(raw))
	}
	ps.ms = objectMembers(raw)
	m := &Message{raw: raw, src: raw, members: ps.ms}
	ps.msg = m
	role, ok, err := ps.str(ps.ms, "role", "role")
	if err != nil {
		return nil, err
	}
	if !ok || role == "" {
		return nil, ps.errf("role", "missing")
	}
	m.role = role
	if p == OpenAI {
		err = ps.openai()
	} else {
		err = ps.anthropic()
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (ps *parser) openai() error {
	m := ps.msg
	switch m.role {
	case "system", "developer", "user", "assistant", "tool":
	default:
		return ps.errf("role", "unknown role %q (want system, developer, user, assistant or tool)", m.role)
	}
	var err error
	if m.name, _, err = ps.str(ps.ms, "name", "name"); err != nil {
		return err
	}
	v, _ := lookup(ps.ms, "content")
	if m.content, err = ps.content(v, "content", ps.openaiPart); err != nil {
		return err
	}
	if v, ok := lookup(ps.ms, "tool_calls"); ok && !isNull(v) {
		if m.role != "assistant" {
			return ps.errf("tool_calls", "only assistant messages make tool calls (role is %q)", m.role)
		}
		if v[0] != '[' {
			return ps.errf("tool_calls", "want an array, got %s", kindOf(v))
		}
		for j, el := range arrayElements(v) {
			c, err := ps.openaiCall(j, el)
			if err != nil {
				return err
			}
			m.calls = append(m.calls, c)
		}
	}
	if m.role == "tool" {
		m.toolResult = true
		id, ok, err := ps.str(ps.ms, "tool_call_id", "tool_call_id")
		if err != nil {
			return err
		}
		if !ok || id == "" {
			return ps.errf("tool_call_id", "missing (a tool message must name the call it answers)")
		}
		m.callID = id
	}
	return nil
}

func (ps *parser) openaiCall(j int, el []byte) (toolCall, error) {
	field := fmt.Sprintf("tool_calls[%d]", j)
	if el[0] != '{' {
		return toolCall{}, ps.errf(field, "want an object, got %s", kindOf(el))
	}
	ms := objectMembers(el)
	id, ok, err := ps.str(ms, field+".id", "id")
	if err != nil {
		return toolCall{}, err
	}
	if !ok || id == "" {
		return toolCall{}, ps.errf(field+".id", "missing")
	}
	c := toolCall{id: id}
	if c.name, _, err = ps.str(ms, field+".type", "type"); err != nil {
		return toolCall{}, err
	}
	// A function call has {name, arguments}; a custom tool call has
	// {name, input}. Other kinds pass through with their id only.
	for _, kind := range []string{"function", "custom"} {
		fv, ok := lookup(ms, kind)
		if !ok || isNull(fv) {
			continue
		}
		sub := field + "." + kind
		if fv[0] != '{' {
			return toolCall{}, ps.errf(sub, "want an object, got %s", kindOf(fv))
		}
		fms := objectMembers(fv)
		if c.name, _, err = ps.str(fms, sub+".name", "name"); err != nil {
			return toolCall{}, err
		}
		if c.name == "" {
			return toolCall{}, ps.errf(sub+".name", "missing")
		}
		argKey := "arguments"
		if kind == "custom" {
			argKey = "input"
		}
		if c.args, _, err = ps.str(fms, sub+"."+argKey, argKey); err != nil {
			return toolCall{}, err
		}
	}
	return c, nil
}

func (ps *parser) openaiPart(field string, ms []member, pt *part) error {
	var err error
	switch pt.typ {
	case "text":
		var ok bool
		if pt.text, ok, err = ps.str(ms, field+".text", "text"); err != nil {
			return err
		} else if !ok {
			return ps.errf(field+".text", "missing")
		}
	case "refusal":
		if pt.text, _, err = ps.str(ms, field+".refusal", "refusal"); err != nil {
			return err
		}
	}
	return nil
}

func (ps *parser) anthropic() error {
	m := ps.msg
	switch m.role {
	case "user", "assistant":
	case "system":
		return ps.errf("role", "\"system\" is not a message role here: put the system prompt in the top-level \"system\" field")
	default:
		return ps.errf("role", "unknown role %q (want user or assistant)", m.role)
	}
	v, ok := lookup(ps.ms, "content")
	if !ok || isNull(v) {
		return ps.errf("content", "missing")
	}
	var err error
	if m.content, err = ps.content(v, "content", ps.anthropicBlock); err != nil {
		return err
	}
	for j, pt := range m.content.parts {
		field := fmt.Sprintf("content[%d]", j)
		switch pt.typ {
		case "tool_result":
			if m.role != "user" {
				return ps.errf(field, "tool_result in an assistant message (tool results belong in user messages)")
			}
			m.toolResult = true
		case "tool_use":
			if m.role != "assistant" {
				return ps.errf(field, "tool_use in a user message (tool calls belong in assistant messages)")
			}
		case "thinking", "redacted_thinking":
			if m.role != "assistant" {
				return ps.errf(field, "%s in a user message", pt.typ)
			}
		}
	}
	return nil
}

func (ps *parser) anthropicBlock(field string, ms []member, pt *part) error {
	var err error
	var ok bool
	switch pt.typ {
	case "text":
		if pt.text, ok, err = ps.str(ms, field+".text", "text"); err != nil {
			return err
		} else if !ok {
			return ps.errf(field+".text", "missing")
		}
	case "thinking":
		if pt.text, _, err = ps.str(ms, field+".thinking", "thinking"); err != nil {
			return err
		}
	case "redacted_thinking":
		if pt.text, _, err = ps.str(ms, field+".data", "data"); err != nil {
			return err
		}
	case "tool_use":
		if pt.id, ok, err = ps.str(ms, field+".id", "id"); err != nil {
			return err
		} else if !ok || pt.id == "" {
			return ps.errf(field, "tool_use without id")
		}
		if pt.name, ok, err = ps.str(ms, field+".name", "name"); err != nil {
			return err
		} else if !ok || pt.name == "" {
			return ps.errf(field, "tool_use without name")
		}
		pt.input, _ = lookup(ms, "input")
	case "tool_result":
		if pt.id, ok, err = ps.str(ms, field+".tool_use_id", "tool_use_id"); err != nil {
			return err
		} else if !ok || pt.id == "" {
			return ps.errf(field, "tool_result without tool_use_id")
		}
		if v, ok := lookup(ms, "is_error"); ok && !isNull(v) {
			if v[0] != 't' && v[0] != 'f' {
				return ps.errf(field+".is_error", "want a boolean, got %s", kindOf(v))
			}
			pt.isError = v[0] == 't'
		}
		v, _ := lookup(ms, "content")
		if pt.result, err = ps.content(v, field+".content", ps.anthropicBlock); err != nil {
			return err
		}
		for j, sub := range pt.result.parts {
			if sub.typ == "tool_use" || sub.typ == "tool_result" {
				return ps.errf(fmt.Sprintf("%s.content[%d]", field, j), "%s inside a tool_result", sub.typ)
			}
		}
	}
	return nil
}

// content reads a content value: absent or null, a string, or an array of
// parts, each an object with a "type" that read completes.
func (ps *parser) content(v []byte, field string, read func(field string, ms []member, pt *part) error) (content, error) {
	if isNull(v) {
		return content{}, nil
	}
	switch v[0] {
	case '"':
		s := decodeString(v)
		return content{form: formString, text: s, runes: utf8.RuneCountInString(s)}, nil
	case '[':
	default:
		return content{}, ps.errf(field, "want a string or an array of content parts, got %s", kindOf(v))
	}
	els := arrayElements(v)
	c := content{form: formParts, parts: make([]*part, len(els))}
	for j, el := range els {
		pf := fmt.Sprintf("%s[%d]", field, j)
		if el[0] != '{' {
			return content{}, ps.errf(pf, "want a content part object, got %s", kindOf(el))
		}
		ms := objectMembers(el)
		typ, ok, err := ps.str(ms, pf+".type", "type")
		if err != nil {
			return content{}, err
		}
		if !ok || typ == "" {
			return content{}, ps.errf(pf+".type", "missing")
		}
		pt := &part{typ: typ, raw: el, src: el, members: ms}
		if err := read(pf, ms, pt); err != nil {
			return content{}, err
		}
		pt.runes = utf8.RuneCountInString(pt.text)
		c.parts[j] = pt
	}
	return c, nil
}
