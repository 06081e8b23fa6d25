package agentgen

import (
	"fmt"
	"strings"

	"github.com/strata-memory/strata/compact/checkpoint"
)

// Kinds, short.
const (
	kPath    = checkpoint.KindPath
	kCommand = checkpoint.KindCommand
	kURL     = checkpoint.KindURL
	kNumber  = checkpoint.KindNumber
	kError   = checkpoint.KindError
	kSymbol  = checkpoint.KindSymbol
	kID      = checkpoint.KindID
)

// grepOut prints search hits for name: its definition, its test and a
// caller.
func (g *gen) grepOut(t target, name string) string {
	caller := g.lang.src(&g.project, g.project.domains[g.r.IntN(len(g.project.domains))].dir, g.pick("checkout", "report", "handler", "worker"))
	switch g.lang.name {
	case "go":
		return fmt.Sprintf("%s:%d:func %s(amount int64, pct int) int64 {\n%s:%d:\tif got := %s(%d, 15); got != want {\n%s:%d:\ttotal := %s(sub, c.DiscountPct)\n",
			t.src, 20+g.r.IntN(40), name, t.test, 30+g.r.IntN(40), name, 1000+g.r.IntN(9000), caller, 50+g.r.IntN(100), name)
	case "python":
		return fmt.Sprintf("%s:%d:    def %s(self, amount: int, pct: int = 15) -> int:\n%s:%d:    assert svc.%s(%d) == want\n%s:%d:        total = self.pricing.%s(subtotal, order.discount_pct)\n",
			t.src, 20+g.r.IntN(40), name, t.test, 30+g.r.IntN(40), name, 1000+g.r.IntN(9000), caller, 50+g.r.IntN(100), name)
	default:
		return fmt.Sprintf("%s:%d:export function %s(amount: number, pct = 15): number {\n%s:%d:    expect(%s(%d)).toBe(want);\n%s:%d:  const total = %s(subtotal, cart.discountPct);\n",
			t.src, 20+g.r.IntN(40), name, t.test, 30+g.r.IntN(40), name, 1000+g.r.IntN(9000), caller, 50+g.r.IntN(100), name)
	}
}

// fixTest: a failing test, found, fixed and rerun.
func (g *gen) fixTest() {
	t := g.target()
	want := 1000 + g.r.IntN(9000)
	got := want - 1
	src, test := g.plant(kPath, t.src), g.plant(kPath, t.test)
	fn := g.plant(kSymbol, t.fn)
	name := "`" + t.testName + "`"
	if g.lang.name != "typescript" {
		g.plant(kSymbol, t.testName)
	} else {
		name = "the \"" + t.testName + "\" test"
	}
	req := g.pick(
		fmt.Sprintf("%s started failing on main this morning. Can you fix it? Please don't change the public API of the %s package.", capitalize(name), t.dom.dir),
		fmt.Sprintf("The %s tests are red: %s in %s fails. Fix it, and keep the change small.", t.dom.dir, name, test),
		fmt.Sprintf("CI says %s fails (%s). Could you look into it? Never skip or weaken the test to make it pass.", name, test),
	)
	if g.chance(0.5) {
		req += fmt.Sprintf(" It's tracked in %s.", g.plant(kID, fmt.Sprintf("#%d", 100+g.r.IntN(900))))
	}
	g.user(req)
	g.explore(t)
	cmd := g.plant(kCommand, g.lang.testCmd(&g.project, t))
	out, msg := g.testFail(t, got, want)
	g.plant(kError, msg)
	g.step("The user wants the failing test fixed without touching the public API. I should run just that test first and read the actual failure before changing anything.",
		g.pick("I'll run the failing test first.", "Let me reproduce the failure.", "First, the failing test on its own:"),
		g.shellCall(cmd, "Run the failing test"), out, false)
	g.step(fmt.Sprintf("Off by one: %d instead of %d. That smells like rounding in %s.", got, want, fn),
		fmt.Sprintf("The test gets %d instead of %d from `%s`. Let me find where it is defined and who calls it.", got, want, fn),
		g.grepCall(fn, g.srcRoot()), g.grepOut(t, fn), false)
	body, fixed := g.buggy()
	g.step("", "", g.readCall(src), g.tools.readOut(g.source(t, body, g.otherFns(t, 6+g.r.IntN(10)))), false)
	g.step("Integer division truncates toward zero. Adding half the divisor first rounds half up, which is what the test expects and what invoices use.",
		g.pick(
			fmt.Sprintf("Found it: `%s` truncates with integer division, so the last cent is lost. I'll round half up instead of truncating, since totals are compared to the cent.", fn),
			fmt.Sprintf("The bug is in `%s`: the division truncates. I decided to round half up rather than switch to floating point, to keep amounts in integer cents.", fn),
		),
		g.editCall(src, g.fnDecl(t, body), g.fnDecl(t, fixed)), g.tools.edited(src), false)
	g.step("", "", g.shellCall(cmd, "Run the test again"), g.testPass(t, false), false)
	all := g.plant(kCommand, g.lang.testAll)
	g.step("", "Now the whole suite, to be sure nothing depended on the old rounding.", g.shellCall(all, "Run all tests"), g.testPass(t, true), false)
	g.final(fmt.Sprintf("Fixed `%s` in `%s`: it now rounds half up instead of truncating, so %s passes and `%s` is green.\n\nNext steps:\n- Add a case for negative amounts to `%s`.\n- Check the other callers of `%s` for the same assumption.",
		fn, src, name, all, test, fn))
}

