package triagegen

import (
	"fmt"
	"strings"
	"time"
)

// This file writes the session: tasks the user gives, one after another,
// until the session has made its tool calls. Each task reads, runs,
// fails, edits and verifies. No assistant text and no command names a
// planted identifier of another place: the agent refers to what it saw
// in words.

// session writes the tasks.
func (g *gen) session() {
	tasks := []func(){g.taskKotlinTest, g.taskRails, g.taskCpp, g.taskDeploy, g.taskRefund500, g.taskData, g.taskElixir, g.taskKotlinCompile, g.taskSurvey, g.taskAdminCompose}
	var order []func()
	for g.calls < g.o.ToolCalls {
		if len(order) == 0 {
			order = make([]func(), len(tasks))
			for i, k := range g.r.Perm(len(tasks)) {
				order[i] = tasks[k]
			}
		}
		order[0]()
		order = order[1:]
	}
}

// ---- common steps ----

// branch returns a new branch name.
func (g *gen) branch(prefix, slug string) string {
	for i := 0; ; i++ {
		b := prefix + "/" + slug
		if i > 0 {
			b += fmt.Sprintf("-%d", i+1)
		}
		if !g.w.branch[b] {
			g.w.branch[b] = true
			return b
		}
	}
}

// commit makes a branch and commits the changed paths; created ones are
// listed as created.
func (g *gen) commit(branch, msg string, changed, created []string) tcall {
	cmd := fmt.Sprintf("git checkout -b %s && git add -A && git commit -m %q", branch, msg)
	return shell(cmd, func(o *out) {
		o.addf("Switched to a new branch '%s'", branch)
		o.addf("[%s %s] %s", branch, g.passID("hash", g.mkHash(9)), msg)
		ins := g.between(8, 120)
		o.addf(" %d files changed, %d insertions(+), %d deletions(-)", len(changed)+len(created), ins, g.between(1, ins))
		for _, p := range created {
			o.addf(" create mode 100644 %s", p)
		}
	})
}

// push pushes the branch and prints the merge request link.
func (g *gen) push(branch string) tcall {
	return shell("git push -u origin "+branch, func(o *out) {
		n := g.between(8, 40)
		o.addf("Enumerating objects: %d, done.\nCounting objects: 100%% (%d/%d), done.\nDelta compression using up to 8 threads", n, n, n)
		o.addf("Compressing objects: 100%% (%d/%d), done.\nWriting objects: 100%% (%d/%d), %d.%02d KiB | %d.%02d MiB/s, done.", n/2, n/2, n/2+1, n/2+1, g.between(1, 9), g.r.IntN(100), g.between(1, 9), g.r.IntN(100))
		o.addf("Total %d (delta %d), reused 0 (delta 0), pack-reused 0", n/2+1, n/4)
		o.add("remote: ")
		o.addf("remote: To create a merge request for %s, visit:", branch)
		enc := strings.ReplaceAll(branch, "/", "%2F")
		o.add("remote:   " + g.passID("url", func() string {
			return "https://git.quire.internal/quire/quire/-/merge_requests/new?merge_request%5Bsource_branch%5D=" + enc + "&mr_ref=" + g.rs(lowerAlnum, 6)
		}))
		o.add("remote: ")
		o.add("To git.quire.internal:quire/quire.git")
		o.addf(" * [new branch]      %s -> %s", branch, branch)
		o.addf("branch '%s' set up to track 'origin/%s'.", branch, branch)
	})
}

// status prints git status --short of the changed and created paths.
func (g *gen) status(changed, created []string) tcall {
	return shell("git status --short && git diff --stat", func(o *out) {
		for _, p := range changed {
			o.add(" M " + p)
		}
		for _, p := range created {
			o.add("?? " + p)
		}
		total := 0
		for _, p := range changed {
			n := g.between(2, 30)
			total += n
			o.addf(" %s | %d %s", p, n, strings.Repeat("+", min(n, 20))+strings.Repeat("-", g.between(0, 4)))
		}
		o.addf(" %d files changed, %d insertions(+), %d deletions(-)", len(changed), total, g.between(1, total))
	})
}

// readOf reads f.
func (g *gen) readOf(f *srcFile) tcall {
	return readCall(f.abs(), func(o *out) { g.readFile(f, o) })
}

// rgCall searches files of xs.
func (g *gen) rgCall(pattern, dir string, xs []*srcFile) tcall {
	return shell(fmt.Sprintf("rg -n %q %s", pattern, dir), func(o *out) { g.rg(o, xs, g.scale(g.between(8, 22))) })
}

// modFiles lists the Kotlin files of a module.
func (g *gen) modFiles(m string) []*srcFile {
	var out []*srcFile
	for _, f := range g.w.kt {
		if f.unit == m {
			out = append(out, f)
		}
	}
	return out
}

func dir(p string) string { return p[:strings.LastIndexByte(p, '/')] }

// paste returns an alert pasted into a user message, its identifiers
// planted as user_turn.
func (g *gen) paste() string {
	return fmt.Sprintf("```\n[FIRING:1] billing-api LedgerPostingErrors (severity=page)\n%s ERROR com.quire.ledger.period.PeriodClosedException: [%s] period locked\n  trace_id=%s tenant=%s\n```",
		g.now.Add(-9*time.Hour).Format("2006-01-02 15:04:05"), g.userID("code", g.mkCode()), g.userID("hash", g.mkHash(32)), g.userID("id", g.mkID("tn")))
}

// pasteClient returns the error a client got, pasted into a user
// message.
func (g *gen) pasteClient() string {
	return fmt.Sprintf("```\nHTTP/1.1 500\nx-request-id: %s\n\n{\"status\":500,\"error\":\"Internal Server Error\",\"code\":\"%s\",\"traceId\":\"%s\",\"path\":\"/v2/refunds\"}\n```",
		g.userID("uuid", g.mkUUID()), g.userID("code", g.mkCode()), g.userID("hash", g.mkHash(32)))
}

// ---- tasks ----

// taskKotlinTest: a JUnit test fails in a Gradle project; the agent
// reads, edits, adds a regression test, and verifies.
func (g *gen) taskKotlinTest() {
	f := g.w.subject(g, g.w.kt)
	m := f.unit
	ticket := g.userID("id", g.mkTicket())
	link := g.userID("url", g.mkURLNum("https://sentry.quire.io/organizations/quire/issues/", 7, "/"))
	g.user(fmt.Sprintf(pick(g,
		"%[1]s: finance says %[2]s produces wrong ledger lines since Tuesday's release. Can you find out why and fix it? Keep the public API of %[3]s as it is (other modules call it) and don't touch the Flyway migrations. Sentry: %[5]s",
		"Picking up %s. Something in %s broke the October close for a few tenants; the failing test in CI is in the %[4]s project. Keep %[3]s's public API stable and leave the migrations alone. %[5]s has the traces.",
	), ticket, f.name, f.name, m, link) + g.maybePaste())
	g.round(pick(g, "I'll look at the module layout and where the class is used first.", "Let me find the class and its callers."),
		shell("ls -la "+dir(f.abs()), func(o *out) { g.ls(o, g.modFiles(m)) }),
		g.rgCall(f.name+"\\(", "billing/", g.modFiles(m)))
	callee := g.w.others(g, g.w.kt, f, 1)[0]
	g.round("Reading the class and one of its collaborators.", g.readOf(f), g.readOf(callee))
	kind := pick(g, "assert", "exception", "sql", "assert", "exception")
	fails := []testFail{g.junitFailure(f, kind)}
	if g.chance(0.5) {
		// A second test of another class of the project fails the same way.
		var other *srcFile
		for _, x := range g.w.others(g, g.modFiles(m), f, 1) {
			other = x
		}
		if other != nil {
			fails = append(fails, g.junitFailure(other, pick(g, "assert", "exception")))
		}
	}
	g.round("Now the project's tests, to reproduce.", shell(fmt.Sprintf("cd billing && ./gradlew :%s:test", m), func(o *out) {
		o.exit = 1
		g.gradle(o, gradleSpec{mods: g.modsUpTo(m), tests: []string{m}, failMod: m, testFails: fails})
	}))
	g.round(pick(g, "Reproduced. The failure comes out of the class's own logic, not the fixture. Reading the test to see what it expects.", "One test fails there; let me read the test class before changing anything."), g.readOf(f.test))
	if g.chance(0.5) {
		g.say(pick(g,
			"Before I change it: the old behaviour is relied on by one caller. Should I change the behaviour for every tenant, or keep the old path behind a flag for tenants that already closed October?",
			"Question: the fix changes how existing lines are computed. Do you want it applied to the already closed period too, or only to new documents?",
		))
		if g.chance(0.5) {
			g.user(fmt.Sprintf("Only new documents. Finance will correct October by hand, that's tracked in %s.", g.userID("id", g.mkTicket())))
		} else {
			g.user(fmt.Sprintf("Apply it everywhere, but keep a flag so we can turn it off per tenant. Tenant %s is the one that complained, check with them after.", g.userID("id", g.mkID("tn"))))
		}
	}
	old, repl := g.ktEdit(f)
	reg := g.fileID("path", func() string {
		return dir(f.test.path) + "/" + f.name + pick(g, "", "CreditNote", "Period", "Rounding", "Currency", "Tenant", "Batch") + "RegressionTest.kt"
	})
	g.round(pick(g, "The logic treats an edge case the wrong way. I'll fix it in place, keeping the signatures, and add a regression test.", "Fixing it without changing any public signature, plus a focused regression test."),
		replaceCall(f.abs(), old, repl),
		writeCall(root+"/"+reg, g.ktRegressionTest(f, reg)))
	g.round("Re-running the project's tests.", shell(fmt.Sprintf("cd billing && ./gradlew :%s:test", m), func(o *out) {
		g.gradle(o, gradleSpec{mods: g.modsUpTo(m), tests: []string{m}})
	}))
	if g.chance(0.6) {
		g.round("Green. Running the whole build since other projects depend on this one.", shell("cd billing && ./gradlew build", func(o *out) {
			g.gradle(o, gradleSpec{mods: modNames(), tests: modNames()})
		}))
	}
	br := g.branch("fix", strings.ToLower(f.name)+"-"+pick(g, "sign", "period", "rounding", "lines"))
	g.round("Committing.", g.status([]string{f.path}, []string{reg}), g.commit(br, fmt.Sprintf("%s: fix %s edge case and add regression test", m, lowerFirst(f.name)), []string{f.path}, []string{reg}))
	g.say(pick(g,
		"Done. The class mishandled one case; it now follows the documented rule, the public API is unchanged, migrations untouched, and the new regression test covers it. The whole build passes; the change is committed on a branch.",
		"Fixed and committed on a branch. The failing test now passes along with the rest of the project, I added a regression test, and I did not touch the migrations or any public signature.",
	))
}

func (g *gen) maybePaste() string {
	if g.chance(0.35) {
		return "\n\nThe alert that fired:\n" + g.paste()
	}
	return ""
}

func modNames() []string {
	out := make([]string, 0, len(ktModules))
	out = append(out, "common")
	for _, m := range ktModules {
		if m.name != "common" {
			out = append(out, m.name)
		}
	}
	return out
}

