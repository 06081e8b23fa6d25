package streamgen

import (
	"fmt"
	"strings"
	"time"
)

const chStg = "ch-stg-01.eddy.internal"

func chClient(query string) string {
	return fmt.Sprintf("clickhouse-client --host %s --secure --user agent --password \"$CH_STG_PASSWORD\" --query \"%s\"", chStg, query)
}

// The Airflow task: a DAG fails to import, then its load task fails on
// a missing ClickHouse column.
func (g *gen) taskAirflow() {
	var dags []string
	for _, d := range g.w.dags {
		if !g.w.dirty[dagPath(d)] {
			dags = append(dags, d)
		}
	}
	if len(dags) == 0 {
		g.taskDbt()
		return
	}
	d := dags[g.intn(len(dags))]
	dp := dagPath(d)
	body := g.w.file(dp, func() string {
		return strings.Replace(g.pythonDag(d, g.between(g.sc(150), g.sc(300))), "import ClickHouseHook\n", "import ClickHouseHook, InsertMode\n", 1)
	})
	task := firstTaskID(body)
	g.user(fmt.Sprintf("eddy_%s disappeared from the Airflow UI after yesterday's deploy and the hourly loads into ClickHouse are missing since then. Please fix. Keep the schedule and the task ids as they are, downstream sensors depend on them. The environment runs %s. Composer env for reference: %s",
		d, g.U("version", fixed("composer-2.9.7-airflow-2.9.3")), g.U("url", func() string {
			return fmt.Sprintf("https://%s-dot-%s.composer.googleusercontent.com/home", g.hex(26), gcpRegion)
		})))

	plugin := g.E("path", fixed("/opt/airflow/plugins/eddy_common/clickhouse.py"))
	var b out
	b.add("filepath                                   | error")
	b.add("===========================================+=====================================================================")
	b.err(fmt.Sprintf("/opt/airflow/dags/eddy/%s.py | Traceback (most recent call last):", d))
	b.err("                                           |   File \"<frozen importlib._bootstrap>\", line 488, in _call_with_frames_removed")
	importLine := strings.Count(body[:strings.Index(body, "import ClickHouseHook, InsertMode")], "\n") + 1
	b.err(fmt.Sprintf("                                           |   File \"/opt/airflow/dags/eddy/%s.py\", line %d, in <module>", d, importLine))
	b.err("                                           |     from eddy_common.clickhouse import ClickHouseHook, InsertMode")
	b.err(fmt.Sprintf("                                           | ImportError: cannot import name 'InsertMode' from 'eddy_common.clickhouse' (%s)", plugin))
	b.add("                                           |")
	r := b.res(0)
	r.read = true
	airflow := "docker compose -f airflow/docker-compose.yaml exec -T airflow-scheduler airflow"
	g.step("Checking the DAG import errors.", bash(airflow+" dags list-import-errors", r))
	g.step("Reading the DAG.", readCall(dp, res{out: numbered(body, 0, 0)}))
	pp := "airflow/plugins/eddy_common/clickhouse.py"
	pbody := g.w.file(pp, func() string { return g.pythonPlugin(g.sc(260)) })
	if g.chance(0.5) {
		o, _ := grepFiles([]string{pp}, []string{pbody}, "class ", 40)
		g.step("What the plugin exports now.", grepCall("class ", "airflow/plugins/eddy_common", res{out: o}))
	} else {
		g.step("What the plugin exports now.", readCall(pp, res{out: numbered(pbody, 0, 0)}))
	}

	batch := g.W("key", func() string { return strings.ToUpper(strings.ReplaceAll(g.writtenKey(), "-", "_")) })
	g.step("InsertMode was renamed to WriteMode in the plugin. Fixing the import and naming the batch size.",
		replaceCall(dp, "from eddy_common.clickhouse import ClickHouseHook, InsertMode\n", fmt.Sprintf("from eddy_common.clickhouse import ClickHouseHook, WriteMode\n\n# Rows per INSERT; ClickHouse prefers few large inserts.\n%s = 50_000\n\n\ndef _%s(rows):\n    \"\"\"Yields the rows in batches of the size above.\"\"\"\n    for i in range(0, len(rows), %s):\n        yield rows[i : i + %s]\n", batch, g.W("id", func() string { return snakeLower(g.writtenIdent()) }), batch, batch)))
	g.w.dirty[dp] = true
	g.step("", bash(airflow+" dags list-import-errors", res{out: "No data found", read: true}))

	// The load task fails.
	day := g.now.AddDate(0, 0, -1).Truncate(time.Hour)
	date := day.Format("2006-01-02T15:04:05+00:00")
	tmpRun := fmt.Sprintf("__airflow_temporary_run_%s__", g.now.Format("2006-01-02T15:04:05.000000+00:00"))
	b = out{}
	g.airflowPreamble(&b, d, task, tmpRun)
	b.add(g.airflowLine(d+".py:61", "INFO", fmt.Sprintf("loading partition %s into eddy.sessions_local", day.Format("2006010215"))))
	b.add(g.airflowLine("clickhouse.py:118", "INFO", fmt.Sprintf("POST https://%s:8443/?database=eddy&query=INSERT+INTO+eddy.sessions_local+FORMAT+RowBinary (%d rows)", chStg, g.between(10000, 90000))))
	b.err(g.airflowLine(g.E("site", func() string { return fmt.Sprintf("%s.py:%d", d, g.between(62, 140)) }), "ERROR", fmt.Sprintf("insert of partition %s failed: HTTP 500 from ClickHouse", day.Format("2006010215"))))
	site := g.E("site", fixed("taskinstance.py:3310"))
	code := g.E("code", fixed("Code: 16"))
	tuuid := g.E("uuid", g.uuid)
	b.err(g.airflowLine(site, "ERROR", "Task failed with exception"))
	b.err("Traceback (most recent call last):")
	b.err("  File \"/home/airflow/.local/lib/python3.11/site-packages/airflow/models/taskinstance.py\", line 767, in _execute_task")
	b.err("    result = _execute_callable(context=context, **execute_callable_kwargs)")
	b.err("             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^")
	b.err("  File \"/home/airflow/.local/lib/python3.11/site-packages/airflow/models/taskinstance.py\", line 733, in _execute_callable")
	b.err("    return ExecutionCallableRunner(")
	b.err("           ^^^^^^^^^^^^^^^^^^^^^^^^")
	b.err("  File \"/home/airflow/.local/lib/python3.11/site-packages/airflow/operators/python.py\", line 238, in execute")
	b.err("    return_value = self.execute_callable()")
	b.err("                   ^^^^^^^^^^^^^^^^^^^^^^^")
	b.err(fmt.Sprintf("  File \"/opt/airflow/dags/eddy/%s.py\", line %d, in _%s", d, g.between(40, 120), task))
	b.err("    hook.insert_rows(\"eddy.sessions_local\", rows, column_names=COLUMNS)")
	b.err(fmt.Sprintf("  File \"%s\", line %d, in insert_rows", plugin, g.between(100, 240)))
	b.err("    raise ClickHouseError(resp.status_code, resp.text)")
	b.err(fmt.Sprintf("eddy_common.clickhouse.ClickHouseError: (500, '%s. DB::Exception: No such column session_len_ms in table eddy.sessions_local (%s). (NO_SUCH_COLUMN_IN_TABLE) (version 24.8.4.13 (official build))\\n')", code, tuuid))
	b.err(g.airflowLine("taskinstance.py:1225", "INFO", fmt.Sprintf("Marking task as FAILED. dag_id=eddy_%s, task_id=%s, run_id=%s, execution_date=%s, start_date=, end_date=%s", d, task, tmpRun, day.Format("20060102T150405"), g.now.Format("20060102T150405"))))
	g.step("The DAG imports again. Running the load task for one hour in the past.", bash(fmt.Sprintf("%s tasks test eddy_%s %s %s", airflow, d, task, date), b.res(1)))

	g.say("The insert fails because staging ClickHouse has no session_len_ms column yet: the DAG was deployed before its migration. I can add the column on staging with a migration (ALTER TABLE ... ADD COLUMN IF NOT EXISTS) or drop the column from the DAG's insert. Which one?")
	g.user(fmt.Sprintf("Add the column on staging. Prod migrations go through the change calendar (%s), leave prod alone.", g.U("id", func() string { return fmt.Sprintf("CAB-%d", g.between(1000, 9999)) })))

	b = out{}
	var rows [][]string
	for i := 0; i < g.between(8, 16); i++ {
		rows = append(rows, []string{fmt.Sprintf("%s_%s", g.pick(nouns), g.pick([]string{"id", "ts", "date", "count", "ms"})), g.pick([]string{"UInt64", "DateTime64(3, 'UTC')", "LowCardinality(String)", "String", "UInt32", "Date"})})
	}
	b.add(prettyCompact([]string{"name", "type"}, rows))
	r = b.res(0)
	r.read = true
	g.step("Current columns on staging.", bash(chClient("SELECT name, type FROM system.columns WHERE database = 'eddy' AND table = 'sessions_local' FORMAT PrettyCompact"), r))

	mp := g.W("path", func() string { return fmt.Sprintf("clickhouse/migrations/%04d_sessions_add_len_ms.sql", g.w.nextMig) })
	g.w.nextMig++
	g.step("Writing the migration.", writeCall(mp, fmt.Sprintf("-- Adds the session length the hourly DAG inserts.\nALTER TABLE eddy.sessions_local ON CLUSTER '{cluster}'\n    ADD COLUMN IF NOT EXISTS session_len_ms UInt64 DEFAULT 0 CODEC(T64, ZSTD(1)) AFTER session_end;\n\nALTER TABLE eddy.sessions ON CLUSTER '{cluster}'\n    ADD COLUMN IF NOT EXISTS session_len_ms UInt64 DEFAULT 0 AFTER session_end;\n")))
	g.w.dirty[mp] = true
	g.step("Applying it on staging.", bash(fmt.Sprintf("clickhouse-client --host %s --secure --user agent --password \"$CH_STG_PASSWORD\" --multiquery < %s", chStg, mp), res{}))

	b = out{}
	run := g.P("id", func() string {
		return fmt.Sprintf("__airflow_temporary_run_%s__", g.now.Format("2006-01-02T15:04:05")+fmt.Sprintf(".%06d+00:00", g.intn(999999)))
	})
	g.airflowPreamble(&b, d, task, run)
	b.add(g.airflowLine(d+".py:61", "INFO", fmt.Sprintf("loading partition %s into eddy.sessions_local", day.Format("2006010215"))))
	for i := 0; i < g.sc(6); i++ {
		b.add(g.airflowLine("clickhouse.py:118", "INFO", fmt.Sprintf("POST https://%s:8443/?database=eddy&query=INSERT+INTO+eddy.sessions_local+FORMAT+RowBinary (%d rows)", chStg, 50000)))
	}
	b.add(g.airflowLine("clickhouse.py:127", "INFO", "X-ClickHouse-Query-Id: "+g.P("uuid", g.uuid)))
	b.add(g.airflowLine("python.py:240", "INFO", fmt.Sprintf("Done. Returned value was: %d", g.between(100000, 400000))))
	b.add(g.airflowLine("taskinstance.py:1225", "INFO", fmt.Sprintf("Marking task as SUCCESS. dag_id=eddy_%s, task_id=%s, run_id=%s, execution_date=%s, start_date=%s, end_date=%s", d, task, run, day.Format("20060102T150405"), g.now.Format("20060102T150405"), g.now.Add(9*time.Second).Format("20060102T150405"))))
	g.step("Running the task again.", bash(fmt.Sprintf("%s tasks test eddy_%s %s %s", airflow, d, task, date), b.res(0)))
	g.step("", g.commit(fmt.Sprintf("airflow: fix %s import, add session_len_ms migration", d), []string{dp, mp}, []string{mp}))
	g.say(fmt.Sprintf("eddy_%s imports again and the load task succeeds on staging. The import was broken by the plugin's rename; the insert failed on a column that only existed in an unapplied migration, now added on staging. Schedule and task ids are unchanged; prod is untouched.", d))
}

