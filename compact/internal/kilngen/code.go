package kilngen

import (
	"fmt"
	"path"
	"strings"
)

// This file makes up source files of each language: plausible code of
// the product, long enough for reads to weigh what real reads weigh.

var swiftTypes = []string{"Money", "LedgerEntry", "CurrencyCode", "Decimal", "Int", "Date", "RoasterID", "TipRate", "StampCount", "[LedgerEntry]", "Receipt"}
var swiftProps = []string{"currency", "feeRate", "minorUnits", "roasterID", "createdAt", "scale", "entries", "cap", "grace", "clock", "retries", "session"}
var swiftErrs = []string{"nonPositiveAmount", "currencyMismatch", "capExceeded", "staleRate", "emptyCart", "invalidTip", "expiredVoucher", "offline"}

func (g *gen) swiftFile(f *file) []string {
	base := path.Base(f.path)
	typ := strings.TrimSuffix(base, ".swift")
	for _, u := range swiftUnits {
		if u.src == base {
			typ = u.typ
		}
	}
	mod := path.Base(path.Dir(f.path))
	L := []string{
		"//",
		"//  " + base,
		"//  EmberKit",
		"//",
		"//  Copyright © 2023 Kilnworks Ltd. All rights reserved.",
		"//",
		"",
		"import Foundation",
		"import OSLog",
	}
	if g.chance(0.5) {
		L = append(L, "import Combine")
	}
	L = append(L, "",
		"/// "+g.pick([]string{"Computes", "Holds", "Coordinates", "Applies"})+" the "+g.pick(nouns)+" rules of the "+strings.ToLower(mod)+" module.",
		"public struct "+typ+": Sendable {",
		"    private static let log = Logger(subsystem: \"com.kilnworks.ember\", category: \""+mod+"\")")
	if g.chance(0.6) {
		L = append(L, fmt.Sprintf("    static let sandboxMerchant = %q", f.id(g.fresh(func() string { return "mrc_" + g.chars(alnum, 14) }), "id")))
	}
	props := g.r.Perm(len(swiftProps))[:g.between(3, 6)]
	for _, i := range props {
		L = append(L, fmt.Sprintf("    public let %s: %s", swiftProps[i], g.pick(swiftTypes)))
	}
	L = append(L, "")
	var init []string
	for _, i := range props {
		init = append(init, fmt.Sprintf("%s: %s", swiftProps[i], "_"))
	}
	L = append(L, "    public init("+strings.Join(init, ", ")+") {")
	for _, i := range props {
		L = append(L, fmt.Sprintf("        self.%s = %s", swiftProps[i], swiftProps[i]))
	}
	L = append(L, "    }")
	want := g.n(70, 150)
	for len(L) < want {
		L = append(L, "")
		L = append(L, g.swiftFunc()...)
	}
	L = append(L, "}", "")
	L = append(L, "extension "+typ+": CustomStringConvertible {",
		"    public var description: String {",
		"        \""+typ+"(\\(currency), scale: \\(scale))\"",
		"    }",
		"}")
	return L
}

func (g *gen) swiftFunc() []string {
	fn := camel(strings.ToLower(g.pick(verbs)), g.pick(nouns))
	arg := g.pick(nouns)
	L := []string{
		"    /// " + title(strings.ToLower(g.pick(verbs))) + " the " + arg + " and returns the result in minor units.",
		fmt.Sprintf("    public func %s(_ %s: %s) throws -> %s {", fn, arg, g.pick(swiftTypes), g.pick(swiftTypes)),
	}
	for i, n := 0, g.between(3, 8); i < n; i++ {
		v := camel(g.pick(nouns), g.pick([]string{"Total", "Scaled", "Net", "Gross", "Delta", "Rounded"}))
		switch g.r.IntN(7) {
		case 0:
			L = append(L, fmt.Sprintf("        guard %s.%s > .zero else {", arg, g.pick(swiftProps)),
				fmt.Sprintf("            throw LedgerError.%s", g.pick(swiftErrs)), "        }")
		case 1:
			L = append(L, fmt.Sprintf("        let %s = (%s.minorUnits * %d).rounded(scale: %d, mode: .%s)", v, arg, g.between(2, 120), g.between(0, 4), g.pick([]string{"bankers", "down", "up", "halfUp"})))
		case 2:
			L = append(L, fmt.Sprintf("        if %s.currency != currency {", arg),
				fmt.Sprintf("            Self.log.error(\"%s currency mismatch: \\(%s.currency, privacy: .public)\")", arg, arg),
				"            throw LedgerError.currencyMismatch", "        }")
		case 3:
			L = append(L, fmt.Sprintf("        for entry in entries where entry.kind == .%s {", g.pick(nouns)),
				fmt.Sprintf("            %s += entry.amount.minorUnits", g.pick(nouns)+"Total"), "        }")
		case 4:
			L = append(L, fmt.Sprintf("        let %s = try await session.%s(for: %s.id)", v, camel("fetch", g.pick(nouns)), arg))
		case 5:
			L = append(L, fmt.Sprintf("        switch %s.kind {", arg),
				fmt.Sprintf("        case .%s: return .zero", g.pick(nouns)),
				fmt.Sprintf("        case .%s, .%s: break", g.pick(nouns), g.pick(nouns)),
				"        @unknown default: break", "        }")
		default:
			L = append(L, fmt.Sprintf("        Self.log.debug(\"%s %s=\\(%s, privacy: .private)\")", fn, v, arg))
		}
	}
	L = append(L, fmt.Sprintf("        return Money(minorUnits: %s.minorUnits, currency: currency)", arg), "    }")
	return L
}