// fnDecl is the target function with the body, as source() writes it:
// what an edit replaces, with its context.
func (g *gen) fnDecl(t target, body string) string {
	switch g.lang.name {
	case "go":
		return fmt.Sprintf("// %s is the %s of an amount in cents.\nfunc %s(amount int64, pct int) int64 {\n%s\n}", t.fn, t.noun, t.fn, body)
	case "python":
		return fmt.Sprintf("    def %s(self, amount: int, pct: int = 15) -> int:\n        \"\"\"The %s of an amount in cents.\"\"\"\n%s", t.fn, t.noun, body)
	}
	return fmt.Sprintf("/** The %s of an amount in cents. */\nexport function %s(amount: number, pct = 15): number {\n%s\n}", t.noun, t.fn, body)
}

// srcRoot is where the project's code lives.
func (g *gen) srcRoot() string {
	switch g.lang.name {
	case "go":
		return "internal/"
	case "python":
		return pyPkg(&g.project) + "/"
	default:
		return "src/"
	}
}

// addFeature: a rate limit on an endpoint, with a typo the build
// catches, then a check with curl.
func (g *gen) addFeature() {
	res := g.pick("orders", "invoices", "uploads", "payments", "exports", "webhooks")
	route := g.plant(kPath, "/api/v1/"+res)
	n := []int{30, 60, 100, 120, 300, 600}[g.r.IntN(6)]
	limit := g.plant(kNumber, fmt.Sprintf("%d requests per minute", n))
	timeout := g.plant(kNumber, fmt.Sprintf("%ds", []int{10, 15, 30, 45, 60}[g.r.IntN(5)]))
	g.user(fmt.Sprintf("Add rate limiting to `POST %s`: at most %s per API key, and answer 429 with a `Retry-After` header when a client goes over. It must not add new dependencies, and keep the handler timeout at %s.",
		route, limit, timeout))
	g.explore(g.target())
	router := g.plant(kPath, g.lang.router(&g.project))
	g.step("I need to see how routes and middleware are wired before adding a limiter.",
		"Let me look at how the routes are registered.", g.readCall(router), g.tools.readOut(g.routerSource(res)), false)
	var file, ctor, wrong, code string
	switch g.lang.name {
	case "go":
		file, ctor, wrong = "internal/http/ratelimit.go", "newRateLimiter", "newRatelimiter"
		code = fmt.Sprintf("package http\n\nimport (\n\t\"net/http\"\n\t\"strconv\"\n\t\"sync\"\n\t\"time\"\n)\n\n// rateLimiter is a token bucket per API key.\ntype rateLimiter struct {\n\tmu      sync.Mutex\n\trate    float64 // tokens per second\n\tburst   float64\n\tbuckets map[string]*bucket\n}\n\ntype bucket struct {\n\ttokens float64\n\tlast   time.Time\n}\n\nfunc %s(perMinute int) *rateLimiter {\n\treturn &rateLimiter{rate: float64(perMinute) / 60, burst: float64(perMinute) / 6, buckets: map[string]*bucket{}}\n}\n\n// allow takes a token for key, or says how long to wait for one.\nfunc (l *rateLimiter) allow(key string, now time.Time) (bool, time.Duration) {\n\tl.mu.Lock()\n\tdefer l.mu.Unlock()\n\tb := l.buckets[key]\n\tif b == nil {\n\t\tb = &bucket{tokens: l.burst, last: now}\n\t\tl.buckets[key] = b\n\t}\n\tb.tokens = min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)\n\tb.last = now\n\tif b.tokens < 1 {\n\t\treturn false, time.Duration((1 - b.tokens) / l.rate * float64(time.Second))\n\t}\n\tb.tokens--\n\treturn true, 0\n}\n\nfunc (l *rateLimiter) middleware(next http.Handler) http.Handler {\n\treturn http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {\n\t\tok, wait := l.allow(r.Header.Get(\"X-API-Key\"), time.Now())\n\t\tif !ok {\n\t\t\tw.Header().Set(\"Retry-After\", strconv.Itoa(int(wait.Seconds())+1))\n\t\t\thttp.Error(w, \"rate limit exceeded\", http.StatusTooManyRequests)\n\t\t\treturn\n\t\t}\n\t\tnext.ServeHTTP(w, r)\n\t})\n}\n", ctor)
	case "python":
		file, ctor, wrong = pyPkg(&g.project)+"/api/ratelimit.py", "RateLimiter", "Ratelimiter"
		code = "from __future__ import annotations\n\nimport math\nimport threading\nimport time\nfrom dataclasses import dataclass, field\n\nfrom starlette.middleware.base import BaseHTTPMiddleware\nfrom starlette.responses import JSONResponse\n\n\n@dataclass\nclass _Bucket:\n    tokens: float\n    last: float\n\n\n@dataclass\nclass RateLimiter:\n    \"\"\"A token bucket per API key.\"\"\"\n\n    per_minute: int\n    buckets: dict[str, _Bucket] = field(default_factory=dict)\n    lock: threading.Lock = field(default_factory=threading.Lock)\n\n    def allow(self, key: str, now: float | None = None) -> tuple[bool, float]:\n        now = time.monotonic() if now is None else now\n        rate = self.per_minute / 60\n        burst = self.per_minute / 6\n        with self.lock:\n            b = self.buckets.setdefault(key, _Bucket(tokens=burst, last=now))\n            b.tokens = min(burst, b.tokens + (now - b.last) * rate)\n            b.last = now\n            if b.tokens < 1:\n                return False, (1 - b.tokens) / rate\n            b.tokens -= 1\n            return True, 0.0\n\n\nclass RateLimitMiddleware(BaseHTTPMiddleware):\n    def __init__(self, app, limiter: RateLimiter):\n        super().__init__(app)\n        self.limiter = limiter\n\n    async def dispatch(self, request, call_next):\n        ok, wait = self.limiter.allow(request.headers.get(\"x-api-key\", \"\"))\n        if not ok:\n            return JSONResponse({\"error\": \"rate limit exceeded\"}, status_code=429, headers={\"Retry-After\": str(math.ceil(wait))})\n        return await call_next(request)\n"
	default:
		file, ctor, wrong = "src/http/rateLimit.ts", "createRateLimiter", "createRatelimiter"
		code = "import type { RequestHandler } from 'express';\n\ninterface Bucket {\n  tokens: number;\n  last: number;\n}\n\n/** A token bucket per API key. */\nexport function createRateLimiter(perMinute: number): RequestHandler {\n  const rate = perMinute / 60_000;\n  const burst = perMinute / 6;\n  const buckets = new Map<string, Bucket>();\n  return (req, res, next) => {\n    const key = req.header('x-api-key') ?? '';\n    const now = Date.now();\n    const b = buckets.get(key) ?? { tokens: burst, last: now };\n    b.tokens = Math.min(burst, b.tokens + (now - b.last) * rate);\n    b.last = now;\n    buckets.set(key, b);\n    if (b.tokens < 1) {\n      res.set('Retry-After', String(Math.ceil((1 - b.tokens) / rate / 1000)));\n      res.status(429).json({ error: 'rate limit exceeded' });\n      return;\n    }\n    b.tokens -= 1;\n    next();\n  };\n}\n"
	}
	g.plant(kPath, file)
	g.plant(kSymbol, ctor)
	g.step("A fixed window would let a client send twice the limit around the window edge. A token bucket per key is small enough to write without a dependency.",
		g.pick("I'll use a token bucket per API key instead of a fixed window: it allows short bursts and has no spike when the window resets.",
			"Going with a token bucket per key rather than a fixed-window counter, because it smooths bursts and needs no new dependency."),
		g.writeCall(file, code), g.tools.wrote(file), false)
	line, col := 30+g.r.IntN(60), 5+g.r.IntN(20)
	old := fmt.Sprintf("mux.Handle(\"POST %s\", s.handle%s())", route, capitalize(res))
	neu := fmt.Sprintf("mux.Handle(\"POST %s\", %s(%d).middleware(s.handle%s()))", route, wrong, n, capitalize(res))
	if g.lang.name == "python" {
		old = fmt.Sprintf("app.add_route(\"%s\", %s_endpoint, methods=[\"POST\"])", route, res)
		neu = fmt.Sprintf("app.add_middleware(RateLimitMiddleware, limiter=%s(per_minute=%d))\n"+old, wrong, n)
	} else if g.lang.name == "typescript" {
		old = fmt.Sprintf("router.post('%s', handle%s);", route, capitalize(res))
		neu = fmt.Sprintf("router.post('%s', %s(%d), handle%s);", route, wrong, n, capitalize(res))
	}
	g.step("", "", g.editCall(router, old, neu), g.tools.edited(router), false)
	build := g.plant(kCommand, g.lang.build)
	out, msg := g.compileErr(router, line, col, wrong)
	g.plant(kError, msg)
	g.step("", "", g.shellCall(build, "Build"), out, true)
	g.step("", fmt.Sprintf("Typo: `%s` instead of `%s`.", wrong, ctor),
		g.editCall(router, wrong, ctor), g.tools.edited(router), false)
	g.step("", "", g.shellCall(build, "Build again"), g.buildOK(), false)
	all := g.plant(kCommand, g.lang.testAll)
	g.step("", "", g.shellCall(all, "Run all tests"), g.testPass(target{dom: g.project.domains[0], test: "src/http/routes.test.ts"}, true), false)
	url := g.plant(kURL, fmt.Sprintf("http://localhost:%d%s", g.project.port, route))
	curl := g.plant(kCommand, fmt.Sprintf("curl -s -i -X POST %s -H \"X-API-Key: test-key\" -d '{}'", url))
	g.step("The server is running locally from the earlier session; a request over the limit should get 429.",
		fmt.Sprintf("Build and tests pass. Let me check the limit against the local server on port %d.", g.project.port),
		g.shellCall(curl, "Hit the endpoint"),
		fmt.Sprintf("HTTP/1.1 429 Too Many Requests\nContent-Type: application/json\nRetry-After: %d\nDate: Tue, 12 Mar 2024 10:%02d:%02d GMT\nContent-Length: 31\n\n{\"error\":\"rate limit exceeded\"}\n",
			1+g.r.IntN(9), g.r.IntN(60), g.r.IntN(60)), false)
	g.final(fmt.Sprintf("Done. `POST %s` now goes through a token bucket per API key (`%s` in `%s`): %s, and 429 with `Retry-After` beyond that. No new dependency; the handler timeout stays at %s. `%s` and `%s` pass, and the local server answered 429 once the bucket was empty.",
		route, ctor, file, limit, timeout, build, all))
}

