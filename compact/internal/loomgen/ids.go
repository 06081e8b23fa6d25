package loomgen

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/strata-memory/strata/compact/internal/opsgen"
)

const (
	hexd   = "0123456789abcdef"
	hexU   = "0123456789ABCDEF"
	lowan  = "abcdefghijklmnopqrstuvwxyz0123456789"
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	lowers = "abcdefghijklmnopqrstuvwxyz"
)

func (g *gen) chars(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[g.r.IntN(len(set))]
	}
	return string(b)
}

func (g *gen) hex(n int) string { return g.chars(hexd, n) }

// n is a number in [lo, hi].
func (g *gen) n(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) pickN(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) pickI(xs ...int) int { return xs[g.r.IntN(len(xs))] }

// reg records s as an ambient identifier made elsewhere.
func (g *gen) reg(s string) string {
	if !g.used[s] {
		g.used[s] = true
		g.amb = append(g.amb, s)
	}
	return s
}

// f is a float in [lo, hi) formatted with d decimals.
func (g *gen) f(lo, hi float64, d int) string {
	return strconv.FormatFloat(lo+(hi-lo)*g.r.Float64(), 'f', d, 64)
}

// words picks k distinct words of ws.
func (g *gen) words(ws []string, k int) []string {
	p := g.r.Perm(len(ws))
	out := make([]string, k)
	for i := range out {
		out[i] = ws[p[i]]
	}
	return out
}

// fresh returns an identifier mk makes that was not handed out before and
// holds no planted identifier: an ambient identifier, free to occur
// anywhere.
func (g *gen) fresh(mk func() string) string {
	for i := 0; ; i++ {
		s := mk()
		if !g.used[s] && !g.holdsLabel(s) {
			g.used[s] = true
			g.amb = append(g.amb, s)
			return s
		}
		if i > 2000 {
			panic("loomgen: no fresh identifier left: " + s)
		}
	}
}

func (g *gen) holdsLabel(s string) bool {
	for _, l := range g.labels {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}

// plant returns an identifier mk makes and records it as a label of class
// c: not handed out before, no substring of another label or of an ambient
// identifier, and holding no other label.
func (g *gen) plant(c opsgen.Class, kind string, mk func() string) string {
	for i := 0; ; i++ {
		s := mk()
		if g.plantable(s) {
			g.used[s] = true
			g.labels = append(g.labels, s)
			g.t.Labels = append(g.t.Labels, opsgen.Label{Text: s, Class: c, Kind: kind})
			return s
		}
		if i > 2000 {
			panic("loomgen: cannot plant a fresh " + kind + ": " + s)
		}
	}
}

func (g *gen) plantable(s string) bool {
	if g.used[s] {
		return false
	}
	for _, l := range g.labels {
		if strings.Contains(l, s) || strings.Contains(s, l) {
			return false
		}
	}
	for _, a := range g.amb {
		if strings.Contains(a, s) {
			return false
		}
	}
	return true
}

// The four ways to plant, one per class.
func (g *gen) E(kind string, mk func() string) string { return g.plant(opsgen.ErrorLine, kind, mk) }
func (g *gen) P(kind string, mk func() string) string { return g.plant(opsgen.PassingOutput, kind, mk) }
func (g *gen) W(kind string, mk func() string) string { return g.plant(opsgen.FileWritten, kind, mk) }
func (g *gen) U(kind string, mk func() string) string { return g.plant(opsgen.UserTurn, kind, mk) }

// A returns an ambient identifier (see fresh).
func (g *gen) A(mk func() string) string { return g.fresh(mk) }

// Makers of identifiers. Each returns a new candidate at every call.

func (g *gen) mkJob() func() string {
	return func() string { return strconv.Itoa(g.n(21000000, 29999999)) }
}

func (g *gen) mkHex(n int) func() string { return func() string { return g.hex(n) } }

func (g *gen) mkUUID() func() string {
	return func() string {
		return g.hex(8) + "-" + g.hex(4) + "-4" + g.hex(3) + "-" + g.pick("8", "9", "a", "b") + g.hex(3) + "-" + g.hex(12)
	}
}

// mkNode makes a compute node name such as wh100-0213.
func (g *gen) mkNode(kind string) func() string {
	return func() string { return fmt.Sprintf("%s-%04d", kind, g.n(101, 899)) }
}

func (g *gen) mkHostPort(prefix string, ports ...int) func() string {
	return func() string {
		p := ports[g.r.IntN(len(ports))]
		return fmt.Sprintf("%s-%02d.warp.loomfield.net:%d", prefix, g.n(1, 40), p)
	}
}

func (g *gen) mkIPPort(port int) func() string {
	return func() string { return fmt.Sprintf("10.%d.%d.%d:%d", g.n(40, 49), g.n(1, 30), g.n(2, 250), port) }
}

// mkSite makes file:line with a three-digit line.
func (g *gen) mkSite(file string) func() string {
	return func() string { return fmt.Sprintf("%s:%d", file, g.n(100, 999)) }
}

// mkPySite makes the identity of a Python traceback frame: file", line N.
func (g *gen) mkPySite(file string) func() string {
	return func() string { return fmt.Sprintf(`%s", line %d`, file, g.n(100, 999)) }
}

func (g *gen) mkTest(prefix, sep string, ws []string, k int) func() string {
	return func() string { return prefix + strings.Join(g.words(ws, k), sep) }
}

func (g *gen) mkVersion() func() string {
	return func() string { return fmt.Sprintf("v%d.%d.%d", g.n(0, 4), g.n(10, 39), g.n(1, 19)) }
}

func (g *gen) mkReq(prefix string, n int) func() string {
	return func() string { return prefix + g.chars(lowan, n) }
}

// ticket is a Jira-style ticket key.
func (g *gen) mkTicket() func() string {
	return func() string { return fmt.Sprintf("WARP-%d", g.n(1200, 9899)) }
}

// Times.

func (g *gen) ago(d time.Duration) time.Time { return g.now.Add(-d) }

func stamp(t time.Time) string { return t.Format("2006-01-02T15:04:05") }

// clock is a running time inside a log.
type clock struct {
	t time.Time
	g *gen
}

func (g *gen) clockFrom(back time.Duration) *clock { return &clock{t: g.now.Add(-back), g: g} }

// tick advances the clock by up to ms milliseconds and returns it.
func (c *clock) tick(ms int) time.Time {
	c.t = c.t.Add(time.Duration(1+c.g.r.IntN(ms)) * time.Millisecond)
	return c.t
}
