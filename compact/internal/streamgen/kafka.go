package streamgen

import (
	"fmt"
	"strings"
	"time"
)

// consumer is a consumer group of the product and what it reads.
type consumer struct{ group, topic, module, class string }

var consumers = []consumer{
	{"eddy-sessionizer", "clicks.raw.v2", "sessionizer", "SessionizerStream"},
	{"eddy-enrich", "clicks.sessionized.v1", "enrich", "EnrichStream"},
	{"eddy-ch-sink", "events.enriched.v3", "sessionizer", "PartitionState"},
}

const stgBootstrap = "kafka-stg-0.eddy.internal:9092"

// The Kafka task: a consumer group lags because its members are kicked
// out for exceeding the poll interval.
func (g *gen) taskKafka() {
	c := consumers[g.intn(len(consumers))]
	m := g.w.mod(c.module)
	conf := m.name + "/src/main/resources/application.conf"
	if g.w.dirty[conf] || g.w.dirty[m.srcPath(c.class)] {
		g.taskClickHouse()
		return
	}
	parts := []int{12, 24, 36}[g.intn(3)]
	g.user(fmt.Sprintf("The lag alert for %s fired again overnight:\n\n    [FIRING:1] KafkaConsumerLagHigh group=%s topic=%s lag=%.1fM\n    runbook: %s\n\nCan you look into it on staging first? Under no circumstances reset offsets on the prod group, we cannot lose events, and don't point any tool at the prod brokers (%s).",
		c.group, c.group, c.topic, float64(g.between(8, 40))/10, g.runbookURL("kafka-lag"), g.U("hostport", fixed("kafka-prod-0.eddy.internal:9092"))))

	members := g.between(3, 6)
	g.step("Checking the group's lag on staging.", bash(fmt.Sprintf("kafka-consumer-groups.sh --bootstrap-server %s --describe --group %s", stgBootstrap, c.group), g.groupTable(c, parts, members, true)))

	// The topic.
	var b out
	b.add(fmt.Sprintf("Topic: %s\tTopicId: %s\tPartitionCount: %d\tReplicationFactor: 3\tConfigs: min.insync.replicas=2,cleanup.policy=delete,segment.bytes=536870912,retention.ms=259200000,max.message.bytes=2097152", c.topic, g.P("id", func() string { return g.b64url(22) }), parts))
	for p := 0; p < parts; p++ {
		l := g.intn(3)
		reps := []int{l, (l + 1) % 3, (l + 2) % 3}
		isr := fmt.Sprintf("%d,%d,%d", reps[0], reps[1], reps[2])
		if g.chance(0.08) {
			isr = fmt.Sprintf("%d,%d", reps[0], reps[1])
		}
		b.add(fmt.Sprintf("\tTopic: %s\tPartition: %d\tLeader: %d\tReplicas: %d,%d,%d\tIsr: %s\tElr: \tLastKnownElr: ", c.topic, p, l, reps[0], reps[1], reps[2], isr))
	}
	r := b.res(0)
	r.read = true
	g.step("And the topic's layout.", bash(fmt.Sprintf("kafka-topics.sh --bootstrap-server %s --describe --topic %s", stgBootstrap, c.topic), r))

	// The consumer's logs.
	kicked := g.E("id", func() string { return fmt.Sprintf("consumer-%s-%d-%s", c.group, g.between(1, 9), g.uuid()) })
	coord := g.between(0, 2)
	site := g.E("site", func() string { return fmt.Sprintf("%s.scala:%d", c.class, g.between(40, 320)) })
	b = out{}
	b.add("[")
	n := g.sc(12)
	errAt := g.between(n/3, n-2)
	for i := 0; i < n; i++ {
		g.tick(5, 200)
		if i == errAt {
			g.logEntryJSON(&b, c, "ERROR", "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator",
				fmt.Sprintf("[Consumer clientId=%s, groupId=%s] Offset commit failed on partition %s-%d at offset %d: The coordinator is not aware of this member.", kicked, c.group, c.topic, g.intn(parts), g.between(1e7, 9e7)),
				fmt.Sprintf("org.apache.kafka.clients.consumer.CommitFailedException: Offset commit cannot be completed since the consumer is not part of an active group for auto partition assignment; it is likely that the consumer was kicked out of the group.\\n\\tat %s\\n\\tat %s\\n\\tat %s\\n\\tat %s.%s.$anonfun$commitBatch$3(%s)\\n\\tat %s.%s.$anonfun$run$%d(%s)\\n\\tat %s\\n\\tat %s",
					kafkaFrames[0], kafkaFrames[1], kafkaFrames[3], m.pkgName(), c.class, site, m.pkgName(), c.class, g.between(2, 9), g.E("site", func() string { return fmt.Sprintf("%s.scala:%d", c.class, g.between(40, 320)) }), kafkaFrames[5], kafkaFrames[6]), i == n-1, true)
			continue
		}
		if i == errAt-1 {
			g.logEntryJSON(&b, c, "WARNING", "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator",
				fmt.Sprintf("[Consumer clientId=%s, groupId=%s] consumer poll timeout has expired. This means the time between subsequent calls to poll() was longer than the configured max.poll.interval.ms, which typically implies that the poll loop is spending too much time processing messages. You can address this either by increasing max.poll.interval.ms or by reducing the maximum size of batches returned in poll() with max.poll.records.", kicked, c.group),
				"", false, true)
			continue
		}
		msgs := []string{
			fmt.Sprintf("flushed %d sessions to ClickHouse in %d ms", g.between(200, 9000), g.between(800, 240000)),
			fmt.Sprintf("[Consumer clientId=consumer-%s-%d, groupId=%s] Request joining group due to: group is already rebalancing", c.group, g.between(1, 9), c.group),
			fmt.Sprintf("[Consumer clientId=consumer-%s-%d, groupId=%s] Successfully joined group with generation Generation{generationId=%d, memberId='consumer-%s-%d-%s', protocol='cooperative-sticky'}", c.group, g.between(1, 9), c.group, g.between(4000, 4999), c.group, g.between(1, 9), g.hex(8)),
			fmt.Sprintf("[Consumer clientId=consumer-%s-%d, groupId=%s] Updating assignment with\n\tAssigned partitions:                       [%s-%d, %s-%d]\n\tCurrent owned partitions:                  []\n\tAdded partitions (assigned - owned):       [%s-%d]\n\tRevoked partitions (owned - assigned):     []", c.group, g.between(1, 9), c.group, c.topic, g.intn(parts), c.topic, g.intn(parts), c.topic, g.intn(parts)),
			fmt.Sprintf("poll returned %d records from %d partitions", g.between(100, 2000), g.between(1, 6)),
		}
		g.logEntryJSON(&b, c, "INFO", g.pick([]string{"org.apache.kafka.clients.consumer.internals.ConsumerCoordinator", m.pkgName() + "." + c.class}), g.pick(msgs), "", i == n-1, false)
	}
	b.add("]")
	r = b.res(0)
	r.read = true
	g.step("Pulling the consumer's warnings and errors from the last hours.", bash(fmt.Sprintf("gcloud logging read 'resource.type=\"k8s_container\" AND resource.labels.namespace_name=\"eddy\" AND labels.k8s-pod/app=\"%s\" AND severity>=INFO' --project=%s --freshness=8h --limit=%d --format=json", c.module, stgProj, n), r))

	// The broker's view.
	b = out{}
	t := g.now.Add(-3 * time.Hour)
	next := func() time.Time { t = t.Add(time.Duration(g.between(50, 40000)) * time.Millisecond); return t }
	gen0 := g.between(4000, 4999)
	snap := g.P("id", func() string { return fmt.Sprintf("%020d-%010d", g.between(1e8, 9e8)*100, g.between(10, 99)) })
	for i := 0; i < g.sc(150); i++ {
		switch g.intn(6) {
		case 0:
			b.add(kafkaLogLine(next(), "INFO", fmt.Sprintf("[LocalLog partition=%s-%d, dir=/var/lib/kafka/data] Rolled new log segment at offset %d in %d ms. (kafka.log.LocalLog)", c.topic, g.intn(parts), g.between(1e7, 9e7), g.between(1, 9))))
		case 1:
			b.add(kafkaLogLine(next(), "INFO", fmt.Sprintf("[ProducerStateManager partition=%s-%d] Wrote producer snapshot at offset %d with 0 producer ids in %d ms. (kafka.log.ProducerStateManager)", c.topic, g.intn(parts), g.between(1e7, 9e7), g.between(1, 20))))
		case 2:
			b.add(kafkaLogLine(next(), "INFO", fmt.Sprintf("[UnifiedLog partition=%s-%d, dir=/var/lib/kafka/data] Deleting segment LogSegment(baseOffset=%d, size=536870757, lastModifiedTime=%d, largestRecordTimestamp=%d) due to log retention time 259200000ms breach based on the largest record timestamp in the segment (kafka.log.UnifiedLog)", c.topic, g.intn(parts), g.between(1e7, 9e7), 1741000000000+int64(g.intn(1e8)), 1741000000000+int64(g.intn(1e8)))))
		case 3:
			b.add(kafkaLogLine(next(), "INFO", fmt.Sprintf("[GroupCoordinator %d]: Stabilized group %s generation %d (__consumer_offsets-%d) with %d members (kafka.coordinator.group.GroupCoordinator)", coord, c.group, gen0+i, g.intn(50), members)))
		case 4:
			b.add(kafkaLogLine(next(), "INFO", fmt.Sprintf("[GroupCoordinator %d]: Assignment received from leader consumer-%s-%d-%s for group %s for generation %d. The group has %d members, 0 of which are static. (kafka.coordinator.group.GroupCoordinator)", coord, c.group, g.between(1, 9), g.hex(8), c.group, gen0+i, members)))
		default:
			b.add(kafkaLogLine(next(), "INFO", fmt.Sprintf("[GroupCoordinator %d]: Preparing to rebalance group %s in state PreparingRebalance with old generation %d (__consumer_offsets-%d) (reason: Adding new member consumer-%s-%d-%s with group instance id None; client reason: rebalance failed due to MemberIdRequiredException) (kafka.coordinator.group.GroupCoordinator)", coord, c.group, gen0+i, g.intn(50), c.group, g.between(1, 9), g.hex(8))))
		}
		if i == g.sc(70) {
			b.add(kafkaLogLine(next(), "INFO", fmt.Sprintf("[SnapshotGenerator id=%d] Creating new KRaft snapshot file snapshot %s because we have replayed at least 20000 records. (org.apache.kafka.image.publisher.SnapshotGenerator)", coord, snap)))
		}
		if i == g.sc(120) {
			b.err(kafkaLogLine(next(), "INFO", fmt.Sprintf("[GroupCoordinator %d]: Member %s in group %s has failed, removing it from the group (kafka.coordinator.group.GroupCoordinator)", coord, kicked, c.group)))
			b.err(kafkaLogLine(next(), "INFO", fmt.Sprintf("[GroupCoordinator %d]: Preparing to rebalance group %s in state PreparingRebalance with old generation %d (__consumer_offsets-%d) (reason: Removing member %s on LeaveGroup; client reason: consumer poll timeout has expired.) (kafka.coordinator.group.GroupCoordinator)", coord, c.group, gen0+i, g.intn(50), kicked)))
		}
	}
	r = b.res(0)
	r.read = true
	g.step("Looking at the coordinator broker's log around the rebalances.", bash(fmt.Sprintf("gcloud compute ssh kafka-stg-%d --project=%s --zone=%s-b --command='sudo tail -n %d /var/log/kafka/server.log'", coord, stgProj, gcpRegion, len(b.lines)), r))

	confBody := g.w.file(conf, func() string { return g.kafkaConf(m, c) })
	g.step("The member was removed for exceeding the poll interval. Reading the consumer settings and the poll loop.", readCall(conf, res{out: numbered(confBody, 0, 0)}), g.readSrc(m, c.class))

	g.say("The poll loop processes a whole batch, including the ClickHouse insert, before it polls again. With max-poll-records at 2000 and slow inserts, a batch takes longer than max.poll.interval.ms (5 min), the member is kicked out, the group rebalances and the lag grows. Options: lower max-poll-records, raise the poll interval, or move the insert off the poll loop. Which do you want?")
	g.user(fmt.Sprintf("Lower the batch size for now and keep the interval at 5 minutes. Don't touch session.timeout.ms either: the brokers pin %s and we agreed not to change it. The async sink can be a follow-up, I opened %s for it.",
		g.U("key", fixed("group.max.session.timeout.ms")), g.ticket()))

	knob := g.W("key", g.writtenKey)
	g.step("Lowering the batch size and adding a budget for the insert.", replaceCall(conf, "      max-poll-records = 2000", fmt.Sprintf("      max-poll-records = 500\n      # Stop the batch early when the sink is slow, well before max.poll.interval.ms.\n      %s = 180s", knob)))
	g.w.dirty[conf] = true
	cp, cb := g.src(m, c.class)
	cl, _ := exprLine(cb, g.between(20, strings.Count(cb, "\n")-10))
	g.step("", replaceCall(cp, cl, rewriteLine(cl, fmt.Sprintf("%s(config.getDuration(\"eddy.kafka.consumer.%s\"))", g.W("id", g.writtenIdent), knob))))
	g.w.dirty[cp] = true

	b = out{}
	g.sbtBanner(&b)
	b.add(fmt.Sprintf("[info] compiling 2 Scala sources to %s/%s/target/scala-%s/classes ...", repoDir, m.name, m.scalaVersion()))
	all := append(append([]string{}, m.failSpecs...), m.cleanSpecs...)
	g.scalaTestOutput(&b, m, all, nil, 2)
	g.sbtDone(&b, true)
	g.step("Running the module's tests.", bash(fmt.Sprintf("sbt -Dsbt.supershell=false \"%s/test\"", m.name), b.res(0)))

	b = out{}
	b.add(fmt.Sprintf("Restarted deployment.apps/%s in namespace eddy (context gke_%s_%s_eddy-stg)", c.module, stgProj, gcpRegion))
	b.add(fmt.Sprintf("Waiting for rollout to finish: %d of %d updated replicas are available...", members-1, members))
	b.add(fmt.Sprintf("deployment \"%s\" successfully rolled out", c.module))
	g.step("Deploying to staging.", bash(fmt.Sprintf("./deploy/gke/rollout.sh --env=stg --app=%s --tag=$(git rev-parse --short HEAD)", c.module), b.res(0)))

	g.tick(600, 1500)
	g.step("Waiting a few minutes and checking the lag again.", bash(fmt.Sprintf("sleep 600 && kafka-consumer-groups.sh --bootstrap-server %s --describe --group %s", stgBootstrap, c.group), g.groupTable(c, parts, members, false)))
	b = out{}
	b.add("\nGROUP                    COORDINATOR (ID)                                  ASSIGNMENT-STRATEGY  STATE           #MEMBERS")
	b.add(fmt.Sprintf("%-24s %-49s %-20s %-15s %d", c.group, fmt.Sprintf("kafka-stg-%d.eddy.internal:9092 (%d)", coord, coord), "cooperative-sticky", "Stable", members))
	r = b.res(0)
	r.read = true
	g.step("", bash(fmt.Sprintf("kafka-consumer-groups.sh --bootstrap-server %s --describe --group %s --state", stgBootstrap, c.group), r))
	rb := g.W("path", func() string { return fmt.Sprintf("docs/runbooks/%s-poll-timeouts.md", c.group) })
	g.step("Writing down what to look for next time.", writeCall(rb, fmt.Sprintf("# %s: members removed for poll timeouts\n\nSymptom: lag grows on %s while the group keeps rebalancing; the coordinator logs \"Member ... has failed, removing it from the group\" with reason \"consumer poll timeout has expired\".\n\nCheck:\n\n1. Lag per partition: kafka-consumer-groups.sh --describe --group %s.\n2. Dashboard: %s\n3. Insert latency of the sink; a slow ClickHouse makes the poll loop slow.\n\nFix: lower max-poll-records, or the budget %s, before touching the poll interval.\n", c.group, c.topic, c.group, g.W("url", func() string { return fmt.Sprintf("https://grafana.marlow.dev/d/%s/%s-lag", g.alnum(9), c.group) }), knob)))
	g.step("", g.commit(fmt.Sprintf("%s: smaller poll batches with an insert budget", m.name), []string{conf, cp, rb}, []string{rb}))
	g.say("Lag on staging is going down and the group has been stable since the rollout: no members removed for poll timeouts. I did not touch offsets, the poll interval or the session timeout. Once you're happy with staging, the same change can go to prod with the normal release.")
}

