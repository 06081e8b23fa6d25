package kilngen

import (
	"fmt"
	"strings"
)

// The AWS estate: terraform plan and apply, the aws CLI, ansible.

var tfValidation = []struct{ title, detail, src string }{
	{"Unsupported argument", `An argument named "storage_throughput" is not expected here.`, "  storage_throughput = var.throughput"},
	{"Reference to undeclared input variable", `An input variable with the name "snapshot_window" has not been declared. This variable can be declared with a variable "snapshot_window" {} block.`, "  preferred_snapshot_window = var.snapshot_window"},
	{"Incorrect attribute value type", `Inappropriate value for attribute "cidr_blocks": list of string required.`, `  cidr_blocks       = "10.40.0.0/16"`},
	{"Missing required argument", `The argument "engine" is required, but no definition was found.`, `resource "aws_elasticache_replication_group" "cache" {`},
	{"Unsupported attribute", `This object has no argument, nested block, or exported attribute named "endpoint_address".`, "  value = aws_db_instance.ledger.endpoint_address"},
	{"Invalid function argument", `Invalid value for "path" parameter: no file exists at "policies/deployer.json"; this function works only with files that are distributed as part of the configuration source code.`, `  policy = file("policies/deployer.json")`},
}

var awsCodes = []struct{ code, op, msg string }{
	{"InvalidParameterCombination", "RDS: ModifyDBInstance", "You can't modify the storage throughput of a gp3 volume with less than 400 GiB allocated."},
	{"InvalidPermission.Duplicate", "EC2: AuthorizeSecurityGroupIngress", "the specified rule \"peer: %s, TCP, from port: 5432, to port: 5432, ALLOW\" already exists"},
	{"DependencyViolation", "EC2: DeleteSecurityGroup", "resource %s has a dependent object"},
	{"UnauthorizedOperation", "EC2: CreateLaunchTemplateVersion", "You are not authorized to perform this operation. User: arn:aws:sts::%s:assumed-role/ember-ci-deployer/terraform is not authorized to perform: ec2:CreateLaunchTemplateVersion. Encoded authorization failure message: %s"},
	{"EntityAlreadyExists", "IAM: CreateRole", "Role with name ember-ledger-irsa already exists."},
	{"MalformedPolicyDocument", "IAM: PutRolePolicy", "Policy document should not specify a principal."},
	{"InvalidParameterValue", "ElastiCache: ModifyReplicationGroup", "Cluster mode enabled cannot be changed for a Redis replication group in cluster mode disabled when the number of shards is less than 1."},
	{"LimitExceededException", "EKS: UpdateNodegroupConfig", "Nodegroup update limit exceeded: an update is already in progress for nodegroup %s"},
	{"BucketAlreadyOwnedByYou", "S3: CreateBucket", "Your previous request to create the named bucket succeeded and you already own it."},
	{"ThrottlingException", "EKS: DescribeNodegroup", "Rate exceeded"},
	{"KMSKeyNotAccessibleFault", "RDS: CreateDBInstanceReadReplica", "The specified KMS key %s does not exist, is not enabled or you do not have permissions to access it."},
}

var tfModuleTypes = map[string][]string{
	"rds":         {"aws_db_instance", "aws_db_parameter_group", "aws_db_subnet_group", "aws_cloudwatch_metric_alarm", "aws_kms_key"},
	"elasticache": {"aws_elasticache_replication_group", "aws_elasticache_parameter_group", "aws_elasticache_subnet_group", "aws_cloudwatch_metric_alarm"},
	"eks_nodes":   {"aws_eks_node_group", "aws_launch_template", "aws_iam_role", "aws_iam_role_policy_attachment", "aws_autoscaling_schedule"},
	"s3_exports":  {"aws_s3_bucket", "aws_s3_bucket_policy", "aws_s3_bucket_lifecycle_configuration", "aws_s3_bucket_public_access_block"},
	"iam_ci":      {"aws_iam_role", "aws_iam_role_policy", "aws_iam_openid_connect_provider"},
	"network":     {"aws_security_group", "aws_security_group_rule", "aws_vpc_endpoint", "aws_route53_record"},
}

