package loomgen

import (
	"fmt"
	"strings"
	"time"
)

// Scientific code: the LoomSim Julia package, the loomstats R package and
// the strand Fortran/MPI solver.

const jlRoot = "/srv/warp/sims/LoomSim"

var jlDeps = []string{"DataFrames", "StaticArrays", "OrdinaryDiffEq", "LinearSolve", "KernelAbstractions", "CUDA", "HDF5", "JLD2",
	"Parameters", "ProgressMeter", "BenchmarkTools", "Adapt", "SparseArrays", "LoopVectorization", "FFTW", "Interpolations",
	"Unitful", "TimerOutputs", "StructArrays", "OffsetArrays", "ForwardDiff", "Optim", "Distributions", "Roots", "JSON3", "Tables"}

var jlSuffix = []string{"", "Core", "Base", "Utils", "Ext", "Interface", "Tools"}

func (g *gen) jlStatus(o *out, n int) {
	o.addf("      Status `/tmp/jl_%s/Manifest.toml`", g.A(func() string { return g.chars(alnum, 6) }))
	p := g.r.Perm(len(jlDeps) * len(jlSuffix))
	for i := range min(n, len(p)) {
		k := p[i]
		o.addf("  [%s] %s%s %s", g.A(g.mkHex(8)), jlDeps[k%len(jlDeps)], jlSuffix[k/len(jlDeps)], g.A(g.mkVersion()))
	}
}

func (g *gen) jlSet() string { return strings.Join(g.words(jlWords, 3), " ") }

