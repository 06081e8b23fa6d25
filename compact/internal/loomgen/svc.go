package loomgen

import (
	"fmt"
	"strings"
	"time"
)

// Services: shuttle (the Clojure job scheduler), the OpenResty gateway and
// wctl (the Zig CLI).

func (g *gen) cljTest() string { return strings.Join(g.words(cljWords, 3), "-") }

var cljNS = []string{"api", "lease", "queue", "quota", "worker", "store", "sweeper", "tenant", "metrics", "config"}

func (g *gen) taskShuttle() {
	var b strings.Builder
	b.WriteString(g.pick(
		"shuttle keeps double-assigning leases since the lease TTL change. Find out why and fix it. Don't change the wire format of the lease API, other teams' clients depend on it.",
		"We're seeing two workers run the same job in shuttle since Tuesday's TTL change. Please find the cause and fix it without changing the lease API's JSON shape.",
	))
	if g.chance(0.6) {
		fmt.Fprintf(&b, "\n\nOne of the duplicate runs from the audit log:\n```\nlease %s assigned to shuttle-worker-3 and shuttle-worker-9, audit ref %s\n```",
			g.U("id", func() string { return "ls-" + g.hex(12) }), g.U("uuid", g.mkUUID()))
	}
	g.user(b.String())

	leaseID := g.E("id", func() string { return "ls-" + g.hex(12) })
	crashSite := g.E("site", g.mkSite("lease.clj"))
	host := g.pick("shuttle-01", "shuttle-02", "shuttle-03")
	pid := g.n(2000, 90000)
	g.turn("Starting with the service journal on the scheduler host.",
		g.bash(fmt.Sprintf("ssh %s journalctl -u shuttle --since '3 hours ago' --no-pager | tail -n 1200", host), func(o *out) {
			c := g.clockFrom(3 * time.Hour)
			pre := func(t time.Time) string {
				return fmt.Sprintf("%s %s shuttle[%d]:", t.Format("Jan 02 15:04:05"), host, pid)
			}
			line := func() {
				t := c.tick(6000)
				lvl := g.pick("INFO ", "INFO ", "INFO ", "DEBUG", "WARN ")
				msg := g.pick(
					fmt.Sprintf("loomfield.shuttle.api - POST /v1/leases 201 %dms tenant=%s", g.n(2, 80), g.pick("ml-research", "sim", "eval", "data-eng")),
					fmt.Sprintf("loomfield.shuttle.api - GET /v1/jobs/j-%s 200 %dms", g.A(g.mkHex(10)), g.n(1, 30)),
					fmt.Sprintf("loomfield.shuttle.queue - enqueued job j-%s priority=%d queue-depth=%d", g.A(g.mkHex(10)), g.n(0, 9), g.n(0, 400)),
					fmt.Sprintf("loomfield.shuttle.lease - renewed lease-id=ls-%s epoch=%d ttl-ms=%d", g.A(g.mkHex(12)), g.n(100, 9000), g.pickI(15000, 30000, 45000)),
					fmt.Sprintf("loomfield.shuttle.sweeper - sweep done: %d expired, %d reclaimed in %dms", g.n(0, 9), g.n(0, 9), g.n(1, 60)),
					fmt.Sprintf("loomfield.shuttle.worker - worker shuttle-worker-%d heartbeat ok (lag %dms)", g.n(1, 12), g.n(1, 900)),
				)
				o.addf("%s %s.%03d %s [%s] %s", pre(t), t.Format("2006-01-02 15:04:05"), g.n(0, 999), lvl, g.pick("qtp1321640594-41", "lease-sweeper-1", "worker-pool-3", "async-dispatch-7"), msg)
			}
			crash := func() {
				t := c.tick(500)
				p := pre(t)
				o.failf("%s %s.%03d ERROR [worker-pool-%d] loomfield.shuttle.worker - worker crashed, restarting", p, t.Format("2006-01-02 15:04:05"), g.n(0, 999), g.n(1, 8))
				o.failf("%s clojure.lang.ExceptionInfo: lease conflict {:type :shuttle/lease-conflict, :lease-id \"%s\", :holder \"shuttle-worker-%d\", :epoch %d, :observed-epoch %d}", p, leaseID, g.n(1, 12), 4417, 4416)
				o.failf("%s         at loomfield.shuttle.lease$acquire_BANG_.invokeStatic(%s)", p, crashSite)
				o.failf("%s         at loomfield.shuttle.lease$acquire_BANG_.invoke(%s)", p, g.A(g.mkSite("lease.clj")))
				o.failf("%s         at loomfield.shuttle.worker$run_job.invokeStatic(%s)", p, g.A(g.mkSite("worker.clj")))
				o.failf("%s         at loomfield.shuttle.worker$run_job.invoke(%s)", p, g.A(g.mkSite("worker.clj")))
				o.failf("%s         at clojure.core$binding_conveyor_fn$fn__5823.invoke(core.clj:2047)", p)
				o.failf("%s         at clojure.lang.AFn.call(AFn.java:18)", p)
				o.failf("%s         at java.base/java.util.concurrent.FutureTask.run(FutureTask.java:317)", p)
				o.failf("%s         at java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1144)", p)
				o.failf("%s         at java.base/java.lang.Thread.run(Thread.java:1583)", p)
				o.failf("%s systemd[1]: shuttle.service: Main process exited, code=exited, status=1/FAILURE", t.Format("Jan 02 15:04:05")+" "+host)
				o.addf("%s systemd[1]: shuttle.service: Scheduled restart job, restart counter is at %d.", t.Add(5*time.Second).Format("Jan 02 15:04:05")+" "+host, g.n(1, 9))
				pid = g.n(2000, 90000)
			}
			late := func() {
				t := c.tick(500)
				o.failf("%s %s.%03d WARN  [lease-sweeper-1] loomfield.shuttle.lease - reclaimed live lease lease-id=ls-%s: renewal arrived %dms after expiry (ttl-ms=15000)", pre(t), t.Format("2006-01-02 15:04:05"), g.n(0, 999), g.A(g.mkHex(12)), g.n(100, 4000))
			}
			o.fill(o.budget(1.3), line, g.spread(0.2, 0.9, crash, late, late)...)
		}))

	src := "services/shuttle/src/loomfield/shuttle/lease.clj"
	g.turn("The sweeper reclaims leases whose renewal arrives late, then the old holder still acts on its stale epoch. Reading the lease code.",
		g.readFile(src, func(o *out) {
			o.add("(ns loomfield.shuttle.lease\n  (:require [clojure.tools.logging :as log]\n            [loomfield.shuttle.store :as store]\n            [loomfield.shuttle.config :refer [cfg]]))\n")
			o.add("(defn expired? [lease now-ms]\n  (> now-ms (+ (:renewed-at lease) (:ttl-ms lease))))\n")
			o.add("(defn acquire! [st job-id holder]\n  (let [l (store/get-lease st job-id)]\n    (when (and l (not (expired? l (System/currentTimeMillis))))\n      (throw (ex-info \"lease conflict\" {:type :shuttle/lease-conflict :lease-id (:id l) :holder (:holder l)\n                                         :epoch (:epoch l) :observed-epoch (dec (:epoch l))})))\n    (store/put-lease! st {:job-id job-id :holder holder :epoch (inc (or (:epoch l) 0))\n                          :renewed-at (System/currentTimeMillis) :ttl-ms (:lease-ttl-ms cfg)})))\n")
			o.add("(defn renew! [st lease]\n  (store/update-lease! st (:id lease) assoc :renewed-at (System/currentTimeMillis)))\n")
			k := 0
			o.fill(o.budget(0.3), func() {
				k++
				o.addf("(defn- %s\n  [%s]", g.A(func() string { return g.cljTest() + "-" + itoa(k) }), g.pick("st lease", "st job-id", "lease now-ms"))
				for range g.n(2, 6) {
					o.addf("  %s", g.pick("(let [now (System/currentTimeMillis)]", "(log/debugf \"lease %s epoch %d\" (:id lease) (:epoch lease))",
						"(store/update-lease! st (:id lease) update :epoch inc)", "(when-not (expired? lease now-ms)", "(:holder lease))", "nil)"))
				}
				o.add("")
			})
		}),
		g.grep("lease-ttl-ms", "services/shuttle", func(o *out) {
			o.addf("services/shuttle/src/loomfield/shuttle/%s:  {:lease-ttl-ms 15000", g.A(g.mkSite("config.clj")))
			o.addf("services/shuttle/src/loomfield/shuttle/%s:                          :renewed-at (System/currentTimeMillis) :ttl-ms (:lease-ttl-ms cfg)})))", g.A(g.mkSite("lease.clj")))
			o.addf("services/shuttle/resources/%s:lease-ttl-ms = 15000", g.A(g.mkSite("shuttle.conf")))
			o.addf("services/shuttle/test/loomfield/shuttle/%s:  (with-redefs [cfg {:lease-ttl-ms 50}]", g.A(g.mkSite("lease_test.clj")))
		}))

	t1 := g.E("test", g.cljTest)
	t2 := g.E("test", g.cljTest)
	s1 := g.E("site", g.mkSite("lease_test.clj"))
	g.turn("Running the test suite before changing anything.",
		g.bash("cd services/shuttle && lein test 2>&1", func(o *out) {
			c := g.clockFrom(2 * time.Minute)
			ns := 0
			line := func() {
				if g.chance(0.25) {
					ns++
					o.addf("\nlein test loomfield.shuttle.%s-test", cljNS[ns%len(cljNS)])
					return
				}
				t := c.tick(400)
				o.addf("%s INFO  [main] loomfield.shuttle.%s - %s", t.Format("2006-01-02 15:04:05.000"), g.pickN(cljNS), g.pick(
					fmt.Sprintf("test store initialised with %d leases", g.n(0, 40)),
					fmt.Sprintf("enqueued job j-%s priority=%d", g.A(g.mkHex(10)), g.n(0, 9)),
					fmt.Sprintf("sweep done: %d expired, %d reclaimed", g.n(0, 5), g.n(0, 5)),
					"embedded store stopped"))
			}
			fail := func() {
				o.failf("\nlein test :only loomfield.shuttle.lease-test/%s\n", t1)
				o.failf("FAIL in (%s) (%s)", t1, s1)
				o.fail("renewal after TTL must fail closed")
				o.fail("expected: (= :expired (:state (renew! store lease)))\n  actual: (not (= :expired :held))")
			}
			errd := func() {
				o.failf("\nlein test :only loomfield.shuttle.lease-test/%s\n", t2)
				o.failf("ERROR in (%s) (Numbers.java:188)", t2)
				o.fail("Uncaught exception, not in assertion.\nexpected: nil\n  actual: java.lang.NullPointerException: Cannot invoke \"Object.getClass()\" because \"x\" is null")
				o.fail(" at clojure.lang.Numbers.ops (Numbers.java:1095)\n    clojure.lang.Numbers.gt (Numbers.java:268)")
				o.failf("    loomfield.shuttle.lease$next_token.invokeStatic (%s)", g.A(g.mkSite("lease.clj")))
				o.failf("    loomfield.shuttle.lease$next_token.invoke (%s)", g.A(g.mkSite("lease.clj")))
				o.failf("    loomfield.shuttle.lease_test$fn__%d.invokeStatic (%s)", g.n(1000, 9999), g.A(g.mkSite("lease_test.clj")))
				o.fail("    clojure.test$test_var$fn__9856.invoke (test.clj:717)\n    clojure.test$test_var.invokeStatic (test.clj:717)")
			}
			o.fill(o.budget(0.8), line, g.spread(0.3, 0.9, fail, errd)...)
			o.addf("\nRan %d tests containing %d assertions.", g.n(50, 80), g.n(250, 400))
			o.fail("1 failures, 1 errors.")
			o.fail("Tests failed.")
			o.exitLine(1)
		}))

	g.say("Root cause: renew! only bumps renewed-at, so a holder whose lease the sweeper reclaimed can still renew and keep working; acquire! then hands a new epoch to another worker. I'll make renew! compare the holder's epoch (fencing) and return :expired when it's stale; the JSON shape of the lease API doesn't change, the epoch is already in it.")
	fence := g.W("key", func() string { return ":shuttle.lease/" + strings.Join(g.words(cljWords, 2), "-") })
	testFile := g.W("path", func() string {
		return "services/shuttle/test/loomfield/shuttle/" + strings.ReplaceAll(strings.Join(g.words(cljWords, 2), "_"), "-", "_") + "_test.clj"
	})
	newTest := g.W("test", g.cljTest)
	g.turn("",
		g.replace(src, "(defn renew! [st lease]\n  (store/update-lease! st (:id lease) assoc :renewed-at (System/currentTimeMillis)))",
			fmt.Sprintf("(defn renew! [st lease]\n  (let [cur (store/get-lease st (:job-id lease))]\n    (if (or (nil? cur) (not= (:epoch cur) (:epoch lease)) (expired? cur (System/currentTimeMillis)))\n      (do (log/warnf \"stale renewal %%s\" {%s (:epoch lease)}) {:state :expired})\n      (do (store/update-lease! st (:id lease) assoc :renewed-at (System/currentTimeMillis))\n          {:state :held}))))", fence)),
		g.writeFile(testFile, fmt.Sprintf("(ns loomfield.shuttle.%s\n  (:require [clojure.test :refer [deftest is testing]]\n            [loomfield.shuttle.lease :as lease]\n            [loomfield.shuttle.store :as store]))\n\n(deftest %s\n  (let [st (store/mem-store)\n        a (lease/acquire! st \"j-1\" \"w-3\")]\n    (Thread/sleep 60)\n    (lease/acquire! st \"j-1\" \"w-9\")\n    (testing \"the old holder cannot renew after a reclaim\"\n      (is (= :expired (:state (lease/renew! st a)))))))\n",
			strings.TrimSuffix(strings.ReplaceAll(testFile[len("services/shuttle/test/loomfield/shuttle/"):], "_", "-"), ".clj"), newTest)))

	g.turn("Running the tests again.",
		g.bash("cd services/shuttle && lein test 2>&1 | tail -n 400", func(o *out) {
			c := g.clockFrom(2 * time.Minute)
			ns := 0
			o.fill(o.budget(0.6), func() {
				if g.chance(0.25) {
					ns++
					o.addf("\nlein test loomfield.shuttle.%s-test", cljNS[ns%len(cljNS)])
					return
				}
				t := c.tick(400)
				o.addf("%s INFO  [main] loomfield.shuttle.%s - %s", t.Format("2006-01-02 15:04:05.000"), g.pickN(cljNS), g.pick(
					fmt.Sprintf("test store initialised with %d leases", g.n(0, 40)),
					fmt.Sprintf("enqueued job j-%s priority=%d", g.A(g.mkHex(10)), g.n(0, 9)),
					"embedded store stopped"))
			})
			o.addf("\nRan %d tests containing %d assertions.\n0 failures, 0 errors.", g.n(50, 80), g.n(250, 400))
		}))
	g.turn("Green. Building the uberjar so it can be deployed.",
		g.bash("cd services/shuttle && lein uberjar 2>&1 | tail -n 20", func(o *out) {
			o.add("Compiling loomfield.shuttle.config\nCompiling loomfield.shuttle.store\nCompiling loomfield.shuttle.lease\nCompiling loomfield.shuttle.queue\nCompiling loomfield.shuttle.worker\nCompiling loomfield.shuttle.api\nCompiling loomfield.shuttle.core")
			v := g.mkVersion()()[1:]
			o.addf("Created /srv/warp/services/shuttle/target/uberjar/shuttle-%s.jar\nCreated /srv/warp/services/shuttle/target/uberjar/%s", v, g.P("path", func() string { return "shuttle-" + v + "-standalone.jar" }))
		}))
	g.say("Fixed: a renewal from a holder whose epoch is stale (or whose lease expired) now fails closed, so a reclaimed lease can't end up with two workers. The lease API payload is unchanged. Jar is built; I haven't deployed it.")
}

