package fieldgen

import (
	"fmt"
	"strings"
)

// failure is a failing test: where it fails, why, and how it is run.
type failure struct {
	lang    string
	cmd     string // the whole suite
	narrow  string // only the failing test
	file    string
	line    int
	include string
	test    string
	symbol  string
	short   string // the error, one line
	cause   string
	fix     string
	dep     string
}

func (g *gen) failure(lang string) failure {
	f := failure{lang: lang, line: 20 + g.r.IntN(300)}
	switch lang {
	case "python":
		mod := pick(g.r, []string{"refunds", "pricing", "webhooks", "exports"})
		f.file = fmt.Sprintf("src/%s/%s/service.py", g.module, mod)
		f.test = fmt.Sprintf("tests/test_%s.py::test_%s_%s", mod, pick(g.r, []string{"partial", "duplicate", "expired"}), pick(g.r, []string{"refund", "event", "token"}))
		f.symbol = pick(g.r, []string{"apply_refund", "compute_total", "verify_signature", "build_export_row"})
		f.short = pick(g.r, []string{
			"AssertionError: assert Decimal('19.99') == Decimal('20.00')",
			"KeyError: 'tenant_id'",
			"TypeError: unsupported operand type(s) for +: 'NoneType' and 'Decimal'",
		})
		f.cmd = "pytest -q -x --maxfail=3 tests/"
		f.narrow = "pytest -q " + f.test
		f.include = "**/*.py"
		f.dep = "pydantic==" + pick(g.r, []string{"2.9.2", "2.10.1", "2.8.0"})
		f.fix = fmt.Sprintf("def %s(order, amount):\n    if amount is None:\n        amount = Decimal(\"0\")\n", f.symbol)
	case "node":
		mod := pick(g.r, []string{"cart", "checkout", "session", "invoice"})
		f.file = fmt.Sprintf("src/%s/%sStore.ts", mod, mod)
		f.test = fmt.Sprintf("%sStore › %s", mod, pick(g.r, []string{"merges guest cart on login", "keeps currency after reload", "expires stale sessions"}))
		f.symbol = pick(g.r, []string{"mergeGuestCart", "restoreCurrency", "expireSessions", "formatInvoiceLine"})
		f.short = pick(g.r, []string{
			"TypeError: Cannot read properties of undefined (reading 'currency')",
			"Error: expect(received).toEqual(expected) // deep equality",
			"ReferenceError: structuredClone is not defined",
		})
		f.cmd = "npx jest --ci --runInBand"
		f.narrow = fmt.Sprintf("npx jest src/%s -t \"%s\"", mod, strings.SplitN(f.test, " › ", 2)[1])
		f.include = "src/**/*.ts"
		f.dep = "jest@" + pick(g.r, []string{"29.7.0", "30.0.2"})
		f.fix = fmt.Sprintf("export function %s(state: State): State {\n  const currency = state.cart?.currency ?? DEFAULT_CURRENCY;\n", f.symbol)
	case "rust":
		mod := pick(g.r, []string{"ledger", "quota", "resize"})
		f.file = fmt.Sprintf("src/%s/apply.rs", mod)
		f.test = fmt.Sprintf("%s::tests::%s", mod, pick(g.r, []string{"applies_reversal_once", "rejects_negative_balance", "keeps_aspect_ratio"}))
		f.symbol = pick(g.r, []string{"apply_entry", "check_quota", "scale_to_fit"})
		f.short = pick(g.r, []string{
			"thread 'ledger::tests::applies_reversal_once' panicked at src/ledger/apply.rs:88:9:",
			"assertion `left == right` failed: balance mismatch",
			"called `Result::unwrap()` on an `Err` value: Overflow",
		})
		f.cmd = "cargo test --workspace --locked"
		f.narrow = "cargo test " + f.test + " -- --exact --nocapture"
		f.include = "src/**/*.rs"
		f.dep = "serde_json " + pick(g.r, []string{"1.0.128", "1.0.133"})
		f.fix = fmt.Sprintf("pub fn %s(&mut self, e: &Entry) -> Result<(), LedgerError> {\n    if self.seen.contains(&e.id) { return Ok(()); }\n", f.symbol)
	default:
		mod := pick(g.r, []string{"pricing", "tenants", "outbox"})
		f.file = fmt.Sprintf("internal/%s/%s.go", mod, mod)
		f.test = "Test" + pick(g.r, []string{"RoundHalfEven", "TenantSwitch", "RelayRetry"})
		f.symbol = pick(g.r, []string{"roundCents", "switchTenant", "relayBatch"})
		f.short = pick(g.r, []string{
			"panic: runtime error: invalid memory address or nil pointer dereference",
			fmt.Sprintf("%s_test.go:%d: got 1999, want 2000", mod, 30+g.r.IntN(90)),
			"panic: assignment to entry in nil map",
		})
		f.cmd = "go test ./... -count=1"
		f.narrow = fmt.Sprintf("go test ./internal/%s -run '^%s$' -count=1 -v", mod, f.test)
		f.include = "**/*.go"
		f.dep = "github.com/jackc/pgx/v5 v" + pick(g.r, []string{"5.7.1", "5.7.2"})
		f.fix = fmt.Sprintf("func %s(v int64) int64 {\n\tif v%%2 == 0 {\n", f.symbol)
	}
	f.cause = pick(g.r, []string{"a nil value from the cache is not handled", "rounding truncates instead of rounding half-even", "the retry path applies the entry twice", "the tenant is read before it is set"})
	return f
}

