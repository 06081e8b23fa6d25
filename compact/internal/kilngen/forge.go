package kilngen

import (
	"fmt"
	"strings"
)

// The reward contracts: forge build, forge test with traces, anvil, cast.

var solcErrors = []struct{ code, msg, src string }{
	{"9574", "Type uint128 is not implicitly convertible to expected type uint96.", "        uint96 owed = pending[msg.sender];"},
	{"7576", "Undeclared identifier. Did you mean \"closesAt\"?", "        if (block.timestamp < closeAt[epoch]) revert NotClosed(epoch);"},
	{"6160", "Wrong argument count for function call: 2 arguments given but expected 3.", "        _distribute(epoch, shares);"},
	{"9582", "Member \"safeTransferFrom\" not found or not visible after argument-dependent lookup in contract IERC20.", "        stamp.safeTransferFrom(msg.sender, address(this), amount);"},
	{"4937", "No matching declaration found after argument-dependent lookup.", "        emit Claimed(msg.sender, amount);"},
	{"2271", "Built-in binary operator * cannot be applied to types uint128 and int256.", "        uint256 share = pending[msg.sender] * delta;"},
}

var solcWarnings = []struct{ code, msg, src string }{
	{"2072", "Unused local variable.", "        uint256 before = stamp.balanceOf(address(this));"},
	{"5667", "Unused function parameter. Remove or comment out the variable name to silence this warning.", "    function close(uint256 epoch, bytes calldata proof) external onlyOwner {"},
	{"2018", "Function state mutability can be restricted to view", "    function pendingOf(address roaster) public returns (uint256) {"},
}

func (g *gen) forgeCompileHeader(o *out, files int) {
	o.ok("[⠊] Compiling...")
	o.okf("[⠒] Compiling %d files with Solc 0.8.24", files)
	o.okf("[⠢] Solc 0.8.24 finished in %d.%02ds", g.between(1, 9), g.between(0, 99))
}

// forgeBuild is `forge build`; fail is the contract that does not compile.
func (g *gen) forgeBuild(fail *solUnit) *out {
	o := &out{}
	g.fails = nil
	g.forgeCompileHeader(o, g.between(8, 60))
	if fail == nil {
		o.ok("Compiler run successful with warnings:")
	} else {
		o.bad("Error: Compiler run failed:")
	}
	for i, n := 0, g.n(1, 4); i < n; i++ {
		w := solcWarnings[g.r.IntN(len(solcWarnings))]
		u := solUnits[g.r.IntN(len(solUnits))]
		l := g.site(u.srcPath(), 20, 300)
		o.okf("Warning (%s): %s", w.code, w.msg)
		o.okf("  --> src/%s.sol:%d:%d:", u.contract, l, 9)
		o.ok("   |")
		o.okf("%d | %s", l, w.src)
		o.okf("   | %s%s", strings.Repeat(" ", 8), strings.Repeat("^", min(40, len(strings.TrimSpace(w.src)))))
		o.ok("")
	}
	for k := 0; fail != nil && (k == 0 || (k == 1 && g.chance(0.55))); k++ {
		e := solcErrors[g.r.IntN(len(solcErrors))]
		l := g.site(fail.srcPath(), 40, max(50, g.file(fail.srcPath()).len()-2))
		g.setLine(fail.srcPath(), l, e.src)
		g.failed(l)
		o.badf("%s: %s", g.errl("Error ("+e.code+")", "code"), e.msg)
		o.badf("   --> %s:9:", g.errl(fmt.Sprintf("src/%s.sol:%d", fail.contract, l), "site"))
		o.bad("    |")
		o.badf("%d | %s", l, e.src)
		o.badf("    | %s%s", strings.Repeat(" ", 8), strings.Repeat("^", len(strings.TrimSpace(e.src))))
		o.ok("")
	}
	return o
}

