package checkpoint_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact/checkpoint"
	"github.com/strata-memory/strata/compact/internal/yardstick"
	"github.com/strata-memory/strata/tiktoken"
)

// fitSpan is a span of a coding agent on a Go service, small enough that
// listing every identifier in it takes less than half of the checkpoint
// budget: a user who gives a task with a ticket, a dashboard URL and
// constraints (some alike but for a path), many reads of one package's
// files (cat, and head -n of another package), failing test runs (a
// panic with its index and stack, an assertion naming the test, error
// logs with codes, upstream URLs, request ids and refused connections,
// a 502), passing runs (a -v run's tests, the address a server printed,
// a curl's request id, git's commit hash), and files written and edited.
// The names vary with the seed.
func fitSpan(seed uint64) []checkpoint.Entry {
	r := rand.New(rand.NewPCG(seed, seed*7919+1))
	hex := func(n int) string {
		const digits = "0123456789abcdef"
		for {
			b := make([]byte, n)
			for i := range b {
				b[i] = digits[r.IntN(16)]
			}
			s := string(b)
			if strings.ContainsAny(s, "abcdef") && strings.ContainsAny(s, "0123456789") {
				return s
			}
		}
	}
	alnum := func(n int) string {
		const chars = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
		b := make([]byte, n)
		for i := range b {
			b[i] = chars[r.IntN(len(chars))]
		}
		b[n-1] = "23456789"[r.IntN(8)]
		return string(b)
	}
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	svc := pick("ledger", "relay", "quota", "billing")
	pkg := pick("router", "upstream", "limiter", "session")
	mod := "github.com/acme/" + svc + "-gw"
	port := 8000 + r.IntN(900)
	adminPort := 9100 + r.IntN(800)
	ticket := fmt.Sprintf("GW-%d", 1000+r.IntN(9000))
	incident := fmt.Sprintf("https://status.acme.dev/incidents/%d", 3000+r.IntN(6000))
	upstream := fmt.Sprintf("http://%s-backend.internal:%d/v2/%s", svc, 7000+r.IntN(900), pkg)
	code := fmt.Sprintf("E%d", 1000+r.IntN(8999))
	test := "Test" + strings.ToUpper(pkg[:1]) + pkg[1:] + pick("Retry", "Timeout", "Match", "Budget")

	var span []checkpoint.Entry
	id := 0
	callID := func() string { id++; return fmt.Sprintf("call_%02d", id) }
	tool := func(name, args, out string) {
		c := callID()
		span = append(span, checkpoint.Entry{Role: "assistant", Kind: "tool_call", Name: name, CallID: c, Text: args},
			checkpoint.Entry{Role: "tool", Kind: "tool_result", Name: name, CallID: c, Text: out})
	}
	shell := func(cmd, out string) {
		a, _ := json.Marshal(map[string]string{"command": cmd})
		tool("shell", string(a), out)
	}
	write := func(name, path, content, out string) {
		a, _ := json.Marshal(map[string]string{"path": path, "content": content})
		tool(name, string(a), out)
	}

	span = append(span, user(fmt.Sprintf("%s: %s requests through the %s gateway fail since this morning (see %s). "+
		"The %s listener on port %d must keep working while you fix it.", ticket, pkg, svc, incident, pkg, port)),
		said("I'll read the package first."))
	for _, f := range []string{"internal/" + pkg + "/client.go", "internal/" + pkg + "/pool.go", "internal/" + pkg + "/config.go"} {
		span = append(span, user("Don't touch "+f+" in this change."), said("Understood."))
	}
	span = append(span, user(fmt.Sprintf("Never change the admin port %d or the ADMIN_TOKEN handling.", adminPort)), said("Understood."))

	// Many reads of one package's files, and of another with head -n.
	files := []string{"client", "pool", "config", "retry", "backoff", "handler", "metrics", "errors", "health", "dial", "codec", "limits"}
	for _, f := range files {
		p := "internal/" + pkg + "/" + f + ".go"
		src := fmt.Sprintf("package %s\n\n// %s keeps the %s of the %s gateway.\nfunc %s%s() error {\n\treturn nil\n}\n",
			pkg, f, f, svc, strings.ToUpper(f[:1])+f[1:], "Step")
		if f == "config" {
			src += fmt.Sprintf("\nconst defaultUpstream = %q\n", upstream)
		}
		shell("cat "+p, src)
	}
	for _, f := range []string{"server", "routes", "middleware", "auth"} {
		shell("head -n 40 cmd/gateway/"+f+".go", "package main\n\n// "+f+" wiring of the gateway\nfunc main() {}\n")
	}

	// A failing run: a panic with its index and stack.
	frameFile := fmt.Sprintf("internal/%s/retry.go:%d", pkg, 40+r.IntN(200))
	shell("go test ./internal/"+pkg+"/", fmt.Sprintf("--- FAIL: %s (0.01s)\n"+
		"panic: runtime error: index out of range [%d] with length %d [recovered]\n\n"+
		"goroutine %d [running]:\n"+
		"%s/internal/%s.(*Client).next(0xc000%s)\n\t/src/%s/%s +0x%s\n"+
		"%s/internal/%s.%s(0xc000%s)\n\t/src/%s/internal/%s/retry_test.go:%d +0x%s\n"+
		"FAIL\t%s/internal/%s\t0.0%ds\nFAIL\n",
		test, 3+r.IntN(4), 3, 18+r.IntN(40),
		mod, pkg, hex(6), svc, frameFile, hex(3),
		mod, pkg, test, hex(6), svc, pkg, 20+r.IntN(80), hex(3),
		mod, pkg, 1+r.IntN(9)))

	// A failing run of the service: error logs with codes, upstream URLs,
	// request ids and refused connections, repeated but for their ids.
	var log strings.Builder
	fmt.Fprintf(&log, "%s listening on 127.0.0.1:%d\n", svc, port)
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&log, "ERROR %s upstream call failed request_id=req_%s url=%s: dial tcp 10.4.%d.%d:%d: connect: connection refused\n",
			code, alnum(10), upstream, r.IntN(250), 1+r.IntN(250), 7000+r.IntN(900))
	}
	fmt.Fprintf(&log, "ERROR upstream timeout after 30s trace=%s status 502\n", hex(16))
	fmt.Fprintf(&log, "fatal: giving up on %s after 5 retries (ECONNRESET)\nexit status 1\n", upstream)
	shell("go run ./cmd/gateway -config configs/"+svc+".yaml", log.String())

	// A second run of the service: its log is longer, with codes, trace
	// ids and addresses on every error line.
	var log2 strings.Builder
	fmt.Fprintf(&log2, "%s listening on 127.0.0.1:%d (admin 127.0.0.1:%d)\n", svc, port, adminPort)
	for i := 0; i < 14; i++ {
		fmt.Fprintf(&log2, "2024-05-%02dT10:%02d:%02dZ level=error msg=\"upstream refused\" code=E%d trace_id=%s peer=10.9.%d.%d:%d path=/v2/%s/%s attempt=%d\n",
			10+r.IntN(9), r.IntN(60), r.IntN(60), 1000+r.IntN(8999), hex(16), r.IntN(250), 1+r.IntN(250), 7000+r.IntN(900), pkg, alnum(6), 1+i%3)
	}
	fmt.Fprintf(&log2, "HTTP/1.1 503 Service Unavailable from %s\nexit status 2\n", upstream)
	shell("go run ./cmd/gateway -config configs/"+svc+"-canary.yaml", log2.String())

	// A helper script that fails with a traceback.
	script := fmt.Sprintf("scripts/replay_%s.py", svc)
	shell("python3 "+script+" --since 1h", fmt.Sprintf("Traceback (most recent call last):\n  File \"/opt/tools/%s\", line %d, in <module>\n    main()\n"+
		"  File \"/opt/tools/scripts/replay_lib.py\", line %d, in fetch\n    raise ReplayError(code, url)\n"+
		"replay_lib.ReplayError: R%d fetching %s/replay?batch=bat_%s\n", script, 10+r.IntN(90), 100+r.IntN(200), 100+r.IntN(900), upstream, alnum(8)))

	// An assertion failure naming the test and its line.
	tline := fmt.Sprintf("%s_test.go:%d", pkg, 30+r.IntN(300))
	shell(fmt.Sprintf("go test -run %sBackoff ./internal/%s/", test, pkg), fmt.Sprintf("--- FAIL: %sBackoff (0.00s)\n    %s: backoff(3) = 800ms, want 400ms\nFAIL\nFAIL\t%s/internal/%s\t0.012s\n",
		test, tline, mod, pkg))

	// Files written and edited.
	fix := fmt.Sprintf("internal/%s/retry_budget.go", pkg)
	write("write_file", fix, fmt.Sprintf("package %s\n\n// retryBudget caps retries per request (%s).\ntype retryBudget struct{ left int }\n\nfunc newRetryBudget(n int) *retryBudget { return &retryBudget{left: n} }\n", pkg, ticket), "wrote "+fix)
	a, _ := json.Marshal(map[string]string{"path": "internal/" + pkg + "/retry.go", "old_string": "for i := 0; i <= len(c.hosts); i++", "new_string": "for i := 0; i < len(c.hosts); i++"})
	tool("edit_file", string(a), "edited internal/"+pkg+"/retry.go")
	testFile := fmt.Sprintf("internal/%s/retry_budget_test.go", pkg)
	write("write_file", testFile, fmt.Sprintf("package %s\n\nfunc TestRetryBudget%s(t *testing.T) {}\n", pkg, strings.ToUpper(svc[:1])+svc[1:]), "wrote "+testFile)

	// Passing runs: a -v run's tests, a server's address, a curl's
	// request id, a commit.
	var v strings.Builder
	var passed []string
	for _, n := range []string{"Match", "Params", "Budget", "Drain", "Close"} {
		name := fmt.Sprintf("Test%s%s", strings.ToUpper(pkg[:1])+pkg[1:], n)
		passed = append(passed, name)
		fmt.Fprintf(&v, "=== RUN   %s\n--- PASS: %s (0.00s)\n", name, name)
	}
	fmt.Fprintf(&v, "=== RUN   %s\n--- PASS: %s (0.01s)\nPASS\nok  \t%s/internal/%s\t0.4%ds\n", test, test, mod, pkg, r.IntN(10))
	shell("go test -v ./internal/"+pkg+"/", v.String())
	var ps strings.Builder
	ps.WriteString("CONTAINER ID   IMAGE                 STATUS          PORTS                    NAMES\n")
	for _, n := range []string{"postgres", "redis", svc + "-backend"} {
		p := 5000 + r.IntN(4000)
		fmt.Fprintf(&ps, "%s   %s:latest   Up 2 hours      0.0.0.0:%d->%d/tcp   %s-%s\n", hex(12), n, p, p, svc, n)
	}
	shell("docker ps", ps.String())
	var gl strings.Builder
	for i := 0; i < 5; i++ {
		fmt.Fprintf(&gl, "%s %s: %s\n", hex(7), pick("router", "retry", "limits", "docs", "ci"), pick("tidy", "fix flake", "bump deps", "log peers", "split config"))
	}
	shell("git log --oneline -5", gl.String())
	var gr strings.Builder
	for _, f := range []string{"client", "retry", "dial"} {
		fmt.Fprintf(&gr, "internal/%s/%s.go:%d:\tdeadline := time.Now().Add(c.timeout)\n", pkg, f, 10+r.IntN(300))
	}
	shell("grep -rn \"time.Now().Add\" internal/"+pkg+"/", gr.String())
	var acc strings.Builder
	for i := 0; i < 4; i++ {
		fmt.Fprintf(&acc, "10.1.0.%d - - [12/May/2024:10:%02d:11 +0000] \"GET /v2/%s/ord_%s HTTP/1.1\" 200 512 req=req_%s\n", 2+i, 10+i, pkg, alnum(8), alnum(10))
	}
	shell("tail -n 4 /var/log/"+svc+"/access.log", acc.String())
	okPort := 39000 + r.IntN(900)
	reqID := "req_" + alnum(12)
	shell(fmt.Sprintf("curl -si http://127.0.0.1:%d/healthz", okPort), fmt.Sprintf("HTTP/1.1 200 OK\nx-request-id: %s\ncontent-type: application/json\n\n{\"status\":\"ok\",\"upstream\":\"%s\",\"build\":\"%s\",\"instance\":\"%s-%s-%s-%s-%s\"}\n", reqID, upstream, hex(12), hex(8), hex(4), hex(4), hex(4), hex(12)))
	commit := hex(7)
	shell(fmt.Sprintf("git commit -am \"%s: cap retries per request\"", ticket), fmt.Sprintf("[fix/%s %s] %s: cap retries per request\n 3 files changed, 41 insertions(+), 6 deletions(-)\n create mode 100644 %s\n", strings.ToLower(ticket), commit, ticket, fix))
	span = append(span, said(fmt.Sprintf("Fixed: the retry loop in `internal/%s/retry.go` went one past the last host. Committed as %s.", pkg, commit)))
	return span
}