// tfRefresh writes terraform's refreshing lines; ids are labelled when ok.
func (g *gen) tfRefresh(o *out, ok bool, n int) {
	for i := 0; i < n; i++ {
		m := tfModules[g.r.IntN(len(tfModules))]
		rt := g.pick(tfModuleTypes[m.name])
		var id string
		switch rt {
		case "aws_security_group_rule":
			id = "sgrule-" + g.digits(10)
		case "aws_kms_key":
			id = g.uuid()
		case "aws_iam_role_policy":
			id = "ember-" + g.pick(nouns) + ":" + g.pick(nouns) + "-" + g.chars(lowAN, 6)
		case "aws_cloudwatch_metric_alarm":
			id = "ember-" + g.pick(nouns) + "-" + g.pick([]string{"p99", "errors", "cpu", "lag"}) + "-" + g.chars(lowAN, 5)
		default:
			id = "ember-" + g.pick(nouns) + "-" + g.chars(lowAN, 8)
		}
		if ok && !g.used[id] && g.chance(0.06) {
			g.used[id] = true
			g.passing(true, id, "id")
		}
		o.okf("module.%s.%s.%s: Refreshing state... [id=%s]", m.name, rt, g.pick(nouns)+"_"+g.pick([]string{"primary", "main", "ingress", "alarm"}), id)
	}
}

// tfPlan is `terraform plan`; failing, it stops on a validation error in
// module m.
func (g *gen) tfPlan(m tfModule, fail bool) *out {
	o := &out{}
	g.fails = nil
	for k := 0; fail && (k == 0 || (k == 1 && g.chance(0.6))); k++ {
		if k == 0 && g.chance(0.5) {
			g.tfRefresh(o, false, g.n(5, 20))
			o.ok("")
		}
		e := tfValidation[g.r.IntN(len(tfValidation))]
		l := g.site(m.main(), 20, max(30, g.file(m.main()).len()-2))
		g.setLine(m.main(), l, e.src)
		g.failed(l)
		o.bad("╷")
		o.badf("│ Error: %s", e.title)
		o.bad("│ ")
		o.badf("│   on %s, in resource %q %q:", g.errl(fmt.Sprintf("modules/%s/main.tf line %d", m.name, l), "site"), m.rtype, m.rname)
		o.badf("│   %d: %s", l, e.src)
		o.bad("│ ")
		o.badf("│ %s", e.detail)
		o.bad("╵")
	}
	if fail {
		if g.chance(0.4) {
			l := g.site(tfDir+"/modules/s3_exports/main.tf", 5, 40)
			o.ok("╷")
			o.ok("│ Warning: Argument is deprecated")
			o.ok("│ ")
			o.ok("│   with module.s3_exports.aws_s3_bucket.exports,")
			o.okf("│   on modules/s3_exports/main.tf line %d, in resource \"aws_s3_bucket\" \"exports\":", l)
			o.okf("│   %d:   acl    = \"private\"", l)
			o.ok("│ ")
			o.ok("│ Use the aws_s3_bucket_acl resource instead")
			o.ok("│ ")
			o.ok("│ (and one more similar warning elsewhere)")
			o.ok("╵")
		}
		return o
	}
	g.tfRefresh(o, true, g.n(25, 70))
	o.ok("")
	o.ok("Terraform used the selected providers to generate the following execution")
	o.ok("plan. Resource actions are indicated with the following symbols:")
	o.ok("  + create")
	o.ok("  ~ update in-place")
	o.ok("-/+ destroy and then create replacement")
	o.ok("")
	o.ok("Terraform will perform the following actions:")
	o.ok("")
	add, chg := 0, 0
	for i, n := 0, g.n(3, 8); i < n; i++ {
		mm := tfModules[g.r.IntN(len(tfModules))]
		if i == 0 {
			mm = m
		}
		create := g.chance(0.4)
		if create {
			add++
			o.okf("  # module.%s.%s.%s will be created", mm.name, mm.rtype, mm.rname+"_"+g.pick(nouns))
			o.okf("  + resource %q %q {", mm.rtype, mm.rname+"_"+g.pick(nouns))
			for j, k := 0, g.between(6, 16); j < k; j++ {
				o.okf("      + %-32s = (known after apply)", g.pick([]string{"arn", "id", "endpoint", "address", "hosted_zone_id", "resource_id", "status", "tags_all", "latest_restorable_time", "ca_cert_identifier"}))
			}
			o.okf("      + %-32s = %q", "identifier", "ember-"+g.pick(nouns)+"-prod")
			o.ok("    }")
		} else {
			chg++
			o.okf("  # module.%s.%s.%s will be updated in-place", mm.name, mm.rtype, mm.rname)
			o.okf("  ~ resource %q %q {", mm.rtype, mm.rname)
			o.okf("      ~ %-32s = %d -> %d", g.pick([]string{"allocated_storage", "desired_size", "num_cache_clusters", "backup_retention_period", "max_size"}), g.between(1, 200), g.between(1, 400))
			o.okf("        id                               = %q", g.passing(true, "ember-"+g.pick(nouns)+"-"+g.chars(lowAN, 10), "id"))
			o.ok("      ~ tags                             = {")
			o.okf("          + \"LastChange\" = \"%s\"", g.clock.Format("2006-01-02"))
			o.ok("            # (3 unchanged elements hidden)")
			o.ok("        }")
			o.okf("        # (%d unchanged attributes hidden)", g.between(12, 60))
			o.ok("    }")
		}
		o.ok("")
	}
	o.okf("Plan: %d to add, %d to change, 0 to destroy.", add, chg)
	o.ok("")
	o.ok("─────────────────────────────────────────────────────────────────────────────")
	o.ok("")
	o.ok("Saved the plan to: tfplan")
	o.ok("")
	o.ok("To perform exactly these actions, run the following command to apply:")
	o.ok("    terraform apply \"tfplan\"")
	return o
}

