package triagegen

import (
	"fmt"
	"strings"
)

// root is where the generated product lives.
const root = "/home/dev/quire"

// srcFile is a file of the product.
type srcFile struct {
	path  string   // from the repository root
	lang  string   // kotlin, ruby, rspec, cpp, header, gtest, elixir, exunit
	name  string   // the main type or module: InvoiceMapper, Refund, FxCache
	unit  string   // gradle project, rails model, cpp unit, elixir unit
	pkg   string   // package, namespace or module prefix
	funcs []string // method or function names
	test  *srcFile // its test file
	n     int      // which file of the world it is
	read  bool     // was read once: its identifiers are planted
}

func (f *srcFile) abs() string { return root + "/" + f.path }

// base is the file's base name.
func (f *srcFile) base() string { return f.path[strings.LastIndexByte(f.path, '/')+1:] }

// world is the product: its files and history.
type world struct {
	kt      []*srcFile // Kotlin main sources
	rb      []*srcFile // Rails models, controllers and services
	cpp     []*srcFile // C++ sources
	ex      []*srcFile // Elixir modules
	configs []*srcFile // configuration files
	all     []*srcFile
	used    map[*srcFile]bool // picked as the subject of a task
	branch  map[string]bool
	classes map[string][]string // test classes of a Gradle project
	gtests  []string            // the GoogleTest cases ctest runs
}

type ktModule struct {
	name, pkg   string
	subs, nouns []string
}

var ktModules = []ktModule{
	{"invoicing", "com.quire.invoicing", []string{"mapping", "tax", "finalize", "credit", "numbering"}, []string{"Invoice", "CreditNote", "TaxLine", "LineItem", "InvoiceNumber", "Discount", "Proforma", "Surcharge"}},
	{"ledger", "com.quire.ledger", []string{"posting", "period", "export", "reconcile"}, []string{"LedgerEntry", "Journal", "Period", "TrialBalance", "Posting", "AccountMap", "Reconciliation", "Accrual"}},
	{"payments", "com.quire.payments", []string{"payout", "capture", "dunning", "refund"}, []string{"Payout", "Capture", "DunningStep", "Refund", "Chargeback", "Settlement", "PaymentIntent", "Mandate"}},
	{"api", "com.quire.api", []string{"rest", "auth", "idempotency", "webhooks"}, []string{"RefundRequest", "InvoiceQuery", "ApiKey", "IdempotencyKey", "TenantContext", "WebhookEndpoint", "RateLimit", "Pagination"}},
	{"common", "com.quire.common", []string{"money", "time", "ids", "json"}, []string{"Money", "CurrencyCode", "BusinessDay", "TenantClock", "TypedId", "Percent", "FxRate", "Jurisdiction"}},
}

var ktSuffixes = []string{"Mapper", "Service", "Repository", "Calculator", "Validator", "Scheduler", "Controller", "Client", "Policy", "Formatter", "Listener", "Factory", "Resolver", "Handler"}

var ktMethods = []string{"toLedgerLines", "apply", "resolve", "validate", "post", "finalize", "schedule", "mapLines", "compute", "load", "persist", "publish", "reconcile", "split", "roundLines", "lookup", "render", "handle", "accept", "prorate", "allocate", "settle", "retryFailed", "expire", "lock", "release", "openPeriod", "closePeriod", "convert", "summarize"}

var rbModels = []string{"refund", "customer", "dunning_run", "coupon", "plan", "credit_memo", "payout_batch", "audit_event", "tenant", "export_job", "invoice_note", "price_override", "tax_exemption", "billing_contact", "usage_record", "seat_assignment"}

var rbVerbs = []string{"approve", "export", "sync", "reconcile", "void", "import", "notify", "archive"}

var rbMethods = []string{"window_open?", "approve!", "amount_due", "to_csv", "void!", "display_name", "overdue?", "schedule_next", "apply_credit", "normalize_currency", "recalculate", "locked?", "expire!", "call", "perform", "assign_owner"}

type cppUnit struct{ file, class, suite string }

