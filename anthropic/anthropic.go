// Package anthropic is a strata.Completer over Anthropic's Messages API,
// built on the official Anthropic Go SDK.
//
// A Client sends one system prompt and one user message per call and makes a
// single attempt: the SDK's own retries are turned off, and every failure is
// reported as a *strata.ProviderError whose Retryable field tells the engine
// whether another attempt may succeed.
//
// The SDK speaks API version 2026-10-21, which removed the sampling
// parameters (temperature, top_p, top_k): a request that sends any of them
// is refused with a 400, so a Client sends none and the model samples with
// its defaults.
package anthropic

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/internal/retryhttp"
)

// Defaults applied by New to the zero fields of a Config.
const (
	DefaultBaseURL   = "https://api.anthropic.com"
	DefaultTimeout   = 60 * time.Second
	DefaultMaxTokens = 2048
)

// provider names this package in errors.
const provider = "anthropic"

// Config configures a Client.
type Config struct {
	// BaseURL is the root of the API, without the /v1 path the Messages
	// endpoint lives under; DefaultBaseURL when empty.
	BaseURL string
	// APIKey is sent in the x-api-key header. It is required unless BaseURL
	// points at a loopback address (a local proxy or a test server).
	APIKey string
	// Model is the model asked when a request names none. Required.
	Model string
	// Timeout bounds each call; DefaultTimeout when 0. A deadline on the
	// caller's context applies as well.
	Timeout time.Duration
	// MaxTokens caps the reply when a request sets no cap of its own (the
	// Messages API requires one); DefaultMaxTokens when 0.
	MaxTokens int
	// HTTPClient sends the requests; http.DefaultClient when nil.
	HTTPClient *http.Client

	// envErr is what FromEnv could not read, reported by New.
	envErr error
}

// FromEnv reads a Config from the environment through getenv:
// STRATA_LLM_BASE_URL, STRATA_LLM_MODEL, STRATA_LLM_API_KEY (or, when that
// is empty, ANTHROPIC_API_KEY) and STRATA_LLM_TIMEOUT (a Go duration such as
// "90s", or a number of seconds). It reports false when no model is set. A
// timeout it cannot read is reported by New.
func FromEnv(getenv func(string) string) (Config, bool) {
	cfg := Config{
		BaseURL: strings.TrimSpace(getenv("STRATA_LLM_BASE_URL")),
		Model:   strings.TrimSpace(getenv("STRATA_LLM_MODEL")),
		APIKey:  strings.TrimSpace(getenv("STRATA_LLM_API_KEY")),
	}
	if cfg.Model == "" {
		return Config{}, false
	}
	if cfg.APIKey == "" {
		cfg.APIKey = strings.TrimSpace(getenv("ANTHROPIC_API_KEY"))
	}
	if s := strings.TrimSpace(getenv("STRATA_LLM_TIMEOUT")); s != "" {
		d, err := parseTimeout(s)
		if err != nil {
			cfg.envErr = strata.Errorf(strata.EINVALID, "anthropic: STRATA_LLM_TIMEOUT %q is not a duration", s)
		}
		cfg.Timeout = d
	}
	return cfg, true
}

