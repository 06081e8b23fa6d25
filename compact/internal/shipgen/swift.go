package shipgen

import (
	"fmt"
	"strings"
	"time"
)

// This file writes what the Swift side prints: swift build and swift
// test of TidewaterKit, xcodebuild test of the app, and crash reports.

const kitRoot = root + "/ios/TidewaterKit"

// swiftCompileError is a compile error in f at a planted site.
func (g *gen) swiftCompileError(o *out, f *srcFile, msg, code string) {
	// The column is where the argument starts in the code line.
	col := 8 + strings.Index(code, "(from: ") + len("(from: ") + 1
	site := g.errID("site", func() string { return fmt.Sprintf("%s:%d:%d", f.base(), g.between(20, 240), col) })
	n := 0
	fmt.Sscan(strings.Split(site, ":")[1], &n)
	o.errf("%s/%s: error: %s", root+"/"+dir(f.path), site, msg)
	w := len(fmt.Sprint(n + 2))
	o.addf("%*d |     public func %s(_ grams: Int) -> String {", w, n-2, f.funcs[0])
	o.addf("%*d |         let kg = Double(grams) / 1000", w, n-1)
	o.addf("%*d |         %s", w, n, code)
	o.errf("%*s |%s`- error: %s", w, "", strings.Repeat(" ", max(1, col)), msg)
	o.addf("%*d |     }", w, n+1)
	o.addf("%*d | ", w, n+2)
	o.add("")
}

// collectionsFiles are sources of swift-collections a clean build
// compiles.
var collectionsFiles = []string{"BitArray+Codable.swift", "BitArray+Collection.swift", "BitSet+SetAlgebra.swift", "Deque+Collection.swift", "Deque._Storage.swift",
	"Heap+Invariants.swift", "Heap.swift", "OrderedDictionary+Elements.swift", "OrderedDictionary.swift", "OrderedSet+Diffing.swift", "OrderedSet+Partial SetAlgebra.swift",
	"OrderedSet.swift", "TreeDictionary+Collection.swift", "TreeSet.swift", "_HashNode+Structural union.swift", "_HashTable+UnsafeHandle.swift", "_UnsafeBitSet.swift",
	"Rope+Builder.swift", "BigString+Chunk.swift", "BigString.swift", "Array+RangeReplaceableCollection.swift", "UnsafeMutableBufferPointer+Extras.swift"}

// swiftBuild writes swift build from clean; write, if not nil, writes
// the compile errors, and the build stops there.
func (g *gen) swiftBuild(o *out, write func(o *out)) {
	o.add("Building for debugging...")
	o.add("[0/4] Write sources")
	o.addf("[1/4] Write swift-version-%s.txt", g.fill(func() string { return strings.ToUpper(g.hex(16)) }))
	total := len(g.w.kit) + 6
	step := 3
	// A clean build compiles the dependency first.
	colls := head(collectionsFiles, g.scale(8))
	total += len(colls)
	for _, c := range colls {
		o.addf("[%d/%d] Compiling Collections %s", step, total, c)
		step++
	}
	if len(colls) > 0 {
		o.addf("[%d/%d] Emitting module Collections", step, total)
		step++
	}
	for i, f := range g.w.kit {
		if write != nil && i == len(g.w.kit)/2 {
			write(o)
			o.addf("[%d/%d] Compiling TidewaterKit %s", step, total, f.base())
			o.err("error: emit-module command failed with exit code 1 (use -v to see invocation)")
			o.exit = 1
			return
		}
		o.addf("[%d/%d] Compiling TidewaterKit %s", step, total, f.base())
		step++
		if g.chance(0.2) {
			site := g.fill(g.mkSiteCol(f.base(), 20, 240))
			o.addf("%s/%s: warning: %s", root+"/"+dir(f.path), site, pick(g, "variable 'calendar' was never mutated; consider changing to 'let' constant",
				"initialization of immutable value 'elapsed' was never used; consider replacing with assignment to '_' or removing it",
				"'init(identifier:)' is deprecated: renamed to 'TimeZone(identifier:)'", "no calls to throwing functions occur within 'try' expression"))
		}
	}
	o.addf("[%d/%d] Emitting module TidewaterKit", total-1, total)
	o.addf("Build complete! (%d.%02ds)", g.between(2, 30), g.r.IntN(100))
}

