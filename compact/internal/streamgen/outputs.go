package streamgen

import (
	"fmt"
	"strings"
	"time"
)

// Words of the content the agent writes. None of them occurs in the
// filler, so identifiers made of them are found only where they were
// written.
var writtenVerbs = []string{"apply", "open", "close", "trim", "seal", "drain", "raise", "lower", "stow", "moor"}
var writtenNouns = []string{"Ballast", "Sluice", "Spillway", "Bulkhead", "Tidemark", "Headroom", "Keelson", "Breakwater", "Mooring", "Slipway", "Capstan", "Gunwale"}

// writtenIdent is a new Scala or Python identifier of written content.
func (g *gen) writtenIdent() string {
	return g.pick(writtenVerbs) + g.pick(writtenNouns) + g.pick([]string{"", "For", "Of", "Limit", "Window"})
}

// writtenKey is a new configuration key of written content.
func (g *gen) writtenKey() string {
	return strings.ToLower(g.pick(writtenNouns)) + "-" + g.pick([]string{"threshold", "limit", "grace", "budget", "window", "ratio"}) + g.pick([]string{"", "-ms", "-bytes", "-pct"})
}

func ts(t time.Time, layout string) string { return t.Format(layout) }

// sbtBanner is what sbt prints before running a command.
func (g *gen) sbtBanner(b *out) {
	b.add("[info] welcome to sbt 1.10.7 (Eclipse Adoptium Java 17.0.13)")
	b.add("[info] loading global plugins from /home/agent/.sbt/1.0/plugins")
	b.add("[info] loading settings for project eddy-build from plugins.sbt ...")
	b.add("[info] loading project definition from " + repoDir + "/project")
	if g.chance(0.4) {
		b.add("[info] compiling 3 Scala sources to " + repoDir + "/project/target/scala-2.12/sbt-1.0/classes ...")
	}
	b.add("[info] loading settings for project root from build.sbt ...")
	b.add("[info] set current project to eddy (in build file:" + repoDir + "/)")
}

func (g *gen) sbtDone(b *out, ok bool) {
	word := "[success]"
	if !ok {
		word = "[error]"
	}
	line := fmt.Sprintf("%s Total time: %d s, completed %s", word, g.between(8, 140), ts(g.now, "Jan 2, 2006, 3:04:05 PM"))
	if ok {
		b.add(line)
	} else {
		b.err(line)
	}
}

// sbtWarnings adds compiler warnings of untouched files.
func (g *gen) sbtWarnings(b *out, m *module, n int) {
	for i := 0; i < n; i++ {
		class := g.pick(m.sources)
		switch g.intn(3) {
		case 0:
			b.add(fmt.Sprintf("[warn] %s/%s:%d:%d: method mapValues in trait MapOps is deprecated (since 2.13.0): Use .view.mapValues(f). A future version will include a strict version of this method (for now, .view.mapValues(f).toMap).", repoDir, m.srcPath(class), g.between(20, 300), g.between(5, 40)))
		case 1:
			b.add(fmt.Sprintf("[warn] %s/%s:%d:%d: match may not be exhaustive.", repoDir, m.srcPath(class), g.between(20, 300), g.between(5, 40)))
			b.add("[warn] It would fail on the following input: None")
		default:
			b.add(fmt.Sprintf("[warn] %s/%s:%d:%d: private val %s in class %s is never used", repoDir, m.srcPath(class), g.between(20, 300), g.between(5, 40), g.camel(), class))
		}
	}
	if n > 0 {
		b.add(fmt.Sprintf("[warn] %d warnings found", n+g.intn(3)))
	}
}

// scalaTestRun prints a ScalaTest run of the specs, through sbt's
// reporter. A failing spec, when given, fails one test; fail says how.
type testFailure struct {
	spec  string
	test  int
	lines []string // the failure report under the test, without prefix
}

