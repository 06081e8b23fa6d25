package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeOpenAI is an OpenAI-compatible chat endpoint for tests. mode picks
// the answers: "ok", "down" (500) or "long" (always over budget).
type fakeOpenAI struct {
	mode  atomic.Value
	calls atomic.Int64
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(body, &req)
	switch f.mode.Load() {
	case "down":
		http.Error(w, `{"error":{"message":"the model is loading"}}`, http.StatusInternalServerError)
		return
	}
	text := "SUMMARY:\nThe friends talked about their week.\nFACTS:\n- They talked.\nTHEMES: week"
	if f.mode.Load() == "long" {
		text = "SUMMARY:\n" + strings.Repeat("They talked about many things at great length. ", 200)
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"x","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":40,"total_tokens":0}}`,
		req.Model, text, len(body)/4)
}

func runLLM(t *testing.T, db, url string, args ...string) string {
	t.Helper()
	var out, errb strings.Builder
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		return map[string]string{"STRATA_DB": db, "STRATA_LLM_PROVIDER": "openai", "STRATA_LLM_BASE_URL": url,
			"STRATA_LLM_MODEL": "tiny", "STRATA_LLM_TIMEOUT": "5s"}[k]
	}}
	if err := m.Run(context.Background(), args); err != nil {
		t.Fatalf("strata %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// TestModelEndToEnd: an import with a model configured calls no model;
// rollup --wait writes every summary with it; a server that is down leaves
// extractive summaries with the reason, upgraded by --retry-failed; a
// server that always answers over budget costs three calls per node; the
// calls show in stats --cost and the failures in review.
func TestModelEndToEnd(t *testing.T) {
	// The server that is down is retried with a backoff of a millisecond,
	// not the default second: the outcome is the same, without the waits.
	defer func(d time.Duration) { llmBackoff = d }(llmBackoff)
	llmBackoff = time.Millisecond
	fake := &fakeOpenAI{}
	fake.mode.Store("ok")
	srv := httptest.NewServer(fake)
	defer srv.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	file := writeJSONL(t, dir, "c", 40)
	runLLM(t, db, srv.URL+"/v1", "import", file)
	if n := fake.calls.Load(); n != 0 {
		t.Fatalf("import made %d model calls", n)
	}
	out := runLLM(t, db, srv.URL+"/v1", "rollup", "--wait")
	if !strings.Contains(out, "model summaries: 6 written, 0 over budget, 0 kept extractive (model failed), 6 calls") {
		t.Fatalf("rollup --wait: %s", out)
	}
	var tree struct {
		Nodes []struct {
			ID     string `json:"id"`
			Method string `json:"method"`
		} `json:"nodes"`
	}
	check := func(want string) {
		t.Helper()
		var exp struct {
			Node struct {
				Method, Fallback, Status string
			} `json:"node"`
		}
		if err := json.Unmarshal([]byte(runLLM(t, db, srv.URL+"/v1", "tree", "--conversation", "c", "--json")), &tree); err != nil {
			t.Fatal(err)
		}
		for _, n := range tree.Nodes {
			json.Unmarshal([]byte(runLLM(t, db, srv.URL+"/v1", "expand", n.ID, "--json")), &exp)
			if exp.Node.Method != want {
				t.Errorf("node %s: method %s (fallback %q), want %s", n.ID, exp.Node.Method, exp.Node.Fallback, want)
			}
		}
	}
	check("llm")
	// The server goes down: new nodes keep extractive summaries, with why.
	fake.mode.Store("down")
	more := writeJSONL(t, dir, "c", 60)
	runLLM(t, db, srv.URL+"/v1", "import", more)
	out = runLLM(t, db, srv.URL+"/v1", "rollup", "--wait")
	if !strings.Contains(out, "3 kept extractive (model failed)") {
		t.Fatalf("rollup --wait with the server down: %s", out)
	}
	if rv := runLLM(t, db, srv.URL+"/v1", "review"); strings.Count(rv, "kept extractive: model failed: openai: HTTP 500") != 3 {
		t.Errorf("review:\n%s", rv)
	}
	fake.mode.Store("ok")
	out = runLLM(t, db, srv.URL+"/v1", "rollup", "--retry-failed")
	if !strings.Contains(out, "3 written") || !strings.Contains(out, "3 failed nodes retried") {
		t.Fatalf("--retry-failed: %s", out)
	}
	check("llm")
	// Always over budget: exactly three calls per node, then over_budget.
	fake.mode.Store("long")
	before := fake.calls.Load()
	runLLM(t, db, srv.URL+"/v1", "import", writeJSONL(t, dir, "d", 10))
	out = runLLM(t, db, srv.URL+"/v1", "rollup", "--wait")
	if got := fake.calls.Load() - before; got != 3 || !strings.Contains(out, "1 over budget") {
		t.Fatalf("over budget: %d calls, %s", got, out)
	}
	// The node serves its extractive summary; review shows it beside the
	// rejected reply, and --retry-failed asks the model again.
	rv := runLLM(t, db, srv.URL+"/v1", "review", "--conversation", "d")
	if !strings.Contains(rv, "kept extractive: model reply over budget: ") || !strings.Contains(rv, "served: ") ||
		!strings.Contains(rv, "over_budget (") || !strings.Contains(rv, "): They talked about many things") {
		t.Errorf("review of the over-budget node:\n%s", rv)
	}
	before = fake.calls.Load()
	out = runLLM(t, db, srv.URL+"/v1", "rollup", "--conversation", "d", "--retry-failed")
	if got := fake.calls.Load() - before; got != 3 || !strings.Contains(out, "1 over budget") || !strings.Contains(out, "1 failed nodes retried") {
		t.Fatalf("--retry-failed of the over-budget node: %d calls, %s", got, out)
	}
	cost := runLLM(t, db, srv.URL+"/v1", "stats", "--cost")
	if !strings.Contains(cost, "model tiny:") || !strings.Contains(cost, "micro") {
		t.Errorf("stats --cost:\n%s", cost)
	}
}

// TestModelEndpointDownCLI: with nothing listening at the model's address,
// rollup --wait says once that the endpoint is unreachable, and review
// lists the nodes as pending with the reason.
func TestModelEndpointDownCLI(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/v1"
	l.Close()
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	runLLM(t, db, url, "import", writeJSONL(t, dir, "c", 40))
	start := time.Now()
	out := runLLM(t, db, url, "rollup", "--wait")
	if took := time.Since(start); strings.Count(out, "model endpoint unreachable") != 1 || !strings.Contains(out, "6 nodes stay pending: ") ||
		!strings.Contains(out, "connection refused") || took > 2*time.Minute { // a bound for waiting out every retry, not for speed
		t.Fatalf("rollup --wait against a closed port (%v):\n%s", took, out)
	}
	if rv := runLLM(t, db, url, "review"); strings.Count(rv, "pending, extractive until then: model endpoint unreachable") != 6 {
		t.Errorf("review:\n%s", rv)
	}
}
