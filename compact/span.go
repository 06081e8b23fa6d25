package compact

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact/checkpoint"
)

// Span is the part of a message list a compaction takes out: the messages
// before the cut, after the system prompt and any earlier summary pair.
type Span struct {
	Provider Provider
	// Number is the compaction's number: State.CompactionCount + 1.
	Number int
	// FirstTurn is how many messages were handed to memory before this
	// span (State.TurnCount).
	FirstTurn int
	// Messages are the span's messages as the caller passed them, before
	// this call's pruning.
	Messages []*Message
	// Entries are Messages flattened for a checkpoint writer.
	Entries []checkpoint.Entry

	names map[string]string // tool call id -> tool name, over the whole list
}

// JSON returns the span's messages as a JSON array in the provider's
// shape, each message as it was read.
func (s Span) JSON() json.RawMessage {
	return appendMessages(nil, s.Messages)
}

// toolNames maps the id of every tool call in ms to its tool's name.
func toolNames(ms []*Message) map[string]string {
	names := map[string]string{}
	for _, m := range ms {
		for _, c := range m.calls {
			names[c.id] = c.name
		}
		if m.role == "assistant" && m.content.form == formParts {
			for _, p := range m.content.parts {
				if p.typ == "tool_use" {
					names[p.id] = p.name
				}
			}
		}
	}
	return names
}

// entries flattens messages for a checkpoint writer: one entry per text,
// tool call, tool result and thinking block. Images and parts strata does
// not know become a short marker such as "[image]"; redacted thinking is
// left out (it cannot be read).
func entries(ms []*Message, names map[string]string) []checkpoint.Entry {
	var out []checkpoint.Entry
	for _, m := range ms {
		role := entryRole(m.role)
		if m.role == "tool" {
			name := names[m.callID]
			if name == "" {
				name = m.name
			}
			out = append(out, checkpoint.Entry{Role: "tool", Kind: "tool_result", Name: name, CallID: m.callID, Text: m.content.joined(true), IsError: m.failed})
			continue
		}
		switch m.content.form {
		case formString:
			if m.content.text != "" {
				out = append(out, checkpoint.Entry{Role: role, Kind: "text", Text: m.content.text})
			}
		case formParts:
			for _, p := range m.content.parts {
				switch p.typ {
				case "text", "refusal":
					if p.text != "" {
						out = append(out, checkpoint.Entry{Role: role, Kind: "text", Text: p.text})
					}
				case "thinking":
					if p.text != "" {
						out = append(out, checkpoint.Entry{Role: role, Kind: "thinking", Text: p.text})
					}
				case "redacted_thinking":
				case "tool_use":
					out = append(out, checkpoint.Entry{Role: role, Kind: "tool_call", Name: p.name, CallID: p.id, Text: string(p.input)})
				case "tool_result":
					out = append(out, checkpoint.Entry{Role: "tool", Kind: "tool_result", Name: names[p.id], CallID: p.id,
						Text: p.result.joined(true), IsError: p.isError})
				default:
					out = append(out, checkpoint.Entry{Role: role, Kind: "text", Text: "[" + p.typ + "]"})
				}
			}
		}
		for _, c := range m.calls {
			out = append(out, checkpoint.Entry{Role: role, Kind: "tool_call", Name: c.name, CallID: c.id, Text: c.args})
		}
	}
	return out
}

func entryRole(role string) string {
	if role == "developer" {
		return "system"
	}
	return role
}

// SpanTurns converts a span's messages to strata turns, to append to the
// conversation's memory: role (an Anthropic user message of tool results
// is a tool turn; developer is system), name, text content, tool calls and
// tool results as structure, and Time from clock (called once; nil is
// time.Now). A message with parts a Turn has no field for (images,
// thinking, unknown blocks) keeps its exact JSON in Metadata["message"],
// so nothing is lost; Metadata["compaction"] is the span's Number.
//
// ExtIDs are "compact-<n>-<hash>": n counts messages handed to memory
// (span.FirstTurn + position + 1) and hash is a short hash of the role,
// text and tool call ids, which pruning does not change. A retried
// compaction (same state, same list) derives the same ids, so appending
// its turns again adds nothing.
func SpanTurns(span Span, clock func() time.Time) []strata.Turn {
	if clock == nil {
		clock = time.Now
	}
	at := clock()
	names := span.names
	if names == nil {
		names = toolNames(span.Messages)
	}
	turns := make([]strata.Turn, len(span.Messages))
	for i, m := range span.Messages {
		t := messageTurn(m, names)
		t.Time = at
		t.ExtID = "compact-" + strconv.Itoa(span.FirstTurn+i+1) + "-" + stableHash(m)
		if t.Metadata == nil {
			t.Metadata = map[string]any{}
		}
		t.Metadata["compaction"] = span.Number
		turns[i] = t
	}
	return turns
}

