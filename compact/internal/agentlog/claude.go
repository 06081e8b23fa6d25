package agentlog

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

type ccRecord struct {
	Type        string `json:"type"`
	IsSidechain bool   `json:"isSidechain"`
	IsMeta      bool   `json:"isMeta"`
	Message     *struct {
		ID      string          `json:"id"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

type ccBlock struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	ToolUseID string `json:"tool_use_id"`
}

type ccMessage struct {
	role   string
	blocks []json.RawMessage
	kinds  []ccBlock
	line   int // the first record's line
}

// ClaudeCode converts a Claude Code session file (name is for errors) to
// an Anthropic Messages body, {"messages": [...]}.
func ClaudeCode(r io.Reader, name string) ([]byte, Stats, error) {
	recs, err := readLines(r, name)
	if err != nil {
		return nil, Stats{}, err
	}
	st := Stats{Records: len(recs)}
	parsed, mainline, err := ccParse(recs, name)
	if err != nil {
		return nil, st, err
	}
	msgs, err := ccMessages(recs, parsed, mainline, name, &st)
	if err != nil {
		return nil, st, err
	}
	for _, m := range msgs {
		if m.role == "user" {
			m.resultsFirst()
		}
	}
	if err := ccCheck(msgs, name); err != nil {
		return nil, st, err
	}
	return ccBody(msgs, name, &st)
}

// ccParse decodes every record, and says whether the session has a main
// line (a user or assistant record off any sidechain).
func ccParse(recs []record, name string) (parsed []ccRecord, mainline bool, err error) {
	parsed = make([]ccRecord, len(recs))
	for i, rec := range recs {
		if err := json.Unmarshal(rec.raw, &parsed[i]); err != nil {
			return nil, false, fmt.Errorf("%s:%d: %w", name, rec.line, err)
		}
		p := parsed[i]
		if (p.Type == "user" || p.Type == "assistant") && !p.IsSidechain {
			mainline = true
		}
	}
	return parsed, mainline, nil
}

// ccMessages gathers the user and assistant records into messages,
// consecutive records of one role into one message; meta records, those
// without content, and sidechains when there is a main line are skipped
// (and counted in st).
func ccMessages(recs []record, parsed []ccRecord, mainline bool, name string, st *Stats) ([]*ccMessage, error) {
	var msgs []*ccMessage
	for i, p := range parsed {
		line := recs[i].line
		if p.Type != "user" && p.Type != "assistant" || p.IsMeta || p.IsSidechain && mainline {
			st.Skipped++
			continue
		}
		if p.Message == nil {
			return nil, fmt.Errorf("%s:%d: a %s record without a message", name, line, p.Type)
		}
		role := p.Message.Role
		if role == "" {
			role = p.Type
		}
		if role != "user" && role != "assistant" {
			return nil, fmt.Errorf("%s:%d: message.role %q is neither user nor assistant", name, line, role)
		}
		blocks, err := ccBlocks(p.Message.Content)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: message.content: %w", name, line, err)
		}
		if len(blocks) == 0 {
			st.Skipped++
			continue
		}
		var last *ccMessage
		if len(msgs) > 0 {
			last = msgs[len(msgs)-1]
		}
		if last == nil || last.role != role {
			last = &ccMessage{role: role, line: line}
			msgs = append(msgs, last)
		}
		for _, b := range blocks {
			var k ccBlock
			if err := json.Unmarshal(b, &k); err != nil || k.Type == "" {
				return nil, fmt.Errorf("%s:%d: message.content: a block without a type", name, line)
			}
			last.blocks = append(last.blocks, b)
			last.kinds = append(last.kinds, k)
		}
	}
	return msgs, nil
}

// resultsFirst puts a user message's tool results before its other
// blocks, as the API requires.
func (m *ccMessage) resultsFirst() {
	var res, other []json.RawMessage
	var rk, ok []ccBlock
	for i, k := range m.kinds {
		if k.Type == "tool_result" {
			res, rk = append(res, m.blocks[i]), append(rk, k)
		} else {
			other, ok = append(other, m.blocks[i]), append(ok, k)
		}
	}
	m.blocks, m.kinds = append(res, other...), append(rk, ok...)
}

// ccBody writes the messages as an Anthropic Messages body, counting
// them and their tool calls in st.
func ccBody(msgs []*ccMessage, name string, st *Stats) ([]byte, Stats, error) {
	out := struct {
		Messages []json.RawMessage `json:"messages"`
	}{}
	for _, m := range msgs {
		b, err := json.Marshal(struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		}{m.role, m.blocks})
		if err != nil {
			return nil, *st, fmt.Errorf("%s:%d: %w", name, m.line, err)
		}
		out.Messages = append(out.Messages, b)
		for _, k := range m.kinds {
			if k.Type == "tool_use" {
				st.ToolCalls++
			}
		}
	}
	st.Messages = len(msgs)
	body, err := json.Marshal(out)
	return body, *st, err
}

// ccBlocks returns a message's content as blocks: a string is one text
// block (none if it is blank).
func ccBlocks(content json.RawMessage) ([]json.RawMessage, error) {
	if len(content) == 0 || string(content) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(content, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return nil, nil
		}
		b, _ := json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{"text", s})
		return []json.RawMessage{b}, nil
	}
	var bs []json.RawMessage
	if err := json.Unmarshal(content, &bs); err != nil {
		return nil, fmt.Errorf("neither a string nor an array of blocks")
	}
	return bs, nil
}

// ccCheck checks that the messages form a valid request: starting with
// a user message, and every tool_use answered in the next message, which
// answers nothing else.
func ccCheck(msgs []*ccMessage, name string) error {
	if len(msgs) == 0 {
		return fmt.Errorf("%s: no user or assistant messages", name)
	}
	if msgs[0].role != "user" {
		return fmt.Errorf("%s:%d: the first message is the assistant's", name, msgs[0].line)
	}
	open := map[string]bool{}
	for i, m := range msgs {
		if m.role == "user" {
			for _, k := range m.kinds {
				if k.Type != "tool_result" {
					continue
				}
				if !open[k.ToolUseID] {
					return fmt.Errorf("%s:%d: tool_result %s answers no tool_use of the message before", name, m.line, k.ToolUseID)
				}
				delete(open, k.ToolUseID)
			}
			if len(open) > 0 {
				return fmt.Errorf("%s:%d: tool_use %s has no tool_result", name, msgs[i-1].line, anyKey(open))
			}
			continue
		}
		if len(open) > 0 {
			return fmt.Errorf("%s:%d: tool_use %s has no tool_result", name, msgs[i-1].line, anyKey(open))
		}
		for _, k := range m.kinds {
			if k.Type == "tool_use" {
				open[k.ID] = true
			}
		}
	}
	return nil
}

func anyKey(m map[string]bool) string {
	best := ""
	for k := range m {
		if best == "" || k < best {
			best = k
		}
	}
	return best
}
