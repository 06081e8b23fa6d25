package opsgen

import (
	"fmt"
	"path"
	"strings"
)

// out builds a tool output line by line, remembering which lines the
// generator wrote as the failure.
type out struct {
	lines []string
	errs  []int
}

// add appends lines that are not the failure.
func (o *out) add(format string, a ...any) {
	o.lines = append(o.lines, strings.Split(fmt.Sprintf(format, a...), "\n")...)
}

// fail appends lines that report the failure (or are its stack frames).
func (o *out) fail(format string, a ...any) {
	for _, l := range strings.Split(fmt.Sprintf(format, a...), "\n") {
		o.errs = append(o.errs, len(o.lines))
		o.lines = append(o.lines, l)
	}
}

func (o *out) String() string { return strings.Join(o.lines, "\n") }

// lineFor hands out a fresh line number of a file: two sites of one file
// never share a line, so a site planted in one place never occurs by
// chance in another.
func (g *gen) lineFor(file string) int {
	b := path.Base(file)
	if g.lines[b] == 0 {
		g.lines[b] = g.between(12, 60)
	}
	g.lines[b] += g.between(3, 40)
	return g.lines[b]
}

// site plants file's base name and a fresh line as an identifier of class
// c and returns the line.
func (g *gen) site(file string, c Class) int {
	n := g.lineFor(file)
	g.plant(fmt.Sprintf("%s:%d", path.Base(file), n), c, "site")
	return n
}

var standingGo = []string{"TestBatcherAccepts", "TestWindowSlides", "TestPoolReuses", "TestRoutesRegistered", "TestMiddlewareAddsRequestID",
	"TestMigrateIdempotent", "TestEntriesRoundTrip", "TestTxRollsBack", "TestSinkWritesJSONLines", "TestReplayOrdersBySeq",
	"TestHandlerRejectsOversizedBody", "TestErrorsMapToStatus", "TestFlushEmpty", "TestBatcherConcurrentAdds", "TestPgPoolConfig"}

var goFrames = []string{"testing.tRunner(0xc0001a2d00, 0x7a1c58)\n\t/usr/local/go/src/testing/testing.go:1690 +0xf4",
	"created by testing.(*T).Run in goroutine 1\n\t/usr/local/go/src/testing/testing.go:1743 +0x390"}

// goTestFail is a go test run in which one test fails: a panic with its
// stack, or an assertion naming what the test saw.
func (g *gen) goTestFail(c component, p pkg) *out {
	o := &out{}
	test := g.plant(g.goTest(), ErrorLine, "test")
	imp := c.mod + "/" + p.mod
	for _, q := range c.pkgs {
		if q.mod != p.mod && g.chance(0.6) {
			o.add("ok  \t%s/%s\t%.3fs", c.mod, q.mod, 0.1+g.r.Float64()*2)
		}
	}
	src := p.files[g.r.IntN(len(p.files))]
	tf := p.tests[g.r.IntN(len(p.tests))]
	if g.chance(0.5) {
		n := g.between(2, 9)
		o.fail("--- FAIL: %s (0.00s)", test)
		o.fail("panic: runtime error: index out of range [%d] with length %d [recovered]\n\tpanic: runtime error: index out of range [%d] with length %d", n, n, n, n)
		o.add("")
		o.add("goroutine %d [running]:", g.between(7, 90))
		o.fail("testing.tRunner.func1.2({0x6a1f20, 0xc0000a2018})\n\t/usr/local/go/src/testing/testing.go:1632 +0x230")
		o.fail("panic({0x6a1f20?, 0xc0000a2018?})\n\t/usr/local/go/src/runtime/panic.go:785 +0x132")
		fn := g.pick(words) + title(g.pick(words))
		l1 := g.site(src, ErrorLine)
		o.fail("%s.(*Batcher).%s(0xc0001b6000, {0x7b2e48, 0xc0000a4000})\n\t%s/%s/%s/%s:%d +0x%x", imp, fn, repoRoot, c.dir, p.dir, src, l1, g.between(0x40, 0x3ff))
		l2 := g.site(tf, ErrorLine)
		o.fail("%s.%s(0xc0001a2d00)\n\t%s/%s/%s/%s:%d +0x%x", imp, test, repoRoot, c.dir, p.dir, tf, l2, g.between(0x40, 0x3ff))
		o.fail("%s\n%s", goFrames[0], goFrames[1])
		o.fail("exit status 2")
	} else {
		l := g.site(tf, ErrorLine)
		switch g.r.IntN(3) {
		case 0:
			o.fail("    %s:%d: flush of tenant %s wrote %d entries, want %d (code %s)", tf, l, g.plant(g.prefixed("tn", 8), ErrorLine, "id"), g.between(1, 5), g.between(6, 9), g.plant(g.code(), ErrorLine, "code"))
		case 1:
			o.fail("    %s:%d: POST %s: status 502, body {\"code\":\"%s\",\"request_id\":\"%s\"}", tf, l, g.plant(g.url(), ErrorLine, "url"), g.plant(g.code(), ErrorLine, "code"), g.plant(g.prefixed("req", 12), ErrorLine, "id"))
		default:
			o.fail("    %s:%d: entry %s: checksum %s, want %s", tf, l, g.plant(g.uuid(), ErrorLine, "uuid"), g.plant(g.hex(16), ErrorLine, "hash"), g.plant(g.hex(16), ErrorLine, "hash"))
		}
		o.fail("--- FAIL: %s (0.%02ds)", test, g.between(1, 90))
		o.fail("FAIL")
	}
	o.fail("FAIL\t%s\t%.3fs", imp, 0.1+g.r.Float64())
	o.fail("FAIL")
	return o
}

