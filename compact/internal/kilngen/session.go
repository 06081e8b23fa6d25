package kilngen

import (
	"fmt"
	"math"
	"path"
	"strings"

	"github.com/strata-memory/strata/compact/internal/opsgen"
)

// session plays tasks until the session has made the tool calls asked
// for; the last task is finished.
func (g *gen) session() {
	tasks := []func(first bool){
		g.taskSwiftTests, g.taskXcodeBump, g.taskAppCrash, g.taskLedgerFeature, g.taskCrashLoop, g.taskContracts,
		g.taskTerraform, g.taskAnsible, g.taskGlaze, g.taskHelm, g.taskDoublePayout, g.taskExportLambda,
	}
	var order []int
	for i := 0; g.calls < g.want; i++ {
		if len(order) == 0 {
			order = g.r.Perm(len(tasks))
		}
		k := g.nextTask(order)
		t := order[k]
		order = append(order[:k:k], order[k+1:]...)
		if g.want-g.calls < 10 {
			// a short task to end on, so the session does not overshoot
			short := []int{8, 10}
			t = short[g.nextTask(short)]
			if g.r.IntN(3) == 0 {
				t = short[g.r.IntN(2)]
			}
		}
		g.area = []string{"ios", "ios", "ios", "ledger", "ledger", "contracts", "infra", "infra", "glaze", "helm", "ledger", "infra"}[t]
		tasks[t](i == 0)
	}
	g.wrapUp()
}

// wrapUp ends the session: the user sometimes asks for the follow-ups to
// be written down, and says what happens next.
func (g *gen) wrapUp() {
	short := func(c opsgen.Class) bool { return float64(g.count[c]) < 0.9*float64(g.limit[c]) }
	if !short(opsgen.FileWritten) && !short(opsgen.UserTurn) && !g.chance(0.3) {
		return
	}
	g.user("Thanks, that's it for today. " + g.pickf(
		func() string {
			return "Can you jot down the follow-ups before you stop? I'll pick them up with " + g.uTicket() + "."
		},
		func() string { return "Please write the follow-ups down; the retro is tracked in " + g.uLinear() + "." },
	) + " " + g.pickf(
		func() string { return "Release notes draft: " + g.uNotion() },
		func() string { return "The on-call handover is in " + g.uSlack() },
	))
	p := g.wrote(g.word(func() string {
		return fmt.Sprintf("notes/followups-%s-%s.md", g.clock.Format("2006-01-02"), g.chars(lowAN, 4))
	}), "path")
	lines := []string{"# Follow-ups", ""}
	for i := 0; i < g.between(2, 4); i++ {
		lines = append(lines, fmt.Sprintf("- [ ] %s (%s)", g.pick([]string{
			"Migrate the remaining call sites off the deprecated request adapter",
			"Add an alert on settlement lock expiry",
			"Backfill the payouts settled twice, once finance confirms the list",
			"Re-enable the flaky UI test after the simulator image update",
			"Move the export role policy to its own module",
		}), g.wrote(g.word(func() string { return "fu-" + g.chars(lowAN, 6) }), "id")))
	}
	g.say("Writing the follow-ups down.", g.write(p, strings.Join(lines, "\n")))
	g.say("Done: the follow-ups are in " + p + ".")
}

// yields is about how many labels of the error_line, file_written and
// user_turn classes each task offers to plant, per task of session.
var yields = [12][3]float64{
	{6.9, 4.8, 3.3}, {3.4, 2.6, 2.7}, {8.0, 3.6, 4.8}, {8.9, 3.1, 2.9}, {10.6, 3.7, 4.4}, {8.0, 3.9, 3.0},
	{6.6, 4.1, 3.3}, {5.4, 2.7, 3.2}, {3.6, 3.3, 3.1}, {5.5, 3.8, 2.6}, {7.1, 3.4, 4.0}, {5.1, 3.8, 3.1},
}

var paced = []opsgen.Class{opsgen.ErrorLine, opsgen.FileWritten, opsgen.UserTurn}

// lagging says labels of class c lag behind their pace.
func (g *gen) lagging(c opsgen.Class) bool {
	lim := float64(g.limit[c])
	prog := math.Min(1, float64(g.calls)/float64(g.want))
	return (lim*prog-float64(g.count[c]))/lim > 0.03
}

// nextTask is the index in order of the task to play next: the first,
// unless a class of labels lags behind its pace, when it is the task of
// the order that offers most of the lagging classes.
func (g *gen) nextTask(order []int) int {
	prog := float64(g.calls) / float64(g.want)
	var lag [3]float64
	any := false
	for i, c := range paced {
		lim := float64(g.limit[c])
		lag[i] = (lim*prog - float64(g.count[c])) / lim
		if lag[i] > 0.02 {
			any = true
		}
	}
	if !any {
		return 0
	}
	best, bestScore := 0, -1.0
	for k, t := range order {
		score := 0.0
		for i := range paced {
			if lag[i] > 0 {
				score += lag[i] * yields[t][i] / (yields[1][i] + 3)
			}
		}
		if score > bestScore {
			best, bestScore = k, score
		}
	}
	return best
}

// ---- user turns ----

func (g *gen) greet(first bool) string {
	if !first {
		return g.pick([]string{"", "", "Next one. ", "Thanks. Another thing: ", "OK, moving on. ", "Good. "})
	}
	return g.pick([]string{"Morning! ", "Hi, I need a hand with a few things today. ", "Hey. First up: ", ""})
}

func (g *gen) uLinear() string {
	t := g.ticket()
	return g.usr(fmt.Sprintf("https://linear.app/kilnworks/issue/%s/%s-%s", t, g.pick(nouns), g.pick(nouns)), "url")
}
func (g *gen) uTicket() string { return g.usr(g.ticket(), "id") }
func (g *gen) uSentry() string {
	return g.usr(fmt.Sprintf("https://kilnworks.sentry.io/issues/%s/?project=%d&referrer=slack", g.digits(10), g.between(4500000, 4509999)), "url")
}
func (g *gen) uGrafana() string {
	return g.usr(g.fresh(func() string {
		return fmt.Sprintf("https://grafana.ops.kilnworks.dev/d/%s/%s?orgId=1&from=now-6h&to=now", g.chars(alnum, 9), g.pick([]string{"ledger-api", "gateway-latency", "redis-overview", "rds-ledger", "k8s-workloads"}))
	}), "url")
}
func (g *gen) uSlack() string {
	ts := g.clock.Add(-g.dur(60000, 86400000*3)).Unix()
	return g.usr(g.fresh(func() string {
		return fmt.Sprintf("https://kilnworks.slack.com/archives/C0%s/p%d%06d", g.chars(upAN, 9), ts, g.between(0, 999999))
	}), "url")
}
func (g *gen) uPR() string {
	return g.usr(g.word(func() string { return fmt.Sprintf("https://github.com/kilnworks/ember/pull/%d", g.between(3000, 6999)) }), "url")
}
func (g *gen) uTrace() string   { return g.usr(g.hex(32), "id") }
func (g *gen) uRoaster() string { return g.usr("rst_"+g.chars(alnum, 12), "id") }
func (g *gen) uChange() string {
	return g.usr(g.word(func() string { return fmt.Sprintf("CHG-%d", g.between(10000, 99999)) }), "id")
}
func (g *gen) uIncident() string {
	return g.usr("https://kilnworks.pagerduty.com/incidents/Q"+g.up(13), "url")
}
func (g *gen) uNotion() string {
	return g.usr(fmt.Sprintf("https://www.notion.so/kilnworks/%s-%s-%s", title(g.pick(nouns)), title(g.pick(nouns)), g.hex(32)), "url")
}
func (g *gen) uTestflight() string {
	return g.usr(fmt.Sprintf("https://appstoreconnect.apple.com/apps/%s/testflight/ios/%s", g.digits(10), g.uuid()), "url")
}
func (g *gen) uTx() string { return g.usr("https://sepolia.basescan.org/tx/"+g.txHash(), "url") }

// pickf calls one of fs: the others plant nothing.
func (g *gen) pickf(fs ...func() string) string { return fs[g.r.IntN(len(fs))]() }

// ref is a reference the user gives for a task, of one of several kinds.
func (g *gen) ref() string {
	switch g.r.IntN(5) {
	case 0:
		return "Ticket: " + g.uLinear() + "."
	case 1:
		return "It's tracked as " + g.uTicket() + "."
	case 2:
		return "Context is in this thread: " + g.uSlack()
	case 3:
		return "Background: " + g.uNotion()
	default:
		return "Related PR: " + g.uPR()
	}
}

// task is the user message giving a task; it sometimes carries a paste.
func (g *gen) task(text string) {
	if g.chance(0.6) {
		text += " " + g.pickf(
			func() string { return "Deadline is today's release train, see " + g.uLinear() + "." },
			func() string { return "Customer-facing: " + g.uTicket() + " is waiting on it." },
			func() string { return "Dashboard: " + g.uGrafana() },
			func() string { return "Same area as " + g.uPR() + ", in case it helps." },
		)
	}
	if g.chance(0.65) {
		text += g.paste()
	}
	g.user(text)
}

// paste is what the user pastes: a CI excerpt, an error event or a
// support message, with the ids they carry.
func (g *gen) paste() string {
	kinds := map[string][]int{"ios": {0, 1}, "ledger": {0, 2, 3}, "contracts": {0}, "infra": {0, 3}, "glaze": {0}, "helm": {0, 3}}[g.area]
	if len(kinds) == 0 {
		kinds = []int{0}
	}
	switch kinds[g.r.IntN(len(kinds))] {
	case 0:
		run := g.usr(fmt.Sprintf("https://github.com/kilnworks/ember/actions/runs/%s/job/%s", g.digits(10), g.digits(11)), "url")
		return fmt.Sprintf("\n\nCI run: %s\n```\n%s\n##[error]Process completed with exit code %d.\n```", run, g.pick([]string{"Run make test", "Run ./scripts/ci/build.sh", "Run bundle exec fastlane ios tests"}), g.pick1(1, 2, 65))
	case 1:
		return fmt.Sprintf("\n\nThe event from Sentry:\n```\nevent_id: %s\nrelease: %s\nlevel: fatal\n```", g.usr(g.hex(32), "id"), g.usr(fmt.Sprintf("ember-ios@1.%d.%d+%s", g.between(14, 25), g.between(0, 9), g.digits(4)), "version"))
	case 2:
		return fmt.Sprintf("\n\nFrom the support ticket: \"My payout for order %s never arrived\" (roaster %s).", g.usr("ORD-"+g.up(8), "id"), g.uRoaster())
	default:
		return fmt.Sprintf("\n\nThe gateway logged this for one of the failing requests:\n```\nx-request-id: %s\ntraceparent: 00-%s-%s-01\nstatus: 502\n```", g.usr(g.uuid(), "uuid"), g.uTrace(), g.hex(16))
	}
}

