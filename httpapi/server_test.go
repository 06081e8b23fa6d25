package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/client"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/sqlite"
)

// newMemory opens a Memory over a fresh SQLite file.
func newMemory(t testing.TB) *strata.Memory {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Now: func() time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// newServer serves a Memory over a fresh SQLite file.
func newServer(t testing.TB, opt Options) *httptest.Server {
	t.Helper()
	m := newMemory(t)
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s, err := New(m, opt)
	if err != nil {
		t.Fatal(err)
	}
	s.SetReady(true)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// call sends body (marshalled unless it is a string or []byte) and decodes
// the JSON answer into out if given. It returns the status and raw body.
func call(t *testing.T, ts *httptest.Server, method, path string, body any, out any) (int, []byte) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, ts.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, data)
		}
	}
	return resp.StatusCode, data
}

// turns returns n turns alternating user and assistant, a minute apart,
// with ext_ids from first.
func turns(first, n int) []map[string]any {
	var out []map[string]any
	base := time.Date(2023, 5, 8, 13, 0, 0, 0, time.UTC)
	for i := first; i < first+n; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		out = append(out, map[string]any{"ext_id": fmt.Sprintf("t%d", i), "role": role,
			"content": fmt.Sprintf("turn %d talks about the garden, tomatoes and the weather in spring number %d", i, i),
			"time":    base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)})
	}
	return out
}

// clientTurns is turns(first, n) as the client sends them.
func clientTurns(first, n int) []client.Turn {
	var out []client.Turn
	for _, m := range turns(first, n) {
		at, _ := time.Parse(time.RFC3339, m["time"].(string))
		out = append(out, client.Turn{ExtID: m["ext_id"].(string), Role: strata.Role(m["role"].(string)),
			Content: m["content"].(string), Time: at})
	}
	return out
}

func TestAppendIdempotent(t *testing.T) {
	ts := newServer(t, Options{})
	var res strata.IngestResult
	if code, data := call(t, ts, "POST", "/v1/conversations/c1/turns", map[string]any{"turns": turns(0, 3)}, &res); code != 200 {
		t.Fatalf("append: %d %s", code, data)
	}
	if res.Received != 3 || res.Added != 3 || res.Skipped != 0 {
		t.Fatalf("first append: %+v", res)
	}
	// The same batch again plus two new turns: three skipped, two added.
	if code, data := call(t, ts, "POST", "/v1/conversations/c1/turns", map[string]any{"turns": turns(0, 5)}, &res); code != 200 {
		t.Fatalf("append again: %d %s", code, data)
	}
	if res.Received != 5 || res.Added != 2 || res.Skipped != 3 {
		t.Fatalf("second append: %+v", res)
	}
	var c strata.Conversation
	if code, data := call(t, ts, "GET", "/v1/conversations/c1", nil, &c); code != 200 || c.Turns != 5 {
		t.Fatalf("get: %d %s", code, data)
	}
	var list struct {
		Conversations []strata.Conversation `json:"conversations"`
	}
	if code, data := call(t, ts, "GET", "/v1/conversations", nil, &list); code != 200 || len(list.Conversations) != 1 || list.Conversations[0].ID != "c1" {
		t.Fatalf("list: %d %s", code, data)
	}
}

func TestContextBudget(t *testing.T) {
	ts := newServer(t, Options{})
	if code, data := call(t, ts, "POST", "/v1/conversations/c1/turns", map[string]any{"turns": turns(0, 200)}, nil); code != 200 {
		t.Fatalf("append: %d %s", code, data)
	}
	for _, budget := range []int{150, 400, 2000} {
		var pkg strata.Package
		code, data := call(t, ts, "POST", "/v1/conversations/c1/context", map[string]any{"query": "tomatoes", "budget": budget}, &pkg)
		if code != 200 {
			t.Fatalf("context %d: %d %s", budget, code, data)
		}
		if pkg.Budget != budget || pkg.Tokens > budget || pkg.Tokens == 0 || len(pkg.Items) == 0 || pkg.Turns != 200 {
			t.Fatalf("budget %d: tokens %d, %d items, turns %d", budget, pkg.Tokens, len(pkg.Items), pkg.Turns)
		}
		// The package's own count is what the engine's tokenizer says of it.
		if n := (strata.CharEstimator{}).Count(pkg.Rendered); n != pkg.Tokens {
			t.Fatalf("budget %d: package says %d tokens, its rendering counts %d", budget, pkg.Tokens, n)
		}
	}
	// The smallest budgets hold no package: an error naming the budget.
	code, data := call(t, ts, "POST", "/v1/conversations/c1/context", map[string]any{"budget": 3}, nil)
	if code != 400 || !strings.Contains(string(data), "budget") {
		t.Fatalf("tiny budget: %d %s", code, data)
	}
}

