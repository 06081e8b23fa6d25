package kilngen

import (
	"fmt"
	"strings"
)

// PostgreSQL and Redis, the OCaml tool, and git.

// psqlRows is a psql query printing rows of payouts.
func (g *gen) psqlRows(n int) *out {
	o := &out{}
	o.ok("                  id                  |              batch_id              |  roaster_id   |  amount  | currency |  state   |          settle_at")
	o.ok("--------------------------------------+--------------------------------------+---------------+----------+----------+----------+-------------------------------")
	t := g.clock.Add(-g.dur(3600000, 86400000))
	for i := 0; i < n; i++ {
		t = t.Add(g.dur(1000, 600000))
		id := g.uuid()
		if g.chance(0.05) {
			g.passing(true, id, "uuid")
		}
		o.okf(" %s | %s | rst_%s | %8d | %-8s | %-8s | %s+00", id, g.uuid(), g.chars(alnum, 9), g.between(100, 900000), g.pick([]string{"EUR", "USD", "GBP", "SEK"}), g.pick([]string{"pending", "settled", "held", "settled", "reversed"}), t.Format("2006-01-02 15:04:05.000000"))
	}
	o.okf("(%d rows)", n)
	o.ok("")
	return o
}

// psqlExplain is EXPLAIN (ANALYZE, BUFFERS) of a payouts query.
func (g *gen) psqlExplain() *out {
	o := &out{}
	o.ok("                                                                      QUERY PLAN")
	o.ok("------------------------------------------------------------------------------------------------------------------------------------------------------")
	depth := 0
	for i, n := 0, g.n(14, 36); i < n; i++ {
		ind := strings.Repeat("      ", depth)
		arrow := ""
		if depth > 0 {
			arrow = "->  "
		}
		switch g.r.IntN(5) {
		case 0:
			o.okf(" %s%sNested Loop  (cost=%d.%02d..%d.%02d rows=%d width=%d) (actual time=%d.%03d..%d.%03d rows=%d loops=1)", ind, arrow, g.between(0, 99), g.between(0, 99), g.between(100, 99999), g.between(0, 99), g.between(1, 5000), g.between(8, 200), g.between(0, 9), g.between(0, 999), g.between(10, 9999), g.between(0, 999), g.between(1, 5000))
			depth++
		case 1:
			o.okf(" %s%sIndex Scan using payouts_roaster_created_idx on payouts p  (cost=0.56..%d.%02d rows=%d width=%d) (actual time=0.%03d..%d.%03d rows=%d loops=%d)", ind, arrow, g.between(8, 9999), g.between(0, 99), g.between(1, 900), g.between(40, 200), g.between(10, 999), g.between(0, 99), g.between(0, 999), g.between(0, 900), g.between(1, 400))
			o.okf(" %s      Index Cond: ((roaster_id = r.id) AND (created_at >= '%s'::timestamp with time zone))", ind, g.clock.Add(-g.dur(86400000, 864000000)).Format("2006-01-02 00:00:00+00"))
		case 2:
			o.okf(" %s%sSeq Scan on roasters r  (cost=0.00..%d.%02d rows=%d width=%d) (actual time=0.%03d..%d.%03d rows=%d loops=1)", ind, arrow, g.between(100, 9999), g.between(0, 99), g.between(100, 20000), g.between(20, 120), g.between(10, 999), g.between(1, 99), g.between(0, 999), g.between(100, 20000))
			o.okf(" %s      Filter: (state = 'active'::roaster_state)", ind)
			o.okf(" %s      Rows Removed by Filter: %d", ind, g.between(0, 4000))
		case 3:
			o.okf(" %s%sHash  (cost=%d.%02d..%d.%02d rows=%d width=%d) (actual time=%d.%03d..%d.%03d rows=%d loops=1)", ind, arrow, g.between(100, 999), g.between(0, 99), g.between(100, 999), g.between(0, 99), g.between(100, 9000), g.between(8, 64), g.between(1, 90), g.between(0, 999), g.between(1, 90), g.between(0, 999), g.between(100, 9000))
			o.okf(" %s      Buckets: %d  Batches: 1  Memory Usage: %dkB", ind, 1<<g.between(10, 16), g.between(40, 4000))
		default:
			o.okf(" %s      Buffers: shared hit=%d read=%d dirtied=%d", ind, g.between(100, 900000), g.between(0, 90000), g.between(0, 50))
		}
		if depth > 4 {
			depth = 1
		}
	}
	o.okf(" Planning Time: %d.%03d ms", g.between(0, 9), g.between(0, 999))
	o.okf(" Execution Time: %d.%03d ms", g.between(10, 9000), g.between(0, 999))
	o.okf("(%d rows)", len(o.lines)-2)
	o.ok("")
	return o
}