func (g *gen) luaTest() string { return strings.Join(g.words(luaWords, 4), " ") }

const gwLib = "/usr/local/openresty/site/lualib/warp"

func (g *gen) taskGateway() {
	var b strings.Builder
	b.WriteString(g.pick(
		"The gateway is throwing 502s on /v1/jobs since this morning's auth module deploy. Fix it, keep the rate limits exactly as they are.",
		"Users get 502 from gw on POST /v1/jobs after the auth change went out. Please fix; don't touch the rate-limit numbers.",
	))
	if g.chance(0.6) {
		fmt.Fprintf(&b, " Example failing request id: %s", g.U("hash", g.mkHex(32)))
	}
	g.user(b.String())

	authSite := g.E("site", g.mkSite("auth.lua"))
	reqID := g.E("hash", g.mkHex(32))
	up := g.E("hostport", g.mkIPPort(8265))
	g.turn("Reading the error log.",
		g.bash("tail -n 1500 /usr/local/openresty/nginx/logs/error.log", func(o *out) {
			c := g.clockFrom(2 * time.Hour)
			worker := g.n(1000, 9000)
			conn := g.n(100, 5000)
			ts := func() string { return c.tick(3000).Format("2006/01/02 15:04:05") }
			line := func() {
				conn++
				cl := g.A(g.mkIPPort(0))
				cl = cl[:len(cl)-2]
				switch x := g.r.Float64(); {
				case x < 0.4:
					o.addf("%s [info] %d#0: *%d client closed connection while waiting for request, client: %s, server: 0.0.0.0:443", ts(), worker, conn, cl)
				case x < 0.6:
					o.addf("%s [warn] %d#0: *%d a client request body is buffered to a temporary file /usr/local/openresty/nginx/client_body_temp/%010d, client: %s, server: gw.warp.loomfield.net, request: \"POST /v1/artifacts HTTP/2.0\", host: \"gw.warp.loomfield.net\"", ts(), worker, conn, g.n(1, 99999), cl)
				case x < 0.8:
					o.addf("%s [info] %d#0: *%d [lua] ratelimit.lua:%d: limit ok key=%s remaining=%d, client: %s, server: gw.warp.loomfield.net, request: \"GET /v1/jobs HTTP/2.0\"", ts(), worker, conn, g.n(40, 90), g.pick("tenant:ml-research", "tenant:sim", "tenant:eval"), g.n(0, 120), cl)
				default:
					o.addf("%s [notice] %d#0: *%d [lua] jwks.lua:%d: refreshed signing keys kid=%s, context: ngx.timer", ts(), worker, conn, g.n(20, 60), g.A(g.mkHex(16)))
				}
			}
			luaErr := func() {
				conn++
				o.failf("%s [error] %d#0: *%d lua entry thread aborted: runtime error: %s/%s: attempt to index local 'claims' (a nil value)", ts(), worker, conn, gwLib, authSite)
				o.fail("stack traceback:\ncoroutine 0:\n\t[C]: in function 'error'")
				o.failf("\t%s/%s: in function 'verify'", gwLib, authSite)
				o.failf("\taccess_by_lua(nginx.conf:%d):3: in main chunk, client: 10.42.3.77, server: gw.warp.loomfield.net, request: \"POST /v1/jobs HTTP/2.0\", host: \"gw.warp.loomfield.net\", request_id: \"%s\"", g.n(100, 140), reqID)
			}
			luaErr2 := func() {
				conn++
				o.failf("%s [error] %d#0: *%d lua entry thread aborted: runtime error: %s/%s: attempt to index local 'claims' (a nil value)", ts(), worker, conn, gwLib, authSite)
				o.failf("stack traceback:\ncoroutine 0:\n\t%s/%s: in function 'verify'", gwLib, authSite)
			}
			timeout := func() {
				conn++
				o.failf("%s [error] %d#0: *%d upstream timed out (110: Connection timed out) while reading response header from upstream, client: 10.42.5.21, server: gw.warp.loomfield.net, request: \"GET /v1/jobs/raysubmit_%s HTTP/2.0\", upstream: \"http://%s/api/jobs/\", host: \"gw.warp.loomfield.net\"", ts(), worker, conn, g.A(func() string { return g.chars(alnum, 16) }), up)
			}
			o.fill(o.budget(1.4), line, g.spread(0.15, 0.95, luaErr, luaErr2, luaErr2, timeout)...)
		}),
		g.bash(`curl -si -X POST https://gw.warp.loomfield.net/v1/jobs -H "Authorization: Bearer $WARP_TEST_TOKEN" -H 'Content-Type: application/json' -d '{"entrypoint":"python -c \"print(1)\"","runtime_env":{}}'`, func(o *out) {
			o.fail("HTTP/2 502 ")
			o.addf("server: openresty\ndate: %s\ncontent-type: text/html\ncontent-length: 154", g.now.Format("Mon, 02 Jan 2006 15:04:05 GMT"))
			o.failf("x-request-id: %s", g.E("hash", g.mkHex(32)))
			o.add("")
			o.fail("<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n<hr><center>openresty</center>\n</body>\n</html>")
		}))

	auth := "gateway/lua/warp/auth.lua"
	g.turn("The auth module indexes claims without checking that decoding succeeded. Reading it.",
		g.readFile(auth, func(o *out) {
			o.add("local jwt = require \"resty.jwt\"\nlocal jwks = require \"warp.jwks\"\n\nlocal _M = {}\n")
			o.add("function _M.verify(token)\n  local obj = jwt:verify(jwks.current(), token)\n  local claims = obj.payload\n  if claims.exp < ngx.time() then\n    return nil, \"expired\"\n  end\n  return claims\nend\n")
			k := 0
			o.fill(o.budget(0.3), func() {
				k++
				o.addf("local function %s(%s)", g.A(func() string { return strings.ReplaceAll(g.luaTest(), " ", "_") + "_" + itoa(k) }), g.pick("claims", "hdr, claims", "ctx"))
				for range g.n(2, 6) {
					o.addf("  %s", g.pick("if not claims then return nil end", "local iss = claims.iss or \"\"", "ngx.req.set_header(\"X-Warp-Tenant\", claims.tenant)",
						"ngx.req.clear_header(\"Cookie\")", "return ngx.exit(ngx.HTTP_UNAUTHORIZED)", fmt.Sprintf("local ttl = %d", g.n(30, 900))))
				}
				o.add("end\n")
			})
			o.add("return _M")
		}))

	g.turn("",
		g.replace(auth, "  local obj = jwt:verify(jwks.current(), token)\n  local claims = obj.payload\n  if claims.exp < ngx.time() then",
			"  local obj = jwt:verify(jwks.current(), token)\n  if not obj.verified then\n    return nil, obj.reason or \"invalid token\"\n  end\n  local claims = obj.payload\n  if not claims.exp or claims.exp < ngx.time() then"))

	lt1 := g.E("test", g.luaTest)
	lt2 := g.E("test", g.luaTest)
	ls1 := g.E("site", g.mkSite("ratelimit_spec.lua"))
	g.turn("Running the Lua specs.",
		g.bash("cd gateway && busted -o TAP spec/", func(o *out) {
			n := 0
			o.fill(o.budget(0.6), func() {
				n++
				o.addf("ok %d - %s", n, g.A(g.luaTest))
			}, g.spread(0.2, 0.9, func() {
				n++
				o.failf("not ok %d - %s", n, lt1)
				o.failf("# spec/ratelimit_spec.lua @ %d", g.n(20, 99))
				o.failf("# Failure message: spec/%s: Expected objects to be equal.\n# Passed in:\n# (number) %d\n# Expected:\n# (number) %d", ls1, 9, 10)
			}, func() {
				n++
				o.failf("not ok %d - %s", n, lt2)
				o.failf("# spec/auth_spec.lua @ %d", g.n(20, 99))
				o.failf("# Failure message: %s/%s: attempt to compare nil with number", gwLib, g.A(g.mkSite("auth.lua")))
				o.fail("# stack traceback:")
				o.failf("# \t%s/%s: in function 'verify'", gwLib, g.A(g.mkSite("auth.lua")))
				o.failf("# \tspec/%s: in function <spec/auth_spec.lua:%d>", g.A(g.mkSite("auth_spec.lua")), g.n(20, 99))
			})...)
			o.addf("1..%d", n)
			o.exitLine(1)
		}))

	g.say("One spec failure is my change: a token without exp now gets rejected before the spec's stubbed clock is read, fine. The ratelimit spec fails independently: the bucket refill test depends on ngx.now() and the spec's clock stub no longer reaches ratelimit.lua after the module split. I'll fix the stub only; rate-limit numbers stay as they are.")
	g.turn("",
		g.replace("gateway/spec/auth_spec.lua", "    claims = { sub = \"u1\", tenant = \"sim\" }", "    claims = { sub = \"u1\", tenant = \"sim\", exp = ngx.time() + 60 }"),
		g.replace("gateway/spec/ratelimit_spec.lua", "  stub(ngx, \"now\", function() return clock end)", "  stub(ngx, \"now\", function() return clock end)\n  package.loaded[\"warp.ratelimit\"] = nil\n  ratelimit = require \"warp.ratelimit\""))

	g.turn("",
		g.bash("cd gateway && busted spec/", func(o *out) {
			n := g.n(70, 120)
			o.add(strings.Repeat("●", n))
			o.addf("%d successes / 0 failures / 0 errors / 0 pending : %s seconds", n, g.f(1, 3, 6))
		}),
		g.bash("openresty -t 2>&1", func(o *out) {
			o.add("nginx: the configuration file /usr/local/openresty/nginx/conf/nginx.conf syntax is ok\nnginx: configuration file /usr/local/openresty/nginx/conf/nginx.conf test is successful")
		}))

	g.turn("Specs pass and the config is valid. Reloading and watching the access log.",
		g.bash("openresty -s reload && sleep 20 && tail -n 400 /usr/local/openresty/nginx/logs/access.log", func(o *out) {
			c := g.clockFrom(20 * time.Second)
			lab := 0
			o.fill(o.budget(0.8), func() {
				t := c.tick(200)
				rid := ""
				if lab < 2 && g.chance(0.05) {
					rid = g.P("hash", g.mkHex(32))
					lab++
				} else {
					rid = g.A(g.mkHex(32))
				}
				path := g.pick("/v1/jobs", "/v1/jobs", "/v1/artifacts", "/v1/leases", fmt.Sprintf("/v1/jobs/raysubmit_%s", g.chars(alnum, 12)))
				meth := g.pick("GET", "POST", "GET")
				o.addf("10.42.%d.%d - %s [%s] \"%s %s HTTP/2.0\" %d %d \"-\" \"%s\" rt=%s uct=%s rid=%s", g.n(1, 30), g.n(2, 250), g.pick("-", "ml-research", "sim"),
					t.Format("02/Jan/2006:15:04:05 +0000"), meth, path, g.pickI(200, 200, 201, 200, 204), g.n(100, 9000), g.pick("python-requests/2.32.3", "warp-cli/1.8", "curl/8.5.0"), g.f(0.002, 0.4, 3), g.f(0, 0.01, 3), rid)
			})
			for lab < 1 {
				o.addf("10.42.3.77 - ml-research [%s] \"POST /v1/jobs HTTP/2.0\" 201 311 \"-\" \"warp-cli/1.8\" rt=0.041 uct=0.001 rid=%s", g.now.Format("02/Jan/2006:15:04:05 +0000"), g.P("hash", g.mkHex(32)))
				lab++
			}
		}))
	g.say("Gateway fixed: auth now rejects undecodable or exp-less tokens with 401 instead of crashing the Lua handler, so POST /v1/jobs returns 201 again. Rate-limit settings untouched; only the spec's clock stub changed.")
}

