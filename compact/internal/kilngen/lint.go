package kilngen

import (
	"fmt"
	"strings"
)

// Linters of each ecosystem: swiftlint, hlint, slither, tflint and
// ansible-lint. A failing run records its sites (see failed) so the task
// can fix them.

var swiftlintErrors = []struct{ rule, name, msg, src string }{
	{"force_unwrapping", "Force Unwrapping Violation", "Force unwrapping should be avoided", "        let rate = rates[currency]!"},
	{"force_cast", "Force Cast Violation", "Force casts should be avoided", "        let money = value as! Money"},
	{"force_try", "Force Try Violation", "Force tries should be avoided", "        let entry = try! decoder.decode(LedgerEntry.self, from: data)"},
	{"cyclomatic_complexity", "Cyclomatic Complexity Violation", "Function should have complexity 10 or less; currently complexity is 14", "    public func apply(_ entry: LedgerEntry) throws -> Money {"},
	{"large_tuple", "Large Tuple Violation", "Tuples should have at most 2 members", "    func split(_ total: Money) -> (Money, Money, Money) {"},
}

var swiftlintWarnings = []struct{ rule, name, msg string }{
	{"line_length", "Line Length Violation", "Line should be 120 characters or less; currently it has 131 characters"},
	{"trailing_whitespace", "Trailing Whitespace Violation", "Lines should not have trailing whitespace"},
	{"identifier_name", "Identifier Name Violation", "Variable name 'id' should be between 3 and 40 characters long"},
	{"todo", "Todo Violation", "TODOs should be resolved (move to a streaming fold)"},
}

// swiftlint is swiftlint lint --strict of the package; failing, unit u
// has serious violations.
func (g *gen) swiftlint(u *swiftUnit) *out {
	o := &out{}
	g.fails = nil
	o.ok("Linting Swift files in current working directory")
	n := g.n(20, 45)
	for i := 0; i < n; i++ {
		v := swiftUnits[g.r.IntN(len(swiftUnits))]
		o.okf("Linting '%s' (%d/%d)", v.src, i+1, n)
	}
	serious := 0
	for i, k := 0, g.between(1, 4); i < k; i++ {
		w := swiftlintWarnings[g.r.IntN(len(swiftlintWarnings))]
		v := swiftUnits[g.r.IntN(len(swiftUnits))]
		o.okf("%s/%s:%d:%d: warning: %s: %s (%s)", g.home(), v.srcPath(), g.site(v.src, 20, 400), g.between(1, 90), w.name, w.msg, w.rule)
	}
	if u != nil {
		for i, k := 0, g.between(1, 2); i < k; i++ {
			e := swiftlintErrors[g.r.IntN(len(swiftlintErrors))]
			l := g.site(u.src, 30, max(40, g.file(u.srcPath()).len()-2))
			g.setLine(u.srcPath(), l, e.src)
			g.failed(l)
			o.badf("%s/%s/Sources/%s/%s:%d: error: %s: %s (%s)", g.home(), kitDir, u.module,
				g.errl(fmt.Sprintf("%s:%d", u.src, l), "site"), g.between(5, 40), e.name, e.msg, g.errl(e.rule, "code"))
			serious++
		}
	}
	total := serious + g.between(1, 4)
	line := fmt.Sprintf("Done linting! Found %d violations, %d serious in %d files.", total, serious, n)
	if serious > 0 {
		o.bad(line)
	} else {
		o.ok(line)
	}
	return o
}

