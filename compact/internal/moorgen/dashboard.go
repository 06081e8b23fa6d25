package moorgen

import (
	"fmt"
	"strings"
	"time"

	"github.com/strata-memory/strata/compact/internal/opsgen"
)

// The Deno dashboard and its stores: deno test, lint and check, mongosh
// and redis-cli.

const dashDir = root + "/dashboard"

var denoTestNames = map[string][]string{
	"lib/geo_test.ts":       {"haversine is zero for identical points", "haversine matches a known leg", "bbox contains its corners", "clusters nearby tags"},
	"lib/staleness_test.ts": {"fresh within the window", "stale after the window", "offline after a day", "handles clock skew"},
	"routes/fleet_test.ts":  {"fleet route", "groups devices by depot", "paginates with a cursor", "serves from cache", "400 without a depot"},
	"routes/alerts_test.ts": {"alerts route", "lists open alerts", "acknowledges an alert", "filters by severity"},
}

var denoTestFiles = []string{"lib/geo_test.ts", "lib/staleness_test.ts", "routes/fleet_test.ts", "routes/alerts_test.ts"}

// denoFiles are the test files a run picks up: the standing ones and any
// the session wrote.
func (g *gen) denoFiles() []string { return append(append([]string{}, denoTestFiles...), g.denoNew...) }

var rollupTests = []string{"rolls up online and stale counts", "ignores tags without a fix", "reads through the cache", "expires the cached rollup"}

func (g *gen) denoChecks(o *out) {
	for _, f := range g.denoFiles() {
		o.addf("Check file://%s/%s", dashDir, f)
	}
}

// denoTestPass is a passing deno test run listing every test.
func (g *gen) denoTestPass() (string, *out) {
	o := &out{}
	if g.chance(0.3) {
		o.add("Download https://jsr.io/@std/assert/meta.json\nDownload https://jsr.io/@std/assert/1.0.8_meta.json\nDownload https://jsr.io/@std/testing/1.0.5/time.ts")
	}
	g.denoChecks(o)
	passed, steps := 0, 0
	for _, f := range g.denoFiles() {
		names := denoTestNames[f]
		if names == nil {
			names = rollupTests
		}
		n := g.n(len(names), len(names)*4)
		o.addf("running %d tests from ./%s", n, f)
		for i := range n {
			name := names[i%len(names)]
			if i >= len(names) {
				name += fmt.Sprintf(" (%s)", g.pick(depots))
			}
			o.addf("%s ... ok (%dms)", name, g.between(0, 60))
			if g.chance(0.15) {
				o.add("------- output -------")
				o.addf("cache miss fleet:%s:%s -> %s", g.pick(depots), g.pick(words), g.P("id", g.objectID))
				o.add("----- output end -----")
			}
			passed++
		}
	}
	o.addf("\nok | %d passed (%d steps) | 0 failed (%dms)\n", passed, steps, g.between(300, 4000))
	return "cd dashboard && deno test -A", o
}

// denoTestName is a fresh failing test name.
func (g *gen) denoTestName() string {
	return g.pick([]string{"marks", "keeps", "drops", "rounds", "sorts", "merges"}) + " " + g.pick(words) + " " +
		g.pick([]string{"across midnight UTC", "after a gateway handover", "for a trailer without a fix", "when the cursor wraps", "with two depots"})
}

