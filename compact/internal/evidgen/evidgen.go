// Package evidgen generates coding-agent transcripts whose identifiers
// are labelled with where they were put, to measure what a compaction
// keeps of the evidence an agent needs next.
//
// A transcript is a debugging and feature session on a Go HTTP gateway:
// the user gives tasks with constraints and follow-ups, and the assistant
// explains what it does and calls five tools (shell, read_file,
// write_file, edit_file and http_request). The shell runs directory
// listings, many cat commands over the files of one package, and go test
// runs that fail (assertion failures naming the test, panics with their
// index and stack, servers under test that print their address, error
// codes, refused connections, 502 responses) or pass (large -v outputs).
//
// Every identifier the generator places on purpose (a URL, a host:port,
// an error code, a path, a test name, a file:line site, a hash, an id)
// carries a Label with the class of the place it was put, from the
// generator's own knowledge of what it wrote:
//
//   - error_line: a line of a failing tool output that reports the
//     failure (an assertion, a panic and its stack frames, an error log
//     line, a refused connection, an error response);
//   - passing_output: the output of a run or request that succeeded;
//   - file_written: the path or the content of a file written or edited;
//   - user_turn: a message of the user;
//   - read_only: the output of a read (cat, read_file, a listing) only.
//
// An identifier is placed in places of one class only: Verify checks it.
// The assistant's own text never repeats a labelled identifier, and the
// arguments of calls that only read (a cat command, a test run) name
// only the paths of files that are written later, whose class allows it.
// Everything else in the transcript is filler that carries no label.
//
// The generator is deterministic: a seed and Options give the same
// transcript. It does not know how any compaction works; the labels are
// the measure's ground truth.
package evidgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Class is the kind of place an identifier was put.
type Class string

// The classes.
const (
	ErrorLine     Class = "error_line"
	PassingOutput Class = "passing_output"
	FileWritten   Class = "file_written"
	UserTurn      Class = "user_turn"
	ReadOnly      Class = "read_only"
)

// Classes lists the classes in the order reports show them.
var Classes = []Class{ErrorLine, PassingOutput, FileWritten, UserTurn, ReadOnly}

// Label is one identifier the generator placed.
type Label struct {
	Text  string
	Class Class
	// Kind is what the identifier is: url, port (a host:port), error_code,
	// path, test, site (a file:line), hash or id.
	Kind string
}

// Options sizes a transcript.
type Options struct {
	// ToolCalls is how many tool calls the session makes (the last task
	// ends once it is reached).
	ToolCalls int
	// Scale multiplies the size of the large outputs (source files,
	// passing test runs).
	Scale float64
}

// Standard is about 300 messages, 120 tool calls and 250k to 400k o200k
// tokens.
func Standard() Options { return Options{ToolCalls: 122, Scale: 1.45} }

// Long is about 1M o200k tokens.
func Long() Options { return Options{ToolCalls: 300, Scale: 1.75} }

// Transcript is a generated session.
type Transcript struct {
	Seed      uint64
	Labels    []Label
	ToolCalls int
	msgs      []message
}

// line is one line of a tool output with the class of its place ("" for
// a line that carries no labelled identifier).
type line struct {
	text  string
	class Class
}

type arg struct{ key, val string }

type call struct {
	id, name string
	args     []arg
}

type message struct {
	role    string // system, user, assistant or tool
	text    string
	calls   []call
	callID  string // of a tool message
	isError bool   // of a tool message: the output reports a failure
	lines   []line // of a tool message
}

// Messages is the number of messages in the OpenAI form.
func (t *Transcript) Messages() int { return len(t.msgs) }

// OpenAI returns the session as an OpenAI Chat Completions message
// array, the system prompt first.
func (t *Transcript) OpenAI() []byte {
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type tc struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	type msg struct {
		Role       string  `json:"role"`
		Content    *string `json:"content"`
		ToolCalls  []tc    `json:"tool_calls,omitempty"`
		ToolCallID string  `json:"tool_call_id,omitempty"`
	}
	out := make([]msg, 0, len(t.msgs))
	for _, m := range t.msgs {
		o := msg{Role: m.role, ToolCallID: m.callID}
		s := m.content()
		if s != "" || m.role != "assistant" {
			o.Content = &s
		}
		for _, c := range m.calls {
			o.ToolCalls = append(o.ToolCalls, tc{ID: c.id, Type: "function", Function: fn{Name: c.name, Arguments: string(c.argsJSON())}})
		}
		out = append(out, o)
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err)
	}
	return b
}