// ask is a question of the agent and the user's answer, which carries a
// reference.
func (g *gen) ask(q string, answers ...string) {
	g.say(q)
	extra := ""
	if g.chance(0.4) {
		extra = " " + g.pickf(
			func() string { return "Dashboard to watch: " + g.uGrafana() },
			func() string { return "Incident for reference: " + g.uIncident() },
			func() string { return "Roaster that reported it: " + g.uRoaster() + "." },
		)
	}
	g.user(g.pick(answers) + extra + " " + g.pickf(
		func() string { return "Follow-up is " + g.uTicket() + "." },
		func() string { return "We agreed on it in " + g.uSlack() },
		func() string { return "See " + g.uPR() + " for the earlier discussion." },
		func() string { return "Decision is logged as " + g.uChange() + "." },
	))
}

// lintRound runs a linter that fails, fixes the sites it names with
// lines like repl (indented as the line they replace) and lints again.
func (g *gen) lintRound(why, cmd string, bad func() *out, exit int, p string, repl string, good func() *out) {
	g.say(why, g.sh(cmd, bad(), exit))
	fl := g.takeFails()
	f := g.file(p)
	var fixes []act
	for _, l := range fl {
		fixes = append(fixes, g.fixAt(p, l, []string{indentOf(f.lines[l-1]) + strings.TrimLeft(repl, " \t")}))
	}
	g.say(g.pick([]string{"Fixing what the linter reports.", "Addressing the findings.", "Fixing those."}), fixes...)
	g.say("Running it again.", g.sh(cmd, good(), 0))
}

// ---- shared steps ----

// slug is a branch name.
func (g *gen) branch(area string) string {
	g.w.branchNo++
	return fmt.Sprintf("%s/%s-%s-%d", g.pick([]string{"fix", "feat", "chore"}), area, g.pick(nouns), g.w.branchNo)
}

// commit stages the files the task changed and commits them on a new
// branch, sometimes pushing and opening a pull request.
func (g *gen) commit(area, msg string) {
	br := g.branch(area)
	if g.chance(0.75) || g.lagging(opsgen.FileWritten) {
		frag := g.wrote(g.word(func() string { return fmt.Sprintf("changes/%s-%s-%s.md", area, g.pick(nouns), g.chars(lowAN, 4)) }), "path")
		g.say("Adding a changelog fragment.", g.write(frag, "- "+msg+".\n"))
	}
	paths := g.touch
	g.touch = nil
	cmd := fmt.Sprintf("git checkout -b %s && git add %s && git commit -m %q", br, strings.Join(paths, " "), msg)
	o := &out{}
	o.okf("Switched to a new branch '%s'", br)
	c := g.gitCommit(br, msg, len(paths))
	o.lines = append(o.lines, c.lines...)
	acts := []act{g.sh(cmd, o, 0)}
	g.say(g.pick([]string{"Committing the change on its own branch.", "Everything is green; committing.", "Committing."}), acts...)
	if g.chance(0.5) || g.lagging(opsgen.ErrorLine) {
		if g.chance(0.3) || g.lagging(opsgen.ErrorLine) && g.chance(0.5) {
			ro := &out{}
			ro.okf("Enumerating objects: %d, done.", g.between(10, 60))
			ro.okf("Writing objects: 100%% (%d/%d), %d.%02d KiB | %d.%02d MiB/s, done.", 11, 11, g.between(1, 20), g.between(0, 99), g.between(1, 20), g.between(0, 99))
			ro.badf("remote: error: %s: Repository rule violations found for refs/heads/%s.", g.errl("GH013", "code"), br)
			ro.ok("remote: Review all repository rules at https://github.com/kilnworks/ember/rules?ref=refs%2Fheads%2F" + strings.ReplaceAll(br, "/", "%2F"))
			ro.ok("remote: ")
			ro.bad("remote: - Commits must have verified signatures.")
			ro.bad("remote:   Found 1 violation:")
			ro.ok("remote: ")
			ro.badf("remote:   %s", g.errl(g.sha40(), "hash"))
			ro.ok("remote: ")
			ro.ok("To github.com:kilnworks/ember.git")
			ro.badf(" ! [remote rejected] %s -> %s (push declined due to repository rule violations)", br, br)
			ro.bad("error: failed to push some refs to 'github.com:kilnworks/ember.git'")
			g.say("Pushing the branch so a PR can be opened.", g.sh("git push -u origin "+br, ro, 1))
			co := &out{}
			co.okf("[%s %s] %s", br, g.passing(true, g.sha7(), "hash"), msg)
			co.okf(" Date: %s", g.clock.Format("Mon Jan 2 15:04:05 2006 -0700"))
			co.okf(" %d files changed, %d insertions(+), %d deletions(-)", len(paths), g.between(2, 90), g.between(0, 40))
			g.say("The commit was not signed. Re-signing it and pushing again.", g.sh("git commit --amend --no-edit -S", co, 0))
		}
		g.say("Pushing the branch so a PR can be opened.", g.sh("git push -u origin "+br, g.gitPush(br), 0))
		pr := &out{}
		pr.ok("")
		pr.okf("Creating pull request for %s into main in kilnworks/ember", br)
		pr.ok("")
		pr.okf("https://github.com/kilnworks/ember/pull/%d", g.between(7000, 9999))
		g.say("Opening the pull request.", g.sh(fmt.Sprintf("gh pr create --fill --base main --head %s", br), pr, 0))
		if g.chance(0.6) || g.lagging(opsgen.ErrorLine) {
			g.say("Waiting for the checks.", g.sh("gh pr checks --watch --fail-fast", g.prChecks(area, true), 8))
			g.say("The failing check is unrelated to this change (a flaky job on the runner). Re-running the failed jobs.", g.sh(fmt.Sprintf("gh run rerun --failed $(gh run list --branch %s --limit 1 --json databaseId -q '.[0].databaseId')", br), &out{lines: []string{"✓ Requested rerun (failed jobs) of the latest run"}}, 0))
			g.say("Watching them again.", g.sh("gh pr checks --watch", g.prChecks(area, false), 0))
		}
	}
}

// fixAt replaces the line n (1-based) of path, with a neighbour when the
// line alone is not unique, by repl.
func (g *gen) fixAt(p string, n int, repl []string) act {
	f := g.file(p)
	i := max(0, min(n-1, len(f.lines)-1))
	all := strings.Join(f.lines, "\n")
	for count := 1; count <= 4; count++ {
		if i+count > len(f.lines) {
			break
		}
		old := strings.Join(f.lines[i:i+count], "\n")
		if carriesID(f, old) {
			break
		}
		if strings.Count(all, old) == 1 {
			return g.edit(p, i, count, repl)
		}
	}
	j := g.editable(p, 1)
	return g.edit(p, j, 1, repl)
}

// addLines is a replacement inserting lines after a unique line of path.
func (g *gen) addLines(p string, lines []string) act {
	j := g.editable(p, 1)
	f := g.file(p)
	return g.edit(p, j, 1, append([]string{f.lines[j]}, lines...))
}

func (g *gen) summary(parts ...string) {
	g.say(strings.Join(parts, " "))
}

// ---- iOS ----

func (g *gen) swiftUnit() swiftUnit { return swiftUnits[g.r.IntN(len(swiftUnits))] }

