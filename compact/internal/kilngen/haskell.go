package kilngen

import (
	"fmt"
	"strings"
)

// The ember-ledger service: cabal builds, hspec runs, its logs.

const ghcVer = "9.6.6"
const ledgerPkg = "ember-ledger-0.9.3"

var ghcErrors = []struct {
	code  string
	lines []string // %s is the identifier named
	src   string
}{
	{"GHC-83865", []string{"    • Couldn't match expected type ‘Money’ with actual type ‘Integer’", "    • In the first argument of ‘%s’, namely ‘gross’", "      In the expression: %s gross (FeeBps 250)", "      In an equation for ‘net’: net = %s gross (FeeBps 250)"}, "  let net = %s gross (FeeBps 250)"},
	{"GHC-88464", []string{"    Variable not in scope: %s :: Currency -> [Entry] -> Either SettleError Batch", "    Suggested fix:", "      Perhaps use ‘settleBatch’ (imported from Ember.Ledger.Settle)"}, "  batch <- either throwError pure (%s cur entries)"},
	{"GHC-39999", []string{"    • No instance for ‘ToJSON PayoutView’ arising from a use of ‘%s’", "    • In the second argument of ‘($)’, namely ‘%s payouts’", "      In a stmt of a 'do' block: json $ %s payouts"}, "  json $ %s payouts"},
	{"GHC-76037", []string{"    Not in scope: type constructor or class ‘%s’", "    Suggested fix:", "      Perhaps use one of these:", "        ‘RoasterId’ (imported from Ember.Ledger.Types),", "        ‘Roaster’ (imported from Ember.Ledger.Types)"}, "lookupRoaster :: %s -> App (Maybe Roaster)"},
	{"GHC-27346", []string{"    • The data constructor ‘Batch’ should have 4 arguments, but has been given 3", "    • In the pattern: Batch cur entries %s", "      In an equation for ‘netOf’: netOf (Batch cur entries %s) = sum entries"}, "netOf (Batch cur entries %s) = sum entries"},
	{"GHC-25897", []string{"    • Couldn't match type ‘a’ with ‘Money’", "      Expected: [a] -> a", "        Actual: [Money] -> Money", "      ‘a’ is a rigid type variable bound by", "        the type signature for:", "          %s :: forall a. Num a => [a] -> a"}, "%s = foldl' (<>) mempty"},
	{"GHC-62161", []string{"    Pattern match(es) are non-exhaustive", "    In a case alternative:", "        Patterns of type ‘PayoutState’ not matched: %s"}, "  case payoutState p of"},
}

var ghcWarnings = []struct{ code, flag, msg string }{
	{"GHC-40910", "-Wunused-top-binds", "Defined but not used: ‘%s’"},
	{"GHC-66111", "-Wunused-imports", "The import of ‘Data.Maybe’ is redundant"},
	{"GHC-38417", "-Wmissing-signatures", "Top-level binding with no type signature: %s :: Money -> Money"},
}

var hsModules = []string{"Ember.Ledger.Types", "Ember.Config", "Ember.Ledger.Db", "Ember.Ledger.Rates", "Ember.Ledger.Fees", "Ember.Ledger.Settle",
	"Ember.Ledger.Refunds", "Ember.Ledger.Payouts", "Ember.Api.Auth", "Ember.Api.Types", "Ember.Api.Handlers", "Ember.Api.Routes", "Ember.Metrics", "Ember.App"}

func hsPath(mod string) string { return "src/" + strings.ReplaceAll(mod, ".", "/") + ".hs" }

func (g *gen) distDir() string {
	return fmt.Sprintf("dist-newstyle/build/aarch64-osx/ghc-%s/%s", ghcVer, ledgerPkg)
}

