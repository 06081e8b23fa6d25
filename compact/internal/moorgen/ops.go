package moorgen

import (
	"fmt"
	"strings"
	"time"

	"github.com/strata-memory/strata/compact/internal/opsgen"
)

// Operations: Nomad, Consul, Vault, systemd on the edge gateways, curl
// against the services, Pulumi and hcloud, git.

var nomadJobs = []string{"ingest", "registry", "dashboard", "mqtt-broker"}

var gateways = []string{"gw-leith-03", "gw-leith-07", "gw-rosyth-01", "gw-tilbury-04", "gw-hull-02", "gw-dover-05", "gw-belfast-01"}

func (g *gen) short() string { return g.hex(8) }

// nomadStatus is nomad job status of a job whose latest deployment went
// badly or well; every id in it is passing output.
func (g *gen) nomadStatus(job string, healthy bool) (string, *out) {
	o := &out{}
	o.addf("ID            = moorhen-%s\nName          = moorhen-%s\nSubmit Date   = %s\nType          = service\nPriority      = 50\nDatacenters   = hel1\nNamespace     = default\nNode Pool     = default",
		job, job, g.now.Add(-time.Hour).Format("2006-01-02T15:04:05Z"))
	o.addf("Status        = running\nPeriodic      = false\nParameterized = false\n\nSummary\nTask Group  Queued  Starting  Running  Failed  Complete  Lost  Unknown")
	failed := 0
	if !healthy {
		failed = g.between(3, 14)
	}
	o.addf("%-11s 0       %d         %d        %-7d %-9d 0     0", job, map[bool]int{true: 0, false: 1}[healthy], g.between(1, 3), failed, g.between(0, 20))
	dep := g.P("id", g.short)
	status, desc := "successful", "Deployment completed successfully"
	if !healthy {
		status, desc = "failed", g.pick([]string{"Failed due to progress deadline", "Failed due to unhealthy allocations", "Failed due to unhealthy allocations - rolling back to job version " + fmt.Sprint(g.between(3, 30))})
	}
	o.addf("\nLatest Deployment\nID          = %s\nStatus      = %s\nDescription = %s\n", dep, status, desc)
	o.addf("Deployed\nTask Group  Desired  Placed  Healthy  Unhealthy  Progress Deadline\n%-11s 3        3       %d        %d          %s\n", job, map[bool]int{true: 3, false: 2}[healthy], map[bool]int{true: 0, false: 1}[healthy], g.now.Add(10*time.Minute).Format("2006-01-02T15:04:05Z"))
	o.add("Allocations\nID        Node ID   Task Group  Version  Desired  Status    Created    Modified")
	v := g.between(8, 40)
	for i := range min(14, g.n(3, 6)) {
		st := "running"
		if !healthy && i%2 == 1 {
			st = "failed"
		}
		if i > 3 {
			st = "complete"
		}
		o.addf("%s  %s  %-10s  %-7d  %-7s  %-8s  %dm ago    %dm ago", g.P("id", g.short), g.P("id", g.short), job, v-i/3, map[bool]string{true: "run", false: "stop"}[st == "running" || st == "failed"], st, 5+i*7, 4+i*7)
	}
	return "nomad job status moorhen-" + job, o
}

// nomadAllocLogs prints the stderr of a job's allocation: a crash loop
// (the errors are in the log, the command itself succeeds, so nothing in
// it is labelled a failure) or a healthy service.
func (g *gen) nomadAllocLogs(job string, crashing bool) (string, *out) {
	o := &out{}
	for range g.n(8, 30) {
		switch job {
		case "ingest":
			o.addf("%s [info] mi_batch_writer: flushed %d frames to telemetry.positions in %dms", g.tick(0, 3).Format("2006-01-02T15:04:05.000000+00:00"), g.between(10, 600), g.between(2, 90))
		default:
			g.springNoise(o, 1)
		}
	}
	if !crashing {
		if job == "ingest" {
			o.addf("%s [info] mi_mqtt_conn: subscribed client %s to moorhen/v2/+/+/telemetry", g.tick(0, 3).Format("2006-01-02T15:04:05.000000+00:00"), g.P("id", g.clientID))
		}
		return "nomad alloc logs -stderr -job moorhen-" + job + " " + job + " | tail -n 120", o.tail(120)
	}
	if job == "ingest" {
		g.crashReport(o, "")
		o.addf("%s [notice] supervisor: {local,mi_conn_sup} restarting child, intensity %d/%d", g.tick(0, 3).Format("2006-01-02T15:04:05.000000+00:00"), g.between(3, 10), 10)
		if g.chance(0.5) {
			o.add("=SUPERVISOR REPORT==== shutdown: reached_max_restart_intensity\n    supervisor: {local,moor_ingest_sup}\n    offender: [{id,mi_conn_sup}]")
		}
	} else {
		g.springLine(o, "ERROR", "o.a.c.c.C.[.[.[/].[dispatcherServlet]", "Servlet.service() for servlet [dispatcherServlet] threw exception [Request processing failed: org.springframework.dao.DataAccessResourceFailureException: unable to obtain isolated JDBC connection] with root cause")
		o.addf("\njava.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, request timed out after 30001ms (total=10, active=10, idle=0, waiting=%d)", g.between(3, 60))
		o.add("\tat com.zaxxer.hikari.pool.HikariPool.createTimeoutException(HikariPool.java:686)\n\tat com.zaxxer.hikari.pool.HikariPool.getConnection(HikariPool.java:179)")
		f := g.pick(registry.files)
		o.addf("\tat %s.%s(%s.java:%d)", javaClass(f), g.pick(words)+g.pick(caps), stem(f), g.lineFor(f))
	}
	return "nomad alloc logs -stderr -job moorhen-" + job + " " + job + " | tail -n 120", o.tail(120)
}

