package kilngen

import (
	"fmt"
	"path"
	"strconv"
	"strings"
)

const (
	hexd    = "0123456789abcdef"
	alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	lowAN   = "abcdefghijklmnopqrstuvwxyz0123456789"
	upAN    = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	kubeSet = "bcdfghjklmnpqrstvwxz2456789"
	lower   = "abcdefghijklmnopqrstuvwxyz"
)

func (g *gen) chars(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[g.r.IntN(len(set))]
	}
	return string(b)
}

// fresh draws from f until it gives a text never handed out before.
func (g *gen) fresh(f func() string) string {
	for {
		s := f()
		if s != "" && !g.used[s] {
			g.used[s] = true
			return s
		}
	}
}

// word draws from f until it gives a text that is neither a substring of
// a word-like identifier handed out before nor contains one: for names
// made of dictionary words, where "testRefundRounds" would hide inside
// "testRefundRoundsTwice".
func (g *gen) word(f func() string) string {
	for tries := 0; ; tries++ {
		s := f()
		if s == "" || g.used[s] {
			continue
		}
		clash := false
		for _, w := range g.words {
			if strings.Contains(w, s) || strings.Contains(s, w) {
				clash = true
				break
			}
		}
		if clash && tries < 400 {
			continue
		}
		if clash {
			s = s + strconv.Itoa(g.between(100, 999))
			if g.used[s] {
				continue
			}
		}
		g.used[s] = true
		g.words = append(g.words, s)
		return s
	}
}

