package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-memory/strata"
)

// testKey is the API key the tests configure; no error may contain it.
const testKey = "sk-test-0123456789abcdef"

// request is what the fake server received.
type request struct {
	Path   string
	Auth   string
	Header http.Header
	Body   map[string]any
}

// fake is an OpenAI-compatible server whose replies the test writes.
type fake struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []request
}

// newFake starts a server that records each request and answers it with
// reply.
func newFake(t *testing.T, reply http.HandlerFunc) *fake {
	t.Helper()
	f := &fake{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		f.mu.Lock()
		f.reqs = append(f.reqs, request{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Header: r.Header.Clone(), Body: body})
		f.mu.Unlock()
		reply(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fake) requests() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.reqs...)
}

// client returns a Client for f with the test key.
func (f *fake) client(t *testing.T, timeout time.Duration) *Client {
	t.Helper()
	c, err := New(Config{BaseURL: f.URL + "/v1", APIKey: testKey, Model: "test-model", Timeout: timeout, HTTPClient: f.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// replyJSON answers with status and body as JSON, after setting headers.
func replyJSON(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// replyText answers with status and a plain-text body.
func replyText(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// waitForCancel answers only once the client has gone.
func waitForCancel(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// hijack takes the connection, writes raw to it and closes it.
func hijack(raw string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		buf.WriteString(raw)
		buf.Flush()
		conn.Close()
	}
}

func completion(content, finish, extra string) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion","created":1700000000,%s
		"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":%q}]}`,
		extra, content, finish)
}

func TestComplete(t *testing.T) {
	tests := []struct {
		name     string
		req      strata.CompletionRequest
		reply    string
		want     strata.Completion
		wantBody map[string]any // fields the server must receive; nil value = absent
		wantMsgs []any
	}{
		{
			name:  "normal reply with usage",
			req:   strata.CompletionRequest{System: "Summarize.", User: "Alice met Bob on 2024-03-01.", MaxTokens: 50},
			reply: completion("Alice met Bob.", "stop", `"model":"test-model-2024","usage":{"prompt_tokens":21,"completion_tokens":4,"total_tokens":25},`),
			want:  strata.Completion{Text: "Alice met Bob.", Model: "test-model-2024", InputTokens: 21, OutputTokens: 4, FinishReason: "stop"},
			wantBody: map[string]any{
				"model": "test-model", "max_tokens": float64(50), "temperature": float64(0),
				"max_completion_tokens": nil, "stream": nil,
			},
			wantMsgs: []any{
				map[string]any{"role": "system", "content": "Summarize."},
				map[string]any{"role": "user", "content": "Alice met Bob on 2024-03-01."},
			},
		},
		{
			name:     "usage and model absent, model overridden, no system, no cap",
			req:      strata.CompletionRequest{Model: "other-model", User: "hi"},
			reply:    completion("hello", "stop", ""),
			want:     strata.Completion{Text: "hello", Model: "other-model", FinishReason: "stop"},
			wantBody: map[string]any{"model": "other-model", "max_tokens": nil, "temperature": float64(0)},
			wantMsgs: []any{map[string]any{"role": "user", "content": "hi"}},
		},
		{
			name:     "finish_reason length",
			req:      strata.CompletionRequest{User: "count", MaxTokens: 3},
			reply:    completion("1 2 3", "length", `"model":"m","usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8},`),
			want:     strata.Completion{Text: "1 2 3", Model: "m", InputTokens: 5, OutputTokens: 3, FinishReason: "length"},
			wantBody: map[string]any{"max_tokens": float64(3)},
		},
		{
			name: "reasoning text returned separately is ignored",
			req:  strata.CompletionRequest{User: "q"},
			reply: `{"id":"x","model":"r1","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant",
				"content":"the answer","reasoning_content":"let me think","reasoning":"let me think"}}]}`,
			want: strata.Completion{Text: "the answer", Model: "r1", FinishReason: "stop"},
		},
		{
			name:  "other finish reason kept",
			req:   strata.CompletionRequest{User: "q"},
			reply: completion("partial", "content_filter", `"model":"m",`),
			want:  strata.Completion{Text: "partial", Model: "m", FinishReason: "content_filter"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, replyJSON(200, tt.reply))
			got, err := f.client(t, 0).Complete(context.Background(), tt.req)
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if got.Elapsed <= 0 {
				t.Errorf("Elapsed=%v, want > 0", got.Elapsed)
			}
			got.Elapsed = 0
			if got != tt.want {
				t.Errorf("Complete=%+v, want %+v", got, tt.want)
			}
			reqs := f.requests()
			if len(reqs) != 1 {
				t.Fatalf("server got %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Path != "/v1/chat/completions" {
				t.Errorf("path=%q, want /v1/chat/completions", r.Path)
			}
			if r.Auth != "Bearer "+testKey {
				t.Errorf("Authorization=%q, want the bearer key", r.Auth)
			}
			for k, want := range tt.wantBody {
				v, ok := r.Body[k]
				switch {
				case want == nil && ok:
					t.Errorf("body has %s=%v, want it absent", k, v)
				case want != nil && v != want:
					t.Errorf("body %s=%v (%T), want %v", k, v, v, want)
				}
			}
			if tt.wantMsgs != nil {
				gotMsgs, _ := json.Marshal(r.Body["messages"])
				wantMsgs, _ := json.Marshal(tt.wantMsgs)
				if string(gotMsgs) != string(wantMsgs) {
					t.Errorf("messages=%s, want %s", gotMsgs, wantMsgs)
				}
			}
		})
	}
}