func (g *gen) scalaTestOutput(b *out, m *module, specs []string, fail *testFailure, plantClean int) (failed bool) {
	total, failedN := 0, 0
	for _, spec := range specs {
		b.add("[info] " + spec + ":")
		b.add("[info] " + strings.TrimSuffix(spec, "Spec"))
		tests := g.w.testNames(spec)
		clean := contains(m.cleanSpecs, spec)
		for ti, t := range tests {
			total++
			if fail != nil && fail.spec == spec && fail.test == ti {
				failedN++
				b.err("[info] - " + t + " *** FAILED ***")
				for _, l := range fail.lines {
					b.err("[info]   " + l)
				}
				continue
			}
			if clean && plantClean > 0 && g.chance(0.3) {
				plantClean--
				t = g.P("test", fixed(t))
			}
			b.add("[info] - " + t)
		}
	}
	b.add(fmt.Sprintf("[info] Run completed in %d seconds, %d milliseconds.", g.between(1, 40), g.intn(1000)))
	b.add(fmt.Sprintf("[info] Total number of tests run: %d", total))
	b.add(fmt.Sprintf("[info] Suites: completed %d, aborted 0", len(specs)))
	b.add(fmt.Sprintf("[info] Tests: succeeded %d, failed %d, canceled 0, ignored 0, pending 0", total-failedN, failedN))
	if failedN == 0 {
		b.add("[info] All tests passed.")
		return false
	}
	b.err(fmt.Sprintf("[info] *** %d TEST FAILED ***", failedN))
	return true
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// scalaFrames are library frames under a failing call.
var scalatestFrames = []string{
	"org.scalatest.OutcomeOf.outcomeOf(OutcomeOf.scala:85)",
	"org.scalatest.OutcomeOf.outcomeOf$(OutcomeOf.scala:83)",
	"org.scalatest.OutcomeOf$.outcomeOf(OutcomeOf.scala:104)",
	"org.scalatest.Transformer.apply(Transformer.scala:22)",
	"org.scalatest.Transformer.apply(Transformer.scala:20)",
	"org.scalatest.wordspec.AnyWordSpecLike$$anon$3.apply(AnyWordSpecLike.scala:1240)",
	"org.scalatest.TestSuite.withFixture(TestSuite.scala:196)",
	"org.scalatest.TestSuite.withFixture$(TestSuite.scala:195)",
}

var kafkaFrames = []string{
	"org.apache.kafka.clients.consumer.internals.ConsumerCoordinator.sendOffsetCommitRequest(ConsumerCoordinator.java:1342)",
	"org.apache.kafka.clients.consumer.internals.ConsumerCoordinator.commitOffsetsSync(ConsumerCoordinator.java:1143)",
	"org.apache.kafka.clients.consumer.internals.LegacyKafkaConsumer.commitSync(LegacyKafkaConsumer.java:781)",
	"org.apache.kafka.clients.consumer.KafkaConsumer.commitSync(KafkaConsumer.java:1010)",
	"fs2.kafka.internal.KafkaConsumerActor.$anonfun$commit$2(KafkaConsumerActor.scala:98)",
	"cats.effect.IOFiber.runLoop(IOFiber.scala:413)",
	"cats.effect.IOFiber.execR(IOFiber.scala:1362)",
	"cats.effect.IOFiber.run(IOFiber.scala:119)",
	"cats.effect.unsafe.WorkerThread.run(WorkerThread.scala:743)",
}

var sparkFrames = []string{
	"java.base/java.util.Arrays.copyOf(Arrays.java:3537)",
	"java.base/java.io.ByteArrayOutputStream.ensureCapacity(ByteArrayOutputStream.java:100)",
	"org.apache.spark.sql.catalyst.expressions.UnsafeRow.copy(UnsafeRow.java:491)",
	"org.apache.spark.sql.execution.aggregate.ObjectAggregationIterator.processInputs(ObjectAggregationIterator.scala:159)",
	"org.apache.spark.sql.execution.aggregate.ObjectHashAggregateExec.$anonfun$doExecute$1(ObjectHashAggregateExec.scala:114)",
	"org.apache.spark.rdd.RDD.$anonfun$mapPartitionsWithIndexInternal$2(RDD.scala:893)",
	"org.apache.spark.rdd.MapPartitionsRDD.compute(MapPartitionsRDD.scala:52)",
	"org.apache.spark.rdd.RDD.computeOrReadCheckpoint(RDD.scala:367)",
	"org.apache.spark.rdd.RDD.iterator(RDD.scala:331)",
	"org.apache.spark.scheduler.ShuffleMapTask.runTask(ShuffleMapTask.scala:104)",
	"org.apache.spark.scheduler.Task.run(Task.scala:141)",
	"org.apache.spark.executor.Executor$TaskRunner.$anonfun$run$4(Executor.scala:620)",
	"java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:1136)",
	"java.base/java.lang.Thread.run(Thread.java:840)",
}

var driverFrames = []string{
	"org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2898)",
	"org.apache.spark.scheduler.DAGScheduler.$anonfun$abortStage$2(DAGScheduler.scala:2834)",
	"org.apache.spark.scheduler.DAGScheduler.abortStage(DAGScheduler.scala:2833)",
	"org.apache.spark.scheduler.DAGScheduler.handleTaskSetFailed(DAGScheduler.scala:1253)",
	"org.apache.spark.scheduler.DAGSchedulerEventProcessLoop.doOnReceive(DAGScheduler.scala:3102)",
	"org.apache.spark.util.EventLoop$$anon$1.run(EventLoop.scala:49)",
	"org.apache.spark.scheduler.DAGScheduler.runJob(DAGScheduler.scala:984)",
	"org.apache.spark.SparkContext.runJob(SparkContext.scala:2398)",
	"org.apache.spark.sql.execution.datasources.FileFormatWriter$.write(FileFormatWriter.scala:244)",
	"org.apache.spark.sql.execution.datasources.InsertIntoHadoopFsRelationCommand.run(InsertIntoHadoopFsRelationCommand.scala:186)",
	"org.apache.spark.sql.DataFrameWriter.saveToV1Source(DataFrameWriter.scala:391)",
	"org.apache.spark.sql.DataFrameWriter.save(DataFrameWriter.scala:251)",
}

// gitLog prints the history the way git log --oneline does.
func (g *gen) gitLog(n int) string {
	var b strings.Builder
	for i := 0; i < n && i < len(g.w.history()); i++ {
		c := g.w.history()[i]
		fmt.Fprintf(&b, "%s %s\n", c[0], c[1])
	}
	return strings.TrimRight(b.String(), "\n")
}

var commitSubjects = []string{
	"sessionizer: emit tombstones for swept sessions",
	"rollups: move funnel steps to tenant config",
	"ingest: bump http4s to 0.23.30",
	"dbt: add retention weekly mart",
	"airflow: retry ClickHouse inserts with backoff",
	"clickhouse: TTL on events_raw",
	"enrich: refresh GeoLite2 test fixture",
	"core: Scala 3 given instances for codecs",
	"ci: cache coursier between jobs",
	"nix: pin sbt-derivation",
	"kafka: raise clicks.raw.v2 retention to 3 days",
	"docs: runbook for consumer lag",
	"rollups: write parquet with zstd",
	"sessionizer: metrics for late events",
	"build: scalafmt 3.8.3",
	"ingest: reject payloads over 1 MiB",
	"Merge pull request #812 from marlow-labs/dependabot/sbt/cats-effect-3.5.7",
	"dbt: document stg_events columns",
	"sessionizer: split sessions longer than 12h",
	"enrich: skip bot filter for server-side events",
	"airflow: hourly sessions DAG reads from the rollup",
	"rollups: cohort builder uses tenant time zones",
	"core: TenantId opaque type",
	"ingest: structured logging with trace ids",
	"clickhouse: projections for tenant lookups",
	"dbt: stg_sessions dedupes by session id",
	"kafka: compacted topic for tenant config",
	"ci: run scalafmtCheck before tests",
	"sessionizer: watermark per partition, not per topic",
	"rollups: drop Spark 3.4 workarounds",
	"docs: Bazel migration plan",
	"enrich: GeoIP lookups through caffeine cache",
}

// history returns the commits, newest first, made on first use.
func (w *world) history() [][2]string {
	if w.commits == nil {
		for _, i := range w.g.r.Perm(len(commitSubjects)) {
			w.commits = append(w.commits, [2]string{w.g.hex(7), commitSubjects[i]})
		}
	}
	return w.commits
}

// commit prints git commit's report and records the commit.
func (g *gen) commit(subject string, files []string, created []string) call {
	h := g.P("hash", func() string { return g.hex(7) })
	g.w.history()
	g.w.commits = append([][2]string{{h, subject}}, g.w.commits...)
	var b out
	ins, del := 0, 0
	for range files {
		ins += g.between(2, 60)
		del += g.between(0, 25)
	}
	b.add(fmt.Sprintf("[main %s] %s", h, subject))
	b.add(fmt.Sprintf(" %d files changed, %d insertions(+), %d deletions(-)", len(files), ins, del))
	for _, c := range created {
		b.add(" create mode 100644 " + c)
	}
	cmd := "git add " + strings.Join(files, " ") + " && git commit -m '" + subject + "'"
	return bash(cmd, b.res(0))
}

func (g *gen) gitStatus(files []string, untracked []string) call {
	var b out
	for _, f := range files {
		b.add(" M " + f)
	}
	for _, f := range untracked {
		b.add("?? " + f)
	}
	r := b.res(0)
	r.read = true
	return bash("git status --short", r)
}

// ip returns a private address of the staging network.
func (g *gen) ip() string {
	return fmt.Sprintf("10.%d.%d.%d", g.pick2(128, 44), g.between(0, 15), g.between(2, 250))
}

func (g *gen) pick2(a, b int) int {
	if g.chance(0.5) {
		return a
	}
	return b
}

// prettyCompact prints rows the way clickhouse-client's PrettyCompact
// format does.
func prettyCompact(head []string, rows [][]string) string {
	w := make([]int, len(head))
	for i, h := range head {
		w[i] = len(h)
	}
	for _, r := range rows {
		for i, c := range r {
			if len(c) > w[i] {
				w[i] = len(c)
			}
		}
	}
	var b strings.Builder
	b.WriteString("┌─")
	for i, h := range head {
		b.WriteString(h + strings.Repeat("─", w[i]-len(h)))
		if i < len(head)-1 {
			b.WriteString("─┬─")
		}
	}
	b.WriteString("─┐\n")
	for _, r := range rows {
		b.WriteString("│ ")
		for i, c := range r {
			b.WriteString(c + strings.Repeat(" ", w[i]-len(c)))
			if i < len(r)-1 {
				b.WriteString(" │ ")
			}
		}
		b.WriteString(" │\n")
	}
	b.WriteString("└─")
	for i := range head {
		b.WriteString(strings.Repeat("─", w[i]))
		if i < len(head)-1 {
			b.WriteString("─┴─")
		}
	}
	b.WriteString("─┘")
	return b.String()
}

// bqTable prints rows the way bq query's pretty format does.
func bqTable(head []string, rows [][]string) string {
	w := make([]int, len(head))
	for i, h := range head {
		w[i] = len(h)
	}
	for _, r := range rows {
		for i, c := range r {
			if len(c) > w[i] {
				w[i] = len(c)
			}
		}
	}
	sep := "+"
	for _, n := range w {
		sep += strings.Repeat("-", n+2) + "+"
	}
	var b strings.Builder
	b.WriteString(sep + "\n|")
	for i, h := range head {
		pad := w[i] - len(h)
		fmt.Fprintf(&b, " %s%s%s |", strings.Repeat(" ", pad/2), h, strings.Repeat(" ", pad-pad/2))
	}
	b.WriteString("\n" + sep + "\n")
	for _, r := range rows {
		b.WriteString("|")
		for i, c := range r {
			fmt.Fprintf(&b, " %*s |", w[i], c)
		}
		b.WriteString("\n")
	}
	b.WriteString(sep)
	return b.String()
}

// airflowLine is one line of an Airflow task log.
func (g *gen) airflowLine(src, level, msg string) string {
	g.now = g.now.Add(time.Duration(g.between(2, 400)) * time.Millisecond)
	t := g.now
	return fmt.Sprintf("[%s] {%s} %s - %s", t.Format("2006-01-02T15:04:05.000-0700"), src, level, msg)
}

// kafkaLogLine is one line of a broker's server.log.
func kafkaLogLine(t time.Time, level, msg string) string {
	return fmt.Sprintf("[%s] %s %s", t.Format("2006-01-02 15:04:05,000"), level, msg)
}

// sparkLogLine is one line of a Spark driver log.
func sparkLogLine(t time.Time, level, src, msg string) string {
	return fmt.Sprintf("%s %s %s: %s", t.Format("06/01/02 15:04:05"), level, src, msg)
}