func hasDigitAndLetter(s string) bool {
	return strings.ContainsAny(s, "0123456789") && strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

// hex is a fresh lowercase hex string of n digits.
func (g *gen) hex(n int) string {
	return g.fresh(func() string {
		s := g.chars(hexd, n)
		if !hasDigitAndLetter(s) {
			return ""
		}
		return s
	})
}

func (g *gen) uuid() string {
	return g.fresh(func() string {
		return fmt.Sprintf("%s-%s-4%s-%c%s-%s", g.chars(hexd, 8), g.chars(hexd, 4), g.chars(hexd, 3),
			"89ab"[g.r.IntN(4)], g.chars(hexd, 3), g.chars(hexd, 12))
	})
}

// up is a fresh upper-case alphanumeric id of n characters, such as an S3
// request id or an alcotest run id.
func (g *gen) up(n int) string {
	return g.fresh(func() string {
		s := g.chars(upAN, n)
		if !hasDigitAndLetter(s) {
			return ""
		}
		return s
	})
}

func (g *gen) txHash() string { return "0x" + g.hex(64) }

// address is a fresh Ethereum address in mixed (checksum-like) case.
func (g *gen) address() string {
	return g.fresh(func() string {
		b := []byte(g.chars(hexd, 40))
		for i, c := range b {
			if c >= 'a' && g.r.IntN(2) == 0 {
				b[i] = c - 32
			}
		}
		return "0x" + string(b)
	})
}

func (g *gen) sha7() string  { return g.hex(7) }
func (g *gen) sha40() string { return g.hex(40) }

// pod is a fresh pod name of a deployment.
func (g *gen) pod(deploy string) string {
	return g.fresh(func() string {
		return fmt.Sprintf("%s-%s-%s", deploy, g.chars(kubeSet, g.between(9, 10)), g.chars(kubeSet, 5))
	})
}

// ip is a fresh private address (word-checked: 10.4.3.1 hides in 10.4.3.17).
func (g *gen) ip() string {
	return g.word(func() string {
		return fmt.Sprintf("10.%d.%d.%d", g.between(20, 63), g.between(0, 255), g.between(10, 250))
	})
}

func (g *gen) node() string {
	return g.fresh(func() string {
		return fmt.Sprintf("ip-10-%d-%d-%d.%s.compute.internal", g.between(20, 63), g.between(0, 255), g.between(10, 250), g.w.region)
	})
}

// awsID is a fresh EC2-style id such as sg-0f3a9c1e2b7d4a6c8.
func (g *gen) awsID(prefix string) string {
	return g.fresh(func() string { return prefix + "-0" + g.chars(hexd, 16) })
}

// hostport is a fresh host:port of a private address.
func (g *gen) hostport(port int) string {
	return g.word(func() string {
		return fmt.Sprintf("10.%d.%d.%d:%d", g.between(20, 63), g.between(0, 255), g.between(10, 250), port)
	})
}

// ticket is a fresh issue key.
func (g *gen) ticket() string {
	return g.word(func() string {
		return fmt.Sprintf("%s-%d", g.pick([]string{"EMB", "LEDG", "IOS", "INFRA", "CHAIN"}), g.between(1000, 9999))
	})
}

func (g *gen) digits(n int) string {
	return g.fresh(func() string {
		s := g.chars("0123456789", n)
		if s[0] == '0' {
			return ""
		}
		return s
	})
}

// site hands out a line number of file p, never equal to or a decimal
// prefix of one handed out before for a file of the same base name, and
// returns it: "Refund.swift:88" then hides in no other site.
func (g *gen) site(p string, lo, hi int) int {
	base := path.Base(p)
	if hi < lo+10 {
		hi = lo + 10
	}
	for tries := 0; ; tries++ {
		n := g.between(lo, hi)
		if tries > 200 {
			n = g.between(1000, 9999)
		}
		s := strconv.Itoa(n)
		ok := true
		for _, m := range g.sites[base] {
			t := strconv.Itoa(m)
			if strings.HasPrefix(s, t) || strings.HasPrefix(t, s) {
				ok = false
				break
			}
		}
		if ok {
			g.sites[base] = append(g.sites[base], n)
			return n
		}
	}
}

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// camel joins words in lowerCamelCase.
func camel(ws ...string) string {
	var b strings.Builder
	for i, w := range ws {
		if i == 0 {
			b.WriteString(w)
		} else {
			b.WriteString(title(w))
		}
	}
	return b.String()
}

// ---- dictionaries ----

var nouns = []string{"refund", "payout", "stamp", "reward", "tier", "epoch", "batch", "fee", "tip", "cart", "receipt",
	"roaster", "merchant", "ledger", "entry", "balance", "voucher", "claim", "split", "settlement", "currency",
	"rounding", "window", "streak", "basket", "token", "allowance", "cursor", "session", "webhook", "invoice", "drip"}

var verbs = []string{"Rounds", "Rejects", "Keeps", "Splits", "Caps", "Nets", "Defers", "Retries", "Merges", "Orders",
	"Skips", "Clamps", "Refunds", "Expires", "Resumes", "Emits", "Restores", "Credits", "Debits", "Voids"}

var quals = []string{"HalfUp", "OnEmptyCart", "AcrossMidnight", "WhenOffline", "AfterRestore", "InEuro", "ForZeroTip",
	"Twice", "UnderLoad", "WithStaleToken", "BeforeEpoch", "AtBoundary", "OnRetry", "ForNewRoaster", "WithoutNetwork"}

var phrases = []string{"with mixed currencies", "across a month boundary", "for a zero-amount entry", "when the fee exceeds the tip",
	"after a partial refund", "on an empty batch", "for a roaster without a payout account", "when two epochs overlap",
	"with a negative adjustment", "in the presence of duplicates", "for the last cent", "with a stale exchange rate",
	"when the cursor is past the end", "for a voided receipt", "under a daily cap"}

var hsVerbs = []string{"rejects", "keeps", "nets", "rounds", "splits", "orders", "defers", "caps", "merges", "skips", "credits", "voids"}

// swiftTest is a fresh XCTest method name.
func (g *gen) swiftTest() string {
	return g.word(func() string {
		return "test" + title(g.pick(nouns)) + g.pick(verbs) + title(g.pick(nouns)) + g.pick(quals)
	})
}

// hspecItem is a fresh hspec example description.
func (g *gen) hspecItem() string {
	return g.word(func() string { return g.pick(hsVerbs) + " the " + g.pick(nouns) + " " + g.pick(phrases) })
}

// forgeTest is a fresh Foundry test function name.
func (g *gen) forgeTest(fuzz bool) string {
	return g.word(func() string {
		if fuzz {
			return "testFuzz_" + title(g.pick(nouns)) + g.pick(verbs) + title(g.pick(nouns))
		}
		return "test_" + title(g.pick(nouns)) + g.pick(verbs) + title(g.pick(nouns)) + g.pick([]string{"", "Reverts", "WhenPaused", "AfterWarp", "ByOwner"})
	})
}

// solError is a fresh Solidity custom error name.
func (g *gen) solError() string {
	return g.word(func() string {
		return title(g.pick(nouns)) + g.pick([]string{"NotClosed", "Exceeded", "AlreadyClaimed", "Unauthorized", "TooEarly", "Mismatch", "Underfunded", "Expired"})
	})
}

// alcoTest is a fresh alcotest case title.
func (g *gen) alcoTest() string {
	return g.word(func() string {
		return g.pick(hsVerbs) + " " + g.pick(nouns) + " " + g.pick([]string{"windows that overlap", "tiers out of order", "a rule without a currency", "percentages over 100", "an empty price list", "nested discounts", "a duplicate sku"})
	})
}

// camelID is a fresh lowerCamelCase identifier for code.
func (g *gen) camelID() string {
	return g.word(func() string {
		return camel(g.pick(nouns), g.pick(nouns), g.pick([]string{"Limit", "Scale", "Window", "Policy", "Cap", "Floor", "Grace"}))
	})
}

// snakeKey is a fresh configuration key.
func (g *gen) snakeKey() string {
	return g.word(func() string {
		return g.pick(nouns) + "_" + g.pick(nouns) + "_" + g.pick([]string{"limit", "scale_digits", "window_secs", "grace_ms", "cap", "batch_size", "max_retries"})
	})
}
