package kilngen

import (
	"fmt"
	"strings"
)

// Helm and Kubernetes: pods, describe, events, logs, upgrades.

// kubePods is kubectl get pods -o wide of a chart's deployment; the crashing
// pod (if any) is returned unlabelled, for later commands to name.
func (g *gen) kubePods(chart string, crash bool) (*out, string) {
	o := &out{}
	o.ok("NAME                                 READY   STATUS             RESTARTS        AGE     IP             NODE                                           NOMINATED NODE   READINESS GATES")
	rs := g.chars(kubeSet, 10)
	var bad string
	n := g.between(3, 6)
	for i := 0; i < n; i++ {
		name := g.fresh(func() string { return fmt.Sprintf("%s-%s-%s", chart, rs, g.chars(kubeSet, 5)) })
		ip := g.ip()
		if crash && i == n-1 {
			bad = name
			o.okf("%-36s 0/1     CrashLoopBackOff   %d (%dm%ds ago)   %dm     %-14s %-46s <none>           <none>", name, g.between(4, 12), g.between(0, 4), g.between(0, 59), g.between(12, 40), ip, g.node())
			continue
		}
		o.okf("%-36s 1/1     Running            0               %dh     %-14s %-46s <none>           <none>", g.passing(true, name, "id"), g.between(2, 90), ip, g.node())
	}
	for i := 0; i < g.between(1, 3); i++ {
		o.okf("%-36s 1/1     Running            0               %dd     %-14s %-46s <none>           <none>", g.passing(true, g.pod(g.pick([]string{"ember-worker", "ember-gateway"})), "id"), g.between(2, 9), g.ip(), g.node())
	}
	return o, bad
}

var crashReasons = []struct{ reason, code string }{
	{"Error", "1"},
	{"OOMKilled", "137"},
	{"Error", "2"},
}

