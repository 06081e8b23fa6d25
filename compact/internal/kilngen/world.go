package kilngen

import (
	"fmt"
	"path"
	"strings"
)

// world is what stays the same over a session: names of the estate.
type world struct {
	account   string // AWS account id
	region    string
	cluster   string
	rdsHost   string
	cacheHost string
	user      string // the developer's login
	branchNo  int
}

func newWorld(g *gen) *world {
	w := &world{
		account: g.digits(12),
		region:  g.pick([]string{"eu-west-1", "eu-central-1", "us-east-2", "eu-north-1"}),
		user:    g.pick([]string{"mara", "tobias", "ines", "kwame", "yuki", "dario"}),
	}
	w.cluster = "ember-" + g.pick([]string{"prod", "prod-a", "prod-eu"})
	w.rdsHost = fmt.Sprintf("ember-ledger-prod.%s.%s.rds.amazonaws.com", g.chars(lowAN, 12), w.region)
	w.cacheHost = fmt.Sprintf("ember-cache-prod.%s.ng.0001.%s.cache.amazonaws.com", g.chars(lowAN, 6), shortRegion(w.region))
	return w
}

func shortRegion(r string) string {
	p := strings.Split(r, "-")
	return p[0] + string(p[1][0]) + p[2]
}

// ---- units of each component ----

type swiftUnit struct{ module, src, test, typ, fn string }

var swiftUnits = []swiftUnit{
	{"Ledger", "Refund.swift", "RefundTests.swift", "RefundCalculator", "apply"},
	{"Ledger", "Money.swift", "MoneyTests.swift", "Money", "rounded"},
	{"Ledger", "Settlement.swift", "SettlementTests.swift", "SettlementBuilder", "build"},
	{"Checkout", "CartStore.swift", "CartStoreTests.swift", "CartStore", "apply"},
	{"Checkout", "TipSelector.swift", "TipSelectorTests.swift", "TipSelector", "suggestions"},
	{"Networking", "RetryPolicy.swift", "RetryPolicyTests.swift", "RetryPolicy", "delay"},
	{"Networking", "APIClient.swift", "APIClientTests.swift", "APIClient", "send"},
	{"Loyalty", "StampCard.swift", "StampCardTests.swift", "StampCard", "stamp"},
	{"Loyalty", "RewardsStore.swift", "RewardsStoreTests.swift", "RewardsStore", "redeem"},
}

const kitDir = "ios/Packages/EmberKit"

func (u swiftUnit) srcPath() string  { return kitDir + "/Sources/" + u.module + "/" + u.src }
func (u swiftUnit) testPath() string { return kitDir + "/Tests/" + u.module + "Tests/" + u.test }
func (u swiftUnit) class() string    { return strings.TrimSuffix(u.test, ".swift") }

type hsUnit struct{ module, fn string }

var hsUnits = []hsUnit{
	{"Ember.Ledger.Settle", "settleBatch"},
	{"Ember.Ledger.Fees", "applyFee"},
	{"Ember.Ledger.Payouts", "schedulePayouts"},
	{"Ember.Ledger.Refunds", "refundEntry"},
	{"Ember.Api.Handlers", "postBatch"},
	{"Ember.Ledger.Rates", "convertAt"},
}

const hsDir = "services/ember-ledger"

func (u hsUnit) srcPath() string {
	return hsDir + "/src/" + strings.ReplaceAll(u.module, ".", "/") + ".hs"
}
func (u hsUnit) specPath() string {
	return hsDir + "/test/" + strings.ReplaceAll(u.module, ".", "/") + "Spec.hs"
}
func (u hsUnit) rel(p string) string { return strings.TrimPrefix(p, hsDir+"/") }

type solUnit struct{ contract, fn string }

var solUnits = []solUnit{
	{"RewardVault", "claim"},
	{"PayoutSplitter", "distribute"},
	{"StampToken", "mintBatch"},
	{"EpochClock", "close"},
	{"RoasterRegistry", "register"},
}

const solDir = "contracts"

func (u solUnit) srcPath() string  { return solDir + "/src/" + u.contract + ".sol" }
func (u solUnit) testPath() string { return solDir + "/test/" + u.contract + ".t.sol" }

type tfModule struct{ name, rtype, rname string }

var tfModules = []tfModule{
	{"rds", "aws_db_instance", "ledger"},
	{"elasticache", "aws_elasticache_replication_group", "cache"},
	{"eks_nodes", "aws_eks_node_group", "general"},
	{"s3_exports", "aws_s3_bucket", "exports"},
	{"iam_ci", "aws_iam_role", "deployer"},
	{"network", "aws_security_group", "ledger"},
}

const tfDir = "infra/terraform"

func (m tfModule) main() string { return tfDir + "/modules/" + m.name + "/main.tf" }

type ansRole struct{ name, group string }

var ansRoles = []ansRole{
	{"pgbouncer", "pgbouncer"},
	{"node_exporter", "all"},
	{"bastion", "bastion"},
	{"vector", "logship"},
}

const ansDir = "infra/ansible"

type mlUnit struct{ module, fn string }

var mlUnits = []mlUnit{
	{"rules", "load"},
	{"tier", "resolve"},
	{"window", "overlaps"},
	{"emit", "to_json"},
	{"price", "apply_discount"},
}

const mlDir = "tools/glaze"

func (u mlUnit) srcPath() string { return mlDir + "/lib/" + u.module + ".ml" }

var charts = []string{"ember-ledger", "ember-gateway", "ember-worker"}

const helmDir = "deploy/helm"

// ---- file contents ----

// synth makes up the content of a file of the repository from its path.
func (g *gen) synth(f *file) []string {
	p := f.path
	base := path.Base(p)
	switch {
	case strings.HasSuffix(p, "Tests.swift"):
		return g.swiftTestFile(f)
	case strings.HasSuffix(p, ".swift"):
		return g.swiftFile(f)
	case strings.HasSuffix(p, "Spec.hs"):
		return g.hspecFile(f)
	case strings.HasSuffix(p, ".hs"):
		return g.haskellFile(f)
	case strings.HasSuffix(p, ".t.sol"):
		return g.forgeTestFile(f)
	case strings.HasSuffix(p, ".sol"):
		return g.solidityFile(f)
	case strings.HasSuffix(p, ".tf"):
		return g.terraformFile(f)
	case strings.HasSuffix(p, ".ml"):
		return g.ocamlFile(f)
	case base == "values-prod.yaml" || base == "values.yaml":
		return g.helmValues(f)
	case strings.Contains(p, "/templates/") && strings.HasSuffix(p, ".yaml"):
		return g.helmTemplate(f)
	case strings.HasPrefix(p, ansDir):
		return g.ansibleFile(f)
	case strings.HasSuffix(p, ".sql"):
		return g.sqlFile(f)
	case base == "Fastfile":
		return g.fastfile(f)
	}
	return g.plainFile(f)
}