var cppUnits = []cppUnit{
	{"rounding", "Rounder", "RoundingTest"}, {"tax_table", "TaxTable", "TaxTableTest"}, {"currency", "CurrencyRegistry", "CurrencyTest"},
	{"proration", "Prorator", "ProrationTest"}, {"fx_cache", "FxCache", "FxCacheTest"}, {"money", "Money", "MoneyTest"},
	{"allocation", "Allocator", "AllocationTest"}, {"discount", "DiscountStack", "DiscountTest"}, {"invoice_total", "InvoiceTotals", "InvoiceTotalTest"},
	{"tier_pricing", "TierSchedule", "TierPricingTest"}, {"usage_meter", "UsageMeter", "UsageMeterTest"}, {"calendar", "BillingCalendar", "CalendarTest"},
	{"fx_table", "FxTable", "FxTableTest"}, {"quote", "QuoteBuilder", "QuoteTest"},
}

var cppMethods = []string{"apply", "lookup", "convert", "evict_oldest", "rate_for", "split", "total", "add_line", "normalize", "round_half_even", "insert", "reserve", "days_between", "price_for", "merge", "clamp"}

type exUnit struct{ file, mod string }

var exUnits = []exUnit{
	{"dispatcher", "Dispatcher"}, {"webhook_signer", "WebhookSigner"}, {"retry_policy", "RetryPolicy"}, {"mailer", "Mailer"},
	{"template_renderer", "TemplateRenderer"}, {"delivery_log", "DeliveryLog"}, {"rate_limiter", "RateLimiter"},
	{"endpoint_registry", "EndpointRegistry"}, {"digest_scheduler", "DigestScheduler"}, {"bounce_handler", "BounceHandler"},
	{"payload_builder", "PayloadBuilder"}, {"secret_store", "SecretStore"},
}

var exFuncs = []string{"sign", "deliver", "acquire", "backoff", "render", "record", "lookup", "schedule", "handle_bounce", "build", "fetch_secret", "verify", "enqueue", "next_attempt"}

var configPaths = []string{
	"billing/api/src/main/resources/application.yml",
	"billing/api/src/main/resources/application-staging.yml",
	"billing/gradle/libs.versions.toml",
	"billing/build.gradle.kts",
	"admin/config/database.yml",
	"admin/config/sidekiq.yml",
	"pricing/CMakeLists.txt",
	"notifier/config/runtime.exs",
	"deploy/compose/docker-compose.staging.yml",
	"deploy/systemd/quire-billing.service",
	"deploy/nginx/quire-admin.conf",
}

// Test name pieces: subjects and behaviours.
var testSubjects = []string{"credit note with reversed VAT", "zero amount invoice", "partial refund", "invoice in closed period", "payout batch over limit", "proration across month end", "retried capture", "duplicate webhook delivery", "tenant without tax id", "multi currency invoice", "discount stacked on coupon", "refund after chargeback", "leap day subscription", "negative usage record", "invoice number rollover", "settlement in JPY", "dunning step after grace", "mandate revoked mid cycle", "accrual at fiscal year end", "api key rotated", "idempotency key reuse", "webhook endpoint disabled", "fx rate older than a day", "rounding of half cents", "line item with 3 decimals", "surcharge on card payment", "trial converted to paid", "invoice void after export", "reconciliation with missing entry", "journal with unbalanced lines"}

var testBehaviours = []string{"keeps the sign of each line", "is rejected", "posts one ledger entry", "rounds half even", "uses the tenant clock", "is idempotent", "emits a single event", "returns 409", "keeps original currency", "is skipped by the scheduler", "splits into two payouts", "prorates by days", "retries with backoff", "preserves the invoice number", "reports the period key", "is excluded from export", "throws PeriodClosedException", "caches the rate", "sums to the invoice total", "does not double count tax", "maps to negative lines", "writes an audit event", "honours the grace period", "falls back to the default rate", "locks the period once"}

var gtestCases = []string{"HalfEven", "HalfUp", "NegativeTies", "ZeroAmount", "LargeAmounts", "EvictsOldest", "LookupAfterEvict", "ThreeDecimals", "JpyHasNoMinorUnit", "LeapYear", "MonthEnd", "EmptyTable", "OverlappingRanges", "StackedDiscounts", "SingleTier", "GraduatedTiers", "VolumeTiers", "ConvertsViaUsd", "StaleRate", "Overflow", "UnknownCurrency", "SplitsRemainder", "ReservesCapacity", "MergesAdjacent", "ClampsToZero", "CopyIsIndependent", "MoveLeavesEmpty", "ConcurrentReaders", "DaysBetweenDst", "RejectsNan"}

