package evidgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

type gen struct {
	r      *rand.Rand
	o      Options
	t      *Transcript
	used   map[string]bool  // every identifier text made, labelled or not
	labels map[string]Class // labelled ones
	pkgs   []*pkg
	calls  int
	task   int
}

type pkg struct {
	name, dir string
	files     []*file
	listed    bool
	testdata  bool // its testdata listing was shown
}

type file struct {
	p      *pkg
	name   string
	path   string
	lines  []line // the content, made on the first read
	read   int    // times read
	edited bool   // written or edited: never read again (its new text is file_written)
	sited  bool   // named in a failing output: never edited
}

var pkgNames = []string{"router", "proxy", "auth", "ratelimit", "store", "config", "metrics"}

var fileStems = map[string][]string{
	"router":    {"table", "match", "reload", "host", "prefix", "rewrite", "handler", "order", "wildcard", "cache", "params", "errors", "trie", "redirect"},
	"proxy":     {"retry", "backoff", "upstream", "pool", "transport", "headers", "stream", "circuit", "budget", "hedge", "dial", "errors"},
	"auth":      {"token", "jwks", "session", "scope", "hmac", "apikey", "middleware", "cache", "errors"},
	"ratelimit": {"bucket", "window", "tenant", "redis", "quota", "clock", "errors"},
	"store":     {"routes", "tenants", "migrate", "tx", "query", "pool", "errors"},
	"config":    {"load", "env", "validate", "watch", "defaults"},
	"metrics":   {"histogram", "labels", "export", "registry"},
}

var (
	verbs   = []string{"Reload", "Match", "Retry", "Resolve", "Route", "Forward", "Refresh", "Rotate", "Evict", "Parse", "Drain", "Limit", "Merge", "Rewrite", "Verify", "Dial", "Hedge", "Split", "Persist", "Decode"}
	nouns   = []string{"Order", "Prefix", "Wildcard", "Budget", "Header", "Upstream", "Tenant", "Token", "Window", "Bucket", "Host", "Path", "Timeout", "Pool", "Redirect", "Scope", "Key", "Snapshot", "Weight", "Stream", "Quota", "Cache"}
	hosts   = []string{"billing", "ledger", "search", "catalog", "identity", "invoices", "quota", "payments", "geo", "notify"}
	domains = []string{"acme.test", "acme.internal", "svc.cluster.local", "acme-staging.test"}
	apis    = []string{"charge", "routes", "tenants", "tokens", "limits", "refunds", "sessions", "keys", "quotas", "hooks"}
)

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

// uniq draws from make until it gives a text not made before.
func (g *gen) uniq(make func() string) string {
	for {
		s := make()
		if !g.used[s] {
			g.used[s] = true
			return s
		}
	}
}

// label records text as a labelled identifier of class c.
func (g *gen) label(text string, c Class, kind string) string {
	if old, ok := g.labels[text]; ok {
		if old != c {
			panic(fmt.Sprintf("evidgen: %q labelled %s and %s", text, old, c))
		}
		return text
	}
	g.used[text] = true
	g.labels[text] = c
	g.t.Labels = append(g.t.Labels, Label{Text: text, Class: c, Kind: kind})
	return text
}

func (g *gen) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[g.r.IntN(16)]
	}
	return string(b)
}

func (g *gen) base62(n int) string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[g.r.IntN(len(digits))]
	}
	return string(b)
}

// The identifier makers. Each gives a text never made before and labels
// it with c.

func (g *gen) port(c Class) string {
	return g.label(g.uniq(func() string { return fmt.Sprintf("127.0.0.1:%d", 20000+g.r.IntN(40000)) }), c, "port")
}

// addr is an unlabelled listen address (a line of a failing output that
// is not an error line prints it).
func (g *gen) addr() string {
	return g.uniq(func() string { return fmt.Sprintf("127.0.0.1:%d", 20000+g.r.IntN(40000)) })
}

func (g *gen) code(c Class) string {
	return g.label(g.uniq(func() string { return fmt.Sprintf("E%04d", 1000+g.r.IntN(9000)) }), c, "error_code")
}

func (g *gen) hash(c Class, n int) string {
	return g.label(g.uniq(func() string { return g.hex(n) }), c, "hash")
}

func (g *gen) id(c Class, prefix string) string {
	return g.label(g.uniq(func() string { return prefix + "_" + g.base62(12) }), c, "id")
}

func (g *gen) url(c Class) string {
	return g.label(g.uniq(func() string {
		switch g.r.IntN(3) {
		case 0:
			return fmt.Sprintf("https://%s-%d.%s:8443/v2/%s", g.pick(hosts), 1+g.r.IntN(40), g.pick(domains), g.pick(apis))
		case 1:
			return fmt.Sprintf("https://%s.%s/api/v1/%s/%d", g.pick(hosts), g.pick(domains), g.pick(apis), 100+g.r.IntN(9900))
		default:
			return fmt.Sprintf("http://localhost:%d/v1/%s/%s", 20000+g.r.IntN(40000), g.pick(apis), strings.ToLower(g.base62(6)))
		}
	}), c, "url")
}

// localURL is a URL of the server under test at addr (unlabelled addr).
func (g *gen) localURL(c Class, addr string) string {
	return g.label(g.uniq(func() string {
		return fmt.Sprintf("http://%s/v1/%s/%s", addr, g.pick(apis), strings.ToLower(g.base62(8)))
	}), c, "url")
}

func (g *gen) testName(c Class) string {
	return g.label(g.uniq(func() string { return "Test" + g.pick(verbs) + g.pick(nouns) + g.pick(nouns) }), c, "test")
}

func (g *gen) site(c Class, path string) string {
	return g.label(g.uniq(func() string { return fmt.Sprintf("%s:%d", path, 12+g.r.IntN(480)) }), c, "site")
}

func (g *gen) setup() {
	for _, n := range pkgNames {
		p := &pkg{name: n, dir: "internal/" + n}
		for _, s := range fileStems[n] {
			p.files = append(p.files, &file{p: p, name: s + ".go", path: p.dir + "/" + s + ".go"})
		}
		for _, s := range fileStems[n][:len(fileStems[n])/2] {
			p.files = append(p.files, &file{p: p, name: s + "_test.go", path: p.dir + "/" + s + "_test.go"})
		}
		g.pkgs = append(g.pkgs, p)
	}
}

// Messages.

func (g *gen) add(m message) { g.t.msgs = append(g.t.msgs, m) }

func (g *gen) user(text string) { g.add(message{role: "user", text: text}) }

func (g *gen) say(text string) { g.add(message{role: "assistant", text: text}) }

// tool makes one assistant message with one call and its result.
func (g *gen) tool(text, name string, args []arg, out []line, failed bool) {
	g.calls++
	g.t.ToolCalls++
	id := "call_" + g.base62(24)
	g.add(message{role: "assistant", text: text, calls: []call{{id: id, name: name, args: args}}})
	g.add(message{role: "tool", callID: id, lines: out, isError: failed})
}

func (g *gen) shell(text, cmd string, out []line, failed bool) {
	g.tool(text, "shell", []arg{{"command", cmd}}, out, failed)
}

func filler(ss ...string) []line {
	out := make([]line, len(ss))
	for i, s := range ss {
		out[i] = line{text: s}
	}
	return out
}

func (g *gen) system() {
	g.add(message{role: "system", text: "You are a coding assistant working in the gatewayd repository (a Go HTTP API gateway). " +
		"Use the tools to read, run and change code. Run the tests of a package after changing it. " +
		"Keep changes small and explain what you changed and why."})
}
