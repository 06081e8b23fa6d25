package fieldgen_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/internal/fieldgen"
	"github.com/strata-memory/strata/tiktoken"
)

func TestDeterministic(t *testing.T) {
	a := fieldgen.Generate(7, fieldgen.Options{ToolCalls: 30})
	b := fieldgen.Generate(7, fieldgen.Options{ToolCalls: 30})
	if !bytes.Equal(a.OpenAI(), b.OpenAI()) || !bytes.Equal(a.Anthropic(), b.Anthropic()) {
		t.Fatal("the same seed gave two transcripts")
	}
	c := fieldgen.Generate(8, fieldgen.Options{ToolCalls: 30})
	if bytes.Equal(a.OpenAI(), c.OpenAI()) {
		t.Fatal("two seeds gave the same transcript")
	}
}

func TestToolCallsAndUsers(t *testing.T) {
	for _, users := range []string{"rare", "dense"} {
		tr := fieldgen.Generate(3, fieldgen.Options{ToolCalls: 57, Users: users})
		if got := tr.ToolCalls(); got != 57 {
			t.Errorf("%s: %d tool calls, want 57", users, got)
		}
		if tr.Users != users {
			t.Errorf("users %q, want %q", tr.Users, users)
		}
		// A rare user speaks once per task, a dense one between rounds.
		userMsgs, tasks := 0, 0
		for i, m := range tr.Messages {
			if m.Role != "user" {
				continue
			}
			userMsgs++
			if i == 0 || tr.Messages[i-1].Role == "assistant" && len(tr.Messages[i-1].Calls) == 0 && !isInterjection(m.Text) {
				tasks++
			}
		}
		if users == "dense" && userMsgs < 2*tasks {
			t.Errorf("dense: %d user messages for %d tasks", userMsgs, tasks)
		}
	}
}

func isInterjection(s string) bool { return len(s) < 160 && !strings.Contains(s, "?") }

// TestValidLists checks both forms with package compact's parser and the
// pairing rules providers enforce: every tool call answered right after
// it, by id; Anthropic roles alternating from a user message.
func TestValidLists(t *testing.T) {
	tr := fieldgen.Generate(11, fieldgen.Options{ToolCalls: 80})

	if _, err := compact.Parse(compact.OpenAI, tr.OpenAI()); err != nil {
		t.Fatalf("OpenAI form does not parse: %v", err)
	}
	var oa []struct {
		Role      string `json:"role"`
		ToolCalls []struct {
			ID string `json:"id"`
		} `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
	}
	if err := json.Unmarshal(tr.OpenAI(), &oa); err != nil {
		t.Fatal(err)
	}
	var open []string
	for i, m := range oa {
		if m.Role == "tool" {
			if len(open) == 0 || open[0] != m.ToolCallID {
				t.Fatalf("message %d: tool result %q does not answer the next open call %v", i, m.ToolCallID, open)
			}
			open = open[1:]
			continue
		}
		if len(open) > 0 {
			t.Fatalf("message %d (%s): calls %v unanswered", i, m.Role, open)
		}
		for _, c := range m.ToolCalls {
			open = append(open, c.ID)
		}
	}

	if _, err := compact.Parse(compact.Anthropic, tr.Anthropic()); err != nil {
		t.Fatalf("Anthropic form does not parse: %v", err)
	}
	var an struct {
		System   string `json:"system"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ID        string `json:"id"`
				ToolUseID string `json:"tool_use_id"`
				Signature string `json:"signature"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(tr.Anthropic(), &an); err != nil {
		t.Fatal(err)
	}
	if an.System == "" {
		t.Error("no system prompt")
	}
	var calls []string
	for i, m := range an.Messages {
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if m.Role != want {
			t.Fatalf("message %d is %s, want %s", i, m.Role, want)
		}
		var results []string
		for _, b := range m.Content {
			switch b.Type {
			case "tool_use":
				calls = append(calls, b.ID)
			case "tool_result":
				results = append(results, b.ToolUseID)
			case "thinking":
				if b.Signature == "" {
					t.Fatalf("message %d: thinking without a signature", i)
				}
			}
		}
		if m.Role == "user" {
			if strings.Join(results, ",") != strings.Join(calls, ",") {
				t.Fatalf("message %d answers %v, want %v", i, results, calls)
			}
			calls = nil
		}
	}
}

// TestSizes checks that the presets have the sizes the package documents,
// in o200k tokens of the OpenAI form.
func TestSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("counts about 3M tokens")
	}
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		o        fieldgen.Options
		min, max int
	}{
		{"standard", fieldgen.Standard(), 300_000, 460_000},
		{"long", fieldgen.Long(), 1_000_000, 1_400_000},
	} {
		for _, seed := range []uint64{1, 2} {
			tr := fieldgen.Generate(seed, c.o)
			n := tok.Count(string(tr.OpenAI()))
			msgs := 1
			for _, m := range tr.Messages {
				msgs += max(1, len(m.Results))
			}
			t.Logf("%s seed %d (%s users): %d messages, %d tool calls, %d tokens", c.name, seed, tr.Users, msgs, tr.ToolCalls(), n)
			if n < c.min || n > c.max {
				t.Errorf("%s seed %d: %d tokens, want %d to %d", c.name, seed, n, c.min, c.max)
			}
		}
	}
}
