package agentlog

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

type cxRecord struct {
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

type cxItem struct {
	Type         string          `json:"type"`
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"`
	Name         string          `json:"name"`
	Arguments    string          `json:"arguments"`
	Input        string          `json:"input"`
	Action       json.RawMessage `json:"action"`
	CallID       string          `json:"call_id"`
	Output       json.RawMessage `json:"output"`
	Instructions string          `json:"instructions"`
}

type oaCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaMessage struct {
	Role       string   `json:"role"`
	Content    *string  `json:"content"`
	ToolCalls  []oaCall `json:"tool_calls,omitempty"`
	ToolCallID string   `json:"tool_call_id,omitempty"`

	line int
}

// Codex converts a Codex CLI rollout file (name is for errors) to an
// OpenAI Chat Completions message array.
func Codex(r io.Reader, name string) ([]byte, Stats, error) {
	recs, err := readLines(r, name)
	if err != nil {
		return nil, Stats{}, err
	}
	cx := cxReader{name: name, st: Stats{Records: len(recs)}, open: map[string]int{}}
	for _, rec := range recs {
		if err := cx.record(rec); err != nil {
			return nil, cx.st, err
		}
	}
	if len(cx.open) > 0 {
		id := anyCall(cx.open)
		return nil, cx.st, fmt.Errorf("%s:%d: call %s has no output", name, cx.open[id], id)
	}
	if len(cx.msgs) == 0 {
		return nil, cx.st, fmt.Errorf("%s: no messages", name)
	}
	cx.st.Messages = len(cx.msgs)
	body, err := json.Marshal(cx.msgs)
	return body, cx.st, err
}

// cxReader is Codex's state as it reads a rollout record by record.
type cxReader struct {
	name string
	st   Stats
	msgs []*oaMessage
	open map[string]int // call id -> line of the call
}

// record reads one record of the rollout.
func (cx *cxReader) record(rec record) error {
	var c cxRecord
	if err := json.Unmarshal(rec.raw, &c); err != nil {
		return fmt.Errorf("%s:%d: %w", cx.name, rec.line, err)
	}
	var it cxItem
	if c.Type == "session_meta" || c.Type == "response_item" {
		if err := json.Unmarshal(c.Payload, &it); err != nil {
			return fmt.Errorf("%s:%d: payload: %w", cx.name, rec.line, err)
		}
	}
	switch {
	case c.Type == "session_meta":
		if strings.TrimSpace(it.Instructions) == "" {
			cx.st.Skipped++
			return nil
		}
		cx.msgs = append(cx.msgs, &oaMessage{Role: "system", Content: &it.Instructions, line: rec.line})
	case c.Type != "response_item":
		cx.st.Skipped++
	case it.Type == "message":
		return cx.message(it, rec.line)
	case it.Type == "function_call" || it.Type == "custom_tool_call" || it.Type == "local_shell_call":
		return cx.call(it, rec.line)
	case it.Type == "function_call_output" || it.Type == "custom_tool_call_output" || it.Type == "local_shell_call_output":
		return cx.output(it, rec.line)
	default:
		cx.st.Skipped++
	}
	return nil
}

// message reads a chat message; none may come while a call awaits its
// output.
func (cx *cxReader) message(it cxItem, line int) error {
	text, err := cxText(it.Content)
	if err != nil {
		return fmt.Errorf("%s:%d: payload.content: %w", cx.name, line, err)
	}
	switch it.Role {
	case "user", "assistant", "system", "developer":
	default:
		return fmt.Errorf("%s:%d: payload.role %q is not a chat role", cx.name, line, it.Role)
	}
	if len(cx.open) > 0 {
		return fmt.Errorf("%s:%d: a %s message before the output of call %s", cx.name, line, it.Role, anyCall(cx.open))
	}
	cx.msgs = append(cx.msgs, &oaMessage{Role: it.Role, Content: &text, line: line})
	return nil
}

// call reads a tool call as an OpenAI function call of an assistant
// message: it joins the assistant message it follows, unless that
// message's calls were already answered.
func (cx *cxReader) call(it cxItem, line int) error {
	if it.CallID == "" {
		return fmt.Errorf("%s:%d: payload.call_id: missing", cx.name, line)
	}
	call := oaCall{ID: it.CallID, Type: "function"}
	call.Function.Name, call.Function.Arguments = it.Name, it.Arguments
	switch it.Type {
	case "custom_tool_call":
		b, _ := json.Marshal(map[string]string{"input": it.Input})
		call.Function.Arguments = string(b)
	case "local_shell_call":
		call.Function.Name, call.Function.Arguments = "local_shell", string(it.Action)
	}
	var last *oaMessage
	if len(cx.msgs) > 0 {
		last = cx.msgs[len(cx.msgs)-1]
	}
	if last == nil || last.Role != "assistant" || len(last.ToolCalls) > 0 && len(cx.open) == 0 {
		last = &oaMessage{Role: "assistant", line: line}
		cx.msgs = append(cx.msgs, last)
	}
	last.ToolCalls = append(last.ToolCalls, call)
	cx.open[it.CallID] = line
	cx.st.ToolCalls++
	return nil
}

// output reads a pending call's output as a tool message.
func (cx *cxReader) output(it cxItem, line int) error {
	if _, ok := cx.open[it.CallID]; !ok {
		return fmt.Errorf("%s:%d: output of call %q, which is not pending", cx.name, line, it.CallID)
	}
	delete(cx.open, it.CallID)
	text, err := cxOutput(it.Output)
	if err != nil {
		return fmt.Errorf("%s:%d: payload.output: %w", cx.name, line, err)
	}
	cx.msgs = append(cx.msgs, &oaMessage{Role: "tool", Content: &text, ToolCallID: it.CallID, line: line})
	return nil
}

// cxText joins the text parts of a message's content.
func cxText(content json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(content, &parts); err != nil {
		return "", fmt.Errorf("neither a string nor an array of parts")
	}
	var texts []string
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		} else if p.Type != "" {
			texts = append(texts, "["+p.Type+"]")
		}
	}
	return strings.Join(texts, "\n"), nil
}

// cxOutput returns a call's output as text: a string as it is, unless it
// is the older JSON wrapper {"output", "metadata"}; an object's "content".
func cxOutput(out json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(out, &s); err != nil {
		var obj struct {
			Content string `json:"content"`
		}
		if err := json.Unmarshal(out, &obj); err != nil {
			return "", fmt.Errorf("neither a string nor an object with content")
		}
		return obj.Content, nil
	}
	var w struct {
		Output   *string `json:"output"`
		Metadata struct {
			ExitCode *int `json:"exit_code"`
		} `json:"metadata"`
	}
	if strings.HasPrefix(strings.TrimSpace(s), "{") && json.Unmarshal([]byte(s), &w) == nil && w.Output != nil {
		if w.Metadata.ExitCode != nil {
			return fmt.Sprintf("Exit code: %d\nOutput:\n%s", *w.Metadata.ExitCode, *w.Output), nil
		}
		return *w.Output, nil
	}
	return s, nil
}

func anyCall(open map[string]int) string {
	best := ""
	for k := range open {
		if best == "" || k < best {
			best = k
		}
	}
	return best
}
