package streamgen

import (
	"fmt"
	"strings"
	"unicode"
)

// The invented product and its places.
const (
	repoDir   = "/home/agent/eddy"
	pkgRoot   = "io.marlow.eddy"
	prodProj  = "marlow-eddy-prod"
	stgProj   = "marlow-eddy-stg"
	gcpRegion = "europe-west4"
)

// module is one sbt (or Bazel) module of the monorepo.
type module struct {
	name    string // sbt project id and folder
	pkg     string // last package segment
	scala3  bool
	sources []string
	// failSpecs may fail in the session; cleanSpecs never do, so the
	// names of their tests can be planted in passing runs.
	failSpecs  []string
	cleanSpecs []string
}

func (m *module) pkgName() string { return pkgRoot + "." + m.pkg }

func (m *module) srcPath(class string) string {
	return m.name + "/src/main/scala/" + strings.ReplaceAll(m.pkgName(), ".", "/") + "/" + class + ".scala"
}

func (m *module) testPath(spec string) string {
	return m.name + "/src/test/scala/" + strings.ReplaceAll(m.pkgName(), ".", "/") + "/" + spec + ".scala"
}

func (m *module) scalaVersion() string {
	if m.scala3 {
		return "3.3.4"
	}
	return "2.13.15"
}

// world is the repository the agent works in: its modules, the files it
// has looked at (generated once, then shown the same) and the files it
// has changed (never shown again, so what was written stays in the
// write's arguments).
type world struct {
	g        *gen
	mods     []*module
	content  map[string]string
	dirty    map[string]bool
	tests    map[string][]string
	dags     []string
	models   []string
	migs     []string
	nextMig  int
	commits  [][2]string
	rev      int               // the last Cloud Run revision number
	runURL   string            // hash of the ingest service's URL
	bazelOut string            // hash of the Bazel output base
	nixRev   string            // the pinned nixpkgs revision
	nixNar   string            // its NAR hash
	deps     map[string]string // old dependency hashes of the Nix packages
	seen     map[string]bool   // test names of all specs
}

func newWorld(g *gen) *world {
	w := &world{g: g, content: map[string]string{}, dirty: map[string]bool{}, tests: map[string][]string{}, seen: map[string]bool{}, deps: map[string]string{}}
	w.rev = g.between(20, 60)
	w.mods = []*module{
		{name: "sessionizer", pkg: "sessionize", sources: []string{"SessionWindow", "SessionAssembler", "WatermarkTracker", "EventDeduplicator", "SessionizerStream", "LatePolicy", "SessionSerde", "IdleSweeper", "SessionMetrics", "PartitionState"},
			failSpecs: []string{"SessionWindowSpec", "WatermarkTrackerSpec", "EventDeduplicatorSpec", "IdleSweeperSpec"}, cleanSpecs: []string{"SessionSerdeSpec", "SessionAssemblerSpec", "LatePolicySpec"}},
		{name: "core", pkg: "core", scala3: true, sources: []string{"Event", "EventCodecs", "TenantId", "Clocks", "Schemas", "JsonSupport", "GeoPoint", "Retry"},
			failSpecs: []string{"EventCodecsSpec", "SchemasSpec", "RetrySpec"}, cleanSpecs: []string{"TenantIdSpec", "GeoPointSpec"}},
		{name: "rollups", pkg: "rollup", sources: []string{"DailyRollupJob", "FunnelAggregator", "CohortBuilder", "RollupWriter", "SparkSessions", "PartitionPlanner", "RetentionMatrix"},
			failSpecs: []string{"FunnelAggregatorSpec", "CohortBuilderSpec", "PartitionPlannerSpec"}, cleanSpecs: []string{"RetentionMatrixSpec", "RollupWriterSpec"}},
		{name: "ingest", pkg: "ingest", scala3: true, sources: []string{"IngestMain", "HttpRoutes", "KafkaPublisher", "BatchBuffer", "AuthFilter", "IngestConfig", "RateLimiter"},
			failSpecs: []string{"HttpRoutesSpec", "BatchBufferSpec", "KafkaPublisherSpec"}, cleanSpecs: []string{"AuthFilterSpec", "RateLimiterSpec"}},
		{name: "enrich", pkg: "enrich", sources: []string{"GeoIpEnricher", "UserAgentParser", "BotFilter", "EnrichStream", "AsnLookup", "ReferrerClassifier"},
			failSpecs: []string{"GeoIpEnricherSpec", "BotFilterSpec", "ReferrerClassifierSpec"}, cleanSpecs: []string{"UserAgentParserSpec", "AsnLookupSpec"}},
	}
	w.dags = []string{"sessions_hourly", "rollups_daily", "clickhouse_compaction", "dbt_marts_nightly", "kafka_lag_report", "geoip_refresh"}
	w.models = []string{"stg_events", "stg_sessions", "stg_tenants", "int_session_pages", "int_funnel_steps", "fct_sessions", "fct_daily_active", "dim_tenants", "fct_retention_weekly"}
	w.migs = []string{"0031_events_raw", "0032_sessions_local", "0033_sessions_distributed", "0034_pageviews_mv", "0035_tenant_daily", "0036_ttl_events_raw", "0037_funnel_steps", "0038_session_rollup_mv"}
	w.nextMig = 39
	return w
}

