// Package fieldgen generates coding-agent transcripts of a service team's
// day: an agent debugs a deployed service with a terminal, a file reader,
// a code search, an editor, an HTTP client and a SQL console. Its tool
// results are what such work prints: pytest, jest, cargo and go test
// failures with stack traces, compiler errors, HTTP access logs, JSON API
// responses, kubectl and docker tables, git logs and diffs, query results.
//
// It exists to measure compaction on input the compaction code was not
// tuned to, so it shares nothing with agentgen: other tools, other output
// shapes and other identifiers (URLs with query strings, ports, HTTP
// status and error codes, commit SHAs, UUIDs, environment variables,
// package versions, file:line locations, pod and container names, IP
// addresses, issue numbers). Users speak rarely (one request, then a long
// run of tool calls) or often (short corrections between rounds), as the
// seed decides.
//
// The same seed and Options give the same transcript, byte for byte, in
// OpenAI Chat Completions form (OpenAI) and Anthropic Messages form
// (Anthropic); both are valid request bodies' message lists.
package fieldgen

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Options shape a transcript.
type Options struct {
	// ToolCalls is the number of tool calls (default 120).
	ToolCalls int
	// OutputScale multiplies the length of long tool outputs (logs,
	// tables, test runs); default 1.
	OutputScale float64
	// Users is "rare" (a request per task, then only tool calls), "dense"
	// (a short message after most rounds) or "" (the seed chooses).
	Users string
	// NoThinking leaves out the assistant's thinking (Anthropic only:
	// OpenAI messages never carry it).
	NoThinking bool
}

// Standard is the size of a long working session: about 280 OpenAI
// messages (more with a dense user), 120 tool calls and 320k to 400k
// o200k tokens.
func Standard() Options { return Options{ToolCalls: 120, OutputScale: 4} }

// Long is a session of about 1.2M o200k tokens and 260 tool calls.
func Long() Options { return Options{ToolCalls: 260, OutputScale: 6.2} }

// Call is a tool call: the tool's name and its arguments as a JSON object.
type Call struct {
	ID   string
	Name string
	Args string
}

// Result is a tool's answer to a call.
type Result struct {
	CallID  string
	Name    string
	Output  string
	IsError bool
}

// Message is one turn. An assistant message has Text, Thinking and Calls
// (any of them may be empty, not all); a "tool" message holds the Results
// of the previous assistant message's calls, in order; a user message has
// Text.
type Message struct {
	Role     string
	Text     string
	Thinking string
	Calls    []Call
	Results  []Result
}

// Transcript is a generated session.
type Transcript struct {
	Seed     uint64
	Users    string // "rare" or "dense"
	System   string
	Messages []Message
}

// ToolCalls counts the transcript's tool calls.
func (t Transcript) ToolCalls() int {
	n := 0
	for _, m := range t.Messages {
		n += len(m.Calls)
	}
	return n
}

// Generate returns the transcript of seed.
func Generate(seed uint64, o Options) Transcript {
	if o.ToolCalls <= 0 {
		o.ToolCalls = 120
	}
	if o.OutputScale <= 0 {
		o.OutputScale = 1
	}
	g := newGen(seed, o)
	tr := Transcript{Seed: seed, Users: g.users, System: g.systemPrompt()}
	calls := 0
	for calls < o.ToolCalls {
		task := g.task(o.ToolCalls - calls)
		tr.Messages = append(tr.Messages, Message{Role: "user", Text: task.request})
		for ri, r := range task.rounds {
			for _, s := range r {
				m := Message{Role: "assistant", Text: s.text}
				if !o.NoThinking {
					m.Thinking = s.thinking
				}
				res := Message{Role: "tool"}
				for _, c := range s.calls {
					id := g.callID()
					m.Calls = append(m.Calls, Call{ID: id, Name: c.name, Args: c.args})
					res.Results = append(res.Results, Result{CallID: id, Name: c.name, Output: c.output, IsError: c.isError})
					calls++
				}
				tr.Messages = append(tr.Messages, m, res)
			}
			last := ri == len(task.rounds)-1
			if last {
				tr.Messages = append(tr.Messages, Message{Role: "assistant", Text: task.report})
				break
			}
			// Between rounds the assistant reports; a dense user answers
			// most reports, a rare one only continues.
			tr.Messages = append(tr.Messages, Message{Role: "assistant", Text: g.progress(task)})
			tr.Messages = append(tr.Messages, Message{Role: "user", Text: g.interject(task)})
		}
	}
	return tr
}

