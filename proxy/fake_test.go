package proxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/proxy"
	"github.com/strata-memory/strata/sqlite"
)

// received is one request the fake upstream got.
type received struct {
	Path   string
	Header http.Header
	Body   []byte
}

// fake is a model API that records what it receives and answers as a
// model would, in either provider's wire format, streamed or not:
//   - after a tool result, the text "It is sunny in Paris.";
//   - to a user message that mentions the weather, a call of get_weather
//     with {"city":"Paris"};
//   - else "You said: " and the last user text.
//
// fail, when set, answers every request instead: a status and its body.
type fake struct {
	mu   sync.Mutex
	got  []received
	fail func(w http.ResponseWriter, r *http.Request) bool
	srv  *httptest.Server
}

func newFake(t testing.TB) *fake {
	f := &fake{}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// setFail sets (nil: clears) the function that answers instead.
func (f *fake) setFail(fail func(w http.ResponseWriter, r *http.Request) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = fail
}

func (f *fake) requests() []received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]received(nil), f.got...)
}

func (f *fake) last(t testing.TB) received {
	t.Helper()
	rs := f.requests()
	if len(rs) == 0 {
		t.Fatal("the upstream received nothing")
	}
	return rs[len(rs)-1]
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.got = append(f.got, received{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	fail := f.fail
	f.mu.Unlock()
	if fail != nil && fail(w, r) {
		return
	}
	var req struct {
		Stream   bool              `json:"stream"`
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"fake: bad body"}}`, http.StatusBadRequest)
		return
	}
	anthropic := r.URL.Path == "/v1/messages"
	kind, text := decide(anthropic, req.Messages[len(req.Messages)-1])
	switch {
	case anthropic && req.Stream:
		anthropicStream(w, kind, text)
	case anthropic:
		w.Header().Set("Content-Type", "application/json")
		w.Write(anthropicReply(kind, text))
	case req.Stream:
		openAIStream(w, kind, text)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Write(openAIReply(kind, text))
	}
}

// decide reads the last message: "result" after a tool result, "call"
// for a user asking about the weather, else "echo" with the text.
func decide(anthropic bool, last json.RawMessage) (kind, text string) {
	var m struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	json.Unmarshal(last, &m)
	if m.Role == "tool" {
		return "result", ""
	}
	var s string
	if json.Unmarshal(m.Content, &s) != nil {
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		json.Unmarshal(m.Content, &blocks)
		for _, b := range blocks {
			if b.Type == "tool_result" {
				return "result", ""
			}
			s += b.Text
		}
	}
	if strings.Contains(strings.ToLower(s), "weather") {
		return "call", ""
	}
	return "echo", "You said: " + s
}

const sunny = "It is sunny in Paris."

func openAIReply(kind, text string) []byte {
	msg := map[string]any{"role": "assistant", "content": text, "refusal": nil}
	finish := "stop"
	switch kind {
	case "result":
		msg["content"] = sunny
	case "call":
		msg["content"] = nil
		msg["tool_calls"] = []any{map[string]any{"id": "call_1", "type": "function",
			"function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}}
		finish = "tool_calls"
	}
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "fake",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
	return b
}

func openAIStream(w http.ResponseWriter, kind, text string) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "fake",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		w.(http.Flusher).Flush()
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	switch kind {
	case "call":
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_1", "type": "function",
			"function": map[string]any{"name": "get_weather", "arguments": ""}}}}, nil)
		for _, part := range []string{`{"city"`, `:"Par`, `is"}`} {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": part}}}}, nil)
		}
		chunk(map[string]any{}, "tool_calls")
	default:
		if kind == "result" {
			text = sunny
		}
		for _, part := range splitWords(text) {
			chunk(map[string]any{"content": part}, nil)
		}
		chunk(map[string]any{}, "stop")
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func anthropicReply(kind, text string) []byte {
	var content []any
	stop := "end_turn"
	switch kind {
	case "result":
		content = []any{map[string]any{"type": "text", "text": sunny}}
	case "call":
		content = []any{map[string]any{"type": "text", "text": "Let me look."},
			map[string]any{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": map[string]any{"city": "Paris"}}}
		stop = "tool_use"
	default:
		content = []any{map[string]any{"type": "text", "text": text}}
	}
	b, _ := json.Marshal(map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "fake",
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 5}})
	return b
}

func anthropicStream(w http.ResponseWriter, kind, text string) {
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(v map[string]any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b)
		w.(http.Flusher).Flush()
	}
	ev(map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
		"model": "fake", "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
	textBlock := func(i int, s string) {
		ev(map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, part := range splitWords(s) {
			ev(map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": part}})
		}
		ev(map[string]any{"type": "content_block_stop", "index": i})
	}
	stop := "end_turn"
	switch kind {
	case "call":
		textBlock(0, "Let me look.")
		ev(map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": map[string]any{}}})
		for _, part := range []string{`{"city"`, `: "Par`, `is"}`} {
			ev(map[string]any{"type": "content_block_delta", "index": 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		ev(map[string]any{"type": "content_block_stop", "index": 1})
		stop = "tool_use"
	case "result":
		textBlock(0, sunny)
	default:
		textBlock(0, text)
	}
	ev(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	ev(map[string]any{"type": "message_stop"})
}

// splitWords splits s into words that keep their following space, so
// that the pieces join back to s.
func splitWords(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// rig is a proxy over a real SQLite store, in front of a fake upstream.
type rig struct {
	mem   *strata.Memory
	st    *sqlite.Store
	path  string
	up    *fake
	proxy *httptest.Server
	px    *proxy.Proxy
	logs  *bytes.Buffer
}

func newRig(t testing.TB, opt proxy.Options) *rig {
	t.Helper()
	return newRigTok(t, opt, strata.CharEstimator{})
}

// newRigTok is newRig with the Memory counting with tok.
func newRigTok(t testing.TB, opt proxy.Options, tok strata.Tokenizer) *rig {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "strata.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m, err := strata.New(strata.Config{Store: st, Tokenizer: tok, Summarizer: extractive.New()})
	if err != nil {
		t.Fatal(err)
	}
	up := newFake(t)
	opt.Memory = func(context.Context) *strata.Memory { return m }
	if opt.OpenAIURL == "" {
		opt.OpenAIURL = up.srv.URL + "/v1"
	}
	if opt.AnthropicURL == "" {
		opt.AnthropicURL = up.srv.URL
	}
	r := &rig{mem: m, st: st, path: path, up: up, logs: &bytes.Buffer{}}
	opt.Logger = newLogger(r.logs)
	p, err := proxy.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	r.px = p
	r.proxy = httptest.NewServer(p)
	t.Cleanup(func() { r.proxy.Close(); p.Wait() })
	return r
}

// turns returns the conversation's stored turns.
func (r *rig) turns(t tb, conv string) []strata.Turn {
	t.Helper()
	ts, _, err := r.mem.Turns(context.Background(), conv, 0, 0, 1000)
	if err != nil && strata.ErrorCode(err) != strata.ENOTFOUND {
		t.Fatal(err)
	}
	return ts
}

// post sends body to the proxy's path with headers, returning the answer.
func (r *rig) post(t tb, path, body string, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.proxy.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// tb is what rig and chat need of a test: *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}
