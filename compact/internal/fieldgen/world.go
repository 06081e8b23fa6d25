package fieldgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// gen holds the random source and the world of one transcript: the
// service, its hosts, pods, containers, settings and history.
type gen struct {
	r     *rand.Rand
	o     Options
	users string

	svc       string // service name: orders-api
	module    string // Go module / Python package / crate name
	ns        string // Kubernetes namespace
	domain    string // public API host
	registry  string
	version   string // the deployed image tag
	port      int    // the service's port
	dbName    string
	deploySHA string
	commits   []commit
	pods      []string
	env       []envVar
	ids       int // call id counter
	issue     int
}

type commit struct{ sha, msg string }

type envVar struct{ name, value string }

type step struct {
	thinking string
	text     string
	calls    []callOut
}

type callOut struct {
	name, args, output string
	isError            bool
}

type task struct {
	request string
	rounds  [][]step
	report  string
	// hints are identifiers a dense user may bring up between rounds.
	hints []string
}

var (
	services = []string{"orders-api", "billing-svc", "ingest-worker", "search-gateway", "notify-hub", "ledger-sync", "quota-service", "media-resizer"}
	nsNames  = []string{"staging", "prod-eu", "payments", "platform", "edge"}
	domains  = []string{"api.northwind-demo.io", "gw.acme-retail.dev", "svc.tessera.cloud", "api.fjordpay.eu"}
	owners   = []string{"mkowalski", "tsato", "aokafor", "lbernard", "rvasquez", "dnguyen"}
	verbs    = []string{"Fix", "Add", "Bump", "Revert", "Refactor", "Harden", "Drop", "Retry", "Cache", "Log"}
	objects  = []string{"idempotency keys on POST /v2/orders", "webhook signature check", "connection pool sizing", "pagination cursor encoding",
		"rate limiter burst", "retry backoff for upstream 503", "currency rounding in invoice totals", "tracing headers", "health probe timeout",
		"stale cache on tenant switch", "batch size of the outbox relay", "TLS min version", "migration 0042 lock timeout", "null tenant_id rows"}
)

func newGen(seed uint64, o Options) *gen {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), o: o}
	g.users = o.Users
	if g.users == "" {
		g.users = pick(g.r, []string{"rare", "dense"})
	}
	g.svc = pick(g.r, services)
	g.module = strings.ReplaceAll(g.svc, "-", "_")
	g.ns = pick(g.r, nsNames)
	g.domain = pick(g.r, domains)
	g.registry = pick(g.r, []string{"ghcr.io/northwind", "registry.gitlab.com/acme/platform", "123456789012.dkr.ecr.eu-west-1.amazonaws.com"})
	g.version = fmt.Sprintf("%d.%d.%d", 1+g.r.IntN(3), g.r.IntN(30), g.r.IntN(12))
	g.port = pick(g.r, []int{8080, 8081, 8443, 9000, 3000, 5000, 7070})
	g.dbName = g.module + "_" + pick(g.r, []string{"prod", "stg", "main"})
	g.issue = 1000 + g.r.IntN(8000)
	for i := 0; i < 40; i++ {
		g.commits = append(g.commits, commit{g.hex(40), fmt.Sprintf("%s %s (#%d)", pick(g.r, verbs), pick(g.r, objects), g.issue-40+i)})
	}
	g.deploySHA = g.commits[len(g.commits)-3].sha
	for i := 0; i < 3+g.r.IntN(4); i++ {
		g.pods = append(g.pods, fmt.Sprintf("%s-%s-%s", g.svc, g.alnum(10), g.alnum(5)))
	}
	g.env = []envVar{
		{"DATABASE_URL", fmt.Sprintf("postgres://%s:****@10.%d.%d.%d:5432/%s?sslmode=require", g.module, g.r.IntN(255), g.r.IntN(255), 2+g.r.IntN(250), g.dbName)},
		{"REDIS_URL", fmt.Sprintf("redis://10.%d.%d.%d:6379/%d", g.r.IntN(255), g.r.IntN(255), 2+g.r.IntN(250), g.r.IntN(8))},
		{"UPSTREAM_TIMEOUT_MS", fmt.Sprint(pick(g.r, []int{1500, 2500, 3000, 5000}))},
		{"MAX_POOL_SIZE", fmt.Sprint(pick(g.r, []int{10, 20, 25, 40}))},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", fmt.Sprintf("http://otel-collector.observability.svc:%d", pick(g.r, []int{4317, 4318}))},
		{"FEATURE_" + strings.ToUpper(pick(g.r, []string{"async_refunds", "new_pricing", "bulk_export", "tenant_cache"})), pick(g.r, []string{"true", "false", "canary"})},
		{"WEBHOOK_SIGNING_SECRET", "whsec_" + g.alnum(24)},
		{"LOG_LEVEL", pick(g.r, []string{"info", "debug", "warn"})},
	}
	return g
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func (g *gen) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[g.r.IntN(16)]
	}
	return string(b)
}