func (g *gen) swiftTestFile(f *file) []string {
	base := path.Base(f.path)
	class := strings.TrimSuffix(base, ".swift")
	mod := strings.TrimSuffix(path.Base(path.Dir(f.path)), "Tests")
	typ := strings.TrimSuffix(class, "Tests")
	for _, u := range swiftUnits {
		if u.test == base {
			typ = u.typ
		}
	}
	L := []string{
		"import XCTest",
		"@testable import " + mod,
		"",
		"final class " + class + ": XCTestCase {",
		"    private var sut: " + typ + "!",
		"",
		"    override func setUp() {",
		"        super.setUp()",
		fmt.Sprintf("        sut = %s.fixture(currency: .%s)", typ, g.pick([]string{"eur", "usd", "gbp", "sek"})),
		"    }",
	}
	want := g.n(50, 110)
	for len(L) < want || len(f.tests) < 6 {
		t := g.swiftTest()
		f.tests = append(f.tests, t)
		L = append(L, "", "    func "+t+"() throws {")
		for i, n := 0, g.between(2, 6); i < n; i++ {
			switch g.r.IntN(4) {
			case 0:
				L = append(L, fmt.Sprintf("        let entry = LedgerEntry.fixture(amount: %d_%02d, currency: .%s)", g.between(0, 99), g.between(0, 99), g.pick([]string{"eur", "usd", "gbp"})))
			case 1:
				L = append(L, fmt.Sprintf("        XCTAssertEqual(try sut.%s(entry).minorUnits, %d)", camel(strings.ToLower(g.pick(verbs)), g.pick(nouns)), g.between(0, 9999)))
			case 2:
				L = append(L, fmt.Sprintf("        XCTAssertThrowsError(try sut.%s(.empty)) { error in", camel(strings.ToLower(g.pick(verbs)), g.pick(nouns))),
					fmt.Sprintf("            XCTAssertEqual(error as? LedgerError, .%s)", g.pick(swiftErrs)), "        }")
			default:
				L = append(L, fmt.Sprintf("        XCTAssertTrue(sut.%s.isEmpty)", g.pick(swiftProps)))
			}
		}
		L = append(L, "    }")
	}
	L = append(L, "}")
	return L
}

var hsTypes = []string{"Money", "Currency", "[Entry]", "Batch", "FeeBps", "RoasterId", "UTCTime", "Either SettleError Batch", "Maybe Payout", "Map RoasterId Money", "Text"}

