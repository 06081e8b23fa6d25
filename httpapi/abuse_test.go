package httpapi

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/httpapi/wire"
	"github.com/strata-memory/strata/sqlite"
)

// newStoreServer serves a fresh store with no token; it returns the
// store, for the test to create and revoke tokens while it runs.
func newStoreServer(t *testing.T, opt Options) (*httptest.Server, *sqlite.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New()})
	if err != nil {
		t.Fatal(err)
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
	return ts, st
}

// putToken stores a new token of namespace ns and returns its secret and id.
func putToken(t *testing.T, st strata.TokenStore, ns string) (string, string) {
	t.Helper()
	secret, tok, err := strata.NewToken(ns, "test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutToken(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	return secret, tok.ID
}

// TestAnonymousServesOwnNamespaceOnly: with Anonymous (strata serve
// --no-auth), a request without a token is served in the server's
// namespace, but one with a token is checked and served in the token's
// namespace, from the request after the token was created; a revoked or
// unknown token is refused, never served as anonymous.
func TestAnonymousServesOwnNamespaceOnly(t *testing.T) {
	ts, st := newStoreServer(t, Options{Anonymous: true})
	turns := map[string]any{"turns": []map[string]any{{"role": "user", "content": "the server's own turn"}}}
	if code, _, data := as(t, ts, "", "POST", "/v1/conversations/c/turns", turns, nil); code != 200 {
		t.Fatalf("anonymous append: %d %s", code, data)
	}
	secret, id := putToken(t, st, "b")
	if code, _, data := as(t, ts, secret, "GET", "/v1/conversations/c", nil, nil); code != 404 {
		t.Errorf("b's token reading the server's namespace: %d %s, want 404", code, data)
	}
	var stats wire.NamespaceStats
	if code, _, data := as(t, ts, secret, "GET", "/v1/stats", nil, &stats); code != 200 || stats.Namespace != "b" {
		t.Errorf("stats with b's token: %d %s, want namespace b", code, data)
	}
	if _, err := st.RevokeToken(context.Background(), id, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{secret, "strata_nope"} {
		if code, _, data := as(t, ts, secret, "GET", "/v1/conversations/c", nil, nil); code != 401 {
			t.Errorf("token %.12s...: %d %s, want 401", secret, code, data)
		}
	}
	if code, _, data := as(t, ts, "", "GET", "/v1/conversations/c", nil, nil); code != 200 {
		t.Errorf("anonymous read: %d %s", code, data)
	}
}

// TestAuthBeforeBody: a request without a valid token is refused on its
// headers alone. The client here announces a 16 MiB body and sends none
// of it: the 401 must come back without the server waiting for the body
// (before, the body was read and checked first, and the server held each
// unauthenticated upload in memory).
func TestAuthBeforeBody(t *testing.T) {
	// Before, the body was awaited until the request's timeout, then
	// answered 408.
	ts, _ := newTokenServer(t, Options{Timeout: 5 * time.Second}, "a")
	for _, auth := range []string{"", "Authorization: Bearer strata_nope\r\n"} {
		conn, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST /v1/conversations/c/turns HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n", auth, DefaultMaxBody)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		conn.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("auth %q with the body not sent: %d %s, want 401 on the headers alone", auth, resp.StatusCode, body)
		}
	}
}

// TestRetryAfterWholeSeconds: a 429's Retry-After is whole seconds rounded
// up and never 0, however short the wait (a wait under a millisecond was
// answered "Retry-After: 0").
func TestRetryAfterWholeSeconds(t *testing.T) {
	for _, c := range []struct {
		wait time.Duration
		want string
	}{{0, "1"}, {time.Nanosecond, "1"}, {300 * time.Microsecond, "1"}, {999 * time.Millisecond, "1"},
		{time.Second, "1"}, {time.Second + time.Nanosecond, "2"}, {2500 * time.Millisecond, "3"}} {
		w := httptest.NewRecorder()
		tooMany(w, c.wait, "too many requests for this token")
		if got := w.Header().Get("Retry-After"); got != c.want || w.Code != 429 {
			t.Errorf("wait %v: %d Retry-After %q, want 429 %q", c.wait, w.Code, got, c.want)
		}
	}
}

// TestMCPBatchCountsEachCall: a JSON-RPC batch on /mcp costs the token one
// request per call, so a batch cannot make more calls than the rate limit
// allows; a batch larger than the burst is refused naming the limit.
func TestMCPBatchCountsEachCall(t *testing.T) {
	// One request a minute: nothing refills the bucket during the test.
	ts, sec := newTokenServer(t, Options{RateLimit: 1.0 / 60, RateBurst: 5}, "a", "b")
	batch := func(secret string, n int) (int, string) {
		t.Helper()
		calls := make([]string, n)
		for i := range calls {
			calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i+1)
		}
		req, err := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader("["+strings.Join(calls, ",")+"]"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
		resp, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b[:min(len(b), 300)])
	}
	if code, body := batch(sec["a"], 4); code != 200 || !strings.HasPrefix(body, `[{"jsonrpc"`) {
		t.Fatalf("a batch of 4 within the burst of 5: %d %s", code, body)
	}
	if code, body := batch(sec["a"], 2); code != 429 {
		t.Errorf("a batch of 2 with 1 request left: %d %s, want 429", code, body)
	}
	if code, body := batch(sec["a"], 1); code != 200 {
		t.Errorf("the last request left: %d %s", code, body)
	}
	if code, body := batch(sec["b"], 6); code != 400 || !strings.Contains(body, "batch of 6 calls") {
		t.Errorf("a batch of 6 past the burst of 5: %d %s, want 400 naming the limit", code, body)
	}
}

// TestStatsShowNamespaceOnly: a token's /v1/stats has its namespace's
// figures, not where the store is nor how large it is as a whole (which
// other namespaces' data makes up).
func TestStatsShowNamespaceOnly(t *testing.T) {
	ts, sec := newTokenServer(t, Options{}, "a", "b")
	in := map[string]any{"turns": []map[string]any{{"role": "user", "content": "a turn of namespace a"}}}
	if code, _, data := as(t, ts, sec["a"], "POST", "/v1/conversations/c/turns", in, nil); code != 200 {
		t.Fatalf("append: %d %s", code, data)
	}
	code, _, data := as(t, ts, sec["b"], "GET", "/v1/stats", nil, nil)
	if code != 200 || strings.Contains(string(data), "strata.db") || !strings.Contains(string(data), `"bytes_on_disk":0`) {
		t.Errorf("stats as b: %d %s, want no location and no store size", code, data)
	}
}
