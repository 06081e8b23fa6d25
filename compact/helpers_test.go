package compact_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/checkpoint"
)

// js encodes v as JSON (test helper; maps encode with sorted keys).
func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// list joins raw messages into a JSON array.
func list(msgs ...string) string { return "[" + strings.Join(msgs, ",") + "]" }

func mustParse(t testing.TB, p compact.Provider, doc string) *compact.Transcript {
	t.Helper()
	tr, err := compact.Parse(p, []byte(doc))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return tr
}

func marshal(t testing.TB, tr *compact.Transcript) string {
	t.Helper()
	b := tr.JSON()
	if !json.Valid(b) {
		t.Fatalf("output is not valid JSON: %s", b)
	}
	return string(b)
}

// Message builders, OpenAI shape.

func oaSystem(text string) string { return js(map[string]any{"role": "system", "content": text}) }
func oaUser(text string) string   { return js(map[string]any{"role": "user", "content": text}) }
func oaAssistant(text string) string {
	return js(map[string]any{"role": "assistant", "content": text})
}

type call struct{ id, name, args string }

func oaCalls(calls ...call) string {
	var tc []any
	for _, c := range calls {
		tc = append(tc, map[string]any{"id": c.id, "type": "function",
			"function": map[string]any{"name": c.name, "arguments": c.args}})
	}
	return js(map[string]any{"role": "assistant", "content": nil, "tool_calls": tc})
}

func oaTool(id, content string) string {
	return js(map[string]any{"role": "tool", "tool_call_id": id, "content": content})
}

// Message builders, Anthropic shape.

func anUser(text string) string { return js(map[string]any{"role": "user", "content": text}) }
func anAssistant(text string) string {
	return js(map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}})
}

func anUses(calls ...call) string {
	var blocks []any
	for _, c := range calls {
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": json.RawMessage(c.args)})
	}
	return js(map[string]any{"role": "assistant", "content": blocks})
}

type result struct {
	id, content string
	image       bool
	isError     bool
}

func anResults(rs ...result) string {
	var blocks []any
	for _, r := range rs {
		b := map[string]any{"type": "tool_result", "tool_use_id": r.id, "content": r.content}
		if r.image {
			b["content"] = []any{
				map[string]any{"type": "text", "text": r.content},
				map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
			}
		}
		if r.isError {
			b["is_error"] = true
		}
		blocks = append(blocks, b)
	}
	return js(map[string]any{"role": "user", "content": blocks})
}

// toolRound is one tool call and its result in the provider's shape.
func toolRound(p compact.Provider, id, name, args, output string) []string {
	if p == compact.OpenAI {
		return []string{oaCalls(call{id, name, args}), oaTool(id, output)}
	}
	return []string{anUses(call{id, name, args}), anResults(result{id: id, content: output})}
}

func user(p compact.Provider, text string) string {
	if p == compact.OpenAI {
		return oaUser(text)
	}
	return anUser(text)
}

func assistant(p compact.Provider, text string) string {
	if p == compact.OpenAI {
		return oaAssistant(text)
	}
	return anAssistant(text)
}

var providers = []compact.Provider{compact.OpenAI, compact.Anthropic}

// fakeCheckpointer records its calls; answer decides each reply.
type fakeCheckpointer struct {
	mu        sync.Mutex
	calls     int
	spans     [][]checkpoint.Entry
	previous  []string
	answer    func(n int, span []checkpoint.Entry, previous string) (checkpoint.Result, error)
	calledCtx context.Context
}

func (f *fakeCheckpointer) Checkpoint(ctx context.Context, span []checkpoint.Entry, previous string) (checkpoint.Result, error) {
	f.mu.Lock()
	f.calls++
	n := f.calls
	f.spans = append(f.spans, span)
	f.previous = append(f.previous, previous)
	f.mu.Unlock()
	if f.answer != nil {
		return f.answer(n, span, previous)
	}
	return goodCheckpoint(n, span, previous)
}

// goodCheckpoint writes a small checkpoint naming how many entries it saw.
func goodCheckpoint(n int, span []checkpoint.Entry, previous string) (checkpoint.Result, error) {
	text := fmt.Sprintf("## Goal\nCheckpoint %d over %d entries.\n\n## Critical Context\n- /srv/app/main.go", n, len(span))
	if previous != "" {
		text = "## Goal\n(updated)\n" + text
	}
	return checkpoint.Result{Text: text, Mode: "extractive", Update: previous != "",
		Ledger: []checkpoint.Identifier{{Kind: "path", Text: "/srv/app/main.go"}}}, nil
}

// wordTokenizer counts whitespace-separated words: an "exact" tokenizer
// whose counts differ from chars/4.
type wordTokenizer struct{}

func (wordTokenizer) Name() string       { return "words" }
func (wordTokenizer) Count(s string) int { return len(strings.Fields(s)) }

var _ strata.Tokenizer = wordTokenizer{}

// text returns n characters of readable filler, seeded.
func text(r *rand.Rand, n int) string {
	words := []string{"build", "the", "index", "error:", "/srv/app/main.go", "retry", "ok", "value=42", "func", "Deploy", "ünïcödé", "测试", "🙂"}
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.Intn(len(words))])
	}
	return b.String()
}

// genOptions shape a random transcript.
type genOptions struct {
	turns       int
	maxRounds   int // tool rounds per turn: 0..maxRounds
	maxParallel int // calls per round: 1..maxParallel
	maxOutput   int // tool output length: 1..maxOutput
	system      bool
	images      bool
	thinking    bool
	idPrefix    string // prefix of tool call ids, to keep them unique
}

