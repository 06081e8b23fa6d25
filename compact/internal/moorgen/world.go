package moorgen

import (
	"fmt"
	"path"
	"strings"
)

// The repository the agent works in: Moorhen, the fleet-telemetry product
// of Brackwater Systems. Tags on trailers and cold-chain pallets report
// over BLE to edge gateways, which bridge to MQTT; an Erlang service
// ingests the frames into MongoDB; a Spring Boot registry keeps devices,
// leases and firmware channels; a Deno dashboard shows the fleet.

const root = "/srv/dev/moorhen"

const system = `You are a coding agent maintaining the Moorhen repository at ` + root + ` for Brackwater Systems.
Moorhen is fleet telemetry: Zephyr firmware for the tags (firmware/), a Spring Boot device registry
(registry/, Java 21, Maven), an Erlang/OTP MQTT ingest service (ingest/, rebar3), a Deno dashboard
(dashboard/) and operations files (ops/: Nomad jobs, Consul, Vault policies, edge gateway units,
Pulumi on Hetzner Cloud).

Tools:
- shell {command}: runs a bash command from the repository root and returns its output; a non-zero
  exit status is reported on the last line.
- read_file {path, offset?, limit?}: prints a file with line numbers.
- search {pattern, path}: ripgrep over a directory.
- list_files {path}: lists the files under a directory.
- write_file {path, content}: creates or overwrites a file.
- replace_in_file {path, old, new}: replaces one exact occurrence of old with new.

Build and test what you change before you commit. Never push to main. Ask the user when a
decision is theirs to make.`

// component is one part of the repository with its files.
type component struct {
	name  string
	lang  string // c, java, erl, ts
	dir   string
	files []string // sources, relative to the root
	tests []string
}

var firmware = component{name: "firmware", lang: "c", dir: "firmware",
	files: []string{"firmware/app/src/main.c", "firmware/app/src/uplink.c", "firmware/app/src/cbor_frame.c",
		"firmware/app/src/ringbuf_store.c", "firmware/app/src/sensors/imu_lsm6.c", "firmware/app/src/sensors/gnss_ubx.c",
		"firmware/app/src/power_mgmt.c", "firmware/app/src/ble_adv.c", "firmware/app/src/tag_settings.c"},
	tests: []string{"firmware/tests/ringbuf/src/ringbuf_suite.c", "firmware/tests/cbor/src/cbor_suite.c",
		"firmware/tests/uplink/src/uplink_suite.c", "firmware/tests/power/src/power_suite.c"},
}

var registry = component{name: "registry", lang: "java", dir: "registry",
	files: javaFiles("main", []string{"device/DeviceController", "device/DeviceService", "device/DeviceRepository", "device/Device",
		"lease/LeaseController", "lease/LeaseManager", "lease/LeaseRepository", "lease/DeviceLease", "lease/LeaseClock",
		"channel/FirmwareChannelService", "channel/ChannelSigner", "channel/ReleaseChannel",
		"provisioning/ProvisioningListener", "provisioning/ClaimTokenVerifier", "config/SecurityConfig", "config/MqttBridgeConfig"}),
	tests: javaFiles("test", []string{"device/DeviceServiceTest", "lease/LeaseManagerTest", "channel/FirmwareChannelServiceTest",
		"provisioning/ClaimTokenVerifierTest", "device/DeviceControllerTest", "RegistryApplicationIT", "lease/LeaseApiIT", "provisioning/ProvisioningFlowIT"}),
}

var ingest = component{name: "ingest", lang: "erl", dir: "ingest",
	files: prefixAll("ingest/apps/moor_ingest/src/", []string{"moor_ingest_app.erl", "moor_ingest_sup.erl", "mi_mqtt_conn.erl", "mi_conn_sup.erl",
		"mi_frame_decoder.erl", "mi_batch_writer.erl", "mi_mongo_sink.erl", "mi_rate_limiter.erl", "mi_topic_router.erl"}),
	tests: append(prefixAll("ingest/apps/moor_ingest/test/", []string{"mi_frame_decoder_tests.erl", "mi_rate_limiter_tests.erl", "mi_topic_router_tests.erl"}),
		"ingest/test/mi_ingest_SUITE.erl", "ingest/test/mi_sink_SUITE.erl"),
}

