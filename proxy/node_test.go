package proxy_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-memory/strata/proxy"
)

// openAINodeModules is the node_modules folder holding the npm openai
// package: STRATA_OPENAI_NODE, else the cache folder .ci/run installs
// .ci/openai-node's pinned package into.
func openAINodeModules() string {
	if d := os.Getenv("STRATA_OPENAI_NODE"); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "strata-ci-openai-node", "node_modules")
}

// TestOpenAINodeClient drives the proxy with the npm openai client (Node),
// streamed and not, through a tool round and a plain turn: the client
// gets the fake upstream's replies (its stream helper assembles the
// streamed ones), every message is stored once, the system prompt never,
// the caller's key goes upstream and is never stored, and a refused call
// raises the client's own BadRequestError with the proxy's words and the
// request's id.
func TestOpenAINodeClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the npm openai client test needs Node (Debian's nodejs; .ci/run installs it)")
	}
	mods := openAINodeModules()
	if _, err := os.Stat(filepath.Join(mods, "openai", "package.json")); err != nil {
		t.Skipf("the npm openai package is not in %s: install .ci/openai-node's with npm ci there (.ci/run does), or set STRATA_OPENAI_NODE to a node_modules folder that has it", mods)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "openai-node.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"plain", "stream"} {
		t.Run(how, func(t *testing.T) {
			r := newRig(t, proxy.Options{Mode: proxy.ModeMemory})
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(node, script, mods, r.proxy.URL+"/v1", how, "node-trip", apiKey)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("node: %v\n%s", err, stderr.String())
			}
			var out struct {
				Replies []struct {
					Content   *string `json:"content"`
					ToolCalls []struct {
						ID       string `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"replies"`
				Headers []map[string]string `json:"headers"`
				Error   *struct {
					Class     string `json:"class"`
					Status    int    `json:"status"`
					Type      string `json:"type"`
					Message   string `json:"message"`
					RequestID string `json:"requestID"`
				} `json:"error"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Fatalf("node printed %q: %v\n%s", stdout.String(), err, stderr.String())
			}
			if len(out.Replies) != 3 {
				t.Fatalf("%d replies", len(out.Replies))
			}
			if tc := out.Replies[0].ToolCalls; len(tc) != 1 || tc[0].Function.Name != "get_weather" || tc[0].Function.Arguments != `{"city":"Paris"}` {
				t.Fatalf("first reply %+v: want one get_weather call", out.Replies[0])
			}
			for i, want := range []string{sunny, "You said: Thanks, that helps."} {
				if c := out.Replies[i+1].Content; c == nil || *c != want {
					t.Fatalf("reply %d: %v, want %q", i+1, c, want)
				}
			}
			if how == "plain" {
				h := out.Headers[2]
				if h[strings.ToLower(proxy.HeaderConversation)] != "node-trip" || h[strings.ToLower(proxy.HeaderMode)] != "memory" {
					t.Fatalf("headers %v", h)
				}
			}
			if e := out.Error; e == nil || e.Class != "BadRequestError" || e.Status != 400 || e.Type != "invalid_request_error" ||
				!strings.Contains(e.Message, "messages[0]") || e.RequestID == "" {
				t.Fatalf("refused call: %+v", e)
			}
			got := r.up.last(t)
			if got.Header.Get("Authorization") != "Bearer "+apiKey {
				t.Fatalf("upstream Authorization %q", got.Header.Get("Authorization"))
			}
			r.px.Wait()
			ts := r.turns(t, "node-trip")
			want := []string{"user: What is the weather in Paris?", "assistant: call get_weather {\"city\":\"Paris\"}",
				"tool: result call_1 {\"sky\":\"clear\",\"celsius\":21}", "assistant: " + sunny,
				"user: Thanks, that helps.", "assistant: You said: Thanks, that helps."}
			checkTurns(t, ts, want)
			assertNoKey(t, r)
		})
	}
}