func (g *gen) haskellFile(f *file) []string {
	mod := strings.TrimSuffix(strings.TrimPrefix(f.path, hsDir+"/src/"), ".hs")
	mod = strings.ReplaceAll(mod, "/", ".")
	var fns []string
	for i, n := 0, g.between(4, 7); i < n; i++ {
		fns = append(fns, camel(strings.ToLower(g.pick(verbs)), g.pick(nouns)))
	}
	for _, u := range hsUnits {
		if u.module == mod {
			fns[0] = u.fn
		}
	}
	L := []string{
		"{-# LANGUAGE DerivingStrategies #-}",
		"{-# LANGUAGE OverloadedStrings  #-}",
		"{-# LANGUAGE RecordWildCards    #-}",
		"-- |",
		"-- Module      : " + mod,
		"-- Description : " + title(g.pick(nouns)) + " handling for the ledger.",
		"-- Maintainer  : ledger-team@kilnworks.dev",
		"module " + mod,
	}
	for i, fn := range fns {
		sep := "  , "
		if i == 0 {
			sep = "  ( "
		}
		L = append(L, sep+fn)
	}
	L = append(L, "  ) where", "",
		"import           Control.Monad        (unless, when)",
		"import           Control.Monad.Except (MonadError, throwError)",
		"import qualified Data.Map.Strict      as Map",
		"import           Data.Text            (Text)",
		"import qualified Data.Text            as T",
		"import           Data.Time            (UTCTime, addUTCTime)",
		"import           Ember.Ledger.Types",
		"")
	if g.chance(0.5) {
		u := f.id(g.fresh(func() string {
			return fmt.Sprintf("https://rates.%s.kilnworks.dev/v%d/%s", g.pick([]string{"int", "stg", "ops"}), g.between(1, 4), g.chars(lower, 6))
		}), "url")
		L = append(L, "defaultEndpoint :: Text", fmt.Sprintf("defaultEndpoint = %q", u), "")
	}
	want := g.n(80, 170)
	for len(L) < want {
		fn := fns[g.r.IntN(len(fns))]
		L = append(L, "-- | "+title(strings.ToLower(g.pick(verbs)))+" the "+g.pick(nouns)+" "+g.pick(phrases)+".",
			fmt.Sprintf("%s :: MonadError SettleError m => %s -> %s -> m (%s)", fn, g.pick(hsTypes), g.pick(hsTypes), g.pick(hsTypes)),
			fn+" cur entries = do")
		for i, n := 0, g.between(3, 8); i < n; i++ {
			switch g.r.IntN(6) {
			case 0:
				L = append(L, "  when (null entries) $ throwError EmptyBatch")
			case 1:
				L = append(L, fmt.Sprintf("  let %s = sum (map entryAmount entries)", camel(g.pick(nouns), "gross")),
					fmt.Sprintf("      %s  = applyFee %s (FeeBps %d)", camel(g.pick(nouns), "fees"), camel(g.pick(nouns), "gross"), g.between(10, 400)))
			case 2:
				L = append(L, fmt.Sprintf("  unless (all ((== cur) . entryCurrency) entries) $"),
					"    throwError (MixedCurrency cur (entryCurrency (head entries)))")
			case 3:
				L = append(L, fmt.Sprintf("  let byRoaster = Map.fromListWith (<>) [(entryRoaster e, entryAmount e) | e <- entries, entryKind e /= %s]", title(g.pick(nouns))))
			case 4:
				L = append(L, fmt.Sprintf("  case lookupRate cur %s of", g.pick(nouns)),
					"    Nothing -> throwError (MissingRate cur)",
					fmt.Sprintf("    Just r  -> pure (convertAt r %s)", g.pick(nouns)))
			default:
				L = append(L, fmt.Sprintf("  -- %s", g.pick([]string{"TODO(ledger): move to a streaming fold once batches exceed 50k entries", "fees are netted before rounding, see LEDG runbook", "entries arrive ordered by createdAt"})))
			}
		}
		L = append(L, fmt.Sprintf("  pure Batch { batchCurrency = cur, batchEntries = entries, batchFees = %s }", g.pick([]string{"mempty", "fees", "Money 0"})), "")
	}
	return L
}

func (g *gen) hspecFile(f *file) []string {
	mod := strings.TrimSuffix(strings.TrimPrefix(f.path, hsDir+"/test/"), ".hs")
	mod = strings.ReplaceAll(mod, "/", ".")
	L := []string{
		"module " + mod + " (spec) where",
		"",
		"import           Test.Hspec",
		"import           Test.QuickCheck",
		"import           Ember.Ledger.Types",
		"import           " + strings.TrimSuffix(mod, "Spec"),
		"",
		"spec :: Spec",
		"spec = do",
	}
	want := g.n(50, 110)
	for len(L) < want || len(f.tests) < 8 {
		L = append(L, fmt.Sprintf("  describe %q $ do", camel(strings.ToLower(g.pick(verbs)), g.pick(nouns))))
		for i, n := 0, g.between(2, 5); i < n; i++ {
			t := g.hspecItem()
			f.tests = append(f.tests, t)
			L = append(L, fmt.Sprintf("    it %q $ do", t))
			switch g.r.IntN(3) {
			case 0:
				L = append(L, fmt.Sprintf("      settleBatch EUR [entry EUR %d, entry USD %d] `shouldBe` Left (MixedCurrency EUR USD)", g.between(1, 999), g.between(1, 999)))
			case 1:
				L = append(L, fmt.Sprintf("      applyFee (Money %d) (FeeBps %d) `shouldBe` Money %d", g.between(100, 9999), g.between(10, 300), g.between(1, 300)))
			default:
				L = append(L, "      property $ \\(Positive n) ->", fmt.Sprintf("        netOf (splitEvenly n (Money %d)) === Money %d", g.between(100, 999), g.between(100, 999)))
			}
		}
		L = append(L, "")
	}
	return L
}