// ghcFailure writes a GHC error in unit u into o.
func (g *gen) ghcFailure(o *out, u hsUnit) {
	e := ghcErrors[g.r.IntN(len(ghcErrors))]
	// The name is in the source line the fix replaces: not labelled.
	name := g.word(func() string {
		switch e.code {
		case "GHC-76037":
			return title(g.pick(nouns)) + g.pick([]string{"Ref", "Key", "Handle", "Id"})
		case "GHC-62161":
			return title(g.pick(nouns)) + g.pick([]string{"Pending", "OnHold", "Reversed", "Disputed"})
		}
		return camel(strings.ToLower(g.pick(verbs)), g.pick(nouns), g.pick([]string{"V2", "Strict", "Safe", "At"}))
	})
	line := g.site(u.srcPath(), 30, max(40, g.file(u.srcPath()).len()-2))
	src := strings.ReplaceAll(e.src, "%s", name)
	col, width := 3, len(name)
	if i := strings.Index(src, name); i >= 0 {
		col = i + 1
	}
	if e.code == "GHC-83865" {
		col, width = strings.Index(src, "gross")+1, len("gross")
	}
	site := g.errl(fmt.Sprintf("%s:%d:%d", u.rel(u.srcPath()), line, col), "site")
	code := g.errl(e.code, "code")
	if e.code == "GHC-62161" {
		o.badf("%s: error: [%s] [-Wincomplete-patterns, Werror=incomplete-patterns]", site, code)
	} else {
		o.badf("%s: error: [%s]", site, code)
	}
	for _, l := range e.lines {
		o.bad(strings.ReplaceAll(l, "%s", name))
	}
	g.setLine(u.srcPath(), line, src)
	g.failed(line)
	pad := strings.Repeat(" ", len(fmt.Sprint(line)))
	o.bad(pad + " |")
	o.badf("%d | %s", line, src)
	o.badf("%s | %s%s", pad, strings.Repeat(" ", col-1), strings.Repeat("^", width))
}

// cabalBuild is `cabal build` of the service; fail is the unit with a
// type error (nil for a good build).
func (g *gen) cabalBuild(fail *hsUnit) *out {
	o := &out{}
	g.fails = nil
	o.ok("Resolving dependencies...")
	o.okf("Build profile: -w ghc-%s -O1", ghcVer)
	o.ok("In order, the following will be built (use -v for more details):")
	o.okf(" - %s (lib) (file %s changed)", ledgerPkg, hsPath(g.pick(hsModules)))
	o.okf(" - %s (exe:ember-ledger) (dependency rebuilt)", ledgerPkg)
	o.okf("Preprocessing library for %s..", ledgerPkg)
	o.okf("Building library for %s..", ledgerPkg)
	mods := hsModules
	failAt := -1
	if fail != nil {
		for i, m := range mods {
			if m == fail.module {
				failAt = i
			}
		}
		if failAt < 0 {
			failAt = len(mods) - 3
		}
	}
	for i, m := range mods {
		o.okf("[%2d of %d] Compiling %-22s ( %s, %s/build/%s.o, %s/build/%s.dyn_o )", i+1, len(mods)+1, m, hsPath(m), g.distDir(), strings.ReplaceAll(m, ".", "/"), g.distDir(), strings.ReplaceAll(m, ".", "/"))
		if g.chance(0.3) {
			w := ghcWarnings[g.r.IntN(len(ghcWarnings))]
			p := hsDir + "/" + hsPath(m)
			l := g.site(p, 20, 300)
			nm := camel("legacy", g.pick(nouns))
			src := fmt.Sprintf("%s = %s . roundTo 2", nm, camel("to", g.pick(nouns)))
			if w.code == "GHC-66111" {
				src = "import           Data.Maybe           (fromMaybe)"
			}
			o.okf("%s:%d:1: warning: [%s] [%s]", hsPath(m), l, w.code, w.flag)
			o.ok("    " + strings.ReplaceAll(w.msg, "%s", nm))
			o.ok(strings.Repeat(" ", len(fmt.Sprint(l))) + " |")
			o.okf("%d | %s", l, src)
			o.okf("%s | %s", strings.Repeat(" ", len(fmt.Sprint(l))), strings.Repeat("^", len(strings.Fields(src)[0])))
			o.ok("")
		}
		if i == failAt {
			o.ok("")
			g.ghcFailure(o, *fail)
			o.ok("")
			if g.chance(0.7) {
				g.ghcFailure(o, *fail)
				o.ok("")
			}
			// independent modules keep compiling under -j
			for j := 0; j < g.between(0, 2) && i+1+j < len(mods); j++ {
				m2 := mods[i+1+j]
				o.okf("[%2d of %d] Compiling %-22s ( %s, %s/build/%s.o, %s/build/%s.dyn_o )", i+2+j, len(mods)+1, m2, hsPath(m2), g.distDir(), strings.ReplaceAll(m2, ".", "/"), g.distDir(), strings.ReplaceAll(m2, ".", "/"))
			}
			o.bad("Error: [Cabal-7125]")
			o.badf("Failed to build %s (which is required by exe:ember-ledger from %s).", ledgerPkg, ledgerPkg)
			return o
		}
	}
	o.okf("[%d of %d] Compiling Paths_ember_ledger ( %s/build/autogen/Paths_ember_ledger.hs, %s/build/Paths_ember_ledger.o )", len(mods)+1, len(mods)+1, g.distDir(), g.distDir())
	o.okf("Configuring executable 'ember-ledger' for %s..", ledgerPkg)
	o.okf("Preprocessing executable 'ember-ledger' for %s..", ledgerPkg)
	o.okf("Building executable 'ember-ledger' for %s..", ledgerPkg)
	o.okf("[1 of 2] Compiling Main             ( app/Main.hs, %s/x/ember-ledger/build/ember-ledger/ember-ledger-tmp/Main.o )", g.distDir())
	o.okf("[3 of 3] Linking %s/x/ember-ledger/build/ember-ledger/ember-ledger", g.distDir())
	return o
}