// groupTable prints kafka-consumer-groups --describe.
func (g *gen) groupTable(c consumer, parts, members int, lagging bool) res {
	var b out
	b.add(fmt.Sprintf("\n%-17s %-22s %-9s %-14s %-14s %-8s %-62s %-14s %s", "GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"))
	ids := make([]string, members)
	hosts := make([]string, members)
	for i := range ids {
		ids[i] = fmt.Sprintf("consumer-%s-%d-%s", c.group, i+1, g.uuid())
		if i == 0 {
			ids[i] = g.P("id", fixed(ids[i]))
		}
		hosts[i] = "/" + g.ip()
	}
	for p := 0; p < parts; p++ {
		mi := p % members
		end := g.between(1e7, 9e7)
		lag := g.between(0, 400)
		if lagging {
			lag = g.between(20000, 180000)
		}
		b.add(fmt.Sprintf("%-17s %-22s %-9d %-14d %-14d %-8d %-62s %-14s consumer-%s-%d", c.group, c.topic, p, end-lag, end, lag, ids[mi], hosts[mi], c.group, mi+1))
	}
	r := b.res(0)
	r.read = true
	return r
}

// logEntryJSON prints one entry of gcloud logging read --format=json.
func (g *gen) logEntryJSON(b *out, c consumer, sev, logger, msg, stack string, last, failure bool) {
	add := b.add
	if failure {
		add = b.err
	}
	b.add("  {")
	id := g.lowerDigits(16)
	if failure && sev == "ERROR" {
		id = g.E("id", func() string { return g.lowerDigits(16) })
	}
	add(fmt.Sprintf("    \"insertId\": \"%s\",", id))
	b.add("    \"jsonPayload\": {")
	b.add(fmt.Sprintf("      \"logger\": \"%s\",", logger))
	msg = strings.ReplaceAll(strings.ReplaceAll(msg, "\n", `\n`), "\t", `\t`)
	add(fmt.Sprintf("      \"message\": \"%s\",", msg))
	if stack != "" {
		add(fmt.Sprintf("      \"stack_trace\": \"%s\",", stack))
	}
	b.add(fmt.Sprintf("      \"thread\": \"io-compute-%d\"", g.between(0, 7)))
	b.add("    },")
	b.add("    \"labels\": {")
	b.add(fmt.Sprintf("      \"compute.googleapis.com/resource_name\": \"gke-eddy-stg-pool-%s-%s\",", g.lowerDigits(8), g.lowerDigits(4)))
	b.add(fmt.Sprintf("      \"k8s-pod/app\": \"%s\",", c.module))
	b.add(fmt.Sprintf("      \"k8s-pod/pod-template-hash\": \"%s\"", g.lowerDigits(10)))
	b.add("    },")
	b.add(fmt.Sprintf("    \"logName\": \"projects/%s/logs/stdout\",", stgProj))
	b.add(fmt.Sprintf("    \"receiveTimestamp\": \"%s\",", g.now.Add(1500*time.Millisecond).Format("2006-01-02T15:04:05.000000000Z")))
	b.add("    \"resource\": {")
	b.add("      \"labels\": {")
	b.add(fmt.Sprintf("        \"cluster_name\": \"eddy-stg\",\n        \"container_name\": \"%s\",\n        \"location\": \"%s\",\n        \"namespace_name\": \"eddy\",\n        \"pod_name\": \"%s-%s-%s\",\n        \"project_id\": \"%s\"", c.module, gcpRegion, c.module, g.lowerDigits(10), g.lowerDigits(5), stgProj))
	b.add("      },\n      \"type\": \"k8s_container\"\n    },")
	add(fmt.Sprintf("    \"severity\": \"%s\",", sev))
	b.add(fmt.Sprintf("    \"timestamp\": \"%s\"", g.now.Format("2006-01-02T15:04:05.000Z")))
	if last {
		b.add("  }")
	} else {
		b.add("  },")
	}
}

// kafkaConf is a module's application.conf with its consumer settings.
func (g *gen) kafkaConf(m *module, c consumer) string {
	head := fmt.Sprintf("eddy {\n  kafka {\n    bootstrap-servers = ${?EDDY_KAFKA_BOOTSTRAP}\n    security-protocol = SASL_SSL\n    consumer {\n      group-id = \"%s\"\n      topic = \"%s\"\n      auto-offset-reset = earliest\n      enable-auto-commit = false\n      max-poll-records = 2000\n      max-poll-interval = 5m\n      session-timeout = 45s\n      heartbeat-interval = 3s\n      fetch-max-bytes = 52428800\n      partition-assignment-strategy = cooperative-sticky\n    }\n  }\n}\n\n", c.group, c.topic)
	return head + g.hocon(m, g.sc(140))
}
