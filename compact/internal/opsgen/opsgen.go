// Package opsgen generates coding-agent sessions for measuring what live
// compaction keeps: an agent doing shell-heavy maintenance on a polyglot
// data-pipeline monorepo (a Go ingest service, a Python ETL package, a
// TypeScript console, a Rust normalizer crate, compose and Kubernetes
// files). It runs tests that fail and pass (go test, pytest, jest, tsc,
// cargo), starts servers and calls them with curl, queries PostgreSQL,
// reads many files, writes and edits some, and commits; its user gives
// tasks with constraints and answers the agent's questions with decisions.
//
// Each identifier the generator plants is labelled with the class of the
// place it put it: on a line of a tool output that reports the failure
// (ErrorLine: the generator wrote that line as part of the failure, stack
// frames included), in the output of a command that succeeded
// (PassingOutput), in a file written or edited (FileWritten: the path, or
// an identifier of the content) or in a user turn (UserTurn). A planted
// identifier of ErrorLine, PassingOutput or UserTurn occurs in places of
// its class only; a path of FileWritten may also be named by later
// commands and their output, as a written file is.
//
// The same seed and options give the same session, byte for byte, in the
// OpenAI chat form (OpenAI) and the Anthropic messages form (Anthropic).
package opsgen

import (
	"encoding/json"
	"strings"
)

// Class is the kind of place a planted identifier was put.
type Class string

// The classes.
const (
	ErrorLine     Class = "error_line"
	PassingOutput Class = "passing_output"
	FileWritten   Class = "file_written"
	UserTurn      Class = "user_turn"
)

// Classes lists every class, in the order tables show them.
var Classes = []Class{ErrorLine, PassingOutput, FileWritten, UserTurn}

// Label is one planted identifier: its text, the class of its place and
// its kind (url, hostport, code, site, test, hash, uuid, id, path).
type Label struct {
	Text  string
	Class Class
	Kind  string
}

// Options size a session.
type Options struct {
	// ToolCalls is how many tool calls the session makes at least; the
	// last task is finished, so it may make a few more.
	ToolCalls int
	// OutputScale multiplies the length of long outputs (file reads,
	// verbose test runs, logs); 1 is the standard.
	OutputScale float64
}

// Standard is a session of about 120 tool calls and 300k o200k tokens.
func Standard() Options { return Options{ToolCalls: 120, OutputScale: 2.8} }

// Long is a session of about 400 tool calls and 1M o200k tokens.
func Long() Options { return Options{ToolCalls: 350, OutputScale: 2.4} }

// Transcript is a generated session.
type Transcript struct {
	System    string
	Messages  []Message
	Labels    []Label
	ToolCalls int
}

// Message is one message of the session in a neutral form: user text,
// assistant text with tool calls, or the results of the calls of the
// message before it.
type Message struct {
	Role    string // "user", "assistant" or "tool" (the results)
	Text    string
	Calls   []Call
	Results []Result
}

// Call is a tool call. Its arguments keep their order.
type Call struct {
	ID   string // without the provider's prefix
	Name string
	Args []Arg
}

// Arg is one argument of a call.
type Arg struct{ Key, Value string }

// Writes says the call writes a file (its arguments are a file_written
// place).
func (c Call) Writes() bool { return c.Name == "write_file" || c.Name == "replace_in_file" }

// Result is the output of one call.
type Result struct {
	CallID string
	Output string
	// Exit is the command's exit status (0 for reads and writes).
	Exit int
	// Read says the output is what a read printed (a file, a listing, a
	// search), not a command's run.
	Read bool
	// ErrLines are the indices of the output's lines (split at "\n") the
	// generator wrote as the failure: the lines reporting it and its
	// stack frames.
	ErrLines []int
}

// Failed says the command failed.
func (r Result) Failed() bool { return r.Exit != 0 }

// ArgsJSON is a call's arguments as the JSON object both forms give
// them, keys in order.
func ArgsJSON(args []Arg) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, a := range args {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(a.Key)
		v, _ := json.Marshal(a.Value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.String()
}

// OpenAI returns the session as an OpenAI chat messages array: the system
// message, then user, assistant (with tool_calls) and tool messages.
func (t *Transcript) OpenAI() []byte {
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
				out = append(out, msg{Role: "tool", ToolCallID: "call_" + r.CallID, Content: str(r.Output)})
			}
		default:
			om := msg{Role: m.Role}
			if m.Text != "" {
				om.Content = str(m.Text)
			}
			for _, c := range m.Calls {
				om.ToolCalls = append(om.ToolCalls, call{ID: "call_" + c.ID, Type: "function", Function: fn{Name: c.Name, Arguments: ArgsJSON(c.Args)}})
			}
			out = append(out, om)
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err) // strings only: cannot fail
	}
	return b
}

// Anthropic returns the session as an Anthropic messages request body:
// {"model", "max_tokens", "system", "messages"}, the results of a tool
// round in one user message of tool_result blocks (is_error when the
// command failed).
func (t *Transcript) Anthropic() []byte {
	type blk struct {
		Type      string          `json:"type"`
		Text      string          `json:"text,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
		ToolUseID string          `json:"tool_use_id,omitempty"`
		Content   *string         `json:"content,omitempty"`
		IsError   bool            `json:"is_error,omitempty"`
	}
	type msg struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	}
	var out []msg
	for _, m := range t.Messages {
		switch {
		case m.Role == "tool":
			var bs []blk
			for _, r := range m.Results {
				s := r.Output
				bs = append(bs, blk{Type: "tool_result", ToolUseID: "toolu_01" + r.CallID, Content: &s, IsError: r.Failed()})
			}
			out = append(out, msg{Role: "user", Content: bs})
		case m.Role == "user":
			out = append(out, msg{Role: "user", Content: m.Text})
		default:
			var bs []blk
			if m.Text != "" {
				bs = append(bs, blk{Type: "text", Text: m.Text})
			}
			for _, c := range m.Calls {
				bs = append(bs, blk{Type: "tool_use", ID: "toolu_01" + c.ID, Name: c.Name, Input: json.RawMessage(ArgsJSON(c.Args))})
			}
			out = append(out, msg{Role: "assistant", Content: bs})
		}
	}
	body := struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		System    string `json:"system"`
		Messages  []msg  `json:"messages"`
	}{"claude-sonnet-4-5", 16000, t.System, out}
	b, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	return b
}
