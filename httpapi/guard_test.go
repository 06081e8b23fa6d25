package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// rawCall sends body as it is and returns the status, the Content-Type
// and the body of the answer.
func rawCall(t *testing.T, url, method, path, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, url+path, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), b.String()
}

// TestZoomFarFuture asks for periods at the end of year 9999, whose end
// lies past what RFC 3339 can write: the period ends at the last instant
// of 9999 and the answer is written, never a panic and an empty reply.
func TestZoomFarFuture(t *testing.T) {
	ts := newServer(t, Options{})
	if code, data := call(t, ts, "POST", "/v1/conversations/c/turns", map[string]any{"turns": turns(0, 2)}, nil); code != 200 {
		t.Fatalf("setup: %d %s", code, data)
	}
	for _, when := range []string{"9999-12-31", "9999-12", "9999-W52", "in%20December%209999", "9999-12-30..9999-12-31"} {
		code, ctype, body := rawCall(t, ts.URL, "GET", "/v1/conversations/c/zoom?when="+when, "")
		if code != 200 || !strings.Contains(ctype, "application/json") || !strings.Contains(body, `"end":"9999-12-31T23:59:59.999999999Z"`) {
			t.Errorf("when=%s: %d %s %.300s; want a 200 with the period ending at the end of 9999", when, code, ctype, body)
		}
	}
}

// TestContextFarFuture asks a context whose query names the last periods
// of year 9999: an answer, not a panic.
func TestContextFarFuture(t *testing.T) {
	ts := newServer(t, Options{})
	if code, data := call(t, ts, "POST", "/v1/conversations/c/turns", map[string]any{"turns": turns(0, 2)}, nil); code != 200 {
		t.Fatalf("setup: %d %s", code, data)
	}
	for _, q := range []string{"what happened on 9999-12-31", "in December 9999", "9999-W52", "late 9999"} {
		code, data := call(t, ts, "POST", "/v1/conversations/c/context", map[string]any{"budget": 500, "query": q}, nil)
		if code != 200 {
			t.Errorf("query %q: %d %.300s", q, code, data)
		}
	}
}

// TestNonFiniteParam sends numbers JSON cannot write back: a 400 naming
// the parameter, not "error marshaling response".
func TestNonFiniteParam(t *testing.T) {
	ts := newServer(t, Options{})
	if code, data := call(t, ts, "POST", "/v1/conversations/c/turns", map[string]any{"turns": turns(0, 2)}, nil); code != 200 {
		t.Fatalf("setup: %d %s", code, data)
	}
	for _, v := range []string{"Infinity", "-Infinity", "NaN", "inf", "1e999"} {
		code, ctype, body := rawCall(t, ts.URL, "POST", "/v1/conversations/c/turns/1/pin?importance="+v, "")
		if code != 400 || !strings.Contains(ctype, "problem+json") || !strings.Contains(body, "query.importance") {
			t.Errorf("importance=%s: %d %s %.300s; want a 400 naming query.importance", v, code, ctype, body)
		}
	}
}

// TestBodyTextKept sends text that a JSON decoder would change into U+FFFD
// (a lone surrogate escape, raw invalid UTF-8): a 400 naming the field,
// and nothing stored; a surrogate pair and an escaped backslash before
// "ud800" are text and are kept as sent.
func TestBodyTextKept(t *testing.T) {
	ts := newServer(t, Options{})
	for _, tc := range []struct{ body, where string }{
		{`{"turns":[{"role":"user","content":"a \ud800 b"}]}`, "body.turns[0].content"},
		{`{"turns":[{"role":"user","content":"ok"},{"role":"user","content":"x","tags":["fine","\udc00"]}]}`, "body.turns[1].tags[1]"},
		{`{"turns":[{"role":"user","content":"high then high \ud800\ud800"}]}`, "body.turns[0].content"},
		{`{"turns":[{"role":"user","content":"ok","metadata":{"k\ud83d":1}}]}`, "body.turns[0].metadata.k"},
		{"{\"turns\":[{\"role\":\"user\",\"content\":\"raw \xed\xa0\x80 surrogate\"}]}", "body.turns[0].content"},
		{"{\"turns\":[{\"role\":\"user\",\"name\":\"bad \xff\",\"content\":\"x\"}]}", "body.turns[0].name"},
	} {
		code, ctype, body := rawCall(t, ts.URL, "POST", "/v1/conversations/c/turns", tc.body)
		if code != 400 || !strings.Contains(ctype, "problem+json") || !strings.Contains(body, tc.where) {
			t.Errorf("%s: %d %s %.300s; want a 400 naming %s", tc.body, code, ctype, body, tc.where)
		}
	}
	if code, _, body := rawCall(t, ts.URL, "GET", "/v1/conversations/c", ""); code != 404 {
		t.Errorf("a refused body created the conversation: %d %s", code, body)
	}
	code, _, body := rawCall(t, ts.URL, "POST", "/v1/conversations/c/turns",
		`{"turns":[{"role":"user","content":"pair \ud83d\ude00 and \\ud800 as text"}]}`)
	if code != 200 {
		t.Fatalf("a surrogate pair: %d %s", code, body)
	}
	var page struct{ Turns []struct{ Content string } }
	if code, data := call(t, ts, "GET", "/v1/conversations/c/turns", nil, &page); code != 200 || len(page.Turns) != 1 ||
		page.Turns[0].Content != "pair \U0001F600 and \\ud800 as text" {
		t.Errorf("stored: %d %s", code, data)
	}
}

