// Package agentgen generates realistic coding-agent transcripts for tests,
// benchmarks and demos of live compaction: a user asks for work on a Go,
// Python or TypeScript project; the assistant thinks, talks and calls
// tools (reading, searching and editing files, running tests, builds, git
// and curl); the tools answer with file contents, test runs with
// failures, stack traces, compiler errors and long logs. The same seed
// gives the same transcript, byte for byte.
//
// A transcript reports the identifiers it planted on purpose (Truth):
// the paths, commands, URLs, numbers with units, error messages, code
// names and ids that a continuing agent would need, so that a checkpoint's
// identifier survival can be measured. Everything else in it (the other
// names in a file, timings, hashes of unrelated commits) is noise.
//
// A transcript is available as checkpoint entries, as an OpenAI Chat
// Completions message array and as an Anthropic Messages array; both are
// valid requests' message lists (every tool call answered by one result
// right after it, Anthropic roles alternating).
package agentgen

import (
	"encoding/json"
	"math/rand/v2"
	"strings"

	"github.com/strata-memory/strata/compact/checkpoint"
)

// Options shape a transcript. The zero Options give five tasks in a
// language chosen by the seed, with thinking.
type Options struct {
	// Tasks is the number of user requests (default 5). Each takes 8 to
	// 16 messages.
	Tasks int
	// Lang is "go", "python" or "typescript"; "" lets the seed choose.
	Lang string
	// NoThinking leaves out the assistant's thinking.
	NoThinking bool
}

// Message is one message of a transcript, provider neutral.
type Message struct {
	Role     string // "user", "assistant" or "tool"
	Text     string
	Thinking string  // assistant only
	Calls    []Call  // assistant only
	Result   *Result // tool only
}

// Call is a tool call; Args is its JSON arguments.
type Call struct {
	ID, Name, Args string
}

// Result answers a tool call.
type Result struct {
	CallID, Name, Output string
	IsError              bool
}

// Transcript is a generated conversation.
type Transcript struct {
	Seed     int64
	Lang     string
	Messages []Message
	// Truth is the identifiers planted on purpose, each once, in the order
	// they first appear.
	Truth []checkpoint.Identifier
}

// Generate returns the transcript of a seed.
func Generate(seed int64, o Options) Transcript {
	if o.Tasks <= 0 {
		o.Tasks = 5
	}
	r := rand.New(rand.NewPCG(uint64(seed), uint64(seed)^0x9e3779b97f4a7c15))
	g := &gen{r: r, thinking: !o.NoThinking, truthSeen: map[string]bool{}}
	g.lang = pickLang(r, o.Lang)
	g.project = newProject(r, g.lang)
	g.tools = toolStyles[r.IntN(len(toolStyles))]
	tasks := []func(*gen){(*gen).fixTest, (*gen).addFeature, (*gen).investigateCrash, (*gen).rename,
		(*gen).upgrade, (*gen).slowEndpoint}
	order := r.Perm(len(tasks))
	for i := 0; i < o.Tasks; i++ {
		tasks[order[i%len(tasks)]](g)
	}
	return Transcript{Seed: seed, Lang: g.lang.name, Messages: g.msgs, Truth: g.truth}
}

// Entries flattens the transcript as package compact does: one entry per
// text, thinking block, tool call and tool result.
func (t Transcript) Entries() []checkpoint.Entry {
	var out []checkpoint.Entry
	for _, m := range t.Messages {
		switch m.Role {
		case "tool":
			out = append(out, checkpoint.Entry{Role: "tool", Kind: "tool_result", Name: m.Result.Name,
				CallID: m.Result.CallID, Text: m.Result.Output, IsError: m.Result.IsError})
		case "assistant":
			if m.Thinking != "" {
				out = append(out, checkpoint.Entry{Role: "assistant", Kind: "thinking", Text: m.Thinking})
			}
			if m.Text != "" {
				out = append(out, checkpoint.Entry{Role: "assistant", Kind: "text", Text: m.Text})
			}
			for _, c := range m.Calls {
				out = append(out, checkpoint.Entry{Role: "assistant", Kind: "tool_call", Name: c.Name, CallID: c.ID, Text: c.Args})
			}
		default:
			out = append(out, checkpoint.Entry{Role: m.Role, Kind: "text", Text: m.Text})
		}
	}
	return out
}

// OpenAI returns the transcript as a Chat Completions messages array.
// Thinking has no place there and is left out; a failed tool result is
// told by its content only.
func (t Transcript) OpenAI() []byte {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type call struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	type msg struct {
		Role       string  `json:"role"`
		Content    *string `json:"content"`
		ToolCalls  []call  `json:"tool_calls,omitempty"`
		ToolCallID string  `json:"tool_call_id,omitempty"`
	}
	var out []msg
	for _, m := range t.Messages {
		switch m.Role {
		case "tool":
			s := m.Result.Output
			out = append(out, msg{Role: "tool", Content: &s, ToolCallID: m.Result.CallID})
		case "assistant":
			x := msg{Role: "assistant"}
			if m.Text != "" {
				s := m.Text
				x.Content = &s
			}
			for _, c := range m.Calls {
				x.ToolCalls = append(x.ToolCalls, call{ID: c.ID, Type: "function", Function: fn{Name: c.Name, Arguments: c.Args}})
			}
			out = append(out, x)
		default:
			s := m.Text
			out = append(out, msg{Role: m.Role, Content: &s})
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err) // strings and slices only: cannot fail
	}
	return b
}

