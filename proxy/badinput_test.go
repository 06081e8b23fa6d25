package proxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	anth "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"

	"github.com/strata-memory/strata/proxy"
)

// wireError decodes an error answer in the provider's format, failing if
// it is not one.
func wireError(t *testing.T, anthropic bool, body []byte) string {
	t.Helper()
	if anthropic {
		var e struct {
			Type  string `json:"type"`
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(body, &e) != nil || e.Type != "error" || e.Error.Message == "" {
			t.Fatalf("not an Anthropic error: %s", body)
		}
		return e.Error.Message
	}
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Message == "" {
		t.Fatalf("not an OpenAI error: %s", body)
	}
	return e.Error.Message
}

// TestMalformedBody: a body the proxy cannot read is answered 400 in the
// route's format, naming the problem, and nothing is stored or sent.
func TestMalformedBody(t *testing.T) {
	r := newRig(t, proxy.Options{})
	h := map[string]string{proxy.HeaderConversation: "bad"}
	for _, tc := range []struct {
		path, body, want string
	}{
		{"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}`, "malformed JSON"},
		{"/v1/chat/completions", `[{"role":"user","content":"hi"}]`, "not a JSON object"},
		{"/v1/chat/completions", `{"model":"m"}`, "messages: missing"},
		{"/v1/chat/completions", `{"model":"m","messages":[{"role":"tool","content":"x"}]}`, "messages[0]"},
		{"/v1/chat/completions", `{"model":"m","stream":"yes","messages":[{"role":"user","content":"hi"}]}`, "stream"},
		{"/v1/messages", `{"model":"m","messages":[{"role":"user","content":[{"type":"tool_result"}]}]}`, "messages[0].content[0]"},
		{"/v1/messages", ``, "empty"},
		{"/v1/messages", `{"model":"m","metadata":{"user_id":""},"messages":[{"role":"user","content":"hi"}]}`, ""},
	} {
		resp, body := r.post(t, tc.path, tc.body, h)
		if tc.want == "" {
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s %s: status %d: %s", tc.path, tc.body, resp.StatusCode, body)
			}
			continue
		}
		msg := wireError(t, tc.path == "/v1/messages", body)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(msg, tc.want) {
			t.Fatalf("%s %s: status %d, %q: want 400 naming %q", tc.path, tc.body, resp.StatusCode, msg, tc.want)
		}
	}
	if n := len(r.up.requests()); n != 1 {
		t.Fatalf("upstream got %d requests, want only the valid one", n)
	}
	if ts := r.turns(t, "bad"); len(ts) != 2 {
		t.Fatalf("stored %d turns, want the valid call's 2", len(ts))
	}
}

// TestUpstreamError: an upstream's error reaches the client with its
// status and body, through the SDK as its own error type, and the turn
// is not stored; a retry that succeeds stores it once.
func TestUpstreamError(t *testing.T) {
	r := newRig(t, proxy.Options{})
	r.up.setFail(func(w http.ResponseWriter, req *http.Request) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"error":{"message":"rate limit reached for fake","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`)
		return true
	})
	c := openAIClient(r, "limited")
	params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")}}
	_, err := c.Chat.Completions.New(context.Background(), params)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests || !strings.Contains(apiErr.Message, "rate limit reached") {
		t.Fatalf("error %v: want the upstream's 429", err)
	}
	if ts := r.turns(t, "limited"); len(ts) != 0 {
		t.Fatalf("stored %d turns after an upstream error", len(ts))
	}
	r.up.setFail(nil)
	if _, err := c.Chat.Completions.New(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	if ts := r.turns(t, "limited"); len(ts) != 2 {
		t.Fatalf("stored %d turns, want 2", len(ts))
	}
}

// TestUpstreamDown: an upstream that cannot be reached is a 502 in the
// route's format, naming the upstream; nothing is stored.
func TestUpstreamDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	r := newRig(t, proxy.Options{OpenAIURL: dead + "/v1", AnthropicURL: dead})
	c := anthropicClient(r, "down")
	_, err = c.Messages.New(context.Background(), anth.MessageNewParams{Model: "m", MaxTokens: 10,
		Messages: []anth.MessageParam{anth.NewUserMessage(anth.NewTextBlock("hello"))}})
	var apiErr *anth.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadGateway || !strings.Contains(apiErr.Error(), "could not be reached") {
		t.Fatalf("error %v: want a 502 naming the upstream", err)
	}
	if ts := r.turns(t, "down"); len(ts) != 0 {
		t.Fatalf("stored %d turns", len(ts))
	}
}

// TestStreamCut: a stream the upstream cuts before its end reaches the
// client as far as it went, and the newest turn is not stored: no half
// reply.
func TestStreamCut(t *testing.T) {
	for _, anthropic := range []bool{false, true} {
		r := newRig(t, proxy.Options{})
		r.up.setFail(func(w http.ResponseWriter, req *http.Request) bool {
			w.Header().Set("Content-Type", "text/event-stream")
			if anthropic {
				fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"f\"}}\n\n")
				fmt.Fprint(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
				fmt.Fprint(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Half a rep\"}}\n\n")
			} else {
				fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"f\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Half a rep\"},\"finish_reason\":null}]}\n\n")
			}
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the connection is cut
		})
		path, body := "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"tell me"}]}`
		if anthropic {
			path, body = "/v1/messages", `{"model":"m","max_tokens":9,"stream":true,"messages":[{"role":"user","content":"tell me"}]}`
		}
		resp, got := r.post(t, path, body, map[string]string{proxy.HeaderConversation: "cut"})
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(got), "Half a rep") {
			t.Fatalf("status %d, body %s", resp.StatusCode, got)
		}
		if ts := r.turns(t, "cut"); len(ts) != 0 {
			t.Fatalf("anthropic=%v: stored %d turns of a cut stream", anthropic, len(ts))
		}
	}
}

// TestUpstreamSlow: a client that gives up on a slow upstream leaves
// nothing of the call stored.
func TestUpstreamSlow(t *testing.T) {
	r := newRig(t, proxy.Options{})
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	defer close(release)
	r.up.setFail(func(w http.ResponseWriter, req *http.Request) bool {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-req.Context().Done():
		}
		return true
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	c := openAIClient(r, "slow")
	_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("are you there?")}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v: want the client's cancellation", err)
	}
	// A later call of the same conversation goes through (its handler
	// finishes after the first one's), and stores its own turn only.
	r.up.setFail(nil)
	resp, body := r.post(t, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hello again"}]}`,
		map[string]string{proxy.HeaderConversation: "slow"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	checkTurns(t, r.turns(t, "slow"), []string{"user: hello again", "assistant: You said: hello again"})
}
