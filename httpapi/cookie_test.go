package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// TestCookieAuth checks the web page's token cookie: /v1 takes it only
// with the page's header (a request forged by another site cannot set
// one), in the token's namespace alone, and the page's paths send a
// browser without a valid cookie to the sign-in form.
func TestCookieAuth(t *testing.T) {
	ts, secrets := newTokenServer(t, Options{}, "a", "b")
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path, cookie string, page bool) *http.Response {
		t.Helper()
		body := strings.NewReader("")
		if method == http.MethodPost {
			body = strings.NewReader(`{"turns":[{"role":"user","content":"the cookie's turn"}]}`)
		}
		req, err := http.NewRequest(method, ts.URL+path, body)
		if err != nil {
			t.Fatal(err)
		}
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/json")
		}
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: CookieName, Value: cookie})
		}
		if page {
			req.Header.Set(PageHeader, "1")
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := do(http.MethodPost, "/v1/conversations/c/turns", secrets["a"], false); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("cookie without %s: %d; want 401", PageHeader, r.StatusCode)
	}
	if r := do(http.MethodPost, "/v1/conversations/c/turns", secrets["a"], true); r.StatusCode != http.StatusOK {
		t.Errorf("cookie with %s: %d; want 200", PageHeader, r.StatusCode)
	}
	if r := do(http.MethodGet, "/v1/conversations/c", secrets["a"], true); r.StatusCode != http.StatusOK {
		t.Errorf("reading with the cookie: %d; want 200", r.StatusCode)
	}
	if r := do(http.MethodGet, "/v1/conversations/c", secrets["b"], true); r.StatusCode != http.StatusNotFound {
		t.Errorf("another namespace's cookie: %d; want 404", r.StatusCode)
	}
	if r := do(http.MethodGet, "/v1/conversations/c", "strata_not-a-token", true); r.StatusCode != http.StatusUnauthorized {
		t.Errorf("an unknown token in the cookie: %d; want 401", r.StatusCode)
	}
	for _, cookie := range []string{"", "strata_not-a-token"} {
		r := do(http.MethodGet, "/ui/conversations", cookie, false)
		if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != LoginPath {
			t.Errorf("page with cookie %q: %d to %q; want 303 to %s", cookie, r.StatusCode, r.Header.Get("Location"), LoginPath)
		}
	}
	// A valid cookie passes to the page's handler (none is mounted here).
	if r := do(http.MethodGet, "/ui/conversations", secrets["a"], false); r.StatusCode != http.StatusNotFound {
		t.Errorf("page with a valid cookie: %d; want it served (404: nothing mounted)", r.StatusCode)
	}
	if r := do(http.MethodGet, LoginPath, "", false); r.StatusCode != http.StatusNotFound {
		t.Errorf("the sign-in form needs no cookie: %d; want it served (404: nothing mounted)", r.StatusCode)
	}
}
