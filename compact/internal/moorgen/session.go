package moorgen

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/strata-memory/strata/compact/internal/opsgen"
)

// Standard is a session of about 120 tool calls and 300k-380k o200k
// tokens in the OpenAI form.
func Standard() opsgen.Options { return opsgen.Options{ToolCalls: 120, OutputScale: 1} }

// Long is a session of about 340-420 tool calls and 0.8M-1.0M o200k
// tokens in the OpenAI form.
func Long() opsgen.Options { return opsgen.Options{ToolCalls: 360, OutputScale: 0.9} }

// Generate returns the session for seed with options o: the same seed and
// options give the same session, byte for byte.
func Generate(seed uint64, o opsgen.Options) *opsgen.Transcript {
	t, _ := generate(seed, o)
	return t
}

// generate also returns how many planted labels the final check took back.
func generate(seed uint64, o opsgen.Options) (*opsgen.Transcript, int) {
	if o.ToolCalls <= 0 {
		o.ToolCalls = Standard().ToolCalls
	}
	g := newGen(seed, o)
	tasks := []func(){g.firmwareBuildTask, g.firmwareFaultTask, g.registryFixTask, g.registryMigrationTask,
		g.ingestTask, g.dashboardTask, g.incidentTask, g.infraTask, g.historyTask}
	weights := []int{3, 2, 3, 2, 3, 3, 3, 2, 1}
	last := -1
	for g.calls < o.ToolCalls {
		k := g.weighted(weights)
		if k == last {
			continue
		}
		last = k
		tasks[k]()
	}
	g.validate(system)
	return &opsgen.Transcript{System: system, Messages: g.msgs, Labels: g.labels, ToolCalls: g.calls}, g.dropped
}

func (g *gen) weighted(w []int) int {
	sum := 0
	for _, x := range w {
		sum += x
	}
	k := g.r.IntN(sum)
	for i, x := range w {
		if k < x {
			return i
		}
		k -= x
	}
	return len(w) - 1
}

// ---- the user ----

// constraint is a sentence of the user that plants one or two identifiers.
func (g *gen) constraint() string { return g.constraintOf(g.pickKind(nil)) }

// topicKinds are the constraints that fit the task at hand, by its topic:
// a ticket, a release hash not to rebase past and a dashboard fit all.
var topicKinds = map[string][]int{
	"firmware":  {0, 2, 4, 3, 8, 9, 11},
	"registry":  {0, 2, 4, 3, 6, 8, 10},
	"ingest":    {0, 2, 4, 1, 3, 6, 7, 8, 10},
	"dashboard": {0, 2, 4, 6, 8},
	"ops":       {0, 2, 4, 1, 5, 7, 10},
}

// pickKind picks a kind of constraint for the current topic, none of
// those in not.
func (g *gen) pickKind(not []int) int {
	ks := topicKinds[g.topic]
	if ks == nil {
		ks = []int{0, 2, 4}
	}
	var free []int
	for _, k := range ks {
		if !slices.Contains(not, k) {
			free = append(free, k)
		}
	}
	if len(free) == 0 {
		free = ks
	}
	return free[g.r.IntN(len(free))]
}

func (g *gen) constraintOf(k int) string {
	u := g.U
	switch k {
	case 0:
		return fmt.Sprintf("This is tracked as %s; reference it in the merge request, not in commit subjects.", u("code", g.codeOf("MOOR")))
	case 1:
		return fmt.Sprintf("The staging broker is %s, you can publish test frames there but don't touch prod.", u("hostport", func() string {
			return g.fresh(func() string { return fmt.Sprintf("mqtt-stg-%d.brackwater.internal:%d", g.between(1, 4), g.port()) })
		}))
	case 2:
		return fmt.Sprintf("Don't rebase past %s, the 2.x release branch was cut from there.", u("hash", g.hexf(10)))
	case 3:
		return fmt.Sprintf("The customer device that reported it is %s.", u("uuid", g.uuid))
	case 4:
		return fmt.Sprintf("Dashboard for this: %s", u("url", func() string {
			return fmt.Sprintf("https://grafana.brackwater.io/d/%s/moorhen-%s?orgId=1", g.chars(lowernum, 9), g.pick([]string{"ingest", "registry", "edge", "firmware"}))
		}))
	case 5:
		return fmt.Sprintf("Leave %s alone, the gateway image build owns it.", u("path", func() string {
			return fmt.Sprintf("/etc/moorhen/%s/%s-%s.%s", g.pick([]string{"ca", "certs", "spool"}), g.pick(words), g.chars(lowernum, 5), g.pick([]string{"pem", "toml", "key"}))
		}))
	case 6:
		return fmt.Sprintf("If you need a test tenant, use %s.", u("id", func() string { return g.prefixed("tnt", "_", 10) }))
	case 7:
		return fmt.Sprintf("Runbook: %s", u("url", func() string {
			return fmt.Sprintf("https://wiki.brackwater.io/ops/runbooks/%s-%s", g.pick([]string{"edge-gateway", "ingest-backpressure", "lease-storm", "tag-hardfault"}), g.chars(lowernum, 6))
		}))
	case 8:
		return fmt.Sprintf("The first red pipeline was %s.", u("url", func() string {
			return fmt.Sprintf("https://ci.brackwater.io/moorhen/moorhen/pipelines/%d", g.between(10000, 99999))
		}))
	case 9:
		return fmt.Sprintf("Only tag %s is ours to flash at the bench; everything else in the depot is a customer unit.", u("id", g.serial))
	case 10:
		return fmt.Sprintf("Keep the metrics listener on %s, the scraper is pinned to it.", u("hostport", g.hostport))
	default:
		return fmt.Sprintf("The upstream report is %s if you want context.", u("url", func() string {
			return fmt.Sprintf("https://github.com/zephyrproject-rtos/zephyr/issues/%d", g.between(60000, 89999))
		}))
	}
}