// modsUpTo lists the projects built for m's tests: common, then m.
func (g *gen) modsUpTo(m string) []string {
	if m == "common" {
		return []string{"common"}
	}
	if m == "api" {
		return []string{"common", "ledger", "invoicing", "payments", "api"}
	}
	return []string{"common", m}
}

// ktEdit returns an edit of f; the new text holds a file_written
// identifier.
func (g *gen) ktEdit(f *srcFile) (string, string) {
	noun := lowerFirst(strings.TrimSuffix(f.name, suffixOf(f.name)))
	switch g.r.IntN(4) {
	case 0:
		return "check(period.isOpen) { \"period ${period.key} is closed\" }",
			fmt.Sprintf("if (!period.isOpen) {\n            throw PeriodClosedException(%q, period.key)\n        }", g.fileID("code", g.mkCode()))
	case 1:
		return fmt.Sprintf("val key = IdempotencyKey.of(%s.tenantId, %s.externalRef)", noun, noun),
			fmt.Sprintf("val key = IdempotencyKey.of(%s.tenantId, %s.externalRef, scope = %q)", noun, noun, g.fileID("key", g.mkKey("idem")))
	case 2:
		return "    private val meters: MeterRegistry,",
			fmt.Sprintf("    private val meters: MeterRegistry,\n    @Value(\"\\${%s:15m}\") private val graceWindow: Duration,", g.fileID("key", g.mkKey("quire")))
	default:
		return "val rounded = amount.setScale(2, RoundingMode.HALF_EVEN)",
			fmt.Sprintf("val rounded = amount.setScale(currency.minorUnits, RoundingMode.HALF_EVEN)\n        meters.counter(%q).increment()", g.fileID("key", g.mkKey("billing.metrics")))
	}
}

func (g *gen) ktRegressionTest(f *srcFile, path string) string {
	cls := strings.TrimSuffix(path[strings.LastIndexByte(path, '/')+1:], ".kt")
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\nimport org.junit.jupiter.api.Assertions.assertEquals\nimport org.junit.jupiter.api.Test\n\n", f.pkg)
	fmt.Fprintf(&b, "// Fixture mirrors the tenant from the October close (%s).\nclass %s {\n", g.fileID("id", g.mkID("tn")), cls)
	fmt.Fprintf(&b, "    private val subject = %s(FakeRepository(), FixedTenantClock(\"2024-10-31T23:59:00Z\"), SimpleMeterRegistry())\n\n", f.name)
	for range g.between(2, 4) {
		name := strings.TrimSuffix(g.fill(g.mkTestName()), "()")
		fmt.Fprintf(&b, "    @Test\n    fun `%s`() {\n        val result = subject.%s(fixtures.%s())\n        assertEquals(%d, result.size)\n    }\n\n", name, f.funcs[0], pick(g, "creditNote", "invoice", "refund", "payout"), g.between(1, 4))
	}
	b.WriteString("}\n")
	return b.String()
}

// taskKotlinCompile: a rename across projects leaves a compile error.
func (g *gen) taskKotlinCompile() {
	f := g.w.subject(g, g.w.kt)
	fn := f.funcs[0]
	newName := fn + pick(g, "At", "For", "Checked", "InPeriod")
	g.user(fmt.Sprintf(pick(g,
		"Small refactor please: rename %s.%s to %s everywhere in billing/. Keep a @Deprecated alias with the old name so the reporting jar built against %s still links, and stay on the current Kotlin version. Ticket %s.",
		"Could you rename %[1]s.%[2]s to %[3]s across the Gradle projects? Keep the old name as a deprecated alias for now (reporting pins %[4]s). This is %[5]s.",
	), f.name, fn, newName, g.userID("version", g.mkVersion()), g.userID("id", g.mkTicket())))
	users := g.w.others(g, g.w.kt, f, g.between(3, 5))
	g.round("Finding the call sites.", shell(fmt.Sprintf("rg -n '\\.%s\\(' billing/ --type kotlin", fn), func(o *out) { g.rg(o, append(users, f), g.scale(g.between(10, 20))) }))
	removal := g.fileID("version", g.mkVersion())
	calls := []tcall{replaceCall(f.abs(), fmt.Sprintf("    fun %s(", fn), fmt.Sprintf("    @Deprecated(\"use %s; removed in %s\", ReplaceWith(\"%s(this)\"))\n    fun %s(%s: Any) = %s(%s)\n\n    fun %s(", newName, removal, newName, fn, "arg", newName, "arg", newName))}
	for _, u := range users[:len(users)-1] {
		calls = append(calls, replaceCall(u.abs(), "."+fn+"(", "."+newName+"("))
	}
	g.round("Renaming at the definition, with a deprecated alias, and at the call sites.", calls...)
	missed := users[len(users)-1]
	g.round("Compiling everything.", shell("cd billing && ./gradlew compileKotlin compileTestKotlin", func(o *out) {
		o.exit = 1
		g.gradle(o, gradleSpec{mods: modNames(), failMod: missed.unit, compFail: func(o *out) { g.ktCompileErrors(o, missed) }})
	}))
	g.round("One file still fails to compile; reading it.", g.readOf(missed))
	g.round("Updating it.", replaceCall(missed.abs(), "."+fn+"(", "."+newName+"("))
	g.round("Building again with tests.", shell("cd billing && ./gradlew build", func(o *out) {
		g.gradle(o, gradleSpec{mods: modNames(), tests: modNames()})
	}))
	br := g.branch("refactor", "rename-"+strings.ToLower(fn))
	changed := []string{f.path}
	for _, u := range users {
		changed = append(changed, u.path)
	}
	g.round("Committing the rename.", g.commit(br, fmt.Sprintf("billing: rename %s.%s to %s", f.name, fn, newName), changed, nil))
	g.say("Renamed, with a deprecated alias under the old name so existing binaries keep linking. One call site was missed by the search (a different receiver type), the compiler caught it; the full build and tests pass. Kotlin version unchanged.")
}

// taskRails: an RSpec failure in the admin app, or an order-dependent
// flake found with --bisect.
func (g *gen) taskRails() {
	f := g.w.subject(g, g.w.rb)
	flaky := g.chance(0.35)
	kind := "expect"
	if strings.Contains(f.path, "/controllers/") {
		kind = "status"
	} else {
		kind = pick(g, "expect", "unique", "nil")
	}
	specs := g.w.others(g, g.w.rb, f, g.scale(4))
	specs = append(specs, f)
	if flaky {
		g.user(fmt.Sprintf("The admin CI goes red about one run in five with a failure in %s's specs, and green on retry (%s). Find the cause instead of retrying; don't touch db/migrate. CI run: %s",
			f.name, g.userID("id", g.mkTicket()), g.userID("url", g.mkURLNum("https://ci.quire.internal/quire/quire/-/pipelines/", 6, ""))))
		seed := g.between(1000, 65000)
		g.round("Running the whole admin suite to see it fail.", shell("cd admin && bundle exec rspec --format documentation", func(o *out) {
			g.rspec(o, rspecSpec{files: specs, failIn: f, kind: kind, seed: seed, doc: true})
		}))
		g.round("Running the failing file alone.", shell("cd admin && bundle exec rspec "+strings.TrimPrefix(f.test.path, "admin/")+" --format documentation", func(o *out) {
			g.rspec(o, rspecSpec{files: []*srcFile{f}, doc: true, seed: g.between(1000, 65000)})
		}))
		other := specs[0]
		g.round("It passes alone, so it depends on order. Bisecting with the failing seed.", shell(fmt.Sprintf("cd admin && bundle exec rspec --seed %d --bisect", seed), func(o *out) {
			g.bisect(o, seed, other, f)
		}))
		g.round("Reading the two files involved.", g.readOf(other.test), g.readOf(f.test))
		old := "    before { travel_to Time.zone.parse(\"2024-10-31 23:59\") }"
		g.round("The other spec changes shared state and never restores it. Restoring it after each example there.",
			replaceCall(other.test.abs(), old, old+fmt.Sprintf("\n    after { travel_back; Current.reset; Rails.cache.delete(%q) }", g.fileID("key", g.mkKey("admin.cache")))))
		g.round("Re-running the reproduction seed and then the suite.", shell(fmt.Sprintf("cd admin && bundle exec rspec --seed %d", seed), func(o *out) {
			g.rspec(o, rspecSpec{files: specs, seed: seed})
		}), shell("cd admin && bundle exec rspec --profile 5", func(o *out) {
			g.rspec(o, rspecSpec{files: specs, seed: g.between(1000, 65000)})
		}))
		br := g.branch("fix", "admin-spec-order-"+f.unit)
		g.round("Committing.", g.commit(br, "admin specs: restore shared state after each example", []string{other.test.path}, nil))
		g.say("The flake was order-dependent: another spec left shared state behind (a frozen clock and a cached value), and the failing spec only broke when it ran after it. That spec now restores the state; the reproduction seed and the full suite pass. No migrations touched.")
		return
	}
	g.user(fmt.Sprintf(pick(g,
		"Support ticket %s: in the admin, %s misbehaves for customer %s (details in %s). Please reproduce it with a spec and fix it. Don't touch db/migrate, and the JSON of the admin endpoints must stay the same.",
		"%s — %s in the admin app is wrong for customer %s, see %s. Write a failing spec first, then fix. No schema changes, keep the JSON shape.",
	), g.userID("id", g.mkTicket()), f.name, g.userID("id", g.mkID("cus")), g.userID("url", g.mkURLNum("https://support.quire.io/agent/tickets/", 5, ""))))
	g.round("Looking at the code and its spec.", g.readOf(f), g.readOf(f.test))
	g.round("Running its spec with the neighbouring ones.", shell("cd admin && bundle exec rspec "+strings.TrimPrefix(dir(f.test.path), "admin/")+" --format documentation", func(o *out) {
		g.rspec(o, rspecSpec{files: specs, failIn: f, kind: kind, doc: true, seed: g.between(1000, 65000)})
	}))
	if kind == "status" || kind == "unique" {
		g.round("Checking the development log for the request.", shell("cd admin && tail -n 120 log/test.log", func(o *out) { g.railsLog(o, f, true) }))
	}
	var newSpec string
	edit := replaceCall(f.abs(), strings.NewReplacer("{v}", f.unit, "{T}", camel(f.unit)).Replace(strings.TrimSpace(pick(g, rbStmts[:6]...))), g.rbFix())
	if g.chance(0.85) {
		newSpec = g.fileID("path", func() string {
			return dir(f.test.path) + "/" + f.unit + "_" + pick(g, "window", "currency", "approval", "export", "regression", "tenant") + "_spec.rb"
		})
		g.round("Fixing the model and adding a spec for the reported case.", edit, writeCall(root+"/"+newSpec, g.rspecRegression(f)))
	} else {
		g.round("Fixing it.", edit)
	}
	g.round("Re-running, with the neighbouring specs.", shell("cd admin && bundle exec rspec spec/models spec/requests --format documentation --profile 5", func(o *out) {
		g.rspec(o, rspecSpec{files: specs, doc: true, seed: g.between(1000, 65000)})
	}))
	var created []string
	if newSpec != "" {
		created = []string{newSpec}
	}
	br := g.branch("fix", "admin-"+f.unit)
	g.round("Committing.", g.status([]string{f.path}, created), g.commit(br, "admin: fix "+f.unit+" handling for the reported case", []string{f.path}, created))
	if g.chance(0.5) {
		g.round("Pushing the branch for review.", g.push(br))
	}
	g.say("Fixed in the model; the spec reproduced it first and passes now, together with the model and request specs around it. No migration or JSON change.")
}