func (w *world) mod(name string) *module {
	for _, m := range w.mods {
		if m.name == name {
			return m
		}
	}
	panic("streamgen: no module " + name)
}

// clean returns the names of xs whose files, made by path, are unchanged.
func (w *world) clean(xs []string, path func(string) string) []string {
	var c []string
	for _, x := range xs {
		if !w.dirty[path(x)] {
			c = append(c, x)
		}
	}
	return c
}

// file returns the content of a repository file, made on first look.
func (w *world) file(path string, make func() string) string {
	if c, ok := w.content[path]; ok {
		return c
	}
	c := make()
	w.content[path] = c
	return c
}

// Vocabulary of the filler code.

var nouns = []string{"event", "session", "window", "watermark", "partition", "offset", "tenant", "device", "funnel", "step",
	"cohort", "rollup", "batch", "record", "sink", "source", "schema", "bucket", "metric", "span", "gap", "timeout", "buffer",
	"shard", "segment", "visit", "page", "referrer", "campaign", "region", "country", "visitor", "click", "conversion", "lag", "retry"}

var adjs = []string{"late", "open", "closed", "pending", "active", "idle", "merged", "raw", "enriched", "current", "next",
	"last", "max", "min", "total", "dropped", "stale", "expired", "sorted", "unique", "first", "flushed"}

var verbs = []string{"merge", "flush", "assign", "emit", "advance", "split", "collect", "resolve", "encode", "decode",
	"update", "evict", "lookup", "register", "compute", "validate", "normalize", "restore", "track", "group"}

var types = []string{"Event", "Session", "SessionKey", "TenantId", "Instant", "Duration", "Long", "Int", "String",
	"Option[Instant]", "Seq[Event]", "Vector[Session]", "Map[SessionKey, Session]", "WindowState", "PartitionOffset",
	"FunnelStep", "RollupRow", "EnrichedEvent", "Boolean", "Set[TenantId]"}

