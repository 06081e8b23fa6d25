package opsgen

import (
	"fmt"
	"path"
	"strings"
)

const system = `You are a coding agent working in the ledgerline monorepo at ` + repoRoot + `.
Tools: exec_command runs a shell command (cmd, workdir) and returns its output and exit status;
view_file prints a file with line numbers; search runs ripgrep; write_file creates or overwrites a
file; replace_in_file replaces old_str with new_str in a file. Run the tests of what you change.`

// Generate returns the session for seed with options o.
func Generate(seed uint64, o Options) *Transcript {
	if o.ToolCalls <= 0 {
		o.ToolCalls = Standard().ToolCalls
	}
	g := newGen(seed, o)
	for g.calls < o.ToolCalls {
		c := components[g.r.IntN(len(components))]
		switch k := g.r.IntN(10); {
		case k < 5:
			g.fixTask(c)
		case k < 7:
			g.featureTask(c)
		case k < 9:
			g.incidentTask()
		default:
			g.backfillTask()
		}
	}
	return &Transcript{System: system, Messages: g.msgs, Labels: g.labels, ToolCalls: g.calls}
}

// step is one tool call and its result.
type step struct {
	call Call
	res  Result
}

func (g *gen) exec(cmd, workdir string, o *out, exit int) step {
	args := []Arg{{"cmd", cmd}}
	if workdir != "" {
		args = append(args, Arg{"workdir", repoRoot + "/" + workdir})
	}
	s := o.String()
	if exit != 0 {
		s += fmt.Sprintf("\n\n[exit status %d]", exit)
	}
	return step{Call{Name: "exec_command", Args: args}, Result{Output: s, Exit: exit, ErrLines: o.errs}}
}

// read is a command or viewer whose output is what it read.
func (g *gen) read(name string, args []Arg, output string) step {
	return step{Call{Name: name, Args: args}, Result{Output: output, Read: true}}
}

func (g *gen) write(file, content string) step {
	return step{Call{Name: "write_file", Args: []Arg{{"path", repoRoot + "/" + file}, {"content", content}}},
		Result{Output: fmt.Sprintf("Wrote %d bytes to %s", len(content), file)}}
}

func (g *gen) replace(file, old, new string) step {
	return step{Call{Name: "replace_in_file", Args: []Arg{{"path", repoRoot + "/" + file}, {"old_str", old}, {"new_str", new}}},
		Result{Output: fmt.Sprintf("Replaced 1 occurrence in %s", file)}}
}

// round appends an assistant message with text and the steps' calls, and
// the message of their results.
func (g *gen) round(text string, steps ...step) {
	m := Message{Role: "assistant", Text: text}
	r := Message{Role: "tool"}
	for _, s := range steps {
		id := g.callID()
		s.call.ID, s.res.CallID = id, id
		m.Calls = append(m.Calls, s.call)
		r.Results = append(r.Results, s.res)
	}
	g.calls += len(steps)
	g.msgs = append(g.msgs, m, r)
}

func (g *gen) say(text string) { g.msgs = append(g.msgs, Message{Role: "assistant", Text: text}) }

func (g *gen) user(text string) { g.msgs = append(g.msgs, Message{Role: "user", Text: text}) }

// viewFile reads a file with the viewer or cat.
func (g *gen) viewFile(lang, file string) step {
	n := g.n(90, 320)
	src := g.source(lang, file, n)
	if g.chance(0.5) {
		return g.read("exec_command", []Arg{{"cmd", "cat " + file}, {"workdir", repoRoot}}, src)
	}
	return g.read("view_file", []Arg{{"path", repoRoot + "/" + file}}, numbered(src, 1))
}