// OpenAI returns the transcript as a Chat Completions message array: a
// system message, then user, assistant (content and tool_calls) and tool
// messages (one per result).
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
	str := func(s string) *string { return &s }
	out := []msg{{Role: "system", Content: str(t.System)}}
	for _, m := range t.Messages {
		switch m.Role {
		case "tool":
			for _, r := range m.Results {
				out = append(out, msg{Role: "tool", Content: str(r.Output), ToolCallID: r.CallID})
			}
		case "assistant":
			a := msg{Role: "assistant"}
			if m.Text != "" {
				a.Content = str(m.Text)
			}
			for _, c := range m.Calls {
				a.ToolCalls = append(a.ToolCalls, call{ID: c.ID, Type: "function", Function: fn{Name: c.Name, Arguments: c.Args}})
			}
			out = append(out, a)
		default:
			out = append(out, msg{Role: m.Role, Content: str(m.Text)})
		}
	}
	return mustJSON(out)
}

// Anthropic returns the transcript as a Messages request body: "system"
// and "messages", where an assistant message holds thinking, text and
// tool_use blocks and the next user message the tool_result blocks.
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
	var ms []msg
	for _, m := range t.Messages {
		switch m.Role {
		case "tool":
			u := msg{Role: "user"}
			for _, r := range m.Results {
				u.Content = append(u.Content, block{Type: "tool_result", ToolUseID: toolu(r.CallID), Content: r.Output, IsError: r.IsError})
			}
			ms = append(ms, u)
		case "assistant":
			a := msg{Role: "assistant"}
			if m.Thinking != "" {
				a.Content = append(a.Content, block{Type: "thinking", Thinking: m.Thinking, Signature: signature(m.Thinking)})
			}
			if m.Text != "" {
				a.Content = append(a.Content, block{Type: "text", Text: m.Text})
			}
			for _, c := range m.Calls {
				a.Content = append(a.Content, block{Type: "tool_use", ID: toolu(c.ID), Name: c.Name, Input: json.RawMessage(c.Args)})
			}
			ms = append(ms, a)
		default:
			ms = append(ms, msg{Role: m.Role, Content: []block{{Type: "text", Text: m.Text}}})
		}
	}
	return mustJSON(struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		System    string `json:"system"`
		Messages  []msg  `json:"messages"`
	}{"claude-sonnet-4-5", 8192, t.System, ms})
}

// toolu turns an OpenAI call id into an Anthropic one.
func toolu(id string) string { return "toolu_" + strings.TrimPrefix(id, "call_") }

// signature is a stand-in for the opaque signature of a thinking block:
// deterministic, base64-like, sized like a real one.
func signature(s string) string {
	h := uint64(1469598103934665603)
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	r := rand.New(rand.NewPCG(h, 7))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	b := make([]byte, 160)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return "Eq" + string(b) + "=="
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("fieldgen: " + err.Error())
	}
	return b
}

// args encodes a tool call's arguments, in the order given.
func args(kv ...any) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv[i])
		b.Write(k)
		b.WriteByte(':')
		switch v := kv[i+1].(type) {
		case int:
			b.WriteString(strconv.Itoa(v))
		case bool:
			b.WriteString(strconv.FormatBool(v))
		default:
			s, _ := json.Marshal(v)
			b.Write(s)
		}
	}
	b.WriteByte('}')
	return b.String()
}