// testRun prints a test run of the suite: many passing tests and, unless
// pass, the failure with its stack trace.
func (g *gen) testRun(lang string, f failure, pass bool) string {
	var b strings.Builder
	n := g.lines(120)
	switch lang {
	case "python":
		fmt.Fprintf(&b, "============================= test session starts ==============================\nplatform linux -- Python 3.12.%d, pytest-8.3.%d, pluggy-1.5.0\nrootdir: /srv/%s\nconfigfile: pyproject.toml\nplugins: asyncio-0.24.0, cov-5.0.0, xdist-3.6.1\ncollected %d items\n\n", g.r.IntN(8), g.r.IntN(5), g.svc, n*4)
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "tests/test_%s_%d.py::test_%s_%d PASSED%*s[%3d%%]\n", pick(g.r, []string{"api", "models", "tasks", "auth"}), i%17, pick(g.r, []string{"create", "list", "update", "delete", "retry"}), i, 10, "", 100*i/n)
		}
		if !pass {
			fmt.Fprintf(&b, "\n=================================== FAILURES ===================================\n_______________________ %s _______________________\n\n", f.test)
			fmt.Fprintf(&b, "    def test_case(client, tenant):\n        order = make_order(tenant, amount=Decimal(\"19.99\"))\n>       result = %s(order, None)\n\ntests/%s:%d: \n", f.symbol, strings.SplitN(strings.TrimPrefix(f.test, "tests/"), "::", 2)[0], 40+g.r.IntN(60))
			fmt.Fprintf(&b, "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _\n\n%s:%d: in %s\n    total = order.subtotal + amount\nE   %s\n\n", f.file, f.line, f.symbol, f.short)
			fmt.Fprintf(&b, "=========================== short test summary info ============================\nFAILED %s - %s\n!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!\n========================= 1 failed, %d passed in %.2fs =========================\n", f.test, f.short, n, 20+40*g.r.Float64())
		} else {
			fmt.Fprintf(&b, "\n============================= %d passed in %.2fs ==============================\n", n, 20+40*g.r.Float64())
		}
	case "node":
		for i := 0; i < n/6; i++ {
			fmt.Fprintf(&b, "PASS src/%s/__tests__/%s.test.ts (%.3f s)\n", pick(g.r, []string{"cart", "api", "utils", "session"}), pick(g.r, []string{"format", "merge", "client", "hooks", "reducer"}), g.r.Float64()*4)
			for j := 0; j < 5; j++ {
				fmt.Fprintf(&b, "  ✓ %s %s (%d ms)\n", pick(g.r, []string{"handles", "rejects", "returns", "keeps"}), pick(g.r, []string{"empty input", "unicode names", "large payloads", "expired tokens", "retries"}), g.r.IntN(90))
			}
		}
		if !pass {
			fmt.Fprintf(&b, "FAIL %s\n  ● %s\n\n    %s\n\n      at %s (%s:%d:%d)\n      at Object.<anonymous> (src/%s.test.ts:%d:%d)\n      at processTicksAndRejections (node:internal/process/task_queues:95:5)\n\n",
				strings.Replace(f.file, ".ts", ".test.ts", 1), f.test, f.short, f.symbol, f.file, f.line, 5+g.r.IntN(30), strings.TrimSuffix(f.file[4:], ".ts"), 10+g.r.IntN(80), 3+g.r.IntN(20))
			fmt.Fprintf(&b, "Test Suites: 1 failed, %d passed, %d total\nTests:       1 failed, %d passed, %d total\nSnapshots:   0 total\nTime:        %.3f s\nRan all test suites.\n", n/6, n/6+1, n*5/6, n*5/6+1, 10+30*g.r.Float64())
		} else {
			fmt.Fprintf(&b, "Test Suites: %d passed, %d total\nTests:       %d passed, %d total\nTime:        %.3f s\n", n/6, n/6, n*5/6, n*5/6, 10+30*g.r.Float64())
		}
	case "rust":
		fmt.Fprintf(&b, "   Compiling %s v%s (/srv/%s)\n    Finished `test` profile [unoptimized + debuginfo] target(s) in %.2fs\n     Running unittests src/lib.rs (target/debug/deps/%s-%s)\n\nrunning %d tests\n", g.module, g.version, g.svc, 30+60*g.r.Float64(), g.module, g.hex(16), n)
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "test %s::tests::%s_%d ... ok\n", pick(g.r, []string{"ledger", "quota", "codec", "store"}), pick(g.r, []string{"roundtrip", "rejects_empty", "orders_by_time", "merges"}), i)
		}
		if !pass {
			fmt.Fprintf(&b, "test %s ... FAILED\n\nfailures:\n\n---- %s stdout ----\n%s\n  left: 1999\n right: 2000\nstack backtrace:\n   0: rust_begin_unwind\n   1: core::panicking::panic_fmt\n   2: %s::%s\n             at ./%s:%d:9\n   3: %s::{{closure}}\n\nfailures:\n    %s\n\ntest result: FAILED. %d passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in %.2fs\n\nerror: test failed, to rerun pass `--lib`\n",
				f.test, f.test, f.short, g.module, f.symbol, f.file, f.line, f.test, f.test, n, g.r.Float64()*5)
		} else {
			fmt.Fprintf(&b, "\ntest result: ok. %d passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in %.2fs\n", n, g.r.Float64()*5)
		}
	default:
		pkgs := []string{"cmd/server", "internal/api", "internal/store", "internal/outbox", "internal/pricing", "internal/tenants", "internal/auth"}
		for i := 0; i < n/3; i++ {
			fmt.Fprintf(&b, "=== RUN   Test%s%d\n--- PASS: Test%s%d (%.2fs)\n", pick(g.r, []string{"Create", "List", "Retry", "Parse"}), i, pick(g.r, []string{"Create", "List", "Retry", "Parse"}), i, g.r.Float64())
		}
		for _, p := range pkgs {
			fmt.Fprintf(&b, "ok  \tgithub.com/%s/%s/%s\t%.3fs\n", pick(g.r, owners), g.svc, p, g.r.Float64()*3)
		}
		if !pass {
			fmt.Fprintf(&b, "--- FAIL: %s (0.00s)\n%s [recovered]\n\t%s\n\ngoroutine %d [running]:\ntesting.tRunner.func1.2({0x%s, 0x%s})\n\t/usr/local/go/src/testing/testing.go:1632 +0x230\ngithub.com/%s/%s/%s.%s(...)\n\t/srv/%s/%s:%d +0x%s\nFAIL\tgithub.com/%s/%s/%s\t0.%03ds\nFAIL\n",
				f.test, f.short, f.short, 7+g.r.IntN(40), g.hex(6), g.hex(6), owners[0], g.svc, strings.TrimSuffix(f.file[:strings.LastIndex(f.file, "/")], ""), f.symbol, g.svc, f.file, f.line, g.hex(2), owners[0], g.svc, f.file[:strings.LastIndex(f.file, "/")], g.r.IntN(999))
		}
	}
	return b.String()
}