// TestStrictKeys sends keys that differ from the schema's only in case,
// and null where a list is required: both are refused, naming the key.
func TestStrictKeys(t *testing.T) {
	ts := newServer(t, Options{})
	long := strings.Repeat("x", 3000)
	for _, tc := range []struct{ body, where string }{
		{`{"turns":[{"ext_id":"ok","EXT_ID":"` + long + `","role":"user","content":"hi"}]}`, "EXT_ID"},
		{`{"Turns":[{"role":"user","content":"hi"}]}`, "Turns"},
		{`{"turns":[{"Role":"user","content":"hi"}]}`, "Role"},
		{`{"turns":null}`, "body.turns"},
	} {
		code, ctype, body := rawCall(t, ts.URL, "POST", "/v1/conversations/c/turns", tc.body)
		if code != 400 || !strings.Contains(ctype, "problem+json") || !strings.Contains(body, tc.where) {
			t.Errorf("%.80s: %d %s %.300s; want a 400 naming %s", tc.body, code, ctype, body, tc.where)
		}
	}
	if code, _, body := rawCall(t, ts.URL, "GET", "/v1/conversations/c", ""); code != 404 {
		t.Errorf("a refused body created the conversation: %d %s", code, body)
	}
	// An optional list may still be null: it reads as left out.
	if code, _, body := rawCall(t, ts.URL, "POST", "/v1/conversations/c/turns", `{"turns":[{"role":"user","content":"hi","tags":null}]}`); code != 200 {
		t.Errorf("tags null: %d %s", code, body)
	}
}

// TestMCPBodyText sends an MCP call whose arguments carry raw invalid
// UTF-8 or a lone surrogate: a JSON-RPC invalid params error, nothing
// stored.
func TestMCPBodyText(t *testing.T) {
	ts := newServer(t, Options{})
	mcpCall := func(args string) (int, string) {
		body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"remember","arguments":` + args + `}}`
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	for _, args := range []string{
		"{\"conversation\":\"m\",\"turns\":[{\"role\":\"user\",\"content\":\"bad \xff byte\"}]}",
		`{"conversation":"m","turns":[{"role":"user","content":"lone \udfff"}]}`,
	} {
		code, body := mcpCall(args)
		if code != 200 || !strings.Contains(body, `"id":7`) || !strings.Contains(body, "-32602") ||
			!strings.Contains(body, "body.params.arguments.turns[0].content") {
			t.Errorf("%q: %d %.300s; want a JSON-RPC invalid params error naming the field", args, code, body)
		}
	}
	if code, body := mcpCall(`{"conversation":"m","turns":[{"role":"user","content":"fine \ud83d\ude00"}]}`); code != 200 || strings.Contains(body, "error") {
		t.Fatalf("a good call: %d %s", code, body)
	}
	var page struct{ Turns []struct{ Content string } }
	if code, data := call(t, ts, "GET", "/v1/conversations/m/turns", nil, &page); code != 200 || len(page.Turns) != 1 {
		t.Errorf("stored: %d %s, want only the good turn", code, data)
	}
}

// TestPanicIsLogged500 mounts a handler that panics: the client gets a
// 500 problem with the request id and no internal text, the log a record
// with the panic, and the server goes on serving.
func TestPanicIsLogged500(t *testing.T) {
	var logs bytes.Buffer
	s, err := New(newMemory(t), Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.Mount("GET /boom", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("secret internal state") }))
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	req, _ := http.NewRequest("GET", ts.URL+"/boom", nil)
	req.Header.Set("X-Request-Id", "req-42")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the panic cut the connection: %v", err)
	}
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || resp.Header.Get("Content-Type") != "application/problem+json" ||
		resp.Header.Get("X-Request-Id") != "req-42" || !strings.Contains(b.String(), "req-42") || strings.Contains(b.String(), "secret") {
		t.Errorf("panic: %d %v %s", resp.StatusCode, resp.Header, b.String())
	}
	if !strings.Contains(logs.String(), "secret internal state") || !strings.Contains(logs.String(), "request_id=req-42") {
		t.Errorf("the log holds no record of the panic:\n%s", logs.String())
	}
	if code, _, body := rawCall(t, ts.URL, "GET", "/v1/conversations", ""); code != 200 {
		t.Errorf("after the panic: %d %s", code, body)
	}
}

// TestErrorsAreProblems asks what the router, not an operation, refuses:
// an unknown route, a wrong method, a malformed MCP request. Each answer
// is a JSON problem with a request id.
func TestErrorsAreProblems(t *testing.T) {
	ts := newServer(t, Options{})
	for _, tc := range []struct {
		method, path, body string
		code               int
	}{
		{"GET", "/v2/nothing", "", 404},
		{"GET", "/", "", 404},
		{"PUT", "/v1/conversations", `{}`, 405},
		{"DELETE", "/healthz", "", 405},
		{"GET", "/mcp", "", 405},
		{"POST", "/mcp", `{"jsonrpc":`, 400},
	} {
		req, _ := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
		if tc.body != "" {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Status int    `json:"status"`
			Detail string `json:"detail"`
		}
		err = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != tc.code || err != nil || p.Status != tc.code || p.Detail == "" ||
			resp.Header.Get("Content-Type") != "application/problem+json" || resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("%s %s: %d %v %+v %v; want a %d problem", tc.method, tc.path, resp.StatusCode, resp.Header, p, err, tc.code)
		}
	}
}
