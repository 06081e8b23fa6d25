package triagegen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// This file writes the contents of the product's files as a read prints
// them. A file's text comes from its own random source, so two reads of
// it agree; identifiers are planted in it the first time it is read, and
// a later read shows filler in their place.

// slotFn returns an identifier for a place of a file's text: a passing
// label on the first read, filler afterwards.
type slotFn func(kind string, mk func() string) string

func (g *gen) fileRand(f *srcFile) *rand.Rand {
	return rand.New(rand.NewPCG(g.seed*0x9e3779b97f4a7c15+uint64(f.n), uint64(f.n)^0x5eed))
}

// readFile writes f as read_file prints it: numbered lines.
func (g *gen) readFile(f *srcFile, o *out) {
	first := !f.read
	f.read = true
	slot := func(kind string, mk func() string) string {
		if first {
			return g.passID(kind, mk)
		}
		return g.fill(mk)
	}
	r := g.fileRand(f)
	n := int(float64(60+r.IntN(120)) * g.sc() * 0.7)
	var lines []string
	switch f.lang {
	case "kotlin":
		lines = ktSource(r, f, slot, n)
	case "kotlin-test":
		lines = ktTestSource(g, r, f, n)
	case "ruby":
		lines = rbSource(r, f, slot, n)
	case "rspec":
		lines = rspecSource(g, r, f, n)
	case "cpp", "header":
		lines = cppSource(r, f, slot, n)
	case "gtest":
		lines = gtestSource(g, r, f, n)
	case "elixir":
		lines = exSource(r, f, slot, n)
	case "exunit":
		lines = exunitSource(g, r, f, n)
	default:
		lines = g.configSource(r, f, slot)
	}
	for i, l := range lines {
		o.addf("%6d\t%s", i+1, l)
	}
}

func rpick(r *rand.Rand, xs []string) string { return xs[r.IntN(len(xs))] }

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

// expand fills a statement template: {v} a variable, {T} a type, {m} a
// metric, {f} a field, and indents every line of it.
func expand(tmpl, indent string, rep *strings.Replacer) []string {
	var out []string
	for _, l := range strings.Split(rep.Replace(tmpl), "\n") {
		if l == "" {
			out = append(out, "")
			continue
		}
		out = append(out, indent+l)
	}
	return out
}

var ktImports = []string{
	"import com.quire.common.money.Money", "import com.quire.common.money.CurrencyCode", "import com.quire.common.time.TenantClock",
	"import com.quire.common.ids.TypedId", "import com.quire.ledger.posting.LedgerLine", "import java.math.BigDecimal",
	"import java.math.RoundingMode", "import java.time.Instant", "import java.time.LocalDate", "import org.slf4j.LoggerFactory",
	"import org.springframework.stereotype.Service", "import org.springframework.transaction.annotation.Transactional",
	"import io.micrometer.core.instrument.MeterRegistry", "import org.springframework.jdbc.core.JdbcTemplate",
	"import com.fasterxml.jackson.databind.ObjectMapper", "import kotlinx.coroutines.flow.Flow",
}

