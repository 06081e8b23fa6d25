package formats

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

// chatgptReader reads a ChatGPT data export (conversations.json): a JSON
// array of conversations, streamed one at a time, or one conversation
// object. Each conversation's active branch is read, from current_node
// back through the parents of the mapping tree.
type chatgptReader struct {
	docReader
	counts Counts
}

// Counts implements Counter.
func (r *chatgptReader) Counts() Counts { return r.counts }

func (r *chatgptReader) Next() (Record, error) {
	for {
		if rec, err, ok := r.next(); ok {
			if err == nil {
				r.counts.Turns++
			}
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
				r.pending = r.conversation(raw, r.lt.lineAt(0), "")
				r.err = io.EOF
			default:
				r.err = &ParseError{File: r.name, Line: r.lt.lineAt(0), Msg: "want a JSON array of ChatGPT conversations, got " + kind([]byte{c})}
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
		r.pending = r.conversation(raw, line, prefix)
	}
}

// chatgptNode is one node of a mapping tree.
type chatgptNode struct {
	raw  json.RawMessage
	line int
}

// conversation reads one conversation's active branch.
func (r *chatgptReader) conversation(raw []byte, line int, prefix string) []result {
	fail := func(err error) []result { return []result{{err: err}} }
	ms, err := members(raw)
	if err != nil || len(raw) == 0 || raw[0] != '{' {
		return fail(&ParseError{File: r.name, Line: line, Field: strings.TrimSuffix(prefix, "."), Msg: "want a conversation object"})
	}
	o := &object{file: r.name, line: line, prefix: prefix, m: map[string]json.RawMessage{}}
	var mapping member
	for _, m := range ms {
		o.m[m.key] = m.val
		if m.key == "mapping" {
			mapping = m
		}
	}
	conv, err := o.id("conversation_id")
	if err != nil {
		return fail(err)
	}
	if conv == "" {
		if conv, err = o.id("id"); err != nil {
			return fail(err)
		}
	}
	if conv == "" {
		return fail(o.errf("id", "missing (and no conversation_id)"))
	}
	title, err := o.str("title")
	if err != nil {
		return fail(err)
	}
	start, err := unixTime(o, "create_time")
	if err != nil {
		return fail(err)
	}
	current, err := o.id("current_node")
	if err != nil {
		return fail(err)
	}
	if current == "" {
		return fail(o.errf("current_node", "missing"))
	}
	if len(mapping.val) == 0 || mapping.val[0] != '{' {
		return fail(o.errf("mapping", "missing, or not an object of nodes"))
	}
	branch, nodes, err := r.branch(o, raw, line, mapping, current)
	if err != nil {
		return fail(err)
	}
	r.counts.Records += nodes
	if off := nodes - len(branch); off > 0 {
		for i := 0; i < off; i++ {
			r.counts.skip("other branch")
		}
	}
	return r.branchTurns(branch, conv, title, start)
}

// branch returns the nodes of the conversation o on the branch from node
// current back to the root, and the number of nodes in its mapping. raw
// is the conversation, starting at line.
func (r *chatgptReader) branch(o *object, raw []byte, line int, mapping member, current string) ([]*object, int, error) {
	lc := newLineCounter(raw, line)
	nodes := map[string]chatgptNode{}
	els, err := members(mapping.val)
	if err != nil {
		return nil, 0, o.errf("mapping", "malformed JSON: %s", jsonMsg(err))
	}
	for _, el := range els {
		nodes[el.key] = chatgptNode{raw: el.val, line: lc.at(mapping.off + el.off)}
	}
	var branch []*object
	seen := map[string]bool{}
	for id := current; id != ""; {
		nd, ok := nodes[id]
		if !ok {
			return nil, 0, o.errf("mapping", "node %q (on the branch of current_node) is missing", id)
		}
		if seen[id] {
			return nil, 0, o.errf("mapping", "node %q is its own ancestor", id)
		}
		seen[id] = true
		no, err := parseObject(r.name, nd.line, fmt.Sprintf("%smapping[%q].", o.prefix, id), nd.raw)
		if err != nil {
			return nil, 0, err
		}
		branch = append(branch, no)
		if id, err = no.id("parent"); err != nil {
			return nil, 0, err
		}
	}
	return branch, len(nodes), nil
}

// branchTurns reads the messages of branch, from the root down; the first
// turn kept carries the conversation's title.
func (r *chatgptReader) branchTurns(branch []*object, conv, title string, start time.Time) []result {
	var out []result
	var calls []strata.ToolCall // tool calls not yet answered
	prev := start
	for i := len(branch) - 1; i >= 0; i-- {
		rec, kept, err := r.message(branch[i], conv, &prev, &calls)
		if err != nil {
			out = append(out, result{err: err})
			continue
		}
		if !kept {
			continue
		}
		if title != "" && len(out) == 0 {
			if rec.Turn.Metadata == nil {
				rec.Turn.Metadata = map[string]any{}
			}
			rec.Turn.Metadata["conversation_title"] = title
		}
		out = append(out, result{rec: rec})
	}
	return out
}

// message reads the message of one node, if it is one to keep.
func (r *chatgptReader) message(node *object, conv string, prev *time.Time, calls *[]strata.ToolCall) (Record, bool, error) {
	m, err := sub(node, "message")
	if err != nil {
		return Record{}, false, err
	}
	if m == nil {
		r.counts.skip("no message")
		return Record{}, false, nil
	}
	var t strata.Turn
	if t.ExtID, err = m.id("id"); err != nil {
		return Record{}, false, err
	}
	if t.ExtID == "" {
		if t.ExtID, err = node.id("id"); err != nil {
			return Record{}, false, err
		}
	}
	author, err := sub(m, "author")
	if err != nil {
		return Record{}, false, err
	}
	if author == nil {
		return Record{}, false, m.errf("author", "missing")
	}
	role, err := author.str("role")
	if err != nil {
		return Record{}, false, err
	}
	md, err := sub(m, "metadata")
	if err != nil {
		return Record{}, false, err
	}
	if md != nil {
		if hidden, err := md.boolean("is_visually_hidden_from_conversation"); err != nil {
			return Record{}, false, err
		} else if hidden {
			r.counts.skip("hidden")
			return Record{}, false, nil
		}
	}
	c, err := r.content(m)
	if c == nil || err != nil {
		return Record{}, false, err
	}
	text, images, err := chatgptText(c)
	if err != nil {
		return Record{}, false, err
	}
	if t.Time, err = unixTime(m, "create_time"); err != nil {
		return Record{}, false, err
	}
	if t.Time.IsZero() {
		t.Time = *prev
	}
	*prev = t.Time
	recipient, err := m.str("recipient")
	if err != nil {
		return Record{}, false, err
	}
	name, err := author.str("name")
	if err != nil {
		return Record{}, false, err
	}
	if text, err = chatgptRole(&t, author, md, role, name, recipient, text, calls); err != nil {
		return Record{}, false, err
	}
	if text == "" && len(images) == 0 && len(t.ToolCalls) == 0 && len(t.ToolResults) == 0 {
		r.counts.skip("empty")
		return Record{}, false, nil
	}
	t.Content = text
	if len(images) > 0 {
		t.Metadata = map[string]any{"images": images}
	}
	r.counts.Kept++
	rec, err := finish(r.ids, r.name, m.line, m.prefix, conv, &t, "content", len(images) > 0)
	return rec, err == nil, err
}

// content returns the content of message m, or nil if it is one to skip:
// the model's hidden reasoning and its memory notes.
func (r *chatgptReader) content(m *object) (*object, error) {
	c, err := sub(m, "content")
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, m.errf("content", "missing")
	}
	ct, err := c.str("content_type")
	if err != nil {
		return nil, err
	}
	switch ct {
	case "thoughts", "reasoning_recap", "model_editable_context":
		r.counts.skip(ct)
		return nil, nil
	}
	return c, nil
}

