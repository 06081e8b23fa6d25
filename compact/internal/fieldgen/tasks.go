package fieldgen

import (
	"fmt"
	"strings"
)

// task picks a scenario and builds it within budget tool calls, grouped
// into rounds: one round for a rare user, rounds of two to five steps
// for a dense one.
func (g *gen) task(budget int) task {
	scenarios := []func() task{g.testTask, g.httpTask, g.kubeTask, g.dockerTask, g.gitTask, g.sqlTask, g.buildTask}
	t := scenarios[g.r.IntN(len(scenarios))]()
	var steps []step
	for _, r := range t.rounds {
		steps = append(steps, r...)
	}
	// Trim to the budget, keeping whole steps.
	n, kept := 0, 0
	for kept < len(steps) && n+len(steps[kept].calls) <= budget {
		n += len(steps[kept].calls)
		kept++
	}
	if kept == 0 {
		steps[0].calls = steps[0].calls[:budget]
		kept = 1
	}
	steps = steps[:kept]
	t.rounds = nil
	if g.users == "rare" {
		t.rounds = [][]step{steps}
		return t
	}
	for len(steps) > 0 {
		k := min(len(steps), 2+g.r.IntN(4))
		t.rounds = append(t.rounds, steps[:k])
		steps = steps[k:]
	}
	return t
}

func (g *gen) shell(cmd, output string, fail bool) callOut {
	return callOut{name: "run_terminal_cmd", args: args("command", cmd, "cwd", "/srv/"+g.svc, "timeout_ms", 120000), output: output, isError: fail}
}

func (g *gen) read(path string, from, to int, body string) callOut {
	return callOut{name: "read_file", args: args("target_file", path, "start_line", from, "end_line", to), output: body}
}

func (g *gen) grep(query, include, output string) callOut {
	return callOut{name: "grep_search", args: args("query", query, "include_pattern", include), output: output}
}

func (g *gen) edit(path, instructions, code string) callOut {
	return callOut{name: "edit_file", args: args("target_file", path, "instructions", instructions, "code_edit", code),
		output: fmt.Sprintf("Applied edit to %s: +%d -%d lines.", path, 1+g.r.IntN(12), g.r.IntN(6))}
}

func (g *gen) fetch(method, url, output string, fail bool) callOut {
	return callOut{name: "fetch_url", args: args("url", url, "method", method, "headers", map[string]string{"Accept": "application/json", "X-Request-Id": g.uuid()}),
		output: output, isError: fail}
}

func (g *gen) sql(query, output string, fail bool) callOut {
	return callOut{name: "sql_query", args: args("dsn_env", "DATABASE_URL", "query", query), output: output, isError: fail}
}

// testTask: a failing test suite in one of four languages, fixed in a
// loop of reading, searching, editing and running again.
func (g *gen) testTask() task {
	lang := pick(g.r, []string{"python", "node", "rust", "go"})
	f := g.failure(lang)
	t := task{
		request: pick(g.r, []string{
			fmt.Sprintf("CI is red on main since %s. Can you get `%s` passing again? Issue #%d has the details.", g.deploySHA[:9], f.cmd, g.issue),
			fmt.Sprintf("%s fails locally for me with %s. Please fix it without skipping the test.", f.cmd, f.short),
			fmt.Sprintf("Tests broke after the upgrade to %s. Look at %s first.", f.dep, f.file),
		}),
		hints: []string{f.file + ":" + fmt.Sprint(f.line), f.short, f.test},
	}
	var s []step
	s = append(s, step{
		thinking: fmt.Sprintf("Start by running the suite exactly as CI does, so I see the same failure. The command is %s.", f.cmd),
		text:     "Running the test suite first to see the failure.",
		calls:    []callOut{g.shell(f.cmd, g.testRun(lang, f, false), true)},
	})
	s = append(s, step{
		thinking: fmt.Sprintf("The failure points at %s line %d. Read around it.", f.file, f.line),
		calls:    []callOut{g.read(f.file, max(1, f.line-30), f.line+30, g.sourceListing(lang, f, f.line-30, 60))},
	})
	s = append(s, step{
		text:  fmt.Sprintf("Let me see who else calls `%s`.", f.symbol),
		calls: []callOut{g.grep(f.symbol, f.include, g.grepHits(f, g.lines(25)))},
	})
	if g.r.IntN(2) == 0 {
		s = append(s, step{
			thinking: "Check when this changed; the log of the file should show it.",
			calls:    []callOut{g.shell("git log --oneline -n 25 -- "+f.file, g.gitLog(25), false)},
		})
	}
	s = append(s, step{
		text:  fmt.Sprintf("The bug is in `%s`: %s. Fixing it.", f.symbol, f.cause),
		calls: []callOut{g.edit(f.file, "Fix "+f.symbol+": "+f.cause, f.fix)},
	})
	s = append(s, step{
		calls: []callOut{g.shell(f.narrow, g.testRun(lang, f, true), false)},
	})
	s = append(s, step{
		text:  "The focused test passes; running the whole suite again.",
		calls: []callOut{g.shell(f.cmd, g.testRun(lang, f, g.r.IntN(3) > 0), false)},
	})
	t.rounds = [][]step{s}
	t.report = fmt.Sprintf("Fixed `%s` in `%s` (%s). `%s` now passes; the failing case was `%s` with `%s`.", f.symbol, f.file, f.cause, f.narrow, f.test, f.short)
	return t
}