// xcFail is a failing XCTest case.
type xcFail struct {
	file  *srcFile // the tested type
	kind  string   // "equal", "unwrap", "throw"
	label string   // the test's -[Module.Class method], planted
}

// xctestSuites writes the XCTest run of the test classes of files xs,
// with fail in its class. It returns the tests run and failures.
func (g *gen) xctestSuites(o *out, module string, xs []*srcFile, fail *xcFail) (int, int) {
	total, failures := 0, 0
	t := g.now
	ts := func() string {
		t = t.Add(time.Duration(g.between(1, 40)) * time.Millisecond)
		return t.Format("2006-01-02 15:04:05.000")
	}
	o.addf("Test Suite 'All tests' started at %s.", ts())
	o.addf("Test Suite '%s.xctest' started at %s.", module, ts())
	for _, f := range xs {
		cls := f.test.name
		o.addf("Test Suite '%s' started at %s.", cls, ts())
		n := g.between(3, 8)
		failed := 0
		at := -1
		if fail != nil && fail.file == f {
			at = g.r.IntN(n)
		}
		var took float64
		for i := range n {
			if i == at {
				failed = g.xcFailure(o, module, f, fail)
				continue
			}
			name := g.fill(func() string { return "-[" + module + "." + cls + " " + g.swiftTestName() + "]" })
			d := float64(g.between(1, 90)) / 1000
			took += d
			o.addf("Test Case '%s' started.", name)
			o.addf("Test Case '%s' passed (%.3f seconds).", name, d)
		}
		total += n
		failures += failed
		if failed > 0 {
			o.errf("Test Suite '%s' failed at %s.", cls, ts())
			o.errf("\t Executed %d tests, with %d failure (0 unexpected) in %.3f (%.3f) seconds", n, failed, took, took+0.001)
		} else {
			o.addf("Test Suite '%s' passed at %s.", cls, ts())
			o.addf("\t Executed %d tests, with 0 failures (0 unexpected) in %.3f (%.3f) seconds", n, took, took+0.001)
		}
	}
	word := "passed"
	if failures > 0 {
		word = "failed"
	}
	for _, s := range []string{module + ".xctest", "All tests"} {
		line := fmt.Sprintf("Test Suite '%s' %s at %s.\n\t Executed %d tests, with %d failure%s (0 unexpected) in %d.%03d (%d.%03d) seconds",
			s, word, ts(), total, failures, map[bool]string{true: "", false: "s"}[failures == 1], g.r.IntN(2), g.r.IntN(1000), 1+g.r.IntN(2), g.r.IntN(1000))
		if failures > 0 {
			o.err(line)
		} else {
			o.add(line)
		}
	}
	return total, failures
}