// nomadRun submits a job: it deploys, or the evaluation cannot place all
// allocations (exit 2), or the deployment fails (exit 1).
func (g *gen) nomadRun(job string, outcome int) (string, int, *out) {
	o := &out{}
	ts := func() string { return g.tick(0, 4).Format("2006-01-02T15:04:05Z") }
	eval := g.short()
	o.addf("==> %s: Monitoring evaluation \"%s\"\n    %s: Evaluation triggered by job \"moorhen-%s\"", ts(), eval, ts(), job)
	cmd := "nomad job run ops/nomad/" + job + ".nomad.hcl"
	switch outcome {
	case 1: // placement failure
		o.addf("    %s: Evaluation status changed: \"pending\" -> \"complete\"", ts())
		o.failf("==> %s: Evaluation \"%s\" finished with status \"complete\" but failed to place all allocations:", ts(), eval)
		o.failf("    %s: Task Group \"%s\" (failed to place %d allocation%s):", ts(), job, 1, "")
		o.failf("      * Constraint \"${meta.zone} = %s\": %d nodes excluded by filter", g.E("id", func() string { return "hel1-dc" + fmt.Sprint(g.between(2, 9)) + "-" + g.chars(lowernum, 3) }), g.between(1, 5))
		o.failf("      * Resources exhausted on %d nodes\n      * Dimension \"memory\" exhausted on %d nodes", g.between(1, 3), g.between(1, 3))
		o.failf("    %s: Evaluation \"%s\" waiting for additional capacity to place remainder", ts(), g.E("id", g.short))
		return cmd, 2, o
	}
	dep := g.short()
	o.addf("    %s: Evaluation within deployment: \"%s\"", ts(), dep)
	for range 3 {
		o.addf("    %s: Allocation \"%s\" created: node \"%s\", group \"%s\"", ts(), g.P("id", g.short), g.P("id", g.short), job)
	}
	o.addf("    %s: Evaluation status changed: \"pending\" -> \"complete\"\n==> %s: Evaluation \"%s\" finished with status \"complete\"\n==> %s: Monitoring deployment \"%s\"", ts(), ts(), eval, ts(), dep)
	if outcome == 2 {
		o.failf("  ! Deployment \"%s\" failed", dep)
		o.addf("\n    %s\n    ID          = %s\n    Job ID      = moorhen-%s\n    Job Version = %d", ts(), dep, job, g.between(8, 40))
		o.fail("    Status      = failed\n    Description = Failed due to unhealthy allocations")
		o.addf("\n    Deployed\n    Task Group  Desired  Placed  Healthy  Unhealthy  Progress Deadline\n    %-11s 3        3       1        2          %s", job, ts())
		o.failf("    Allocation %s on node %s: task %q: Exit Code: 1, Exit Message: %q", g.E("id", g.short), g.E("id", g.short), job, g.pick([]string{"Docker container exited with non-zero exit code: 1", "OOM Killed"}))
		return cmd, 1, o
	}
	o.addf("  ✓ Deployment \"%s\" successful\n\n    %s\n    ID          = %s\n    Job ID      = moorhen-%s\n    Job Version = %d\n    Status      = successful\n    Description = Deployment completed successfully", dep, ts(), dep, job, g.between(8, 40))
	o.addf("\n    Deployed\n    Task Group  Desired  Placed  Healthy  Unhealthy  Progress Deadline\n    %-11s 3        3       3        0          %s", job, ts())
	return cmd, 0, o
}