// forgeTestRun is `forge test -vvv`; fail is the contract whose suite has a
// failing test (nil when all pass).
func (g *gen) forgeTestRun(fail *solUnit, only *solUnit) *out {
	o := &out{}
	if g.chance(0.5) {
		g.forgeCompileHeader(o, g.between(2, 12))
		o.ok("Compiler run successful!")
	} else {
		o.ok("[⠊] Compiling...")
		o.ok("No files changed, compilation skipped")
	}
	o.ok("")
	passed, failed, suites := 0, 0, 0
	type fl struct{ head, suite string }
	var fls []fl
	for _, u := range solUnits {
		if only != nil && u != *only {
			continue
		}
		suites++
		f := g.file(u.testPath())
		o.okf("Ran %d tests for test/%s.t.sol:%sTest", len(f.tests)+b2i(fail != nil && u == *fail), u.contract, u.contract)
		failPos, second := -1, -1
		if fail != nil && u == *fail {
			failPos = g.r.IntN(len(f.tests))
			if g.chance(0.45) {
				second = g.r.IntN(len(f.tests))
			}
		}
		for j, t := range f.tests {
			if j == second && second != failPos {
				failed++
				head := g.forgeFailure(o, u)
				fls = append(fls, fl{head, u.contract})
			}
			if j == failPos {
				failed++
				head := g.forgeFailure(o, u)
				fls = append(fls, fl{head, u.contract})
				g.hide(u.testPath())
			}
			passed++
			if strings.HasPrefix(t, "testFuzz_") {
				o.okf("[PASS] %s(uint96) (runs: 256, μ: %d, ~: %d)", t, g.between(30000, 200000), g.between(30000, 200000))
			} else {
				o.okf("[PASS] %s() (gas: %d)", t, g.between(20000, 400000))
			}
		}
		st := "ok"
		if failPos >= 0 {
			st = "FAILED"
		}
		o.okf("Suite result: %s. %d passed; %d failed; 0 skipped; finished in %d.%02dms (%d.%02dms CPU time)", st, len(f.tests), b2i(failPos >= 0)+b2i(second >= 0 && second != failPos), g.between(1, 90), g.between(0, 99), g.between(1, 200), g.between(0, 99))
		o.ok("")
	}
	o.okf("Ran %d test suites in %d.%02dms (%d.%02dms CPU time): %d tests passed, %d failed, 0 skipped (%d total tests)", suites, g.between(30, 400), g.between(0, 99), g.between(30, 400), g.between(0, 99), passed, failed, passed+failed)
	if failed > 0 {
		o.ok("")
		o.bad("Failing tests:")
		o.badf("Encountered %d failing test%s in test/%s.t.sol:%sTest", len(fls), plural(len(fls)), fls[0].suite, fls[0].suite)
		for _, f := range fls {
			o.bad(f.head)
		}
		o.ok("")
		o.badf("Encountered a total of %d failing tests, %d tests succeeded", failed, passed)
	}
	if g.chance(0.5) {
		o.ok("")
		o.ok("╭----------------------+--------+--------+---------╮")
		o.ok("| Test Suite           | Passed | Failed | Skipped |")
		o.ok("+==================================================+")
		for _, u := range solUnits {
			if only != nil && u != *only {
				continue
			}
			f := g.file(u.testPath())
			nf := 0
			if fail != nil && u == *fail {
				nf = failed
			}
			o.okf("| %-20s | %-6d | %-6d | 0       |", u.contract+"Test", len(f.tests), nf)
			o.ok("|----------------------+--------+--------+---------|")
		}
		o.ok("╰----------------------+--------+--------+---------╯")
	}
	return o
}