func (g *gen) taskSwiftTests(first bool) {
	u := g.swiftUnit()
	g.task(g.greet(first) + g.pick([]string{
		"The EmberKit tests went red on main after yesterday's merge. Can you get them green again?",
		"CI is failing on the EmberKit package tests. Please fix it.",
		"Someone reported that the " + strings.ToLower(u.module) + " tests fail locally on Xcode 16.2. Take a look?",
	}) + " " + g.ref() + " " + g.pick([]string{
		"Don't change the public API of the " + u.module + " module.",
		"No new dependencies, and keep the fix minimal.",
		"Please don't touch the snapshot tests.",
	}))
	g.say("I'll run the package tests to see what fails.", g.run("cd ios/Packages/EmberKit && swift test 2>&1")(g.swiftTestRun(&u, nil)))
	acts := []act{g.read(u.srcPath())}
	if g.canRead(u.testPath()) {
		acts = append(acts, g.read(u.testPath()))
	}
	g.say("One case in "+u.class()+" fails. Reading the implementation"+map[bool]string{true: " and the test file.", false: "."}[len(acts) > 1], acts...)
	g.say("Checking where "+u.typ+"."+u.fn+" is used elsewhere.", g.grepAct(u.typ+"\\."+u.fn+"|"+u.fn+"\\(", kitDir+"/Sources", g.between(2, 8), []string{g.swiftUnit().srcPath(), u.srcPath(), g.swiftUnit().srcPath()}, func(f *file) []int { return g.someLines(f, 3) }))
	if g.chance(0.5) {
		g.say("The test expects the amount rounded half-up at two decimals, but " + u.typ + " rounds with banker's rounding before applying the fee. Which behaviour is the intended one: half-up everywhere, or only for refunds shown to the roaster?")
		g.user(g.pick([]string{"Half-up everywhere. Finance confirmed it in ", "Only for what we show; stored amounts stay as they are. See "}) + g.uNotion() + g.pick([]string{"", " and please keep the old behaviour behind a flag for one release."}))
	}
	konst := g.wrote(g.camelID(), "id")
	f := g.file(u.srcPath())
	j := g.editable(u.srcPath(), 1)
	in := indentOf(f.lines[j])
	cat := g.wrote(g.word(func() string {
		return "com.kilnworks.ember." + strings.ToLower(u.module) + "." + g.pick(nouns) + "-" + g.chars(lowAN, 4)
	}), "id")
	g.say("Fixing the rounding in "+u.src+".", g.edit(u.srcPath(), j, 1, []string{
		in + fmt.Sprintf("let scaled = entry.amount.minorUnits.rounded(scale: Self.%s, mode: .halfUp)", konst),
		in + fmt.Sprintf("Logger(subsystem: %q, category: \"rounding\").debug(\"scaled \\(scaled)\")", cat),
		in + "// Round once, after the fee: rounding twice lost a cent on refunds.",
		f.lines[j],
	}))
	g.say("Adding the constant.", g.addLines(u.srcPath(), []string{fmt.Sprintf("    static let %s = 2", konst)}))
	if g.chance(0.7) || g.lagging(opsgen.ErrorLine) {
		g.lintRound("Linting the package before running the tests.", "cd ios/Packages/EmberKit && swiftlint lint --strict 2>&1", func() *out { return g.swiftlint(&u) }, 2, u.srcPath(), "guard let rate = rates[currency] else { throw LedgerError.staleRate }", func() *out { return g.swiftlint(nil) })
	}
	o := &out{}
	tf := g.file(u.testPath())
	for _, t := range tf.tests[max(0, len(tf.tests)-3):] {
		o.okf("Test Case '-[%sTests.%s %s]' passed (0.%03d seconds).", u.module, u.class(), t, g.between(1, 60))
	}
	o.okf("Test Suite '%s' passed at %s.", u.class(), g.clock.Format("2006-01-02 15:04:05.000"))
	o.okf("\t Executed %d tests, with 0 failures (0 unexpected) in 0.%03d (0.%03d) seconds", len(tf.tests)+1, g.between(10, 99), g.between(100, 199))
	g.say("Re-running the suite that failed.", g.sh(fmt.Sprintf("cd ios/Packages/EmberKit && swift test --filter %sTests.%s 2>&1 | tail -n 5", u.module, u.class()), o, 0))
	if g.chance(0.6) {
		reg := g.word(func() string { return u.typ + title(g.pick(nouns)) + "RegressionTests" })
		rp := fmt.Sprintf("%s/Tests/%sTests/%s.swift", kitDir, u.module, reg)
		t1, t2 := g.wrote(g.swiftTest(), "test"), g.wrote(g.swiftTest(), "test")
		g.say("Adding a regression test for the rounding case.", g.write(g.wrote(rp, "path"), strings.Join([]string{
			"import XCTest",
			"@testable import " + u.module,
			"",
			"final class " + reg + ": XCTestCase {",
			"    func " + t1 + "() throws {",
			fmt.Sprintf("        let sut = %s.fixture(currency: .eur)", u.typ),
			fmt.Sprintf("        XCTAssertEqual(try sut.%s(.fixture(amount: 10_05)).minorUnits, %d)", u.fn, g.between(900, 1100)),
			"    }",
			"",
			"    func " + t2 + "() throws {",
			fmt.Sprintf("        let sut = %s.fixture(currency: .sek)", u.typ),
			fmt.Sprintf("        XCTAssertEqual(try sut.%s(.fixture(amount: 0_01)).minorUnits, 0)", u.fn),
			"    }",
			"}",
		}, "\n")))
	}
	if g.chance(0.5) {
		if g.chance(0.4) {
			v := g.swiftUnit()
			g.say("Running the whole package again.", g.run("cd ios/Packages/EmberKit && swift test 2>&1")(g.swiftTestRun(&v, nil)))
			g.say("That failure is in "+v.class()+", which this change does not touch; it looks timing-dependent. Re-running once to confirm it is flaky.", g.run("cd ios/Packages/EmberKit && swift test 2>&1")(g.swiftTestRun(nil, nil)))
		} else {
			g.say("Running the whole package again.", g.run("cd ios/Packages/EmberKit && swift test 2>&1")(g.swiftTestRun(nil, nil)))
		}
	}
	g.say("And the app target, to make sure nothing else depended on the old rounding.", g.sh(`cd ios && xcodebuild -workspace Ember.xcworkspace -scheme Ember -configuration Debug -destination "platform=iOS Simulator,name=iPhone 15 Pro,OS=17.5" build 2>&1`, g.xcodeBuild(nil), 0))
	g.commit("ios", "Round "+strings.ToLower(u.module)+" amounts once, half-up")
	g.summary("Done. The failing case in "+u.class()+" came from rounding twice in "+u.typ+"."+u.fn+";", "it now rounds once after the fee. The package tests and the app build pass.")
}

// run is a bash call of cmd taking its output and exit status together.
func (g *gen) run(cmd string) func(*out, int) act {
	return func(o *out, exit int) act { return g.sh(cmd, o, exit) }
}

// someLines picks up to n line indexes of f with code on them.
func (g *gen) someLines(f *file, n int) []int {
	var r []int
	for tries := 0; tries < 40 && len(r) < n; tries++ {
		i := g.r.IntN(len(f.lines))
		if len(strings.TrimSpace(f.lines[i])) > 12 && !g.lineClaimed(f.path, i+1) {
			r = append(r, i)
		}
	}
	return r
}

// lineClaimed says line n of p clashes with a site handed out, and
// claims it otherwise, so a grep hit never shows a failure's site.
func (g *gen) lineClaimed(p string, n int) bool {
	base := path.Base(p)
	s := fmt.Sprint(n)
	for _, m := range g.sites[base] {
		t := fmt.Sprint(m)
		if strings.HasPrefix(s, t) || strings.HasPrefix(t, s) {
			return true
		}
	}
	g.sites[base] = append(g.sites[base], n)
	return false
}

func (g *gen) taskXcodeBump(first bool) {
	dep := g.pick([]string{"Alamofire to 5.10.2", "swift-collections to 1.1.6", "KeychainAccess to 4.2.3", "swift-log to 1.6.2"})
	g.task(g.greet(first) + "Please bump " + dep + " in EmberKit and make sure the app still builds for the simulator. " + g.ref() + " " + g.pick([]string{"Don't upgrade anything else.", "Keep Xcode 16.2 as the toolchain.", "We need this before the next TestFlight build."}))
	pkg := kitDir + "/Package.swift"
	name := strings.Fields(dep)[0]
	g.say("Reading the package manifest.", g.read(pkg))
	ver := strings.Fields(dep)[2]
	j := g.editable(pkg, 1)
	adr := g.wrote(g.word(func() string { return fmt.Sprintf("adr-%04d-%s", g.between(10, 200), g.chars(lower, 4)) }), "id")
	g.say("Updating the requirement.", g.edit(pkg, j, 1, []string{
		fmt.Sprintf("        // pinned exactly until the adapter migration, see %s", adr),
		fmt.Sprintf("        .package(url: \"https://github.com/%s.git\", exact: \"%s\"),", g.pick([]string{"Alamofire/Alamofire", "apple/swift-collections", "kishikawakatsumi/KeychainAccess", "apple/swift-log"}), ver),
	}))
	o := &out{}
	o.okf("Updating https://github.com/%s.git", strings.ToLower(name))
	o.okf("Updated https://github.com/%s.git (%d.%02ds)", strings.ToLower(name), g.between(0, 3), g.between(0, 99))
	o.ok("Computing version for " + strings.ToLower(name))
	o.okf("Computed %s at %s (%d.%02ds)", strings.ToLower(name), ver, g.between(0, 3), g.between(0, 99))
	o.okf("Updating %s from %s to %s", strings.ToLower(name), g.pick([]string{"5.9.1", "1.1.4", "4.2.2", "1.6.1"}), ver)
	g.say("Resolving the package graph.", g.sh("cd ios/Packages/EmberKit && swift package update "+strings.ToLower(name)+" 2>&1", o, 0))
	u := g.swiftUnit()
	g.say("Building the app for the simulator.", g.sh(`cd ios && xcodebuild -workspace Ember.xcworkspace -scheme Ember -destination "platform=iOS Simulator,name=iPhone 15 Pro,OS=17.5" build 2>&1`, g.xcodeBuild(&u), 65))
	fl := g.takeFails()
	line := fl[len(fl)-1]
	g.say("The new version changed an API "+u.src+" relies on. Looking at the code around the error.", g.readRange(u.srcPath(), line-15, fl[0]+15))
	f := g.file(u.srcPath())
	helper := g.wrote(g.camelID(), "id")
	var fixes []act
	for k, l := range fl {
		in := indentOf(f.lines[l-1])
		repl := in + "let amount = Money(minorUnits: entry.amount.minorUnits, currency: currency)"
		if k == len(fl)-1 {
			repl = in + fmt.Sprintf("let %s = try Money(minorUnits: Int(truncating: entry.amount as NSNumber), currency: currency)", helper)
		}
		fixes = append(fixes, g.fixAt(u.srcPath(), l, []string{repl}))
	}
	g.say(map[bool]string{true: "Adapting the call.", false: "Adapting both places."}[len(fixes) == 1], fixes...)
	if g.chance(0.55) || g.lagging(opsgen.ErrorLine) {
		g.lintRound("Linting the changed module.", "cd ios/Packages/EmberKit && swiftlint lint --strict 2>&1", func() *out { return g.swiftlint(&u) }, 2, u.srcPath(), "guard let rate = rates[currency] else { throw LedgerError.staleRate }", func() *out { return g.swiftlint(nil) })
	}
	g.say("Building again.", g.sh(`cd ios && xcodebuild -workspace Ember.xcworkspace -scheme Ember -destination "platform=iOS Simulator,name=iPhone 15 Pro,OS=17.5" build 2>&1`, g.xcodeBuild(nil), 0))
	if v := g.swiftUnit(); v != u && g.chance(0.7) {
		g.say("Running the package tests too.", g.run("cd ios/Packages/EmberKit && swift test 2>&1")(g.swiftTestRun(nil, &v)))
		id2 := g.wrote(g.camelID(), "id")
		var fixes []act
		for _, l := range g.takeFails() {
			fixes = append(fixes, g.fixAt(v.srcPath(), l, []string{indentOf(g.file(v.srcPath()).lines[l-1]) + fmt.Sprintf("let %s = Money(minorUnits: entry.amount.minorUnits, currency: currency)", id2)}))
		}
		g.say(v.src+" uses the same API; adapting it too.", fixes...)
		g.say("Running the package tests again.", g.run("cd ios/Packages/EmberKit && swift test 2>&1")(g.swiftTestRun(nil, nil)))
	} else {
		g.say("Running the package tests too.", g.run("cd ios/Packages/EmberKit && swift test 2>&1")(g.swiftTestRun(nil, nil)))
	}
	if g.chance(0.6) || g.lagging(opsgen.UserTurn) {
		g.ask("The new version also deprecates the request adapter we use in a few places. Do you want me to migrate those call sites now, or leave the deprecation warnings for a follow-up?", "Leave them for now.", "Leave the warnings, we'll do it separately.", "Not in this PR.")
	}
	g.commit("ios", "Bump "+name+" and adapt "+u.typ)
	g.summary("Bumped "+name+".", "One call site in "+u.src+" needed adapting to the new API; the app builds and the package tests pass.")
}