// psqlError is a failing psql command.
func (g *gen) psqlError() *out {
	o := &out{}
	switch g.r.IntN(4) {
	case 0:
		o.bad("ERROR:  duplicate key value violates unique constraint \"payouts_batch_id_key\"")
		o.badf("DETAIL:  Key (batch_id)=(%s) already exists.", g.errl(g.uuid(), "uuid"))
	case 1:
		p1, p2 := g.between(10000, 99999), g.between(10000, 99999)
		t1, t2 := g.errl(g.digits(9), "id"), g.errl(g.digits(9), "id")
		o.bad("ERROR:  deadlock detected")
		o.badf("DETAIL:  Process %d waits for ShareLock on transaction %s; blocked by process %d.", p1, t1, p2)
		o.badf("Process %d waits for ShareLock on transaction %s; blocked by process %d.", p2, t2, p1)
		o.ok("HINT:  See server log for query details.")
		o.badf("CONTEXT:  while updating tuple (%d,%d) in relation \"payouts\"", g.between(100, 99999), g.between(1, 90))
	case 2:
		o.badf("psql: error: connection to server at \"%s\" (%s), port 5432 failed: FATAL:  password authentication failed for user \"ledger_ro\"", g.w.rdsHost, g.errl(g.ip(), "ip"))
		o.badf("connection to server at \"%s\" (%s), port 5432 failed: FATAL:  no pg_hba.conf entry for host \"%s\", user \"ledger_ro\", database \"ledger\", no encryption", g.w.rdsHost, g.ip(), g.errl(g.ip(), "ip"))
	default:
		o.bad("ERROR:  canceling statement due to statement timeout")
		o.badf("CONTEXT:  SQL statement \"UPDATE payouts SET state = 'settled' WHERE batch_id = '%s'\"", g.errl(g.uuid(), "uuid"))
		o.ok("PL/pgSQL function settle_batch(uuid) line 14 at SQL statement")
	}
	return o
}