// explore reads several files of a component, a few at a time.
func (g *gen) explore(c component, p pkg) {
	var files []string
	for _, f := range p.files {
		files = append(files, c.path(p, f))
	}
	for _, f := range p.tests {
		files = append(files, c.path(p, f))
	}
	if g.chance(0.6) {
		q := c.pkgs[g.r.IntN(len(c.pkgs))]
		for _, f := range q.files {
			files = append(files, c.path(q, f))
		}
	}
	var listing []string
	for _, q := range c.pkgs {
		for _, f := range q.files {
			listing = append(listing, c.rel(q, f))
		}
	}
	g.round(g.pick([]string{"Let me look at how this component is laid out first.", "I'll start by reading the relevant code.", "Looking at the package before changing anything."}),
		g.read("exec_command", []Arg{{"cmd", "git ls-files " + c.dir + " | head -80"}, {"workdir", repoRoot}}, strings.Join(prefixAll(c.dir+"/", listing), "\n")))
	for len(files) > 0 {
		k := min(len(files), g.between(1, 4))
		var steps []step
		for _, f := range files[:k] {
			steps = append(steps, g.viewFile(c.lang, f))
		}
		files = files[k:]
		g.round("", steps...)
	}
}

func prefixAll(pre string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = pre + x
	}
	return out
}

// gitLog is a passing git log whose hashes are planted.
func (g *gen) gitLog(dir string) step {
	o := &out{}
	for range g.n(10, 25) {
		o.add("%s %s(%s): %s %s %s", g.plant(g.hex(7), PassingOutput, "hash"), g.pick([]string{"fix", "feat", "chore", "refactor"}), path.Base(dir),
			strings.ToLower(g.pick(verbs)), g.pick(words), g.pick(words))
	}
	return g.exec("git log --oneline -n 20 -- "+dir, "", o, 0)
}

// commit is a passing git commit whose new hash is planted.
func (g *gen) commit(c component, files []string) step {
	o := &out{}
	branch := g.pick([]string{"fix", "feat", "ops"}) + "/" + g.pick(words) + "-" + g.pick(words)
	o.add("[%s %s] %s: %s the %s %s", branch, g.plant(g.hex(7), PassingOutput, "hash"), c.name, strings.ToLower(g.pick(verbs)), g.pick(words), g.pick(words))
	o.add(" %d files changed, %d insertions(+), %d deletions(-)", len(files), g.between(4, 120), g.between(0, 40))
	return g.exec("git add "+strings.Join(files, " ")+" && git commit -q -m \""+c.name+": "+g.pick(words)+" fix\" && git log -1 --stat --format='[%D %h] %s'", "", o, 0)
}

// constraint is a user sentence that plants one or two identifiers.
func (g *gen) constraint() string {
	u := func(s, kind string) string { return g.plant(s, UserTurn, kind) }
	switch g.r.IntN(8) {
	case 0:
		return fmt.Sprintf("This is ticket %s; put it in the PR description, not in commit messages.", u(g.ticket(), "code"))
	case 1:
		return fmt.Sprintf("Don't touch anything in %s, that's the compliance archive.", u(g.bucket(), "url"))
	case 2:
		return fmt.Sprintf("The staging replica is %s if you need real rows; read-only, never write to it.", u(g.hostport(), "hostport"))
	case 3:
		return fmt.Sprintf("Don't rebase past %s, release is cut from there.", u(g.hex(7), "hash"))
	case 4:
		return fmt.Sprintf("The tenant that reported it is %s.", u(g.uuid(), "uuid"))
	case 5:
		return fmt.Sprintf("The on-call dashboard for this is %s.", u(fmt.Sprintf("https://grafana.ledgerline.dev/d/%s/ingest", g.chars("abcdefghijklmnopqrstuvwxyz0123456789", 9)), "url"))
	case 6:
		return fmt.Sprintf("Keep the metrics port on %s, the scraper expects it.", u(g.hostport(), "hostport"))
	default:
		return fmt.Sprintf("If you need to page someone the incident is %s.", u(g.ticket(), "code"))
	}
}

func (g *gen) constraints(lo, hi int) string {
	var s []string
	for range g.between(lo, hi) {
		s = append(s, g.constraint())
	}
	return strings.Join(s, " ")
}

// decision asks the user to choose and records the answer.
func (g *gen) decision(c component) {
	g.say(fmt.Sprintf("Before I change %s I need a decision: either %s the %s in place, or %s them into a separate %s. The first is smaller; the second keeps the %s path untouched. Which do you prefer?",
		c.name, strings.ToLower(g.pick(verbs)), g.pick(words), strings.ToLower(g.pick(verbs)), g.pick(words), g.pick(words)))
	g.user(g.pick([]string{"Go with the second option.", "The first one, keep it small.", "Second. "}) + " " + g.constraints(0, 2))
}