func (g *gen) solidityFile(f *file) []string {
	c := strings.TrimSuffix(path.Base(f.path), ".sol")
	L := []string{
		"// SPDX-License-Identifier: BUSL-1.1",
		"pragma solidity 0.8.24;",
		"",
		`import {IERC20} from "openzeppelin-contracts/contracts/token/ERC20/IERC20.sol";`,
		`import {SafeERC20} from "openzeppelin-contracts/contracts/token/ERC20/utils/SafeERC20.sol";`,
		`import {Ownable2Step, Ownable} from "openzeppelin-contracts/contracts/access/Ownable2Step.sol";`,
		`import {EpochMath} from "./libraries/EpochMath.sol";`,
		"",
		"/// @title " + c,
		"/// @notice " + title(g.pick(nouns)) + " accounting for roaster rewards, settled once per epoch.",
		"contract " + c + " is Ownable2Step {",
		"    using SafeERC20 for IERC20;",
		"",
	}
	for i, n := 0, g.between(2, 4); i < n; i++ {
		L = append(L, fmt.Sprintf("    error %s%s(uint256 %s, uint256 %s);", title(g.pick(nouns)), g.pick([]string{"Locked", "Paused", "Missing", "Invalid"}), g.pick(nouns), g.pick(nouns)))
	}
	L = append(L, "", "    event Claimed(address indexed roaster, uint256 indexed epoch, uint256 amount);",
		"    event Distributed(uint256 indexed epoch, uint256 total, uint256 recipients);", "",
		"    IERC20 public immutable stamp;",
		"    uint64 public constant EPOCH_LENGTH = 7 days;",
		"    mapping(address => uint128) public pending;",
		"    mapping(uint256 => uint64) public closesAt;", "")
	if g.chance(0.5) {
		L = append(L, fmt.Sprintf("    address public constant TREASURY = %s;", f.id(g.address(), "hash")), "")
	}
	want := g.n(80, 160)
	for len(L) < want {
		fn := camel(strings.ToLower(g.pick(verbs)), g.pick(nouns))
		L = append(L, "    /// @notice "+title(strings.ToLower(g.pick(verbs)))+" the "+g.pick(nouns)+" of the caller.",
			fmt.Sprintf("    function %s(uint256 epoch, uint128 amount) external returns (uint256 %s) {", fn, g.pick(nouns)))
		for i, n := 0, g.between(3, 7); i < n; i++ {
			switch g.r.IntN(5) {
			case 0:
				L = append(L, "        if (block.timestamp < closesAt[epoch]) revert EpochMath.NotClosed(epoch, closesAt[epoch]);")
			case 1:
				L = append(L, fmt.Sprintf("        uint128 owed = pending[msg.sender] * %d / 10_000;", g.between(1, 9999)))
			case 2:
				L = append(L, "        pending[msg.sender] -= amount;", "        stamp.safeTransfer(msg.sender, amount);")
			case 3:
				L = append(L, "        unchecked {", fmt.Sprintf("            for (uint256 i; i < %s.length; ++i) {", g.pick(nouns)+"s"), "                total += shares[i];", "            }", "        }")
			default:
				L = append(L, "        emit Claimed(msg.sender, epoch, amount);")
			}
		}
		L = append(L, "    }", "")
	}
	L = append(L, "}")
	return L
}

