package strata

import "context"

// Summarizer writes the summary of one node. For level 1 it is given the
// span's turns; for higher levels, the node's children. It should keep the
// summary within req.Budget tokens as counted by req.Tokenizer; the engine
// records a summary that is still over budget with status over_budget.
type Summarizer interface {
	Summarize(ctx context.Context, req SummaryRequest) (Summary, error)
}

// SummaryRequest is one node to summarize.
type SummaryRequest struct {
	Conversation string
	Level        int    // pyramid level of the node, 1 = finest
	LevelName    string // e.g. "micro"
	Budget       int    // token budget of the summary text
	Turns        []Turn // level 1: the span's turns, in order
	Children     []Node // level > 1: the child nodes, in order
	Tokenizer    Tokenizer
	// WantIdentifiers asks for Summary.Identifiers (it costs a little).
	WantIdentifiers bool
}

// Summary is what a Summarizer returns.
type Summary struct {
	Text   string
	Facts  []string
	Themes []string
	Method string
	// Derived reports that every word of Text comes from the children's
	// summaries or the span's turns (see Node.Derived).
	Derived bool
	// Identifiers are the names, numbers, dates, paths, URLs and code
	// identifiers of the span that Text keeps, best ranked first; set when
	// the request asks (the extractive summarizer knows them). A model's
	// summary is checked against them.
	Identifiers []string
}

// Tokenizer counts tokens the way a model will see them.
type Tokenizer interface {
	// Name is the encoding name, e.g. "o200k_base" or "chars/4".
	Name() string
	// Count returns the number of tokens in s. Safe for concurrent use.
	Count(s string) int
}

// CharEstimator estimates tokens as characters / 4, rounded up. It is only
// used when asked for by name ("chars/4"): budgets counted with it are
// estimates, not guarantees for any real model.
type CharEstimator struct{}

// Name returns "chars/4".
func (CharEstimator) Name() string { return "chars/4" }

// Count returns ceil(runes/4).
func (CharEstimator) Count(s string) int {
	n := 0
	for range s {
		n++
	}
	return (n + 3) / 4
}