func TestCompleteErrors(t *testing.T) {
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close()

	tests := []struct {
		name    string
		handler http.HandlerFunc
		url     string        // if set, call this base URL instead of the fake's
		timeout time.Duration // the Client's; 0 = default
		ctx     func() (context.Context, context.CancelFunc)

		status     int
		retryable  bool
		retryAfter time.Duration
		msg        string        // the error text must contain it
		is         error         // errors.Is(err, is) must hold
		within     time.Duration // a bound for a client that waits on past its timeout, not for speed
		calls      int           // requests the server must see; -1 = do not check
	}{
		{
			name:    "429 with Retry-After seconds",
			handler: replyJSON(429, `{"error":{"message":"Rate limit reached","type":"requests"}}`, "Retry-After", "7"),
			status:  429, retryable: true, retryAfter: 7 * time.Second, msg: "HTTP 429: Rate limit reached", calls: 1,
		},
		{
			name:    "429 with retry-after-ms",
			handler: replyJSON(429, `{"error":{"message":"slow down"}}`, "Retry-After", "2", "Retry-After-Ms", "1500"),
			status:  429, retryable: true, retryAfter: 1500 * time.Millisecond, msg: "slow down", calls: 1,
		},
		{
			name:    "500",
			handler: replyJSON(500, `{"error":{"message":"internal error","type":"server_error"}}`),
			status:  500, retryable: true, msg: "internal error", calls: 1,
		},
		{
			name:    "502 with an HTML body",
			handler: replyText(502, "<html><body>Bad Gateway</body></html>"),
			status:  502, retryable: true, msg: "Bad Gateway", calls: 1,
		},
		{
			name:    "503 with an empty body",
			handler: replyText(503, ""),
			status:  503, retryable: true, msg: "HTTP 503: Service Unavailable", calls: 1,
		},
		{
			name:    "408",
			handler: replyJSON(408, `{"error":"request timeout"}`),
			status:  408, retryable: true, msg: "request timeout", calls: 1,
		},
		{
			name: "401 echoing the key",
			handler: replyJSON(401, `{"error":{"message":"Incorrect API key provided: `+testKey+
				`. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}`),
			status: 401, msg: "Incorrect API key provided: [redacted]", calls: 1,
		},
		{
			name:    "404 unknown model",
			handler: replyJSON(404, `{"error":{"message":"model \"nope\" not found, try pulling it first","type":"api_error"}}`),
			status:  404, msg: `model "nope" not found`, calls: 1,
		},
		{
			name:    "400 with detail",
			handler: replyJSON(400, `{"detail":"max_tokens must be at least 1"}`),
			status:  400, msg: "max_tokens must be at least 1", calls: 1,
		},
		{
			name:    "422",
			handler: replyJSON(422, `{"error":"unprocessable"}`),
			status:  422, msg: "unprocessable", calls: 1,
		},
		{
			name:    "malformed JSON",
			handler: replyJSON(200, `{"id":"x","choices":[{"message":`),
			status:  200, msg: "reply is not a JSON chat completion", calls: 1,
		},
		{
			name:    "plain text reply",
			handler: replyText(200, "hello"),
			status:  200, msg: `reply is not a JSON chat completion (invalid character 'h' looking for beginning of value): "hello"`, calls: 1,
		},
		{
			name:    "empty body",
			handler: replyJSON(200, ""),
			status:  200, msg: "reply body is empty", calls: 1,
		},
		{
			name:    "empty choices",
			handler: replyJSON(200, `{"id":"x","model":"m","choices":[]}`),
			status:  200, msg: "reply has no choices", calls: 1,
		},
		{
			name:    "error object with status 200",
			handler: replyJSON(200, `{"error":{"message":"context length exceeded"}}`),
			status:  200, msg: "reply has no choices: context length exceeded", calls: 1,
		},
		{
			name:    "empty message",
			handler: replyJSON(200, completion("", "length", `"model":"m",`)),
			status:  200, msg: `reply has an empty message (finish_reason "length")`, calls: 1,
		},
		{
			name: "refusal",
			handler: replyJSON(200, `{"id":"x","model":"m","choices":[{"index":0,"finish_reason":"stop",
				"message":{"role":"assistant","content":null,"refusal":"I can't help with that."}}]}`),
			status: 200, msg: "model refused: I can't help with that.", calls: 1,
		},
		{
			name:      "server slower than the timeout",
			handler:   waitForCancel,
			timeout:   200 * time.Millisecond,
			retryable: true, msg: "no reply within 200ms", is: context.DeadlineExceeded,
			within: time.Minute, calls: 1,
		},
		{
			name:      "connection closed before the reply",
			handler:   hijack(""),
			retryable: true, msg: "network error", calls: 1,
		},
		{
			name:      "connection closed mid-reply",
			handler:   hijack("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n{\"id\":\"x\",\"choi"),
			retryable: true, msg: "network error", is: io.ErrUnexpectedEOF, calls: 1,
		},
		{
			name:      "connection refused",
			url:       refusedURL,
			retryable: true, msg: "network error", calls: -1,
		},
		{
			name:    "ctx cancelled during the call",
			handler: waitForCancel,
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(100*time.Millisecond, cancel)
				return ctx, cancel
			},
			is: context.Canceled, within: time.Minute, calls: 1,
		},
		{
			name:    "ctx cancelled before the call",
			handler: replyJSON(200, completion("x", "stop", "")),
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				return ctx, cancel
			},
			is: context.Canceled, calls: 0,
		},
		{
			name:    "caller's deadline before the timeout",
			handler: waitForCancel,
			timeout: time.Minute,
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 150*time.Millisecond)
			},
			is: context.DeadlineExceeded, within: time.Minute, calls: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			handler := tt.handler
			if handler == nil {
				handler = replyJSON(200, completion("x", "stop", ""))
			}
			f := newFake(t, handler)
			base := f.URL
			if tt.url != "" {
				base = tt.url
			}
			c, err := New(Config{BaseURL: base + "/v1", APIKey: testKey, Model: "test-model", Timeout: tt.timeout, HTTPClient: f.Client()})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()

			start := time.Now()
			_, err = c.Complete(ctx, strata.CompletionRequest{System: "s", User: "u", MaxTokens: 10})
			elapsed := time.Since(start)
			if err == nil {
				t.Fatal("Complete succeeded, want an error")
			}
			t.Logf("error: %v", err)
			var pe *strata.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *strata.ProviderError", err, err)
			}
			if pe.Provider != "openai" {
				t.Errorf("Provider=%q, want openai", pe.Provider)
			}
			if pe.Status != tt.status {
				t.Errorf("Status=%d, want %d (%v)", pe.Status, tt.status, err)
			}
			if pe.Retryable != tt.retryable {
				t.Errorf("Retryable=%v, want %v (%v)", pe.Retryable, tt.retryable, err)
			}
			if pe.RetryAfter != tt.retryAfter {
				t.Errorf("RetryAfter=%v, want %v", pe.RetryAfter, tt.retryAfter)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if tt.within > 0 && elapsed > tt.within {
				t.Errorf("Complete took %v, want at most %v", elapsed, tt.within)
			}
			for _, s := range []string{err.Error(), fmt.Sprintf("%+v", *pe), fmt.Sprintf("%#v", *pe)} {
				if strings.Contains(s, testKey) {
					t.Errorf("error shows the API key: %s", s)
				}
			}
			if n := len(f.requests()); tt.calls >= 0 && n != tt.calls {
				t.Errorf("server got %d requests, want %d (the SDK must not retry)", n, tt.calls)
			}
		})
	}
}