// routerSource prints the file that registers the routes.
func (g *gen) routerSource(res string) string {
	var b strings.Builder
	others := []string{"health", "metrics", "users", "sessions", "reports", "exports", "settings"}
	switch g.lang.name {
	case "go":
		b.WriteString("package http\n\nimport \"net/http\"\n\n// routes registers the API.\nfunc (s *Server) routes() http.Handler {\n\tmux := http.NewServeMux()\n")
		for _, o := range others {
			fmt.Fprintf(&b, "\tmux.Handle(\"GET /api/v1/%s\", s.handle%s())\n", o, capitalize(o))
		}
		fmt.Fprintf(&b, "\tmux.Handle(\"POST /api/v1/%s\", s.handle%s())\n\treturn s.withLogging(s.withTimeout(mux))\n}\n", res, capitalize(res))
	case "python":
		b.WriteString("from starlette.applications import Starlette\n\nfrom .endpoints import *  # noqa: F403\n\napp = Starlette()\n")
		for _, o := range others {
			fmt.Fprintf(&b, "app.add_route(\"/api/v1/%s\", %s_endpoint, methods=[\"GET\"])\n", o, o)
		}
		fmt.Fprintf(&b, "app.add_route(\"/api/v1/%s\", %s_endpoint, methods=[\"POST\"])\n", res, res)
	default:
		b.WriteString("import { Router } from 'express';\nimport * as h from './handlers';\n\nexport const router = Router();\n")
		for _, o := range others {
			fmt.Fprintf(&b, "router.get('/api/v1/%s', h.handle%s);\n", o, capitalize(o))
		}
		fmt.Fprintf(&b, "router.post('/api/v1/%s', handle%s);\n", res, capitalize(res))
	}
	return b.String()
}

