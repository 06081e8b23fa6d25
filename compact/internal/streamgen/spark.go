package streamgen

import (
	"fmt"
	"strings"
	"time"
)

// sparkJob is a batch job of the rollups module.
type sparkJob struct{ name, main, agg string }

var sparkJobs = []sparkJob{
	{"daily-rollup", "DailyRollupJob", "FunnelAggregator"},
	{"weekly-cohorts", "CohortBuilder", "PartitionPlanner"},
	{"retention-backfill", "RetentionMatrix", "FunnelAggregator"},
}

// The Spark task: a Dataproc batch dies of an executor OOM.
func (g *gen) taskSpark() {
	m := g.w.mod("rollups")
	var jobs []sparkJob
	for _, j := range sparkJobs {
		if !g.w.dirty[m.srcPath(j.agg)] && !g.w.dirty[g.dataprocPath(j)] {
			jobs = append(jobs, j)
		}
	}
	if len(jobs) == 0 {
		g.taskKafka()
		return
	}
	j := jobs[g.intn(len(jobs))]
	day := g.now.AddDate(0, 0, -1)
	failed := fmt.Sprintf("%s-%s-%s", j.name, day.Format("20060102"), g.hex(6))
	g.user(fmt.Sprintf("Last night's %s batch failed on Dataproc Serverless again: %s\n\nPlease find out why and fix it. Hard constraints: executors stay at 8g or less (that's the cost cap we agreed with finance), don't pin %s (we rely on dynamic allocation), and the job must be done before the 06:00 UTC dbt run.",
		j.name, g.U("url", fixed(fmt.Sprintf("https://console.cloud.google.com/dataproc/batches/%s/%s/monitoring?project=%s", gcpRegion, failed, prodProj))),
		g.U("key", fixed("spark.executor.instances"))))

	// The batch list.
	var b out
	b.add("BATCH_ID                                  JOB_TYPE  STATUS     CREATE_TIME")
	for i := 0; i < g.between(6, 9); i++ {
		d := day.AddDate(0, 0, -i)
		id := fmt.Sprintf("%s-%s-%s", j.name, d.Format("20060102"), g.hex(6))
		st := "SUCCEEDED"
		if i == 0 {
			id, st = failed, "FAILED"
		} else if i < 3 {
			id = g.P("id", func() string { return fmt.Sprintf("%s-%s-%s", j.name, d.Format("20060102"), g.hex(6)) })
		}
		b.add(fmt.Sprintf("%-41s SPARK     %-10s %s", id, st, d.Add(time.Duration(g.between(3*3600, 3*3600+900))*time.Second).Format("2006-01-02T15:04:05.000000Z")))
	}
	r := b.res(0)
	r.read = true
	g.step("Listing the recent batches of the job.", bash(fmt.Sprintf("gcloud dataproc batches list --project=%s --region=%s --filter=\"labels.job=%s\" --limit=8", prodProj, gcpRegion, j.name), r))

	// The batch's description.
	tid := g.E("id", func() string { return fmt.Sprintf("TID %d", g.between(3000, 9999)) })
	stage := g.between(4, 12)
	task := g.between(10, 199)
	lostHost, lostExec := g.ip(), g.between(1, 12)
	outDir := g.uuid()
	b = out{}
	b.add(fmt.Sprintf("createTime: '%s'", day.Add(3*time.Hour).Format("2006-01-02T15:04:05.000000Z")))
	b.add("creator: eddy-airflow@" + prodProj + ".iam.gserviceaccount.com")
	b.add("environmentConfig:\n  executionConfig:\n    serviceAccount: eddy-spark@" + prodProj + ".iam.gserviceaccount.com\n    subnetworkUri: projects/" + prodProj + "/regions/" + gcpRegion + "/subnetworks/dataproc")
	b.add("labels:\n  goog-dataproc-batch-id: " + failed + "\n  goog-dataproc-location: " + gcpRegion + "\n  job: " + j.name)
	b.add("name: projects/" + prodProj + "/locations/" + gcpRegion + "/batches/" + failed)
	b.add("runtimeConfig:\n  properties:\n    spark:spark.app.name: eddy-" + j.name + "\n    spark:spark.driver.cores: '4'\n    spark:spark.driver.memory: 8g\n    spark:spark.dynamicAllocation.maxExecutors: '40'\n    spark:spark.executor.cores: '4'\n    spark:spark.executor.memory: 8g\n    spark:spark.sql.shuffle.partitions: '200'\n  version: '2.2'")
	b.add(fmt.Sprintf("runtimeInfo:\n  approximateUsage:\n    milliDcuSeconds: '%d'\n    shuffleStorageGbSeconds: '%d'\n  outputUri: gs://marlow-eddy-dataproc-staging/google-cloud-dataproc-metainfo/%s/jobs/srvls-batch-%s/driveroutput", g.between(1e7, 9e7), g.between(1e5, 9e5), outDir, outDir[:8]))
	b.add("state: FAILED")
	b.err(fmt.Sprintf("stateMessage: 'Job failed with message [org.apache.spark.SparkException: Job aborted due to stage failure: Task %d in stage %d.0 failed 4 times, most recent failure: Lost task %d.3 in stage %d.0 (%s) (%s executor %d): java.lang.OutOfMemoryError: Java heap space]. Additional details can be found at: gs://marlow-eddy-dataproc-staging/google-cloud-dataproc-metainfo/%s/jobs/srvls-batch-%s/driveroutput.'",
		task, stage, task, stage, tid, lostHost, lostExec, outDir, outDir[:8]))
	b.add(fmt.Sprintf("stateTime: '%s'", day.Add(4*time.Hour).Format("2006-01-02T15:04:05.000000Z")))
	b.add("uuid: " + g.P("uuid", g.uuid))
	r = b.res(0)
	r.read = true
	g.step("Describing the failed batch.", bash(fmt.Sprintf("gcloud dataproc batches describe %s --project=%s --region=%s", failed, prodProj, gcpRegion), r))

	// The driver log.
	b = out{}
	g.sparkDriverLog(&b, j, day.Add(3*time.Hour), stage, task, tid, lostHost, lostExec)
	r = b.res(0)
	r.read = true
	g.step("The stage died; reading the end of the driver output.", bash(fmt.Sprintf("gsutil cat gs://marlow-eddy-dataproc-staging/google-cloud-dataproc-metainfo/%s/jobs/srvls-batch-%s/driveroutput.000000000 | tail -n %d", outDir, outDir[:8], len(b.lines)), r))

	aggPath, aggBody := g.src(m, j.agg)
	g.step("The OOM is in the aggregation; reading it.", g.readSrc(m, j.agg))
	g.step("", g.grepModule(m, g.pick([]string{"groupBy", "foldLeft", "metrics."})))
	dp := g.dataprocPath(j)
	dpBody := g.w.file(dp, func() string { return g.dataprocYAML(j) })
	g.step("And the batch's configuration.", readCall(dp, res{out: numbered(dpBody, 0, 0)}))

	g.say(fmt.Sprintf("One task of stage %d holds a single tenant's whole day: the largest tenant's funnel keys are skewed, so the 200 shuffle partitions leave one executor with most of the data. Two options within the 8g cap: (a) salt the skewed keys and aggregate in two steps, or (b) raise spark.sql.shuffle.partitions and let AQE split skewed partitions. (a) is more code, (b) is config only. Which do you prefer?", stage))
	g.user(fmt.Sprintf("Do both, but keep partitions at 800 or below; the small-file count on GCS already hurts the dbt loads. Context from last week's incident: %s (FinOps ticket %s)", g.userURL(1), g.U("id", func() string { return fmt.Sprintf("FINOPS-%d", g.between(10, 399)) })))

	salt := g.W("id", g.writtenIdent)
	al, _ := exprLine(aggBody, g.between(20, strings.Count(aggBody, "\n")-10))
	g.step("Salting the skewed keys and aggregating in two steps.",
		replaceCall(aggPath, al, rewriteLine(al, salt)),
		replaceCall(aggPath, "object "+j.agg+" {", fmt.Sprintf("object %s {\n  /** Spreads one key over n buckets; the second aggregation merges them again. */\n  def %s(df: DataFrame, n: Int = 16): DataFrame =\n    df.withColumn(\"salt\", (rand(42) * n).cast(\"int\"))\n", j.agg, salt)))
	g.w.dirty[aggPath] = true
	skewKey := g.W("key", fixed("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes"))
	advisory := g.W("key", fixed("spark.sql.adaptive.advisoryPartitionSizeInBytes"))
	g.step("Raising the partitions and enabling AQE's skew handling.", replaceCall(dp, "    spark.sql.shuffle.partitions: '200'", fmt.Sprintf("    spark.sql.shuffle.partitions: '800'\n    spark.sql.adaptive.enabled: 'true'\n    spark.sql.adaptive.skewJoin.enabled: 'true'\n    %s: 256m\n    %s: 128m", skewKey, advisory)))
	g.w.dirty[dp] = true

	b = out{}
	g.sbtBanner(&b)
	b.add(fmt.Sprintf("[info] compiling 2 Scala sources to %s/rollups/target/scala-2.13/classes ...", repoDir))
	g.scalaTestOutput(&b, m, []string{j.agg + "Spec"}, nil, 0)
	g.sbtDone(&b, true)
	g.step("Running the aggregation's spec.", bash(fmt.Sprintf("sbt -Dsbt.supershell=false \"rollups/testOnly *%sSpec\"", j.agg), b.res(0)))

	b = out{}
	g.sbtBanner(&b)
	b.add("[info] running (fork) " + m.pkgName() + "." + j.main + " --date " + day.Format("2006-01-02") + " --sample 0.02 --master local[8]")
	g.sparkLocalLog(&b, j)
	g.sbtDone(&b, true)
	g.step("Running the job locally on a 2% sample of that day.", bash(fmt.Sprintf("sbt -Dsbt.supershell=false \"rollups/runMain %s.%s --date %s --sample 0.02 --master local[8]\"", m.pkgName(), j.main, day.Format("2006-01-02")), b.res(0)))

	rerun := fmt.Sprintf("%s-%s-rerun-%s", j.name, day.Format("20060102"), g.hex(4))
	b = out{}
	b.add(fmt.Sprintf("Batch [%s] submitted.", rerun))
	b.add("Using the default container image")
	b.add("Waiting for container log creation")
	b.add("PYSPARK_PYTHON=/opt/dataproc/conda/bin/python")
	b.add(fmt.Sprintf("Generating /home/spark/.pip/pip.conf\nConfiguring index-url as 'https://%s-python.pkg.dev/%s/pypi/simple/'", gcpRegion, prodProj))
	g.tick(600, 1800)
	for i := 0; i < g.sc(30); i++ {
		t := g.now.Add(time.Duration(i*7) * time.Second)
		b.add(sparkLogLine(t, "INFO", "TaskSetManager", fmt.Sprintf("Finished task %d.0 in stage %d.0 (TID %d) in %d ms on %s (executor %d) (%d/800)", g.intn(800), stage, g.between(1000, 2999), g.between(2000, 90000), g.ip(), g.between(1, 40), 760+i)))
	}
	b.add(fmt.Sprintf("Batch [%s] finished.", rerun))
	b.add("metadata:\n  '@type': type.googleapis.com/google.cloud.dataproc.v1.BatchOperationMetadata\n  batch: projects/" + prodProj + "/locations/" + gcpRegion + "/batches/" + rerun)
	b.add("  batchUuid: " + g.P("uuid", g.uuid))
	b.add(fmt.Sprintf("  createTime: '%s'", g.now.Format("2006-01-02T15:04:05.000000Z")))
	b.add("  operationType: BATCH")
	b.add("name: projects/" + prodProj + "/regions/" + gcpRegion + "/operations/" + g.P("uuid", g.uuid))
	g.step("The sample run is fine. Resubmitting the failed day on Dataproc with the new settings (you said the rerun is fine before 06:00).",
		bash(fmt.Sprintf("gcloud dataproc batches submit spark --project=%s --region=%s --batch=%s --labels=job=%s --properties-file=%s --class=%s.%s --jars=gs://marlow-eddy-artifacts/rollups/rollups-assembly-latest.jar -- --date %s", prodProj, gcpRegion, rerun, j.name, dp, m.pkgName(), j.main, day.Format("2006-01-02")), b.res(0)))

	g.step("", g.commit(fmt.Sprintf("rollups: salt skewed keys in %s and let AQE split skew", j.agg), []string{aggPath, dp}, nil))
	g.say(fmt.Sprintf("The rerun of %s finished. Cause: one skewed tenant put a whole day into one shuffle partition and the executor ran out of heap. The aggregation now salts the keys and merges in a second step, partitions are at 800, AQE skew handling is on, executors are still 8g.", j.name))
}