var gtestQualifiers = []string{"", "Negative", "Positive", "InJpy", "InEur", "WithCache", "AfterReload", "Boundary", "Random", "Twice"}

// Fixed text of outputs, kept here so identifiers are drawn outside it.
var junitFrames = []string{
	"at app//org.junit.jupiter.api.AssertionFailureBuilder.build(AssertionFailureBuilder.java:151)",
	"at app//org.junit.jupiter.api.AssertionFailureBuilder.buildAndThrow(AssertionFailureBuilder.java:132)",
	"at app//org.junit.jupiter.api.AssertEquals.failNotEqual(AssertEquals.java:197)",
	"at app//org.junit.jupiter.api.AssertEquals.assertEquals(AssertEquals.java:182)",
	"at app//org.junit.jupiter.api.Assertions.assertEquals(Assertions.java:1156)",
}

var springFrames = []string{
	"at org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:885) ~[spring-webmvc-6.1.14.jar!/:6.1.14]",
	"at jakarta.servlet.http.HttpServlet.service(HttpServlet.java:658) ~[tomcat-embed-core-10.1.31.jar!/:na]",
	"at org.apache.catalina.core.ApplicationFilterChain.internalDoFilter(ApplicationFilterChain.java:195) ~[tomcat-embed-core-10.1.31.jar!/:na]",
	"at org.apache.catalina.core.ApplicationFilterChain.doFilter(ApplicationFilterChain.java:140) ~[tomcat-embed-core-10.1.31.jar!/:na]",
	"at org.springframework.web.filter.RequestContextFilter.doFilterInternal(RequestContextFilter.java:100) ~[spring-web-6.1.14.jar!/:6.1.14]",
	"at org.springframework.web.filter.OncePerRequestFilter.doFilter(OncePerRequestFilter.java:116) ~[spring-web-6.1.14.jar!/:6.1.14]",
	"at org.apache.catalina.core.StandardWrapperValve.invoke(StandardWrapperValve.java:167) ~[tomcat-embed-core-10.1.31.jar!/:na]",
	"at org.apache.catalina.core.StandardContextValve.invoke(StandardContextValve.java:90) ~[tomcat-embed-core-10.1.31.jar!/:na]",
	"at org.apache.catalina.connector.CoyoteAdapter.service(CoyoteAdapter.java:344) ~[tomcat-embed-core-10.1.31.jar!/:na]",
	"at org.apache.coyote.http11.Http11Processor.service(Http11Processor.java:389) ~[tomcat-embed-core-10.1.31.jar!/:na]",
	"at org.apache.tomcat.util.net.NioEndpoint$SocketProcessor.doRun(NioEndpoint.java:1741) ~[tomcat-embed-core-10.1.31.jar!/:na]",
	"at java.base/java.lang.Thread.run(Thread.java:1583) ~[na:na]",
}

var hikariFrames = []string{
	"at com.mysql.cj.jdbc.exceptions.SQLError.createCommunicationsException(SQLError.java:175) ~[mysql-connector-j-8.4.0.jar!/:8.4.0]",
	"at com.mysql.cj.jdbc.exceptions.SQLExceptionsMapping.translateException(SQLExceptionsMapping.java:64) ~[mysql-connector-j-8.4.0.jar!/:8.4.0]",
	"at com.mysql.cj.jdbc.ConnectionImpl.createNewIO(ConnectionImpl.java:819) ~[mysql-connector-j-8.4.0.jar!/:8.4.0]",
	"at com.mysql.cj.jdbc.ConnectionImpl.<init>(ConnectionImpl.java:440) ~[mysql-connector-j-8.4.0.jar!/:8.4.0]",
	"at com.zaxxer.hikari.pool.PoolBase.newConnection(PoolBase.java:368) ~[HikariCP-5.1.0.jar!/:na]",
	"at com.zaxxer.hikari.pool.PoolBase.newPoolEntry(PoolBase.java:205) ~[HikariCP-5.1.0.jar!/:na]",
	"at com.zaxxer.hikari.pool.HikariPool.createPoolEntry(HikariPool.java:483) ~[HikariCP-5.1.0.jar!/:na]",
	"at com.zaxxer.hikari.pool.HikariPool.checkFailFast(HikariPool.java:571) ~[HikariCP-5.1.0.jar!/:na]",
	"at com.zaxxer.hikari.pool.HikariPool.<init>(HikariPool.java:98) ~[HikariCP-5.1.0.jar!/:na]",
	"at com.zaxxer.hikari.HikariDataSource.getConnection(HikariDataSource.java:111) ~[HikariCP-5.1.0.jar!/:na]",
}

