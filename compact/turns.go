package compact

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/strata-memory/strata"
)

// TurnsMessages writes stored turns as the OpenAI chat message list that
// Parse(OpenAI, ...) reads, so that a conversation strata holds (an
// imported Claude Code or Codex session, say) can be compacted as if an
// agent had sent it:
//   - system, user and assistant turns become messages of their role, with
//     the speaker's name where the turn has one;
//   - an assistant's tool calls become its tool_calls, their arguments the
//     exact text stored;
//   - each tool result becomes a tool message answering its call. A result
//     whose call is not earlier in the list (a session cut in two, a log
//     that lost the call) becomes a user message naming the call, so that
//     the list stays one a chat API accepts (its text is the result as
//     Turn.Text writes it);
//   - a turn with neither text, calls nor results (only thinking, say)
//     is left out.
func TurnsMessages(turns []strata.Turn) []byte {
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	type message struct {
		Role       string  `json:"role"`
		Name       string  `json:"name,omitempty"`
		Content    *string `json:"content"`
		ToolCalls  []call  `json:"tool_calls,omitempty"`
		ToolCallID string  `json:"tool_call_id,omitempty"`
	}
	text := func(s string) *string { return &s }
	called := map[string]bool{}
	out := make([]message, 0, len(turns))
	for _, t := range turns {
		for _, r := range t.ToolResults {
			if r.CallID != "" && called[r.CallID] {
				out = append(out, message{Role: "tool", Content: text(r.Content), ToolCallID: r.CallID})
				continue
			}
			orphan := strata.Turn{ToolResults: []strata.ToolResult{r}}
			out = append(out, message{Role: "user", Content: text(orphan.Text())})
		}
		if t.Content == "" && len(t.ToolCalls) == 0 {
			continue
		}
		m := message{Name: openAIName(t.Name)}
		switch t.Role {
		case strata.RoleSystem:
			m.Role = "system"
		case strata.RoleAssistant:
			m.Role = "assistant"
		default:
			m.Role = "user"
		}
		if t.Content != "" || len(t.ToolCalls) == 0 {
			m.Content = text(t.Content)
		}
		if m.Role == "assistant" {
			for _, c := range t.ToolCalls {
				var oc call
				oc.ID, oc.Type = c.ID, "function"
				oc.Function.Name, oc.Function.Arguments = c.Name, string(c.Arguments)
				if oc.Function.Arguments == "" {
					oc.Function.Arguments = "{}"
				}
				m.ToolCalls = append(m.ToolCalls, oc)
				if c.ID != "" {
					called[c.ID] = true
				}
			}
		} else if len(t.ToolCalls) > 0 {
			// Calls a turn of another role made (a log's oddity): kept as
			// its text, since only an assistant may call.
			calls := strata.Turn{Content: t.Content, ToolCalls: t.ToolCalls}
			m.Content = text(calls.Text())
		}
		out = append(out, m)
	}
	data, err := json.Marshal(out)
	if err != nil {
		// Only strings and slices of them: Marshal cannot fail.
		panic(err)
	}
	return data
}

// openAIName is name as OpenAI accepts it in a message (letters, digits,
// '_' and '-', at most 64), or "" when nothing of it is left.
func openAIName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		case r == ' ' || r == '.':
			b.WriteByte('_')
		}
		if b.Len() == 64 {
			break
		}
	}
	return b.String()
}

// FailedCalls returns the ids of the calls whose stored results the tool
// reported as failed (ToolResult.IsError), which TurnsMessages cannot
// write in OpenAI's form: pass them to Transcript.MarkFailed.
func FailedCalls(turns []strata.Turn) []string {
	var ids []string
	for _, t := range turns {
		for _, r := range t.ToolResults {
			if r.IsError && r.CallID != "" {
				ids = append(ids, r.CallID)
			}
		}
	}
	return ids
}

// MarkFailed marks the OpenAI tool messages that answer the calls ids as
// failed, as an Anthropic tool_result's is_error marks its result: what
// a caller knows from elsewhere (a stored turn, a wrapper's exit code)
// and the form has no field for. Pruning gives a failed result's digest
// a failing output's room and reads its worded failure lines as error
// lines; the checkpoint ranks its identifiers as failure evidence; a
// remembered turn keeps the flag. The list written back is unchanged.
// It does nothing in Anthropic's form, which says it itself.
func (t *Transcript) MarkFailed(ids ...string) {
	if t.Provider != OpenAI || len(ids) == 0 {
		return
	}
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	for _, m := range t.Messages {
		if m.role == "tool" && set[m.callID] {
			m.failed = true
		}
	}
}

// StoredList is the list to compact for a conversation whose turns strata
// stores (see TurnsMessages), given the conversation's compaction state:
// the summary pair of the state's checkpoint, then the messages after the
// state.TurnCount that checkpoint already covers. Compacting it and saving
// the new state (Compactor.CompactConversation) makes the next StoredList
// start after the new span. Turns are only ever appended, so the messages
// of earlier turns keep their places. EINVALID if the state counts more
// messages than the turns make.
func StoredList(turns []strata.Turn, st strata.CompactionState) ([]byte, error) {
	list := TurnsMessages(turns)
	if st.TurnCount == 0 && st.Checkpoint == "" {
		return list, nil
	}
	t, err := Parse(OpenAI, list)
	if err != nil {
		return nil, fmt.Errorf("stored turns as messages: %w", err)
	}
	if st.TurnCount > len(t.Messages) {
		return nil, strata.Errorf(strata.EINVALID, "the compaction state covers %d messages, but the stored turns make only %d (was the state written by compactions of another list?)", st.TurnCount, len(t.Messages))
	}
	rest := t.Messages[st.TurnCount:]
	var out []*Message
	if st.Checkpoint != "" {
		pair := summaryPair(OpenAI, st.Checkpoint)
		if len(rest) > 0 && rest[0].role == "assistant" {
			pair = pair[:1]
		}
		out = append(out, pair...)
	}
	return appendMessages(nil, append(out, rest...)), nil
}

// TextMessage returns a message of role ("user", "assistant", or for
// OpenAI "system") whose content is text, in the provider's shape: what a
// caller adds to a list (a summary, a notice) before writing it back.
func TextMessage(p Provider, role, text string) *Message { return textMessage(p, role, text) }

// ParseMessage reads one message in the provider's shape (a model's
// reply, say), with the errors Parse gives.
func ParseMessage(p Provider, raw []byte) (*Message, error) {
	return parseMessage(p, 0, raw)
}

// MessageTurns converts ms[from:] to strata turns as SpanTurns converts a
// span's messages (tool results take their tool's name from the calls
// anywhere in ms), each stamped at. A message's ExtID is prefix, its
// index in ms, "-", and the short hash of its role, text and tool call
// ids that SpanTurns uses: a client that sends its whole list again on
// each call gives each message the same ExtID every time, so appending
// them again adds nothing, while a message that changed at its place
// gets a new one.
func MessageTurns(ms []*Message, from int, prefix string, at time.Time) []strata.Turn {
	if from >= len(ms) {
		return nil
	}
	names := toolNames(ms)
	turns := make([]strata.Turn, 0, len(ms)-from)
	for i := from; i < len(ms); i++ {
		t := messageTurn(ms[i], names)
		t.Time = at
		t.ExtID = prefix + strconv.Itoa(i) + "-" + stableHash(ms[i])
		turns = append(turns, t)
	}
	return turns
}