// chatgptRole sets the role of t from its author's. A message of the
// assistant to a tool is a call, a tool's message the result of an open
// call; their text goes into the call or the result. It returns the text
// left for the turn's content.
func chatgptRole(t *strata.Turn, author, md *object, role, name, recipient, text string, calls *[]strata.ToolCall) (string, error) {
	var err error
	switch role {
	case "user":
		t.Role = strata.RoleUser
	case "system":
		t.Role = strata.RoleSystem
	case "assistant":
		t.Role = strata.RoleAssistant
		if md != nil {
			if t.Model, err = md.str("model_slug"); err != nil {
				return "", err
			}
		}
		if recipient != "" && recipient != "all" {
			// A message to a tool: a call, its text the arguments.
			call := strata.ToolCall{ID: t.ExtID, Name: recipient, Arguments: json.RawMessage(text)}
			if text == "" {
				call.Arguments = nil
			}
			t.ToolCalls = []strata.ToolCall{call}
			*calls = append(*calls, call)
			text = ""
		}
	case "tool":
		t.Role = strata.RoleTool
		res := strata.ToolResult{Name: name, Content: text}
		// The answer to the latest open call to the same tool, or to the
		// latest open call.
		for i := len(*calls) - 1; i >= 0; i-- {
			if (*calls)[i].Name == name || i == 0 {
				res.CallID = (*calls)[i].ID
				*calls = append((*calls)[:i], (*calls)[i+1:]...)
				break
			}
		}
		t.ToolResults = []strata.ToolResult{res}
		text = ""
	case "":
		return "", author.errf("role", "missing")
	default:
		return "", author.errf("role", "unknown role %q (want user, assistant, system or tool)", role)
	}
	return text, nil
}