var socketFrames = []string{
	"at java.base/sun.nio.ch.Net.pollConnect(Native Method) ~[na:na]",
	"at java.base/sun.nio.ch.Net.pollConnectNow(Net.java:682) ~[na:na]",
	"at java.base/sun.nio.ch.NioSocketImpl.timedFinishConnect(NioSocketImpl.java:542) ~[na:na]",
	"at java.base/sun.nio.ch.NioSocketImpl.connect(NioSocketImpl.java:592) ~[na:na]",
	"at java.base/java.net.SocksSocketImpl.connect(SocksSocketImpl.java:327) ~[na:na]",
	"at java.base/java.net.Socket.connect(Socket.java:751) ~[na:na]",
	"at com.mysql.cj.protocol.StandardSocketFactory.connect(StandardSocketFactory.java:144) ~[mysql-connector-j-8.4.0.jar!/:8.4.0]",
	"at com.mysql.cj.protocol.a.NativeSocketConnection.connect(NativeSocketConnection.java:53) ~[mysql-connector-j-8.4.0.jar!/:8.4.0]",
}

var gtestFrames = []string{
	"in void testing::internal::HandleSehExceptionsInMethodIfSupported<testing::Test, void>(testing::Test*, void (testing::Test::*)(), char const*) (/home/dev/quire/pricing/build-asan/tests/pricing_tests+0x2d81a3)",
	"in void testing::internal::HandleExceptionsInMethodIfSupported<testing::Test, void>(testing::Test*, void (testing::Test::*)(), char const*) (/home/dev/quire/pricing/build-asan/tests/pricing_tests+0x2cb7f1)",
	"in testing::Test::Run() (/home/dev/quire/pricing/build-asan/tests/pricing_tests+0x26f0e2)",
	"in testing::TestInfo::Run() (/home/dev/quire/pricing/build-asan/tests/pricing_tests+0x270a4c)",
	"in testing::TestSuite::Run() (/home/dev/quire/pricing/build-asan/tests/pricing_tests+0x2716f9)",
	"in testing::internal::UnitTestImpl::RunAllTests() (/home/dev/quire/pricing/build-asan/tests/pricing_tests+0x28f3d0)",
	"in testing::UnitTest::Run() (/home/dev/quire/pricing/build-asan/tests/pricing_tests+0x27d512)",
	"in main (/home/dev/quire/pricing/build-asan/tests/pricing_tests+0x1f0b8e)",
	"in __libc_start_call_main ../sysdeps/nptl/libc_start_call_main.h:58",
	"in __libc_start_main_impl ../csu/libc-start.c:360",
}

var railsBootFrames = []string{
	"/usr/local/bundle/gems/bootsnap-1.18.4/lib/bootsnap/load_path_cache/core_ext/kernel_require.rb:30:in 'Kernel#require'",
	"/usr/local/bundle/gems/railties-7.2.2/lib/rails/engine.rb:689:in 'Kernel#load'",
	"/usr/local/bundle/gems/railties-7.2.2/lib/rails/engine.rb:689:in 'block in Rails::Engine#load_config_initializer'",
	"/usr/local/bundle/gems/activesupport-7.2.2/lib/active_support/notifications.rb:212:in 'ActiveSupport::Notifications.instrument'",
	"/usr/local/bundle/gems/railties-7.2.2/lib/rails/engine.rb:688:in 'Rails::Engine#load_config_initializer'",
	"/usr/local/bundle/gems/railties-7.2.2/lib/rails/engine.rb:642:in 'block (2 levels) in <class:Engine>'",
	"/usr/local/bundle/gems/railties-7.2.2/lib/rails/initializable.rb:32:in 'Rails::Initializable::Initializer#run'",
	"/usr/local/bundle/gems/railties-7.2.2/lib/rails/initializable.rb:61:in 'block in Rails::Initializable#run_initializers'",
	"/usr/local/lib/ruby/3.3.0/tsort.rb:231:in 'block in TSort.tsort_each'",
	"/usr/local/lib/ruby/3.3.0/tsort.rb:353:in 'block (2 levels) in TSort.each_strongly_connected_component_from'",
	"/usr/local/lib/ruby/3.3.0/tsort.rb:434:in 'TSort.each_strongly_connected_component_from'",
	"/usr/local/bundle/gems/railties-7.2.2/lib/rails/initializable.rb:60:in 'Rails::Initializable#run_initializers'",
	"/usr/local/bundle/gems/railties-7.2.2/lib/rails/application.rb:435:in 'Rails::Application#initialize!'",
	"/rails/config/environment.rb:5:in '<main>'",
	"config.ru:3:in 'Kernel#require_relative'",
	"/usr/local/bundle/gems/puma-6.4.3/lib/puma/launcher.rb:196:in 'Puma::Launcher#run'",
	"/usr/local/bundle/gems/railties-7.2.2/lib/rails/commands/server/server_command.rb:41:in 'Rails::Server#start'",
	"bin/rails:4:in '<main>'",
}

