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
	st := Stats{Records: len(recs)}
	var msgs []*oaMessage
	open := map[string]int{} // call id -> line of the call
	str := func(s string) *string { return &s }
	for _, rec := range recs {
		var c cxRecord
		if err := json.Unmarshal(rec.raw, &c); err != nil {
			return nil, st, fmt.Errorf("%s:%d: %w", name, rec.line, err)
		}
		var it cxItem
		if c.Type == "session_meta" || c.Type == "response_item" {
			if err := json.Unmarshal(c.Payload, &it); err != nil {
				return nil, st, fmt.Errorf("%s:%d: payload: %w", name, rec.line, err)
			}
		}
		var last *oaMessage
		if len(msgs) > 0 {
			last = msgs[len(msgs)-1]
		}
		switch {
		case c.Type == "session_meta":
			if strings.TrimSpace(it.Instructions) == "" {
				st.Skipped++
				continue
			}
			msgs = append(msgs, &oaMessage{Role: "system", Content: str(it.Instructions), line: rec.line})
		case c.Type != "response_item":
			st.Skipped++
		case it.Type == "message":
			text, err := cxText(it.Content)
			if err != nil {
				return nil, st, fmt.Errorf("%s:%d: payload.content: %w", name, rec.line, err)
			}
			switch it.Role {
			case "user", "assistant", "system", "developer":
			default:
				return nil, st, fmt.Errorf("%s:%d: payload.role %q is not a chat role", name, rec.line, it.Role)
			}
			if len(open) > 0 {
				return nil, st, fmt.Errorf("%s:%d: a %s message before the output of call %s", name, rec.line, it.Role, anyCall(open))
			}
			msgs = append(msgs, &oaMessage{Role: it.Role, Content: str(text), line: rec.line})
		case it.Type == "function_call" || it.Type == "custom_tool_call" || it.Type == "local_shell_call":
			if it.CallID == "" {
				return nil, st, fmt.Errorf("%s:%d: payload.call_id: missing", name, rec.line)
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
			// Calls join the assistant message they follow, unless its
			// calls were already answered.
			if last == nil || last.Role != "assistant" || len(last.ToolCalls) > 0 && len(open) == 0 {
				last = &oaMessage{Role: "assistant", line: rec.line}
				msgs = append(msgs, last)
			}
			last.ToolCalls = append(last.ToolCalls, call)
			open[it.CallID] = rec.line
			st.ToolCalls++
		case it.Type == "function_call_output" || it.Type == "custom_tool_call_output" || it.Type == "local_shell_call_output":
			if _, ok := open[it.CallID]; !ok {
				return nil, st, fmt.Errorf("%s:%d: output of call %q, which is not pending", name, rec.line, it.CallID)
			}
			delete(open, it.CallID)
			text, err := cxOutput(it.Output)
			if err != nil {
				return nil, st, fmt.Errorf("%s:%d: payload.output: %w", name, rec.line, err)
			}
			msgs = append(msgs, &oaMessage{Role: "tool", Content: str(text), ToolCallID: it.CallID, line: rec.line})
		default:
			st.Skipped++
		}
	}
	if len(open) > 0 {
		id := anyCall(open)
		return nil, st, fmt.Errorf("%s:%d: call %s has no output", name, open[id], id)
	}
	if len(msgs) == 0 {
		return nil, st, fmt.Errorf("%s: no messages", name)
	}
	st.Messages = len(msgs)
	body, err := json.Marshal(msgs)
	return body, st, err
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