// xcFailure writes the failing test case of fail and returns 1.
func (g *gen) xcFailure(o *out, module string, f *srcFile, fail *xcFail) int {
	fail.label = g.errID("test", func() string { return "-[" + module + "." + f.test.name + " " + g.swiftTestName() + "]" })
	testDir := root + "/" + dir(f.test.path)
	o.errf("Test Case '%s' started.", fail.label)
	site := g.errID("site", g.mkSite(f.test.base(), 18, 160))
	switch fail.kind {
	case "unwrap":
		o.errf("%s/%s: error: %s : XCTUnwrap failed: expected non-nil value of type \"Shipment\" - fixture %s", testDir, site, fail.label, g.errID("id", g.mkID("shp")))
	case "throw":
		o.errf("%s/%s: error: %s : failed: caught error: \"keyNotFound(CodingKeys(stringValue: \\\"estimatedDelivery\\\", intValue: nil), Swift.DecodingError.Context(codingPath: [CodingKeys(stringValue: \\\"data\\\", intValue: nil), _JSONKey(stringValue: \\\"Index %d\\\", intValue: %d)], debugDescription: \\\"No value associated with key CodingKeys(stringValue: \\\\\\\"estimatedDelivery\\\\\\\", intValue: nil) (\\\\\\\"estimatedDelivery\\\\\\\").\\\", underlyingError: nil))\"",
			testDir, site, fail.label, g.between(0, 9), g.between(0, 9))
		o.errf("%s/%s: error: %s : fixture shipment %s", testDir, g.errID("site", g.mkSite(f.test.base(), 18, 160)), fail.label, g.errID("id", g.mkID("shp")))
	default:
		pair := pick(g, [2]string{"Arrives 09:30", "Arrives 09:45"}, [2]string{"1.2 kg", "1.25 kg"}, [2]string{"3", "2"}, [2]string{"EH1 1YZ", "EH11YZ"}, [2]string{"Tue 5 Nov", "Wed 6 Nov"})
		o.errf("%s/%s: error: %s : XCTAssertEqual failed: (\"%s\") is not equal to (\"%s\") - shipment %s", testDir, site, fail.label, pair[0], pair[1], g.errID("id", g.mkID("shp")))
	}
	o.errf("Test Case '%s' failed (%.3f seconds).", fail.label, float64(g.between(1, 90))/1000)
	return 1
}

// swiftTest writes swift test of TidewaterKit.
func (g *gen) swiftTest(o *out, fail *xcFail) {
	o.add("Building for debugging...")
	srcs := g.w.others(g, g.w.kit, nil, g.between(1, 4))
	tests := g.w.others(g, g.w.kit, nil, g.between(1, 3))
	total := len(srcs) + len(tests) + 4
	o.addf("[1/%d] Write swift-version-%s.txt", total, g.fill(func() string { return strings.ToUpper(g.hex(16)) }))
	step := 2
	for _, f := range srcs {
		o.addf("[%d/%d] Compiling TidewaterKit %s", step, total, f.base())
		step++
	}
	o.addf("[%d/%d] Emitting module TidewaterKit", step, total)
	step++
	for _, f := range tests {
		o.addf("[%d/%d] Compiling TidewaterKitTests %s", step, total, f.test.base())
		step++
	}
	o.addf("[%d/%d] Linking TidewaterKitPackageTests", step, total)
	o.addf("Build complete! (%d.%02ds)", g.between(3, 40), g.r.IntN(100))
	xs := g.w.kit
	if n := g.scale(5); n < len(xs) {
		xs = g.w.others(g, g.w.kit, nil, n)
		if fail != nil && !hasFile(xs, fail.file) {
			xs[0] = fail.file
		}
	}
	_, failures := g.xctestSuites(o, "TidewaterKitTests", xs, fail)
	o.add("◇ Test run started.")
	o.add("↳ Testing Library Version: 6.0 (c1dfb4b28fd7f59)")
	o.add("↳ Target Platform: arm64e-apple-macos14.0")
	o.addf("✔ Test run with 0 tests passed after 0.00%d seconds.", g.between(1, 9))
	if failures > 0 {
		o.exit = 1
	}
}

func hasFile(xs []*srcFile, f *srcFile) bool {
	for _, x := range xs {
		if x == f {
			return true
		}
	}
	return false
}

// derivedData is the session's DerivedData folder of the app.
func (g *gen) derivedData() string {
	if g.w.suites["derived"] == nil {
		g.w.suites["derived"] = []string{"/Users/dev/Library/Developer/Xcode/DerivedData/Tidewater-" + g.fill(func() string { return g.rs("abcdefghijklmnopqrstuvwxyz", 28) })}
	}
	return g.w.suites["derived"][0]
}