func (g *gen) taskAppCrash(first bool) {
	u := swiftUnits[g.pick1(3, 4, 7, 8)]
	g.task(g.greet(first) + g.pick([]string{
		"TestFlight testers report a crash when they redeem a voucher and then change the tip.",
		"We're getting crash reports from the latest beta in checkout.",
		"The " + strings.ToLower(u.module) + " screen crashes for some testers.",
	}) + " Feedback: " + g.uTestflight() + " " + g.pickf(func() string { return "Crash group in Sentry: " + g.uSentry() }, func() string { return "Trace id from the backend side: " + g.uTrace() + "." }) +
		" " + g.pick([]string{"Please fix it and push a new beta.", "Fix first; ask me before uploading anything.", "We want a fix in today's beta."}))
	o, ips := g.xcodeUITest(true, u)
	g.say("Reproducing with the UI tests on the simulator.", g.sh(`cd ios && xcodebuild test -workspace Ember.xcworkspace -scheme EmberUITests -destination "platform=iOS Simulator,name=iPhone 15 Pro,OS=17.5" 2>&1 | grep -v "^\s*$"`, o, 65))
	g.say("The app crashed during a UI test. Symbolicating the crash report it left.", g.sh("python3 scripts/ips2crash.py "+ips, g.crashReport(u), 0))
	g.say("Reading "+u.src+" where the crashing frame points.", g.read(u.srcPath()))
	line := g.takeFails()[0]
	in := indentOf(g.file(u.srcPath()).lines[line-1])
	guard := g.wrote(g.camelID(), "id")
	g.say("Replacing the force unwrap with a guarded lookup.", g.fixAt(u.srcPath(), line, []string{
		in + "guard card.slots.indices.contains(index), let stamp = card.slots[index] else {",
		in + fmt.Sprintf("    Self.log.fault(\"%s: slot \\(index) missing\")", guard),
		in + "    return",
		in + "}",
	}))
	if g.chance(0.6) {
		tp := g.wrote(g.word(func() string { return fmt.Sprintf("ios/EmberUITests/%s%sUITests.swift", u.typ, title(g.pick(nouns))) }), "path")
		tn := g.wrote(g.swiftTest(), "test")
		g.say("Adding a UI regression test for the missing slot.", g.write(tp, strings.Join([]string{
			"import XCTest",
			"",
			"final class " + strings.TrimSuffix(path.Base(tp), ".swift") + ": XCTestCase {",
			"    func " + tn + "() throws {",
			"        let app = XCUIApplication()",
			"        app.launchArguments += [\"-uitest-fixture\", \"card-with-gap\"]",
			"        app.launch()",
			"        app.buttons[\"redeem\"].tap()",
			"        app.buttons[\"tip-15\"].tap()",
			"        XCTAssertTrue(app.staticTexts[\"total\"].waitForExistence(timeout: 5))",
			"    }",
			"}",
		}, "\n")))
	}
	if g.chance(0.5) || g.lagging(opsgen.ErrorLine) {
		g.lintRound("Linting the module.", "cd ios/Packages/EmberKit && swiftlint lint --strict 2>&1", func() *out { return g.swiftlint(&u) }, 2, u.srcPath(), "guard let rate = rates[currency] else { return }", func() *out { return g.swiftlint(nil) })
	}
	o2, _ := g.xcodeUITest(false, u)
	g.say("Running the UI tests again.", g.sh(`cd ios && xcodebuild test -workspace Ember.xcworkspace -scheme EmberUITests -destination "platform=iOS Simulator,name=iPhone 15 Pro,OS=17.5" 2>&1 | grep -v "^\s*$"`, o2, 0))
	g.say("The UI tests pass now. Should I upload a new TestFlight build with this fix (it bumps the build number), or do you want to review the change first?")
	g.user(g.pick([]string{"Go ahead and upload. ", "Upload it, yes. ", "Ship it to TestFlight. "}) + g.pickf(func() string { return "Release notes are in " + g.uNotion() }, func() string { return "Internal testers only; group is tracked in " + g.uTicket() + "." }, func() string { return "Mention it in " + g.uSlack() + " afterwards, I'll do that." }))
	fail := g.chance(0.65)
	g.say("Running the beta lane.", g.sh("cd ios && bundle exec fastlane ios beta 2>&1", g.fastlaneBeta(fail), b2i(fail)))
	if fail {
		plist := "ios/Ember/Info.plist"
		key := g.wrote(g.word(func() string { return "KWEmber" + title(g.pick(nouns)) + title(g.pick(nouns)) + "Reason" }), "key")
		g.say("App Store Connect rejected the upload. Adding the missing declaration to Info.plist.", g.addLines(plist, []string{"\t<key>" + key + "</key>", "\t<string>Used to suggest the nearest participating roaster.</string>"}))
		g.say("Retrying the lane.", g.sh("cd ios && bundle exec fastlane ios beta 2>&1", g.fastlaneBeta(false), 0))
	}
	g.commit("ios", "Guard missing stamp slots in "+u.typ)
	g.summary("The crash was a force unwrap in "+u.typ+"."+u.fn+" when a slot was missing; it now guards and logs a fault.", "A new beta is uploaded to TestFlight.")
}

// ---- ledger (Haskell) ----

func (g *gen) hsUnit() hsUnit { return hsUnits[g.r.IntN(len(hsUnits))] }

func (g *gen) taskLedgerFeature(first bool) {
	u := g.hsUnit()
	g.task(g.greet(first) + g.pick([]string{
		"ember-ledger needs a cash-rounding rule for SEK (round to whole kronor on payout).",
		"Please make " + u.fn + " reject batches that mix currencies instead of converting silently.",
		"Add a per-roaster daily cap on refunds in the ledger service.",
	}) + " " + g.ref() + " " + g.pick([]string{"Totals must stay preserving: the sum of payouts equals the batch net.", "Keep it pure, no IO in the settlement code.", "No schema changes in this PR."}))
	if g.chance(0.45) {
		g.say("Looking at the recent history of the service first.", g.sh("git log --oneline -n 30 -- services/ember-ledger", g.gitLog(30), 0))
	}
	g.say("Reading the module and its spec.", g.read(u.srcPath()), g.read(u.specPath()))
	if g.chance(0.6) || g.lagging(opsgen.UserTurn) {
		g.ask("Should the rule also apply to refunds, or only to payouts?", "Payouts only.", "Only payouts; refunds keep minor units.", "Payouts only, refunds stay exact.")
	}
	fn := g.wrote(g.camelID(), "id")
	g.say("Adding the rule to "+path.Base(u.srcPath())+".", g.addLines(u.srcPath(), []string{
		"",
		"-- | Cash rounding for currencies without minor units in circulation.",
		fn + " :: Currency -> Money -> Money",
		fn + " SEK (Money m) = Money (((m + 50) `div` 100) * 100)",
		fn + " _   m         = m",
	}))
	g.say("Building the service.", g.sh("cd services/ember-ledger && cabal build 2>&1", g.cabalBuild(&u), 1))
	fl := g.takeFails()
	line := fl[len(fl)-1]
	g.say("GHC rejects "+path.Base(u.srcPath())+". Looking at the lines around the error.", g.readRange(u.srcPath(), line-12, fl[0]+12))
	var fixes []act
	for k, l := range fl {
		repl := "  let gross = sum (map entryAmount entries)"
		if k == len(fl)-1 {
			repl = fmt.Sprintf("  let net = %s cur (applyFee (sum (map entryAmount entries)) (FeeBps 250))", fn)
		}
		fixes = append(fixes, g.fixAt(u.srcPath(), l, []string{repl}))
	}
	g.say(map[bool]string{true: "Fixing the expression.", false: "Fixing both errors."}[len(fixes) == 1], fixes...)
	g.say("Rebuilding.", g.sh("cd services/ember-ledger && cabal build 2>&1", g.cabalBuild(nil), 0))
	if g.chance(0.7) || g.lagging(opsgen.ErrorLine) {
		g.lintRound("Running hlint on the module.", "cd services/ember-ledger && hlint "+u.rel(u.srcPath()), func() *out { return g.hlint(&u) }, 1, u.srcPath(), "  let total = foldl' (+) 0 amounts", func() *out { return g.hlint(nil) })
	}
	g.say("Running the test suite.", g.sh("cd services/ember-ledger && cabal test 2>&1", g.hspecRun(&u, nil), 1))
	spec := u.specPath()
	g.say("One example fails. Checking the other callers that the spec exercises.", g.grepAct("applyFee|"+u.fn, hsDir+"/src", g.between(3, 9), []string{g.hsUnit().srcPath(), g.hsUnit().srcPath()}, func(f *file) []int { return g.someLines(f, 4) }))
	j := g.editable(u.srcPath(), 1)
	g.say("The rounding was applied before the fee; moving it after.", g.edit(u.srcPath(), j, 1, []string{
		fmt.Sprintf("  let rounded = %s cur net", fn),
		g.file(u.srcPath()).lines[j],
	}))
	if g.chance(0.6) {
		gp := g.wrote(g.word(func() string {
			return fmt.Sprintf("%s/test/golden/payouts-%s-%s.json", hsDir, strings.ToLower(g.pick([]string{"SEK", "EUR", "GBP"})), g.chars(lowAN, 5))
		}), "path")
		bid := g.wrote("bat_"+g.chars(alnum, 14), "id")
		g.say("Adding a golden file for the spec.", g.write(gp, fmt.Sprintf("{\n  \"batch\": %q,\n  \"currency\": \"SEK\",\n  \"entries\": [12345, 6789, 50],\n  \"net\": 19100\n}", bid)))
	}
	if g.chance(0.8) {
		item := g.wrote(g.hspecItem(), "test")
		g.say("Adding an example to the spec.", g.addLines(u.specPath(), []string{
			fmt.Sprintf("    it %q $ do", item),
			fmt.Sprintf("      %s SEK (Money 12345) `shouldBe` Money 12300", fn),
		}))
	}
	g.say("Running the spec for this module.", g.sh(fmt.Sprintf("cd services/ember-ledger && cabal test --test-options='--match \"/%s/\"' 2>&1", strings.ReplaceAll(u.module, ".", "/")), g.hspecRun(nil, &u), 0))
	_ = spec
	g.commit("ledger", "Add cash rounding to "+u.fn)
	g.summary("Added the rounding rule in "+u.module+" and applied it after fees;", "the build is clean and the spec passes.")
}