// sourceListing is a numbered excerpt of a file, as read_file prints it.
func (g *gen) sourceListing(lang string, f failure, from, n int) string {
	from = max(1, from)
	var b strings.Builder
	stmts := map[string][]string{
		"python": {"    total = order.subtotal + amount", "    if not tenant:", "        raise TenantError(\"missing tenant\")", "    log.info(\"applied\", extra={\"order\": order.id})", "    return Decimal(total).quantize(CENTS)", "", "def %s(order, amount):", "    cache_key = f\"{order.tenant_id}:{order.id}\""},
		"node":   {"  const line = state.cart.items[idx];", "  if (!session) return state;", "  return { ...state, currency };", "", "export function %s(state: State): State {", "  logger.debug({ cartId: state.cart.id }, 'merge');"},
		"rust":   {"        let balance = self.balance.checked_add(e.amount)?;", "        if e.kind == Kind::Reversal {", "            return Err(LedgerError::Duplicate(e.id));", "        }", "pub fn %s(&mut self, e: &Entry) -> Result<(), LedgerError> {", "        tracing::debug!(entry = %e.id, \"apply\");"},
		"go":     {"\tif v < 0 {", "\t\treturn 0, fmt.Errorf(\"negative amount %d\", v)", "\t}", "func %s(v int64) int64 {", "\tdefer span.End()", "\treturn (v + 50) / 100 * 100"},
	}
	ls := stmts[lang]
	if ls == nil {
		ls = stmts["go"]
	}
	for i := 0; i < g.lines(n); i++ {
		s := pick(g.r, ls)
		if strings.Contains(s, "%s") {
			s = fmt.Sprintf(s, f.symbol)
		}
		fmt.Fprintf(&b, "%6d→%s\n", from+i, s)
	}
	return b.String()
}

func (g *gen) grepHits(f failure, n int) string {
	var b strings.Builder
	dirs := []string{"src/api", "src/workers", "internal/http", "internal/jobs", "tests", "scripts"}
	for i := 0; i < n; i++ {
		file := fmt.Sprintf("%s/%s_%d.%s", pick(g.r, dirs), pick(g.r, []string{"handler", "client", "job", "util", "fixtures"}), i%9, pick(g.r, []string{"py", "ts", "go", "rs"}))
		if i == 0 && f.file != "" {
			file = strings.SplitN(f.file, ":", 2)[0]
		}
		fmt.Fprintf(&b, "%s:%d:    %s(ctx, %s)\n", file, 10+g.r.IntN(400), f.symbol, pick(g.r, []string{"order", "tenant", "req.body", "entry", "cfg"}))
	}
	return b.String()
}