var ktStmts = []string{
	"val total = {v}.lines.fold(Money.zero({v}.currency)) { acc, line -> acc + line.amount }",
	"require({v}.currency == currency) { \"currency mismatch: ${{v}.currency} != $currency\" }",
	"if ({v}.status == Status.VOID) return emptyList()",
	"log.debug(\"processing {} lines for {}\", {v}.lines.size, {v}.id)",
	"val rounded = amount.setScale(2, RoundingMode.HALF_EVEN)",
	"val period = periods.openPeriodFor({v}.tenantId, clock.today())",
	"check(period.isOpen) { \"period ${period.key} is closed\" }",
	"val rate = taxTable.rateFor({v}.jurisdiction, {v}.issuedOn)",
	"val existing = repository.findBySourceId({v}.id) ?: return null",
	"events.publish({T}Changed({v}.id, clock.instant()))",
	"meters.counter(\"{m}\", \"tenant\", {v}.tenantId.value).increment()",
	"val key = IdempotencyKey.of({v}.tenantId, {v}.externalRef)",
	"when ({v}.kind) {\n    Kind.STANDARD -> lines += standardLines({v})\n    Kind.CREDIT -> lines += creditLines({v})\n    Kind.PROFORMA -> return emptyList()\n}",
	"for (line in {v}.lines) {\n    if (line.amount.isZero()) continue\n    out += LedgerLine(account = accounts.revenueFor(line.sku), amount = line.amount, memo = line.description)\n}",
	"val {f} = {v}.{f} ?: throw IllegalArgumentException(\"{f} missing on ${{v}.id}\")",
	"jdbc.update(\n    \"update {m} set status = ?, updated_at = ? where id = ?\",\n    {v}.status.name, clock.instant(), {v}.id.value,\n)",
	"return {v}.copy(status = Status.POSTED, postedAt = clock.instant())",
	"val batches = {v}.lines.chunked(BATCH_SIZE)",
	"retry(times = 3, backoff = Duration.ofMillis(200)) { client.send({v}) }",
	"if (!{v}.requiresTax) {\n    return {v}.lines.map { it.copy(tax = Money.zero(it.amount.currency)) }\n}",
	"val net = gross.minus(discounts.sumOf { it.amount }).coerceAtLeast(BigDecimal.ZERO)",
	"log.info(\"{T} {} finalized in {} ms\", {v}.id, elapsed.toMillis())",
	"val sorted = {v}.lines.sortedWith(compareBy({ it.position }, { it.sku }))",
	"return Result.success({v})",
}

var ktReturns = []string{
	"return {v}.lines.map { line -> line.copy(amount = line.amount.negate()) }",
	"return {v}.copy(status = Status.POSTED, postedAt = clock.instant())",
	"return Result.success({v})",
	"return out",
}

func ktSource(r *rand.Rand, f *srcFile, slot slotFn, n int) []string {
	noun := strings.TrimSuffix(f.name, suffixOf(f.name))
	rep := strings.NewReplacer("{v}", lowerFirst(noun), "{T}", noun, "{m}", strings.ToLower(noun)+"s", "{f}", rpick(r, []string{"dueDate", "tenantId", "externalRef", "jurisdiction", "currency", "issuedOn"}))
	l := []string{"package " + f.pkg, ""}
	for _, k := range r.Perm(len(ktImports))[:6+r.IntN(5)] {
		l = append(l, ktImports[k])
	}
	l = append(l, "", "/**", " * "+rpick(r, []string{"Maps finalized documents to ledger lines.", "Applies the tenant's rounding and tax rules.", "Owns the lifecycle of the aggregate; called from the API and the schedulers.", "Thin wrapper over the repository that adds metrics and retries."}), " */")
	l = append(l, "@Service", "class "+f.name+"(", "    private val repository: "+noun+"Repository,", "    private val clock: TenantClock,", "    private val meters: MeterRegistry,", ") {",
		"    private val log = LoggerFactory.getLogger("+f.name+"::class.java)", "")
	for i := 0; len(l) < n-8; i++ {
		fn := f.funcs[i%len(f.funcs)]
		if i >= len(f.funcs) {
			fn += rpick(r, []string{"Batch", "ForTenant", "Legacy", "Internal", "V2"})
		}
		if r.IntN(3) == 0 {
			l = append(l, "    @Transactional")
		}
		l = append(l, fmt.Sprintf("    fun %s(%s: %s): %s {", fn, lowerFirst(noun), noun, rpick(r, []string{"List<LedgerLine>", noun, "Unit", "Money", "Result<" + noun + ">"})))
		for range 3 + r.IntN(6) {
			st := rpick(r, ktStmts)
			for strings.HasPrefix(st, "return") {
				st = rpick(r, ktStmts)
			}
			l = append(l, expand(st, "        ", rep)...)
		}
		if r.IntN(2) == 0 {
			l = append(l, expand(rpick(r, ktReturns), "        ", rep)...)
		}
		l = append(l, "    }", "")
	}
	l = append(l, "    private companion object {", fmt.Sprintf("        const val BATCH_SIZE = %d", 50*(1+r.IntN(8))))
	switch r.IntN(4) {
	case 0:
		l = append(l, fmt.Sprintf("        const val RATES_ENDPOINT = %q", slot("url", func() string { return mkURLr(r, "fx-rates.stg.quire.internal:8443", "v2/rates", "v2/latest") })))
	case 1:
		l = append(l, fmt.Sprintf("        const val LOCKED_CODE = %q // returned to clients when the period is locked", slot("code", codeFrom(r))))
	case 2:
		l = append(l, fmt.Sprintf("        // Per-line rounding since %s; see the ledger ADR before changing it.", slot("hash", hexFrom(r, 10))))
	}
	l = append(l, "    }", "}")
	return l
}