func (g *gen) rbFix() string {
	switch g.r.IntN(4) {
	case 0:
		return fmt.Sprintf("return false if captured_at.blank? || refunded_cents >= amount_cents\n    Rails.logger.info(%q)", "refund window: "+g.fileID("code", g.mkCode()))
	case 1:
		return fmt.Sprintf("raise Refunds::WindowClosed, %q unless window_open?", g.fileID("code", g.mkCode()))
	case 2:
		return fmt.Sprintf("Money.new(amount_cents || 0, currency.presence || tenant.currency).format # %s", g.fileID("key", g.mkKey("admin.money")))
	default:
		return fmt.Sprintf("update!(status: :approved, approved_at: Time.current, approved_by: Current.user, idempotency_key: %q)", g.fileID("key", g.mkKey("admin.approve")))
	}
}

func (g *gen) rspecRegression(f *srcFile) string {
	return fmt.Sprintf("# frozen_string_literal: true\n\nrequire \"rails_helper\"\n\nRSpec.describe %s do\n  let(:tenant) { create(:tenant, external_id: %q) }\n  let(:%s) { create(:%s, tenant:) }\n\n  it %q do\n    expect(%s.%s).to be(false)\n  end\nend\n",
		f.name, g.fileID("id", g.mkID("tn")), f.unit, f.unit, pick(g, rspecIts...), f.unit, strings.TrimRight(f.funcs[0], "?!"))
}

// bisect writes an rspec --bisect run that finds the polluting spec.
func (g *gen) bisect(o *out, seed int, other, f *srcFile) {
	n := g.scale(g.between(80, 130))
	o.addf("Bisect started using options: \"--seed %d\"", seed)
	o.addf("Running suite to find failures... (%d.%d seconds)", g.between(10, 40), g.r.IntN(10))
	o.addf("Starting bisect with 1 failing example and %d non-failing examples.", n)
	o.add("Checking that failure(s) are order-dependent... failure appears to be order-dependent")
	o.add("")
	lo, hi := 1, n
	for round := 1; hi > lo; round++ {
		mid := (lo + hi) / 2
		o.addf("Round %d: bisecting over non-failing examples %d-%d .. ignoring examples %d-%d (%d.%d seconds)", round, lo, hi, mid+1, hi, g.between(2, 20), g.r.IntN(10))
		hi = mid
	}
	o.addf("Bisect complete! Reduced necessary non-failing examples from %d to 1 in %d.%d seconds.", n, g.between(40, 200), g.r.IntN(10))
	o.add("")
	o.add("The minimal reproduction command is:")
	a := g.passID("test", func() string {
		return fmt.Sprintf("./%s[1:%d:%d]", strings.TrimPrefix(other.test.path, "admin/"), g.between(1, 6), g.between(1, 6))
	})
	b := g.passID("test", func() string {
		return fmt.Sprintf("./%s[1:%d:%d]", strings.TrimPrefix(f.test.path, "admin/"), g.between(1, 6), g.between(1, 6))
	})
	o.addf("  rspec '%s' '%s' --seed %d", a, b, seed)
}

// railsLog writes a Rails log tail; with fail, an exception report on
// error lines.
func (g *gen) railsLog(o *out, f *srcFile, fail bool) {
	for range g.scale(g.between(15, 30)) {
		rid := g.fill(g.mkUUID())
		o.addf("[%s] Started %s \"/admin/%ss/%d\" for 127.0.0.1 at %s", rid, pick(g, "GET", "PATCH"), f.unit, g.between(1, 9999), g.now.Add(-g.randDur()).Format("2006-01-02 15:04:05 +0000"))
		o.addf("[%s]   %sLoad (%.1fms)  SELECT `%ss`.* FROM `%ss` WHERE `%ss`.`id` = %d LIMIT 1", rid, f.name, 0.2+g.r.Float64()*3, f.unit, f.unit, f.unit, g.between(1, 9999))
		o.addf("[%s] Completed 200 OK in %dms (Views: %.1fms | ActiveRecord: %.1fms (%d queries, 0 cached) | GC: %.1fms)", rid, g.between(8, 200), g.r.Float64()*40, g.r.Float64()*20, g.between(1, 9), g.r.Float64()*3)
	}
	if !fail {
		return
	}
	rid := g.errID("uuid", g.mkUUID())
	o.errf("[%s] Started POST \"/admin/%ss/%d/approve\" for 127.0.0.1 at %s", rid, f.unit, g.between(1, 9999), g.now.Format("2006-01-02 15:04:05 +0000"))
	o.errf("[%s] Completed 500 Internal Server Error in %dms (ActiveRecord: %.1fms (%d queries, 0 cached) | GC: 0.0ms)", rid, g.between(10, 90), g.r.Float64()*10, g.between(2, 8))
	o.errf("[%s] ActiveRecord::RecordNotUnique (Mysql2::Error: Duplicate entry '%s' for key '%ss.index_%ss_on_external_ref'):", rid, g.errID("id", g.mkID("ext")), f.unit, f.unit)
	o.err(fmt.Sprintf("[%s]   ", rid))
	o.errf("[%s] app/models/%s:in 'block in %s#%s'", rid, g.errID("site", g.mkSite(f.unit+".rb", 10, 200)), f.name, f.funcs[0])
	o.errf("[%s] app/controllers/admin/%s:in 'Admin::%ssController#approve'", rid, g.errID("site", g.mkSite(f.unit+"s_controller.rb", 10, 120)), camel(f.unit))
}

// taskCpp: the pricing library fails under AddressSanitizer, an
// assertion, or a compile error after a requested change.
func (g *gen) taskCpp() {
	f := g.w.subject(g, g.w.cpp)
	mode := pick(g, "asan", "asan", "assert", "compile")
	ci := g.userID("url", g.mkURLNum("https://ci.quire.internal/quire/quire/-/jobs/", 7, ""))
	switch mode {
	case "compile":
		g.user(fmt.Sprintf("In pricing/, %s should take a Ratio instead of a double everywhere (floating point keeps biting us, see %s). Stay on C++17 and don't change the public headers other than %s.h. CI job for reference: %s", f.name, g.userID("id", g.mkTicket()), f.unit, ci))
	case "assert":
		g.user(fmt.Sprintf(pick(g,
			"A pricing test fails in CI since the last merge (%s, job %s). Please fix the code, not the test, unless the test is wrong. No ABI changes to the public headers; C++17.",
			"pricing/ has a red test in CI: %[2]s (tracked as %[1]s). Fix it; keep the public headers' ABI and stay on C++17.",
		), g.userID("id", g.mkTicket()), ci))
	default:
		g.user(fmt.Sprintf(pick(g,
			"The pricing tests crash in the ASan job since last night: %s. Please find and fix it. Keep the library ABI (no new members or virtuals in public headers) and stay on C++17.",
			"pricing/ is red in CI (%s) in the sanitizer build. Can you fix it? No ABI changes to the public headers, C++17 only.",
		), ci))
	}
	g.round("Configuring the sanitizer build.", shell("cd pricing && cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPRICING_SANITIZE='address;undefined'", func(o *out) {
		g.cmakeConfigure(o, "build-asan", true)
	}))
	if mode == "compile" {
		g.round("Reading the unit and its header.", g.readOf(f), readCall(root+"/pricing/include/pricing/"+f.unit+".h", func(o *out) { g.readFile(g.header(f), o) }))
		g.round("Switching the signature in the header and the source.",
			replaceCall(root+"/pricing/include/pricing/"+f.unit+".h", "const Money& amount", "const Money& amount, Ratio ratio"),
			replaceCall(f.abs(), "auto scaled = static_cast<__int128>(value) * ratio.num / ratio.den;", fmt.Sprintf("auto scaled = checked_scale(value, ratio, %q);", g.fileID("code", g.mkCode()))))
		g.round("Building, verbosely to see the flags.", shell("cmake --build pricing/build-asan -j2 -- VERBOSE=1", func(o *out) { g.cmakeBuild(o, "build-asan", f, true) }))
		g.round("A caller still passes a double. Fixing that call.", replaceCall(f.abs(), "return base.scaled(ratio);", "return base.scaled(Ratio::from_basis_points(bps));"))
		g.round("Building again.", shell("cmake --build pricing/build-asan -j2", func(o *out) { g.cmakeBuild(o, "build-asan", nil, false) }))
		g.round("Running the tests.", shell("ctest --test-dir pricing/build-asan --output-on-failure -j2", func(o *out) { g.ctest(o, "build-asan", nil) }))
	} else {
		g.round("Building.", shell("cmake --build pricing/build-asan -j2", func(o *out) { g.cmakeBuild(o, "build-asan", nil, false) }))
		g.round("Running the tests.", shell("ctest --test-dir pricing/build-asan --output-on-failure -j2", func(o *out) {
			g.ctest(o, "build-asan", &ctestFail{unit: f, asan: mode == "asan"})
		}))
		g.round("Reading the code the report points at.", g.readOf(f), readCall(root+"/pricing/include/pricing/"+f.unit+".h", func(o *out) { g.readFile(g.header(f), o) }), g.readOf(f.test))
		if mode == "asan" {
			g.round("An entry is used after the eviction path freed it: the reference outlives the erase. Copying the value out before evicting.",
				replaceCall(f.abs(), "entries_.erase(oldest);", fmt.Sprintf("Rate copy = it->second.rate;  // see %s\n  entries_.erase(oldest);", g.fileID("code", g.mkCode()))))
		} else {
			g.round("Negative ties round the wrong way. Fixing the rounding of the remainder.",
				replaceCall(f.abs(), "return round_half_even(scaled, kScale);", fmt.Sprintf("return round_half_even(scaled, kScale, Tie::kTowardEven);  // %s", g.fileID("key", g.mkKey("pricing.rounding")))))
		}
		reg := g.fileID("path", func() string {
			return "pricing/tests/" + f.unit + "_" + pick(g, "regression", "evict", "ties", "crash", "lifetime") + "_test.cc"
		})
		g.round("Adding a regression test for the case and registering it.",
			writeCall(root+"/"+reg, g.gtestRegression(f)),
			replaceCall(root+"/pricing/tests/CMakeLists.txt", "add_executable(pricing_tests", "add_executable(pricing_tests\n  "+reg[len("pricing/tests/"):]))
		g.round("Rebuilding and re-running the tests.", shell("cmake --build pricing/build-asan -j2 && ctest --test-dir pricing/build-asan -j2", func(o *out) {
			g.cmakeBuild(o, "build-asan", nil, false)
			g.ctest(o, "build-asan", nil)
		}))
	}
	if g.chance(0.5) {
		g.round("Also checking the release build.", shell("cmake -S pricing -B pricing/build -DCMAKE_BUILD_TYPE=Release && cmake --build pricing/build -j2 && ctest --test-dir pricing/build -j2", func(o *out) {
			g.cmakeConfigure(o, "build", false)
			g.cmakeBuild(o, "build", nil, false)
			g.ctest(o, "build", nil)
		}))
	}
	br := g.branch("fix", "pricing-"+strings.ReplaceAll(f.unit, "_", "-"))
	g.round("Committing.", g.commit(br, "pricing: fix "+f.unit+" under sanitizers", []string{f.path}, nil))
	g.say("Fixed; the sanitizer and release builds pass all tests. No public header gained members or virtual functions, and the code stays C++17.")
}