var dashboard = component{name: "dashboard", lang: "ts", dir: "dashboard",
	files: prefixAll("dashboard/", []string{"main.ts", "routes/fleet.ts", "routes/depots.ts", "routes/alerts.ts", "lib/mongo.ts",
		"lib/redis_cache.ts", "lib/geo.ts", "lib/staleness.ts", "lib/units.ts"}),
	tests: prefixAll("dashboard/", []string{"lib/geo_test.ts", "lib/staleness_test.ts", "routes/fleet_test.ts", "routes/alerts_test.ts"}),
}

var components = []component{firmware, registry, ingest, dashboard}

var opsFiles = []string{"ops/nomad/ingest.nomad.hcl", "ops/nomad/registry.nomad.hcl", "ops/nomad/dashboard.nomad.hcl",
	"ops/nomad/mqtt-broker.nomad.hcl", "ops/consul/ingest-intentions.hcl", "ops/vault/policies/registry-db.hcl",
	"ops/edge/moorhen-gw.service", "ops/edge/gw.toml.tmpl", "ops/infra/index.ts", "ops/infra/relays.ts", "ops/infra/Pulumi.hel1-prod.yaml"}

const javaPkg = "com.brackwater.moorhen.registry"

func javaFiles(set string, classes []string) []string {
	var out []string
	for _, c := range classes {
		out = append(out, "registry/src/"+set+"/java/com/brackwater/moorhen/registry/"+c+".java")
	}
	return out
}

// javaClass is the fully qualified class name of a Java file.
func javaClass(file string) string {
	i := strings.Index(file, "/java/")
	return strings.ReplaceAll(strings.TrimSuffix(file[i+6:], ".java"), "/", ".")
}

func prefixAll(pre string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = pre + x
	}
	return out
}

func stem(file string) string {
	b := path.Base(file)
	return b[:strings.IndexByte(b, '.')]
}

// allFiles lists every file of the world; the tests check that no base
// name is a suffix of another, so that a site of one is never inside a
// site of the other.
func allFiles() []string {
	var fs []string
	for _, c := range components {
		fs = append(fs, c.files...)
		fs = append(fs, c.tests...)
	}
	return append(fs, opsFiles...)
}

var words = []string{"uplink", "frame", "batch", "gnss", "imu", "sample", "slot", "lease", "depot", "beacon", "rssi",
	"window", "flush", "retry", "backoff", "ring", "slab", "epoch", "seq", "channel", "cursor", "position", "heading",
	"voltage", "charge", "wake", "alarm", "geofence", "zone", "route", "shift", "trailer", "pallet", "door", "odometer",
	"claim", "token", "quota", "burst", "topic", "session", "reading", "tamper", "drift", "shadow"}

var caps = []string{"Uplink", "Frame", "Batch", "Lease", "Depot", "Beacon", "Window", "Retry", "Channel", "Cursor",
	"Position", "Charge", "Alarm", "Geofence", "Zone", "Route", "Trailer", "Pallet", "Claim", "Token", "Quota", "Topic",
	"Session", "Reading", "Tamper", "Drift", "Shadow", "Release", "Signer", "Serial"}

var depots = []string{"leith", "rosyth", "grangemouth", "felixstowe", "immingham", "tilbury", "hull", "dover", "avonmouth", "belfast"}

// fill expands a template: {w} a word, {W} a capitalised word, {U} an
// upper-case word, {n} a small number, {d} a depot.
func (g *gen) fill(t string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(t, '{')
		if i < 0 || i+2 >= len(t) || t[i+2] != '}' {
			if i < 0 {
				b.WriteString(t)
				return b.String()
			}
			b.WriteString(t[:i+1])
			t = t[i+1:]
			continue
		}
		b.WriteString(t[:i])
		switch t[i+1] {
		case 'w':
			b.WriteString(g.pick(words))
		case 'W':
			b.WriteString(g.pick(caps))
		case 'U':
			b.WriteString(strings.ToUpper(g.pick(words)))
		case 'n':
			fmt.Fprint(&b, g.between(2, 64))
		case 'd':
			b.WriteString(g.pick(depots))
		default:
			b.WriteString(t[i : i+3])
		}
		t = t[i+3:]
	}
}

