package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/checkpoint"
)

// compactBody is what both compaction routes take.
type compactBody struct {
	Provider string          `json:"provider,omitempty" enum:"openai,anthropic" doc:"Shape of the message list (default openai)."`
	Messages json.RawMessage `json:"messages" doc:"The message list: a JSON array of messages, or the request object holding messages (and system for Anthropic). What strata does not change comes back byte for byte."`
	Force    bool            `json:"force,omitempty" doc:"Compact whatever the threshold (still at a user-turn boundary)."`
	// Per-request overrides of the server's thresholds.
	Threshold        int  `json:"threshold,omitempty" minimum:"1" doc:"Compact when the estimated input plus output headroom exceeds this many tokens."`
	KeepRecentTokens int  `json:"keep_recent_tokens,omitempty" minimum:"1" doc:"Recent history kept verbatim, in tokens."`
	SystemTokens     int  `json:"system_tokens,omitempty" minimum:"0" doc:"Tokens the request carries beside the list (a system prompt or tools it does not hold)."`
	NoRemember       bool `json:"no_remember,omitempty" doc:"With a conversation: do not append the compacted span to its turns (the checkpoint is still kept)."`
}

type compactIn struct {
	Body compactBody
}

type compactConvIn struct {
	ID   string `path:"id" maxLength:"256" doc:"The conversation whose checkpoint and counts are kept, and whose turns receive the compacted span."`
	Body compactBody
}

type compactOut struct {
	Stats    compact.Stats   `json:"stats"`
	Messages json.RawMessage `json:"messages" doc:"The list to send, in the shape it came in."`
}

// registerCompact registers the compaction of an agent's message list:
// stateless, and with a conversation whose state is kept.
func (s *Server) registerCompact() {
	huma.Register(s.api, s.op(http.MethodPost, "/v1/compact", "compact",
		"Compact an agent's message list: prune old tool output, checkpoint older history (stateless)"),
		func(ctx context.Context, in *compactIn) (*body[compactOut], error) {
			return s.compact(ctx, in.Body, "")
		})
	huma.Register(s.api, s.op(http.MethodPost, "/v1/conversations/{id}/compact", "compact-conversation",
		"Compact an agent's message list, keeping the conversation's checkpoint and remembering the compacted span"),
		func(ctx context.Context, in *compactConvIn) (*body[compactOut], error) {
			if err := strata.ValidateConversationID(in.ID); err != nil {
				return nil, s.httpError(ctx, err)
			}
			return s.compact(ctx, in.Body, in.ID)
		})
}

// compact compacts b's list; with a conversation, its compaction state
// is loaded and saved in the request's namespace and, unless
// b.NoRemember, the compacted span is appended to its turns first.
func (s *Server) compact(ctx context.Context, b compactBody, conv string) (*body[compactOut], error) {
	if b.Provider == "" {
		b.Provider = string(compact.OpenAI)
	}
	p, err := compact.ParseProvider(b.Provider)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	tr, err := compact.Parse(p, b.Messages)
	if err != nil {
		return nil, s.httpError(ctx, strata.Errorf(strata.ErrorCode(err), "messages: %v", err))
	}
	cfg := s.opt.Compact
	if b.Threshold > 0 {
		cfg.CompactionThreshold = b.Threshold
	}
	if b.KeepRecentTokens > 0 {
		cfg.KeepRecentTokens = b.KeepRecentTokens
	}
	if err := cfg.Validate(); err != nil {
		return nil, s.httpError(ctx, err)
	}
	m := s.memory(ctx)
	tok := m.Tokenizer()
	opt := compact.Options{Config: cfg, Tokenizer: tok, Checkpointer: s.checkpointer}
	remembered := 0
	if conv != "" && !b.NoRemember {
		opt.PreCompact = compact.Hooks(compact.Remember(m, conv, nil), compact.Counter(&remembered))
	}
	c, err := compact.New(opt)
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	req := compact.Request{Transcript: tr, Force: b.Force, SystemTokens: b.SystemTokens}
	var res compact.Result
	if conv != "" {
		res, err = c.CompactConversation(ctx, compact.StoreState{Store: m.Store(), Namespace: m.Namespace()}, conv, req)
	} else {
		res, err = c.Compact(ctx, req)
	}
	if err != nil {
		return nil, s.httpError(ctx, err)
	}
	st := compact.NewStats(p, tok.Name(), conv, res, remembered)
	return &body[compactOut]{compactOut{st, res.Transcript.JSON()}}, nil
}

// defaultCheckpointer writes extractive checkpoints counted with tok.
func defaultCheckpointer(tok strata.Tokenizer) (compact.Checkpointer, error) {
	return checkpoint.New(checkpoint.Options{Tokenizer: tok})
}