func (g *gen) forgeTestFile(f *file) []string {
	c := strings.TrimSuffix(path.Base(f.path), ".t.sol")
	L := []string{
		"// SPDX-License-Identifier: BUSL-1.1",
		"pragma solidity 0.8.24;",
		"",
		`import {Test, console2} from "forge-std/Test.sol";`,
		fmt.Sprintf(`import {%s} from "../src/%s.sol";`, c, c),
		`import {MockERC20} from "./mocks/MockERC20.sol";`,
		"",
		"contract " + c + "Test is Test {",
		"    " + c + " internal sut;",
		"    MockERC20 internal stamp;",
		"    address internal roaster = makeAddr(\"roaster\");",
		"",
		"    function setUp() public {",
		"        stamp = new MockERC20(\"Stamp\", \"STMP\", 18);",
		"        sut = new " + c + "(address(stamp), address(this));",
		"        vm.warp(1_700_000_000);",
		"    }",
	}
	want := g.n(50, 110)
	for len(L) < want || len(f.tests) < 8 {
		fuzz := g.chance(0.25)
		t := g.forgeTest(fuzz)
		f.tests = append(f.tests, t)
		if fuzz {
			L = append(L, "", fmt.Sprintf("    function %s(uint96 amount) public {", t), "        amount = uint96(bound(amount, 1, 1e24));")
		} else {
			L = append(L, "", fmt.Sprintf("    function %s() public {", t))
		}
		for i, n := 0, g.between(2, 5); i < n; i++ {
			switch g.r.IntN(4) {
			case 0:
				L = append(L, fmt.Sprintf("        vm.warp(block.timestamp + %d days);", g.between(1, 14)))
			case 1:
				L = append(L, "        vm.prank(roaster);", fmt.Sprintf("        sut.%s(%d, %d);", camel(strings.ToLower(g.pick(verbs)), g.pick(nouns)), g.between(0, 9), g.between(1, 1e6)))
			case 2:
				L = append(L, "        vm.expectRevert(abi.encodeWithSelector("+c+"."+title(g.pick(nouns))+"Locked.selector, 1, 0));")
			default:
				L = append(L, fmt.Sprintf("        assertEq(stamp.balanceOf(roaster), %d);", g.between(0, 1e6)))
			}
		}
		L = append(L, "    }")
	}
	L = append(L, "}")
	return L
}

func (g *gen) terraformFile(f *file) []string {
	base := path.Base(f.path)
	mod := path.Base(path.Dir(f.path))
	var L []string
	switch base {
	case "variables.tf":
		for len(L) < g.n(40, 90) {
			v := g.pick(nouns) + "_" + g.pick([]string{"size", "count", "class", "retention_days", "cidr", "name", "enabled"})
			L = append(L, fmt.Sprintf("variable %q {", v),
				fmt.Sprintf("  description = %q", "The "+strings.ReplaceAll(v, "_", " ")+" of the "+mod+" module."),
				"  type        = "+g.pick([]string{"string", "number", "bool", "list(string)", "map(string)"}))
			if g.chance(0.5) {
				L = append(L, fmt.Sprintf("  default     = %q", g.pick([]string{"db.r6g.large", "cache.r7g.large", "10.40.0.0/16", "gp3", "14"})))
			}
			L = append(L, "}", "")
		}
	case "outputs.tf":
		for i := 0; i < g.between(4, 9); i++ {
			v := g.pick(nouns) + "_" + g.pick([]string{"arn", "id", "endpoint", "name"})
			L = append(L, fmt.Sprintf("output %q {", v), fmt.Sprintf("  value = aws_%s.%s.%s", g.pick([]string{"db_instance", "s3_bucket", "iam_role", "security_group"}), g.pick(nouns), g.pick([]string{"arn", "id", "endpoint"})), "}", "")
		}
	default:
		L = append(L, "terraform {", "  required_version = \">= 1.7.0\"", "  required_providers {", "    aws = {", "      source  = \"hashicorp/aws\"", "      version = \"~> 5.60\"", "    }", "  }", "}", "",
			"locals {", "  tags = merge(var.tags, {", "    Service   = \"ember\"", "    ManagedBy = \"terraform\"", fmt.Sprintf("    Module    = %q", mod), "  })", "}", "")
		for len(L) < g.n(70, 150) {
			L = append(L, g.tfResource(f, mod)...)
		}
	}
	return L
}

var tfResTypes = []string{"aws_db_instance", "aws_db_parameter_group", "aws_security_group_rule", "aws_iam_role_policy", "aws_s3_bucket_lifecycle_configuration", "aws_cloudwatch_metric_alarm", "aws_kms_key", "aws_elasticache_parameter_group"}