func TestCompleteNegativeMaxTokens(t *testing.T) {
	f := newFake(t, replyJSON(200, completion("x", "stop", "")))
	_, err := f.client(t, 0).Complete(context.Background(), strata.CompletionRequest{User: "u", MaxTokens: -1})
	if code := strata.ErrorCode(err); code != strata.EINVALID {
		t.Fatalf("error %v has code %q, want %q", err, code, strata.EINVALID)
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("server got %d requests, want 0", n)
	}
}

func TestAuthorization(t *testing.T) {
	// An ambient OPENAI_API_KEY must not reach a server the Config did not
	// give it to.
	t.Setenv("OPENAI_API_KEY", "sk-ambient")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Secret: ambient")
	tests := []struct {
		name string
		key  string
		want string
	}{
		{"key", "sk-local", "Bearer sk-local"},
		{"no key", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, replyJSON(200, completion("x", "stop", "")))
			c, err := New(Config{BaseURL: f.URL + "/v1", APIKey: tt.key, Model: "m", HTTPClient: f.Client()})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Complete(context.Background(), strata.CompletionRequest{User: "u"}); err != nil {
				t.Fatal(err)
			}
			r := f.requests()[0]
			if r.Auth != tt.want {
				t.Errorf("Authorization=%q, want %q", r.Auth, tt.want)
			}
			if v := r.Header.Get("X-Secret"); v != "" {
				t.Errorf("X-Secret=%q, want none", v)
			}
		})
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		wantErr  string // the EINVALID message must contain it; "" = valid
		wantName string
	}{
		{"defaults", Config{Model: "gpt-4o-mini"}, "", "openai https://api.openai.com/v1"},
		{"local", Config{BaseURL: "http://127.0.0.1:11434/v1/", Model: "qwen"}, "", "openai http://127.0.0.1:11434/v1"},
		{"password hidden", Config{BaseURL: "https://u:hunter2@llm.example/v1", Model: "m"}, "", "openai https://u:xxxxx@llm.example/v1"},
		{"no model", Config{BaseURL: "http://localhost:8080/v1"}, "Config.Model", ""},
		{"blank model", Config{Model: "  "}, "Config.Model", ""},
		{"not http", Config{BaseURL: "ftp://example.com/v1", Model: "m"}, "Config.BaseURL", ""},
		{"no host", Config{BaseURL: "localhost:8080", Model: "m"}, "Config.BaseURL", ""},
		{"unparseable", Config{BaseURL: "http://[::1", Model: "m"}, "Config.BaseURL", ""},
		{"negative timeout", Config{Model: "m", Timeout: -time.Second}, "Config.Timeout", ""},
		{"key with a newline", Config{Model: "m", APIKey: testKey + "\n"}, "Config.APIKey", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if got := c.Name(); got != tt.wantName {
					t.Errorf("Name=%q, want %q", got, tt.wantName)
				}
				return
			}
			if code := strata.ErrorCode(err); code != strata.EINVALID {
				t.Fatalf("New error %v has code %q, want %q", err, code, strata.EINVALID)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not name %s", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error %q shows the API key", err)
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
		wantErr string // New must fail with EINVALID containing it
	}{
		{name: "nothing", env: map[string]string{}},
		{name: "no model", env: map[string]string{"STRATA_LLM_BASE_URL": "http://localhost:11434/v1", "STRATA_LLM_API_KEY": "k1"}},
		{
			name: "all set",
			env: map[string]string{
				"STRATA_LLM_BASE_URL": "http://localhost:11434/v1", "STRATA_LLM_MODEL": "qwen2.5:7b",
				"STRATA_LLM_API_KEY": "k1 \n", "STRATA_LLM_TIMEOUT": "90s", "OPENAI_API_KEY": "k2",
			},
			want:   Config{BaseURL: "http://localhost:11434/v1", Model: "qwen2.5:7b", APIKey: "k1", Timeout: 90 * time.Second},
			wantOK: true,
		},
		{
			name:   "OPENAI_API_KEY for the default endpoint, timeout in seconds",
			env:    map[string]string{"STRATA_LLM_MODEL": "gpt-4o-mini", "OPENAI_API_KEY": "k2", "STRATA_LLM_TIMEOUT": "2.5"},
			want:   Config{Model: "gpt-4o-mini", APIKey: "k2", Timeout: 2500 * time.Millisecond},
			wantOK: true,
		},
		{
			name:   "OPENAI_API_KEY for api.openai.com",
			env:    map[string]string{"STRATA_LLM_BASE_URL": "https://api.openai.com/v1", "STRATA_LLM_MODEL": "m", "OPENAI_API_KEY": "k2"},
			want:   Config{BaseURL: "https://api.openai.com/v1", Model: "m", APIKey: "k2"},
			wantOK: true,
		},
		{
			name:   "OPENAI_API_KEY not sent elsewhere",
			env:    map[string]string{"STRATA_LLM_BASE_URL": "https://llm.example/v1", "STRATA_LLM_MODEL": "m", "OPENAI_API_KEY": "k2"},
			want:   Config{BaseURL: "https://llm.example/v1", Model: "m"},
			wantOK: true,
		},
		{
			name:    "unreadable timeout",
			env:     map[string]string{"STRATA_LLM_MODEL": "m", "STRATA_LLM_TIMEOUT": "soon"},
			wantOK:  true,
			wantErr: `STRATA_LLM_TIMEOUT "soon"`,
		},
		{
			name:    "zero timeout",
			env:     map[string]string{"STRATA_LLM_MODEL": "m", "STRATA_LLM_TIMEOUT": "0s"},
			wantOK:  true,
			wantErr: "STRATA_LLM_TIMEOUT",
		},
		{
			name:    "negative timeout",
			env:     map[string]string{"STRATA_LLM_MODEL": "m", "STRATA_LLM_TIMEOUT": "-5"},
			wantOK:  true,
			wantErr: "STRATA_LLM_TIMEOUT",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FromEnv(func(k string) string { return tt.env[k] })
			if ok != tt.wantOK {
				t.Fatalf("FromEnv ok=%v, want %v", ok, tt.wantOK)
			}
			_, err := New(got)
			if tt.wantErr != "" {
				if code := strata.ErrorCode(err); code != strata.EINVALID || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("New error %v (code %q), want EINVALID containing %q", err, code, tt.wantErr)
				}
				return
			}
			if got != tt.want {
				t.Errorf("FromEnv=%+v, want %+v", got, tt.want)
			}
			if ok && err != nil {
				t.Errorf("New: %v", err)
			}
		})
	}
}

