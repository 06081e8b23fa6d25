package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/postgres"
	"github.com/strata-memory/strata/sqlite"
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
		var resp *http.Response
		var err error
		if len(body) <= 1<<20 {
			resp, err = ts.Client().Do(req)
		} else {
			// A body over the limit is answered 413 and its connection
			// closed before the body is read, and http.Client may then
			// report the broken pipe of its write rather than the answer:
			// this request goes over a connection of its own, its body
			// written beside the read of the answer.
			conn, derr := net.Dial("tcp", ts.Listener.Addr().String())
			if derr != nil {
				t.Fatal(derr)
			}
			defer conn.Close()
			go req.Write(conn)
			resp, err = http.ReadResponse(bufio.NewReader(conn), req)
		}
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

// storeServers returns a server over a fresh SQLite file, and one over a
// scratch PostgreSQL schema when STRATA_TEST_POSTGRES names a database
// (scripts/pgtest starts one), by store name.
func storeServers(t *testing.T) map[string]*httptest.Server {
	t.Helper()
	ctx := context.Background()
	stores := map[string]strata.Store{}
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	stores["sqlite"] = st
	if dsn := os.Getenv("STRATA_TEST_POSTGRES"); dsn != "" {
		pg, drop, err := postgres.OpenScratch(ctx, dsn, "strata_badinput")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pg.Close(); drop() })
		stores["postgres"] = pg
	} else {
		t.Log(`STRATA_TEST_POSTGRES is not set: SQLite only (export "$(scripts/pgtest)" for both stores)`)
	}
	out := map[string]*httptest.Server{}
	for name, st := range stores {
		m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New(),
			Now: func() time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) }})
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(m, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		s.SetReady(true)
		ts := httptest.NewServer(s.Handler())
		t.Cleanup(ts.Close)
		out[name] = ts
	}
	return out
}