func (g *gen) dataprocPath(j sparkJob) string {
	return "deploy/dataproc/" + j.name + ".properties.yaml"
}

func (g *gen) dataprocYAML(j sparkJob) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Spark properties of the %s batch, passed with --properties-file.\n# Keep executor memory at 8g or below: cost cap.\nproperties:\n", j.name)
	props := []string{"spark.app.name: eddy-" + j.name, "spark.driver.cores: '4'", "spark.driver.memory: 8g", "spark.executor.cores: '4'", "spark.executor.memory: 8g",
		"spark.executor.memoryOverhead: 2g", "spark.dynamicAllocation.enabled: 'true'", "spark.dynamicAllocation.maxExecutors: '40'", "spark.sql.shuffle.partitions: '200'",
		"spark.sql.sources.partitionOverwriteMode: dynamic", "spark.sql.parquet.compression.codec: zstd", "spark.serializer: org.apache.spark.serializer.KryoSerializer",
		"spark.kryoserializer.buffer.max: 512m", "spark.sql.session.timeZone: UTC", "spark.hadoop.fs.gs.inputstream.fadvise: RANDOM", "spark.eventLog.enabled: 'true'",
		"spark.eventLog.dir: gs://marlow-eddy-spark-history/" + j.name}
	for _, p := range props {
		fmt.Fprintf(&b, "    %s\n", p)
	}
	b.WriteString("labels:\n    team: data-platform\n    job: " + j.name + "\n")
	for i := 0; i < g.sc(20); i++ {
		fmt.Fprintf(&b, "# %s\n", g.comment())
	}
	return b.String()
}