// tfApply is `terraform apply tfplan`; failing, an AWS API error stops it.
func (g *gen) tfApply(m tfModule, fail bool) *out {
	o := &out{}
	g.fails = nil
	steps := g.between(2, 6)
	failAt := -1
	if fail {
		failAt = g.r.IntN(steps)
	}
	for i := 0; i < steps; i++ {
		mm := tfModules[g.r.IntN(len(tfModules))]
		if i == failAt {
			mm = m
		}
		addr := fmt.Sprintf("module.%s.%s.%s", mm.name, mm.rtype, mm.rname)
		o.okf("%s: Modifying... [id=ember-%s-%s]", addr, g.pick(nouns), g.chars(lowAN, 6))
		for s := 10; s <= g.between(10, 60)*10; s += 10 {
			if s%60 == 0 || g.chance(0.3) {
				o.okf("%s: Still modifying... [id=ember-%s-prod, %dm%ds elapsed]", addr, mm.name, s/60, s%60)
			}
		}
		for k := 0; i == failAt && (k == 0 || (k == 1 && g.chance(0.5))); k++ {
			if k == 1 {
				mm = tfModules[g.r.IntN(len(tfModules))]
				addr = fmt.Sprintf("module.%s.%s.%s", mm.name, mm.rtype, mm.rname)
			}
			o.ok("╷")
			e := awsCodes[g.r.IntN(len(awsCodes))]
			msg := e.msg
			if strings.Contains(msg, "%s") {
				switch e.code {
				case "UnauthorizedOperation":
					msg = fmt.Sprintf(msg, g.w.account, g.errl(g.chars(alnum+"-_", 180), "id"))
				default:
					msg = fmt.Sprintf(msg, g.errl(g.awsID("sg"), "id"))
				}
			}
			l := g.site(m.main(), 20, max(30, g.file(m.main()).len()-2))
			req := g.errl(g.uuid(), "uuid")
			code := g.errl(e.code, "code")
			verb := strings.SplitN(e.op, ": ", 2)
			o.badf("│ Error: updating %s (ember-%s-prod): operation error %s, https response error StatusCode: %d, RequestID: %s, api error %s: %s", strings.ReplaceAll(mm.rtype, "aws_", ""), mm.name, e.op, g.pick1(400, 400, 403, 409), req, code, msg)
			_ = verb
			o.bad("│ ")
			o.badf("│   with %s,", addr)
			o.badf("│   on %s, in resource %q %q:", g.errl(fmt.Sprintf("modules/%s/main.tf line %d", m.name, l), "site"), m.rtype, m.rname)
			o.badf("│   %d: resource %q %q {", l, m.rtype, m.rname)
			o.bad("│ ")
			o.bad("╵")
			g.setLine(m.main(), l, fmt.Sprintf("resource %q %q {", m.rtype, m.rname))
			g.failed(l)
		}
		if i == failAt {
			// the other resources of the apply finished around the error
			for j := i + 1; j < steps; j++ {
				mm := tfModules[g.r.IntN(len(tfModules))]
				o.okf("module.%s.%s.%s: Modifications complete after %ds [id=ember-%s-%s]", mm.name, mm.rtype, mm.rname, g.between(1, 90), g.pick(nouns), g.chars(lowAN, 6))
			}
			return o
		}
		o.okf("%s: Modifications complete after %dm%ds [id=%s]", addr, g.between(0, 9), g.between(0, 59), g.passing(!fail, "ember-"+mm.name+"-"+g.chars(lowAN, 10), "id"))
	}
	o.ok("")
	o.okf("Apply complete! Resources: %d added, %d changed, 0 destroyed.", g.between(0, 2), steps)
	o.ok("")
	o.ok("Outputs:")
	o.ok("")
	o.okf("cache_primary_endpoint = %q", g.w.cacheHost)
	o.okf("ledger_db_endpoint = \"%s:5432\"", g.w.rdsHost)
	o.okf("ledger_db_resource_id = %q", g.passing(true, "db-"+g.up(26), "id"))
	o.okf("exports_bucket_arn = %q", g.passing(true, fmt.Sprintf("arn:aws:s3:::ember-exports-prod-%s", g.chars(lowAN, 6)), "id"))
	o.okf("deployer_role_arn = \"arn:aws:iam::%s:role/ember-ci-deployer\"", g.w.account)
	return o
}