func (g *gen) gtestRegression(f *srcFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#include \"pricing/%s.h\"\n\n#include <gtest/gtest.h>\n\nnamespace pricing {\nnamespace {\n\n// Guards the failure first seen under AddressSanitizer (%s).\n", f.unit, g.fileID("code", g.mkCode()))
	for range g.between(2, 3) {
		name := strings.TrimPrefix(g.fill(g.mkGtest(f.pkg)), f.pkg+".")
		fmt.Fprintf(&b, "TEST(%s, Regression%s) {\n  %s subject;\n  EXPECT_NO_FATAL_FAILURE(subject.%s(Money::from_minor(-250, \"EUR\")));\n}\n\n", f.pkg, name, f.name, f.funcs[0])
	}
	b.WriteString("}  // namespace\n}  // namespace pricing\n")
	return b.String()
}

func (g *gen) header(f *srcFile) *srcFile {
	for _, h := range g.w.all {
		if h.lang == "header" && h.unit == f.unit {
			return h
		}
	}
	return f
}

// taskElixir: a flaky notifier test, or a signature mismatch.
func (g *gen) taskElixir() {
	timeout := g.chance(0.6)
	var fs []*srcFile
	for _, f := range g.w.ex {
		if timeout == (f.unit == "rate_limiter" || f.unit == "dispatcher") && (timeout || f.unit == "webhook_signer" || f.unit == "payload_builder" || f.unit == "secret_store") {
			fs = append(fs, f)
		}
	}
	f := g.w.subject(g, fs)
	if timeout {
		g.user(fmt.Sprintf("notifier's tests are flaky in CI, maybe one run in ten (%s). Please find the flake rather than adding retries. Don't change the webhook signature format — partners verify it.", g.userID("url", g.mkURLNum("https://ci.quire.internal/quire/quire/-/pipelines/", 6, ""))))
		seed := g.between(1000, 999999)
		g.round("Running the suite a first time, with the test names.", shell("cd notifier && mix test --trace", func(o *out) { g.mix(o, mixSpec{seed: seed, trace: true}) }))
		g.round("Green this time. Running it in a loop until it fails.", shell("cd notifier && mix test --repeat-until-failure 50", func(o *out) {
			o.exit = 0
			g.mix(o, mixSpec{failIn: f, timeout: true, seed: seed + 1, repeat: true})
		}))
	} else {
		g.user(fmt.Sprintf("A partner reports our webhook signatures stopped verifying after the key rotation (%s, partner endpoint %s). Check notifier's signing. The format itself must not change.",
			g.userID("id", g.mkTicket()), g.userID("url", g.mkURL("hooks.partner-example.com", "quire/webhooks", "v1/quire"))))
		g.round("Running the notifier tests with their names.", shell("cd notifier && mix test --trace", func(o *out) { g.mix(o, mixSpec{failIn: f, seed: g.between(1000, 999999), trace: true}) }))
	}
	g.round("Reading the module and its test.", g.readOf(f), g.readOf(f.test))
	if timeout {
		g.round("The rate limiter is shared across async tests, so one test can drain another's bucket and the call times out. Giving each test its own limiter.",
			replaceCall(f.abs(), "GenServer.call(__MODULE__, {:acquire, key}, 5_000)", fmt.Sprintf("GenServer.call(opts[:limiter] || __MODULE__, {:acquire, key}, %q)", g.fileID("key", g.mkKey("notifier.limiter")))))
	} else {
		g.round("The signature is computed with the previous key after rotation. Reading the key from the store per call.",
			replaceCall(f.abs(), ":crypto.mac(:hmac, :sha256, secret, \"#{ts}.#{body}\") |> Base.encode16(case: :lower)", fmt.Sprintf("secret = SecretStore.current(%q)\n    :crypto.mac(:hmac, :sha256, secret, \"#{ts}.#{body}\") |> Base.encode16(case: :lower)", g.fileID("id", g.mkID("whkid")))))
	}
	if !timeout {
		path := g.fileID("path", func() string {
			return "notifier/test/notifier/" + f.unit + "_" + pick(g, "rotation", "key_rotation", "rotated_secret") + "_test.exs"
		})
		g.round("Adding a test that signs across a key rotation.", writeCall(root+"/"+path, fmt.Sprintf("defmodule %sRotationTest do\n  use Notifier.DataCase, async: false\n\n  test \"signs with the key that is current at call time\" do\n    SecretStore.put(%q, \"old\")\n    sig1 = %s.%s(\"{}\", [])\n    SecretStore.rotate(\"new\")\n    refute %s.%s(\"{}\", []) == sig1\n  end\nend\n",
			f.name, g.fileID("id", g.mkID("whkid")), f.name, f.funcs[0], f.name, f.funcs[0])))
	}
	if timeout {
		path := g.fileID("path", func() string {
			return "notifier/test/notifier/" + f.unit + "_" + pick(g, "isolation", "concurrency", "async", "bucket") + "_test.exs"
		})
		g.round("Adding a test that runs two limiters side by side.", writeCall(root+"/"+path, fmt.Sprintf("defmodule %sIsolationTest do\n  use ExUnit.Case, async: true\n\n  test \"limiters started per test do not share tokens\" do\n    a = start_supervised!({Notifier.RateLimiter, name: :a, capacity: 1})\n    b = start_supervised!({Notifier.RateLimiter, name: :b, capacity: 1})\n    assert :ok = Notifier.RateLimiter.acquire(a, \"ep_one\")\n    assert :ok = Notifier.RateLimiter.acquire(b, \"ep_one\")\n  end\nend\n", f.name)))
	}
	g.round("Looping the suite again.", shell("cd notifier && mix test --repeat-until-failure 50", func(o *out) { g.mix(o, mixSpec{seed: g.between(1000, 999999), repeat: true}) }))
	if !timeout {
		g.round("And once with the test names, to see the signer tests ran.", shell("cd notifier && mix test --trace", func(o *out) { g.mix(o, mixSpec{seed: g.between(1000, 999999), trace: true}) }))
	}
	br := g.branch("fix", "notifier-"+strings.ReplaceAll(f.unit, "_", "-"))
	g.round("Committing.", g.commit(br, "notifier: fix "+f.unit+" in tests and runtime", []string{f.path}, nil))
	g.say("Fixed. The suite passed 50 runs in a row afterwards. The webhook signature format is unchanged.")
}