func TestNotFound(t *testing.T) {
	ts := newServer(t, Options{})
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/conversations/nope"},
		{"POST", "/v1/conversations/nope/context"},
		{"GET", "/v1/conversations/nope/tree"},
		{"GET", "/v1/conversations/nope/learnings"},
		{"GET", "/v1/search?q=garden&conversation=nope"},
		{"GET", "/v1/nodes/n0000/expand"},
	} {
		var body any
		if c.method == "POST" {
			body = map[string]any{"budget": 500}
		}
		code, data := call(t, ts, c.method, c.path, body, nil)
		if code != 404 || !strings.Contains(string(data), "not found") {
			t.Errorf("%s %s: %d %s", c.method, c.path, code, data)
		}
	}
}

// problem is huma's error body (RFC 9457 problem details).
type problem struct {
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Errors []struct {
		Message  string `json:"message"`
		Location string `json:"location"`
	} `json:"errors"`
}

func TestBadBodyNamesField(t *testing.T) {
	ts := newServer(t, Options{})
	for _, c := range []struct{ name, body, want string }{
		{"bad role", `{"turns":[{"role":"robot","content":"hi"}]}`, "body.turns[0].role"},
		{"no role", `{"turns":[{"content":"hi"}]}`, "property role"},
		{"wrong type", `{"turns":[{"role":"user","content":42}]}`, "body.turns[0].content"},
		{"unknown field", `{"turns":[{"role":"user","content":"hi","colour":"red"}]}`, "colour"},
		{"no turns", `{"turns":[]}`, "body.turns"},
		{"malformed", `{"turns":[`, "unexpected end of JSON input"},
	} {
		code, data := call(t, ts, "POST", "/v1/conversations/c1/turns", c.body, nil)
		if code != 400 {
			t.Errorf("%s: status %d %s", c.name, code, data)
			continue
		}
		if !strings.Contains(string(data), c.want) {
			t.Errorf("%s: body does not name %q: %s", c.name, c.want, data)
		}
	}
	// The engine's own validation, past the schema, comes back as a 400
	// naming the turn and field.
	code, data := call(t, ts, "POST", "/v1/conversations/c1/turns", `{"turns":[{"role":"user","content":"ok"},{"role":"assistant","tool_calls":[{"name":""}]}]}`, nil)
	if code != 400 || !strings.Contains(string(data), "turn 2: tool_calls[0].name: missing") {
		t.Errorf("engine validation: %d %s", code, data)
	}
	code, data = call(t, ts, "POST", "/v1/conversations/c1/context", `{"budget":0}`, nil)
	if code != 400 || !strings.Contains(string(data), "budget") {
		t.Errorf("budget 0: %d %s", code, data)
	}
	// Nothing of the bad batches was stored.
	if code, _ := call(t, ts, "GET", "/v1/conversations/c1", nil, nil); code != 404 {
		t.Errorf("a bad batch created the conversation: %d", code)
	}
}

func TestBodyTooLarge(t *testing.T) {
	ts := newServer(t, Options{MaxBody: 64 << 10})
	big := strings.Repeat("x", 100<<10)
	code, data := call(t, ts, "POST", "/v1/conversations/c1/turns",
		map[string]any{"turns": []map[string]any{{"role": "user", "content": big}}}, nil)
	if code != http.StatusRequestEntityTooLarge {
		t.Fatalf("huge body: %d %s", code, data)
	}
	// Under the bound the same route works.
	code, data = call(t, ts, "POST", "/v1/conversations/c1/turns",
		map[string]any{"turns": []map[string]any{{"role": "user", "content": big[:30<<10]}}}, nil)
	if code != 200 {
		t.Fatalf("body under the bound: %d %s", code, data)
	}
}