// awsJSON is the output of an aws CLI describe call.
func (g *gen) awsDescribeDB(ok bool) *out {
	o := &out{}
	o.ok("{")
	o.ok("    \"DBInstances\": [")
	for i, n := 0, max(1, g.n(1, 3)); i < n; i++ {
		id := "ember-ledger-prod"
		if i > 0 {
			id = fmt.Sprintf("ember-ledger-prod-replica-%d", i)
		}
		o.ok("        {")
		o.okf("            \"DBInstanceIdentifier\": %q,", id)
		o.okf("            \"DBInstanceClass\": %q,", g.pick([]string{"db.r6g.xlarge", "db.r6g.large", "db.r7g.xlarge"}))
		o.ok("            \"Engine\": \"postgres\",")
		o.ok("            \"DBInstanceStatus\": \"available\",")
		o.ok("            \"MasterUsername\": \"ledger_admin\",")
		o.ok("            \"Endpoint\": {")
		o.okf("                \"Address\": %q,", g.w.rdsHost)
		o.ok("                \"Port\": 5432,")
		o.okf("                \"HostedZoneId\": %q", "Z"+g.up(13))
		o.ok("            },")
		o.okf("            \"AllocatedStorage\": %d,", g.pick1(200, 400, 800))
		o.okf("            \"InstanceCreateTime\": \"2023-%02d-%02dT%02d:%02d:%02d.%03dZ\",", g.between(1, 12), g.between(1, 28), g.between(0, 23), g.between(0, 59), g.between(0, 59), g.between(0, 999))
		o.ok("            \"PreferredBackupWindow\": \"02:10-02:40\",")
		o.okf("            \"BackupRetentionPeriod\": %d,", g.between(7, 35))
		o.ok("            \"VpcSecurityGroups\": [")
		o.ok("                {")
		o.okf("                    \"VpcSecurityGroupId\": %q,", g.passing(ok, g.awsID("sg"), "id"))
		o.ok("                    \"Status\": \"active\"")
		o.ok("                }")
		o.ok("            ],")
		o.ok("            \"DBParameterGroups\": [")
		o.ok("                {")
		o.ok("                    \"DBParameterGroupName\": \"ember-ledger-pg16\",")
		o.ok("                    \"ParameterApplyStatus\": \"in-sync\"")
		o.ok("                }")
		o.ok("            ],")
		o.okf("            \"AvailabilityZone\": \"%sa\",", g.w.region)
		o.ok("            \"DBSubnetGroup\": {")
		o.ok("                \"DBSubnetGroupName\": \"ember-private\",")
		o.okf("                \"VpcId\": %q,", g.awsID("vpc"))
		o.ok("                \"Subnets\": [")
		for s := 0; s < 3; s++ {
			o.okf("                    {\"SubnetIdentifier\": %q, \"SubnetAvailabilityZone\": {\"Name\": \"%s%c\"}, \"SubnetStatus\": \"Active\"},", g.awsID("subnet"), g.w.region, 'a'+rune(s))
		}
		o.ok("                ]")
		o.ok("            },")
		o.okf("            \"EngineVersion\": \"16.%d\",", g.between(1, 4))
		o.ok("            \"StorageType\": \"gp3\",")
		o.okf("            \"Iops\": %d,", g.pick1(3000, 12000))
		o.okf("            \"StorageThroughput\": %d,", g.pick1(125, 500))
		o.okf("            \"DbiResourceId\": %q,", g.passing(ok, "db-"+g.up(26), "id"))
		o.ok("            \"CACertificateIdentifier\": \"rds-ca-rsa2048-g1\",")
		o.okf("            \"DBInstanceArn\": \"arn:aws:rds:%s:%s:db:%s\",", g.w.region, g.w.account, id)
		o.ok("            \"PerformanceInsightsEnabled\": true,")
		o.ok("            \"DeletionProtection\": true")
		o.ok("        },")
	}
	o.ok("    ]")
	o.ok("}")
	return o
}