// investigateCrash: a production crash since a deploy, traced to a
// commit, fixed.
func (g *gen) investigateCrash() {
	t := g.target()
	verb := g.pick("deliver", "publish", "notify", "dispatch", "submit")
	m := verb
	if g.lang.name == "go" {
		m = capitalize(verb)
	}
	src := g.plant(kPath, t.src)
	route := g.plant(kPath, "/api/v1/"+plural(t.noun))
	run := 9000000000 + g.r.IntN(900000000)
	url := g.plant(kURL, fmt.Sprintf("https://github.com/%s/%s/actions/runs/%d", g.project.org, g.project.name, run))
	g.user(fmt.Sprintf("Since this morning's deploy, `POST %s` returns 500 in production. The smoke test in CI fails too: %s\nCan you find the cause and fix it?", route, url))
	g.explore(t)
	cmd := g.plant(kCommand, fmt.Sprintf("gh run view %d --log-failed | tail -n 40", run))
	out, msg := g.crash(t, m)
	g.plant(kError, msg)
	var logb strings.Builder
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&logb, "smoke\tRun tests\t2024-03-12T09:%02d:%02d.%07dZ ==> POST %s (attempt %d)\n", 10+i, g.r.IntN(60), g.r.IntN(9999999), route, i+1)
	}
	g.step("The log should show the stack trace of the 500.", "Let me read the failing CI log.",
		g.shellCall(cmd, "Read the failing CI log"), logb.String()+out, false)
	method := t.typ + "." + m
	g.plant(kSymbol, method)
	initFn := g.lang.fn("ensure", "client")
	if g.lang.name == "python" {
		initFn = "_ensure_client"
	}
	g.plant(kSymbol, initFn)
	logCmd := g.plant(kCommand, fmt.Sprintf("git log --oneline -n 8 -- %s", g.srcRoot()+t.dom.dir))
	culprit := g.hex(7)
	msgs := []string{"Bump test timeouts", "Add metrics for " + t.noun + " retries", "Refactor " + t.noun + " store queries",
		"Fix typo in README", "Log request ids", "Split " + t.dom.dir + " config", "Use context timeouts in " + t.dom.dir}
	pos := g.r.IntN(3)
	var lb strings.Builder
	cmsg := fmt.Sprintf("Create the %s client lazily in %s", t.noun, initFn)
	for i := 0; i < 8; i++ {
		if i == pos {
			fmt.Fprintf(&lb, "%s %s\n", culprit, cmsg)
			continue
		}
		fmt.Fprintf(&lb, "%s %s\n", g.hex(7), msgs[(i+g.r.IntN(3))%len(msgs)])
	}
	g.step(fmt.Sprintf("A nil client in %s. Something changed how the client is built; the recent history of the package should show it.", method),
		fmt.Sprintf("`%s` dereferences a nil client. Let me see what changed in %s recently.", method, t.dom.dir),
		g.shellCall(logCmd, "Recent commits"), lb.String(), false)
	g.plant(kID, culprit)
	show := g.plant(kCommand, "git show --stat "+culprit)
	g.step("", "", g.shellCall(show, "Show the suspect commit"),
		fmt.Sprintf("commit %s%s\nAuthor: Dana Whitfield <dana@%s.example.com>\nDate:   Mon Mar 11 17:42:09 2024 +0100\n\n    %s\n\n %s | %d ++++++++++-----\n %s | %d +++--\n 2 files changed, %d insertions(+), %d deletions(-)\n",
			culprit, g.hex(33), g.project.org, cmsg, src, 10+g.r.IntN(30), t.test, 3+g.r.IntN(10), 12+g.r.IntN(30), 4+g.r.IntN(20)), false)
	body, _ := g.buggy()
	g.step("", "", g.readCall(src), g.tools.readOut(g.source(t, body, append(g.otherFns(t, 5+g.r.IntN(8)), initFn))), false)
	g.step(fmt.Sprintf("%s is only called from the read path, so the write path never builds the client.", initFn),
		fmt.Sprintf("Commit %s (\"%s\") moved the client setup into `%s`, which only runs on the read path; `%s` skips it, so the client stays nil. Rather than revert the commit, I'll build the client in the constructor and keep `%s` as a guard.",
			culprit, cmsg, initFn, method, initFn),
		g.editField(src, "client"), g.tools.edited(src), false)
	all := g.plant(kCommand, g.lang.testAll)
	g.step("", "", g.shellCall(all, "Run all tests"), g.testPass(t, true), false)
	g.final(fmt.Sprintf("The 500s come from `%s` calling a nil client since %s. I now build the client in the constructor, so every path has one, and `%s` passes. It is not deployed yet: after the deploy, rerun the smoke test (%s).",
		method, culprit, all, url))
}

