package shipgen

import (
	"fmt"
	"strings"
	"time"
)

// This file writes what the infrastructure prints: Terraform, kubectl,
// Helm, nginx and PHP-FPM logs, mongosh and Elasticsearch, and git.

const (
	tfDir     = root + "/infra/terraform/envs/staging"
	namespace = "tidewater-staging"
	account   = "318274650912"
)

// tfResource is a resource block of a plan.
type tfResource struct {
	addr, action string // action: "create", "update"
	attrs        [][2]string
	id           string // what apply reports as its id
	line         int    // where its block starts in its file
}

// tfRefresh writes the refresh lines of a plan or apply.
func (g *gen) tfRefresh(o *out) {
	o.add("data.aws_caller_identity.current: Reading...\ndata.aws_iam_policy_document.worker_assume: Reading...")
	for _, q := range head([]string{"label-events", "tracking-sync", "manifests", "notifications"}, g.scale(1)+1) {
		o.addf("aws_sqs_queue.dlq[\"%s\"]: Refreshing state... [id=https://sqs.eu-west-1.amazonaws.com/%s/tidewater-%s-dlq-staging]", q, account, q)
		o.addf("aws_sqs_queue.jobs[\"%s\"]: Refreshing state... [id=https://sqs.eu-west-1.amazonaws.com/%s/tidewater-%s-staging]", q, account, q)
	}
	o.add("aws_s3_bucket.labels: Refreshing state... [id=tidewater-labels-staging]\naws_iam_role.api: Refreshing state... [id=tidewater-staging-api]")
	o.add("data.aws_caller_identity.current: Read complete after 0s [id=" + account + "]")
	o.add("data.aws_iam_policy_document.worker_assume: Read complete after 0s [id=" + g.fill(func() string { return fmt.Sprint(1000000000 + g.r.IntN(3000000000)) }) + "]")
	o.add("aws_s3_bucket_public_access_block.labels: Refreshing state... [id=tidewater-labels-staging]\naws_iam_role_policy.api_queues: Refreshing state... [id=tidewater-staging-api:terraform-20240611093012418300000001]")
}

// tfPlan writes terraform plan of rs, saved to tfplan.
func (g *gen) tfPlan(o *out, rs []tfResource) {
	g.tfRefresh(o)
	o.add("")
	o.add("Terraform used the selected providers to generate the following execution plan. Resource actions are indicated with the following symbols:\n  + create\n  ~ update in-place\n\nTerraform will perform the following actions:\n")
	add, change := 0, 0
	for _, r := range rs {
		typ, name, _ := strings.Cut(r.addr, ".")
		if r.action == "update" {
			change++
			o.addf("  # %s will be updated in-place\n  ~ resource \"%s\" \"%s\" {", r.addr, typ, name)
			for _, a := range r.attrs {
				o.addf("      ~ %-26s = %s", a[0], a[1])
			}
			o.addf("        # (%d unchanged attributes hidden)\n    }\n", g.between(4, 14))
			continue
		}
		add++
		o.addf("  # %s will be created\n  + resource \"%s\" \"%s\" {", r.addr, typ, name)
		for _, a := range r.attrs {
			o.addf("      + %-26s = %s", a[0], a[1])
		}
		o.add("    }\n")
	}
	o.addf("Plan: %d to add, %d to change, 0 to destroy.", add, change)
	o.add("\n─────────────────────────────────────────────────────────────────────────────\n\nSaved the plan to: tfplan\n\nTo perform exactly these actions, run the following command to apply:\n    terraform apply \"tfplan\"")
}

// tfApply writes terraform apply of rs; fail writes the failure of the
// last resource (its lines are error lines).
func (g *gen) tfApply(o *out, rs []tfResource, fail func(o *out, r tfResource)) {
	for i, r := range rs {
		verb := "Creating"
		if r.action == "update" {
			verb = "Modifying"
			o.addf("%s: %s... [id=%s]", r.addr, verb, g.fill(func() string { return "tidewater-staging-" + g.rs(lowers, 6) }))
		} else {
			o.addf("%s: %s...", r.addr, verb)
		}
		if fail != nil && i == len(rs)-1 {
			if g.chance(0.5) {
				o.addf("%s: Still creating... [10s elapsed]", r.addr)
			}
			o.err("╷")
			fail(o, r)
			o.err("╵")
			o.exit = 1
			return
		}
		o.addf("%s: %s complete after %ds [id=%s]", r.addr, strings.TrimSuffix(verb, "ing")+"ion", g.between(0, 4), r.id)
	}
	add, change := 0, 0
	for _, r := range rs {
		if r.action == "update" {
			change++
		} else {
			add++
		}
	}
	o.add("")
	o.addf("Apply complete! Resources: %d added, %d changed, 0 destroyed.", add, change)
}

// tfAWSError writes the error of a failed AWS call with its request id,
// and the block of the configuration it came from.
func (g *gen) tfAWSError(o *out, r tfResource, file, head string) {
	typ, name, _ := strings.Cut(r.addr, ".")
	o.errf("│ Error: %s", head)
	o.err("│ ")
	o.errf("│   with %s,", r.addr)
	site := g.errID("site", func() string { return fmt.Sprintf("%s line %d", file, r.line) })
	o.errf("│   on %s, in resource \"%s\" \"%s\":", site, typ, name)
	o.errf("│   %s: resource \"%s\" \"%s\" {", strings.TrimPrefix(site, file+" line "), typ, name)
	o.err("│ ")
}