// kubeDescribe is kubectl describe pod of a crash-looping pod: it
// succeeds; the last state and the warning events report the failure.
func (g *gen) kubeDescribe(chart, pod string) *out {
	o := &out{}
	uid := g.uuid()
	ip := g.ip()
	node := g.node()
	started := g.clock.Add(-g.dur(600000, 3000000))
	o.okf("Name:             %s", pod)
	o.ok("Namespace:        ledger")
	o.ok("Priority:         0")
	o.okf("Service Account:  %s", chart)
	o.okf("Node:             %s/%s", node, g.ip())
	o.okf("Start Time:       %s", started.Format("Mon, 02 Jan 2006 15:04:05 -0700"))
	o.ok("Labels:           app.kubernetes.io/instance=" + chart)
	o.ok("                  app.kubernetes.io/name=" + chart)
	o.okf("                  pod-template-hash=%s", g.chars(kubeSet, 10))
	o.ok("Annotations:      checksum/config: " + g.hex(64))
	o.ok("Status:           Running")
	o.okf("IP:               %s", ip)
	o.ok("IPs:")
	o.okf("  IP:           %s", ip)
	o.okf("Controlled By:  ReplicaSet/%s-%s", chart, g.chars(kubeSet, 10))
	o.ok("Containers:")
	o.okf("  %s:", strings.TrimPrefix(chart, "ember-"))
	o.okf("    Container ID:   containerd://%s", g.hex(64))
	o.okf("    Image:          %s.dkr.ecr.%s.amazonaws.com/%s:sha-%s", g.w.account, g.w.region, chart, g.hex(12))
	o.okf("    Image ID:       %s.dkr.ecr.%s.amazonaws.com/%s@sha256:%s", g.w.account, g.w.region, chart, g.hex(64))
	o.ok("    Port:           8080/TCP")
	o.ok("    Host Port:      0/TCP")
	o.ok("    State:          Waiting")
	o.ok("      Reason:       CrashLoopBackOff")
	cr := crashReasons[g.r.IntN(len(crashReasons))]
	o.bad("    Last State:     Terminated")
	o.badf("      Reason:       %s", cr.reason)
	o.badf("      Exit Code:    %s", cr.code)
	if cr.reason == "Error" {
		o.badf("      Message:      ember-ledger: unhandled exception in settlement worker (request %s)", g.errl(g.hex(16), "id"))
	}
	o.badf("      Started:      %s", g.clock.Add(-g.dur(60000, 200000)).Format("Mon, 02 Jan 2006 15:04:05 -0700"))
	o.badf("      Finished:     %s", g.clock.Add(-g.dur(1000, 50000)).Format("Mon, 02 Jan 2006 15:04:05 -0700"))
	o.ok("    Ready:          False")
	o.okf("    Restart Count:  %d", g.between(4, 14))
	o.ok("    Limits:")
	o.okf("      cpu:     %dm", g.between(8, 20)*100)
	o.okf("      memory:  %dMi", g.between(4, 16)*128)
	o.ok("    Requests:")
	o.okf("      cpu:      %dm", g.between(1, 8)*100)
	o.okf("      memory:   %dMi", g.between(2, 4)*128)
	o.okf("    Liveness:   http-get http://:http/healthz delay=%ds timeout=1s period=10s #success=1 #failure=3", g.between(5, 30))
	o.ok("    Readiness:  http-get http://:http/readyz delay=0s timeout=1s period=10s #success=1 #failure=3")
	o.ok("    Environment Variables from:")
	o.okf("      %s  ConfigMap  Optional: false", chart)
	o.ok("    Environment:")
	o.okf("      AWS_ROLE_ARN:                 arn:aws:iam::%s:role/%s-irsa", g.w.account, chart)
	o.ok("      AWS_WEB_IDENTITY_TOKEN_FILE:  /var/run/secrets/eks.amazonaws.com/serviceaccount/token")
	o.ok("    Mounts:")
	o.okf("      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-%s (ro)", g.chars(kubeSet, 5))
	o.ok("Conditions:")
	o.ok("  Type                        Status")
	o.ok("  PodReadyToStartContainers   True ")
	o.ok("  Initialized                 True ")
	o.ok("  Ready                       False ")
	o.ok("  ContainersReady             False ")
	o.ok("  PodScheduled                True ")
	o.ok("QoS Class:                   Burstable")
	o.ok("Node-Selectors:              karpenter.sh/capacity-type=on-demand")
	o.ok("Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s")
	o.ok("                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s")
	o.ok("Events:")
	o.ok("  Type     Reason     Age                   From               Message")
	o.ok("  ----     ------     ----                  ----               -------")
	o.okf("  Normal   Scheduled  %dm                   default-scheduler  Successfully assigned ledger/%s to %s", g.between(12, 40), pod, node)
	o.okf("  Normal   Pulled     %dm (x%d over %dm)    kubelet            Container image \"%s.dkr.ecr.%s.amazonaws.com/%s:sha-%s\" already present on machine", g.between(2, 9), g.between(4, 9), g.between(12, 40), g.w.account, g.w.region, chart, g.hex(12))
	o.okf("  Normal   Created    %dm (x%d over %dm)    kubelet            Created container %s", g.between(2, 9), g.between(4, 9), g.between(12, 40), strings.TrimPrefix(chart, "ember-"))
	o.badf("  Warning  Unhealthy  %dm (x%d over %dm)    kubelet            Readiness probe failed: Get \"http://%s/readyz\": dial tcp %s: connect: connection refused", g.between(2, 9), g.between(4, 20), g.between(12, 40), g.errl(ip+":8080", "hostport"), ip+":8080")
	o.badf("  Warning  BackOff    %ds (x%d over %dm)   kubelet            Back-off restarting failed container %s in pod %s_ledger(%s)", g.between(5, 59), g.between(20, 80), g.between(12, 40), strings.TrimPrefix(chart, "ember-"), pod, g.errl(uid, "uuid"))
	return o
}

