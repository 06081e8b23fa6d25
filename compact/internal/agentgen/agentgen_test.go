package agentgen_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact/checkpoint"
	"github.com/strata-memory/strata/compact/internal/agentgen"
)

func TestDeterministic(t *testing.T) {
	a := agentgen.Generate(42, agentgen.Options{})
	b := agentgen.Generate(42, agentgen.Options{})
	if !bytes.Equal(a.OpenAI(), b.OpenAI()) || !bytes.Equal(a.Anthropic(), b.Anthropic()) {
		t.Fatal("the same seed gave two transcripts")
	}
	c := agentgen.Generate(43, agentgen.Options{})
	if bytes.Equal(a.OpenAI(), c.OpenAI()) {
		t.Fatal("two seeds gave the same transcript")
	}
}

func TestOptions(t *testing.T) {
	for _, lang := range []string{"go", "python", "typescript"} {
		tr := agentgen.Generate(1, agentgen.Options{Lang: lang, Tasks: 2, NoThinking: true})
		if tr.Lang != lang {
			t.Errorf("lang %q, want %q", tr.Lang, lang)
		}
		users := 0
		for _, m := range tr.Messages {
			if m.Thinking != "" {
				t.Fatalf("%s: thinking with NoThinking", lang)
			}
			if m.Role == "user" {
				users++
			}
		}
		if users != 2 {
			t.Errorf("%s: %d user requests, want 2", lang, users)
		}
	}
	langs := map[string]bool{}
	for seed := int64(0); seed < 30; seed++ {
		langs[agentgen.Generate(seed, agentgen.Options{Tasks: 1}).Lang] = true
	}
	if len(langs) != 3 {
		t.Errorf("the seed chose only %v", langs)
	}
}

// TestTruth checks that every planted identifier occurs in its
// transcript, and that the seeds plant every kind.
func TestTruth(t *testing.T) {
	kinds := map[string]int{}
	for seed := int64(1); seed <= 20; seed++ {
		tr := agentgen.Generate(seed, agentgen.Options{})
		entries := tr.Entries()
		in := agentgen.TruthIn(tr.Truth, entries)
		if len(in) != len(tr.Truth) {
			var missing []string
			for _, id := range tr.Truth {
				found := false
				for _, x := range in {
					found = found || x == id
				}
				if !found {
					missing = append(missing, id.Kind+": "+id.Text)
				}
			}
			t.Fatalf("seed %d: planted but absent: %q", seed, missing)
		}
		for _, id := range tr.Truth {
			kinds[id.Kind]++
		}
		if got := agentgen.TruthIn(tr.Truth, entries[:1]); len(got) >= len(tr.Truth) {
			t.Fatalf("seed %d: the first message holds all %d identifiers", seed, len(got))
		}
	}
	for _, k := range checkpoint.Kinds {
		if kinds[k] == 0 {
			t.Errorf("no %s planted in 20 seeds (%v)", k, kinds)
		}
	}
}

func TestContains(t *testing.T) {
	tests := []struct {
		text, id string
		want     bool
	}{
		{"see internal/billing/invoice.go", "invoice.go", true},
		{"took 130s", "30s", false},
		{"took 1.30s", "30s", false},
		{"took 30s.", "30s", true},
		{"TestLoginX", "TestLogin", false},
		{"`TestLogin`", "testlogin", true},
		{"port :8080", "8080", true},
		{"#4123", "#412", false},
	}
	for _, tt := range tests {
		if got := agentgen.Contains(tt.text, tt.id); got != tt.want {
			t.Errorf("Contains(%q, %q) = %v", tt.text, tt.id, got)
		}
	}
}

