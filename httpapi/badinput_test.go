package httpapi

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestBadInput sends what a careless or hostile client sends and checks
// each answer: a 4xx naming the problem, never a 500, and nothing stored
// by a refused request. docs/http.md lists the same table.
func TestBadInput(t *testing.T) {
	ts, sec := newTokenServer(t, Options{MaxBody: 1 << 20}, "a", "b")
	a := sec["a"]
	if code, _, data := as(t, ts, a, "POST", "/v1/conversations/c/turns", map[string]any{"turns": turns(0, 2)}, nil); code != 200 {
		t.Fatalf("setup: %d %s", code, data)
	}
	raw := func(secret, method, path, body string) (int, string) {
		req, _ := http.NewRequest(method, ts.URL+path, bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		if secret != "" {
			req.Header.Set("Authorization", "Bearer "+secret)
		}
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	huge := `{"turns":[{"role":"user","content":"` + strings.Repeat("x", 2<<20) + `"}]}`
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
		want                     string
	}{
		{"malformed JSON", "POST", "/v1/conversations/c/turns", `{"turns": [`, 400, "unexpected end of JSON"},
		{"wrong type", "POST", "/v1/conversations/c/turns", `{"turns": "hello"}`, 400, "body.turns"},
		{"unknown field", "POST", "/v1/conversations/c/turns", `{"turns": [{"role": "user", "content": "hi", "mood": "ok"}]}`, 400, "mood"},
		{"unknown role", "POST", "/v1/conversations/c/turns", `{"turns": [{"role": "boss", "content": "hi"}]}`, 400, "role"},
		{"empty content", "POST", "/v1/conversations/c/turns", `{"turns": [{"role": "user", "content": ""}]}`, 400, "content"},
		{"time out of range", "POST", "/v1/conversations/c/turns", `{"turns": [{"role": "user", "content": "hi", "time": "2300-01-01T00:00:00Z"}]}`, 400, "time"},
		{"invalid UTF-8", "POST", "/v1/conversations/c/turns", "{\"turns\": [{\"role\": \"user\", \"content\": \"bad \xff byte\"}]}", 400, "not valid UTF-8"},
		{"negative budget", "POST", "/v1/conversations/c/context", `{"budget": -1}`, 400, "budget"},
		{"id with a slash", "GET", "/v1/conversations/a%2Fb", "", 404, "not found"},
		{"id with dots", "GET", "/v1/conversations/..", "", 404, ""},
		{"unknown learning", "POST", "/v1/learnings/123456/confirm", "", 404, "not found"},
		{"learning id not a number", "POST", "/v1/learnings/abc/confirm", "", 400, "path.id"},
		{"body over the limit", "POST", "/v1/conversations/c/turns", huge, 413, "larger than"},
	} {
		code, body := raw(a, tc.method, tc.path, tc.body)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %.300s; want %d naming %q", tc.name, code, body, tc.code, tc.want)
		}
	}
	// Another namespace's ids: not found, as if they did not exist.
	if code, body := raw(sec["b"], "GET", "/v1/conversations/c", ""); code != 404 {
		t.Errorf("another namespace's conversation: %d %s", code, body)
	}
	// Nothing a refused request carried was stored.
	var c struct{ Turns int64 }
	if code, _, data := as(t, ts, a, "GET", "/v1/conversations/c", nil, &c); code != 200 || c.Turns != 2 {
		t.Errorf("after the bad requests: %d %s, want the 2 turns of before", code, data)
	}
}