// podChars are the characters of the random parts of pod names.
const podChars = "bcdfghjklmnpqrstvwxz2456789"

// crashPod is a pod of the crashing worker: its name, and its uid once
// planted.
type crashPod struct{ name, uid string }

// kubePods writes kubectl get pods of the namespace; crash are the pods
// in CrashLoopBackOff (their lines are error lines). With planted, a
// label-events pod's name is planted.
func (g *gen) kubePods(o *out, crash []crashPod, planted bool) {
	o.addf("%-52s %-7s %-18s %-15s %-6s %-14s %-44s %s", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE")
	rsHash := map[string]string{}
	ip := g.ip
	crashed := 0
	for _, c := range []string{"api", "api", "label-events", "label-events", "tracking-sync", "manifests", "notifications", "scheduler"} {
		name := "tidewater-api"
		if c != "api" {
			name += "-" + c
		}
		if rsHash[c] == "" {
			rsHash[c] = g.fill(func() string { return g.rs(podChars, 10) })
		}
		mk := func() string { return name + "-" + rsHash[c] + "-" + g.rs(podChars, 5) }
		node := g.fill(g.mkNode())
		if c == "label-events" && crashed < len(crash) {
			restarts := fmt.Sprintf("%d (%ds ago)", g.between(5, 40), g.between(5, 250))
			o.errf("%-52s %-7s %-18s %-15s %-6s %-14s %-44s %s", crash[crashed].name, "0/1", "CrashLoopBackOff", restarts, fmt.Sprintf("%dm", g.between(12, 90)), ip(), node, "<none>")
			crashed++
			continue
		}
		pod := g.fill(mk)
		if planted && c == "label-events" {
			planted = false
			pod = g.passID("id", mk)
		}
		ready := "1/1"
		if c == "api" {
			ready = "2/2"
		}
		o.addf("%-52s %-7s %-18s %-15s %-6s %-14s %-44s %s", pod, ready, "Running", "0", kubeAge(time.Duration(g.between(40, 4000))*time.Minute), ip(), node, "<none>")
	}
}

// kubeAge writes an age as kubectl does: minutes up to three hours,
// hours and minutes up to eight, hours up to two days, then days.
func kubeAge(d time.Duration) string {
	m := int(d.Minutes())
	switch {
	case d < 3*time.Hour:
		return fmt.Sprintf("%dm", m)
	case d < 8*time.Hour:
		return fmt.Sprintf("%dh%dm", m/60, m%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", m/60)
	}
	return fmt.Sprintf("%dd%dh", m/1440, m%1440/60)
}

// kubeEventList writes kubectl get events of the namespace, oldest
// first: routine events, and the back-off of the crashing pods (error
// lines).
func (g *gen) kubeEventList(o *out, pods []crashPod, image string) {
	o.addf("%-10s %-8s %-20s %-62s %s", "LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE")
	n := g.scale(g.between(20, 30))
	mins := n + 30
	for i := range n {
		mins -= g.between(0, 2)
		seen := fmt.Sprintf("%dm", max(1, mins))
		c := pick(g, "tracking-sync", "manifests", "notifications", "scheduler", "api")
		deploy, container := "tidewater-api-"+c, "worker"
		if c == "api" {
			deploy, container = "tidewater-api", "php-fpm"
		}
		pod := g.fill(func() string { return deploy + "-" + g.rs(podChars, 10) + "-" + g.rs(podChars, 5) })
		switch g.r.IntN(7) {
		case 0:
			o.addf("%-10s %-8s %-20s %-62s %s", seen, "Normal", "Scheduled", "pod/"+pod, "Successfully assigned "+namespace+"/"+pod+" to "+g.fill(g.mkNode()))
		case 1:
			o.addf("%-10s %-8s %-20s %-62s %s", seen, "Normal", "Pulled", "pod/"+pod, "Container image \""+image+"\" already present on machine")
		case 2:
			o.addf("%-10s %-8s %-20s %-62s %s", seen, "Normal", "Created", "pod/"+pod, "Created container "+container)
		case 3:
			o.addf("%-10s %-8s %-20s %-62s %s", seen, "Normal", "Started", "pod/"+pod, "Started container "+container)
		case 4:
			o.addf("%-10s %-8s %-20s %-62s %s", seen, "Normal", "SuccessfulRescale", "horizontalpodautoscaler/tidewater-api", fmt.Sprintf("New size: %d; reason: cpu resource utilization (percentage of request) above target", g.between(2, 6)))
		case 5:
			o.addf("%-10s %-8s %-20s %-62s %s", seen, "Normal", "Killing", "pod/"+pod, "Stopping container "+container)
		default:
			o.addf("%-10s %-8s %-20s %-62s %s", seen, "Normal", "ScalingReplicaSet", "deployment/"+deploy, "Scaled up replica set "+deploy+"-"+g.fill(func() string { return g.rs(podChars, 10) })+fmt.Sprintf(" to %d", g.between(1, 3)))
		}
		if i%5 == 4 {
			p := &pods[g.r.IntN(len(pods))]
			if p.uid == "" {
				p.uid = g.errID("uuid", g.mkUUID())
			}
			o.errf("%-10s %-8s %-20s %-62s %s", seen, "Warning", "BackOff", "pod/"+p.name, "Back-off restarting failed container worker in pod "+p.name+"_"+namespace+"("+p.uid+")")
		}
	}
}

// kubeDescribeCrash writes kubectl describe pod of a worker in
// CrashLoopBackOff: its state and events are error lines.
func (g *gen) kubeDescribeCrash(o *out, comp, image string, p *crashPod) {
	pod := p.name
	node := g.fill(g.mkNode())
	start := g.now.Add(-time.Duration(g.between(15, 80)) * time.Minute)
	o.add("Name:             " + pod)
	o.add("Namespace:        " + namespace)
	o.add("Priority:         0")
	o.add("Service Account:  tidewater-api")
	o.addf("Node:             %s/%s", node, g.ip())
	o.add("Start Time:       " + start.Format("Mon, 02 Jan 2006 15:04:05 -0700"))
	o.add("Labels:           app.kubernetes.io/component=" + comp + "\n                  app.kubernetes.io/instance=tidewater-api\n                  app.kubernetes.io/name=tidewater-api\n                  pod-template-hash=" + strings.Split(strings.TrimPrefix(pod, "tidewater-api-"+comp+"-"), "-")[0])
	o.add("Annotations:      kubectl.kubernetes.io/restartedAt: " + start.Add(-time.Minute).Format(time.RFC3339))
	o.add("Status:           Running")
	o.add("IP:               " + g.ip())
	o.add("Controlled By:  ReplicaSet/" + pod[:strings.LastIndexByte(pod, '-')])
	o.add("Containers:\n  worker:")
	o.addf("    Container ID:  containerd://%s", g.fill(g.mkHash(64)))
	o.add("    Image:         " + image)
	o.addf("    Image ID:      %s@sha256:%s", strings.Split(image, ":")[0], g.fill(g.mkHash(64)))
	o.add("    Port:          <none>\n    Host Port:     <none>")
	o.add("    Command:\n      php\n      artisan\n      queue:work\n      sqs\n      --queue=" + comp + "\n      --tries=3\n      --max-time=3600")
	o.err("    State:          Waiting")
	o.err("      Reason:       CrashLoopBackOff")
	o.err("    Last State:     Terminated")
	o.err("      Reason:       Error")
	o.err("      Exit Code:    1")
	o.errf("      Started:      %s", g.now.Add(-3*time.Minute).Format("Mon, 02 Jan 2006 15:04:05 -0700"))
	o.errf("      Finished:     %s", g.now.Add(-3*time.Minute+4*time.Second).Format("Mon, 02 Jan 2006 15:04:05 -0700"))
	o.add("    Ready:          False")
	o.errf("    Restart Count:  %d", g.between(6, 40))
	o.add("    Limits:\n      cpu:     500m\n      memory:  512Mi\n    Requests:\n      cpu:     100m\n      memory:  256Mi")
	o.add("    Environment Variables from:\n      tidewater-api-env      ConfigMap  Optional: false\n      tidewater-api-secrets  Secret     Optional: false")
	o.add("    Environment:\n      AWS_STS_REGIONAL_ENDPOINTS:   regional\n      AWS_DEFAULT_REGION:           eu-west-1\n      AWS_REGION:                   eu-west-1")
	o.add("      AWS_ROLE_ARN:                 arn:aws:iam::" + account + ":role/tidewater-staging-api\n      AWS_WEB_IDENTITY_TOKEN_FILE:  /var/run/secrets/eks.amazonaws.com/serviceaccount/token")
	o.add("    Mounts:\n      /var/run/secrets/eks.amazonaws.com/serviceaccount from aws-iam-token (ro)\n      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-" + g.fill(func() string { return g.rs(podChars, 5) }) + " (ro)")
	o.add("Conditions:\n  Type                        Status\n  PodReadyToStartContainers   True \n  Initialized                 True \n  Ready                       False \n  ContainersReady             False \n  PodScheduled                True ")
	o.add("Volumes:\n  aws-iam-token:\n    Type:                    Projected (a volume that contains injected data from multiple sources)\n    TokenExpirationSeconds:  86400")
	o.add("QoS Class:                   Burstable\nNode-Selectors:              <none>\nTolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s\n                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s")
	o.add("Events:\n  Type     Reason     Age                  From               Message\n  ----     ------     ----                 ----               -------")
	age := g.between(15, 80)
	o.addf("  Normal   Scheduled  %-20s default-scheduler  Successfully assigned %s/%s to %s", fmt.Sprintf("%dm", age), namespace, pod, node)
	for _, ev := range []string{"Pulled", "Created", "Started"} {
		msg := map[string]string{"Pulled": "Container image \"" + image + "\" already present on machine", "Created": "Created container worker", "Started": "Started container worker"}[ev]
		o.addf("  Normal   %-10s %-20s kubelet            %s", ev, fmt.Sprintf("%dm (x%d over %dm)", g.between(1, 5), g.between(5, 30), age), msg)
	}
	if p.uid == "" {
		p.uid = g.errID("uuid", g.mkUUID())
	}
	uid := p.uid
	o.errf("  Warning  BackOff    %-20s kubelet            Back-off restarting failed container worker in pod %s_%s(%s)", fmt.Sprintf("%ds (x%d over %dm)", g.between(5, 59), g.between(40, 300), age-1), pod, namespace, uid)
}

// workerCrashLog writes the log of the worker's last run: Laravel's
// console rendering of an SQS access error, all after its start on error
// lines.
func (g *gen) workerCrashLog(o *out, queue string) {
	o.add("")
	o.addf("   INFO  Processing jobs from the [%s] queue.", queue)
	o.add("")
	rid := g.errID("uuid", g.mkUUID())
	session := g.errID("id", func() string {
		return fmt.Sprintf("arn:aws:sts::%s:assumed-role/tidewater-staging-api/%d", account, 1730000000000+g.r.Int64N(9000000000))
	})
	url := fmt.Sprintf("https://sqs.eu-west-1.amazonaws.com/%s/tidewater-%s-staging", account, queue)
	o.err("   Aws\\Sqs\\Exception\\SqsException ")
	o.add("")
	o.errf("  Error executing \"ReceiveMessage\" on \"%s\"; AWS HTTP error: Client error: `POST %s` resulted in a `403 Forbidden` response:", url, url)
	o.errf("{\"__type\":\"com.amazon.coral.service#AccessDeniedException\",\"Message\":\"User: %s is not authorized to perform: sqs:receivemessage on resource: arn:aws:sqs:eu-west-1:%s:tidewater-%s-staging because no identity-based policy allows the sqs:receivemessage action\"} (truncated...)", session, account, queue)
	o.errf(" AccessDeniedException (client): User: %s is not authorized to perform: sqs:receivemessage on resource: arn:aws:sqs:eu-west-1:%s:tidewater-%s-staging because no identity-based policy allows the sqs:receivemessage action - x-amzn-RequestId: %s", session, account, queue, rid)
	o.add("")
	o.err("  at vendor/aws/aws-sdk-php/src/WrappedHttpHandler.php:196")
	o.add("    192▕         $parts['request'] = $request;\n    193▕         $parts['connection_error'] = !empty($err['connection_error']);\n    194▕         $parts['transfer_stats'] = $stats;\n    195▕ \n  ➜ 196▕         return new $this->exceptionClass(\n    197▕             sprintf(\n    198▕                 'Error executing \"%s\" on \"%s\"; %s',\n    199▕                 $command->getName(),\n    200▕                 $request->getUri(),")
	o.add("")
	o.err("  1   vendor/aws/aws-sdk-php/src/WrappedHttpHandler.php:100")
	o.err("      Aws\\WrappedHttpHandler::parseError()")
	o.add("")
	o.err("  2   vendor/guzzlehttp/promises/src/Promise.php:209")
	o.err("      Aws\\WrappedHttpHandler::Aws\\{closure}()")
	o.add("")
	o.err("      +24 vendor frames ")
	o.add("")
	o.err("  27  artisan:13")
	o.err("      Illuminate\\Foundation\\Application->handleCommand()")
}

// workerLog writes a healthy worker's log: jobs processed.
func (g *gen) workerLog(o *out, queue string, n int) {
	o.add("")
	o.addf("   INFO  Processing jobs from the [%s] queue.", queue)
	o.add("")
	t := g.now.Add(-time.Duration(n*3) * time.Second)
	for range n {
		t = t.Add(time.Duration(g.between(200, 6000)) * time.Millisecond)
		job := pick(g, "App\\Jobs\\PurchaseLabel", "App\\Jobs\\SyncTrackingEvents", "App\\Jobs\\NotifyRecipient", "App\\Jobs\\CloseManifest")
		dots := strings.Repeat(".", max(3, 60-len(job)))
		o.addf("  %s %s %s RUNNING", t.Format("2006-01-02 15:04:05"), job, dots)
		o.addf("  %s %s %s %d.%02dms DONE", t.Format("2006-01-02 15:04:05"), job, dots, g.between(20, 3000), g.r.IntN(100))
	}
}

// helmUpgrade writes helm upgrade of the chart; invalid makes the API
// server reject the worker deployment.
func (g *gen) helmUpgrade(o *out, rev int, invalid string) {
	if invalid != "" {
		o.errf("Error: UPGRADE FAILED: cannot patch \"tidewater-api-%s\" with kind Deployment: Deployment.apps \"tidewater-api-%s\" is invalid: spec.template.spec.serviceAccountName: Invalid value: \"%s\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')", "label-events", "label-events", invalid)
		o.exit = 1
		return
	}
	o.add("Release \"tidewater-api\" has been upgraded. Happy Helming!")
	o.add("NAME: tidewater-api")
	o.add("LAST DEPLOYED: " + g.now.Format("Mon Jan _2 15:04:05 2006"))
	o.add("NAMESPACE: " + namespace)
	o.add("STATUS: deployed")
	o.addf("REVISION: %d", rev)
	o.add("TEST SUITE: None")
	o.add("NOTES:\nTidewater API " + "deployed to " + namespace + ".\n\n  API:     https://api.staging.tidewater.example\n  Workers: label-events, tracking-sync, manifests, notifications\n\nCheck the rollout with:\n  kubectl -n " + namespace + " rollout status deploy/tidewater-api")
}

// helmHistory writes helm history of the release.
func (g *gen) helmHistory(o *out, rev int) {
	o.addf("%-9s %-25s %-11s %-21s %-12s %s", "REVISION", "UPDATED", "STATUS", "CHART", "APP VERSION", "DESCRIPTION")
	t := g.now.Add(-time.Duration(rev*20) * time.Hour)
	for r := max(1, rev-g.scale(4)-2); r <= rev; r++ {
		t = t.Add(time.Duration(g.between(4, 40)) * time.Hour)
		st, desc := "superseded", "Upgrade complete"
		if r == rev {
			st = "deployed"
		}
		o.addf("%-9d %-25s %-11s %-21s %-12s %s", r, t.Format("Mon Jan _2 15:04:05 2006"), st, "tidewater-api-1.9."+fmt.Sprint(r%7), g.fill(g.mkVersion()), desc)
	}
}

// nginxErrors writes nginx's error log of the API pods: upstream timeouts
// (error lines) among routine warnings.
func (g *gen) nginxErrors(o *out, upstream string, n int) {
	// The lines spread over the last half hour.
	t := g.now.Add(-29 * time.Minute)
	step := max(2, 2*1700/max(1, n))
	conn := g.between(10000, 90000)
	for i := range n {
		t = t.Add(time.Duration(g.between(1, step)) * time.Second)
		conn += g.between(1, 40)
		client := g.ip()
		if i%4 == 3 || i == n-1 {
			id := g.fill(g.mkID("shp"))
			if i < 16 {
				id = g.errID("id", g.mkID("shp"))
			}
			o.errf("%s [error] 31#31: *%d upstream timed out (110: Operation timed out) while reading response header from upstream, client: %s, server: api.staging.tidewater.example, request: \"POST /api/v1/shipments/%s/labels HTTP/1.1\", upstream: \"fastcgi://%s\", host: \"api.staging.tidewater.example\"",
				t.Format("2006/01/02 15:04:05"), conn, client, id, upstream)
			continue
		}
		o.addf("%s [warn] 31#31: *%d %s, client: %s, server: api.staging.tidewater.example, request: \"%s\", host: \"api.staging.tidewater.example\"",
			t.Format("2006/01/02 15:04:05"), conn, pick(g, nginxMessages...), client, pick(g, "GET /api/v1/shipments?page=2 HTTP/1.1", "POST /api/v1/pickups HTTP/1.1", "GET /api/v1/manifests HTTP/1.1", "POST /api/v1/rates/quote HTTP/1.1"))
	}
}

var nginxMessages = []string{
	"an upstream response is buffered to a temporary file /var/cache/nginx/fastcgi_temp/3/21/0000000213 while reading upstream",
	"a client request body is buffered to a temporary file /var/cache/nginx/client_temp/0000000188",
	"upstream sent duplicate header line: \"Vary: Origin\", previous value: \"Vary: Accept\" while reading response header from upstream",
}

// fpmLog writes PHP-FPM's log with the Laravel log on stderr: requests
// killed at the timeout, and the carrier call that hung.
func (g *gen) fpmLog(o *out, c *srcFile, n int) {
	t := g.now.Add(-time.Duration(n*30) * time.Second)
	t = g.laravelLog(o, "staging", n, false, t)
	child := g.between(100, 900)
	t = t.Add(31 * time.Second)
	url := g.errID("url", g.mkURL("gateway.carrier-hub.example", "v2/shipments", "v2/labels"))
	msg := fmt.Sprintf("cURL error 28: Operation timed out after 30001 milliseconds with 0 bytes received (see https://curl.haxx.se/libcurl/c/libcurl-errors.html) for %s", url)
	g.laravelLogTrace(o, "staging", t, c, g.phpModel("LabelController"), "/var/www/api", msg, "Illuminate\\\\Http\\\\Client\\\\ConnectionException(code: 0): "+msg+" at /var/www/api/vendor/laravel/framework/src/Illuminate/Http/Client/PendingRequest.php:1567", guzzleFrames)
	up := g.between(300, 9000)
	for range g.between(1, 3) {
		t = t.Add(time.Duration(g.between(20, 70)) * time.Second)
		ts := t
		o.errf("[%s] WARNING: [pool www] child %d, script '/var/www/api/public/index.php' (request: \"POST /index.php\") execution timed out (60.%06d sec), terminating", ts.Format("02-Jan-2006 15:04:05"), child, g.r.IntN(1000000))
		o.errf("[%s] WARNING: [pool www] child %d exited on signal 15 (SIGTERM) after %d.%06d seconds from start", ts.Format("02-Jan-2006 15:04:05"), child, up, g.r.IntN(1000000))
		up = g.between(60, 200)
		child += g.between(1, 30)
		o.addf("[%s] NOTICE: [pool www] child %d started", ts.Format("02-Jan-2006 15:04:05"), child)
	}
	g.laravelLog(o, "staging", g.between(2, 6), false, t.Add(time.Minute))
}

// laravelLogTrace writes an ERROR entry whose trace runs through the
// given vendor frames, then c, then the router.
func (g *gen) laravelLogTrace(o *out, env string, t time.Time, c, ctl *srcFile, base, msg, exc string, vendor []string) {
	o.errf("[%s] %s.ERROR: %s {\"request_id\":\"%s\",\"exception\":\"[object] (%s)", t.Format("2006-01-02 15:04:05"), env, msg, g.errID("uuid", g.mkUUID()), exc)
	o.err("[stacktrace]")
	n := 0
	fr := func(s string) {
		o.errf("#%d %s", n, s)
		n++
	}
	for _, f := range vendor {
		fr(parseFrame(f).logged(base))
	}
	fr(fmt.Sprintf("%s/%s/%s: Illuminate\\\\Http\\\\Client\\\\PendingRequest->post()", base, strings.TrimPrefix(dir(c.path), "api/"), g.errID("site", g.mkPHPSite(c.base(), 25, 240))))
	fr(fmt.Sprintf("%s/%s/%s: %s\\\\%s->%s()", base, strings.TrimPrefix(dir(ctl.path), "api/"), g.errID("site", g.mkPHPSite(ctl.base(), 20, 120)), strings.ReplaceAll(phpNamespace(c), "\\", "\\\\"), c.name, c.funcs[0]))
	for _, f := range head(routingFrames, g.scale(5)+3) {
		fr(parseFrame(f).logged(base))
	}
	o.errf("#%d {main}", n)
	o.err("\"} ")
}

// mongoDocs writes the shipments with gaps, as mongosh prints the
// aggregation's documents.
func (g *gen) mongoDocs(o *out, n int, plantEvery int) {
	o.add("[")
	for i := range n {
		ship := g.fill(g.mkID("shp"))
		if plantEvery > 0 && i%plantEvery == 1 {
			ship = g.passID("id", g.mkID("shp"))
		}
		sep := ","
		if i == n-1 {
			sep = ""
		}
		first := g.between(1, 3)
		last := first + g.between(6, 16)
		gap := g.between(first+1, last-2)
		gaps := fmt.Sprint(gap)
		if g.chance(0.5) {
			gaps += fmt.Sprintf(", %d", gap+1)
		}
		at := g.now.Add(-time.Duration(g.between(1, 40)) * time.Hour).Format("2006-01-02T15:04:05.000Z")
		o.addf("  {\n    _id: '%s',\n    shipmentId: '%s',\n    events: %d,\n    firstSeq: %d,\n    lastSeq: %d,\n    gaps: [ %s ],\n    lastEventAt: ISODate('%s')\n  }%s",
			ship, ship, last-first+1-strings.Count(gaps, ",")-1, first, last, gaps, at, sep)
	}
	o.add("]")
}

// mongoExplain writes the executionStats of a find on events.
func (g *gen) mongoExplain(o *out) {
	docs := g.between(20000, 900000)
	o.add("{\n  explainVersion: '1',\n  queryPlanner: {\n    namespace: 'tracking.events',\n    parsedQuery: {\n      '$and': [\n        { carrier: { '$eq': 'dpd' } },\n        { occurredAt: { '$gte': ISODate('2024-11-04T00:00:00.000Z') } }\n      ]\n    },")
	o.add("    indexFilterSet: false,\n    queryHash: '" + strings.ToUpper(g.fill(g.mkHash(8))) + "',\n    planCacheKey: '" + strings.ToUpper(g.fill(g.mkHash(8))) + "',\n    maxIndexedOrSolutionsReached: false,\n    maxIndexedAndSolutionsReached: false,\n    maxScansToExplodeReached: false,")
	o.add("    winningPlan: {\n      stage: 'FETCH',\n      inputStage: {\n        stage: 'IXSCAN',\n        keyPattern: { carrier: 1, occurredAt: -1 },\n        indexName: 'carrier_1_occurredAt_-1',\n        isMultiKey: false,\n        direction: 'forward',\n        indexBounds: {\n          carrier: [ \"['dpd', 'dpd']\" ],\n          occurredAt: [ \"[new Date(9223372036854775807), new Date(1730678400000)]\" ]\n        }\n      }\n    },\n    rejectedPlans: []\n  },")
	o.addf("  executionStats: {\n    executionSuccess: true,\n    nReturned: %d,\n    executionTimeMillis: %d,\n    totalKeysExamined: %d,\n    totalDocsExamined: %d,", docs, g.between(40, 4000), docs, docs)
	o.add("    executionStages: {\n      stage: 'FETCH',\n      nReturned: " + fmt.Sprint(docs) + ",\n      works: " + fmt.Sprint(docs+1) + ",\n      advanced: " + fmt.Sprint(docs) + ",\n      needTime: 0,\n      needYield: 0,\n      saveState: " + fmt.Sprint(g.between(10, 900)) + ",\n      restoreState: " + fmt.Sprint(g.between(10, 900)) + ",\n      isEOF: 1,\n      docsExamined: " + fmt.Sprint(docs) + "\n    }\n  },")
	o.add("  command: { find: 'events', filter: { carrier: 'dpd', occurredAt: { '$gte': ISODate('2024-11-04T00:00:00.000Z') } }, '$db': 'tracking' },")
	o.add("  serverInfo: {\n    host: '" + g.passID("host", func() string { return "atlas-" + g.rs(lowerAlnum, 6) + "-shard-00-01.x1y2z.mongodb.net" }) + "',\n    port: 27017,\n    version: '7.0.14',\n    gitVersion: 'ce59cfc6a3c5e5c067dca0d30697edd68d4f5188'\n  },\n  ok: 1\n}")
}

// esIndices writes _cat/indices?v of the shipment indices.
func (g *gen) esIndices(o *out) {
	o.addf("%-6s %-6s %-22s %-22s %-3s %-3s %-10s %-12s %-10s %s", "health", "status", "index", "uuid", "pri", "rep", "docs.count", "docs.deleted", "store.size", "pri.store.size")
	for i, idx := range []string{"shipments-v7", "shipments-v6", "tracking-2024.11", "tracking-2024.10", "tracking-2024.09", "carriers-v2"} {
		uuid := g.fill(func() string { return g.rs(base62[:62], 22) })
		if i == 0 {
			uuid = g.passID("id", func() string { return g.rs(base62, 22) })
		}
		size := g.between(200, 9000)
		o.addf("%-6s %-6s %-22s %-22s %-3d %-3d %-10d %-12d %-10s %s", "green", "open", idx, uuid, 3, 1, g.between(100000, 9000000), g.between(0, 90000), fmt.Sprintf("%dmb", size*2), fmt.Sprintf("%dmb", size))
	}
}

// esHits writes a search response with n hits.
func (g *gen) esHits(o *out, n int) {
	o.addf("{\n  \"took\" : %d,\n  \"timed_out\" : false,\n  \"_shards\" : {\n    \"total\" : 3,\n    \"successful\" : 3,\n    \"skipped\" : 0,\n    \"failed\" : 0\n  },\n  \"hits\" : {\n    \"total\" : {\n      \"value\" : %d,\n      \"relation\" : \"eq\"\n    },\n    \"max_score\" : null,\n    \"hits\" : [", g.between(3, 90), g.between(n, 900))
	for i := range n {
		id := g.fill(g.mkID("shp"))
		if i%5 == 2 {
			id = g.passID("id", g.mkID("shp"))
		}
		sep := ","
		if i == n-1 {
			sep = ""
		}
		o.addf("      {\n        \"_index\" : \"shipments-v7\",\n        \"_id\" : \"%s\",\n        \"_score\" : null,\n        \"_source\" : {\n          \"reference\" : \"%s\",\n          \"carrier\" : \"dpd\",\n          \"status\" : \"%s\",\n          \"lastEventAt\" : \"%s\",\n          \"eventCount\" : %d\n        },\n        \"sort\" : [ %d ]\n      }%s",
			id, g.fill(func() string { return fmt.Sprintf("TW-%06d", g.r.IntN(1000000)) }), pick(g, "in_transit", "out_for_delivery", "delivered"), g.now.Add(-time.Duration(g.between(1, 90))*time.Hour).Format(time.RFC3339), g.between(2, 12), 1730000000000+g.r.Int64N(3000000000), sep)
	}
	o.add("    ]\n  }\n}")
}

// esQueryError writes the 400 of a query that does not parse against
// the mapping; its reason and failed shard are error lines.
func (g *gen) esQueryError(o *out) {
	node := g.errID("id", func() string { return g.rs(base62, 22) })
	o.err("HTTP/1.1 400 Bad Request")
	o.add("X-elastic-product: Elasticsearch\ncontent-type: application/json\n")
	o.add("{")
	o.add("  \"error\" : {")
	o.add("    \"root_cause\" : [")
	o.add("      {")
	o.err("        \"type\" : \"query_shard_exception\",")
	o.err("        \"reason\" : \"failed to create query: For input string: \\\"2024-11-04T00:00:00Z\\\"\",")
	o.add("        \"index\" : \"shipments-v7\"")
	o.add("      }")
	o.add("    ],")
	o.err("    \"type\" : \"search_phase_execution_exception\",")
	o.err("    \"reason\" : \"all shards failed\",")
	o.add("    \"phase\" : \"query\",\n    \"grouped\" : true,\n    \"failed_shards\" : [\n      {\n        \"shard\" : 0,\n        \"index\" : \"shipments-v7\",")
	o.errf("        \"node\" : \"%s\",", node)
	o.add("        \"reason\" : {")
	o.err("          \"type\" : \"query_shard_exception\",")
	o.err("          \"reason\" : \"failed to create query: For input string: \\\"2024-11-04T00:00:00Z\\\"\",")
	o.add("          \"index\" : \"shipments-v7\",")
	o.add("          \"caused_by\" : {")
	o.err("            \"type\" : \"number_format_exception\",")
	o.err("            \"reason\" : \"For input string: \\\"2024-11-04T00:00:00Z\\\"\"")
	o.add("          }\n        }\n      }\n    ]\n  },\n  \"status\" : 400\n}")
	o.exit = 1
}

// ---- git ----

// gitLog writes one-line history with planted hashes.
func (g *gen) gitLog(o *out, area string, n int) {
	for i := range n {
		h := g.fill(g.mkHash(9))
		if i%6 == 1 {
			h = g.passID("hash", g.mkHash(9))
		}
		o.addf("%s %s: %s (#%d)", h, area, pick(g, gitSubjects...), 1200+g.r.IntN(900))
	}
}

// commit makes a branch and commits; created paths are listed.
func (g *gen) commit(branch, msg string, changed, created []string) tcall {
	cmd := fmt.Sprintf("git checkout -b %s && git add -A && git commit -m %q", branch, msg)
	return shell(cmd, func(o *out) {
		o.addf("Switched to a new branch '%s'", branch)
		o.addf("[%s %s] %s", branch, g.passID("hash", g.mkHash(9)), msg)
		ins := g.between(6, 140)
		o.addf(" %d files changed, %d insertions(+), %d deletions(-)", len(changed)+len(created), ins, g.between(1, ins))
		for _, p := range created {
			o.addf(" create mode 100644 %s", p)
		}
	})
}

// status writes git status --short and git diff --stat.
func (g *gen) status(changed, created []string) tcall {
	return shell("git status --short && git diff --stat", func(o *out) {
		for _, p := range changed {
			o.add(" M " + p)
		}
		for _, p := range created {
			o.add("?? " + p)
		}
		total := 0
		for _, p := range changed {
			n := g.between(2, 30)
			total += n
			o.addf(" %s | %d %s", p, n, strings.Repeat("+", min(n, 20))+strings.Repeat("-", g.between(0, 4)))
		}
		o.addf(" %d files changed, %d insertions(+), %d deletions(-)", len(changed), total, g.between(1, max(1, total)))
	})
}

// push pushes a branch and prints the pull request link.
func (g *gen) push(branch string) tcall {
	return shell("git push -u origin "+branch, func(o *out) {
		n := g.between(8, 40)
		o.addf("Enumerating objects: %d, done.\nCounting objects: 100%% (%d/%d), done.\nDelta compression using up to 10 threads", n, n, n)
		o.addf("Compressing objects: 100%% (%d/%d), done.\nWriting objects: 100%% (%d/%d), %d.%02d KiB | %d.%02d MiB/s, done.", n/2, n/2, n/2+1, n/2+1, g.between(1, 9), g.r.IntN(100), g.between(1, 9), g.r.IntN(100))
		o.addf("Total %d (delta %d), reused 0 (delta 0), pack-reused 0 (from 0)", n/2+1, n/4)
		o.addf("remote: Resolving deltas: 100%% (%d/%d), completed with %d local objects.", n/4, n/4, g.between(2, 9))
		o.add("remote: ")
		o.addf("remote: Create a pull request for '%s' on GitHub by visiting:", branch)
		o.add("remote:      " + g.passID("url", func() string {
			return "https://github.com/tidewater-logistics/tidewater/pull/new/" + branch
		}))
		o.add("remote: ")
		o.add("To github.com:tidewater-logistics/tidewater.git")
		o.addf(" * [new branch]      %s -> %s", branch, branch)
		o.addf("branch '%s' set up to track 'origin/%s'.", branch, branch)
	})
}

// rg writes ripgrep matches in files, from statements of their language.
func (g *gen) rg(o *out, files []*srcFile, n int) {
	for range n {
		f := files[g.r.IntN(len(files))]
		var line string
		switch f.lang {
		case "php", "phpunit":
			line = pick(g, phpStmts...)
		case "swift", "xctest":
			line = pick(g, swiftStmts...)
		default:
			line = pick(g, tsStmts...)
		}
		line = strings.NewReplacer("{v}", "parcel", "{T}", "Parcel").Replace(strings.Split(line, "\n")[0])
		loc := g.fill(func() string { return fmt.Sprintf("%s:%d:", f.path, 5+g.r.IntN(300)) })
		o.addf("%s    %s", loc, line)
	}
}

// ls writes a long directory listing of files.
func (g *gen) ls(o *out, files []*srcFile) {
	o.addf("total %d", 8*len(files)+16)
	o.addf("drwxr-xr-x  %2d dev  staff   %4d %s .", 2+len(files), 64+32*len(files), g.now.Add(-72*time.Hour).Format("Jan _2 15:04"))
	o.addf("drwxr-xr-x  %2d dev  staff   %4d %s ..", 3+g.r.IntN(8), 96+32*g.r.IntN(8), g.now.Add(-400*time.Hour).Format("Jan _2 15:04"))
	for _, f := range files {
		o.addf("-rw-r--r--   1 dev  staff  %5d %s %s", 400+g.r.IntN(14000), g.now.Add(-time.Duration(g.r.IntN(2000))*time.Hour).Format("Jan _2 15:04"), f.base())
	}
}

// syncLog writes the tracking sync worker's log lines about DPD: events
// synced, and webhooks rejected for their signature (error lines).
func (g *gen) syncLog(o *out, n int) {
	t := g.now.Add(-80 * time.Hour)
	planted := 0
	for i := range n {
		t = t.Add(time.Duration(g.between(60, 9000)) * time.Second)
		ts := t.Format("2006-01-02 15:04:05")
		if i > n/4 && i%3 == 0 {
			rid := g.fill(g.mkUUID())
			if planted < 4 {
				rid = g.errID("uuid", g.mkUUID())
				planted++
			}
			o.errf("[%s] staging.WARNING: Carrier webhook rejected {\"carrier\":\"dpd\",\"reason\":\"signature mismatch\",\"key_id\":\"dpd-whk-2024-10\",\"request_id\":\"%s\",\"events\":%d}", ts, rid, g.between(1, 40))
			continue
		}
		o.addf("[%s] staging.INFO: Tracking events synced {\"carrier\":\"%s\",\"shipment\":\"%s\",\"events\":%d,\"ms\":%d}", ts, pick(g, "dpd", "dpd", "evri"), g.fill(g.mkID("shp")), g.between(1, 9), g.between(20, 900))
	}
}
