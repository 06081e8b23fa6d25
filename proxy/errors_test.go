package proxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	anth "github.com/anthropics/anthropic-sdk-go/v2"
	anthopt "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	oaopt "github.com/openai/openai-go/v3/option"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/proxy"
)

// problem answers as strata serve refuses: problem JSON (RFC 9457).
func problem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"title": http.StatusText(status), "status": status, "detail": detail})
	w.Write(b)
}

// TestWireErrors: a server's problem answers on the model routes reach
// the official clients as their API's errors, status and headers kept;
// what the proxy itself answers (a stream, flushed event by event, and a
// reply) passes through the wrapper unchanged; other paths keep their
// problem JSON.
func TestWireErrors(t *testing.T) {
	r := newRig(t, proxy.Options{Mode: proxy.ModeOff})
	p, err := proxy.New(proxy.Options{Memory: func(context.Context) *strata.Memory { return r.mem }, Mode: proxy.ModeOff,
		OpenAIURL: r.up.srv.URL + "/v1", AnthropicURL: r.up.srv.URL, Logger: newLogger(r.logs)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(proxy.WireErrors(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("X-Request-Id", "req-4711")
		switch req.Header.Get("X-Test-Refuse") {
		case "busy":
			w.Header().Set("Retry-After", "1")
			problem(w, http.StatusServiceUnavailable, "the server is busy reading other large bodies; try again")
		case "method":
			w.Header().Set("Allow", "POST")
			http.Error(w, "wrong method", http.StatusMethodNotAllowed) // not a problem: passes as it is
		case "":
			if req.URL.Path == "/other" {
				problem(w, http.StatusTooManyRequests, "slow down")
				return
			}
			p.ServeHTTP(w, req)
		}
	})))
	t.Cleanup(srv.Close)
	ctx := context.Background()

	// A busy server: 503 with its Retry-After and request id.
	oc := openai.NewClient(oaopt.WithBaseURL(srv.URL+"/v1/"), oaopt.WithAPIKey(apiKey), oaopt.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
	_, err = oc.Chat.Completions.New(ctx, params, oaopt.WithHeader("X-Test-Refuse", "busy"))
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != 503 || oe.Type != "server_error" || oe.Code != "service_unavailable" ||
		!strings.Contains(oe.Message, "busy") || oe.Response.Header.Get("Retry-After") != "1" || oe.Response.Header.Get("X-Request-Id") != "req-4711" {
		t.Fatalf("openai busy: %v %+v", err, oe)
	}
	ac := anth.NewClient(anthopt.WithBaseURL(srv.URL), anthopt.WithAPIKey(apiKey), anthopt.WithMaxRetries(0))
	aparams := anth.MessageNewParams{Model: "m", MaxTokens: 5, Messages: []anth.MessageParam{anth.NewUserMessage(anth.NewTextBlock("hi"))}}
	_, err = ac.Messages.New(ctx, aparams, anthopt.WithHeader("X-Test-Refuse", "busy"))
	var ae *anth.Error
	if !errors.As(err, &ae) || ae.StatusCode != 503 || ae.Type() != "overloaded_error" || !strings.Contains(ae.Message, "busy") ||
		ae.RequestID != "req-4711" || ae.Response.Header.Get("Retry-After") != "1" {
		t.Fatalf("anthropic busy: %v %+v", err, ae)
	}

	// Answers that are no problem pass: a plain-text error, a stream, a reply.
	_, err = oc.Chat.Completions.New(ctx, params, oaopt.WithHeader("X-Test-Refuse", "method"))
	if !errors.As(err, &oe) || oe.StatusCode != 405 || !strings.HasPrefix(oe.Response.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("plain error: %v", err)
	}
	s := oc.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("stream me")}},
		oaopt.WithHeader(proxy.HeaderConversation, "wire"))
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil || acc.Choices[0].Message.Content != "You said: stream me" {
		t.Fatalf("stream through the wrapper: %v %+v", err, acc.Choices)
	}
	m, err := ac.Messages.New(ctx, anth.MessageNewParams{Model: "m", MaxTokens: 5,
		Messages: []anth.MessageParam{anth.NewUserMessage(anth.NewTextBlock("plain"))}}, anthopt.WithHeader(proxy.HeaderConversation, "wire-2"))
	if err != nil || m.Content[0].Text != "You said: plain" {
		t.Fatalf("reply through the wrapper: %v %+v", err, m)
	}

	// Another path keeps its problem.
	resp, err := http.Post(srv.URL+"/other", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(string(b), `"detail":"slow down"`) {
		t.Fatalf("/other: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
}

// TestProxyErrorsCarryRequestID: the proxy's own errors, served alone
// (strata proxy), name the request in X-Request-Id (and request-id, which
// Anthropic's clients read), the caller's own id when it sent one.
func TestProxyErrorsCarryRequestID(t *testing.T) {
	r := newRig(t, proxy.Options{})
	ctx := context.Background()
	bad := []byte(`{"model":"m","messages":[{"role":"tool","content":"x"}]}`)
	oc, ac := openAIClient(r, "ids"), anthropicClient(r, "ids")
	_, err := oc.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{}, oaopt.WithRequestBody("application/json", bad),
		oaopt.WithHeader("X-Request-Id", "mine-1"))
	var oe *openai.Error
	if !errors.As(err, &oe) || oe.StatusCode != 400 || oe.Type != "invalid_request_error" || !strings.Contains(oe.Message, "messages[0]") ||
		oe.Response.Header.Get("X-Request-Id") != "mine-1" {
		t.Fatalf("openai: %v %+v", err, oe)
	}
	bad = []byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"tool_result"}]}]}`)
	_, err = ac.Messages.New(ctx, anth.MessageNewParams{}, anthopt.WithRequestBody("application/json", bad))
	var ae *anth.Error
	if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Type() != "invalid_request_error" || !strings.Contains(ae.Message, "tool_use_id") ||
		ae.RequestID == "" || ae.RequestID != ae.Response.Header.Get("X-Request-Id") {
		t.Fatalf("anthropic: %v %+v", err, ae)
	}
}