// ---- sources ----

var cStmts = []string{
	"int err = {w}_{w}_init(&ctx->{w});\n\n\tif (err) {\n\t\tLOG_ERR(\"{w} init failed: %d\", err);\n\t\treturn err;\n\t}",
	"k_sem_take(&{w}_sem, K_MSEC(CONFIG_MOORHEN_{U}_TIMEOUT_MS));",
	"ring_buf_put(&ctx->rb, (uint8_t *)&rec, sizeof(rec));",
	"if (ctx->{w}_count >= ARRAY_SIZE(ctx->{w})) {\n\t\tLOG_WRN(\"{w} full, dropping oldest\");\n\t\tctx->{w}_head = (ctx->{w}_head + 1) % ARRAY_SIZE(ctx->{w});\n\t}",
	"struct sensor_value val;\n\n\tsensor_sample_fetch(dev);\n\tsensor_channel_get(dev, SENSOR_CHAN_{U}, &val);",
	"zcbor_uint32_put(zs, ctx->seq++);\n\tzcbor_tstr_put_lit(zs, \"{w}\");",
	"k_work_reschedule(&ctx->{w}_work, K_SECONDS(ctx->cfg.{w}_interval_s));",
	"LOG_DBG(\"{w} seq=%u len=%zu\", hdr->seq, len);",
	"memcpy(&out[off], &hdr, sizeof(hdr));\n\toff += sizeof(hdr);",
	"if (!device_is_ready(dev)) {\n\t\treturn -ENODEV;\n\t}",
	"atomic_set_bit(&ctx->flags, {U}_PENDING);",
	"uint32_t now = k_uptime_get_32();\n\tif (now - ctx->last_{w} < ctx->cfg.{w}_ms) {\n\t\treturn 0;\n\t}",
}

func (g *gen) cSource(file string, lines int) string {
	mod := stem(file)
	var b strings.Builder
	fmt.Fprintf(&b, "/*\n * Copyright (c) 2023-2025 Brackwater Systems Ltd.\n * SPDX-License-Identifier: LicenseRef-Brackwater-Proprietary\n */\n\n")
	for _, inc := range []string{"zephyr/kernel.h", "zephyr/logging/log.h", "zephyr/device.h", "zephyr/drivers/sensor.h", "zephyr/sys/ring_buffer.h", "zcbor_encode.h"} {
		if g.chance(0.7) {
			fmt.Fprintf(&b, "#include <%s>\n", inc)
		}
	}
	fmt.Fprintf(&b, "\n#include \"%s.h\"\n#include \"tag_settings.h\"\n\nLOG_MODULE_REGISTER(%s, CONFIG_MOORHEN_LOG_LEVEL);\n\n", mod, mod)
	for range g.between(2, 5) {
		fmt.Fprintf(&b, "#define %s_%s_%s %d\n", strings.ToUpper(mod), strings.ToUpper(g.pick(words)), g.pick([]string{"MAX", "MS", "LEN", "SLOTS"}), g.between(2, 512))
	}
	fmt.Fprintf(&b, "\nstatic K_SEM_DEFINE(%s_sem, 0, 1);\n\nstruct %s_ctx {\n", g.pick(words), mod)
	for range g.between(3, 7) {
		fmt.Fprintf(&b, "\t%s %s_%s;\n", g.pick([]string{"uint32_t", "uint16_t", "int", "bool", "struct k_work_delayable", "atomic_t"}), g.pick(words), g.pick(words))
	}
	b.WriteString("};\n\n")
	b.WriteString(g.cBody(file, lines-strings.Count(b.String(), "\n")))
	return b.String()
}

// cBody is a run of C functions of file, as a part of it reads.
func (g *gen) cBody(file string, lines int) string {
	mod := stem(file)
	var b strings.Builder
	for strings.Count(b.String(), "\n") < lines {
		fmt.Fprintf(&b, "%sint %s_%s_%s(struct %s_ctx *ctx)\n{\n", g.pick([]string{"static ", "", "static "}), mod, g.pick(words), g.pick(words), mod)
		for _, i := range g.r.Perm(len(cStmts))[:g.between(2, 5)] {
			b.WriteString("\t" + g.fill(cStmts[i]) + "\n")
		}
		b.WriteString("\treturn 0;\n}\n\n")
	}
	return b.String()
}