func dagPath(d string) string { return "airflow/dags/eddy/" + d + ".py" }

func firstTaskID(body string) string {
	i := strings.Index(body, "task_id=\"")
	if i < 0 {
		return "load_sessions"
	}
	rest := body[i+len("task_id=\""):]
	return rest[:strings.Index(rest, "\"")]
}

func (g *gen) airflowPreamble(b *out, d, task, run string) {
	b.add(g.airflowLine("dagbag.py:588", "INFO", "Filling up the DagBag from /opt/airflow/dags"))
	for i := 0; i < g.sc(20); i++ {
		b.add(g.airflowLine("providers_manager.py:"+itoa(g.between(280, 320)), "INFO", fmt.Sprintf("Optional provider feature disabled when importing 'airflow.providers.google.cloud.%s' from 'apache-airflow-providers-google' package", g.pick([]string{"hooks.leveldb.LevelDBHook", "operators.looker.LookerStartPdtBuildOperator", "hooks.dataflow.DataflowHook", "transfers.sftp_to_gcs.SFTPToGCSOperator"}))))
	}
	b.add(g.airflowLine("taskinstance.py:2614", "INFO", fmt.Sprintf("Dependencies all met for dep_context=non-requeueable deps ti=<TaskInstance: eddy_%s.%s %s [None]>", d, task, run)))
	b.add(g.airflowLine("taskinstance.py:2614", "INFO", fmt.Sprintf("Dependencies all met for dep_context=requeueable deps ti=<TaskInstance: eddy_%s.%s %s [None]>", d, task, run)))
	b.add(g.airflowLine("taskinstance.py:2867", "INFO", "Starting attempt 1 of 4"))
	b.add(g.airflowLine("taskinstance.py:2890", "INFO", fmt.Sprintf("Executing <Task(PythonOperator): %s> on %s", task, g.now.AddDate(0, 0, -1).Truncate(time.Hour).Format("2006-01-02 15:04:05+00:00"))))
	b.add(g.airflowLine("taskinstance.py:3134", "INFO", fmt.Sprintf("Exporting env vars: AIRFLOW_CTX_DAG_OWNER='data-platform' AIRFLOW_CTX_DAG_ID='eddy_%s' AIRFLOW_CTX_TASK_ID='%s' AIRFLOW_CTX_TRY_NUMBER='1' AIRFLOW_CTX_DAG_RUN_ID='%s'", d, task, run)))
	b.add(g.airflowLine("base.py:84", "INFO", "Retrieving connection 'clickhouse_default'"))
}