// consulHealth lists the healthy instances of a service.
func (g *gen) consulHealth(svc string) (string, *out) {
	o := &out{}
	o.add("[")
	for i := range min(12, g.n(1, 3)) {
		if i > 0 {
			o.add("  },")
		}
		addr := g.ip()
		port := g.port()
		o.addf("  {\n    \"Node\": \"nomad-hel1-%d\",\n    \"ServiceID\": \"_nomad-task-%s-%s-http\",\n    \"Address\": \"%s\",", g.between(1, 9), g.P("uuid", g.uuid), svc, addr)
		o.addf("    \"ServicePort\": %d,\n    \"Endpoint\": \"%s\",\n    \"Checks\": [\"serfHealth: passing\", \"service: \\\"%s\\\" check: passing\"]", port, g.P("hostport", func() string { return fmt.Sprintf("%s:%d", addr, port) }), svc)
	}
	o.add("  }\n]")
	return "curl -s 'http://127.0.0.1:8500/v1/health/service/" + svc + "?passing' | jq '[.[] | {Node: .Node.Node, ServiceID: .Service.ID, Address: .Service.Address, ServicePort: .Service.Port, Endpoint: \"\\(.Service.Address):\\(.Service.Port)\", Checks: [.Checks[] | \"\\(.CheckID): \\(.Status)\"]}]'", o
}

// vaultRead reads dynamic database credentials (the secret itself masked
// by the agent's command) or fails on a policy.
func (g *gen) vaultRead(ok bool) (string, int, *out) {
	o := &out{}
	role := g.pick([]string{"registry-rw", "registry-ro", "ingest-writer", "dashboard-ro"})
	cmd := "vault read -format=table database/creds/" + role + " | sed 's/^password .*/password        <redacted>/'"
	if ok {
		o.add("Key                Value\n---                -----")
		o.addf("lease_id           %s", g.P("id", func() string { return "database/creds/" + role + "/" + g.chars(alnum, 24) }))
		o.addf("lease_duration     %dh\nlease_renewable    true\npassword        <redacted>\nusername           %s", g.between(1, 24), g.P("id", func() string {
			return "v-token-" + role + "-" + g.chars(lowernum, 20) + "-" + fmt.Sprint(g.between(1700000000, 1760000000))
		}))
		return cmd, 0, o
	}
	o.failf("Error reading database/creds/%s: Error making API request.\n", role)
	o.failf("URL: GET %s\nCode: 403. Errors:\n", g.E("url", func() string {
		return fmt.Sprintf("https://vault-%d.node.hel1.consul:8200/v1/database/creds/%s", g.between(1, 5), role)
	}))
	o.fail("* 1 error occurred:\n\t* permission denied\n")
	return cmd, 2, o
}