func (g *gen) gitLog(n int) string {
	var b strings.Builder
	for i := 0; i < min(n, len(g.commits)); i++ {
		c := g.commits[len(g.commits)-1-i]
		deco := ""
		if i == 0 {
			deco = " (HEAD -> main, origin/main)"
		} else if c.sha == g.deploySHA {
			deco = fmt.Sprintf(" (tag: v%s)", g.version)
		}
		fmt.Fprintf(&b, "%s%s %s\n", c.sha[:9], deco, c.msg)
	}
	return b.String()
}

func (g *gen) apiError(code int, errCode, reqID string) string {
	return fmt.Sprintf("HTTP/2 %d\ncontent-type: application/json\nx-request-id: %s\nretry-after: %d\nserver: envoy\n\n{\"error\":{\"code\":\"%s\",\"message\":\"upstream %s:%d did not answer within %sms\",\"request_id\":\"%s\",\"trace_id\":\"%s\",\"docs\":\"https://%s/docs/errors#%s\"}}",
		code, reqID, 1+g.r.IntN(30), errCode, g.ip(), g.port, g.env[2].value, reqID, g.hex(32), g.domain, strings.ToLower(errCode))
}

func (g *gen) accessLog(n, code int) string {
	var b strings.Builder
	paths := []string{"/v2/orders", "/v2/orders/%s", "/v2/payments/%s/refunds", "/v2/tenants/t_%s/usage", "/internal/health"}
	for i := 0; i < n; i++ {
		p := pick(g.r, paths)
		if strings.Contains(p, "%s") {
			p = fmt.Sprintf(p, g.alnum(8))
		}
		q := ""
		if g.r.IntN(2) == 0 {
			q = fmt.Sprintf("?limit=%d&cursor=%s", pick(g.r, []int{20, 50, 100}), g.alnum(12))
		}
		st := pick(g.r, []int{200, 200, 200, 201, 204, 404, code, code})
		fmt.Fprintf(&b, "%s - - [14/Nov/2025:%02d:%02d:%02d +0000] \"%s %s%s HTTP/1.1\" %d %d \"-\" \"%s\" rt=%.3f uct=%.3f upstream=%s:%d req=%s\n",
			g.publicIP(), 9+i/60%12, i%60, g.r.IntN(60), pick(g.r, []string{"GET", "GET", "POST", "PATCH"}), p, q, st, 100+g.r.IntN(9000),
			pick(g.r, []string{"okhttp/4.12.0", "python-requests/2.32.3", "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5)", "curl/8.7.1"}), g.r.Float64()*3, g.r.Float64()/10, g.ip(), g.port, g.uuid())
	}
	return b.String()
}

func (g *gen) healthJSON(errCode string) string {
	return fmt.Sprintf(`{"status":"degraded","version":"%s","commit":"%s","uptime_s":%d,"checks":{"postgres":{"status":"degraded","pool":{"max":%s,"in_use":%s,"waiting":%d},"last_error":"%s: timed out waiting for connection after 5000ms"},"redis":{"status":"ok","latency_ms":%d},"upstream_payments":{"status":"ok","url":"http://payments.%s.svc.cluster.local:%d/v1"}}}`,
		g.version, g.deploySHA, 3600+g.r.IntN(90000), g.env[3].value, g.env[3].value, 20+g.r.IntN(200), errCode, g.r.IntN(4), g.ns, 8000+g.r.IntN(999))
}

func (g *gen) envDump() string {
	var b strings.Builder
	fmt.Fprintf(&b, "HOSTNAME=%s\nKUBERNETES_SERVICE_HOST=%s\nKUBERNETES_SERVICE_PORT=443\nPORT=%d\nAPP_VERSION=%s\n", g.pods[0], g.ip(), g.port, g.version)
	for _, e := range g.env {
		if e.name == "WEBHOOK_SIGNING_SECRET" {
			continue
		}
		fmt.Fprintf(&b, "%s=%s\n", e.name, e.value)
	}
	return b.String()
}

func (g *gen) orderJSON(items int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{\n  \"id\": \"%s\",\n  \"external_ref\": \"ext_%s\",\n  \"status\": \"pending_payment\",\n  \"currency\": \"EUR\",\n  \"items\": [\n", g.uuid(), g.alnum(10))
	for i := 0; i < items; i++ {
		sep := ","
		if i == items-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "    {\"sku\": \"SKU-%05d\", \"qty\": %d, \"unit_price\": \"%d.%02d\", \"warehouse\": \"%s\"}%s\n", g.r.IntN(99999), 1+g.r.IntN(4), g.r.IntN(300), g.r.IntN(100), pick(g.r, []string{"ams-1", "fra-2", "dub-1"}), sep)
	}
	fmt.Fprintf(&b, "  ],\n  \"payments\": [{\"id\": \"pay_%s\", \"provider\": \"adyen\", \"psp_reference\": \"%s\", \"state\": \"authorised\"}],\n  \"links\": {\"self\": \"https://%s/v2/orders/%s\"}\n}", g.alnum(14), strings.ToUpper(g.alnum(16)), g.domain, g.uuid())
	return b.String()
}

