package strata

import (
	"context"
	"fmt"
	"time"
)

// Completer is a chat model behind an API: a system and a user prompt in,
// text out. The provider packages (openai, anthropic) implement it over
// their official SDKs; the engine builds summarization on it (prompts,
// budgets, retries, identifier checks, fallback), so a provider is a thin
// adapter. A Completer makes one attempt per call: it does not retry, and
// reports failures as *ProviderError so that the engine can decide.
type Completer interface {
	// Name names the provider and its endpoint for logs and stats, e.g.
	// "openai http://127.0.0.1:11434/v1".
	Name() string
	Complete(ctx context.Context, req CompletionRequest) (Completion, error)
}

// CompletionRequest is one call to a chat model.
type CompletionRequest struct {
	Model     string // "" means the Completer's default model
	System    string
	User      string
	MaxTokens int // cap on the reply's tokens; 0 leaves the provider's default
}

// Completion is a chat model's reply.
type Completion struct {
	Text         string
	Model        string // the model that answered, as the provider reports it
	InputTokens  int    // as the provider reports them (0 if it does not)
	OutputTokens int
	// FinishReason is why the model stopped, normalized: "stop", "length"
	// (it hit MaxTokens), or the provider's own word.
	FinishReason string
	Elapsed      time.Duration
}

// ProviderError is a failed call to a model provider. Retryable is true for
// failures a later attempt may not meet: rate limits (429), server errors
// (5xx), timeouts and broken connections; false for requests the provider
// refuses (400, 401, 403, 404) and for replies strata cannot read.
type ProviderError struct {
	Provider  string
	Status    int // HTTP status, 0 if none was received
	Retryable bool
	// RetryAfter is the wait the provider asked for, if it said.
	RetryAfter time.Duration
	Msg        string
	Err        error
}

func (e *ProviderError) Error() string {
	s := e.Provider + ": "
	if e.Status != 0 {
		s += fmt.Sprintf("HTTP %d: ", e.Status)
	}
	s += e.Msg
	if e.Err != nil && e.Msg == "" {
		s += e.Err.Error()
	}
	return s
}

func (e *ProviderError) Unwrap() error { return e.Err }