// fixTask: the user reports failing tests; the agent reads, runs, fails,
// edits, runs again until they pass, and commits.
func (g *gen) fixTask(c component) {
	p := c.pkgs[g.r.IntN(len(c.pkgs))]
	if len(p.tests) == 0 {
		p.tests = []string{p.files[0]}
	}
	g.user(fmt.Sprintf("%s in %s %s are failing since the %s change. Please find out why and fix it. %s",
		g.pick([]string{"Tests", "The tests", "CI tests"}), c.name, p.dir, g.pick(words), g.constraints(1, 3)))
	if g.chance(0.6) {
		g.round("Checking recent history first.", g.gitLog(c.dir))
	}
	g.explore(c, p)
	var changed []string
	for attempt := 0; ; attempt++ {
		cmd, o := g.testFail(c, p)
		g.round("Running the tests to see the failure.", g.exec(cmd, c.dir, o, 1))
		if g.chance(0.5) {
			f := c.path(p, p.files[g.r.IntN(len(p.files))])
			g.round("", g.read("search", []Arg{{"pattern", g.pick(words)}, {"path", repoRoot + "/" + c.dir}}, g.grep(c, p)), g.viewFile(c.lang, f))
		}
		if attempt == 0 && g.chance(0.4) {
			g.decision(c)
		}
		f := c.path(p, p.files[g.r.IntN(len(p.files))])
		changed = append(changed, g.plant(f, FileWritten, "path"))
		newCode := fmt.Sprintf("if len(pending) == 0 {\n\treturn nil // %s: nothing to flush\n}", g.plant(g.code(), FileWritten, "code"))
		g.round("The failure comes from "+path.Base(f)+"; fixing it there.", g.replace(f, "pending := b.pending[:n]", newCode))
		if attempt >= 1 || g.chance(0.5) {
			break
		}
	}
	cmd, o := g.testPass(c, g.chance(0.6))
	g.round("Re-running the whole suite.", g.exec(cmd, c.dir, o, 0))
	if c.lang == "go" && g.chance(0.5) {
		g.serveAndCall(c)
	}
	g.round("", g.commit(c, changed))
	g.say(fmt.Sprintf("Fixed: the failure in %s came from %s. The suite passes now and the change is committed.", c.name, path.Base(changed[len(changed)-1])))
	if g.chance(0.3) {
		g.user("Thanks. " + g.constraints(1, 1))
		g.say("Noted.")
	}
}

// featureTask: the agent writes new files (a config and a module), the
// build fails, it fixes it, tests pass.
func (g *gen) featureTask(c component) {
	p := c.pkgs[g.r.IntN(len(c.pkgs))]
	g.user(fmt.Sprintf("Add a dead-letter path to %s: entries that fail %s should go to a DLQ we can replay. %s", c.name, g.pick(words), g.constraints(1, 2)))
	g.explore(c, p)
	ext := map[string]string{"go": ".go", "py": ".py", "ts": ".ts", "rs": ".rs"}[c.lang]
	mod := c.path(p, "dlq_"+g.pick(words)+ext)
	cfg := c.dir + "/config/dlq-" + g.pick(words) + ".yaml"
	g.plant(mod, FileWritten, "path")
	g.plant(cfg, FileWritten, "path")
	conf := fmt.Sprintf("dlq:\n  listen: %s\n  upstream: %s\n  bucket: %s\n  max_attempts: %d\n",
		g.plant(g.hostport(), FileWritten, "hostport"), g.plant(g.url(), FileWritten, "url"), g.plant(g.bucket(), FileWritten, "url"), g.between(3, 8))
	body := g.source(c.lang, mod, g.n(40, 120)) + fmt.Sprintf("\n// error code for entries given up on: %s\n", g.plant(g.code(), FileWritten, "code"))
	g.round("Writing the config and the DLQ module.", g.write(cfg, conf), g.write(mod, body))
	cmd, o := g.testFail(c, p)
	g.round("Building and testing.", g.exec(cmd, c.dir, o, 1))
	g.round("Fixing the build.", g.replace(mod, "max_attempts", "maxAttempts"))
	cmd, o = g.testPass(c, g.chance(0.5))
	g.round("", g.exec(cmd, c.dir, o, 0))
	if g.chance(0.5) {
		g.serveAndCall(c)
	}
	g.round("", g.commit(c, []string{mod, cfg}))
	g.say("The DLQ path is in place with its config and tests; committed.")
}