var javaStmts = []string{
	"var {w} = {w}s.findById(deviceId)\n                .orElseThrow(() -> new DeviceNotFoundException(deviceId));",
	"if ({w}.expiresAt().isBefore(clock.instant())) {\n            throw new LeaseExpiredException({w}.id(), {w}.expiresAt());\n        }",
	"log.debug(\"{w} {} for device {}\", {w}.id(), deviceId);",
	"Instant now = clock.instant();\n        Duration ttl = properties.{w}Ttl();",
	"return {w}s.save({w}.with{W}(now.plus(ttl)));",
	"meterRegistry.counter(\"moorhen.registry.{w}\", \"outcome\", outcome).increment();",
	"List<{W}> page = {w}Repository.findAllBy{W}Before(cutoff, PageRequest.of(0, batchSize));",
	"if (!signer.verify(channel.manifest(), channel.signature())) {\n            throw new InvalidSignatureException(channel.name());\n        }",
	"publisher.publishEvent(new {W}ChangedEvent(this, deviceId, {w}));",
	"Objects.requireNonNull({w}, \"{w}\");",
	"return ResponseEntity.status(HttpStatus.CREATED).body(mapper.toDto({w}));",
	"jdbc.update(\"UPDATE device_{w} SET {w}_at = ? WHERE device_id = ?\", Timestamp.from(now), deviceId);",
}

func (g *gen) javaSource(file string, lines int) string {
	cls := stem(file)
	pkg := javaClass(file)
	pkg = pkg[:strings.LastIndexByte(pkg, '.')]
	var b strings.Builder
	fmt.Fprintf(&b, "package %s;\n\n", pkg)
	for _, imp := range []string{"java.time.Clock", "java.time.Duration", "java.time.Instant", "java.util.List", "java.util.Objects", "java.util.UUID",
		"org.slf4j.Logger", "org.slf4j.LoggerFactory", "org.springframework.stereotype.Service", "org.springframework.transaction.annotation.Transactional",
		"io.micrometer.core.instrument.MeterRegistry"} {
		if g.chance(0.75) {
			fmt.Fprintf(&b, "import %s;\n", imp)
		}
	}
	test := strings.HasSuffix(cls, "Test") || strings.HasSuffix(cls, "IT")
	if test {
		b.WriteString("\nimport org.junit.jupiter.api.BeforeEach;\nimport org.junit.jupiter.api.Test;\nimport static org.assertj.core.api.Assertions.assertThat;\nimport static org.junit.jupiter.api.Assertions.assertEquals;\n")
		fmt.Fprintf(&b, "\n@SpringBootTest\n@Testcontainers\nclass %s {\n\n    @Container\n    static MariaDBContainer<?> db = new MariaDBContainer<>(\"mariadb:11.4\");\n\n", cls)
	} else {
		fmt.Fprintf(&b, "\n@Service\npublic class %s {\n\n    private static final Logger log = LoggerFactory.getLogger(%s.class);\n\n", cls, cls)
		for range g.between(2, 4) {
			fmt.Fprintf(&b, "    private final %s %s;\n", g.pick(caps)+g.pick([]string{"Repository", "Properties", "Publisher", "Client"}), g.pick(words)+g.pick(caps))
		}
		b.WriteString("    private final Clock clock;\n\n")
	}
	for strings.Count(b.String(), "\n") < lines {
		if test {
			fmt.Fprintf(&b, "    @Test\n    void %s%s%s() {\n", g.pick(words), g.pick(caps), g.pick([]string{"IsRejected", "Renews", "IsIdempotent", "Expires", "Publishes", "RoundTrips"}))
		} else {
			fmt.Fprintf(&b, "    %spublic %s %s%s(UUID deviceId) {\n", g.pick([]string{"@Transactional\n    ", "", ""}), g.pick([]string{"DeviceLease", "void", "Device", "ReleaseChannel", "boolean"}), g.pick(words), g.pick(caps))
		}
		for _, i := range g.r.Perm(len(javaStmts))[:g.between(2, 5)] {
			b.WriteString("        " + g.fill(javaStmts[i]) + "\n")
		}
		b.WriteString("    }\n\n")
	}
	b.WriteString("}\n")
	return b.String()
}