// genTranscript returns a valid random transcript in the provider's shape
// and how many tool results it holds.
func genTranscript(r *rand.Rand, p compact.Provider, o genOptions) (string, int) {
	var msgs []string
	results := 0
	if p == compact.OpenAI && o.system {
		msgs = append(msgs, oaSystem("You are a careful agent. "+text(r, 200)))
		if r.Intn(2) == 0 {
			msgs = append(msgs, js(map[string]any{"role": "developer", "content": "Use tools."}))
		}
	}
	id := 0
	for turn := 0; turn < o.turns; turn++ {
		msgs = append(msgs, user(p, text(r, 20+r.Intn(600))))
		rounds := 0
		if o.maxRounds > 0 {
			rounds = r.Intn(o.maxRounds + 1)
		}
		for k := 0; k < rounds; k++ {
			n := 1 + r.Intn(max(o.maxParallel, 1))
			var calls []call
			for j := 0; j < n; j++ {
				id++
				calls = append(calls, call{id: fmt.Sprintf("%scall_%d", o.idPrefix, id), name: []string{"bash", "read_file", "grep"}[r.Intn(3)],
					args: js(map[string]any{"cmd": text(r, 10+r.Intn(60))})})
			}
			if p == compact.OpenAI {
				msgs = append(msgs, oaCalls(calls...))
				for _, c := range calls {
					msgs = append(msgs, oaTool(c.id, text(r, 1+r.Intn(o.maxOutput))))
					results++
				}
				continue
			}
			var blocks []any
			if o.thinking && r.Intn(2) == 0 {
				blocks = append(blocks, map[string]any{"type": "thinking", "thinking": text(r, 100), "signature": "sig=="})
			}
			for _, c := range calls {
				blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": json.RawMessage(c.args)})
			}
			msgs = append(msgs, js(map[string]any{"role": "assistant", "content": blocks}))
			var rs []result
			for _, c := range calls {
				rs = append(rs, result{id: c.id, content: text(r, 1+r.Intn(o.maxOutput)), image: o.images && r.Intn(10) == 0})
			}
			msgs = append(msgs, anResults(rs...))
			results++
		}
		msgs = append(msgs, assistant(p, text(r, 20+r.Intn(800))))
	}
	return list(msgs...), results
}

// checkValid fails t if the list breaks the provider's rules: OpenAI
// system messages first, then user/assistant alternation (tool messages
// aside) starting with a user, each tool message right after the call it
// answers; Anthropic strict alternation starting with a user, each
// tool_use answered in the next message and each tool_result answering
// the previous one.
func checkValid(t testing.TB, p compact.Provider, doc string) {
	t.Helper()
	var msgs []struct {
		Role       string                `json:"role"`
		Content    json.RawMessage       `json:"content"`
		ToolCalls  []struct{ ID string } `json:"tool_calls"`
		ToolCallID string                `json:"tool_call_id"`
	}
	var top struct {
		Messages json.RawMessage `json:"messages"`
	}
	raw := []byte(doc)
	if strings.HasPrefix(strings.TrimSpace(doc), "{") {
		if err := json.Unmarshal(raw, &top); err != nil {
			t.Fatal(err)
		}
		raw = top.Messages
	}
	if err := json.Unmarshal(raw, &msgs); err != nil {
		t.Fatalf("output is not a message list: %v", err)
	}
	type block struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		ToolUseID string `json:"tool_use_id"`
	}
	blocks := func(c json.RawMessage) []block {
		var bs []block
		if len(c) > 0 && c[0] == '[' {
			json.Unmarshal(c, &bs)
		}
		return bs
	}
	if p == compact.Anthropic {
		for i, m := range msgs {
			want := "user"
			if i%2 == 1 {
				want = "assistant"
			}
			if m.Role != want {
				t.Fatalf("messages[%d].role = %s, want %s (strict alternation)\n%.1000s", i, m.Role, want, doc)
			}
			var uses []string
			for _, b := range blocks(m.Content) {
				if b.Type == "tool_use" {
					uses = append(uses, b.ID)
				}
			}
			if len(uses) > 0 {
				if i+1 >= len(msgs) {
					continue // a pending call at the end
				}
				got := map[string]bool{}
				for _, b := range blocks(msgs[i+1].Content) {
					if b.Type == "tool_result" {
						got[b.ToolUseID] = true
					}
				}
				for _, id := range uses {
					if !got[id] {
						t.Fatalf("messages[%d]: tool_use %s has no result in the next message", i, id)
					}
				}
			}
			for _, b := range blocks(m.Content) {
				if b.Type != "tool_result" {
					continue
				}
				found := false
				if i > 0 {
					for _, pb := range blocks(msgs[i-1].Content) {
						if pb.Type == "tool_use" && pb.ID == b.ToolUseID {
							found = true
						}
					}
				}
				if !found {
					t.Fatalf("messages[%d]: tool_result %s answers no tool_use of the previous message", i, b.ToolUseID)
				}
			}
		}
		return
	}
	i := 0
	for i < len(msgs) && (msgs[i].Role == "system" || msgs[i].Role == "developer") {
		i++
	}
	want := "user"
	pending := map[string]bool{}
	for ; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case "tool":
			if !pending[m.ToolCallID] {
				t.Fatalf("messages[%d]: tool message for %s follows no open call", i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
			continue
		case "system", "developer":
			t.Fatalf("messages[%d]: %s message after the history started", i, m.Role)
		}
		if len(pending) > 0 {
			t.Fatalf("messages[%d]: calls %v unanswered before a %s message", i, pending, m.Role)
		}
		if m.Role != want {
			t.Fatalf("messages[%d].role = %s, want %s (alternation)", i, m.Role, want)
		}
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			for _, c := range m.ToolCalls {
				pending[c.ID] = true
			}
			want = "assistant" // after the tool messages
			continue
		}
		if want == "user" {
			want = "assistant"
		} else {
			want = "user"
		}
	}
}
