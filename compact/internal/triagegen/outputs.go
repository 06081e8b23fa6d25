package triagegen

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// This file writes what the tools print: Gradle and JUnit, RSpec, CMake,
// ctest and AddressSanitizer, mix, Spring Boot logs, curl, MySQL, Redis,
// git, systemd, docker, ripgrep and ls. In a failing output the
// identifiers are planted on the lines that report the failure (o.err);
// in a passing one, anywhere.

// ---- JVM: Gradle, JUnit, Spring Boot logs ----

// ktFrame returns "pkg.Class.method(Class.kt:N)" for a method of f,
// planting the site as an error label when lab.
func (g *gen) ktFrame(f *srcFile, lab bool) string {
	mk := g.mkSite(f.name+".kt", 18, 420)
	site := ""
	if lab {
		site = g.errID("site", mk)
	} else {
		site = g.fill(mk)
	}
	return fmt.Sprintf("%s.%s.%s(%s)", f.pkg, f.name, f.funcs[g.r.IntN(len(f.funcs))], site)
}

// ktWarnings writes Kotlin compiler warnings of module m.
func (g *gen) ktWarnings(o *out, m string, n int) {
	var fs []*srcFile
	for _, f := range g.w.kt {
		if f.unit == m {
			fs = append(fs, f)
		}
	}
	for range n {
		f := fs[g.r.IntN(len(fs))]
		site := g.fill(func() string { return fmt.Sprintf("%s:%d:%d", f.base(), 10+g.r.IntN(400), 5+g.r.IntN(40)) })
		o.addf("w: file://%s/%s%s %s", root, strings.TrimSuffix(f.path, f.base()), site, pick(g,
			"'constructor(p0: Double): BigDecimal' is deprecated. Deprecated in Java.",
			"Parameter 'tenant' is never used.",
			"Variable 'elapsed' is never used.",
			"Unchecked cast of 'Any?' to 'Map<String, Any>'.",
			"'toUpperCase(): String' is deprecated. Use uppercase() instead.",
			"Condition 'line.amount != null' is always 'true'.",
			"This annotation is not applicable to target 'member property with backing field'. Applicable targets: value parameter",
			"Elvis operator (?:) always returns the left operand of non-nullable type 'Money'.",
		))
	}
}

// testFail is a failing JUnit test: its class, and what writes its
// report.
type testFail struct {
	class string
	write func(o *out)
}

// gradleSpec is one Gradle invocation.
type gradleSpec struct {
	mods    []string // projects whose tasks run, in order
	tests   []string // projects whose tests run
	failMod string   // the project whose tests or compilation fail
	// testFails are failing tests, each in its own test class.
	testFails []testFail
	compFail  func(o *out)
}

