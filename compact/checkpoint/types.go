package checkpoint

import "strata"

// Entry is one message of the span being compacted, flattened to text for
// the checkpoint writer. Package compact builds entries from OpenAI and
// Anthropic messages; a message with several blocks gives several entries.
type Entry struct {
	Role string // "user", "assistant", "system" or "tool"
	// Kind is "text", "tool_call", "tool_result" or "thinking".
	Kind string
	// Name is the tool's name for a tool call or result ("" if unknown).
	Name string
	// Text is the content: the text, a tool call's arguments (JSON as the
	// model wrote them) or a tool result's output.
	Text string
	// IsError marks a tool result the tool reported as an error.
	IsError bool
}

// Identifier is one entry of the identifier ledger: something exact (a
// path, a command, a URL, a number with its unit, an error message, a
// function or variable name, an id) that a continuing agent needs
// verbatim.
type Identifier struct {
	Kind string `json:"kind"` // path, command, url, number, error, symbol, id
	Text string `json:"text"`
}

// Result is a written checkpoint.
type Result struct {
	// Text is the checkpoint in the six-section format (Goal, Constraints
	// & Preferences, Progress with Done and In Progress, Key Decisions,
	// Next Steps, Critical Context).
	Text string
	// Ledger is the identifiers Text carries in its Critical Context
	// section, best ranked first.
	Ledger []Identifier
	// Mode is "llm" when a model wrote the prose, "extractive" otherwise.
	Mode string
	// Update is true when Text merges a previous checkpoint.
	Update bool
	// Completion is the model call, when one was made (for the call log).
	Completion *strata.Completion
}