// parseTimeout reads a Go duration or a number of seconds.
func parseTimeout(s string) (time.Duration, error) {
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if secs < 0 {
			return 0, fmt.Errorf("negative timeout")
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d < 0 {
		return 0, fmt.Errorf("negative timeout")
	}
	return d, err
}

// Client is a strata.Completer over the Messages API. It is safe for
// concurrent use.
type Client struct {
	sdk       sdk.Client
	baseURL   string
	apiKey    string
	model     string
	timeout   time.Duration
	maxTokens int
}

var _ strata.Completer = (*Client)(nil)

// New returns a Client for cfg. It returns EINVALID, naming the field, when
// cfg lacks a model, has a base URL that is not an http(s) URL, lacks an API
// key for a remote base URL, or has a negative timeout or token cap.
func New(cfg Config) (*Client, error) {
	if cfg.envErr != nil {
		return nil, cfg.envErr
	}
	model := strings.TrimSpace(cfg.Model)
	if model == "" {
		return nil, strata.Errorf(strata.EINVALID, "anthropic: Model is required")
	}
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, strata.Errorf(strata.EINVALID, "anthropic: BaseURL %q is not an http or https URL", base)
	}
	if cfg.APIKey == "" && !isLoopback(u.Hostname()) {
		return nil, strata.Errorf(strata.EINVALID, "anthropic: APIKey is required for %s", base)
	}
	if cfg.Timeout < 0 {
		return nil, strata.Errorf(strata.EINVALID, "anthropic: Timeout %v is negative", cfg.Timeout)
	}
	if cfg.MaxTokens < 0 {
		return nil, strata.Errorf(strata.EINVALID, "anthropic: MaxTokens %d is negative", cfg.MaxTokens)
	}
	c := &Client{
		baseURL:   base,
		apiKey:    cfg.APIKey,
		model:     model,
		timeout:   cfg.Timeout,
		maxTokens: cfg.MaxTokens,
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.maxTokens == 0 {
		c.maxTokens = DefaultMaxTokens
	}
	opts := []option.RequestOption{
		// Everything comes from cfg: no ANTHROPIC_* variable, profile file
		// or credential chain of the SDK's own.
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		// x-api-key is the header the Messages API documents and the one
		// Anthropic-compatible proxies read; the SDK's credential options
		// would send a bearer token instead.
		opts = append(opts, option.WithHeader("x-api-key", cfg.APIKey))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	c.sdk = sdk.NewClient(opts...)
	return c, nil
}

// isLoopback reports whether host names this machine.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Name returns "anthropic" and the base URL.
func (c *Client) Name() string { return provider + " " + c.baseURL }

// Complete sends req as one Messages API call: req.System as the system
// prompt, req.User as the only user message, and req.MaxTokens (or the
// Client's default cap) as max_tokens. It makes one attempt and returns a
// *strata.ProviderError on failure; when ctx ends first, the error wraps
// ctx.Err() and is not retryable.
func (c *Client) Complete(ctx context.Context, req strata.CompletionRequest) (strata.Completion, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return strata.Completion{}, &strata.ProviderError{Provider: provider, Err: err}
	}
	model := req.Model
	if model == "" {
		model = c.model
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = c.maxTokens
	}
	params := sdk.MessageNewParams{
		Model:     model,
		MaxTokens: int64(maxTokens),
		Messages:  []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock(req.User))},
	}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System}}
	}

	callCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	// The SDK hands over the raw body, so that a reply that cannot be read
	// is told apart from a connection that broke while reading it.
	var body []byte
	_, err := c.sdk.Messages.New(callCtx, params,
		option.WithResponseBodyInto(&body),
		// A request timeout of our own also keeps the SDK from refusing
		// large caps without streaming.
		option.WithRequestTimeout(c.timeout),
	)
	if err != nil {
		return strata.Completion{}, c.callError(ctx, err)
	}
	out, err := c.reply(body, model)
	if err != nil {
		return strata.Completion{}, err
	}
	out.Elapsed = time.Since(start)
	return out, nil
}