// goBuildFail is a go vet or build run that does not compile.
func (g *gen) goBuildFail(c component, p pkg) *out {
	o := &out{}
	o.fail("# %s/%s", c.mod, p.mod)
	for range g.between(1, 3) {
		f := p.files[g.r.IntN(len(p.files))]
		l := g.site(f, ErrorLine)
		msg := g.pick([]string{
			"undefined: err" + title(g.pick(words)) + title(g.pick(words)),
			"cannot use deadline (variable of type time.Duration) as int value in argument to b.window.extend",
			"too many arguments in call to b.flushLocked\n\thave (context.Context, string, int)\n\twant (context.Context, string)",
			"b.cfg.Max" + title(g.pick(words)) + " undefined (type Config has no field or method Max" + title(g.pick(words)) + ")",
		})
		o.fail("%s/%s:%d:%d: %s", p.dir, f, l, g.between(2, 40), msg)
	}
	return o
}

// goTestPass is a passing go test run of a component, verbose or not,
// with log lines naming the ids and test servers a run printed.
func (g *gen) goTestPass(c component, verbose bool) *out {
	o := &out{}
	for _, q := range c.pkgs {
		if verbose {
			for range g.n(8, 30) {
				t := g.pick(standingGo)
				o.add("=== RUN   %s", t)
				if g.chance(0.3) {
					tf := q.tests[g.r.IntN(len(q.tests))]
					switch g.r.IntN(3) {
					case 0:
						o.add("    %s:%d: upstream stub on %s", tf, g.lineFor(tf), g.plant(g.url(), PassingOutput, "url"))
					case 1:
						o.add("    %s:%d: flushed batch %s (%d entries)", tf, g.lineFor(tf), g.plant(g.prefixed("b", 10), PassingOutput, "id"), g.between(2, 500))
					default:
						o.add("    %s:%d: replayed entry %s", tf, g.lineFor(tf), g.plant(g.uuid(), PassingOutput, "uuid"))
					}
				}
				o.add("--- PASS: %s (0.%02ds)", t, g.between(0, 60))
			}
			o.add("PASS")
		}
		o.add("ok  \t%s/%s\t%.3fs\tcoverage: %.1f%% of statements", c.mod, q.mod, 0.1+g.r.Float64()*3, 60+g.r.Float64()*35)
	}
	return o
}

var standingPy = []string{"test_reads_schema", "test_casts_amounts", "test_windows_align", "test_sink_batches", "test_manifest_lists_parts", "test_dedupe_keeps_first"}

