package compact

import "context"

// Stats is what one compaction did, in the shape 'strata compact --stats'
// and the server's compact routes report it.
type Stats struct {
	Provider          string  `json:"provider"`
	Conversation      string  `json:"conversation,omitempty"`
	Tokenizer         string  `json:"tokenizer"`
	TokensBefore      int     `json:"tokens_before"`
	TokensAfter       int     `json:"tokens_after"`
	Factor            float64 `json:"factor"`
	ResultsTrimmed    int     `json:"results_trimmed"`
	ResultsCleared    int     `json:"results_cleared"`
	CharsRemoved      int     `json:"chars_removed"`
	Compacted         bool    `json:"compacted"`
	Reason            string  `json:"reason,omitempty"`
	Cut               int     `json:"cut_index"`
	MessagesCompacted int     `json:"messages_compacted"`
	IdentifiersKept   int     `json:"identifiers_kept"`
	Mode              string  `json:"mode,omitempty"`
	Update            bool    `json:"update"`
	Fallback          bool    `json:"fallback"`
	Error             string  `json:"error,omitempty"`
	// ModelFallback says why a configured model's checkpoint was not used
	// and the extractive one was (the call failed, or its reply was not a
	// checkpoint); "" when the model's was used or there is no model.
	ModelFallback   string `json:"model_fallback,omitempty"`
	CompactionCount int    `json:"compaction_count"`
	// TurnsRemembered counts the messages of the compacted span handed to
	// memory as turns (see Remember); 0 without a conversation.
	TurnsRemembered int `json:"turns_remembered"`
}

// NewStats reports res, a compaction of a list of provider p's shape
// counted with the tokenizer named tokenizer, of conversation (or ""),
// which handed remembered messages to memory.
func NewStats(p Provider, tokenizer, conversation string, res Result, remembered int) Stats {
	st := Stats{Provider: string(p), Conversation: conversation, Tokenizer: tokenizer,
		TokensBefore: res.TokensBefore, TokensAfter: res.TokensAfter, Factor: res.Factor,
		ResultsTrimmed: res.Prune.Trimmed, ResultsCleared: res.Prune.Cleared, CharsRemoved: res.Prune.CharsRemoved,
		Compacted: res.Compacted, Reason: res.Reason, Cut: res.Cut, MessagesCompacted: res.MessagesCompacted,
		IdentifiersKept: res.Identifiers, Mode: res.Mode, Update: res.Update, Fallback: res.Fallback,
		CompactionCount: res.State.CompactionCount, TurnsRemembered: remembered,
		ModelFallback: res.Checkpoint.Fallback}
	if res.Err != nil {
		st.Error = res.Err.Error()
	}
	return st
}

// Counter returns a hook that adds the number of messages of each span to
// *n: put after Remember in Hooks, it counts what memory received.
func Counter(n *int) Hook {
	return func(_ context.Context, span Span) error {
		*n += len(span.Messages)
		return nil
	}
}