// gwStatus is systemctl status of the gateway bridge on an edge gateway:
// failed (exit 3) with its last journal lines, or running.
func (g *gen) gwStatus(gw string, ok bool) (string, int, *out) {
	o := &out{}
	pid := g.between(600, 30000)
	cmd := "ssh " + gw + " -- sudo systemctl status moorhen-gw.service --no-pager -l -n 25"
	jts := func() string { return g.tick(0, 2).Format("Jan 02 15:04:05") }
	if ok {
		o.addf("● moorhen-gw.service - Moorhen edge gateway (BLE to MQTT bridge)\n     Loaded: loaded (/etc/systemd/system/moorhen-gw.service; enabled; preset: enabled)\n     Active: active (running) since %s; %dmin ago", g.now.Format("Mon 2006-01-02 15:04:05 UTC"), g.between(1, 40))
		o.addf("   Main PID: %d (moorhen-gw)\n      Tasks: %d (limit: 2206)\n     Memory: %.1fM\n        CPU: %dms\n     CGroup: /system.slice/moorhen-gw.service\n             └─%d /opt/moorhen-gw/bin/moorhen-gw --config /etc/moorhen/gw.toml\n", pid, g.between(4, 12), g.secs(8, 60), g.between(100, 9000), pid)
		for range min(24, g.n(6, 20)) {
			o.addf("%s %s moorhen-gw[%d]: level=info msg=%q tags=%d rssi_p50=-%d", jts(), gw, pid, g.pick([]string{"uplink batch forwarded", "scan window closed", "mqtt keepalive"}), g.between(3, 90), g.between(50, 95))
		}
		o.addf("%s %s moorhen-gw[%d]: level=info msg=\"mqtt connected\" broker=%s session=%s", jts(), gw, pid, g.P("url", func() string { return "mqtts://" + g.hostport() }), g.P("id", func() string { return g.prefixed("gws", "_", 12) }))
		return cmd, 0, o
	}
	g.gwFault = g.r.IntN(3)
	exit := []string{"1/FAILURE", "78/CONFIG", "1/FAILURE"}[g.gwFault]
	o.failf("× moorhen-gw.service - Moorhen edge gateway (BLE to MQTT bridge)")
	o.add("     Loaded: loaded (/etc/systemd/system/moorhen-gw.service; enabled; preset: enabled)")
	o.failf("     Active: failed (Result: exit-code) since %s; %dmin %ds ago", g.now.Format("Mon 2006-01-02 15:04:05 UTC"), g.between(1, 50), g.between(0, 59))
	o.addf("   Duration: %.3fs", g.secs(0.2, 4))
	o.failf("    Process: %d ExecStart=/opt/moorhen-gw/bin/moorhen-gw --config /etc/moorhen/gw.toml (code=exited, status=%s)", pid, exit)
	o.failf("   Main PID: %d (code=exited, status=%s)\n        CPU: %dms\n", pid, exit, g.between(40, 900))
	for range g.between(3, 10) {
		o.addf("%s %s moorhen-gw[%d]: level=info msg=%q", jts(), gw, pid, g.pick([]string{"loading config", "ble adapter hci0 up", "scan window opened", "restoring spool"}))
	}
	switch g.gwFault {
	case 0:
		o.failf("%s %s moorhen-gw[%d]: level=error msg=\"mqtt connect failed\" broker=%s err=\"TLS handshake: certificate verify failed (unable to get local issuer certificate), issuer \\\"Moorhen Edge CA %s\\\"\"",
			jts(), gw, pid, g.E("url", func() string { return "mqtts://" + g.remote() }), g.E("id", g.hexf(8)))
		o.failf("%s %s moorhen-gw[%d]: level=error msg=\"giving up\" attempts=%d client_id=%s", jts(), gw, pid, g.between(3, 12), g.E("id", g.clientID))
	case 1:
		o.failf("%s %s moorhen-gw[%d]: level=error msg=\"config invalid\" path=/etc/moorhen/gw.toml err=\"gw.toml:%d: expected a value for key \\\"uplink.%s\\\"\" spool=%s",
			jts(), gw, pid, g.between(3, 60), g.pick(words), g.E("path", func() string { return "/var/lib/moorhen-gw/spool/" + g.chars(lowernum, 10) + ".wal" }))
		o.failf("%s %s moorhen-gw[%d]: level=error msg=\"refusing to start with a partial config\" config_sha=%s", jts(), gw, pid, g.E("hash", g.hexf(12)))
	default:
		o.failf("%s %s moorhen-gw[%d]: level=error msg=\"spool replay failed\" segment=%s err=\"crc mismatch at offset %d\" tag=%s",
			jts(), gw, pid, g.E("path", func() string { return "/var/lib/moorhen-gw/spool/" + g.chars(lowernum, 10) + ".wal" }), g.between(1000, 900000), g.E("id", g.serial))
	}
	o.failf("%s %s systemd[1]: moorhen-gw.service: Main process exited, code=exited, status=%s", jts(), gw, exit)
	o.failf("%s %s systemd[1]: moorhen-gw.service: Failed with result 'exit-code'.", jts(), gw)
	o.addf("%s %s systemd[1]: moorhen-gw.service: Scheduled restart job, restart counter is at %d.", jts(), gw, g.between(5, 400))
	return cmd, 3, o
}

