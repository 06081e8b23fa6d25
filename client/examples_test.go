package client_test

import (
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
