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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/client"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/httpapi/wire"
	"github.com/strata-memory/strata/sqlite"
)

// newTokenServer serves a store whose tokens are required, with one token
// for each namespace named.
func newTokenServer(t *testing.T, opt Options, namespaces ...string) (*httptest.Server, map[string]string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
		Now: func() time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) }})
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string]string{}
	for _, ns := range namespaces {
		secret, tok, err := strata.NewToken(ns, "test", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := st.PutToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
		secrets[ns] = secret
	}
	opt.Tokens = st
	opt.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := New(m, opt)
	if err != nil {
		t.Fatal(err)
	}
	s.SetReady(true)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts, secrets
}

// as sends a request with a bearer token ("" for none) and decodes the
// answer into out if given.
func as(t *testing.T, ts *httptest.Server, secret, method, path string, body, out any) (int, http.Header, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, ts.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode == 200 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, data)
		}
	}
	return resp.StatusCode, resp.Header, data
}

// TestTokensSealNamespaces: without a valid token nothing under /v1 is
// served; with a token of another namespace, every route that names the
// first namespace's conversations, nodes or learnings answers 404, and the
// lists and searches are empty, never 403 with a hint.
func TestTokensSealNamespaces(t *testing.T) {
	ts, sec := newTokenServer(t, Options{}, "team-a", "team-b")
	a, b := sec["team-a"], sec["team-b"]

	for _, tc := range []struct{ secret, want string }{{"", "bearer token is required"}, {"strata_nope", "invalid or revoked token"}, {"Basic x", "invalid"}} {
		code, h, data := as(t, ts, tc.secret, "GET", "/v1/conversations", nil, nil)
		if code != 401 || !strings.Contains(string(data), tc.want) || !strings.Contains(h.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("token %q: %d %s (WWW-Authenticate %q)", tc.secret, code, data, h.Get("WWW-Authenticate"))
		}
	}
	for _, open := range []string{"/healthz", "/openapi.json"} {
		if code, _, _ := as(t, ts, "", "GET", open, nil, nil); code != 200 {
			t.Errorf("%s without a token: %d, want 200", open, code)
		}
	}

	// team-a writes a conversation with a pyramid and a learning.
	base := time.Date(2023, 5, 8, 9, 0, 0, 0, time.UTC)
	var in []map[string]any
	for i := 0; i < 40; i++ {
		content := "The tomatoes in the garden are ripening."
		if i == 3 {
			content = "Jon's job is teaching at the school now."
		}
		in = append(in, map[string]any{"ext_id": fmt.Sprintf("t%d", i), "role": []string{"user", "assistant"}[i%2],
			"name": []string{"Jon", "Ana"}[i%2], "content": content, "time": base.Add(time.Duration(i) * time.Hour)})
	}
	var res strata.IngestResult
	if code, _, data := as(t, ts, a, "POST", "/v1/conversations/c1/turns", map[string]any{"turns": in}, &res); code != 200 || res.Nodes == 0 {
		t.Fatalf("append as team-a: %d %s", code, data)
	}
	var tree strata.Tree
	if code, _, data := as(t, ts, a, "GET", "/v1/conversations/c1/tree", nil, &tree); code != 200 || len(tree.Nodes) == 0 {
		t.Fatalf("tree as team-a: %d %s", code, data)
	}
	node := tree.Nodes[0].ID
	var ls wire.LearningList
	if code, _, data := as(t, ts, a, "GET", "/v1/conversations/c1/learnings", nil, &ls); code != 200 || len(ls.Learnings) == 0 {
		t.Fatalf("learnings as team-a: %d %s", code, data)
	}
	learning := ls.Learnings[0].ID

	// team-b sees none of it, through every route that names a
	// conversation, a node or a learning. Routes that name none (list,
	// search, stats, stateless compact) are checked below, and appending
	// or creating under the same id makes team-b's own conversation.
	probes := []struct{ method, tmpl, path string }{
		{"GET", "/v1/conversations/{id}", "/v1/conversations/c1"},
		{"GET", "/v1/conversations/{id}/turns", "/v1/conversations/c1/turns"},
		{"POST", "/v1/conversations/{id}/context", "/v1/conversations/c1/context"},
		{"GET", "/v1/conversations/{id}/tree", "/v1/conversations/c1/tree"},
		{"GET", "/v1/conversations/{id}/zoom", "/v1/conversations/c1/zoom?when=2023-05-08"},
		{"GET", "/v1/nodes/{id}/expand", "/v1/nodes/" + node + "/expand?conversation=c1"},
		{"GET", "/v1/nodes/{id}/expand", "/v1/nodes/" + node + "/expand"},
		{"POST", "/v1/conversations/{id}/turns/{seq}/pin", "/v1/conversations/c1/turns/1/pin"},
		{"GET", "/v1/conversations/{id}/learnings", "/v1/conversations/c1/learnings"},
		{"POST", "/v1/learnings/{id}/confirm", fmt.Sprintf("/v1/learnings/%d/confirm", learning)},
		{"POST", "/v1/learnings/{id}/reject", fmt.Sprintf("/v1/learnings/%d/reject", learning)},
		{"DELETE", "/v1/conversations/{id}", "/v1/conversations/c1"},
		{"GET", "/v1/search", "/v1/search?q=tomatoes&conversation=c1"},
		{"GET", "/v1/conversations/{id}/nodes", "/v1/conversations/c1/nodes?level=1"},
		{"POST", "/v1/conversations/{id}/important", "/v1/conversations/c1/important?period=2023-05-08"},
		{"POST", "/v1/nodes/{id}/resummarize", "/v1/nodes/" + node + "/resummarize"},
	}
	owned := map[string]bool{"POST /v1/conversations/{id}/turns": true, "POST /v1/conversations/{id}/compact": true}
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if code, _, data := as(t, ts, "", "GET", "/openapi.json", nil, &doc); code != 200 {
		t.Fatalf("openapi.json: %d %s", code, data)
	}
	for path, ops := range doc.Paths {
		if !strings.Contains(path, "{") {
			continue
		}
		for method := range ops {
			key := strings.ToUpper(method) + " " + path
			found := owned[key]
			for _, p := range probes {
				found = found || p.method+" "+p.tmpl == key
			}
			if !found {
				t.Errorf("%s names a resource but is not probed with another namespace's token", key)
			}
		}
	}
	for _, r := range probes {
		var body any
		if r.tmpl == "/v1/conversations/{id}/context" {
			body = map[string]any{"budget": 500}
		}
		code, _, data := as(t, ts, b, r.method, r.path, body, nil)
		if code != 404 || strings.Contains(string(data), "tomatoes") {
			t.Errorf("%s %s as team-b: %d %s, want 404 and nothing of team-a", r.method, r.path, code, data)
		}
	}
	var cs wire.ConversationList
	if code, _, data := as(t, ts, b, "GET", "/v1/conversations", nil, &cs); code != 200 || len(cs.Conversations) != 0 {
		t.Errorf("list as team-b: %d %s", code, data)
	}
	var hits wire.SearchResult
	if code, _, data := as(t, ts, b, "GET", "/v1/search?q=tomatoes", nil, &hits); code != 200 || len(hits.Hits) != 0 {
		t.Errorf("search as team-b: %d %s", code, data)
	}
	var st wire.NamespaceStats
	if code, _, data := as(t, ts, b, "GET", "/v1/stats", nil, &st); code != 200 || st.Turns != 0 || st.Namespace != "team-b" {
		t.Errorf("stats as team-b: %d %s", code, data)
	}
	// team-b's own conversation of the same id is its own.
	if code, _, data := as(t, ts, b, "POST", "/v1/conversations/c1/turns", map[string]any{"turns": in[:2]}, &res); code != 200 || res.Added != 2 {
		t.Errorf("append as team-b: %d %s", code, data)
	}
	var c strata.Conversation
	if code, _, data := as(t, ts, a, "GET", "/v1/conversations/c1", nil, &c); code != 200 || c.Turns != 40 {
		t.Errorf("team-a's conversation after team-b wrote its own: %d %s", code, data)
	}
}