// redisInfo is redis-cli INFO: the server, clients, memory and stats
// sections.
func (g *gen) redisInfo() *out {
	o := &out{}
	o.ok("# Server")
	o.ok("redis_version:7.1.0")
	o.ok("redis_mode:standalone")
	o.ok("os:Amazon ElastiCache")
	o.ok("arch_bits:64")
	o.okf("run_id:%s", g.passing(true, g.hex(40), "hash"))
	o.okf("tcp_port:6379")
	o.okf("uptime_in_seconds:%d", g.between(100000, 9000000))
	o.okf("uptime_in_days:%d", g.between(1, 100))
	o.ok("")
	o.ok("# Clients")
	o.okf("connected_clients:%d", g.between(20, 900))
	o.okf("blocked_clients:%d", g.between(0, 5))
	o.okf("maxclients:65000")
	o.ok("")
	o.ok("# Memory")
	used := g.between(1000000000, 6000000000)
	o.okf("used_memory:%d", used)
	o.okf("used_memory_human:%.2fG", float64(used)/1e9)
	o.okf("used_memory_rss:%d", used+g.between(0, 500000000))
	o.okf("used_memory_peak:%d", used+g.between(0, 900000000))
	o.okf("maxmemory:%d", 6871947673)
	o.ok("maxmemory_human:6.40G")
	o.okf("maxmemory_policy:%s", g.pick([]string{"volatile-lru", "allkeys-lru", "noeviction"}))
	o.okf("mem_fragmentation_ratio:%.2f", 1+g.r.Float64())
	o.ok("")
	o.ok("# Stats")
	for _, k := range []string{"total_connections_received", "total_commands_processed", "instantaneous_ops_per_sec", "rejected_connections", "expired_keys", "evicted_keys", "keyspace_hits", "keyspace_misses", "pubsub_channels", "total_net_input_bytes", "total_net_output_bytes"} {
		o.okf("%s:%d", k, g.between(0, 900000000))
	}
	o.ok("")
	o.ok("# Keyspace")
	for db := 0; db < g.between(2, 5); db++ {
		o.okf("db%d:keys=%d,expires=%d,avg_ttl=%d", db, g.between(1000, 900000), g.between(1000, 900000), g.between(1000, 90000000))
	}
	for i, n := 0, g.n(10, 40); i < n; i++ {
		o.okf("cmdstat_%s:calls=%d,usec=%d,usec_per_call=%.2f,rejected_calls=0,failed_calls=%d", g.pick([]string{"get", "set", "incr", "expire", "hgetall", "zadd", "zrangebyscore", "eval", "evalsha", "del", "scan", "mget", "pexpire"}), g.between(1000, 90000000), g.between(1000, 900000000), g.r.Float64()*20, g.between(0, 40))
	}
	return o
}

// redisScan lists keys of a pattern.
func (g *gen) redisScan(prefix string) *out {
	o := &out{}
	for i, n := 0, g.n(30, 100); i < n; i++ {
		k := fmt.Sprintf("%s:rst_%s:%s", prefix, g.chars(alnum, 9), g.clock.Add(-g.dur(0, 86400000)).Format("2006010215"))
		k = g.fresh(func() string { return k + ":" + g.chars(lowAN, 2) })
		if g.chance(0.04) {
			g.passing(true, k, "key")
		}
		o.ok(k)
	}
	return o
}

// redisError is a failing redis-cli call.
func (g *gen) redisError() *out {
	o := &out{}
	switch g.r.IntN(4) {
	case 0:
		o.badf("(error) MOVED %d %s", g.between(0, 16383), g.errl(g.hostport(6379), "hostport"))
		o.badf("(error) ASK %d %s", g.between(0, 16383), g.errl(g.hostport(6379), "hostport"))
	case 1:
		o.badf("Could not connect to Redis at %s: Connection refused", g.errl(g.hostport(6380), "hostport"))
		o.badf("Could not connect to Redis at %s: Connection refused", g.errl(g.hostport(6380), "hostport"))
	case 2:
		o.badf("(error) OOM command not allowed when used memory > 'maxmemory'. (client %s)", g.errl(g.hostport(g.between(40000, 60000)), "hostport"))
		o.badf("(error) script: %s, on @user_script:%d.", g.errl(g.hex(40), "hash"), g.between(3, 40))
	default:
		o.badf("(error) READONLY You can't write against a read only replica. (master_replid %s)", g.errl(g.hex(40), "hash"))
		o.badf("replica of %s", g.errl(g.hostport(6379), "hostport"))
	}
	return o
}

// ---- glaze (OCaml) ----

var ocamlWarnings = []struct{ num, name, msg string }{
	{"32", "unused-value-declaration", "unused value %s."},
	{"8", "partial-match", "this pattern-matching is not exhaustive.\nHere is an example of a case that is not matched:\n`Bad_percentage _"},
	{"27", "unused-var-strict", "unused variable %s."},
	{"33", "unused-open", "unused open Core.Option."},
	{"9", "missing-record-field-pattern", "the following labels are not bound in this record pattern:\nwindow\nEither bind these labels explicitly or add '; _' to the pattern."},
}