var rspecDescribes = []string{"when the capture is older than the refund window", "with a tenant in a closed period", "as a finance admin", "as a support agent", "when the invoice was exported", "with a stacked coupon", "with a currency without minor units", "when the customer has no billing contact", "when the batch is already approved", "for a tenant on the legacy plan", "with an expired price override", "after the dunning run completed"}

var rspecIts = []string{"returns false", "raises an error", "enqueues a sync job", "renders the CSV with headers", "writes an audit event", "redirects to the index", "shows the validation error", "keeps the original amount", "does not change the status", "sends one notification", "marks the record as void", "responds with 422", "returns the amount in cents", "assigns the account manager", "is idempotent"}

// staticText joins the fixed vocabularies.
func staticText() string {
	var b strings.Builder
	for _, xs := range [][]string{ktSuffixes, ktMethods, rbModels, rbVerbs, rbMethods, cppMethods, exFuncs, configPaths, testSubjects, testBehaviours, gtestCases, junitFrames, springFrames, hikariFrames, socketFrames, gtestFrames, rspecDescribes, rspecIts, railsBootFrames, migrations, ktStmts, ktReturns, rbStmts, cppStmts, exStmts, ktImports, logMessages} {
		for _, x := range xs {
			b.WriteString(x)
			b.WriteByte('\n')
		}
	}
	for _, m := range ktModules {
		b.WriteString(strings.Join(m.nouns, "\n") + "\n" + strings.Join(m.subs, "\n") + "\n")
	}
	b.WriteString(systemPrompt)
	return b.String()
}