// xcodebuildTest writes xcodebuild test of the app's scheme on a
// simulator, with the app's test classes; fail makes one fail.
func (g *gen) xcodebuildTest(o *out, only string, fail *xcFail) {
	dd := g.derivedData()
	cmd := "/Applications/Xcode.app/Contents/Developer/usr/bin/xcodebuild test -project Tidewater.xcodeproj -scheme Tidewater -destination \"platform=iOS Simulator,name=iPhone 16,OS=18.1\""
	if only != "" {
		cmd += " -only-testing:" + only
	}
	o.add("Command line invocation:\n    " + cmd + "\n\nUser defaults from command line:\n    IDEPackageSupportUseBuiltinSCM = YES\n")
	o.add("Resolve Package Graph\n\nResolved source packages:\n  TidewaterKit: " + kitRoot + "\n  swift-collections: https://github.com/apple/swift-collections @ 1.1.4\n")
	for _, s := range []string{"ComputePackagePrebuildTargetDependencyGraph", "Prepare packages", "CreateBuildRequest", "SendProjectDescription", "CreateBuildOperation"} {
		o.add(s + "\n")
	}
	o.add("ComputeTargetDependencyGraph\nnote: Building targets in dependency order\nnote: Target dependency graph (4 targets)\n    Target 'TidewaterTests' in project 'Tidewater'\n        ➜ Explicit dependency on target 'Tidewater' in project 'Tidewater'\n    Target 'Tidewater' in project 'Tidewater'\n        ➜ Explicit dependency on target 'TidewaterKit' in project 'TidewaterKit'\n    Target 'TidewaterKit' in project 'TidewaterKit'\n        ➜ Explicit dependency on target 'Collections' in project 'swift-collections'\n    Target 'Collections' in project 'swift-collections'\n")
	o.add("GatherProvisioningInputs\n\nCreateBuildDescription\n")
	var srcs []*srcFile
	srcs = append(srcs, g.w.app...)
	srcs = append(srcs, head(g.w.kit, g.scale(3)+1)...)
	for _, f := range srcs {
		target := "Tidewater"
		if f.kind == "kit" {
			target = "TidewaterKit"
		}
		o.addf("SwiftCompile normal arm64 Compiling\\ %s %s/%s (in target '%s' from project '%s')", f.base(), root, f.path, target, target)
		o.add("    cd " + root + "/ios")
		o.addf("    builtin-swiftTaskExecution -- /Applications/Xcode.app/Contents/Developer/Toolchains/XcodeDefault.xctoolchain/usr/bin/swift-frontend -frontend -c -primary-file %s/%s -emit-dependencies-path %s/Build/Intermediates.noindex/%s.build/Debug-iphonesimulator/%s.build/Objects-normal/arm64/%s.d -target arm64-apple-ios16.0-simulator -Xllvm -aarch64-use-tbi -enable-objc-interop -sdk /Applications/Xcode.app/Contents/Developer/Platforms/iPhoneSimulator.platform/Developer/SDKs/iPhoneSimulator18.1.sdk -swift-version 5 -Onone -module-name %s",
			root, f.path, dd, target, target, strings.TrimSuffix(f.base(), ".swift"), target)
		o.add("")
	}
	o.addf("Ld %s/Build/Products/Debug-iphonesimulator/Tidewater.app/Tidewater normal (in target 'Tidewater' from project 'Tidewater')\n    cd %s/ios\n", dd, root)
	o.addf("CodeSign %s/Build/Products/Debug-iphonesimulator/Tidewater.app (in target 'Tidewater' from project 'Tidewater')\n    cd %s/ios\n    Signing Identity:     \"Sign to Run Locally\"\n", dd, root)
	pid := g.between(20000, 90000)
	o.addf("%s xcodebuild[%d:%d] [MT] IDETestOperationsObserverDebug: %d.%03d elapsed -- Testing started completed.", g.now.Format("2006-01-02 15:04:05.000"), pid, g.between(1000000, 9000000), g.between(8, 40), g.r.IntN(1000))
	o.addf("%s xcodebuild[%d:%d] [MT] IDETestOperationsObserverDebug: 0.000 sec, +0.000 sec -- start", g.now.Format("2006-01-02 15:04:05.000"), pid, g.between(1000000, 9000000))
	xs := g.w.app
	if fail != nil && only != "" {
		xs = []*srcFile{fail.file}
	}
	_, failures := g.xctestSuites(o, "TidewaterTests", xs, fail)
	o.add("")
	// The result bundle is named by the time of the run, to the second.
	bundle := func() string {
		return fmt.Sprintf("Test-Tidewater-%s-+0000.xcresult", g.now.Add(time.Duration(g.between(0, 59))*time.Second).Format("2006.01.02_15-04-05"))
	}
	o.add("Test session results, code coverage, and logs:")
	if failures > 0 {
		o.errf("\t%s/Logs/Test/%s", dd, g.errID("path", bundle))
		o.add("")
		o.err("Failing tests:")
		name := strings.TrimSuffix(strings.TrimPrefix(fail.label, "-[TidewaterTests."), "]")
		cls, m, _ := strings.Cut(name, " ")
		o.errf("\t%s.%s()", cls, m)
		o.add("")
		o.err("** TEST FAILED **")
		o.exit = 65
		return
	}
	o.addf("\t%s/Logs/Test/%s", dd, g.passID("path", bundle))
	o.add("")
	o.add("** TEST SUCCEEDED **")
}

