package kilngen

import (
	"fmt"
	"path"
	"strings"
)

// The iOS app: swift test, xcodebuild, simulator crash reports, fastlane.

func (g *gen) home() string { return "/Users/" + g.w.user + "/ember" }

var swiftCompileErrors = []struct{ msg, code, caret string }{
	{"cannot convert value of type 'Decimal' to expected argument type 'Int'", "        let fee = entry.amount * feeRate", "                  ^~~~~~~~~~~~~~~~~~~~~"},
	{"value of type 'LedgerEntry' has no member 'minorUnits'", "        guard entry.minorUnits > 0 else { throw LedgerError.nonPositiveAmount }", "              ~~~~~ ^~~~~~~~~~"},
	{"missing argument for parameter 'currency' in call", "        return Money(minorUnits: total)", "                                       ^"},
	{"call can throw but is not marked with 'try'", "        let rate = session.currentRate(for: currency)", "                   ^"},
	{"expression is 'async' but is not marked with 'await'", "        let receipt = session.fetchReceipt(for: cart.id)", "                      ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~"},
	{"reference to captured var 'total' in concurrently-executing code", "            total += entry.amount.minorUnits", "            ^"},
	{"switch must be exhaustive", "        switch entry.kind {", "        ^"},
	{"type 'RefundCalculator' does not conform to protocol 'Sendable'", "public struct RefundCalculator: Sendable {", "              ^"},
}

// swiftCompileFailure writes the failure of compiling u's source into o
// and returns the line of the site.
func (g *gen) swiftCompileFailure(o *out, u swiftUnit, note bool) {
	e := swiftCompileErrors[g.r.IntN(len(swiftCompileErrors))]
	line := g.site(u.src, 40, g.file(u.srcPath()).len()-2)
	col := len(indentOf(e.code)) + 1
	site := g.errl(fmt.Sprintf("Sources/%s/%s:%d", u.module, u.src, line), "site")
	g.setLine(u.srcPath(), line, e.code)
	g.failed(line)
	o.badf("%s/%s/Sources/%s/%s:%d:%d: error: %s", g.home(), kitDir, u.module, u.src, line, col, e.msg)
	_ = site
	o.bad(e.code)
	o.bad(e.caret)
	if note {
		m := swiftUnits[1] // Money.swift declares what the others call
		l := g.site(m.src, 20, 200)
		o.badf("%s/%s/Sources/%s/%s:%d: note: %s declared here", g.home(), kitDir, m.module, g.errl(fmt.Sprintf("%s:%d", m.src, l), "site"), g.between(5, 20), g.pick([]string{"'init(minorUnits:currency:)'", "'rounded(scale:mode:)'", "'amount'", "'LedgerEntry'"}))
	}
}

func (f *file) len() int { return len(f.lines) }

