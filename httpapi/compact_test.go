package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-memory/strata/client"
	"github.com/strata-memory/strata/httpapi/wire"
)

func TestCompactStateless(t *testing.T) {
	ts := newServer(t, Options{})
	msgs := []map[string]any{{"role": "system", "content": "You are a build agent."}}
	for i := 0; i < 12; i++ {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			map[string]any{"role": "user", "content": fmt.Sprintf("Step %d: run the tests of package p%d and fix what fails.", i, i)},
			map[string]any{"role": "assistant", "content": "", "tool_calls": []map[string]any{{"id": id, "type": "function",
				"function": map[string]any{"name": "run", "arguments": fmt.Sprintf(`{"cmd":"go test ./p%d"}`, i)}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "content": strings.Repeat(fmt.Sprintf("line %d of the output\n", i), 600)},
			map[string]any{"role": "assistant", "content": fmt.Sprintf("Fixed p%d by correcting the off-by-one in parse.go.", i)})
	}
	req := map[string]any{"model": "gpt-x", "temperature": 0.2, "messages": msgs}

	// Layer 1 alone: old tool output trimmed or cleared, the rest kept.
	var out wire.CompactResult
	code, data := call(t, ts, "POST", "/v1/compact", map[string]any{"messages": req}, &out)
	if code != 200 {
		t.Fatalf("prune: %d %s", code, data)
	}
	if out.Stats.Compacted || out.Stats.ResultsTrimmed+out.Stats.ResultsCleared == 0 || out.Stats.TokensAfter >= out.Stats.TokensBefore {
		t.Fatalf("prune stats: %+v", out.Stats)
	}
	var back struct {
		Model    string            `json:"model"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(out.Messages, &back); err != nil || back.Model != "gpt-x" || len(back.Messages) != len(msgs) {
		t.Fatalf("pruned list: %v, model %q, %d messages", err, back.Model, len(back.Messages))
	}

	// Forced compaction with a small recent window: an extractive
	// checkpoint replaces the older span.
	code, data = call(t, ts, "POST", "/v1/compact", map[string]any{"messages": req, "force": true, "keep_recent_tokens": 2000}, &out)
	if code != 200 {
		t.Fatalf("compact: %d %s", code, data)
	}
	if !out.Stats.Compacted || out.Stats.MessagesCompacted == 0 || out.Stats.Mode != "extractive" || out.Stats.CompactionCount != 1 {
		t.Fatalf("compact stats: %+v", out.Stats)
	}
	if err := json.Unmarshal(out.Messages, &back); err != nil || len(back.Messages) >= len(msgs) ||
		!strings.Contains(string(out.Messages), "Previous conversation summary") {
		t.Fatalf("compacted list (%v): %.400s", err, out.Messages)
	}

	// A malformed list is a 400 naming the message and field.
	code, data = call(t, ts, "POST", "/v1/compact", `{"messages":[{"role":"user","content":"hi"},{"content":"no role"}]}`, nil)
	if code != 400 || !strings.Contains(string(data), "messages[1]") {
		t.Fatalf("bad list: %d %s", code, data)
	}
	code, data = call(t, ts, "POST", "/v1/compact", `{"provider":"gemini","messages":[]}`, nil)
	if code != 400 || !strings.Contains(string(data), "body.provider") {
		t.Fatalf("bad provider: %d %s", code, data)
	}
}

// TestCompactConversation compacts twice with a conversation: the second
// compaction counts from the first (its state was kept), and the compacted
// span was remembered as the conversation's turns.
func TestCompactConversation(t *testing.T) {
	ctx := context.Background()
	ts := newServer(t, Options{})
	c := client.New(ts.URL, "", ts.Client())
	var msgs []map[string]any
	for i := 0; i < 10; i++ {
		msgs = append(msgs,
			map[string]any{"role": "user", "content": fmt.Sprintf("Step %d: deploy service s%d to port %d.", i, i, 8000+i)},
			map[string]any{"role": "assistant", "content": fmt.Sprintf("Deployed s%d on port %d; health check passed.", i, 8000+i)})
	}
	raw, _ := json.Marshal(msgs)
	out, err := c.CompactConversation(ctx, "agent", client.CompactRequest{Messages: raw, Force: true, KeepRecentTokens: 60})
	if err != nil || !out.Stats.Compacted || out.Stats.CompactionCount != 1 {
		t.Fatalf("first compaction: %+v %v", out.Stats, err)
	}
	if conv, err := c.Conversation(ctx, "agent"); err != nil || conv.Turns != int64(out.Stats.MessagesCompacted) ||
		out.Stats.TurnsRemembered != out.Stats.MessagesCompacted || out.Stats.Conversation != "agent" {
		t.Fatalf("the compacted span as turns: %+v %v, want %d turns", conv, err, out.Stats.MessagesCompacted)
	}
	out, err = c.CompactConversation(ctx, "agent", client.CompactRequest{Messages: out.Messages, Force: true, KeepRecentTokens: 30, NoRemember: true})
	if err != nil || out.Stats.CompactionCount != 2 || !out.Stats.Update || out.Stats.TurnsRemembered != 0 {
		t.Fatalf("second compaction: %+v %v, want count 2 updating the kept checkpoint", out.Stats, err)
	}
	// Stateless compaction of the same list starts from nothing.
	out, err = c.Compact(ctx, client.CompactRequest{Messages: raw, Force: true, KeepRecentTokens: 60})
	if err != nil || out.Stats.CompactionCount != 1 {
		t.Fatalf("stateless: %+v %v", out.Stats, err)
	}
}