// gradle writes a Gradle run. A failing test block or compile error is
// written by the spec's functions, on error lines.
func (g *gen) gradle(o *out, s gradleSpec) {
	if g.chance(0.3) {
		o.add("Starting a Gradle Daemon (subsequent builds will be faster)")
	}
	o.add("Reusing configuration cache.")
	if len(s.tests) > 0 && !g.chance(0.5) {
		o.add("> Task :checkKotlinGradlePluginConfigurationErrors SKIPPED")
	}
	if s.compFail != nil {
		var mods []string
		for _, m := range s.mods {
			if m != s.failMod {
				mods = append(mods, m)
			}
		}
		s.mods = append(mods, s.failMod)
	}
	total, failed, skipped, executed := 0, 0, 0, 0
	failedTask := ""
	for _, m := range s.mods {
		o.addf("> Task :%s:processResources %s", m, pick(g, "UP-TO-DATE", "NO-SOURCE"))
		if s.compFail != nil && m == s.failMod {
			o.addf("> Task :%s:compileKotlin", m)
			g.ktWarnings(o, m, g.scale(g.between(4, 10)))
			o.errf("> Task :%s:compileKotlin FAILED", m)
			s.compFail(o)
			failedTask = ":" + m + ":compileKotlin"
			executed++
			break
		}
		if g.chance(0.5) {
			o.addf("> Task :%s:compileKotlin", m)
			g.ktWarnings(o, m, g.scale(g.between(1, 4)))
			executed++
		} else {
			o.addf("> Task :%s:compileKotlin UP-TO-DATE", m)
		}
		o.addf("> Task :%s:compileJava NO-SOURCE\n> Task :%s:classes UP-TO-DATE\n> Task :%s:jar UP-TO-DATE", m, m, m)
		if !contains(s.tests, m) {
			continue
		}
		o.addf("> Task :%s:processTestResources UP-TO-DATE\n> Task :%s:compileTestKotlin\n> Task :%s:compileTestJava NO-SOURCE\n> Task :%s:testClasses\n> Task :%s:test", m, m, m, m, m)
		executed += 3
		classes := g.testClasses(m)
		failAt := map[int]func(o *out){}
		if m == s.failMod {
			for _, f := range s.testFails {
				i := slices.Index(classes, f.class)
				if i < 0 {
					i = g.r.IntN(len(classes))
				}
				failAt[i] = f.write
			}
		}
		for i, c := range classes {
			n := g.between(3, 24)
			sk := 0
			if g.chance(0.12) {
				sk = 1
				o.add("")
				o.addf("%s > %s SKIPPED", c, g.fill(g.mkTestName()))
			}
			total += n
			skipped += sk
			if strings.HasSuffix(c, "IT") {
				g.itOutput(o, c, len(s.testFails) == 0 && s.compFail == nil)
			}
			if fail := failAt[i]; fail != nil {
				o.add("")
				fail(o)
				o.add("")
				o.errf("%s: %d tests, %d passed, 1 failed, %d skipped", c, n, n-1-sk, sk)
				failed++
				continue
			}
			o.addf("%s: %d tests, %d passed, 0 failed, %d skipped", c, n, n-sk, sk)
		}
		if failed > 0 {
			o.add("")
			o.errf("%d tests completed, %d failed, %d skipped", total, failed, skipped)
			o.add("")
			o.errf("> Task :%s:test FAILED", m)
			failedTask = ":" + m + ":test"
			break
		}
	}
	upToDate := g.between(12, 40)
	took := pick(g, "38s", "47s", "1m 4s", "1m 12s", "52s", "2m 3s", "29s")
	scan := g.mkURL("ge.quire.internal", "s")
	if failedTask == "" {
		o.add("")
		o.add("BUILD SUCCESSFUL in " + took)
		o.addf("%d actionable tasks: %d executed, %d up-to-date", executed+upToDate, executed, upToDate)
		o.add("Configuration cache entry reused.")
		o.add("")
		o.add("Publishing build scan...")
		o.add(g.passID("url", scan))
		return
	}
	o.add("")
	o.err("FAILURE: Build failed with an exception.")
	o.add("")
	o.add("* What went wrong:")
	o.errf("Execution failed for task '%s'.", failedTask)
	if s.compFail != nil {
		o.err("> A failure occurred while executing org.jetbrains.kotlin.compilerRunner.GradleCompilerRunnerWithWorkers$GradleKotlinCompilerWorkAction\n   > Compilation error. See log for more details")
	} else {
		o.errf("> There were failing tests. See the report at: file://%s/billing/%s/build/reports/tests/test/index.html", root, s.failMod)
	}
	o.add("")
	o.add("* Try:\n> Run with --stacktrace option to get the stack trace.\n> Run with --info or --debug option to get more log output.\n> Get more help at https://help.gradle.org.")
	o.add("")
	o.err("BUILD FAILED in " + took)
	o.addf("%d actionable tasks: %d executed, %d up-to-date", executed+upToDate, executed, upToDate)
	o.add("")
	o.add("Publishing build scan...")
	o.add(g.fill(scan))
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// testClasses lists the test classes of a Gradle project, with extra
// integration suites as the output scale grows.
func (g *gen) testClasses(m string) []string {
	if c, ok := g.w.classes[m]; ok {
		return c
	}
	var out []string
	for _, f := range g.w.kt {
		if f.unit == m {
			out = append(out, f.test.name)
		}
	}
	for i := range g.scale(2) {
		f := out[i%len(out)]
		out = append(out, strings.TrimSuffix(f, "Test")+pick(g, "IT", "ContractTest", "PropertyTest", "SnapshotTest"))
	}
	g.r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	g.w.classes[m] = out
	return out
}

var migrations = []string{"init", "create tenants", "create invoices", "add invoice number sequence", "create ledger entries", "add period locks", "create refunds",
	"add refund external ref index", "create payouts", "add dunning steps", "add fx rates cache table", "backfill tenant currency", "add source job id to invoices",
	"create job runs", "add webhook endpoints", "drop legacy exports", "add tax exemptions", "add usage records", "partition ledger entries by month", "add idempotency keys"}

// itOutput writes the standard output of an integration test class:
// a MySQL container, the migrations, and the Spring context starting.
// A passing run's container id is planted.
func (g *gen) itOutput(o *out, cls string, pass bool) {
	t := g.now.Add(-2 * time.Minute)
	ts := func() string {
		t = t.Add(time.Duration(g.between(3, 900)) * time.Millisecond)
		return t.Format("15:04:05.000")
	}
	cid := g.fill(g.mkHash(64))
	if pass && g.chance(0.5) {
		cid = g.passID("hash", g.mkHash(64))
	}
	port := g.between(32768, 60999)
	o.add("")
	o.add(cls + " > STANDARD_OUT")
	for _, l := range []string{
		"INFO  org.testcontainers.images.PullPolicy -- Image pull policy will be performed by: DefaultPullPolicy()",
		"INFO  org.testcontainers.utility.ImageNameSubstitutor -- Image name substitution will be performed by: DefaultImageNameSubstitutor (composite of 'ConfigurationFileImageNameSubstitutor' and 'PrefixingImageNameSubstitutor')",
		"INFO  org.testcontainers.DockerClientFactory -- Testcontainers version: 1.20.3",
		"INFO  tc.mysql:8.0.36 -- Creating container for image: mysql:8.0.36",
		"INFO  tc.mysql:8.0.36 -- Container mysql:8.0.36 is starting: " + cid,
		"INFO  tc.mysql:8.0.36 -- Waiting for database connection to become available at jdbc:mysql://localhost:" + fmt.Sprint(port) + "/test using query 'SELECT 1'",
		fmt.Sprintf("INFO  tc.mysql:8.0.36 -- Container mysql:8.0.36 started in PT%d.%03dS", g.between(6, 20), g.r.IntN(1000)),
		fmt.Sprintf("INFO  org.flywaydb.core.FlywayExecutor -- Database: jdbc:mysql://localhost:%d/test (MySQL 8.0)", port),
		"INFO  o.f.core.internal.command.DbMigrate -- Current version of schema `test`: << Empty Schema >>",
	} {
		o.addf("    %s [Test worker] %s", ts(), l)
	}
	n := min(len(migrations), g.scale(5))
	for i := range n {
		o.addf("    %s [Test worker] INFO  o.f.core.internal.command.DbMigrate -- Migrating schema `test` to version \"%d - %s\"", ts(), i+1, migrations[i])
	}
	o.addf("    %s [Test worker] INFO  o.f.core.internal.command.DbMigrate -- Successfully applied %d migrations to schema `test`, now at version v%d (execution time 00:0%d.%03ds)", ts(), n, n, g.between(1, 4), g.r.IntN(1000))
	for _, l := range []string{
		"Starting " + cls + " using Java 21.0.5 with PID " + fmt.Sprint(g.between(20000, 99999)),
		"No active profile set, falling back to 1 default profile: \"default\"",
		"Bootstrapping Spring Data JDBC repositories in DEFAULT mode.",
		fmt.Sprintf("Finished Spring Data repository scanning in %d ms. Found 17 JDBC repository interfaces.", g.between(40, 200)),
		"HikariPool-1 - Starting...",
		"HikariPool-1 - Added connection com.mysql.cj.jdbc.ConnectionImpl@" + g.hex(8),
		"HikariPool-1 - Start completed.",
		fmt.Sprintf("Started %s in %d.%03d seconds (process running for %d.%03d)", cls, g.between(2, 9), g.r.IntN(1000), g.between(10, 40), g.r.IntN(1000)),
	} {
		o.addf("    %s [Test worker] INFO  %s -- %s", ts(), pick(g, "c.q.t.IntegrationTestApplication", "o.s.d.r.c.RepositoryConfigurationDelegate", "com.zaxxer.hikari.HikariDataSource"), l)
	}
	o.add("")
}

// junitFailure returns the failing JUnit test of f (kind: "assert",
// "exception", "sql", "timeout") as Gradle reports it.
func (g *gen) junitFailure(f *srcFile, kind string) testFail {
	return testFail{class: f.test.name, write: func(o *out) { g.junitReport(o, f, kind) }}
}

func (g *gen) junitReport(o *out, f *srcFile, kind string) {
	test := g.errID("test", g.mkTestName())
	cls := f.test.name
	o.errf("%s > %s FAILED", cls, test)
	testFrame := fmt.Sprintf("at app//%s.%s.%s(%s)", f.pkg, cls, strings.TrimSuffix(test, "()"), g.errID("site", g.mkSite(cls+".kt", 20, 300)))
	callee := g.w.others(g, g.w.kt, f, 1)[0]
	switch kind {
	case "assert":
		want := fmt.Sprintf("%d.%02d", g.between(10, 9000), g.r.IntN(100))
		o.errf("    org.opentest4j.AssertionFailedError: line %d of %s ==> expected: <-%s> but was: <%s>", g.between(1, 9), g.errID("id", g.mkID("inv")), want, want)
		for _, fr := range junitFrames {
			o.err("        " + fr)
		}
		o.err("        at app//" + g.ktFrame(callee, true))
		o.err("        at app//" + g.ktFrame(f, true))
		o.err("        " + testFrame)
	case "timeout":
		o.errf("    java.util.concurrent.TimeoutException: %s timed out after %d seconds", strings.TrimSuffix(test, "()"), pick(g, 5, 10, 30))
		o.err("        at app//" + g.ktFrame(f, true))
		o.err("        at app//kotlinx.coroutines.BlockingCoroutine.joinBlocking(Builders.kt:95)")
		o.err("        at app//kotlinx.coroutines.BuildersKt__BuildersKt.runBlocking(Builders.kt:69)")
		o.err("        " + testFrame)
	case "sql":
		entry := g.errID("id", g.mkID("le"))
		o.errf("    org.springframework.dao.DuplicateKeyException: PreparedStatementCallback; SQL [insert into ledger_entries (id, tenant_id, source_id, amount_minor, currency) values (?, ?, ?, ?, ?)]; Duplicate entry '%s' for key 'ledger_entries.uq_ledger_entries_source'", entry)
		o.err("        at app//org.springframework.jdbc.support.SQLErrorCodeSQLExceptionTranslator.doTranslate(SQLErrorCodeSQLExceptionTranslator.java:254)")
		o.err("        at app//org.springframework.jdbc.core.JdbcTemplate.execute(JdbcTemplate.java:1548)")
		o.err("        at app//" + g.ktFrame(callee, true))
		o.err("        at app//" + g.ktFrame(f, true))
		o.err("        " + testFrame)
		o.add("")
		o.err("        Caused by:")
		o.errf("        java.sql.SQLIntegrityConstraintViolationException: Duplicate entry '%s' for key 'ledger_entries.uq_ledger_entries_source'", entry)
		o.err("            at app//com.mysql.cj.jdbc.exceptions.SQLError.createSQLException(SQLError.java:118)")
		o.err("            at app//com.mysql.cj.jdbc.ClientPreparedStatement.executeUpdateInternal(ClientPreparedStatement.java:1061)")
		o.errf("            ... %d more", g.between(8, 40))
	default: // exception with a cause
		tenant := g.errID("id", g.mkID("tn"))
		o.errf("    java.lang.IllegalStateException: ledger period %s is closed for tenant %s", pick(g, "2024-09", "2024-10", "2024-11"), tenant)
		o.err("        at app//" + g.ktFrame(callee, true))
		o.err("        at app//" + g.ktFrame(f, true))
		o.err("        at app//" + g.ktFrame(f, true))
		o.err("        " + testFrame)
		o.add("")
		o.err("        Caused by:")
		o.errf("        com.quire.ledger.period.PeriodClosedException: [%s] period locked by reconciliation run %s", g.errID("code", g.mkCode()), g.errID("id", g.mkID("rr")))
		o.err("            at app//" + g.ktFrame(callee, true))
		o.errf("            ... %d more", g.between(3, 12))
	}
}

// ktCompileErrors writes Kotlin compile errors in f.
func (g *gen) ktCompileErrors(o *out, f *srcFile) {
	dir := root + "/" + strings.TrimSuffix(f.path, f.base())
	for i := range g.between(2, 4) {
		site := g.errID("site", func() string { return fmt.Sprintf("%s:%d:%d", f.base(), 20+g.r.IntN(300), 5+g.r.IntN(30)) })
		msg := []string{
			"Unresolved reference 'clockSkew'.",
			"Argument type mismatch: actual type is 'Long', but 'Duration' was expected.",
			"No value passed for parameter 'roundingMode'.",
			"'when' expression must be exhaustive. Add the 'ACCRUAL' branch or an 'else' branch.",
			"Unresolved reference 'toMinorUnits'.",
			"Return type mismatch: expected 'List<LedgerLine>', actual 'List<LedgerLine>?'.",
		}[(i+g.r.IntN(6))%6]
		o.errf("e: file://%s%s %s", dir, site, msg)
	}
}

// springLog writes lines of a Spring Boot log: pfx starts every line
// (a journal prefix, or none), n lines of routine traffic.
func (g *gen) springLog(o *out, pfx string, n int, pass bool, t time.Time, pid int) time.Time {
	for range n {
		t = t.Add(time.Duration(g.between(100, 20000)) * time.Millisecond)
		ts := t.Format("2006-01-02T15:04:05.000Z")
		msg := pick(g, logMessages...)
		rid := g.uuid()
		if pass && g.chance(0.08) {
			rid = g.passID("uuid", g.mkUUID())
		} else {
			rid = g.fill(func() string { return rid })
		}
		o.addf("%s%s  INFO %d --- [billing-api] [%s] %-40s : %s [requestId=%s]", pfx, ts, pid, pick(g, "nio-8080-exec-1", "nio-8080-exec-4", "   scheduling-1", "nio-8080-exec-7"), pick(g, "c.q.a.rest.RefundController", "c.q.i.finalize.InvoiceFinalizer", "c.q.l.posting.PostingService", "o.s.web.servlet.DispatcherServlet", "c.q.p.payout.PayoutScheduler"), msg, rid)
	}
	return t
}

var logMessages = []string{
	"GET /v2/invoices 200 in 41 ms", "POST /v2/refunds 201 in 118 ms", "finalized 12 invoices", "posted ledger batch of 50 lines",
	"payout run started for 3 tenants", "GET /actuator/health 200 in 3 ms", "cache refresh of fx rates took 212 ms", "dunning tick: 0 steps due",
	"GET /v2/customers/{id}/invoices 200 in 67 ms", "webhook enqueued for delivery", "idempotent replay served from cache", "period 2024-10 reconciliation 97% matched",
}

func (g *gen) randDur() time.Duration { return time.Duration(g.r.IntN(3600)) * time.Second }

// jvmTrace writes an exception with its frames and causes as a log
// prints it, each line after pfx, all as error lines.
func (g *gen) jvmTrace(o *out, pfx string, head string, frames []string, causes ...[]string) {
	o.err(pfx + head)
	for _, f := range frames {
		o.err(pfx + "\tat " + strings.TrimPrefix(f, "at "))
	}
	for _, c := range causes {
		o.err(pfx + "Caused by: " + c[0])
		for _, f := range c[1:] {
			o.err(pfx + "\tat " + strings.TrimPrefix(f, "at "))
		}
		o.errf("%s\t... %d common frames omitted", pfx, g.between(12, 60))
	}
}

// ---- Ruby: RSpec ----

// rspecSpec is one RSpec run.
type rspecSpec struct {
	files  []*srcFile // spec files run, for the documentation listing
	failIn *srcFile   // model or service whose spec fails, nil when passing
	kind   string     // "expect", "unique", "nil", "status"
	doc    bool       // --format documentation
	seed   int
}

// rspec writes an RSpec run.
func (g *gen) rspec(o *out, s rspecSpec) {
	examples, pending := 0, 0
	o.addf("Randomized with seed %d", s.seed)
	o.add("")
	failLine := -1
	failCtx, failIt := pick(g, rspecDescribes...), pick(g, rspecIts...)
	if s.doc {
		for _, f := range s.files {
			o.add(f.test.name)
			for range g.between(2, 4) {
				o.add("  #" + strings.TrimRight(pick(g, rbMethods...), "?!"))
				for range g.between(1, 3) {
					ctx := pick(g, rspecDescribes...)
					o.add("    " + ctx)
					for range g.between(2, 6) {
						examples++
						it := pick(g, rspecIts...)
						if s.failIn != nil && failLine < 0 && f == s.failIn && g.chance(0.3) {
							failLine = len(o.lines)
							failCtx, failIt = ctx, it
							o.err("      " + it + " (FAILED - 1)")
							continue
						}
						if pending < 3 && g.chance(0.01) {
							pending++
							o.add("      " + it + " (PENDING: Temporarily skipped with xit)")
							continue
						}
						o.add("      " + it)
					}
				}
			}
		}
		if s.failIn != nil && failLine < 0 {
			examples++
			o.add("    " + failCtx)
			o.err("      " + failIt + " (FAILED - 1)")
		}
	} else {
		examples = g.scale(g.between(60, 110))
		dots := strings.Repeat(".", examples)
		if s.failIn != nil {
			k := g.r.IntN(len(dots))
			dots = dots[:k] + "F" + dots[k+1:]
		}
		for len(dots) > 0 {
			n := min(len(dots), 100)
			if strings.Contains(dots[:n], "F") {
				o.err(dots[:n])
			} else {
				o.add(dots[:n])
			}
			dots = dots[n:]
		}
	}
	if pending > 0 {
		o.add("")
		o.add("Pending: (Failures listed here are expected and do not affect your suite's status)")
		for i := range pending {
			o.add("")
			o.addf("  %d) %s %s", i+1, s.files[0].test.name, pick(g, rspecIts...))
			o.add("     # Temporarily skipped with xit")
			o.add("     # " + g.fill(g.mkSite("./"+strings.TrimPrefix(s.files[0].test.path, "admin/"), 10, 200)))
		}
	}
	took := fmt.Sprintf("%d.%02d", g.between(3, 40), g.r.IntN(100))
	if s.failIn == nil {
		o.add("")
		o.addf("Finished in %s seconds (files took %d.%02d seconds to load)", took, g.between(2, 6), g.r.IntN(100))
		o.addf("%d examples, 0 failures%s", examples, pendingText(pending))
		o.add("")
		o.addf("Randomized with seed %d", s.seed)
		if g.chance(0.7) {
			g.rspecProfile(o, s.files)
		}
		return
	}
	f := s.failIn
	spec := "./" + strings.TrimPrefix(f.test.path, "admin/")
	src := f.base()
	o.add("")
	o.add("Failures:")
	o.add("")
	desc := f.test.name + " " + failCtx + " " + failIt
	o.errf("  1) %s", desc)
	m := f.funcs[g.r.IntN(len(f.funcs))]
	srcSite := func() string { return g.errID("site", g.mkSite(src, 12, 240)) }
	specSite := g.errID("site", g.mkSite(f.test.base(), 12, 240))
	switch s.kind {
	case "unique":
		id := g.errID("id", g.mkID("rf"))
		site := srcSite()
		o.errf("     Failure/Error: %s.update!(status: :approved, approved_at: Time.current)", f.unit)
		o.add("")
		o.err("     ActiveRecord::RecordNotUnique:")
		o.errf("       Mysql2::Error: Duplicate entry '%s' for key '%ss.index_%ss_on_external_ref'", id, f.unit, f.unit)
		o.errf("     # ./%s:in 'block in %s#%s'", rbDir(f)+site, f.name, m)
		o.errf("     # ./spec/%s:in 'block (3 levels) in <top (required)>'", specDir(f)+specSite)
		o.err("     # ------------------")
		o.err("     # --- Caused by: ---")
		o.err("     # Mysql2::Error:")
		o.errf("     #   Duplicate entry '%s' for key '%ss.index_%ss_on_external_ref'", id, f.unit, f.unit)
		o.err("     #   /usr/local/bundle/gems/mysql2-0.5.6/lib/mysql2/client.rb:151:in 'Mysql2::Client#_query'")
	case "nil":
		o.errf("     Failure/Error: expect(%s.%s).to eq(%d)", f.unit, strings.TrimRight(m, "?!"), g.between(100, 99999))
		o.add("")
		o.err("     NoMethodError:")
		o.errf("       undefined method '%s' for nil", pick(g, "cents", "currency", "primary", "email", "locale"))
		o.errf("     # ./%s:in '%s#%s'", rbDir(f)+srcSite(), f.name, m)
		o.errf("     # ./%s:in '%s#%s'", rbDir(f)+srcSite(), f.name, pick(g, rbMethods...))
		o.errf("     # ./spec/%s:in 'block (4 levels) in <top (required)>'", specDir(f)+specSite)
	case "status":
		o.err("     Failure/Error: expect(response).to have_http_status(:ok)")
		o.err("       expected the response to have status code :ok (200) but it was :internal_server_error (500)")
		o.errf("     # ./spec/%s:in 'block (3 levels) in <top (required)>'", specDir(f)+specSite)
	default:
		o.errf("     Failure/Error: expect(%s.%s).to be(false)", f.unit, m)
		o.add("")
		o.err("       expected false\n            got true")
		o.errf("     # ./%s:in '%s#%s'", rbDir(f)+srcSite(), f.name, m)
		o.errf("     # ./%s:in '%s#%s'", rbDir(f)+srcSite(), f.name, pick(g, rbMethods...))
		o.errf("     # ./spec/%s:in 'block (4 levels) in <top (required)>'", specDir(f)+specSite)
	}
	o.add("")
	o.addf("Finished in %s seconds (files took %d.%02d seconds to load)", took, g.between(2, 6), g.r.IntN(100))
	o.errf("%d examples, 1 failure%s", examples, pendingText(pending))
	o.add("")
	o.add("Failed examples:")
	o.add("")
	o.errf("rspec %s # %s", g.errID("test", g.mkSite(spec, 8, 260)), desc)
	o.add("")
	o.addf("Randomized with seed %d", s.seed)
	o.exit = 1
}

// rbDir is the directory of f from the Rails root, with a slash.
func rbDir(f *srcFile) string {
	p := strings.TrimPrefix(f.path, "admin/")
	return p[:len(p)-len(f.base())]
}

func specDir(f *srcFile) string {
	p := strings.TrimPrefix(f.test.path, "admin/spec/")
	return p[:len(p)-len(f.test.base())]
}

func pendingText(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d pending", n)
}

// rspecProfile writes --profile's slowest examples, planting sites.
func (g *gen) rspecProfile(o *out, files []*srcFile) {
	o.add("")
	o.add("Top 5 slowest examples (2.91 seconds, 21.4% of total time):")
	for i := range 5 {
		f := files[g.r.IntN(len(files))]
		spec := "./" + strings.TrimPrefix(f.test.path, "admin/")
		site := g.fill(g.mkSite(spec, 8, 260))
		if i < 2 {
			site = g.passID("site", g.mkSite(spec, 8, 260))
		}
		o.addf("  %s %s", f.test.name, pick(g, rspecIts...))
		o.addf("    0.%02d seconds %s", 30+g.r.IntN(60), site)
	}
}

// ---- C++: CMake, ctest, GoogleTest, AddressSanitizer ----

func (g *gen) cmakeConfigure(o *out, dir string, san bool) {
	o.add("-- The CXX compiler identification is GNU 13.3.0\n-- Detecting CXX compiler ABI info\n-- Detecting CXX compiler ABI info - done\n-- Check for working CXX compiler: /usr/bin/c++ - skipped\n-- Detecting CXX compile features\n-- Detecting CXX compile features - done")
	o.add("-- Found Python3: /usr/bin/python3.12 (found version \"3.12.3\") found components: Interpreter\n-- Performing Test CMAKE_HAVE_LIBC_PTHREAD\n-- Performing Test CMAKE_HAVE_LIBC_PTHREAD - Success\n-- Found Threads: TRUE")
	if san {
		o.add("-- pricing: sanitizers enabled: address;undefined")
	}
	o.addf("-- Configuring done (%d.%ds)\n-- Generating done (0.%ds)\n-- Build files have been written to: %s/pricing/%s", g.between(1, 4), g.r.IntN(10), g.r.IntN(10), root, dir)
}

// cmakeBuild writes a build; fail names the unit whose compilation fails.
func (g *gen) cmakeBuild(o *out, dir string, fail *srcFile, verbose bool) {
	var objs []string
	for _, u := range g.w.cpp {
		if u != fail {
			objs = append(objs, "src/CMakeFiles/pricing.dir/"+u.unit+".cc.o")
		}
	}
	if fail != nil {
		objs = append(objs, "src/CMakeFiles/pricing.dir/"+fail.unit+".cc.o")
	}
	if g.chance(0.5) {
		objs = append(objs, "_deps/googletest-build/googletest/CMakeFiles/gtest.dir/src/gtest-all.cc.o", "_deps/googletest-build/googlemock/CMakeFiles/gmock.dir/src/gmock-all.cc.o", "_deps/googletest-build/googlemock/CMakeFiles/gmock_main.dir/src/gmock_main.cc.o")
	}
	for _, u := range g.w.cpp {
		objs = append(objs, "tests/CMakeFiles/pricing_tests.dir/"+u.unit+"_test.cc.o")
	}
	for i, obj := range objs {
		pct := 100 * (i + 1) / (len(objs) + 3)
		o.addf("[%3d%%] Building CXX object %s", pct, obj)
		if verbose {
			target, src, _ := strings.Cut(obj, "/CMakeFiles/")
			src = strings.TrimSuffix(src[strings.IndexByte(src, '/')+1:], ".o")
			o.addf("cd %s/pricing/%s/%s && /usr/bin/c++  -I%s/pricing/include -isystem %s/pricing/%s/_deps/googletest-src/googletest/include -g -std=c++17 -Wall -Wextra -fsanitize=address,undefined -fno-omit-frame-pointer -MD -MT %s -MF CMakeFiles/%s.d -o CMakeFiles/%s -c %s/pricing/%s/%s",
				root, dir, target, root, root, dir, obj, obj[len(target)+len("/CMakeFiles/"):], obj[len(target)+len("/CMakeFiles/"):], root, target, src)
		}
		if fail != nil && strings.Contains(obj, "/"+fail.unit+".cc.o") {
			g.cppCompileError(o, fail)
			o.errf("gmake[2]: *** [src/CMakeFiles/pricing.dir/build.make:%d: %s] Error 1", 90+i*14, obj)
			o.err("gmake[1]: *** [CMakeFiles/Makefile2:158: src/CMakeFiles/pricing.dir/all] Error 2")
			o.err("gmake: *** [Makefile:146: all] Error 2")
			o.exit = 2
			return
		}
		if g.chance(0.12*g.sc()) && strings.HasPrefix(obj, "src/") {
			u := g.w.cpp[0]
			for _, c := range g.w.cpp {
				if strings.Contains(obj, "/"+c.unit+".cc.o") {
					u = c
				}
			}
			site := g.fill(func() string { return fmt.Sprintf("%s:%d:%d", u.base(), 20+g.r.IntN(300), 3+g.r.IntN(40)) })
			ln := strings.Split(strings.Split(site, ":")[1], ":")[0]
			o.addf("%s/pricing/src/%s: warning: comparison of integer expressions of different signedness: 'int' and 'std::size_t' {aka 'long unsigned int'} [-Wsign-compare]", root, site)
			o.addf("%5s |   for (int i = 0; i < lines.size(); ++i) {\n      |                   ~~^~~~~~~~~~~~~~", ln)
		}
	}
	o.addf("[%3d%%] Linking CXX static library libpricing.a", 100*(len(objs)+1)/(len(objs)+3))
	o.addf("[%3d%%] Built target pricing", 100*(len(objs)+1)/(len(objs)+3))
	o.add("[ 99%] Linking CXX executable pricing_tests\n[100%] Built target pricing_tests")
}

func (g *gen) cppCompileError(o *out, f *srcFile) {
	site := g.errID("site", g.mkSiteCol(f.base()))
	ln := strings.Split(site, ":")[1]
	o.errf("%s/pricing/src/%s: error: no matching function for call to 'pricing::Money::scaled(double)'", root, site)
	o.addf("%5s |     return base.scaled(ratio);\n      |            ~~~~~~~~~~~^~~~~~~", ln)
	o.addf("In file included from %s/pricing/src/%s:3:", root, f.base())
	o.errf("%s/pricing/include/pricing/%s: note: candidate: 'pricing::Money pricing::Money::scaled(pricing::Ratio) const'", root, g.errID("site", g.mkSiteCol("money.h")))
	o.add("   41 |   Money scaled(Ratio r) const;\n      |         ^~~~~~")
	o.err("note:   no known conversion for argument 1 from 'double' to 'pricing::Ratio'")
	other := g.w.others(g, g.w.cpp, f, 1)[0]
	o.errf("%s/pricing/src/%s: error: cannot convert 'double' to 'pricing::Ratio'", root, g.errID("site", g.mkSiteCol(other.base())))
	o.addf("  %s |   const auto part = %s.scaled(share);\n      |                                  ^~~~~", fmt.Sprint(g.between(20, 300)), lowerFirst(other.name))
}

// ctestFail is the failure of a ctest run: an assertion or a sanitizer
// report in the unit's tests.
type ctestFail struct {
	unit *srcFile
	asan bool
}

// ctest writes a ctest run of all the tests.
func (g *gen) ctest(o *out, dir string, fail *ctestFail) {
	if g.w.gtests == nil {
		seen := map[string]bool{}
		for len(g.w.gtests) < g.scale(40) {
			u := g.w.cpp[g.r.IntN(len(g.w.cpp))]
			if t := g.fill(g.mkGtest(u.pkg)); !seen[t] {
				seen[t] = true
				g.w.gtests = append(g.w.gtests, t)
			}
		}
		slices.Sort(g.w.gtests)
	}
	tests := g.w.gtests
	failAt := -1
	if fail != nil {
		for _, i := range g.r.Perm(len(tests)) {
			if strings.HasPrefix(tests[i], fail.unit.pkg+".") {
				failAt = i
				break
			}
		}
		if failAt < 0 {
			failAt = g.r.IntN(len(tests))
			tests[failAt] = g.fill(g.mkGtest(fail.unit.pkg))
		}
	}
	o.addf("Test project %s/pricing/%s", root, dir)
	n := len(tests)
	w := len(fmt.Sprint(n))
	for i, t := range tests {
		o.addf("      Start %*d: %s", w, i+1, t)
		dots := strings.Repeat(".", max(3, 46-len(t)))
		if i != failAt {
			o.addf("%*d/%d Test %*s: %s %s   Passed    %d.%02d sec", w, i+1, n, w+1, fmt.Sprintf("#%d", i+1), t, dots, g.r.IntN(2), g.r.IntN(100))
			continue
		}
		status := "***Failed  "
		if fail.asan {
			status = "Subprocess aborted***Exception: "
		}
		o.errf("%*d/%d Test %*s: %s %s%s  %d.%02d sec", w, i+1, n, w+1, fmt.Sprintf("#%d", i+1), t, dots, status, g.r.IntN(2), g.r.IntN(100))
		g.gtestFailure(o, t, fail)
	}
	if failAt < 0 {
		o.add("")
		o.addf("100%% tests passed, 0 tests failed out of %d", n)
		o.add("")
		o.add("Label Time Summary:\npricing    =  " + fmt.Sprintf("%d.%02d sec*proc (%d tests)", g.between(2, 9), g.r.IntN(100), n))
		o.add("")
		o.addf("Total Test time (real) =   %d.%02d sec", g.between(2, 9), g.r.IntN(100))
		return
	}
	o.add("")
	o.errf("%d%% tests passed, 1 tests failed out of %d", 100*(n-1)/n, n)
	o.add("")
	o.addf("Total Test time (real) =   %d.%02d sec", g.between(2, 9), g.r.IntN(100))
	o.add("")
	o.err("The following tests FAILED:")
	kind := "Failed"
	if fail.asan {
		kind = "Subprocess aborted"
	}
	o.errf("\t%3d - %s (%s)", failAt+1, tests[failAt], kind)
	o.err("Errors while running CTest")
	o.add("Output from these tests are in: " + root + "/pricing/" + dir + "/Testing/Temporary/LastTest.log")
	o.add("Use \"--rerun-failed --output-on-failure\" to re-run the failed cases verbosely.")
	o.exit = 8
}

// gtestFailure writes the output of a failing GoogleTest case.
func (g *gen) gtestFailure(o *out, test string, fail *ctestFail) {
	u := fail.unit
	o.add("Running main() from gmock_main.cc")
	o.add("Note: Google Test filter = " + test)
	o.add("[==========] Running 1 test from 1 test suite.\n[----------] Global test environment set-up.")
	o.add("[----------] 1 test from " + u.pkg)
	o.add("[ RUN      ] " + test)
	if fail.asan {
		g.asanReport(o, u, test)
		return
	}
	site := g.errID("site", g.mkSite(u.unit+"_test.cc", 20, 400))
	o.errf("%s/pricing/tests/%s: Failure", root, site)
	o.err("Expected equality of these values:")
	call := fmt.Sprintf("subject.%s(Money::from_minor(%d, \"%s\")).minor_units()", u.funcs[0], -g.between(1, 99999), pick(g, "EUR", "JPY", "USD"))
	got := g.between(1, 99999)
	o.errf("  %s\n    Which is: %d\n  %d", call, -got, -got+1)
	o.err("Google Test trace:")
	o.errf("%s/pricing/tests/%s: table=%s currency=%s", root, g.errID("site", g.mkSite(u.unit+"_test.cc", 20, 400)), g.errID("id", g.mkID("fxt")), pick(g, "JPY", "EUR", "CHF"))
	o.errf("[  FAILED  ] %s (0 ms)", test)
	o.addf("[----------] 1 test from %s (0 ms total)", u.pkg)
	o.add("")
	o.add("[----------] Global test environment tear-down\n[==========] 1 test from 1 test suite ran. (0 ms total)\n[  PASSED  ] 0 tests.")
	o.err("[  FAILED  ] 1 test, listed below:")
	o.errf("[  FAILED  ] %s", test)
	o.add("")
	o.err(" 1 FAILED TEST")
}

// asanReport writes an AddressSanitizer report of a crash in u.
func (g *gen) asanReport(o *out, u *srcFile, test string) {
	pid := g.between(20000, 99999)
	addr := "0x" + g.fill(func() string { return "60" + g.hex(10) })
	pc := "0x55" + g.hex(10)
	kind := pick(g, "heap-use-after-free", "heap-buffer-overflow", "stack-use-after-return")
	o.add("=================================================================")
	o.errf("==%d==ERROR: AddressSanitizer: %s on address %s at pc %s bp 0x7ffd%s sp 0x7ffd%s", pid, kind, addr, pc, g.hex(8), g.hex(8))
	o.errf("READ of size %d at %s thread T0", pick(g, 4, 8, 16), addr)
	frame := func(i int, fn, site string) {
		o.errf("    #%d 0x55%s in %s %s/pricing/%s", i, g.hex(10), fn, root, site)
	}
	m1, m2 := u.funcs[0], u.funcs[1]
	frame(0, fmt.Sprintf("pricing::%s::%s(std::basic_string_view<char, std::char_traits<char> >) const", u.name, m1), "src/"+g.errID("site", g.mkSiteCol(u.base())))
	frame(1, fmt.Sprintf("pricing::%s::%s(pricing::Money const&)", u.name, m2), "src/"+g.errID("site", g.mkSiteCol(u.base())))
	suite, name, _ := strings.Cut(test, ".")
	frame(2, g.errID("test", func() string { return suite + "_" + name + "_Test::TestBody()" }), "tests/"+g.errID("site", g.mkSiteCol(u.unit+"_test.cc")))
	for i, f := range gtestFrames {
		o.errf("    #%d 0x55%s %s", i+3, g.hex(10), f)
	}
	o.add("")
	o.errf("%s is located %d bytes inside of %d-byte region [%s,0x60%s)", addr, 8*g.r.IntN(4), 16*g.between(1, 8), addr, g.hex(10))
	o.err("freed by thread T0 here:")
	o.errf("    #0 0x7f%s in operator delete(void*, unsigned long) ../../../../src/libsanitizer/asan/asan_new_delete.cpp:164", g.hex(10))
	frame(1, fmt.Sprintf("pricing::%s::%s()", u.name, pick(g, "evict_oldest", "clear", "rehash", "reset")), "src/"+g.errID("site", g.mkSiteCol(u.base())))
	o.add("")
	o.err("previously allocated by thread T0 here:")
	o.errf("    #0 0x7f%s in operator new(unsigned long) ../../../../src/libsanitizer/asan/asan_new_delete.cpp:95", g.hex(10))
	frame(1, fmt.Sprintf("pricing::%s::insert(std::basic_string_view<char, std::char_traits<char> >, pricing::Rate)", u.name), "src/"+g.fill(g.mkSiteCol(u.base())))
	o.add("")
	o.errf("SUMMARY: AddressSanitizer: %s %s/pricing/src/%s in pricing::%s::%s", kind, root, g.errID("site", g.mkSiteCol(u.base())), u.name, m1)
	o.add("Shadow bytes around the buggy address:")
	base := 0x601ffffff000 + g.r.IntN(0x1000)*0x10
	for i := range g.scale(6) + 4 {
		row := make([]string, 16)
		for j := range row {
			row[j] = pick(g, "fa", "fa", "00", "fd", "fd", "00")
		}
		mark := " "
		if i == 5 {
			row[4] = "[fd]"
			mark = "=>"
		}
		o.addf("%s0x%012x: %s", mark, base+i*0x80, strings.Join(row, " "))
	}
	o.add("Shadow byte legend (one shadow byte represents 8 application bytes):\n  Addressable:           00\n  Partially addressable: 01 02 03 04 05 06 07\n  Heap left redzone:       fa\n  Freed heap region:       fd\n  Stack left redzone:      f1\n  Stack mid redzone:       f2\n  Stack right redzone:     f3\n  Stack after return:      f5\n  Stack use after scope:   f8\n  Global redzone:          f9\n  Global init order:       f6\n  Poisoned by user:        f7\n  Container overflow:      fc\n  Array cookie:            ac\n  Intra object redzone:    bb\n  ASan internal:           fe\n  Left alloca redzone:     ca\n  Right alloca redzone:    cb")
	o.errf("==%d==ABORTING", pid)
}

// ---- Elixir: mix test ----

// mixSpec is one mix test run.
type mixSpec struct {
	failIn  *srcFile // nil when passing
	timeout bool     // the failure is a GenServer call timeout
	seed    int
	repeat  bool // --repeat-until-failure
	trace   bool // --trace: one line a test
}

func (g *gen) mix(o *out, s mixSpec) {
	if g.chance(0.5) {
		o.addf("Compiling %d files (.ex)\nGenerated notifier app", g.between(1, 6))
	}
	o.addf("Running ExUnit with seed: %d, max_cases: 4", s.seed)
	o.add("Excluding tags: [:integration]")
	o.add("")
	tests := g.scale(g.between(50, 80))
	if s.trace {
		g.mixTrace(o, tests, s)
		o.add(g.mixFinished(3, 9))
		if s.failIn != nil {
			o.errf("%d tests, 1 failure", tests)
			o.exit = 2
		} else {
			o.addf("%d tests, 0 failures", tests)
		}
		o.add("")
		o.addf("Randomized with seed %d", s.seed)
		return
	}
	runs := 1
	if s.repeat {
		runs = g.between(3, 14)
		if s.failIn == nil {
			runs = 50
		}
	}
	for r := range runs {
		last := r == runs-1
		line := strings.Repeat(".", tests)
		if s.failIn != nil && last {
			k := g.r.IntN(tests)
			o.add(line[:k])
			g.mixFailure(o, s)
			o.add(line[k+1:])
		} else {
			for len(line) > 0 {
				n := min(120, len(line))
				o.add(line[:n])
				line = line[n:]
			}
		}
		o.add(g.mixFinished(1, 4))
		if s.failIn != nil && last {
			o.errf("%d tests, 1 failure", tests)
			o.exit = 2
		} else {
			o.addf("%d tests, 0 failures", tests)
		}
		o.add("")
		o.addf("Randomized with seed %d", s.seed+r)
	}
}

// mixFinished is ExUnit's timing line: async and sync add up.
func (g *gen) mixFinished(lo, hi int) string {
	a, sy := g.between(lo*10, hi*10), g.between(lo*10, hi*10)
	return fmt.Sprintf("Finished in %.1f seconds (%.1fs async, %.1fs sync)", float64(a+sy)/10, float64(a)/10, float64(sy)/10)
}

// mixTrace writes mix test --trace: every test with its time, and the
// failure of s, if any, where its module's tests run.
func (g *gen) mixTrace(o *out, tests int, s mixSpec) {
	failed := s.failIn == nil
	for done := 0; done < tests; {
		u := g.w.ex[g.r.IntN(len(g.w.ex))]
		if !failed && done > tests/3 {
			u = s.failIn
		}
		o.add("")
		o.addf("%sTest [test/notifier/%s_test.exs]", u.name, u.unit)
		for range g.between(3, 9) {
			done++
			o.addf("  * test %s %s (%d.%dms) [L#%d]", pick(g, testSubjects...), pick(g, testBehaviours...), g.r.IntN(80), g.r.IntN(10), g.between(8, 300))
		}
		if u == s.failIn && !failed {
			failed = true
			g.mixFailure(o, s)
		}
	}
	o.add("")
}

func (g *gen) mixFailure(o *out, s mixSpec) {
	f := s.failIn
	mod := strings.TrimPrefix(f.name, "Notifier.")
	o.add("")
	o.errf("  1) test %s %s (%sTest)", pick(g, testSubjects...), pick(g, testBehaviours...), f.name)
	o.errf("     %s", g.errID("test", g.mkSite("test/notifier/"+f.unit+"_test.exs", 10, 260)))
	if s.timeout {
		ep := g.errID("id", g.mkID("ep"))
		o.errf("     ** (exit) exited in: GenServer.call(Notifier.RateLimiter, {:acquire, \"%s\"}, 5000)", ep)
		o.err("         ** (EXIT) time out")
		o.errf("     code: assert :ok = %s.%s(event, [])", f.name, f.funcs[0])
		o.err("     stacktrace:")
		o.err("       (elixir 1.17.3) lib/gen_server.ex:1128: GenServer.call/3")
		o.errf("       (notifier 0.9.0) lib/notifier/%s: Notifier.RateLimiter.acquire/1", g.errID("site", g.mkSite("rate_limiter.ex", 10, 200)))
		o.errf("       (notifier 0.9.0) lib/notifier/%s: %s.%s/2", g.errID("site", g.mkSite(f.unit+".ex", 10, 200)), f.name, f.funcs[0])
		o.errf("       %s: (test)", g.errID("site", g.mkSite("test/notifier/"+f.unit+"_test.exs", 10, 260)))
	} else {
		o.err("     Assertion with == failed")
		o.errf("     code:  assert %s.%s(payload, secret) == expected", mod, f.funcs[0])
		ts := 1730000000 + g.r.IntN(3000000)
		o.errf("     left:  \"t=%d,v1=%s\"", ts, g.errID("hash", g.mkHash(64)))
		o.errf("     right: \"t=%d,v1=%s\"", ts, g.fill(g.mkHash(64)))
		o.err("     stacktrace:")
		o.errf("       (notifier 0.9.0) lib/notifier/%s: %s.%s/3", g.errID("site", g.mkSite(f.unit+".ex", 10, 200)), f.name, f.funcs[0])
		o.errf("       %s: (test)", g.errID("site", g.mkSite("test/notifier/"+f.unit+"_test.exs", 10, 260)))
	}
	o.add("")
}

// ---- HTTP ----

// httpHead writes a status line and headers; fail puts them on error
// lines and plants the request id there. It returns the request id.
func (g *gen) httpHead(o *out, status string, fail bool, extra ...string) string {
	var rid string
	date := g.now.Format("Mon, 02 Jan 2006 15:04:05 GMT")
	if fail {
		rid = g.errID("uuid", g.mkUUID())
		o.err("HTTP/1.1 " + status)
		o.err("X-Request-Id: " + rid)
	} else {
		if g.chance(0.5) {
			rid = g.passID("uuid", g.mkUUID())
		} else {
			rid = g.fill(g.mkUUID())
		}
		o.add("HTTP/1.1 " + status)
		o.add("X-Request-Id: " + rid)
	}
	o.add("Content-Type: application/json")
	for _, e := range extra {
		o.add(e)
	}
	o.add("Date: " + date)
	o.add("")
	return rid
}

// errorBody writes a Spring error body for a 5xx on an error line and
// returns its trace id.
func (g *gen) errorBody(o *out, path, msg string) string {
	trace := g.errID("hash", g.mkHash(32))
	o.errf(`{"timestamp":"%s","status":500,"error":"Internal Server Error","code":"%s","message":"%s","traceId":"%s","path":"%s"}`,
		g.now.Format("2006-01-02T15:04:05.000+00:00"), g.errID("code", g.mkCode()), msg, trace, path)
	return trace
}

// ---- MySQL and Redis ----

// table writes a MySQL --table result.
func table(o *out, cols []string, rows [][]string) {
	w := make([]int, len(cols))
	for i, c := range cols {
		w[i] = len(c)
	}
	for _, r := range rows {
		for i, c := range r {
			w[i] = max(w[i], len(c))
		}
	}
	sep := "+"
	for _, n := range w {
		sep += strings.Repeat("-", n+2) + "+"
	}
	line := func(cells []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, c := range cells {
			fmt.Fprintf(&b, " %-*s |", w[i], c)
		}
		o.add(b.String())
	}
	o.add(sep)
	line(cols)
	o.add(sep)
	for _, r := range rows {
		line(r)
	}
	o.add(sep)
}

// ---- git, ripgrep, ls, systemd, docker ----

// gitLog writes one-line history with planted hashes.
func (g *gen) gitLog(o *out, area string, n int) {
	for i := range n {
		h := g.fill(g.mkHash(9))
		if i%5 == 0 {
			h = g.passID("hash", g.mkHash(9))
		}
		o.addf("%s %s: %s (#%d)", h, area, pick(g, "round credit notes per line", "retry payout capture on 502", "move tax table to pricing lib",
			"add tenant clock to schedulers", "bump spring boot", "fix flaky period lock test", "log request id on 5xx", "drop legacy fx endpoint",
			"split refund approval service", "index ledger_entries on source_id", "handle JPY without minor units", "rotate webhook signing key support",
			"make dunning grace configurable", "cache fx rates for 15 minutes", "export: stream CSV rows"), 1800+g.r.IntN(900))
	}
}

// rg writes ripgrep matches of pattern-like lines in files.
func (g *gen) rg(o *out, files []*srcFile, n int) {
	for range n {
		f := files[g.r.IntN(len(files))]
		var line string
		switch f.lang {
		case "ruby", "rspec":
			line = strings.TrimSpace(pick(g, rbStmts...))
		case "cpp", "gtest", "header":
			line = pick(g, cppStmts...)
		case "elixir", "exunit":
			line = pick(g, exStmts...)
		default:
			line = pick(g, ktStmts...)
		}
		line = strings.Split(line, "\n")[0]
		loc := g.fill(func() string { return fmt.Sprintf("%s:%d:", f.path, 5+g.r.IntN(300)) })
		o.addf("%s    %s", loc, strings.NewReplacer("{v}", "it", "{T}", "Entity", "{m}", "entities", "{f}", "tenantId").Replace(line))
	}
}

// ls writes a long directory listing of files.
func (g *gen) ls(o *out, files []*srcFile) {
	o.addf("total %d", 4*len(files)+8)
	o.addf("drwxr-xr-x  %d dev dev  4096 %s .", 2+len(files)/3, g.now.Add(-72*3600e9).Format("Jan _2 15:04"))
	o.addf("drwxr-xr-x  %d dev dev  4096 %s ..", 3+g.r.IntN(8), g.now.Add(-400*3600e9).Format("Jan _2 15:04"))
	for _, f := range files {
		o.addf("-rw-r--r--  1 dev dev %5d %s %s", 400+g.r.IntN(14000), g.now.Add(-time.Duration(g.r.IntN(2000))*time.Hour).Format("Jan _2 15:04"), f.base())
	}
}

// systemctlFailed writes the status of a failed unit with its last
// journal lines.
func (g *gen) systemctlFailed(o *out, host string, pid int, journal func(pfx string)) {
	o.err("× quire-billing.service - Quire billing API")
	o.add("     Loaded: loaded (/etc/systemd/system/quire-billing.service; enabled; preset: enabled)")
	o.errf("     Active: failed (Result: exit-code) since %s; %ds ago", g.now.Add(-40e9).Format("Mon 2006-01-02 15:04:05 UTC"), g.between(20, 90))
	o.addf("   Duration: %d.%03ds", g.between(4, 12), g.r.IntN(1000))
	o.errf("    Process: %d ExecStart=/usr/bin/java -Xms512m -Xmx2g -jar /opt/quire/billing-api.jar --spring.profiles.active=staging (code=exited, status=1/FAILURE)", pid)
	o.errf("   Main PID: %d (code=exited, status=1/FAILURE)", pid)
	o.addf("        CPU: %d.%03ds", g.between(8, 30), g.r.IntN(1000))
	o.add("")
	journal(fmt.Sprintf("%s %s java[%d]: ", g.now.Add(-45e9).Format("Jan 02 15:04:05"), host, pid))
	o.errf("%s %s systemd[1]: quire-billing.service: Main process exited, code=exited, status=1/FAILURE", g.now.Add(-41e9).Format("Jan 02 15:04:05"), host)
	o.errf("%s %s systemd[1]: quire-billing.service: Failed with result 'exit-code'.", g.now.Add(-41e9).Format("Jan 02 15:04:05"), host)
	o.exit = 3
}

// springBanner writes the start of a Spring Boot log.
func (g *gen) springBanner(o *out, pfx string, pid int, version string, at time.Time) {
	for _, l := range []string{
		"  .   ____          _            __ _ _",
		" /\\\\ / ___'_ __ _ _(_)_ __  __ _ \\ \\ \\ \\",
		"( ( )\\___ | '_ | '_| | '_ \\/ _` | \\ \\ \\ \\",
		" \\\\/  ___)| |_)| | | | | || (_| |  ) ) ) )",
		"  '  |____| .__|_| |_|_| |_\\__, | / / / /",
		" =========|_|==============|___/=/_/_/_/",
		"",
		" :: Spring Boot ::                (v3.3.5)",
		"",
	} {
		o.add(pfx + l)
	}
	for _, m := range []string{
		fmt.Sprintf("Starting BillingApiApplicationKt v%s using Java 21.0.5 with PID %d (/opt/quire/billing-api.jar started by quire in /opt/quire)", version, pid),
		"The following 1 profile is active: \"staging\"",
		"Bootstrapping Spring Data JDBC repositories in DEFAULT mode.",
		"Finished Spring Data repository scanning in 84 ms. Found 17 JDBC repository interfaces.",
		"Tomcat initialized with port 8080 (http)",
		"Starting service [Tomcat]",
		"Starting Servlet engine: [Apache Tomcat/10.1.31]",
		"Initializing Spring embedded WebApplicationContext",
		"Root WebApplicationContext: initialization completed in 2113 ms",
		"HikariPool-1 - Starting...",
	} {
		at = at.Add(time.Duration(g.between(5, 400)) * time.Millisecond)
		o.addf("%s%s  INFO %d --- [billing-api] [           main] %-40s : %s", pfx, at.Format("2006-01-02T15:04:05.000Z"), pid, pick(g, "c.q.api.BillingApiApplicationKt", "o.s.b.w.embedded.tomcat.TomcatWebServer", "com.zaxxer.hikari.HikariDataSource", "o.s.d.r.c.RepositoryConfigurationDelegate"), m)
	}
}
