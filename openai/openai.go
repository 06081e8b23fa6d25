package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/strata-memory/strata"
)

// DefaultBaseURL is the endpoint used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultTimeout bounds a call when Config.Timeout is zero.
const DefaultTimeout = 60 * time.Second

// provider names this package in *strata.ProviderError.
const provider = "openai"

// Config configures a Client.
type Config struct {
	// BaseURL is the API root, e.g. "http://127.0.0.1:11434/v1" for Ollama;
	// empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token. It may be empty for local servers,
	// in which case no Authorization header is sent.
	APIKey string
	// Model is the model used when a request does not name one. Required.
	Model string
	// Timeout bounds each call; 0 means DefaultTimeout. The caller's ctx
	// deadline applies as well, whichever comes first.
	Timeout time.Duration
	// HTTPClient, if set, carries the requests (tests use it).
	HTTPClient *http.Client

	// envErr is what FromEnv could not read, reported by New.
	envErr error
}

// Client is a strata.Completer over an OpenAI-compatible Chat Completions
// endpoint. It is safe for concurrent use.
type Client struct {
	chat    sdk.ChatCompletionService
	name    string
	model   string
	apiKey  string // kept only to scrub it from error messages
	timeout time.Duration
}

var _ strata.Completer = (*Client)(nil)

// New returns a Client for cfg. It returns EINVALID, naming the field, if
// Model is empty, BaseURL is not an http or https URL, Timeout is negative
// or APIKey holds characters that cannot be sent in a header, and EINVALID
// for a STRATA_LLM_TIMEOUT that FromEnv could not read.
func New(cfg Config) (*Client, error) {
	if cfg.envErr != nil {
		return nil, cfg.envErr
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, strata.Errorf(strata.EINVALID, "openai: Config.Model is required")
	}
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		shown := base
		if err == nil {
			shown = u.Redacted()
		}
		return nil, strata.Errorf(strata.EINVALID, "openai: Config.BaseURL %q is not an http or https URL", shown)
	}
	if cfg.Timeout < 0 {
		return nil, strata.Errorf(strata.EINVALID, "openai: Config.Timeout %v is negative", cfg.Timeout)
	}
	if strings.ContainsFunc(cfg.APIKey, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		// The key itself is never echoed.
		return nil, strata.Errorf(strata.EINVALID, "openai: Config.APIKey contains control characters")
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	// NewChatCompletionService, unlike sdk.NewClient, reads no OPENAI_*
	// environment variables: the Config is the whole configuration, so an
	// ambient OPENAI_API_KEY is never sent to a server it was not meant for.
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0), // the engine retries
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &Client{
		chat:    sdk.NewChatCompletionService(opts...),
		name:    provider + " " + u.Redacted(),
		model:   cfg.Model,
		apiKey:  cfg.APIKey,
		timeout: timeout,
	}, nil
}

// Name returns "openai" and the base URL, e.g.
// "openai http://127.0.0.1:11434/v1".
func (c *Client) Name() string { return c.name }

// Complete sends req as a system and a user message and returns the first
// choice's text. It makes one attempt and returns *strata.ProviderError
// when the call fails or the reply cannot be used; see the package
// documentation for which failures are retryable. A negative MaxTokens is
// EINVALID.
func (c *Client) Complete(ctx context.Context, req strata.CompletionRequest) (strata.Completion, error) {
	if req.MaxTokens < 0 {
		return strata.Completion{}, strata.Errorf(strata.EINVALID, "openai: MaxTokens %d is negative", req.MaxTokens)
	}
	model := req.Model
	if model == "" {
		model = c.model
	}
	params := sdk.ChatCompletionNewParams{
		Model:       model,
		Temperature: sdk.Float(0),
	}
	if req.System != "" {
		params.Messages = append(params.Messages, sdk.SystemMessage(req.System))
	}
	params.Messages = append(params.Messages, sdk.UserMessage(req.User))
	if req.MaxTokens > 0 {
		// max_tokens, not max_completion_tokens: see the package doc.
		params.MaxTokens = sdk.Int(int64(req.MaxTokens))
	}

	start := time.Now()
	callCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var (
		res  *http.Response
		body []byte
	)
	// The SDK hands over the raw body, which is decoded below, so that a
	// connection broken while reading (retryable) is told apart from a body
	// that is not a chat completion (not retryable).
	_, err := c.chat.New(callCtx, params,
		option.WithResponseInto(&res),
		option.WithResponseBodyInto(&body))
	if err != nil {
		return strata.Completion{}, c.callError(ctx, callCtx, res, err)
	}

	var reply sdk.ChatCompletion
	if err := json.Unmarshal(body, &reply); err != nil {
		msg := "reply body is empty"
		if len(bytes.TrimSpace(body)) > 0 {
			msg = fmt.Sprintf("reply is not a JSON chat completion (%v): %q", err, body)
		}
		return strata.Completion{}, c.replyError(res, msg, err)
	}
	if len(reply.Choices) == 0 {
		msg := "reply has no choices"
		if m := serverMessage(body); m != "" {
			msg += ": " + m
		}
		return strata.Completion{}, c.replyError(res, msg, nil)
	}
	choice := reply.Choices[0]
	finish := normalizeFinish(string(choice.FinishReason))
	if strings.TrimSpace(choice.Message.Content) == "" {
		msg := "reply has an empty message"
		switch {
		case choice.Message.Refusal != "":
			msg = "model refused: " + choice.Message.Refusal
		case finish != "":
			msg += " (finish_reason " + strconv.Quote(finish) + ")"
		}
		return strata.Completion{}, c.replyError(res, msg, nil)
	}
	if reply.Model != "" {
		model = reply.Model
	}
	return strata.Completion{
		Text:         choice.Message.Content,
		Model:        model,
		InputTokens:  int(reply.Usage.PromptTokens),
		OutputTokens: int(reply.Usage.CompletionTokens),
		FinishReason: finish,
		Elapsed:      time.Since(start),
	}, nil
}

// normalizeFinish maps a server's finish reason onto strata's words: "stop"
// for a natural end, "length" for hitting the token cap, and otherwise the
// server's own word, lower-cased.
func normalizeFinish(reason string) string {
	r := strings.ToLower(strings.TrimSpace(reason))
	switch r {
	case "stop", "eos", "end_turn", "stop_sequence":
		return "stop"
	case "length", "max_tokens":
		return "length"
	}
	return r
}
