package formats

import (
	"encoding/json"

	"github.com/strata-memory/strata"
)

// claudeReader reads a Claude Code session file: one JSON record per line.
// User and assistant records become turns; the records of one assistant
// message, which Claude Code writes one content block at a time, become
// one turn.
type claudeReader struct {
	queue
	lines   lineSource
	ids     *idDeriver
	project string            // from the file's path; "" = from each record's cwd
	names   map[string]string // tool_use id -> tool name
	group   *claudeGroup      // the assistant message being gathered
}

// claudeGroup is an assistant message whose records are being gathered.
type claudeGroup struct {
	msgID    string
	session  string
	conv     string
	line     int
	turn     strata.Turn
	texts    []string
	thinking []string
	parts    []any
	records  int // records gathered
}

func (r *claudeReader) Next() (Record, error) {
	for {
		if rec, err, ok := r.pop(); ok {
			return rec, err
		}
		if r.end != nil {
			return Record{}, r.end
		}
		line, n, err := r.lines.next()
		if err != nil {
			r.flush()
			r.end = err
			continue
		}
		r.counts.Records++
		if err := r.record(line, n); err != nil {
			r.flush()
			r.push(Record{}, err)
		}
	}
}

// flush emits the assistant message being gathered, if any.
func (r *claudeReader) flush() {
	g := r.group
	if g == nil {
		return
	}
	r.group = nil
	t := g.turn
	t.Content = joinText(g.texts)
	if th := joinText(g.thinking); th != "" {
		t.Metadata["thinking"] = th
	}
	if len(g.parts) > 0 {
		t.Metadata["parts"] = g.parts
	}
	if t.Content == "" && len(t.ToolCalls) == 0 && t.Metadata["thinking"] == nil && len(g.parts) == 0 {
		for i := 0; i < g.records; i++ {
			r.counts.skip("empty")
		}
		return
	}
	r.counts.Kept += g.records
	if len(t.Metadata) == 0 {
		t.Metadata = nil
	}
	r.push(finish(r.ids, r.lines.name, g.line, "", g.conv, &t, "message.content", true))
}

// record reads one line.
func (r *claudeReader) record(line []byte, n int) error {
	o, err := parseObject(r.lines.name, n, "", line)
	if err != nil {
		return err
	}
	typ, keep, err := r.kind(o)
	if !keep || err != nil {
		return err
	}
	t, err := claudeTurn(o)
	if err != nil {
		return err
	}
	conv := r.project
	if conv == "" {
		cwd, err := o.str("cwd")
		if err != nil {
			return err
		}
		if cwd != "" {
			conv = projectName(cwd)
		}
	}
	msg, err := sub(o, "message")
	if err != nil {
		return err
	}
	if msg == nil {
		return o.errf("message", "missing")
	}
	if typ == "assistant" {
		return r.assistant(o, msg, n, conv, t)
	}
	r.flush()
	summary, err := o.boolean("isCompactSummary")
	if err != nil {
		return err
	}
	return r.user(msg, n, conv, t, summary)
}

// kind returns the type of record o, user or assistant, and whether it
// is one to keep; it counts those it skips.
func (r *claudeReader) kind(o *object) (string, bool, error) {
	typ, err := o.str("type")
	if err != nil {
		return "", false, err
	}
	switch typ {
	case "user", "assistant":
	case "":
		return "", false, o.errf("type", "missing")
	case "system":
		sub, err := o.str("subtype")
		if err != nil {
			return "", false, err
		}
		r.counts.skip("system/" + sub)
		return "", false, nil
	default:
		// file-history-snapshot, queue-operation, summary, progress and
		// whatever later versions add: nothing a memory needs.
		r.counts.skip(typ)
		return "", false, nil
	}
	meta, err := o.boolean("isMeta")
	if err != nil {
		return "", false, err
	}
	if meta {
		r.counts.skip("meta")
		return "", false, nil
	}
	return typ, true, nil
}