// awsLogsTail is `aws logs tail` of a Lambda's log group: succeeds, with
// an error report in the middle when crash.
func (g *gen) awsLogsTail(crash bool) *out {
	o := &out{}
	n := g.n(60, 160)
	crashAt := -1
	if crash {
		crashAt = n/2 + g.r.IntN(n/3+1)
	}
	stream := fmt.Sprintf("%s/[$LATEST]%s", g.clock.Format("2006/01/02"), g.hex(32))
	t := g.clock.Add(-g.dur(900000, 3600000))
	second := crash && g.chance(0.7)
	for i := 0; i < n; i += 4 {
		t = t.Add(g.dur(50, 9000))
		ts := func() string { t = t.Add(g.dur(1, 3000)); return t.Format("2006-01-02T15:04:05.000000+00:00") }
		if crashAt >= i && crashAt < i+4 || second && crashAt-n/4 >= i && crashAt-n/4 < i+4 {
			rid := g.errl(g.uuid(), "uuid")
			o.badf("%s %s START RequestId: %s Version: $LATEST", ts(), stream, rid)
			x := ts()
			o.badf("%s %s %s\t%s\tERROR\tInvoke Error \t{\"errorType\":\"Error\",\"errorMessage\":\"%s\",\"stack\":[\"Error: see below\"]}", x, stream, t.Format("2006-01-02T15:04:05.000Z"), rid, g.pick([]string{"connect ETIMEDOUT " + g.hostport(6379), "getaddrinfo ENOTFOUND " + g.w.rdsHost, "Request failed with status code 502"}))
			o.badf("%s %s     at TLSSocket.onConnectTimeout (/var/task/node_modules/ioredis/built/Redis.js:170:29)", x, stream)
			o.badf("%s %s     at Object.onceWrapper (node:events:633:28)", x, stream)
			o.badf("%s %s     at process.processTicksAndRejections (node:internal/process/task_queues:95:5)", x, stream)
			o.badf("%s %s END RequestId: %s", x, stream, rid)
			d := g.between(3000, 30000)
			o.badf("%s %s REPORT RequestId: %s\tDuration: %d.%02d ms\tBilled Duration: %d ms\tMemory Size: 512 MB\tMax Memory Used: %d MB\tStatus: error\tError Type: Runtime.UnhandledPromiseRejection", x, stream, rid, d, g.between(0, 99), d+1, g.between(90, 500))
			continue
		}
		req := g.uuid()
		if !crash && g.chance(0.05) {
			g.passing(true, req, "uuid")
		}
		o.okf("%s %s START RequestId: %s Version: $LATEST", ts(), stream, req)
		for j := 0; j < g.between(1, 3); j++ {
			o.okf("%s %s %s\t%s\tINFO\t{\"msg\":\"%s\",\"roaster\":\"rst_%s\",\"count\":%d}", ts(), stream, t.Format("2006-01-02T15:04:05.000Z"), req, g.pick([]string{"webhook relayed", "stamp minted", "export chunk written", "rate cached"}), g.chars(alnum, 12), g.between(1, 500))
		}
		o.okf("%s %s END RequestId: %s", ts(), stream, req)
		d := g.between(4, 900)
		o.okf("%s %s REPORT RequestId: %s\tDuration: %d.%02d ms\tBilled Duration: %d ms\tMemory Size: 512 MB\tMax Memory Used: %d MB", ts(), stream, req, d, g.between(0, 99), d+1, g.between(90, 300))
	}
	return o
}