// pytestFail is a pytest run with one or two failures in the long form.
func (g *gen) pytestFail(c component, p pkg) *out {
	o := &out{}
	total := g.between(150, 320)
	o.add("============================= test session starts ==============================\nplatform linux -- Python 3.11.9, pytest-8.2.2, pluggy-1.5.0\nrootdir: %s/%s\nconfigfile: pyproject.toml\nplugins: cov-5.0.0, xdist-3.6.1\ncollected %d items\n", repoRoot, c.dir, total)
	tf := p.tests[0]
	fails := g.between(1, 2)
	var names []string
	for range fails {
		names = append(names, g.plant(g.pyTest(), ErrorLine, "test"))
	}
	for _, q := range c.pkgs {
		dots := strings.Repeat(".", g.n(20, 70))
		if q.tests[0] == tf {
			dots = dots[:len(dots)/2] + strings.Repeat("F", fails) + dots[len(dots)/2:]
		}
		o.add("%s %s", q.tests[0], dots)
	}
	o.add("")
	o.fail("=================================== FAILURES ===================================")
	for _, name := range names {
		o.fail("____________________________ %s ____________________________", name)
		o.add("")
		o.add("        path = write_fixture(tmp_path, rows=ROWS_%s)\n>       frame = Loader(columns=COLUMNS).load(path)\n", strings.ToUpper(g.pick(words)))
		o.fail("%s:%d: ", tf, g.site(tf, ErrorLine))
		o.add("_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ \n")
		o.add("self = <%s.%s object at 0x7f%s>\n", p.mod, title(g.pick(words))+"Loader", g.hex(10))
		f := p.files[g.r.IntN(len(p.files))]
		var exc string
		switch g.r.IntN(3) {
		case 0:
			o.add(">       key = (row[\"tenant_id\"], row[\"entry_id\"])")
			o.fail("E       KeyError: 'tenant_id'")
			exc = "KeyError"
		case 1:
			o.add(">       cur.execute(SQL_INSERT, values)")
			o.fail("E       psycopg.errors.UniqueViolation: duplicate key value violates unique constraint \"ledger_entries_pkey\"\nE       DETAIL:  Key (tenant_id, entry_id)=(%s, %d) already exists.", g.plant(g.uuid(), ErrorLine, "uuid"), g.between(1000, 99999))
			exc = "UniqueViolation"
		default:
			o.add(">       raise LoaderError(code, msg)")
			o.fail("E       etl.errors.LoaderError: [%s] manifest %s lists %d parts, found %d", g.plant(g.code(), ErrorLine, "code"), g.plant(g.bucket(), ErrorLine, "url"), 14, 13)
			exc = "LoaderError"
		}
		o.add("")
		o.fail("%s/%s:%d: %s", p.dir, f, g.site(f, ErrorLine), exc)
	}
	o.add("=============================== warnings summary ===============================")
	o.add("etl/compat.py:%d: DeprecationWarning: datetime.datetime.utcnow() is deprecated\n  return datetime.utcnow()", g.lineFor("compat.py"))
	o.fail("=========================== short test summary info ============================")
	for _, name := range names {
		o.fail("FAILED %s::%s - AssertionError", tf, name)
	}
	o.fail("============ %d failed, %d passed, 1 warning in %.2fs ============", fails, total-fails, 3+g.r.Float64()*20)
	return o
}

// pytestPass is a passing pytest run.
func (g *gen) pytestPass(c component, verbose bool) *out {
	o := &out{}
	total := 0
	o.add("============================= test session starts ==============================\nplatform linux -- Python 3.11.9, pytest-8.2.2, pluggy-1.5.0\nrootdir: %s/%s\nconfigfile: pyproject.toml", repoRoot, c.dir)
	for _, q := range c.pkgs {
		n := g.n(20, 70)
		total += n
		if verbose {
			for i := range n {
				o.add("%s::%s_%d PASSED%s[%3d%%]", q.tests[0], g.pick(standingPy), i, strings.Repeat(" ", 20), min(100, i*100/max(1, n)))
			}
		} else {
			o.add("%s %s", q.tests[0], strings.Repeat(".", n))
		}
	}
	o.add("\n---------- coverage: platform linux, python 3.11.9 -----------\nName                           Stmts   Miss  Cover")
	for _, q := range c.pkgs {
		for _, f := range q.files {
			o.add("%-30s %5d %6d %4d%%", q.dir+"/"+f, g.between(40, 300), g.between(0, 30), g.between(70, 100))
		}
	}
	o.add("Coverage HTML written to dir htmlcov\n=============================== warnings summary ===============================")
	o.add("etl/compat.py:%d: DeprecationWarning: datetime.datetime.utcnow() is deprecated", g.site("compat.py", PassingOutput))
	o.add("============ %d passed, 1 warning in %.2fs ============", total, 3+g.r.Float64()*20)
	return o
}