// taskDeploy: a staging rollout fails its health check; the database
// it points at moved.
func (g *gen) taskDeploy() {
	host := pick(g, "stg-billing-01", "stg-billing-02", "stg-billing-03")
	inc := g.userID("id", g.mkTicket())
	g.user(fmt.Sprintf(pick(g,
		"The staging rollout of billing-api failed its health check last night on %s (%s). Get it healthy again. Don't restart or reconfigure MySQL itself, and keep the Hikari pool at 10.",
		"billing-api on %s is down after the rollout, %s has the pager notes. Please fix it without touching the database servers; pool size stays 10.",
	), host, inc))
	pid := g.between(20000, 99999)
	old := g.errID("hostport", g.mkDBHost())
	oldHost, oldPort, _ := strings.Cut(old, ":")
	g.round("Checking the service.", shell(fmt.Sprintf("ssh %s 'systemctl status quire-billing --no-pager -n 12'", host), func(o *out) {
		g.systemctlFailed(o, host, pid, func(pfx string) {
			o.err(pfx + "com.mysql.cj.jdbc.exceptions.CommunicationsException: Communications link failure")
			o.err(pfx + "The last packet sent successfully to the server was 0 milliseconds ago. The driver has not received any packets from the server.")
			for _, fr := range hikariFrames[:4] {
				o.err(pfx + "\t" + fr)
			}
		})
	}))
	cfgSite := g.errID("site", g.mkSite("DataSourceConfig.kt", 20, 90))
	mainSite := g.errID("site", g.mkSite("BillingApiApplication.kt", 8, 30))
	g.round("Reading the journal of the last starts.", shell(fmt.Sprintf("ssh %s 'journalctl -u quire-billing -n 600 --no-pager'", host), func(o *out) {
		attempts := g.between(2, 4)
		for a := range attempts {
			p := pid
			if a < attempts-1 {
				p = g.between(20000, 99999)
			}
			at := g.now.Add(-time.Duration(60*(attempts-a)) * time.Second)
			pfx := fmt.Sprintf("%s %s java[%d]: ", at.Add(time.Second).Format("Jan 02 15:04:05"), host, p)
			o.addf("%s %s systemd[1]: Started quire-billing.service - Quire billing API.", at.Format("Jan 02 15:04:05"), host)
			sys := fmt.Sprintf("%s %s systemd[1]: ", at.Add(9*time.Second).Format("Jan 02 15:04:05"), host)
			g.springBanner(o, pfx, p, g.fill(g.mkVersion()), at.Add(2*time.Second))
			ts := at.Add(7 * time.Second).Format("2006-01-02T15:04:05.000Z")
			o.errf("%s%s ERROR %d --- [billing-api] [           main] com.zaxxer.hikari.pool.HikariPool        : HikariPool-1 - Exception during pool initialization.", pfx, ts, p)
			frames := append(append([]string{}, hikariFrames...),
				"com.quire.api.config.DataSourceConfig.dataSource("+cfgSite+") ~[main/:na]",
				"org.springframework.beans.factory.support.SimpleInstantiationStrategy.instantiate(SimpleInstantiationStrategy.java:146) ~[spring-beans-6.1.14.jar!/:6.1.14]",
				"org.springframework.boot.SpringApplication.run(SpringApplication.java:335) ~[spring-boot-3.3.5.jar!/:3.3.5]",
				"com.quire.api.BillingApiApplicationKt.main("+mainSite+") ~[main/:na]")
			g.jvmTrace(o, pfx, "com.mysql.cj.jdbc.exceptions.CommunicationsException: Communications link failure", frames,
				append([]string{"com.mysql.cj.exceptions.CJCommunicationsException: Communications link failure"}, "com.mysql.cj.protocol.a.NativeProtocol.connect(NativeProtocol.java:"+fmt.Sprint(g.between(100, 999))+") ~[mysql-connector-j-8.4.0.jar!/:8.4.0]"),
				append([]string{"java.net.ConnectException: Connection refused"}, socketFrames...))
			o.errf("%s%s  WARN %d --- [billing-api] [           main] ConfigServletWebServerApplicationContext : Exception encountered during context initialization - cancelling refresh attempt: org.springframework.beans.factory.BeanCreationException: Error creating bean with name 'flywayInitializer' defined in class path resource [org/springframework/boot/autoconfigure/flyway/FlywayAutoConfiguration$FlywayConfiguration.class]: Failed to initialize dependency 'dataSource'", pfx, ts, p)
			o.errf("%s%s ERROR %d --- [billing-api] [           main] o.s.boot.SpringApplication               : Application run failed", pfx, ts, p)
			o.errf("%squire-billing.service: Main process exited, code=exited, status=1/FAILURE", sys)
			o.errf("%squire-billing.service: Failed with result 'exit-code'.", sys)
			if a < attempts-1 {
				o.addf("%squire-billing.service: Scheduled restart job, restart counter is at %d.", sys, a+1)
			}
		}
	}))
	g.round("The database host refuses connections. Checking MySQL from the host and the health endpoint.",
		shell(fmt.Sprintf("ssh %s 'mysql --defaults-extra-file=/etc/quire/mysql-ro.cnf -e \"SELECT 1\"'", host), func(o *out) {
			o.errf("ERROR 2003 (HY000): Can't connect to MySQL server on '%s' (111)", old)
			g.errOnce("sql_state", "ERROR 2003 (HY000)")
			o.exit = 1
		}),
		shell(fmt.Sprintf("curl -fsS http://%s:8081/actuator/health", host), func(o *out) {
			o.errf("curl: (7) Failed to connect to %s port 8081 after %d ms: Couldn't connect to server", host, g.between(1, 9))
			o.exit = 7
		}))
	envFile := root + "/deploy/env/billing.staging.env"
	inv := "deploy/inventory/staging.ini"
	g.fill(func() string { return oldHost })
	newHost := g.fileID("host", func() string { h, _, _ := strings.Cut(g.mkDBHost()(), ":"); return h })
	newPort := pick(g, "3306", "3307", "3309")
	g.round("Reading the staging env file and the inventory.", readCall(envFile, func(o *out) {
		for i, l := range []string{"SPRING_PROFILES_ACTIVE=staging", "BILLING_DB_HOST=" + oldHost, "BILLING_DB_PORT=" + oldPort, "BILLING_DB_USER=billing_app", "BILLING_DB_PASSWORD=${sops:billing_db_password}", "BILLING_DB_POOL_SIZE=10", "REDIS_HOST=redis-ratelimit", "REDIS_PORT=6380", "WEBHOOK_SIGNING_SECRET=${sops:webhook_signing_secret}", "JAVA_TOOL_OPTIONS=-XX:+UseG1GC -XX:MaxRAMPercentage=70"} {
			o.addf("%6d\t%s", i+1, l)
		}
	}), readCall(root+"/"+inv, func(o *out) { g.inventory(o, oldHost, newHost, newPort) }))
	g.say("The service points at the old database primary, which refuses connections; the inventory lists a different primary for billing since the failover. Should I point staging at the new primary, or is a DBA bringing the old one back?")
	g.user(fmt.Sprintf(pick(g,
		"Point it at the new primary. The failover was intentional, see %s. Change only the URL, nothing else in the file.",
		"Yes, the new one. DBA notes are at %s. Only the datasource URL please.",
	), g.userID("url", g.mkURLNum("https://wiki.quire.internal/spaces/DBA/pages/", 8, "/Billing+primary+failover"))))
	g.round("Updating the database host and port only.", replaceCall(envFile, "BILLING_DB_HOST="+oldHost+"\nBILLING_DB_PORT="+oldPort, "BILLING_DB_HOST="+newHost+"\nBILLING_DB_PORT="+newPort))
	version := g.passID("version", g.mkVersion())
	g.round("Rolling out the config and restarting.", shell(fmt.Sprintf("./deploy/rollout.sh staging billing-api --host %s --config-only", host), func(o *out) {
		g.rollout(o, host, version)
	}))
	g.round("Checking health.", requestCall("GET", fmt.Sprintf("http://%s:8081/actuator/health", host), "", func(o *out) {
		g.httpHead(o, "200 OK", false)
		o.add(`{"status":"UP","components":{"db":{"status":"UP","details":{"database":"MySQL","validationQuery":"isValid()"}},"diskSpace":{"status":"UP"},"livenessState":{"status":"UP"},"ping":{"status":"UP"},"readinessState":{"status":"UP"},"redis":{"status":"UP","details":{"version":"7.2.6"}}}}`)
	}), shell(fmt.Sprintf("ssh %s 'journalctl -u quire-billing --since \"-3 min\" --no-pager'", host), func(o *out) {
		npid := g.between(20000, 99999)
		pfx := fmt.Sprintf("%s %s java[%d]: ", g.now.Add(-70*time.Second).Format("Jan 02 15:04:05"), host, npid)
		g.springBanner(o, pfx, npid, g.fill(g.mkVersion()), g.now.Add(-70*time.Second))
		ts := g.now.Add(-60 * time.Second).Format("2006-01-02T15:04:05.000Z")
		for _, l := range []string{"HikariPool-1 - Added connection com.mysql.cj.jdbc.ConnectionImpl@" + g.hex(8), "HikariPool-1 - Start completed.",
			"Flyway OSS Edition 10.20.1 by Redgate", "Current version of schema `billing`: 57", "Schema `billing` is up to date. No migration necessary.",
			"Exposing 3 endpoints beneath base path '/actuator'", "Tomcat started on port 8080 (http) with context path '/'",
			fmt.Sprintf("Started BillingApiApplicationKt in %d.%03d seconds (process running for %d.%03d)", g.between(7, 14), g.r.IntN(1000), g.between(8, 16), g.r.IntN(1000))} {
			o.addf("%s%s  INFO %d --- [billing-api] [           main] %-40s : %s", pfx, ts, npid, pick(g, "com.zaxxer.hikari.HikariDataSource", "o.f.core.internal.command.DbValidate", "o.s.b.a.e.web.EndpointLinksResolver", "c.q.api.BillingApiApplicationKt"), l)
		}
		g.springLog(o, pfx, g.scale(g.between(15, 30)), true, g.now.Add(-55*time.Second), npid)
	}), shell(fmt.Sprintf("ssh %s 'systemctl status quire-billing --no-pager -n 5'", host), func(o *out) {
		npid := g.between(20000, 99999)
		o.add("● quire-billing.service - Quire billing API")
		o.add("     Loaded: loaded (/etc/systemd/system/quire-billing.service; enabled; preset: enabled)")
		o.addf("     Active: active (running) since %s; %ds ago", g.now.Add(-30*time.Second).Format("Mon 2006-01-02 15:04:05 UTC"), g.between(20, 60))
		o.addf("   Main PID: %d (java)\n      Tasks: %d (limit: 9387)\n     Memory: %d.%dM (peak: %d.%dM)\n        CPU: %d.%03ds", npid, g.between(40, 70), g.between(400, 900), g.r.IntN(10), g.between(900, 1200), g.r.IntN(10), g.between(20, 40), g.r.IntN(1000))
		o.addf("     CGroup: /system.slice/quire-billing.service\n             └─%d /usr/bin/java -Xms512m -Xmx2g -jar /opt/quire/billing-api.jar --spring.profiles.active=staging", npid)
		o.add("")
		pfx := fmt.Sprintf("%s %s java[%d]: ", g.now.Add(-25*time.Second).Format("Jan 02 15:04:05"), host, npid)
		g.springLog(o, pfx, 5, true, g.now.Add(-25*time.Second), npid)
	}))
	note := g.fileID("path", func() string {
		return fmt.Sprintf("docs/incidents/%s-billing-staging-db-%s.md", g.now.Format("2006-01-02"), g.rs("abcdefghkmnpqrstuvwxyz", 4))
	})
	g.round("Writing a short incident note next to the others.", writeCall(root+"/"+note, "# billing-api staging outage after the database failover\n\n- Symptom: the service failed at startup (connection refused from the database), systemd kept restarting it.\n- Cause: the staging env file still named the previous primary.\n- Fix: database host and port in deploy/env/billing.staging.env; config-only rollout.\n- Not changed: pool size (10), the database servers.\n"))
	g.say("billing-api is healthy on staging again: it was pointing at the previous database primary after the failover. Only the database host and port changed in the staging env file; the pool size and the database servers are untouched. I left a short incident note in docs/incidents.")
}

// inventory prints an Ansible inventory, hosts by their short names.
func (g *gen) inventory(o *out, oldHost, newHost, newPort string) {
	short := func(h string) string { return h[:strings.IndexByte(h, '.')] }
	lines := []string{"[billing_db]",
		fmt.Sprintf("%s  ansible_host=10.42.1.%d  port=%s  role=primary      # since the failover", short(newHost), g.between(10, 250), newPort),
		fmt.Sprintf("%s  ansible_host=10.42.1.%d  port=3306  role=replica", short(g.fill(g.mkDBHost())), g.between(10, 250)),
		fmt.Sprintf("%s  ansible_host=10.42.1.%d  role=decommissioned", short(oldHost), g.between(10, 250)),
	}
	lines = append(lines, "", "[billing_api]", "stg-billing-01  ansible_host=10.42.0.17", "stg-billing-02  ansible_host=10.42.0.18", "stg-billing-03  ansible_host=10.42.0.19", "", "[redis]")
	for range 2 {
		lines = append(lines, fmt.Sprintf("redis-ratelimit-%d  port=%d", 1+g.r.IntN(9), pick(g, 6379, 6380)))
	}
	lines = append(lines, "", "[all:vars]", "ansible_user=deploy", "quire_env=staging")
	for i, l := range lines {
		o.addf("%6d\t%s", i+1, l)
	}
}

// rollout writes the rollout script's output.
func (g *gen) rollout(o *out, host, version string) {
	steps := []string{"==> staging/billing-api: config-only rollout to " + host,
		"--> rendering application-staging.yml (sops: 2 secrets decrypted)",
		"--> uploading to " + host + ":/opt/quire/config/application-staging.yml",
		"--> systemctl restart quire-billing",
		"--> waiting for readiness (http://localhost:8080/actuator/health/readiness)"}
	for _, s := range steps {
		o.add(s)
	}
	for i := range g.between(3, 8) {
		o.addf("    attempt %d: %s", i+1, pick(g, "connection refused", "503 OUT_OF_SERVICE", "503 OUT_OF_SERVICE"))
	}
	o.add("    attempt: 200 UP")
	o.addf("--> running: billing-api %s (build %s)", version, g.passID("hash", g.mkHash(12)))
	o.addf("==> done in %ds", g.between(30, 90))
}

