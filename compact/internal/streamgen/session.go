package streamgen

import (
	"fmt"
	"strings"
)

const systemPrompt = `You are a coding agent working in the Eddy monorepo of Marlow Labs (` + repoDir + `). Eddy is a streaming analytics product: an ingest service on Cloud Run writes click events to Kafka, Scala services sessionize and enrich them, a Spark job on Dataproc Serverless builds daily rollups, Airflow orchestrates loads into ClickHouse, and a dbt project on BigQuery builds the marts.

Tools:
- bash: run a shell command in the repository root and return its output and exit status.
- read_file: print a file with line numbers.
- grep: search files under a path for a pattern (ripgrep, case-insensitive).
- write_file: create or overwrite a file.
- replace_in_file: replace one exact occurrence of a text in a file.

Work in small verified steps: reproduce, read the code, change it, rerun the failing command, run the module's tests, then commit with a short message. Staging is yours to use; ask before anything that touches production. Keep answers short.`

// run writes the session: tasks in a shuffled order, again and again,
// until the session has made its tool calls.
func (g *gen) run() {
	g.t.System = systemPrompt
	// Scala is the product's main language, so its task comes twice a round.
	tasks := []func(){g.taskScala, g.taskScala, g.taskSpark, g.taskKafka, g.taskAirflow, g.taskDbt, g.taskClickHouse, g.taskCloudRun, g.taskBazel, g.taskNix, g.taskBigQuery}
	// big says which tasks bring long outputs: near the end of the
	// session, the next task is picked by how far the session is from its
	// size, so that sessions of different seeds come out alike.
	big := []bool{true, true, true, true, true, false, false, true, false, false, false}
	for g.t.ToolCalls < g.o.ToolCalls {
		order := g.r.Perm(len(tasks))
		for k := range order {
			if g.t.ToolCalls >= g.o.ToolCalls {
				break
			}
			if g.o.ToolCalls-g.t.ToolCalls < 30 && g.bytes > 0 {
				want := float64(g.t.ToolCalls) * bytesPerCall * g.o.OutputScale / float64(g.bytes)
				for j := k; j < len(order); j++ {
					if (want > 1.05 && big[order[j]]) || (want < 0.95 && !big[order[j]]) {
						order[k], order[j] = order[j], order[k]
						break
					}
				}
			}
			tasks[order[k]]()
		}
	}
}

// Identifiers of the user's turns.

func (g *gen) ticket() string {
	return g.U("id", func() string { return fmt.Sprintf("EDDY-%d", g.between(1200, 4999)) })
}

func (g *gen) userURL(kind int) string {
	return g.U("url", func() string {
		switch kind % 5 {
		case 0:
			return fmt.Sprintf("https://ci.marlow.dev/eddy/pipelines/%d/jobs/%d", g.between(20000, 89999), g.between(100000, 999999))
		case 1:
			return fmt.Sprintf("https://grafana.marlow.dev/d/%s/eddy-%s?orgId=1", g.alnum(9), g.pick([]string{"realtime", "consumer-lag", "rollups", "ingest"}))
		case 2:
			return fmt.Sprintf("https://wiki.marlow.dev/eddy/runbooks/%s-%d", g.pick([]string{"kafka-lag", "rollup-oom", "clickhouse-mv", "cloud-run"}), g.between(10, 99))
		case 3:
			return fmt.Sprintf("https://docs.google.com/document/d/%s/edit", g.b64url(44))
		default:
			return fmt.Sprintf("https://marlow.slack.com/archives/C0%s/p%d", strings.ToUpper(g.lowerDigits(8)), g.between(1700000000, 1749999999)*1000000+g.intn(999999))
		}
	})
}

// runbookURL is a link to a runbook of the product's wiki.
func (g *gen) runbookURL(topic string) string {
	return g.U("url", func() string {
		return fmt.Sprintf("https://wiki.marlow.dev/eddy/runbooks/%s-%d", topic, g.between(10, 99))
	})
}