// serveAndCall starts the service and calls it; both succeed.
func (g *gen) serveAndCall(c component) {
	port := g.port()
	o := &out{}
	o.add(`{"time":"2025-03-1%dT09:%02d:11Z","level":"INFO","msg":"starting ingestd","version":"v1.%d.%d","commit":"%s"}`, g.between(0, 9), g.between(0, 59), g.between(2, 9), g.between(0, 20), g.plant(g.hex(12), PassingOutput, "hash"))
	o.add(`{"level":"INFO","msg":"connected","dsn":"%s"}`, g.plant(fmt.Sprintf("postgres://ingest@%s/ledger", g.hostport()), PassingOutput, "url"))
	o.add(`{"level":"INFO","msg":"listening","addr":"%s"}`, g.plant(fmt.Sprintf("http://127.0.0.1:%d", port), PassingOutput, "url"))
	o.add(`{"level":"INFO","msg":"metrics","addr":"%s"}`, g.plant(g.url(), PassingOutput, "url"))
	for range g.n(4, 20) {
		o.add(`{"level":"DEBUG","msg":"flush","tenant":"%s","entries":%d,"ms":%d}`, g.pick(words), g.between(1, 400), g.between(1, 90))
	}
	g.round("Starting the service locally to try it.", g.exec("go run ./cmd/ingestd --config config/local.yaml & sleep 3; cat /tmp/ingestd.log", c.dir, o, 0))
	r := &out{}
	r.add("HTTP/1.1 202 Accepted\nContent-Type: application/json")
	r.add("X-Request-Id: %s", g.plant(g.prefixed("req", 14), PassingOutput, "id"))
	r.add("\n{\"batch_id\":\"%s\",\"accepted\":%d,\"status\":\"queued\"}", g.plant(g.uuid(), PassingOutput, "uuid"), g.between(2, 90))
	g.round("", g.exec(fmt.Sprintf("curl -si -X POST localhost:%d/v1/batches -d @testdata/batch.json", port), c.dir, r, 0))
}

// grep is a search's output: lines of code with their file and line.
func (g *gen) grep(c component, p pkg) string {
	var b strings.Builder
	for range g.n(4, 20) {
		f := c.path(p, p.files[g.r.IntN(len(p.files))])
		fmt.Fprintf(&b, "%s:%d:\t%s\n", f, g.lineFor(f), strings.TrimSpace(strings.SplitN(g.pick(goStmts), "\n", 2)[0]))
	}
	return b.String()
}

