package formats

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/strata-memory/strata"
)

type openaiReader struct {
	docReader
}

func (r *openaiReader) Next() (Record, error) {
	for {
		if rec, err, ok := r.next(); ok {
			return rec, err
		}
		if r.err != nil {
			return Record{}, r.err
		}
		if !r.started {
			r.begin()
			continue
		}
		raw, line, err := r.element()
		if err != nil {
			r.err = err
			continue
		}
		path := fmt.Sprintf("[%d]", r.index)
		r.index++
		o, err := parseObject(r.name, line, path+".", raw)
		if err != nil {
			return Record{}, err
		}
		if _, ok := o.m["messages"]; ok {
			r.pending = r.conversation(raw, line, path+".")
			continue
		}
		return r.message(o, "", "")
	}
}

// begin reads the start of the document: '[' starts a stream of messages
// (or conversation objects); '{' is one conversation object, read whole.
func (r *openaiReader) begin() {
	c, err := r.start()
	if err != nil {
		r.err = err
		return
	}
	switch c {
	case '[':
		if _, err := r.dec.Token(); err != nil {
			r.err = r.syntax(err)
		}
	case '{':
		var raw json.RawMessage
		if err := r.dec.Decode(&raw); err != nil {
			r.err = r.syntax(err)
			return
		}
		line := r.lt.lineAt(0)
		if _, err := r.dec.Token(); err != io.EOF {
			r.err = &ParseError{File: r.name, Line: r.lt.lineAt(r.dec.InputOffset()), Msg: "malformed JSON: data after the end of the object"}
			return
		}
		r.pending = r.conversation(raw, line, "")
		r.err = io.EOF
	default:
		r.err = &ParseError{File: r.name, Line: r.lt.lineAt(0),
			Msg: fmt.Sprintf("want a JSON array of messages or an object with \"messages\", got %s", kind([]byte{c}))}
	}
}

// conversation parses a conversation object: "messages", and optionally
// "conversation" or "id", and "model".
func (r *openaiReader) conversation(raw []byte, line int, prefix string) []result {
	fail := func(err error) []result { return []result{{err: err}} }
	ms, err := members(raw)
	if err != nil {
		return fail(&ParseError{File: r.name, Line: line, Field: strings.TrimSuffix(prefix, "."), Msg: "malformed JSON: " + jsonMsg(err)})
	}
	o := &object{file: r.name, line: line, prefix: prefix, m: map[string]json.RawMessage{}}
	var msgs member
	for _, m := range ms {
		o.m[m.key] = m.val
		if m.key == "messages" {
			msgs = m
		}
	}
	conv, err := o.id("conversation")
	if err != nil {
		return fail(err)
	}
	if conv == "" {
		if conv, err = o.id("id"); err != nil {
			return fail(err)
		}
	}
	model, err := o.str("model")
	if err != nil {
		return fail(err)
	}
	lc := newLineCounter(raw, line)
	if len(msgs.val) == 0 || string(msgs.val) == "null" {
		return fail(o.errf("messages", "missing"))
	}
	if msgs.val[0] != '[' {
		return fail(&ParseError{File: r.name, Line: lc.at(msgs.off), Field: prefix + "messages", Msg: "want an array of messages, got " + kind(msgs.val)})
	}
	els, err := members(msgs.val)
	if err != nil {
		return fail(o.errf("messages", "malformed JSON: %s", jsonMsg(err)))
	}
	out := make([]result, 0, len(els))
	for i, el := range els {
		path := fmt.Sprintf("%smessages[%d].", prefix, i)
		mo, err := parseObject(r.name, lc.at(msgs.off+el.off), path, el.val)
		if err != nil {
			out = append(out, result{err: err})
			continue
		}
		rec, err := r.message(mo, conv, model)
		out = append(out, result{rec, err})
	}
	return out
}

// openaiRoles maps OpenAI roles to strata roles.
var openaiRoles = map[string]strata.Role{
	"system":    strata.RoleSystem,
	"developer": strata.RoleSystem,
	"user":      strata.RoleUser,
	"assistant": strata.RoleAssistant,
	"tool":      strata.RoleTool,
	"function":  strata.RoleTool,
}