// jestFail is a jest run with a failing test, or tsc with type errors.
func (g *gen) jestFail(c component, p pkg) *out {
	o := &out{}
	if g.chance(0.35) || len(p.tests) == 0 {
		for range g.between(1, 3) {
			f := p.files[g.r.IntN(len(p.files))]
			code := g.plant(g.pick([]string{"TS2345", "TS2339", "TS2322", "TS7006", "TS2554"}), ErrorLine, "code")
			l := g.lineFor(f)
			s := g.plant(fmt.Sprintf("%s(%d,%d)", path.Base(f), l, g.between(2, 40)), ErrorLine, "site")
			o.fail("%s/%s: error %s: %s", p.dir, s, code, g.pick([]string{"Argument of type 'string | undefined' is not assignable to parameter of type 'string'.", "Property 'tenantId' does not exist on type 'Batch'.", "Expected 2 arguments, but got 1.", "Parameter 'row' implicitly has an 'any' type."}))
		}
		o.fail("Found %d errors. Watching for file changes.", len(o.lines))
		return o
	}
	tf := p.tests[g.r.IntN(len(p.tests))]
	for _, q := range c.pkgs {
		for _, t := range q.tests {
			if t != tf {
				o.add(" PASS  %s (%.3f s)", t, 0.5+g.r.Float64()*6)
			}
		}
	}
	o.fail(" FAIL  %s (%.3f s)", tf, 1+g.r.Float64()*8)
	o.fail("  ● %s › %s", g.pick(words)+"Client", g.jsTest())
	o.add("")
	l := g.site(tf, ErrorLine)
	port := g.port()
	switch g.r.IntN(2) {
	case 0:
		o.add("    expect(received).toBe(expected) // Object.is equality\n")
		o.fail("    Expected: %d\n    Received: %d", g.between(2, 5), 1)
	default:
		u := g.plant(fmt.Sprintf("http://localhost:%d/%s", port, g.pick(urlPaths)), ErrorLine, "url")
		o.fail("    FetchError: request to %s failed, reason: connect %s %s", u,
			g.plant("ECONNREFUSED", ErrorLine, "code"), g.plant(fmt.Sprintf("127.0.0.1:%d", port), ErrorLine, "hostport"))
	}
	o.add("\n      %d |     await client.post(\"/v1/batches\", body);\n    > %d |     expect(server.calls).toBe(3);\n         |                          ^\n", l-1, l)
	o.fail("      at Object.<anonymous> (%s:%d:%d)", tf, l, g.between(5, 40))
	o.fail("      at processTicksAndRejections (node:internal/process/task_queues:95:5)")
	o.add("")
	o.fail("Test Suites: 1 failed, %d passed, %d total", g.between(3, 6), g.between(7, 9))
	o.fail("Tests:       1 failed, %d passed, %d total", g.between(40, 60), g.between(61, 70))
	o.add("Snapshots:   0 total\nTime:        %.3f s\nRan all test suites.", 5+g.r.Float64()*10)
	return o
}

// jestPass is a passing jest run, with the console lines a test printed.
func (g *gen) jestPass(c component, verbose bool) *out {
	o := &out{}
	n := 0
	for _, q := range c.pkgs {
		for _, t := range q.tests {
			o.add(" PASS  %s (%.3f s)", t, 0.5+g.r.Float64()*6)
			if verbose {
				for range g.n(5, 18) {
					o.add("    ✓ %s (%d ms)", g.jsTest(), g.between(1, 300))
					n++
				}
				if g.chance(0.5) {
					o.add("  console.log\n    polling %s every 5000ms\n\n      at log (src/hooks/usePolling.ts:%d:11)\n", g.plant(g.url(), PassingOutput, "url"), g.lineFor("usePolling.ts"))
				}
			} else {
				n += g.between(5, 18)
			}
		}
	}
	o.add("\nTest Suites: %d passed, %d total\nTests:       %d passed, %d total\nSnapshots:   2 passed, 2 total\nTime:        %.3f s\nRan all test suites.", len(o.lines)/3+1, len(o.lines)/3+1, n, n, 4+g.r.Float64()*10)
	return o
}

var standingRs = []string{"parses_minor_units", "rejects_negative_zero", "reads_schema_v2", "dedupes_by_key", "writes_footer", "round_trips_decimal", "skips_bom"}