// taskRefund500: an API call returns 500; the log shows the exception;
// the agent fixes, restarts and verifies.
func (g *gen) taskRefund500() {
	var f *srcFile
	for _, k := range g.r.Perm(len(g.w.kt)) {
		if g.w.kt[k].unit == "api" || g.w.kt[k].unit == "payments" {
			f = g.w.kt[k]
			break
		}
	}
	g.w.used[f] = true
	g.user(fmt.Sprintf(pick(g,
		"POST /v2/refunds returns 500 on my local stack for some invoices since I rebased. This is what the client got:\n%s\nCan you fix it? The v2 API contract must not change.",
		"Refund creation 500s locally (looks like the same thing as %[2]s). Client side:\n%[1]s\nKeep the v2 request/response shapes as they are.",
	), g.pasteClient(), g.userID("id", g.mkTicket())))
	inv := g.fill(g.mkID("inv"))
	amount := fmt.Sprintf("%d.%03d", g.between(5, 900), g.r.IntN(1000))
	body := fmt.Sprintf(`{"invoice_id":"%s","amount":{"value":"%s","currency":"EUR"},"reason":"duplicate"}`, inv, amount)
	var rid, trace string
	g.round("Reproducing it against the local server.", requestCall("POST", "http://localhost:8081/v2/refunds", body, func(o *out) {
		rid = g.httpHead(o, "500 Internal Server Error", true)
		trace = g.errorBody(o, "/v2/refunds", "Internal error while creating refund")
		o.exit = 1
	}))
	callee := g.w.others(g, g.w.kt, f, 1)[0]
	g.round("Reading the server log around that request.", shell("tail -n 250 ~/quire-dev/logs/billing-api.log", func(o *out) {
		n := g.scale(g.between(20, 45))
		t := g.springLog(o, "", n, false, g.now.Add(-time.Duration(n*5)*time.Second), 51214)
		ts := t.Add(time.Second).Format("2006-01-02T15:04:05.000Z")
		o.errf("%s ERROR 51214 --- [billing-api] [nio-8080-exec-3] o.a.c.c.C.[.[.[/].[dispatcherServlet]    : Servlet.service() for servlet [dispatcherServlet] in context with path [] threw exception [Request processing failed: java.lang.IllegalStateException: refund exceeds captured amount of %s] with root cause [requestId=%s traceId=%s]", ts, g.errID("id", g.mkID("cap")), rid, trace)
		frames := []string{g.ktFrame(f, true) + " ~[main/:na]", g.ktFrame(f, false) + " ~[main/:na]", g.ktFrame(callee, true) + " ~[main/:na]"}
		frames = append(frames, springFrames[:min(len(springFrames), g.scale(4))]...)
		g.jvmTrace(o, "", "java.lang.IllegalStateException: refund exceeds captured amount", frames,
			[]string{"java.lang.ArithmeticException: Rounding necessary", "java.base/java.math.BigDecimal.commonNeedIncrement(BigDecimal.java:5183) ~[na:na]", "java.base/java.math.BigDecimal.setScale(BigDecimal.java:3057) ~[na:na]", g.ktFrame(callee, true) + " ~[main/:na]"})
		g.springLog(o, "", g.scale(4), false, t.Add(2*time.Second), 51214)
	}))
	g.round("The amount is rescaled without a rounding mode. Reading the code path.", g.readOf(f), g.readOf(callee))
	old, repl := g.ktEdit(f)
	reg := g.fileID("path", func() string {
		return dir(f.test.path) + "/" + pick(g, "RefundRounding", "RefundScale", "RefundAmount", "RefundMinorUnits") + "RegressionTest.kt"
	})
	g.round("Fixing the scale handling; the request and response types stay as they are. Adding a regression test with an amount of three decimals.", replaceCall(f.abs(), old, repl), writeCall(root+"/"+reg, g.ktRegressionTest(f, reg)))
	g.round("Restarting the local API.", shell("docker compose -f deploy/compose/docker-compose.dev.yml up -d --build billing-api", func(o *out) {
		o.add("[+] Building 41.3s (14/14) FINISHED                                                  docker:default")
		for i, s := range []string{"load build definition from Dockerfile", "load metadata for docker.io/library/eclipse-temurin:21-jre", "load .dockerignore", "load build context", "CACHED [build 2/6] WORKDIR /src", "[build 3/6] COPY gradle/ gradle/", "[build 4/6] COPY . .", "[build 5/6] RUN ./gradlew :api:bootJar --no-daemon", "[runtime 2/2] COPY --from=build /src/api/build/libs/api.jar /app.jar", "exporting to image", "writing image sha256:" + g.passID("hash", g.mkHash(64))} {
			o.addf(" => [%d] %s  %d.%ds", i+1, s, g.r.IntN(30), g.r.IntN(10))
		}
		o.add("[+] Running 3/3\n ✔ Container quire-dev-mysql-1        Running\n ✔ Container quire-dev-redis-1        Running\n ✔ Container quire-dev-billing-api-1  Started")
	}))
	g.round("Sending the same request again, then listing refunds of the invoice.", requestCall("POST", "http://localhost:8081/v2/refunds", body, func(o *out) {
		rf := g.passID("id", g.mkID("rf"))
		g.httpHead(o, "201 Created", false, "Location: /v2/refunds/"+rf)
		o.addf("{\n  \"id\": \"%s\",\n  \"invoice_id\": \"%s\",\n  \"status\": \"pending\",\n  \"amount\": {\"value\": \"%s\", \"currency\": \"EUR\"},\n  \"ledger_entry_id\": \"%s\",\n  \"created_at\": \"%s\"\n}", rf, inv, amount[:len(amount)-1], g.passID("id", g.mkID("le")), g.now.Format(time.RFC3339))
	}), requestCall("GET", "http://localhost:8081/v2/refunds?invoice_id="+inv+"&limit=50", "", func(o *out) {
		g.httpHead(o, "200 OK", false)
		g.refundList(o, inv)
	}))
	g.round("Running the API tests.", shell("cd billing && ./gradlew :api:test", func(o *out) {
		g.gradle(o, gradleSpec{mods: g.modsUpTo("api"), tests: []string{"api"}})
	}))
	br := g.branch("fix", "refund-rounding")
	g.round("Committing.", g.commit(br, "api: round refund amounts explicitly", []string{f.path}, []string{reg}))
	g.say("The refund amount was rescaled without a rounding mode, which throws for amounts with more decimals than the currency allows. It now rounds explicitly; the same request returns 201 and the API tests pass. The v2 contract is unchanged.")
}

// refundList writes a page of refunds as JSON.
func (g *gen) refundList(o *out, inv string) {
	o.add("{\n  \"data\": [")
	n := g.scale(g.between(6, 12))
	for i := range n {
		id := g.fill(g.mkID("rf"))
		if i%4 == 1 {
			id = g.passID("id", g.mkID("rf"))
		}
		sep := ","
		if i == n-1 {
			sep = ""
		}
		o.addf("    {\"id\": \"%s\", \"invoice_id\": \"%s\", \"status\": \"%s\", \"amount\": {\"value\": \"%d.%02d\", \"currency\": \"EUR\"}, \"reason\": \"%s\", \"created_at\": \"%s\"}%s",
			id, inv, pick(g, "succeeded", "succeeded", "pending", "failed"), g.between(1, 500), g.r.IntN(100), pick(g, "duplicate", "requested_by_customer", "fraudulent"), g.now.Add(-g.randDur()*24).Format(time.RFC3339), sep)
	}
	o.addf("  ],\n  \"has_more\": false,\n  \"next_cursor\": null\n}")
}