// awsCLIError is an aws CLI call refused by the API.
func (g *gen) awsCLIError(o *out) {
	t := g.clock
	for i := 0; i < g.between(4, 8); i++ {
		t = t.Add(g.dur(1, 90))
		o.okf("%s - MainThread - %s - DEBUG - %s", t.Format("2006-01-02 15:04:05,000"), g.pick([]string{"botocore.endpoint", "botocore.auth", "urllib3.connectionpool", "botocore.hooks"}), g.pick([]string{"Sending http request: <AWSPreparedRequest stream_output=False, method=PUT>", "Calculating signature using v4 auth.", "Event needs-retry.s3.PutObject: calling handler <botocore.retryhandler.RetryHandler>", "https://ember-exports-prod.s3.eu-west-1.amazonaws.com:443 \"PUT /probe.parquet HTTP/1.1\" 403 None"}))
	}
	o.badf("%s - MainThread - botocore.parsers - DEBUG - Response headers: {'x-amz-request-id': '%s', 'x-amz-id-2': '%s', 'Content-Type': 'application/xml', 'Server': 'AmazonS3'}", t.Format("2006-01-02 15:04:05,000"), g.errl(g.up(16), "id"), g.chars(alnum+"+/", 76))
	switch g.r.IntN(3) {
	case 0:
		o.badf("upload failed: ./exports/%s.parquet to s3://ember-exports-prod/%s/%s.parquet An error occurred (%s) when calling the PutObject operation: Access Denied", g.clock.Format("2006-01-02"), g.clock.Format("2006/01/02"), g.chars(lowAN, 10), g.errl("AccessDenied", "code"))
	case 1:
		o.badf("An error occurred (%s) when calling the DescribeNodegroup operation (reached max retries: 2): Rate exceeded", g.errl("ThrottlingException", "code"))
	default:
		o.ok("")
		o.badf("An error occurred (%s) when calling the AssumeRole operation: User: arn:aws:sts::%s:assumed-role/AWSReservedSSO_Developer_%s/%s@kilnworks.dev is not authorized to perform: sts:AssumeRole on resource: arn:aws:iam::%s:role/ember-break-glass", g.errl("AccessDenied", "code"), g.w.account, g.errl(g.hex(16), "id"), g.w.user, g.w.account)
	}
}

