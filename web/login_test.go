package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strata-memory/strata"
	"github.com/strata-memory/strata/extractive"
	"github.com/strata-memory/strata/httpapi"
	"github.com/strata-memory/strata/sqlite"
	"github.com/strata-memory/strata/web"
)

// TestLoginRefusesOtherOrigins: the sign-in form sets the cookie only
// when posted from the server's own page. A post from an opaque origin
// (Origin: null, a sandboxed frame) or another site is refused with 403
// and sets no cookie, which would otherwise sign the victim's browser in
// with the forger's token (login CSRF).
func TestLoginRefusesOtherOrigins(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "strata.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := strata.New(strata.Config{Store: st, Tokenizer: strata.CharEstimator{}, Summarizer: extractive.New()})
	if err != nil {
		t.Fatal(err)
	}
	secret, tok, err := strata.NewToken(m.Namespace(), "web test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	srv, err := httpapi.New(m, httpapi.Options{Tokens: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv.Mount("/ui/", web.New(web.Options{Memory: srv.MemoryOf, Tokens: srv.Tokens()}))
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(headers map[string]string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, ts.URL+"/ui/login", strings.NewReader(url.Values{"token": {secret}}.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for _, h := range []map[string]string{
		{"Origin": "null"},
		{"Origin": "https://evil.example"},
		{"Origin": "null", "Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "cross-site"},
	} {
		resp := post(h)
		if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
			t.Errorf("sign-in with %v: %d, cookies %v; want 403 and no cookie", h, resp.StatusCode, resp.Cookies())
		}
	}
	for _, h := range []map[string]string{{"Origin": ts.URL, "Sec-Fetch-Site": "same-origin"}, {}} {
		resp := post(h)
		if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 || resp.Cookies()[0].Name != httpapi.CookieName {
			t.Errorf("sign-in with %v: %d, cookies %v; want 303 and the cookie", h, resp.StatusCode, resp.Cookies())
		}
	}
}