func (g *gen) orderListJSON(n int, cursor string) string {
	var b strings.Builder
	b.WriteString("HTTP/2 200\ncontent-type: application/json\n\n{\"data\":[")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "{\"id\":\"%s\",\"status\":\"pending\",\"total\":\"%d.%02d\",\"created_at\":\"%s\"}", g.uuid(), g.r.IntN(900), g.r.IntN(100), g.clock(g.r.IntN(24), g.r.IntN(60), g.r.IntN(60)))
	}
	fmt.Fprintf(&b, "],\"next_cursor\":\"%s\",\"prev_cursor\":\"%s\"}", g.alnum(16), cursor)
	return b.String()
}

func (g *gen) podTable(bad, reason string) string {
	var b strings.Builder
	b.WriteString("NAME                                   READY   STATUS             RESTARTS        AGE   IP             NODE                                          NOMINATED NODE   READINESS GATES\n")
	for _, p := range g.pods {
		st, rs := "Running", "0"
		if p == bad {
			st, rs = reason, fmt.Sprintf("%d (%dm ago)", 5+g.r.IntN(40), 1+g.r.IntN(9))
		}
		fmt.Fprintf(&b, "%-38s %-7s %-18s %-15s %-5s %-14s %-45s <none>           <none>\n", p, "1/1", st, rs, fmt.Sprintf("%dh", 1+g.r.IntN(30)), g.ip(), fmt.Sprintf("ip-10-%d-%d-%d.eu-west-1.compute.internal", g.r.IntN(255), g.r.IntN(255), g.r.IntN(255)))
	}
	return b.String()
}

func (g *gen) describePod(pod, image, reason string) string {
	return fmt.Sprintf(`Name:             %s
Namespace:        %s
Priority:         0
Service Account:  %s
Node:             ip-10-0-%d-%d.eu-west-1.compute.internal/%s
Labels:           app=%s
                  pod-template-hash=%s
Status:           Running
IP:               %s
Controlled By:    ReplicaSet/%s
Containers:
  app:
    Container ID:   containerd://%s
    Image:          %s
    Image ID:       %s/%s@sha256:%s
    Port:           %d/TCP
    Host Port:      0/TCP
    State:          Waiting
      Reason:       CrashLoopBackOff
    Last State:     Terminated
      Reason:       %s
      Exit Code:    %d
    Ready:          False
    Restart Count:  %d
    Limits:
      memory:  512Mi
    Requests:
      cpu:      250m
      memory:   256Mi
    Liveness:   http-get http://:%d/internal/health delay=10s timeout=2s period=10s #success=1 #failure=3
    Environment Variables from:
      %s-secrets  Secret  Optional: false
Events:
  Type     Reason     Age                  From     Message
  ----     ------     ----                 ----     -------
  Normal   Pulled     12m (x%d over 48m)    kubelet  Container image "%s" already present on machine
  Warning  BackOff    2m (x%d over 47m)   kubelet  Back-off restarting failed container app in pod %s_%s(%s)
`, pod, g.ns, g.svc, g.r.IntN(255), g.r.IntN(255), g.ip(), g.svc, g.alnum(10), g.ip(), pod[:strings.LastIndex(pod, "-")], g.hex(64), image, g.registry, g.svc, g.hex(64), g.port,
		reason, pick(g.r, []int{1, 137, 2}), 5+g.r.IntN(40), g.port, g.svc, 3+g.r.IntN(9), image, 20+g.r.IntN(100), pod, g.ns, g.uuid())
}

func (g *gen) crashLog(n int, missing string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "{\"ts\":\"%s\",\"level\":\"%s\",\"logger\":\"%s\",\"msg\":\"%s\",\"trace_id\":\"%s\"}\n", g.clock(8, i/6, i), pick(g.r, []string{"info", "info", "debug", "warn"}), pick(g.r, []string{"boot", "db", "http", "cache"}),
			pick(g.r, []string{"loading settings", "connected to postgres", "warming tenant cache", "registered route", "migrations up to date", "listening"}), g.hex(32))
	}
	fmt.Fprintf(&b, "Traceback (most recent call last):\n  File \"/app/src/%s/main.py\", line %d, in <module>\n    settings = Settings.from_env()\n  File \"/app/src/config/settings.py\", line 41, in from_env\n    webhook_secret=os.environ[\"%s\"],\n  File \"/usr/local/lib/python3.12/os.py\", line 714, in __getitem__\n    raise KeyError(key) from None\nKeyError: '%s'\n", g.module, 20+g.r.IntN(40), missing, missing)
	return b.String()
}

func (g *gen) events(n int, pod string) string {
	var b strings.Builder
	b.WriteString("LAST SEEN   TYPE      REASON              OBJECT                                   MESSAGE\n")
	for i := 0; i < n; i++ {
		obj := "pod/" + pick(g.r, g.pods)
		msg := pick(g.r, []string{"Successfully assigned to node", "Pulling image", "Created container app", "Started container app", "Readiness probe failed: HTTP probe failed with statuscode: 503", "Scaled up replica set"})
		if i%7 == 3 {
			obj, msg = "pod/"+pod, "Back-off restarting failed container app"
		}
		fmt.Fprintf(&b, "%-11s %-9s %-19s %-40s %s\n", fmt.Sprintf("%dm", n-i), pick(g.r, []string{"Normal", "Warning"}), pick(g.r, []string{"Scheduled", "Pulled", "BackOff", "Unhealthy", "ScalingReplicaSet"}), obj, msg)
	}
	return b.String()
}

