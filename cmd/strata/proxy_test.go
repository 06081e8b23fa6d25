package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// echoUpstream is an OpenAI and Anthropic model that answers "ok" and
// records the headers of each request.
type echoUpstream struct {
	mu      sync.Mutex
	headers []http.Header
	srv     *httptest.Server
}

func newEchoUpstream(t *testing.T) *echoUpstream {
	u := &echoUpstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		u.mu.Lock()
		u.headers = append(u.headers, r.Header.Clone())
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/messages" {
			io.WriteString(w, `{"id":"m","type":"message","role":"assistant","model":"f","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
			return
		}
		io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"f","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *echoUpstream) last() http.Header {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.headers) == 0 {
		return nil
	}
	return u.headers[len(u.headers)-1]
}

func postJSON(t *testing.T, url, body string, h map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestServeMountsProxy: strata serve answers the model routes behind its
// tokens, in the token's namespace. The token rides in X-Strata-Token
// (or in Authorization, when the caller's key is in x-api-key); the
// caller's key goes upstream, the token never does.
func TestServeMountsProxy(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	secret := strings.TrimSpace(mustRun(t, db, "token", "create", "--namespace", "team-a"))
	up := newEchoUpstream(t)
	addr, _, stop := serveForTest(t, map[string]string{"STRATA_DB": db, "STRATA_PROXY_OPENAI_URL": up.srv.URL + "/v1",
		"STRATA_PROXY_ANTHROPIC_URL": up.srv.URL}, "--addr", "127.0.0.1:0")
	chatBody := `{"model":"m","messages":[{"role":"user","content":"hello through serve"}]}`
	if code, body := postJSON(t, addr+"/v1/chat/completions", chatBody, map[string]string{"Authorization": "Bearer sk-caller"}); code != http.StatusUnauthorized {
		t.Fatalf("without a strata token: %d %s, want 401", code, body)
	}
	if up.last() != nil {
		t.Fatal("a request without a token went upstream")
	}
	code, body := postJSON(t, addr+"/v1/chat/completions", chatBody, map[string]string{"Authorization": "Bearer sk-caller",
		"X-Strata-Token": secret, "X-Strata-Conversation": "via-serve"})
	if code != http.StatusOK || !strings.Contains(body, `"ok"`) {
		t.Fatalf("with a token: %d %s", code, body)
	}
	h := up.last()
	if h.Get("Authorization") != "Bearer sk-caller" || h.Get("X-Strata-Token") != "" {
		t.Fatalf("upstream got %v: want the caller's key alone", h)
	}
	code, body = postJSON(t, addr+"/v1/messages", `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"and Anthropic"}]}`,
		map[string]string{"Authorization": "Bearer " + secret, "X-Api-Key": "sk-ant-caller", "X-Strata-Conversation": "via-serve-2"})
	if code != http.StatusOK {
		t.Fatalf("anthropic with a token: %d %s", code, body)
	}
	h = up.last()
	if h.Get("X-Api-Key") != "sk-ant-caller" || h.Get("Authorization") != "" {
		t.Fatalf("upstream got %v: want x-api-key and no strata token", h)
	}
	resp, err := http.Get(addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`strata_proxy_requests_total{outcome="ok",provider="openai"} 1`,
		`strata_proxy_requests_total{outcome="ok",provider="anthropic"} 1`, "strata_proxy_tokens_upstream_total"} {
		if !bytes.Contains(metrics, []byte(want)) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	stop()
	out := mustRun(t, db, "list", "--namespace", "team-a")
	if !strings.Contains(out, "via-serve ") || !strings.Contains(out, "via-serve-2 ") {
		t.Fatalf("the conversations are not in the token's namespace: %q", out)
	}
	if out := mustRun(t, db, "list"); strings.Contains(out, "via-serve") {
		t.Fatalf("a conversation landed in the default namespace: %q", out)
	}
}

// TestProxyCommand: strata proxy listens on loopback, takes its settings
// from flags, variables and the config file, and refuses bad ones by
// name.
func TestProxyCommand(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	up := newEchoUpstream(t)
	addr, first, stop := listenForTest(t, "proxy", map[string]string{"STRATA_DB": db, "STRATA_PROXY_MODE": "off"},
		"--addr", "127.0.0.1:0", "--openai-url", up.srv.URL+"/v1")
	if !strings.Contains(first, "off mode") {
		t.Fatalf("first line %q", first)
	}
	code, body := postJSON(t, addr+"/v1/chat/completions", `{"model":"m","user":"u1","messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"Authorization": "Bearer sk-caller"})
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	stop()
	if out := mustRun(t, db, "list"); !strings.Contains(out, "u1 ") || !strings.Contains(out, "2 turns") {
		t.Fatalf("list: %q", out)
	}

	cfg := filepath.Join(dir, "strata.yaml")
	if err := os.WriteFile(cfg, []byte("proxy:\n  budget: 12\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--addr", "0.0.0.0:7701"}, nil, "loopback only"},
		{[]string{"--mode", "shrink"}, nil, `--mode "shrink": want memory, compact or off`},
		{nil, map[string]string{"STRATA_PROXY_OPENAI_URL": "api.openai.com"}, `STRATA_PROXY_OPENAI_URL "api.openai.com"`},
		{nil, map[string]string{"STRATA_CONFIG": cfg}, `strata.yaml:2: proxy.budget "12": want a number of tokens`},
	} {
		var out bytes.Buffer
		env := map[string]string{"STRATA_DB": db}
		for k, v := range tc.env {
			env[k] = v
		}
		m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getenv: func(k string) string { return env[k] }}
		err := m.Run(context.Background(), append([]string{"proxy"}, tc.args...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("proxy %v %v: %v, want %q", tc.args, tc.env, err, tc.want)
		}
	}
}

// TestServeNoAuthProxy: under serve --no-auth, a model call whose
// Authorization carries the caller's key for the upstream is served
// without a token, not refused as a bad strata token.
func TestServeNoAuthProxy(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	up := newEchoUpstream(t)
	addr, _, _ := serveForTest(t, map[string]string{"STRATA_DB": db, "STRATA_PROXY_OPENAI_URL": up.srv.URL + "/v1"},
		"--addr", "127.0.0.1:0", "--no-auth")
	code, body := postJSON(t, addr+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"Authorization": "Bearer sk-caller"})
	if code != http.StatusOK || up.last().Get("Authorization") != "Bearer sk-caller" {
		t.Fatalf("%d %s", code, body)
	}
}