func (g *gen) b64url(n int) string {
	return g.fromAlphabet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", n)
}

// The sbt task: a module stops compiling, then a spec fails.

func (g *gen) taskScala() {
	m := g.w.mods[g.intn(len(g.w.mods))]
	classes := g.w.clean(m.sources, m.srcPath)
	if len(classes) < 3 {
		g.taskBigQuery()
		return
	}
	perm := g.r.Perm(len(classes))
	broken, other, third := classes[perm[0]], classes[perm[1]], classes[perm[2]]
	spec := g.pick(m.failSpecs)

	opening := []string{
		"CI on main is red since this morning: %s no longer compiles, and I suspect %s will fail once it does. Can you get it green? Ticket is %s, failing pipeline: %s",
		"The nightly build of %s broke after yesterday's merges, and %s was already flaky before that. Please sort it out. Ticket %s, the red pipeline is %s",
		"Someone merged a refactor of %s without running the tests; it doesn't compile and %s probably fails too. Can you take %s? Pipeline: %s",
	}
	g.user(fmt.Sprintf(opening[g.intn(len(opening))]+"\n\nConstraints: don't change the public API of %s, no library version bumps in this change, and no new resolvers: CI only reaches the mirror at %s.",
		m.name, spec, g.ticket(), g.userURL(0), broken, g.U("hostport", fixed("nexus.marlow.dev:8081"))))

	g.step("Let me look at the recent history first.", bash("git log --oneline -n 15", res{out: g.gitLog(15), read: true}))

	// The compile failure.
	path, content := g.src(m, broken)
	errLine, ln := exprLine(content, g.between(25, strings.Count(content, "\n")-10))
	var b out
	g.sbtBanner(&b)
	b.add(fmt.Sprintf("[info] compiling %d Scala sources to %s/%s/target/scala-%s/classes ...", g.between(12, 40), repoDir, m.name, m.scalaVersion()))
	g.sbtWarnings(&b, m, g.between(0, 3))
	nerr := g.compileError(&b, m, broken, path, errLine, ln)
	if g.chance(0.8) {
		p2, c2 := g.src(m, other)
		l2, n2 := exprLine(c2, g.between(25, strings.Count(c2, "\n")-10))
		nerr += g.compileError(&b, m, other, p2, l2, n2)
	}
	b.err(fmt.Sprintf("[error] %d error%s found", nerr, plural(nerr)))
	b.err(fmt.Sprintf("[error] (%s / Compile / compileIncremental) Compilation failed", m.name))
	g.sbtDone(&b, false)
	g.step("Reproducing the compile failure locally.", bash(fmt.Sprintf("sbt -Dsbt.supershell=false \"%s/compile\"", m.name), b.res(1)))

	if g.chance(0.5) {
		g.say("The first error is in " + broken + "; reading it next.")
		g.user(fmt.Sprintf("Also, prod logged this overnight, maybe the same root cause:\n\n    %s\n      at %s.%s.%s(%s)\n      at %s.%s.%s(%s.scala:%d)",
			g.pick([]string{"java.lang.IllegalStateException: watermark regressed", "java.util.NoSuchElementException: None.get", "java.lang.ClassCastException: class java.lang.Long cannot be cast to class java.time.Instant"}),
			m.pkgName(), other, g.method(), g.U("site", func() string { return fmt.Sprintf("%s.scala:%d", other, g.between(300, 900)) }), m.pkgName(), broken, g.method(), broken, g.between(300, 900)))
	}
	g.step("Reading the file with the first error.", g.readSrc(m, broken))
	word := g.pick([]string{"Duration", "metrics.", "groupBy", "require(", "foldLeft", "Instant"})
	g.step("Checking how the other call sites use it.", g.grepModule(m, word))
	if g.chance(0.6) {
		core := g.w.mod("core")
		g.step("And the shared event type.", g.readSrc(core, g.pick([]string{"Event", "TenantId", "Clocks"})))
	}

	// Fix the compile error: route the expression through a new helper.
	helper := g.W("id", g.writtenIdent)
	g.step("The expression no longer matches the type the caller expects; I'll route it through a small helper on the companion object.",
		replaceCall(path, errLine, rewriteLine(errLine, broken+"."+helper)),
		replaceCall(path, "object "+broken+" {", fmt.Sprintf("object %s {\n  private[%s] def %s[A](value: A): A = value\n", broken, m.pkg, helper)))
	g.w.dirty[path] = true

	b = out{}
	g.sbtBanner(&b)
	b.add(fmt.Sprintf("[info] compiling %d Scala sources to %s/%s/target/scala-%s/classes ...", g.between(1, 6), repoDir, m.name, m.scalaVersion()))
	g.sbtWarnings(&b, m, g.between(0, 2))
	g.sbtDone(&b, true)
	g.step("", bash(fmt.Sprintf("sbt -Dsbt.supershell=false \"%s/compile\"", m.name), b.res(0)))

	// The spec fails.
	b = out{}
	g.sbtBanner(&b)
	b.add(fmt.Sprintf("[info] compiling %d Scala sources to %s/%s/target/scala-%s/test-classes ...", g.between(3, 14), repoDir, m.name, m.scalaVersion()))
	tests := g.w.testNames(spec)
	f := &testFailure{spec: spec, test: g.intn(len(tests))}
	specLine := func() string { return fmt.Sprintf("%s.scala:%d", spec, g.between(30, 260)) }
	if g.chance(0.5) {
		switch g.intn(3) {
		case 0:
			f.lines = []string{fmt.Sprintf("Vector(%d, %d, %d) did not equal Vector(%d, %d) (%s)", g.between(1, 9), g.between(1, 9), g.between(1, 9), g.between(1, 9), g.between(1, 9), g.E("site", specLine))}
		case 1:
			f.lines = []string{fmt.Sprintf("Some(2025-01-14T09:%02d:00Z) was not equal to Some(2025-01-14T09:%02d:00Z) (%s)", g.between(10, 59), g.between(10, 59), g.E("site", specLine))}
		default:
			f.lines = []string{fmt.Sprintf("%d was not greater than or equal to %d (%s)", g.between(0, 4), g.between(5, 40), g.E("site", specLine))}
		}
	} else {
		exc := g.pick([]string{
			fmt.Sprintf("java.lang.IllegalStateException: watermark regressed for partition %d: %d -> %d", g.between(0, 23), 1736845200000+int64(g.intn(90000)), 1736845100000+int64(g.intn(90000))),
			fmt.Sprintf("java.util.NoSuchElementException: key not found: SessionKey(TenantId(t%d),d%d)", g.between(1, 9), g.between(1, 99)),
			fmt.Sprintf("java.lang.IllegalArgumentException: requirement failed: %s must be non-negative, got -%d", g.camel(), g.between(1, 5000)),
			"java.lang.ArithmeticException: long overflow",
		})
		f.lines = []string{exc}
		f.lines = append(f.lines, fmt.Sprintf("at %s.%s.%s(%s)", m.pkgName(), third, g.method(), g.E("site", func() string { return fmt.Sprintf("%s.scala:%d", third, g.between(20, 300)) })))
		f.lines = append(f.lines, fmt.Sprintf("at %s.%s.%s(%s)", m.pkgName(), other, g.method(), g.E("site", func() string { return fmt.Sprintf("%s.scala:%d", other, g.between(20, 300)) })))
		f.lines = append(f.lines, fmt.Sprintf("at %s.%s.$anonfun$new$%d(%s)", m.pkgName(), spec, g.between(1, 12), g.E("site", specLine)))
		for _, fr := range scalatestFrames[:g.between(3, len(scalatestFrames))] {
			f.lines = append(f.lines, "at "+fr)
		}
		f.lines = append(f.lines, "...")
	}
	g.scalaTestOutput(&b, m, []string{spec}, f, 0)
	b.err(fmt.Sprintf("[error] Failed: Total %d, Failed 1, Errors 0, Passed %d", len(tests), len(tests)-1))
	b.err("[error] Failed tests:")
	b.err("[error] \t" + g.E("test", fixed(m.pkgName()+"."+spec)))
	b.err(fmt.Sprintf("[error] (%s / Test / testOnly) sbt.TestsFailedException: Tests unsuccessful", m.name))
	g.sbtDone(&b, false)
	g.step("It compiles. Now the spec.", bash(fmt.Sprintf("sbt -Dsbt.supershell=false \"%s/testOnly *%s\"", m.name, spec), b.res(1)))

	specPath := m.testPath(spec)
	specBody := g.w.file(specPath, func() string { return g.specSource(m, spec, tests) })
	g.step("Reading the failing spec and the code under test.", readCall(specPath, res{out: numbered(specBody, 0, 0)}), g.readSrc(m, third))

	if g.chance(0.6) {
		g.say(fmt.Sprintf("The spec and %s disagree on what should happen at the boundary: the test expects the %s to be kept, the code drops it once the grace period has passed. Which behaviour do you want, keep or drop?", third, g.pick(nouns)))
		g.user(fmt.Sprintf("Keep it, the spec is right; the drop was an accident in the refactor. If you need a default, use what %s says, and don't touch the %s topic config while you're at it.", g.runbookURL("late-events"), g.pick([]string{"clicks.raw.v2", "sessions.closed.v1", "events.enriched.v3"})))
	}

	// A second spec that exercises the same code fails too.
	var spec2 string
	for _, s := range m.failSpecs {
		if s != spec {
			spec2 = s
			break
		}
	}
	if g.chance(0.6) {
		b = out{}
		g.sbtBanner(&b)
		tests2 := g.w.testNames(spec2)
		f2 := &testFailure{spec: spec2, test: g.intn(len(tests2))}
		cls := g.pick(m.sources)
		f2.lines = []string{
			g.pick([]string{"java.lang.NullPointerException: Cannot invoke \"java.time.Instant.toEpochMilli()\" because \"start\" is null", "scala.MatchError: None (of class scala.None$)", "java.lang.UnsupportedOperationException: empty.reduceLeft"}),
			fmt.Sprintf("at %s.%s.%s(%s)", m.pkgName(), cls, g.method(), g.E("site", func() string { return fmt.Sprintf("%s.scala:%d", cls, g.between(20, 300)) })),
			fmt.Sprintf("at %s.%s.$anonfun$new$%d(%s)", m.pkgName(), spec2, g.between(1, 12), g.E("site", func() string { return fmt.Sprintf("%s.scala:%d", spec2, g.between(30, 260)) })),
		}
		for _, fr := range scalatestFrames[:g.between(3, len(scalatestFrames))] {
			f2.lines = append(f2.lines, "at "+fr)
		}
		g.scalaTestOutput(&b, m, []string{spec, spec2}, f2, 0)
		n := len(g.w.testNames(spec)) + len(tests2)
		b.err(fmt.Sprintf("[error] Failed: Total %d, Failed 1, Errors 0, Passed %d", n, n-1))
		b.err("[error] Failed tests:")
		b.err("[error] \t" + g.E("test", fixed(m.pkgName()+"."+spec2)))
		b.err(fmt.Sprintf("[error] (%s / Test / testOnly) sbt.TestsFailedException: Tests unsuccessful", m.name))
		g.sbtDone(&b, false)
		g.step("Before the fix, running the neighbouring spec that uses the same code.", bash(fmt.Sprintf("sbt -Dsbt.supershell=false \"%s/testOnly *%s *%s\"", m.name, spec, spec2), b.res(1)))
		g.say(fmt.Sprintf("%s fails in %s as well, on the same missing value: one fix should cover both.", spec2, cls))
	}

	tpath, tcontent := g.src(m, third)
	tl, _ := exprLine(tcontent, g.between(20, strings.Count(tcontent, "\n")-10))
	key := g.W("key", func() string { return fmt.Sprintf("eddy.%s.%s", m.pkg, g.writtenKey()) })
	g.step("Fixing the boundary check.", replaceCall(tpath, tl, rewriteLine(tl, fmt.Sprintf("config.getDuration(\"%s\")", key))))
	g.w.dirty[tpath] = true

	var created []string
	if g.chance(0.7) {
		np := g.W("path", func() string {
			return m.srcPath(g.pick(writtenNouns) + g.pick([]string{"Policy", "Guard", "Limits", "Settings"}))
		})
		g.step("Putting the default in one place so both call sites share it.", writeCall(np, g.writtenScala(m, np)))
		g.w.dirty[np] = true
		created = append(created, np)
	}

	b = out{}
	g.sbtBanner(&b)
	b.add(fmt.Sprintf("[info] compiling %d Scala sources to %s/%s/target/scala-%s/classes ...", g.between(1, 5), repoDir, m.name, m.scalaVersion()))
	all := append(append([]string{}, m.failSpecs...), m.cleanSpecs...)
	g.scalaTestOutput(&b, m, all, nil, 3)
	n := 0
	for _, s := range all {
		n += len(g.w.testNames(s))
	}
	b.add(fmt.Sprintf("[info] Passed: Total %d, Failed 0, Errors 0, Passed %d", n, n))
	g.sbtDone(&b, true)
	g.step("Running the whole module's tests.", bash(fmt.Sprintf("sbt -Dsbt.supershell=false \"%s/test\"", m.name), b.res(0)))

	g.step("", g.gitStatus([]string{path, tpath}, created))
	g.step("Committing.", g.commit(fmt.Sprintf("%s: fix %s boundary and compile error in %s", m.name, strings.ToLower(g.pick(nouns)), broken), append([]string{path, tpath}, created...), created))
	g.say(fmt.Sprintf("Done. %s compiles again and the %s tests pass, including %s. The fix keeps the public API unchanged and bumps no dependency.", m.name, m.name, spec))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// src returns a module source's path and content.
func (g *gen) src(m *module, class string) (string, string) {
	p := m.srcPath(class)
	return p, g.w.file(p, func() string { return g.scalaSource(m, class, g.between(g.sc(200), g.sc(480))) })
}

func (g *gen) readSrc(m *module, class string) call {
	p, c := g.src(m, class)
	return readCall(p, res{out: numbered(c, 0, 0)})
}

// grepModule searches the unchanged sources of a module.
func (g *gen) grepModule(m *module, word string) call {
	var files, contents []string
	for _, c := range m.sources {
		p := m.srcPath(c)
		if g.w.dirty[p] {
			continue
		}
		if _, ok := g.w.content[p]; !ok && g.chance(0.5) {
			continue
		}
		_, body := g.src(m, c)
		files = append(files, p)
		contents = append(contents, body)
	}
	o, _ := grepFiles(files, contents, word, g.sc(60))
	if o == "" {
		o = "No matches found."
	}
	return grepCall(word, m.name+"/src/main/scala", res{out: o})
}

// rewriteLine wraps the right-hand side of a line in a call.
func rewriteLine(line, fn string) string {
	indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
	t := strings.TrimSpace(line)
	if i := strings.Index(t, " = "); i > 0 {
		return indent + t[:i] + " = " + fn + "(" + t[i+3:] + ")"
	}
	return indent + fn + "(" + t + ")"
}

// compileError prints one compiler error in the module's Scala version
// and returns 1.
func (g *gen) compileError(b *out, m *module, class, path, line string, ln int) int {
	col := len(line) - len(strings.TrimLeft(line, " ")) + 1 + g.intn(8)
	site := g.E("site", fixed(fmt.Sprintf("%s.scala:%d:%d", class, ln, col)))
	caret := strings.Repeat(" ", col-1) + "^"
	if m.scala3 {
		kinds := []struct{ code, title string }{{"E007", "Type Mismatch Error"}, {"E008", "Not Found Error"}, {"E006", "Not Found Error"}, {"E172", "Type Error"}}
		k := kinds[g.intn(len(kinds))]
		code := g.E("code", fixed(k.code))
		b.err(fmt.Sprintf("[error] -- [%s] %s: %s/%s ", code, k.title, repoDir, strings.TrimSuffix(path, class+".scala")+site))
		b.err(fmt.Sprintf("[error] %d |%s", ln, line))
		b.err("[error]    |" + strings.Repeat(" ", col-1) + strings.Repeat("^", g.between(3, 14)))
		switch k.code {
		case "E007":
			b.err(fmt.Sprintf("[error]    |%sFound:    (%s : %s)", strings.Repeat(" ", col-1), g.camel(), g.typ()))
			b.err(fmt.Sprintf("[error]    |%sRequired: %s", strings.Repeat(" ", col-1), g.typ()))
		case "E008":
			b.err(fmt.Sprintf("[error]    |value %s is not a member of %s.%s", g.method(), pkgRoot+".core", g.pick([]string{"Event", "TenantId", "GeoPoint"})))
		case "E006":
			b.err(fmt.Sprintf("[error]    |Not found: %s", g.camel()))
		default:
			b.err(fmt.Sprintf("[error]    |No given instance of type io.circe.Encoder[%s.%s] was found for parameter enc of method asJson in class EncoderOps", m.pkgName(), class+"State"))
		}
		b.err("[error]    |")
		b.err("[error]    | longer explanation available when compiling with `-explain`")
		return 1
	}
	switch g.intn(5) {
	case 0:
		b.err(fmt.Sprintf("[error] %s/%s:%d:%d: type mismatch;", repoDir, path, ln, col))
		b.err(fmt.Sprintf("[error]  found   : %s", g.typ()))
		b.err(fmt.Sprintf("[error]  required: %s", g.typ()))
	case 1:
		b.err(fmt.Sprintf("[error] %s/%s:%d:%d: value %s is not a member of %s", repoDir, path, ln, col, g.method(), g.E("id", fixed(m.pkgName()+"."+class+"State"))))
	case 2:
		b.err(fmt.Sprintf("[error] %s/%s:%d:%d: not found: value %s", repoDir, path, ln, col, g.camel()))
	case 3:
		b.err(fmt.Sprintf("[error] %s/%s:%d:%d: could not find implicit value for parameter enc: io.circe.Encoder[%s]", repoDir, path, ln, col, g.typ()))
	default:
		b.err(fmt.Sprintf("[error] %s/%s:%d:%d: missing argument list for method %s in class %s", repoDir, path, ln, col, g.method(), class))
		b.err("[error] Unapplied methods are only converted to functions when a function type is expected.")
	}
	b.err("[error] " + line)
	b.err("[error] " + caret)
	return 1
}

// writtenScala is the content of a new Scala file the agent writes.
func (g *gen) writtenScala(m *module, path string) string {
	name := strings.TrimSuffix(path[strings.LastIndex(path, "/")+1:], ".scala")
	k := g.W("key", func() string { return fmt.Sprintf("eddy.%s.%s", m.pkg, g.writtenKey()) })
	id := g.W("id", g.writtenIdent)
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\nimport java.time.Duration\nimport com.typesafe.config.Config\n\n", m.pkgName())
	fmt.Fprintf(&b, "/** Shared limits of the %s module, read once from the configuration. */\nfinal case class %s(grace: Duration, maxOpen: Int)\n\nobject %s {\n", m.name, name, name)
	fmt.Fprintf(&b, "  val ConfigKey = \"%s\"\n\n  def %s(config: Config): %s =\n    %s(\n      grace = config.getDuration(ConfigKey),\n      maxOpen = config.getInt(\"eddy.%s.max-open\")\n    )\n}\n", k, id, name, name, m.pkg)
	return b.String()
}