var erlClauses = []string{
	"handle_info({mqtt, Topic, Payload}, State = #state{{w} = {W}}) ->\n    case mi_frame_decoder:decode(Payload) of\n        {ok, Frame} ->\n            ok = mi_batch_writer:add(Topic, Frame),\n            {noreply, State#state{{w} = {W} + 1}};\n        {error, Reason} ->\n            ?LOG_WARNING(#{what => bad_frame, topic => Topic, reason => Reason}),\n            {noreply, State}\n    end;",
	"decode(<<16#A5, Ver:8, Len:16, Rest/binary>>) when byte_size(Rest) >= Len ->\n    <<Body:Len/binary, _Crc:16>> = Rest,\n    decode_body(Ver, Body);\ndecode(<<16#A5, _/binary>>) ->\n    {error, {truncated, {w}}};",
	"handle_call({{w}, Key}, _From, State) ->\n    Reply = maps:get(Key, State#state.{w}, undefined),\n    {reply, Reply, State};",
	"flush(#state{buf = []} = State) ->\n    State;\nflush(#state{buf = Buf, sink = Sink} = State) ->\n    ok = mi_mongo_sink:insert_many(Sink, lists:reverse(Buf)),\n    telemetry:execute([moor_ingest, {w}, flush], #{count => length(Buf)}),\n    State#state{buf = [], {w} = erlang:monotonic_time(millisecond)}.",
	"init([Opts]) ->\n    process_flag(trap_exit, true),\n    {ok, _} = timer:send_interval(proplists:get_value({w}_ms, Opts, {n}000), tick),\n    {ok, #state{opts = Opts}}.",
	"check(ClientId, #{tokens := T} = Bucket) when T > 0 ->\n    {ok, Bucket#{tokens := T - 1}};\ncheck(ClientId, Bucket) ->\n    ?LOG_INFO(#{what => {w}_limited, client => ClientId}),\n    {limited, Bucket}.",
	"route(<<\"moorhen/v2/\", Rest/binary>>) ->\n    case binary:split(Rest, <<\"/\">>, [global]) of\n        [Tenant, DevId, <<\"{w}\">>] -> {ok, Tenant, DevId, {w}};\n        _ -> {error, bad_topic}\n    end;",
}

func (g *gen) erlSource(file string, lines int) string {
	mod := stem(file)
	var b strings.Builder
	fmt.Fprintf(&b, "%%%%%% @doc %s: part of the Moorhen MQTT ingest.\n-module(%s).\n", mod, mod)
	if strings.HasSuffix(mod, "_tests") || strings.HasSuffix(mod, "_SUITE") {
		b.WriteString("-include_lib(\"eunit/include/eunit.hrl\").\n-include_lib(\"common_test/include/ct.hrl\").\n\n-compile([export_all, nowarn_export_all]).\n\n")
		for strings.Count(b.String(), "\n") < lines {
			fmt.Fprintf(&b, "%s_%s_test() ->\n    Frame = <<16#A5, 2, 0, %d, %s>>,\n    ?assertMatch({ok, #{type := %s}}, mi_frame_decoder:decode(Frame)),\n    ?assertEqual(%d, byte_size(Frame)).\n\n",
				g.pick(words), g.pick(words), g.between(2, 40), strings.Repeat("1, ", g.between(1, 6))+"0", g.pick(words), g.between(4, 60))
		}
		return b.String()
	}
	b.WriteString("-behaviour(gen_server).\n\n-include_lib(\"kernel/include/logger.hrl\").\n\n-export([start_link/1, init/1, handle_call/3, handle_cast/2, handle_info/2, terminate/2]).\n\n")
	fmt.Fprintf(&b, "-record(state, {%s = 0, %s = [], buf = [], sink, opts = []}).\n\n", g.pick(words), g.pick(words))
	b.WriteString("start_link(Opts) ->\n    gen_server:start_link(?MODULE, [Opts], []).\n\n")
	for strings.Count(b.String(), "\n") < lines {
		b.WriteString(g.fill(g.pick(erlClauses)) + "\n\n")
	}
	return b.String()
}