// constraints is a few constraints of different kinds.
func (g *gen) constraints(lo, hi int) string {
	var s []string
	var kinds []int
	for range g.between(lo, hi) {
		k := g.pickKind(kinds)
		kinds = append(kinds, k)
		s = append(s, g.constraintOf(k))
	}
	return strings.Join(s, " ")
}

// ask has the agent ask a question and the user decide.
func (g *gen) ask(question string) {
	g.say(question)
	g.user(strings.TrimSpace(g.pick([]string{"Go with the first.", "The second one.", "First option, keep the diff small.", "Second, and add a test for it.", "Do the second; we'll revisit after the release."}) + " " + g.constraints(0, 2)))
}

// interject has the agent report progress and, now and then, the user
// add a constraint or a link before the work goes on.
func (g *gen) interject(note string) {
	if !g.chance(0.35) {
		return
	}
	g.say(note)
	g.user(g.pick([]string{"One more thing.", "Also:", "FYI.", "Before you go on:", "Noting this here."}) + " " + g.constraint())
}

func (g *gen) thanks() {
	if g.chance(0.35) {
		c := g.constraintOf([]int{0, 2, 4}[g.r.IntN(3)])
		g.user(g.pick([]string{"Thanks. For the next one:", "Good, merged. Also:", "Looks right. By the way:"}) + " " + c)
		g.say(g.pick([]string{"Noted.", "Understood, I'll keep that in mind.", "Got it."}))
	}
}

// ---- reading ----

func (g *gen) untouched(files []string) []string {
	var out []string
	for _, f := range files {
		if !g.touched[f] {
			out = append(out, f)
		}
	}
	return out
}

// pickEdit picks a file to edit, one not edited before if there is one.
func (g *gen) pickEdit(files []string) string {
	if fs := g.untouched(files); len(fs) > 0 {
		return g.pick(fs)
	}
	return g.pick(files)
}