// rename: a function renamed and its file moved, one caller missed and
// fixed.
func (g *gen) rename() {
	t := g.target()
	oldName := g.plant(kSymbol, t.fn)
	newVerb := verbs[(indexOf(verbs, t.verb)+1+g.r.IntN(len(verbs)-1))%len(verbs)]
	newName := g.plant(kSymbol, g.lang.fn(newVerb, t.noun))
	newDir := g.pick("pricing", "core", "domain", "ledger")
	oldPath := g.plant(kPath, t.src)
	newPath := g.plant(kPath, g.lang.src(&g.project, newDir, t.noun))
	g.user(fmt.Sprintf("Rename `%s` to `%s` everywhere, and move `%s` to `%s`. Use git mv so the file keeps its history.", oldName, newName, oldPath, newPath))
	g.explore(t)
	grep := g.plant(kCommand, fmt.Sprintf("grep -rln %q %s", oldName, g.srcRoot()))
	var files []string
	for _, d := range g.project.domains[:3] {
		files = append(files, g.lang.src(&g.project, d.dir, d.nouns[g.r.IntN(len(d.nouns))]))
	}
	files = append(files, oldPath)
	g.step("Find every file that mentions the old name first.", "", g.shellCall(grep, "Find uses"), strings.Join(files, "\n")+"\n", false)
	mv := g.plant(kCommand, fmt.Sprintf("mkdir -p %s && git mv %s %s", newPath[:strings.LastIndexByte(newPath, '/')], oldPath, newPath))
	g.step("", "", g.shellCall(mv, "Move the file"), "", false)
	files[len(files)-1] = newPath
	var rw string
	if g.lang.name == "go" {
		rw = fmt.Sprintf("gofmt -w -r '%s -> %s' ./internal", oldName, newName)
	} else {
		rw = fmt.Sprintf("sed -i 's/\\b%s\\b/%s/g' %s", oldName, newName, strings.Join(files, " "))
	}
	g.plant(kCommand, rw)
	g.step("", "", g.shellCall(rw, "Rename"), "", false)
	build := g.plant(kCommand, g.lang.build)
	missed := g.lang.test(&g.project, g.project.domains[3].dir, g.project.domains[3].nouns[0])
	g.plant(kPath, missed)
	out, msg := g.compileErr(missed, 20+g.r.IntN(60), 9, oldName)
	g.plant(kError, msg)
	g.step("", "", g.shellCall(build, "Build"), out, true)
	g.step("", fmt.Sprintf("`%s` still uses the old name: the rewrite only covered the package files, not that test.", missed),
		g.editCall(missed, oldName+"(", newName+"("), g.tools.edited(missed), false)
	g.step("", "", g.shellCall(build, "Build again"), g.buildOK(), false)
	all := g.plant(kCommand, g.lang.testAll)
	g.step("", "", g.shellCall(all, "Run all tests"), g.testPass(t, true), false)
	g.final(fmt.Sprintf("Renamed `%s` to `%s` in %d files and moved `%s` to `%s` with git mv (history kept). `%s` had a use the rewrite missed; fixed. Build and `%s` pass.",
		oldName, newName, len(files)+1, oldPath, newPath, missed, all))
}

// fieldEdit adds a field named name next to the store field of the
// target's type, as an edit's old and new text.
func (g *gen) fieldEdit(name string) (string, string) {
	switch g.lang.name {
	case "go":
		return "store   Store", "store   Store\n\t" + name + " *http.Client"
	case "python":
		return "store: Store", "store: Store\n    " + name + ": httpx.AsyncClient = field(default_factory=httpx.AsyncClient)"
	default:
		return "private readonly store: Store,", "private readonly store: Store, private readonly " + name + " = new HttpClient(),"
	}
}

// editField is the edit call of fieldEdit on path.
func (g *gen) editField(path, name string) Call {
	old, neu := g.fieldEdit(name)
	return g.editCall(path, old, neu)
}

func plural(s string) string {
	switch {
	case strings.HasSuffix(s, "y"):
		return s[:len(s)-1] + "ies"
	case strings.HasSuffix(s, "x"), strings.HasSuffix(s, "s"), strings.HasSuffix(s, "ch"):
		return s + "es"
	}
	return s + "s"
}

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return 0
}

