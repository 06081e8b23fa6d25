package main

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	anth "github.com/anthropics/anthropic-sdk-go/v2"
	anthopt "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	oaopt "github.com/openai/openai-go/v3/option"
)

// refusal is what a client's SDK made of an error answer.
type refusal struct {
	status    int
	typ, code string // code: OpenAI's error.code
	param     string // OpenAI's error.param
	message   string
	requestID string // X-Request-Id
	anthID    string // the Anthropic client's RequestID (request-id)
	header    http.Header
}

// sdkCall makes one model call through serve with the official client of
// the route's API and returns the refusal its SDK reports.
func sdkCall(t *testing.T, addr string, anthropic bool, token, text string, raw []byte) refusal {
	t.Helper()
	ctx := context.Background()
	if anthropic {
		opts := []anthopt.RequestOption{anthopt.WithBaseURL(addr), anthopt.WithAPIKey("sk-ant-caller"), anthopt.WithMaxRetries(0)}
		if token != "" {
			opts = append(opts, anthopt.WithHeader("X-Strata-Token", token))
		}
		if raw != nil {
			opts = append(opts, anthopt.WithRequestBody("application/json", raw))
		}
		c := anth.NewClient(opts...)
		_, err := c.Messages.New(ctx, anth.MessageNewParams{Model: "m", MaxTokens: 5,
			Messages: []anth.MessageParam{anth.NewUserMessage(anth.NewTextBlock(text))}})
		var ae *anth.Error
		if !errors.As(err, &ae) {
			t.Fatalf("anthropic: %v, want an *anthropic.Error", err)
		}
		return refusal{status: ae.StatusCode, typ: string(ae.Type()), message: ae.Message,
			requestID: ae.Response.Header.Get("X-Request-Id"), anthID: ae.RequestID, header: ae.Response.Header}
	}
	opts := []oaopt.RequestOption{oaopt.WithBaseURL(addr + "/v1/"), oaopt.WithAPIKey("sk-caller"), oaopt.WithMaxRetries(0)}
	if token != "" {
		opts = append(opts, oaopt.WithHeader("X-Strata-Token", token))
	}
	if raw != nil {
		opts = append(opts, oaopt.WithRequestBody("application/json", raw))
	}
	c := openai.NewClient(opts...)
	_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}})
	var oe *openai.Error
	if !errors.As(err, &oe) {
		t.Fatalf("openai: %v, want an *openai.Error", err)
	}
	return refusal{status: oe.StatusCode, typ: oe.Type, code: oe.Code, param: oe.Param, message: oe.Message,
		requestID: oe.Response.Header.Get("X-Request-Id"), header: oe.Response.Header}
}

