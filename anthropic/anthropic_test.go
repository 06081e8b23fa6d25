package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

const testKey = "sk-ant-test-SECRET-0123456789"

// received is what the fake server saw of one request.
type received struct {
	method string
	path   string
	header http.Header
	body   map[string]any
}

// fake is a Messages API server on loopback that records each request and
// answers with handle.
type fake struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []received
}

func newFake(t *testing.T, handle http.HandlerFunc) *fake {
	t.Helper()
	f := &fake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		f.mu.Lock()
		f.reqs = append(f.reqs, received{method: r.Method, path: r.URL.Path, header: r.Header.Clone(), body: body})
		f.mu.Unlock()
		handle(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fake) requests() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.reqs...)
}

// newClient returns a Client for f with cfg's zero fields filled in.
func newClient(t *testing.T, f *fake, cfg Config) *Client {
	t.Helper()
	cfg.BaseURL = f.URL
	if cfg.Model == "" {
		cfg.Model = "claude-test"
	}
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// reply answers with status and a JSON body.
func reply(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

const okBody = `{"id":"msg_01","type":"message","role":"assistant","model":"claude-test-20260101",
"content":[{"type":"text","text":"Hello"},{"type":"text","text":", world"}],
"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":5}}`

func providerError(t *testing.T, err error) *strata.ProviderError {
	t.Helper()
	if err == nil {
		t.Fatal("err = nil, want a *strata.ProviderError")
	}
	var pe *strata.ProviderError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %T %v, want a *strata.ProviderError", err, err)
	}
	if pe.Provider != "anthropic" {
		t.Errorf("Provider = %q, want anthropic", pe.Provider)
	}
	return pe
}

func TestCompleteRequest(t *testing.T) {
	tests := []struct {
		name          string
		cfg           Config
		req           strata.CompletionRequest
		wantModel     string
		wantMaxTokens float64
		wantSystem    bool
	}{
		{
			name:          "defaults",
			req:           strata.CompletionRequest{System: "Summarize.", User: "a long day"},
			wantModel:     "claude-test",
			wantMaxTokens: DefaultMaxTokens,
			wantSystem:    true,
		},
		{
			name:          "configured cap",
			cfg:           Config{MaxTokens: 300},
			req:           strata.CompletionRequest{System: "Summarize.", User: "a long day"},
			wantModel:     "claude-test",
			wantMaxTokens: 300,
			wantSystem:    true,
		},
		{
			name:          "request overrides",
			cfg:           Config{MaxTokens: 300},
			req:           strata.CompletionRequest{Model: "claude-other", System: "Summarize.", User: "a long day", MaxTokens: 77},
			wantModel:     "claude-other",
			wantMaxTokens: 77,
			wantSystem:    true,
		},
		{
			name:          "no system prompt",
			req:           strata.CompletionRequest{User: "a long day"},
			wantModel:     "claude-test",
			wantMaxTokens: DefaultMaxTokens,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, reply(http.StatusOK, okBody))
			c := newClient(t, f, tt.cfg)
			if _, err := c.Complete(context.Background(), tt.req); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			reqs := f.requests()
			if len(reqs) != 1 {
				t.Fatalf("server got %d requests, want 1 (no retries)", len(reqs))
			}
			got := reqs[0]
			if got.method != http.MethodPost || got.path != "/v1/messages" {
				t.Errorf("request = %s %s, want POST /v1/messages", got.method, got.path)
			}
			if k := got.header.Get("X-Api-Key"); k != testKey {
				t.Errorf("x-api-key = %q, want the configured key", k)
			}
			if a := got.header.Get("Authorization"); a != "" {
				t.Errorf("Authorization = %q, want none (the key goes in x-api-key)", a)
			}
			if v := got.header.Get("Anthropic-Version"); !regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`).MatchString(v) {
				t.Errorf("anthropic-version = %q, want a date", v)
			}
			if m := got.body["model"]; m != tt.wantModel {
				t.Errorf("model = %v, want %q", m, tt.wantModel)
			}
			if n := got.body["max_tokens"]; n != tt.wantMaxTokens {
				t.Errorf("max_tokens = %v, want %v", n, tt.wantMaxTokens)
			}
			// API version 2026-10-21 refuses any sampling parameter.
			for _, key := range []string{"temperature", "top_p", "top_k", "stream"} {
				if v, ok := got.body[key]; ok {
					t.Errorf("body has %s = %v, want it absent", key, v)
				}
			}
			wantMessages := `[{"content":[{"text":"a long day","type":"text"}],"role":"user"}]`
			if s := mustJSON(t, got.body["messages"]); s != wantMessages {
				t.Errorf("messages = %s, want %s", s, wantMessages)
			}
			sys, ok := got.body["system"]
			switch {
			case tt.wantSystem && mustJSON(t, sys) != `[{"text":"Summarize.","type":"text"}]`:
				t.Errorf("system = %s, want one text block", mustJSON(t, sys))
			case !tt.wantSystem && ok:
				t.Errorf("system = %s, want it absent", mustJSON(t, sys))
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCompleteReply(t *testing.T) {
	tests := []struct {
		name string
		body string
		want strata.Completion
	}{
		{
			name: "text blocks",
			body: okBody,
			want: strata.Completion{Text: "Hello, world", Model: "claude-test-20260101", InputTokens: 12, OutputTokens: 5, FinishReason: "stop"},
		},
		{
			name: "thinking before text",
			body: `{"id":"msg_02","type":"message","role":"assistant","model":"claude-test-20260101",
"content":[{"type":"thinking","thinking":"Let me think about the day.","signature":"sig"},
{"type":"redacted_thinking","data":"opaque"},{"type":"text","text":"The day went well."}],
"stop_reason":"end_turn","usage":{"input_tokens":40,"output_tokens":90}}`,
			want: strata.Completion{Text: "The day went well.", Model: "claude-test-20260101", InputTokens: 40, OutputTokens: 90, FinishReason: "stop"},
		},
		{
			name: "max tokens",
			body: `{"id":"msg_03","type":"message","role":"assistant","model":"claude-test-20260101",
"content":[{"type":"text","text":"The day went"}],"stop_reason":"max_tokens","usage":{"input_tokens":40,"output_tokens":3}}`,
			want: strata.Completion{Text: "The day went", Model: "claude-test-20260101", InputTokens: 40, OutputTokens: 3, FinishReason: "length"},
		},
		{
			name: "stop sequence",
			body: `{"id":"msg_04","type":"message","role":"assistant","model":"claude-test-20260101",
"content":[{"type":"text","text":"Done"}],"stop_reason":"stop_sequence","stop_sequence":"END","usage":{"input_tokens":4,"output_tokens":1}}`,
			want: strata.Completion{Text: "Done", Model: "claude-test-20260101", InputTokens: 4, OutputTokens: 1, FinishReason: "stop"},
		},
		{
			name: "other stop reason and cached input",
			body: `{"id":"msg_05","type":"message","role":"assistant","model":"claude-test-20260101",
"content":[{"type":"text","text":"I can't help with that."}],"stop_reason":"refusal",
"usage":{"input_tokens":4,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":7}}`,
			want: strata.Completion{Text: "I can't help with that.", Model: "claude-test-20260101", InputTokens: 1104, OutputTokens: 7, FinishReason: "refusal"},
		},
		{
			name: "model not reported",
			body: `{"id":"msg_06","type":"message","role":"assistant",
"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`,
			want: strata.Completion{Text: "ok", Model: "claude-test", InputTokens: 1, OutputTokens: 1, FinishReason: "stop"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, reply(http.StatusOK, tt.body))
			c := newClient(t, f, Config{})
			got, err := c.Complete(context.Background(), strata.CompletionRequest{System: "s", User: "u"})
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if got.Elapsed <= 0 {
				t.Errorf("Elapsed = %v, want > 0", got.Elapsed)
			}
			got.Elapsed = 0
			if got != tt.want {
				t.Errorf("Complete = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestCompleteErrors(t *testing.T) {
	tests := []struct {
		name           string
		handle         http.HandlerFunc
		wantStatus     int
		wantRetryable  bool
		wantRetryAfter time.Duration
		wantMsg        string // a part of the error's text
	}{
		{
			name:           "rate limited",
			handle:         reply(429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit."}}`, "retry-after", "7"),
			wantStatus:     429,
			wantRetryable:  true,
			wantRetryAfter: 7 * time.Second,
			wantMsg:        "rate_limit_error: Number of requests",
		},
		{
			name:          "overloaded",
			handle:        reply(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			wantStatus:    529,
			wantRetryable: true,
			wantMsg:       "overloaded_error: Overloaded",
		},
		{
			name:          "server error",
			handle:        reply(500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`),
			wantStatus:    500,
			wantRetryable: true,
			wantMsg:       "api_error",
		},
		{
			name: "bad gateway with html",
			handle: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(502)
				_, _ = io.WriteString(w, "<html>bad gateway</html>")
			},
			wantStatus:    502,
			wantRetryable: true,
			wantMsg:       "bad gateway",
		},
		{
			name:          "request timeout",
			handle:        reply(408, `{"type":"error","error":{"type":"timeout_error","message":"Request timed out"}}`),
			wantStatus:    408,
			wantRetryable: true,
			wantMsg:       "timeout_error",
		},
		{
			name:       "bad request",
			handle:     reply(400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}`),
			wantStatus: 400,
			wantMsg:    "invalid_request_error: max_tokens",
		},
		{
			name:       "unauthorized",
			handle:     reply(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`),
			wantStatus: 401,
			wantMsg:    "authentication_error: invalid x-api-key",
		},
		{
			name:       "unauthorized echoing the key",
			handle:     reply(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid key `+testKey+`"}}`),
			wantStatus: 401,
			wantMsg:    "authentication_error: invalid key [redacted]",
		},
		{
			name:       "forbidden",
			handle:     reply(403, `{"type":"error","error":{"type":"permission_error","message":"no access"}}`),
			wantStatus: 403,
			wantMsg:    "permission_error",
		},
		{
			name:       "not found",
			handle:     reply(404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}`),
			wantStatus: 404,
			wantMsg:    "not_found_error: model: claude-nope",
		},
		{
			name:    "malformed json",
			handle:  reply(200, `{"id":"msg_01","type":"message","content":[{"type":"text","text":"Hel`),
			wantMsg: "reply is not JSON",
		},
		{
			name: "not json at all",
			handle: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				_, _ = io.WriteString(w, "hello")
			},
			wantMsg: `reply is not JSON: "hello"`,
		},
		{
			name:    "empty body",
			handle:  reply(200, ``),
			wantMsg: "reply is not JSON: empty body",
		},
		{
			name: "no text block",
			handle: reply(200, `{"id":"msg_01","type":"message","role":"assistant","model":"claude-test",
"content":[{"type":"thinking","thinking":"hmm","signature":"s"}],"stop_reason":"max_tokens","usage":{"input_tokens":3,"output_tokens":2048}}`),
			wantMsg: `reply has no text content block (blocks [thinking], stop_reason "max_tokens")`,
		},
		{
			name:    "empty content",
			handle:  reply(200, `{"id":"msg_01","type":"message","role":"assistant","model":"claude-test","content":[],"stop_reason":"end_turn"}`),
			wantMsg: "reply has no text content block",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.handle)
			c := newClient(t, f, Config{})
			_, err := c.Complete(context.Background(), strata.CompletionRequest{System: "s", User: "u"})
			pe := providerError(t, err)
			t.Logf("error: %v", err)
			if pe.Status != tt.wantStatus {
				t.Errorf("Status = %d, want %d", pe.Status, tt.wantStatus)
			}
			if pe.Retryable != tt.wantRetryable {
				t.Errorf("Retryable = %v, want %v (%v)", pe.Retryable, tt.wantRetryable, err)
			}
			if pe.RetryAfter != tt.wantRetryAfter {
				t.Errorf("RetryAfter = %v, want %v", pe.RetryAfter, tt.wantRetryAfter)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error = %q, want it to contain %q", err, tt.wantMsg)
			}
			for e := error(pe); e != nil; e = errors.Unwrap(e) {
				if strings.Contains(e.Error(), testKey) {
					t.Errorf("error %T holds the API key: %q", e, e)
					break
				}
			}
			if n := len(f.requests()); n != 1 {
				t.Errorf("server got %d requests, want 1 (no retries)", n)
			}
		})
	}
}

func TestCompleteTransport(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	tests := []struct {
		name    string
		handle  http.HandlerFunc // nil: nothing listens
		timeout time.Duration
		wantMsg string
	}{
		{
			name: "server sleeps past the timeout",
			handle: func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-time.After(2 * time.Minute): // past every bound below
				}
			},
			timeout: 300 * time.Millisecond,
			wantMsg: "no reply within 300ms",
		},
		{
			name: "connection closed",
			handle: func(w http.ResponseWriter, r *http.Request) {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err != nil {
					panic(err)
				}
				_ = conn.Close()
			},
			timeout: 5 * time.Second,
			wantMsg: "EOF",
		},
		{
			name: "body cut short",
			handle: func(w http.ResponseWriter, r *http.Request) {
				conn, buf, err := w.(http.Hijacker).Hijack()
				if err != nil {
					panic(err)
				}
				_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"id\":")
				_ = buf.Flush()
				_ = conn.Close()
			},
			timeout: 5 * time.Second,
			wantMsg: "unexpected EOF",
		},
		{
			name:    "connection refused",
			timeout: 5 * time.Second,
			wantMsg: "refused",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Model: "claude-test", APIKey: testKey, Timeout: tt.timeout, BaseURL: closedURL}
			if tt.handle != nil {
				cfg.BaseURL = newFake(t, tt.handle).URL
			}
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = c.Complete(context.Background(), strata.CompletionRequest{User: "u"})
			elapsed := time.Since(start)
			pe := providerError(t, err)
			t.Logf("error after %v: %v", elapsed.Round(time.Millisecond), err)
			if !pe.Retryable {
				t.Errorf("Retryable = false, want true (%v)", err)
			}
			if pe.Status != 0 {
				t.Errorf("Status = %d, want 0", pe.Status)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error = %q, want it to contain %q", err, tt.wantMsg)
			}
			if elapsed > tt.timeout+time.Minute { // a client that waited for the server, not a slow machine
				t.Errorf("Complete took %v, want about the timeout %v at most", elapsed, tt.timeout)
			}
		})
	}
}

func TestCompleteContext(t *testing.T) {
	tests := []struct {
		name    string
		ctx     func(started <-chan struct{}) context.Context
		wantErr error
	}{
		{
			name: "cancelled before the call",
			ctx: func(<-chan struct{}) context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx
			},
			wantErr: context.Canceled,
		},
		{
			name: "cancelled during the call",
			ctx: func(started <-chan struct{}) context.Context {
				ctx, cancel := context.WithCancel(context.Background())
				go func() {
					<-started
					cancel()
				}()
				return ctx
			},
			wantErr: context.Canceled,
		},
		{
			name: "caller's deadline",
			ctx: func(<-chan struct{}) context.Context {
				ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
				t.Cleanup(cancel)
				return ctx
			},
			wantErr: context.DeadlineExceeded,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			started := make(chan struct{})
			var once sync.Once
			f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
				once.Do(func() { close(started) })
				select {
				case <-r.Context().Done():
				case <-time.After(2 * time.Minute): // past every bound below
				}
			})
			c := newClient(t, f, Config{Timeout: 10 * time.Minute}) // only the caller's context ends the call
			start := time.Now()
			_, err := c.Complete(tt.ctx(started), strata.CompletionRequest{User: "u"})
			pe := providerError(t, err)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want it to wrap %v", err, tt.wantErr)
			}
			if pe.Retryable {
				t.Errorf("Retryable = true, want false")
			}
			if d := time.Since(start); d > time.Minute { // a client that waited for the server, not a slow machine
				t.Errorf("Complete took %v after the context ended", d)
			}
		})
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name      string
		cfg       Config
		wantField string // "" means New succeeds
		wantName  string
	}{
		{name: "defaults", cfg: Config{Model: "m", APIKey: "k"}, wantName: "anthropic https://api.anthropic.com"},
		{name: "trailing slash", cfg: Config{Model: "m", APIKey: "k", BaseURL: "https://proxy.example/anthropic/"}, wantName: "anthropic https://proxy.example/anthropic"},
		{name: "loopback without key", cfg: Config{Model: "m", BaseURL: "http://127.0.0.1:8080"}, wantName: "anthropic http://127.0.0.1:8080"},
		{name: "localhost without key", cfg: Config{Model: "m", BaseURL: "http://localhost:4000"}, wantName: "anthropic http://localhost:4000"},
		{name: "ipv6 loopback without key", cfg: Config{Model: "m", BaseURL: "http://[::1]:4000"}, wantName: "anthropic http://[::1]:4000"},
		{name: "no model", cfg: Config{APIKey: "k"}, wantField: "Model"},
		{name: "remote without key", cfg: Config{Model: "m"}, wantField: "APIKey"},
		{name: "private address without key", cfg: Config{Model: "m", BaseURL: "http://10.0.0.2"}, wantField: "APIKey"},
		{name: "bad scheme", cfg: Config{Model: "m", APIKey: "k", BaseURL: "ftp://example.com"}, wantField: "BaseURL"},
		{name: "no host", cfg: Config{Model: "m", APIKey: "k", BaseURL: "api.anthropic.com"}, wantField: "BaseURL"},
		{name: "negative timeout", cfg: Config{Model: "m", APIKey: "k", Timeout: -time.Second}, wantField: "Timeout"},
		{name: "negative max tokens", cfg: Config{Model: "m", APIKey: "k", MaxTokens: -1}, wantField: "MaxTokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if got := c.Name(); got != tt.wantName {
					t.Errorf("Name = %q, want %q", got, tt.wantName)
				}
				return
			}
			if err == nil {
				t.Fatalf("New succeeded, want an error naming %s", tt.wantField)
			}
			if code := strata.ErrorCode(err); code != strata.EINVALID {
				t.Errorf("code = %q, want %q", code, strata.EINVALID)
			}
			if !strings.Contains(err.Error(), tt.wantField) {
				t.Errorf("error = %q, want it to name %s", err, tt.wantField)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantOK  bool
		wantErr bool // New reports a bad variable
	}{
		{name: "no model", env: map[string]string{"STRATA_LLM_API_KEY": "k"}},
		{
			name:   "all set",
			env:    map[string]string{"STRATA_LLM_BASE_URL": "http://127.0.0.1:9", "STRATA_LLM_MODEL": "claude-x", "STRATA_LLM_API_KEY": "k1", "ANTHROPIC_API_KEY": "k2", "STRATA_LLM_TIMEOUT": "90s"},
			want:   Config{BaseURL: "http://127.0.0.1:9", Model: "claude-x", APIKey: "k1", Timeout: 90 * time.Second},
			wantOK: true,
		},
		{
			name:   "anthropic key fallback",
			env:    map[string]string{"STRATA_LLM_MODEL": "claude-x", "ANTHROPIC_API_KEY": "k2"},
			want:   Config{Model: "claude-x", APIKey: "k2"},
			wantOK: true,
		},
		{
			name:   "timeout in seconds",
			env:    map[string]string{"STRATA_LLM_MODEL": "claude-x", "ANTHROPIC_API_KEY": "k2", "STRATA_LLM_TIMEOUT": "2.5"},
			want:   Config{Model: "claude-x", APIKey: "k2", Timeout: 2500 * time.Millisecond},
			wantOK: true,
		},
		{
			name:    "bad timeout",
			env:     map[string]string{"STRATA_LLM_MODEL": "claude-x", "ANTHROPIC_API_KEY": "k2", "STRATA_LLM_TIMEOUT": "soon"},
			want:    Config{Model: "claude-x", APIKey: "k2"},
			wantOK:  true,
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FromEnv(func(k string) string { return tt.env[k] })
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if !ok {
				return
			}
			_, err := New(got)
			if (err != nil) != tt.wantErr {
				t.Errorf("New: err = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr && !strings.Contains(err.Error(), "STRATA_LLM_TIMEOUT") {
				t.Errorf("New: err = %v, want it to name STRATA_LLM_TIMEOUT", err)
			}
			got.envErr = nil
			if got != tt.want {
				t.Errorf("FromEnv = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRetryAfterDate(t *testing.T) {
	when := time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat)
	f := newFake(t, reply(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`, "retry-after", when))
	c := newClient(t, f, Config{})
	_, err := c.Complete(context.Background(), strata.CompletionRequest{User: "u"})
	pe := providerError(t, err)
	if !pe.Retryable || pe.RetryAfter < 15*time.Second || pe.RetryAfter > 21*time.Second {
		t.Errorf("Retryable = %v, RetryAfter = %v; want true and about 20s", pe.Retryable, pe.RetryAfter)
	}
}

// TestLive calls the real API. It runs only when STRATA_LLM_TESTS is set,
// with STRATA_LLM_MODEL and a key in STRATA_LLM_API_KEY or
// ANTHROPIC_API_KEY.
func TestLive(t *testing.T) {
	if os.Getenv("STRATA_LLM_TESTS") == "" {
		t.Skip("set STRATA_LLM_TESTS to call the real API")
	}
	cfg, ok := FromEnv(os.Getenv)
	if !ok {
		t.Skip("set STRATA_LLM_MODEL")
	}
	c, err := New(cfg)
	if err != nil {
		t.Skipf("not configured for Anthropic: %v", err)
	}
	got, err := c.Complete(context.Background(), strata.CompletionRequest{
		System:    "Answer with one word.",
		User:      "What is the capital of France?",
		MaxTokens: 16,
	})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if !strings.Contains(strings.ToLower(got.Text), "paris") {
		t.Errorf("Text = %q, want Paris", got.Text)
	}
	if got.InputTokens == 0 || got.OutputTokens == 0 || got.Model == "" || got.FinishReason == "" {
		t.Errorf("Complete = %+v, want tokens, model and finish reason", got)
	}
	t.Logf("%s: %+v", c.Name(), got)
}

// TestNoEnvironment checks that the SDK's own environment variables do not
// reach a Client.
func TestNoEnvironment(t *testing.T) {
	f := newFake(t, reply(http.StatusOK, okBody))
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-env")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Extra: 1")
	c, err := New(Config{Model: "claude-test", BaseURL: f.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), strata.CompletionRequest{User: "u"}); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	h := f.requests()[0].header
	for _, name := range []string{"X-Api-Key", "Authorization", "X-Extra"} {
		if v := h.Get(name); v != "" {
			t.Errorf("%s = %q, want none", name, v)
		}
	}
}