// denoTestFail is a deno test run with a failing step or a type error.
func (g *gen) denoTestFail() (string, *out) {
	o := &out{}
	if g.chance(0.2) {
		return g.denoCheckFail("deno test -A")
	}
	g.denoChecks(o)
	bad := denoTestFiles[g.r.IntN(len(denoTestFiles))]
	passed := 0
	var failName string
	var failLine int
	for _, f := range g.denoFiles() {
		names := denoTestNames[f]
		if names == nil {
			names = rollupTests
		}
		n := g.n(len(names), len(names)*3)
		o.addf("running %d tests from ./%s", n, f)
		for i := range n {
			name := names[i%len(names)]
			if i >= len(names) {
				name += fmt.Sprintf(" (%s)", depots[i%len(depots)])
			}
			if f == bad && i == n/2 {
				failName = g.E("test", g.denoTestName)
				failLine = g.siteForm(opsgen.ErrorLine, "dashboard/"+f, func(b string, l int) string { return fmt.Sprintf("%s:%d", b, l) })
				o.failf("%s ... FAILED (%dms)", failName, g.between(1, 90))
				continue
			}
			o.addf("%s ... ok (%dms)", name, g.between(0, 60))
			passed++
		}
	}
	o.add("\n ERRORS \n")
	o.failf("%s => ./%s:%d:6", failName, bad, failLine)
	switch g.r.IntN(3) {
	case 0:
		o.fail("error: AssertionError: Values are not equal.")
		o.add("\n\n    [Diff] Actual / Expected\n\n")
		o.failf("-   \"%s\"\n+   \"%s\"", g.pick([]string{"online", "idle", "moving"}), g.pick([]string{"stale", "offline", "parked"}))
		o.add("\n  throw new AssertionError(message);\n        ^")
		o.fail("    at assertEquals (https://jsr.io/@std/assert/1.0.8/equals.ts:51:9)")
	case 1:
		o.failf("error: MongoServerSelectionError: connect ECONNREFUSED %s", g.E("hostport", func() string { return fmt.Sprintf("127.0.0.1:%d", g.port()) }))
		o.fail("    at Topology.selectServer (file:///home/dev/.cache/deno/npm/registry.npmjs.org/mongodb/6.8.0/lib/sdam/topology.js:303:38)")
	default:
		o.failf("error: TypeError: Cannot read properties of undefined (reading 'lat') (device %s)", g.E("id", g.objectID))
		o.failf("    at haversine (file://%s/lib/geo.ts:%d:19)", dashDir, g.site(opsgen.ErrorLine, "dashboard/lib/geo.ts"))
	}
	o.failf("    at file://%s/%s:%d:7", dashDir, bad, g.lineFor("dashboard/"+bad))
	o.add("    at eventLoopTick (ext:core/01_core.js:175:7)\n    at async innerWrapped (ext:cli/40_test.js:181:5)")
	o.add("\n FAILURES \n")
	o.failf("%s => ./%s:%d:6", failName, bad, failLine)
	o.failf("\nFAILED | %d passed | 1 failed (%dms)\n", passed, g.between(300, 4000))
	o.fail("error: Test failed")
	return "cd dashboard && deno test -A", o
}

// denoCheckFail is a type check that fails.
func (g *gen) denoCheckFail(cmd string) (string, *out) {
	o := &out{}
	o.addf("Check file://%s/main.ts", dashDir)
	n := g.between(2, 3)
	for i := range n {
		f := g.pick(dashboard.files)
		l := g.site(opsgen.ErrorLine, f)
		col := g.between(5, 40)
		prefix := ""
		if i == 0 {
			prefix = "error: "
		}
		switch g.r.IntN(3) {
		case 0:
			o.failf("%sTS2345 [ERROR]: Argument of type 'string | undefined' is not assignable to parameter of type 'string'.\n  Type 'undefined' is not assignable to type 'string'.", prefix)
			o.addf("  const depot = await loadDepot(ctx.params.depot);\n                                %s", strings.Repeat("~", 16))
		case 1:
			o.failf("%sTS2339 [ERROR]: Property '%s' does not exist on type '%sDoc'.", prefix, g.pick(words)+g.pick(caps), g.pick(caps))
			o.addf("    out.push({ id: d._id.toHexString(), at: d.%s });\n                                               %s", g.pick(words), strings.Repeat("~", 8))
		default:
			o.failf("%sTS2322 [ERROR]: Type 'number' is not assignable to type 'Date'.", prefix)
			o.add("    lastSeen: Date.now(),\n    ~~~~~~~~")
		}
		o.failf("    at file://%s/%s:%d:%d\n", dashDir, strings.TrimPrefix(f, "dashboard/"), l, col)
	}
	if n > 1 {
		o.failf("Found %d errors.", n)
	}
	return "cd dashboard && " + cmd, o
}