func (g *gen) taskCrashLoop(first bool) {
	chart := "ember-ledger"
	g.task(g.greet(first) + g.pick([]string{
		"ember-ledger pods are crash-looping in prod since the last deploy.",
		"We have an alert for ember-ledger restarts:",
		"Payout settlement stopped an hour ago and the ledger pods keep restarting.",
	}) + " " + g.uGrafana() + " " + g.pickf(func() string { return "Incident: " + g.uIncident() }, func() string { return "On-call thread: " + g.uSlack() }) + " " +
		g.pick([]string{"Don't roll back unless you have to; the migration already ran.", "Read-only on the database please.", "Keep the other charts untouched."}))
	o, pod := g.kubePods(chart, true)
	g.say("Checking the pods.", g.sh("kubectl -n ledger get pods -o wide", o, 0))
	g.say("One pod is in CrashLoopBackOff. Describing it.", g.sh("kubectl -n ledger describe pod "+pod, g.kubeDescribe(chart, pod), 0))
	lo := &out{}
	g.ledgerLogs(lo, true, true, g.n(80, 220))
	g.say("Reading the logs of the previous container.", g.sh("kubectl -n ledger logs "+pod+" --previous --tail=400", lo, 0))
	if g.chance(0.5) {
		g.say("Checking the payouts that the failing batch touches.", g.sh(`psql "$LEDGER_RO_DSN" -c "SELECT id, batch_id, roaster_id, amount, currency, state, settle_at FROM payouts WHERE settle_at > now() - interval '2 hours' ORDER BY settle_at"`, g.psqlRows(g.n(20, 70)), 0))
	} else {
		g.say("Looking at the insert that fails.", g.sh(`psql "$LEDGER_RO_DSN" -c "INSERT INTO payouts_probe SELECT * FROM payouts LIMIT 1"`, g.psqlError(), 1))
	}
	db := hsDir + "/src/Ember/Ledger/Db.hs"
	g.say("Reading the database layer.", g.read(db))
	j := g.editable(db, 1)
	clause := g.wrote(g.word(func() string {
		return "payouts_" + g.pick(nouns) + "_" + g.pick([]string{"dedupe", "once", "guard"}) + "_key"
	}), "key")
	g.say("Making the insert idempotent on the batch id.", g.edit(db, j, 1, []string{
		g.file(db).lines[j],
		fmt.Sprintf("  -- ON CONFLICT ON CONSTRAINT %s DO NOTHING: a retried batch must not fail the worker.", clause),
		fmt.Sprintf("  execute conn \"INSERT INTO payouts (batch_id, roaster_id, amount, currency) VALUES (?,?,?,?) ON CONFLICT ON CONSTRAINT %s DO NOTHING\" row", clause),
	}))
	g.say("Building.", g.sh("cd services/ember-ledger && cabal build 2>&1", g.cabalBuild(nil), 0))
	g.say("The fix builds. It needs a new image and a helm upgrade of ember-ledger in prod. Shall I build and roll it out now, or stage it first?")
	g.user(g.pick([]string{"Roll it out to prod now, ", "Go straight to prod, "}) + g.pickf(func() string { return "change is logged as " + g.uChange() + "." }, func() string { return "it's approved in " + g.uSlack() }) + " " + g.pick([]string{"Use --atomic.", "Watch the rollout and tell me when it's healthy."}))
	tag := g.hex(12)
	bo := &out{}
	bo.okf("#%d [internal] load build definition from Dockerfile", 1)
	for i, n := 0, g.n(10, 30); i < n; i++ {
		bo.okf("#%d [build %d/9] RUN cabal build --only-dependencies -j", i+2, g.between(1, 9))
		bo.okf("#%d DONE %d.%ds", i+2, g.between(0, 90), g.between(0, 9))
	}
	bo.okf("#%d exporting to image", g.between(30, 40))
	bo.okf("#%d pushing %s.dkr.ecr.%s.amazonaws.com/ember-ledger:sha-%s", g.between(40, 50), g.w.account, g.w.region, tag)
	bo.okf("#%d DONE %d.%ds", g.between(40, 50), g.between(0, 90), g.between(0, 9))
	g.say("Building and pushing the image.", g.sh("make -C services/ember-ledger image push TAG=sha-"+tag, bo, 0))
	if g.chance(0.7) {
		rp := g.wrote(g.word(func() string {
			return fmt.Sprintf("runbooks/ledger/%s-%s.md", g.pick([]string{"duplicate-payout", "crashloop", "settlement-retry"}), g.chars(lowAN, 4))
		}), "path")
		g.say("Writing down the runbook entry while it's fresh.", g.write(rp, strings.Join([]string{
			"# ember-ledger crash-looping on duplicate payouts",
			"",
			"Symptom: pods in CrashLoopBackOff, logs end in a unique violation on payouts.",
			fmt.Sprintf("Alert: %s", g.wrote(g.word(func() string { return "LedgerWorkerRestarts-" + g.chars(lowAN, 6) }), "id")),
			"",
			"1. Check `kubectl -n ledger logs deploy/ember-ledger --previous`.",
			"2. Confirm the batch was retried (settle:lock:* TTL expired).",
			"3. Inserts are idempotent since this fix; a crash loop here now means something else.",
		}, "\n")))
	}
	fail := g.chance(0.5)
	cmd := fmt.Sprintf("helm upgrade --install ember-ledger deploy/helm/ember-ledger -n ledger -f deploy/helm/ember-ledger/values-prod.yaml --set image.tag=sha-%s --atomic --timeout 5m --debug 2>&1", tag)
	g.say("Upgrading the release.", g.sh(cmd, g.helmUpgrade(chart, fail), b2i(fail)))
	if fail {
		g.say("The upgrade failed and was rolled back. Checking the namespace events.", g.sh("kubectl -n ledger get events --sort-by=.lastTimestamp | tail -n 60", g.kubeEvents(chart, true), 0))
		vals := helmDir + "/ember-ledger/values-prod.yaml"
		g.say("Reading the prod values.", g.read(vals))
		j := g.editable(vals, 1)
		g.say("Lowering the memory request so the pods fit the quota.", g.edit(vals, j, 1, []string{g.file(vals).lines[j], fmt.Sprintf("# requests lowered for the ledger quota, see %s", g.wrote(g.word(func() string { return "quota-note-" + g.chars(lowAN, 6) }), "id"))}))
		g.say("Upgrading again.", g.sh(cmd, g.helmUpgrade(chart, false), 0))
	}
	ro := &out{}
	for i := 0; i < g.between(2, 5); i++ {
		ro.okf("Waiting for deployment \"ember-ledger\" rollout to finish: %d of 3 updated replicas are available...", i%3)
	}
	ro.ok("deployment \"ember-ledger\" successfully rolled out")
	g.say("Watching the rollout.", g.sh("kubectl -n ledger rollout status deploy/ember-ledger --timeout=5m", ro, 0))
	o2, _ := g.kubePods(chart, false)
	g.say("Checking the pods.", g.sh("kubectl -n ledger get pods -o wide", o2, 0))
	g.commit("ledger", "Make payout inserts idempotent")
	g.summary("The pods crashed on a duplicate payout insert for a retried batch.", "Inserts are now idempotent; the new image is rolled out and all ledger pods are ready.")
}

// ---- contracts ----

func (g *gen) taskContracts(first bool) {
	u := solUnits[g.r.IntN(len(solUnits))]
	g.task(g.greet(first) + g.pick([]string{
		u.contract + "." + u.fn + " reverts for roasters in the first epoch.",
		"The " + u.contract + " tests fail since the epoch refactor.",
		"Please look at " + u.contract + ": " + u.fn + " behaves wrong at the epoch boundary.",
	}) + " Repro on Base Sepolia: " + g.uTx() + " " + g.pick([]string{"Keep the storage layout unchanged, it's behind a proxy.", "Don't touch the deploy script's addresses.", "Gas matters here; don't add storage reads in the loop."}))
	bfail := g.chance(0.6)
	var bo *out
	if bfail {
		bo = g.forgeBuild(&u)
	} else {
		bo = g.forgeBuild(nil)
	}
	g.say("Building the contracts.", g.sh("cd contracts && forge build 2>&1", bo, b2i(bfail)))
	if bfail {
		fl := g.takeFails()
		g.say("Reading the failing lines in context.", g.readRange(u.srcPath(), fl[len(fl)-1]-20, fl[0]+10))
		var fixes []act
		for k, l := range fl {
			repl := "        uint128 owed = pending[msg.sender];"
			if k > 0 {
				repl = "        uint128 owed = uint128(pending[msg.sender]);"
			}
			fixes = append(fixes, g.fixAt(u.srcPath(), l, []string{repl}))
		}
		g.say("Fixing the compile errors.", fixes...)
	}
	g.say("Running the tests with traces.", g.sh("cd contracts && forge test -vvv 2>&1", g.forgeTestRun(&u, nil), 1))
	acts := []act{g.read(u.srcPath())}
	g.say("Reading "+u.contract+".", acts...)
	j := g.editable(u.srcPath(), 1)
	errName := g.wrote(g.solError(), "id")
	g.say("The check compares against the wrong epoch. Fixing it and giving the revert its own error.", g.edit(u.srcPath(), j, 1, []string{
		g.file(u.srcPath()).lines[j],
		fmt.Sprintf("        if (epoch >= EpochMath.current(closesAt)) revert %s(epoch);", errName),
	}), g.addLines(u.srcPath(), []string{fmt.Sprintf("    error %s(uint256 epoch);", errName)}))
	if g.chance(0.65) {
		name := g.word(func() string { return u.contract + title(g.pick(nouns)) + "Regression" })
		tp := g.wrote(fmt.Sprintf("%s/test/%s.t.sol", solDir, name), "path")
		tn := g.wrote(g.forgeTest(false), "test")
		tf := g.wrote(g.forgeTest(true), "test")
		g.say("Adding a regression test for the first epoch.", g.write(tp, strings.Join([]string{
			"// SPDX-License-Identifier: BUSL-1.1",
			"pragma solidity 0.8.24;",
			"",
			`import {Test} from "forge-std/Test.sol";`,
			fmt.Sprintf(`import {%s} from "../src/%s.sol";`, u.contract, u.contract),
			"",
			"contract " + name + "Test is Test {",
			"    function " + tn + "() public {",
			fmt.Sprintf("        %s sut = new %s(address(0xBEEF), address(this));", u.contract, u.contract),
			"        vm.warp(block.timestamp + 7 days + 1);",
			fmt.Sprintf("        sut.%s(0, 1);", u.fn),
			"    }",
			"",
			"    function " + tf + "(uint96 amount) public {",
			"        amount = uint96(bound(amount, 1, 1e24));",
			fmt.Sprintf("        %s sut = new %s(address(0xBEEF), address(this));", u.contract, u.contract),
			"        vm.warp(block.timestamp + 7 days + 1);",
			fmt.Sprintf("        sut.%s(0, amount);", u.fn),
			"    }",
			"}",
		}, "\n")))
	}
	g.say("Running the suite again.", g.sh(fmt.Sprintf("cd contracts && forge test --match-contract %sTest 2>&1", u.contract), g.forgeTestRun(nil, &u), 0))
	if g.chance(0.6) || g.lagging(opsgen.UserTurn) {
		g.ask("The fix adds a custom error, so the revert data changes for this case. The indexer decodes reverts; is that acceptable?", "Yes, that's fine.", "Fine, the indexer team knows.", "OK.")
	}
	if g.chance(0.65) || g.lagging(opsgen.ErrorLine) {
		g.lintRound("Running slither over the contracts.", "cd contracts && slither . --fail-medium --filter-paths 'lib|test' 2>&1", func() *out { return g.slither(&u) }, 255, u.srcPath(), "        stamp.safeTransfer(msg.sender, amount);", func() *out { return g.slither(nil) })
	}
	if g.chance(0.6) {
		g.say("Starting a local anvil to check the deploy script end to end.", g.sh("anvil --silent=false > /tmp/anvil.log 2>&1 & sleep 2; head -n 60 /tmp/anvil.log", g.anvilBanner(), 0))
		sfail := g.chance(0.3)
		g.say("Deploying to the local node.", g.sh("cd contracts && forge script script/Deploy.s.sol --rpc-url http://127.0.0.1:8545 --broadcast --private-key $ANVIL_KEY 2>&1", g.forgeScript(!sfail), b2i(sfail)))
		if sfail {
			g.say("A stale broadcast cache reused an old nonce. Clearing it and deploying again.", g.sh("cd contracts && rm -rf broadcast/Deploy.s.sol/31337 cache/Deploy.s.sol && forge script script/Deploy.s.sol --rpc-url http://127.0.0.1:8545 --broadcast --private-key $ANVIL_KEY 2>&1", g.forgeScript(true), 0))
		}
		cfail := g.chance(0.4)
		g.say("Calling "+u.fn+" on the local deployment.", g.sh(fmt.Sprintf("cast send $%s_ADDR \"%s(uint256,uint128)\" 0 1000 --rpc-url http://127.0.0.1:8545 --private-key $ANVIL_KEY", strings.ToUpper(u.contract), u.fn), g.castSend(!cfail), b2i(cfail)))
		if cfail {
			g.say("That reverts because the epoch is still open on a fresh chain, as intended. Warping past it and retrying.", g.sh(fmt.Sprintf("cast rpc evm_increaseTime 604800 --rpc-url http://127.0.0.1:8545 && cast rpc evm_mine --rpc-url http://127.0.0.1:8545 && cast send $%s_ADDR \"%s(uint256,uint128)\" 0 1000 --rpc-url http://127.0.0.1:8545 --private-key $ANVIL_KEY", strings.ToUpper(u.contract), u.fn), g.castSend(true), 0))
		}
	}
	g.commit("contracts", "Fix the epoch check in "+u.contract+"."+u.fn)
	g.summary("Fixed the epoch comparison in "+u.contract+"."+u.fn+" without changing storage;", "the suite passes and a local deploy works.")
}