// httpTask: 5xx errors seen from outside, chased through the API, the
// access log and the service's settings.
func (g *gen) httpTask() task {
	code := pick(g.r, []int{502, 503, 504, 500, 429})
	errCode := pick(g.r, []string{"UPSTREAM_TIMEOUT", "POOL_EXHAUSTED", "RATE_LIMITED", "TENANT_NOT_FOUND", "IDEMPOTENCY_CONFLICT"})
	reqID := g.uuid()
	cursor := g.alnum(16)
	url := fmt.Sprintf("https://%s/v2/orders?status=pending&limit=%d&cursor=%s&tenant=t_%s", g.domain, pick(g.r, []int{25, 50, 100}), cursor, g.alnum(6))
	t := task{
		request: pick(g.r, []string{
			fmt.Sprintf("Customers report %d errors on %s since this morning (request id %s). Find out why.", code, url, reqID),
			fmt.Sprintf("We get %s from the orders endpoint, about 4%% of requests. Investigate please.", errCode),
		}),
		hints: []string{url, errCode, fmt.Sprint(code)},
	}
	var s []step
	s = append(s, step{
		thinking: "Reproduce from outside first, with the same query string.",
		calls:    []callOut{g.fetch("GET", url, g.apiError(code, errCode, reqID), true)},
	})
	s = append(s, step{
		text:  "Reproduced. Checking the access log for the pattern.",
		calls: []callOut{g.shell(fmt.Sprintf("tail -n 2000 /var/log/nginx/%s.access.log | grep -E '\" (5[0-9]{2}|429) '", g.svc), g.accessLog(g.lines(45), code), false)},
	})
	s = append(s, step{
		calls: []callOut{g.fetch("GET", fmt.Sprintf("http://localhost:%d/internal/health?verbose=1", g.port), g.healthJSON(errCode), false)},
	})
	s = append(s, step{
		thinking: "The health output names the pool; compare with the settings the pods run with.",
		calls:    []callOut{g.shell(fmt.Sprintf("kubectl -n %s exec %s -- env | sort", g.ns, g.pods[0]), g.envDump(), false)},
	})
	s = append(s, step{
		calls: []callOut{g.fetch("GET", fmt.Sprintf("https://%s/v2/orders/%s?expand=items,payments", g.domain, g.uuid()), g.orderJSON(g.lines(8)), false)},
	})
	s = append(s, step{
		text: fmt.Sprintf("%s comes from the pool limit: %s=%s is too low for the burst. Raising the default in config.", errCode, g.env[3].name, g.env[3].value),
		calls: []callOut{g.edit(fmt.Sprintf("deploy/%s/values-%s.yaml", g.svc, g.ns), "Raise the pool size and upstream timeout",
			fmt.Sprintf("env:\n  %s: \"%d\"\n  %s: \"%s\"\n", g.env[3].name, 60, g.env[2].name, g.env[2].value))},
	})
	s = append(s, step{
		calls: []callOut{g.fetch("GET", url, g.orderListJSON(g.lines(30), cursor), false)},
	})
	t.rounds = [][]step{s}
	t.report = fmt.Sprintf("The %d/%s errors (request %s) came from pool exhaustion under burst. Raised %s; %s now returns 200.", code, errCode, reqID, g.env[3].name, url)
	return t
}