// kubeEvents is kubectl get events of the namespace, sorted by time.
func (g *gen) kubeEvents(chart string, warn bool) *out {
	o := &out{}
	o.ok("LAST SEEN   TYPE      REASON              OBJECT                                        MESSAGE")
	for i, n := 0, g.n(15, 45); i < n; i++ {
		age := fmt.Sprintf("%dm", n-i)
		obj := "pod/" + g.pod(g.pick(charts))
		switch {
		case warn && i == n*2/3:
			o.badf("%-11s Warning   FailedScheduling    %-45s 0/%d nodes are available: %d Insufficient memory, %d node(s) had untolerated taint {dedicated: batch}. preemption: 0/%d nodes are available: %d No preemption victims found for incoming pod.", age, "pod/"+g.errl(g.pod(chart), "id"), 6, 2, 4, 6, 6)
		case warn && i == n*2/3+2:
			p := g.pod(chart)
			o.badf("%-11s Warning   BackOff             %-45s Back-off restarting failed container %s in pod %s", age, "pod/"+g.errl(p, "id"), strings.TrimPrefix(chart, "ember-"), p)
		case warn && i == n*2/3+3:
			o.badf("%-11s Warning   Unhealthy           %-45s Readiness probe failed: Get \"http://%s/readyz\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)", age, "pod/"+g.pod(chart), g.errl(g.hostport(8080), "hostport"))
		case warn && i == n*2/3+1:
			o.badf("%-11s Warning   FailedCreate        %-45s Error creating: pods \"%s-\" is forbidden: exceeded quota: ledger-quota, requested: requests.memory=2Gi, used: requests.memory=%dGi, limited: requests.memory=24Gi", age, "replicaset/"+g.errl(chart+"-"+g.chars(kubeSet, 10), "id"), chart, g.between(22, 24))
		default:
			r := g.pick([]string{"Scheduled", "Pulling", "Pulled", "Created", "Started", "Killing", "SuccessfulCreate", "ScalingReplicaSet"})
			name := strings.TrimPrefix(obj, "pod/")
			if !warn && g.chance(0.1) {
				g.passing(true, name, "id")
			}
			o.okf("%-11s Normal    %-19s %-45s %s", age, r, obj, g.pick([]string{"Started container", "Successfully pulled image in 1.2s (1.2s including waiting)", "Created pod", "Scaled up replica set", "Stopping container"}))
		}
	}
	return o
}

// helmUpgrade is helm upgrade --install --atomic --debug of a chart.
func (g *gen) helmUpgrade(chart string, fail bool) *out {
	o := &out{}
	o.okf("history.go:56: [debug] getting history for release %s", chart)
	o.ok("upgrade.go:164: [debug] preparing upgrade for " + chart)
	o.ok("upgrade.go:172: [debug] performing update for " + chart)
	o.ok("upgrade.go:375: [debug] creating upgraded release for " + chart)
	o.okf("client.go:393: [debug] checking %d resources for changes", g.between(6, 14))
	for _, k := range []string{"ServiceAccount", "ConfigMap", "Service", "Deployment", "HorizontalPodAutoscaler", "PodDisruptionBudget"} {
		o.okf("client.go:684: [debug] Patch %s %q in namespace ledger", k, chart)
	}
	o.okf("upgrade.go:447: [debug] waiting for release %s resources (created: 0 updated: %d  deleted: 0)", chart, g.between(4, 9))
	o.okf("wait.go:48: [debug] beginning wait for %d resources with timeout of 5m0s", g.between(4, 9))
	kind := g.r.IntN(3)
	for i, n := 0, g.n(20, 60); i < n; i++ {
		o.okf("ready.go:303: [debug] Deployment is not ready: ledger/%s. %d out of 3 expected pods are ready", chart, g.between(0, 2))
	}
	if !fail {
		o.okf("upgrade.go:162: [debug] updating status for upgraded release for %s", chart)
		o.okf("Release %q has been upgraded. Happy Helming!", chart)
		o.okf("NAME: %s", chart)
		o.okf("LAST DEPLOYED: %s", g.clock.Format("Mon Jan  2 15:04:05 2006"))
		o.ok("NAMESPACE: ledger")
		o.ok("STATUS: deployed")
		o.okf("REVISION: %d", g.between(20, 90))
		o.ok("TEST SUITE: None")
		o.ok("USER-SUPPLIED VALUES:")
		o.okf("image:\n  tag: %s", g.passing(true, "sha-"+g.hex(12), "version"))
		return o
	}
	switch kind {
	case 0:
		o.badf("upgrade.go:476: [debug] warning: Upgrade %q failed: context deadline exceeded", chart)
		o.okf("upgrade.go:497: [debug] Upgrade failed and atomic is set, rolling back to last successful release")
		o.ok("rollback.go:64: [debug] preparing rollback of " + chart)
		o.ok("rollback.go:130: [debug] creating rolled back release for " + chart)
		o.ok("rollback.go:136: [debug] performing rollback of " + chart)
		o.badf("Error: UPGRADE FAILED: release %s failed, and has been rolled back due to atomic being set: context deadline exceeded", chart)
		o.badf("helm.go:84: [debug] context deadline exceeded")
		o.badf("release %s failed, and has been rolled back due to atomic being set", chart)
		o.bad("helm.sh/helm/v3/pkg/action.(*Upgrade).failRelease")
		o.bad("\thelm.sh/helm/v3/pkg/action/upgrade.go:524")
		o.bad("helm.sh/helm/v3/pkg/action.(*Upgrade).handleContext.func1")
		o.bad("\thelm.sh/helm/v3/pkg/action/upgrade.go:449")
		o.bad("runtime.goexit")
		o.bad("\truntime/asm_arm64.s:1223")
	case 1:
		l := g.site(chart+"/templates/deployment.yaml", 20, 60)
		site := g.errl(fmt.Sprintf("%s/templates/deployment.yaml:%d:%d", chart, l, g.between(10, 40)), "site")
		o.badf("Error: UPGRADE FAILED: template: %s: executing \"%s/templates/deployment.yaml\" at <.Values.probes.liveness.path>: nil pointer evaluating interface {}.path", site, chart)
		o.badf("helm.go:84: [debug] template: %s: executing \"%s/templates/deployment.yaml\" at <.Values.probes.liveness.path>: nil pointer evaluating interface {}.path", site, chart)
	default:
		o.badf("Error: UPGRADE FAILED: cannot patch %q with kind Deployment: Deployment.apps %q is invalid: spec.template.spec.containers[0].resources.requests: Invalid value: %q: must be less than or equal to cpu limit of %dm", chart, chart, "2", g.between(5, 15)*100)
		o.badf("helm.go:84: [debug] cannot patch %q with kind Deployment: admission webhook %q denied the request", chart, g.errl(fmt.Sprintf("validate.kyverno.svc-fail-%s", g.chars(lowAN, 6)), "id"))
	}
	return o
}