// hspecRun is `cabal test` of the service; fail is the unit whose spec
// has a failing example (nil for a passing run); focus, when not nil,
// is the only unit run (with --match).
func (g *gen) hspecRun(fail, focus *hsUnit) *out {
	o := &out{}
	o.okf("Build profile: -w ghc-%s -O1", ghcVer)
	o.ok("In order, the following will be built (use -v for more details):")
	o.okf(" - %s (test:ember-ledger-test) (first run)", ledgerPkg)
	o.okf("Preprocessing test suite 'ember-ledger-test' for %s..", ledgerPkg)
	o.okf("Building test suite 'ember-ledger-test' for %s..", ledgerPkg)
	for i, u := range hsUnits {
		o.okf("[%2d of %d] Compiling %sSpec ( %s, %s/t/ember-ledger-test/build/ember-ledger-test/ember-ledger-test-tmp/%sSpec.o )", i+2, len(hsUnits)+2, u.module, u.rel(u.specPath()), g.distDir(), strings.ReplaceAll(u.module, ".", "/"))
	}
	o.okf("[%d of %d] Linking %s/t/ember-ledger-test/build/ember-ledger-test/ember-ledger-test", len(hsUnits)+2, len(hsUnits)+2, g.distDir())
	o.okf("Running 1 test suites...")
	o.ok("Test suite ember-ledger-test: RUNNING...")
	if focus != nil {
		o.ok("")
		o.okf("(--match \"/%s/\")", strings.ReplaceAll(focus.module, ".", "/"))
	}
	total := 0
	type failure struct{ item, desc, site string }
	var fails []failure
	seed := g.between(100000, 2000000)
	for _, u := range hsUnits {
		if focus != nil && u != *focus {
			continue
		}
		f := g.file(u.specPath())
		o.ok(u.module)
		desc := camel(strings.ToLower(g.pick(verbs)), g.pick(nouns))
		if fail != nil && u == *fail {
			desc = u.fn
		}
		o.ok("  " + desc)
		failPos := -1
		if fail != nil && u == *fail {
			failPos = g.r.IntN(len(f.tests))
		}
		second := -1
		if failPos >= 0 && g.chance(0.6) {
			second = g.r.IntN(len(f.tests))
		}
		for j, t := range f.tests {
			if j == failPos || j == second {
				item := g.errl(g.hspecItem(), "test")
				g.hide(u.specPath())
				o.badf("    %s [✘]", item)
				l := g.site(u.specPath(), 12, max(20, f.len()))
				site := g.errl(fmt.Sprintf("%s:%d:%d", u.rel(u.specPath()), l, g.between(5, 9)), "site")
				fails = append(fails, failure{item, u.module + "." + desc, site})
				total++
			}
			if j%5 == 4 {
				o.okf("    %s [✔]", t)
				o.ok("      +++ OK, passed 100 tests.")
			} else {
				o.okf("    %s [✔]", t)
			}
			total++
		}
		if len(f.tests) > 8 && g.chance(0.4) {
			o.ok("  " + camel(strings.ToLower(g.pick(verbs)), g.pick(nouns)))
			for j := 0; j < g.between(2, 5); j++ {
				o.okf("    %s [✔]", f.tests[g.r.IntN(len(f.tests))])
				total++
			}
		}
	}
	o.ok("")
	if len(fails) > 0 {
		o.bad("Failures:")
		o.ok("")
		for i, fl := range fails {
			o.badf("  %s: ", fl.site)
			o.badf("  %d) %s %s", i+1, fl.desc, fl.item)
			if g.chance(0.5) {
				e := g.between(100, 9999)
				o.badf("       expected: Right (Payout {payoutBatch = BatchId \"%s\", payoutNet = Money %d})", g.errl("bat_"+g.chars(alnum, 14), "id"), e)
				o.badf("        but got: Left (MixedCurrency EUR SEK)")
			} else {
				o.badf("       Falsifiable (after %d tests and %d shrinks):", g.between(2, 60), g.between(0, 9))
				o.badf("         Positive {getPositive = %d}", g.between(1, 40))
				o.badf("         Money %d", g.between(1, 999))
			}
			o.ok("")
			o.badf("  To rerun use: --match \"/%s/%s/\" --seed %d", strings.ReplaceAll(fl.desc, ".", "/"), fl.item, seed)
			o.ok("")
		}
	}
	o.okf("Randomized with seed %d", seed)
	o.ok("")
	o.okf("Finished in %d.%04d seconds", g.between(0, 3), g.between(0, 9999))
	if len(fails) > 0 {
		o.badf("%d examples, %d failure%s", total, len(fails), plural(len(fails)))
		o.ok("")
		o.bad("Test suite ember-ledger-test: FAIL")
		o.ok("Test suite logged to:")
		o.okf("%s/%s/%s/t/ember-ledger-test/test/%s-ember-ledger-test.log", g.home(), hsDir, g.distDir(), ledgerPkg)
		o.ok("0 of 1 test suites (0 of 1 test cases) passed.")
		o.bad("Error: [Cabal-7125]")
		o.badf("Tests failed for test:ember-ledger-test from %s.", ledgerPkg)
		return o
	}
	o.okf("%d examples, 0 failures", total)
	o.ok("")
	o.ok("Test suite ember-ledger-test: PASS")
	o.ok("Test suite logged to:")
	o.okf("%s/%s/%s/t/ember-ledger-test/test/%s-ember-ledger-test.log", g.home(), hsDir, g.distDir(), ledgerPkg)
	o.ok("1 of 1 test suites (1 of 1 test cases) passed.")
	return o
}