func (g *gen) taskJulia() {
	var b strings.Builder
	fmt.Fprintf(&b, "LoomSim's test suite broke after the switch to Float32 grids. Fix it without changing the public signature of `advance!`; the %s campaign uses it.", g.pick("Thursday", "weekend", "cavity-64"))
	if g.chance(0.6) {
		fmt.Fprintf(&b, " CI run: %s", g.U("url", func() string {
			return fmt.Sprintf("https://buildkite.com/loomfield/loomsim/builds/%d", g.n(1000, 9999))
		}))
	}
	g.user(b.String())

	failSet := g.E("test", g.jlSet)
	failSite := g.E("site", g.mkSite("conservation_tests.jl"))
	mSite := g.E("site", g.mkSite("stepper.jl"))
	run := "julia --project=sims/LoomSim -e 'using Pkg; Pkg.test()'"
	g.turn("Running the package tests.",
		g.bash(run, func(o *out) {
			o.add("     Testing LoomSim")
			g.jlStatus(o, g.n(60, 180))
			o.add("Precompiling project...\n  ✓ LoomKernels\n  ✓ LoomSim\n  2 dependencies successfully precompiled in 38 seconds. 214 already precompiled.\n     Testing Running tests...")
			c := g.clockFrom(3 * time.Minute)
			info := func() {
				c.tick(3000)
				o.addf("[ Info: case %s-%d: %d steps, dt=%se-5, residual %se-%d", g.pick("cavity", "channel", "slab", "ring"), g.n(8, 128), 100*g.n(1, 40), g.f(1, 9, 2), g.f(1, 9, 2), g.n(6, 12))
			}
			failed := func() {
				o.failf("%s: Test Failed at %s/test/%s", failSet, jlRoot, failSite)
				o.fail("  Expression: isapprox(total_energy(s), E0; rtol = 1.0e-10)")
				o.failf("   Evaluated: isapprox(%sf0, %s; rtol = 1.0e-10)", g.f(0.99, 1.01, 7), g.f(0.99, 1.01, 7))
				o.fail("\nStacktrace:")
				o.fail(" [1] macro expansion\n   @ ~/.julia/juliaup/julia-1.10.4+0.x64.linux.gnu/share/julia/stdlib/v1.10/Test/src/Test.jl:672 [inlined]")
				o.failf(" [2] macro expansion\n   @ %s/test/%s [inlined]", jlRoot, failSite)
				o.fail(" [3] macro expansion\n   @ ~/.julia/juliaup/julia-1.10.4+0.x64.linux.gnu/share/julia/stdlib/v1.10/Test/src/Test.jl:1577 [inlined]")
				o.failf(" [4] top-level scope\n   @ %s/test/%s", jlRoot, g.A(g.mkSite("conservation_tests.jl")))
			}
			errored := func() {
				o.failf("%s: Error During Test at %s/test/%s", g.A(g.jlSet), jlRoot, g.A(g.mkSite("stability_tests.jl")))
				o.fail("  Got exception outside of a @test")
				o.fail("  MethodError: no method matching step!(::LoomSim.HeatGrid{Float32}, ::Float64)")
				o.fail("  \n  Closest candidates are:\n    step!(::LoomSim.HeatGrid{T}, ::T) where T<:AbstractFloat")
				o.failf("     @ LoomSim %s/src/%s", jlRoot, mSite)
				o.fail("  \n  Stacktrace:")
				o.failf("    [1] advance!(s::LoomSim.Simulator{Float32}, nsteps::Int64)\n      @ LoomSim %s/src/%s", jlRoot, g.A(g.mkSite("stepper.jl")))
				o.failf("    [2] run_case(case::LoomSim.Case)\n      @ LoomSim %s/src/%s", jlRoot, g.A(g.mkSite("driver.jl")))
				o.failf("    [3] macro expansion\n      @ %s/test/%s [inlined]", jlRoot, g.A(g.mkSite("stability_tests.jl")))
				o.fail("    [4] macro expansion\n      @ ~/.julia/juliaup/julia-1.10.4+0.x64.linux.gnu/share/julia/stdlib/v1.10/Test/src/Test.jl:1577 [inlined]")
			}
			o.fill(o.budget(0.6), info, g.spread(0.1, 0.9, failed, errored)...)
			o.add("Test Summary:                          | Pass  Fail  Error  Total     Time")
			o.fail("LoomSim                                |  211     1      1    213  1m12.4s")
			for range g.n(4, 9) {
				o.addf("  %-36s | %4d                %4d  %6ss", g.A(g.jlSet), g.n(5, 60), 0, g.f(0.2, 9, 1))
			}
			o.failf("  %-36s | %4d     1           %4d  %6ss", failSet, g.n(5, 60), g.n(61, 70), g.f(0.2, 9, 1))
			o.failf("  %-36s | %4d            1    %4d  %6ss", g.A(g.jlSet), g.n(5, 60), g.n(61, 70), g.f(0.2, 9, 1))
			o.fail("ERROR: LoadError: Some tests did not pass: 211 passed, 1 failed, 1 errored, 0 broken.")
			o.failf("in expression starting at %s/test/runtests.jl:14", jlRoot)
			o.fail("ERROR: Package LoomSim errored during testing")
			o.exitLine(1)
		}))

	src := "sims/LoomSim/src/stepper.jl"
	g.turn("A Float64 time step reaches step! on a Float32 grid, and energy drifts in the conservation test. Reading the stepper.",
		g.readFile(src, func(o *out) {
			o.add("# Explicit and semi-implicit time stepping for HeatGrid.\n\nexport advance!, step!\n")
			o.add("\"\"\"\n    step!(g::HeatGrid{T}, dt::T) where T<:AbstractFloat\n\nAdvance `g` by one step of size `dt`.\n\"\"\"\nfunction step!(g::HeatGrid{T}, dt::T) where T<:AbstractFloat\n    @inbounds for j in 2:size(g.u, 2)-1, i in 2:size(g.u, 1)-1\n        g.unew[i, j] = g.u[i, j] + dt * g.α * laplacian(g.u, i, j, g.h)\n    end\n    g.u, g.unew = g.unew, g.u\n    return g\nend\n")
			k := 0
			o.fill(o.budget(0.35), func() {
				k++
				o.addf("function %s_%d!(g::HeatGrid{T}, bc::%s) where T", strings.ToLower(strings.Join(g.words(jlWords, 2), "_")), k, g.pick("Dirichlet", "Neumann", "Periodic"))
				for range g.n(3, 8) {
					o.addf("    %s", g.pick("@inbounds for i in axes(g.u, 1)", "    g.u[i, 1] = bc.value", "    g.u[i, end] = g.u[i, end-1]", "end",
						"acc = zero(T)", "acc += g.u[i, j] * g.h^2", fmt.Sprintf("g.t += convert(T, %s)", g.f(0, 1, 3))))
				}
				o.add("    return g\nend\n")
			})
			o.add("function advance!(s::Simulator, nsteps::Integer)\n    for _ in 1:nsteps\n        step!(s.grid, s.dt)\n        s.t += s.dt\n    end\n    return s\nend")
		}),
		g.grep("total_energy", "sims/LoomSim", func(o *out) {
			o.addf("sims/LoomSim/src/%s:function total_energy(g::HeatGrid{T}) where T", g.A(g.mkSite("diagnostics.jl")))
			o.addf("sims/LoomSim/src/%s:    acc = zero(T)", g.A(g.mkSite("diagnostics.jl")))
			o.addf("sims/LoomSim/test/%s:        E0 = total_energy(s)", g.A(g.mkSite("conservation_tests.jl")))
			o.addf("sims/LoomSim/test/%s:        @test isapprox(total_energy(s), E0; rtol = 1.0e-10)", g.A(g.mkSite("conservation_tests.jl")))
		}))

	g.say("Two separate problems: Simulator stores dt as Float64, so step! gets a Float64 on a Float32 grid; and total_energy accumulates in the grid's element type, so the conservation test drifts by ~1e-7. I can convert dt inside advance! (signature unchanged) and accumulate energy in Float64. Or should I relax the rtol on the test instead?")
	g.user(g.pick("Accumulate in Float64, don't loosen the tolerance.", "Don't touch the tolerance. Float64 accumulator is fine.", "Keep rtol as is; do the Float64 accumulation."))

	cst := g.W("key", func() string { return "const " + strings.Join(g.words(upperWords, 2), "_") + "_T" })
	g.turn("",
		g.replace(src, "        step!(s.grid, s.dt)", "        step!(s.grid, convert(eltype(s.grid.u), s.dt))"),
		g.replace("sims/LoomSim/src/diagnostics.jl", "    acc = zero(T)", fmt.Sprintf("    acc = zero(%s)", strings.TrimPrefix(cst, "const "))),
		g.replace("sims/LoomSim/src/diagnostics.jl", "# Diagnostics", fmt.Sprintf("# Diagnostics\n\n# energy sums run in Float64 whatever the grid type\n%s = Float64", cst)))

	g.turn("Rerunning the tests.",
		g.bash(run, func(o *out) {
			o.add("     Testing LoomSim")
			g.jlStatus(o, g.n(20, 60))
			o.add("     Testing Running tests...")
			c := g.clockFrom(3 * time.Minute)
			o.fill(o.budget(0.5), func() {
				c.tick(3000)
				o.addf("[ Info: case %s-%d: %d steps, dt=%se-5, residual %se-%d", g.pick("cavity", "channel", "slab", "ring"), g.n(8, 128), 100*g.n(1, 40), g.f(1, 9, 2), g.f(1, 9, 2), g.n(6, 12))
			}, at{0.5, func() {
				o.addf("[ Info: benchmark artifact %s", g.P("hash", g.mkHex(20)))
			}})
			o.add("Test Summary: | Pass  Total     Time")
			o.addf("LoomSim       |  213    213  1m%ss", g.f(5, 20, 1))
			o.add("     Testing LoomSim tests passed ")
		}))
	g.say("LoomSim's suite passes: 213/213. advance! keeps its signature; the tolerance is unchanged.")
}