// helmTemplate is helm template of a chart: the rendered manifests.
func (g *gen) helmTemplateOut(chart string) *out {
	o := &out{}
	for _, k := range []string{"ServiceAccount", "ConfigMap", "Service", "Deployment", "HorizontalPodAutoscaler"} {
		o.ok("---")
		o.okf("# Source: %s/templates/%s.yaml", chart, strings.ToLower(k))
		o.okf("apiVersion: %s", map[bool]string{true: "apps/v1", false: "v1"}[k == "Deployment"])
		o.okf("kind: %s", k)
		o.ok("metadata:")
		o.okf("  name: %s", chart)
		o.ok("  labels:")
		o.okf("    helm.sh/chart: %s-0.%d.%d", chart, g.between(5, 30), g.between(0, 20))
		o.okf("    app.kubernetes.io/name: %s", chart)
		o.okf("    app.kubernetes.io/instance: %s", chart)
		o.okf("    app.kubernetes.io/version: \"1.%d.%d\"", g.between(1, 40), g.between(0, 9))
		o.ok("    app.kubernetes.io/managed-by: Helm")
		switch k {
		case "ConfigMap":
			o.ok("data:")
			for i, n := 0, g.n(10, 30); i < n; i++ {
				o.okf("  %s: %q", strings.ToUpper(g.pick(nouns)+"_"+g.pick([]string{"LIMIT", "WINDOW_SECS", "URL", "ENABLED", "BATCH"})), g.pick([]string{"true", "false", "500", "30", "https://rates.int.kilnworks.dev/v2"}))
			}
		case "Deployment":
			o.ok("spec:")
			o.okf("  replicas: %d", g.between(2, 6))
			o.ok("  template:")
			o.ok("    metadata:")
			o.ok("      annotations:")
			o.okf("        checksum/config: %s", g.passing(true, g.hex(64), "hash"))
			o.ok("    spec:")
			o.ok("      containers:")
			o.okf("        - name: %s", strings.TrimPrefix(chart, "ember-"))
			o.okf("          image: \"%s.dkr.ecr.%s.amazonaws.com/%s:sha-%s\"", g.w.account, g.w.region, chart, g.hex(12))
			for i, n := 0, g.n(10, 30); i < n; i++ {
				o.okf("          # %s", g.pick([]string{"probes", "resources", "env", "volumeMounts"}))
				o.okf("          %s: {}", camel(g.pick(nouns), "settings"))
			}
		default:
			o.ok("spec:")
			o.ok("  ports:")
			o.ok("    - port: 80")
			o.ok("      targetPort: http")
		}
	}
	return o
}