// TestOpenAI checks the Chat Completions shape: every tool call is
// answered by exactly one tool message, right after its assistant message.
func TestOpenAI(t *testing.T) {
	for seed := int64(1); seed <= 10; seed++ {
		var msgs []struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		}
		if err := json.Unmarshal(agentgen.Generate(seed, agentgen.Options{}).OpenAI(), &msgs); err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 || msgs[0].Role != "user" {
			t.Fatalf("seed %d: first message %+v", seed, msgs[0])
		}
		var pending []string
		seen := map[string]bool{}
		for i, m := range msgs {
			switch m.Role {
			case "tool":
				if len(pending) == 0 || pending[0] != m.ToolCallID || m.Content == nil {
					t.Fatalf("seed %d: message %d answers %q, pending %q", seed, i, m.ToolCallID, pending)
				}
				pending = pending[1:]
			case "assistant", "user":
				if len(pending) > 0 {
					t.Fatalf("seed %d: message %d comes before the answers to %q", seed, i, pending)
				}
				for _, c := range m.ToolCalls {
					if c.Type != "function" || c.Function.Name == "" || !json.Valid([]byte(c.Function.Arguments)) || seen[c.ID] {
						t.Fatalf("seed %d: bad call %+v", seed, c)
					}
					seen[c.ID] = true
					pending = append(pending, c.ID)
				}
				if m.Role == "assistant" && m.Content == nil && len(m.ToolCalls) == 0 {
					t.Fatalf("seed %d: empty assistant message %d", seed, i)
				}
			default:
				t.Fatalf("seed %d: role %q", seed, m.Role)
			}
		}
		if len(pending) > 0 || msgs[len(msgs)-1].Role != "assistant" {
			t.Fatalf("seed %d: ends with %q unanswered", seed, pending)
		}
	}
}

// TestAnthropic checks the Messages shape: roles alternate from user,
// thinking comes first, and each assistant message's tool uses are
// answered, in order, by the next user message's tool results.
func TestAnthropic(t *testing.T) {
	type block struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Thinking  string          `json:"thinking"`
		Signature string          `json:"signature"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
	}
	for seed := int64(1); seed <= 10; seed++ {
		var msgs []struct {
			Role    string  `json:"role"`
			Content []block `json:"content"`
		}
		if err := json.Unmarshal(agentgen.Generate(seed, agentgen.Options{}).Anthropic(), &msgs); err != nil {
			t.Fatal(err)
		}
		var uses []string
		for i, m := range msgs {
			want := "user"
			if i%2 == 1 {
				want = "assistant"
			}
			if m.Role != want || len(m.Content) == 0 {
				t.Fatalf("seed %d: message %d is %q with %d blocks, want %s", seed, i, m.Role, len(m.Content), want)
			}
			if m.Role == "user" {
				var results []string
				for _, b := range m.Content {
					if b.Type == "tool_result" {
						results = append(results, b.ToolUseID)
					}
				}
				if strings.Join(results, ",") != strings.Join(uses, ",") {
					t.Fatalf("seed %d: message %d answers %q, want %q", seed, i, results, uses)
				}
				uses = nil
				continue
			}
			for j, b := range m.Content {
				switch b.Type {
				case "thinking":
					if j != 0 || b.Signature == "" {
						t.Fatalf("seed %d: thinking at %d", seed, j)
					}
				case "tool_use":
					var in map[string]any
					if json.Unmarshal(b.Input, &in) != nil || b.ID == "" || b.Name == "" {
						t.Fatalf("seed %d: bad tool use %+v", seed, b)
					}
					uses = append(uses, b.ID)
				case "text":
				default:
					t.Fatalf("seed %d: block %q", seed, b.Type)
				}
			}
		}
		if len(uses) > 0 || msgs[len(msgs)-1].Role != "assistant" {
			t.Fatalf("seed %d: ends with %q unanswered", seed, uses)
		}
	}
}

func TestEntries(t *testing.T) {
	tr := agentgen.Generate(5, agentgen.Options{Tasks: 3})
	calls := map[string]bool{}
	for _, e := range tr.Entries() {
		switch e.Kind {
		case "tool_call":
			if e.CallID == "" || e.Name == "" || !json.Valid([]byte(e.Text)) {
				t.Fatalf("bad call %+v", e)
			}
			calls[e.CallID] = true
		case "tool_result":
			if e.Role != "tool" || !calls[e.CallID] {
				t.Fatalf("result before its call: %+v", e)
			}
		case "text", "thinking":
			if e.Text == "" {
				t.Fatalf("empty %s", e.Kind)
			}
		default:
			t.Fatalf("kind %q", e.Kind)
		}
	}
}
