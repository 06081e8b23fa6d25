package shipgen

import (
	"fmt"
	"strings"
)

// This file writes what the web side prints: Vite builds, Vitest runs
// (with coverage), Playwright runs and ESLint.

const webRoot = root + "/web"

// specPath is the path of f's spec from the web folder.
func specPath(f *srcFile) string { return strings.TrimPrefix(f.test.path, "web/") }

// vitestFail is a failing Vitest test.
type vitestFail struct {
	file *srcFile
	kind string // "equal" or "type"
}

// vitest writes vitest run over the spec files of xs.
func (g *gen) vitest(o *out, xs []*srcFile, fail *vitestFail, verbose, coverage bool) {
	o.add("")
	o.add(" RUN  v2.1.4 " + webRoot)
	if coverage {
		o.add("      Coverage enabled with v8")
	}
	o.add("")
	tests, files := 0, 0
	var failTitle, label string
	for _, f := range xs {
		n := g.between(3, 14)
		tests += n
		files++
		ms := g.between(3, 140)
		if fail != nil && fail.file == f {
			o.errf(" ❯ %s (%d tests | 1 failed) %dms", specPath(f), n, ms)
			label = g.errID("test", func() string {
				failTitle = g.testWords()
				return specPath(f) + " > " + f.name + " > " + failTitle
			})
			for i := range n {
				if i == n/2 {
					o.errf("   × %s > %s %dms", f.name, failTitle, g.between(1, 40))
					if fail.kind == "type" {
						o.err("     → Cannot read properties of undefined (reading 'id')")
					} else {
						o.err("     → expected 'Arrives 09:30' to be 'Arrives 09:45' // Object.is equality")
					}
				} else if verbose {
					o.addf("   ✓ %s > %s %dms", f.name, g.testWords(), g.between(0, 30))
				}
			}
			continue
		}
		o.addf(" ✓ %s (%d tests) %dms", specPath(f), n, ms)
		if verbose {
			for range n {
				o.addf("   ✓ %s > %s %dms", f.name, g.testWords(), g.between(0, 30))
			}
		}
	}
	if fail != nil {
		g.vitestDefect(o, fail, label)
	}
	o.add("")
	if fail != nil {
		o.errf(" Test Files  1 failed | %d passed (%d)", files-1, files)
		o.errf("      Tests  1 failed | %d passed (%d)", tests-1, tests)
		o.exit = 1
	} else {
		o.addf(" Test Files  %d passed (%d)", files, files)
		o.addf("      Tests  %d passed (%d)", tests, tests)
	}
	o.addf("   Start at  %s", g.now.Format("15:04:05"))
	o.addf("   Duration  %d.%02ds (transform %dms, setup 0ms, collect %d.%02ds, tests %dms, environment %d.%02ds, prepare %dms)",
		g.between(1, 9), g.r.IntN(100), g.between(200, 1500), g.between(0, 4), g.r.IntN(100), g.between(100, 2000), g.between(0, 6), g.r.IntN(100), g.between(300, 3000))
	if coverage && fail == nil {
		g.coverage(o)
	}
}