// journal prints the gateway's journal for the last hour: the bridge
// running, then failing the way gwStatus showed, restarting and failing
// again. It is read through tail, which succeeds, so nothing in it is a
// failure line, and its identifiers are not planted.
func (g *gen) journal(gw string) (string, *out) {
	o := &out{}
	t := g.now.Add(-time.Hour)
	ts := func(lo, hi int) string {
		t = t.Add(time.Duration(g.between(lo, hi)) * time.Second)
		return t.Format("Jan 02 15:04:05")
	}
	pid := g.between(600, 30000)
	for range g.n(10, 30) {
		o.addf("%s %s moorhen-gw[%d]: level=%s msg=%q tags=%d", ts(5, 60), gw, pid, g.pick([]string{"info", "info", "info", "warn"}),
			g.pick([]string{"uplink batch forwarded", "scan window closed", "tag rssi below floor", "spool compacted", "mqtt keepalive"}), g.between(1, 80))
	}
	for range g.n(3, 10) {
		switch g.gwFault {
		case 0:
			o.addf("%s %s moorhen-gw[%d]: level=error msg=\"mqtt connect failed\" broker=mqtts://%s err=\"TLS handshake: certificate verify failed (unable to get local issuer certificate)\"", ts(1, 5), gw, pid, g.remote())
		case 1:
			o.addf("%s %s moorhen-gw[%d]: level=error msg=\"config invalid\" path=/etc/moorhen/gw.toml err=\"gw.toml:%d: expected a value\"", ts(1, 5), gw, pid, g.between(3, 60))
		default:
			o.addf("%s %s moorhen-gw[%d]: level=error msg=\"spool replay failed\" segment=/var/lib/moorhen-gw/spool/%s.wal err=\"crc mismatch at offset %d\"", ts(1, 5), gw, pid, g.chars(lowernum, 10), g.between(1000, 900000))
		}
		o.addf("%s %s systemd[1]: moorhen-gw.service: Main process exited, code=exited, status=%s", ts(0, 1), gw, []string{"1/FAILURE", "78/CONFIG", "1/FAILURE"}[g.gwFault])
		o.addf("%s %s systemd[1]: moorhen-gw.service: Failed with result 'exit-code'.", ts(0, 1), gw)
		o.addf("%s %s systemd[1]: moorhen-gw.service: Scheduled restart job, restart counter is at %d.", ts(5, 10), gw, g.between(5, 400))
		o.addf("%s %s systemd[1]: Stopped moorhen-gw.service - Moorhen edge gateway (BLE to MQTT bridge).", ts(0, 1), gw)
		o.addf("%s %s systemd[1]: Started moorhen-gw.service - Moorhen edge gateway (BLE to MQTT bridge).", ts(0, 1), gw)
		pid = g.between(600, 30000)
		o.addf("%s %s moorhen-gw[%d]: level=info msg=\"loading config\" path=/etc/moorhen/gw.toml", ts(0, 1), gw, pid)
		o.addf("%s %s moorhen-gw[%d]: level=info msg=\"ble adapter hci0 up\"", ts(0, 2), gw, pid)
	}
	return "ssh " + gw + " -- sudo journalctl -u moorhen-gw --since '-1h' --no-pager | tail -n 150", o.tail(150)
}

var svcPaths = map[string][]string{
	"registry":  {"api/v2/devices", "api/v2/leases", "api/v2/channels", "api/v2/provision"},
	"dashboard": {"api/v1/fleet/depots", "api/v1/alerts", "api/v1/positions"},
}

// curlPass calls a service and prints headers and a JSON body.
func (g *gen) curlPass(svc string) (string, *out) {
	o := &out{}
	path := g.pick(svcPaths[svc])
	o.addf("HTTP/1.1 200 \nContent-Type: application/json\nX-Request-Id: %s\nDate: %s\n", g.P("id", func() string { return g.prefixed("req", "_", 16) }), g.now.Format("Mon, 02 Jan 2006 15:04:05 GMT"))
	switch svc {
	case "registry":
		o.addf("{\"deviceId\":\"%s\",\"serial\":\"%s\",\"lease\":{\"id\":\"%s\",\"state\":\"ACTIVE\",\"expiresAt\":\"%s\"},\"channel\":\"stable\"}",
			g.P("uuid", g.uuid), g.serial(), g.P("id", func() string { return g.prefixed("lse", "_", 14) }), g.now.Add(time.Hour).Format("2006-01-02T15:04:05Z"))
	default:
		var rows []string
		for range g.n(3, 12) {
			rows = append(rows, fmt.Sprintf("{\"id\":\"%s\",\"serial\":\"%s\",\"stale\":%v,\"battery\":%d}", g.objectID(), g.serial(), g.chance(0.2), g.between(4, 100)))
		}
		o.addf("{\"depot\":\"%s\",\"devices\":[%s],\"cursor\":\"%s\"}", g.pick(depots), strings.Join(rows, ","), g.P("id", g.ulid))
	}
	host := map[string]string{"registry": "registry.service.hel1.consul:8080", "dashboard": "dashboard.service.hel1.consul:8000"}[svc]
	if host == "" {
		host = "ingest.service.hel1.consul:8080"
	}
	return fmt.Sprintf("curl -si http://%s/%s/%s", host, path, g.chars(lowernum, 6)), o
}

// curlFail is a call that returns an error status (curl exits 22).
func (g *gen) curlFail(svc string) (string, *out) {
	o := &out{}
	status := g.pick([]string{"500", "502", "503", "409"})
	reason := map[string]string{"500": "Internal Server Error", "502": "Bad Gateway", "503": "Service Unavailable", "409": "Conflict"}[status]
	o.failf("HTTP/1.1 %s %s", status, reason)
	o.add("Content-Type: application/json")
	o.failf("X-Request-Id: %s", g.E("id", func() string { return g.prefixed("req", "_", 16) }))
	o.addf("Date: %s\n", g.now.Format("Mon, 02 Jan 2006 15:04:05 GMT"))
	path := "/" + g.pick(svcPaths[svc]) + "/" + g.chars(lowernum, 6)
	o.failf("{\"timestamp\":\"%s\",\"status\":%s,\"error\":\"%s\",\"code\":\"%s\",\"traceId\":\"%s\",\"path\":\"%s\"}", g.now.Format("2006-01-02T15:04:05.000+00:00"), status, reason,
		g.E("code", g.codeOf(map[string]string{"registry": "MHR", "dashboard": "DSB"}[svc]+"X")), g.E("hash", g.hexf(32)), path)
	o.failf("curl: (22) The requested URL returned error: %s", status)
	host := map[string]string{"registry": "registry.service.hel1.consul:8080", "dashboard": "dashboard.service.hel1.consul:8000"}[svc]
	return fmt.Sprintf("curl -si --fail-with-body http://%s%s", host, path), o
}