// cargoFail is a cargo build with type errors or a cargo test with a
// panicking test.
func (g *gen) cargoFail(c component, p pkg) *out {
	o := &out{}
	o.add("   Compiling %s v0.4.%d (%s/%s)", c.mod, g.between(0, 9), repoRoot, c.dir)
	f := p.files[g.r.IntN(len(p.files))]
	if g.chance(0.5) {
		for range g.between(1, 2) {
			code := g.plant(g.pick([]string{"E0308", "E0382", "E0502", "E0599", "E0277"}), ErrorLine, "code")
			l := g.site(f, ErrorLine)
			col := g.between(5, 30)
			o.fail("error[%s]: %s", code, g.pick([]string{"mismatched types", "borrow of moved value: `row`", "cannot borrow `rows` as mutable because it is also borrowed as immutable", "no method named `quantize` found for struct `Decimal` in the current scope", "the trait bound `Row: Hash` is not satisfied"}))
			o.fail("  --> %s/%s:%d:%d", p.dir, f, l, col)
			o.add("   |\n%d |     let cents: i64 = amount * 100.0;\n   |                ---   ^^^^^^^^^^^^^^ expected `i64`, found `f64`\n   |", l)
			o.add("")
			o.fail("For more information about this error, try `rustc --explain %s`.", code)
		}
		o.fail("error: could not compile `%s` (lib) due to %d previous errors", c.mod, g.between(1, 2))
		return o
	}
	o.add("    Finished `test` profile [unoptimized + debuginfo] target(s) in %.2fs", 5+g.r.Float64()*30)
	o.add("     Running unittests src/lib.rs (target/debug/deps/%s-%s)\n", c.mod, g.hex(16))
	n := g.n(20, 60)
	test := g.plant(g.rsTest(p.mod), ErrorLine, "test")
	o.add("running %d tests", n)
	for i := range n - 1 {
		o.add("test %s::tests::%s_%d ... ok", p.mod, g.pick(standingRs), i)
	}
	o.fail("test %s ... FAILED", test)
	o.add("\nfailures:\n")
	o.fail("---- %s stdout ----", test)
	o.fail("thread '%s' panicked at %s/%s:%d:%d:", test, p.dir, f, g.site(f, ErrorLine), g.between(5, 30))
	o.fail("assertion `left == right` failed\n  left: %d\n right: %d", 1050, 1049)
	o.add("note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\nfailures:")
	o.fail("    %s", test)
	o.add("")
	o.fail("test result: FAILED. %d passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.%02ds", n-1, g.between(1, 90))
	o.add("")
	o.fail("error: test failed, to rerun pass `--lib`")
	return o
}

// cargoPass is a passing cargo test run.
func (g *gen) cargoPass(c component, verbose bool) *out {
	o := &out{}
	o.add("   Compiling %s v0.4.%d (%s/%s)", c.mod, g.between(0, 9), repoRoot, c.dir)
	o.add("    Finished `test` profile [unoptimized + debuginfo] target(s) in %.2fs", 5+g.r.Float64()*30)
	o.add("     Running unittests src/lib.rs (target/debug/deps/%s-%s)\n", c.mod, g.plant(g.hex(16), PassingOutput, "hash"))
	total := 0
	for _, q := range c.pkgs {
		n := g.n(15, 50)
		total += n
		if verbose {
			for i := range n {
				o.add("test %s::tests::%s_%d ... ok", q.mod, g.pick(standingRs), i)
			}
		}
	}
	o.add("\ntest result: ok. %d passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.%02ds\n", total, g.between(1, 90))
	o.add("   Doc-tests %s\n\nrunning 3 tests\ntest src/lib.rs - (line 12) ... ok\n\ntest result: ok. 3 passed; 0 failed", c.mod)
	return o
}

// testFail and testPass dispatch on the component's language.
func (g *gen) testFail(c component, p pkg) (string, *out) {
	switch c.lang {
	case "go":
		if g.chance(0.25) {
			return "go vet ./... && go test ./" + p.mod + "/...", g.goBuildFail(c, p)
		}
		return "go test ./" + p.mod + "/... -count=1", g.goTestFail(c, p)
	case "py":
		return "python -m pytest -x -q " + p.tests[0], g.pytestFail(c, p)
	case "ts":
		return "npx jest --ci " + p.dir, g.jestFail(c, p)
	default:
		return "cargo test -p " + c.mod, g.cargoFail(c, p)
	}
}

func (g *gen) testPass(c component, verbose bool) (string, *out) {
	switch c.lang {
	case "go":
		if verbose {
			return "go test ./... -v -count=1 -cover 2>&1 | tail -n +1", g.goTestPass(c, true)
		}
		return "go test ./... -count=1 -cover", g.goTestPass(c, false)
	case "py":
		if verbose {
			return "python -m pytest -v --cov=etl", g.pytestPass(c, true)
		}
		return "python -m pytest -q --cov=etl", g.pytestPass(c, false)
	case "ts":
		if verbose {
			return "npx jest --ci --verbose", g.jestPass(c, true)
		}
		return "npx jest --ci", g.jestPass(c, false)
	default:
		if verbose {
			return "cargo test -p " + c.mod + " -- --nocapture", g.cargoPass(c, true)
		}
		return "cargo test -p " + c.mod, g.cargoPass(c, false)
	}
}