// upgrade: a dependency bumped, an API change fixed, the memory checked.
func (g *gen) upgrade() {
	lib := g.lang.libs[g.r.IntN(len(g.lang.libs))]
	mem := []int{256, 384, 512, 768, 1024}[g.r.IntN(5)]
	from, to := g.plant(kID, lib.from), g.plant(kID, lib.to)
	url := g.plant(kURL, lib.changelog)
	memLimit := g.plant(kNumber, fmt.Sprintf("%d MB", mem))
	g.user(fmt.Sprintf("Please upgrade %s from %s to %s; the changelog is at %s. Staging has a memory limit of %s, so make sure the footprint doesn't grow much. Prefer small code changes over wrappers.",
		lib.name, from, to, url, memLimit))
	g.explore(g.target())
	var install, installOut string
	switch g.lang.name {
	case "go":
		install = fmt.Sprintf("go get %s@%s", lib.name, lib.to)
		installOut = fmt.Sprintf("go: upgraded %s %s => %s\n", lib.name, lib.from, lib.to)
	case "python":
		install = fmt.Sprintf("pip install \"%s==%s\"", lib.name, lib.to)
		installOut = fmt.Sprintf("Collecting %s==%s\n  Downloading %s-%s-py3-none-any.whl (%d kB)\nInstalling collected packages: %s\n  Attempting uninstall: %s\n    Found existing installation: %s %s\n    Uninstalling %s-%s:\n      Successfully uninstalled %s-%s\nSuccessfully installed %s-%s\n",
			lib.name, lib.to, lib.name, lib.to, 100+g.r.IntN(400), lib.name, lib.name, lib.name, lib.from, lib.name, lib.from, lib.name, lib.from, lib.name, lib.to)
	default:
		install = fmt.Sprintf("npm install %s@%s", lib.name, lib.to)
		installOut = fmt.Sprintf("\nchanged 1 package, and audited %d packages in %ds\n\n%d packages are looking for funding\n  run `npm fund` for details\n\nfound 0 vulnerabilities\n", 300+g.r.IntN(900), 1+g.r.IntN(9), 20+g.r.IntN(80))
	}
	g.plant(kCommand, install)
	g.step("Read the changelog for breaking changes after installing; the build will show what broke.", "",
		g.shellCall(install, "Install the new version"), installOut, false)
	t := g.target()
	file := g.plant(kPath, t.src)
	check := g.lang.build
	if g.lang.name == "python" {
		check = g.lang.testAll
	}
	g.plant(kCommand, check)
	out, msg := g.upgradeErr(lib, file)
	g.plant(kError, msg)
	g.step("", "", g.shellCall(check, "Check the build"), out, true)
	body, _ := g.buggy()
	g.step("", fmt.Sprintf("%s %s changed this API. Let me look at the call site.", lib.name, to),
		g.readCall(file), g.tools.readOut(g.source(t, body, g.otherFns(t, 5+g.r.IntN(8)))), false)
	g.step("The changelog's migration notes give the new call; no wrapper needed, as the user prefers.",
		"The migration notes say to use the new constructor; I'll change the call site directly instead of adding a compatibility wrapper.",
		g.editField(file, "options"), g.tools.edited(file), false)
	g.step("", "", g.shellCall(check, "Check again"), g.testPass(t, true), false)
	if g.lang.name == "go" {
		tidy := g.plant(kCommand, "go mod tidy")
		g.step("", "", g.shellCall(tidy, "Tidy go.mod"), "", false)
	}
	before := mem/2 + g.r.IntN(mem/4)
	after := before + 2 + g.r.IntN(20)
	b, a := g.plant(kNumber, fmt.Sprintf("%d MB", before)), g.plant(kNumber, fmt.Sprintf("%d MB", after))
	load := g.plant(kCommand, "make loadtest DURATION=60s")
	g.step("", "Now the footprint, with the same load test as staging.", g.shellCall(load, "Load test"),
		fmt.Sprintf("running load test for 60s against http://localhost:%d ...\nrequests: %d  errors: 0  p50: %dms  p99: %dms\npeak RSS: %s (baseline on %s: %s)\n",
			g.project.port, 20000+g.r.IntN(30000), 5+g.r.IntN(20), 40+g.r.IntN(100), a, lib.from, b), false)
	g.final(fmt.Sprintf("Upgraded %s to %s. One call site in `%s` needed the new API (%s). Peak memory in the load test went from %s to %s, well under the %s limit. Build and tests pass.",
		lib.name, to, file, "the changelog's migration notes", b, a, memLimit))
}