// pulumiPreview shows the planned changes to the stack.
func (g *gen) pulumiHead(o *out, verb string) {
	o.addf("%s (hel1-prod)\n", verb)
	o.addf("View in Browser (Ctrl+O): %s\n", g.P("url", func() string {
		return fmt.Sprintf("https://app.pulumi.com/brackwater/moorhen-infra/hel1-prod/%s/%s", map[string]string{"Previewing update": "previews", "Updating": "updates"}[verb], g.uuid())
	}))
}

type pulumiChange struct{ op, typ, name string }

func (g *gen) pulumiChanges() []pulumiChange {
	var cs []pulumiChange
	for range g.between(2, 5) {
		c := pulumiChange{g.pick([]string{"+", "~", "~", "-", "+-"}), g.pick([]string{"hcloud:index:Server", "hcloud:index:Firewall", "hcloud:index:Volume", "hcloud:index:ServerNetwork", "hcloud:index:LoadBalancerTarget"}), ""}
		c.name = g.pick([]string{"edge-relay", "mqtt-broker", "nomad-client", "mongo-telemetry", "mqtt-ingress"}) + fmt.Sprintf("-%d", g.between(1, 9))
		cs = append(cs, c)
	}
	return cs
}

// pulumiDiff prints the property diff of one resource, as --diff does.
func (g *gen) pulumiDiff(o *out, c pulumiChange) {
	urn := fmt.Sprintf("urn:pulumi:hel1-prod::moorhen-infra::%s::%s", c.typ, c.name)
	o.addf("  %s %s: (%s)\n      [urn=%s]", c.op, c.typ, pulumiVerb[c.op], urn)
	switch {
	case strings.HasSuffix(c.typ, "Firewall"):
		o.add("    ~ rules: [")
		for i := range g.n(3, 10) {
			o.addf("        ~ [%d]: {\n                description   : \"%s\"\n                direction     : \"in\"\n                port          : \"%d\"\n                protocol      : \"tcp\"\n              ~ sourceIps     : [\n                    [0]: \"10.20.0.0/14\"\n                  + [1]: \"%s/32\"\n                ]\n            }",
				i, g.pick([]string{"mqtt from relays", "nomad rpc", "consul serf", "ssh from bastion", "metrics scrape"}), g.pick2(8883, 4647), g.ip())
		}
		o.add("      ]")
	default:
		o.addf("      labels      : {\n          env : \"hel1-prod\"\n          role: \"%s\"\n        }\n      location    : \"hel1\"\n    ~ serverType  : \"%s\" => \"%s\"\n      image       : \"debian-12\"",
			g.pick(words), g.pick([]string{"cpx21", "cx32"}), g.pick([]string{"cpx31", "cax21"}))
		for range g.n(1, 4) {
			o.addf("    ~ userData    : (computed) => \"#cloud-config\\nwrite_files:\\n- path: /etc/moorhen/%s.toml\\n  content: ...\"", g.pick(words))
		}
	}
}

var pulumiVerb = map[string]string{"+": "create", "~": "update", "-": "delete", "+-": "replace"}

func (g *gen) pulumiPreview() (string, *out) {
	o := &out{}
	g.pulumiHead(o, "Previewing update")
	o.addf("     Type                                  Name                         Plan       Info\n     pulumi:pulumi:Stack                   moorhen-infra-hel1-prod")
	for i, c := range g.pulumiChanges() {
		info := ""
		if c.op == "~" || c.op == "+-" {
			info = "[diff: ~" + g.pick([]string{"rules", "labels", "serverType", "size", "image"}) + "]"
		}
		o.addf(" %-3s %s─ %-37s %-28s %-10s %s", c.op, map[bool]string{true: "└", false: "├"}[i == 2], c.typ, c.name, pulumiVerb[c.op], info)
	}
	o.add("")
	for _, c := range g.pulumiChanges() {
		g.pulumiDiff(o, c)
	}
	o.addf("\nResources:\n    + %d to create\n    ~ %d to update\n    %d changes. %d unchanged", g.between(0, 2), g.between(1, 3), g.between(2, 5), g.between(12, 40))
	return "cd ops/infra && pulumi preview --diff --stack hel1-prod", o
}