// TestServeProxyRefusals: serve's own refusals on the model routes (no
// token, a bad token, a body over the bound, a body that is not text, a
// rate limit) reach the OpenAI and Anthropic clients as their API's
// errors, with the status, a type, a message that says what to do, and
// the request's id in the headers; nothing goes upstream.
func TestServeProxyRefusals(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	tokens := map[string]string{}
	token := func(name string) string {
		if tokens[name] == "" {
			tokens[name] = strings.TrimSpace(mustRun(t, db, "token", "create", "--namespace", "team-a"))
		}
		return tokens[name]
	}
	// Each case but the rate limit's has its own token: the limit (one
	// request at once, then one an hour) charges every authenticated call.
	for _, name := range []string{"big-oa", "big-an", "text-oa", "text-an", "rate-oa", "rate-an"} {
		token(name)
	}
	up := newEchoUpstream(t)
	addr, _, _ := serveForTest(t, map[string]string{"STRATA_DB": db, "STRATA_PROXY_OPENAI_URL": up.srv.URL + "/v1",
		"STRATA_PROXY_ANTHROPIC_URL": up.srv.URL, "STRATA_SERVE_RATE": "0.0003", "STRATA_SERVE_BURST": "1"},
		"--addr", "127.0.0.1:0", "--max-body", "4096")
	big := strings.Repeat("a long message ", 400)
	badText := func(anthropic bool) []byte {
		if anthropic {
			return []byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"half a pair \ud800 here"}]}`)
		}
		return []byte(`{"model":"m","messages":[{"role":"user","content":"half a pair \ud800 here"}]}`)
	}
	for _, an := range []bool{false, true} {
		api, sfx := "openai", "-oa"
		if an {
			api, sfx = "anthropic", "-an"
		}
		for _, tc := range []struct {
			name      string
			token     string
			text      string
			raw       []byte
			status    int
			oaType    string
			anType    string
			code      string
			inMessage string
		}{
			{"no token", "", "hi", nil, 401, "authentication_error", "authentication_error", "strata_token_required", "X-Strata-Token"},
			{"bad token", "strata_not-a-token", "hi", nil, 401, "authentication_error", "authentication_error", "invalid_strata_token", "invalid or revoked token"},
			{"body over the bound", token("big" + sfx), big, nil, 413, "invalid_request_error", "request_too_large", "request_too_large", "larger than 4096 bytes"},
			{"body not text", token("text" + sfx), "", badText(an), 400, "invalid_request_error", "invalid_request_error", "", "lone UTF-16 high surrogate"},
		} {
			t.Run(api+"/"+tc.name, func(t *testing.T) {
				text := tc.text
				if text == "" {
					text = "unused"
				}
				got := sdkCall(t, addr, an, tc.token, text, tc.raw)
				want := tc.oaType
				if an {
					want = tc.anType
				}
				if got.status != tc.status || got.typ != want || !strings.Contains(got.message, tc.inMessage) {
					t.Fatalf("%d %q %q, want %d %q with %q", got.status, got.typ, got.message, tc.status, want, tc.inMessage)
				}
				if !an && got.code != tc.code {
					t.Errorf("code %q, want %q", got.code, tc.code)
				}
				if !an && tc.status == 400 && !strings.Contains(got.param, "messages[0].content") {
					t.Errorf("param %q, want the field", got.param)
				}
				if got.requestID == "" || (an && got.anthID != got.requestID) {
					t.Errorf("request id %q, Anthropic's %q: want one, the same", got.requestID, got.anthID)
				}
				if ct := got.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
			})
		}
		t.Run(api+"/rate limit", func(t *testing.T) {
			tok := token("rate" + sfx)
			calls := up.count()
			_ = sdkCallOK(t, addr, an, tok)
			if up.count() != calls+1 {
				t.Fatal("the first call did not go upstream")
			}
			got := sdkCall(t, addr, an, tok, "again", nil)
			want := "rate_limit_error"
			if got.status != 429 || got.typ != want || !strings.Contains(got.message, "too many requests") || got.header.Get("Retry-After") == "" {
				t.Fatalf("%d %q %q Retry-After %q, want 429 %s", got.status, got.typ, got.message, got.header.Get("Retry-After"), want)
			}
			if !an && got.code != "rate_limit_exceeded" {
				t.Errorf("code %q", got.code)
			}
		})
	}
	if n := up.count(); n != 2 {
		t.Fatalf("the upstream got %d calls, want the two that were not refused", n)
	}
}

// sdkCallOK makes a call that should succeed.
func sdkCallOK(t *testing.T, addr string, anthropic bool, token string) string {
	t.Helper()
	ctx := context.Background()
	if anthropic {
		c := anth.NewClient(anthopt.WithBaseURL(addr), anthopt.WithAPIKey("sk-ant-caller"), anthopt.WithMaxRetries(0), anthopt.WithHeader("X-Strata-Token", token))
		m, err := c.Messages.New(ctx, anth.MessageNewParams{Model: "m", MaxTokens: 5,
			Messages: []anth.MessageParam{anth.NewUserMessage(anth.NewTextBlock("hello"))}})
		if err != nil {
			t.Fatal(err)
		}
		return m.Content[0].Text
	}
	c := openai.NewClient(oaopt.WithBaseURL(addr+"/v1/"), oaopt.WithAPIKey("sk-caller"), oaopt.WithMaxRetries(0), oaopt.WithHeader("X-Strata-Token", token))
	cc, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")}})
	if err != nil {
		t.Fatal(err)
	}
	return cc.Choices[0].Message.Content
}

func (u *echoUpstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.headers)
}