// sparkDriverLog prints the end of a driver log of a run that fails with
// an executor OOM.
func (g *gen) sparkDriverLog(b *out, j sparkJob, start time.Time, stage, task int, tid, lostHost string, lostExec int) {
	t := start
	next := func() time.Time { t = t.Add(time.Duration(g.between(20, 4000)) * time.Millisecond); return t }
	b.add("Using Spark's default log4j profile: org/apache/spark/log4j2-defaults.properties")
	b.add(sparkLogLine(next(), "INFO", "SparkContext", "Running Spark version 3.5.1"))
	b.add(sparkLogLine(next(), "INFO", "SparkContext", "OS info Linux, 6.1.100+, amd64"))
	b.add(sparkLogLine(next(), "INFO", "SparkContext", "Java version 17.0.12"))
	b.add(sparkLogLine(next(), "INFO", "ResourceUtils", "=============================================================="))
	b.add(sparkLogLine(next(), "INFO", "ResourceUtils", "No custom resources configured for spark.driver."))
	b.add(sparkLogLine(next(), "INFO", "ResourceUtils", "=============================================================="))
	b.add(sparkLogLine(next(), "INFO", "SparkContext", "Submitted application: eddy-"+j.name))
	b.add(sparkLogLine(next(), "INFO", "ResourceProfile", "Default ResourceProfile created, executor resources: Map(cores -> name: cores, amount: 4, script: , vendor: , memory -> name: memory, amount: 8192, script: , vendor: , offHeap -> name: offHeap, amount: 0, script: , vendor: ), task resources: Map(cpus -> name: cpus, amount: 1.0)"))
	b.add(sparkLogLine(next(), "INFO", "SecurityManager", "Changing view acls to: spark"))
	b.add(sparkLogLine(next(), "INFO", "SecurityManager", "SecurityManager: authentication enabled; ui acls disabled; users with view permissions: spark; groups with view permissions: EMPTY; users with modify permissions: spark; groups with modify permissions: EMPTY"))
	b.add(sparkLogLine(next(), "INFO", "Utils", fmt.Sprintf("Successfully started service 'sparkDriver' on port %d.", g.between(30000, 45000))))
	b.add(sparkLogLine(next(), "INFO", "SparkEnv", "Registering MapOutputTracker"))
	b.add(sparkLogLine(next(), "INFO", "SparkEnv", "Registering BlockManagerMaster"))
	b.add(sparkLogLine(next(), "INFO", "DiskBlockManager", "Created local directory at "+g.P("path", func() string { return "/var/data/spark-" + g.uuid() + "/blockmgr-" + g.uuid() })))
	b.add(sparkLogLine(next(), "INFO", "MemoryStore", "MemoryStore started with capacity 4.6 GiB"))
	b.add(sparkLogLine(next(), "INFO", "Utils", "Successfully started service 'SparkUI' on port 4040."))
	b.add(sparkLogLine(next(), "INFO", "GhfsStorageStatistics", "Detected potential high latency for operation op_open. latencyMs=181; previousMaxLatencyMs=0; operationCount=1"))
	execs := g.between(12, 30)
	hosts := make([]string, execs+1)
	labelled := g.intn(execs) + 1
	for e := 1; e <= execs; e++ {
		hosts[e] = g.ip()
		if e == lostExec {
			hosts[e] = lostHost
		}
		port := g.between(33000, 45000)
		hp := fmt.Sprintf("%s:%d", hosts[e], port)
		if e == labelled {
			hp = g.P("hostport", fixed(hp))
		}
		b.add(sparkLogLine(next(), "INFO", "KubernetesClusterSchedulerBackend$KubernetesDriverEndpoint", fmt.Sprintf("Registered executor NettyRpcEndpointRef(spark-client://Executor) (%s:%d) with ID %d,  ResourceProfileId 0", hosts[e], g.between(45000, 60000), e)))
		b.add(sparkLogLine(next(), "INFO", "BlockManagerMasterEndpoint", fmt.Sprintf("Registering block manager %s with 4.6 GiB RAM, BlockManagerId(%d, %s, %d, None)", hp, e, hosts[e], port)))
	}
	for s := 0; s < stage; s++ {
		b.add(sparkLogLine(next(), "INFO", "DAGScheduler", fmt.Sprintf("Submitting ShuffleMapStage %d (MapPartitionsRDD[%d] at save at RollupWriter.scala:88), which has no missing parents", s, 10+s*6)))
		if s == stage-1 || g.chance(0.3) {
			b.add(sparkLogLine(next(), "INFO", "DAGScheduler", fmt.Sprintf("ShuffleMapStage %d (save at RollupWriter.scala:88) finished in %.3f s", s, float64(g.between(2000, 600000))/1000)))
		}
	}
	b.add(sparkLogLine(next(), "INFO", "DAGScheduler", fmt.Sprintf("Submitting ShuffleMapStage %d (MapPartitionsRDD[%d] at save at RollupWriter.scala:88), which has no missing parents", stage, 10+stage*6)))
	b.add(sparkLogLine(next(), "INFO", "TaskSchedulerImpl", fmt.Sprintf("Adding task set %d.0 with 200 tasks resource profile 0", stage)))
	done := 0
	for i := 0; i < g.sc(170); i++ {
		e := g.between(1, execs)
		tk := g.intn(200)
		if tk == task {
			continue
		}
		if g.chance(0.5) {
			b.add(sparkLogLine(next(), "INFO", "TaskSetManager", fmt.Sprintf("Starting task %d.0 in stage %d.0 (TID %d) (%s, executor %d, partition %d, NODE_LOCAL, 9211 bytes)", tk, stage, g.between(1000, 2999), hosts[e], e, tk)))
		} else {
			done++
			b.add(sparkLogLine(next(), "INFO", "TaskSetManager", fmt.Sprintf("Finished task %d.0 in stage %d.0 (TID %d) in %d ms on %s (executor %d) (%d/200)", tk, stage, g.between(1000, 2999), g.between(3000, 200000), hosts[e], e, done)))
		}
		if g.chance(0.05) {
			b.add(sparkLogLine(next(), "INFO", "ExecutorAllocationManager", fmt.Sprintf("Requesting %d new executors because tasks are backlogged (new desired total will be %d for resource profile id: 0)", g.between(1, 4), g.between(execs, 40))))
		}
	}
	pod := g.E("id", func() string { return fmt.Sprintf("eddy-%s-%s-exec-%d", j.name, g.hex(8), lostExec) })
	for a := 0; a < 3; a++ {
		e := g.between(1, execs)
		for e == lostExec {
			e = g.between(1, execs)
		}
		b.err(sparkLogLine(next(), "ERROR", "TaskSchedulerImpl", fmt.Sprintf("Lost executor %d on %s: The executor with id %d exited with exit code 137(SIGKILL, possible container OOM).", e, hosts[e], e)))
		b.err(sparkLogLine(next(), "WARN", "TaskSetManager", fmt.Sprintf("Lost task %d.%d in stage %d.0 (TID %d) (%s executor %d): ExecutorLostFailure (executor %d exited caused by one of the running tasks) Reason: The executor with id %d exited with exit code 137(SIGKILL, possible container OOM).", task, a, stage, g.between(1000, 2999), hosts[e], e, e, e)))
		b.add(sparkLogLine(next(), "INFO", "BlockManagerMasterEndpoint", fmt.Sprintf("Trying to remove executor %d from BlockManagerMaster.", e)))
		b.add(sparkLogLine(next(), "INFO", "DAGScheduler", fmt.Sprintf("Executor lost: %d (epoch %d)", e, g.between(1, 9))))
	}
	e := lostExec
	aggSite := g.E("site", func() string { return fmt.Sprintf("%s.scala:%d", j.agg, g.between(40, 320)) })
	mainSite := g.E("site", func() string { return fmt.Sprintf("%s.scala:%d", j.main, g.between(30, 200)) })
	b.err(sparkLogLine(next(), "WARN", "ExecutorPodsLifecycleManager", fmt.Sprintf("Executor %d (pod %s) exited with exit code 137: OOMKilled, the container exceeded its memory limit.", e, pod)))
	b.err(sparkLogLine(next(), "WARN", "TaskSetManager", fmt.Sprintf("Lost task %d.3 in stage %d.0 (%s) (%s executor %d): java.lang.OutOfMemoryError: Java heap space", task, stage, tid, hosts[e], e)))
	b.err(sparkLogLine(next(), "ERROR", "TaskSetManager", fmt.Sprintf("Task %d in stage %d.0 failed 4 times; aborting job", task, stage)))
	b.add(sparkLogLine(next(), "INFO", "TaskSchedulerImpl", fmt.Sprintf("Cancelling stage %d", stage)))
	b.err(sparkLogLine(next(), "INFO", "DAGScheduler", fmt.Sprintf("ShuffleMapStage %d (save at RollupWriter.scala:88) failed in %.3f s due to Job aborted due to stage failure: Task %d in stage %d.0 failed 4 times, most recent failure: Lost task %d.3 in stage %d.0 (%s) (%s executor %d): java.lang.OutOfMemoryError: Java heap space", stage, float64(g.between(600000, 3000000))/1000, task, stage, task, stage, tid, hosts[e], e)))
	b.err(sparkLogLine(next(), "ERROR", "FileFormatWriter", fmt.Sprintf("Aborting job %s.", g.E("uuid", g.uuid))))
	b.err(fmt.Sprintf("Exception in thread \"main\" org.apache.spark.SparkException: Job aborted due to stage failure: Task %d in stage %d.0 failed 4 times, most recent failure: Lost task %d.3 in stage %d.0 (%s) (%s executor %d): java.lang.OutOfMemoryError: Java heap space", task, stage, task, stage, tid, hosts[e], e))
	for i, f := range sparkFrames {
		if i == 4 {
			b.err(fmt.Sprintf("\tat %s.%s.$anonfun$%s$1(%s)", pkgRoot+".rollup", j.agg, g.method(), aggSite))
		}
		b.err("\tat " + f)
	}
	b.err("")
	b.err("Driver stacktrace:")
	for _, f := range driverFrames {
		b.err("\tat " + f)
	}
	b.err(fmt.Sprintf("\tat %s.RollupWriter.write(RollupWriter.scala:88)", pkgRoot+".rollup"))
	b.err(fmt.Sprintf("\tat %s.%s$.main(%s)", pkgRoot+".rollup", j.main, mainSite))
	b.err(fmt.Sprintf("\tat %s.%s.main(%s.scala)", pkgRoot+".rollup", j.main, j.main))
	b.err("Caused by: java.lang.OutOfMemoryError: Java heap space")
	for _, f := range sparkFrames[:3] {
		b.err("\tat " + f)
	}
	b.err(fmt.Sprintf("\tat %s.%s.$anonfun$%s$2(%s)", pkgRoot+".rollup", j.agg, g.method(), g.E("site", func() string { return fmt.Sprintf("%s.scala:%d", j.agg, g.between(40, 320)) })))
	b.err("\t... 12 more")
	b.add(sparkLogLine(next(), "INFO", "SparkContext", "Invoking stop() from shutdown hook"))
	b.add(sparkLogLine(next(), "INFO", "SparkContext", "SparkContext is stopping with exitCode 0."))
	b.add(sparkLogLine(next(), "INFO", "KubernetesClusterSchedulerBackend", "Shutting down all executors"))
	b.add(sparkLogLine(next(), "INFO", "MapOutputTrackerMasterEndpoint", "MapOutputTrackerMasterEndpoint stopped!"))
	b.add(sparkLogLine(next(), "INFO", "MemoryStore", "MemoryStore cleared"))
	b.add(sparkLogLine(next(), "INFO", "BlockManager", "BlockManager stopped"))
	b.add(sparkLogLine(next(), "INFO", "SparkContext", "Successfully stopped SparkContext"))
	b.add(sparkLogLine(next(), "INFO", "ShutdownHookManager", "Shutdown hook called"))
}