// Anthropic returns the transcript as a Messages API messages array: the
// tool results that answer one assistant message form the next user
// message, and thinking blocks come first in their assistant message
// (with a made-up signature).
func (t Transcript) Anthropic() []byte {
	type block struct {
		Type      string          `json:"type"`
		Text      string          `json:"text,omitempty"`
		Thinking  string          `json:"thinking,omitempty"`
		Signature string          `json:"signature,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
		ToolUseID string          `json:"tool_use_id,omitempty"`
		Content   string          `json:"content,omitempty"`
		IsError   bool            `json:"is_error,omitempty"`
	}
	type msg struct {
		Role    string  `json:"role"`
		Content []block `json:"content"`
	}
	var out []msg
	for _, m := range t.Messages {
		switch m.Role {
		case "tool":
			b := block{Type: "tool_result", ToolUseID: m.Result.CallID, Content: m.Result.Output, IsError: m.Result.IsError}
			if n := len(out); n > 0 && out[n-1].Role == "user" && out[n-1].Content[0].Type == "tool_result" {
				out[n-1].Content = append(out[n-1].Content, b)
			} else {
				out = append(out, msg{Role: "user", Content: []block{b}})
			}
		case "assistant":
			x := msg{Role: "assistant"}
			if m.Thinking != "" {
				x.Content = append(x.Content, block{Type: "thinking", Thinking: m.Thinking, Signature: signature(m.Thinking)})
			}
			if m.Text != "" {
				x.Content = append(x.Content, block{Type: "text", Text: m.Text})
			}
			for _, c := range m.Calls {
				x.Content = append(x.Content, block{Type: "tool_use", ID: c.ID, Name: c.Name, Input: json.RawMessage(c.Args)})
			}
			out = append(out, x)
		default:
			out = append(out, msg{Role: "user", Content: []block{{Type: "text", Text: m.Text}}})
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err) // arguments are valid JSON by construction
	}
	return b
}

// signature is a stand-in for the signature Anthropic puts on thinking.
func signature(s string) string {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	const digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var b strings.Builder
	b.WriteString("EqQBCkYIBxgCKkB")
	for i := 0; i < 48; i++ {
		b.WriteByte(digits[h%64])
		h = h*6364136223846793005 + 1442695040888963407
	}
	return b.String()
}

// TruthIn returns the identifiers of truth that occur in span: in an
// entry's text, or, for a tool call, in one of its arguments' string
// values (so that quotes escaped in the JSON do not hide a command). The
// comparison is Contains's: case-insensitive, whole words.
func TruthIn(truth []checkpoint.Identifier, span []checkpoint.Entry) []checkpoint.Identifier {
	var b strings.Builder
	for _, e := range span {
		b.WriteString(strings.ToLower(e.Text))
		b.WriteByte('\n')
		if e.Kind == "tool_call" {
			var v any
			if json.Unmarshal([]byte(e.Text), &v) == nil {
				writeStrings(&b, v)
			}
		}
	}
	hay := b.String()
	var out []checkpoint.Identifier
	for _, id := range truth {
		if containsWord(hay, strings.ToLower(id.Text)) {
			out = append(out, id)
		}
	}
	return out
}

// Contains reports whether text says id verbatim, ignoring case, as a
// whole word: not continued by a letter, digit or underscore on a side
// where id itself starts or ends with one (so 30s is not found in 130s,
// and invoice.go is found in internal/billing/invoice.go).
func Contains(text, id string) bool {
	return containsWord(strings.ToLower(text), strings.ToLower(id))
}

func containsWord(hay, needle string) bool {
	if needle == "" {
		return false
	}
	word := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c >= 'A' && c <= 'Z'
	}
	ws, we := word(needle[0]), word(needle[len(needle)-1])
	for from := 0; ; {
		i := strings.Index(hay[from:], needle)
		if i < 0 {
			return false
		}
		i += from
		j := i + len(needle)
		// A number does not start after a decimal point (30s in 1.30s).
		num := i >= 2 && needle[0] >= '0' && needle[0] <= '9' && (hay[i-1] == '.' || hay[i-1] == ',') && hay[i-2] >= '0' && hay[i-2] <= '9'
		if (!ws || i == 0 || !word(hay[i-1])) && !num && (!we || j == len(hay) || !word(hay[j])) {
			return true
		}
		from = i + 1
	}
}

func writeStrings(b *strings.Builder, v any) {
	switch v := v.(type) {
	case string:
		b.WriteString(strings.ToLower(v))
		b.WriteByte('\n')
	case []any:
		for _, x := range v {
			writeStrings(b, x)
		}
	case map[string]any:
		for _, x := range v {
			writeStrings(b, x)
		}
	}
}