// hlint is hlint of the service's sources; failing, unit u has hints.
func (g *gen) hlint(u *hsUnit) *out {
	o := &out{}
	g.fails = nil
	if u == nil {
		o.ok("No hints")
		return o
	}
	hints := []struct{ sev, what, found, perhaps string }{
		{"Warning", "Use foldl'", "foldl (+) 0 amounts", "foldl' (+) 0 amounts"},
		{"Warning", "Use fromMaybe", "maybe 0 entryAmount mEntry", "fromMaybe 0 (entryAmount <$> mEntry)"},
		{"Error", "Redundant bracket", "(applyFee gross) fee", "applyFee gross fee"},
		{"Warning", "Avoid partial function", "head entries", "listToMaybe entries"},
		{"Suggestion", "Use <$>", "fmt <- fmap toMoney rate", "fmt <- toMoney <$> rate"},
	}
	k := g.between(1, 3)
	for i := 0; i < k; i++ {
		h := hints[g.r.IntN(len(hints))]
		l := g.site(u.srcPath(), 30, max(40, g.file(u.srcPath()).len()-2))
		src := "  let total = " + h.found
		g.setLine(u.srcPath(), l, src)
		g.failed(l)
		c := g.between(3, 9)
		o.badf("%s: %s: %s", g.errl(fmt.Sprintf("%s:%d:%d-%d", u.rel(u.srcPath()), l, c, c+len(h.found)), "site"), h.sev, h.what)
		o.bad("Found:")
		o.bad("  " + h.found)
		o.bad("Perhaps:")
		o.bad("  " + h.perhaps)
		o.ok("")
	}
	o.badf("%d hint%s", k, plural(k))
	return o
}

var slitherDetectors = []struct{ id, text string }{
	{"unchecked-transfer", "ignores return value by stamp.transfer(msg.sender,amount)"},
	{"divide-before-multiply", "performs a multiplication on the result of a division"},
	{"reentrancy-no-eth", "Reentrancy in %s.%s(uint256,uint128): External calls: stamp.safeTransfer(msg.sender,amount) State variables written after the call(s): pending[msg.sender] -= amount"},
	{"uninitialized-local", "is a local variable never initialized"},
	{"incorrect-equality", "uses a dangerous strict equality: block.timestamp == closesAt[epoch]"},
}

// slither is slither of the contracts; failing, contract u has findings.
func (g *gen) slither(u *solUnit) *out {
	o := &out{}
	g.fails = nil
	o.okf("'forge clean' running (wd: %s/%s)", g.home(), solDir)
	o.okf("'forge config --json' running")
	o.okf("'forge build --build-info --skip */test/** */script/** --force' running (wd: %s/%s)", g.home(), solDir)
	o.ok("INFO:Detectors:")
	for i, n := 0, g.n(2, 6); i < n; i++ {
		v := solUnits[g.r.IntN(len(solUnits))]
		l := g.site(v.srcPath(), 20, 300)
		o.okf("%s.%s(uint256) (src/%s.sol#%d-%d) uses timestamp for comparisons", v.contract, camel("view", g.pick(nouns)), v.contract, l, l+g.between(3, 20))
		o.ok("\tDangerous comparisons:")
		o.okf("\t- block.timestamp < closesAt[epoch] (src/%s.sol#%d)", v.contract, g.site(v.srcPath(), l+1, l+12))
		o.ok("Reference: https://github.com/crytic/slither/wiki/Detector-Documentation#block-timestamp")
	}
	found := 0
	if u != nil {
		for i, k := 0, g.between(1, 2); i < k; i++ {
			d := slitherDetectors[g.r.IntN(len(slitherDetectors))]
			l := g.site(u.srcPath(), 30, max(40, g.file(u.srcPath()).len()-2))
			g.setLine(u.srcPath(), l, "        stamp.transfer(msg.sender, amount);")
			g.failed(l)
			text := d.text
			if strings.Contains(text, "%s") {
				text = fmt.Sprintf(text, u.contract, u.fn)
			}
			o.bad("INFO:Detectors:")
			o.badf("%s.%s(uint256,uint128) (%s) %s", u.contract, u.fn, g.errl(fmt.Sprintf("src/%s.sol#%d", u.contract, l), "site"), text)
			o.badf("Reference: https://github.com/crytic/slither/wiki/Detector-Documentation#%s", g.errl(d.id, "code"))
			found++
		}
	}
	o.okf("INFO:Slither:. analyzed (%d contracts with 94 detectors), %d result(s) found", g.between(12, 40), found+g.between(2, 6))
	return o
}

