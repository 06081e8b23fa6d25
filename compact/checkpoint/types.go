package checkpoint

import "github.com/strata-memory/strata"

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
	// CallID pairs a tool call with its result (the provider's tool call
	// id). When it is "", a result is paired with the oldest unanswered
	// call of the same Name.
	CallID string
}

// Identifier is one entry of the identifier ledger: something exact (a
// path, a command, a URL, a number with its unit, an error message, a
// function or variable name, an id) that a continuing agent needs
// verbatim.
type Identifier struct {
	Kind string `json:"kind"` // path, command, url, number, error, symbol, id
	Text string `json:"text"`
}

// The kinds of identifiers.
const (
	KindPath    = "path"    // a file or directory path, an API route
	KindCommand = "command" // a shell command as it was run
	KindURL     = "url"     // a URL, a host:port
	KindNumber  = "number"  // a number with its unit or currency: 30s, 512 MB, $4,500
	KindError   = "error"   // an error message line
	KindSymbol  = "symbol"  // a function, type, variable or test name
	KindID      = "id"      // a hash, issue or PR number, UUID, version, port, key=value
)

// Kinds lists the kinds of identifiers in the order Critical Context shows
// them.
var Kinds = []string{KindPath, KindCommand, KindError, KindSymbol, KindURL, KindID, KindNumber}

// Result is a written checkpoint.
type Result struct {
	// Text is the checkpoint in the six-section format (Goal, Constraints
	// & Preferences, Progress with Done and In Progress, Key Decisions,
	// Next Steps, Critical Context).
	Text string
	// Ledger is the identifiers of the ledger that Text carries, best
	// ranked first: those its Critical Context section lists, and those
	// the sections above already quote (so that they are not listed
	// twice).
	Ledger []Identifier
	// Mode is "llm" when a model wrote the prose, "extractive" otherwise.
	Mode string
	// Update is true when Text merges a previous checkpoint.
	Update bool
	// Completion is the model call, when one was made (for the call log).
	Completion *strata.Completion

	// Calls is every model call made, in order: one, or two when the
	// first reply was not in the format and a repair was asked for.
	// Completion is the last of them.
	Calls []strata.Completion
	// Omitted counts the ledger's identifiers that did not fit the budget.
	Omitted int
	// Tokens is the size of Text as counted by the writer's tokenizer.
	Tokens int
	// Fallback says why a model was configured but Text is extractive
	// (the call failed, or the reply was not a checkpoint even after a
	// repair); "" otherwise.
	Fallback string
}

// Modes of a Result.
const (
	ModeLLM        = "llm"
	ModeExtractive = "extractive"
)