func suffixOf(name string) string {
	for _, s := range ktSuffixes {
		if strings.HasSuffix(name, s) {
			return s
		}
	}
	return ""
}

func ktTestSource(g *gen, r *rand.Rand, f *srcFile, n int) []string {
	subject := strings.TrimSuffix(f.name, "Test")
	l := []string{"package " + f.pkg, "", "import io.mockk.every", "import io.mockk.mockk", "import org.junit.jupiter.api.Assertions.assertEquals",
		"import org.junit.jupiter.api.Test", "import org.junit.jupiter.api.assertThrows", "", "class " + f.name + " {",
		"    private val clock = FixedTenantClock(\"2024-10-31T23:59:00Z\")", "    private val subject = " + subject + "(mockk(relaxed = true), clock, SimpleMeterRegistry())", ""}
	for len(l) < n-2 {
		name := strings.TrimSuffix(g.fill(g.mkTestName()), "()")
		l = append(l, "    @Test", "    fun `"+name+"`() {",
			"        val input = fixtures."+rpick(r, []string{"invoice", "creditNote", "payout", "refund", "journal"})+"(currency = \""+rpick(r, []string{"EUR", "USD", "JPY", "GBP", "CHF"})+"\")",
			"        val result = subject."+rpick(r, ktMethods)+"(input)",
			fmt.Sprintf("        assertEquals(%d, result.size)", 1+r.IntN(4)),
			"    }", "")
	}
	return append(l, "}")
}

var rbStmts = []string{
	"return false if captured_at.blank?",
	"captured_at > WINDOW.ago",
	"raise ArgumentError, \"amount must be positive\" unless amount_cents.positive?",
	"update!(status: :approved, approved_at: Time.current, approved_by: Current.user)",
	"AuditEvent.record!(subject: self, action: :{v}, actor: Current.user)",
	"SyncJob.perform_later(id)",
	"Money.new(amount_cents, currency).format",
	"tenant.billing_contacts.primary&.email || tenant.owner_email",
	"with_lock do\n  return if void?\n  update!(status: :void)\nend",
	"CSV.generate(headers: true) do |csv|\n  csv << HEADERS\n  rows.find_each { |r| csv << r.values_at(*HEADERS) }\nend",
	"scope = scope.where(tenant_id: params[:tenant_id]) if params[:tenant_id].present?",
	"@{v}s = policy_scope({T}).order(created_at: :desc).page(params[:page])",
	"render json: {v}, status: :ok",
	"redirect_to admin_{v}s_path, notice: t(\".updated\")",
	"Rails.logger.info(\"[{v}] #{id} recalculated in #{elapsed.round(1)}ms\")",
	"items.sum(&:amount_cents) - credits.sum(:amount_cents)",
	"next if line.zero?",
	"I18n.with_locale(tenant.locale) { render_pdf }",
}

func rbSource(r *rand.Rand, f *srcFile, slot slotFn, n int) []string {
	v := f.unit
	rep := strings.NewReplacer("{v}", v, "{T}", camel(v))
	l := []string{"# frozen_string_literal: true", ""}
	if strings.Contains(f.path, "/controllers/") {
		l = append(l, "module Admin", "  class "+strings.TrimPrefix(f.name, "Admin::")+" < BaseController", "    before_action :set_"+v+", only: %i[show update]", "")
	} else {
		l = append(l, "class "+f.name+" < ApplicationRecord", "  belongs_to :tenant", "  has_many :audit_events, as: :subject, dependent: :destroy", "",
			"  validates :amount_cents, numericality: { greater_than_or_equal_to: 0 }", "  validates :currency, inclusion: { in: Currency::SUPPORTED }", "",
			"  scope :pending, -> { where(status: \"pending\") }", "")
		switch r.IntN(3) {
		case 0:
			l = append(l, fmt.Sprintf("  EXPORT_BUCKET = %q", slot("url", func() string { return "s3://quire-admin-exports-" + rsr(r, lowerAlnum, 8) + "/" + v })), "")
		case 1:
			l = append(l, fmt.Sprintf("  LEGACY_TENANTS = %%w[%s].freeze", slot("id", idFrom(r, "tn"))), "")
		}
	}
	ind := "  "
	if strings.HasPrefix(l[2], "module") {
		ind = "    "
	}
	for i := 0; len(l) < n-3; i++ {
		fn := f.funcs[i%len(f.funcs)]
		if i >= len(f.funcs) {
			fn = strings.TrimRight(fn, "?!") + rpick(r, []string{"_for_export", "_legacy", "_in_cents", "_later"})
		}
		l = append(l, ind+"def "+fn)
		for range 2 + r.IntN(5) {
			l = append(l, expand(rpick(r, rbStmts), ind+"  ", rep)...)
		}
		l = append(l, ind+"end", "")
	}
	if ind == "    " {
		l = append(l, "  end")
	}
	return append(l, "end")
}