// denoLint is deno lint, failing with a few problems or clean.
func (g *gen) denoLint(ok bool) (string, *out) {
	o := &out{}
	if ok {
		o.addf("Checked %d files", g.between(30, 60))
		return "cd dashboard && deno lint", o
	}
	n := g.between(1, 4)
	for range n {
		f := g.pick(append(append([]string{}, dashboard.files...), dashboard.tests...))
		l := g.site(opsgen.ErrorLine, f)
		col := g.between(3, 30)
		v := g.pick(words) + g.pick(caps)
		var msg, src, hint string
		rule := g.pick([]string{"no-unused-vars", "require-await", "no-explicit-any", "prefer-const"})
		switch rule {
		case "no-unused-vars":
			msg, src, hint = fmt.Sprintf("`%s` is never used", v), fmt.Sprintf("const %s = `fleet:${depot}`;", v), "If this is intentional, prefix it with an underscore like `_"+v+"`"
		case "require-await":
			msg, src, hint = fmt.Sprintf("Async function '%s' has no 'await' expression.", v), fmt.Sprintf("export async function %s(depot: string) {", v), "Remove async keyword from the function or use await expression inside."
		case "no-explicit-any":
			msg, src, hint = "`any` type is not allowed", fmt.Sprintf("function %s(doc: any) {", v), "Use a specific type other than `any`"
		default:
			msg, src, hint = fmt.Sprintf("`%s` is never reassigned", v), fmt.Sprintf("let %s = docs.length;", v), fmt.Sprintf("Use `const` instead")
		}
		o.failf("error[%s]: %s", rule, msg)
		o.failf("  --> %s/%s:%d:%d", root, f, l, col)
		o.addf("   | \n%d | %s\n   | %s%s", l, src, strings.Repeat(" ", min(col, len(src)-1)), strings.Repeat("^", len(v)))
		o.addf("   = hint: %s\n\n  docs: https://docs.deno.com/lint/rules/%s\n", hint, rule)
	}
	o.failf("Found %d problem%s", n, map[bool]string{true: "s", false: ""}[n > 1])
	o.addf("Checked %d files", g.between(30, 60))
	return "cd dashboard && deno lint", o
}

// denoTaskBuild bundles the dashboard.
func (g *gen) denoTaskBuild() (string, *out) {
	o := &out{}
	o.add("Task build deno run -A dev.ts build")
	for range g.n(6, 20) {
		o.addf("Download https://jsr.io/@%s/%s/%d.%d.%d/%s.ts", g.pick([]string{"std", "fresh", "preact"}), g.pick([]string{"path", "fmt", "core", "signals"}), g.between(0, 2), g.between(0, 12), g.between(0, 9), g.pick([]string{"mod", "colors", "join", "signals"}))
	}
	o.addf("The manifest has been generated for %d routes and %d islands.", g.between(8, 20), g.between(3, 9))
	o.add("Using snapshot found at " + dashDir + "/_fresh")
	for range g.n(4, 12) {
		o.addf("  _fresh/static/%s-%s.js  %5.1f kB", g.pick([]string{"island-fleetmap", "island-alerttable", "chunk", "main", "island-depotpicker"}), g.P("hash", g.hexf(8)), g.secs(0.4, 90))
	}
	o.addf("Build done in %dms", g.between(800, 9000))
	return "cd dashboard && deno task build", o
}