// message parses one chat-completion message.
func (r *openaiReader) message(o *object, conv, model string) (Record, error) {
	var t strata.Turn
	role, err := o.str("role")
	if err != nil {
		return Record{}, err
	}
	if role == "" {
		return Record{}, o.errf("role", "missing (want system, developer, user, assistant, tool or function)")
	}
	var ok bool
	if t.Role, ok = openaiRoles[strings.ToLower(strings.TrimSpace(role))]; !ok {
		return Record{}, o.errf("role", "unknown role %q (want system, developer, user, assistant, tool or function)", role)
	}
	if t.Role == strata.RoleAssistant {
		t.Model = model
	}
	if t.Name, err = o.str("name"); err != nil {
		return Record{}, err
	}
	var images, parts []any
	if t.Content, images, parts, err = openaiContent(o); err != nil {
		return Record{}, err
	}
	if len(images) > 0 || len(parts) > 0 {
		t.Metadata = map[string]any{}
		if len(images) > 0 {
			t.Metadata["images"] = images
		}
		if len(parts) > 0 {
			t.Metadata["parts"] = parts
		}
	}
	refusal, err := o.str("refusal")
	if err != nil {
		return Record{}, err
	}
	if refusal != "" && t.Content == "" {
		t.Content = refusal
		if t.Metadata == nil {
			t.Metadata = map[string]any{}
		}
		t.Metadata["refusal"] = true
	}
	if t.ToolCalls, err = openaiToolCalls(o); err != nil {
		return Record{}, err
	}
	if t.Role == strata.RoleTool {
		callID, err := o.id("tool_call_id")
		if err != nil {
			return Record{}, err
		}
		t.ToolResults = []strata.ToolResult{{CallID: callID, Name: t.Name, Content: t.Content}}
		t.Name, t.Content = "", ""
	}
	allowEmpty := len(images) > 0 || len(parts) > 0
	return finish(r.ids, o.file, o.line, o.prefix, conv, &t, "content", allowEmpty)
}

// openaiContent reads "content": a string, null, or an array of content
// parts. Text parts ("text", "input_text", "output_text", "refusal") are
// joined with newlines; image_url parts give image URLs; other parts are
// returned whole.
func openaiContent(o *object) (text string, images, other []any, err error) {
	v, ok, err := o.text("content")
	if !ok || err != nil {
		return "", nil, nil, err
	}
	switch v[0] {
	case '"':
		text, err = o.str("content")
		return text, nil, nil, err
	case '[':
	default:
		return "", nil, nil, o.errf("content", "want a string, an array of content parts or null, got %s", kind(v))
	}
	els, err := elements(o, "content")
	if err != nil {
		return "", nil, nil, err
	}
	var texts []string
	for _, p := range els {
		typ, err := p.str("type")
		if err != nil {
			return "", nil, nil, err
		}
		if _, ok := p.m["text"]; ok && typ == "" {
			typ = "text" // a part without a type, but with text
		}
		switch typ {
		case "text", "input_text", "output_text", "refusal":
			key := "text"
			if typ == "refusal" {
				key = "refusal"
			}
			s, err := p.str(key)
			if err != nil {
				return "", nil, nil, err
			}
			texts = append(texts, s)
		case "image_url":
			v, ok := p.get("image_url")
			if !ok {
				return "", nil, nil, p.errf("image_url", "missing")
			}
			var url string
			if v[0] == '"' {
				url, err = p.str("image_url")
			} else {
				var iu *object
				if iu, err = parseObject(p.file, p.line, p.prefix+"image_url.", v); err == nil {
					url, err = iu.str("url")
				}
			}
			if err != nil {
				return "", nil, nil, err
			}
			images = append(images, url)
		default:
			var x any
			json.Unmarshal(mustRaw(p), &x)
			other = append(other, x)
		}
	}
	return strings.Join(texts, "\n"), images, other, nil
}

// mustRaw re-encodes an object's members (already checked) as JSON.
func mustRaw(o *object) []byte {
	b, _ := json.Marshal(o.m)
	return b
}

// openaiToolCalls reads "tool_calls" ([{id, type, function: {name,
// arguments}}], also type "custom" with custom: {name, input}) and the
// legacy "function_call" ({name, arguments}).
func openaiToolCalls(o *object) ([]strata.ToolCall, error) {
	els, err := elements(o, "tool_calls")
	if err != nil {
		return nil, err
	}
	var calls []strata.ToolCall
	for _, e := range els {
		var c strata.ToolCall
		if c.ID, err = e.id("id"); err != nil {
			return nil, err
		}
		typ, err := e.str("type")
		if err != nil {
			return nil, err
		}
		fnKey, argKey := "function", "arguments"
		switch typ {
		case "", "function":
		case "custom":
			fnKey, argKey = "custom", "input"
		default:
			return nil, e.errf("type", "unsupported tool call type %q (want function or custom)", typ)
		}
		v, ok := e.get(fnKey)
		if !ok {
			return nil, e.errf(fnKey, "missing")
		}
		fn, err := parseObject(e.file, e.line, e.prefix+fnKey+".", v)
		if err != nil {
			return nil, err
		}
		if c.Name, err = fn.str("name"); err != nil {
			return nil, err
		}
		if c.Name == "" {
			return nil, fn.errf("name", "missing")
		}
		if c.Arguments, err = toolArgsOf(fn, argKey); err != nil {
			return nil, err
		}
		calls = append(calls, c)
	}
	if v, ok, err := o.text("function_call"); err != nil {
		return nil, err
	} else if ok {
		fn, err := parseObject(o.file, o.line, o.prefix+"function_call.", v)
		if err != nil {
			return nil, err
		}
		var c strata.ToolCall
		if c.Name, err = fn.str("name"); err != nil {
			return nil, err
		}
		if c.Name == "" {
			return nil, fn.errf("name", "missing")
		}
		if c.Arguments, err = toolArgsOf(fn, "arguments"); err != nil {
			return nil, err
		}
		calls = append(calls, c)
	}
	return calls, nil
}