// duneBuild is dune build @all; failing, a warning-as-error or a type
// error in unit u.
func (g *gen) duneBuild(u *mlUnit) *out {
	o := &out{}
	g.fails = nil
	if u == nil {
		return o // dune build is silent when it succeeds
	}
	for i, n := 0, g.between(0, 2); i < n; i++ {
		o.okf("      ocamlc lib/.glaze.objs/byte/glaze__%s.{cmi,cmo,cmt}", title(mlUnits[g.r.IntN(len(mlUnits))].module))
	}
	l := g.between(20, max(30, g.file(u.srcPath()).len()-2))
	c1 := g.between(2, 30)
	o.badf("File \"lib/%s.ml\", line %d, characters %d-%d:", u.module, l, c1, c1+g.between(4, 30))
	src := fmt.Sprintf("  let %s = %s rules in", camel(g.pick(nouns), "s"), u.fn)
	g.setLine(u.srcPath(), l, src)
	g.failed(l)
	o.badf("%d |%s", l, src)
	o.badf("%s%s", strings.Repeat(" ", c1+len(fmt.Sprint(l))+3), strings.Repeat("^", g.between(4, 20)))
	if g.chance(0.7) {
		w := ocamlWarnings[g.r.IntN(len(ocamlWarnings))]
		msg := strings.ReplaceAll(w.msg, "%s", strings.ToLower(g.pick(verbs))+"_"+g.pick(nouns))
		o.badf("Error (warning %s [%s]): %s", w.num, g.errl(w.name, "code"), msg)
	} else {
		o.badf("Error: This expression has type %s but an expression was expected of type", g.pick([]string{"int", "Tier.t list", "(t, error) result", "string option"}))
		o.badf("         %s", g.pick([]string{"Money.t", "Tier.t array", "t list", "string"}))
		o.badf("       Type %s is not compatible with type %s", g.pick([]string{"int", "Tier.t"}), g.pick([]string{"Money.t", "Rules.t"}))
	}
	for i, n := 0, g.between(0, 2); i < n; i++ {
		o.okf("      ocamlopt lib/.glaze.objs/native/glaze__%s.{cmx,o}", title(mlUnits[g.r.IntN(len(mlUnits))].module))
	}
	return o
}

// lambdaInvoke is aws lambda invoke of the export function and the
// response it wrote: the call succeeds, the function failed.
func (g *gen) lambdaInvoke() *out {
	o := &out{}
	o.ok("{")
	o.ok("    \"StatusCode\": 200,")
	o.ok("    \"FunctionError\": \"Unhandled\",")
	o.ok("    \"ExecutedVersion\": \"$LATEST\"")
	o.ok("}")
	o.badf(`{"errorType":"AccessDenied","errorMessage":"Access Denied","name":"AccessDenied","$fault":"client","$metadata":{"httpStatusCode":403,"requestId":"%s","extendedRequestId":"%s","attempts":1,"totalRetryDelay":0},"Code":"AccessDenied","RequestId":"%s","HostId":"%s","trace":["AccessDenied: Access Denied","    at throwDefaultError (/var/runtime/node_modules/@aws-sdk/node_modules/@smithy/smithy-client/dist-cjs/index.js:838:20)","    at /var/task/index.mjs:%d:%d"]}`,
		g.errl(g.up(16), "id"), g.chars(alnum+"+/", 76), g.up(16), g.chars(alnum+"+/", 76), g.between(20, 400), g.between(5, 40))
	return o
}

