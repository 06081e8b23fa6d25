package formats

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/strata-memory/strata"
)

// codexReader reads a Codex CLI rollout file: one {"timestamp", "type",
// "payload"} record per line. The response items between two inputs (a
// user message or a tool output) are one assistant turn: its reasoning
// summaries, messages and tool calls.
type codexReader struct {
	queue
	lines   lineSource
	ids     *idDeriver
	session string
	conv    string
	model   string
	names   map[string]string // call_id -> tool name
	group   *codexGroup
}

type codexGroup struct {
	line      int
	turn      strata.Turn
	texts     []string
	reasoning []string
	records   int
}

// rolloutID matches the session id at the end of a rollout file's name.
var rolloutID = regexp.MustCompile(`([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$`)

func newCodexReader(name string, lines lineSource, ids *idDeriver) *codexReader {
	r := &codexReader{lines: lines, ids: ids, names: map[string]string{}}
	if m := rolloutID.FindStringSubmatch(filepath.Base(name)); m != nil {
		r.session = m[1]
	}
	return r
}

func (r *codexReader) Next() (Record, error) {
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

func (r *codexReader) flush() {
	g := r.group
	if g == nil {
		return
	}
	r.group = nil
	t := g.turn
	t.Content = joinText(g.texts)
	if s := joinText(g.reasoning); s != "" {
		t.Metadata = map[string]any{"reasoning": s}
	}
	r.counts.Kept += g.records
	r.push(finish(r.ids, r.lines.name, g.line, "", r.conv, &t, "payload", true))
}

// turn starts a turn of the current session.
func (r *codexReader) turn(o *object, role strata.Role) (strata.Turn, error) {
	t := strata.Turn{Role: role, SessionLabel: r.session}
	var err error
	t.Time, err = timeOf(o, "timestamp")
	return t, err
}

// assistant returns the assistant turn being gathered, starting one.
func (r *codexReader) assistant(o *object, n int) (*codexGroup, error) {
	if r.group != nil {
		return r.group, nil
	}
	t, err := r.turn(o, strata.RoleAssistant)
	if err != nil {
		return nil, err
	}
	t.Model = r.model
	r.group = &codexGroup{line: n, turn: t}
	return r.group, nil
}

// codexInjected are the openings of the user messages Codex writes itself
// (project instructions and the environment), not the user.
var codexInjected = []string{"<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>", "<permissions instructions>", "<user_shell_command>"}

func (r *codexReader) record(line []byte, n int) error {
	o, err := parseObject(r.lines.name, n, "", line)
	if err != nil {
		return err
	}
	typ, err := o.str("type")
	if err != nil {
		return err
	}
	if typ == "" {
		return o.errf("type", "missing")
	}
	p, err := sub(o, "payload")
	if err != nil {
		return err
	}
	if p == nil {
		return o.errf("payload", "missing")
	}
	switch typ {
	case "session_meta":
		id, err := p.id("id")
		if err != nil {
			return err
		}
		if id != "" {
			r.session = id
		}
		if err := r.cwd(p); err != nil {
			return err
		}
		r.counts.skip(typ)
		return nil
	case "turn_context":
		if err := r.cwd(p); err != nil {
			return err
		}
		model, err := p.str("model")
		if err != nil {
			return err
		}
		if model != "" {
			r.model = model
		}
		r.counts.skip(typ)
		return nil
	case "event_msg":
		// Events repeat the response items (user_message, agent_message,
		// agent_reasoning) or report progress (token_count,
		// exec_command_end, task_started, ...).
		pt, err := p.str("type")
		if err != nil {
			return err
		}
		r.counts.skip("event_msg/" + pt)
		return nil
	case "compacted":
		r.flush()
		t, err := r.turn(o, strata.RoleSystem)
		if err != nil {
			return err
		}
		if t.Content, err = p.str("message"); err != nil {
			return err
		}
		if t.Content == "" {
			r.counts.skip("empty")
			return nil
		}
		t.Metadata = map[string]any{"compact_summary": true}
		r.counts.Kept++
		r.push(finish(r.ids, r.lines.name, n, "", r.conv, &t, "payload.message", false))
		return nil
	case "response_item":
		return r.item(o, p, n)
	}
	r.counts.skip(typ)
	return nil
}

// cwd sets the conversation from a record's working directory.
func (r *codexReader) cwd(p *object) error {
	cwd, err := p.str("cwd")
	if err == nil && cwd != "" {
		r.conv = projectName(cwd)
	}
	return err
}

// item reads one response item.
func (r *codexReader) item(o, p *object, n int) error {
	pt, err := p.str("type")
	if err != nil {
		return err
	}
	switch pt {
	case "message":
		return r.message(o, p, n)
	case "reasoning":
		return r.reasoning(o, p, n)
	case "function_call", "custom_tool_call", "local_shell_call", "web_search_call":
		return r.toolCall(o, p, n, pt)
	case "function_call_output", "custom_tool_call_output":
		return r.toolOutput(o, p, n)
	case "":
		return p.errf("type", "missing")
	}
	// ghost_snapshot (a git snapshot for undo) and item types of later
	// versions.
	r.counts.skip("response_item/" + pt)
	return nil
}

// reasoning reads a reasoning item into the assistant's turn, unless its
// text is encrypted.
func (r *codexReader) reasoning(o, p *object, n int) error {
	var texts []string
	for _, key := range []string{"summary", "content"} {
		parts, err := elements(p, key)
		if err != nil {
			return err
		}
		for _, part := range parts {
			s, err := part.str("text")
			if err != nil {
				return err
			}
			texts = append(texts, s)
		}
	}
	if joinText(texts) == "" {
		r.counts.skip("response_item/reasoning (encrypted)")
		return nil
	}
	g, err := r.assistant(o, n)
	if err != nil {
		return err
	}
	g.reasoning = append(g.reasoning, texts...)
	g.records++
	return nil
}

// toolCall reads a tool call item of type pt into the assistant's turn.
// A built-in tool (local shell, web search) is named after the type.
func (r *codexReader) toolCall(o, p *object, n int, pt string) error {
	var c strata.ToolCall
	var err error
	if c.ID, err = p.id("call_id"); err != nil {
		return err
	}
	switch pt {
	case "function_call", "custom_tool_call":
		if c.Name, err = p.str("name"); err != nil {
			return err
		}
		if c.Name == "" {
			return p.errf("name", "missing")
		}
		key := "arguments"
		if pt == "custom_tool_call" {
			key = "input"
		}
		if c.Arguments, err = toolArgsOf(p, key); err != nil {
			return err
		}
	default:
		c.Name = strings.TrimSuffix(pt, "_call")
		if c.ID == "" {
			if c.ID, err = p.id("id"); err != nil {
				return err
			}
		}
		if c.Arguments, err = toolArgsOf(p, "action"); err != nil {
			return err
		}
	}
	g, err := r.assistant(o, n)
	if err != nil {
		return err
	}
	if c.ID != "" {
		r.names[c.ID] = c.Name
	}
	g.turn.ToolCalls = append(g.turn.ToolCalls, c)
	g.records++
	return nil
}

// toolOutput reads a tool output item as a tool turn.
func (r *codexReader) toolOutput(o, p *object, n int) error {
	r.flush()
	t, err := r.turn(o, strata.RoleTool)
	if err != nil {
		return err
	}
	var res strata.ToolResult
	if res.CallID, err = p.id("call_id"); err != nil {
		return err
	}
	if res.CallID == "" {
		return p.errf("call_id", "missing")
	}
	res.Name = r.names[res.CallID]
	var exit *int
	if res.Content, res.IsError, exit, err = codexOutput(p); err != nil {
		return err
	}
	if exit != nil {
		t.Metadata = map[string]any{"exit_code": float64(*exit)}
	}
	t.ToolResults = []strata.ToolResult{res}
	r.counts.Kept++
	r.push(finish(r.ids, r.lines.name, n, "", r.conv, &t, "payload.output", false))
	return nil
}

// message reads a message item: a user's (or Codex's own context, kept
// as a system turn), the assistant's, or a developer or system message.
func (r *codexReader) message(o, p *object, n int) error {
	role, err := p.str("role")
	if err != nil {
		return err
	}
	text, images, err := codexContent(p)
	if err != nil {
		return err
	}
	if role == "assistant" {
		g, err := r.assistant(o, n)
		if err != nil {
			return err
		}
		g.texts = append(g.texts, text)
		g.records++
		return nil
	}
	r.flush()
	var t strata.Turn
	switch role {
	case "user":
		t, err = r.turn(o, strata.RoleUser)
		for _, s := range codexInjected {
			if strings.HasPrefix(strings.TrimSpace(text), s) {
				t.Role = strata.RoleSystem
			}
		}
	case "developer", "system":
		t, err = r.turn(o, strata.RoleSystem)
	case "":
		return p.errf("role", "missing")
	default:
		return p.errf("role", "unknown role %q (want user, assistant, developer or system)", role)
	}
	if err != nil {
		return err
	}
	if text == "" && len(images) == 0 {
		r.counts.skip("empty")
		return nil
	}
	t.Content = text
	if len(images) > 0 {
		t.Metadata = map[string]any{"images": images}
	}
	r.counts.Kept++
	r.push(finish(r.ids, r.lines.name, n, "", r.conv, &t, "payload.content", len(images) > 0))
	return nil
}

// codexContent returns the text of a message item's content parts,
// joined, and its images; a part of a type it does not know is kept as
// its JSON.
func codexContent(p *object) (string, []any, error) {
	var texts []string
	var images []any
	parts, err := elements(p, "content")
	if err != nil {
		return "", nil, err
	}
	for _, part := range parts {
		pt, err := part.str("type")
		if err != nil {
			return "", nil, err
		}
		switch pt {
		case "input_text", "output_text", "text":
			s, err := part.str("text")
			if err != nil {
				return "", nil, err
			}
			texts = append(texts, s)
		case "refusal":
			s, err := part.str("refusal")
			if err != nil {
				return "", nil, err
			}
			texts = append(texts, s)
		case "input_image":
			u, err := part.str("image_url")
			if err != nil {
				return "", nil, err
			}
			images = append(images, u)
		default:
			texts = append(texts, string(mustRaw(part)))
		}
	}
	return joinText(texts), images, nil
}

// exitLine finds the exit status in the text output of Codex's
// exec_command tool.
var exitLine = regexp.MustCompile(`(?m)^(?:Process exited with code|Exit code:) (-?\d+)$`)

// codexOutput reads a tool output: a string, which older versions fill
// with JSON {"output": text, "metadata": {"exit_code": n, ...}} (the text
// is kept and the exit code read), or an object {"content", "success"}.
func codexOutput(p *object) (content string, isError bool, exit *int, err error) {
	v, ok, err := p.text("output")
	if err != nil || !ok {
		return "", false, nil, err
	}
	switch v[0] {
	case '{':
		out, err := parseObject(p.file, p.line, p.prefix+"output.", v)
		if err != nil {
			return "", false, nil, err
		}
		if content, err = out.str("content"); err != nil {
			return "", false, nil, err
		}
		if sv, ok := out.get("success"); ok && string(sv) == "false" {
			isError = true
		}
		return content, isError, nil, nil
	case '"':
	default:
		return "", false, nil, p.errf("output", "want a string or an object, got %s", kind(v))
	}
	if content, err = p.str("output"); err != nil {
		return "", false, nil, err
	}
	var wrapped struct {
		Output   *string `json:"output"`
		Metadata struct {
			ExitCode *int `json:"exit_code"`
		} `json:"metadata"`
	}
	if strings.HasPrefix(content, "{") && json.Unmarshal([]byte(content), &wrapped) == nil && wrapped.Output != nil {
		content, exit = *wrapped.Output, wrapped.Metadata.ExitCode
	} else if m := exitLine.FindStringSubmatch(content); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			exit = &n
		}
	}
	return content, exit != nil && *exit != 0, exit, nil
}
