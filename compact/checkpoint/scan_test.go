package checkpoint_test

import (
	"strings"
	"testing"

	"github.com/strata-memory/strata/compact/checkpoint"
)

func user(text string) checkpoint.Entry {
	return checkpoint.Entry{Role: "user", Kind: "text", Text: text}
}
func said(text string) checkpoint.Entry {
	return checkpoint.Entry{Role: "assistant", Kind: "text", Text: text}
}
func output(name, text string) checkpoint.Entry {
	return checkpoint.Entry{Role: "tool", Kind: "tool_result", Name: name, Text: text}
}
func call(name, args string) checkpoint.Entry {
	return checkpoint.Entry{Role: "assistant", Kind: "tool_call", Name: name, Text: args}
}

// has reports whether ids hold an identifier of the kind with the text.
func has(ids []checkpoint.Identifier, kind, text string) bool {
	for _, id := range ids {
		if id.Kind == kind && id.Text == text {
			return true
		}
	}
	return false
}

// hasText reports whether ids hold the text under any kind.
func hasText(ids []checkpoint.Identifier, text string) bool {
	for _, id := range ids {
		if strings.EqualFold(id.Text, text) {
			return true
		}
	}
	return false
}

// TestKinds checks each kind of identifier on what it must find and on
// near misses it must not.
func TestKinds(t *testing.T) {
	type want struct{ kind, text string }
	tests := []struct {
		name  string
		entry checkpoint.Entry
		want  []want
		not   []string // texts that must not be identifiers (of any kind)
	}{
		// Paths.
		{"path with line", user("The bug is in internal/billing/invoice.go:42, I think."),
			[]want{{"path", "internal/billing/invoice.go"}}, []string{"internal/billing/invoice.go:42"}},
		{"relative and rooted paths", user("Compare ./cmd/server/main.go with /etc/nginx/nginx.conf and ~/app/.env."),
			[]want{{"path", "./cmd/server/main.go"}, {"path", "/etc/nginx/nginx.conf"}, {"path", "~/app/.env"}}, nil},
		{"file names", user("Check go.mod, src/App.tsx and the Dockerfile."),
			[]want{{"path", "go.mod"}, {"path", "src/App.tsx"}, {"path", "Dockerfile"}}, nil},
		{"windows path", user(`It fails on C:\Users\dev\app\main.py only.`),
			[]want{{"path", `C:\Users\dev\app\main.py`}}, nil},
		{"route and module path", said("`POST /api/v1/orders` lives in github.com/acme/shop/internal/http."),
			[]want{{"path", "/api/v1/orders"}, {"path", "github.com/acme/shop/internal/http"}}, nil},
		{"path near misses", user("Use tabs and/or spaces, 24/7, at 100 req/s; call res.json() or threading.Lock, e.g. now."),
			[]want{{"number", "100 req/s"}, {"symbol", "res.json"}, {"symbol", "threading.Lock"}}, []string{"and/or", "24/7", "req/s", "e.g"}},
		{"path argument", call("read_file", `{"path": "README"}`), []want{{"path", "README"}}, nil},

		// Commands.
		{"command argument", call("bash", `{"command": "go test ./internal/billing/... -run TestTotal"}`),
			[]want{{"command", "go test ./internal/billing/... -run TestTotal"}, {"path", "./internal/billing/..."}, {"symbol", "TestTotal"}}, nil},
		{"argv command", call("shell", `{"command": ["bash", "-lc", "pytest -x tests/test_a.py"]}`),
			[]want{{"command", "pytest -x tests/test_a.py"}, {"path", "tests/test_a.py"}}, nil},
		{"multi-line command keeps its first line", call("bash", `{"command": "cd web && npm run build\necho done"}`),
			[]want{{"command", "cd web && npm run build"}}, []string{"echo done"}},
		{"inline and prompt commands", user("Run `npm run build` first.\n$ git diff --stat HEAD~1"),
			[]want{{"command", "npm run build"}, {"command", "git diff --stat HEAD~1"}}, nil},
		{"shell block", said("Try:\n```bash\ndocker compose up -d db\n```"), []want{{"command", "docker compose up -d db"}}, nil},
		{"command near misses", user("Type `go` or `make` and go test it later."), []want{{"symbol", "go"}}, []string{"go test it later", "make and go test it later"}},

		// URLs.
		{"urls", user("See https://example.com/a?b=c). Also (http://localhost:8080/healthz) and localhost:5432."),
			[]want{{"url", "https://example.com/a?b=c"}, {"url", "http://localhost:8080/healthz"}, {"url", "localhost:5432"}}, nil},
		{"markdown link", said("Docs: [migration](https://docs.example.dev/v2/migrate#breaking)."),
			[]want{{"url", "https://docs.example.dev/v2/migrate#breaking"}}, nil},
		{"security advisories", output("bash", "found 2 advisories: CVE-2024-44247 (high), GHSA-v32w-h8x8-7fxg\n"),
			[]want{{"id", "CVE-2024-44247"}, {"id", "GHSA-v32w-h8x8-7fxg"}}, nil},
		{"counts in a run's summary are not settings", output("bash", "12:04:51  Done. PASS=3 WARN=0 ERROR=1 SKIP=0 TOTAL=4\nstarting with PORT=8080\n"),
			[]want{{"id", "PORT=8080"}}, []string{"PASS=3", "ERROR=1", "TOTAL=4"}},
		{"schemes with digits and plus", output("bash", "manifest s3://ll-dlq-e865/refund/ lists 14 parts\nremote: git+ssh://git@example.com/acme/api.git\n"),
			[]want{{"url", "s3://ll-dlq-e865/refund/"}, {"url", "git+ssh://git@example.com/acme/api.git"}}, nil},

		// Numbers.
		{"numbers with units", user("Keep the timeout at 30s, uploads under 25 MB, p99 below 850ms, 3 retries, budget $4,500, 80% coverage."),
			[]want{{"number", "30s"}, {"number", "25 MB"}, {"number", "850ms"}, {"number", "3 retries"}, {"number", "$4,500"}, {"number", "80%"}}, nil},
		{"rate", user("Allow 100 requests per minute."), []want{{"number", "100 requests per minute"}}, nil},
		{"bare numbers", user("I have 14 apples since 2024, version 2."), nil, []string{"14", "2024", "2"}},
		{"timings in output are noise", output("bash", "ok  \tgithub.com/a/b\t0.214s\nPASS (1.20s)\nheap 512 MB\nError: out of memory at 2.5GB"),
			[]want{{"error", "Error: out of memory at 2.5GB"}, {"number", "2.5GB"}}, []string{"0.214s", "1.20s"}},
		{"output only: what an error or a frame names, then paths and sizes; no code names", output("bash", "heap 512 MB\nsee internal/x/y.go and parseThing\npanic: boom\n\tinternal/a/b.go:12 +0x1d"),
			[]want{{"error", "panic: boom"}, {"path", "internal/a/b.go"}, {"path", "internal/x/y.go"}, {"number", "512 MB"}}, []string{"parseThing"}},

		{"file:line sites in output", output("bash", "storefront/upload/checksum.py:40:    def split(self, amount):\n"+
			"      200    0.004    0.098 storefront/search/query.py:111(reserve_query)\n"+
			"TypeError: x is undefined\n    at handle (app/dist/src/http/routes.js:183:5)\n"),
			[]want{{"path", "storefront/upload/checksum.py:40"}, {"path", "storefront/upload/checksum.py"},
				{"path", "storefront/search/query.py:111"}, {"path", "app/dist/src/http/routes.js:183:5"}}, []string{"app/dist/src/http/routes.js:183"}},
		{"hash ranges and image digests", output("bash", "index 35844f531..126545568 100644\n    Image ID:  ghcr.io/acme/api@sha256:65d9ba48b2b906e2a9300fe9efe53792c49bf71fffe5e46389ea2d73cfe348f3\n"),
			[]want{{"id", "35844f531"}, {"id", "126545568"}, {"id", "65d9ba48b2b906e2a9300fe9efe53792c49bf71fffe5e46389ea2d73cfe348f3"}}, nil},

		// Errors.
		{"go compiler error", output("bash", "# example.com/shop/internal/http\ninternal/http/routes.go:41:9: undefined: newRatelimiter\n"),
			[]want{{"error", "internal/http/routes.go:41:9: undefined: newRatelimiter"}, {"path", "internal/http/routes.go"}}, nil},
		{"go test failure", output("bash", "=== RUN   TestLogin\n    login_test.go:57: got 401, want 200\n--- FAIL: TestLogin (0.00s)\nFAIL\nFAIL\tgithub.com/a/b\t0.012s\n"),
			[]want{{"error", "login_test.go:57: got 401, want 200"}, {"error", "--- FAIL: TestLogin"}, {"symbol", "TestLogin"}},
			[]string{"FAIL", "FAIL\tgithub.com/a/b\t0.012s"}},
		{"exceptions", output("bash", "Traceback (most recent call last):\n  File \"/app/shop/pay.py\", line 12, in charge_card\n    raise\nValueError: invalid literal for int() with base 10: '19.99'\n"),
			[]want{{"error", "ValueError: invalid literal for int() with base 10: '19.99'"}, {"symbol", "charge_card"}, {"path", "/app/shop/pay.py"}},
			[]string{"Traceback (most recent call last):"}},
		{"js error and frames", output("bash", "TypeError: Cannot read properties of undefined (reading 'map')\n    at renderCart (/app/src/cart.js:12:5)\n"),
			[]want{{"error", "TypeError: Cannot read properties of undefined (reading 'map')"}, {"symbol", "renderCart"}, {"path", "/app/src/cart.js"}}, nil},
		{"go panic", output("bash", "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.(*Server).handle(0xc000010000)\n\t/src/main.go:20 +0x1d\n"),
			[]want{{"error", "panic: runtime error: index out of range [3] with length 3"}, {"symbol", "main.(*Server).handle"}}, nil},
		{"pytest marker", output("bash", "E       AssertionError: assert 1699 == 1700\nFAILED tests/test_a.py::test_total - assert 1699 == 1700\n"),
			[]want{{"error", "AssertionError: assert 1699 == 1700"}, {"error", "FAILED tests/test_a.py::test_total - assert 1699 == 1700"}}, nil},
		{"typescript error", output("bash", "src/cart.ts(12,5): error TS2304: Cannot find name 'total'.\n"),
			[]want{{"error", "src/cart.ts(12,5): error TS2304: Cannot find name 'total'."}}, nil},
		{"error near misses", output("bash", "warning: unused variable `x`\ninternal/a.go:12:\treturn err\nok  \tgithub.com/a/b\t0.1s\n// Error: not a real one\n"),
			nil, []string{"warning: unused variable `x`", "internal/a.go:12:\treturn err", "// Error: not a real one"}},
		{"long error is cut at a word", output("bash", "Error: "+strings.Repeat("word ", 60)),
			[]want{{"error", strings.TrimSpace("Error: " + strings.Repeat("word ", 38))}}, nil},
		{"quoted error", user("I get `undefined: parseAmount` when building."), []want{{"error", "undefined: parseAmount"}}, nil},

		// Symbols.
		{"symbols", said("`parseAmount` calls InvoiceService.Create and handle_refund(), see TestRefreshToken and MAX_RETRIES."),
			[]want{{"symbol", "parseAmount"}, {"symbol", "InvoiceService.Create"}, {"symbol", "handle_refund"}, {"symbol", "TestRefreshToken"}, {"symbol", "MAX_RETRIES"}}, nil},
		{"declarations in written code", call("write_file", `{"path": "a.go", "content": "func (s *Server) handleLogin(w http.ResponseWriter) {\n\tdoThing()\n}\ndef apply_discount(amount):\nclass CartView:\n"}`),
			[]want{{"symbol", "handleLogin"}, {"symbol", "apply_discount"}, {"symbol", "CartView"}}, []string{"doThing"}},
		{"declarations in a file read", output("read_file", "func (s *Server) handleLogin(w http.ResponseWriter) {}\n"), nil, []string{"handleLogin"}},
		{"symbol near misses", user("Hello World, the JSON API is OK. Total is fine, e.g. here."), nil,
			[]string{"Hello", "World", "JSON", "API", "OK", "Total"}},

		// Ids.
		{"ids", user("Since commit 3f9c2ab (see #412 and BILL-231) on v1.4.2, id 123e4567-e89b-12d3-a456-426614174000 fails on port 8080."),
			[]want{{"id", "3f9c2ab"}, {"id", "#412"}, {"id", "BILL-231"}, {"id", "v1.4.2"}, {"id", "123e4567-e89b-12d3-a456-426614174000"}, {"id", "8080"}}, nil},
		{"settings and pins", user("Set PORT=8080 and --timeout=30s, then install lodash@4.17.21 (requires ^1.2.3)."),
			[]want{{"id", "PORT=8080"}, {"number", "--timeout=30s"}, {"id", "lodash@4.17.21"}, {"id", "^1.2.3"}}, nil},
		{"id near misses", user("UTF-8 text, deadbeef, 1234567 rows, #hashtag."), nil, []string{"UTF-8", "deadbeef", "1234567", "#hashtag"}},
		{"generated ids", user("Node Zk4qP0sT2uV6wX8yA1bC3d left; push id -Nx8aQ2kLm4ZpR7tW1yE stays."),
			[]want{{"id", "Zk4qP0sT2uV6wX8yA1bC3d"}, {"id", "-Nx8aQ2kLm4ZpR7tW1yE"}}, nil},
		{"generated id near misses", user("Utf8Decoder16Bit and HTTP2ServerConfig are names; ABCdef123456 is not random enough."),
			[]want{{"symbol", "HTTP2ServerConfig"}}, []string{"Utf8Decoder16Bit", "ABCdef123456"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids := checkpoint.Ledger([]checkpoint.Entry{tt.entry}, "")
			for _, w := range tt.want {
				if !has(ids, w.kind, w.text) {
					t.Errorf("missing %s %q in %v", w.kind, w.text, ids)
				}
			}
			for _, n := range tt.not {
				if hasText(ids, n) {
					t.Errorf("%q should not be an identifier: %v", n, ids)
				}
			}
		})
	}
}

// TestScanBounds checks that a huge tool result is scanned at its head
// and its tail only, and that its error lines are capped.
func TestScanBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("Error: first failure at head\n")
	for b.Len() < 200<<10 {
		b.WriteString("filler line with internal/middle/only.go in the middle\n")
	}
	b.WriteString("Error: last failure at tail\n")
	ids := checkpoint.Ledger([]checkpoint.Entry{output("bash", b.String())}, "")
	if !has(ids, "error", "Error: first failure at head") || !has(ids, "error", "Error: last failure at tail") {
		t.Fatalf("head or tail error missing: %v", ids)
	}
	var many strings.Builder
	for i := 0; i < 50; i++ {
		many.WriteString("Error: failure number " + strings.Repeat("x", i+1) + "\n")
	}
	n := 0
	for _, id := range checkpoint.Ledger([]checkpoint.Entry{output("bash", many.String())}, "") {
		if id.Kind == "error" {
			n++
		}
	}
	if n != 8 {
		t.Fatalf("errors from one result = %d, want 8", n)
	}
}
