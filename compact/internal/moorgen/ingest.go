package moorgen

import (
	"fmt"
	"strings"

	"github.com/strata-memory/strata/compact/internal/opsgen"
)

// The Erlang/OTP MQTT ingest: rebar3 compiles, EUnit and Common Test
// runs, crash and supervisor reports.

func (g *gen) rebarHead(o *out) {
	o.add("===> Verifying dependencies...")
	if g.chance(0.3) {
		o.add("===> Fetching emqtt v1.11.0\n===> Fetching mongodb v3.0.22\n===> Fetching telemetry v1.2.1")
	}
	o.add("===> Analyzing applications...\n===> Compiling moor_ingest")
}

var eunitMods = []string{"mi_frame_decoder_tests", "mi_rate_limiter_tests", "mi_topic_router_tests"}

var eunitNames = []string{"decode_telemetry_test", "decode_position_test", "crc_mismatch_test", "bucket_refill_test", "limit_burst_test",
	"route_tenant_topic_test", "route_unknown_topic_test", "empty_payload_test", "seq_wrap_test", "version_two_test", "reject_oversize_test"}

// rebarEunitPass is a passing EUnit run, dotted or verbose.
func (g *gen) rebarEunitPass() (string, *out) {
	o := &out{}
	g.rebarHead(o)
	o.add("===> Performing EUnit tests...")
	n := 0
	if g.chance(0.5) {
		o.add("======================== EUnit ========================")
		for _, m := range eunitMods {
			o.addf("module '%s'", m)
			for range g.n(4, 14) {
				o.addf("  %s: %s...%s", m, g.pick(eunitNames), g.pick([]string{"ok", "ok", "[0.001 s] ok", "[0.012 s] ok"}))
				n++
			}
			o.addf("  [done in %.3f s]", g.secs(0.005, 0.3))
		}
		o.add("=======================================================")
		o.addf("  All %d tests passed.", n)
		return "cd ingest && rebar3 eunit -v", o
	}
	n = g.n(30, 90)
	o.add(strings.Repeat(".", n))
	o.addf("Finished in %.3f seconds\n%d tests, 0 failures", g.secs(0.2, 3), n)
	return "cd ingest && rebar3 eunit", o
}

// erlTestName is a fresh test name, shaped unlike the names the sources
// and the passing runs show.
func (g *gen) erlTestName(suffix string) string {
	return g.pick(words) + "_" + g.pick([]string{"survives", "rejects", "keeps", "drops", "resumes"}) + "_" + g.pick([]string{"reconnect", "split_frame", "qos2_retry", "clock_jump", "dup_seq", "slow_sink", "burst"}) + suffix
}

// rebarEunitFail is an EUnit run with a failing test or a compile error.
func (g *gen) rebarEunitFail() (string, *out) {
	o := &out{}
	if g.chance(0.2) {
		return "cd ingest && rebar3 eunit", g.rebarCompileFail(o)
	}
	g.rebarHead(o)
	o.add("===> Performing EUnit tests...")
	n := max(8, g.n(30, 90))
	k := g.between(3, n-3)
	o.add(strings.Repeat(".", k) + "F" + strings.Repeat(".", n-k))
	o.add("\nFailures:\n")
	mod := g.pick(eunitMods)
	file := "ingest/apps/moor_ingest/test/" + mod + ".erl"
	test := g.E("test", func() string { return g.erlTestName("_test") })
	o.failf("  1) %s:%s/0: module '%s'", mod, test, mod)
	switch g.r.IntN(3) {
	case 0:
		o.failf("     Failure/Error: ?assertMatch({error, {truncated, _}}, mi_frame_decoder:decode(Frame))\n       expected: = {error, {truncated, _}}\n            got: {ok,#{seq => %d,type => telemetry,payload => <<1,2>>,client => <<\"%s\">>}}", g.between(1, 900), g.E("id", g.clientID))
	case 1:
		want := g.between(2, 9)
		o.failf("     Failure/Error: ?assertEqual(%d, mi_rate_limiter:tokens(Bucket))\n       expected: %d\n            got: %d", want, want, g.between(10, 40))
	default:
		o.failf("     Failure/Error: {error,{badmatch,{error,{bad_topic,<<\"moorhen/v2/%s/%s/telemetry\">>}}},\n                      [{mi_topic_router,route,1,[{file,\"apps/moor_ingest/src/mi_topic_router.erl\"},{line,%d}]}]}",
			g.pick(depots), g.E("id", g.clientID), g.lineFor("mi_topic_router.erl"))
	}
	l := g.site(opsgen.ErrorLine, file)
	o.failf("     %%%% %s/%s:%d:in `%s:-%s/0-fun-0-/0`", root, file, l, mod, test)
	o.add("     Output: \n")
	o.addf("Finished in %.3f seconds", g.secs(0.2, 3))
	o.failf("%d tests, 1 failures", n+1)
	o.fail("===> Error running tests")
	return "cd ingest && rebar3 eunit", o
}