func rspecSource(g *gen, r *rand.Rand, f *srcFile, n int) []string {
	l := []string{"# frozen_string_literal: true", "", "require \"rails_helper\"", "", "RSpec.describe " + f.name + " do",
		"  let(:tenant) { create(:tenant, currency: \"EUR\") }", "  let(:" + f.unit + ") { create(:" + f.unit + ", tenant:) }", ""}
	for len(l) < n-2 {
		l = append(l, "  context \""+rpick(r, rspecDescribes)+"\" do", "    before { travel_to Time.zone.parse(\"2024-10-31 23:59\") }", "")
		for range 2 + r.IntN(3) {
			l = append(l, "    it \""+rpick(r, rspecIts)+"\" do", "      expect("+f.unit+"."+strings.TrimRight(rpick(r, rbMethods), "?!")+").to "+rpick(r, []string{"be(false)", "eq(1250)", "be_present", "have_enqueued_job(SyncJob)", "change(AuditEvent, :count).by(1)"}), "    end", "")
		}
		l = append(l, "  end", "")
	}
	return append(l, "end")
}

var cppStmts = []string{
	"if (amount.minor_units() == 0) return Money::zero(amount.currency());",
	"const auto it = entries_.find(std::string{code});",
	"if (it == entries_.end()) return std::nullopt;",
	"std::lock_guard<std::mutex> lock(mu_);",
	"auto scaled = static_cast<__int128>(value) * ratio.num / ratio.den;",
	"const int64_t rem = value % kScale;",
	"return Money{rounded, amount.currency()};",
	"entries_.erase(oldest);",
	"for (const auto& line : lines) {\n  total += line.amount;\n}",
	"assert(den != 0 && \"ratio with zero denominator\");",
	"if (std::isnan(rate)) throw std::invalid_argument(\"nan rate\");",
	"lru_.splice(lru_.begin(), lru_, it->second.pos);",
	"const auto days = std::chrono::duration_cast<days_t>(to - from).count();",
	"tiers_.reserve(tiers_.size() + other.tiers_.size());",
	"std::sort(tiers_.begin(), tiers_.end(), [](const Tier& a, const Tier& b) { return a.from < b.from; });",
	"return round_half_even(scaled, kScale);",
}