// vitestDefect writes the detail of a failing Vitest test.
func (g *gen) vitestDefect(o *out, fail *vitestFail, label string) {
	f := fail.file
	bar := strings.Repeat("⎯", 23)
	o.add("")
	o.add(bar + " Failed Tests 1 " + bar)
	o.add("")
	o.errf(" FAIL  %s", label)
	site := g.errID("site", g.mkSiteCol(f.test.base(), 12, 160))
	ln := 0
	fmt.Sscan(strings.Split(site, ":")[1], &ln)
	if fail.kind == "type" {
		o.err("TypeError: Cannot read properties of undefined (reading 'id')")
		comp := g.errID("site", g.mkSiteCol(f.base(), 20, 120))
		o.errf(" ❯ submit src/%s/%s", f.dir, comp)
		for _, fr := range vendorJSFrames {
			o.err(" ❯ " + strings.TrimPrefix(fr, "at "))
		}
		o.errf(" ❯ src/%s/%s", f.dir, site)
	} else {
		o.err("AssertionError: expected 'Arrives 09:30' to be 'Arrives 09:45' // Object.is equality")
		o.add("")
		o.add("- Expected\n+ Received\n\n- Arrives 09:45\n+ Arrives 09:30\n")
		o.errf(" ❯ src/%s/%s", f.dir, site)
	}
	if fail.kind == "type" {
		o.addf("    %3d|     const wrapper = mount(%s, { props: { shipmentId: 'shp_test' }, global: { plugins: [createTestingPinia()] } })", ln-2, f.name)
		o.addf("    %3d|     await wrapper.find('input#pickup-date').setValue('2024-11-07')", ln-1)
		o.addf("    %3d|     await wrapper.find('form').trigger('submit')", ln)
	} else {
		o.addf("    %3d|     const eta = new Date('2024-11-06T09:31:00Z')", ln-2)
		o.addf("    %3d|     expect(%s(eta, 'Europe/London'))", ln-1, f.funcs[0])
		o.addf("    %3d|       .toBe('Arrives 09:45')", ln)
	}
	o.add("       |" + strings.Repeat(" ", g.between(8, 30)) + "^")
	o.addf("    %3d|   })\n    %3d| ", ln+1, ln+2)
	o.add("")
	o.add(strings.Repeat("⎯", 46) + "[1/1]⎯")
}

// coverage writes the v8 coverage table of the web sources.
func (g *gen) coverage(o *out) {
	o.add(" % Coverage report from v8")
	sep := "-----------------------|---------|----------|---------|---------|-------------------"
	o.add(sep)
	o.add("File                   | % Stmts | % Branch | % Funcs | % Lines | Uncovered Line #s ")
	o.add(sep)
	pct := func() string { return fmt.Sprintf("%6.2f", 55+g.r.Float64()*45) }
	row := func(name, unc string) {
		s, b, f := pct(), pct(), pct()
		o.addf("%-23s|  %s |   %s |  %s |  %s | %-17s ", name, s, b, f, s, unc)
	}
	row("All files", "")
	for _, group := range [][]*srcFile{g.w.vue, g.w.ts} {
		row(" "+group[0].dir, "")
		for _, f := range group {
			unc := ""
			if g.chance(0.6) {
				a := g.between(10, 140)
				unc = fmt.Sprintf("%d-%d,%d", a, a+g.between(1, 6), a+g.between(8, 40))
			}
			row("  "+f.base(), unc)
		}
	}
	o.add(sep)
}

// viteBuild writes vite build of the dashboard.
func (g *gen) viteBuild(o *out) {
	o.add("vite v5.4.10 building for production...\ntransforming...")
	o.addf("✓ %d modules transformed.\nrendering chunks...\ncomputing gzip size...", g.between(1200, 1900))
	o.add("dist/index.html                              0.46 kB │ gzip:   0.30 kB")
	o.addf("dist/assets/index-%s.css              %5.2f kB │ gzip:   %4.2f kB", g.fill(func() string { return g.rs(base62, 8) }), 12+g.r.Float64()*10, 3+g.r.Float64()*2)
	planted := false
	for _, f := range head(g.w.vue, g.scale(2)+2) {
		h := g.fill(func() string { return g.rs(base62, 8) })
		if !planted && g.chance(0.3) {
			h = g.passID("hash", func() string { return g.rs(base62, 8) })
			planted = true
		}
		o.addf("dist/assets/%s-%s.js %*.2f kB │ gzip:   %4.2f kB │ map: %6.2f kB", f.name, h, 30-len(f.name), 2+g.r.Float64()*12, 1+g.r.Float64()*4, 8+g.r.Float64()*40)
	}
	o.addf("dist/assets/index-%s.js                  %6.2f kB │ gzip: %6.2f kB │ map: %7.2f kB", g.fill(func() string { return g.rs(base62, 8) }), 380+g.r.Float64()*60, 120+g.r.Float64()*20, 1500+g.r.Float64()*300)
	o.addf("✓ built in %d.%02ds", g.between(3, 12), g.r.IntN(100))
}