// ---- terraform ----

func (g *gen) taskTerraform(first bool) {
	m := tfModules[g.r.IntN(len(tfModules))]
	g.task(g.greet(first) + g.pick([]string{
		"We need more headroom on the ledger database: 400 GiB and gp3 throughput 500.",
		"Please add the snapshot window to the " + m.name + " module, we keep colliding with the backup job.",
		"The deployer role needs permission to manage the new node group.",
	}) + " " + g.ref() + " " + g.pick([]string{"Plan first; prod apply only after I confirm.", "Staging is fine to apply; prod needs my go-ahead.", "Don't let terraform replace anything."}))
	g.say("Reading the module.", g.read(m.main()), g.read(tfDir+"/modules/"+m.name+"/variables.tf"))
	val := g.wrote(g.word(func() string { return fmt.Sprintf("alias/ember-%s-%s", m.name, g.chars(lowAN, 6)) }), "id")
	j := g.editable(m.main(), 1)
	repl := []string{g.file(m.main()).lines[j], fmt.Sprintf("  kms_key_alias      = %q", val)}
	if g.chance(0.6) {
		repl = append(repl, fmt.Sprintf("  tags = merge(local.tags, { ChangeRef = %q })", g.wrote(g.word(func() string { return "tf-" + m.name + "-" + g.chars(lowAN, 7) }), "id")))
	}
	g.say("Adding the settings.", g.edit(m.main(), j, 1, repl))
	if g.chance(0.65) || g.lagging(opsgen.ErrorLine) {
		g.lintRound("Running tflint on the module first.", "cd infra/terraform && tflint --chdir=modules/"+m.name+" --format=default", func() *out { return g.tflint(m, true) }, 2, m.main(), "  instance_class          = var.instance_class", func() *out { return g.tflint(m, false) })
	}
	g.say("Planning.", g.sh("cd infra/terraform/envs/prod && terraform plan -out=tfplan -no-color 2>&1", g.tfPlan(m, true), 1))
	fl := g.takeFails()
	g.say("Looking at the lines terraform complains about.", g.readRange(m.main(), fl[len(fl)-1]-10, fl[0]+10))
	var fixes []act
	for k, l := range fl {
		repl := []string{"  # storage throughput is set through the parameter group, not the instance", "  iops = var.iops"}
		if k > 0 {
			repl = []string{"  # set in the parameter group"}
		}
		fixes = append(fixes, g.fixAt(m.main(), l, repl))
	}
	g.say("Fixing the configuration.", fixes...)
	g.say("Planning again.", g.sh("cd infra/terraform/envs/prod && terraform plan -out=tfplan -no-color 2>&1", g.tfPlan(m, false), 0))
	g.say("The plan updates the resources in place and replaces nothing. Do you want me to apply it to prod now?")
	g.user(g.pick([]string{"Yes, apply. ", "Go ahead. ", "OK, apply it. "}) + g.pickf(func() string { return "Change record: " + g.uChange() + "." }, func() string { return "It's in the window; see " + g.uSlack() }, func() string { return "Tracked in " + g.uTicket() + "." }))
	fail := g.chance(0.7)
	g.say("Applying the saved plan.", g.sh("cd infra/terraform/envs/prod && terraform apply -no-color tfplan 2>&1", g.tfApply(m, fail), b2i(fail)))
	if fail {
		line := g.takeFails()[0]
		g.say("AWS refused the change. Reading the resource again.", g.readRange(m.main(), line-5, line+25))
		j := g.editable(m.main(), 1)
		g.say("Adjusting the resource so the API accepts it.", g.edit(m.main(), j, 1, []string{g.file(m.main()).lines[j], "  apply_immediately = false"}))
		g.say("Planning and applying again.", g.sh("cd infra/terraform/envs/prod && terraform plan -out=tfplan -no-color 2>&1 | tail -n 3 && terraform apply -no-color tfplan 2>&1", g.tfApply(m, false), 0))
	}
	if g.chance(0.7) {
		ap := g.wrote(g.word(func() string { return fmt.Sprintf("%s/modules/%s/alarms_%s.tf", tfDir, m.name, g.pick(nouns)) }), "path")
		an := g.wrote(g.word(func() string {
			return fmt.Sprintf("ember-%s-%s-%s", m.name, g.pick([]string{"storage", "iops", "cpu", "conn"}), g.chars(lowAN, 5))
		}), "id")
		g.say("Adding an alarm so we hear about it before the disk fills again.", g.write(ap, strings.Join([]string{
			`resource "aws_cloudwatch_metric_alarm" "free_storage" {`,
			fmt.Sprintf("  alarm_name          = %q", an),
			`  namespace           = "AWS/RDS"`,
			`  metric_name         = "FreeStorageSpace"`,
			`  comparison_operator = "LessThanThreshold"`,
			"  threshold           = 53687091200",
			"  evaluation_periods  = 3",
			"  period              = 300",
			`  statistic           = "Minimum"`,
			fmt.Sprintf("  alarm_actions       = [%q]", g.wrote(fmt.Sprintf("arn:aws:sns:%s:%s:ember-oncall-%s", g.w.region, g.w.account, g.chars(lowAN, 6)), "id")),
			"}",
		}, "\n")))
	}
	if g.chance(0.5) {
		g.say("Checking the instance from the AWS side.", g.sh("aws rds describe-db-instances --db-instance-identifier ember-ledger-prod --output json", g.awsDescribeDB(true), 0))
	}
	g.commit("infra", "Tune the "+m.name+" module")
	g.summary("Applied the "+m.name+" change to prod;", "nothing was replaced and the outputs are unchanged.")
}

// ---- ansible ----