// spanIdentifiers returns what the yardstick's own scanner (not the
// checkpoint's) finds in a span: in the user's and the assistant's text,
// in every string of a tool call's arguments and in tool output. A diff's
// a/ and b/ paths are not identifiers.
func spanIdentifiers(t *testing.T, span []checkpoint.Entry) []string {
	seen := map[string]bool{}
	var out []string
	addText := func(s string) {
		for _, l := range strings.Split(s, "\n") {
			for _, id := range yardstick.Identifiers(l) {
				if !seen[id] && !strings.HasPrefix(id, "a/") && !strings.HasPrefix(id, "b/") {
					seen[id] = true
					out = append(out, id)
				}
			}
		}
	}
	for _, e := range span {
		if e.Kind != "tool_call" {
			addText(e.Text)
			continue
		}
		var args map[string]any
		if err := json.Unmarshal([]byte(e.Text), &args); err != nil {
			t.Fatalf("tool call arguments %s: %v", e.Text, err)
		}
		keys := make([]string, 0, len(args))
		for k := range args {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if s, ok := args[k].(string); ok {
				addText(s)
			}
		}
	}
	return out
}

// When listing every identifier of a span takes at most half of the
// checkpoint budget, the checkpoint keeps every one: those on a failing
// output's error lines and in its stack, those a passing output printed,
// the files written, what the user said and what only a read showed,
// with the reads collapsed into one line per pattern.
func TestEverythingFitsEveryClassSurvives(t *testing.T) {
	tok, err := tiktoken.New(tiktoken.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	w := newWriter(t, checkpoint.Options{Tokenizer: tok})
	for seed := uint64(1); seed <= 6; seed++ {
		span := fitSpan(seed)
		ids := spanIdentifiers(t, span)
		if n := tok.Count(strings.Join(ids, "\n")); n > checkpoint.DefaultBudget/2 {
			t.Fatalf("seed %d: listing the %d identifiers takes %d tokens, more than half the budget: the case does not test the rule", seed, len(ids), n)
		}
		if len(ids) < 45 {
			t.Fatalf("seed %d: only %d identifiers: the case is too thin", seed, len(ids))
		}
		res, err := w.Checkpoint(context.Background(), span, "")
		if err != nil {
			t.Fatal(err)
		}
		var lost []string
		for _, id := range ids {
			if !containsToken(res.Text, id) {
				lost = append(lost, id)
			}
		}
		if len(lost) > 0 {
			t.Errorf("seed %d: %d of %d identifiers lost: %q\n%s", seed, len(lost), len(ids), lost, res.Text)
		}
		if !strings.Contains(res.Text, "cat ×12 under internal/") {
			t.Errorf("seed %d: the reads are not one line:\n%s", seed, res.Text)
		}
	}
}

// containsToken reports whether s holds tok where no letter, digit or
// underscore touches it on either side.
func containsToken(s, tok string) bool {
	word := func(c byte) bool {
		return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	for from := 0; ; {
		i := strings.Index(s[from:], tok)
		if i < 0 {
			return false
		}
		i += from
		j := i + len(tok)
		if (i == 0 || !word(s[i-1]) || !word(tok[0])) && (j == len(s) || !word(s[j]) || !word(tok[len(tok)-1])) {
			return true
		}
		from = i + 1
	}
}

// The identifiers tool output prints where the scanner once missed them:
// host:port of any IPv4 address or internal host, the fields of a JSON
// object after a URL, prefixed object ids, the file:line of a grep hit
// in a file named like a receiver (client.go), and logfmt error lines.
func TestOutputIdentifiersFound(t *testing.T) {
	span := []checkpoint.Entry{
		user("Check the gateway."),
		call("bash", `{"command": "curl -s http://127.0.0.1:8080/healthz"}`),
		output("bash", `{"upstream":"http://db.internal:5432/app","build":"81a9696ea9a2","id":"ord_gBzbxhp9"}`),
		call("bash", `{"command": "grep -rn Add internal/api/"}`),
		output("bash", "internal/api/client.go:224:\tdeadline := time.Now().Add(c.timeout)\n"),
		call("bash", `{"command": "docker ps"}`),
		output("bash", "4a962fc5b322   postgres:16   Up 2 hours   0.0.0.0:5451->5432/tcp   pg\n"),
		call("bash", `{"command": "go run ./cmd/gw"}`),
		output("bash", "ts=2024-05-12T10:02:11Z level=error msg=\"refused\" peer=10.9.37.7:7519 req=req_9RP4rcBbi8\n"),
	}
	ids := checkpoint.Ledger(span, "")
	for _, w := range []struct{ kind, text string }{
		{"url", "http://db.internal:5432/app"}, {"id", "81a9696ea9a2"}, {"id", "ord_gBzbxhp9"},
		{"path", "internal/api/client.go:224"}, {"url", "0.0.0.0:5451"}, {"url", "10.9.37.7:7519"},
		{"id", "req_9RP4rcBbi8"},
	} {
		if !has(ids, w.kind, w.text) {
			t.Errorf("%s %q not found: %v", w.kind, w.text, ids)
		}
	}
	found := false
	for _, id := range ids {
		found = found || id.Kind == "error" && strings.Contains(id.Text, "level=error")
	}
	if !found {
		t.Errorf("the logfmt error line is no error: %v", ids)
	}
	// A file:line site is no host:port, and names are not ids.
	for _, s := range []string{"main.go:12", "user_id2", "page_10"} {
		sp := []checkpoint.Entry{user("see " + s)}
		if has(checkpoint.Ledger(sp, ""), "url", s) || has(checkpoint.Ledger(sp, ""), "id", s) {
			t.Errorf("%q taken for a host:port or an id", s)
		}
	}
}