// pwFail is a failing Playwright test.
type pwFail struct {
	spec *srcFile
	kind string // "visible" or "timeout"
	name string // the button the test waits for
}

// pwCase is a test of a Playwright run: where it is declared, its title,
// and its failure if it fails.
type pwCase struct {
	loc, title string
	fail       *pwFail
}

// playwright writes playwright test with the list reporter.
func (g *gen) playwright(o *out, specs []*srcFile, fails []*pwFail) {
	var cases []pwCase
	for _, s := range specs {
		for range g.between(2, 6) {
			loc := g.fill(func() string { return fmt.Sprintf("e2e/%s.spec.ts:%d:%d", s.name, g.between(8, 140), 3) })
			cases = append(cases, pwCase{loc: loc, title: s.name + " › " + g.testWords()})
		}
		for _, f := range fails {
			if f.spec == s {
				loc := g.errID("test", func() string { return fmt.Sprintf("e2e/%s.spec.ts:%d:%d", s.name, g.between(8, 140), 3) })
				cases = append(cases, pwCase{loc, s.name + " › " + g.testWords(), f})
			}
		}
	}
	o.add("")
	o.addf("Running %d tests using %d workers", len(cases), pick(g, 2, 4))
	o.add("")
	var failed []pwCase
	for i, c := range cases {
		if c.fail != nil {
			failed = append(failed, c)
			o.errf("  ✘  %2d [chromium] › %s › %s (%d.%ds)", i+1, c.loc, c.title, g.between(5, 31), g.r.IntN(10))
			continue
		}
		o.addf("  ✓  %2d [chromium] › %s › %s (%d.%ds)", i+1, c.loc, c.title, g.between(0, 6), g.r.IntN(10))
	}
	if len(failed) == 0 {
		o.add("")
		o.addf("  %d passed (%d.%ds)", len(cases), g.between(20, 90), g.r.IntN(10))
		o.add("")
		o.add("To open last HTML report run:\n\n  npx playwright show-report\n")
		return
	}
	for i, c := range failed {
		o.add("")
		o.errf("  %d) [chromium] › %s › %s %s", i+1, c.loc, c.title, strings.Repeat("─", 20))
		o.add("")
		g.pwDefect(o, c)
	}
	o.add("")
	o.errf("  %d failed", len(failed))
	for _, c := range failed {
		o.errf("    [chromium] › %s › %s %s", c.loc, c.title, strings.Repeat("─", 20))
	}
	o.addf("  %d passed (%d.%ds)", len(cases)-len(failed), g.between(20, 90), g.r.IntN(10))
	o.exit = 1
}