func (g *gen) taskAnsible(first bool) {
	role := ansRoles[g.r.IntN(len(ansRoles))]
	g.task(g.greet(first) + g.pick([]string{
		"Roll the new " + role.name + " settings to the prod hosts.",
		"The " + role.name + " role needs a config change for the larger pool.",
		"Please run the " + role.name + " role against prod; last run failed for someone.",
	}) + " " + g.ref() + " " + g.pick([]string{"Use --limit and go one host at a time.", "Check mode first.", "Don't restart the service during business hours, reload is fine."}))
	def := fmt.Sprintf("%s/roles/%s/defaults/main.yml", ansDir, role.name)
	tasks := fmt.Sprintf("%s/roles/%s/tasks/main.yml", ansDir, role.name)
	g.say("Reading the role.", g.read(def), g.read(tasks))
	key := g.wrote(g.word(func() string {
		return role.name + "_" + g.pick(nouns) + "_" + g.pick([]string{"pool_size", "timeout_ms", "max_conn", "buffer_kb"})
	}), "key")
	j := g.editable(def, 1)
	g.say("Adding the setting to the role defaults.", g.edit(def, j, 1, []string{g.file(def).lines[j], fmt.Sprintf("%s: %d", key, g.between(20, 400))}))
	if g.chance(0.5) {
		gv := ansDir + "/group_vars/" + role.group + ".yml"
		k2 := g.wrote(g.word(func() string {
			return role.name + "_" + g.pick(nouns) + "_" + g.pick([]string{"reload_grace", "log_level", "stats_period"})
		}), "key")
		g.say("Overriding it for the prod group.", g.addLines(gv, []string{fmt.Sprintf("%s: %d", k2, g.between(5, 120))}))
	}
	if g.chance(0.7) || g.lagging(opsgen.ErrorLine) {
		g.lintRound("Linting the role.", "cd infra/ansible && ansible-lint roles/"+role.name, func() *out { return g.ansibleLint(role, true) }, 2, tasks, "- name: Render "+role.name+" config", func() *out { return g.ansibleLint(role, false) })
	}
	g.say("Running the play in check mode.", g.sh(fmt.Sprintf("cd infra/ansible && ansible-playbook -i inventories/prod/hosts.ini site.yml --limit %s --tags %s --check --diff -v 2>&1", role.group, role.name), g.ansiblePlay(role, true), 2))
	if g.chance(0.5) {
		g.say("Checking the inventory.", g.read(ansDir+"/inventories/prod/hosts.ini"))
	}
	j = g.editable(tasks, 1)
	g.say("Fixing the task.", g.edit(tasks, j, 1, []string{g.file(tasks).lines[j], "  ignore_unreachable: false", "  throttle: 1"}))
	if g.chance(0.6) || g.lagging(opsgen.UserTurn) {
		g.ask("Check mode is clean now. Applying needs the service to pick up the new config: reload or restart?", "Reload only.", "Reload; no restarts today.", "Reload, please.")
	}
	if g.chance(0.55) {
		scen := g.word(func() string { return g.pick(nouns) + "-" + g.chars(lowAN, 5) })
		mp := g.wrote(fmt.Sprintf("%s/roles/%s/molecule/%s/molecule.yml", ansDir, role.name, scen), "path")
		g.say("Adding a molecule scenario so the role can be tested locally.", g.write(mp, strings.Join([]string{
			"---",
			"driver:",
			"  name: docker",
			"platforms:",
			"  - name: " + g.wrote(g.word(func() string { return role.name + "-jammy-" + g.chars(lowAN, 4) }), "id"),
			"    image: geerlingguy/docker-ubuntu2204-ansible:latest",
			"    pre_build_image: true",
			"provisioner:",
			"  name: ansible",
			"verifier:",
			"  name: ansible",
		}, "\n")))
	}
	g.say("Running the play for real, one host at a time.", g.sh(fmt.Sprintf("cd infra/ansible && ansible-playbook -i inventories/prod/hosts.ini site.yml --limit %s --tags %s --forks 1 2>&1", role.group, role.name), g.ansiblePlay(role, false), 0))
	if g.chance(0.5) {
		tpl := fmt.Sprintf("%s/roles/%s/templates/%s.ini.j2", ansDir, role.name, role.name)
		opt := g.wrote(g.word(func() string {
			return role.name + "_" + g.pick(nouns) + "_" + g.pick([]string{"idle_timeout", "query_wait", "server_lifetime"})
		}), "key")
		g.say("Wiring the new setting into the template.", g.addLines(tpl, []string{fmt.Sprintf("%s = {{ %s }}", strings.TrimPrefix(opt, role.name+"_"), opt)}))
	}
	g.commit("infra", "Roll out "+role.name+" settings")
	g.summary("The "+role.name+" role is applied on all "+role.group+" hosts.", "The failure in check mode came from the task itself; fixed and rolled out one host at a time.")
}

// ---- glaze (OCaml) ----

func (g *gen) taskGlaze(first bool) {
	u := mlUnits[g.r.IntN(len(mlUnits))]
	g.task(g.greet(first) + g.pick([]string{
		"glaze should reject price rules whose happy-hour windows overlap.",
		"Please make glaze emit tiers sorted by threshold.",
		"glaze accepts discounts over 100%; it must refuse them.",
	}) + " Spec: " + g.uNotion() + " " + g.pick([]string{"Keep the JSON output format stable.", "No new opam dependencies.", "OCaml 5.1 only."}))
	g.say("Reading the module.", g.read(u.srcPath()))
	if g.chance(0.6) || g.lagging(opsgen.UserTurn) {
		g.ask("Should an overlap be a hard error, or a warning that still compiles the rules?", "A hard error.", "Error, please.", "Make it an error.")
	}
	fn := g.wrote(g.word(func() string {
		return strings.ToLower(g.pick(verbs)) + "_" + g.pick(nouns) + "_" + g.pick([]string{"strict", "checked", "exn", "opt"})
	}), "id")
	g.say("Adding the check.", g.addLines(u.srcPath(), []string{"", fmt.Sprintf("let %s rules =", fn), "  match Window.first_overlap rules with", "  | Some (a, b) -> Error (`Overlap (a.name, b.name))", "  | None -> Ok rules"}))
	g.say("Building.", g.sh("cd tools/glaze && dune build @all 2>&1", g.duneBuild(&u), 1))
	l := g.takeFails()[0]
	g.say("Fixing the type error.", g.fixAt(u.srcPath(), max(1, l), []string{fmt.Sprintf("  let%%bind.Result rules = %s rules in", fn)}))
	g.say("Building again.", g.sh("cd tools/glaze && dune build @all 2>&1", g.duneBuild(nil), 0))
	g.say("Running the tests.", g.sh("cd tools/glaze && dune test 2>&1", g.duneTest(true), 1))
	j := g.editable(u.srcPath(), 1)
	g.say("The overlap check compared start times only. Comparing intervals instead.", g.edit(u.srcPath(), j, 1, []string{g.file(u.srcPath()).lines[j], "  (* windows are half-open: [start, stop) *)"}))
	if g.chance(0.6) {
		tp := g.wrote(g.word(func() string { return fmt.Sprintf("%s/test/test_%s_%s.ml", mlDir, u.module, g.pick(nouns)) }), "path")
		tn := g.wrote(g.alcoTest(), "test")
		tn2 := g.wrote(g.alcoTest(), "test")
		g.say("Adding a test case for it.", g.write(tp, strings.Join([]string{
			"open! Core",
			"",
			"let test_overlap () =",
			"  let rules = [ Fixtures.rule ~name:\"a\" ~from:9 ~until:11; Fixtures.rule ~name:\"b\" ~from:10 ~until:12 ] in",
			fmt.Sprintf("  Alcotest.(check bool) %q true (Result.is_error (Glaze.%s.%s rules))", tn, title(u.module), fn),
			"",
			"",
			"let test_touching () =",
			"  let rules = [ Fixtures.rule ~name:\"a\" ~from:9 ~until:10; Fixtures.rule ~name:\"b\" ~from:10 ~until:12 ] in",
			fmt.Sprintf("  Alcotest.(check bool) %q true (Result.is_ok (Glaze.%s.%s rules))", tn2, title(u.module), fn),
			"",
			fmt.Sprintf("let tests = [ Alcotest.test_case %q `Quick test_overlap; Alcotest.test_case %q `Quick test_touching ]", tn, tn2),
		}, "\n")))
	}
	g.say("Running the tests again.", g.sh("cd tools/glaze && dune test --force 2>&1", g.duneTest(false), 0))
	g.commit("glaze", "Reject overlapping windows in glaze")
	g.summary("glaze now rejects overlapping windows with an Overlap error naming both rules;", "the build and the tests pass.")
}

// ---- helm ----

func (g *gen) taskHelm(first bool) {
	chart := charts[g.r.IntN(len(charts))]
	vals := fmt.Sprintf("%s/%s/values-prod.yaml", helmDir, chart)
	g.task(g.greet(first) + g.pick([]string{
		"Raise the CPU limits of " + chart + " in prod, it's throttling at peak.",
		"Add the new rates endpoint to " + chart + "'s environment in prod.",
		"Please enable the export cron in " + chart + " for prod.",
	}) + " " + g.uGrafana() + " " + g.pick([]string{"Keep replicas as they are.", "No downtime please.", "Do it with helm, not kubectl edit."}))
	g.say("Reading the prod values and the deployment template.", g.read(vals), g.read(fmt.Sprintf("%s/%s/templates/deployment.yaml", helmDir, chart)))
	if g.chance(0.6) || g.lagging(opsgen.UserTurn) {
		g.ask("Do you also want the requests raised, or only the limits?", "Only the limits.", "Limits only for now.", "Just the limits.")
	}
	url := g.wrote(g.fresh(func() string { return fmt.Sprintf("https://rates.int.kilnworks.dev/v3/%s", g.chars(lower, 8)) }), "url")
	j := g.editable(vals, 1)
	repl := []string{g.file(vals).lines[j], "  RATES_V3_URL: " + url}
	if g.chance(0.6) {
		repl = append(repl, "podAnnotations:", fmt.Sprintf("  kilnworks.dev/change: %q", g.wrote(g.word(func() string { return "chg-" + g.chars(lowAN, 8) }), "id")))
	}
	g.say("Updating the values.", g.edit(vals, j, 1, repl))
	if g.chance(0.7) {
		pp := g.wrote(g.word(func() string { return fmt.Sprintf("%s/%s/templates/pdb-%s.yaml", helmDir, chart, g.pick(nouns)) }), "path")
		pn := g.wrote(g.word(func() string { return fmt.Sprintf("%s-pdb-%s", chart, g.chars(lowAN, 5)) }), "id")
		g.say("Adding a PodDisruptionBudget so the rollout never drops below two pods.", g.write(pp, strings.Join([]string{
			"apiVersion: policy/v1",
			"kind: PodDisruptionBudget",
			"metadata:",
			"  name: " + pn,
			"spec:",
			"  minAvailable: 2",
			"  selector:",
			"    matchLabels:",
			"      {{- include \"" + chart + ".selectorLabels\" . | nindent 6 }}",
		}, "\n")))
	}
	lo := &out{}
	lo.okf("==> Linting %s/%s", helmDir, chart)
	lo.ok("[INFO] Chart.yaml: icon is recommended")
	lo.ok("")
	lo.ok("1 chart(s) linted, 0 chart(s) failed")
	g.say("Linting the chart.", g.sh(fmt.Sprintf("helm lint %s/%s -f %s", helmDir, chart, vals), lo, 0))
	g.say("Rendering it to check the result.", g.sh(fmt.Sprintf("helm template %s %s/%s -n ledger -f %s", chart, helmDir, chart, vals), g.helmTemplateOut(chart), 0))
	fail := g.chance(0.7)
	cmd := fmt.Sprintf("helm upgrade --install %s %s/%s -n ledger -f %s --atomic --timeout 5m --debug 2>&1", chart, helmDir, chart, vals)
	g.say("Upgrading the release.", g.sh(cmd, g.helmUpgrade(chart, fail), b2i(fail)))
	if fail {
		g.say("The upgrade failed. Checking recent events in the namespace.", g.sh("kubectl -n ledger get events --sort-by=.lastTimestamp | tail -n 60", g.kubeEvents(chart, true), 0))
		if g.chance(0.6) {
			lo := &out{}
			g.ledgerLogs(lo, true, true, g.n(60, 160))
			g.say("And the logs of the pods the failed revision started.", g.sh(fmt.Sprintf("kubectl -n ledger logs -l app.kubernetes.io/name=%s --tail=300 --prefix=false", chart), lo, 0))
		}
		j := g.editable(vals, 1)
		g.say("Adjusting the values.", g.edit(vals, j, 1, []string{g.file(vals).lines[j], "  # requests must stay under the limit"}))
		g.say("Upgrading again.", g.sh(cmd, g.helmUpgrade(chart, false), 0))
	}
	o, _ := g.kubePods(chart, false)
	g.say("Checking the pods.", g.sh("kubectl -n ledger get pods -o wide -l app.kubernetes.io/name="+chart, o, 0))
	g.commit("helm", "Update "+chart+" prod values")
	g.summary("The "+chart+" release is upgraded in prod with the new values;", "all pods are running.")
}