const rPkg = "analysis/loomstats"

func (g *gen) rSet() string { return strings.Join(g.words(rWords, 4), " ") }

func (g *gen) rCheckHead(o *out, logDir string) {
	o.add("══ Documenting ═════════════════════════════════════════════════════════════\nℹ Updating loomstats documentation\nℹ Loading loomstats\n")
	o.add("══ Building ════════════════════════════════════════════════════════════════\nSetting env vars:\n• CFLAGS    : -Wall -pedantic -fdiagnostics-color=always\n• CXXFLAGS  : -Wall -pedantic -fdiagnostics-color=always\n• CXX17FLAGS: -Wall -pedantic -fdiagnostics-color=always")
	o.add("── R CMD build ─────────────────────────────────────────────────────────────\n✔  checking for file ‘/srv/warp/analysis/loomstats/DESCRIPTION’ ...\n─  preparing ‘loomstats’:\n✔  checking DESCRIPTION meta-information ...\n─  installing the package to process help pages\n─  checking for LF line-endings in source and make files and shell scripts\n─  checking for empty or unneeded directories\n─  building ‘loomstats_0.9.3.tar.gz’\n")
	o.add("══ Checking ════════════════════════════════════════════════════════════════\n── R CMD check ─────────────────────────────────────────────────────────────")
	o.addf("* using log directory ‘%s’", logDir)
	o.add("* using R version 4.4.1 (2024-06-14)\n* using platform: x86_64-pc-linux-gnu\n* R was compiled by\n    gcc (GCC) 11.4.1 20231218 (Red Hat 11.4.1-3)\n* running under: Rocky Linux 9.4 (Blue Onyx)\n* using session charset: UTF-8\n* using options ‘--no-manual --as-cran’\n* checking for file ‘loomstats/DESCRIPTION’ ... OK\n* this is package ‘loomstats’ version ‘0.9.3’\n* package encoding: UTF-8")
}

var rChecks = []string{"package namespace information", "package dependencies", "if this is a source package", "if there is a namespace",
	"for executable files", "for hidden files and directories", "for portable file names", "for sufficient/correct file permissions",
	"whether package ‘loomstats’ can be installed", "installed package size", "package directory", "DESCRIPTION meta-information",
	"top-level files", "for left-over files", "index information", "package subdirectories", "whether the package can be loaded",
	"whether the package can be unloaded cleanly", "whether the namespace can be loaded with stated dependencies",
	"dependencies in R code", "S3 generic/method consistency", "replacement functions", "foreign function calls",
	"Rd files", "Rd metadata", "Rd cross-references", "for missing documentation entries", "for code/documentation mismatches",
	"Rd \\usage sections", "Rd contents", "for unstated dependencies in examples", "for unstated dependencies in ‘tests’"}