// pulumiUp applies the stack: it succeeds with outputs, or a Hetzner
// Cloud API error stops a resource.
func (g *gen) pulumiUp(ok bool) (string, *out) {
	o := &out{}
	g.pulumiHead(o, "Updating")
	cs := g.pulumiChanges()
	o.add("     Type                                  Name                         Status                  Info")
	if ok {
		for _, c := range cs {
			g.pulumiDiff(o, c)
		}
		o.add("     pulumi:pulumi:Stack                   moorhen-infra-hel1-prod")
		for _, c := range cs {
			o.addf(" %-3s ├─ %-37s %-28s %-22s", c.op, c.typ, c.name, map[string]string{"+": "created", "~": "updated", "-": "deleted", "+-": "replaced"}[c.op]+fmt.Sprintf(" (%ds)", g.between(1, 60)))
		}
		o.add("\nOutputs:")
		for range g.between(2, 5) {
			o.addf("  ~ %-14s: %q", g.pick([]string{"relayIpv4", "brokerAddr", "mongoAddr", "nomadClients"}), g.P("hostport", func() string { return fmt.Sprintf("%s:%d", g.ip(), g.port()) }))
		}
		o.addf("\nResources:\n    %d changed\n    %d unchanged\n\nDuration: %ds", len(cs), g.between(12, 40), g.between(8, 300))
		return "cd ops/infra && pulumi up --yes --diff --stack hel1-prod", o
	}
	bad := cs[0]
	for _, c := range cs {
		g.pulumiDiff(o, c)
	}
	o.fail("     pulumi:pulumi:Stack                   moorhen-infra-hel1-prod      **failed**              1 error")
	o.failf(" %-3s ├─ %-37s %-28s **%s failed**         1 error", bad.op, bad.typ, bad.name, map[string]string{"+": "creating", "~": "updating", "-": "deleting", "+-": "replacing"}[bad.op])
	for _, c := range cs[1:] {
		o.addf(" %-3s ├─ %-37s %-28s %-22s", c.op, c.typ, c.name, map[string]string{"+": "created", "~": "updated", "-": "deleted", "+-": "replaced"}[c.op])
	}
	o.add("\nDiagnostics:")
	o.failf("  %s (%s):", bad.typ, bad.name)
	urn := fmt.Sprintf("urn:pulumi:hel1-prod::moorhen-infra::%s::%s", strings.Replace(bad.typ, "index:", "index/"+strings.ToLower(bad.typ[strings.LastIndexByte(bad.typ, ':')+1:])+":", 1), bad.name)
	cause := g.pick([]string{"error during placement (resource_unavailable, %s)", "server name is already used (uniqueness_error, %s)", "limit of servers exceeded (resource_limit_exceeded, %s)", "Primary IP is assigned (conflict, %s)"})
	o.failf("    error: 1 error occurred:\n    \t* %s %s: 1 error occurred:\n    \t* "+cause, map[string]string{"+": "creating", "~": "updating", "-": "deleting", "+-": "replacing"}[bad.op], urn, g.E("id", g.hexf(16)))
	o.add("")
	o.fail("  pulumi:pulumi:Stack (moorhen-infra-hel1-prod):\n    error: update failed")
	o.addf("\nResources:\n    %d changed\n    %d unchanged\n\nDuration: %ds", len(cs)-1, g.between(12, 40), g.between(8, 300))
	return "cd ops/infra && pulumi up --yes --diff --stack hel1-prod", o
}

// hcloudServers lists the servers of the project.
func (g *gen) hcloudServers() (string, *out) {
	o := &out{}
	o.add("ID         NAME                 STATUS    IPV4              IPV6                        PRIVATE NET              DATACENTER   AGE")
	for range g.n(5, 16) {
		o.addf("%-10d %-20s running   %-17s %-27s %-24s hel1-dc2     %dd", g.between(30000000, 59999999),
			g.pick([]string{"edge-relay", "mqtt-broker", "nomad-client", "mongo-telemetry", "nomad-server", "renode-farm"})+fmt.Sprintf("-%d", g.between(1, 9)),
			fmt.Sprintf("%d.%d.%d.%d", g.pick2(95, 65), g.between(0, 255), g.between(0, 255), g.between(1, 254)), fmt.Sprintf("2a01:4f9:c01%d:%s::/64", g.between(0, 9), g.chars(hexDigits, 4)),
			fmt.Sprintf("%s (moorhen-net)", g.ip()), g.between(1, 700))
	}
	return "hcloud server list -o columns=id,name,status,ipv4,ipv6,private_net,datacenter,age", o
}