// TestBadTextBothStores sends the text no store keeps (a NUL, escaped as
// \u0000 in a body or %00 in a URL; invalid UTF-8 as %FF in a URL) and the
// explicit zero time to every route that takes text, on SQLite and on
// PostgreSQL, and wants the same answer from both: 400 naming the field,
// or 404 for a lookup that finds nothing, never a 500, and nothing
// stored by a refused request.
func TestBadTextBothStores(t *testing.T) {
	type answer struct {
		code int
		body string
	}
	type request struct{ method, path, body string }
	var reqs []request
	for _, bad := range []string{"%00", "%FF"} {
		for _, r := range [][2]string{
			{"GET", "/v1/conversations/a" + bad},
			{"DELETE", "/v1/conversations/a" + bad},
			{"DELETE", "/v1/conversations/c?reason=x" + bad},
			{"GET", "/v1/conversations/a" + bad + "/turns"},
			{"GET", "/v1/conversations/a" + bad + "/tree"},
			{"GET", "/v1/conversations/a" + bad + "/zoom?when=2024-01-01"},
			{"GET", "/v1/conversations/c/zoom?when=2024" + bad},
			{"GET", "/v1/conversations/a" + bad + "/nodes?level=1"},
			{"GET", "/v1/conversations/a" + bad + "/learnings"},
			{"POST", "/v1/conversations/a" + bad + "/turns/1/pin"},
			{"POST", "/v1/conversations/a" + bad + "/important?period=2024-01-01"},
			{"POST", "/v1/conversations/c/important?period=2024" + bad},
			{"GET", "/v1/nodes/a" + bad + "/expand"},
			{"GET", "/v1/nodes/a/expand?conversation=c" + bad},
			{"POST", "/v1/nodes/a" + bad + "/resummarize"},
			{"GET", "/v1/search?q=a" + bad},
			{"GET", "/v1/search?q=a&conversation=c" + bad},
		} {
			reqs = append(reqs, request{r[0], r[1], ""})
		}
		reqs = append(reqs,
			request{"POST", "/v1/conversations/a" + bad + "/context", `{"budget": 100}`},
			request{"POST", "/v1/conversations/a" + bad + "/turns", `{"turns": [{"role": "user", "content": "x"}]}`},
			request{"POST", "/v1/conversations/a" + bad + "/compact", `{"messages": [{"role": "user", "content": "hi"}]}`})
	}
	for _, turn := range []string{
		`{"role": "user", "content": "a\u0000b"}`,
		`{"role": "user", "content": "ab", "name": "a\u0000"}`,
		`{"role": "user", "content": "ab", "ext_id": "a\u0000"}`,
		`{"role": "user", "content": "ab", "session_label": "a\u0000"}`,
		`{"role": "user", "content": "ab", "model": "a\u0000"}`,
		`{"role": "user", "content": "ab", "tags": ["a\u0000"]}`,
		`{"role": "user", "content": "ab", "metadata": {"k": "a\u0000"}}`,
		`{"role": "user", "content": "ab", "metadata": {"k\u0000": "a"}}`,
		`{"role": "assistant", "content": "ab", "tool_calls": [{"name": "f\u0000", "arguments": "{}"}]}`,
		`{"role": "assistant", "content": "ab", "tool_calls": [{"name": "f", "arguments": "{\"a\": \"\u0000\"}"}]}`,
		`{"role": "tool", "content": "ab", "tool_results": [{"name": "f", "content": "x\u0000"}]}`,
		`{"role": "user", "content": "ab", "time": "0001-01-01T00:00:00Z"}`,
	} {
		reqs = append(reqs, request{"POST", "/v1/conversations/c/turns", `{"turns": [{"role": "user", "content": "fine"}, ` + turn + `]}`})
	}
	reqs = append(reqs,
		request{"POST", "/v1/conversations", `{"id": "a\u0000"}`},
		request{"POST", "/v1/conversations/c%00/compact", `{"messages": [{"role": "user", "content": "hi"}]}`})

	answers := map[string][]answer{}
	for name, ts := range storeServers(t) {
		raw := func(method, path, body string) answer {
			req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return answer{resp.StatusCode, string(b)}
		}
		if a := raw("POST", "/v1/conversations/c/turns", `{"turns": [{"role": "user", "content": "the first turn", "ext_id": "e1"}]}`); a.code != 200 {
			t.Fatalf("%s: setup: %+v", name, a)
		}
		for _, r := range reqs {
			a := raw(r.method, r.path, r.body)
			if a.code != 400 && a.code != 404 {
				t.Errorf("%s: %s %s %s: %d %.300s; want 400 or 404", name, r.method, r.path, r.body, a.code, a.body)
			}
			if a.code == 400 && !strings.Contains(a.body, "NUL") && !strings.Contains(a.body, "UTF-8") && !strings.Contains(a.body, "zero time") {
				t.Errorf("%s: %s %s %s: %.300s; want the problem named", name, r.method, r.path, r.body, a.body)
			}
			answers[name] = append(answers[name], a)
		}
		var c struct{ Turns int64 }
		if a := raw("GET", "/v1/conversations/c", ""); a.code != 200 || json.Unmarshal([]byte(a.body), &c) != nil || c.Turns != 1 {
			t.Errorf("%s: after the bad requests: %+v; want the 1 turn of before", name, a)
		}
		if a := raw("GET", "/v1/conversations", ""); !strings.Contains(a.body, `"conversations":[{`) || strings.Count(a.body, `"id":`) != 1 {
			t.Errorf("%s: a refused request created a conversation: %s", name, a.body)
		}
	}
	if pg, ok := answers["postgres"]; ok {
		for i, a := range answers["sqlite"] {
			if pg[i].code != a.code || pg[i].body != a.body {
				t.Errorf("%s %s %s: SQLite answers %d %.200s, PostgreSQL %d %.200s", reqs[i].method, reqs[i].path, reqs[i].body, a.code, a.body, pg[i].code, pg[i].body)
			}
		}
	}
}