var ledgerMsgs = []string{"settled batch", "scheduled payout", "fetched rates", "refund applied", "webhook delivered", "batch accepted", "cache hit", "pool stats"}

// ledgerLogs is a dump of the service's JSON logs; crash puts an
// exception with its call stack in the middle. ok says the command
// printing them succeeded.
func (g *gen) ledgerLogs(o *out, ok, crash bool, n int) {
	t := g.clock.Add(-g.dur(600000, 3600000))
	crashAt := -1
	if crash {
		crashAt = n/3 + g.r.IntN(n/3+1)
	}
	for i := 0; i < n; i++ {
		t = t.Add(g.dur(5, 4000))
		msg := g.pick(ledgerMsgs)
		req := g.hex(16)
		if ok && msg != "pool stats" && g.chance(0.04) {
			req = g.passing(true, req, "id")
		}
		switch msg {
		case "settled batch", "batch accepted":
			o.okf(`{"ts":"%s","level":"info","msg":"%s","batch":"%s","entries":%d,"req":"%s","dur_ms":%d}`, t.Format("2006-01-02T15:04:05.000Z"), msg, g.uuid(), g.between(1, 4000), req, g.between(2, 900))
		case "pool stats":
			o.okf(`{"ts":"%s","level":"debug","msg":"pool stats","in_use":%d,"idle":%d,"waiting":%d}`, t.Format("2006-01-02T15:04:05.000Z"), g.between(0, 20), g.between(0, 10), g.between(0, 3))
		default:
			o.okf(`{"ts":"%s","level":"info","msg":"%s","roaster":"rst_%s","req":"%s","status":%d}`, t.Format("2006-01-02T15:04:05.000Z"), msg, g.chars(alnum, 12), req, g.pick1(200, 200, 200, 201, 204))
		}
		if i == crashAt || (crash && i == crashAt+n/5 && g.chance(0.7)) {
			g.ledgerException(o)
		}
	}
}

func (g *gen) ledgerException(o *out) {
	key := g.errl(g.uuid(), "uuid")
	switch g.r.IntN(3) {
	case 0:
		o.badf(`ember-ledger: SqlError {sqlState = "23505", sqlExecStatus = FatalError, sqlErrorMsg = "duplicate key value violates unique constraint \"payouts_batch_id_key\"", sqlErrorDetail = "Key (batch_id)=(%s) already exists.", sqlErrorHint = ""}`, key)
	case 1:
		o.badf(`ember-ledger: ConnectionFailure "connection to server at \"%s\" (%s), port 5432 failed: FATAL:  remaining connection slots are reserved for roles with the SUPERUSER attribute" (request %s)`, g.w.rdsHost, g.ip(), key)
	default:
		o.badf(`ember-ledger: MissingRate SEK (batch %s)`, key)
	}
	o.bad("CallStack (from HasCallStack):")
	for i, n := 0, g.between(2, 4); i < n; i++ {
		m := g.pick(hsModules)
		p := hsDir + "/" + hsPath(m)
		l := g.site(p, 20, 400)
		s := fmt.Sprintf("%s:%d:%d", hsPath(m), l, g.between(3, 40))
		if i == 0 {
			s = g.errl(s, "site")
		}
		o.badf("  %s, called at %s in %s-inplace:%s", g.pick([]string{"error", "throwIO", "withTransaction", "runDb", "settleBatch"}), s, ledgerPkg, m)
	}
}