// crashReport writes a symbolicated crash report of the app: a trap in
// f's method on the main thread. Its header, the exception and the
// crashed thread are error lines; it is a read that exited 0.
func (g *gen) crashReport(o *out, f *srcFile, version string) {
	incident := g.errID("uuid", g.mkUpperUUID())
	pid := g.between(800, 9000)
	at := g.now.Add(-time.Duration(g.between(6, 40)) * time.Hour)
	o.err("Incident Identifier: " + incident)
	o.addf("CrashReporter Key:   %s", g.fill(g.mkHash(40)))
	o.add("Hardware Model:      " + pick(g, "iPhone15,3", "iPhone16,1", "iPhone14,7", "iPhone17,2"))
	o.addf("Process:             Tidewater [%d]", pid)
	o.addf("Path:                /private/var/containers/Bundle/Application/%s/Tidewater.app/Tidewater", g.fill(g.mkUpperUUID()))
	o.add("Identifier:          io.tidewater.app")
	o.add("Version:             " + version)
	o.add("AppStoreTools:       16B39\nAppVariant:          1:iPhone15,3:18\nBeta:                YES\nCode Type:           ARM-64 (Native)\nRole:                Foreground\nParent Process:      launchd [1]")
	o.addf("Coalition:           io.tidewater.app [%d]", g.between(400, 3000))
	o.add("")
	o.addf("Date/Time:           %s +0100", at.Format("2006-01-02 15:04:05.0000"))
	o.addf("Launch Time:         %s +0100", at.Add(-time.Duration(g.between(5, 300))*time.Second).Format("2006-01-02 15:04:05.0000"))
	o.add("OS Version:          iPhone OS 18.1 (22B83)\nRelease Type:        User\nBaseband Version:    2.20.03\nReport Version:      104\n")
	o.err("Exception Type:  EXC_BREAKPOINT (SIGTRAP)")
	o.errf("Exception Codes: 0x0000000000000001, 0x00000001%s", g.fill(g.mkHash(8)))
	o.err("Termination Reason: SIGNAL 5 Trace/BPT trap: 5")
	o.errf("Terminating Process: exc handler [%d]", pid)
	o.add("")
	o.err("Triggered by Thread:  0")
	o.add("")
	o.add("Thread 0 name:   Dispatch queue: com.apple.main-thread")
	o.err("Thread 0 Crashed:")
	frame := func(i int, image, rest string) string {
		addr := "0x1" + g.hex(8)
		if image == "Tidewater" {
			addr = "0x10" + g.hex(7)
		}
		return fmt.Sprintf("%-4d%-30s\t       %s %s", i, image, addr, rest)
	}
	// fixed splits a frame of the fixed lists into its image and symbol.
	fixed := func(s string) (string, string) {
		img, rest, _ := strings.Cut(s, "\t")
		_, sym, _ := strings.Cut(strings.TrimSpace(rest), " ")
		return strings.TrimSpace(img), sym
	}
	o.err(frame(0, "libswiftCore.dylib", "_assertionFailure(_:_:file:line:flags:) + 264"))
	o.err(frame(1, "Tidewater", fmt.Sprintf("%s.%s(_:) + %d (%s)", f.name, "groupByDay", g.between(40, 2000), g.errID("site", g.mkSite(f.base(), 30, 240)))))
	o.err(frame(2, "Tidewater", fmt.Sprintf("closure #1 in %s.%s() + %d (%s)", f.name, "reload", g.between(40, 900), g.errID("site", g.mkSite(f.base(), 30, 240)))))
	view := strings.TrimSuffix(f.name, "ViewModel") + "View"
	o.err(frame(3, "Tidewater", fmt.Sprintf("%s.body.getter + %d (%s)", view, g.between(40, 900), g.errID("site", g.mkSite(view+".swift", 20, 160)))))
	for i, s := range head(swiftCrashFrames, g.scale(6)+6) {
		img, sym := fixed(s)
		o.err(frame(i+4, img, sym))
	}
	o.add("")
	for th := 1; th <= g.scale(4)+3; th++ {
		if th == 2 {
			o.addf("Thread %d name:   com.apple.uikit.eventfetch-thread", th)
		}
		o.addf("Thread %d:", th)
		start := g.r.IntN(len(swiftIdleFrames) - 4)
		for i, s := range swiftIdleFrames[start : start+4] {
			img, sym := fixed(s)
			o.add(frame(i, img, sym))
		}
		o.add("")
	}
	o.add("\nThread 0 crashed with ARM Thread State (64-bit):")
	for i := 0; i < 29; i += 4 {
		var regs []string
		for k := i; k < min(i+4, 29); k++ {
			regs = append(regs, fmt.Sprintf("%4s: 0x%016x", fmt.Sprintf("x%d", k), g.r.Uint64()>>uint(g.between(8, 30))))
		}
		o.add("   " + strings.Join(regs, "   "))
	}
	o.addf("    fp: 0x000000016f%s   lr: 0x00000001%s\n    sp: 0x000000016f%s   pc: 0x00000001%s cpsr: 0x60001000\n   far: 0x0000000000000000      esr: 0xf2000001 (Breakpoint) brk 1", g.hex(6), g.hex(8), g.hex(6), g.hex(8))
	o.add("")
	o.add("Binary Images:")
	o.addf("        0x1029b0000 -        0x102c4ffff Tidewater arm64  <%s> /private/var/containers/Bundle/Application/%s/Tidewater.app/Tidewater", g.fill(func() string { return g.hex(32) }), g.fill(g.mkUpperUUID()))
	for _, img := range head([]string{"libswiftCore.dylib", "SwiftUI", "UIKitCore", "CoreFoundation", "QuartzCore", "GraphicsServices", "libsystem_kernel.dylib", "libsystem_pthread.dylib", "Foundation", "dyld", "libdispatch.dylib", "libobjc.A.dylib", "CFNetwork", "Network", "libswift_Concurrency.dylib", "Combine", "CoreData", "Security"}, g.scale(6)+3) {
		o.addf("        0x1%s -        0x1%s %s arm64e  <%s> /usr/lib/%s", g.hex(8), g.hex(8), img, g.fill(func() string { return g.hex(32) }), img)
	}
	o.add("\nEOF")
}