func (g *gen) taskRCheck() {
	var b strings.Builder
	fmt.Fprintf(&b, "loomstats (the R package under %s) fails R CMD check since the cohort refactor. Make check clean: no ERRORs or WARNINGs; NOTEs are ok if they're the usual ones. Don't add new hard dependencies to Imports.", rPkg)
	if g.chance(0.5) {
		fmt.Fprintf(&b, " Reviewer comment is at %s.", g.U("url", func() string {
			return fmt.Sprintf("https://github.com/loomfield/warp/pull/%d#discussion_r%d", g.n(1000, 9999), g.n(1000000, 1999999))
		}))
	}
	g.user(b.String())

	t1 := g.E("test", g.rSet)
	t2 := g.E("test", g.rSet)
	s1 := g.E("site", g.mkSite("test-weights.R"))
	s2 := g.E("site", g.mkSite("test-cohort.R"))
	cmd := fmt.Sprintf(`Rscript -e 'devtools::check("%s")'`, rPkg)
	g.turn("Running the full check.",
		g.bash(cmd, func(o *out) {
			g.rCheckHead(o, fmt.Sprintf("/tmp/Rtmp%s/file%s/loomstats.Rcheck", g.A(func() string { return g.chars(alnum, 6) }), g.A(g.mkHex(12))))
			i := 0
			o.fill(o.budget(0.6), func() {
				o.addf("* checking %s ... OK", rChecks[i%len(rChecks)])
				i++
				if i%7 == 0 {
					o.addf("  Rd file ‘%s.Rd’: \\examples lines wider than 100 characters are fine (%d lines)", strings.Join(g.words(rWords, 2), "_"), g.n(1, 9))
				}
			})
			o.add("* checking R code for possible problems ... NOTE")
			o.addf("fit_cohort: no visible binding for global variable ‘%s’", g.A(func() string { return g.pickN(rWords) + "_id" }))
			o.add("* checking examples ... ERROR\nRunning examples in ‘loomstats-Ex.R’ failed\nThe error most likely occurred in:\n")
			o.add("> ### Name: weighted_summary\n> ### Title: Weighted summaries by site\n> ### Aliases: weighted_summary\n> \n> ### ** Examples\n> \n> df <- simulate_cohort(200, seed = 1)\n> weighted_summary(df, by = \"site\")")
			o.fail("Error in `dplyr::summarise()`:\nℹ In argument: `wmean = stats::weighted.mean(value, w)`.\nℹ In group 3: `site = \"B\"`.\nCaused by error in `stats::weighted.mean.default()`:\n! 'x' and 'w' must have the same length\nBacktrace:\n    ▆")
			o.fail(" 1. ├─loomstats::weighted_summary(df, by = \"site\")")
			o.failf(" 2. │ └─dplyr::summarise(...) at loomstats/R/%s:3", g.A(g.mkSite("weights.R")))
			o.fail(" 3. │   ├─dplyr:::summarise_cols(.data, dplyr_quosures(...), by, \"summarise\")\n 4. │   └─dplyr:::map(quosures, summarise_eval_one, mask = mask)\n 5. └─stats::weighted.mean.default(value, w)")
			o.fail("Execution halted")
			o.add("* checking for unstated dependencies in ‘tests’ ... OK\n* checking tests ...\n  Running ‘testthat.R’")
			o.fail(" ERROR\nRunning the tests in ‘tests/testthat.R’ failed.")
			o.add("Last 13 lines of output:\n  ══ Failed tests ════════════════════════════════════════════════════════════════")
			o.failf("  ── Failure ('%s:3'): %s ──────────────────", s1, t1)
			o.fail("  `actual` not equal to `expected`.\n  ")
			a := g.f(0.40, 0.45, 4)
			o.failf("  `actual`:   %s\n  `expected`: %s", a, g.f(0.40, 0.45, 4))
			o.failf("  ── Error ('%s:5'): %s ───────────────────", s2, t2)
			o.fail("  Error in `filter_visits(df, window = 30)`: Column `visit_date` not found in `.data`.")
			o.fail("  \n  [ FAIL 2 | WARN 1 | SKIP 3 | PASS 187 ]")
			o.fail("  Error: Test failures\n  Execution halted")
			o.add("* checking for non-standard things in the check directory ... OK\n* DONE\n")
			o.fail("Status: 2 ERRORs, 1 NOTE")
			o.add("\n── R CMD check results ──────────────────────────────────── loomstats 0.9.3 ────")
			o.addf("Duration: 1m %ss\n", g.f(10, 59, 1))
			o.fail("❯ checking examples ... ERROR\n  Running examples in ‘loomstats-Ex.R’ failed\n\n❯ checking tests ...\n  See below...")
			o.add("\n❯ checking R code for possible problems ... NOTE\n")
			o.fail("1 error ✖ | 0 warnings ✔ | 1 note ✖")
			o.fail("Error: R CMD check found ERRORs")
			o.add("Execution halted")
			o.exitLine(1)
		}))

	g.turn("Two failures plus the example. Reading the weights code and the cohort filter.",
		g.readFile(rPkg+"/R/weights.R", func(o *out) {
			o.add("#' Weighted summaries by site\n#'\n#' @param df A cohort data frame from [simulate_cohort()].\n#' @param by Grouping column.\n#' @return A tibble with one row per group.\n#' @export\nweighted_summary <- function(df, by = \"site\") {\n  df |>\n    dplyr::group_by(.data[[by]]) |>\n    dplyr::summarise(wmean = stats::weighted.mean(value, w), n = dplyr::n())\n}\n")
			k := 0
			o.fill(o.budget(0.3), func() {
				k++
				o.addf("#' @noRd\n%s_%d <- function(x, w = NULL, na.rm = TRUE) {", strings.Join(g.words(rWords, 2), "_"), k)
				for range g.n(2, 7) {
					o.addf("  %s", g.pick("if (is.null(w)) w <- rep(1, length(x))", "keep <- !is.na(x) & !is.na(w)", "x <- x[keep]; w <- w[keep]",
						"stopifnot(length(x) == length(w))", fmt.Sprintf("q <- stats::quantile(x, probs = %s, type = 7)", g.f(0, 1, 2)), "sum(w * x) / sum(w)"))
				}
				o.add("}\n")
			})
		}),
		g.grep("filter_visits", rPkg+"/R", func(o *out) {
			o.addf("%s/R/%s:filter_visits <- function(df, window = 30) {", rPkg, g.A(g.mkSite("cohort.R")))
			o.addf("%s/R/%s:  dplyr::filter(df, .data$visit_date >= min(.data$visit_date) + window)", rPkg, g.A(g.mkSite("cohort.R")))
			o.addf("%s/R/%s:  filter_visits(df, window = window) |>", rPkg, g.A(g.mkSite("summaries.R")))
		}))

	g.say("The refactor renamed the date column to visit_date but the test fixture still builds the old name, and weighted_summary doesn't drop NA values before weighted.mean, so lengths differ after the grouped NA filter. Fixing both in code; no new Imports.")
	fn := g.W("key", func() string { return "." + strings.Join(g.words(rWords, 2), "_") + "_na" })
	g.turn("",
		g.replace(rPkg+"/R/weights.R", "    dplyr::summarise(wmean = stats::weighted.mean(value, w), n = dplyr::n())", fmt.Sprintf("    dplyr::summarise(wmean = %s(value, w), n = dplyr::n())", fn)),
		g.replace(rPkg+"/R/weights.R", "#' Weighted summaries by site", fmt.Sprintf("%s <- function(x, w) {\n  keep <- !is.na(x) & !is.na(w)\n  stats::weighted.mean(x[keep], w[keep])\n}\n\n#' Weighted summaries by site", fn)),
		g.replace(rPkg+"/tests/testthat/helper-cohort.R", "visit_dt = as.Date(\"2024-01-01\") + seq_len(n)", "visit_date = as.Date(\"2024-01-01\") + seq_len(n)"))

	g.turn("Checking again.",
		g.bash(cmd, func(o *out) {
			g.rCheckHead(o, g.P("path", func() string {
				return fmt.Sprintf("/tmp/Rtmp%s/file%s/loomstats.Rcheck", g.chars(alnum, 6), g.hex(12))
			}))
			i := 0
			o.fill(o.budget(0.6), func() {
				o.addf("* checking %s ... OK", rChecks[i%len(rChecks)])
				i++
			})
			o.add("* checking examples ... OK\n* checking for unstated dependencies in ‘tests’ ... OK\n* checking tests ...\n  Running ‘testthat.R’\n OK\n* checking for future file timestamps ... NOTE\nunable to verify current time\n* DONE\n\nStatus: 1 NOTE")
			o.add("\n── R CMD check results ──────────────────────────────────── loomstats 0.9.3 ────")
			o.addf("Duration: 1m %ss\n\n❯ checking for future file timestamps ... NOTE\n  unable to verify current time\n\n0 errors ✔ | 0 warnings ✔ | 1 note ✖", g.f(10, 59, 1))
		}))
	g.say("R CMD check is clean apart from the usual time-verification NOTE. No new Imports.")
}