// messageTurn converts one message to a turn, without ExtID and Time.
func messageTurn(m *Message, names map[string]string) strata.Turn {
	t := strata.Turn{Name: m.name}
	switch {
	case m.role == "system" || m.role == "developer":
		t.Role = strata.RoleSystem
	case m.role == "assistant":
		t.Role = strata.RoleAssistant
	case m.toolResult:
		t.Role = strata.RoleTool
	default:
		t.Role = strata.RoleUser
	}
	if m.role == "tool" {
		name := names[m.callID]
		if name == "" {
			name = m.name
		}
		t.ToolResults = []strata.ToolResult{{CallID: m.callID, Name: name, Content: m.content.joined(true), IsError: m.failed}}
		if !m.content.allText() {
			t.Metadata = map[string]any{"message": m.JSON()}
		}
		return t
	}
	var text []string
	opaque := false
	switch m.content.form {
	case formString:
		text = append(text, m.content.text)
	case formParts:
		for _, p := range m.content.parts {
			switch p.typ {
			case "text", "refusal":
				text = append(text, p.text)
			case "tool_use":
				var args json.RawMessage
				if len(p.input) > 0 {
					args = json.RawMessage(p.input)
				}
				t.ToolCalls = append(t.ToolCalls, strata.ToolCall{ID: p.id, Name: p.name, Arguments: args})
			case "tool_result":
				t.ToolResults = append(t.ToolResults, strata.ToolResult{CallID: p.id, Name: names[p.id],
					Content: p.result.joined(true), IsError: p.isError})
				if !p.result.allText() {
					opaque = true
				}
			default:
				if p.typ != "thinking" && p.typ != "redacted_thinking" {
					text = append(text, "["+p.typ+"]")
				}
				opaque = true
			}
		}
	}
	for _, c := range m.calls {
		t.ToolCalls = append(t.ToolCalls, strata.ToolCall{ID: c.id, Name: c.name, Arguments: callArguments(c)})
	}
	t.Content = strings.Join(text, "\n")
	if opaque {
		t.Metadata = map[string]any{"message": m.JSON()}
	}
	return t
}

// callArguments returns an OpenAI call's arguments as the exact text the
// model wrote, JSON or not (a truncated output stays as it is).
func callArguments(c toolCall) json.RawMessage {
	if c.args == "" {
		return nil
	}
	return json.RawMessage(c.args)
}

// stableHash is a short hash of what pruning never changes in m: its
// role, its text, and the ids of the tool calls it makes or answers.
func stableHash(m *Message) string {
	h := sha256.New()
	h.Write([]byte(m.role))
	h.Write([]byte{0})
	if !m.toolResult {
		h.Write([]byte(m.content.joined(true)))
	} else if m.content.form == formParts {
		for _, p := range m.content.parts {
			if p.typ != "tool_result" {
				h.Write([]byte(p.text))
			}
		}
	}
	for _, ids := range [][]string{m.callIDs(nil), m.resultIDs(nil)} {
		for _, id := range ids {
			h.Write([]byte{0})
			h.Write([]byte(id))
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// Render formats a transcript as plain text for reading (reflection,
// logs): the summary (a checkpoint) first, as "[Previous context
// summary]" and its text, then the last `last` messages (all if last <= 0) as "User: ...",
// "Assistant: ...", "Tool: ..." or "System: ...", separated by blank
// lines; tool calls and results are shown as in strata.Turn.Text. A
// summary pair at the head of the list is not repeated: with summary ""
// its checkpoint is used.
func Render(t *Transcript, summary string, last int) string {
	h := findHead(t)
	if summary == "" {
		summary = h.previous
	}
	ms := append(append([]*Message(nil), t.Messages[:h.lead]...), t.Messages[h.end:]...)
	if last > 0 && len(ms) > last {
		ms = ms[len(ms)-last:]
	}
	var parts []string
	if summary != "" {
		parts = append(parts, "[Previous context summary]\n"+summary+"\n")
	}
	names := toolNames(t.Messages)
	for _, m := range ms {
		tn := messageTurn(m, names)
		label := "User"
		switch tn.Role {
		case strata.RoleAssistant:
			label = "Assistant"
		case strata.RoleTool:
			label = "Tool"
		case strata.RoleSystem:
			label = "System"
		}
		parts = append(parts, label+": "+tn.Text())
	}
	return strings.Join(parts, "\n\n")
}