// reply reads a Messages API reply.
func (c *Client) reply(body []byte, model string) (strata.Completion, error) {
	if !json.Valid(body) {
		return strata.Completion{}, c.unreadable("reply is not JSON: %s", snippet(body))
	}
	var msg sdk.Message
	if err := json.Unmarshal(body, &msg); err != nil {
		return strata.Completion{}, c.unreadable("reply is not a message: %v", err)
	}
	var text strings.Builder
	found := false
	var kinds []string
	for _, block := range msg.Content {
		kinds = append(kinds, block.Type)
		if block.Type == "text" {
			text.WriteString(block.Text)
			found = true
		}
	}
	if !found {
		return strata.Completion{}, c.unreadable("reply has no text content block (blocks %v, stop_reason %q)", kinds, msg.StopReason)
	}
	out := strata.Completion{
		Text:  text.String(),
		Model: msg.Model,
		// Input tokens read from or written to the prompt cache are
		// counted apart; all of them were input.
		InputTokens:  int(msg.Usage.InputTokens + msg.Usage.CacheCreationInputTokens + msg.Usage.CacheReadInputTokens),
		OutputTokens: int(msg.Usage.OutputTokens),
		FinishReason: finishReason(string(msg.StopReason)),
	}
	if out.Model == "" {
		out.Model = model
	}
	return out, nil
}

// unreadable returns the error for a reply strata cannot use; another
// attempt would not help.
func (c *Client) unreadable(format string, args ...any) error {
	return &strata.ProviderError{Provider: provider, Msg: c.redact(fmt.Sprintf(format, args...))}
}

// finishReason normalizes a stop_reason to strata's words.
func finishReason(stop string) string {
	switch stop {
	case "end_turn", "stop_sequence":
		return "stop"
	case "max_tokens":
		return "length"
	}
	return stop
}

// callError classifies a failed call. ctx is the caller's context.
func (c *Client) callError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return &strata.ProviderError{Provider: provider, Err: ctxErr}
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return c.statusError(apiErr)
	}
	pe := &strata.ProviderError{Provider: provider, Err: c.redactErr(err)}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		pe.Retryable = true
		pe.Msg = fmt.Sprintf("no reply within %v", c.timeout)
	case isCertificateError(err):
		pe.Msg = c.redact(err.Error())
	case retryhttp.Transient(err):
		pe.Retryable = true
		pe.Msg = c.redact(err.Error())
	default:
		// The SDK refused to send the request (an option or a parameter
		// it rejects): another attempt would fail the same way.
		pe.Msg = c.redact(err.Error())
	}
	return pe
}

// statusError classifies a reply with an error status.
func (c *Client) statusError(apiErr *sdk.Error) error {
	status := apiErr.StatusCode
	pe := &strata.ProviderError{
		Provider:  provider,
		Status:    status,
		Retryable: status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500,
		Err:       c.redactErr(apiErr),
	}
	if apiErr.Response != nil {
		pe.RetryAfter = retryhttp.RetryAfter(apiErr.Response.Header, time.Now())
	}
	typ, msg := string(apiErr.Type()), apiErr.Message
	switch {
	case typ != "" && msg != "":
		pe.Msg = typ + ": " + msg
	case msg != "":
		pe.Msg = msg
	case typ != "":
		pe.Msg = typ
	case apiErr.RawJSON() != "":
		pe.Msg = snippet([]byte(apiErr.RawJSON()))
	default:
		pe.Msg = strings.ToLower(http.StatusText(status))
	}
	pe.Msg = c.redact(pe.Msg)
	return pe
}

// isCertificateError reports whether err is a TLS certificate the client
// does not trust, which no retry will change.
func isCertificateError(err error) bool {
	var certErr *tls.CertificateVerificationError
	return errors.As(err, &certErr)
}

// redact removes the API key from s.
func (c *Client) redact(s string) string {
	if c.apiKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.apiKey, "[redacted]")
}

// redactErr returns err, or, when its text holds the API key, an error with
// the same text less the key. The replacement does not unwrap to err, so
// that the key cannot be reached through the chain either.
func (c *Client) redactErr(err error) error {
	if c.apiKey == "" || !strings.Contains(err.Error(), c.apiKey) {
		return err
	}
	return errors.New(c.redact(err.Error()))
}

// snippet returns the start of a body for an error message.
func snippet(body []byte) string {
	const limit = 200
	s := strings.TrimSpace(string(body))
	if s == "" {
		return "empty body"
	}
	if len(s) > limit {
		s = s[:limit] + "..."
	}
	return strconv.Quote(s)
}