func (g *gen) tfResource(f *file, mod string) []string {
	rt := g.pick(tfResTypes)
	L := []string{fmt.Sprintf("resource %q %q {", rt, g.pick(nouns)+"_"+g.pick([]string{"primary", "replica", "ingress", "egress", "policy", "alarm", "main"}))}
	for i, n := 0, g.between(4, 10); i < n; i++ {
		switch g.r.IntN(8) {
		case 0:
			L = append(L, fmt.Sprintf("  name                = \"ember-%s-${var.env}\"", g.pick(nouns)))
		case 1:
			L = append(L, fmt.Sprintf("  %-19s = var.%s_%s", g.pick([]string{"instance_class", "node_type", "retention", "threshold", "port"}), g.pick(nouns), g.pick([]string{"size", "class", "count"})))
		case 2:
			L = append(L, "  tags                = local.tags")
		case 3:
			L = append(L, "  lifecycle {", "    prevent_destroy = true", fmt.Sprintf("    ignore_changes  = [%s]", g.pick([]string{"engine_version", "tags[\"LastRotated\"]", "desired_size"})), "  }")
		case 4:
			if g.chance(0.4) {
				L = append(L, fmt.Sprintf("  kms_key_id          = %q", f.id(fmt.Sprintf("arn:aws:kms:%s:%s:key/%s", g.w.region, g.w.account, g.uuid()), "id")))
			} else {
				L = append(L, "  kms_key_id          = aws_kms_key.main.arn")
			}
		case 5:
			L = append(L, fmt.Sprintf("  %-19s = %d", g.pick([]string{"from_port", "to_port", "evaluation_periods", "period", "allocated_storage"}), g.between(1, 6000)))
		case 6:
			L = append(L, "  policy = jsonencode({", "    Version = \"2012-10-17\"", "    Statement = [{", "      Effect   = \"Allow\"", fmt.Sprintf("      Action   = [%q, %q]", g.pick([]string{"s3:GetObject", "s3:PutObject", "kms:Decrypt", "rds-db:connect", "ecr:BatchGetImage"}), g.pick([]string{"s3:ListBucket", "kms:GenerateDataKey", "logs:PutLogEvents"})), "      Resource = [var.bucket_arn, \"${var.bucket_arn}/*\"]", "    }]", "  })")
		default:
			L = append(L, fmt.Sprintf("  description         = %q", "Managed by Terraform: "+g.pick(nouns)+" "+g.pick(nouns)))
		}
	}
	return append(L, "}", "")
}

func (g *gen) ocamlFile(f *file) []string {
	mod := strings.TrimSuffix(path.Base(f.path), ".ml")
	L := []string{
		"(* " + mod + ".ml — part of glaze, the Ember pricing-rule compiler. *)",
		"",
		"open! Core",
		"",
		"type t = {",
		"  name : string;",
		"  threshold : int;",
		"  discount_bps : int;",
		"  window : Window.t option;",
		"}",
		"[@@deriving sexp, compare, equal]",
		"",
		"type error =",
		"  [ `Overlap of string * string",
		"  | `Unknown_currency of string",
		"  | `Bad_percentage of int ]",
		"",
	}
	for len(L) < g.n(60, 130) {
		fn := strings.ToLower(g.pick(verbs)) + "_" + g.pick(nouns)
		L = append(L, fmt.Sprintf("(** [%s x] %s the %s of [x]. *)", fn, strings.ToLower(g.pick(verbs)), g.pick(nouns)),
			fmt.Sprintf("let %s %s =", fn, g.pick([]string{"rules", "tiers", "t", "sexp", "(rules : t list)"})))
		switch g.r.IntN(4) {
		case 0:
			L = append(L, "  match rules with", "  | [] -> Ok []", "  | r :: rest ->", fmt.Sprintf("    if r.discount_bps > %d then Error (`Bad_percentage r.discount_bps)", g.between(1000, 10000)), "    else Ok (r :: rest)")
		case 1:
			L = append(L, "  List.sort tiers ~compare:(fun a b -> Int.compare a.threshold b.threshold)", "  |> List.fold ~init:[] ~f:(fun acc t -> t :: acc)", "  |> List.rev")
		case 2:
			L = append(L, "  let%bind.Result parsed = Parser.parse sexp in", fmt.Sprintf("  Result.all (List.map parsed ~f:(fun p -> Tier.of_sexp p |> Result.map_error ~f:(fun e -> `%s e)))", g.pick([]string{"Parse", "Invalid", "Tier"})))
		default:
			L = append(L, "  let open Option.Let_syntax in", "  let%map w = t.window in", "  Window.overlaps w ~at:(Time_ns.now ())")
		}
		L = append(L, "")
	}
	return L
}