// forgeFailure writes a failing test with its trace and returns its
// [FAIL] line.
func (g *gen) forgeFailure(o *out, u solUnit) string {
	name := g.errl(g.forgeTest(false), "test")
	gas := g.between(20000, 90000)
	var head, revert string
	switch g.r.IntN(4) {
	case 3:
		cd := g.errl("0x"+g.hex(8)+strings.Repeat("0", 40)+g.hex(24), "hash")
		revert = "panic: arithmetic underflow or overflow (0x11)"
		head = fmt.Sprintf("[FAIL: panic: arithmetic underflow or overflow (0x11); counterexample: calldata=%s args=[%d]] %s() (gas: %d)", cd, g.between(1, 1e9), name, gas)
	case 0:
		e := g.errl(g.solError(), "code")
		a, b := g.between(0, 40), g.between(1700000000, 1760000000)
		revert = fmt.Sprintf("%s(%d, %d [%s])", e, a, b, sci(float64(b)))
		head = fmt.Sprintf("[FAIL: %s(%d, %d)] %s() (gas: %d)", e, a, b, name, gas)
	case 1:
		revert = "panic: arithmetic underflow or overflow (0x11)"
		head = fmt.Sprintf("[FAIL: panic: arithmetic underflow or overflow (0x11)] %s() (gas: %d)", name, gas)
	default:
		x, y := g.between(1, 1e6), g.between(1, 1e6)
		revert = fmt.Sprintf("assertion failed: %d != %d", x, y)
		head = fmt.Sprintf("[FAIL: assertion failed: %d != %d] %s() (gas: %d)", x, y, name, gas)
	}
	o.bad(head)
	o.bad("Traces:")
	o.badf("  [%d] %sTest::%s()", gas, u.contract, name)
	roaster := g.errl(g.address(), "hash")
	w := 1718000000 + g.between(0, 999999)
	o.badf("    ├─ [0] VM::warp(%d [%s])", w, sci(float64(w)))
	o.bad("    │   └─ ← [Return] ")
	o.badf("    ├─ [0] VM::prank(roaster: [%s])", roaster)
	o.bad("    │   └─ ← [Return] ")
	for i, n := 0, g.between(1, 3); i < n; i++ {
		o.badf("    ├─ [%d] MockERC20::balanceOf(%sTest: [0x7FA9385bE102ac3EAc297483Dd6233D62b3e1496]) [staticcall]", g.between(2000, 3000), u.contract)
		o.badf("    │   └─ ← [Return] %s [%s]", fmt.Sprint(g.between(1, 1e9))+"000000000", sci(float64(g.between(1, 1e9))*1e9))
	}
	o.badf("    ├─ [%d] %s::balanceOf(%s) [staticcall]", g.between(2000, 3000), g.errl(g.address(), "hash"), roaster)
	o.bad("    │   └─ ← [Return] 0")
	o.badf("    ├─ [%d] %s::%s(%d)", gas-g.between(2000, 9000), u.contract, u.fn, g.between(0, 12))
	o.badf("    │   └─ ← [Revert] %s", revert)
	o.badf("    └─ ← [Revert] %s", revert)
	o.ok("")
	return head
}

// sci writes x the way forge annotates big numbers: 1.718e9.
func sci(x float64) string {
	s := fmt.Sprintf("%.3e", x)
	s = strings.Replace(s, "e+0", "e", 1)
	return strings.Replace(s, "e+", "e", 1)
}

var anvilAccounts = []string{"0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", "0x90F79bf6EB2c4f870365E785982E1f101E93b906"}

// forgeScript is `forge script script/Deploy.s.sol --broadcast` against
// the local anvil: transactions, receipts and addresses.
func (g *gen) forgeScript(ok bool) *out {
	o := &out{}
	o.ok("[⠊] Compiling...")
	o.ok("No files changed, compilation skipped")
	o.ok("Script ran successfully.")
	o.ok("")
	o.ok("== Logs ==")
	var addrs []string
	for _, u := range solUnits {
		a := g.address()
		addrs = append(addrs, a)
		o.okf("  %s deployed at %s", u.contract, g.passing(ok, a, "hash"))
	}
	o.ok("")
	o.ok("## Setting up 1 EVM.")
	o.ok("")
	o.ok("==========================")
	o.ok("")
	o.ok("Chain 31337")
	o.ok("")
	o.okf("Estimated gas price: %d.%09d gwei", g.between(1, 3), g.between(0, 999999999))
	o.okf("Estimated total gas used for script: %d", g.between(3000000, 9000000))
	o.okf("Estimated amount required: 0.%018d ETH", g.between(1, 99999999))
	o.ok("")
	o.ok("==========================")
	o.ok("")
	if !ok {
		o.bad("Error: Failed to send transaction")
		o.bad("")
		o.badf("Context:")
		o.badf("- server returned an error response: error code -32003: nonce too low: next nonce %d, tx nonce %d", g.between(5, 40), g.between(0, 4))
		return o
	}
	for i, u := range solUnits {
		o.ok("##### anvil-hardhat")
		o.okf("✅  [Success] Hash: %s", g.passing(true, g.txHash(), "hash"))
		o.okf("Contract Address: %s", addrs[i])
		o.okf("Block: %d", i+g.between(1, 3))
		o.okf("Paid: 0.%015d ETH (%d gas * %d.%09d gwei)", g.between(1, 999999999), g.between(300000, 3000000), g.between(1, 3), g.between(0, 999999999))
		_ = u
		o.ok("")
	}
	o.ok("✅ Sequence #1 on anvil-hardhat | Total Paid: 0.0189 ETH (6301822 gas * avg 3.000000001 gwei)")
	o.ok("")
	o.ok("==========================")
	o.ok("")
	o.ok("ONCHAIN EXECUTION COMPLETE & SUCCESSFUL.")
	o.ok("")
	o.okf("Transactions saved to: %s/%s/broadcast/Deploy.s.sol/31337/run-latest.json", g.home(), solDir)
	o.ok("")
	o.okf("Sensitive values saved to: %s/%s/cache/Deploy.s.sol/31337/run-latest.json", g.home(), solDir)
	return o
}