// slowEndpoint: a latency regression profiled, its cause fixed.
func (g *gen) slowEndpoint() {
	t := g.target()
	route := g.plant(kPath, "/api/v1/"+t.dom.dir)
	before := 60 + g.r.IntN(140)
	after := 500 + g.r.IntN(1000)
	b, a := g.plant(kNumber, fmt.Sprintf("%dms", before)), g.plant(kNumber, fmt.Sprintf("%dms", after))
	g.user(fmt.Sprintf("`GET %s` got slow after the last release: p99 went from %s to %s. Can you find out why? Don't add a cache, I want the actual cause fixed.", route, b, a))
	g.explore(t)
	culprit := g.plant(kSymbol, g.lang.fn("sort", "results"))
	src := g.plant(kPath, t.src)
	var prof, profOut string
	slow, fast := 400000+g.r.IntN(900000), 40000+g.r.IntN(90000)
	var slowS, fastS string
	switch g.lang.name {
	case "go":
		prof = fmt.Sprintf("go test -run '^$' -bench Benchmark%s -benchmem -cpuprofile cpu.out ./internal/%s/ && go tool pprof -top -nodecount=8 cpu.out",
			capitalize(t.dom.dir), t.dom.dir)
		profOut = fmt.Sprintf("goos: linux\ngoarch: amd64\npkg: %s/internal/%s\ncpu: AMD EPYC 7B13\nBenchmark%s-8   \t    %d\t    %d ns/op\t  %d B/op\t    %d allocs/op\nPASS\nok  \t%s/internal/%s\t2.%03ds\nShowing nodes accounting for 1.84s, 91.54%% of 2.01s total\n      flat  flat%%   sum%%        cum   cum%%\n     0.91s 45.27%% 45.27%%      1.52s 75.62%%  %s/internal/%s.%s\n     0.38s 18.91%% 64.18%%      0.38s 18.91%%  sort.insertionSortCmpFunc\n     0.21s 10.45%% 74.63%%      0.21s 10.45%%  runtime.memmove\n     0.14s  6.97%% 81.59%%      0.61s 30.35%%  %s/internal/%s.(*%s).page\n",
			g.project.module, t.dom.dir, capitalize(t.dom.dir), 1000+g.r.IntN(2000), slow, 90000+g.r.IntN(90000), 900+g.r.IntN(900),
			g.project.module, t.dom.dir, g.r.IntN(999), g.project.module, t.dom.dir, culprit, g.project.module, t.dom.dir, t.typ)
		slowS, fastS = fmt.Sprintf("%d ns/op", slow), fmt.Sprintf("%d ns/op", fast)
	case "python":
		prof = "python -m cProfile -s cumtime scripts/profile_search.py | head -n 20"
		profOut = fmt.Sprintf("         %d function calls (%d primitive calls) in %d.%03d seconds\n\n   Ordered by: cumulative time\n\n   ncalls  tottime  percall  cumtime  percall filename:lineno(function)\n        1    0.000    0.000    %d.%03d    %d.%03d profile_search.py:1(<module>)\n      200    0.004    0.000    %d.%03d    0.%03d %s:%d(%s)\n    40000    %d.%03d    0.000    %d.%03d    0.000 %s:%d(%s)\n    40000    0.412    0.000    0.412    0.000 {method 'sort' of 'list' objects}\n",
			1000000+g.r.IntN(900000), 900000+g.r.IntN(90000), 2+g.r.IntN(3), g.r.IntN(999), 2+g.r.IntN(3), g.r.IntN(999), 2+g.r.IntN(3), g.r.IntN(999),
			2, g.r.IntN(999), 10+g.r.IntN(99), src, 40+g.r.IntN(100), t.fn, 1+g.r.IntN(2), g.r.IntN(999), 1+g.r.IntN(2), g.r.IntN(999), src, 80+g.r.IntN(100), culprit)
		slowS, fastS = fmt.Sprintf("%d.%02ds", 2+g.r.IntN(3), g.r.IntN(100)), fmt.Sprintf("0.%02ds", 10+g.r.IntN(30))
	default:
		prof = fmt.Sprintf("npx vitest bench src/%s/%s.bench.ts --run", t.dom.dir, t.noun)
		profOut = fmt.Sprintf(" ✓ src/%s/%s.bench.ts (2) %dms\n     name            hz     min     max    mean     p75     p99    p995    p999     rme  samples\n   · page 1    %d.%02d  %d.%02d  %d.%02d  %d.%02d  %d.%02d  %d.%02d  %d.%02d  %d.%02d  ±%d.%02d%%      %d\n   · page 20    %d.%02d  %d.%02d  %d.%02d  %d.%02d  %d.%02d  %d.%02d  %d.%02d  %d.%02d  ±%d.%02d%%      %d\n",
			t.dom.dir, t.noun, 2000+g.r.IntN(3000),
			100+g.r.IntN(900), g.r.IntN(100), 1+g.r.IntN(5), g.r.IntN(100), 5+g.r.IntN(9), g.r.IntN(100), 2+g.r.IntN(5), g.r.IntN(100), 3+g.r.IntN(5), g.r.IntN(100), 6+g.r.IntN(5), g.r.IntN(100), 7+g.r.IntN(5), g.r.IntN(100), 8+g.r.IntN(5), g.r.IntN(100), 1+g.r.IntN(3), g.r.IntN(100), 500+g.r.IntN(500),
			10+g.r.IntN(90), g.r.IntN(100), 20+g.r.IntN(50), g.r.IntN(100), 60+g.r.IntN(50), g.r.IntN(100), 30+g.r.IntN(50), g.r.IntN(100), 40+g.r.IntN(50), g.r.IntN(100), 70+g.r.IntN(50), g.r.IntN(100), 80+g.r.IntN(50), g.r.IntN(100), 90+g.r.IntN(50), g.r.IntN(100), 2+g.r.IntN(3), g.r.IntN(100), 50+g.r.IntN(100))
		slowS, fastS = fmt.Sprintf("%d.%02dms", 30+g.r.IntN(50), g.r.IntN(100)), fmt.Sprintf("%d.%02dms", 1+g.r.IntN(4), g.r.IntN(100))
	}
	g.plant(kCommand, prof)
	g.step("Profile before guessing. The regression came with the last release, so the benchmark should show where the time goes.",
		"Let me profile the search path.", g.shellCall(prof, "Profile"), profOut, false)
	g.plant(kNumber, slowS)
	g.step("", fmt.Sprintf("Most of the time is in `%s`: it sorts the whole result set again for every page, so a deep page costs %s.", culprit, slowS),
		g.readCall(src), g.tools.readOut(g.source(t, "\t// sorted per page\n\treturn 0", append(g.otherFns(t, 5+g.r.IntN(8)), culprit))), false)
	g.step("Sorting once per query and keeping the order on the cursor fixes the cause; no cache involved.",
		fmt.Sprintf("I'll sort once per query and keep the order on the cursor instead of re-sorting per page. That removes the cause, so no cache is needed."),
		g.editCall(src, "// sorted per page", "// sorted once per query; the cursor keeps the order"), g.tools.edited(src), false)
	g.plant(kNumber, fastS)
	g.step("", "", g.shellCall(prof, "Profile again"), strings.Replace(profOut, slowS, fastS, 1), false)
	g.final(fmt.Sprintf("Found it: `%s` re-sorted every result set per page since the last release. It now sorts once per query (`%s`), and the benchmark went from %s to %s, which should bring the p99 of `GET %s` back to about %s. No cache added.",
		culprit, src, slowS, fastS, route, b))
}