func cppSource(r *rand.Rand, f *srcFile, slot slotFn, n int) []string {
	l := []string{"// Copyright 2024 Quire. All rights reserved.", ""}
	if f.lang == "header" {
		l = append(l, "#pragma once", "", "#include <cstdint>", "#include <optional>", "#include <string_view>", "", "#include \"pricing/money.h\"", "", "namespace pricing {", "", "class "+f.name+" {", " public:")
		for _, fn := range f.funcs {
			l = append(l, fmt.Sprintf("  %s %s(%s) const;", rpick(r, []string{"Money", "std::optional<Rate>", "int64_t", "void", "bool"}), fn, rpick(r, []string{"const Money& amount", "std::string_view code", "Ratio ratio", "const Line& line", ""})))
		}
		l = append(l, "", " private:", "  mutable std::mutex mu_;", "  std::unordered_map<std::string, Entry> entries_;", "  std::list<std::string> lru_;", "};", "", "}  // namespace pricing")
		return l
	}
	l = append(l, "#include \"pricing/"+f.unit+".h\"", "", "#include <algorithm>", "#include <cassert>", "#include <cmath>", "#include <mutex>", "#include <stdexcept>", "", "namespace pricing {", "namespace {", "")
	l = append(l, fmt.Sprintf("constexpr int64_t kScale = %d;", []int{100, 1000, 10000}[r.IntN(3)]))
	switch r.IntN(3) {
	case 0:
		l = append(l, fmt.Sprintf("constexpr std::string_view kRatesHost = %q;", slot("hostport", func() string { return fmt.Sprintf("fx-rates-%d.prd.quire.internal:%d", 1+r.IntN(9), 7000+r.IntN(999)) })))
	case 1:
		l = append(l, "// Table layout checksum: sha256:"+slot("hash", hexFrom(r, 16)))
	}
	l = append(l, "", "}  // namespace", "")
	for i := 0; len(l) < n-2; i++ {
		fn := f.funcs[i%len(f.funcs)]
		if i >= len(f.funcs) {
			fn += rpick(r, []string{"_slow", "_locked", "_v2", "_unchecked"})
		}
		l = append(l, fmt.Sprintf("%s %s::%s(%s) const {", rpick(r, []string{"Money", "std::optional<Rate>", "int64_t", "void", "bool"}), f.name, fn, rpick(r, []string{"const Money& amount", "std::string_view code", "Ratio ratio", "const Line& line"})))
		for range 3 + r.IntN(5) {
			l = append(l, expand(rpick(r, cppStmts), "  ", strings.NewReplacer())...)
		}
		l = append(l, "}", "")
	}
	return append(l, "}  // namespace pricing")
}

func gtestSource(g *gen, r *rand.Rand, f *srcFile, n int) []string {
	l := []string{"#include \"pricing/" + f.unit + ".h\"", "", "#include <gtest/gtest.h>", "", "namespace pricing {", "namespace {", ""}
	for len(l) < n-3 {
		name := strings.TrimPrefix(g.fill(g.mkGtest(f.pkg)), f.pkg+".")
		l = append(l, "TEST("+f.pkg+", "+name+") {", "  "+f.name+" subject;",
			fmt.Sprintf("  const auto got = subject.%s(Money::from_minor(%d, \"%s\"));", rpick(r, cppMethods), r.IntN(100000)-50000, rpick(r, []string{"EUR", "USD", "JPY"})),
			fmt.Sprintf("  EXPECT_EQ(got.minor_units(), %d);", r.IntN(100000)-50000), "}", "")
	}
	return append(l, "}  // namespace", "}  // namespace pricing")
}

var exStmts = []string{
	"with {:ok, endpoint} <- EndpointRegistry.lookup(event.endpoint_id),\n     {:ok, body} <- PayloadBuilder.build(event) do\n  deliver_to(endpoint, body)\nend",
	"Logger.info(\"delivered\", event_id: event.id, attempt: attempt)",
	"ts = System.os_time(:second)",
	":crypto.mac(:hmac, :sha256, secret, \"#{ts}.#{body}\") |> Base.encode16(case: :lower)",
	"case Req.post(url, body: body, headers: headers, receive_timeout: 5_000) do\n  {:ok, %Req.Response{status: status}} when status in 200..299 -> :ok\n  {:ok, %Req.Response{status: status}} -> {:error, {:http, status}}\n  {:error, reason} -> {:error, reason}\nend",
	"delay = min(@max_delay_ms, @base_delay_ms * Integer.pow(2, attempt))",
	"GenServer.call(__MODULE__, {:acquire, key}, 5_000)",
	"Repo.insert_all(DeliveryLog, rows, on_conflict: :nothing)",
	":telemetry.execute([:notifier, :delivery, :stop], %{duration: duration}, %{status: status})",
	"Enum.reduce(attempts, 0, fn a, acc -> acc + a.duration_ms end)",
	"{:noreply, %{state | tokens: state.tokens - 1}}",
}