// pythonPlugin is the shared Airflow plugin of the product.
func (g *gen) pythonPlugin(n int) string {
	var b strings.Builder
	b.WriteString("\"\"\"ClickHouse access for Eddy's DAGs over the HTTP interface.\"\"\"\nfrom __future__ import annotations\n\nimport enum\nimport logging\nfrom typing import Any, Iterable, Sequence\n\nimport requests\nfrom airflow.hooks.base import BaseHook\n\nlog = logging.getLogger(__name__)\n\n\nclass WriteMode(enum.Enum):\n    APPEND = \"append\"\n    REPLACE_PARTITION = \"replace_partition\"\n\n\nclass ClickHouseError(RuntimeError):\n    \"\"\"A ClickHouse HTTP error with its status and body.\"\"\"\n\n\nclass ClickHouseHook(BaseHook):\n    conn_name_attr = \"clickhouse_conn_id\"\n    default_conn_name = \"clickhouse_default\"\n\n    def __init__(self, clickhouse_conn_id: str = default_conn_name) -> None:\n        super().__init__()\n        self.clickhouse_conn_id = clickhouse_conn_id\n\n")
	for strings.Count(b.String(), "\n") < n {
		name := strings.ToLower(g.pick(verbs)) + "_" + g.pick(nouns) + "s"
		fmt.Fprintf(&b, "    def %s(self, table: str, rows: Iterable[Sequence[Any]], **kwargs: Any) -> int:\n        \"\"\"%s.\"\"\"\n", name, upper1(g.comment()))
		for i := 0; i < g.between(4, 10); i++ {
			switch g.intn(5) {
			case 0:
				b.WriteString("        conn = self.get_connection(self.clickhouse_conn_id)\n")
			case 1:
				b.WriteString("        resp = requests.post(self._url(conn), params={\"query\": query}, data=payload, timeout=300)\n")
			case 2:
				b.WriteString("        if resp.status_code != 200:\n            raise ClickHouseError(resp.status_code, resp.text)\n")
			case 3:
				fmt.Fprintf(&b, "        log.info(\"%s %%s: %%d rows\", table, len(batch))\n", g.pick(verbs))
			default:
				fmt.Fprintf(&b, "        # %s\n", g.comment())
			}
		}
		b.WriteString("        return len(batch)\n\n")
	}
	return b.String()
}

var newMarts = []string{"fct_session_funnels", "fct_tenant_conversion", "fct_referrer_paths", "fct_campaign_touches", "fct_device_cohorts", "fct_checkout_steps", "fct_geo_sessions", "fct_bot_share", "fct_page_depth", "fct_return_visits"}