func (g *gen) rebarCompileFail(o *out) *out {
	g.rebarHead(o)
	f := g.pick(ingest.files)
	rel := strings.TrimPrefix(f, "ingest/")
	o.failf("===> Compiling %s failed", rel)
	for range g.between(1, 3) {
		l := g.site(opsgen.ErrorLine, f)
		col := g.between(5, 30)
		v := strings.ToUpper(g.pick(words)[:1]) + g.pick(words)[1:] + fmt.Sprint(g.between(0, 3))
		var msg, src string
		switch g.r.IntN(4) {
		case 0:
			msg, src = fmt.Sprintf("variable '%s' is unbound", v), "{ok, "+v+"};"
		case 1:
			msg, src = fmt.Sprintf("function %s_%s/%d undefined", g.pick(words), g.pick(words), g.between(1, 3)), "ok = flush_"+g.pick(words)+"(State),"
		case 2:
			msg, src = "syntax error before: '->'", "        {error, Reason} ->"
		default:
			msg, src = fmt.Sprintf("record state has no field %s_%s", g.pick(words), g.pick(words)), "State#state{"+g.pick(words)+" = 0}"
		}
		o.failf("%s:%d:%d: %s", rel, l, col, msg)
		o.addf("%%  %3d|     %s\n%%     | %s^\n", l, src, strings.Repeat(" ", col))
	}
	if g.chance(0.5) {
		o.addf("%s:%d:1: Warning: function %s/%d is unused", rel, g.lineFor(f), g.pick(words)+"_"+g.pick(words), g.between(1, 3))
	}
	return o
}

var ctSuites = []string{"mi_ingest_SUITE", "mi_sink_SUITE"}

// rebarCtPass is a passing Common Test run.
func (g *gen) rebarCtPass() (string, *out) {
	o := &out{}
	g.rebarHead(o)
	verbose := g.chance(0.5)
	o.add("===> Running Common Test suites...")
	total := 0
	if verbose {
		o.addf("Common Test v1.26.2 starting (cwd is %s/ingest)\n\nEshell V14.2.5 (press Ctrl+G to abort, type help(). for help)", root)
		dir := g.P("path", func() string {
			return fmt.Sprintf("_build/test/logs/ct_run.nonode@nohost.%s_%02d.%02d.%02d", g.now.Format("2006-01-02"), g.between(0, 23), g.between(0, 59), g.between(0, 59))
		})
		o.addf("Common Test: Running make in test directories...\n\nCWD set to: \"%s/ingest/%s\"\n", root, dir)
		o.addf("TEST INFO: 1 test(s), %d case(s) in %d suite(s)\n", g.between(14, 30), len(ctSuites))
	}
	for _, s := range ctSuites {
		n := g.between(6, 16)
		total += n
		if !verbose {
			o.addf("%%%%%% %s: %s", s, strings.Repeat(".", n))
			continue
		}
		o.addf("Testing moorhen.ingest.%s: Starting test, %d test cases", s, n)
		for range n {
			if g.chance(0.25) {
				o.addf("----------------------------------------------------\n%s %s\nflushed batch %s: %d frames -> telemetry.positions", g.now.Format("2006-01-02 15:04:05.000"), s, g.P("id", func() string { return g.prefixed("b", "_", 10) }), g.between(2, 500))
			}
		}
		o.addf("Testing moorhen.ingest.%s: TEST COMPLETE, %d ok, 0 failed of %d test cases\n", s, n, n)
	}
	if verbose {
		o.addf("Updating %s/ingest/_build/test/logs/index.html ... done\nUpdating %s/ingest/_build/test/logs/all_runs.html ... done", root, root)
	}
	o.addf("All %d tests passed.", total)
	return "cd ingest && rebar3 ct" + map[bool]string{true: " --verbose", false: ""}[verbose], o
}