func appendNew(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// fileText is the text of a file of the repository, the same each time
// it is read.
func (g *gen) fileText(f string, lines int) string {
	if s, ok := g.content[f]; ok {
		return s
	}
	s := g.source(f, lines)
	g.content[f] = s
	return s
}

// readSome reads up to k untouched files of fs, one to three per round,
// those not read yet first.
func (g *gen) readSome(fs []string, k int, text string) []string {
	fs = g.untouched(fs)
	g.r.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
	sort.SliceStable(fs, func(i, j int) bool {
		_, ri := g.content[fs[i]]
		_, rj := g.content[fs[j]]
		return !ri && rj
	})
	fs = fs[:min(k, len(fs))]
	read := fs
	for len(fs) > 0 {
		n := min(len(fs), g.between(1, 3))
		var steps []step
		for _, f := range fs[:n] {
			steps = append(steps, g.readFile(f, g.fileText(f, min(650, g.n(110, 330)))))
		}
		g.round(text, steps...)
		text = ""
		fs = fs[n:]
	}
	return read
}

func (g *gen) listing(c component) step {
	var fs []string
	for _, f := range append(append([]string{}, c.files...), c.tests...) {
		fs = append(fs, strings.TrimPrefix(f, c.dir+"/"))
	}
	if c.lang == "c" {
		fs = append(fs, "app/prj.conf", "app/Kconfig", "app/CMakeLists.txt", "app/boards/nrf52840dk_nrf52840.overlay", "app/boards/nucleo_l476rg.overlay", "app/boards/moorhen_tag_nrf52833.overlay", "renode/moorhen_tag.resc", "renode/uplink_smoke.robot")
	}
	return g.listFiles(c.dir, fs)
}

func (g *gen) maybeHistory(dir string) {
	if g.chance(0.5) {
		cmd, o := g.gitLog(dir)
		g.round(g.pick([]string{"Checking what changed recently.", "Looking at the recent history first.", ""}), g.sh(cmd, o, 0))
	}
}

func (g *gen) commit(files []string, msg string) {
	cmd, o := g.gitStatus(files)
	g.round("Reviewing what changed before committing.", g.sh(cmd, o, 0))
	cmd, o = g.gitCommit(files, msg)
	g.round("", g.sh(cmd, o, 0))
}

func (g *gen) run(text string, cmd string, o *out, exit int) {
	g.round(text, g.sh(cmd, o, exit))
}

// ---- the edits ----

// cEdit is a fix of firmware source: its new text holds a fresh error
// code or a guard constant.
func (g *gen) cEdit(f string) step {
	mod := stem(f)
	old := fmt.Sprintf("\tring_buf_put(&ctx->rb, (uint8_t *)&rec, sizeof(rec));")
	var nw string
	switch g.r.IntN(3) {
	case 0:
		nw = fmt.Sprintf("\tif (ring_buf_space_get(&ctx->rb) < sizeof(rec)) {\n\t\tLOG_WRN(\"%s: ring full, dropping oldest record\", \"%s\");\n\t\tring_buf_get(&ctx->rb, NULL, sizeof(rec));\n\t}\n\tring_buf_put(&ctx->rb, (uint8_t *)&rec, sizeof(rec));",
			g.W("code", g.codeOf("FWE")), mod)
	case 1:
		nw = fmt.Sprintf("\t/* guard word checked on wake; see %s */\n\trec.guard = %s;\n\tring_buf_put(&ctx->rb, (uint8_t *)&rec, sizeof(rec));", g.W("code", g.codeOf("FWE")), g.W("id", func() string { return "0x" + strings.ToUpper(g.chars(hexDigits, 8)) + "u" }))
	default:
		old = "k_sem_take(&uplink_sem, K_FOREVER);"
		nw = fmt.Sprintf("if (k_sem_take(&uplink_sem, K_MSEC(%d)) != 0) {\n\t\tLOG_ERR(\"%s: uplink stalled, resetting radio\");\n\t\treturn -EAGAIN;\n\t}", g.between(200, 5000), g.W("code", g.codeOf("FWE")))
	}
	return g.replace(f, old, nw)
}

func (g *gen) confEdit() step {
	sym := g.W("id", func() string {
		return fmt.Sprintf("CONFIG_MOORHEN_%s_%s_%s", strings.ToUpper(g.pick(words)), strings.ToUpper(g.pick(words)), g.pick([]string{"SLOTS", "BYTES", "MS", "DEPTH"}))
	})
	return g.replace("firmware/app/prj.conf", "CONFIG_MOORHEN_RINGBUF_SLOTS=64", fmt.Sprintf("CONFIG_MOORHEN_RINGBUF_SLOTS=%d\n%s=%d\nCONFIG_LOG_BUFFER_SIZE=%d", g.pick2(32, 48), sym, g.between(2, 512), 1024*g.between(1, 4)))
}

func (g *gen) javaEdit(f string) step {
	code := g.W("code", g.codeOf("MHR"))
	k := g.r.IntN(3)
	switch {
	case strings.Contains(f, "/config/"):
		k = 2
	case strings.Contains(f, "/lease/"):
		k = g.r.IntN(2)
	}
	switch k {
	case 0:
		return g.replace(f, "if (lease.expiresAt().isBefore(clock.instant())) {",
			fmt.Sprintf("Instant now = clock.instant();\n        if (lease.expiresAt().plus(properties.graceTtl()).isBefore(now)) {\n            log.info(\"[%s] lease {} expired at {}\", lease.id(), lease.expiresAt());", code))
	case 1:
		return g.replace(f, "return leases.save(lease.withExpiresAt(now.plus(ttl)));",
			fmt.Sprintf("if (!lease.gatewayId().equals(gatewayId)) {\n            throw new LeaseConflictException(ErrorCode.of(\"%s\"), lease.id(), gatewayId);\n        }\n        return leases.save(lease.withExpiresAt(now.plus(ttl)));", code))
	default:
		return g.replace(f, "@Value(\"${moorhen.mqtt.broker-url}\")",
			fmt.Sprintf("@Value(\"${moorhen.mqtt.broker-url:%s}\") // %s", g.W("url", func() string { return "mqtts://" + g.remote() }), code))
	}
}

func (g *gen) erlEdit(f string) step {
	code := g.W("code", g.codeOf("MQI"))
	k := g.r.IntN(2)
	switch stem(f) {
	case "mi_mqtt_conn", "mi_frame_decoder", "mi_topic_router":
		k = 0
	case "mi_batch_writer", "mi_mongo_sink":
		k = 1
	}
	switch k {
	case 0:
		return g.replace(f, "{ok, Frame} = mi_frame_decoder:decode(Payload),",
			fmt.Sprintf("case mi_frame_decoder:decode(Payload) of\n        {ok, Frame} -> ok;\n        {error, Reason} ->\n            ?LOG_WARNING(#{what => bad_frame, code => <<\"%s\">>, reason => Reason}),\n            throw({skip, Reason})\n    end,", code))
	default:
		return g.replace(f, "ok = mi_mongo_sink:insert_many(Sink, lists:reverse(Buf)),",
			fmt.Sprintf("case mi_mongo_sink:insert_many(Sink, lists:reverse(Buf)) of\n        ok -> ok;\n        {error, closed} ->\n            %% %s: reconnect once, then let the supervisor restart us\n            ok = mi_mongo_sink:reconnect(Sink),\n            ok = mi_mongo_sink:insert_many(Sink, lists:reverse(Buf))\n    end,", code))
	}
}

func (g *gen) tsEdit(f string) step {
	switch g.r.IntN(2) {
	case 0:
		return g.replace(f, "const age = now - d.lastSeen.getTime();",
			fmt.Sprintf("const seen = d.lastSeen instanceof Date ? d.lastSeen : new Date(d.lastSeen);\n    const age = now - seen.getTime(); // %s", g.W("code", g.codeOf("DSB"))))
	default:
		return g.replace(f, "await redis.set(`fleet:${depot}:", fmt.Sprintf("await redis.set(`%s:${depot}:", g.W("id", func() string { return "fleet:" + g.pick(words) + ":v" + g.chars(lowernum, 6) })))
	}
}

// editFor dispatches on the language of f.
func (g *gen) editFor(f string) step {
	switch path.Ext(f) {
	case ".c":
		return g.cEdit(f)
	case ".java":
		return g.javaEdit(f)
	case ".erl":
		return g.erlEdit(f)
	}
	return g.tsEdit(f)
}

// ---- tasks ----

func (g *gen) firmwareBuildTask() {
	g.topic = "firmware"
	b := boards[g.r.IntN(len(boards))]
	g.user(fmt.Sprintf("%s for %s is broken on main since the %s change. Please get it building again without bumping Zephyr. %s",
		g.pick([]string{"The west build", "The firmware build", "CI's firmware job"}), b.qual, g.pick([]string{"uplink batching", "GNSS power-save", "ring buffer persistence", "BLE advertising"}), g.constraints(1, 3)))
	g.maybeHistory("firmware")
	g.round("Let me look at the firmware layout.", g.listing(firmware))
	g.readSome(firmware.files, g.between(2, 5), "Reading the sources involved.")
	cmd, o := g.westBuildFail(b)
	g.run("Reproducing the build failure.", cmd, o, 1)
	g.interject("Reproduced locally; the error is in the application code, not in Zephyr.")
	g.round("", g.search(g.pick([]string{"ring_buf_put", "CONFIG_MOORHEN_", "k_sem_take", "LOG_MODULE_REGISTER"}), "firmware/app/src", g.grep(firmware.files, g.n(6, 20))),
		g.readFile("firmware/app/prj.conf", g.prjConf()))
	if g.chance(0.4) {
		g.ask(fmt.Sprintf("I can fix this by shrinking the ring buffer from 64 to %d records, or by moving the almanac cache to external flash. The first costs about %d minutes of offline buffering; the second is a bigger change. Which do you prefer?", g.pick2(32, 48), g.between(8, 30)))
	}
	var changed []string
	f := g.pickEdit(firmware.files)
	changed = append(changed, f)
	steps := []step{g.cEdit(f)}
	if !g.touched["firmware/app/prj.conf"] && g.chance(0.6) {
		steps = append(steps, g.confEdit())
		changed = append(changed, "firmware/app/prj.conf")
	}
	g.round("The fix goes into "+path.Base(f)+".", steps...)
	if g.chance(0.35) {
		cmd, o = g.westBuildFail(b)
		g.run("Building again.", cmd, o, 1)
		f2 := g.pickEdit(firmware.files)
		g.round("A second error further down; fixing that too.", g.cEdit(f2))
		changed = appendNew(changed, f2)
	}
	cmd, o = g.westBuildPass(b)
	g.run("Building again.", cmd, o, 0)
	if g.chance(0.65) {
		g.twisterFailRound("Running the twister suite.")
		f2 := g.pickEdit(firmware.files)
		g.round("One scenario still fails; fixing the code it exercises.", g.cEdit(f2))
		changed = appendNew(changed, f2)
	}
	cmd, o = g.twisterPass(g.chance(0.5))
	g.run("Running the twister suite.", cmd, o, 0)
	if g.chance(0.5) {
		b2 := boards[g.r.IntN(len(boards))]
		cmd, o = g.westBuildPass(b2)
		g.run("Checking the other board still builds.", cmd, o, 0)
	}
	g.commit(changed, "firmware: "+g.pick([]string{"fit the image in flash again", "fix the link on " + b.name, "restore the build after the uplink change"}))
	g.say(fmt.Sprintf("Done: the %s build links again and twister passes. The change is on a branch with a merge request open.", b.qual))
	g.thanks()
}

// twisterFailRound runs twister to a failure; when the log was not
// inline, the agent reads the handler log (a read: nothing in it is a
// failure line).
func (g *gen) twisterFailRound(text string) {
	cmd, o, log := g.twisterFail()
	g.run(text, cmd, o, 1)
	if log != "" {
		g.round("The log wasn't inline; reading it.", g.shRead("cat "+log, g.handlerLog()))
	}
}

func (g *gen) prjConf() string {
	var b strings.Builder
	b.WriteString("# Moorhen tag firmware\nCONFIG_MOORHEN_RINGBUF_SLOTS=64\nCONFIG_LOG=y\nCONFIG_LOG_BACKEND_RTT=y\nCONFIG_USE_SEGGER_RTT=y\nCONFIG_BT=y\nCONFIG_BT_PERIPHERAL=y\nCONFIG_SETTINGS=y\nCONFIG_NVS=y\nCONFIG_ZCBOR=y\n")
	for range g.n(20, 60) {
		fmt.Fprintf(&b, "CONFIG_%s_%s=%s\n", g.pick([]string{"BT", "MOORHEN", "SENSOR", "GNSS", "PM", "NVS", "LOG"}), strings.ToUpper(g.pick(words)), g.pick([]string{"y", "n", fmt.Sprint(g.between(1, 4096))}))
	}
	return b.String()
}

func (g *gen) firmwareFaultTask() {
	g.topic = "firmware"
	g.user(fmt.Sprintf("A tag at %s keeps rebooting; this is what the RTT log showed before the watchdog:\n%s\nCan you find the cause? Reproduce it in QEMU or Renode, not on hardware. %s", g.pick(depots), g.userPaste1(), g.constraints(0, 2)))
	g.readSome(firmware.files, g.between(2, 4), "Looking at the uplink and storage code first.")
	cmd, o, pc, elf := g.faultRun()
	g.run("Trying to reproduce the fault under emulation.", cmd, o, 124)
	f := g.pickEdit(firmware.files)
	cmd, o, line := g.addr2line(pc, elf, f)
	g.run("Resolving the faulting address.", cmd, o, 0)
	g.interject("The fault reproduces under emulation and the address resolves into the application; reading the code around it.")
	from := max(1, line-g.between(20, 40))
	g.round("", g.readRange(f, g.cBody(f, g.n(40, 90)), from))
	if g.chance(0.4) {
		g.ask("The buffer is written past its end when a frame arrives during a flush. I can either take the lock across the flush or copy the record out first. Copying costs 200 bytes of stack in the uplink work queue. Which way?")
	}
	var changed []string
	changed = append(changed, f)
	g.round("Fixing the overrun.", g.cEdit(f))
	tf := g.W("path", func() string {
		return fmt.Sprintf("firmware/tests/ringbuf/src/test_%s_%s.c", g.pick(words), g.pick([]string{"overrun", "flush_race", "guard"}))
	})
	changed = append(changed, tf)
	g.round("Adding a regression test.", g.write(tf, g.ztestFile()))
	if g.chance(0.5) {
		g.twisterFailRound("")
		f2 := g.pickEdit(firmware.files)
		g.round("", g.cEdit(f2))
		changed = appendNew(changed, f2)
	}
	cmd, o = g.twisterPass(g.chance(0.4))
	g.run("Running the tests.", cmd, o, 0)
	cmd, o = g.renodeSmoke()
	g.run("And the Renode smoke test, which used to fault.", cmd, o, 0)
	g.commit(changed, "firmware: fix ring buffer overrun during flush")
	g.say("The fault was an overrun of the ring buffer when a record arrived during a flush; fixed, with a regression test. Renode boots and queues records without faulting.")
	g.thanks()
}

// userPaste1 is a pasted firmware log.
func (g *gen) userPaste1() string {
	return fmt.Sprintf("```\n[00:%02d:%02d.%03d,%03d] <err> uplink: cbor encode failed: -%d (frame seq %d)\n[00:%02d:%02d.%03d,%03d] <err> os: ***** BUS FAULT *****\n[00:%02d:%02d.%03d,%03d] <err> os: Faulting instruction address (r15/pc): %s\n```\nTag serial %s.",
		g.between(0, 59), g.between(0, 59), g.between(0, 999), g.between(0, 999), g.pick2(22, 28), g.between(1, 60000),
		g.between(0, 59), g.between(0, 59), g.between(0, 999), g.between(0, 999),
		g.between(0, 59), g.between(0, 59), g.between(0, 999), g.between(0, 999), g.U("id", func() string { return g.addr("flash") }), g.U("id", g.serial))
}

func (g *gen) ztestFile() string {
	var b strings.Builder
	b.WriteString("/*\n * Copyright (c) 2025 Brackwater Systems Ltd.\n * SPDX-License-Identifier: LicenseRef-Brackwater-Proprietary\n */\n\n#include <zephyr/ztest.h>\n#include \"ringbuf_store.h\"\n\n")
	fmt.Fprintf(&b, "#define GUARD %s\n\nstatic struct ringbuf_store_ctx ctx;\n\nstatic void before(void *f)\n{\n\tARG_UNUSED(f);\n\tringbuf_store_init(&ctx);\n}\n\n", g.W("id", func() string { return "0x" + strings.ToUpper(g.chars(hexDigits, 8)) + "u" }))
	for range g.between(2, 5) {
		fmt.Fprintf(&b, "ZTEST(ringbuf_%s, test_%s_%s)\n{\n\tstruct rec r = { .seq = %d, .guard = GUARD };\n\n\tfor (int i = 0; i < %d; i++) {\n\t\tzassert_ok(ringbuf_store_put(&ctx, &r));\n\t}\n\tzassert_equal(ringbuf_store_count(&ctx), %d);\n}\n\n", g.pick(words), g.pick(words), g.pick(words), g.between(1, 90), g.between(2, 80), g.between(2, 80))
	}
	b.WriteString("ZTEST_SUITE(ringbuf_overrun, NULL, NULL, before, NULL, NULL);\n")
	return b.String()
}

// renodeSmoke is the Renode robot smoke test, passing.
func (g *gen) renodeSmoke() (string, *out) {
	o := &out{}
	pid := g.between(2000, 90000)
	o.addf("Preparing suites\nStarted Renode instance on port 9999; pid %d\nStarting suites\nRunning firmware/renode/uplink_smoke.robot", pid)
	for _, t := range []string{"Should Boot", "Should Queue Records", "Should Flush Over BLE", "Should Survive Flush Under Load", "Should Enter Ship Mode"} {
		o.addf("+++++ Starting test 'uplink_smoke.%s'", t)
		if g.chance(0.3) {
			o.addf("uart0: [00:00:0%d.%03d,%03d] <inf> uplink: flush ok seq=%d id=%s", g.between(1, 9), g.between(0, 999), g.between(0, 999), g.between(1, 9000), g.P("id", g.hexf(8)))
		}
		o.addf("+++++ Finished test 'uplink_smoke.%s' in %.2f seconds with status OK", t, g.secs(0.5, 12))
	}
	o.addf("Cleaning up suites\nClosing Renode pid %d\nAggregating all robot results\nOutput:  %s/firmware/renode/robot_output.xml\nLog:     %s/firmware/renode/log.html\nReport:  %s/firmware/renode/report.html\nTests finished successfully :)", pid, root, root, root)
	return "renode-test firmware/renode/uplink_smoke.robot", o
}

func (g *gen) registryFixTask() {
	g.topic = "registry"
	if g.chance(0.5) {
		g.user(fmt.Sprintf("Production registry started throwing this after yesterday's deploy:\n%s\nPlease find and fix it. %s", g.userPaste("registry"), g.constraints(0, 2)))
	} else {
		g.user(fmt.Sprintf("`mvn verify` in registry/ is red since the %s refactor. Please fix it; don't disable tests. %s", g.pick([]string{"lease", "channel", "provisioning", "Hibernate 6.5"}), g.constraints(1, 3)))
	}
	g.maybeHistory("registry")
	g.round("", g.search(g.pick([]string{"LeaseConflict", "expiresAt", "ChannelSigner", "graceTtl", "broker-url"}), "registry/src", g.grep(registry.files, g.n(5, 16))))
	g.readSome(append(append([]string{}, registry.files...), registry.tests...), g.between(3, 6), "Reading the lease and device code.")
	cmd, o := g.mvnFail()
	g.run("Running the build to see it fail.", cmd, o, 1)
	g.interject("The build fails locally as well; looking into the cause now.")
	if g.chance(0.4) {
		cmd, o = g.registryRun(true)
		g.run("Reproducing against a local instance as well.", cmd, o, 0)
		cmd, o = g.curlFail("registry")
		g.run("", strings.Replace(cmd, "registry.service.hel1.consul:8080", "localhost:8080", 1), o, 22)
	}
	if g.chance(0.5) {
		g.readSome(registry.files, g.between(1, 2), "")
	}
	if g.chance(0.35) {
		g.ask("Should a renewal from a different gateway be rejected with 409, or should the lease move to the new gateway? The first is safer; the second is what the gateways expect during a handover.")
	}
	f := g.pickEdit(registry.files)
	changed := []string{f}
	g.round("Fixing it in "+path.Base(f)+".", g.javaEdit(f))
	if g.chance(0.55) {
		cmd, o = g.mvnFail()
		g.run("Running the build again.", cmd, o, 1)
		f2 := g.pickEdit(registry.files)
		g.round("Another failure, in a different place.", g.javaEdit(f2))
		changed = appendNew(changed, f2)
	}
	cmd, o = g.mvnPass()
	g.run("Running the whole build.", cmd, o, 0)
	if g.chance(0.6) {
		if g.chance(0.45) {
			cmd, o = g.registryRun(false)
			g.run("Starting it locally.", cmd, o, 1)
			g.round("A local setting is wrong; fixing the local profile.", g.replace("registry/src/main/resources/application-local.yml", "broker-url: mqtts://mqtt-broker :8883", "broker-url: "+g.W("url", func() string { return "mqtts://" + g.remote() })))
			changed = append(changed, "registry/src/main/resources/application-local.yml")
		}
		cmd, o = g.registryRun(true)
		g.run("Starting the registry locally.", cmd, o, 0)
		cmd, o = g.curlPass("registry")
		g.run("", strings.Replace(cmd, "registry.service.hel1.consul:8080", "localhost:8080", 1), o, 0)
	}
	g.commit(changed, "registry: "+g.pick([]string{"reject lease renewals from another gateway", "honour the lease grace period", "fix channel signer wiring"}))
	g.say("Fixed and committed; the build is green, including the integration tests.")
	g.thanks()
}

func (g *gen) registryMigrationTask() {
	g.topic = "registry"
	g.user(fmt.Sprintf("Add a grace period to device leases in the registry: a lease should stay valid for a configurable time after it expires, so gateways that reconnect late don't lose their tags. Use a new Flyway migration; never edit applied ones. %s", g.constraints(1, 3)))
	var migs []string
	for i := 1; i <= 13; i++ {
		migs = append(migs, fmt.Sprintf("V%d__%s_%s.sql", i, g.pick(words), g.pick(words)))
	}
	g.round("Looking at the migrations and the lease code.", g.listFiles("registry/src/main/resources/db/migration", migs))
	g.readSome([]string{"registry/src/main/java/com/brackwater/moorhen/registry/lease/LeaseManager.java", "registry/src/main/java/com/brackwater/moorhen/registry/lease/DeviceLease.java",
		"registry/src/main/java/com/brackwater/moorhen/registry/lease/LeaseRepository.java", "registry/src/test/java/com/brackwater/moorhen/registry/lease/LeaseManagerTest.java"}, g.between(2, 4), "")
	mig := g.W("path", func() string {
		return fmt.Sprintf("registry/src/main/resources/db/migration/V%d__lease_grace_%s.sql", g.between(14, 40), g.chars(lowernum, 4))
	})
	idx := g.W("id", func() string { return "idx_lease_grace_" + g.chars(lowernum, 6) })
	sql := fmt.Sprintf("-- Lease grace period (see LeaseManager#renew)\nALTER TABLE device_lease\n    ADD COLUMN grace_seconds INT NOT NULL DEFAULT %d,\n    ADD COLUMN grace_until DATETIME(6) NULL;\n\nUPDATE device_lease SET grace_until = expires_at + INTERVAL grace_seconds SECOND;\n\nCREATE INDEX %s ON device_lease (gateway_id, grace_until);\n", g.between(30, 600), idx)
	test := g.W("path", func() string {
		return fmt.Sprintf("registry/src/test/java/com/brackwater/moorhen/registry/lease/LeaseGrace%sTest.java", g.pick(caps))
	})
	g.round("Writing the migration and a test for the grace period.", g.write(mig, sql), g.write(test, g.javaSource(test, g.n(40, 90))))
	f := "registry/src/main/java/com/brackwater/moorhen/registry/lease/LeaseManager.java"
	g.round("", g.javaEdit(f))
	changed := []string{mig, test, f}
	cmd, o := g.mvnFail()
	g.run("Building.", cmd, o, 1)
	f2 := g.pickEdit(registry.files)
	g.round("Fixing the failure.", g.javaEdit(f2))
	changed = appendNew(changed, f2)
	cmd, o = g.mvnPass()
	g.run("", cmd, o, 0)
	cmd, o = g.registryRun(true)
	g.run("Checking the migration applies on startup.", cmd, o, 0)
	cmd, o = g.curlPass("registry")
	g.run("", strings.Replace(cmd, "registry.service.hel1.consul:8080", "localhost:8080", 1), o, 0)
	g.commit(changed, "registry: lease grace period")
	g.say(fmt.Sprintf("The grace period is in: a new migration (%s), the renewal logic, and a test. The build is green.", mig))
	g.thanks()
}

func (g *gen) ingestTask() {
	g.topic = "ingest"
	if g.chance(0.5) {
		g.user(fmt.Sprintf("moorhen-ingest on hel1 is crash-looping since this morning's deploy. We're losing positions. Here's what I saw:\n%s\n%s", g.userPaste("ingest"), g.constraints(1, 3)))
	} else {
		g.user(fmt.Sprintf("The ingest test suite is failing after the emqtt upgrade. Please fix it and make sure the release still builds. %s", g.constraints(1, 3)))
	}
	cmd, o := g.nomadStatus("ingest", false)
	g.run("Checking the job first.", cmd, o, 0)
	cmd, o = g.nomadAllocLogs("ingest", true)
	g.run("", cmd, o, 0)
	g.interject("The connection processes crash and the supervisor gives up after its restart intensity; reproducing with the test suites next.")
	g.round("", g.listing(ingest))
	g.readSome(append(append([]string{}, ingest.files...), ingest.tests...), g.between(3, 6), "Reading the connection and sink modules.")
	var changed []string
	for attempt := 0; attempt < 2; attempt++ {
		if g.chance(0.5) {
			cmd, o = g.rebarCtFail()
		} else {
			cmd, o = g.rebarEunitFail()
		}
		g.run("Running the tests.", cmd, o, 1)
		if attempt == 0 && g.chance(0.3) {
			g.ask("When the Mongo sink connection closes mid-batch, should the writer retry the batch once and then crash, or park the batch in a dead-letter collection? Retrying keeps ordering; parking never blocks the connection.")
		}
		f := g.pickEdit(ingest.files[2:])
		changed = appendNew(changed, f)
		g.round("Fixing "+path.Base(f)+".", g.erlEdit(f))
		if g.chance(0.4) {
			break
		}
	}
	if g.chance(0.5) {
		tf := g.W("path", func() string {
			return fmt.Sprintf("ingest/apps/moor_ingest/test/mi_%s_%s_tests.erl", g.pick(words), g.chars(lowernum, 4))
		})
		g.round("Adding an EUnit test for the case.", g.write(tf, g.erlSource(tf, g.n(30, 70))))
		changed = append(changed, tf)
	}
	cmd, o = g.rebarEunitPass()
	g.run("", cmd, o, 0)
	cmd, o = g.rebarCtPass()
	g.run("", cmd, o, 0)
	cmd, o = g.rebarRelease()
	g.run("Building the release image.", cmd, o, 0)
	if g.chance(0.6) {
		c, exit, o := g.nomadRun("ingest", 0)
		g.run("Deploying.", c, o, exit)
		cmd, o = g.nomadStatus("ingest", true)
		g.run("", cmd, o, 0)
	}
	g.commit(changed, "ingest: "+g.pick([]string{"survive sink disconnects", "skip undecodable frames", "fix topic routing after emqtt upgrade"}))
	g.say("The ingest suites pass, the release builds, and the change is committed.")
	g.thanks()
}

func (g *gen) dashboardTask() {
	g.topic = "dashboard"
	feature := g.pick([]string{"a per-depot rollup endpoint (devices online, stale, offline)", "a staleness badge on the fleet page", "a trailer history view"})
	g.user(fmt.Sprintf("Please add %s to the dashboard. Cache it in Redis, Mongo is already busy. %s", feature, g.constraints(1, 3)))
	g.round("", g.listing(dashboard))
	g.readSome(append(append([]string{}, dashboard.files...), dashboard.tests...), g.between(3, 6), "Reading the fleet route and the stores.")
	cmd, o := g.mongoPass()
	g.run("Looking at the data the dashboard reads.", cmd, o, 0)
	cmd, o = g.redisPass()
	g.run("", cmd, o, 0)
	g.interject("I have the data shapes; writing the module next.")
	if g.chance(0.4) {
		g.ask("The rollup can be cached per depot for 60 seconds, or recomputed on each request from an aggregation. Caching is cheap but up to a minute stale. Which one?")
	}
	mod := g.W("path", func() string {
		return fmt.Sprintf("dashboard/lib/%s_rollup.ts", g.pick([]string{"depot", "trailer", "fleet", "zone"})+g.chars(lowernum, 2))
	})
	test := strings.TrimSuffix(mod, ".ts") + "_test.ts"
	g.W("path", func() string { return test })
	g.denoNew = append(g.denoNew, strings.TrimPrefix(test, "dashboard/"))
	key := g.W("id", func() string { return "fleet:rollup:v" + g.chars(lowernum, 6) })
	src := g.tsSource(mod, g.n(40, 100)) + fmt.Sprintf("\nexport const ROLLUP_KEY = \"%s\";\nexport const ROLLUP_TTL_S = %d;\n", key, g.between(30, 120))
	g.round("Writing the rollup module and its test.", g.write(mod, src), g.write(test, g.tsSource(test, g.n(30, 70))))
	changed := []string{mod, test}
	cmd, o = g.denoLint(false)
	g.run("Linting.", cmd, o, 1)
	f := g.pickEdit(dashboard.files)
	g.round("", g.tsEdit(f))
	changed = append(changed, f)
	if g.chance(0.35) {
		cmd, o = g.denoCheckFail("deno check main.ts")
		g.run("Type-checking.", cmd, o, 1)
		f = g.pickEdit(dashboard.files)
		g.round("", g.tsEdit(f))
		changed = appendNew(changed, f)
	}
	cmd, o = g.denoTestFail()
	g.run("Running the tests.", cmd, o, 1)
	f = g.pickEdit(dashboard.files)
	g.round("Fixing the failing case.", g.tsEdit(f))
	changed = appendNew(changed, f)
	cmd, o = g.denoTestPass()
	g.run("", cmd, o, 0)
	cmd, o = g.denoLint(true)
	g.run("", cmd, o, 0)
	if g.chance(0.55) {
		cmd, o = g.mongoFail()
		g.run("Adding the index the rollup needs.", cmd, o, 1)
		g.say("The index can't be created as it stands; I'll leave the index out of this change and note it in the merge request.")
	}
	cmd, o = g.denoTaskBuild()
	g.run("", cmd, o, 0)
	g.commit(changed, "dashboard: "+feature)
	g.say(fmt.Sprintf("Added %s in %s, cached in Redis; lint and tests pass.", feature, mod))
	g.thanks()
}

func (g *gen) incidentTask() {
	g.topic = "ops"
	gw := g.pick(gateways)
	g.user(fmt.Sprintf("Tags around %s stopped reporting about an hour ago and the registry is throwing 5xx for lease renewals. Can you look? %s", strings.Split(gw, "-")[1], g.constraints(1, 3)))
	c, exit, o := g.gwStatus(gw, false)
	g.run("Checking the gateway bridge first.", c, o, exit)
	cmd, o := g.journal(gw)
	g.run("", cmd, o, 0)
	cmd, o = g.consulHealth(g.pick([]string{"mqtt-broker", "moorhen-registry"}))
	g.run("Checking what Consul thinks is healthy.", cmd, o, 0)
	cmd, o = g.curlFail("registry")
	g.run("Calling the registry the way the gateway does.", cmd, o, 22)
	g.interject("Two problems so far: the bridge on the gateway is down, and the registry answers lease calls with errors. Looking at the registry job next.")
	cmd, o = g.nomadStatus("registry", false)
	g.run("", cmd, o, 0)
	cmd, o = g.nomadAllocLogs("registry", true)
	g.run("", cmd, o, 0)
	ok := g.chance(0.5)
	c, exit, o = g.vaultRead(ok)
	g.run("Checking the registry's database credentials.", c, o, exit)
	g.round("Reading the job and gateway config.", g.readFile("ops/nomad/registry.nomad.hcl", g.nomadJob("registry", g.n(80, 200))),
		g.readFile("ops/edge/gw.toml.tmpl", g.confFile(g.n(40, 120))))
	if g.chance(0.5) {
		g.ask("The registry ran out of database connections after the pool size was halved in the last job version. I can roll back to the previous job version, or raise the pool and pin the gateway's broker address. Rolling back is quickest; the second fixes both problems. Which?")
	}
	changed := []string{"ops/nomad/registry.nomad.hcl"}
	edit := g.replace("ops/nomad/registry.nomad.hcl", "        memory = ", fmt.Sprintf("        memory = %d\n      }\n      env {\n        SPRING_DATASOURCE_HIKARI_MAXIMUM_POOL_SIZE = \"%d\"\n        MOORHEN_MQTT_BROKER_URL = \"%s\"\n        IMAGE_DIGEST = \"sha256:%s\"\n      }\n      resources {\n        memory = ",
		128*g.between(4, 12), g.between(10, 40), g.W("url", func() string { return "mqtts://" + g.remote() }), g.W("hash", g.hexf(64))))
	gwEdit := g.replace("ops/edge/gw.toml.tmpl", "[mqtt]", fmt.Sprintf("[mqtt]\nbroker = \"%s\"\nca_fingerprint = \"%s\"", g.W("hostport", g.remote), g.W("hash", g.hexf(40))))
	changed = append(changed, "ops/edge/gw.toml.tmpl")
	g.round("Raising the pool and pinning the broker.", edit, gwEdit)
	if g.chance(0.65) {
		c, exit, o = g.nomadRun("registry", 1+g.r.IntN(2))
		g.run("Deploying the registry.", c, o, exit)
		g.round("The deployment didn't go through; adjusting the job.", g.replace("ops/nomad/registry.nomad.hcl", "    count = ", fmt.Sprintf("    # %s\n    count = ", g.W("code", g.codeOf("OPS")))))
	}
	c, exit, o = g.nomadRun("registry", 0)
	g.run("Deploying.", c, o, exit)
	cmd, o = g.curlPass("registry")
	g.run("", cmd, o, 0)
	if g.chance(0.5) {
		cmd, o = g.curlFail("dashboard")
		g.run("The dashboard should pick the positions up again; checking it.", cmd, o, 22)
		g.say("The dashboard still errors on its cached rollup; it expires within a minute, so I'll check again after the gateway.")
	}
	c, exit, o = g.gwStatus(gw, true)
	g.run("Restarted the bridge with the new template; checking it.", c, o, exit)
	g.commit(changed, "ops: raise registry pool, pin edge broker")
	g.say("Recovered: the registry pool was exhausted and the gateway couldn't verify the broker. Both fixed and deployed; the gateway is reporting again.")
	g.thanks()
}

func (g *gen) infraTask() {
	g.topic = "ops"
	depot := g.pick(depots)
	g.user(fmt.Sprintf("We need another MQTT relay in hel1 for the %s depot rollout. Add it in Pulumi next to the existing ones. %s", depot, g.constraints(1, 3)))
	cmd, o := g.hcloudServers()
	g.run("Listing what runs in the project today.", cmd, o, 0)
	g.round("", g.readFile("ops/infra/index.ts", g.pulumiSource(g.n(60, 160))), g.readFile("ops/infra/relays.ts", g.pulumiSource(g.n(40, 120))))
	rel := g.W("path", func() string { return fmt.Sprintf("ops/infra/relay-%s-%s.ts", depot, g.chars(lowernum, 3)) })
	src := fmt.Sprintf("import * as hcloud from \"@pulumi/hcloud\";\nimport { network, mqttIngress, relayCloudInit } from \"./relays\";\n\nexport const relay = new hcloud.Server(\"edge-relay-%s\", {\n  serverType: \"cpx21\",\n  image: \"debian-12\",\n  location: \"hel1\",\n  userData: relayCloudInit({ listen: \"%s\", upstream: \"%s\" }),\n  networks: [{ networkId: network.id.apply(Number) }],\n  firewallIds: [mqttIngress.id.apply(Number)],\n});\n",
		depot, g.W("hostport", func() string { return fmt.Sprintf("%s:8883", g.ip()) }), g.W("url", func() string { return "mqtts://" + g.remote() }))
	g.round("Adding the relay as its own module.", g.write(rel, src), g.replace("ops/infra/index.ts", "export * from \"./relays\";", "export * from \"./relays\";\nexport * from \"./"+strings.TrimSuffix(path.Base(rel), ".ts")+"\";"))
	changed := []string{rel, "ops/infra/index.ts"}
	cmd, o = g.pulumiPreview()
	g.run("Previewing.", cmd, o, 0)
	g.interject("The preview adds the relay and touches nothing else of importance.")
	if g.chance(0.3) {
		g.ask("The preview also replaces a firewall rule set that drifted. Shall I let Pulumi bring it back in line, or ignore the drift for now with ignoreChanges?")
	}
	if g.chance(0.85) {
		cmd, o = g.pulumiUp(false)
		g.run("Applying.", cmd, o, 255)
		g.round("Adjusting the server definition.", g.replace(rel, "serverType: \"cpx21\"", fmt.Sprintf("serverType: \"%s\", // %s", g.pick([]string{"cpx31", "cax21", "ccx13"}), g.W("code", g.codeOf("OPS")))))
	}
	cmd, o = g.pulumiUp(true)
	g.run("Applying.", cmd, o, 0)
	cmd, o = g.consulHealth("mqtt-broker")
	g.run("Checking the relay registered in Consul.", cmd, o, 0)
	g.commit(changed, "infra: add edge relay for "+depot)
	g.say("The relay is up in hel1 and registered in Consul; the Pulumi change is committed.")
	g.thanks()
}

func (g *gen) historyTask() {
	c := components[g.r.IntN(len(components))]
	g.topic = c.name
	g.user(fmt.Sprintf("Quick question before the release: what changed in %s over the last few weeks that could affect battery life or data volume? No changes, just tell me. %s", c.dir, g.constraints(0, 1)))
	cmd, o := g.gitLog(c.dir)
	g.run("", cmd, o, 0)
	g.round("", g.search(g.pick([]string{"interval", "batch", "timeout", "retry"}), c.dir, g.grep(c.files, g.n(8, 24))))
	g.readSome(c.files, g.between(2, 4), "")
	g.say(fmt.Sprintf("In %s the recent changes that matter are the batching interval and the retry backoff: batches are larger and retries back off longer, which lowers radio time per record but raises the size of each uplink. Nothing else touches power or volume.", c.dir))
}
