package client_test

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExamples runs the Python and JavaScript examples of examples/
// against a real server with tokens, where their interpreter exists.
func TestExamples(t *testing.T) {
	for _, ex := range []struct{ interpreter, script string }{
		{"python3", "client.py"},
		{"node", "client.mjs"},
	} {
		t.Run(ex.script, func(t *testing.T) {
			bin, err := exec.LookPath(ex.interpreter)
			if err != nil {
				t.Skipf("no %s here", ex.interpreter)
			}
			url, token, _ := serve(t)
			out, err := exec.Command(bin, filepath.Join("..", "examples", ex.script), url, token).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", ex.script, err, out)
			}
			for _, want := range []string{"added 2, already present 0", "added 0, already present 2", "of 300 tokens", "confirmation LX-4471"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("%s printed no %q:\n%s", ex.script, want, out)
				}
			}
		})
	}
}

// TestExamplesFail runs the examples against a server that is down, one
// that answers HTML, one that answers a problem, and with no URL: each
// must end with a message naming the fault and exit 1, not a stack trace.
func TestExamplesFail(t *testing.T) {
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte("<html>bad gateway</html>"))
	}))
	defer html.Close()
	okHTML := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("<html>a page</html>"))
	}))
	defer okHTML.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	url, _, _ := serve(t)
	for _, ex := range []struct{ interpreter, script string }{
		{"python3", "client.py"},
		{"node", "client.mjs"},
	} {
		t.Run(ex.script, func(t *testing.T) {
			bin, err := exec.LookPath(ex.interpreter)
			if err != nil {
				t.Skipf("no %s here", ex.interpreter)
			}
			for _, tc := range []struct {
				name string
				args []string
				want string
			}{
				{"down", []string{down.URL}, "cannot reach"},
				{"HTML error", []string{html.URL}, "502"},
				{"HTML answer", []string{okHTML.URL}, "not JSON"},
				{"bad token", []string{url, "strata_nope"}, "401"},
				{"no URL", nil, "usage"},
			} {
				out, err := exec.Command(bin, append([]string{filepath.Join("..", "examples", ex.script)}, tc.args...)...).CombinedOutput()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
				s := string(out)
				if code == 0 || !strings.Contains(s, tc.want) || strings.Contains(s, "Traceback") || strings.Contains(s, "    at ") {
					t.Errorf("%s: exit %d, %v\n%s\nwant a message with %q and no stack trace", tc.name, code, err, s, tc.want)
				}
			}
		})
	}
}