// ---- data ----

func (g *gen) taskDoublePayout(first bool) {
	g.task(g.greet(first) + g.pickf(func() string {
		return "Finance says some payouts were settled twice yesterday for roaster " + g.uRoaster() + "."
	}, func() string { return "A roaster (" + g.uRoaster() + ") reports a missing payout for last week." }, func() string {
		return "Redis memory on the ledger cache is climbing; also check whether payouts are stuck."
	}) + " " + g.pick([]string{"Read-only on the prod database.", "Don't flush anything in Redis.", "Write up what you find; don't fix data yet."}) + " " + g.ref())
	g.say("Looking at the recent payouts.", g.sh(`psql "$LEDGER_RO_DSN" -c "SELECT id, batch_id, roaster_id, amount, currency, state, settle_at FROM payouts WHERE settle_at > now() - interval '2 days' ORDER BY settle_at"`, g.psqlRows(g.n(40, 120)), 0))
	g.say("Checking the query plan of the settlement lookup.", g.sh(`psql "$LEDGER_RO_DSN" -c "EXPLAIN (ANALYZE, BUFFERS) SELECT p.* FROM payouts p JOIN roasters r ON r.id = p.roaster_id WHERE r.state = 'active' AND p.created_at >= now() - interval '7 days'"`, g.psqlExplain(), 0))
	g.say("Looking at the cache.", g.sh(`redis-cli -u "$LEDGER_REDIS_URL" --tls INFO`, g.redisInfo(), 0))
	g.say("Listing the settlement locks.", g.sh(`redis-cli -u "$LEDGER_REDIS_URL" --tls --scan --pattern 'settle:lock:*' | head -n 200`, g.redisScan("settle:lock"), 0))
	g.say("Checking one lock on the replica the service reads from.", g.sh(`redis-cli -u "$LEDGER_REDIS_REPLICA_URL" --tls SET settle:probe 1 EX 5`, g.redisError(), 1))
	if g.chance(0.6) {
		lo := &out{}
		g.ledgerLogs(lo, true, true, g.n(50, 150))
		g.say("Checking the settlement worker's logs for retries.", g.sh("kubectl -n ledger logs deploy/ember-worker --since=24h --tail=400", lo, 0))
	}
	if g.chance(0.5) {
		g.say("And through the cluster endpoint.", g.sh(`redis-cli -u "$LEDGER_REDIS_CLUSTER_URL" --tls SET settle:probe 1 EX 5`, g.redisError(), 1))
	}
	if g.chance(0.8) {
		g.say("Trying the settlement function on staging.", g.sh(`psql "$LEDGER_STAGING_DSN" -c "SELECT settle_batch(batch_id) FROM payouts WHERE state = 'pending' LIMIT 1"`, g.psqlError(), 1))
	}
	g.say("The settlement lock can expire before a slow batch commits, so a retry settles it again. Should I write a migration with a unique guard, or only a report for finance for now?")
	g.user(g.pick([]string{"Write the migration, but don't run it on prod. ", "Migration please; staging only. "}) + g.pickf(func() string { return "Finance tracks the affected payouts in " + g.uTicket() + "." }, func() string { return "Affected batch per finance: " + g.usr(g.uuid(), "uuid") + "." }))
	name := fmt.Sprintf("%s/migrations/%s_%s.sql", hsDir, g.clock.Format("20060102150405"), g.word(func() string { return g.pick(nouns) + "_" + g.pick([]string{"dedupe", "guard", "unique"}) }))
	idx := g.wrote(g.word(func() string { return "payouts_" + g.pick(nouns) + "_" + g.chars(lower, 4) + "_uniq" }), "key")
	g.say("Writing the migration.", g.write(name, strings.Join([]string{
		"-- Guard against settling a batch twice when the settlement lock expires.",
		"BEGIN;",
		fmt.Sprintf("CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS %s", idx),
		"    ON payouts (batch_id, roaster_id) WHERE state <> 'reversed';",
		fmt.Sprintf("ALTER TABLE payouts ADD CONSTRAINT %s CHECK (amount >= 0) NOT VALID;", g.wrote(g.word(func() string { return "payouts_" + g.pick(nouns) + "_" + g.chars(lower, 4) + "_chk" }), "key")),
		"COMMIT;",
	}, "\n")))
	mo := &out{}
	mo.okf("Applying: %s", path.Base(name))
	mo.okf("Applied: %s in %d.%dms", path.Base(name), g.between(10, 900), g.between(0, 9))
	mo.ok("Writing: ./db/schema.sql")
	g.say("Applying it on staging.", g.sh(`DATABASE_URL="$LEDGER_STAGING_DSN" dbmate --migrations-dir services/ember-ledger/migrations up`, mo, 0))
	g.commit("ledger", "Add unique guard on settled payouts")
	g.summary("Payouts were settled twice when the Redis lock expired before a slow batch committed.", "I added a migration with a unique guard, applied it on staging only.")
}

func (g *gen) taskExportLambda(first bool) {
	m := tfModules[4] // iam_ci
	g.task(g.greet(first) + g.pick([]string{
		"The nightly export lambda has been failing since midnight.",
		"Exports to the data team's bucket stopped.",
	}) + " Alert: " + g.uIncident() + " " + g.pick([]string{"Don't widen IAM beyond the exports bucket.", "Least privilege please.", "Ask before applying anything in prod."}))
	g.say("Checking which identity I have.", g.sh("aws sts get-caller-identity", g.awsIdentity(), 0))
	g.say("Tailing the lambda's logs.", g.sh(fmt.Sprintf("aws logs tail /aws/lambda/ember-export-nightly --since 12h --region %s", g.w.region), g.awsLogsTail(true), 0))
	g.say("Listing what did get written.", g.sh(fmt.Sprintf("aws s3 ls s3://ember-exports-prod/%s/ --region %s", g.clock.Format("2006/01/02"), g.w.region), g.awsS3Ls(), 0))
	if g.chance(0.6) {
		g.say("Invoking it once by hand.", g.sh("aws lambda invoke --function-name ember-export-nightly --payload '{\"dryRun\":true}' --cli-binary-format raw-in-base64-out /tmp/out.json && cat /tmp/out.json", g.lambdaInvoke(), 0))
	}
	eo := &out{}
	g.awsCLIError(eo)
	g.say("Trying a write with the export role.", g.sh(fmt.Sprintf("aws s3 cp ./exports/probe.parquet s3://ember-exports-prod/%s/ --profile ember-export --debug 2>&1 | tail -n 12", g.clock.Format("2006/01/02")), eo, 1))
	g.say("Reading the IAM module.", g.read(m.main()))
	j := g.editable(m.main(), 1)
	sid := g.wrote(g.word(func() string { return "ExportWrite" + title(g.pick(nouns)) + fmt.Sprint(g.between(10, 99)) }), "id")
	g.say("Granting the export role write access to the exports prefix only.", g.edit(m.main(), j, 1, []string{
		g.file(m.main()).lines[j],
		fmt.Sprintf("  # Sid %s: s3:PutObject on ember-exports-prod/* only", sid),
		fmt.Sprintf("  # expire probe objects: lifecycle rule %s", g.wrote(g.word(func() string { return "expire-probes-" + g.chars(lowAN, 6) }), "id")),
	}))
	if g.chance(0.7) {
		pp := g.wrote(g.word(func() string {
			return fmt.Sprintf("%s/modules/iam_ci/policies/export-write-%s.json", tfDir, g.chars(lower, 5))
		}), "path")
		g.say("Putting the statement in its own policy document.", g.write(pp, strings.Join([]string{
			"{",
			`  "Version": "2012-10-17",`,
			`  "Statement": [`,
			"    {",
			fmt.Sprintf(`      "Sid": %q,`, sid),
			`      "Effect": "Allow",`,
			`      "Action": ["s3:PutObject", "s3:AbortMultipartUpload"],`,
			`      "Resource": "arn:aws:s3:::ember-exports-prod/*",`,
			fmt.Sprintf(`      "Condition": {"StringEquals": {"aws:SourceVpce": %q}}`, g.wrote(g.awsID("vpce"), "id")),
			"    }",
			"  ]",
			"}",
		}, "\n")))
	}
	g.say("Planning.", g.sh("cd infra/terraform/envs/prod && terraform plan -out=tfplan -no-color 2>&1", g.tfPlan(m, false), 0))
	g.say("The plan only changes the role policy. Apply it to prod?")
	g.user(g.pick([]string{"Yes. ", "Apply. "}) + g.pickf(func() string { return "Logged as " + g.uChange() + "." }, func() string { return "Approved in " + g.uSlack() }))
	g.say("Applying.", g.sh("cd infra/terraform/envs/prod && terraform apply -no-color tfplan 2>&1", g.tfApply(m, false), 0))
	ok := &out{}
	ok.okf("upload: exports/probe.parquet to s3://ember-exports-prod/%s/probe.parquet", g.clock.Format("2006/01/02"))
	g.say("Retrying the write.", g.sh(fmt.Sprintf("aws s3 cp ./exports/probe.parquet s3://ember-exports-prod/%s/ --profile ember-export", g.clock.Format("2006/01/02")), ok, 0))
	g.commit("infra", "Let the export role write to the exports bucket")
	g.summary("The export role lost s3:PutObject in the last IAM refactor;", "it is restored for the exports bucket only and a test write succeeds.")
}