// newWorld lays out the product's files.
func newWorld(g *gen) *world {
	w := &world{used: map[*srcFile]bool{}, branch: map[string]bool{}, classes: map[string][]string{}}
	add := func(f *srcFile) *srcFile {
		f.n = len(w.all)
		w.all = append(w.all, f)
		return f
	}
	names := map[string]bool{}
	for _, m := range ktModules {
		for _, noun := range m.nouns {
			for _, k := range g.r.Perm(len(ktSuffixes))[:2+g.r.IntN(2)] {
				name := noun + ktSuffixes[k]
				if names[name] {
					continue
				}
				names[name] = true
				sub := m.subs[g.r.IntN(len(m.subs))]
				dir := strings.ReplaceAll(m.pkg+"."+sub, ".", "/")
				f := add(&srcFile{path: "billing/" + m.name + "/src/main/kotlin/" + dir + "/" + name + ".kt", lang: "kotlin", name: name, unit: m.name, pkg: m.pkg + "." + sub, funcs: pickN(g, ktMethods, 4+g.r.IntN(3))})
				f.test = add(&srcFile{path: "billing/" + m.name + "/src/test/kotlin/" + dir + "/" + name + "Test.kt", lang: "kotlin-test", name: name + "Test", unit: m.name, pkg: f.pkg})
				w.kt = append(w.kt, f)
			}
		}
	}
	for _, m := range rbModels {
		class := camel(m)
		f := add(&srcFile{path: "admin/app/models/" + m + ".rb", lang: "ruby", name: class, unit: m, funcs: pickN(g, rbMethods, 3+g.r.IntN(3))})
		f.test = add(&srcFile{path: "admin/spec/models/" + m + "_spec.rb", lang: "rspec", name: class, unit: m})
		w.rb = append(w.rb, f)
		pl := m + "s"
		c := add(&srcFile{path: "admin/app/controllers/admin/" + pl + "_controller.rb", lang: "ruby", name: "Admin::" + camel(pl) + "Controller", unit: m, funcs: []string{"index", "show", "update", "export"}})
		c.test = add(&srcFile{path: "admin/spec/requests/admin/" + pl + "_spec.rb", lang: "rspec", name: "Admin::" + camel(pl), unit: m})
		w.rb = append(w.rb, c)
		if g.chance(0.6) {
			v := rbVerbs[g.r.IntN(len(rbVerbs))]
			s := add(&srcFile{path: "admin/app/services/" + pl + "/" + v + ".rb", lang: "ruby", name: camel(pl) + "::" + camel(v), unit: m, funcs: []string{"call", "initialize"}})
			s.test = add(&srcFile{path: "admin/spec/services/" + pl + "/" + v + "_spec.rb", lang: "rspec", name: camel(pl) + "::" + camel(v), unit: m})
			w.rb = append(w.rb, s)
		}
	}
	for _, u := range cppUnits {
		f := add(&srcFile{path: "pricing/src/" + u.file + ".cc", lang: "cpp", name: u.class, unit: u.file, pkg: u.suite, funcs: pickN(g, cppMethods, 4+g.r.IntN(3))})
		add(&srcFile{path: "pricing/include/pricing/" + u.file + ".h", lang: "header", name: u.class, unit: u.file, funcs: f.funcs})
		f.test = add(&srcFile{path: "pricing/tests/" + u.file + "_test.cc", lang: "gtest", name: u.class, unit: u.file, pkg: u.suite})
		w.cpp = append(w.cpp, f)
	}
	for _, u := range exUnits {
		f := add(&srcFile{path: "notifier/lib/notifier/" + u.file + ".ex", lang: "elixir", name: "Notifier." + u.mod, unit: u.file, funcs: pickN(g, exFuncs, 3+g.r.IntN(3))})
		f.test = add(&srcFile{path: "notifier/test/notifier/" + u.file + "_test.exs", lang: "exunit", name: "Notifier." + u.mod + "Test", unit: u.file})
		w.ex = append(w.ex, f)
	}
	for _, p := range configPaths {
		w.configs = append(w.configs, add(&srcFile{path: p, lang: "config", name: p[strings.LastIndexByte(p, '/')+1:]}))
	}
	return w
}

// subject picks a file of xs not yet the subject of a task (any, once
// all have been).
func (w *world) subject(g *gen, xs []*srcFile) *srcFile {
	var free []*srcFile
	for _, f := range xs {
		if !w.used[f] {
			free = append(free, f)
		}
	}
	if len(free) == 0 {
		free = xs
	}
	f := free[g.r.IntN(len(free))]
	w.used[f] = true
	return f
}

// others picks n files of xs other than f.
func (w *world) others(g *gen, xs []*srcFile, f *srcFile, n int) []*srcFile {
	var out []*srcFile
	for _, k := range g.r.Perm(len(xs)) {
		if xs[k] != f && len(out) < n {
			out = append(out, xs[k])
		}
	}
	return out
}

// config returns the configuration file whose path ends with suffix.
func (w *world) config(suffix string) *srcFile {
	for _, f := range w.configs {
		if strings.HasSuffix(f.path, suffix) {
			return f
		}
	}
	panic("triagegen: no config " + suffix)
}

func pickN(g *gen, xs []string, n int) []string {
	out := make([]string, 0, n)
	for _, k := range g.r.Perm(len(xs))[:n] {
		out = append(out, xs[k])
	}
	return out
}

// camel turns snake_case into CamelCase.
func camel(s string) string {
	var b strings.Builder
	for _, p := range strings.Split(s, "_") {
		if p != "" {
			b.WriteString(strings.ToUpper(p[:1]) + p[1:])
		}
	}
	return b.String()
}

// Alphabets of random identifiers.
const (
	hexDigits  = "0123456789abcdef"
	crockford  = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	lowerAlnum = "abcdefghijkmnpqrstuvwxyz23456789"
	letters    = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
)