var erlFrames = []string{"{gen_server,try_handle_info,3,[{file,\"gen_server.erl\"},{line,2095}]}",
	"{gen_server,handle_msg,6,[{file,\"gen_server.erl\"},{line,2183}]}",
	"{proc_lib,init_p_do_apply,3,[{file,\"proc_lib.erl\"},{line,241}]}",
	"{test_server,ts_tc,3,[{file,\"test_server.erl\"},{line,1793}]}",
	"{test_server,run_test_case_eval1,6,[{file,\"test_server.erl\"},{line,1302}]}"}

// crashReport writes an OTP crash of a gen_server of the ingest, its
// lines all failure lines (labelled with class c) or, when c is empty,
// as plain output with no label.
func (g *gen) crashReport(o *out, c opsgen.Class) {
	emit := o.add
	lab := func(kind string, f func() string) string { return f() }
	if c != "" {
		emit = o.fail
		lab = func(kind string, f func() string) string { return g.plant(c, kind, f) }
	}
	mod := g.pick([]string{"mi_mqtt_conn", "mi_batch_writer", "mi_mongo_sink", "mi_rate_limiter"})
	file := "ingest/apps/moor_ingest/src/" + mod + ".erl"
	var line int
	if c != "" {
		line = g.siteForm(c, file, func(b string, n int) string { return fmt.Sprintf("%s, line %d", b, n) })
	} else {
		line = g.lineFor(file)
	}
	fns := []string{"handle_info/2", "handle_call/3", "flush/1", "insert_many/2", "check/2"}
	fa := fns[g.r.IntN(len(fns))]
	fn, arity, _ := strings.Cut(fa, "/")
	reason := g.pick([]string{"{error,closed}", "{error,timeout}", "{error,{not_master,<<\"NotWritablePrimary\">>}}", "{error,einval}"})
	pid := fmt.Sprintf("<0.%d.0>", g.between(300, 9000))
	ts := g.tick(0, 2).Format("2-Jan-2006::15:04:05.000000")
	emit("=ERROR REPORT==== " + ts + " ===")
	emit("** Generic server " + pid + " terminating ")
	emit(fmt.Sprintf("** Last message in was {publish,<<\"moorhen/v2/%s/%s/telemetry\">>,<<165,2,0,%d,...>>}", g.pick(depots), lab("id", g.clientID), g.between(8, 90)))
	emit(fmt.Sprintf("** When Server state == {state,%d,[],[],{sink,%s},[]}", g.between(0, 4000), pid))
	emit("** Reason for termination ==")
	emit(fmt.Sprintf("** {{badmatch,%s},\n    [{%s,%s,%s,\n         [{file,\"apps/moor_ingest/src/%s.erl\"},{line,%d}]},", reason, mod, fn, arity, mod, line))
	emit("     " + erlFrames[0] + ",\n     " + erlFrames[1] + ",\n     " + erlFrames[2] + "]}")
	emit("=CRASH REPORT==== " + ts + " ===\n  crasher:")
	emit(fmt.Sprintf("    initial call: %s:init/1\n    pid: %s\n    registered_name: []", mod, pid))
	emit(fmt.Sprintf("    exception error: no match of right hand side value %s", reason))
	emit(fmt.Sprintf("      in function  %s:%s (apps/moor_ingest/src/%s.erl, line %d)", mod, fa, mod, line))
	emit("      in call from gen_server:try_handle_info/3 (gen_server.erl, line 2095)")
	o.addf("    ancestors: [mi_conn_sup,moor_ingest_sup,<0.%d.0>]\n    message_queue_len: 0\n    messages: []\n    links: [<0.%d.0>]\n    dictionary: []\n    trap_exit: true\n    status: running\n    heap_size: 6772\n    stack_size: 28\n    reductions: %d\n  neighbours:", g.between(200, 260), g.between(200, 260), g.between(10000, 900000))
	emit("=SUPERVISOR REPORT==== " + ts + " ===")
	emit(fmt.Sprintf("    supervisor: {local,mi_conn_sup}\n    errorContext: child_terminated\n    reason: {badmatch,%s}", reason))
	o.addf("    offender: [{pid,%s},\n               {id,%s},\n               {mfargs,{%s,start_link,[]}},\n               {restart_type,transient},\n               {significant,false},\n               {shutdown,5000},\n               {child_type,worker}]", pid, mod, mod)
}