func (g *gen) alnum(n int) string {
	const digits = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[g.r.IntN(len(digits))]
	}
	return string(b)
}

func (g *gen) uuid() string {
	h := g.hex(32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
}

func (g *gen) ip() string {
	return fmt.Sprintf("10.%d.%d.%d", g.r.IntN(255), g.r.IntN(255), 2+g.r.IntN(250))
}

func (g *gen) publicIP() string {
	return fmt.Sprintf("%d.%d.%d.%d", pick(g.r, []int{34, 52, 81, 185, 203}), g.r.IntN(255), g.r.IntN(255), 1+g.r.IntN(254))
}

func (g *gen) callID() string {
	g.ids++
	return fmt.Sprintf("call_%s%04d", g.alnum(20), g.ids)
}

// lines scales a line count by OutputScale, with some spread.
func (g *gen) lines(n int) int {
	f := float64(n) * g.o.OutputScale * (0.7 + 0.6*g.r.Float64())
	return max(3, int(f))
}

func (g *gen) clock(h, m, s int) string {
	return fmt.Sprintf("2025-11-%02dT%02d:%02d:%02d.%03dZ", 10+g.r.IntN(8), h%24, m%60, s%60, g.r.IntN(1000))
}

func (g *gen) systemPrompt() string {
	return fmt.Sprintf(`You are an on-call engineering agent for the %s service (namespace %s, public host %s).
You can run shell commands (run_terminal_cmd), read files (read_file), search code (grep_search), edit files (edit_file),
call HTTP endpoints (fetch_url) and run read-only SQL (sql_query). Prefer small, reversible changes. Quote exact error
messages, ids and paths when you report. Never print secrets.`, g.svc, g.ns, g.domain)
}

// progress is an assistant's report between two rounds of a task.
func (g *gen) progress(t task) string {
	h := ""
	if len(t.hints) > 0 {
		h = " The lead so far is `" + pick(g.r, t.hints) + "`."
	}
	return pick(g.r, []string{
		"Quick status: I have reproduced the problem and narrowed it down." + h + " I'll keep going unless you want me to stop.",
		"Here's where I am: the first fix is in, and I'm checking what else depends on it." + h,
		"I found the likely cause." + h + " Next I want to confirm it against the live service before changing anything else.",
	})
}

// interject is what the user says between rounds.
func (g *gen) interject(t task) string {
	if g.users == "rare" {
		return pick(g.r, []string{"continue", "go on", "ok"})
	}
	h := "that"
	if len(t.hints) > 0 {
		h = pick(g.r, t.hints)
	}
	return pick(g.r, []string{
		fmt.Sprintf("Careful with %s, it is shared with the %s team. Don't change its defaults.", h, pick(g.r, services)),
		fmt.Sprintf("FYI the alert fired again at %02d:%02d UTC. Also check %s.", g.r.IntN(24), g.r.IntN(60), h),
		fmt.Sprintf("Keep %s=%s as it is, ops pinned it last week.", g.env[2].name, g.env[2].value),
		fmt.Sprintf("Please link #%d in the commit message when you get there.", g.issue+g.r.IntN(20)),
		fmt.Sprintf("Use port %d for local runs, %d is taken by the proxy.", g.port+1, g.port),
		"ok, makes sense. go ahead",
		fmt.Sprintf("Is %s related to the deploy of %s?", h, g.deploySHA[:7]),
		"Don't touch the migrations folder in this change.",
	})
}