// claudeTurn returns the turn of record o with what every record has: its
// id, time and session; a sidechain's session is its agent's.
func claudeTurn(o *object) (strata.Turn, error) {
	var t strata.Turn
	var err error
	if t.ExtID, err = o.id("uuid"); err != nil {
		return t, err
	}
	if t.ExtID == "" {
		return t, o.errf("uuid", "missing")
	}
	if t.Time, err = timeOf(o, "timestamp"); err != nil {
		return t, err
	}
	session, err := o.id("sessionId")
	if err != nil {
		return t, err
	}
	side, err := o.boolean("isSidechain")
	if err != nil {
		return t, err
	}
	t.SessionLabel = session
	t.Metadata = map[string]any{}
	if side {
		agent, err := o.str("agentId")
		if err != nil {
			return t, err
		}
		t.Metadata["sidechain"] = true
		if agent != "" {
			t.Metadata["agent_id"] = agent
			t.SessionLabel = session + "/agent-" + agent
		} else {
			t.SessionLabel = session + "/sidechain"
		}
	}
	return t, nil
}

// assistant adds an assistant record to the message being gathered, or
// starts a new one.
func (r *claudeReader) assistant(o, msg *object, n int, conv string, t strata.Turn) error {
	id, err := msg.str("id")
	if err != nil {
		return err
	}
	g := r.group
	if g == nil || id == "" || g.msgID != id || g.session != t.SessionLabel || g.conv != conv {
		r.flush()
		t.Role = strata.RoleAssistant
		if t.Model, err = msg.str("model"); err != nil {
			return err
		}
		if id != "" {
			t.Metadata["message_id"] = id
		}
		g = &claudeGroup{msgID: id, session: t.SessionLabel, conv: conv, line: n, turn: t}
		r.group = g
	}
	v, ok, err := msg.text("content")
	if err != nil || !ok {
		if err == nil {
			g.records++
		}
		return err
	}
	if v[0] == '"' {
		s, err := msg.str("content")
		if err != nil {
			return err
		}
		g.texts = append(g.texts, s)
		g.records++
		return nil
	}
	texts, thinking, calls, parts, err := anthropicAssistant(msg)
	if err != nil {
		return err
	}
	for _, c := range calls {
		r.names[c.ID] = c.Name
	}
	g.texts = append(g.texts, texts...)
	g.thinking = append(g.thinking, thinking...)
	g.turn.ToolCalls = append(g.turn.ToolCalls, calls...)
	g.parts = append(g.parts, parts...)
	g.records++
	return nil
}

// anthropicAssistant reads the content blocks of an Anthropic assistant
// message: text, thinking, tool_use (and server_tool_use) blocks; other
// blocks are returned whole, and redacted_thinking (encrypted) is dropped.
func anthropicAssistant(msg *object) (texts, thinking []string, calls []strata.ToolCall, parts []any, err error) {
	blocks, err := elements(msg, "content")
	if err != nil {
		return nil, nil, nil, nil, err
	}
	for _, b := range blocks {
		bt, err := b.str("type")
		if err != nil {
			return nil, nil, nil, nil, err
		}
		switch bt {
		case "text":
			s, err := b.str("text")
			if err != nil {
				return nil, nil, nil, nil, err
			}
			texts = append(texts, s)
		case "thinking":
			s, err := b.str("thinking")
			if err != nil {
				return nil, nil, nil, nil, err
			}
			thinking = append(thinking, s)
		case "redacted_thinking":
			// Encrypted: nothing readable to keep.
		case "tool_use", "server_tool_use":
			c, err := anthropicToolUse(b)
			if err != nil {
				return nil, nil, nil, nil, err
			}
			calls = append(calls, c)
		case "":
			return nil, nil, nil, nil, b.errf("type", "missing")
		default:
			var x any
			json.Unmarshal(mustRaw(b), &x)
			parts = append(parts, x)
		}
	}
	return texts, thinking, calls, parts, nil
}

// anthropicToolUse reads a tool_use block: id, name and input (kept as
// written).
func anthropicToolUse(b *object) (strata.ToolCall, error) {
	var c strata.ToolCall
	var err error
	if c.ID, err = b.str("id"); err != nil {
		return c, err
	}
	if c.Name, err = b.str("name"); err != nil {
		return c, err
	}
	if c.Name == "" {
		return c, b.errf("name", "missing")
	}
	v, ok, err := b.text("input")
	if err != nil {
		return c, err
	}
	if ok && string(v) != "{}" {
		c.Arguments = append(json.RawMessage(nil), v...)
	}
	return c, nil
}