// mongoPass runs a read query and prints documents.
func (g *gen) mongoPass() (string, *out) {
	o := &out{}
	host := g.hostport()
	depot := g.pick(depots)
	q := g.pick([]string{
		fmt.Sprintf("db.devices.find({depot: '%s', lastSeen: {$lt: new Date(Date.now() - 15*60e3)}}).limit(%d)", depot, g.between(3, 8)),
		fmt.Sprintf("db.positions.find({depot: '%s'}).sort({ts: -1}).limit(%d)", depot, g.between(3, 8)),
	})
	o.add("[")
	for i := range g.between(3, 6) {
		if i > 0 {
			o.add("  },")
		}
		o.addf("  {\n    _id: ObjectId('%s'),\n    serial: '%s',\n    depot: '%s',", g.P("id", g.objectID), g.serial(), depot)
		o.addf("    lastSeen: ISODate('%s'),\n    position: { lat: %.5f, lon: %.5f },\n    battery: %d,\n    fw: '2.%d.%d'", g.now.Add(-time.Duration(g.between(60, 90000))*time.Second).Format("2006-01-02T15:04:05.000Z"), 50+g.secs(0, 8), -6+g.secs(0, 8), g.between(5, 100), g.between(10, 19), g.between(0, 9))
	}
	o.add("  }\n]")
	return fmt.Sprintf("mongosh \"mongodb://%s/moorhen?readPreference=secondary\" --quiet --eval \"%s\"", host, q), o
}

// mongoFail is a query or index build the server rejects.
func (g *gen) mongoFail() (string, *out) {
	o := &out{}
	host := g.hostport()
	switch g.r.IntN(3) {
	case 0:
		o.failf("MongoServerError: E11000 duplicate key error collection: moorhen.positions index: device_1_ts_1 dup key: { device: \"%s\", ts: new Date(%d) }", g.E("id", g.objectID), 1700000000000+g.between(1, 99999999))
		return fmt.Sprintf("mongosh \"mongodb://%s/moorhen\" --quiet --eval \"db.positions.createIndex({device: 1, ts: 1}, {unique: true})\"", host), o
	case 1:
		o.failf("MongoServerError[Unauthorized]: not authorized on moorhen to execute command { aggregate: \"positions\", pipeline: [ { $match: { depot: \"%s\" } } ], cursor: {}, lsid: { id: UUID(\"%s\") }, $db: \"moorhen\" }", g.pick(depots), g.E("uuid", g.uuid))
		return fmt.Sprintf("mongosh \"mongodb://dashboard@%s/moorhen\" --quiet --eval \"db.positions.aggregate([{\\$match: {depot: 'leith'}}]).itcount()\"", host), o
	default:
		o.failf("MongoServerError[ExceededTimeLimit]: Executor error during find command :: caused by :: operation exceeded time limit (planSummary: COLLSCAN, opid %s)", g.E("id", func() string { return fmt.Sprintf("conn%d:op%d", g.between(100, 99999), g.between(1000, 999999)) }))
		return fmt.Sprintf("mongosh \"mongodb://%s/moorhen\" --quiet --eval \"db.positions.find({'meta.gateway': 'gw-leith-03'}).maxTimeMS(2000).itcount()\"", host), o
	}
}

// redisPass reads the dashboard's cache.
func (g *gen) redisPass() (string, *out) {
	o := &out{}
	host := g.ip()
	if g.chance(0.5) {
		for range g.n(6, 30) {
			o.addf("fleet:%s:%s:%s", g.pick(depots), g.pick(words), g.P("id", func() string { return "v" + g.chars(lowernum, 8) }))
		}
		return fmt.Sprintf("redis-cli -h %s -p 6379 --scan --pattern 'fleet:*' | head -n 60", host), o
	}
	o.addf("# Memory\nused_memory:%d\nused_memory_human:%.2fM\nused_memory_rss:%d\nused_memory_peak:%d\nused_memory_peak_human:%.2fM\nmaxmemory:268435456\nmaxmemory_human:256.00M\nmaxmemory_policy:allkeys-lru\nmem_fragmentation_ratio:1.%02d\nevicted_keys:%d",
		g.between(1e6, 2e8), g.secs(1, 200), g.between(1e6, 2e8), g.between(1e6, 2e8), g.secs(1, 250), g.between(0, 99), g.between(0, 40000))
	o.addf("# Keyspace\ndb0:keys=%d,expires=%d,avg_ttl=%d", g.between(100, 90000), g.between(100, 90000), g.between(1000, 600000))
	return fmt.Sprintf("redis-cli -h %s -p 6379 INFO memory && redis-cli -h %s -p 6379 INFO keyspace", host, host), o
}