const f90Root = "/srv/warp/solver/strand"

var f90Files = []string{"mesh_io.f90", "halo_exchange.f90", "flux_limiter.f90", "timestep.f90", "boundary.f90", "riemann.f90", "diagnostics_mod.f90", "partition.f90", "restart_io.f90", "main.f90", "kinds.f90", "linalg.f90"}

func (g *gen) f90Progress(o *out, w float64, blocks ...at) {
	pct := 0
	o.fill(o.budget(w), func() {
		pct = min(99, pct+g.n(0, 2))
		f := g.pickN(f90Files)
		switch x := g.r.Float64(); {
		case x < 0.55:
			o.addf("[%3d%%] Building Fortran object src/CMakeFiles/strandcore.dir/%s.o", pct, f)
		case x < 0.7:
			o.addf("[%3d%%] Building Fortran preprocessed src/CMakeFiles/strandcore.dir/%s-pp.f90", pct, strings.TrimSuffix(f, ".f90"))
		case x < 0.9:
			site := g.A(g.mkSite(f))
			col := g.n(10, 60)
			o.addf("%s/src/%s:%d:\n", f90Root, site, col)
			ln := site[strings.LastIndexByte(site, ':')+1:]
			v := g.pick("nx", "ny", "nghost", "comm", "ierr", "dt_local", "work")
			o.addf("  %s |   subroutine %s(%s, %s)\n      | %s1", ln, g.pick("pack_faces", "apply_bc", "setup_halo", "write_slab"), v, g.pick("q", "grid", "buf"), strings.Repeat(" ", col))
			o.addf("Warning: Unused dummy argument '%s' at (1) [-Wunused-dummy-argument]", v)
		default:
			o.addf("[%3d%%] Linking Fortran static library lib%s.a", pct, g.pick("strandcore", "strandio", "strandmpi"))
		}
	}, blocks...)
}