// The dbt task: a new mart, a database error, a failing uniqueness test.
func (g *gen) taskDbt() {
	var free []string
	for _, m := range newMarts {
		if !g.w.dirty["dbt/models/marts/"+m+".sql"] {
			free = append(free, m)
		}
	}
	if len(free) == 0 {
		g.taskBigQuery()
		return
	}
	mart := free[g.intn(len(free))]
	name := g.W("path", fixed("dbt/models/marts/"+mart+".sql"))
	g.user(fmt.Sprintf("Please add a %s mart to the dbt project: daily numbers per tenant built from int_funnel_steps and stg_sessions. Spec: %s (tracked in %s)\n\nConstraints: incremental, partitioned by session_date, and never run --full-refresh against prod, the table family is several TB.", mart, g.userURL(3), g.U("id", func() string { return fmt.Sprintf("DATA-%d", g.between(100, 999)) })))

	var b out
	b.add("dbt/models/intermediate:\nint_funnel_steps.sql\nint_session_pages.sql\nschema.yml\n\ndbt/models/marts:")
	for _, m := range g.w.models {
		if strings.HasPrefix(m, "fct_") || strings.HasPrefix(m, "dim_") {
			b.add(m + ".sql")
		}
	}
	b.add("schema.yml")
	r := b.res(0)
	r.read = true
	g.step("Looking at the existing models.", bash("ls dbt/models/intermediate dbt/models/marts", r))
	src := "dbt/models/intermediate/int_funnel_steps.sql"
	sbody := g.w.file(src, func() string { return g.dbtModel("int_funnel_steps", g.sc(160)) })
	ref := "dbt/models/marts/" + g.pick([]string{"fct_sessions", "fct_daily_active", "fct_retention_weekly"}) + ".sql"
	rbody := g.w.file(ref, func() string { return g.dbtModel(ref, g.sc(180)) })
	g.step("Reading the source model and an existing incremental mart for conventions.", readCall(src, res{out: numbered(sbody, 0, 0)}), readCall(ref, res{out: numbered(rbody, 0, 0)}))
	sy := "dbt/models/marts/schema.yml"
	if !g.w.dirty[sy] {
		sybody := g.w.file(sy, func() string { return g.schemaYml(g.w.models) })
		g.step("", readCall(sy, res{out: numbered(sybody, 0, 0)}))
	}
	proj := "dbt/dbt_project.yml"
	if g.chance(0.5) {
		pb := g.w.file(proj, func() string { return g.dbtProject() })
		g.step("", readCall(proj, res{out: numbered(pb, 0, 0)}))
	}

	horizon := g.W("key", func() string { return strings.ReplaceAll(g.writtenKey(), "-", "_") })
	model := fmt.Sprintf("{{\n  config(\n    materialized='incremental',\n    incremental_strategy='merge',\n    unique_key=['tenant_id', 'session_date', 'funnel_id'],\n    partition_by={'field': 'session_date', 'data_type': 'date', 'granularity': 'day'},\n    cluster_by=['tenant_id', 'funnel_id']\n  )\n}}\n\n-- Daily funnel conversion per tenant.\nwith steps as (\n    select\n        tenant_id,\n        funnel_id,\n        session_id,\n        date(step_ts) as session_date,\n        step_index,\n        step_ts\n    from {{ ref('int_funnel_steps') }}\n    {%% if is_incremental() %%}\n    where date(step_ts) >= date_sub(_dbt_max_partition, interval {{ var('%s', 3) }} day)\n    {%% endif %%}\n),\n\nsessions as (\n    select session_id, tenant_id, device_type from {{ ref('stg_sessions') }}\n)\n\nselect\n    s.tenant_id,\n    s.funnel_id,\n    s.session_date,\n    count(distinct s.session_id) as sessions_entered,\n    count(distinct if(s.step_index = max_step, s.session_id, null)) as sessions_completed\nfrom steps s\njoin sessions using (session_id)\ngroup by 1, 2, 3\n", horizon)
	g.step("Writing the model.", writeCall(name, model))
	g.w.dirty[name] = true
	test := fmt.Sprintf("unique_grain_%s", mart)
	meta := g.W("key", func() string { return strings.ReplaceAll(g.writtenKey(), "-", "_") })
	g.step("And its tests.", writeCall("dbt/models/marts/"+mart+".yml", fmt.Sprintf("version: 2\n\nmodels:\n  - name: %s\n    description: Daily funnel conversion per tenant.\n    meta:\n      owner: data-platform\n      %s: 0.02\n    data_tests:\n      - dbt_utils.unique_combination_of_columns:\n          name: %s\n          combination_of_columns: [tenant_id, funnel_id, session_date]\n    columns:\n      - name: tenant_id\n        data_tests: [not_null]\n      - name: session_date\n        data_tests: [not_null]\n", mart, meta, test)))

	dbtCmd := fmt.Sprintf("cd dbt && dbt build --select %s --target dev", mart)
	b = out{}
	g.dbtHead(&b)
	b.add(fmt.Sprintf("%s  1 of 4 START sql incremental model dbt_agent.%s ............... [RUN]", g.clock(), mart))
	b.err(fmt.Sprintf("%s  1 of 4 ERROR creating sql incremental model dbt_agent.%s ...... [ERROR in %.2fs]", g.clock(), mart, float64(g.between(100, 900))/100))
	for i := 2; i <= 4; i++ {
		b.add(fmt.Sprintf("%s  %d of 4 SKIP test %s ................. [SKIP]", g.clock(), i, g.pick([]string{"not_null_" + mart + "_tenant_id", "not_null_" + mart + "_session_date", "unique grain of " + mart})))
	}
	b.add(fmt.Sprintf("%s  \n%s  Finished running 1 incremental model, 3 data tests in 0 hours 0 minutes and %.2f seconds (%.2fs).\n%s  ", g.clock(), g.clock(), 5.91, 5.91, g.clock()))
	b.err(fmt.Sprintf("%s  Completed with 1 error, 0 partial successes, and 0 warnings:", g.clock()))
	b.add(g.clock() + "  ")
	pos := g.E("site", func() string { return fmt.Sprintf("at [%d:%d]", g.between(12, 40), g.between(5, 30)) })
	b.err(fmt.Sprintf("%s    Database Error in model %s (models/marts/%s.sql)", g.clock(), mart, mart))
	b.err(fmt.Sprintf("  Unrecognized name: max_step %s", pos))
	b.err("  compiled code at " + g.E("path", fixed("target/run/eddy_marts/models/marts/"+mart+".sql")))
	b.add(g.clock() + "  ")
	b.add(fmt.Sprintf("%s  Done. PASS=0 WARN=0 ERROR=1 SKIP=3 NO-OP=0 TOTAL=4", g.clock()))
	g.step("Building it on my dev dataset.", bash(dbtCmd, b.res(1)))

	g.step("max_step is never defined: I meant the last step of each funnel. Adding it as a window over the funnel.",
		replaceCall(name, "        step_ts\n    from {{ ref('int_funnel_steps') }}", "        step_ts,\n        max(step_index) over (partition by tenant_id, funnel_id) as max_step\n    from {{ ref('int_funnel_steps') }}"))

	b = out{}
	g.dbtHead(&b)
	b.add(fmt.Sprintf("%s  1 of 4 START sql incremental model dbt_agent.%s ............... [RUN]", g.clock(), mart))
	b.add(fmt.Sprintf("%s  1 of 4 OK created sql incremental model dbt_agent.%s .......... [CREATE TABLE (%d.%dk rows, %d.%d GiB processed) in %.2fs]", g.clock(), mart, g.between(10, 900), g.intn(10), g.between(1, 40), g.intn(10), float64(g.between(500, 3000))/100))
	b.add(fmt.Sprintf("%s  2 of 4 START test not_null_%s_tenant_id ......................... [RUN]", g.clock(), mart))
	b.add(fmt.Sprintf("%s  2 of 4 PASS not_null_%s_tenant_id ............................... [PASS in 1.41s]", g.clock(), mart))
	b.add(fmt.Sprintf("%s  3 of 4 START test not_null_%s_session_date ...................... [RUN]", g.clock(), mart))
	b.add(fmt.Sprintf("%s  3 of 4 PASS not_null_%s_session_date ............................ [PASS in 1.38s]", g.clock(), mart))
	b.add(fmt.Sprintf("%s  4 of 4 START test %s ..................... [RUN]", g.clock(), test))
	b.err(fmt.Sprintf("%s  4 of 4 FAIL %d %s ......................... [FAIL %d in 2.02s]", g.clock(), g.between(20, 400), test, g.between(20, 400)))
	b.add(g.clock() + "  ")
	b.err(fmt.Sprintf("%s  Completed with 1 error, 0 partial successes, and 0 warnings:", g.clock()))
	b.add(g.clock() + "  ")
	b.err(fmt.Sprintf("%s  Failure in test %s (models/marts/%s.yml)", g.clock(), test, mart))
	b.err(fmt.Sprintf("%s    Got %d results, configured to fail if != 0", g.clock(), g.between(20, 400)))
	b.add(g.clock() + "  ")
	b.err(fmt.Sprintf("%s    compiled code at %s", g.clock(), g.E("path", fixed("target/compiled/eddy_marts/models/marts/"+mart+".yml/"+test+".sql"))))
	b.add(g.clock() + "  ")
	b.add(fmt.Sprintf("%s  Done. PASS=3 WARN=0 ERROR=1 SKIP=0 NO-OP=0 TOTAL=4", g.clock()))
	g.step("", bash(dbtCmd, b.res(1)))

	b = out{}
	b.add(fmt.Sprintf("Waiting on %s ... (1s) Current status: DONE   ", g.P("id", func() string {
		return fmt.Sprintf("bqjob_r%s_%016x_1", g.hex(16), 0x18f0000000000000+g.r.Int64N(1<<40))
	})))
	var rows [][]string
	for i := 0; i < 5; i++ {
		rows = append(rows, []string{"tnt_" + g.lowerDigits(10), "f" + itoa(g.between(1, 30)), g.now.AddDate(0, 0, -g.between(1, 3)).Format("2006-01-02"), itoa(g.between(2, 4))})
	}
	b.add(bqTable([]string{"tenant_id", "funnel_id", "session_date", "n"}, rows))
	r = b.res(0)
	r.read = true
	g.step("Which rows are duplicated?", bash(fmt.Sprintf("bq query --project_id=%s --use_legacy_sql=false 'select tenant_id, funnel_id, session_date, count(*) as n from dbt_agent.%s group by 1, 2, 3 having n > 1 order by n desc limit 5'", stgProj, mart), r))
	g.say("The duplicates come from sessions that are joined once per device row in stg_sessions. Aggregating stg_sessions to one row per session before the join fixes the grain.")
	g.step("", replaceCall(name, "    select session_id, tenant_id, device_type from {{ ref('stg_sessions') }}", "    select session_id, any_value(tenant_id) as tenant_id, any_value(device_type) as device_type\n    from {{ ref('stg_sessions') }}\n    group by session_id"))

	b = out{}
	g.dbtHead(&b)
	for i, t := range []string{"model dbt_agent." + mart, "test not_null_" + mart + "_tenant_id", "test not_null_" + mart + "_session_date", "test " + test} {
		b.add(fmt.Sprintf("%s  %d of 4 START %s ................ [RUN]", g.clock(), i+1, t))
		if i == 0 {
			b.add(fmt.Sprintf("%s  1 of 4 OK created sql incremental model dbt_agent.%s .......... [MERGE (%d.%dk rows, %d.%d GiB processed) in %.2fs]", g.clock(), mart, g.between(10, 900), g.intn(10), g.between(1, 40), g.intn(10), float64(g.between(500, 3000))/100))
		} else {
			b.add(fmt.Sprintf("%s  %d of 4 PASS %s ........................ [PASS in %.2fs]", g.clock(), i+1, strings.TrimPrefix(t, "test "), float64(g.between(100, 300))/100))
		}
	}
	b.add(fmt.Sprintf("%s  \n%s  Finished running 1 incremental model, 3 data tests in 0 hours 0 minutes and %.2f seconds (%.2fs).\n%s  \n%s  Completed successfully\n%s  \n%s  Done. PASS=4 WARN=0 ERROR=0 SKIP=0 NO-OP=0 TOTAL=4", g.clock(), g.clock(), 31.07, 31.07, g.clock(), g.clock(), g.clock(), g.clock()))
	g.step("", bash(dbtCmd, b.res(0)))

	b = out{}
	b.add("{")
	b.add(fmt.Sprintf("  \"clustering\": {\n    \"fields\": [\n      \"tenant_id\",\n      \"funnel_id\"\n    ]\n  },\n  \"creationTime\": \"%d\",", g.now.UnixMilli()-int64(g.between(1e5, 9e5))))
	b.add(fmt.Sprintf("  \"etag\": \"%s\",", g.P("id", func() string { return g.b64(22) + "==" })))
	b.add(fmt.Sprintf("  \"id\": \"%s:dbt_agent.%s\",\n  \"kind\": \"bigquery#table\",\n  \"lastModifiedTime\": \"%d\",\n  \"location\": \"EU\",\n  \"numActiveLogicalBytes\": \"%d\",\n  \"numBytes\": \"%d\",\n  \"numRows\": \"%d\",", stgProj, mart, g.now.UnixMilli(), g.between(1e8, 9e8), g.between(1e8, 9e8), g.between(1e5, 9e5)))
	b.add("  \"schema\": {\n    \"fields\": [")
	for i, f := range []string{"tenant_id:STRING", "funnel_id:STRING", "session_date:DATE", "sessions_entered:INTEGER", "sessions_completed:INTEGER"} {
		kv := strings.Split(f, ":")
		sep := ","
		if i == 4 {
			sep = ""
		}
		b.add(fmt.Sprintf("      {\n        \"mode\": \"NULLABLE\",\n        \"name\": \"%s\",\n        \"type\": \"%s\"\n      }%s", kv[0], kv[1], sep))
	}
	b.add("    ]\n  },")
	b.add(fmt.Sprintf("  \"selfLink\": \"%s\",", g.P("url", fixed(fmt.Sprintf("https://bigquery.googleapis.com/bigquery/v2/projects/%s/datasets/dbt_agent/tables/%s", stgProj, mart)))))
	b.add(fmt.Sprintf("  \"tableReference\": {\n    \"datasetId\": \"dbt_agent\",\n    \"projectId\": \"%s\",\n    \"tableId\": \"%s\"\n  },\n  \"timePartitioning\": {\n    \"field\": \"session_date\",\n    \"type\": \"DAY\"\n  },\n  \"type\": \"TABLE\"\n}", stgProj, mart))
	r = b.res(0)
	r.read = true
	g.step("Checking the table's partitioning and clustering.", bash(fmt.Sprintf("bq show --format=prettyjson %s:dbt_agent.%s", stgProj, mart), r))
	yml := "dbt/models/marts/" + mart + ".yml"
	g.step("", g.commit("dbt: add "+mart+" mart", []string{name, yml}, []string{name, yml}))
	g.say(fmt.Sprintf("%s is in: incremental merge on (tenant_id, funnel_id, session_date), partitioned by session_date and clustered by tenant and funnel, with a uniqueness test on its grain. It builds and passes on my dev dataset; I ran nothing against prod and no full refresh.", mart))
}