// user reads a user record: typed text, or the results of tool calls. A
// record holding both gives a tool turn (ext_id the uuid) and then a user
// turn (ext_id the uuid and "-text").
func (r *claudeReader) user(msg *object, n int, conv string, t strata.Turn, summary bool) error {
	t.Role = strata.RoleUser
	if summary {
		t.Role = strata.RoleSystem
		t.Metadata["compact_summary"] = true
	}
	text, results, images, err := anthropicUserContent(msg, r.names)
	if err != nil {
		return err
	}
	if len(images) > 0 {
		t.Metadata["images"] = images
	}
	if len(t.Metadata) == 0 {
		t.Metadata = nil
	}
	if len(results) > 0 {
		tt := t
		tt.Role, tt.ToolResults, tt.Metadata = strata.RoleTool, results, nil
		if t.Metadata != nil {
			tt.Metadata = map[string]any{}
			for k, v := range t.Metadata {
				if k != "images" {
					tt.Metadata[k] = v
				}
			}
			if len(tt.Metadata) == 0 {
				tt.Metadata = nil
			}
		}
		r.counts.Kept++
		r.push(finish(r.ids, r.lines.name, n, "", conv, &tt, "message.content", false))
		if text == "" && len(images) == 0 {
			return nil
		}
		t.ExtID += "-text"
	}
	if text == "" && len(images) == 0 {
		r.counts.skip("empty")
		return nil
	}
	t.Content = text
	if len(results) == 0 {
		r.counts.Kept++
	}
	r.push(finish(r.ids, r.lines.name, n, "", conv, &t, "message.content", len(images) > 0))
	return nil
}

// anthropicUserContent reads the content of an Anthropic user message: a
// string, or blocks of text, image and tool_result. names maps tool_use ids
// to tool names, for the results' names.
func anthropicUserContent(msg *object, names map[string]string) (text string, results []strata.ToolResult, images []any, err error) {
	v, ok, err := msg.text("content")
	if err != nil || !ok {
		return "", nil, nil, err
	}
	if v[0] == '"' {
		text, err = msg.str("content")
		return text, nil, nil, err
	}
	blocks, err := elements(msg, "content")
	if err != nil {
		return "", nil, nil, err
	}
	var texts []string
	for _, b := range blocks {
		bt, err := b.str("type")
		if err != nil {
			return "", nil, nil, err
		}
		switch bt {
		case "text":
			s, err := b.str("text")
			if err != nil {
				return "", nil, nil, err
			}
			texts = append(texts, s)
		case "image", "document":
			images = append(images, mediaType(b))
		case "tool_result":
			var res strata.ToolResult
			if res.CallID, err = b.str("tool_use_id"); err != nil {
				return "", nil, nil, err
			}
			if res.CallID == "" {
				return "", nil, nil, b.errf("tool_use_id", "missing")
			}
			res.Name = names[res.CallID]
			if res.IsError, err = b.boolean("is_error"); err != nil {
				return "", nil, nil, err
			}
			if res.Content, err = resultContent(b); err != nil {
				return "", nil, nil, err
			}
			results = append(results, res)
		case "":
			return "", nil, nil, b.errf("type", "missing")
		default:
			texts = append(texts, string(mustRaw(b)))
		}
	}
	return joinText(texts), results, images, nil
}

// mediaType names an image or document block by its media type.
func mediaType(b *object) string {
	if src, err := sub(b, "source"); err == nil && src != nil {
		if s, _ := src.str("media_type"); s != "" {
			return s
		}
	}
	return "image"
}

// resultContent reads a tool_result's content: a string, or blocks whose
// text is joined (an image is "[image <media type>]").
func resultContent(b *object) (string, error) {
	v, ok, err := b.text("content")
	if err != nil || !ok {
		return "", err
	}
	if v[0] == '"' {
		return b.str("content")
	}
	parts, err := elements(b, "content")
	if err != nil {
		return "", err
	}
	var texts []string
	for _, p := range parts {
		pt, err := p.str("type")
		if err != nil {
			return "", err
		}
		switch pt {
		case "text":
			s, err := p.str("text")
			if err != nil {
				return "", err
			}
			texts = append(texts, s)
		case "image", "document":
			texts = append(texts, "["+pt+" "+mediaType(p)+"]")
		default:
			texts = append(texts, string(mustRaw(p)))
		}
	}
	return joinText(texts), nil
}