// kubeTask: pods crash-looping after a deploy.
func (g *gen) kubeTask() task {
	pod := pick(g.r, g.pods)
	reason := pick(g.r, []string{"OOMKilled", "Error", "CrashLoopBackOff"})
	image := fmt.Sprintf("%s/%s:%s", g.registry, g.svc, g.version)
	missing := g.env[6].name
	t := task{
		request: pick(g.r, []string{
			fmt.Sprintf("%s in %s is restarting every few minutes after the rollout of %s. What's going on?", pod, g.ns, image),
			fmt.Sprintf("Pods of %s keep crashing (%s). Please look.", g.svc, reason),
		}),
		hints: []string{pod, image, reason},
	}
	var s []step
	s = append(s, step{
		text:  "Looking at the pods.",
		calls: []callOut{g.shell(fmt.Sprintf("kubectl -n %s get pods -l app=%s -o wide", g.ns, g.svc), g.podTable(pod, reason), false)},
	})
	s = append(s, step{
		calls: []callOut{g.shell(fmt.Sprintf("kubectl -n %s describe pod %s", g.ns, pod), g.describePod(pod, image, reason), false)},
	})
	s = append(s, step{
		thinking: "Logs of the previous container tell why it exited.",
		calls:    []callOut{g.shell(fmt.Sprintf("kubectl -n %s logs %s --previous --tail=300", g.ns, pod), g.crashLog(g.lines(45), missing), false)},
	})
	s = append(s, step{
		calls: []callOut{g.shell(fmt.Sprintf("kubectl -n %s get events --sort-by=.lastTimestamp | tail -n 60", g.ns), g.events(g.lines(45), pod), false)},
	})
	s = append(s, step{
		text:  fmt.Sprintf("The new image reads %s at start-up, and the secret does not have it. Adding it to the deployment.", missing),
		calls: []callOut{g.grep(missing, "**/*.{py,go,ts,rs,yaml}", g.grepHits(failure{file: "src/config/settings.py", symbol: missing, line: 41}, g.lines(12)))},
	})
	s = append(s, step{
		calls: []callOut{g.shell(fmt.Sprintf("kubectl -n %s set env deployment/%s --from=secret/%s-secrets --keys=%s && kubectl -n %s rollout status deployment/%s --timeout=180s", g.ns, g.svc, g.svc, missing, g.ns, g.svc),
			fmt.Sprintf("deployment.apps/%s env updated\nWaiting for deployment \"%s\" rollout to finish: 1 of %d updated replicas are available...\ndeployment \"%s\" successfully rolled out", g.svc, g.svc, len(g.pods), g.svc), false)},
	})
	t.rounds = [][]step{s}
	t.report = fmt.Sprintf("%s crashed (%s) because %s reads %s at start-up and the secret lacked it. Added the key; the rollout of deployment/%s completed.", pod, reason, image, missing, g.svc)
	return t
}