func (g *gen) helmValues(f *file) []string {
	chart := path.Base(path.Dir(f.path))
	L := []string{
		"# Values for " + chart + ".",
		"replicaCount: " + fmt.Sprint(g.between(2, 6)),
		"",
		"image:",
		"  repository: " + g.w.account + ".dkr.ecr." + g.w.region + ".amazonaws.com/" + chart,
		"  tag: \"" + f.id("sha-"+g.hex(12), "version") + "\"",
		"  pullPolicy: IfNotPresent",
		"",
		"serviceAccount:",
		"  create: true",
		"  annotations:",
		"    eks.amazonaws.com/role-arn: " + f.id(g.fresh(func() string { return fmt.Sprintf("arn:aws:iam::%s:role/%s-%s", g.w.account, chart, g.chars(lowAN, 8)) }), "id"),
		"",
		"env:",
		"  LEDGER_DB_HOST: " + g.w.rdsHost,
		"  REDIS_URL: " + f.id(g.word(func() string { return fmt.Sprintf("rediss://%s:6379/%d", g.w.cacheHost, g.between(1, 15)) }), "url"),
		"  RATES_URL: " + f.id(g.fresh(func() string { return fmt.Sprintf("https://rates.int.kilnworks.dev/v2/%s", g.chars(lower, 8)) }), "url"),
		"  LOG_LEVEL: info",
		"",
		"resources:",
		"  requests:",
		fmt.Sprintf("    cpu: %dm", g.between(1, 8)*100),
		fmt.Sprintf("    memory: %dMi", g.between(2, 16)*128),
		"  limits:",
		fmt.Sprintf("    cpu: %dm", g.between(8, 20)*100),
		fmt.Sprintf("    memory: %dMi", g.between(16, 32)*128),
		"",
		"probes:",
		"  liveness:",
		"    path: /healthz",
		fmt.Sprintf("    initialDelaySeconds: %d", g.between(5, 30)),
		"  readiness:",
		"    path: /readyz",
		"",
	}
	for len(L) < g.n(60, 110) {
		k := g.pick(nouns)
		L = append(L, k+":", fmt.Sprintf("  enabled: %v", g.chance(0.5)), fmt.Sprintf("  %s: %d", camel(g.pick(nouns), "limit"), g.between(1, 5000)), fmt.Sprintf("  schedule: \"%d */%d * * *\"", g.between(0, 59), g.between(1, 6)), "")
	}
	return L
}

func (g *gen) helmTemplate(f *file) []string {
	chart := path.Base(path.Dir(path.Dir(f.path)))
	L := []string{
		"apiVersion: apps/v1",
		"kind: Deployment",
		"metadata:",
		"  name: {{ include \"" + chart + ".fullname\" . }}",
		"  labels:",
		"    {{- include \"" + chart + ".labels\" . | nindent 4 }}",
		"spec:",
		"  replicas: {{ .Values.replicaCount }}",
		"  selector:",
		"    matchLabels:",
		"      {{- include \"" + chart + ".selectorLabels\" . | nindent 6 }}",
		"  template:",
		"    metadata:",
		"      annotations:",
		"        checksum/config: {{ include (print $.Template.BasePath \"/configmap.yaml\") . | sha256sum }}",
		"    spec:",
		"      serviceAccountName: {{ include \"" + chart + ".serviceAccountName\" . }}",
		"      containers:",
		"        - name: " + strings.TrimPrefix(chart, "ember-"),
		"          image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"",
		"          imagePullPolicy: {{ .Values.image.pullPolicy }}",
		"          ports:",
		"            - name: http",
		"              containerPort: 8080",
		"          envFrom:",
		"            - configMapRef:",
		"                name: {{ include \"" + chart + ".fullname\" . }}",
		"          livenessProbe:",
		"            httpGet:",
		"              path: {{ .Values.probes.liveness.path }}",
		"              port: http",
		"            initialDelaySeconds: {{ .Values.probes.liveness.initialDelaySeconds }}",
		"          resources:",
		"            {{- toYaml .Values.resources | nindent 12 }}",
	}
	for len(L) < g.n(45, 80) {
		L = append(L, "      {{- with .Values."+g.pick(nouns)+" }}", "      "+g.pick([]string{"nodeSelector", "tolerations", "affinity", "topologySpreadConstraints"})+":", "        {{- toYaml . | nindent 8 }}", "      {{- end }}")
	}
	return L
}