func TestNormalizeFinish(t *testing.T) {
	tests := []struct{ in, want string }{
		{"stop", "stop"},
		{"STOP", "stop"},
		{"eos", "stop"},
		{"end_turn", "stop"},
		{"length", "length"},
		{"max_tokens", "length"},
		{"tool_calls", "tool_calls"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := normalizeFinish(tt.in); got != tt.want {
			t.Errorf("normalizeFinish(%q)=%q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestClean(t *testing.T) {
	c := &Client{apiKey: testKey}
	long := strings.Repeat("é", maxMsg) + testKey
	tests := []struct {
		name, in, want string
	}{
		{"key", "bad key " + testKey + " given", "bad key [redacted] given"},
		{"white space", " a\n\tb  c ", "a b c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.clean(tt.in); got != tt.want {
				t.Errorf("clean=%q, want %q", got, tt.want)
			}
		})
	}
	got := c.clean(long)
	if strings.Contains(got, testKey[:6]) || len(got) > maxMsg+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("clean(long)=%q: want it cut to %d bytes, on a rune boundary, without the key", got, maxMsg)
	}
}

// TestLive calls a real endpoint configured by STRATA_LLM_BASE_URL,
// STRATA_LLM_MODEL and STRATA_LLM_API_KEY.
func TestLive(t *testing.T) {
	if os.Getenv("STRATA_LLM_TESTS") == "" {
		t.Skip("set STRATA_LLM_TESTS (and STRATA_LLM_MODEL, STRATA_LLM_BASE_URL) to call a real endpoint")
	}
	cfg, ok := FromEnv(os.Getenv)
	if !ok {
		t.Skip("set STRATA_LLM_MODEL")
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Complete(context.Background(), strata.CompletionRequest{
		System:    "You summarize conversations in one short sentence.",
		User:      "Alice: the build broke on main.\nBob: I reverted commit 4f2a9c; it passes again.",
		MaxTokens: 200,
	})
	if err != nil {
		t.Fatalf("%s: %v", c.Name(), err)
	}
	if strings.TrimSpace(got.Text) == "" {
		t.Errorf("empty text: %+v", got)
	}
	t.Logf("%s: %+v", c.Name(), got)
}