// dockerTask: the local stack does not come up.
func (g *gen) dockerTask() task {
	port := pick(g.r, []int{5432, 6379, 9092, 8025, g.port})
	t := task{
		request: fmt.Sprintf("`docker compose up` fails on my machine for %s. Can you get the local stack running? I need it for #%d.", g.svc, g.issue+3),
		hints:   []string{fmt.Sprintf("0.0.0.0:%d", port), "docker-compose.override.yml"},
	}
	var s []step
	s = append(s, step{
		calls: []callOut{g.shell("docker compose up -d", g.composeUp(port), true)},
	})
	s = append(s, step{
		text:  fmt.Sprintf("Port %d is taken. Checking which container holds it.", port),
		calls: []callOut{g.shell("docker ps --format 'table {{.ID}}\\t{{.Image}}\\t{{.Status}}\\t{{.Ports}}\\t{{.Names}}'", g.dockerPS(g.lines(14), port), false)},
	})
	s = append(s, step{
		calls: []callOut{g.shell("lsof -nP -iTCP:"+fmt.Sprint(port)+" -sTCP:LISTEN", fmt.Sprintf("COMMAND   PID USER   FD   TYPE             DEVICE SIZE/OFF NODE NAME\ncom.docke %d dev   %du  IPv6 0x%s      0t0  TCP *:%d (LISTEN)", 4000+g.r.IntN(50000), 100+g.r.IntN(100), g.hex(16), port), false)},
	})
	s = append(s, step{
		calls: []callOut{g.shell("docker logs --tail 200 "+g.svc+"-db-1", g.dbLog(g.lines(60)), false)},
	})
	s = append(s, step{
		text: fmt.Sprintf("An old container from another checkout holds %d. Moving our mapping to %d in the override file.", port, port+10000),
		calls: []callOut{g.edit("docker-compose.override.yml", "Map the port to a free one",
			fmt.Sprintf("services:\n  db:\n    ports:\n      - \"%d:%d\"\n", port+10000, port))},
	})
	s = append(s, step{
		calls: []callOut{g.shell("docker compose up -d && docker compose ps", g.composePS(port+10000), false)},
	})
	t.rounds = [][]step{s}
	t.report = fmt.Sprintf("Port %d was held by a stale container; the override maps it to %d and `docker compose ps` shows every service up.", port, port+10000)
	return t
}

// gitTask: find the commit that broke something.
func (g *gen) gitTask() task {
	bad := g.commits[20+g.r.IntN(15)]
	good := g.commits[2+g.r.IntN(10)]
	path := pick(g.r, []string{"internal/pricing/rounding.go", "src/orders/serializers.py", "src/api/client.ts", "src/ledger/apply.rs"})
	t := task{
		request: pick(g.r, []string{
			fmt.Sprintf("Something between %s and %s broke invoice totals. Can you bisect it?", good.sha[:10], g.deploySHA[:10]),
			fmt.Sprintf("Please find which commit changed the behaviour of %s; it was fine at %s.", path, good.sha[:8]),
		}),
		hints: []string{bad.sha[:12], path},
	}
	var s []step
	s = append(s, step{calls: []callOut{g.shell("git log --oneline --decorate -n 40", g.gitLog(40), false)}})
	s = append(s, step{
		thinking: "Bisect with the test that shows the bug, so it runs without me.",
		calls:    []callOut{g.shell(fmt.Sprintf("git bisect start %s %s && git bisect run make test-invoices", g.deploySHA[:10], good.sha[:10]), g.bisect(bad, g.lines(30)), false)},
	})
	s = append(s, step{calls: []callOut{g.shell("git show --stat "+bad.sha[:12], g.gitShow(bad, path), false)}})
	s = append(s, step{calls: []callOut{g.shell(fmt.Sprintf("git diff %s~1 %s -- %s", bad.sha[:12], bad.sha[:12], path), g.gitDiff(path, g.lines(6)), false)}})
	s = append(s, step{
		text:  fmt.Sprintf("%s changed the rounding mode in %s. Restoring half-even rounding.", bad.sha[:12], path),
		calls: []callOut{g.edit(path, "Restore banker's rounding", "return amount.quantize(CENTS, rounding=ROUND_HALF_EVEN)")},
	})
	s = append(s, step{calls: []callOut{g.shell("git bisect reset && make test-invoices", fmt.Sprintf("Previous HEAD position was %s\nSwitched to branch 'main'\nok  \tinvoices\t%.3fs", bad.sha[:7], 1+3*g.r.Float64()), false)}})
	t.rounds = [][]step{s}
	t.report = fmt.Sprintf("The first bad commit is %s (%s); it changed %s. Fixed on top of main.", bad.sha, bad.msg, path)
	return t
}