// Anthropic returns the session as an Anthropic Messages request body:
// the system prompt in "system", the tool results of one assistant turn
// in the next user message (with the user's text after them when the
// user speaks right after a tool round), and max_tokens 16000.
func (t *Transcript) Anthropic() []byte {
	type blk struct {
		Type      string          `json:"type"`
		Text      string          `json:"text,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Input     json.RawMessage `json:"input,omitempty"`
		ToolUseID string          `json:"tool_use_id,omitempty"`
		Content   string          `json:"content,omitempty"`
		IsError   bool            `json:"is_error,omitempty"`
	}
	type msg struct {
		Role    string `json:"role"`
		Content []blk  `json:"content"`
	}
	var system string
	var out []msg
	add := func(role string, b blk) {
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, b)
			return
		}
		out = append(out, msg{Role: role, Content: []blk{b}})
	}
	for _, m := range t.msgs {
		switch m.role {
		case "system":
			system = m.text
		case "user":
			add("user", blk{Type: "text", Text: m.text})
		case "tool":
			add("user", blk{Type: "tool_result", ToolUseID: m.callID, Content: m.content(), IsError: m.isError})
		case "assistant":
			if m.text != "" {
				add("assistant", blk{Type: "text", Text: m.text})
			}
			for _, c := range m.calls {
				add("assistant", blk{Type: "tool_use", ID: c.id, Name: c.name, Input: c.argsJSON()})
			}
		}
	}
	b, err := json.Marshal(struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		System    string `json:"system"`
		Messages  []msg  `json:"messages"`
	}{"claude-sonnet-4-5", 16000, system, out})
	if err != nil {
		panic(err)
	}
	return b
}

func (m message) content() string {
	if m.role != "tool" {
		return m.text
	}
	var b strings.Builder
	for i, l := range m.lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(l.text)
	}
	return b.String()
}

func (c call) argsJSON() json.RawMessage {
	var b strings.Builder
	b.WriteByte('{')
	for i, a := range c.args {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(a.key)
		v, _ := json.Marshal(a.val)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

// writes reports whether a call writes a file (its arguments are a
// file_written place).
func (c call) writes() bool { return c.name == "write_file" || c.name == "edit_file" }

// Verify checks the labels against the transcript: every label occurs,
// as a whole token (not inside a longer run of letters and digits), in
// at least one place of its class, and in no place of another class. A
// place is a user message (user_turn), a line of a tool output (its
// class, or none for filler), the arguments of a call that writes
// (file_written), and the assistant's text and the other calls'
// arguments, where only file_written identifiers (paths of files the
// session reads and then edits) may occur.
func (t *Transcript) Verify() error {
	type place struct {
		text  string
		class Class // "" for filler and the assistant's side
		where string
	}
	var places []place
	for i, m := range t.msgs {
		where := fmt.Sprintf("message %d", i)
		switch m.role {
		case "user":
			places = append(places, place{m.text, UserTurn, where})
		case "system", "assistant":
			places = append(places, place{m.text, "", where})
			for _, c := range m.calls {
				cl := Class("")
				if c.writes() {
					cl = FileWritten
				}
				for _, a := range c.args {
					places = append(places, place{a.val, cl, where + " " + c.name + "." + a.key})
				}
			}
		case "tool":
			for j, l := range m.lines {
				places = append(places, place{l.text, l.class, fmt.Sprintf("%s line %d", where, j+1)})
			}
		}
	}
	seen := map[string]bool{}
	for _, l := range t.Labels {
		if seen[l.Text] {
			return fmt.Errorf("label %q appears twice", l.Text)
		}
		seen[l.Text] = true
		found := false
		for _, p := range places {
			if !ContainsToken(p.text, l.Text) {
				continue
			}
			switch {
			case p.class == l.Class:
				found = true
			case p.class == "" && l.Class == FileWritten:
			default:
				cl := p.class
				if cl == "" {
					cl = "unlabelled"
				}
				return fmt.Errorf("%s identifier %q occurs in a %s place (%s)", l.Class, l.Text, cl, p.where)
			}
		}
		if !found {
			return fmt.Errorf("%s identifier %q occurs in no %s place", l.Class, l.Text, l.Class)
		}
	}
	return nil
}

// ContainsToken reports whether s holds id with no letter, digit or
// underscore right before or after it (so E1234 is not found in E12345, nor a hash in a
// longer one).
func ContainsToken(s, id string) bool {
	if id == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(s[i:], id)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(id)
		if (j == 0 || !alnum(s[j-1]) || !alnum(id[0])) && (end == len(s) || !alnum(s[end]) || !alnum(id[len(id)-1])) {
			return true
		}
		i = j + 1
	}
}

func alnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// Counts returns how many labels each class has.
func (t *Transcript) Counts() map[Class]int {
	n := map[Class]int{}
	for _, l := range t.Labels {
		n[l.Class]++
	}
	return n
}

// Generate builds the session for seed.
func Generate(seed uint64, o Options) *Transcript {
	if o.ToolCalls <= 0 {
		o = Standard()
	}
	if o.Scale <= 0 {
		o.Scale = 1
	}
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x5eed_e71d)), o: o, used: map[string]bool{}, labels: map[string]Class{}}
	g.t = &Transcript{Seed: seed}
	g.setup()
	g.session()
	return g.t
}