func exSource(r *rand.Rand, f *srcFile, slot slotFn, n int) []string {
	l := []string{"defmodule " + f.name + " do", "  @moduledoc \"\"\"", "  " + rpick(r, []string{"Signs and delivers webhook payloads.", "Token bucket per endpoint.", "Backoff schedule for failed deliveries.", "Renders e-mail templates per tenant locale."}), "  \"\"\"", "", "  require Logger", "", "  alias Notifier.{EndpointRegistry, PayloadBuilder, Repo}", ""}
	l = append(l, fmt.Sprintf("  @base_delay_ms %d", 250*(1+r.IntN(4))), fmt.Sprintf("  @max_delay_ms %d", 60_000*(1+r.IntN(5))))
	switch r.IntN(3) {
	case 0:
		l = append(l, fmt.Sprintf("  @ingest_url %q", slot("url", func() string { return mkURLr(r, "hooks.quire.internal:8443", "v1/deliveries", "v1/bounces") })))
	case 1:
		l = append(l, fmt.Sprintf("  @signing_key_id %q", slot("id", idFrom(r, "whkid"))))
	}
	l = append(l, "")
	for i := 0; len(l) < n-2; i++ {
		fn := f.funcs[i%len(f.funcs)]
		if i >= len(f.funcs) {
			fn += rpick(r, []string{"_async", "_batch", "_legacy"})
		}
		l = append(l, "  @spec "+fn+"(map(), keyword()) :: :ok | {:error, term()}", "  def "+fn+"(event, opts \\\\ []) do")
		for range 2 + r.IntN(3) {
			l = append(l, expand(rpick(r, exStmts), "    ", strings.NewReplacer())...)
		}
		l = append(l, "  end", "")
	}
	return append(l, "end")
}

func exunitSource(g *gen, r *rand.Rand, f *srcFile, n int) []string {
	l := []string{"defmodule " + f.name + " do", "  use Notifier.DataCase, async: true", "", "  alias " + strings.TrimSuffix(f.name, "Test"), ""}
	for len(l) < n-1 {
		l = append(l, "  test \""+rpick(r, testSubjects)+" "+rpick(r, testBehaviours)+"\" do", "    event = build(:event, endpoint_id: \"ep_test\")",
			"    assert :ok = "+strings.TrimSuffix(f.name, "Test")+"."+rpick(r, exFuncs)+"(event, [])", "  end", "")
	}
	return append(l, "end")
}