func (g *gen) composeUp(port int) string {
	return fmt.Sprintf(`[+] Running 4/5
 ✔ Network %s_default       Created                                                      0.1s
 ✔ Container %s-redis-1     Started                                                      0.6s
 ✔ Container %s-kafka-1     Started                                                      0.9s
 ⠿ Container %s-db-1        Starting                                                     1.1s
Error response from daemon: driver failed programming external connectivity on endpoint %s-db-1 (%s): Bind for 0.0.0.0:%d failed: port is already allocated`,
		g.module, g.svc, g.svc, g.svc, g.svc, g.hex(64), port)
}

func (g *gen) dockerPS(n, port int) string {
	var b strings.Builder
	b.WriteString("CONTAINER ID   IMAGE                                  STATUS                   PORTS                                       NAMES\n")
	for i := 0; i < n; i++ {
		p := 3000 + g.r.IntN(6000)
		if i == n/2 {
			p = port
		}
		fmt.Fprintf(&b, "%s   %-38s %-24s 0.0.0.0:%d->%d/tcp, :::%d->%d/tcp   %s\n", g.hex(12), pick(g.r, []string{"postgres:16.4-alpine", "redis:7.4.1", "bitnami/kafka:3.8", "mailhog/mailhog:v1.0.1", "minio/minio:RELEASE.2024-10-13T13-34-11Z"}),
			fmt.Sprintf("Up %d hours (healthy)", 1+g.r.IntN(72)), p, p, p, p, fmt.Sprintf("%s-%s-%d", pick(g.r, []string{"legacy", "billing", "spike"}), pick(g.r, []string{"db", "cache", "queue"}), 1+g.r.IntN(3)))
	}
	return b.String()
}

func (g *gen) dbLog(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "2025-11-14 09:%02d:%02d.%03d UTC [%d] %s\n", i%60, g.r.IntN(60), g.r.IntN(1000), 1+g.r.IntN(300), pick(g.r, []string{
			"LOG:  checkpoint starting: time", "LOG:  checkpoint complete: wrote 12 buffers (0.1%)", "LOG:  database system is ready to accept connections",
			fmt.Sprintf("FATAL:  password authentication failed for user \"%s\"", g.module), "LOG:  listening on IPv4 address \"0.0.0.0\", port 5432"}))
	}
	return b.String()
}

func (g *gen) composePS(port int) string {
	return fmt.Sprintf("NAME              IMAGE                  SERVICE   STATUS                  PORTS\n%s-db-1    postgres:16.4-alpine   db        Up 3 seconds (healthy)   0.0.0.0:%d->5432/tcp\n%s-redis-1 redis:7.4.1            redis     Up 4 seconds            0.0.0.0:6379->6379/tcp\n%s-app-1   %s-app               app       Up 2 seconds            0.0.0.0:%d->%d/tcp",
		g.svc, port, g.svc, g.svc, g.svc, g.port+1, g.port)
}

func (g *gen) bisect(bad commit, n int) string {
	var b strings.Builder
	for i := 0; i < n/6+3; i++ {
		c := pick(g.r, g.commits)
		fmt.Fprintf(&b, "Bisecting: %d revisions left to test after this (roughly %d steps)\n[%s] %s\nrunning 'make' 'test-invoices'\n", 30>>min(i, 5), max(0, 5-i), c.sha, c.msg)
		fmt.Fprintf(&b, "go test ./internal/invoices/... -count=1\n%s\n", pick(g.r, []string{"ok  \tinvoices\t0.812s", "--- FAIL: TestInvoiceTotals (0.00s)\n    totals_test.go:58: total 10.005 rounded to 10.00, want 10.01\nFAIL"}))
	}
	fmt.Fprintf(&b, "%s is the first bad commit\ncommit %s\nAuthor: %s <%s@example.com>\nDate:   Tue Nov 11 16:%02d:%02d 2025 +0100\n\n    %s\n\n internal/pricing/rounding.go | 14 +++++++-------\n 1 file changed, 7 insertions(+), 7 deletions(-)\nbisect found first bad commit\n",
		bad.sha, bad.sha, pick(g.r, owners), pick(g.r, owners), g.r.IntN(60), g.r.IntN(60), bad.msg)
	return b.String()
}

func (g *gen) gitShow(c commit, path string) string {
	return fmt.Sprintf("commit %s\nAuthor: %s <%s@example.com>\nDate:   Tue Nov 11 16:%02d:%02d 2025 +0100\n\n    %s\n\n %s | %d +++++-----\n %s | %d ++\n 2 files changed, %d insertions(+), %d deletions(-)\n",
		c.sha, pick(g.r, owners), pick(g.r, owners), g.r.IntN(60), g.r.IntN(60), c.msg, path, 6+g.r.IntN(20), strings.Replace(path, ".", "_test.", 1), 2+g.r.IntN(9), 9+g.r.IntN(20), 4+g.r.IntN(9))
}