// rs returns n random characters of alphabet.
func (g *gen) rs(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

func (g *gen) hex(n int) string { return g.rs(hexDigits, n) }

func (g *gen) uuid() string {
	h := g.hex(32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-" + string("89ab"[g.r.IntN(4)]) + h[17:20] + "-" + h[20:]
}

// ulid returns a ULID-like id of the session's time, lower case.
func (g *gen) ulid() string { return strings.ToLower("01J" + g.rs(crockford, 23)) }

// Makers of identifiers, for plant and fill.
func (g *gen) mkID(prefix string) func() string {
	return func() string { return prefix + "_" + g.ulid()[:14+g.r.IntN(6)] }
}
func (g *gen) mkUUID() func() string { return g.uuid }
func (g *gen) mkHash(n int) func() string {
	return func() string { return g.hex(n) }
}
func (g *gen) mkCode() func() string {
	return func() string { return fmt.Sprintf("QB-%d", 1000+g.r.IntN(8999)) }
}
func (g *gen) mkTicket() func() string {
	return func() string {
		return fmt.Sprintf("%s-%d", pick(g, "BILL", "OPS", "FIN", "SUP", "PLAT", "INC"), 100+g.r.IntN(9800))
	}
}
func (g *gen) mkSite(base string, lo, hi int) func() string {
	return func() string { return fmt.Sprintf("%s:%d", base, lo+g.r.IntN(hi-lo+1)) }
}
func (g *gen) mkSiteCol(base string) func() string {
	return func() string { return fmt.Sprintf("%s:%d:%d", base, 20+g.r.IntN(300), 3+g.r.IntN(40)) }
}
func (g *gen) mkHostPort(roles ...string) func() string {
	return func() string {
		role := roles[g.r.IntN(len(roles))]
		env := pick(g, "stg", "stg", "prd", "ops", "dr")
		return fmt.Sprintf("%s-%d.%s.quire.internal:%d", role, 1+g.r.IntN(40), env, pick(g, 3306, 3307, 3309, 6379, 6380, 7443, 8443, 9092, 8081, 9464, 4000, 5432))
	}
}
func (g *gen) mkDBHost() func() string {
	return func() string {
		return fmt.Sprintf("mysql-billing-%02d.stg.quire.internal:%d", 1+g.r.IntN(60), pick(g, 3306, 3307, 3309))
	}
}
func (g *gen) mkVersion() func() string {
	return func() string { return fmt.Sprintf("3.%d.%d", 38+g.r.IntN(30), g.r.IntN(25)) }
}
func (g *gen) mkTestName() func() string {
	return func() string {
		return testSubjects[g.r.IntN(len(testSubjects))] + " " + testBehaviours[g.r.IntN(len(testBehaviours))] + "()"
	}
}
func (g *gen) mkGtest(suite string) func() string {
	return func() string {
		return suite + "." + gtestCases[g.r.IntN(len(gtestCases))] + gtestQualifiers[g.r.IntN(len(gtestQualifiers))]
	}
}
func (g *gen) mkEnv() func() string {
	return func() string {
		return "QUIRE_" + pick(g, "LEDGER", "FX", "PAYOUT", "DUNNING", "WEBHOOK", "EXPORT", "REFUND", "TAX") + "_" +
			pick(g, "FLUSH", "CACHE", "RETRY", "GRACE", "BATCH", "LOCK", "WINDOW", "POOL") + "_" +
			pick(g, "TTL_SECONDS", "INTERVAL_MS", "LIMIT", "TIMEOUT_MS", "SIZE", "DAYS") + fmt.Sprintf("_V%d", 2+g.r.IntN(8))
	}
}
func (g *gen) mkKey(prefix string) func() string {
	return func() string {
		return prefix + "." + pick(g, "ledger", "fx", "payout", "dunning", "webhooks", "export", "refunds", "tax", "periods") + "." +
			pick(g, "flush", "cache", "retry", "grace", "batch", "lock", "window", "pool", "sign") + "-" +
			pick(g, "ttl", "interval", "limit", "timeout", "size", "days", "mode", "budget") + fmt.Sprintf("-%s", g.rs("abcdefghkmnpqrstuvwxyz", 3))
	}
}

// mkURLNum makes a URL ending in a number of n digits, then tail.
func (g *gen) mkURLNum(prefix string, n int, tail string) func() string {
	return func() string { return prefix + fmt.Sprint(g.between(pow10(n-1), pow10(n)-1)) + tail }
}

func pow10(n int) int {
	p := 1
	for range n {
		p *= 10
	}
	return p
}

func (g *gen) mkURL(host string, segs ...string) func() string {
	return func() string {
		return fmt.Sprintf("https://%s/%s/%s", host, segs[g.r.IntN(len(segs))], g.rs(lowerAlnum, 10+g.r.IntN(6)))
	}
}