// castSend is a `cast send` receipt, or its revert.
func (g *gen) castSend(ok bool) *out {
	o := &out{}
	if !ok {
		sel := g.hex(8)
		o.bad("Error: ")
		o.badf("server returned an error response: error code 3: execution reverted: custom error 0x%s: %s, data: \"0x%s%s\"", sel, g.errl("0x"+g.hex(64), "hash"), sel, g.hex(64))
		return o
	}
	o.ok("")
	o.okf("blockHash            %s", g.passing(true, g.txHash(), "hash"))
	o.okf("blockNumber          %d", g.between(10, 400))
	o.ok("contractAddress      ")
	o.okf("cumulativeGasUsed    %d", g.between(30000, 300000))
	o.okf("effectiveGasPrice    %d", g.between(1000000000, 3000000000))
	o.okf("from                 %s", anvilAccounts[0])
	o.okf("gasUsed              %d", g.between(30000, 300000))
	o.okf("logs                 [{\"address\":\"%s\",\"topics\":[\"0x%s\",\"0x000000000000000000000000%s\"],\"data\":\"0x%064x\",\"blockHash\":\"0x%s\",\"blockNumber\":\"0x%x\",\"transactionHash\":\"0x%s\",\"transactionIndex\":\"0x0\",\"logIndex\":\"0x0\",\"removed\":false}]", g.address(), g.hex(64), g.chars(hexd, 40), g.between(1, 1e9), g.hex(64), g.between(10, 400), g.hex(64))
	o.okf("logsBloom            0x%s", strings.Repeat("0", 64)+g.chars(hexd, 64)+strings.Repeat("0", 384))
	o.ok("root                 ")
	o.ok("status               1 (success)")
	o.okf("transactionHash      %s", g.passing(true, g.txHash(), "hash"))
	o.ok("transactionIndex     0")
	o.ok("type                 2")
	o.okf("blobGasPrice         ")
	o.okf("blobGasUsed          ")
	o.okf("to                   %s", g.address())
	return o
}

// anvilBanner is the start of a local anvil node.
func (g *gen) anvilBanner() *out {
	o := &out{}
	o.ok("")
	o.ok("                             _   _")
	o.ok("                            (_) | |")
	o.ok("      __ _   _ __   __   __  _  | |")
	o.ok("     / _` | | '_ \\  \\ \\ / / | | | |")
	o.ok("    | (_| | | | | |  \\ V /  | | | |")
	o.ok("     \\__,_| |_| |_|   \\_/   |_| |_|")
	o.ok("")
	o.ok("    0.2.0 (c4a984f 2024-11-28T00:22:32.183950000Z)")
	o.ok("    https://github.com/foundry-rs/foundry")
	o.ok("")
	o.ok("Available Accounts")
	o.ok("==================")
	for i, a := range anvilAccounts {
		o.okf("(%d) %s (10000.000000000000000000 ETH)", i, a)
	}
	o.ok("")
	o.ok("Wallet")
	o.ok("==================")
	o.ok("Mnemonic:          test test test test test test test test test test test junk")
	o.ok("Derivation path:   m/44'/60'/0'/0/")
	o.ok("")
	o.ok("Chain ID")
	o.ok("==================")
	o.ok("")
	o.ok("31337")
	o.ok("")
	o.ok("Base Fee")
	o.ok("==================")
	o.ok("")
	o.ok("1000000000")
	o.ok("")
	o.ok("Gas Limit")
	o.ok("==================")
	o.ok("")
	o.ok("30000000")
	o.ok("")
	o.ok("Genesis Timestamp")
	o.ok("==================")
	o.ok("")
	o.okf("%d", g.clock.Unix())
	o.ok("")
	o.ok("Listening on 127.0.0.1:8545")
	return o
}