func upper1(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

func (g *gen) camel() string {
	return g.pick(adjs) + upper1(g.pick(nouns)) + g.pick([]string{"", "s", ""})
}
func (g *gen) field() string {
	return g.pick(nouns) + upper1(g.pick([]string{"id", "ts", "count", "key", "start", "end", "ms"}))
}
func (g *gen) method() string {
	return g.pick(verbs) + upper1(g.pick(nouns)) + g.pick([]string{"", "s", "At", "For"})
}
func (g *gen) typ() string { return g.pick(types) }

// scalaStmt is one statement of a method body.
func (g *gen) scalaStmt(ind string) string {
	a, b, c := g.camel(), g.camel(), g.field()
	switch g.intn(16) {
	case 0:
		return fmt.Sprintf("%sval %s = %s.filter(_.%s.isAfter(%s))", ind, a, b, c, g.camel())
	case 1:
		return fmt.Sprintf("%sval %s = %s.groupBy(_.%s).view.mapValues(_.size).toMap", ind, a, b, c)
	case 2:
		return fmt.Sprintf("%sval %s = %s.foldLeft(Map.empty[SessionKey, Session]) { (acc, e) =>\n%s  acc.updated(e.key, acc.get(e.key).fold(Session.start(e))(_.%s(e)))\n%s}", ind, a, b, ind, g.method(), ind)
	case 3:
		return fmt.Sprintf("%slog.debug(s\"%s %s for tenant ${%s.tenantId} took ${%s.toMillis} ms\")", ind, g.pick(verbs), g.pick(nouns), b, g.camel())
	case 4:
		return fmt.Sprintf("%srequire(%s >= 0, s\"%s must be non-negative, got $%s\")", ind, a, a, a)
	case 5:
		return fmt.Sprintf("%s%s match {\n%s  case Some(%s) if %s.%s > %s => %s(%s)\n%s  case Some(_) => %s.empty\n%s  case None => %s\n%s}", ind, b, ind, c, c, g.field(), g.camel(), g.method(), c, ind, g.camel(), ind, g.camel(), ind)
	case 6:
		return fmt.Sprintf("%smetrics.%s.%s()", ind, g.camel(), g.pick([]string{"inc", "record", "observe", "mark"}))
	case 7:
		return fmt.Sprintf("%sval %s = Duration.ofMillis(%s.%s - %s.%s)", ind, a, b, c, g.camel(), c)
	case 8:
		return fmt.Sprintf("%sif (%s.isEmpty) %s\n%selse %s.%s(%s)", ind, a, g.camel(), ind, b, g.method(), g.camel())
	case 9:
		return fmt.Sprintf("%sval %s = %s.sortBy(_.%s).take(%d)", ind, a, b, c, g.between(2, 512))
	case 10:
		return fmt.Sprintf("%s%s.foreach { e =>\n%s  %s.put(e.%s, e)\n%s}", ind, b, ind, a, c, ind)
	case 11:
		return fmt.Sprintf("%s// %s", ind, g.comment())
	case 12:
		return fmt.Sprintf("%sval %s: %s = %s.%s(%s, %s)", ind, a, g.typ(), b, g.method(), c, g.camel())
	case 13:
		return fmt.Sprintf("%s%s.collect { case e if e.%s.nonEmpty => e.copy(%s = e.%s.map(_.trim)) }", ind, b, c, c, c)
	case 14:
		return fmt.Sprintf("%sval (%s, %s) = %s.partition(_.%s < %s)", ind, a, g.camel(), b, c, g.camel())
	default:
		return fmt.Sprintf("%s%s += %s.size", ind, a, b)
	}
}

var commentBits = []string{
	"events can arrive out of order by up to the allowed lateness",
	"keep the state small: tenants with millions of devices exist",
	"the broker may redeliver after a rebalance, so this must be idempotent",
	"watermarks only move forward; a regression means a clock bug upstream",
	"sessions longer than the cap are split, not dropped",
	"the sink expects millis since epoch, not an Instant",
	"partition assignment can change between two polls",
	"this mirrors the ClickHouse ORDER BY so merges stay cheap",
	"bots are filtered before sessionization to keep windows short",
	"the funnel step order comes from the tenant config",
	"we emit a tombstone when a session is closed by the sweeper",
	"TODO: move this to the shared config once the ingest service uses it",
	"the legacy pipeline used seconds here, hence the conversion",
	"retries are bounded so a poison record does not block the partition",
}

func (g *gen) comment() string { return g.pick(commentBits) }

// scalaSource makes a Scala source file of about n lines.
func (g *gen) scalaSource(m *module, class string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\n", m.pkgName())
	imps := []string{"java.time.{Duration, Instant}", "scala.collection.mutable", "scala.concurrent.duration._",
		"cats.effect.IO", "cats.syntax.all._", "io.circe.{Decoder, Encoder}", "org.slf4j.LoggerFactory",
		"io.marlow.eddy.core.{Event, TenantId}", "io.marlow.eddy.core.metrics.Metrics", "fs2.kafka._",
		"org.apache.kafka.clients.consumer.ConsumerRecord", "com.typesafe.config.Config"}
	if m.name == "rollups" {
		imps = append(imps, "org.apache.spark.sql.{DataFrame, Dataset, SparkSession}", "org.apache.spark.sql.functions._", "org.apache.spark.sql.expressions.Window")
	}
	for _, i := range g.r.Perm(len(imps))[:g.between(4, 9)] {
		fmt.Fprintf(&b, "import %s\n", imps[i])
	}
	fmt.Fprintf(&b, "\n/** %s. */\n", upper1(g.comment()))
	fmt.Fprintf(&b, "final case class %sState(%s: %s, %s: %s, %s: %s)\n\n", class, g.field(), g.typ(), g.field(), g.typ(), g.field(), g.typ())
	if m.scala3 {
		fmt.Fprintf(&b, "final class %s(config: %sConfig)(using metrics: Metrics):\n", class, class)
	} else {
		fmt.Fprintf(&b, "final class %s(config: %sConfig)(implicit metrics: Metrics) {\n", class, class)
	}
	b.WriteString("  private val log = LoggerFactory.getLogger(getClass)\n")
	for strings.Count(b.String(), "\n") < n {
		fmt.Fprintf(&b, "\n  /** %s. */\n", upper1(g.comment()))
		if m.scala3 {
			fmt.Fprintf(&b, "  def %s(%s: %s, %s: %s): %s =\n", g.method(), g.camel(), g.typ(), g.camel(), g.typ(), g.typ())
		} else {
			fmt.Fprintf(&b, "  def %s(%s: %s, %s: %s): %s = {\n", g.method(), g.camel(), g.typ(), g.camel(), g.typ(), g.typ())
		}
		for i := 0; i < g.between(3, 10); i++ {
			b.WriteString(g.scalaStmt("    ") + "\n")
		}
		fmt.Fprintf(&b, "    %s\n", g.camel())
		if !m.scala3 {
			b.WriteString("  }\n")
		}
	}
	if !m.scala3 {
		b.WriteString("}\n")
	}
	fmt.Fprintf(&b, "\nobject %s {\n  val Default%s: Duration = Duration.ofMinutes(%d)\n  val Max%s: Int = %d\n}\n", class, upper1(g.pick(nouns)), g.between(1, 45), upper1(g.pick(nouns)), g.between(16, 4096))
	return b.String()
}

// specSource makes a ScalaTest spec of the tests named.
func (g *gen) specSource(m *module, spec string, tests []string) string {
	var b strings.Builder
	subject := strings.TrimSuffix(spec, "Spec")
	fmt.Fprintf(&b, "package %s\n\nimport java.time.{Duration, Instant}\nimport org.scalatest.matchers.should.Matchers\nimport org.scalatest.wordspec.AnyWordSpec\nimport io.marlow.eddy.core.testkit.{Events, FixedClock}\n\n", m.pkgName())
	fmt.Fprintf(&b, "class %s extends AnyWordSpec with Matchers {\n  private val clock = FixedClock.at(Instant.parse(\"2025-01-14T09:00:00Z\"))\n  private val t0 = clock.instant()\n\n  \"%s\" should {\n", spec, subject)
	for _, t := range tests {
		fmt.Fprintf(&b, "    \"%s\" in {\n", strings.TrimPrefix(t, "should "))
		for i := 0; i < g.between(3, 9); i++ {
			switch g.intn(5) {
			case 0:
				fmt.Fprintf(&b, "      val %s = Events.pageView(tenant = \"t%d\", device = \"d%d\", at = t0.plusSeconds(%d))\n", g.camel(), g.between(1, 9), g.between(1, 99), g.between(0, 3600))
			case 1:
				fmt.Fprintf(&b, "      val %s = new %s(%s.defaults).%s(Seq(%s, %s), t0)\n", g.camel(), subject, subject, g.method(), g.camel(), g.camel())
			case 2:
				fmt.Fprintf(&b, "      %s should have size %d\n", g.camel(), g.between(0, 12))
			case 3:
				fmt.Fprintf(&b, "      %s.map(_.%s) shouldBe Vector(%d, %d)\n", g.camel(), g.field(), g.between(1, 90), g.between(1, 90))
			default:
				fmt.Fprintf(&b, "      %s.%s shouldBe Duration.ofMinutes(%d)\n", g.camel(), g.field(), g.between(1, 30))
			}
		}
		b.WriteString("    }\n\n")
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// testNames returns the tests of a spec, made on first use.
func (w *world) testNames(spec string) []string {
	if t, ok := w.tests[spec]; ok {
		return t
	}
	g := w.g
	n := g.between(6, 14)
	seen := w.seen
	var ts []string
	for len(ts) < n {
		var t string
		switch g.intn(6) {
		case 0:
			t = fmt.Sprintf("should %s %s %s when the %s is %s", g.pick(verbs), g.pick(adjs), g.pick(nouns)+"s", g.pick(nouns), g.pick(adjs))
		case 1:
			t = fmt.Sprintf("should not %s %s %s across %s boundaries", g.pick(verbs), g.pick(adjs), g.pick(nouns)+"s", g.pick(nouns))
		case 2:
			t = fmt.Sprintf("should keep the %s %s stable after a %s", g.pick(nouns), g.pick([]string{"order", "count", "key", "offset"}), g.pick([]string{"rebalance", "restart", "replay", "retry", "flush"}))
		case 3:
			t = fmt.Sprintf("should reject a %s %s with a clear error", g.pick(adjs), g.pick(nouns))
		case 4:
			t = fmt.Sprintf("should %s the %s for every %s", g.pick(verbs), g.pick(nouns), g.pick(nouns))
		default:
			t = fmt.Sprintf("should round-trip %s %s through the codec", g.pick(adjs), g.pick(nouns)+"s")
		}
		if !seen[t] {
			seen[t] = true
			ts = append(ts, t)
		}
	}
	w.tests[spec] = ts
	return ts
}

// pythonDag makes an Airflow DAG file of about n lines.
func (g *gen) pythonDag(dag string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\"\"\"%s: %s.\"\"\"\nfrom __future__ import annotations\n\nimport logging\nfrom datetime import datetime, timedelta\n\nimport pendulum\nfrom airflow import DAG\nfrom airflow.operators.python import PythonOperator\nfrom airflow.providers.google.cloud.operators.bigquery import BigQueryInsertJobOperator\nfrom airflow.providers.google.cloud.operators.dataproc import DataprocCreateBatchOperator\nfrom airflow.utils.task_group import TaskGroup\n\nfrom eddy_common.clickhouse import ClickHouseHook\nfrom eddy_common.alerts import notify_oncall\n\nlog = logging.getLogger(__name__)\n\n", dag, g.comment())
	fmt.Fprintf(&b, "DEFAULT_ARGS = {\n    \"owner\": \"data-platform\",\n    \"retries\": %d,\n    \"retry_delay\": timedelta(minutes=%d),\n    \"on_failure_callback\": notify_oncall,\n    \"depends_on_past\": False,\n}\n\n", g.between(1, 4), g.between(2, 15))
	fns := 0
	for strings.Count(b.String(), "\n") < n-20 {
		fns++
		name := "_" + strings.ToLower(g.pick(verbs)) + "_" + g.pick(nouns) + "s"
		fmt.Fprintf(&b, "def %s(ds: str, **context) -> int:\n    \"\"\"%s.\"\"\"\n", name, upper1(g.comment()))
		for i := 0; i < g.between(4, 12); i++ {
			switch g.intn(7) {
			case 0:
				fmt.Fprintf(&b, "    hook = ClickHouseHook(clickhouse_conn_id=\"clickhouse_%s\")\n", g.pick([]string{"default", "rollups", "realtime"}))
			case 1:
				fmt.Fprintf(&b, "    rows = hook.get_records(\"SELECT count() FROM eddy.%s WHERE toDate(%s) = %%(ds)s\", parameters={\"ds\": ds})\n", g.pick(nouns)+"s_local", g.field())
			case 2:
				fmt.Fprintf(&b, "    log.info(\"%s %s for %%s: %%d rows\", ds, len(rows))\n", g.pick(verbs), g.pick(nouns))
			case 3:
				fmt.Fprintf(&b, "    if not rows:\n        raise ValueError(f\"no %s rows for {ds}\")\n", g.pick(nouns))
			case 4:
				fmt.Fprintf(&b, "    partition = context[\"data_interval_start\"].strftime(\"%%Y%%m%%d%%H\")\n")
			case 5:
				fmt.Fprintf(&b, "    # %s\n", g.comment())
			default:
				fmt.Fprintf(&b, "    %s = [r[0] for r in rows if r[%d] is not None]\n", g.camelSnake(), g.between(0, 3))
			}
		}
		b.WriteString("    return len(rows)\n\n\n")
	}
	fmt.Fprintf(&b, "with DAG(\n    dag_id=\"eddy_%s\",\n    schedule=\"%s\",\n    start_date=pendulum.datetime(2024, %d, 1, tz=\"UTC\"),\n    catchup=False,\n    max_active_runs=1,\n    default_args=DEFAULT_ARGS,\n    tags=[\"eddy\", \"%s\"],\n) as dag:\n", dag, g.pick([]string{"@hourly", "15 * * * *", "0 3 * * *", "30 2 * * *"}), g.between(1, 12), g.pick(nouns))
	var tasks []string
	for i := 0; i < g.between(3, 7); i++ {
		t := strings.ToLower(g.pick(verbs)) + "_" + g.pick(nouns) + "s"
		tasks = append(tasks, t)
		fmt.Fprintf(&b, "    %s = PythonOperator(task_id=\"%s\", python_callable=_%s_%ss)\n", t, t, strings.ToLower(g.pick(verbs)), g.pick(nouns))
	}
	fmt.Fprintf(&b, "\n    %s\n", strings.Join(tasks, " >> "))
	return b.String()
}

// snakeLower turns a camel-case identifier into snake case.
func snakeLower(s string) string { return snake(s) }

func (g *gen) camelSnake() string { return g.pick(adjs) + "_" + g.pick(nouns) + "s" }

// dbtModel makes a dbt model of about n lines.
func (g *gen) dbtModel(name string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{{\n  config(\n    materialized='incremental',\n    incremental_strategy='merge',\n    unique_key='%s',\n    partition_by={'field': 'session_date', 'data_type': 'date', 'granularity': 'day'},\n    cluster_by=['tenant_id'],\n    on_schema_change='append_new_columns'\n  )\n}}\n\n", g.field())
	ctes := 0
	b.WriteString("with ")
	for strings.Count(b.String(), "\n") < n-12 {
		if ctes > 0 {
			b.WriteString(",\n\n")
		}
		ctes++
		cte := g.camelSnake()
		fmt.Fprintf(&b, "%s as (\n    select\n", cte)
		cols := g.between(4, 11)
		for i := 0; i < cols; i++ {
			sep := ","
			if i == cols-1 {
				sep = ""
			}
			switch g.intn(5) {
			case 0:
				fmt.Fprintf(&b, "        timestamp_trunc(%s_ts, %s) as %s_%s%s\n", g.pick(nouns), g.pick([]string{"hour", "day"}), g.pick(nouns), g.pick([]string{"hour", "day"}), sep)
			case 1:
				fmt.Fprintf(&b, "        count(distinct %s_id) as %s_count%s\n", g.pick(nouns), g.pick(nouns), sep)
			case 2:
				fmt.Fprintf(&b, "        coalesce(%s_%s, '(none)') as %s_%s%s\n", g.pick(nouns), g.pick([]string{"name", "key", "code"}), g.pick(nouns), g.pick([]string{"name", "key", "code"}), sep)
			default:
				fmt.Fprintf(&b, "        %s_%s%s\n", g.pick(nouns), g.pick([]string{"id", "ts", "date", "count", "ms"}), sep)
			}
		}
		fmt.Fprintf(&b, "    from {{ ref('%s') }}\n", g.pick([]string{"stg_events", "stg_sessions", "stg_tenants", "int_session_pages"}))
		b.WriteString("    {% if is_incremental() %}\n    where session_date >= date_sub(_dbt_max_partition, interval 2 day)\n    {% endif %}\n")
		if g.chance(0.5) {
			fmt.Fprintf(&b, "    group by %d, %d\n", 1, 2)
		}
		b.WriteString(")")
	}
	b.WriteString("\n\nselect * from " + g.camelSnake() + "\n")
	return b.String()
}

// schemaYml makes a dbt schema file for the models named.
func (g *gen) schemaYml(models []string) string {
	var b strings.Builder
	b.WriteString("version: 2\n\nmodels:\n")
	for _, m := range models {
		fmt.Fprintf(&b, "  - name: %s\n    description: >\n      %s.\n    columns:\n", m, upper1(g.comment()))
		for i := 0; i < g.between(3, 7); i++ {
			fmt.Fprintf(&b, "      - name: %s_%s\n        data_tests:\n          - not_null\n", g.pick(nouns), g.pick([]string{"id", "ts", "date", "count"}))
			if g.chance(0.4) {
				b.WriteString("          - unique\n")
			}
			if g.chance(0.2) {
				fmt.Fprintf(&b, "          - accepted_values:\n              values: ['web', 'ios', 'android', 'server']\n")
			}
		}
	}
	return b.String()
}

// chMigration makes a ClickHouse migration of about n lines.
func (g *gen) chMigration(name string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "-- %s: %s\n\n", name, g.comment())
	for strings.Count(b.String(), "\n") < n {
		t := g.pick(nouns) + "s_" + g.pick([]string{"local", "daily", "hourly", "mv", "agg"})
		fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS eddy.%s ON CLUSTER '{cluster}'\n(\n", t)
		for i := 0; i < g.between(5, 12); i++ {
			fmt.Fprintf(&b, "    `%s_%s` %s,\n", g.pick(nouns), g.pick([]string{"id", "ts", "date", "count", "code"}), g.pick([]string{"UInt64", "DateTime64(3, 'UTC')", "LowCardinality(String)", "String", "UInt32", "Date", "Nullable(String)", "AggregateFunction(uniq, UInt64)"}))
		}
		fmt.Fprintf(&b, "    `inserted_at` DateTime DEFAULT now()\n)\nENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/eddy/%s', '{replica}', inserted_at)\nPARTITION BY toYYYYMM(%s_date)\nORDER BY (tenant_id, %s_date, %s_id)\nTTL %s_date + INTERVAL %d DAY\nSETTINGS index_granularity = 8192;\n\n", t, g.pick(nouns), g.pick(nouns), g.pick(nouns), g.pick(nouns), g.between(30, 400))
	}
	return b.String()
}

// hocon makes an application.conf of about n lines.
func (g *gen) hocon(m *module, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "eddy {\n  %s {\n", m.pkg)
	for strings.Count(b.String(), "\n") < n {
		sec := g.pick(nouns)
		fmt.Fprintf(&b, "    %s {\n", sec)
		for i := 0; i < g.between(3, 8); i++ {
			k := g.pick(adjs) + "-" + g.pick(nouns)
			switch g.intn(4) {
			case 0:
				fmt.Fprintf(&b, "      %s = %d\n", k, g.between(1, 10000))
			case 1:
				fmt.Fprintf(&b, "      %s = %d%s\n", k, g.between(1, 90), g.pick([]string{"s", "m", "ms", "h"}))
			case 2:
				fmt.Fprintf(&b, "      %s = ${?EDDY_%s_%s}\n", k, strings.ToUpper(m.pkg), strings.ToUpper(strings.ReplaceAll(k, "-", "_")))
			default:
				fmt.Fprintf(&b, "      %s = %v\n", k, g.chance(0.5))
			}
		}
		b.WriteString("    }\n")
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// numbered prints a file as read_file shows it, with line numbers.
func numbered(content string, from, to int) string {
	lines := strings.Split(strings.TrimRight(content, "\n"), "\n")
	if from < 1 {
		from = 1
	}
	if to <= 0 || to > len(lines) {
		to = len(lines)
	}
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i, lines[i-1])
	}
	return strings.TrimRight(b.String(), "\n")
}

// lineOf returns a non-blank line of content near the wanted index, and
// its 1-based number.
func lineOf(content string, want int) (string, int) {
	lines := strings.Split(content, "\n")
	if want >= len(lines) {
		want = len(lines) - 1
	}
	for i := want; i < len(lines); i++ {
		if t := strings.TrimSpace(lines[i]); len(t) > 12 && !strings.HasPrefix(t, "//") && !strings.HasPrefix(t, "/**") && !strings.HasPrefix(t, "import") && strings.Count(content, lines[i]) == 1 {
			return lines[i], i + 1
		}
	}
	for i := want; i >= 0; i-- {
		if t := strings.TrimSpace(lines[i]); len(t) > 12 && strings.Count(content, lines[i]) == 1 {
			return lines[i], i + 1
		}
	}
	return lines[0], 1
}

// exprLine returns a unique line of content near the wanted index that
// binds a value ("val x = ..." on one line), and its 1-based number.
func exprLine(content string, want int) (string, int) {
	lines := strings.Split(content, "\n")
	ok := func(l string) bool {
		t := strings.TrimSpace(l)
		return strings.HasPrefix(t, "val ") && strings.Contains(t, " = ") && !strings.HasSuffix(t, "{") && !strings.HasSuffix(t, "=>") && !strings.HasPrefix(t, "val (") && strings.Count(content, l) == 1
	}
	if want >= len(lines) {
		want = len(lines) - 1
	}
	for i := want; i < len(lines); i++ {
		if ok(lines[i]) {
			return lines[i], i + 1
		}
	}
	for i := want; i >= 0; i-- {
		if ok(lines[i]) {
			return lines[i], i + 1
		}
	}
	return lineOf(content, want)
}

// grepFiles searches the files as ripgrep with headings prints its
// matches.
func grepFiles(files []string, contents []string, word string, max int) (string, int) {
	var b strings.Builder
	n := 0
	for i, f := range files {
		var hits []string
		for li, l := range strings.Split(contents[i], "\n") {
			if strings.Contains(strings.ToLower(l), strings.ToLower(word)) {
				hits = append(hits, fmt.Sprintf("%d:%s", li+1, l))
			}
		}
		if len(hits) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(f + "\n")
		for _, h := range hits {
			if n >= max {
				break
			}
			b.WriteString(h + "\n")
			n++
		}
	}
	return strings.TrimRight(b.String(), "\n"), n
}