// incidentTask: the user reports a failing service in staging; the agent
// looks at pods and logs, reproduces with curl, fixes the deploy files
// and compose setup, and checks it works.
func (g *gen) incidentTask() {
	c := components[0]
	g.user(fmt.Sprintf("ingestd in staging has been returning 502s for the last hour. %s", g.constraints(1, 3)))
	pods := &out{}
	pods.add("NAME                          READY   STATUS             RESTARTS      AGE")
	for range g.between(3, 6) {
		pods.add("ingestd-%s-%s   1/1     Running            0             %dh", g.chars("bcdfghjklmnpqrstvwxz2456789", 9), g.chars("bcdfghjklmnpqrstvwxz2456789", 5), g.between(2, 30))
	}
	crash := &out{}
	crash.add(`{"level":"INFO","msg":"starting ingestd","version":"v1.%d.0"}`, g.between(2, 9))
	for range g.n(5, 30) {
		crash.add(`{"level":"INFO","msg":"flush","entries":%d}`, g.between(1, 400))
	}
	up := g.hostport()
	crash.fail(`{"level":"ERROR","msg":"upstream call failed","url":"%s","err":"dial tcp %s: connect: connection refused","code":"%s","request_id":"%s"}`,
		g.plant(g.url(), ErrorLine, "url"), g.plant(up, ErrorLine, "hostport"), g.plant(g.code(), ErrorLine, "code"), g.plant(g.prefixed("req", 14), ErrorLine, "id"))
	crash.fail(`{"level":"ERROR","msg":"batch dropped","batch_id":"%s","code":"%s"}`, g.plant(g.uuid(), ErrorLine, "uuid"), g.plant(g.code(), ErrorLine, "code"))
	g.round("Looking at the pods and their logs.", g.exec("kubectl -n ingest get pods -l app=ingestd", "", pods, 0),
		g.exec("kubectl -n ingest logs deploy/ingestd --since=1h | tail -n 200", "", crash, 0))
	curl := &out{}
	curl.add("*   Trying 127.0.0.1:443...\n> POST /v1/batches HTTP/1.1\n> Host: ingest.stg.ledgerline.dev\n>")
	curl.fail("< HTTP/1.1 502 Bad Gateway")
	curl.add("< Content-Type: application/json")
	curl.fail("< X-Request-Id: %s", g.plant(g.prefixed("req", 14), ErrorLine, "id"))
	curl.fail(`{"error":"upstream unavailable","code":"%s","upstream":"%s"}`, g.plant(g.code(), ErrorLine, "code"), g.plant(g.url(), ErrorLine, "url"))
	g.round("Reproducing from outside.", g.exec("curl -sv -X POST https://ingest.stg.ledgerline.dev/v1/batches -d @testdata/batch.json", "", curl, 22))
	g.round("Reading the deploy files.", g.read("view_file", []Arg{{"path", repoRoot + "/deploy/k8s/ingestd.yaml"}}, numbered(g.yaml(g.n(60, 160)), 1)),
		g.read("view_file", []Arg{{"path", repoRoot + "/deploy/compose.yaml"}}, numbered(g.yaml(g.n(40, 120)), 1)))
	if g.chance(0.5) {
		g.decision(c)
	}
	k8s := g.plant("deploy/k8s/ingestd.yaml", FileWritten, "path")
	g.round("The upstream address in the deployment is stale; updating it.", g.replace(k8s, "LEDGER_URL: http://ledger-core:8088", "LEDGER_URL: "+g.plant(g.url(), FileWritten, "url")))
	bind := &out{}
	bind.add(" Network ledgerline_default  Created\n Container ledgerline-db-1  Started")
	bind.fail("Error response from daemon: driver failed programming external connectivity on endpoint ledgerline-ingestd-1: Bind for %s failed: port is already allocated", g.plant(fmt.Sprintf("0.0.0.0:%d", g.port()), ErrorLine, "hostport"))
	g.round("Trying the new settings with compose locally.", g.exec("docker compose -f deploy/compose.yaml up -d", "", bind, 1))
	compose := g.plant("deploy/compose.yaml", FileWritten, "path")
	g.round("", g.replace(compose, "\"8431:8431\"", fmt.Sprintf("\"%d:8431\"", g.port())))
	okUp := &out{}
	okUp.add(" Container ledgerline-db-1  Running\n Container ledgerline-ingestd-1  Started")
	okUp.add(" ingestd-1  | listening on %s", g.plant(g.url(), PassingOutput, "url"))
	g.round("", g.exec("docker compose -f deploy/compose.yaml up -d && docker compose logs ingestd | tail -5", "", okUp, 0))
	build := &out{}
	for i := range g.n(8, 25) {
		build.add("#%d [builder %d/9] RUN go build -o /out/ingestd ./cmd/ingestd\n#%d DONE %.1fs", i+1, i%9+1, i+1, g.r.Float64()*20)
	}
	build.add("#%d writing image sha256:%s done", 30, g.plant(g.hex(64), PassingOutput, "hash"))
	build.add("#%d naming to registry.ledgerline.dev:5000/ingestd:%s done", 30, g.plant(g.hex(7), PassingOutput, "hash"))
	g.round("Building and rolling out.", g.exec("docker build -t ingestd -f services/ingestd/Dockerfile . && kubectl -n ingest apply -f deploy/k8s/ingestd.yaml", "", build, 0))
	ok := &out{}
	ok.add("HTTP/1.1 202 Accepted\nX-Request-Id: %s\n\n{\"batch_id\":\"%s\",\"status\":\"queued\"}", g.plant(g.prefixed("req", 14), PassingOutput, "id"), g.plant(g.uuid(), PassingOutput, "uuid"))
	g.round("", g.exec("curl -si -X POST https://ingest.stg.ledgerline.dev/v1/batches -d @testdata/batch.json", "", ok, 0))
	g.say("Staging accepts batches again: the deployment pointed at a ledger address that no longer exists. The deploy file and the compose port are fixed.")
}