// sqlTask: duplicate rows and a constraint violation.
func (g *gen) sqlTask() task {
	constraint := pick(g.r, []string{"orders_external_ref_key", "payments_idempotency_key_uniq", "ledger_entries_pkey"})
	t := task{
		request: fmt.Sprintf("The outbox relay logs SQLSTATE 23505 on %s for %s. Find the duplicates and tell me where they come from.", constraint, g.dbName),
		hints:   []string{constraint, "23505"},
	}
	var s []step
	s = append(s, step{calls: []callOut{g.shell(fmt.Sprintf("kubectl -n %s logs deploy/%s-relay --since=2h | grep -m 40 23505", g.ns, g.svc), g.relayLog(g.lines(40), constraint), false)}})
	s = append(s, step{
		thinking: "Count the duplicates first.",
		calls:    []callOut{g.sql("SELECT external_ref, count(*), min(created_at), max(created_at) FROM orders GROUP BY external_ref HAVING count(*) > 1 ORDER BY 2 DESC LIMIT 50;", g.sqlRows(g.lines(40)), false)},
	})
	s = append(s, step{calls: []callOut{g.sql("INSERT INTO orders (id, external_ref, tenant_id) SELECT gen_random_uuid(), external_ref, tenant_id FROM orders LIMIT 1;",
		fmt.Sprintf("ERROR:  duplicate key value violates unique constraint \"%s\"\nDETAIL:  Key (external_ref)=(ext_%s) already exists.\nSQLSTATE: 23505", constraint, g.alnum(10)), true)}})
	s = append(s, step{calls: []callOut{g.sql("EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM outbox WHERE dispatched_at IS NULL ORDER BY id LIMIT 500;", g.explain(), false)}})
	s = append(s, step{calls: []callOut{g.grep("ON CONFLICT", "**/*.sql", g.grepHits(failure{file: "migrations/0042_outbox.sql", symbol: "ON CONFLICT", line: 17}, g.lines(10)))}})
	s = append(s, step{
		text:  "The relay inserts without ON CONFLICT and retries on timeout, which creates the duplicates. Making the insert idempotent.",
		calls: []callOut{g.edit("internal/outbox/relay.go", "Use ON CONFLICT DO NOTHING", "INSERT INTO orders (id, external_ref, tenant_id) VALUES ($1, $2, $3) ON CONFLICT (external_ref) DO NOTHING")},
	})
	t.rounds = [][]step{s}
	t.report = fmt.Sprintf("The duplicates come from the relay's retries: it re-inserts after a timeout, and %s rejects the second row (SQLSTATE 23505). The insert is now idempotent.", constraint)
	return t
}

// buildTask: a dependency bump breaks the build.
func (g *gen) buildTask() task {
	kind := pick(g.r, []string{"npm", "cargo", "tsc", "pip"})
	b := g.buildFailure(kind)
	t := task{
		request: fmt.Sprintf("Renovate's PR #%d (%s) does not build. Can you make it build?", g.issue+7, b.dep),
		hints:   []string{b.dep, b.loc},
	}
	var s []step
	s = append(s, step{calls: []callOut{g.shell(b.cmd, b.output, true)}})
	s = append(s, step{calls: []callOut{g.read(strings.SplitN(b.loc, ":", 2)[0], 1, 80, g.sourceListing(b.lang, failure{symbol: b.symbol, file: b.loc}, 1, 80))}})
	s = append(s, step{calls: []callOut{g.shell(b.treeCmd, b.tree, false)}})
	s = append(s, step{
		text:  fmt.Sprintf("The new %s changed `%s`. Adapting the call site at %s.", b.dep, b.symbol, b.loc),
		calls: []callOut{g.edit(strings.SplitN(b.loc, ":", 2)[0], "Adapt to "+b.dep, b.fix)},
	})
	s = append(s, step{calls: []callOut{g.shell(b.cmd, b.ok, false)}})
	t.rounds = [][]step{s}
	t.report = fmt.Sprintf("%s builds now: `%s` at %s needed the new signature. `%s` is clean.", b.dep, b.symbol, b.loc, b.cmd)
	return t
}