var tsStmts = []string{
	"const docs = await devices.find({ depot, lastSeen: { $gte: since } }).limit(500).toArray();",
	"const cached = await redis.get(`fleet:${depot}:{w}`);\n  if (cached) return JSON.parse(cached);",
	"for (const d of docs) {\n    const age = now - d.lastSeen.getTime();\n    out.push({ id: d._id.toHexString(), {w}: d.{w}, stale: age > staleAfterMs });\n  }",
	"await redis.set(`fleet:${depot}:{w}`, JSON.stringify(out), { ex: {n} });",
	"if (!ctx.params.depot) {\n    return new Response(\"depot required\", { status: 400 });\n  }",
	"const km = haversine(prev.position, d.position) / 1000;",
	"return Response.json({ depot, devices: out, generatedAt: new Date().toISOString() });",
	"log.debug(\"{w} refresh\", { depot, n: docs.length });",
	"const pipeline = [{ $match: { depot } }, { $group: { _id: \"${w}\", n: { $sum: 1 } } }];",
}

func (g *gen) tsSource(file string, lines int) string {
	var b strings.Builder
	if strings.HasSuffix(file, "_test.ts") {
		b.WriteString("import { assertEquals, assertAlmostEquals } from \"jsr:@std/assert@1\";\nimport { FakeTime } from \"jsr:@std/testing@1/time\";\n\n")
		for strings.Count(b.String(), "\n") < lines {
			fmt.Fprintf(&b, "Deno.test(\"%s %s %s\", async () => {\n  const depot = \"%s\";\n  const res = await handler(new Request(`http://x/fleet/${depot}`), ctx(depot));\n  assertEquals(res.status, 200);\n  assertEquals((await res.json()).devices.length, %d);\n});\n\n",
				g.pick(words), g.pick([]string{"keeps", "drops", "groups", "marks", "rounds"}), g.pick(words), g.pick(depots), g.between(1, 40))
		}
		return b.String()
	}
	b.WriteString("import { Collection, MongoClient } from \"npm:mongodb@6.8\";\nimport { connect } from \"jsr:@db/redis@0.37\";\nimport * as log from \"jsr:@std/log@0.224\";\n")
	fmt.Fprintf(&b, "import { haversine } from \"%s\";\n\n", g.pick([]string{"../lib/geo.ts", "./geo.ts"}))
	fmt.Fprintf(&b, "export interface %sDoc {\n  _id: ObjectId;\n  serial: string;\n  depot: string;\n  lastSeen: Date;\n  position: { lat: number; lon: number };\n}\n\n", g.pick(caps))
	for strings.Count(b.String(), "\n") < lines {
		fmt.Fprintf(&b, "export async function %s%s(depot: string, since: Date): Promise<%sRow[]> {\n", g.pick(words), g.pick(caps), g.pick(caps))
		for _, i := range g.r.Perm(len(tsStmts))[:g.between(2, 4)] {
			b.WriteString("  " + g.fill(tsStmts[i]) + "\n")
		}
		b.WriteString("  return out;\n}\n\n")
	}
	return b.String()
}

// source returns lines of plausible source for file.
func (g *gen) source(file string, lines int) string {
	switch path.Ext(file) {
	case ".c":
		return g.cSource(file, lines)
	case ".java":
		return g.javaSource(file, lines)
	case ".erl":
		return g.erlSource(file, lines)
	case ".ts":
		if strings.HasPrefix(file, "ops/") {
			return g.pulumiSource(lines)
		}
		return g.tsSource(file, lines)
	case ".hcl":
		return g.nomadJob(strings.TrimSuffix(path.Base(file), ".nomad.hcl"), lines)
	}
	return g.confFile(lines)
}