// configSource writes the configuration files.
func (g *gen) configSource(r *rand.Rand, f *srcFile, slot slotFn) []string {
	db := func() string {
		return slot("hostport", func() string {
			return fmt.Sprintf("mysql-billing-%d.stg.quire.internal:%d", 1+r.IntN(9), 3300+r.IntN(99))
		})
	}
	switch {
	case strings.HasSuffix(f.path, "application.yml"), strings.HasSuffix(f.path, "application-staging.yml"):
		l := []string{"spring:", "  application:", "    name: billing-api", "  datasource:", "    url: jdbc:mysql://" + db() + "/billing?useSSL=true&serverTimezone=UTC",
			"    username: ${BILLING_DB_USER}", "    password: ${BILLING_DB_PASSWORD}", "    hikari:", "      maximum-pool-size: 10", "      connection-timeout: 30000",
			"  data:", "    redis:", "      host: redis-ratelimit", "      port: 6380", "  flyway:", "    enabled: true", "    locations: classpath:db/migration", "",
			"server:", "  port: 8080", "  shutdown: graceful", "", "management:", "  endpoints:", "    web:", "      exposure:", "        include: health,info,prometheus",
			"  endpoint:", "    health:", "      probes:", "        enabled: true", "", "quire:", "  fx:", "    base-url: " + slot("url", func() string { return mkURLr(r, "fx-rates.stg.quire.internal:8443", "v2", "v3") }),
			"  ledger:", "    flush-interval: 5s", "    period-lock-grace: 2h", "  webhooks:", "    signing-secret: ${WEBHOOK_SIGNING_SECRET}"}
		for i := 0; len(l) < g.scale(30); i++ {
			l = append(l, "  "+rpick(r, []string{"payouts", "dunning", "exports", "refunds", "tax"})+fmt.Sprintf("-%d:", i), "    enabled: "+rpick(r, []string{"true", "false"}), fmt.Sprintf("    batch-size: %d", 50*(1+r.IntN(10))), fmt.Sprintf("    timeout: %ds", 5+r.IntN(55)))
		}
		return l
	case strings.HasSuffix(f.path, "libs.versions.toml"):
		l := []string{"[versions]", "kotlin = \"2.0.21\"", "spring-boot = \"3.3.5\"", "junit = \"5.11.3\"", "mockk = \"1.13.13\"", "jackson = \"2.17.2\"", "flyway = \"10.20.1\"", "mysql-connector = \"8.4.0\"", "testcontainers = \"1.20.3\"", "",
			"[libraries]", "spring-boot-starter-web = { module = \"org.springframework.boot:spring-boot-starter-web\", version.ref = \"spring-boot\" }",
			"spring-boot-starter-jdbc = { module = \"org.springframework.boot:spring-boot-starter-jdbc\", version.ref = \"spring-boot\" }",
			"flyway-mysql = { module = \"org.flywaydb:flyway-mysql\", version.ref = \"flyway\" }", "mysql-connector-j = { module = \"com.mysql:mysql-connector-j\", version.ref = \"mysql-connector\" }",
			"junit-jupiter = { module = \"org.junit.jupiter:junit-jupiter\", version.ref = \"junit\" }", "mockk = { module = \"io.mockk:mockk\", version.ref = \"mockk\" }",
			"testcontainers-mysql = { module = \"org.testcontainers:mysql\", version.ref = \"testcontainers\" }", "", "[plugins]",
			"kotlin-jvm = { id = \"org.jetbrains.kotlin.jvm\", version.ref = \"kotlin\" }", "kotlin-spring = { id = \"org.jetbrains.kotlin.plugin.spring\", version.ref = \"kotlin\" }",
			"spring-boot = { id = \"org.springframework.boot\", version.ref = \"spring-boot\" }", "develocity = { id = \"com.gradle.develocity\", version = \"3.18.1\" }"}
		return l
	case strings.HasSuffix(f.path, "build.gradle.kts"):
		return []string{"plugins {", "    alias(libs.plugins.kotlin.jvm) apply false", "    alias(libs.plugins.spring.boot) apply false", "}", "", "subprojects {",
			"    apply(plugin = \"org.jetbrains.kotlin.jvm\")", "", "    kotlin { jvmToolchain(21) }", "", "    tasks.withType<Test>().configureEach {", "        useJUnitPlatform()",
			"        maxParallelForks = 2", "        testLogging {", "            events(\"failed\", \"skipped\")", "            exceptionFormat = TestExceptionFormat.FULL", "            showCauses = true", "            showStandardStreams = true // integration tests print their container and migration logs", "        }",
			"        // One line per test class, so CI logs stay short.", "        afterSuite(KotlinClosure2<TestDescriptor, TestResult, Unit>({ d, r ->",
			"            if (d.className != null) println(\"${d.className.substringAfterLast('.')}: ${r.testCount} tests, ${r.successfulTestCount} passed, ${r.failedTestCount} failed, ${r.skippedTestCount} skipped\")",
			"        }))", "    }", "}"}
	case strings.HasSuffix(f.path, "database.yml"):
		return []string{"default: &default", "  adapter: mysql2", "  encoding: utf8mb4", "  pool: <%= ENV.fetch(\"RAILS_MAX_THREADS\") { 5 } %>", "  username: <%= ENV[\"ADMIN_DB_USER\"] %>", "  password: <%= ENV[\"ADMIN_DB_PASSWORD\"] %>", "",
			"development:", "  <<: *default", "  database: quire_admin_development", "  host: 127.0.0.1", "", "test:", "  <<: *default", "  database: quire_admin_test<%= ENV['TEST_ENV_NUMBER'] %>", "  host: 127.0.0.1", "",
			"staging:", "  <<: *default", "  database: quire_admin", "  host: " + slot("host", func() string { return fmt.Sprintf("mysql-admin-%d.stg.quire.internal", 1+r.IntN(9)) }), "  port: 3306", "  ssl_mode: :required"}
	case strings.HasSuffix(f.path, "sidekiq.yml"):
		return []string{"---", ":concurrency: 8", ":queues:", "  - [critical, 6]", "  - [default, 3]", "  - [exports, 1]", ":scheduler:", "  :schedule:", "    nightly_reconcile:", "      cron: \"15 2 * * *\"", "      class: ReconcileJob", "    dunning_tick:", "      every: \"10m\"", "      class: DunningTickJob"}
	case strings.HasSuffix(f.path, "CMakeLists.txt"):
		return []string{"cmake_minimum_required(VERSION 3.24)", "project(pricing VERSION 2.7.0 LANGUAGES CXX)", "", "set(CMAKE_CXX_STANDARD 17)", "set(CMAKE_CXX_STANDARD_REQUIRED ON)", "set(CMAKE_EXPORT_COMPILE_COMMANDS ON)", "",
			"option(PRICING_SANITIZE \"Sanitizers to enable (address;undefined)\" \"\")", "if(PRICING_SANITIZE)", "  message(STATUS \"pricing: sanitizers enabled: ${PRICING_SANITIZE}\")",
			"  add_compile_options(-fsanitize=${PRICING_SANITIZE} -fno-omit-frame-pointer)", "  add_link_options(-fsanitize=${PRICING_SANITIZE})", "endif()", "",
			"include(FetchContent)", "FetchContent_Declare(googletest URL https://github.com/google/googletest/archive/refs/tags/v1.15.2.tar.gz)", "FetchContent_MakeAvailable(googletest)", "",
			"add_subdirectory(src)", "enable_testing()", "add_subdirectory(tests)"}
	case strings.HasSuffix(f.path, "runtime.exs"):
		return []string{"import Config", "", "if config_env() == :prod do", "  config :notifier, Notifier.Repo,", "    url: System.fetch_env!(\"NOTIFIER_DATABASE_URL\"),", "    pool_size: 10", "",
			"  config :notifier, :webhooks,", "    ingest_url: \"" + slot("url", func() string { return mkURLr(r, "hooks.quire.internal:8443", "v1/ingest", "v2/ingest") }) + "\",",
			"    max_attempts: 12,", "    signing_secret: System.fetch_env!(\"WEBHOOK_SIGNING_SECRET\")", "end"}
	case strings.HasSuffix(f.path, ".service"):
		return []string{"[Unit]", "Description=Quire billing API", "After=network-online.target", "Wants=network-online.target", "", "[Service]", "User=quire", "WorkingDirectory=/opt/quire",
			"EnvironmentFile=/etc/quire/billing.env", "ExecStart=/usr/bin/java -Xms512m -Xmx2g -jar /opt/quire/billing-api.jar --spring.profiles.active=staging", "Restart=on-failure", "RestartSec=5", "", "[Install]", "WantedBy=multi-user.target"}
	case strings.HasSuffix(f.path, ".conf"):
		return []string{"upstream quire_admin {", "    server 127.0.0.1:3000;", "    keepalive 16;", "}", "", "server {", "    listen 443 ssl http2;", "    server_name admin.stg.quire.io;", "",
			"    ssl_certificate     /etc/ssl/quire/admin.pem;", "    ssl_certificate_key /etc/ssl/quire/admin.key;", "", "    location / {", "        proxy_pass http://quire_admin;",
			"        proxy_set_header X-Request-Id $request_id;", "        proxy_set_header Host $host;", "        proxy_read_timeout 60s;", "    }", "}"}
	default: // compose
		l := []string{"services:", "  billing-api:", "    image: registry.quire.internal/billing-api:${BILLING_TAG}", "    ports: [\"8081:8080\"]", "    env_file: ../env/billing.staging.env",
			"    healthcheck:", "      test: [\"CMD\", \"curl\", \"-fsS\", \"http://localhost:8080/actuator/health/readiness\"]", "      interval: 10s", "      retries: 12", "    depends_on: [mysql, redis]", "",
			"  admin:", "    image: registry.quire.internal/admin:${ADMIN_TAG}", "    ports: [\"3000:3000\"]", "", "  notifier:", "    image: registry.quire.internal/notifier:${NOTIFIER_TAG}", "    ports: [\"4000:4000\"]", "",
			"  mysql:", "    image: mysql:8.0.36", "    ports: [\"3306:3306\"]", "", "  redis:", "    image: redis:7.2", "    ports: [\"6380:6379\"]"}
		return l
	}
}

// Makers driven by a file's own random source.
func rsr(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func mkURLr(r *rand.Rand, host string, segs ...string) string {
	return fmt.Sprintf("https://%s/%s?profile=%s", host, rpick(r, segs), rsr(r, lowerAlnum, 8))
}

func codeFrom(r *rand.Rand) func() string {
	return func() string { return fmt.Sprintf("QB-%d", 1000+r.IntN(8999)) }
}

func hexFrom(r *rand.Rand, n int) func() string { return func() string { return rsr(r, hexDigits, n) } }

func idFrom(r *rand.Rand, prefix string) func() string {
	return func() string { return prefix + "_" + strings.ToLower("01J"+rsr(r, crockford, 13)) }
}