func (g *gen) gitDiff(path string, hunks int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\nindex %s..%s 100644\n--- a/%s\n+++ b/%s\n", path, path, g.hex(9), g.hex(9), path, path)
	for i := 0; i < hunks; i++ {
		at := 10 + 40*i + g.r.IntN(30)
		fmt.Fprintf(&b, "@@ -%d,7 +%d,7 @@ func %s(\n \t// Amounts are in cents.\n-\treturn amount.Round(2, RoundHalfEven)\n+\treturn amount.Truncate(2)\n \t}\n", at, at, pick(g.r, []string{"roundCents", "lineTotal", "applyTax", "invoiceTotal"}))
		for j := 0; j < 6; j++ {
			fmt.Fprintf(&b, " \t%s := %s(%s)\n", pick(g.r, []string{"sub", "tax", "fee", "net"}), pick(g.r, []string{"lineTotal", "applyTax", "sumLines"}), pick(g.r, []string{"lines", "inv", "order.Items"}))
		}
	}
	return b.String()
}

func (g *gen) relayLog(n int, constraint string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s ERROR relay: insert order %s (attempt %d/5): ERROR: duplicate key value violates unique constraint \"%s\" (SQLSTATE 23505) event_id=%s partition=%d offset=%d\n",
			g.clock(10, i, g.r.IntN(60)), g.uuid(), 2+g.r.IntN(4), constraint, g.uuid(), g.r.IntN(12), 100000+g.r.IntN(900000))
	}
	return b.String()
}

func (g *gen) sqlRows(n int) string {
	var b strings.Builder
	b.WriteString("   external_ref   | count |          min           |          max\n------------------+-------+------------------------+------------------------\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, " ext_%s  |     %d | 2025-11-14 0%d:%02d:%02d+00 | 2025-11-14 0%d:%02d:%02d+00\n", g.alnum(10), 2+g.r.IntN(3), g.r.IntN(9), g.r.IntN(60), g.r.IntN(60), g.r.IntN(9), g.r.IntN(60), g.r.IntN(60))
	}
	fmt.Fprintf(&b, "(%d rows)\n", n)
	return b.String()
}

func (g *gen) explain() string {
	return fmt.Sprintf(`Limit  (cost=0.43..812.55 rows=500 width=412) (actual time=0.041..%.3f rows=500 loops=1)
  Buffers: shared hit=%d read=%d
  ->  Index Scan using outbox_pkey on outbox  (cost=0.43..%d.11 rows=%d width=412) (actual time=0.040..%.3f rows=500 loops=1)
        Filter: (dispatched_at IS NULL)
        Rows Removed by Filter: %d
        Buffers: shared hit=%d read=%d
Planning Time: 0.%03d ms
Execution Time: %.3f ms`, 100+900*g.r.Float64(), g.r.IntN(90000), g.r.IntN(9000), 90000+g.r.IntN(9000), 50000+g.r.IntN(9000), 100+900*g.r.Float64(), g.r.IntN(2000000), g.r.IntN(90000), g.r.IntN(9000), g.r.IntN(999), 100+900*g.r.Float64())
}

// buildFailure is a build broken by a dependency update.
type buildFailure struct {
	lang, cmd, output, ok, treeCmd, tree, dep, loc, symbol, fix string
}