// duneTest is dune test with alcotest; fail says one case fails.
func (g *gen) duneTest(fail bool) *out {
	o := &out{}
	o.ok("Testing `glaze'.")
	o.okf("This run has ID `%s'.", g.passing(!fail, g.up(8), "id"))
	o.ok("")
	groups := []string{"rules", "tier", "window", "emit", "price"}
	type fl struct {
		name, group string
		idx         int
	}
	var failed *fl
	total := 0
	for _, gr := range groups {
		n := g.n(3, 9)
		failIdx := -1
		if fail && failed == nil && g.chance(0.4) {
			failIdx = g.r.IntN(n)
		}
		for i := 0; i < n; i++ {
			total++
			if i == failIdx {
				name := g.errl(g.alcoTest(), "test")
				failed = &fl{name, gr, i}
				o.badf("  [FAIL]        %-14s %2d   %s.", gr, i, name)
				continue
			}
			o.okf("  [OK]          %-14s %2d   %s.", gr, i, g.pick(hsVerbs)+" "+g.pick(nouns)+" "+g.pick([]string{"in order", "with a cap", "for an empty list", "at the boundary", "twice"}))
		}
	}
	var expectName string
	if fail && g.chance(0.5) {
		expectName = g.errl(g.word(func() string {
			return "emits " + g.pick(nouns) + " tiers " + g.pick([]string{"in order", "with caps", "for SEK", "without gaps"})
		}), "test")
	}
	if fail && failed == nil {
		total++
		name := g.errl(g.alcoTest(), "test")
		failed = &fl{name, "price", 0}
		o.badf("  [FAIL]        %-14s %2d   %s.", "price", 0, name)
	}
	o.ok("")
	if expectName != "" {
		l := g.between(20, 200)
		o.badf("File \"test/test_emit.ml\", line 1, characters 0-0:")
		o.bad("------ test/test_emit.ml")
		o.bad("++++++ test/test_emit.ml.corrected")
		o.badf("File \"test/test_emit.ml\", line %d, characters 0-1:", l)
		o.badf(" |let%%expect_test %q =", expectName)
		o.bad(" |  print_tiers sample;")
		o.bad(" |  [%expect {|")
		o.badf("-|    bronze 0 %d", g.between(0, 99))
		o.badf("+|    bronze 0 %d", g.between(100, 300))
		o.bad(" |    silver 500 250 |}]")
		o.ok("")
	}
	if failed == nil {
		o.okf("Full test results in `~/ember/tools/glaze/_build/default/test/_build/_tests/glaze'.")
		o.okf("Test Successful in %d.%03ds. %d tests run.", 0, g.between(1, 999), total)
		return o
	}
	o.bad("┌──────────────────────────────────────────────────────────────────────────────┐")
	o.badf("│ [FAIL]        %-14s %2d   %-44s│", failed.group, failed.idx, failed.name+".")
	o.bad("└──────────────────────────────────────────────────────────────────────────────┘")
	o.badf("ASSERT %s", failed.name)
	o.badf("FAIL %s", failed.name)
	o.bad("")
	o.badf("   Expected: `Error \"overlap: %s and %s at %02d:00\"'", g.errl("rule_"+g.chars(lowAN, 10), "id"), g.pick([]string{"weekend", "early-bird", "staff"}), g.between(6, 20))
	o.bad("   Received: `Ok [...]'")
	o.bad("")
	o.bad("Raised at Alcotest_engine__Test.check in file \"src/alcotest-engine/test.ml\", line 200, characters 4-19")
	o.badf("Called from Dune__exe__Test_glaze.(fun) in file \"test/test_glaze.ml\", line %d, characters 4-%d", g.between(20, 300), g.between(30, 90))
	o.bad("Called from Alcotest_engine__Core.Make.protect_test.(fun) in file \"src/alcotest-engine/core.ml\", line 181, characters 17-23")
	o.bad("Called from Alcotest_engine__Monad.Identity.catch in file \"src/alcotest-engine/monad.ml\", line 24, characters 31-35")
	o.ok("")
	o.okf("Logs saved to `~/ember/tools/glaze/_build/default/test/_build/_tests/glaze/%s.%03d.output'.", failed.group, failed.idx)
	o.ok(" ──────────────────────────────────────────────────────────────────────────────")
	o.ok("")
	o.ok("Full test results in `~/ember/tools/glaze/_build/default/test/_build/_tests/glaze'.")
	o.okf("1 failure! in 0.%03ds. %d tests run.", g.between(1, 999), total)
	return o
}

// ---- git ----

// gitCommit is git add and commit of files; its hash is labelled.
func (g *gen) gitCommit(branch, msg string, files int) *out {
	o := &out{}
	o.okf("[%s %s] %s", branch, g.passing(true, g.sha7(), "hash"), msg)
	o.okf(" %d file%s changed, %d insertions(+), %d deletions(-)", files, plural(files), g.between(2, 90), g.between(0, 40))
	return o
}