func (g *gen) zigTest() string { return strings.Join(g.words(zigWords, 3), " ") }

func (g *gen) taskZig() {
	var b strings.Builder
	b.WriteString(g.pick(
		"wctl (the Zig CLI) crashes on manifests with trailing commas and nested tables. Fix the parser and add tests. Stay on Zig 0.13 and no new dependencies.",
		"Please fix wctl's manifest parser: trailing commas and nested tables break it. Zig 0.13 only, no new deps, and add regression tests.",
	))
	g.user(b.String())

	zt1 := g.E("test", g.zigTest)
	zt2 := g.E("test", g.zigTest)
	zs1 := g.E("site", g.mkSite("manifest.zig"))
	zs2 := g.E("site", g.mkSite("manifest.zig"))
	root := "/srv/warp/tools/wctl"
	g.turn("Running the test step.",
		g.bash("cd tools/wctl && zig build test --summary all 2>&1", func(o *out) {
			o.add("test\n└─ run test 46/48 passed, 2 failed")
			o.failf("error: 'manifest.test.%s' failed: expected 3, found 2", zt1)
			o.failf("/usr/lib/zig/0.13.0/lib/std/testing.zig:93:17: 0x%s in expectEqual__anon_%d (test)\n                return error.TestExpectedEqual;\n                ^", g.hex(7), g.n(1000, 9999))
			o.failf("%s/src/%s:5: 0x%s in test.%s (test)\n    try std.testing.expectEqual(@as(usize, 3), m.entries.len);\n    ^", root, g.A(g.mkSite("manifest.zig")), g.hex(7), zt1)
			o.failf("error: 'manifest.test.%s' failed: thread %d panic: index out of bounds: index %d, len %d", zt2, g.n(10000, 99999), 17, 16)
			o.failf("%s/src/%s:31: 0x%s in parseEntry (test)\n        const key = line[start..end];\n                              ^", root, zs1, g.hex(7))
			o.failf("%s/src/%s:28: 0x%s in parse (test)\n    const e = try parseEntry(self, line);\n                           ^", root, zs2, g.hex(7))
			o.failf("/usr/lib/zig/0.13.0/lib/std/start.zig:%d:%d: 0x%s in posixCallMainAndExit (test)", g.n(500, 700), g.n(5, 40), g.hex(7))
			o.fail("error: the following test command failed with exit code 1:")
			o.failf("%s/.zig-cache/o/%s/test", root, g.A(g.mkHex(32)))
			o.add("Build Summary: 3/5 steps succeeded; 1 failed; 46/48 tests passed; 2 failed")
			o.add("test transitive failure\n└─ run test 46/48 passed, 2 failed\nerror: the following build command failed with exit code 1:")
			o.addf("%s/.zig-cache/o/%s/build /usr/lib/zig/0.13.0/zig %s %s/.zig-cache %s/.cache/zig --seed 0x%s -Z%s test --summary all", root, g.A(g.mkHex(32)), root, root, "/home/warp-svc", g.hex(8), g.hex(16))
			o.exitLine(1)
		}))

	src := "tools/wctl/src/manifest.zig"
	g.turn("Reading the parser.",
		g.readFile(src, func(o *out) {
			o.add("const std = @import(\"std\");\nconst Allocator = std.mem.Allocator;\n\npub const Entry = struct { key: []const u8, value: Value };\n")
			o.add("fn parseEntry(self: *Parser, line: []const u8) !Entry {\n    const start = std.mem.indexOfNone(u8, line, \" \\t\") orelse return error.Empty;\n    const end = std.mem.indexOfScalar(u8, line, '=') orelse line.len;\n    const key = line[start..end];\n    return .{ .key = std.mem.trimRight(u8, key, \" \"), .value = try self.value(line[end + 1 ..]) };\n}\n")
			k := 0
			o.fill(o.budget(0.35), func() {
				k++
				o.addf("fn %s%d(self: *Parser, s: []const u8) !%s {", g.pick("scanString", "scanNumber", "skipComment", "expectComma", "scanTable"), k, g.pick("Value", "usize", "void"))
				for range g.n(2, 7) {
					o.addf("    %s", g.pick("var i: usize = 0;", "while (i < s.len and s[i] == ' ') : (i += 1) {}", "if (i == s.len) return error.UnexpectedEnd;",
						"if (s[i] == ',') i += 1;", "return self.fail(i, \"expected value\");", "try self.stack.append(.table);", fmt.Sprintf("_ = self.depth + %d;", g.n(1, 4))))
				}
				o.add("}\n")
			})
		}))

	t3 := g.W("test", g.zigTest)
	g.turn("parseEntry slices up to '=' even when the line has none (a closing bracket line), and the comma check happens before the table close. Fixing both and adding a regression test.",
		g.replace(src, "    const end = std.mem.indexOfScalar(u8, line, '=') orelse line.len;", "    const end = std.mem.indexOfScalar(u8, line, '=') orelse return error.MissingEquals;\n    if (end <= start) return error.EmptyKey;"),
		g.replace(src, "        if (s[i] == ',') i += 1;", "        if (s[i] == ',') {\n            i += 1;\n            while (i < s.len and std.ascii.isWhitespace(s[i])) : (i += 1) {}\n            if (i < s.len and (s[i] == '}' or s[i] == ']')) break;\n        }"),
		g.replace("tools/wctl/src/manifest_test.zig", "// regression tests", fmt.Sprintf("// regression tests\n\ntest \"%s\" {\n    const m = try parse(std.testing.allocator, \"[jobs]\\nname = \\\"a\\\",\\n[jobs.env]\\nX = \\\"1\\\",\\n\");\n    defer m.deinit();\n    try std.testing.expectEqual(@as(usize, 3), m.entries.len);\n}", t3)))

	g.turn("",
		g.bash("cd tools/wctl && zig build test --summary all 2>&1", func(o *out) {
			o.add("Build Summary: 5/5 steps succeeded; 49/49 tests passed\ntest success\n├─ run test 49 passed 41ms MaxRSS:3M\n│  └─ zig test Debug native success 2s MaxRSS:182M\n└─ install wctl cached")
		}))

	g.turn("Tests pass. Validating every manifest in the repo with a release build.",
		g.bash("cd tools/wctl && zig build -Doptimize=ReleaseSafe && ./zig-out/bin/wctl validate ../../manifests/ && sha256sum zig-out/bin/wctl", func(o *out) {
			o.fill(o.budget(0.7), func() {
				o.addf("ok   manifests/%s/%s-%s.wmf  (%d entries, %d tables)", g.pick("jobs", "sims", "serving", "eval"), g.pickN(jobNames), g.A(func() string { return g.chars(lowan, 5) }), g.n(3, 80), g.n(1, 9))
			})
			o.addf("validated %d manifests, 0 invalid", g.n(200, 900))
			o.addf("%s  zig-out/bin/wctl", g.P("hash", g.mkHex(64)))
		}))
	g.say("wctl now parses trailing commas and nested tables; the regression test is in manifest_test.zig, the whole suite passes on Zig 0.13, and every manifest in the repo validates with the release build. No new dependencies.")
}