func (g *gen) taskFortran() {
	var b strings.Builder
	ranks := g.pickI(32, 64, 128)
	fmt.Fprintf(&b, "The strand solver stopped building after the gfortran 13 upgrade on the cn partition. Fix the build and run the cavity case on %d ranks. Do not paper over it with -fallow-argument-mismatch; fix the interfaces.", ranks)
	if g.chance(0.5) {
		fmt.Fprintf(&b, " Module change was announced in %s.", g.U("id", func() string { return fmt.Sprintf("CHG%07d", g.n(1000000, 1999999)) }))
	}
	g.user(b.String())

	g.turn("Configuring a fresh build directory.",
		g.bash("cmake -S solver/strand -B build/strand -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_Fortran_COMPILER=mpifort", func(o *out) {
			o.add("-- The Fortran compiler identification is GNU 13.2.0\n-- The C compiler identification is GNU 13.2.0\n-- Detecting Fortran compiler ABI info\n-- Detecting Fortran compiler ABI info - done\n-- Check for working Fortran compiler: /opt/openmpi-4.1.6/bin/mpifort - skipped\n-- Found MPI_Fortran: /opt/openmpi-4.1.6/lib/libmpi_usempif08.so (found version \"3.1\")\n-- Found MPI: TRUE (found version \"3.1\") found components: Fortran\n-- Found HDF5: /opt/hdf5-1.14.3/lib/libhdf5_fortran.so (found version \"1.14.3\") found components: Fortran")
			o.addf("-- strand version: %s-%d-g%s", g.P("version", g.mkVersion()), g.n(1, 40), g.A(g.mkHex(7)))
			o.add("-- Configuring done (2.1s)\n-- Generating done (0.1s)\n-- Build files have been written to: /srv/warp/build/strand")
		}))

	e1 := g.E("site", g.mkSite("halo_exchange.f90"))
	e2 := g.E("site", g.mkSite("flux_limiter.f90"))
	g.turn("Building.",
		g.bash("cmake --build build/strand -j 32 2>&1", func(o *out) {
			caret := func(site string, code string, col int, msg string) {
				o.failf("%s/src/%s:%d:\n", f90Root, site, col)
				ln := site[strings.LastIndexByte(site, ':')+1:]
				o.failf("  %s |     %s\n      | %s1", ln, code, strings.Repeat(" ", col))
				o.fail(msg)
			}
			g.f90Progress(o, 0.9, g.spread(0.3, 0.8, func() {
				caret(e1, "call MPI_Isend(sendbuf, n, MPI_REAL8, nbr, tag, comm, req(k), ierr)", g.n(20, 40),
					"Error: Type mismatch between actual argument at (1) and actual argument at (2) (REAL(4)/REAL(8)).")
				o.failf("make[2]: *** [src/CMakeFiles/strandcore.dir/build.make:%d: src/CMakeFiles/strandcore.dir/halo_exchange.f90.o] Error 1", g.n(100, 400))
			}, func() {
				caret(e2, "real(wp), intent(in) :: qleft(:,:), qright(:,:)", g.n(10, 30),
					"Error: Symbol 'wp' at (1) has no IMPLICIT type; did you mean 'sp'?")
				o.failf("make[2]: *** [src/CMakeFiles/strandcore.dir/build.make:%d: src/CMakeFiles/strandcore.dir/flux_limiter.f90.o] Error 1", g.n(100, 400))
			})...)
			o.fail("make[1]: *** [CMakeFiles/Makefile2:148: src/CMakeFiles/strandcore.dir/all] Error 2\nmake: *** [Makefile:136: all] Error 2")
			o.exitLine(2)
		}))

	g.turn("Two real interface problems, not flags. Reading both files.",
		g.readFile("solver/strand/src/halo_exchange.f90", func(o *out) { g.f90Source(o, "halo_exchange", 0.35) }),
		g.readFile("solver/strand/src/flux_limiter.f90", func(o *out) { g.f90Source(o, "flux_limiter", 0.2) }))

	pad := g.W("key", func() string { return strings.Join(g.words(upperWords, 2), "_") + "_HALO" })
	g.turn("The send buffer is declared real (default kind) but sent as MPI_REAL8, and flux_limiter lost its `use kinds, only: wp`. Fixing the declarations.",
		g.replace("solver/strand/src/halo_exchange.f90", "    real, allocatable :: sendbuf(:), recvbuf(:)", fmt.Sprintf("    real(wp), allocatable :: sendbuf(:), recvbuf(:)\n    integer, parameter :: %s = 2", pad)),
		g.replace("solver/strand/src/flux_limiter.f90", "module flux_limiter\n  implicit none", "module flux_limiter\n  use kinds, only: wp\n  implicit none"))

	g.turn("",
		g.bash("cmake --build build/strand -j 32 2>&1", func(o *out) {
			g.f90Progress(o, 0.7)
			o.add("[100%] Linking Fortran executable ../bin/strand\n[100%] Built target strand")
		}))

	fpe := g.E("site", g.mkSite("flux_limiter.f90"))
	rank := g.n(1, ranks-1)
	node := g.A(g.mkNode("lfc"))
	run := fmt.Sprintf("mpirun -np %d --hostfile ops/mpi/hosts.cn --map-by ppr:32:node ./build/strand/bin/strand cases/cavity/input.nml", ranks)
	g.turn("Built cleanly. Running the cavity case.",
		g.bash(run, func(o *out) {
			o.addf(" STRAND  ranks=%d  threads/rank=1\n case: cavity  grid: 2048 x 2048  dt = 1.0000E-05\n step      time          residual      cfl      mass_err", ranks)
			step := 0
			o.fill(o.budget(0.8), func() {
				step += 100
				o.addf(" %6d   %.4E   %.4E    %s   %.1E", step, float64(step)*1e-5, 1e-3/float64(step/100+1)*(1+g.r.Float64()), g.f(0.3, 0.5, 3), 1e-13*(1+9*g.r.Float64()))
			})
			o.fail("\nProgram received signal SIGFPE: Floating-point exception - erroneous arithmetic operation.\n\nBacktrace for this error:")
			o.failf("#0  0x%s in ???", g.hex(12))
			o.failf("#1  0x%s in __flux_limiter_MOD_minmod\n\tat %s/src/%s", g.hex(6), f90Root, fpe)
			o.failf("#2  0x%s in __flux_limiter_MOD_limit_slopes\n\tat %s/src/%s", g.hex(6), f90Root, g.A(g.mkSite("flux_limiter.f90")))
			o.failf("#3  0x%s in __timestep_MOD_advance\n\tat %s/src/%s", g.hex(6), f90Root, g.A(g.mkSite("timestep.f90")))
			o.failf("#4  0x%s in strand\n\tat %s/src/%s", g.hex(6), f90Root, g.A(g.mkSite("main.f90")))
			o.add("--------------------------------------------------------------------------\nPrimary job  terminated normally, but 1 process returned\na non-zero exit code. Per user-direction, the job has been aborted.\n--------------------------------------------------------------------------\n--------------------------------------------------------------------------")
			o.failf("mpirun noticed that process rank %d with PID %d on node %s exited on signal 8 (Floating point exception).", rank, g.n(20000, 90000), node)
			o.add("--------------------------------------------------------------------------")
			o.exitLine(136)
		}))

	vg := g.E("site", g.mkSite("halo_exchange.f90"))
	g.turn("Division by zero in minmod on one rank. Running a small case under valgrind to see what feeds it.",
		g.bash("mpirun -np 4 valgrind --track-origins=yes --suppressions=/opt/openmpi-4.1.6/share/openmpi/openmpi-valgrind.supp ./build/strand/bin/strand cases/cavity/small.nml 2>&1 | grep -v '^ step'", func(o *out) {
			pids := []int{g.n(20000, 90000), g.n(20000, 90000), g.n(20000, 90000), g.n(20000, 90000)}
			for _, p := range pids {
				o.addf("==%d== Memcheck, a memory error detector\n==%d== Copyright (C) 2002-2022, and GNU GPL'd, by Julian Seward et al.\n==%d== Using Valgrind-3.22.0 and LibVEX; rerun with -h for copyright info\n==%d== Command: ./build/strand/bin/strand cases/cavity/small.nml\n==%d== ", p, p, p, p, p)
			}
			noise := func() {
				p := pids[g.r.IntN(4)]
				o.addf("==%d== Warning: set address range perms: large range [0x%s, 0x%s) (defined)", p, g.hex(9), g.hex(9))
			}
			uninit := func() {
				p := pids[g.r.IntN(4)]
				o.failf("==%d== Syscall param writev(vector[...]) points to uninitialised byte(s)\n==%d==    at 0x%s: writev (in /usr/lib64/libc.so.6)\n==%d==    by 0x%s: mca_btl_tcp_frag_send (in /opt/openmpi-4.1.6/lib/openmpi/mca_btl_tcp.so)", p, p, g.hex(7), p, g.hex(7))
				o.addf("==%d== ", p)
			}
			invalid := func() {
				p := pids[g.n(1, 3)]
				o.failf("==%d== Invalid read of size 8", p)
				o.failf("==%d==    at 0x%s: __halo_exchange_MOD_unpack (%s)", p, g.hex(7), vg)
				o.failf("==%d==    by 0x%s: __halo_exchange_MOD_exchange (%s)", p, g.hex(7), g.A(g.mkSite("halo_exchange.f90")))
				o.failf("==%d==    by 0x%s: __timestep_MOD_advance (%s)", p, g.hex(7), g.A(g.mkSite("timestep.f90")))
				o.failf("==%d==  Address 0x%s is 0 bytes after a block of size 131,072 alloc'd", p, g.hex(8))
				o.failf("==%d==    at 0x484A7A8: malloc (vg_replace_malloc.c:446)", p)
				o.failf("==%d==    by 0x%s: __halo_exchange_MOD_setup (%s)", p, g.hex(7), g.A(g.mkSite("halo_exchange.f90")))
				o.addf("==%d== ", p)
			}
			var blocks []at
			for range g.n(2, 4) {
				blocks = append(blocks, at{g.r.Float64(), uninit})
			}
			blocks = append(blocks, at{0.3 + 0.4*g.r.Float64(), invalid})
			o.fill(o.budget(0.6), noise, blocks...)
			for _, p := range pids {
				o.addf("==%d== \n==%d== HEAP SUMMARY:\n==%d==     in use at exit: %s bytes in %d blocks\n==%d==   total heap usage: %d,%03d allocs, %d,%03d frees, %d,%03d,%03d bytes allocated", p, p, p, fmt.Sprintf("%d,%03d,%03d", g.n(1, 9), g.n(0, 999), g.n(0, 999)), g.n(100, 900), p, g.n(10, 30), g.n(0, 999), g.n(10, 30), g.n(0, 999), g.n(100, 900), g.n(0, 999), g.n(0, 999))
			}
			o.failf("==%d== ERROR SUMMARY: %d errors from 2 contexts (suppressed: %d from %d)", pids[1], g.n(3, 40), g.n(10, 90), g.n(3, 9))
		}))

	g.say("The unpack loop reads one halo cell past recvbuf on ranks at the domain edge: the buffer is sized for one ghost layer but unpacked for two, and the stale value becomes a zero slope denominator in minmod. Sizing the buffers with the halo width.")
	g.turn("",
		g.replace("solver/strand/src/halo_exchange.f90", "    allocate(sendbuf(n), recvbuf(n))", fmt.Sprintf("    allocate(sendbuf(n * %s), recvbuf(n * %s))", pad, pad)),
		g.bash("cmake --build build/strand -j 32 2>&1 | tail -n 3 && "+run, func(o *out) {
			o.add("[ 97%] Building Fortran object src/CMakeFiles/strandcore.dir/halo_exchange.f90.o\n[100%] Linking Fortran executable ../bin/strand\n[100%] Built target strand")
			o.addf(" STRAND  ranks=%d  threads/rank=1\n case: cavity  grid: 2048 x 2048  dt = 1.0000E-05\n step      time          residual      cfl      mass_err", ranks)
			step := 0
			o.fill(o.budget(0.9), func() {
				step += 100
				o.addf(" %6d   %.4E   %.4E    %s   %.1E", step, float64(step)*1e-5, 1e-3/float64(step/100+1)*(1+g.r.Float64()), g.f(0.3, 0.5, 3), 1e-13*(1+9*g.r.Float64()))
			})
			o.addf(" converged: residual below 1.0E-08 after %d steps (%ss wall)", step, g.f(200, 900, 1))
			o.addf(" output: %s", g.P("path", func() string { return "/lus/warp/strand/cavity/run_" + g.hex(10) + ".h5" }))
		}))
	g.say(fmt.Sprintf("strand builds with gfortran 13 without -fallow-argument-mismatch and the cavity case converges on %d ranks.", ranks))
}