// gitLog is git log --oneline of recent history.
func (g *gen) gitLog(n int) *out {
	o := &out{}
	for i := 0; i < n; i++ {
		h := g.sha7()
		if g.chance(0.08) {
			g.passing(true, h, "hash")
		}
		o.okf("%s %s(%s): %s %s", h, g.pick([]string{"fix", "feat", "chore", "refactor", "test"}), g.pick([]string{"ios", "ledger", "contracts", "infra", "glaze", "helm"}), strings.ToLower(g.pick(verbs)), g.pick(nouns)+" "+g.pick(phrases))
	}
	return o
}

// gitPush is git push -u of a new branch.
func (g *gen) gitPush(branch string) *out {
	o := &out{}
	o.okf("Enumerating objects: %d, done.", g.between(10, 60))
	o.okf("Counting objects: 100%% (%d/%d), done.", 20, 20)
	o.ok("Delta compression using up to 12 threads")
	o.okf("Compressing objects: 100%% (%d/%d), done.", 9, 9)
	o.okf("Writing objects: 100%% (%d/%d), %d.%02d KiB | %d.%02d MiB/s, done.", 11, 11, g.between(1, 20), g.between(0, 99), g.between(1, 20), g.between(0, 99))
	o.okf("Total %d (delta %d), reused 0 (delta 0), pack-reused 0 (from 0)", 11, g.between(3, 8))
	o.okf("remote: Resolving deltas: 100%% (%d/%d), completed with %d local objects.", 6, 6, 6)
	o.ok("remote: ")
	o.okf("remote: Create a pull request for '%s' on GitHub by visiting:", branch)
	o.okf("remote:      https://github.com/kilnworks/ember/pull/new/%s", branch)
	o.ok("remote: ")
	o.ok("To github.com:kilnworks/ember.git")
	o.okf(" * [new branch]      %s -> %s", branch, branch)
	o.okf("branch '%s' set up to track 'origin/%s'.", branch, branch)
	return o
}

var ciChecks = map[string][]string{
	"ios":       {"ios-build", "ios-tests", "swiftlint", "danger"},
	"ledger":    {"ledger-build", "ledger-tests", "hlint", "migrations-check"},
	"contracts": {"forge-test", "forge-coverage", "slither", "gas-snapshot"},
	"infra":     {"terraform-fmt", "terraform-validate", "tflint", "ansible-lint-ci", "checkov"},
	"glaze":     {"dune-build", "dune-test", "ocamlformat"},
	"helm":      {"helm-lint", "kubeconform", "chart-testing"},
}

// prChecks is gh pr checks of the branch's pull request; failing, one
// check fails on a flaky runner.
func (g *gen) prChecks(area string, fail bool) *out {
	o := &out{}
	checks := append([]string{"commitlint", "codeql"}, ciChecks[area]...)
	bad := -1
	if fail {
		bad = 2 + g.r.IntN(len(checks)-2)
	}
	if fail {
		o.okf("Some checks were not successful")
		o.okf("1 failing, %d successful, 0 skipped, and 0 pending checks", len(checks)-1)
	} else {
		o.okf("All checks were successful")
		o.okf("0 failing, %d successful, 0 skipped, and 0 pending checks", len(checks))
	}
	o.ok("")
	o.ok("   NAME                  DESCRIPTION   ELAPSED  URL")
	for i, c := range checks {
		url := fmt.Sprintf("https://github.com/kilnworks/ember/actions/runs/%s/job/%s", g.digits(10), g.digits(11))
		if i == bad {
			o.badf("X  %-21s %-13s %dm%ds    %s", c, "", g.between(1, 20), g.between(0, 59), g.errl(url, "url"))
			continue
		}
		o.okf("✓  %-21s %-13s %dm%ds    %s", c, "", g.between(0, 20), g.between(0, 59), g.passing(!fail && g.chance(0.3), url, "url"))
	}
	return o
}