// awsIdentity is aws sts get-caller-identity.
func (g *gen) awsIdentity() *out {
	o := &out{}
	o.ok("{")
	o.okf("    \"UserId\": \"%s:%s@kilnworks.dev\",", g.passing(true, "AROA"+g.up(17), "id"), g.w.user)
	o.okf("    \"Account\": %q,", g.w.account)
	o.okf("    \"Arn\": \"arn:aws:sts::%s:assumed-role/AWSReservedSSO_Developer_%s/%s@kilnworks.dev\"", g.w.account, g.hex(16), g.w.user)
	o.ok("}")
	return o
}

// awsS3Ls is aws s3 ls of the exports bucket.
func (g *gen) awsS3Ls() *out {
	o := &out{}
	t := g.clock.Add(-g.dur(86400000, 864000000))
	for i, n := 0, g.n(30, 90); i < n; i++ {
		t = t.Add(g.dur(60000, 3600000))
		key := fmt.Sprintf("part-%05d-%s.c000.snappy.parquet", i, g.uuid())
		if g.chance(0.05) {
			g.passing(true, key, "key")
		}
		o.okf("%s %10d %s", t.Format("2006-01-02 15:04:05"), g.between(20000, 90000000), key)
	}
	return o
}

// ---- ansible ----

func (g *gen) ansHosts(role ansRole) []string {
	grp := role.group
	if grp == "all" {
		grp = "pgbouncer"
	}
	var hs []string
	for i := 1; i <= g.between(2, 4); i++ {
		hs = append(hs, fmt.Sprintf("%s-%d.prod.ember.internal", grp, i))
	}
	return hs
}