// swiftTestRun is `swift test` of the package: fail is the unit whose test
// fails (nil for a passing run).
func (g *gen) swiftTestRun(fail *swiftUnit, compileFail *swiftUnit) (*out, int) {
	o := &out{}
	g.fails = nil
	ok := fail == nil && compileFail == nil
	o.ok("Building for debugging...")
	steps := g.between(60, 120)
	i := 1
	for _, u := range swiftUnits {
		if i > steps-3 {
			break
		}
		if g.chance(0.6) {
			o.okf("[%d/%d] Compiling %s %s", i, steps, u.module, u.src)
			i += g.between(1, 4)
		}
	}
	if g.chance(0.5) {
		u := swiftUnits[g.r.IntN(len(swiftUnits))]
		l := g.site(u.src, 20, 400)
		o.okf("%s/%s/Sources/%s/%s:%d:%d: warning: initialization of immutable value '%s' was never used; consider replacing with assignment to '_' or removing it", g.home(), kitDir, u.module, u.src, l, g.between(5, 20), camel(g.pick(nouns), "Total"))
	}
	if compileFail != nil {
		o.okf("[%d/%d] Compiling %s %s", i, steps, compileFail.module, compileFail.src)
		g.swiftCompileFailure(o, *compileFail, g.chance(0.5))
		o.okf("[%d/%d] Compiling %s %s", i+1, steps, compileFail.module, g.pick([]string{"Endpoint.swift", "LedgerEntry.swift", "CheckoutView.swift"}))
		o.bad("error: fatalError")
		return o, 1
	}
	o.okf("[%d/%d] Linking EmberKitPackageTests", steps, steps)
	o.okf("Build complete! (%d.%02ds)", g.between(8, 60), g.between(0, 99))
	t := g.clock
	stamp := func() string {
		t = t.Add(g.dur(1, 900))
		return t.Format("2006-01-02 15:04:05.000")
	}
	o.okf("Test Suite 'All tests' started at %s.", stamp())
	o.okf("Test Suite 'EmberKitPackageTests.xctest' started at %s.", stamp())
	total, failures := 0, 0
	units := g.r.Perm(len(swiftUnits))
	shown := g.n(4, 9)
	failAt := -1
	if fail != nil {
		failAt = g.r.IntN(min(shown, len(units)))
		for k, ui := range units {
			if swiftUnits[ui] == *fail {
				units[k], units[failAt] = units[failAt], units[k]
			}
		}
	}
	for k := 0; k < shown; k++ {
		u := swiftUnits[units[k%len(units)]]
		f := g.file(u.testPath())
		cls := u.module + "Tests." + u.class()
		before := failures
		o.okf("Test Suite '%s' started at %s.", u.class(), stamp())
		n := 0
		tests := f.tests
		var failName string
		failPos := -1
		if k == failAt {
			failPos = g.r.IntN(len(tests) + 1)
			if g.chance(0.7) {
				failName = g.errl(g.swiftTest(), "test")
				g.hide(u.testPath())
			} else {
				failPos = g.r.IntN(len(tests))
				failName = tests[failPos]
			}
		}
		emit := func(name string, bad bool) {
			n++
			if !bad {
				o.okf("Test Case '-[%s %s]' started.", cls, name)
				o.okf("Test Case '-[%s %s]' passed (%d.%03d seconds).", cls, name, 0, g.between(1, 90))
				return
			}
			line := g.site(u.test, 12, max(20, f.len()))
			site := g.errl(fmt.Sprintf("Tests/%sTests/%s:%d", u.module, u.test, line), "site")
			_ = site
			o.badf("Test Case '-[%s %s]' started.", cls, name)
			exp, got := g.between(100, 99999), 0
			got = exp + g.pick1(-1, 1, 100, -100)
			switch g.r.IntN(3) {
			case 0:
				o.badf("%s/%s/Tests/%sTests/%s:%d: error: -[%s %s] : XCTAssertEqual failed: (\"%d\") is not equal to (\"%d\")", g.home(), kitDir, u.module, u.test, line, cls, name, got, exp)
			case 1:
				o.badf("%s/%s/Tests/%sTests/%s:%d: error: -[%s %s] : XCTAssertNil failed: \"Receipt(id: %s, total: %d)\"", g.home(), kitDir, u.module, u.test, line, cls, name, g.errl("rcp_"+g.chars(alnum, 14), "id"), got)
			default:
				o.badf("%s/%s/Tests/%sTests/%s:%d: error: -[%s %s] : failed: caught error: \"%s(entry: %s)\"", g.home(), kitDir, u.module, u.test, line, cls, name, g.pick(swiftErrs), g.errl(strings.ToUpper(g.uuid()), "uuid"))
			}
			o.badf("Test Case '-[%s %s]' failed (%d.%03d seconds).", cls, name, 0, g.between(1, 90))
			failures++
		}
		for j, name := range tests {
			if j == failPos && failName != "" && failName != name {
				emit(failName, true)
			}
			emit(name, name == failName)
		}
		if failPos == len(tests) && failName != "" {
			emit(failName, true)
		}
		for x := 0; k == failAt && x < 2 && g.chance(0.6-0.3*float64(x)); x++ {
			emit(g.errl(g.swiftTest(), "test"), true)
			g.hide(u.testPath())
		}
		total += n
		state := "passed"
		if k == failAt {
			state = "failed"
		}
		o.okf("Test Suite '%s' %s at %s.", u.class(), state, stamp())
		o.okf("\t Executed %d tests, with %d failure%s (0 unexpected) in %.3f (%.3f) seconds", n, failures-before, plural(failures-before), float64(n)*0.004, float64(n)*0.0043)
	}
	state := "passed"
	if failures > 0 {
		state = "failed"
	}
	o.okf("Test Suite 'EmberKitPackageTests.xctest' %s at %s.", state, stamp())
	o.okf("\t Executed %d tests, with %d failure%s (0 unexpected) in %.3f (%.3f) seconds", total, failures, plural(failures), float64(total)*0.004, float64(total)*0.0045)
	o.okf("Test Suite 'All tests' %s at %s.", state, stamp())
	o.okf("\t Executed %d tests, with %d failure%s (0 unexpected) in %.3f (%.3f) seconds", total, failures, plural(failures), float64(total)*0.004, float64(total)*0.0046)
	o.ok("◇ Test run started.")
	o.ok("↳ Testing Library Version: 102 (arm64e-apple-macos13.0)")
	o.ok("✔ Test run with 0 tests passed after 0.001 seconds.")
	if ok {
		return o, 0
	}
	return o, 1
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (g *gen) pick1(xs ...int) int { return xs[g.r.IntN(len(xs))] }

// hide marks a test file not to be read again: a failure named a test in
// it that its made-up content does not hold.
func (g *gen) hide(p string) { g.file(p).hidden = true }

// canRead says a file may be shown by a read.
func (g *gen) canRead(p string) bool {
	f, ok := g.files[p]
	return !ok || !f.hidden
}

var xcodeTargets = []string{"Ledger", "Checkout", "Networking", "Loyalty", "EmberUI", "Ember"}

// xcodeBuild is an xcodebuild build of the app; fail is the unit that
// does not compile (nil for a good build).
func (g *gen) xcodeBuild(fail *swiftUnit) *out {
	o := &out{}
	g.fails = nil
	ok := fail == nil
	xc := "/Applications/Xcode_16.2.app/Contents/Developer"
	o.ok("Command line invocation:")
	o.okf("    %s/usr/bin/xcodebuild -workspace Ember.xcworkspace -scheme Ember -configuration Debug -destination \"platform=iOS Simulator,name=iPhone 15 Pro,OS=17.5\" build", xc)
	o.ok("")
	o.ok("User defaults from command line:")
	o.ok("    IDEPackageSupportUseBuiltinSCM = YES")
	o.ok("")
	o.ok("Resolve Package Graph")
	o.ok("")
	o.ok("Resolved source packages:")
	for _, p := range []string{"swift-collections: https://github.com/apple/swift-collections.git @ 1.1.4", "Alamofire: https://github.com/Alamofire/Alamofire.git @ 5.9.1", "KeychainAccess: https://github.com/kishikawakatsumi/KeychainAccess.git @ 4.2.2", "swift-log: https://github.com/apple/swift-log.git @ 1.6.1", "EmberKit: " + g.home() + "/" + kitDir} {
		o.ok("  " + p)
	}
	o.ok("")
	o.ok("ComputeTargetDependencyGraph")
	o.okf("note: Building targets in dependency order")
	o.okf("note: Target dependency graph (%d targets)", len(xcodeTargets)+4)
	for _, t := range xcodeTargets {
		o.okf("    Target '%s' in project 'EmberKit'", t)
		o.okf("        ➜ Explicit dependency on target '%s' in project 'EmberKit'", g.pick(xcodeTargets))
	}
	o.ok("")
	dd := fmt.Sprintf("/Users/%s/Library/Developer/Xcode/DerivedData/Ember-%s", g.w.user, g.chars(lower, 28))
	o.okf("Build description signature: %s", g.passing(ok, g.hex(32), "hash"))
	o.okf("Build description path: %s/Build/Intermediates.noindex/XCBuildData/%s.xcbuilddata", dd, g.hex(32))
	o.ok("")
	files := g.n(18, 40)
	failAt := -1
	if fail != nil {
		failAt = g.r.IntN(files)
	}
	for i := 0; i < files; i++ {
		u := swiftUnits[g.r.IntN(len(swiftUnits))]
		if i == failAt {
			u = *fail
		}
		src := fmt.Sprintf("%s/%s/Sources/%s/%s", g.home(), kitDir, u.module, u.src)
		o.okf("SwiftCompile normal arm64 Compiling\\ %s %s (in target '%s' from project 'EmberKit')", u.src, src, u.module)
		o.okf("    cd %s/%s", g.home(), kitDir)
		o.okf("    builtin-swiftTaskExecution -- %s/Toolchains/XcodeDefault.xctoolchain/usr/bin/swift-frontend -frontend -c %s -primary-file %s -emit-dependencies-path %s/Build/Intermediates.noindex/EmberKit.build/Debug-iphonesimulator/%s.build/Objects-normal/arm64/%s.d -target arm64-apple-ios17.0-simulator -enable-objc-interop -sdk %s/Platforms/iPhoneSimulator.platform/Developer/SDKs/iPhoneSimulator17.5.sdk -I %s/Build/Products/Debug-iphonesimulator -enable-testing -g -module-cache-path %s/ModuleCache.noindex -swift-version 5 -enforce-exclusivity=checked -Onone -D SWIFT_PACKAGE -D DEBUG -module-name %s -target-sdk-version 17.5 -o %s/Build/Intermediates.noindex/EmberKit.build/Debug-iphonesimulator/%s.build/Objects-normal/arm64/%s.o",
			xc, g.pick([]string{"Money.swift", "LedgerEntry.swift", "Endpoint.swift"}), src, dd, u.module, strings.TrimSuffix(u.src, ".swift"), xc, dd, dd, u.module, dd, u.module, strings.TrimSuffix(u.src, ".swift"))
		if i == failAt {
			o.ok("")
			g.swiftCompileFailure(o, u, g.chance(0.5))
			if g.chance(0.75) {
				g.swiftCompileFailure(o, u, g.chance(0.3))
			}
		} else if g.chance(0.12) {
			l := g.site(u.src, 20, 400)
			o.okf("%s:%d:%d: warning: '%s' is deprecated: use async variant", src, l, g.between(5, 30), camel("fetch", g.pick(nouns)))
		}
		o.ok("")
	}
	if !ok {
		o.bad("** BUILD FAILED **")
		o.ok("")
		o.ok("")
		o.bad("The following build commands failed:")
		o.badf("\tSwiftCompile normal arm64 Compiling\\ %s %s/%s/Sources/%s/%s (in target '%s' from project 'EmberKit')", fail.src, g.home(), kitDir, fail.module, fail.src, fail.module)
		o.ok("\tBuilding workspace Ember with scheme Ember and configuration Debug")
		o.bad("(2 failures)")
		return o
	}
	o.okf("Ld %s/Build/Products/Debug-iphonesimulator/Ember.app/Ember.debug.dylib normal (in target 'Ember' from project 'Ember')", dd)
	o.okf("CodeSign %s/Build/Products/Debug-iphonesimulator/Ember.app (in target 'Ember' from project 'Ember')", dd)
	o.ok("    Signing Identity:     \"Sign to Run Locally\"")
	o.ok("")
	o.okf("RegisterWithLaunchServices %s/Build/Products/Debug-iphonesimulator/Ember.app", dd)
	o.ok("")
	o.ok("** BUILD SUCCEEDED **")
	return o
}

// xcodeUITest is xcodebuild test of the UI tests where the app crashes;
// it returns the path of the crash report it names.
func (g *gen) xcodeUITest(crash bool, u swiftUnit) (*out, string) {
	o := &out{}
	dev := fmt.Sprintf("Clone %d of iPhone 15 Pro", g.between(1, 3))
	pid := g.between(20000, 89999)
	o.okf("%s xcodebuild[%d:%d] [MT] IDETestOperationsObserverDebug: Writing diagnostic log for test session to:", g.clock.Format("2006-01-02 15:04:05.000"), g.between(10000, 99999), g.between(100000, 999999))
	xcres := fmt.Sprintf("/Users/%s/Library/Developer/Xcode/DerivedData/Ember-%s/Logs/Test/Test-Ember-%s.xcresult", g.w.user, g.chars(lower, 28), g.clock.Format("2006.01.02_15-04-05-0700"))
	o.ok(xcres)
	o.ok("")
	o.ok("Testing started")
	suites := []string{"CheckoutUITests", "LoyaltyUITests", "OnboardingUITests", "RefundFlowUITests"}
	var crashCase string
	crashed := -1
	if crash {
		crashed = g.r.IntN(len(suites))
	}
	ips := ""
	for si, s := range suites {
		o.okf("Test suite '%s' started on '%s - Ember (%d)'", s, dev, pid)
		for j, n := 0, g.n(3, 8); j < n; j++ {
			name := camel("test", g.pick(nouns), g.pick(verbs), g.pick(nouns)) + "()"
			if si == crashed && j == n/2 {
				crashCase = g.errl(g.swiftTest(), "test")
				o.badf("Test case '%s.%s()' failed on '%s - Ember (%d)' (%d.%03d seconds)", s, crashCase, dev, pid, g.between(3, 30), g.between(0, 999))
				ips = fmt.Sprintf("~/Library/Logs/DiagnosticReports/Ember-%s.ips", g.clock.Format("2006-01-02-150405"))
				o.badf("    Ember (%d) crashed in %s.%s(_:) : Crash report: %s", pid, u.typ, u.fn, ips)
				pid = g.between(20000, 89999)
				continue
			}
			o.okf("Test case '%s.%s' passed on '%s - Ember (%d)' (%d.%03d seconds)", s, name, dev, pid, g.between(2, 40), g.between(0, 999))
		}
	}
	o.ok("")
	if crash {
		o.bad("Failing tests:")
		o.badf("\t%s.%s()", suites[crashed], crashCase)
		o.ok("")
		o.bad("** TEST FAILED **")
	} else {
		o.ok("** TEST SUCCEEDED **")
	}
	return o, ips
}

var crashKinds = []struct{ exc, term, info string }{
	{"EXC_BREAKPOINT (SIGTRAP)", "Namespace SIGNAL, Code 5 Trace/BPT trap: 5", "Fatal error: Unexpectedly found nil while unwrapping an Optional value"},
	{"EXC_BAD_ACCESS (SIGSEGV)", "Namespace SIGNAL, Code 11 Segmentation fault: 11", "KERN_INVALID_ADDRESS at 0x0000000000000010"},
	{"EXC_CRASH (SIGABRT)", "Namespace SIGNAL, Code 6 Abort trap: 6", "*** Terminating app due to uncaught exception 'NSInvalidArgumentException', reason: '-[__NSCFNumber length]: unrecognized selector'"},
	{"EXC_BREAKPOINT (SIGTRAP)", "Namespace SIGNAL, Code 5 Trace/BPT trap: 5", "Fatal error: Index out of range"},
	{"EXC_BAD_INSTRUCTION (SIGILL)", "Namespace SIGNAL, Code 4 Illegal instruction: 4", "Swift runtime failure: arithmetic overflow"},
}

// crashReport is a symbolicated simulator crash report of the app, with
// the crashing thread in unit u's source.
func (g *gen) crashReport(u swiftUnit) *out {
	o := &out{}
	g.fails = nil
	k := crashKinds[g.r.IntN(len(crashKinds))]
	sim := g.uuid()
	o.ok("-------------------------------------")
	o.ok("Translated Report (Full Report Below)")
	o.ok("-------------------------------------")
	o.ok("")
	o.okf("Incident Identifier: %s", g.passing(true, strings.ToUpper(g.uuid()), "uuid"))
	o.okf("CrashReporter Key:   %s", g.hex(40))
	o.ok("Hardware Model:      Mac15,6")
	o.okf("Process:             Ember [%d]", g.between(20000, 89999))
	o.okf("Path:                /Users/%s/Library/Developer/CoreSimulator/Devices/%s/data/Containers/Bundle/Application/%s/Ember.app/Ember", g.w.user, strings.ToUpper(sim), strings.ToUpper(g.uuid()))
	o.ok("Identifier:          com.kilnworks.ember")
	o.okf("Version:             1.%d.0 (%d)", g.between(14, 22), g.between(3000, 5000))
	o.ok("Code Type:           ARM-64 (Native)")
	o.ok("Role:                Foreground")
	o.okf("Parent Process:      launchd_sim [%d]", g.between(1000, 9000))
	o.okf("Coalition:           com.apple.CoreSimulator.SimDevice.%s [%d]", strings.ToUpper(sim), g.between(1000, 9999))
	o.ok("")
	o.okf("Date/Time:           %s +0000", g.clock.Format("2006-01-02 15:04:05.0000"))
	o.ok("OS Version:          macOS 14.5 (23F79)")
	o.ok("Report Version:      12")
	o.ok("")
	o.badf("Exception Type:        %s", g.errl(k.exc, "code"))
	o.badf("Exception Codes:       0x%016x, %s", g.between(1, 2), g.errl(fmt.Sprintf("0x%016x", 0x100000000+g.r.Int64N(0xffffffff)), "id"))
	o.badf("Termination Reason:    %s", k.term)
	o.okf("Terminating Process:   exc handler [%d]", g.between(20000, 89999))
	o.ok("")
	o.ok("Triggered by Thread:  0")
	o.ok("")
	o.ok("Application Specific Information:")
	o.bad(k.info)
	o.ok("")
	o.ok("Thread 0 Crashed::  Dispatch queue: com.apple.main-thread")
	line := g.site(u.src, 30, g.file(u.srcPath()).len()-1)
	site := g.errl(fmt.Sprintf("%s:%d", u.src, line), "site")
	frames := []string{
		fmt.Sprintf("libswiftCore.dylib            \t       0x%x _assertionFailure(_:_:file:line:flags:) + %d", 0x18f000000+g.r.IntN(0xffffff), g.between(100, 400)),
		fmt.Sprintf("%-30s\t       %s %s.%s(_:) + %d (%s)", u.module, g.errl(fmt.Sprintf("0x%x", 0x104800000+g.r.IntN(0xfffff)), "id"), u.typ, u.fn, g.between(40, 900), site),
		fmt.Sprintf("%-30s\t       0x%x closure #1 in %sView.body.getter + %d (%sView.swift:%d)", "Ember.debug.dylib", 0x104200000+g.r.IntN(0xfffff), u.module, g.between(40, 900), u.module, g.site(u.module+"View.swift", 20, 300)),
		fmt.Sprintf("SwiftUI                       \t       0x%x 0x1c1e44000 + %d", 0x1c1e44000+g.r.IntN(0xfffff), g.between(100000, 999999)),
		fmt.Sprintf("SwiftUI                       \t       0x%x 0x1c1e44000 + %d", 0x1c1e44000+g.r.IntN(0xfffff), g.between(100000, 999999)),
		fmt.Sprintf("UIKitCore                     \t       0x%x -[UIApplication sendAction:to:from:forEvent:] + %d", 0x185000000+g.r.IntN(0xffffff), g.between(40, 200)),
	}
	g.setLine(u.srcPath(), line, "        let stamp = card.slots[index]!")
	g.failed(line)
	for i, fr := range frames {
		o.badf("%-3d %s", i, fr)
	}
	for i := len(frames); i < len(frames)+g.between(6, 14); i++ {
		o.okf("%-3d %-30s\t       0x%x %s + %d", i, g.pick([]string{"UIKitCore", "CoreFoundation", "GraphicsServices", "dyld_sim", "libdispatch.dylib"}), 0x180000000+g.r.IntN(0xfffffff), g.pick([]string{"__CFRunLoopRun", "__CFRUNLOOP_IS_CALLING_OUT_TO_A_SOURCE0_PERFORM_FUNCTION__", "GSEventRunModal", "UIApplicationMain", "start_sim", "_dispatch_main_queue_drain"}), g.between(20, 2000))
	}
	for t := 1; t < g.between(4, 9); t++ {
		o.ok("")
		o.okf("Thread %d:", t)
		for i := 0; i < g.between(2, 6); i++ {
			o.okf("%-3d %-30s\t       0x%x %s + %d", i, g.pick([]string{"libsystem_kernel.dylib", "libsystem_pthread.dylib", "Foundation", "CFNetwork"}), 0x180000000+g.r.IntN(0xfffffff), g.pick([]string{"__workq_kernreturn", "mach_msg2_trap", "_pthread_wqthread", "start_wqthread", "-[NSThread main]", "__psynch_cvwait"}), g.between(4, 400))
		}
	}
	o.ok("")
	o.ok("Thread 0 crashed with ARM Thread State (64-bit):")
	for r := 0; r < 29; r += 4 {
		var regs []string
		for j := r; j < min(r+4, 29); j++ {
			regs = append(regs, fmt.Sprintf("x%d: 0x%016x", j, g.r.Uint64()>>g.between(8, 40)))
		}
		o.ok("    " + strings.Join(regs, "   "))
	}
	o.ok("")
	o.ok("Binary Images:")
	for i, n := 0, g.n(10, 30); i < n; i++ {
		lib := g.pick([]string{"Ember.debug.dylib", "libswiftCore.dylib", "UIKitCore", "SwiftUI", "CoreFoundation", "Foundation", "libsystem_kernel.dylib", "Ledger", "Checkout", "Networking", "Loyalty"})
		base := 0x100000000 + g.r.IntN(0xfffffff)
		o.okf("       0x%x -        0x%x %s arm64  <%s> /Users/%s/Library/Developer/CoreSimulator/Volumes/iOS_21F79/Library/Developer/CoreSimulator/Profiles/Runtimes/iOS 17.5.simruntime/Contents/Resources/RuntimeRoot/%s", base, base+g.r.IntN(0xffffff), lib, g.chars(hexd, 32), g.w.user, path.Join("System/Library/Frameworks", lib))
	}
	o.ok("")
	o.ok("EOF")
	return o
}

var itmsErrors = []struct{ code, msg string }{
	{"ITMS-90189", "Redundant Binary Upload. You've already uploaded a build with build number '%d' for version number '1.%d.0'. Make sure you increment the build string before you upload your app to App Store Connect."},
	{"ITMS-90683", "Missing purpose string in Info.plist - Your app's code references one or more APIs that access sensitive user data, or the app has one or more entitlements that permit such access. The Info.plist file for the \"Ember.app\" bundle should contain a NSLocationWhenInUseUsageDescription key (build %d, 1.%d.0)."},
	{"ITMS-90478", "Invalid Version - The version entered has already been used (build %d, 1.%d.0)."},
	{"ITMS-91053", "Missing API declaration - Your app's code in the \"Ember\" file references one or more APIs that require reasons, including NSPrivacyAccessedAPICategoryUserDefaults (build %d, 1.%d.0)."},
}

// fastlaneBeta is `bundle exec fastlane ios beta`; failing, the upload is
// refused with an ITMS error.
func (g *gen) fastlaneBeta(fail bool) *out {
	o := &out{}
	ok := !fail
	t := g.clock
	ts := func() string { t = t.Add(g.dur(1000, 40000)); return t.Format("15:04:05") }
	step := func(name string) {
		o.okf("[%s]: ----------------------------------", ts())
		o.okf("[%s]: --- Step: %s ---", ts(), name)
		o.okf("[%s]: ----------------------------------", ts())
	}
	o.okf("[✔] 🚀 ")
	o.okf("[%s]: fastlane detected a Gemfile in the current directory", ts())
	o.okf("[%s]: Driving the lane 'ios beta' 🚀", ts())
	step("app_store_connect_api_key")
	step("latest_testflight_build_number")
	build := g.between(3000, 5000)
	ver := g.between(14, 22)
	o.okf("[%s]: Fetching the latest build number for version 1.%d.0", ts(), ver)
	o.okf("[%s]: Latest upload for version 1.%d.0 on iOS platform is build: %d", ts(), ver, build)
	step("increment_build_number")
	o.okf("[%s]: $ cd %s/ios && agvtool new-version -all %d && cd -", ts(), g.home(), build+1)
	o.okf("[%s]: ▸ Setting version of project Ember to:", ts())
	o.okf("[%s]: ▸     %d", ts(), build+1)
	step("match")
	o.ok("+-----------------------------------------------------------------+")
	o.ok("|                      Summary for match 2.225.0                  |")
	o.ok("+----------------------------------------+------------------------+")
	o.ok("| type                                   | appstore               |")
	o.ok("| readonly                               | true                   |")
	o.ok("| git_url                                | git@github.com:kilnworks/ios-certificates.git |")
	o.ok("+----------------------------------------+------------------------+")
	o.okf("[%s]: 🔓  Successfully decrypted certificates repo", ts())
	o.okf("[%s]: All required keys, certificates and provisioning profiles are installed 🙌", ts())
	step("build_app")
	for i, n := 0, g.n(20, 50); i < n; i++ {
		u := swiftUnits[g.r.IntN(len(swiftUnits))]
		o.okf("[%s]: ▸ Compiling %s", ts(), u.src)
	}
	o.okf("[%s]: ▸ Linking Ember", ts())
	o.okf("[%s]: ▸ Signing Ember.app", ts())
	o.okf("[%s]: ▸ Archive Succeeded", ts())
	o.okf("[%s]: Successfully exported and compressed dSYM file", ts())
	o.okf("[%s]: Successfully exported and signed the ipa file:", ts())
	o.okf("[%s]: %s/ios/Ember.ipa", ts(), g.home())
	step("upload_to_testflight")
	o.okf("[%s]: Ready to upload new build to TestFlight (App: %s)...", ts(), g.digits(10))
	o.okf("[%s]: Going to upload updated app to App Store Connect", ts())
	o.okf("[%s]: This might take a few minutes. Please don't interrupt the script.", ts())
	if fail {
		e := itmsErrors[g.r.IntN(len(itmsErrors))]
		code := g.errl(e.code, "code")
		o.badf("[%s]: [Transporter Error Output]: ERROR: %s: \"%s\"", ts(), code, fmt.Sprintf(e.msg, build, ver))
		o.badf("[%s]: Error uploading ipa file: ", ts())
		o.badf(" [Application Loader Error Output]: Delivery %s: %s", g.errl(g.uuid(), "uuid"), code)
		o.okf("[%s]: fastlane finished with errors", ts())
		o.ok("")
		o.bad("[!] Error uploading ipa file, for more information see above")
		o.ok("+------+--------------------------------+-------------+")
		o.ok("|                  fastlane summary                  |")
		o.ok("+------+--------------------------------+-------------+")
		o.ok("| Step | Action                         | Time (in s) |")
		o.ok("+------+--------------------------------+-------------+")
		o.okf("| 1    | app_store_connect_api_key      | 0           |")
		o.okf("| 2    | latest_testflight_build_number | %-11d |", g.between(1, 4))
		o.okf("| 3    | increment_build_number         | %-11d |", g.between(1, 3))
		o.okf("| 4    | match                          | %-11d |", g.between(2, 9))
		o.okf("| 5    | build_app                      | %-11d |", g.between(120, 400))
		o.okf("| 💥  | upload_to_testflight           | %-11d |", g.between(30, 200))
		o.ok("+------+--------------------------------+-------------+")
		return o
	}
	o.okf("[%s]: Successfully uploaded package to App Store Connect. It might take a few minutes until it's visible online.", ts())
	o.okf("[%s]: Delivery UUID: %s", ts(), g.passing(ok, g.uuid(), "uuid"))
	o.okf("[%s]: Successfully finished the upload to App Store Connect", ts())
	o.okf("[%s]: fastlane.tools finished successfully 🎉", ts())
	return o
}
