package shipgen

import (
	"fmt"
	"strings"
	"time"
)

// This file writes what the PHP side prints: PHPUnit, composer, artisan
// and the Laravel log, and the API's error bodies. In a failing output
// the identifiers are planted on the lines that report the failure; in a
// passing one, anywhere.

const apiRoot = root + "/api"

// phpFail is a failing PHPUnit test: the class under test and how it
// fails ("assert", "type", "query", "http"). label is the test as
// PHPUnit names it in the report, Class::method, planted.
type phpFail struct {
	class *srcFile
	kind  string
	label string
}

// phpunitSpec is one PHPUnit run.
type phpunitSpec struct {
	classes []*srcFile // classes whose tests run, listed by --testdox
	fail    *phpFail
	testdox bool
}

func (g *gen) phpunitHead(o *out) {
	o.add("PHPUnit 11.4.3 by Sebastian Bergmann and contributors.\n\nRuntime:       PHP 8.3.13\nConfiguration: " + apiRoot + "/phpunit.xml\n")
}

// phpunit writes a PHPUnit run: progress dots, or one line a test with
// --testdox, then the deprecations, the defect and the summary.
func (g *gen) phpunit(o *out, s phpunitSpec) {
	g.phpunitHead(o)
	if s.fail != nil {
		s.fail.label = g.errID("test", func() string { return s.fail.class.test.name + "::" + g.testName() })
	}
	tests := 0
	if s.testdox {
		for _, c := range s.classes {
			o.addf("%s (%s)", humanClass(c.test.name), phpTestClass(c.test))
			n := g.between(3, 9)
			at := -1
			if s.fail != nil && s.fail.class == c {
				at = g.r.IntN(n)
			}
			for i := range n {
				tests++
				if i == at {
					_, m, _ := strings.Cut(s.fail.label, "::")
					o.err(" ✘ " + testdox(m))
					o.err("   │")
					o.err("   │ " + map[bool]string{true: "TypeError: argument #1 must not be null", false: "Failed asserting that the test passes."}[s.fail.kind == "type"])
					o.err("   │")
					continue
				}
				o.add(" ✔ " + testdox(g.testName()))
			}
			o.add("")
		}
	} else {
		tests = g.scale(g.between(70, 110))
		per := 63
		for i := 0; i < tests; i += per {
			n := min(per, tests-i)
			dots := []byte(strings.Repeat(".", n))
			for k := range dots {
				if g.chance(0.01) {
					dots[k] = 'S'
				}
			}
			o.addf("%-63s %*d / %d (%3d%%)", string(dots), len(fmt.Sprint(tests)), i+n, tests, 100*(i+n)/tests)
		}
		o.add("")
	}
	asserts := tests*3 + g.between(0, tests)
	o.addf("Time: 00:%02d.%03d, Memory: %d.%02d MB", g.between(2, 19), g.r.IntN(1000), g.between(40, 90), pick(g, 0, 50))
	o.add("")
	if g.chance(0.6) {
		g.phpDeprecations(o)
	}
	if s.fail == nil {
		o.addf("OK (%d tests, %d assertions)", tests, asserts)
		return
	}
	o.exit = 1
	g.phpunitDefect(o, s.fail)
	if s.fail.kind == "type" {
		o.err("ERRORS!")
		o.errf("Tests: %d, Assertions: %d, Errors: 1.", tests, asserts)
		return
	}
	o.err("FAILURES!")
	o.errf("Tests: %d, Assertions: %d, Failures: 1.", tests, asserts)
}