func (g *gen) clock() string { return g.tick(0, 2).Format("15:04:05") }

func (g *gen) dbtHead(b *out) {
	b.add(g.clock() + "  Running with dbt=1.8.8")
	b.add(g.clock() + "  Registered adapter: bigquery=1.8.3")
	b.add(fmt.Sprintf("%s  Found %d models, 3 seeds, %d data tests, 14 sources, 921 macros", g.clock(), len(g.w.models)+39, g.between(200, 240)))
	b.add(g.clock() + "  ")
	b.add(g.clock() + "  Concurrency: 8 threads (target='dev')")
	b.add(g.clock() + "  ")
}

func (g *gen) dbtProject() string {
	var b strings.Builder
	b.WriteString("name: eddy_marts\nversion: '1.4.0'\nconfig-version: 2\nprofile: eddy\n\nmodel-paths: [\"models\"]\nanalysis-paths: [\"analyses\"]\ntest-paths: [\"tests\"]\nseed-paths: [\"seeds\"]\nmacro-paths: [\"macros\"]\nsnapshot-paths: [\"snapshots\"]\n\nclean-targets:\n  - target\n  - dbt_packages\n\nvars:\n  eddy_start_date: '2023-06-01'\n  bot_score_threshold: 0.8\n\nmodels:\n  eddy_marts:\n    +persist_docs:\n      relation: true\n      columns: true\n    staging:\n      +materialized: view\n      +schema: staging\n    intermediate:\n      +materialized: ephemeral\n    marts:\n      +materialized: table\n      +schema: analytics\n      +labels:\n        team: data-platform\n")
	for i := 0; i < g.sc(30); i++ {
		fmt.Fprintf(&b, "      # %s\n", g.comment())
	}
	return b.String()
}