// explore adds zero to two looks around the repository that a continuing
// agent does not need again (nothing planted): the working tree's state,
// a directory listing, the manifest.
func (g *gen) explore(t target) {
	for n := g.r.IntN(3); n > 0; n-- {
		switch g.r.IntN(4) {
		case 0:
			var b strings.Builder
			for i := 0; i < 1+g.r.IntN(4); i++ {
				d := g.project.domains[g.r.IntN(len(g.project.domains))]
				fmt.Fprintf(&b, " M %s\n", g.lang.src(&g.project, d.dir, d.nouns[g.r.IntN(len(d.nouns))]))
			}
			b.WriteString("?? notes.txt\n")
			g.step("", "", g.shellCall("git status --short", "Working tree"), b.String(), false)
		case 1:
			dir := g.srcRoot() + t.dom.dir
			var b strings.Builder
			for _, n := range t.dom.nouns {
				fmt.Fprintf(&b, "%s\n", g.lang.src(&g.project, t.dom.dir, n)[len(dir)+1:])
				fmt.Fprintf(&b, "%s\n", g.lang.test(&g.project, t.dom.dir, n)[strings.LastIndexByte(g.lang.test(&g.project, t.dom.dir, n), '/')+1:])
			}
			g.step("", "", g.shellCall("ls "+dir, "List the package"), b.String(), false)
		case 2:
			g.step("", "", g.readCall(g.manifest()), g.tools.readOut(g.manifestContent()), false)
		default:
			var b strings.Builder
			total := 0
			for i := 0; i < 2+g.r.IntN(5); i++ {
				d := g.project.domains[g.r.IntN(len(g.project.domains))]
				n := 1 + g.r.IntN(40)
				total += n
				fmt.Fprintf(&b, " %s | %d %s\n", g.lang.src(&g.project, d.dir, d.nouns[g.r.IntN(len(d.nouns))]), n, strings.Repeat("+", min(n, 20)))
			}
			fmt.Fprintf(&b, " %d files changed, %d insertions(+), %d deletions(-)\n", 2, total, g.r.IntN(20))
			g.step("", "", g.shellCall("git diff --stat HEAD~3", "Recent changes"), b.String(), false)
		}
	}
}

// manifest is the project's dependency file.
func (g *gen) manifest() string {
	switch g.lang.name {
	case "go":
		return "go.mod"
	case "python":
		return "pyproject.toml"
	}
	return "package.json"
}

func (g *gen) manifestContent() string {
	switch g.lang.name {
	case "go":
		return fmt.Sprintf("module %s\n\ngo 1.22\n\nrequire (\n\tgithub.com/jackc/pgx/v5 v5.4.3\n\tgithub.com/redis/go-redis/v9 v9.0.5\n\tgo.uber.org/zap v1.24.0\n\tgolang.org/x/sync v0.6.0\n)\n\nrequire (\n\tgithub.com/cespare/xxhash/v2 v2.2.0 // indirect\n\tgithub.com/jackc/pgpassfile v1.0.0 // indirect\n\tgo.uber.org/multierr v1.10.0 // indirect\n)\n", g.project.module)
	case "python":
		return fmt.Sprintf("[project]\nname = %q\nversion = \"1.%d.0\"\nrequires-python = \">=3.11\"\ndependencies = [\n    \"fastapi>=0.110\",\n    \"pydantic>=1.10,<3\",\n    \"sqlalchemy>=1.4\",\n    \"httpx>=0.23\",\n]\n\n[tool.pytest.ini_options]\naddopts = \"-ra\"\ntestpaths = [\"tests\"]\n", g.project.name, g.r.IntN(20))
	}
	return fmt.Sprintf("{\n  \"name\": %q,\n  \"version\": \"1.%d.0\",\n  \"type\": \"module\",\n  \"scripts\": {\n    \"build\": \"tsc -p tsconfig.json && vite build\",\n    \"test\": \"vitest run\",\n    \"lint\": \"eslint src\"\n  },\n  \"dependencies\": {\n    \"axios\": \"^0.27.2\",\n    \"express\": \"^4.18.2\",\n    \"zod\": \"^3.21.4\"\n  },\n  \"devDependencies\": {\n    \"typescript\": \"^5.4.2\",\n    \"vite\": \"^5.4.8\",\n    \"vitest\": \"^1.4.0\"\n  }\n}\n", g.project.name, g.r.IntN(20))
}