func (g *gen) f90Source(o *out, mod string, w float64) {
	if mod == "halo_exchange" {
		o.addf("module %s\n  use kinds, only: wp\n  use mpi_f08\n  implicit none\n  private\n  public :: setup, exchange, unpack\n", mod)
		o.add("  integer :: nbr(4), tags(4)\n    real, allocatable :: sendbuf(:), recvbuf(:)\n\ncontains\n")
		o.add("  subroutine setup(n, comm)\n    integer, intent(in) :: n, comm\n    allocate(sendbuf(n), recvbuf(n))\n  end subroutine setup\n")
	} else {
		o.addf("module %s\n  implicit none\n  private\n  public :: minmod, limit_slopes\n\ncontains\n", mod)
	}
	k := 0
	o.fill(o.budget(w), func() {
		k++
		fn := fmt.Sprintf("%s_%d", g.pick("minmod", "vanleer", "superbee", "slope", "face_avg"), k)
		o.addf("  pure function %s(a, b) result(s)\n    real(wp), intent(in) :: a, b\n    real(wp) :: s", fn)
		for range g.n(2, 6) {
			o.addf("    %s", g.pick("if (a * b <= 0.0_wp) then", "  s = 0.0_wp", "else", "  s = sign(min(abs(a), abs(b)), a)", "end if",
				"s = (a + b) / (abs(a) + abs(b))", fmt.Sprintf("s = s * %s_wp", g.f(0, 2, 3))))
		}
		o.addf("  end function %s\n", fn)
	})
	o.addf("end module %s", mod)
}