// pwDefect writes the error of a failed test, its code frame and its
// attachments.
func (g *gen) pwDefect(o *out, c pwCase) {
	fail := c.fail
	rule := strings.Repeat("─", 60)
	locator := fmt.Sprintf("getByRole('button', { name: '%s' })", fail.name)
	if fail.kind == "timeout" {
		o.err("    Test timeout of 30000ms exceeded.")
		o.add("")
		o.errf("    Error: locator.click: Test timeout of 30000ms exceeded.")
		o.err("    Call log:")
		o.errf("      - waiting for %s", locator)
		o.errf("        - locator resolved to <button disabled type=\"submit\" data-v-%s=\"\">%s</button>", g.fill(g.mkHash(8)), fail.name)
		o.err("      - attempting click action")
		for i := range g.between(3, 8) {
			o.err("        2 × waiting for element to be visible, enabled and stable")
			o.err("          - element is not enabled")
			o.errf("        - retrying click action, attempt #%d", i+2)
		}
	} else {
		o.err("    Error: Timed out 5000ms waiting for expect(locator).toBeVisible()")
		o.add("")
		o.errf("    Locator: %s", locator)
		o.err("    Expected: visible")
		o.err("    Received: <element(s) not found>")
		o.err("    Call log:")
		o.err("      - expect.toBeVisible with timeout 5000ms")
		o.errf("      - waiting for %s", locator)
	}
	o.add("")
	site := g.errID("site", g.mkSiteCol(fail.spec.name+".spec.ts", 12, 160))
	ln := 0
	fmt.Sscan(strings.Split(site, ":")[1], &ln)
	o.add("")
	o.addf("      %3d |     await page.getByLabel('Pickup date').fill('2024-11-07')", ln-2)
	o.addf("      %3d |     await page.getByRole('button', { name: 'Next' }).click()", ln-1)
	if fail.kind == "timeout" {
		o.addf("    > %3d |     await page.%s.click()", ln, locator)
		o.addf("          | %s^", strings.Repeat(" ", 68))
		o.addf("      %3d |     await expect(page.getByText('Label ready')).toBeVisible()", ln+1)
	} else {
		o.addf("    > %3d |     await expect(page.%s).toBeVisible()", ln, locator)
		o.addf("          | %s^", strings.Repeat(" ", 72))
		o.addf("      %3d |     await page.%s.click()", ln+1, locator)
	}
	o.addf("      %3d |   })", ln+2)
	o.add("")
	o.errf("        at %s/e2e/%s", webRoot, site)
	o.add("")
	dirName := g.errID("path", func() string {
		t := strings.ReplaceAll(strings.ReplaceAll(c.title, " › ", "-"), " ", "-")
		if len(t) > 30 {
			t = t[:12] + "-" + g.hex(5) + "-" + t[len(t)-12:]
		}
		return "test-results/" + fail.spec.name + "-" + t + "-chromium"
	})
	o.add("    attachment #1: screenshot (image/png) " + rule)
	o.errf("    %s/test-failed-1.png", dirName)
	o.add("    " + rule + strings.Repeat("─", 20))
	o.add("")
	o.add("    attachment #2: trace (application/zip) " + rule)
	o.errf("    %s/trace.zip", dirName)
	o.add("    Usage:")
	o.add("")
	o.errf("        npx playwright show-trace %s/trace.zip", dirName)
	o.add("")
	o.add("    " + rule + strings.Repeat("─", 20))
}

// eslint writes eslint over the dashboard; with errs, the errors of the
// files given (their lines are error lines).
func (g *gen) eslint(o *out, errs []*srcFile) {
	warned := g.w.others(g, g.w.vue, nil, g.between(1, 3))
	total, nerr := 0, 0
	for _, f := range warned {
		o.add(webRoot + "/" + strings.TrimPrefix(f.path, "web/"))
		for range g.between(1, 2) {
			o.addf("  %d:%d  warning  Unexpected console statement  no-console", g.between(20, 120), g.between(3, 9))
			total++
		}
		o.add("")
	}
	for _, f := range errs {
		o.err(webRoot + "/" + strings.TrimPrefix(f.path, "web/"))
		o.errf("  %d:%d  error  'slot' is assigned a value but never used  @typescript-eslint/no-unused-vars", g.between(8, 40), g.between(7, 12))
		o.errf("  %d:%d  error  Unexpected any. Specify a different type    @typescript-eslint/no-explicit-any", g.between(40, 90), g.between(20, 40))
		o.add("")
		total += 2
		nerr += 2
	}
	if total == 0 {
		return
	}
	line := fmt.Sprintf("✖ %d problems (%d errors, %d warnings)", total, nerr, total-nerr)
	if nerr > 0 {
		o.err(line)
		o.exit = 1
		return
	}
	o.add(line)
}
