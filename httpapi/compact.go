package httpapi

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/compact"
	"github.com/strata-memory/strata/compact/checkpoint"
	"github.com/strata-memory/strata/httpapi/wire"
)

type compactIn struct {
	Body wire.CompactRequest
}

type compactConvIn struct {
	ID   string `path:"id" maxLength:"256" doc:"The conversation whose checkpoint and counts are kept, and whose turns receive the compacted span."`
	Body wire.CompactRequest
}

// registerCompact registers the compaction of an agent's message list:
// stateless, and with a conversation whose state is kept.
func (s *Server) registerCompact() {
	huma.Register(s.api, s.op(http.MethodPost, "/v1/compact", "compact",
		"Compact an agent's message list: prune old tool output, checkpoint older history (stateless)"), s.compactList)
	huma.Register(s.api, s.op(http.MethodPost, "/v1/conversations/{id}/compact", "compact-conversation",
		"Compact an agent's message list, keeping the conversation's checkpoint and remembering the compacted span"),
		s.compactConversation)
}

// compactList compacts a message list with no state kept.
func (s *Server) compactList(ctx context.Context, in *compactIn) (*body[wire.CompactResult], error) {
	return s.compact(ctx, in.Body, "")
}

// compactConversation compacts a message list as part of a conversation.
func (s *Server) compactConversation(ctx context.Context, in *compactConvIn) (*body[wire.CompactResult], error) {
	if err := strata.ValidateConversationID(in.ID); err != nil {
		return nil, s.httpError(ctx, err)
	}
	return s.compact(ctx, in.Body, in.ID)
}

// compact compacts b's list; with a conversation, its compaction state
// is loaded and saved in the request's namespace and, unless
// b.NoRemember, the compacted span is appended to its turns first.
func (s *Server) compact(ctx context.Context, b wire.CompactRequest, conv string) (*body[wire.CompactResult], error) {
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
	return &body[wire.CompactResult]{wire.CompactResult{Stats: st, Messages: res.Transcript.JSON()}}, nil
}

// defaultCheckpointer writes extractive checkpoints counted with tok.
func defaultCheckpointer(tok strata.Tokenizer) (compact.Checkpointer, error) {
	return checkpoint.New(checkpoint.Options{Tokenizer: tok})
}