// taskData: a read-only investigation in MySQL and Redis.
func (g *gen) taskData() {
	fin := g.userID("id", g.mkTicket())
	tenant := g.userID("id", g.mkID("tn"))
	g.user(fmt.Sprintf(pick(g,
		"Finance (%s) says tenant %s was invoiced twice for October. Find the duplicates and which job produced them. Read-only: no writes to the database, no deletes.",
		"Could you investigate %[1]s? A customer, tenant %[2]s, got two October invoices. I need to know which job made the second one. Strictly read-only on the DB.",
	), fin, tenant))
	my := "mysql --defaults-extra-file=~/.quire/stg-ro.cnf billing --table -e"
	g.round("Looking at the tenant's recent invoices. I'll use the read-only account.", shell(my+` "SELECT id, external_ref, period, status, created_by_job FROM invoices WHERE tenant_ref = (SELECT id FROM tenants WHERE public_id = @tenant) ORDER BY created_at DESC LIMIT 20"`, func(o *out) {
		o.errf("ERROR 1054 (42S22) at line 1: Unknown column '%s' in 'field list'", "created_by_job")
		g.errOnce("sql_state", "ERROR 1054 (42S22)")
		o.exit = 1
	}))
	g.round("Wrong column name. Checking the table definition.", shell(my+` "SHOW CREATE TABLE invoices\\G"`, func(o *out) { g.showCreate(o) }), shell(my+` "DESCRIBE invoices"`, func(o *out) {
		var rows [][]string
		for _, c := range invoiceColumns {
			null, key := "NO", ""
			if strings.Contains(c[2], "NULL") && !strings.Contains(c[2], "NOT NULL") {
				null = "YES"
			}
			switch c[0] {
			case "id":
				key = "PRI"
			case "tenant_id", "source_job_id":
				key = "MUL"
			}
			def := "NULL"
			if strings.Contains(c[2], "DEFAULT '") {
				def = strings.Split(strings.Split(c[2], "DEFAULT '")[1], "'")[0]
			}
			rows = append(rows, []string{c[0], c[1], null, key, def, ""})
		}
		table(o, []string{"Field", "Type", "Null", "Key", "Default", "Extra"}, rows)
	}))
	g.round("Querying with the right column, grouped by external reference.", shell(my+` "SELECT external_ref, COUNT(*) n, GROUP_CONCAT(id) ids, GROUP_CONCAT(source_job_id) jobs FROM invoices WHERE tenant_id = @tid AND period = '2024-10' GROUP BY external_ref HAVING n > 1"`, func(o *out) {
		var rows [][]string
		for range g.between(2, 4) {
			rows = append(rows, []string{g.passID("id", g.mkID("ext")), "2", g.fill(g.mkID("inv")) + "," + g.fill(g.mkID("inv")), g.fill(g.mkID("job")) + "," + g.passID("id", g.mkID("job"))})
		}
		table(o, []string{"external_ref", "n", "ids", "jobs"}, rows)
	}))
	g.round("Listing the tenant's October invoices to see the pattern.", shell(my+` "SELECT id, number, external_ref, status, total_minor, currency, source_job_id, created_at FROM invoices WHERE tenant_id = @tid AND period = '2024-10' ORDER BY external_ref, created_at"`, func(o *out) {
		var rows [][]string
		for i := range g.scale(g.between(14, 24)) {
			id := g.fill(g.mkID("inv"))
			if i%15 == 3 {
				id = g.passID("id", g.mkID("inv"))
			}
			rows = append(rows, []string{id, fmt.Sprintf("Q-2024-%06d", g.between(1, 999999)), g.fill(g.mkID("ext")), pick(g, "finalized", "finalized", "paid", "void"), fmt.Sprint(g.between(1000, 9999999)), pick(g, "EUR", "EUR", "USD"), g.fill(g.mkID("job")), g.now.Add(-g.randDur() * 200).Format("2006-01-02 15:04:05.000000")})
		}
		table(o, []string{"id", "number", "external_ref", "status", "total_minor", "currency", "source_job_id", "created_at"}, rows)
	}))
	g.round("Looking at the job runs of that night.", shell(my+` "SELECT j.*, COUNT(i.id) FROM job_runs j LEFT JOIN invoices i ON i.source_job_id = j.id GROUP BY j.id ORDER BY j.started_at"`, func(o *out) {
		o.err("ERROR 3024 (HY000) at line 1: Query execution was interrupted, maximum statement execution time exceeded")
		g.errOnce("sql_state", "ERROR 3024 (HY000)")
		o.exit = 1
	}))
	g.round("Too broad for the read-only account's time limit. Narrowing to that night.", shell(my+` "SELECT id, kind, host, started_at, finished_at, status, attempt FROM job_runs WHERE started_at BETWEEN '2024-11-01' AND '2024-11-02' ORDER BY started_at"`, func(o *out) {
		var rows [][]string
		for i := range g.scale(g.between(8, 16)) {
			id := g.fill(g.mkID("job"))
			host := "worker-" + fmt.Sprint(1+g.r.IntN(4))
			if i%12 == 2 {
				id = g.passID("id", g.mkID("job"))
			}
			if i == 3 {
				host = g.passID("hostport", g.mkHostPort("billing-worker"))
			}
			st := g.now.Add(-g.randDur() * 48)
			rows = append(rows, []string{id, pick(g, "invoice_finalize", "invoice_finalize", "ledger_export", "dunning_tick"), host, st.Format("2006-01-02 15:04:05"), st.Add(g.randDur() / 20).Format("2006-01-02 15:04:05"), pick(g, "succeeded", "succeeded", "retried", "failed"), fmt.Sprint(1 + g.r.IntN(3))})
		}
		table(o, []string{"id", "kind", "host", "started_at", "finished_at", "status", "attempt"}, rows)
	}))
	g.round("Checking the idempotency keys the finalizer stores in Redis.", shell("redis-cli -h 127.0.0.1 -p 6380 --scan --pattern 'idem:invoice_finalize:*' | head -40", func(o *out) {
		for i := range g.scale(g.between(12, 20)) {
			k := "idem:invoice_finalize:" + g.fill(g.mkID("ext"))
			if i%15 == 0 {
				k = g.passID("key", func() string { return "idem:invoice_finalize:" + g.mkID("ext")() })
			}
			o.add(k)
		}
	}), shell("redis-cli -h 127.0.0.1 -p 6380 CONFIG GET maxmemory-policy && redis-cli -h 127.0.0.1 -p 6380 INFO keyspace", func(o *out) {
		o.add("1) \"maxmemory-policy\"\n2) \"allkeys-lru\"\n# Keyspace")
		o.addf("db0:keys=%d,expires=%d,avg_ttl=%d,subexpiry=0", g.between(100000, 900000), g.between(1000, 90000), g.between(100000, 9000000))
	}))
	g.round("Checking memory pressure and slow commands on that Redis.", shell("redis-cli -h 127.0.0.1 -p 6380 INFO memory && redis-cli -h 127.0.0.1 -p 6380 INFO stats | grep -E 'evicted|expired|keyspace'", func(o *out) { g.redisInfo(o) }))
	g.round("Looking for evictions in the worker log.", shell("rg -n 'evicted|idempotency miss' /var/log/quire/billing-worker.log | tail -n 40", func(o *out) {
		for i := range g.scale(g.between(8, 14)) {
			ts := g.now.Add(-g.randDur() * 30).Format("2006-01-02T15:04:05.000Z")
			id := g.fill(g.mkID("ext"))
			if i%10 == 0 {
				id = g.passID("id", g.mkID("ext"))
			}
			o.addf("%d:%s  WARN 3117 --- [billing-worker] [   finalize-2] c.q.i.finalize.InvoiceFinalizer : idempotency miss for %s (key evicted), finalizing again", g.between(1000, 90000), ts, id)
		}
	}))
	g.say("Found them. In each pair, the second invoice came from a retry of the finalize job: the Redis instance evicts keys under memory pressure (allkeys-lru), so the idempotency key was gone when the retry ran, and the job finalized the same external reference again. Nothing was written to the database. Do you want me to draft a clean-up for the DBA, or leave it to finance?")
	g.user(fmt.Sprintf(pick(g,
		"Draft the clean-up as a SQL file for the DBA but don't run it. Finance will void the duplicates first, see %s.",
		"Write the SQL to a file, don't execute it. Voiding goes through %s first.",
	), g.userID("url", g.mkURLNum("https://quire.atlassian.net/wiki/spaces/FIN/pages/", 9, "/Voiding+duplicate+invoices"))))
	path := g.fileID("path", func() string {
		return fmt.Sprintf("ops/sql/2024-11-%02d-dedupe-october-%s.sql", g.between(1, 28), g.rs("abcdefghkmnpqrstuvwxyz", 4))
	})
	backup := g.fileID("key", func() string { return "invoices_backup_" + g.rs("abcdefghkmnpqrstuvwxyz", 6) })
	sql := fmt.Sprintf("-- Review before running. Read-only checks first, then the update in one transaction.\nCREATE TABLE %s AS SELECT * FROM invoices WHERE period = '2024-10' AND tenant_id = @tid;\n\nSTART TRANSACTION;\nUPDATE invoices i\n  JOIN (SELECT external_ref, MAX(created_at) latest FROM invoices WHERE tenant_id = @tid AND period = '2024-10' GROUP BY external_ref HAVING COUNT(*) > 1) d\n    ON d.external_ref = i.external_ref AND d.latest = i.created_at\n   SET i.status = 'void', i.void_reason = 'duplicate finalize'\n WHERE i.tenant_id = @tid AND i.status = 'voided_by_finance';\n-- Expect %d rows.\nCOMMIT;\n", backup, g.between(2, 4))
	g.round("Writing it, not running it.", writeCall(root+"/"+path, sql))
	g.say("Written for the DBA; it backs up the affected rows and only touches invoices finance has voided. I did not run anything against the database.")
}

// taskSurvey: reading many files to explain a flow, no changes.
func (g *gen) taskSurvey() {
	g.user(fmt.Sprintf(pick(g,
		"Before next sprint's proration work (%s), give me a short map of how a plan change flows from the API through the pricing library to the ledger. No code changes please; put the write-up in a markdown file under docs/design.",
		"I need an overview for the design review (%s): how does a subscription change get priced and posted? Read what you need, don't change any code, and leave the notes in docs/design.",
	), g.userID("id", g.mkTicket())))
	api := g.modFiles("api")
	g.round("Starting from the API layer.", shell("ls -la billing/api/src/main/kotlin/com/quire/api/*", func(o *out) { g.ls(o, api) }), g.rgCall("prorat", ".", append(append([]*srcFile{}, g.w.kt...), g.w.cpp...)))
	var reads []*srcFile
	reads = append(reads, g.w.others(g, api, nil, 2)...)
	reads = append(reads, g.w.others(g, g.modFiles("invoicing"), nil, 2)...)
	reads = append(reads, g.w.others(g, g.w.cpp, nil, 2)...)
	reads = append(reads, g.w.others(g, g.modFiles("ledger"), nil, 2)...)
	for i := 0; i < len(reads); i += 2 {
		g.round(pick(g, "Reading the next layer.", "Following the call into the next files.", "Next two files on the path."), g.readOf(reads[i]), g.readOf(reads[i+1]))
	}
	g.round("And the recent history of those areas.", shell("git log --oneline -n 30 -- billing/api billing/invoicing pricing/src billing/ledger", func(o *out) {
		g.gitLog(o, pick(g, "api", "invoicing", "pricing", "ledger"), g.scale(12))
	}))
	note := g.fileID("path", func() string {
		return "docs/design/" + pick(g, "plan-change-flow", "proration-map", "subscription-change-pricing", "pricing-to-ledger") + "-" + g.rs("abcdefghkmnpqrstuvwxyz", 3) + ".md"
	})
	g.round("Writing the notes.", writeCall(root+"/"+note, "# How a plan change is priced and posted\n\n1. API: the subscription controller validates the change and calls invoicing.\n2. Invoicing builds a proforma; amounts per day come from the pricing library through the JNI wrapper.\n3. Rounding: once in the library, again per line in invoicing.\n4. On finalize, invoicing maps lines to ledger postings; the ledger posts them in the open period and fails on a locked one.\n\nOpen question for proration: the double rounding.\n"))
	g.say("Notes written. The flow: the API controller validates the change and hands it to the invoicing service, which asks the pricing library (through the JNI wrapper) for the prorated amounts per day, rounds per line, and produces a proforma; on finalize, invoicing maps the lines to ledger postings, which the ledger posts in the open period, failing if the period is locked. Rounding happens twice (in the library and again per line in invoicing), which is the likely trouble spot for proration. No changes made.")
}

