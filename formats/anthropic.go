package formats

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/strata-memory/strata"
)

// anthropicReader reads Anthropic Messages request bodies: an object with
// "messages" (and "system", "model"), a JSON array of such objects, or a
// JSON array of messages.
type anthropicReader struct {
	docReader
	names map[string]string // tool_use id -> name, in a bare list of messages
}

func (r *anthropicReader) Next() (Record, error) {
	for {
		if rec, err, ok := r.next(); ok {
			return rec, err
		}
		if r.err != nil {
			return Record{}, r.err
		}
		if !r.started {
			c, err := r.start()
			switch {
			case err != nil:
				r.err = err
			case c == '[':
				if _, err := r.dec.Token(); err != nil {
					r.err = r.syntax(err)
				}
			case c == '{':
				var raw json.RawMessage
				if err := r.dec.Decode(&raw); err != nil {
					r.err = r.syntax(err)
					continue
				}
				if _, err := r.dec.Token(); err != io.EOF {
					r.err = &ParseError{File: r.name, Line: r.lt.lineAt(r.dec.InputOffset()), Msg: "malformed JSON: data after the end of the object"}
					continue
				}
				r.pending = r.body(raw, r.lt.lineAt(0), "")
				r.err = io.EOF
			default:
				r.err = &ParseError{File: r.name, Line: r.lt.lineAt(0), Msg: "want an Anthropic request body (an object with \"messages\") or an array, got " + kind([]byte{c})}
			}
			continue
		}
		raw, line, err := r.element()
		if err != nil {
			r.err = err
			continue
		}
		prefix := fmt.Sprintf("[%d].", r.index)
		r.index++
		o, err := parseObject(r.name, line, prefix, raw)
		if err != nil {
			return Record{}, err
		}
		if _, ok := o.m["messages"]; ok {
			r.pending = r.body(raw, line, prefix)
			continue
		}
		if r.names == nil {
			r.names = map[string]string{}
		}
		r.pending = r.message(o, "", "", r.names)
	}
}

// body reads one request body: "system", "messages", "model", and
// optionally "conversation" or "id" naming the conversation.
func (r *anthropicReader) body(raw []byte, line int, prefix string) []result {
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
	var out []result
	if v, ok, err := o.text("system"); err != nil {
		return fail(err)
	} else if ok {
		var t strata.Turn
		t.Role = strata.RoleSystem
		if v[0] == '"' {
			t.Content, err = o.str("system")
		} else {
			var blocks []*object
			if blocks, err = elements(o, "system"); err == nil {
				var texts []string
				for _, b := range blocks {
					var s string
					if s, err = b.str("text"); err != nil {
						break
					}
					texts = append(texts, s)
				}
				t.Content = joinText(texts)
			}
		}
		if err != nil {
			return fail(err)
		}
		if t.Content != "" {
			rec, err := finish(r.ids, r.name, line, prefix, conv, &t, "system", false)
			out = append(out, result{rec, err})
		}
	}
	if len(msgs.val) == 0 || string(msgs.val) == "null" {
		return append(out, result{err: o.errf("messages", "missing")})
	}
	if msgs.val[0] != '[' {
		return append(out, result{err: o.errf("messages", "want an array of messages, got %s", kind(msgs.val))})
	}
	els, err := members(msgs.val)
	if err != nil {
		return append(out, result{err: o.errf("messages", "malformed JSON: %s", jsonMsg(err))})
	}
	lc := newLineCounter(raw, line)
	names := map[string]string{}
	for i, el := range els {
		mo, err := parseObject(r.name, lc.at(msgs.off+el.off), fmt.Sprintf("%smessages[%d].", prefix, i), el.val)
		if err != nil {
			out = append(out, result{err: err})
			continue
		}
		out = append(out, r.message(mo, conv, model, names)...)
	}
	return out
}

// message reads one message: a user message may give a tool turn (its
// tool_result blocks) and a user turn (its text), in that order.
func (r *anthropicReader) message(o *object, conv, model string, names map[string]string) []result {
	one := func(rec Record, err error) []result { return []result{{rec, err}} }
	role, err := o.str("role")
	if err != nil {
		return one(Record{}, err)
	}
	var t strata.Turn
	switch role {
	case "assistant":
		t.Role, t.Model = strata.RoleAssistant, model
		v, ok, err := o.text("content")
		if err != nil {
			return one(Record{}, err)
		}
		if ok && v[0] == '"' {
			t.Content, err = o.str("content")
			return one(finish(r.ids, r.name, o.line, o.prefix, conv, &t, "content", false))
		}
		texts, thinking, calls, parts, err := anthropicAssistant(o)
		if err != nil {
			return one(Record{}, err)
		}
		for _, c := range calls {
			names[c.ID] = c.Name
		}
		t.Content, t.ToolCalls = joinText(texts), calls
		if th := joinText(thinking); th != "" || len(parts) > 0 {
			t.Metadata = map[string]any{}
			if th != "" {
				t.Metadata["thinking"] = th
			}
			if len(parts) > 0 {
				t.Metadata["parts"] = parts
			}
		}
		return one(finish(r.ids, r.name, o.line, o.prefix, conv, &t, "content", t.Metadata != nil))
	case "user":
		text, results, images, err := anthropicUserContent(o, names)
		if err != nil {
			return one(Record{}, err)
		}
		var out []result
		if len(results) > 0 {
			tt := strata.Turn{Role: strata.RoleTool, ToolResults: results}
			rec, err := finish(r.ids, r.name, o.line, o.prefix, conv, &tt, "content", false)
			out = append(out, result{rec, err})
			if text == "" && len(images) == 0 {
				return out
			}
		}
		t.Role, t.Content = strata.RoleUser, text
		if len(images) > 0 {
			t.Metadata = map[string]any{"images": images}
		}
		rec, err := finish(r.ids, r.name, o.line, o.prefix, conv, &t, "content", len(images) > 0)
		return append(out, result{rec, err})
	case "":
		return one(Record{}, o.errf("role", "missing (want user or assistant)"))
	}
	return one(Record{}, o.errf("role", "unknown role %q (want user or assistant)", role))
}