// chatgptText reads the text of a message's content, whatever its
// content_type: the strings of "parts" (objects among them are images,
// kept as their asset pointers, or carry a "text"), or "text", "result",
// or the user's custom instructions.
func chatgptText(c *object) (string, []any, error) {
	var texts []string
	var images []any
	if v, ok := c.get("parts"); ok {
		if v[0] != '[' {
			return "", nil, c.errf("parts", "want an array, got %s", kind(v))
		}
		var parts []json.RawMessage
		if err := json.Unmarshal(v, &parts); err != nil {
			return "", nil, c.errf("parts", "%s", jsonMsg(err))
		}
		for i, p := range parts {
			switch {
			case len(p) > 0 && p[0] == '"':
				if badText(p) {
					return "", nil, c.errf(fmt.Sprintf("parts[%d]", i), "invalid UTF-8")
				}
				var s string
				json.Unmarshal(p, &s)
				texts = append(texts, s)
			case len(p) > 0 && p[0] == '{':
				po, err := parseObject(c.file, c.line, fmt.Sprintf("%sparts[%d].", c.prefix, i), p)
				if err != nil {
					return "", nil, err
				}
				if ptr, err := po.str("asset_pointer"); err != nil {
					return "", nil, err
				} else if ptr != "" {
					images = append(images, ptr)
					continue
				}
				s, err := po.str("text")
				if err != nil {
					return "", nil, err
				}
				texts = append(texts, s)
			}
		}
	}
	for _, key := range []string{"text", "result", "user_profile", "user_instructions"} {
		s, err := c.str(key)
		if err != nil {
			return "", nil, err
		}
		texts = append(texts, s)
	}
	return joinText(texts), images, nil
}

// unixTime reads a member holding unix seconds, a number or null.
func unixTime(o *object, name string) (time.Time, error) {
	v, ok := o.get(name)
	if !ok {
		return time.Time{}, nil
	}
	if kind(v) != "a number" {
		return time.Time{}, o.errf(name, "want unix seconds, got %s", kind(v))
	}
	t, ok := unixSeconds(string(v))
	if !ok {
		return time.Time{}, o.errf(name, "unix seconds %s are out of range", v)
	}
	return t, nil
}