// The ClickHouse task: a materialized view stops filling; its
// replacement fails twice before it works.
func (g *gen) taskClickHouse() {
	g.user(fmt.Sprintf("The realtime dashboard shows zero sessions for the last hour on staging: %s\nThe panel's query id from the inspector is %s. Probably the ClickHouse side. Constraints: no OPTIMIZE FINAL on the big tables during business hours, and keep any backfill under 8 GB of memory per query. And stay away from prod (%s).",
		g.userURL(1), g.U("uuid", g.uuid), g.U("hostport", fixed("ch-prod-01.eddy.internal:9440"))))

	var rows [][]string
	partLabel := g.intn(8)
	for i := 0; i < g.sc(90); i++ {
		p := fmt.Sprintf("%s_%d_%d_%d", g.now.Format("200601"), g.between(1, 4000), g.between(4000, 9000), g.between(0, 6))
		if i == partLabel {
			p = g.P("id", fixed(p))
		}
		rows = append(rows, []string{p, g.pick([]string{"sessions_local", "pageviews_local", "events_raw"}), itoa(g.between(1e4, 9e6)), fmt.Sprintf("%.2f MiB", float64(g.between(100, 90000))/100), g.now.Add(-time.Duration(g.between(60, 90000)) * time.Second).Format("2006-01-02 15:04:05")})
	}
	var b out
	b.add(prettyCompact([]string{"name", "table", "rows", "size", "modification_time"}, rows))
	r := b.res(0)
	r.read = true
	g.step("Looking at the newest parts of the session tables.", bash(chClient("SELECT name, table, rows, formatReadableSize(bytes_on_disk) AS size, modification_time FROM system.parts WHERE database = 'eddy' AND active ORDER BY modification_time DESC LIMIT 24 FORMAT PrettyCompact"), r))

	mv := g.w.migs[len(g.w.migs)-1]
	b = out{}
	erow := []string{g.E("code", fixed("UNKNOWN_IDENTIFIER")), "47", itoa(g.between(100, 9000)), g.now.Add(-time.Duration(g.between(60, 600)) * time.Second).Format("2006-01-02 15:04:05"), "Missing columns: 'session_start' while processing query: 'SELECT tenant_id, toStartOfHour(session_start) AS hour ...', required columns: 'session_start' 'tenant_id'", "0"}
	other := [][]string{
		{"NETWORK_ERROR", "210", itoa(g.between(1, 40)), g.now.Add(-time.Duration(g.between(3600, 90000)) * time.Second).Format("2006-01-02 15:04:05"), "Connection reset by peer, while writing to socket", "1"},
		{"TIMEOUT_EXCEEDED", "159", itoa(g.between(1, 40)), g.now.Add(-time.Duration(g.between(3600, 90000)) * time.Second).Format("2006-01-02 15:04:05"), "Timeout exceeded: elapsed 30.0 seconds, maximum: 30", "0"},
	}
	tbl := prettyCompact([]string{"name", "code", "value", "last_error_time", "last_error_message", "remote"}, append([][]string{erow}, other...))
	for i, l := range strings.Split(tbl, "\n") {
		if i == 1 {
			b.err(l)
		} else {
			b.add(l)
		}
	}
	r = b.res(0)
	r.read = true
	g.step("Any recent errors on the server?", bash(chClient("SELECT name, code, value, last_error_time, last_error_message, remote FROM system.errors WHERE last_error_time > now() - INTERVAL 1 DAY ORDER BY last_error_time DESC FORMAT PrettyCompact"), r))

	mp := "clickhouse/migrations/" + mv + ".sql"
	mbody := g.w.file(mp, func() string { return g.chMigration(mv, g.sc(260)) })
	g.step("The view reads a column that no longer exists. Reading the view's migration.", readCall(mp, res{out: numbered(mbody, 0, 0)}))
	{
		prev := "clickhouse/migrations/" + g.w.migs[g.intn(len(g.w.migs)-1)] + ".sql"
		pbody := g.w.file(prev, func() string { return g.chMigration(prev, g.sc(200)) })
		g.step("", readCall(prev, res{out: numbered(pbody, 0, 0)}))
	}
	b = out{}
	b.add(fmt.Sprintf("CREATE MATERIALIZED VIEW eddy.session_rollup_mv TO eddy.session_rollup_hourly\\n(\\n    `tenant_id` LowCardinality(String),\\n    `hour` DateTime,\\n    `sessions` AggregateFunction(uniq, String),\\n    `duration_ms` AggregateFunction(sum, UInt64)\\n)\\nAS SELECT\\n    tenant_id,\\n    toStartOfHour(session_start) AS hour,\\n    uniqState(session_id) AS sessions,\\n    sumState(duration_ms) AS duration_ms\\nFROM eddy.sessions_local\\nGROUP BY\\n    tenant_id,\\n    hour"))
	r = b.res(0)
	r.read = true
	g.step("", bash(chClient("SHOW CREATE TABLE eddy.session_rollup_mv"), r))

	name := fmt.Sprintf("%04d_session_rollup_mv_v%d", g.w.nextMig, g.between(2, 9))
	g.w.nextMig++
	np := g.W("path", fixed("clickhouse/migrations/"+name+".sql"))
	setting := g.W("key", fixed("max_bytes_before_external_group_by"))
	src := "sessions_local"
	wrongTable := g.chance(0.5)
	if wrongTable {
		src = "sessions_local_v2"
	}
	body := "-- Recreates the hourly session rollup on the renamed column.\nDROP VIEW IF EXISTS eddy.session_rollup_mv ON CLUSTER '{cluster}';\n\nCREATE MATERIALIZED VIEW eddy.session_rollup_mv ON CLUSTER '{cluster}'\nTO eddy.session_rollup_hourly\nPOPULATE\nAS SELECT\n    tenant_id,\n    toStartOfHour(session_start) AS hour,\n    uniqState(session_id) AS sessions,\n    sumState(duration_ms) AS duration_ms\nFROM eddy." + src + "\nGROUP BY tenant_id, hour;\n"
	g.step("Writing a migration that recreates the view.", writeCall(np, body))
	g.w.dirty[np] = true

	apply := fmt.Sprintf("clickhouse-client --host %s --secure --user agent --password \"$CH_STG_PASSWORD\" --multiquery < %s", chStg, np)
	host := g.E("hostport", fixed(chStg+":9440"))
	if wrongTable {
		b = out{}
		b.err("Received exception from server (version 24.8.4):")
		b.err(fmt.Sprintf("%s. DB::Exception: Received from %s. DB::Exception: Table eddy.sessions_local_v2 does not exist. Maybe you meant eddy.sessions_local?. (%s)", g.E("code", fixed("Code: 60")), host, g.E("code", fixed("UNKNOWN_TABLE"))))
		b.add("(query: CREATE MATERIALIZED VIEW eddy.session_rollup_mv ON CLUSTER '{cluster}'\nTO eddy.session_rollup_hourly\nPOPULATE\nAS SELECT ...)")
		g.step("Applying it on staging.", bash(apply, b.res(60)))
		g.step("Wrong source table, the _v2 table was never created. Fixing it.", replaceCall(np, "FROM eddy.sessions_local_v2\n", "FROM eddy.sessions_local\n"))
	}
	b = out{}
	b.err("Received exception from server (version 24.8.4):")
	b.err(fmt.Sprintf("%s. DB::Exception: Received from %s. DB::Exception: Missing columns: 'session_start' while processing query: 'SELECT tenant_id, toStartOfHour(session_start) AS hour, uniqState(session_id) AS sessions, sumState(duration_ms) AS duration_ms FROM eddy.sessions_local GROUP BY tenant_id, hour', required columns: 'session_start' 'tenant_id' 'session_id' 'duration_ms', maybe you meant: 'session_start_ts', 'tenant_id', 'session_id' or 'duration_ms'. (%s)", g.E("code", fixed("Code: 47")), host, g.E("code", fixed("UNKNOWN_IDENTIFIER"))))
	b.add("(query: CREATE MATERIALIZED VIEW eddy.session_rollup_mv ON CLUSTER '{cluster}'\nTO eddy.session_rollup_hourly\nPOPULATE\nAS SELECT\n    tenant_id,\n    toStartOfHour(session_start) AS hour,\n    uniqState(session_id) AS sessions,\n    sumState(duration_ms) AS duration_ms\nFROM eddy.sessions_local\nGROUP BY tenant_id, hour;)")
	g.step("Applying it on staging.", bash(apply, b.res(47)))
	g.step("I copied the old column name. Fixing it.", replaceCall(np, "toStartOfHour(session_start) AS hour", "toStartOfHour(session_start_ts) AS hour"))

	b = out{}
	b.err("Received exception from server (version 24.8.4):")
	b.err(fmt.Sprintf("%s. DB::Exception: Received from %s. DB::Exception: Memory limit (for query) exceeded: would use %d.%02d GiB (attempt to allocate chunk of 4194304 bytes), maximum: 9.31 GiB.: (avg_value_size_hint = %d.%d, avg_chars_size = %d.%d, limit = 65536): While executing AggregatingTransform. (%s)", g.E("code", fixed("Code: 241")), host, g.between(9, 10), g.between(32, 99), g.between(20, 99), g.intn(10), g.between(20, 99), g.intn(10), g.E("code", fixed("MEMORY_LIMIT_EXCEEDED"))))
	stack := g.chance(0.5)
	if stack {
		for i, f := range []string{"DB::Exception::Exception(DB::Exception::MessageMasked&&, int, bool)", "DB::Exception::Exception<char const*, char const*, String, long&, String, char const*, std::basic_string_view<char, std::char_traits<char>>>(int, FormatStringHelperImpl<...>, ...)", "MemoryTracker::allocImpl(long, bool, MemoryTracker*, double)", "DB::Arena::allocContinue(unsigned long, char const*&, unsigned long)", "DB::Aggregator::executeOnBlock(...)", "DB::AggregatingTransform::consume(DB::Chunk)", "DB::ExecutionThreadContext::executeTask()", "DB::PipelineExecutor::executeStepImpl(unsigned long, std::atomic<bool>*)"} {
			b.err(fmt.Sprintf("%d. %s @ 0x%016x", i, f, 0xc000000+g.r.Int64N(0x8000000)))
		}
	}
	b.add("(query: CREATE MATERIALIZED VIEW eddy.session_rollup_mv ON CLUSTER '{cluster}' ... POPULATE ...)")
	g.step("", bash(apply, b.res(241)))

	g.say("POPULATE backfills the whole table in one query and hits the memory cap. I'll create the view without POPULATE and backfill in daily chunks with external aggregation, each INSERT well under your limit. Fine to run that on staging now?")
	g.user("Yes, staging is fine now. Keep the chunks daily.")
	g.step("Dropping POPULATE and adding a chunked backfill.", replaceCall(np, "TO eddy.session_rollup_hourly\nPOPULATE\nAS SELECT", "TO eddy.session_rollup_hourly\nAS SELECT"),
		replaceCall(np, "GROUP BY tenant_id, hour;\n", fmt.Sprintf("GROUP BY tenant_id, hour;\n\n-- Backfill one day per INSERT; run by scripts/ch_backfill.sh for each day.\nINSERT INTO eddy.session_rollup_hourly\nSELECT tenant_id, toStartOfHour(session_start_ts) AS hour, uniqState(session_id), sumState(duration_ms)\nFROM eddy.sessions_local\nWHERE toDate(session_start_ts) = {day:Date}\nGROUP BY tenant_id, hour\nSETTINGS %s = 4000000000, max_memory_usage = 8000000000;\n", setting)))

	b = out{}
	for i := 0; i < g.sc(14); i++ {
		b.add(fmt.Sprintf("%s: %d rows in %.3f sec.", g.now.AddDate(0, 0, -14+i).Format("2006-01-02"), g.between(1e5, 9e6), float64(g.between(800, 30000))/1000))
	}
	g.step("Creating the view and backfilling the last two weeks day by day.", bash(fmt.Sprintf("./scripts/ch_backfill.sh --host %s --migration %s --days 14", chStg, np), b.res(0)))

	rows = nil
	for i := 0; i < g.sc(12); i++ {
		rows = append(rows, []string{g.now.Add(-time.Duration(i) * time.Hour).Truncate(time.Hour).Format("2006-01-02 15:04:05"), itoa(g.between(1000, 90000))})
	}
	b = out{}
	b.add(prettyCompact([]string{"hour", "sessions"}, rows))
	b.add(fmt.Sprintf("Query id: %s", g.P("uuid", g.uuid)))
	r = b.res(0)
	r.read = true
	g.step("Checking the last hours on the rollup.", bash(chClient("SELECT hour, uniqMerge(sessions) AS sessions FROM eddy.session_rollup_hourly WHERE hour > now() - INTERVAL 12 HOUR GROUP BY hour ORDER BY hour DESC FORMAT PrettyCompact"), r))
	g.step("", g.commit("clickhouse: recreate session_rollup_mv on session_start_ts", []string{np}, []string{np}))
	g.say("The rollup view selected session_start, which was renamed to session_start_ts; every insert into sessions_local failed in the view, so the rollup stopped. The new migration recreates the view on the new column, and the last two weeks were backfilled in daily chunks under the memory limit, without OPTIMIZE FINAL. The dashboard's last hours have data again.")
}
