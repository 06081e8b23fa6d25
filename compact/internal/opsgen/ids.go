package opsgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// gen holds a session being generated: its random source, the messages so
// far, and every identifier it has put anywhere, so that no two places
// share one by chance.
type gen struct {
	r      *rand.Rand
	scale  float64
	msgs   []Message
	calls  int
	used   map[string]bool  // every generated token, labelled or not
	class  map[string]Class // the class of each label
	labels []Label
	lines  map[string]int // the last line handed out per path
}

func newGen(seed uint64, o Options) *gen {
	if o.OutputScale <= 0 {
		o.OutputScale = 1
	}
	return &gen{
		r:     rand.New(rand.NewPCG(seed, 0x6f707367656e)),
		scale: o.OutputScale,
		used:  map[string]bool{},
		class: map[string]Class{},
		lines: map[string]int{},
	}
}

// plant labels text with class c and returns it. Planting the same text
// again in the same class is a repeat; in another class it is a bug of
// the generator.
func (g *gen) plant(text string, c Class, kind string) string {
	if old, ok := g.class[text]; ok {
		if old != c {
			panic(fmt.Sprintf("opsgen: %q planted as %s and %s", text, old, c))
		}
		return text
	}
	g.class[text] = c
	g.used[text] = true
	g.labels = append(g.labels, Label{Text: text, Class: c, Kind: kind})
	return text
}

// fresh draws from f until it gives a text never used before.
func (g *gen) fresh(f func() string) string {
	for {
		s := f()
		if s != "" && !g.used[s] {
			g.used[s] = true
			return s
		}
	}
}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) between(lo, hi int) int { return lo + g.r.IntN(hi-lo+1) }

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// n scales a count of output lines.
func (g *gen) n(lo, hi int) int {
	v := int(float64(g.between(lo, hi)) * g.scale)
	return max(1, v)
}

const hexDigits = "0123456789abcdef"
const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

func (g *gen) chars(set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[g.r.IntN(len(set))]
	}
	return string(b)
}

// hex is a fresh hex string of n digits with a digit and a letter in it.
func (g *gen) hex(n int) string {
	return g.fresh(func() string {
		s := g.chars(hexDigits, n)
		if !strings.ContainsAny(s, "0123456789") || !strings.ContainsAny(s, "abcdef") {
			return ""
		}
		return s
	})
}

func (g *gen) uuid() string {
	return g.fresh(func() string {
		return fmt.Sprintf("%s-%s-4%s-%c%s-%s", g.chars(hexDigits, 8), g.chars(hexDigits, 4), g.chars(hexDigits, 3),
			"89ab"[g.r.IntN(4)], g.chars(hexDigits, 3), g.chars(hexDigits, 12))
	})
}

// prefixed is a fresh id such as req_7Hk2mQ9xW1 (with a digit in it).
func (g *gen) prefixed(prefix string, n int) string {
	return g.fresh(func() string {
		s := g.chars(alnum, n)
		if !strings.ContainsAny(s, "0123456789") {
			return ""
		}
		return prefix + "_" + s
	})
}

// port is a fresh port number.
func (g *gen) port() int {
	for {
		p := g.between(3000, 49151)
		k := fmt.Sprintf("port %d", p)
		if !g.used[k] {
			g.used[k] = true
			return p
		}
	}
}

var internalHosts = []string{"ledger-core", "db-primary", "db-replica", "kafka", "minio", "warehouse", "schema-registry", "auth", "fx-rates", "redis"}

// host is a fresh internal host name.
func (g *gen) host() string {
	return g.fresh(func() string {
		return fmt.Sprintf("%s-%d.%s.internal", g.pick(internalHosts), g.between(1, 9), g.pick([]string{"prod", "stg", "dev", "ops"}))
	})
}