// humanClass is a test class as --testdox heads it: "Zone Resolver".
func humanClass(name string) string {
	words := strings.Split(snake(strings.TrimSuffix(name, "Test")), "_")
	for i, w := range words {
		words[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(words, " ")
}

// phpTestClass is the fully qualified name of test file f's class
// without its Test suffix, as --testdox shows it.
func phpTestClass(f *srcFile) string {
	name := strings.TrimSuffix(f.name, "Test")
	if f.kind == "controller" {
		return "Tests\\Feature\\Api\\V1\\" + name
	}
	return "Tests\\Unit\\" + f.dir + "\\" + name
}

// phpDeprecations writes the deprecations PHPUnit reports from vendor
// code, triggered by tests that passed.
func (g *gen) phpDeprecations(o *out) {
	n := g.between(1, 3)
	o.addf("%d tests triggered %d PHP deprecations:", n+g.between(0, 4), n)
	o.add("")
	for i := range n {
		site := pick(g, "vendor/setasign/fpdi/src/PdfParser/PdfParser.php:128", "vendor/spatie/laravel-data/src/Support/DataConfig.php:61", "vendor/mongodb/laravel-mongodb/src/Query/Builder.php:1520")
		o.addf("%d) %s/%s", i+1, apiRoot, site)
		o.add(pick(g, "Implicitly marking parameter $options as nullable is deprecated, the explicit nullable type must be used instead",
			"Creation of dynamic property PdfParser::$xref is deprecated", "Using null as an array offset is deprecated, use an empty string instead"))
		o.add("")
		o.add("Triggered by:")
		o.add("")
		for range g.between(1, 3) {
			f := g.w.php[g.r.IntN(len(g.w.php))].test
			// The whole Class::method is filler: a failing test's label has
			// that shape.
			o.addf("* %s", g.fill(func() string { return phpTestClass(f) + "Test::" + g.testName() }))
			o.addf("  %s/%s", apiRoot, g.fill(g.mkSite(strings.TrimPrefix(f.path, "api/"), 15, 220)))
			o.add("")
		}
	}
}

// phpunitDefect writes the report of the failing test.
func (g *gen) phpunitDefect(o *out, f *phpFail) {
	c := f.class
	_, method, _ := strings.Cut(f.label, "::")
	kind := "failure"
	if f.kind == "type" {
		kind = "error"
	}
	o.addf("There was 1 %s:", kind)
	o.add("")
	o.errf("1) %s::%s", phpTestClass(c.test)+"Test", method)
	testSite := func() string { return g.errID("site", g.mkSite(c.test.base(), 20, 260)) }
	switch f.kind {
	case "assert":
		pair := pick(g, [2]string{"'2024-11-07'", "'2024-11-06'"}, [2]string{"'Z4'", "'Z3'"}, [2]string{"1250", "1190"}, [2]string{"'booked'", "'pending'"})
		want, got := pair[0], pair[1]
		o.errf("%s for parcel %s", pick(g, "zone", "price", "pickup date", "status"), g.errID("id", g.mkID("prc")))
		o.err("Failed asserting that two " + map[bool]string{true: "strings", false: "integers"}[strings.HasPrefix(want, "'")] + " are identical.")
		o.err("--- Expected\n+++ Actual\n@@ @@\n-" + want + "\n+" + got)
		o.add("")
		o.errf("%s/%s", dir(apiRoot+"/"+strings.TrimPrefix(c.test.path, "api/")), testSite())
	case "type":
		caller := g.w.others(g, g.w.phpOf("service"), c, 1)[0]
		callSite := g.errID("site", g.mkSite(caller.base(), 30, 180))
		_, line, _ := strings.Cut(callSite, ":")
		o.errf("TypeError: %s\\%s::%s(): Argument #1 ($%s) must be of type %s, null given, called in %s/%s on line %s", phpNamespace(c), c.name, c.funcs[0], lowerFirst(phpNoun(c)), "App\\Models\\"+phpNoun(c), apiRoot, strings.TrimPrefix(caller.path, "api/"), line)
		o.add("")
		o.errf("%s/%s", dir(apiRoot+"/"+strings.TrimPrefix(c.path, "api/")), g.errID("site", g.mkSite(c.base(), 20, 200)))
		o.errf("%s/%s", dir(apiRoot+"/"+strings.TrimPrefix(caller.path, "api/")), callSite)
		o.errf("%s/%s", dir(apiRoot+"/"+strings.TrimPrefix(c.test.path, "api/")), testSite())
	case "query", "http":
		o.err("Expected response status code [201] but received 500.")
		o.err("Failed asserting that 500 is identical to 201.")
		o.add("")
		o.err("The following exception occurred during the last request:")
		o.add("")
		if f.kind == "query" {
			g.phpQueryChain(o, c, apiRoot)
		} else {
			g.phpHTTPException(o, c, apiRoot)
		}
		o.add("")
		o.add("----------------------------------------------------------------------------------")
		o.add("")
		o.err(pick(g, "Failed asserting that 500 is identical to 201.", "Expected response status code [201] but received 500."))
		o.add("")
		for i, fr := range phpunitFrames {
			o.errf("%s/%s:%d", apiRoot, fr, []int{174, 45, 186}[i])
		}
		o.errf("%s/%s", dir(apiRoot+"/"+strings.TrimPrefix(c.test.path, "api/")), testSite())
	}
	o.add("")
}

// phpQueryChain writes a QueryException with its PDOException as PHP
// prints a chain: the innermost first, then "Next" the outer one, both
// with the same frames.
func (g *gen) phpQueryChain(o *out, c *srcFile, base string) {
	table := pick(g, "pickups", "parcels", "labels", "manifests", "tracking_events")
	col := pick(g, "depot_id", "weight_grams", "carrier_ref", "service_code", "closed_at")
	state := g.errFixed("sql_state", "SQLSTATE[23000]")
	msg := fmt.Sprintf("%s: Integrity constraint violation: 19 NOT NULL constraint failed: %s.%s", state, table, col)
	sql := fmt.Sprintf("insert into \"%s\" (\"shipment_id\", \"%s\", \"updated_at\", \"created_at\") values (%d, ?, %s, %s)", table, col, g.between(1, 90), g.now.Format("2006-01-02 15:04:05"), g.now.Format("2006-01-02 15:04:05"))
	tr := g.newPHPTrace(c)
	o.errf("PDOException: %s in %s/vendor/laravel/framework/src/Illuminate/Database/Connection.php:587", msg, base)
	o.err("Stack trace:")
	tr.write(o, base, "vendor/laravel/framework/src/Illuminate/Database/Connection.php(587): PDOStatement->execute()",
		"vendor/laravel/framework/src/Illuminate/Database/Connection.php(812): Illuminate\\Database\\Connection->Illuminate\\Database\\{closure}('insert into \"...', Array)")
	o.add("")
	o.errf("Next Illuminate\\Database\\QueryException: %s (Connection: sqlite, SQL: %s) in %s/vendor/laravel/framework/src/Illuminate/Database/Connection.php:825", msg, sql, base)
	o.err("Stack trace:")
	tr.write(o, base)
}

// phpHTTPException writes the exception of a carrier call that failed.
func (g *gen) phpHTTPException(o *out, c *srcFile, base string) {
	rid := g.errID("uuid", g.mkUUID())
	o.errf("Illuminate\\Http\\Client\\RequestException: HTTP request returned status code 502:")
	o.errf("{\"error\":\"upstream_unavailable\",\"message\":\"carrier timed out\",\"request_id\":\"%s\"} in %s/vendor/laravel/framework/src/Illuminate/Http/Client/Response.php:308", rid, base)
	o.err("Stack trace:")
	g.newPHPTrace(c).write(o, base, "vendor/laravel/framework/src/Illuminate/Http/Client/Response.php(323): Illuminate\\Http\\Client\\Response->toException()")
}

// phpTrace is the trace of an exception thrown under a controller:
// vendor frames, the project's (with planted sites), then the router's.
type phpTrace struct {
	frames []string
}

func (g *gen) newPHPTrace(c *srcFile) *phpTrace {
	svc, ctl := c, c
	if c.kind != "controller" {
		ctl = g.pickOf(g.w.phpOf("controller"))
	} else {
		svc = g.pickOf(g.w.phpOf("service"))
	}
	t := &phpTrace{}
	t.frames = append(t.frames, laravelFrames[:g.between(3, len(laravelFrames))]...)
	t.frames = append(t.frames,
		fmt.Sprintf("%s/%s: Illuminate\\Database\\Eloquent\\Model->save()", strings.TrimPrefix(dir(svc.path), "api/"), g.errID("site", g.mkPHPSite(svc.base(), 30, 220))),
		fmt.Sprintf("%s/%s: %s\\%s->%s(Object(App\\Models\\Shipment))", strings.TrimPrefix(dir(ctl.path), "api/"), g.errID("site", g.mkPHPSite(ctl.base(), 20, 120)), phpNamespace(svc), svc.name, svc.funcs[0]))
	t.frames = append(t.frames, head(routingFrames, g.scale(g.between(3, 5))+4)...)
	return t
}

// write writes the trace after the given innermost frames.
func (t *phpTrace) write(o *out, base string, inner ...string) {
	n := 0
	for _, f := range append(inner, t.frames...) {
		o.errf("#%d %s/%s", n, base, f)
		n++
	}
	o.errf("#%d {main}", n)
}

// composerInstall writes composer install from the lock file.
func (g *gen) composerInstall(o *out) {
	o.add("Installing dependencies from lock file (including require-dev)\nVerifying lock file contents can be installed on current platform.")
	pkgs := []string{"laravel/framework (v11.30.0)", "symfony/console (v7.1.6)", "symfony/http-kernel (v7.1.6)", "guzzlehttp/guzzle (7.9.2)", "aws/aws-sdk-php (3.325.2)",
		"mongodb/laravel-mongodb (5.1.0)", "spatie/laravel-data (4.10.1)", "laravel/sanctum (v4.0.3)", "nesbot/carbon (3.8.0)", "monolog/monolog (3.7.0)",
		"phpunit/phpunit (11.4.3)", "mockery/mockery (1.6.12)", "larastan/larastan (v2.9.9)", "laravel/pint (v1.18.1)", "nunomaduro/collision (v8.5.0)",
		"fakerphp/faker (v1.23.1)", "setasign/fpdi (v2.6.1)", "league/flysystem (3.29.1)", "ramsey/uuid (4.7.6)", "brick/math (0.12.1)"}
	n := min(len(pkgs), g.scale(8))
	o.addf("Package operations: %d installs, 0 updates, 0 removals", n+g.between(60, 90))
	for _, p := range pkgs[:n] {
		o.add("  - Downloading " + p)
	}
	for _, p := range pkgs[:n] {
		o.add("  - Installing " + p + ": Extracting archive")
	}
	o.add("Generating optimized autoload files\n> Illuminate\\Foundation\\ComposerScripts::postAutoloadDump\n> @php artisan package:discover --ansi\n\n   INFO  Discovering packages.\n")
	for _, p := range []string{"laravel/sanctum", "laravel/tinker", "mongodb/laravel-mongodb", "nesbot/carbon", "nunomaduro/collision", "nunomaduro/termwind", "spatie/laravel-data"} {
		o.addf("  %s %s DONE", p, strings.Repeat(".", 60-len(p)))
	}
	o.addf("\n%d packages you are using are looking for funding.\nUse the `composer fund` command to find out more!\nNo security vulnerability advisories found.", g.between(60, 90))
}

// migrate writes php artisan migrate; fail makes the last migration
// fail on existing duplicates.
func (g *gen) migrate(o *out, names []string, fail bool) {
	o.add("")
	o.add("   INFO  Running migrations.")
	o.add("")
	for i, m := range names {
		dots := strings.Repeat(".", max(3, 72-len(m)))
		if fail && i == len(names)-1 {
			o.errf("  %s %s %d.%02dms FAIL", m, dots, g.between(2, 40), g.r.IntN(100))
			break
		}
		o.addf("  %s %s %d.%02dms DONE", m, dots, g.between(2, 90), g.r.IntN(100))
	}
	o.add("")
	if !fail {
		return
	}
	o.exit = 1
	dup := g.errID("id", g.mkTracking())
	state := g.errFixed("sql_state", "SQLSTATE[23000]")
	o.err("   Illuminate\\Database\\QueryException ")
	o.add("")
	o.errf("  %s: Integrity constraint violation: 1062 Duplicate entry '%s' for key 'parcels_tracking_number_unique' (Connection: mariadb, SQL: alter table `parcels` add unique `parcels_tracking_number_unique`(`tracking_number`))", state, dup)
	o.add("")
	o.err("  at vendor/laravel/framework/src/Illuminate/Database/Connection.php:825")
	o.add("    821▕                     $this->getName(), $query, $this->prepareBindings($bindings), $e\n    822▕                 );\n    823▕             }\n    824▕ \n  ➜ 825▕             throw new QueryException(\n    826▕                 $this->getName(), $query, $this->prepareBindings($bindings), $e\n    827▕             );\n    828▕         }\n    829▕     }")
	o.add("")
	o.err("      +9 vendor frames ")
	o.add("")
	mig := names[len(names)-1]
	o.errf("  10  database/migrations/%s", g.errID("site", func() string { return mig + ".php:12" }))
	o.err("      Illuminate\\Support\\Facades\\Facade::__callStatic()")
	o.add("")
	o.err("      +25 vendor frames ")
	o.add("")
	o.err("  36  artisan:13")
	o.err("      Illuminate\\Foundation\\Application->handleCommand()")
}

// migrateStatus writes php artisan migrate:status.
func (g *gen) migrateStatus(o *out, pending []string) {
	o.add("")
	o.addf("  Migration name %s Batch / Status  ", strings.Repeat(".", 58))
	names := []string{"0001_01_01_000000_create_users_table", "0001_01_01_000001_create_cache_table", "0001_01_01_000002_create_jobs_table",
		"2024_03_02_101010_create_shipments_table", "2024_03_02_101020_create_parcels_table", "2024_03_02_101030_create_labels_table", "2024_03_09_090000_create_depots_table",
		"2024_03_18_120000_create_pickups_table", "2024_04_02_083000_create_manifests_table", "2024_05_14_140000_create_return_requests_table",
		"2024_06_20_110000_add_service_code_to_shipments", "2024_07_08_093000_create_customs_declarations_table", "2024_08_26_150000_add_carrier_ref_to_labels",
		"2024_09_30_101500_add_closed_at_to_manifests", "2024_10_21_091000_add_cutoff_to_depots"}
	batch := 1
	for i, m := range names[:min(len(names), g.scale(6)+4)] {
		if i%3 == 0 {
			batch++
		}
		o.addf("  %s %s [%d] Ran  ", m, strings.Repeat(".", max(3, 70-len(m))), batch)
	}
	for _, m := range pending {
		o.addf("  %s %s Pending  ", m, strings.Repeat(".", max(3, 74-len(m))))
	}
	o.add("")
}

var laravelMessages = []string{"Label purchased", "Tracking events synced", "Manifest closed", "Pickup booked", "Rate quoted", "Return label issued",
	"Carrier webhook accepted", "Recipient notified", "Shipment created", "Customs declaration validated"}

// laravelLog writes lines of the Laravel log: n routine entries from t,
// with a planted passing identifier now and then when pass.
func (g *gen) laravelLog(o *out, env string, n int, pass bool, t time.Time) time.Time {
	for i := range n {
		t = t.Add(time.Duration(g.between(200, 40000)) * time.Millisecond)
		id := g.fill(g.mkID("shp"))
		if pass && i%9 == 4 {
			id = g.passID("id", g.mkID("shp"))
		}
		o.addf("[%s] %s.INFO: %s {\"shipment\":\"%s\",\"carrier\":\"%s\",\"ms\":%d}", t.Format("2006-01-02 15:04:05"), env, pick(g, laravelMessages...), id, pick(g, "dpd", "evri", "royal_mail", "dhl", "an_post"), g.between(20, 2400))
	}
	return t
}

// phpFrame is a frame of a PHP trace: "path(line): call(args)".
type phpFrame struct{ path, line, call, args string }

func parseFrame(s string) phpFrame {
	loc, call, _ := strings.Cut(s, ": ")
	path, line, _ := strings.Cut(loc, "(")
	fn, args, _ := strings.Cut(call, "(")
	return phpFrame{path, strings.TrimSuffix(line, ")"), fn, strings.TrimSuffix(args, ")")}
}

// logged is the frame as the Laravel log writes it: no arguments, and
// backslashes escaped.
func (f phpFrame) logged(base string) string {
	return fmt.Sprintf("%s/%s(%s): %s()", base, f.path, f.line, strings.ReplaceAll(f.call, "\\", "\\\\"))
}

// laravelLogError writes an ERROR entry of the Laravel log with its
// stack trace, all on error lines. msg is the message; exc the
// "[object] (Class(code: X): message at file:line)" of the context.
//
// prev is the previous exception, written with its own short trace.
func (g *gen) laravelLogError(o *out, env string, t time.Time, c, ctl *srcFile, base, msg, exc, prev string) {
	o.errf("[%s] %s.ERROR: %s {\"request_id\":\"%s\",\"userId\":%d,\"exception\":\"[object] (%s)", t.Format("2006-01-02 15:04:05"), env, msg, g.errID("uuid", g.mkUUID()), g.between(2, 900), exc)
	o.err("[stacktrace]")
	n := 0
	fr := func(s string) {
		o.errf("#%d %s", n, s)
		n++
	}
	for _, f := range selectFrames[:g.between(4, len(selectFrames))] {
		fr(parseFrame(f).logged(base))
	}
	fr(fmt.Sprintf("%s/%s/%s: Illuminate\\\\Database\\\\Eloquent\\\\Builder->first()", base, strings.TrimPrefix(dir(c.path), "api/"), g.errID("site", g.mkPHPSite(c.base(), 25, 240))))
	fr(fmt.Sprintf("%s/%s/%s: %s\\\\%s->%s()", base, strings.TrimPrefix(dir(ctl.path), "api/"), g.errID("site", g.mkPHPSite(ctl.base(), 20, 120)), strings.ReplaceAll(phpNamespace(c), "\\", "\\\\"), c.name, c.funcs[0]))
	for _, f := range head(routingFrames, g.scale(5)+3) {
		fr(parseFrame(f).logged(base))
	}
	o.errf("#%d {main}", n)
	if prev != "" {
		o.add("")
		o.err("[previous exception] [object] (" + prev + ")")
		o.err("[stacktrace]")
		n = 0
		fr(base + "/vendor/laravel/framework/src/Illuminate/Database/Connection.php(407): PDO->prepare()")
		fr(base + "/vendor/laravel/framework/src/Illuminate/Database/Connection.php(812): Illuminate\\\\Database\\\\Connection->Illuminate\\\\Database\\\\{closure}()")
		for _, f := range selectFrames[:g.between(3, 6)] {
			fr(parseFrame(f).logged(base))
		}
		o.errf("#%d {main}", n)
	}
	o.err("\"} ")
}

// pickOf returns one of the files.
func (g *gen) pickOf(xs []*srcFile) *srcFile { return xs[g.r.IntN(len(xs))] }

// debugBody writes the JSON body Laravel returns for an exception with
// APP_DEBUG on: the message, the exception, where it was thrown, and
// the trace, whose frames are error lines.
func (g *gen) debugBody(o *out, c, ctl *srcFile, exc, msg string) {
	o.add("{")
	o.errf("    \"message\": %q,", msg)
	o.errf("    \"exception\": %q,", exc)
	o.errf("    \"file\": \"%s/vendor/laravel/framework/src/Illuminate/Database/Connection.php\",", apiRoot)
	o.err("    \"line\": 825,")
	o.add("    \"trace\": [")
	var frames []phpFrame
	for _, f := range selectFrames[:g.between(5, len(selectFrames))] {
		frames = append(frames, parseFrame(f))
	}
	frames = append(frames,
		phpFrame{strings.TrimPrefix(c.path, "api/"), fmt.Sprint(g.between(25, 240)), phpNamespace(c) + "\\" + c.name + "->" + c.funcs[0], ""},
		phpFrame{strings.TrimPrefix(ctl.path, "api/"), fmt.Sprint(g.between(20, 120)), phpNamespace(ctl) + "\\" + ctl.name + "->store", ""})
	for _, f := range head(routingFrames, g.scale(4)+4) {
		frames = append(frames, parseFrame(f))
	}
	for i, f := range frames {
		cls, fn, ok := strings.Cut(f.call, "->")
		typ := "->"
		if !ok {
			cls, fn, _ = strings.Cut(f.call, "::")
			typ = "::"
		}
		o.add("        {")
		o.errf("            \"file\": \"%s/%s\",", apiRoot, f.path)
		o.errf("            \"line\": %s,", f.line)
		o.errf("            \"function\": %q,", fn)
		o.errf("            \"class\": %q,", cls)
		o.addf("            \"type\": %q", typ)
		if i < len(frames)-1 {
			o.add("        },")
		} else {
			o.add("        }")
		}
	}
	o.add("    ]\n}")
}