func (g *gen) nomadJob(name string, lines int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job \"moorhen-%s\" {\n  datacenters = [\"hel1\"]\n  type        = \"service\"\n\n  update {\n    max_parallel      = 1\n    min_healthy_time  = \"20s\"\n    healthy_deadline  = \"5m\"\n    progress_deadline = \"10m\"\n    auto_revert       = %v\n  }\n\n", name, g.chance(0.5))
	fmt.Fprintf(&b, "  group \"%s\" {\n    count = %d\n\n    network {\n      port \"http\" { to = 8080 }\n      port \"metrics\" { to = 9568 }\n    }\n\n", name, g.between(2, 4))
	fmt.Fprintf(&b, "    service {\n      name     = \"moorhen-%s\"\n      port     = \"http\"\n      provider = \"consul\"\n      check {\n        type     = \"http\"\n        path     = \"/healthz\"\n        interval = \"10s\"\n        timeout  = \"2s\"\n      }\n    }\n\n", name)
	fmt.Fprintf(&b, "    task \"%s\" {\n      driver = \"docker\"\n      config {\n        image = \"registry.brackwater.io/moorhen/%s:2.%d.%d\"\n        ports = [\"http\", \"metrics\"]\n      }\n\n      vault {\n        policies = [\"moorhen-%s\"]\n      }\n\n", name, name, g.between(3, 19), g.between(0, 9), name)
	for strings.Count(b.String(), "\n") < lines-12 {
		fmt.Fprintf(&b, "      template {\n        destination = \"secrets/%s.env\"\n        env         = true\n        data        = <<EOT\n{{ with secret \"secret/data/moorhen/%s/%s\" }}%s_%s={{ .Data.data.%s }}{{ end }}\n{{ range service \"%s\" }}%s_ADDR={{ .Address }}:{{ .Port }}{{ end }}\nEOT\n      }\n\n",
			g.pick(words), name, g.pick(words), strings.ToUpper(g.pick(words)), strings.ToUpper(g.pick(words)), g.pick(words), g.pick(consulNames), strings.ToUpper(g.pick(words)))
	}
	fmt.Fprintf(&b, "      resources {\n        cpu    = %d\n        memory = %d\n      }\n    }\n  }\n}\n", 100*g.between(2, 10), 128*g.between(2, 12))
	return b.String()
}

func (g *gen) pulumiSource(lines int) string {
	var b strings.Builder
	b.WriteString("import * as pulumi from \"@pulumi/pulumi\";\nimport * as hcloud from \"@pulumi/hcloud\";\n\nconst cfg = new pulumi.Config();\nconst location = cfg.get(\"location\") ?? \"hel1\";\nconst network = new hcloud.Network(\"moorhen-net\", { ipRange: \"10.20.0.0/14\" });\n\n")
	for strings.Count(b.String(), "\n") < lines {
		name := g.pick([]string{"mqtt-broker", "nomad-client", "mongo-telemetry", "edge-relay", "renode-farm"}) + fmt.Sprintf("-%d", g.between(1, 9))
		fmt.Fprintf(&b, "export const %s = new hcloud.Server(\"%s\", {\n  serverType: \"%s\",\n  image: \"debian-12\",\n  location,\n  sshKeys: [cfg.require(\"opsKey\")],\n  labels: { role: \"%s\", env: pulumi.getStack() },\n  networks: [{ networkId: network.id.apply(Number), ip: \"%s\" }],\n  firewallIds: [mqttIngress.id.apply(Number)],\n}, { protect: %v });\n\n",
			strings.ReplaceAll(name, "-", "_"), name, g.pick([]string{"cpx21", "cpx31", "ccx23", "cax21", "cx32"}), g.pick(words), fmt.Sprintf("10.20.%d.%d", g.between(0, 3), g.between(2, 250)), g.chance(0.5))
	}
	return b.String()
}

func (g *gen) confFile(lines int) string {
	var b strings.Builder
	for strings.Count(b.String(), "\n") < lines {
		fmt.Fprintf(&b, "[%s.%s]\n%s_%s = %d\n%s = \"%s\"\nenabled = %v\n\n", g.pick(words), g.pick(words), g.pick(words), g.pick([]string{"ms", "max", "slots"}), g.between(1, 900), g.pick(words), g.pick(words), g.chance(0.5))
	}
	return b.String()
}

// grep is a search's output: lines of code of files with their lines.
func (g *gen) grep(files []string, n int) string {
	var b strings.Builder
	for range n {
		f := files[g.r.IntN(len(files))]
		src := strings.Split(g.source(f, 30), "\n")
		line := strings.TrimSpace(src[g.between(8, len(src)-2)])
		if line == "" {
			line = strings.TrimSpace(src[len(src)/2])
		}
		fmt.Fprintf(&b, "%s:%d:%s\n", f, g.lineFor(f), line)
	}
	return b.String()
}