// hostport is a fresh host:port on a loopback, private or internal host.
func (g *gen) hostport() string {
	p := g.port()
	switch g.r.IntN(3) {
	case 0:
		return fmt.Sprintf("127.0.0.1:%d", p)
	case 1:
		return fmt.Sprintf("10.%d.%d.%d:%d", g.between(0, 40), g.between(0, 255), g.between(2, 250), p)
	default:
		return fmt.Sprintf("%s:%d", g.host(), p)
	}
}

var urlPaths = []string{"v1/batches", "v1/ingest", "v2/ledger/entries", "api/tenants", "healthz", "v1/rates/latest", "internal/flush", "v1/dlq/replay", "metrics", "v2/exports"}

// url is a fresh http URL with a host:port and a path.
func (g *gen) url() string {
	return g.fresh(func() string {
		return fmt.Sprintf("http://%s/%s/%s", g.hostport(), g.pick(urlPaths), g.chars("abcdefghijklmnopqrstuvwxyz", 2)+fmt.Sprint(g.between(1, 999)))
	})
}

// code is a fresh application error code such as LDG-4031.
func (g *gen) code() string {
	return g.fresh(func() string {
		return fmt.Sprintf("%s-%d", g.pick([]string{"LDG", "ING", "ETL", "NRM", "OPS"}), g.between(1000, 9999))
	})
}

var words = []string{"batch", "flush", "ledger", "tenant", "currency", "rate", "entry", "export", "dedupe", "window",
	"retry", "backoff", "schema", "cursor", "offset", "partition", "checksum", "replay", "sink", "upload", "manifest",
	"deadline", "quota", "rollup", "snapshot", "watermark", "settlement", "refund", "invoice", "payout"}

var verbs = []string{"Rejects", "Flushes", "Keeps", "Drops", "Retries", "Rounds", "Parses", "Orders", "Merges", "Skips",
	"Reports", "Resumes", "Splits", "Caps", "Validates", "Emits"}

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// goTest is a fresh Go test name.
func (g *gen) goTest() string {
	return g.fresh(func() string {
		return "Test" + title(g.pick(words)) + g.pick(verbs) + title(g.pick(words)) + g.pick([]string{"", "OnDeadline", "WhenEmpty", "AfterRestart", "Concurrently", "WithNulls"})
	})
}

// pyTest is a fresh pytest function name.
func (g *gen) pyTest() string {
	return g.fresh(func() string {
		return "test_" + g.pick(words) + "_" + strings.ToLower(g.pick(verbs)) + "_" + g.pick(words) + g.pick([]string{"", "_on_empty", "_with_nulls", "_twice", "_across_dst"})
	})
}

// rsTest is a fresh Rust test path (module::tests::name).
func (g *gen) rsTest(module string) string {
	return g.fresh(func() string {
		return module + "::tests::" + strings.ToLower(g.pick(verbs)) + "_" + g.pick(words) + "_" + g.pick(words)
	})
}

// jsTest is a fresh jest test title (not an identifier; the site is).
func (g *gen) jsTest() string {
	return strings.ToLower(g.pick(verbs)) + " the " + g.pick(words) + " " + g.pick([]string{"after a 503", "on timeout", "when the tenant changes", "with an empty page", "twice"})
}

// bucket is a fresh s3 URL.
func (g *gen) bucket() string {
	return g.fresh(func() string {
		return fmt.Sprintf("s3://ll-%s-%s/%s/", g.pick([]string{"raw", "archive", "dlq", "exports", "backfill"}), g.chars(hexDigits[:10]+"abcdef", 4), g.pick(words))
	})
}

// ticket is a fresh issue key such as OPS-4821.
func (g *gen) ticket() string {
	return g.fresh(func() string {
		return fmt.Sprintf("%s-%d", g.pick([]string{"OPS", "DATA", "PLAT", "INC"}), g.between(100, 9999))
	})
}

// callID is a fresh tool call id suffix.
func (g *gen) callID() string { return g.fresh(func() string { return g.chars(alnum, 22) }) }