func (g *gen) ansibleFile(f *file) []string {
	p := f.path
	var L []string
	switch {
	case strings.HasSuffix(p, "hosts.ini"):
		for _, grp := range []string{"pgbouncer", "bastion", "logship"} {
			L = append(L, "["+grp+"]")
			for i := 1; i <= g.between(2, 4); i++ {
				L = append(L, fmt.Sprintf("%s-%d.prod.ember.internal ansible_host=%s", grp, i, f.id(g.ip(), "ip")))
			}
			L = append(L, "")
		}
		L = append(L, "[all:vars]", "ansible_user=ops", "ansible_ssh_common_args='-o ProxyJump=bastion-1.prod.ember.internal'")
	case strings.HasSuffix(p, ".j2"):
		role := path.Base(path.Dir(path.Dir(p)))
		L = append(L, "; Managed by Ansible ({{ ansible_managed }}).", "[databases]", "ledger = host={{ ledger_db_host }} port=5432 dbname=ledger", "", "["+role+"]", "listen_addr = 0.0.0.0", "listen_port = {{ "+role+"_listen_port }}", "auth_type = scram-sha-256")
		for len(L) < g.n(20, 40) {
			k := g.pick(nouns) + "_" + g.pick([]string{"pool_size", "timeout", "lifetime", "max_conn"})
			L = append(L, fmt.Sprintf("%s = {{ %s_%s }}", k, role, k))
		}
	case strings.Contains(p, "/defaults/") || strings.Contains(p, "/group_vars/"):
		role := path.Base(path.Dir(path.Dir(p)))
		if strings.Contains(p, "/group_vars/") {
			role = strings.TrimSuffix(path.Base(p), ".yml")
		}
		L = append(L, "---", "# Variables of "+role+".")
		for len(L) < g.n(25, 60) {
			L = append(L, fmt.Sprintf("%s_%s: %s", role, g.pick(nouns)+"_"+g.pick([]string{"port", "size", "timeout", "user", "enabled", "path"}), g.pick([]string{"6432", "true", "false", "\"/etc/" + role + "\"", "30", "\"transaction\""})))
		}
	default:
		role := path.Base(path.Dir(path.Dir(p)))
		L = append(L, "---")
		for len(L) < g.n(50, 110) {
			L = append(L, fmt.Sprintf("- name: %s %s", g.pick([]string{"Install", "Render", "Ensure", "Restart", "Template", "Check"}), g.pick(nouns)+" "+g.pick([]string{"config", "service", "user", "directory", "package"})))
			switch g.r.IntN(4) {
			case 0:
				L = append(L, "  ansible.builtin.template:", fmt.Sprintf("    src: %s.j2", g.pick(nouns)), fmt.Sprintf("    dest: /etc/%s/%s", role, g.pick(nouns)+".conf"), "    mode: \"0640\"", "  notify: restart "+role)
			case 1:
				L = append(L, "  ansible.builtin.apt:", "    name: "+g.pick([]string{"pgbouncer", "prometheus-node-exporter", "vector", "postgresql-client-16"}), "    state: present", "    update_cache: true")
			case 2:
				L = append(L, "  ansible.builtin.systemd_service:", "    name: "+role, "    state: started", "    enabled: true")
			default:
				L = append(L, "  ansible.builtin.file:", "    path: /var/lib/"+role, "    state: directory", "    owner: "+role, "  when: "+role+"_enabled | bool")
			}
			L = append(L, "")
		}
	}
	return L
}

func (g *gen) sqlFile(f *file) []string {
	L := []string{"-- " + path.Base(f.path), "BEGIN;", ""}
	for len(L) < g.n(30, 70) {
		t := g.pick(nouns) + "s"
		L = append(L, "CREATE TABLE IF NOT EXISTS "+t+" (",
			"    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),",
			"    roaster_id  uuid NOT NULL REFERENCES roasters(id),",
			"    amount      bigint NOT NULL CHECK (amount >= 0),",
			"    currency    char(3) NOT NULL,",
			"    created_at  timestamptz NOT NULL DEFAULT now()",
			");",
			fmt.Sprintf("CREATE INDEX IF NOT EXISTS %s_roaster_created_idx ON %s (roaster_id, created_at DESC);", t, t), "")
	}
	return append(L, "COMMIT;")
}

func (g *gen) fastfile(f *file) []string {
	L := []string{
		"default_platform(:ios)",
		"",
		"platform :ios do",
		"  before_all do",
		"    setup_ci if ENV[\"CI\"]",
		"  end",
		"",
		"  desc \"Run the EmberKit and app tests\"",
		"  lane :tests do",
		"    run_tests(scheme: \"Ember\", devices: [\"iPhone 15 Pro\"], result_bundle: true)",
		"  end",
		"",
		"  desc \"Push a new beta build to TestFlight\"",
		"  lane :beta do",
		"    app_store_connect_api_key(key_id: ENV[\"ASC_KEY_ID\"], issuer_id: ENV[\"ASC_ISSUER_ID\"], key_content: ENV[\"ASC_KEY\"])",
		"    increment_build_number(build_number: latest_testflight_build_number + 1)",
		"    match(type: \"appstore\", readonly: true)",
		"    build_app(scheme: \"Ember\", export_method: \"app-store\", xcargs: \"-skipPackagePluginValidation\")",
		fmt.Sprintf("    upload_to_testflight(apple_id: %q, skip_waiting_for_build_processing: true)", f.id(g.digits(10), "id")),
		"  end",
		"end",
	}
	return L
}

func (g *gen) plainFile(f *file) []string {
	var L []string
	for len(L) < g.n(20, 50) {
		L = append(L, fmt.Sprintf("# %s %s %s", g.pick(nouns), strings.ToLower(g.pick(verbs)), g.pick(phrases)))
	}
	return L
}