// taskAdminCompose: the admin container keeps restarting on staging.
func (g *gen) taskAdminCompose() {
	g.user(fmt.Sprintf(pick(g,
		"The admin app on the staging compose host keeps restarting since this morning's image (%s). Please get it up. Don't bump the image tag and don't change the nginx config.",
		"admin is crash-looping on staging (reported in %s). Fix it without changing the image tag or nginx.",
	), g.userID("id", g.mkTicket())))
	compose := "docker compose -f deploy/compose/docker-compose.staging.yml"
	g.round("Checking the containers.", shell(compose+" ps", func(o *out) {
		o.addf("%-26s %-46s %-24s %-12s %-16s %-32s %s", "NAME", "IMAGE", "COMMAND", "SERVICE", "CREATED", "STATUS", "PORTS")
		for _, sv := range [][4]string{
			{"billing-api", "registry.quire.internal/billing-api:" + g.fill(g.mkHash(8)), "\"java -jar /app.jar\"", "0.0.0.0:8081->8080/tcp"},
			{"admin", "registry.quire.internal/admin:" + g.fill(g.mkHash(8)), "\"bin/rails server -…\"", ""},
			{"notifier", "registry.quire.internal/notifier:" + g.fill(g.mkHash(8)), "\"/app/bin/notifier s…\"", "0.0.0.0:4000->4000/tcp"},
			{"mysql", "mysql:8.0.36", "\"docker-entrypoint.s…\"", "0.0.0.0:3306->3306/tcp, 33060/tcp"},
			{"redis", "redis:7.2", "\"docker-entrypoint.s…\"", "0.0.0.0:6380->6379/tcp"},
		} {
			created := g.between(3, 40)
			st := fmt.Sprintf("Up %d hours (healthy)", g.between(1, created))
			if sv[0] == "admin" {
				created = g.between(2, 9)
				st = fmt.Sprintf("Restarting (1) %d seconds ago", g.between(2, 50))
			}
			o.addf("%-26s %-46s %-24s %-12s %-16s %-32s %s", "quire-stg-"+sv[0]+"-1", sv[1], sv[2], sv[0], fmt.Sprintf("%d hours ago", created), st, sv[3])
		}
	}))
	env := g.fileID("env", g.mkEnv())
	g.round("Reading the admin logs.", shell(compose+" logs --tail 150 admin", func(o *out) {
		site := g.errID("site", g.mkSite("exports.rb", 5, 40))
		sent := 0
		for range g.scale(3) {
			o.add("admin-1  | => Booting Puma\nadmin-1  | => Rails 7.2.2 application starting in staging\nadmin-1  | => Run `bin/rails server --help` for more startup options")
			o.errf("admin-1  | /rails/config/initializers/%s:in 'Hash#fetch': key not found: \"ADMIN_EXPORT_BUCKET\" (KeyError)", site)
			o.err("admin-1  | \tfrom /rails/config/initializers/exports.rb:4:in '<main>'")
			for _, fr := range railsBootFrames {
				o.err("admin-1  | \tfrom " + fr)
			}
			if sent < 3 {
				o.errf("admin-1  | ** [Sentry] Sending exception KeyError, event id: %s", g.errID("hash", g.mkHash(32)))
				sent++
			} else {
				o.add("admin-1  | ** [Sentry] Event not sent: rate limited")
			}
			o.add("admin-1  | Exiting")
		}
		o.err("admin-1 exited with code 1")
	}))
	g.round("Reading the compose file.", g.readOf(g.w.config("docker-compose.staging.yml")))
	g.round("Inspecting the container's state and health log.", shell("docker inspect quire-stg-admin-1 --format '{{json .State}}' | jq .", func(o *out) { g.dockerState(o) }))
	envFile := "deploy/env/admin.staging.env"
	g.round("Reading the env file the service uses.", readCall(root+"/"+envFile, func(o *out) {
		for i, l := range []string{"RAILS_ENV=staging", "RAILS_LOG_TO_STDOUT=1", "ADMIN_DB_USER=quire_admin", "ADMIN_DB_PASSWORD=${sops:admin_db_password}", "REDIS_URL=redis://redis:6379/2", "SIDEKIQ_CONCURRENCY=8", "SECRET_KEY_BASE=${sops:admin_secret_key_base}"} {
			o.addf("%6d\t%s", i+1, l)
		}
	}))
	bucket := g.fileID("url", func() string { return "s3://quire-admin-exports-" + g.rs(lowerAlnum, 8) + "/staging" })
	g.round("The new image requires an export bucket variable the staging env does not set. Adding it, plus the new flag the release notes mention.", replaceCall(root+"/"+envFile, "SIDEKIQ_CONCURRENCY=8", fmt.Sprintf("SIDEKIQ_CONCURRENCY=8\nADMIN_EXPORT_BUCKET=%s\n%s=300", bucket, env)))
	g.round("Recreating the container and checking it.", shell(compose+" up -d admin && sleep 20 && "+compose+" ps admin", func(o *out) {
		o.add("[+] Running 1/1\n ✔ Container quire-stg-admin-1  Started")
		o.addf("NAME                 IMAGE                                 COMMAND                  SERVICE   CREATED          STATUS                    PORTS\nquire-stg-admin-1    registry.quire.internal/admin:%s   \"bin/rails server -…\"   admin     21 seconds ago   Up 20 seconds (healthy)   0.0.0.0:3000->3000/tcp", g.passID("hash", g.mkHash(8)))
	}), shell(compose+" logs --tail 80 admin", func(o *out) {
		o.add("admin-1  | => Booting Puma\nadmin-1  | => Rails 7.2.2 application starting in staging\nadmin-1  | => Run `bin/rails server --help` for more startup options")
		o.add("admin-1  | Puma starting in cluster mode...\nadmin-1  | * Puma version: 6.4.3 (ruby 3.3.6-p108) (\"The Eagle of Durango\")\nadmin-1  | *  Min threads: 5\nadmin-1  | *  Max threads: 5\nadmin-1  | *  Environment: staging\nadmin-1  | *   Master PID: 1\nadmin-1  | *      Workers: 2\nadmin-1  | *     Restarts: (✔) hot (✖) phased\nadmin-1  | * Preloading application\nadmin-1  | * Listening on http://0.0.0.0:3000\nadmin-1  | Use Ctrl-C to stop")
		for i := range g.scale(g.between(8, 16)) {
			rid := g.fill(g.mkUUID())
			if i == 2 {
				rid = g.passID("uuid", g.mkUUID())
			}
			path := pick(g, "/up", "/up", "/admin/refunds", "/admin/customers?page=2", "/admin/dunning_runs", "/admin/exports/new")
			o.addf("admin-1  | I, [%s #%d]  INFO -- : [%s] Started GET \"%s\" for 10.42.0.%d at %s", g.now.Format("2006-01-02T15:04:05.000000"), g.between(7, 40), rid, path, g.between(2, 250), g.now.Format("2006-01-02 15:04:05 +0000"))
			o.addf("admin-1  | I, [%s #%d]  INFO -- : [%s] Completed 200 OK in %dms (Views: %.1fms | ActiveRecord: %.1fms (%d queries, 0 cached) | GC: 0.%dms)", g.now.Format("2006-01-02T15:04:05.000000"), g.between(7, 40), rid, g.between(2, 300), g.r.Float64()*50, g.r.Float64()*30, g.between(0, 12), g.r.IntN(10))
		}
	}), shell("curl -sS -i https://admin.stg.quire.io/up", func(o *out) {
		o.add("HTTP/2 200\ncontent-type: text/html; charset=utf-8")
		o.add("x-request-id: " + g.passID("uuid", g.mkUUID()))
		o.add("x-runtime: 0.004121\n\n<!DOCTYPE html><html><body style=\"background-color: green\"></body></html>")
	}))
	g.say("The admin container is up and healthy. The new image reads an export bucket setting at boot that the staging env file did not define; I added it to the env file. Image tag and nginx unchanged.")
}

// dockerState writes a container's state as docker inspect prints it,
// with its health log of failed checks.
func (g *gen) dockerState(o *out) {
	o.addf("{\n  \"Status\": \"restarting\",\n  \"Running\": true,\n  \"Paused\": false,\n  \"Restarting\": true,\n  \"OOMKilled\": false,\n  \"Dead\": false,\n  \"Pid\": 0,\n  \"ExitCode\": 1,\n  \"Error\": \"\",")
	o.addf("  \"StartedAt\": \"%s\",\n  \"FinishedAt\": \"%s\",", g.now.Add(-40*time.Second).Format(time.RFC3339Nano), g.now.Add(-35*time.Second).Format(time.RFC3339Nano))
	o.add("  \"Health\": {\n    \"Status\": \"unhealthy\",\n    \"FailingStreak\": " + fmt.Sprint(g.between(5, 40)) + ",\n    \"Log\": [")
	n := g.scale(3)
	for i := range n {
		t := g.now.Add(-time.Duration(n-i) * 10 * time.Second)
		sep := ","
		if i == n-1 {
			sep = ""
		}
		o.addf("      {\n        \"Start\": \"%s\",\n        \"End\": \"%s\",\n        \"ExitCode\": 7,\n        \"Output\": \"curl: (7) Failed to connect to localhost port 3000 after 0 ms: Couldn't connect to server\\n\"\n      }%s",
			t.Format(time.RFC3339Nano), t.Add(12*time.Millisecond).Format(time.RFC3339Nano), sep)
	}
	o.add("    ]\n  }\n}")
}

// redisInfo writes INFO memory and the eviction counters.
func (g *gen) redisInfo(o *out) {
	used := g.between(900, 1023)
	o.add("# Memory")
	for _, kv := range [][2]string{
		{"used_memory", fmt.Sprint(used * 1048576)}, {"used_memory_human", fmt.Sprintf("%d.%02dM", used, g.r.IntN(100))},
		{"used_memory_rss", fmt.Sprint((used + 80) * 1048576)}, {"used_memory_rss_human", fmt.Sprintf("%d.%02dM", used+80, g.r.IntN(100))},
		{"used_memory_peak", fmt.Sprint(1024 * 1048576)}, {"used_memory_peak_human", "1024.00M"}, {"used_memory_peak_perc", fmt.Sprintf("%d.%02d%%", g.between(90, 99), g.r.IntN(100))},
		{"used_memory_overhead", fmt.Sprint(g.between(10, 90) * 1048576)}, {"used_memory_startup", "946120"}, {"used_memory_dataset", fmt.Sprint(g.between(800, 900) * 1048576)},
		{"used_memory_dataset_perc", fmt.Sprintf("%d.%02d%%", g.between(85, 95), g.r.IntN(100))}, {"allocator_allocated", fmt.Sprint(used*1048576 + 41232)},
		{"total_system_memory", "16484372480"}, {"total_system_memory_human", "15.35G"}, {"used_memory_lua", "31744"}, {"used_memory_vm_eval", "31744"},
		{"used_memory_scripts_eval", "0"}, {"number_of_cached_scripts", "0"}, {"maxmemory", "1073741824"}, {"maxmemory_human", "1.00G"},
		{"maxmemory_policy", "allkeys-lru"}, {"allocator_frag_ratio", "1.02"}, {"allocator_frag_bytes", "14522352"}, {"mem_fragmentation_ratio", "1.08"},
		{"mem_fragmentation_bytes", "83886080"}, {"mem_not_counted_for_evict", "0"}, {"mem_replication_backlog", "1048576"}, {"mem_clients_slaves", "0"},
		{"mem_clients_normal", "412320"}, {"mem_aof_buffer", "0"}, {"mem_allocator", "jemalloc-5.3.0"}, {"active_defrag_running", "0"}, {"lazyfree_pending_objects", "0"},
	} {
		o.add(kv[0] + ":" + kv[1])
	}
	o.addf("expired_keys:%d\nexpired_stale_perc:%d.%02d\nexpired_time_cap_reached_count:0\nevicted_keys:%d\nevicted_clients:0\nkeyspace_hits:%d\nkeyspace_misses:%d",
		g.between(100000, 900000), g.r.IntN(10), g.r.IntN(100), g.between(20000, 400000), g.between(10000000, 90000000), g.between(100000, 9000000))
}

// invoiceColumns are the columns of the invoices table: name, type and
// the rest of the definition.
var invoiceColumns = [][3]string{
	{"id", "varchar(32)", "NOT NULL"}, {"tenant_id", "bigint", "NOT NULL"}, {"external_ref", "varchar(64)", "NOT NULL"},
	{"number", "varchar(32)", "DEFAULT NULL"}, {"period", "char(7)", "NOT NULL"}, {"currency", "char(3)", "NOT NULL"},
	{"total_minor", "bigint", "NOT NULL DEFAULT '0'"}, {"tax_minor", "bigint", "NOT NULL DEFAULT '0'"},
	{"status", "enum('draft','finalized','paid','void','voided_by_finance')", "NOT NULL DEFAULT 'draft'"}, {"void_reason", "varchar(255)", "DEFAULT NULL"},
	{"source_job_id", "varchar(32)", "DEFAULT NULL"}, {"finalized_at", "datetime(6)", "DEFAULT NULL"}, {"created_at", "datetime(6)", "NOT NULL"},
	{"updated_at", "datetime(6)", "NOT NULL"}, {"lock_version", "int", "NOT NULL DEFAULT '0'"},
}

// showCreate writes SHOW CREATE TABLE invoices\G.
func (g *gen) showCreate(o *out) {
	o.add("*************************** 1. row ***************************\n       Table: invoices\nCreate Table: CREATE TABLE `invoices` (")
	for _, c := range invoiceColumns {
		o.add("  `" + c[0] + "` " + c[1] + " " + c[2] + ",")
	}
	for _, c := range []string{"PRIMARY KEY (`id`)", "UNIQUE KEY `uq_invoices_number` (`tenant_id`,`number`)",
		"KEY `idx_invoices_tenant_period` (`tenant_id`,`period`)", "KEY `idx_invoices_external_ref` (`tenant_id`,`external_ref`)", "KEY `idx_invoices_source_job` (`source_job_id`)",
		"CONSTRAINT `fk_invoices_tenant` FOREIGN KEY (`tenant_id`) REFERENCES `tenants` (`id`)"} {
		o.add("  " + c + ",")
	}
	o.lines[len(o.lines)-1] = strings.TrimSuffix(o.lines[len(o.lines)-1], ",")
	o.add(") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci")
}