// gitLog is a passing git log whose hashes are planted.
func (g *gen) gitLog(dir string) (string, *out) {
	o := &out{}
	for range min(40, g.n(8, 22)) {
		o.addf("%s %s %s(%s): %s %s %s", g.P("hash", g.hexf(10)), g.now.Add(-time.Duration(g.between(2, 900))*time.Hour).Format("2006-01-02"), g.pick([]string{"fix", "feat", "chore", "refactor", "ops"}), dir,
			g.pick([]string{"handle", "drop", "retry", "cap", "log", "bump", "split"}), g.pick(words), g.pick(words))
	}
	return "git log --format='%h %ad %s' --date=short --abbrev=10 -n 40 -- " + dir, o
}

// gitStatus shows the changed files.
func (g *gen) gitStatus(files []string) (string, *out) {
	o := &out{}
	for _, f := range files {
		st := " M"
		if g.class[f] == opsgen.FileWritten {
			st = "A "
		}
		o.addf("%s %s", st, f)
	}
	o.add("")
	for _, f := range files {
		o.addf(" %s | %d %s", f, g.between(2, 80), strings.Repeat("+", g.between(1, 20))+strings.Repeat("-", g.between(0, 8)))
	}
	o.addf(" %d files changed, %d insertions(+), %d deletions(-)", len(files), g.between(4, 200), g.between(0, 60))
	return "git status --short && git diff --stat", o
}

// gitCommit commits; its new hash and the merge-request link are planted.
func (g *gen) gitCommit(files []string, msg string) (string, *out) {
	o := &out{}
	branch := g.pick([]string{"fix", "feat", "ops"}) + "/" + g.pick(words) + "-" + g.pick(words) + "-" + g.chars(lowernum, 3)
	o.addf("Switched to a new branch '%s'", branch)
	o.addf("[%s %s] %s", branch, g.P("hash", g.hexf(10)), msg)
	o.addf(" %d files changed, %d insertions(+), %d deletions(-)", len(files), g.between(4, 200), g.between(0, 60))
	o.addf("remote: \nremote: To create a merge request for %s, visit:\nremote:   %s\nremote: ", branch,
		g.P("url", func() string {
			return fmt.Sprintf("https://git.brackwater.io/moorhen/moorhen/-/merge_requests/new?source_branch=%s", branch)
		}))
	o.addf("To git.brackwater.io:moorhen/moorhen.git\n * [new branch]      %s -> %s", branch, branch)
	return fmt.Sprintf("git switch -c %s && git add %s && git commit -q -m %q && git log -1 --format='[%%D %%h] %%s' --abbrev=10 | sed 's/HEAD -> //' && git push -u origin %s", branch, strings.Join(files, " "), msg, branch), o
}

// userPaste is an error the user pastes from production: each identifier
// in it is a user-turn label.
func (g *gen) userPaste(topic string) string {
	u := func(kind string, f func() string) string { return g.U(kind, f) }
	switch map[string]int{"registry": 0, "firmware": 1, "ingest": 2, "dashboard": 3}[topic] {
	case 0:
		f := g.pick(registry.files)
		l := g.siteForm(opsgen.UserTurn, f, func(b string, n int) string { return fmt.Sprintf("%s:%d", b, n) })
		return fmt.Sprintf("```\n%s.%sException: [%s] lease %s is held by another gateway\n\tat %s.%s(%s:%d)\n```",
			javaPkg, g.pick([]string{"lease.LeaseConflict", "device.DeviceState", "channel.ChannelRollout"}), u("code", g.codeOf("MHR")), u("id", func() string { return g.prefixed("lse", "_", 14) }), javaClass(f), g.pick(words)+g.pick(caps), stem(f)+".java", l)
	case 1:
		return fmt.Sprintf("```\n[00:%02d:%02d.%03d,%03d] <err> uplink: cbor encode failed: -%d (frame seq %d)\n[00:%02d:%02d.%03d,%03d] <err> os: Faulting instruction address (r15/pc): %s\n```\nfrom tag %s",
			g.between(0, 59), g.between(0, 59), g.between(0, 999), g.between(0, 999), g.pick2(22, 28), g.between(1, 60000), g.between(0, 59), g.between(0, 59), g.between(0, 999), g.between(0, 999), u("id", func() string { return g.addr("flash") }), u("id", g.serial))
	case 2:
		return fmt.Sprintf("```\n=CRASH REPORT==== crasher: initial call: mi_mqtt_conn:init/1\n    exception error: no match of right hand side value {error,closed}\n    client: <<\"%s\">>\n```", u("id", g.clientID))
	default:
		return fmt.Sprintf("```\nGET /api/v1/fleet/depots/%s -> 504 after 30.0s, trace %s\n```", g.pick(depots), u("hash", g.hexf(32)))
	}
}