// rebarCtFail is a Common Test run with a failing case and the crash
// behind it.
func (g *gen) rebarCtFail() (string, *out) {
	o := &out{}
	g.rebarHead(o)
	o.add("===> Running Common Test suites...")
	bad := g.pick(ctSuites)
	passed := 0
	for _, s := range ctSuites {
		n := g.between(6, 16)
		if s != bad {
			o.addf("%%%%%% %s: %s", s, strings.Repeat(".", n))
			passed += n
			continue
		}
		k := g.between(1, n-2)
		o.addf("%%%%%% %s: %s", s, strings.Repeat(".", k))
		passed += n - 1
		if g.chance(0.6) {
			g.crashReport(o, opsgen.ErrorLine)
		}
		tc := g.E("test", func() string { return g.erlTestName("") })
		o.failf("%%%%%% %s ==> %s: FAILED", s, tc)
		l := g.lineFor("ingest/test/" + s + ".erl")
		o.failf("%%%%%% %s ==> {{badmatch,{error,{%s,%s}}},\n    [{%s,%s,1,\n         [{file,\"%s/ingest/test/%s.erl\"},{line,%d}]},",
			s, g.pick([]string{"timeout", "no_suback", "closed"}), "<<\""+g.E("id", g.clientID)+"\">>", s, tc, root, s, l)
		o.fail("     " + erlFrames[3] + ",\n     " + erlFrames[4] + "]}")
		o.add("")
		o.addf("%%%%%% %s: %s", s, strings.Repeat(".", n-k-1))
	}
	o.addf("\nEXPERIMENTAL: Writing retry specification at %s/ingest/_build/test/logs/retry.spec\n              call rebar3 ct with '--retry' to re-run failing cases.", root)
	o.failf("Failed 1 tests. Passed %d tests.", passed)
	o.addf("Results written to \"%s/ingest/_build/test/logs/index.html\".", root)
	o.fail("===> Failures occurred running tests: 1")
	return "cd ingest && rebar3 ct", o
}

// rebarRelease builds the release and the container image.
func (g *gen) rebarRelease() (string, *out) {
	o := &out{}
	g.rebarHead(o)
	o.add("===> Assembling release moor_ingest-2." + fmt.Sprint(g.between(3, 12)) + ".0...")
	o.addf("===> Release successfully assembled: _build/prod/rel/moor_ingest\n===> Building release tarball moor_ingest-2.%d.0.tar.gz...\n===> Tarball successfully created: _build/prod/rel/moor_ingest/moor_ingest-2.%d.0.tar.gz", g.between(3, 12), g.between(3, 12))
	for i := range g.n(6, 14) {
		o.addf("#%d [%d/9] %s\n#%d DONE %.1fs", i+4, i%9+1, g.pick([]string{"COPY _build/prod/rel/moor_ingest /opt/moor_ingest", "RUN apt-get install -y --no-install-recommends libssl3", "FROM docker.io/library/erlang:26.2-slim", "WORKDIR /opt/moor_ingest"}), i+4, g.secs(0, 9))
	}
	o.addf("#20 exporting layers 0.4s done\n#20 writing image sha256:%s done", g.P("hash", g.hexf(64)))
	o.addf("#20 naming to registry.brackwater.io/moorhen/ingest:2.%d.%d done", g.between(3, 12), g.between(0, 9))
	return "cd ingest && rebar3 as prod tar && docker build -t registry.brackwater.io/moorhen/ingest:next .", o
}