func TestOpenAPIComplete(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(m, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
	}
	if code, data := call(t, ts, "GET", "/openapi.json", nil, &doc); code != 200 {
		t.Fatalf("openapi.json: %d %s", code, data)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Errorf("openapi version %q", doc.OpenAPI)
	}
	if len(s.routes) < 13 {
		t.Fatalf("only %d routes registered", len(s.routes))
	}
	for _, r := range s.routes {
		if _, ok := doc.Paths[r.Path][strings.ToLower(r.Method)]; !ok {
			t.Errorf("%s %s is not in /openapi.json", r.Method, r.Path)
		}
	}
	// And the document holds nothing the server does not route.
	n := 0
	for _, ops := range doc.Paths {
		n += len(ops)
	}
	if n != len(s.routes) {
		t.Errorf("/openapi.json has %d operations, the server registered %d", n, len(s.routes))
	}
}

func TestHealthReady(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New()})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s, err := New(m, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	if code, _ := call(t, ts, "GET", "/healthz", nil, nil); code != 200 {
		t.Errorf("healthz: %d", code)
	}
	if code, _ := call(t, ts, "GET", "/readyz", nil, nil); code != 503 {
		t.Errorf("readyz before ready: %d", code)
	}
	s.SetReady(true)
	if code, _ := call(t, ts, "GET", "/readyz", nil, nil); code != 200 {
		t.Errorf("readyz when ready: %d", code)
	}
	// Every request is logged with its id, which the response carries.
	req, _ := http.NewRequest("GET", ts.URL+"/v1/stats", nil)
	req.Header.Set("X-Request-Id", "abc123")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Request-Id") != "abc123" {
		t.Errorf("stats: %d, request id %q", resp.StatusCode, resp.Header.Get("X-Request-Id"))
	}
	if !strings.Contains(logs.String(), `"request_id":"abc123"`) || !strings.Contains(logs.String(), `"path":"/v1/stats"`) {
		t.Errorf("log lacks the request: %s", logs.String())
	}
}

func TestTimeout(t *testing.T) {
	ts := newServer(t, Options{Timeout: time.Nanosecond})
	// Past it in the engine: 503 saying so.
	code, data := call(t, ts, "GET", "/v1/conversations", nil, nil)
	if code != http.StatusServiceUnavailable || !strings.Contains(string(data), "timeout") {
		t.Errorf("a request past its deadline: %d %s", code, data)
	}
	// Past the deadline before the body is read: 408.
	code, data = call(t, ts, "POST", "/v1/conversations/c1/turns", map[string]any{"turns": turns(0, 50)}, nil)
	if code != http.StatusRequestTimeout {
		t.Errorf("a body read past its deadline: %d %s", code, data)
	}
}

// TestMetrics: /metrics counts requests by route pattern (not by id) and
// status, times them, and counts the turns appended.
func TestMetrics(t *testing.T) {
	ts := newServer(t, Options{})
	call(t, ts, "POST", "/v1/conversations/c1/turns", map[string]any{"turns": turns(0, 3)}, nil)
	call(t, ts, "POST", "/v1/conversations/c2/turns", map[string]any{"turns": turns(0, 3)}, nil)
	call(t, ts, "POST", "/v1/conversations/c2/turns", map[string]any{"turns": turns(0, 3)}, nil)
	call(t, ts, "GET", "/v1/conversations/nope", nil, nil)
	code, data := call(t, ts, "GET", "/metrics", nil, nil)
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`strata_http_requests_total{code="200",route="POST /v1/conversations/{id}/turns"} 3`,
		`strata_http_requests_total{code="404",route="GET /v1/conversations/{id}"} 1`,
		`strata_http_request_duration_seconds_count{route="POST /v1/conversations/{id}/turns"} 3`,
		`strata_turns_ingested_total{outcome="added"} 6`,
		`strata_turns_ingested_total{outcome="skipped"} 3`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(string(data), "c1") {
		t.Errorf("/metrics labels a series with a conversation id")
	}
}