// TestRateLimit: a token past its rate gets 429 with Retry-After; another
// token is not held back by it.
func TestRateLimit(t *testing.T) {
	ts, sec := newTokenServer(t, Options{RateLimit: 0.5, RateBurst: 2}, "a", "b")
	for i := 0; i < 2; i++ {
		if code, _, data := as(t, ts, sec["a"], "GET", "/v1/conversations", nil, nil); code != 200 {
			t.Fatalf("request %d within the burst: %d %s", i+1, code, data)
		}
	}
	code, h, data := as(t, ts, sec["a"], "GET", "/v1/conversations", nil, nil)
	if code != 429 || h.Get("Retry-After") == "" || h.Get("Retry-After") == "0" {
		t.Errorf("past the burst: %d %s (Retry-After %q), want 429 with Retry-After", code, data, h.Get("Retry-After"))
	}
	if code, _, data := as(t, ts, sec["b"], "GET", "/v1/conversations", nil, nil); code != 200 {
		t.Errorf("the other token: %d %s", code, data)
	}
}

// TestDeleteConversation forgets a conversation over HTTP: the audit
// record comes back, the conversation is gone, and a token of another
// namespace cannot delete it (404).
func TestDeleteConversation(t *testing.T) {
	ctx := context.Background()
	ts, sec := newTokenServer(t, Options{}, "a", "b")
	a, b := client.New(ts.URL, sec["a"], ts.Client()), client.New(ts.URL, sec["b"], ts.Client())
	if _, err := a.Append(ctx, "c", clientTurns(0, 12)); err != nil {
		t.Fatalf("append: %v", err)
	}
	if _, err := b.Forget(ctx, "c", ""); status(err) != 404 {
		t.Errorf("delete as another namespace: %v", err)
	}
	d, err := a.Forget(ctx, "c", "asked")
	if err != nil || d.Turns != 12 || d.Reason != "asked" || d.Namespace != "a" {
		t.Fatalf("delete: %+v %v", d, err)
	}
	if _, err := a.Conversation(ctx, "c"); status(err) != 404 {
		t.Errorf("get after delete: %v", err)
	}
	if _, err := a.Forget(ctx, "c", ""); status(err) != 404 {
		t.Errorf("delete again: %v", err)
	}
}