// sparkLocalLog prints a local run of a job that succeeds.
func (g *gen) sparkLocalLog(b *out, j sparkJob) {
	t := g.now
	next := func() time.Time { t = t.Add(time.Duration(g.between(20, 3000)) * time.Millisecond); return t }
	b.add("[info] Using Spark's default log4j profile: org/apache/spark/log4j2-defaults.properties")
	b.add("[info] " + sparkLogLine(next(), "INFO", "SparkContext", "Running Spark version 3.5.1"))
	b.add("[info] " + sparkLogLine(next(), "INFO", "SparkContext", "Submitted application: eddy-"+j.name+"-local"))
	b.add("[info] " + sparkLogLine(next(), "WARN", "NativeCodeLoader", "Unable to load native-hadoop library for your platform... using builtin-java classes where applicable"))
	b.add("[info] " + sparkLogLine(next(), "INFO", "Utils", "Successfully started service 'SparkUI' on port 4040."))
	b.add("[info] " + sparkLogLine(next(), "INFO", "Executor", "Starting executor ID driver on host "+g.P("hostport", func() string { return fmt.Sprintf("agent-dev-%s.c.%s.internal", g.lowerDigits(4), stgProj) })))
	for s := 0; s < g.sc(40); s++ {
		b.add("[info] " + sparkLogLine(next(), "INFO", "DAGScheduler", fmt.Sprintf("ShuffleMapStage %d (save at RollupWriter.scala:88) finished in %.3f s", s, float64(g.between(300, 90000))/1000)))
		if g.chance(0.4) {
			b.add("[info] " + sparkLogLine(next(), "INFO", "ShufflePartitionsUtil", fmt.Sprintf("For shuffle(%d), advisory target size: 67108864, actual target size 1048576, minimum partition size: 1048576", s)))
		}
		if g.chance(0.3) {
			b.add("[info] " + sparkLogLine(next(), "INFO", "OptimizeSkewedJoin", fmt.Sprintf("Optimizing skewed join. Left side partitions size info: median size: %d, max size: %d, min size: %d, avg size: %d", g.between(1e5, 9e5), g.between(1e7, 9e7), g.between(1e3, 9e3), g.between(1e5, 9e5))))
		}
	}
	b.add(fmt.Sprintf("[info] %s wrote %d rows to %s", j.main, g.between(100000, 3000000), g.P("path", func() string {
		return fmt.Sprintf("/tmp/eddy-%s-local-%s/date=%s", j.name, g.lowerDigits(6), g.now.AddDate(0, 0, -1).Format("2006-01-02"))
	})))
	b.add("[info] " + sparkLogLine(next(), "INFO", "SparkContext", "Successfully stopped SparkContext"))
}