var tflintRules = []struct{ rule, msg, src string }{
	{"aws_db_instance_invalid_type", `"db.r6g.xlargee" is an invalid value as instance_class`, `  instance_class          = "db.r6g.xlargee"`},
	{"aws_elasticache_replication_group_invalid_node_type", `"cache.r7g.lage" is an invalid value as node_type`, `  node_type            = "cache.r7g.lage"`},
	{"terraform_unused_declarations", `variable "legacy_subnet_ids" is declared but not used`, `variable "legacy_subnet_ids" {`},
	{"aws_iam_role_policy_too_long_policy", "The policy document exceeds 10240 characters", "  policy = data.aws_iam_policy_document.deployer.json"},
}

// tflint is tflint of a module; failing, it reports issues in it.
func (g *gen) tflint(m tfModule, fail bool) *out {
	o := &out{}
	g.fails = nil
	if !fail {
		o.ok("")
		return o
	}
	k := g.between(1, 2)
	o.badf("%d issue(s) found:", k)
	o.ok("")
	for i := 0; i < k; i++ {
		r := tflintRules[g.r.IntN(len(tflintRules))]
		l := g.site(m.main(), 20, max(30, g.file(m.main()).len()-2))
		g.setLine(m.main(), l, r.src)
		g.failed(l)
		o.badf("Error: %s (%s)", r.msg, g.errl(r.rule, "code"))
		o.ok("")
		o.badf("  on %s:", g.errl(fmt.Sprintf("modules/%s/main.tf line %d", m.name, l), "site"))
		o.badf("  %d:%s", l, r.src)
		o.ok("")
		o.badf("Reference: https://github.com/terraform-linters/tflint-ruleset-aws/blob/v0.31.0/docs/rules/%s.md", r.rule)
		o.ok("")
	}
	return o
}

// ansibleLint is ansible-lint of a role; failing, its tasks break rules.
func (g *gen) ansibleLint(role ansRole, fail bool) *out {
	o := &out{}
	g.fails = nil
	tasks := fmt.Sprintf("%s/roles/%s/tasks/main.yml", ansDir, role.name)
	rules := []struct{ rule, msg, src string }{
		{"name[casing]", "All names should start with an uppercase letter.", "- name: render " + role.name + " config"},
		{"no-changed-when", "Commands should not change things if nothing needs doing.", "  ansible.builtin.command: " + role.name + " -R /etc/" + role.name + "/" + role.name + ".ini"},
		{"risky-file-permissions", "File permissions unset or incorrect.", "  ansible.builtin.copy:"},
		{"fqcn[action-core]", "Use FQCN for builtin module actions (systemd).", "  systemd:"},
		{"yaml[truthy]", "Truthy value should be one of [false, true]", "    enabled: yes"},
	}
	k := 0
	if fail {
		k = g.between(1, 3)
	}
	if k == 0 {
		o.ok("")
		o.okf("Passed: 0 failure(s), 0 warning(s) on %d files. Last profile that met the validation criteria was 'production'.", g.between(8, 30))
		return o
	}
	o.okf("WARNING  Listing %d violation(s) that are fatal", k)
	var used []string
	for i := 0; i < k; i++ {
		r := rules[g.r.IntN(len(rules))]
		used = append(used, r.rule)
		l := g.site(tasks, 5, max(10, g.file(tasks).len()-2))
		g.setLine(tasks, l, r.src)
		g.failed(l)
		o.badf("%s: %s", g.errl(r.rule, "code"), r.msg)
		o.badf("%s", g.errl(fmt.Sprintf("roles/%s/tasks/main.yml:%d", role.name, l), "site"))
		o.ok("")
	}
	o.ok("Read documentation for instructions on how to ignore specific rule violations.")
	o.ok("")
	o.ok("                  Rule Violation Summary")
	o.ok(" count tag                    profile    rule associated tags")
	for _, r := range used {
		o.badf("     1 %-22s basic      formatting", r)
	}
	o.ok("")
	o.badf("Failed: %d failure(s), 0 warning(s) on %d files. Last profile that met the validation criteria was 'min'. Rating: 2/5 star", k, g.between(8, 30))
	return o
}