// ansiblePlay is ansible-playbook of role; failing, a task fails on one
// host (or a host is unreachable) while the others carry on.
func (g *gen) ansiblePlay(role ansRole, fail bool) *out {
	o := &out{}
	hosts := g.ansHosts(role)
	star := func(s string) string { return s + " " + strings.Repeat("*", max(3, 79-len(s))) }
	o.ok(star(fmt.Sprintf("PLAY [%s]", role.group)))
	o.ok("")
	tasks := []string{"Gathering Facts"}
	for i, n := 0, g.n(6, 16); i < n; i++ {
		tasks = append(tasks, fmt.Sprintf("%s : %s %s %s", role.name, g.pick([]string{"Install", "Render", "Ensure", "Check", "Template", "Restart"}), g.pick(nouns), g.pick([]string{"config", "service", "user", "directory", "package", "limits"})))
	}
	failTask, failHost := -1, -1
	unreachable := false
	failHost2 := -1
	if fail {
		failTask = 1 + g.r.IntN(len(tasks)-1)
		failHost = g.r.IntN(len(hosts))
		if g.chance(0.65) {
			failHost2 = (failHost + 1) % len(hosts)
		}
		unreachable = g.chance(0.3)
		if unreachable {
			failTask = 0
		}
	}
	dead := map[int]bool{}
	for ti, t := range tasks {
		o.ok(star(fmt.Sprintf("TASK [%s]", t)))
		if ti == failTask {
			l := g.site(role.name+"/tasks/main.yml", 5, 200)
			o.badf("task path: %s/%s/%s", g.home(), ansDir, g.errl(fmt.Sprintf("roles/%s/tasks/main.yml:%d", role.name, l), "site"))
		}
		for hi, h := range hosts {
			if dead[hi] {
				continue
			}
			if ti == failTask && (hi == failHost || hi == failHost2) {
				dead[hi] = true
				if unreachable {
					o.badf("fatal: [%s]: UNREACHABLE! => {\"changed\": false, \"msg\": \"Failed to connect to the host via ssh: ssh: connect to host %s port 22: Connection timed out\", \"unreachable\": true}", h, g.errl(g.ip(), "ip"))
					continue
				}
				switch g.r.IntN(3) {
				case 0:
					site := g.errl(fmt.Sprintf("/etc/%s/%s.ini:%d", role.name, role.name, g.site(role.name+".ini", 3, 90)), "site")
					o.badf("fatal: [%s]: FAILED! => {\"changed\": false, \"cmd\": [\"/usr/sbin/%s\", \"-v\", \"-R\", \"/etc/%s/%s.ini\"], \"delta\": \"0:00:00.0%04d\", \"end\": \"%s\", \"msg\": \"non-zero return code\", \"rc\": 1, \"start\": \"%s\", \"stderr\": \"%s FATAL syntax error in configuration (%s), stopping loading\", \"stderr_lines\": [\"%s FATAL syntax error in configuration (%s), stopping loading\"], \"stdout\": \"\", \"stdout_lines\": []}", h, role.name, role.name, role.name, g.between(1000, 9999), g.clock.Format("2006-01-02 15:04:05.000000"), g.clock.Format("2006-01-02 15:04:05.000000"), g.clock.Format("2006-01-02 15:04:05.000 MST"), site, g.clock.Format("2006-01-02 15:04:05.000 MST"), site)
				case 1:
					jid := g.errl(g.digits(12)+"."+g.digits(5), "id")
					o.badf("fatal: [%s]: FAILED! => {\"ansible_job_id\": \"%s\", \"changed\": false, \"finished\": 1, \"msg\": \"Unable to start service %s: Job for %s.service failed because the control process exited with error code.\\nSee \\\"systemctl status %s.service\\\" and \\\"journalctl -xeu %s.service\\\" for details.\\n\"}", h, jid, role.name, role.name, role.name, role.name)
				default:
					o.badf("fatal: [%s]: FAILED! => {\"cache_update_time\": %d, \"cache_updated\": false, \"changed\": false, \"msg\": \"Failed to update apt cache: E:The repository '%s stable Release' does not have a Release file.\"}", h, g.clock.Unix(), g.errl(fmt.Sprintf("https://apt.int.kilnworks.dev/%s/%s", g.chars(lower, 6), g.chars(lowAN, 8)), "url"))
				}
				continue
			}
			st := "ok"
			if ti > 0 && g.chance(0.2) {
				st = "changed"
			} else if ti > 0 && g.chance(0.1) {
				st = "skipping"
			}
			o.okf("%s: [%s]", st, h)
		}
		o.ok("")
	}
	if g.chance(0.5) {
		o.ok(star("RUNNING HANDLER [" + role.name + " : restart " + role.name + "]"))
		for hi, h := range hosts {
			if !dead[hi] {
				o.okf("changed: [%s]", h)
			}
		}
		o.ok("")
	}
	o.ok(star("PLAY RECAP"))
	for hi, h := range hosts {
		ok := len(tasks) - g.between(0, 3)
		if dead[hi] {
			if unreachable {
				o.badf("%-34s : ok=0    changed=0    unreachable=1    failed=0    skipped=0    rescued=0    ignored=0", h)
			} else {
				o.badf("%-34s : ok=%-4d changed=0    unreachable=0    failed=1    skipped=0    rescued=0    ignored=0", h, failTask)
			}
			continue
		}
		o.okf("%-34s : ok=%-4d changed=%-4d unreachable=0    failed=0    skipped=%-4d rescued=0    ignored=0", h, ok, g.between(0, 4), g.between(0, 3))
	}
	o.ok("")
	return o
}
