package compact_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
)

// flat is what a list of turns says, in order, independent of how tool
// results are grouped into turns.
type flat struct {
	Says    []string // role: content, and role: call id name args
	Results []string // call id: content
}

func flatten(turns []strata.Turn) flat {
	var f flat
	for _, t := range turns {
		for _, r := range t.ToolResults {
			f.Results = append(f.Results, r.CallID+": "+r.Content)
		}
		if t.Role == strata.RoleTool {
			continue
		}
		f.Says = append(f.Says, string(t.Role)+": "+t.Content)
		for _, c := range t.ToolCalls {
			f.Says = append(f.Says, fmt.Sprintf("%s: call %s %s %s", t.Role, c.ID, c.Name, c.Arguments))
		}
	}
	return f
}

// TestTurnsMessagesRoundTrip: stored turns written as messages and read
// back as turns (what compact remembers of a span) say the same things,
// with every tool result answering its call.
func TestTurnsMessagesRoundTrip(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var turns []strata.Turn
		text := rapid.StringMatching(`[a-zA-Z0-9 ./:"\\\n\x{00e9}\x{4e2d}-]{1,40}`)
		calls := 0
		if rapid.Bool().Draw(rt, "system") {
			turns = append(turns, strata.Turn{Role: strata.RoleSystem, Content: text.Draw(rt, "sys")})
		}
		for range rapid.IntRange(1, 6).Draw(rt, "rounds") {
			turns = append(turns, strata.Turn{Role: strata.RoleUser, Content: text.Draw(rt, "user")})
			a := strata.Turn{Role: strata.RoleAssistant}
			if rapid.Bool().Draw(rt, "says") {
				a.Content = text.Draw(rt, "assistant")
			}
			n := rapid.IntRange(0, 3).Draw(rt, "calls")
			if n == 0 && a.Content == "" {
				a.Content = "done"
			}
			res := strata.Turn{Role: strata.RoleTool}
			for range n {
				calls++
				id := fmt.Sprintf("call_%d", calls)
				args, _ := json.Marshal(map[string]string{"cmd": text.Draw(rt, "arg")})
				a.ToolCalls = append(a.ToolCalls, strata.ToolCall{ID: id, Name: "Bash", Arguments: args})
				res.ToolResults = append(res.ToolResults, strata.ToolResult{CallID: id, Name: "Bash", Content: text.Draw(rt, "output")})
			}
			turns = append(turns, a)
			if n > 0 {
				turns = append(turns, res)
			}
		}
		list := compact.TurnsMessages(turns)
		tr, err := compact.Parse(compact.OpenAI, list)
		if err != nil {
			rt.Fatalf("the list does not parse: %v\n%s", err, list)
		}
		back := compact.SpanTurns(compact.Span{Provider: compact.OpenAI, Messages: tr.Messages}, nil)
		if got, want := flatten(back), flatten(turns); !slices.Equal(got.Says, want.Says) || !slices.Equal(got.Results, want.Results) {
			rt.Fatalf("round trip:\ngot  %q\nwant %q", got, want)
		}
		checkPairs(rt, list)
	})
}

// checkPairs fails unless every tool message answers a call made by an
// earlier assistant message.
func checkPairs(t interface{ Fatalf(string, ...any) }, list []byte) {
	var ms []struct {
		Role      string `json:"role"`
		ToolCalls []struct {
			ID string `json:"id"`
		} `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
	}
	if err := json.Unmarshal(list, &ms); err != nil {
		t.Fatalf("%v", err)
	}
	called := map[string]bool{}
	for i, m := range ms {
		for _, c := range m.ToolCalls {
			called[c.ID] = true
		}
		if m.Role == "tool" && !called[m.ToolCallID] {
			t.Fatalf("message %d answers call %q that no earlier message made", i, m.ToolCallID)
		}
	}
}

// TestTurnsMessagesOddTurns: a result without its call becomes a user
// message naming it, a turn with nothing to say is left out, and names
// become what a chat API accepts.
func TestTurnsMessagesOddTurns(t *testing.T) {
	turns := []strata.Turn{
		{Role: strata.RoleTool, ToolResults: []strata.ToolResult{{CallID: "toolu_gone", Name: "Read", Content: "package main", IsError: true}}},
		{Role: strata.RoleAssistant, Metadata: map[string]any{"thinking": "hmm"}},
		{Role: strata.RoleUser, Name: "Ana M.", Content: "hi"},
	}
	list := compact.TurnsMessages(turns)
	checkPairs(t, list)
	var ms []map[string]any
	json.Unmarshal(list, &ms)
	if len(ms) != 2 {
		t.Fatalf("%d messages, want 2: %s", len(ms), list)
	}
	if want := "[tool result Read id=toolu_gone error] package main"; ms[0]["role"] != "user" || ms[0]["content"] != want {
		t.Fatalf("orphan result: %v, want a user message %q", ms[0], want)
	}
	if ms[1]["name"] != "Ana_M_" {
		t.Fatalf("name %q", ms[1]["name"])
	}
	// A call by a turn that is not the assistant's stays as its text.
	odd := compact.TurnsMessages([]strata.Turn{{Role: strata.RoleUser, Content: "run it",
		ToolCalls: []strata.ToolCall{{ID: "c1", Name: "Bash", Arguments: json.RawMessage(`{"cmd":"ls"}`)}}}})
	ms = nil
	json.Unmarshal(odd, &ms)
	if want := "run it\n[tool call Bash id=c1] {\"cmd\":\"ls\"}"; len(ms) != 1 || ms[0]["role"] != "user" || ms[0]["content"] != want || ms[0]["tool_calls"] != nil {
		t.Fatalf("a user's tool call: %s, want one user message %q", odd, want)
	}
}

// TestStoredList: the list starts after what the state's checkpoint
// covers, led by that checkpoint; a state covering more than the turns
// make is refused.
func TestStoredList(t *testing.T) {
	var turns []strata.Turn
	for i := range 6 {
		turns = append(turns, strata.Turn{Role: strata.RoleUser, Content: fmt.Sprintf("question %d", i)},
			strata.Turn{Role: strata.RoleAssistant, Content: fmt.Sprintf("answer %d", i)})
	}
	all := compact.TurnsMessages(turns)
	if got, err := compact.StoredList(turns, strata.CompactionState{}); err != nil || string(got) != string(all) {
		t.Fatalf("no state: %s, %v", got, err)
	}
	got, err := compact.StoredList(turns, strata.CompactionState{TurnCount: 8, Checkpoint: "## Goal\nship it", CompactionCount: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ms []struct{ Role, Content string }
	json.Unmarshal(got, &ms)
	if len(ms) != 6 || !strings.HasPrefix(ms[0].Content, compact.SummaryPrefix) || !strings.Contains(ms[0].Content, "ship it") ||
		ms[1].Content != compact.Acknowledgement || ms[2].Content != "question 4" || ms[5].Content != "answer 5" {
		t.Fatalf("list after the checkpoint: %+v", ms)
	}
	if _, err := compact.StoredList(turns, strata.CompactionState{TurnCount: 13, Checkpoint: "x"}); strata.ErrorCode(err) != strata.EINVALID {
		t.Fatalf("a state past the turns: %v", err)
	}
}