// bearer adds a token to every request of an MCP client.
type bearer struct {
	secret string
	next   http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.secret)
	return b.next.RoundTrip(r)
}

// TestMCPOverHTTP: the MCP tools at /mcp need a token and act in its
// namespace: what one token remembers, another cannot read.
func TestMCPOverHTTP(t *testing.T) {
	ts, sec := newTokenServer(t, Options{}, "a", "b")
	ctx := context.Background()
	connect := func(secret string) (*mcp.ClientSession, error) {
		tr := &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1,
			HTTPClient: &http.Client{Transport: bearer{secret, http.DefaultTransport}}}
		return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, tr, nil)
	}
	if _, err := connect("strata_nope"); err == nil {
		t.Errorf("an MCP session with an invalid token was opened")
	}
	ca, err := connect(sec["a"])
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close()
	res, err := ca.CallTool(ctx, &mcp.CallToolParams{Name: "remember", Arguments: map[string]any{"conversation": "c",
		"turns": []map[string]any{{"role": "user", "content": "The spare key is under the blue pot.", "ext_id": "k1"}}}})
	if err != nil || res.IsError {
		t.Fatalf("remember as a: %v %+v", err, res)
	}
	res, err = ca.CallTool(ctx, &mcp.CallToolParams{Name: "context", Arguments: map[string]any{"conversation": "c", "budget": 300}})
	if err != nil || res.IsError || !strings.Contains(fmt.Sprint(res.StructuredContent), "blue pot") {
		t.Fatalf("context as a: %v %+v", err, res)
	}
	cb, err := connect(sec["b"])
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	res, err = cb.CallTool(ctx, &mcp.CallToolParams{Name: "context", Arguments: map[string]any{"conversation": "c", "budget": 300}})
	if err != nil || !res.IsError || strings.Contains(fmt.Sprint(res.Content), "blue pot") {
		t.Errorf("context of a's conversation as b: %v %+v, want an error result and nothing of a", err, res)
	}
	res, err = cb.CallTool(ctx, &mcp.CallToolParams{Name: "recall", Arguments: map[string]any{"query": "blue pot"}})
	if err != nil || res.IsError || strings.Contains(fmt.Sprint(res.StructuredContent), "blue pot") {
		t.Errorf("recall as b: %v %+v, want no hit", err, res)
	}
}

// TestCreateConversation creates a conversation with its policy before any
// turn: creating it again with the same settings returns it, with another
// policy is 409, and an unknown policy is 400.
func TestCreateConversation(t *testing.T) {
	ctx := context.Background()
	ts, sec := newTokenServer(t, Options{}, "a")
	a := client.New(ts.URL, sec["a"], ts.Client())
	c, err := a.CreateConversation(ctx, "diary", "calendar", "Europe/Lisbon")
	if err != nil || c.Policy != "calendar" || c.TimeZone != "Europe/Lisbon" || c.Turns != 0 {
		t.Fatalf("create: %+v %v", c, err)
	}
	if _, err := a.CreateConversation(ctx, "diary", "calendar", "Europe/Lisbon"); err != nil {
		t.Errorf("create again: %v", err)
	}
	if _, err := a.CreateConversation(ctx, "diary", "sessions", ""); status(err) != 409 {
		t.Errorf("create with another policy: %v", err)
	}
	if _, err := a.CreateConversation(ctx, "x", "nope", ""); status(err) != 400 {
		t.Errorf("an unknown policy: %v", err)
	}
	if res, err := a.Append(ctx, "diary", clientTurns(0, 2)); err != nil || res.Added != 2 {
		t.Errorf("append to the created conversation: %+v %v", res, err)
	}
}