func (g *gen) buildFailure(kind string) buildFailure {
	var b buildFailure
	var out strings.Builder
	n := g.lines(60)
	switch kind {
	case "npm":
		b = buildFailure{lang: "node", cmd: "npm ci && npm run build", dep: "react-router-dom@" + pick(g.r, []string{"7.0.1", "7.1.0"}), loc: "src/routes/index.tsx:27:10", symbol: "useHistory",
			treeCmd: "npm ls react-router-dom react react-dom", fix: "const navigate = useNavigate();"}
		fmt.Fprintf(&out, "npm warn deprecated inflight@1.0.6: This module is not supported, and leaks memory.\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&out, "npm http fetch GET 200 https://registry.npmjs.org/%s/-/%s-%d.%d.%d.tgz %dms (cache miss)\n", pick(g.r, []string{"@babel/core", "postcss", "vite", "esbuild", "rollup"}), "pkg", g.r.IntN(9), g.r.IntN(30), g.r.IntN(20), 20+g.r.IntN(400))
		}
		fmt.Fprintf(&out, "\n> %s@%s build\n> tsc -b && vite build\n\nsrc/routes/index.tsx:27:10 - error TS2305: Module '\"react-router-dom\"' has no exported member 'useHistory'.\n\n27 import { useHistory } from \"react-router-dom\";\n            ~~~~~~~~~~\n\nFound 1 error in src/routes/index.tsx:27\n\nnpm error code 2\nnpm error path /srv/%s\nnpm error command failed\n", g.svc, g.version, g.svc)
		b.ok = fmt.Sprintf("vite v5.4.%d building for production...\n✓ %d modules transformed.\ndist/index.html                   0.46 kB │ gzip:  0.30 kB\ndist/assets/index-%s.js   %d.%02d kB │ gzip: 61.20 kB\n✓ built in %.2fs", g.r.IntN(12), 400+g.r.IntN(900), g.alnum(8), 150+g.r.IntN(200), g.r.IntN(100), 2+5*g.r.Float64())
		b.tree = fmt.Sprintf("%s@%s /srv/%s\n├── react-dom@18.3.1\n├── %s\n│ └── react-router@7.0.1\n└── react@18.3.1", g.svc, g.version, g.svc, b.dep)
	case "cargo":
		b = buildFailure{lang: "rust", cmd: "cargo build --release --locked", dep: "axum 0.8.1", loc: "src/http/routes.rs:54:22", symbol: "Router::route",
			treeCmd: "cargo tree -i axum --depth 1", fix: ".route(\"/v2/orders/{id}\", get(get_order))"}
		for i := 0; i < n; i++ {
			fmt.Fprintf(&out, "   Compiling %s v%d.%d.%d\n", pick(g.r, []string{"tokio", "hyper", "tower", "serde", "sqlx-core", "rustls", "tracing"}), g.r.IntN(2), g.r.IntN(40), g.r.IntN(30))
		}
		fmt.Fprintf(&out, "error[E0599]: no method named `route` found for struct `Router<AppState>` in the current scope\n  --> src/http/routes.rs:54:22\n   |\n54 |         .route(\"/v2/orders/:id\", get(get_order))\n   |          ^^^^^ method not found\n\nerror[E0308]: mismatched types\n  --> src/http/state.rs:18:9\n   |\n18 |         pool: PgPool,\n   |         ^^^^ expected `Arc<PgPool>`, found `PgPool`\n\nerror: could not compile `%s` (lib) due to 2 previous errors\n", g.module)
		b.ok = fmt.Sprintf("   Compiling %s v%s (/srv/%s)\n    Finished `release` profile [optimized] target(s) in %.2fs", g.module, g.version, g.svc, 60+100*g.r.Float64())
		b.tree = fmt.Sprintf("axum v0.8.1\n└── %s v%s (/srv/%s)", g.module, g.version, g.svc)
	case "tsc":
		b = buildFailure{lang: "node", cmd: "npx tsc --noEmit -p tsconfig.json", dep: "zod@" + pick(g.r, []string{"4.0.5", "4.1.0"}), loc: "src/api/schemas.ts:88:3", symbol: "z.string().nonempty",
			treeCmd: "npm ls zod", fix: "name: z.string().min(1),"}
		for i := 0; i < n/4+2; i++ {
			fmt.Fprintf(&out, "src/api/schemas.ts(%d,%d): error TS2339: Property 'nonempty' does not exist on type 'ZodString'.\n", 80+i, 3+g.r.IntN(20))
		}
		out.WriteString("\nFound errors in 1 file.\n")
		b.ok = ""
		b.tree = fmt.Sprintf("%s@%s /srv/%s\n└── %s", g.svc, g.version, g.svc, b.dep)
	default:
		b = buildFailure{lang: "python", cmd: "pip install -r requirements.txt && python -m compileall -q src", dep: "sqlalchemy==2.0.36", loc: "src/" + g.module + "/db.py:12:1", symbol: "declarative_base",
			treeCmd: "pip show sqlalchemy alembic", fix: "from sqlalchemy.orm import DeclarativeBase"}
		for i := 0; i < n; i++ {
			fmt.Fprintf(&out, "Collecting %s==%d.%d.%d\n  Downloading %s-%d.%d.%d-py3-none-any.whl (%d kB)\n", pick(g.r, []string{"httpx", "anyio", "pydantic-core", "greenlet", "alembic"}), g.r.IntN(4), g.r.IntN(30), g.r.IntN(10), "pkg", g.r.IntN(4), g.r.IntN(30), g.r.IntN(10), 20+g.r.IntN(900))
		}
		fmt.Fprintf(&out, "ERROR: pip's dependency resolver does not currently take into account all the packages that are installed.\nalembic 1.9.4 requires SQLAlchemy<2.0, but you have sqlalchemy 2.0.36 which is incompatible.\nTraceback (most recent call last):\n  File \"/srv/%s/src/%s/db.py\", line 12, in <module>\n    Base = declarative_base()\nsqlalchemy.exc.MovedIn20Warning: The ``declarative_base()`` function is now available as sqlalchemy.orm.declarative_base(). (deprecated since: 2.0)\n", g.svc, g.module)
		b.ok = "Successfully installed alembic-1.14.0 sqlalchemy-2.0.36"
		b.tree = "Name: SQLAlchemy\nVersion: 2.0.36\nRequires: greenlet, typing-extensions\nRequired-by: alembic\n---\nName: alembic\nVersion: 1.9.4\nRequires: Mako, SQLAlchemy"
	}
	b.output = out.String()
	return b
}