// backfillTask: a backfill script crashes with a traceback, the agent
// fixes the sink and reruns it.
func (g *gen) backfillTask() {
	c := components[1]
	p := c.pkgs[2]
	g.user(fmt.Sprintf("Run the backfill for March for the warehouse export. %s", g.constraints(1, 2)))
	g.round("Reading the backfill script.", g.read("exec_command", []Arg{{"cmd", "cat scripts/backfill.sh"}, {"workdir", repoRoot}}, g.shellScript()))
	tb := &out{}
	for range g.n(5, 30) {
		tb.add("%s INFO wrote part %04d (%d rows)", "2025-03-14T10:12:33", g.between(0, 300), g.between(1000, 90000))
	}
	sink := c.path(p, "s3_sink.py")
	tb.fail("Traceback (most recent call last):")
	tb.fail("  File \"%s/%s/etl/cli.py\", line %d, in <module>\n    main()", repoRoot, c.dir, g.lineFor("cli.py"))
	tb.fail("  File \"%s/%s\", line %d, in upload\n    resp.raise_for_status()", repoRoot, sink, g.lineFor("s3_sink.py"))
	tb.fail("requests.exceptions.HTTPError: 503 Server Error: Slow Down for url: %s (request %s)", g.plant(g.url(), ErrorLine, "url"), g.plant(g.prefixed("req", 14), ErrorLine, "id"))
	job := g.plant(g.uuid(), ErrorLine, "uuid")
	tb.fail("backfill job %s failed after %d parts", job, g.between(10, 300))
	g.round("Starting the backfill.", g.exec("scripts/backfill.sh --month 2025-03 --target warehouse", "", tb, 1))
	g.round("", g.viewFile("py", sink))
	g.plant(sink, FileWritten, "path")
	g.round("The sink doesn't back off on 503 Slow Down; adding retries.", g.replace(sink, "resp.raise_for_status()", "resp = self._retry(lambda: self._put(key, body), attempts=5)\n        resp.raise_for_status()"))
	done := &out{}
	dest := g.bucket()
	for i := range g.n(20, 80) {
		done.add("2025-03-14T11:%02d:%02d INFO wrote %s (%d rows)", g.between(0, 59), g.between(0, 59), g.plant(fmt.Sprintf("%spart-%05d.parquet", dest, i), PassingOutput, "url"), g.between(1000, 90000))
	}
	done.add("backfill job %s done: %d rows", g.plant(g.uuid(), PassingOutput, "uuid"), g.between(1e6, 9e6))
	g.round("Rerunning.", g.exec("scripts/backfill.sh --month 2025-03 --target warehouse --resume", "", done, 0))
	g.say("The March backfill is done; the sink now retries on S3 throttling.")
}

func (g *gen) yaml(n int) string {
	var b strings.Builder
	for strings.Count(b.String(), "\n") < n {
		fmt.Fprintf(&b, "  %s:\n    %s: %d\n    %s_%s: \"%s\"\n", g.pick(words), g.pick(words), g.between(1, 900), g.pick(words), g.pick(words), g.pick(words))
	}
	return b.String()
}

func (g *gen) shellScript() string {
	var b strings.Builder
	b.WriteString("#!/usr/bin/env bash\nset -euo pipefail\n\n")
	for range g.n(30, 80) {
		fmt.Fprintf(&b, "python -m etl.cli %s --%s \"$%s\"\n", g.pick(words), g.pick(words), strings.ToUpper(g.pick(words)))
	}
	return b.String()
}
