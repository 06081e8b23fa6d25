package shipgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// This file writes the product's files as a read prints them. A file's
// text comes from its own random source, so two reads of it agree; the
// identifiers of a file are planted the first time it is read, and a
// later read shows filler in their place.

// slotFn returns an identifier for a place in a file: a passing label on
// the first read, filler on later ones.
type slotFn func(kind string, mk func() string) string

func (g *gen) fileRand(f *srcFile) *rand.Rand {
	return rand.New(rand.NewPCG(g.seed*0x9e3779b97f4a7c15+uint64(f.n), uint64(f.n)^0x74696465))
}

// readFile writes f as read_file prints it: numbered lines.
func (g *gen) readFile(f *srcFile, o *out) {
	for i, l := range g.fileLines(f) {
		o.addf("%6d\t%s", i+1, l)
	}
}

// fileLines returns the text of f, planting its identifiers if it was
// never read.
func (g *gen) fileLines(f *srcFile) []string {
	first := !f.read
	f.read = true
	slot := func(kind string, mk func() string) string {
		if first {
			return g.passID(kind, mk)
		}
		return g.fill(mk)
	}
	r := g.fileRand(f)
	n := int(float64(50+r.IntN(110)) * g.sc() * 0.75)
	switch f.lang {
	case "php":
		return phpSource(r, f, slot, n)
	case "phpunit":
		return g.phpunitSource(r, f, n)
	case "swift":
		return swiftSource(r, f, slot, n)
	case "xctest":
		return g.xctestSource(r, f, n)
	case "vue":
		return vueSource(r, f, slot, n)
	case "ts":
		return tsSource(r, f, slot, n)
	case "vitest":
		return g.vitestSource(r, f, n)
	case "playwright":
		return g.playwrightSource(r, f, n)
	default:
		return g.configSource(r, f, slot)
	}
}

func rpick(r *rand.Rand, xs ...string) string { return xs[r.IntN(len(xs))] }

// expand fills a statement template ({v} a variable, {T} a type) and
// indents each of its lines.
func expand(tmpl, indent string, rep *strings.Replacer) []string {
	var res []string
	for _, l := range strings.Split(rep.Replace(tmpl), "\n") {
		if l == "" {
			res = append(res, "")
			continue
		}
		res = append(res, indent+l)
	}
	return res
}

// Makers driven by a file's own random source.
func rsr(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func urlFrom(r *rand.Rand, host string, segs ...string) func() string {
	return func() string { return fmt.Sprintf("https://%s/%s/%s", host, rpick(r, segs...), rsr(r, lowerAlnum, 8)) }
}

func codeFrom(r *rand.Rand) func() string {
	return func() string { return fmt.Sprintf("TW-E%d", 1000+r.IntN(9000)) }
}

func hexFrom(r *rand.Rand, n int) func() string { return func() string { return rsr(r, hexDigits, n) } }

func versionFrom(r *rand.Rand) func() string {
	return func() string { return fmt.Sprintf("%d.%d.%d", 3+r.IntN(3), 20+r.IntN(40), r.IntN(30)) }
}

// ---- PHP ----

var phpImports = []string{
	"use App\\Models\\Parcel;", "use App\\Models\\Shipment;", "use App\\Models\\Depot;", "use App\\Models\\Zone;", "use App\\Support\\Money;",
	"use App\\Enums\\ShipmentStatus as Status;", "use App\\Events\\ShipmentUpdated;", "use App\\Exceptions\\ShipmentCancelled;",
	"use Carbon\\CarbonImmutable;", "use Illuminate\\Support\\Facades\\Cache;", "use Illuminate\\Support\\Facades\\DB;",
	"use Illuminate\\Support\\Facades\\Http;", "use Illuminate\\Support\\Facades\\Log;", "use Illuminate\\Support\\Collection;",
	"use Illuminate\\Validation\\ValidationException;", "use Illuminate\\Http\\Client\\RequestException;",
}

var phpStmts = []string{
	"if (${v}->isInternational()) {\n    $this->customs->validate(${v}->customsDeclaration);\n}",
	"$weight = max(1, (int) ceil(${v}->weight_grams / 1000));",
	"$zone = $this->zones->forPostcode(${v}->recipient_postcode);",
	"Log::info('{v} processed', ['id' => ${v}->id, 'carrier' => ${v}->carrier_code]);",
	"$rate = Cache::remember(\"rates:{$zone->code}:{$weight}\", self::CACHE_TTL_SECONDS, fn () => $this->rates->lookup($zone, $weight));",
	"throw_if(${v}->cancelled_at !== null, ShipmentCancelled::class, ${v});",
	"$surcharges = collect($this->surcharges->for(${v}))->sum('amount_minor');",
	"return new Money($rate->amount_minor + $surcharges, ${v}->currency);",
	"DB::transaction(function () use (${v}) {\n    ${v}->status = Status::Booked;\n    ${v}->save();\n});",
	"$response = Http::withToken($this->token)\n    ->timeout(30)\n    ->retry(2, 250)\n    ->post($this->baseUrl . '/shipments', $payload);",
	"$response->throw();",
	"event(new ShipmentUpdated(${v}));",
	"$cutoff = $depot->cutoffFor($date)->setTimezone('Europe/London');",
	"if (now('Europe/London')->greaterThan($cutoff)) {\n    $date = $date->nextWeekday();\n}",
	"foreach (${v}->parcels as $parcel) {\n    $lines[] = $this->lineFor($parcel);\n}",
	"$events = $events->sortBy('occurred_at')->unique(fn ($e) => $e->carrier_ref . $e->code)->values();",
	"return ${v}->fresh(['parcels', 'labels']);",
	"$hs = preg_replace('/[^0-9]/', '', $code);",
	"if (strlen($hs) < 6) {\n    throw ValidationException::withMessages(['hs_code' => 'HS codes need at least six digits.']);\n}",
	"$payload = [\n    'reference' => ${v}->reference,\n    'service' => ${v}->service_code,\n    'parcels' => $lines,\n];",
	"$window = CarbonImmutable::parse(${v}->delivered_at)->addDays(self::RETURN_DAYS);",
	"return $window->isFuture();",
	"$label = ${v}->labels()->latest()->firstOrFail();",
	"$pdf = base64_decode($response->json('label.content'), true);",
}

var phpControllerStmts = []string{
	"$validated = $request->validated();",
	"abort_unless($request->user()->can('update', ${v}), 403);",
	"${v} = {T}::query()->whereBelongsTo($request->user()->account)->findOrFail($id);",
	"return {T}Resource::make(${v})->response()->setStatusCode(201);",
	"PurchaseLabel::dispatch(${v})->onQueue('labels');",
	"return {T}Resource::collection({T}::query()->latest()->paginate(50));",
	"${v}->update($validated);",
	"return response()->noContent();",
}

func phpNamespace(f *srcFile) string {
	switch f.kind {
	case "service":
		return "App\\Services\\" + f.dir
	case "model":
		return "App\\Models"
	case "controller":
		return "App\\Http\\Controllers\\Api\\V1"
	}
	return "App\\Jobs"
}

// phpNoun is the domain noun of a PHP class: Pickup of PickupController.
func phpNoun(f *srcFile) string {
	for _, s := range []string{"Controller", "Resolver", "Calculator", "Table", "Purchaser", "Client", "Renderer", "Normalizer", "Merger", "Allocator", "Policy", "Validator", "Estimator", "Builder", "Closer"} {
		if strings.HasSuffix(f.name, s) && f.name != s {
			n := strings.TrimSuffix(f.name, s)
			switch n {
			case "Zone", "Rate", "Surcharge", "Event", "Timeline", "Slot", "Cutoff", "HsCode", "Duty", "ReturnWindow":
				return "Parcel"
			case "Label", "Carrier":
				return "Shipment"
			}
			return n
		}
	}
	if f.kind == "job" {
		return "Shipment"
	}
	return f.name
}

func phpSource(r *rand.Rand, f *srcFile, slot slotFn, n int) []string {
	noun := phpNoun(f)
	rep := strings.NewReplacer("{v}", lowerFirst(noun), "{T}", noun)
	l := []string{"<?php", "", "declare(strict_types=1);", "", "namespace " + phpNamespace(f) + ";", ""}
	for _, k := range r.Perm(len(phpImports))[:5+r.IntN(5)] {
		l = append(l, phpImports[k])
	}
	l = append(l, "")
	stmts := phpStmts
	switch f.kind {
	case "model":
		l = append(l, "class "+f.name+" extends Model", "{", "    use HasFactory;", "    use SoftDeletes;", "",
			"    protected $fillable = [", "        'reference',", "        'carrier_code',", "        'service_code',", "        'weight_grams',", "        'recipient_postcode',", "        'status',", "    ];", "",
			"    protected function casts(): array", "    {", "        return [", "            'status' => Status::class,", "            'delivered_at' => 'datetime',", "            'dimensions' => 'array',", "        ];", "    }", "",
			"    public function shipment(): BelongsTo", "    {", "        return $this->belongsTo(Shipment::class);", "    }", "")
	case "controller":
		stmts = phpControllerStmts
		l = append(l, "final class "+f.name+" extends Controller", "{", "    public function __construct(", "        private readonly LabelPurchaser $labels,", "    ) {", "    }", "")
	case "job":
		l = append(l, "final class "+f.name+" implements ShouldQueue, ShouldBeUnique", "{", "    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;", "",
			fmt.Sprintf("    public int $tries = %d;", 3+r.IntN(5)), fmt.Sprintf("    public int $timeout = %d;", 30*(1+r.IntN(4))), "",
			"    public function __construct(public readonly Shipment $shipment)", "    {", "    }", "")
	default:
		l = append(l, "/**", " * "+rpick(r, "Resolves the rate zone of a parcel from its postcode and the carrier's zone table.", "Buys labels from the carrier and stores them against the shipment.",
			"Normalises carrier tracking events into the timeline the apps show.", "Applies the depot's cut-off and bank holidays to pickup requests.", "Checks customs data before a label is bought for a non-EU parcel."), " */",
			"final class "+f.name, "{", fmt.Sprintf("    private const CACHE_TTL_SECONDS = %d;", 300*(1+r.IntN(6))), "    private const RETURN_DAYS = 30;")
		switch r.IntN(4) {
		case 0:
			l = append(l, fmt.Sprintf("    private const SANDBOX_URL = '%s';", slot("url", urlFrom(r, "sandbox.carrier-gateway.example", "v2/shipments", "v2/labels", "v1/zones"))))
		case 1:
			l = append(l, fmt.Sprintf("    private const ERROR_CODE = '%s'; // returned to clients when the carrier refuses", slot("code", codeFrom(r))))
		case 2:
			l = append(l, fmt.Sprintf("    // Zone table layout since %s; see the rates ADR before changing it.", slot("hash", hexFrom(r, 10))))
		}
		l = append(l, "", "    public function __construct(")
		for _, dep := range []string{"CarrierClient $carrier", "ZoneResolver $zones", "SurchargeTable $surcharges"} {
			if !strings.HasPrefix(dep, f.name+" ") {
				l = append(l, "        private readonly "+dep+",")
			}
		}
		l = append(l, "    ) {", "    }", "")
	}
	for i := 0; len(l) < n-2; i++ {
		fn := f.funcs[i%len(f.funcs)]
		if i >= len(f.funcs) {
			fn += rpick(r, "ForAccount", "Legacy", "Batch", "Internal", "V2")
		}
		ret := rpick(r, noun, "void", "Money", "bool", "Collection", "?"+noun)
		if f.kind == "controller" {
			ret = "JsonResponse"
		}
		l = append(l, fmt.Sprintf("    public function %s(%s $%s): %s", fn, noun, lowerFirst(noun), ret), "    {")
		for range 2 + r.IntN(5) {
			st := rpick(r, stmts...)
			for strings.HasPrefix(st, "return") {
				st = rpick(r, stmts...)
			}
			l = append(l, expand(st, "        ", rep)...)
		}
		switch {
		case f.kind == "controller":
			l = append(l, expand(rpick(r, phpControllerStmts[3], phpControllerStmts[5], phpControllerStmts[7]), "        ", rep)...)
		case ret != "void":
			l = append(l, expand(rpick(r, phpReturns...), "        ", rep)...)
		}
		l = append(l, "    }", "")
	}
	return append(l, "}")
}

var phpReturns = []string{"return ${v}->fresh(['parcels', 'labels']);", "return ${v};", "return $result;"}

func (g *gen) phpunitSource(r *rand.Rand, f *srcFile, n int) []string {
	subject := strings.TrimSuffix(f.name, "Test")
	ns := "Tests\\Unit\\" + f.dir
	if f.kind == "controller" {
		ns = "Tests\\Feature\\Api\\V1"
	}
	l := []string{"<?php", "", "namespace " + ns + ";", "", "use App\\Models\\Parcel;", "use App\\Models\\Shipment;", "use App\\Models\\User;",
		"use Illuminate\\Foundation\\Testing\\RefreshDatabase;", "use Illuminate\\Support\\Facades\\Http;", "use Tests\\TestCase;", "",
		"class " + f.name + " extends TestCase", "{", "    use RefreshDatabase;", ""}
	for len(l) < n-2 {
		name := g.fill(func() string { return rtestName(r) })
		l = append(l, "    public function "+name+"(): void", "    {")
		if f.kind == "controller" {
			l = append(l, "        $user = User::factory()->create();",
				fmt.Sprintf("        $response = $this->actingAs($user)->postJson('/api/v1/%ss', [", snake(strings.TrimSuffix(subject, "Controller"))),
				fmt.Sprintf("            'weight_grams' => %d,", 100+r.IntN(30000)), fmt.Sprintf("            'recipient_postcode' => '%s',", rpick(r, "EH1 1YZ", "BT7 1NN", "IV27 4NY", "SW1A 2AA", "D02 X285")),
				"        ]);", "", fmt.Sprintf("        $response->assertStatus(%d)->assertJsonPath('data.status', '%s');", rpick2(r, 201, 422, 200), rpick(r, "booked", "pending", "cancelled")))
		} else {
			l = append(l, fmt.Sprintf("        $parcel = Parcel::factory()->for(Shipment::factory())->create(['weight_grams' => %d]);", 100+r.IntN(30000)),
				fmt.Sprintf("        $result = app(%s::class)->%s($parcel);", subject, rpick(r, phpMethods[f.kind]...)), "",
				fmt.Sprintf("        $this->assertSame(%s, $result);", rpick(r, "'Z3'", "1250", "true", "false", "'booked'")))
		}
		l = append(l, "    }", "")
	}
	return append(l, "}")
}

func rpick2(r *rand.Rand, xs ...int) int { return xs[r.IntN(len(xs))] }

// rtestName is a PHPUnit test name from a file's random source.
func rtestName(r *rand.Rand) string {
	s := "test_" + rpick(r, testVerbs...) + "_" + strings.ReplaceAll(rpick(r, testObjects...), " ", "_")
	if q := rpick(r, testQualifiers...); q != "" {
		s += "_" + strings.ReplaceAll(q, " ", "_")
	}
	return s
}

// ---- Swift ----

var swiftStmts = []string{
	"let calendar = Calendar(identifier: .gregorian)",
	"guard let window = shipment.deliveryWindow else { return nil }",
	"let minutes = calendar.component(.minute, from: date)",
	"let rounded = (minutes / 15) * 15",
	"var request = URLRequest(url: baseURL.appending(path: endpoint.path))",
	"request.setValue(\"Bearer \\(token)\", forHTTPHeaderField: \"Authorization\")",
	"let (data, response) = try await session.data(for: request)",
	"guard let http = response as? HTTPURLResponse, (200..<300).contains(http.statusCode) else {\n    throw APIError.unexpectedStatus((response as? HTTPURLResponse)?.statusCode ?? -1)\n}",
	"let decoder = JSONDecoder()\ndecoder.dateDecodingStrategy = .iso8601",
	"return try decoder.decode(T.self, from: data)",
	"let grouped = Dictionary(grouping: shipments) { calendar.startOfDay(for: $0.expectedAt) }",
	"sections = grouped.keys.sorted().map { ShipmentSection(day: $0, items: grouped[$0] ?? []) }",
	"logger.debug(\"loaded \\(items.count, privacy: .public) shipments\")",
	"let measurement = Measurement(value: Double(grams), unit: UnitMass.grams)",
	"return formatter.string(from: measurement.converted(to: .kilograms))",
	"try await Task.sleep(for: .milliseconds(delay))",
	"cache[key] = CacheEntry(value: value, storedAt: now())",
	"if let cached = cache[key], now().timeIntervalSince(cached.storedAt) < ttl { return cached.value }",
	"let events = raw.sorted { $0.occurredAt < $1.occurredAt }",
	"isLoading = false",
	"errorMessage = String(localized: \"shipments.load.failed\")",
	"let postcode = raw.uppercased().filter { !$0.isWhitespace }",
}

func swiftSource(r *rand.Rand, f *srcFile, slot slotFn, n int) []string {
	l := []string{"//", "//  " + f.base(), "//  " + map[string]string{"kit": "TidewaterKit", "app": "Tidewater"}[f.kind], "//", "", "import Foundation"}
	if f.kind == "app" {
		l = append(l, "import Observation", "import OSLog", "import TidewaterKit", "", "@MainActor", "@Observable", "final class "+f.name+" {",
			"    private(set) var sections: [ShipmentSection] = []", "    private(set) var isLoading = false", "    var errorMessage: String?", "",
			"    private let client: APIClient", "    private let calendar: Calendar", "    private let logger = Logger(subsystem: \"io.tidewater.app\", category: \""+f.dir+"\")", "",
			"    init(client: APIClient, calendar: Calendar = .current) {", "        self.client = client", "        self.calendar = calendar", "    }", "")
	} else {
		l = append(l, "", "/// "+rpick(r, "Formats delivery estimates for the tracking screen.", "Sends requests to the Tidewater API and decodes the responses.",
			"Keeps recently fetched shipments for offline use.", "Builds the tracking timeline from carrier events.", "Validates UK and Irish postcodes before a pickup is booked."),
			"public struct "+f.name+": Sendable {", "    public var ttl: TimeInterval = 300", "    private let baseURL: URL")
		switch r.IntN(3) {
		case 0:
			l = append(l, fmt.Sprintf("    static let stagingURL = URL(string: \"%s\")!", slot("url", urlFrom(r, "api.staging.tidewater.example", "v1", "v2"))))
		case 1:
			l = append(l, fmt.Sprintf("    // Decoding rules follow API schema %s.", slot("version", versionFrom(r))))
		}
		l = append(l, "", "    public init(baseURL: URL) {", "        self.baseURL = baseURL", "    }", "")
	}
	for i := 0; len(l) < n-2; i++ {
		fn := f.funcs[i%len(f.funcs)]
		if i >= len(f.funcs) {
			fn += rpick(r, "IfNeeded", "Legacy", "Batch", "Now")
		}
		mod := "    public func "
		if f.kind == "app" {
			mod = "    func "
		}
		l = append(l, mod+fn+"("+rpick(r, "_ shipment: Shipment", "for date: Date", "_ grams: Int", "_ raw: String", "")+") "+rpick(r, "async ", "", "throws ", "async throws ")+"-> "+rpick(r, "String", "Void", "Bool", "[TrackingEvent]", "Shipment?")+" {")
		for range 2 + r.IntN(5) {
			l = append(l, expand(rpick(r, swiftStmts...), "        ", strings.NewReplacer())...)
		}
		l = append(l, "    }", "")
	}
	return append(l, "}")
}

func (g *gen) xctestSource(r *rand.Rand, f *srcFile, n int) []string {
	subject := strings.TrimSuffix(f.name, "Tests")
	mod := "TidewaterKit"
	if f.kind == "app" {
		mod = "Tidewater"
	}
	l := []string{"import XCTest", "@testable import " + mod, "", "final class " + f.name + ": XCTestCase {", "    private var sut: " + subject + "!", "",
		"    override func setUp() {", "        super.setUp()", "        sut = " + subject + "(baseURL: URL(string: \"https://api.test\")!)", "    }", ""}
	for len(l) < n-1 {
		name := g.fill(func() string {
			w := camel(rpick(r, testVerbs...) + " " + rpick(r, testObjects...))
			return "test" + strings.ToUpper(w[:1]) + w[1:]
		})
		l = append(l, "    func "+name+"() "+rpick(r, "throws ", "async throws ", "")+"{",
			fmt.Sprintf("        let input = Fixtures.%s(weightGrams: %d)", rpick(r, "shipment", "parcel", "delivered", "pickup"), 100+r.IntN(30000)),
			fmt.Sprintf("        XCTAssertEqual(%ssut.%s(input), %s)", rpick(r, "", "try ", "try await "), rpick(r, swiftFuncs...), rpick(r, "\"Arrives 09:45\"", "\"1.2 kg\"", "3", "true", ".delivered")), "    }", "")
	}
	return append(l, "}")
}

// ---- Vue and TypeScript ----

var tsStmts = []string{
	"const zoned = toZonedTime(at, timeZone)",
	"const minutes = Math.ceil(zoned.getMinutes() / 15) * 15",
	"if (!response.ok) throw new ApiError(response.status, await response.text())",
	"return new Intl.NumberFormat(locale, { style: 'currency', currency }).format(minor / 100)",
	"const cleaned = value.replace(/\\s+/g, '').toUpperCase()",
	"return `${cleaned.slice(0, -3)} ${cleaned.slice(-3)}`",
	"const rows = items.map((item) => [item.id, item.reference, item.status].join(','))",
	"state.items = data.items",
	"state.loading = false",
	"const res = await fetchJson<Page<Shipment>>(`/api/v1/shipments?page=${page}`)",
	"if (date.getDay() === 0 || date.getDay() === 6) continue",
	"return grams >= 1000 ? `${(grams / 1000).toFixed(1)} kg` : `${grams} g`",
	"const controller = new AbortController()",
	"const next = new Date(date.getTime() + DAY_MS)",
	"for (const event of events) {\n  if (seen.has(event.id)) continue\n  seen.add(event.id)\n  out.push(event)\n}",
}

func tsSource(r *rand.Rand, f *srcFile, slot slotFn, n int) []string {
	var l []string
	if f.kind == "store" {
		l = append(l, "import { defineStore } from 'pinia'", "import { fetchJson } from '@/lib/api'", "import type { Page, Shipment } from '@/types'", "",
			"export const use"+strings.ToUpper(f.name[:1])+f.name[1:]+"Store = defineStore('"+f.name+"', {", "  state: () => ({ items: [] as Shipment[], loading: false, error: null as string | null }),", "  actions: {")
		for i := 0; len(l) < n-3; i++ {
			fn := f.funcs[i%len(f.funcs)]
			if i >= len(f.funcs) {
				fn += rpick(r, "Page", "All", "Quietly")
			}
			l = append(l, "    async "+fn+"(page = 1) {", "      const state = this")
			for range 2 + r.IntN(3) {
				l = append(l, expand(rpick(r, tsStmts...), "      ", strings.NewReplacer())...)
			}
			l = append(l, "    },")
		}
		return append(l, "  },", "})")
	}
	l = append(l, "import { toZonedTime } from 'date-fns-tz'", "", "const DAY_MS = 24 * 60 * 60 * 1000")
	switch r.IntN(3) {
	case 0:
		l = append(l, fmt.Sprintf("export const API_BASE = import.meta.env.VITE_API_BASE ?? '%s'", slot("url", urlFrom(r, "api.staging.tidewater.example", "v1", "v2"))))
	case 1:
		l = append(l, fmt.Sprintf("// Matches the rounding of TidewaterKit %s.", slot("version", versionFrom(r))))
	}
	l = append(l, "")
	for i := 0; len(l) < n-1; i++ {
		fn := f.funcs[i%len(f.funcs)]
		if i >= len(f.funcs) {
			fn += rpick(r, "Strict", "Loose", "Legacy", "ForLocale")
		}
		l = append(l, "export function "+fn+"("+rpick(r, "at: Date, timeZone: string", "minor: number, currency: string, locale = 'en-GB'", "grams: number", "value: string", "items: Shipment[]")+"): "+rpick(r, "string", "number", "boolean", "string[]")+" {")
		for range 2 + r.IntN(4) {
			l = append(l, expand(rpick(r, tsStmts...), "  ", strings.NewReplacer())...)
		}
		l = append(l, "}", "")
	}
	return l
}

func vueSource(r *rand.Rand, f *srcFile, slot slotFn, n int) []string {
	l := []string{"<script setup lang=\"ts\">", "import { computed, ref } from 'vue'", "import { useShipmentsStore } from '@/stores/shipments'",
		"import { " + strings.Join(f.funcs, ", ") + " } from '@/lib/" + rpick(r, tsModules...) + "'", "",
		"const props = defineProps<{ shipmentId: string; disabled?: boolean }>()", "const emit = defineEmits<{ (e: 'booked', id: string): void; (e: 'cancel'): void }>()", "",
		"const store = useShipmentsStore()", "const date = ref('')", "const slot = ref<string | null>(null)", "const submitting = ref(false)",
		"const canSubmit = computed(() => !!date.value && !!slot.value && !submitting.value && !props.disabled)", ""}
	if r.IntN(2) == 0 {
		l = append(l, fmt.Sprintf("const HELP_URL = '%s'", slot("url", urlFrom(r, "help.tidewater.example", "pickups", "labels", "returns"))), "")
	}
	l = append(l, "async function submit() {", "  submitting.value = true", "  try {", "    const pickup = await store.book(props.shipmentId, date.value, slot.value!)", "    emit('booked', pickup.id)", "  } finally {", "    submitting.value = false", "  }", "}", "</script>", "",
		"<template>", "  <form class=\""+kebab(f.name)+"\" @submit.prevent=\"submit\">")
	for len(l) < n-6 {
		field := rpick(r, "pickup-date", "slot", "reference", "weight", "postcode", "instructions", "carrier")
		l = append(l, "    <div class=\"field\">", "      <label for=\""+field+"\">"+strings.ToUpper(field[:1])+strings.ReplaceAll(field[1:], "-", " ")+"</label>",
			"      <input id=\""+field+"\" v-model=\""+rpick(r, "date", "slot")+"\" type=\""+rpick(r, "text", "date", "number")+"\" :disabled=\"submitting\" />", "    </div>")
	}
	return append(l, "    <button type=\"submit\" :disabled=\"!canSubmit\">"+rpick(r, "Confirm pickup", "Save", "Book", "Continue")+"</button>",
		"    <button type=\"button\" class=\"link\" @click=\"emit('cancel')\">Cancel</button>", "  </form>", "</template>", "", "<style scoped>", ".field { margin-block: 0.5rem; }", "</style>")
}

func (g *gen) vitestSource(r *rand.Rand, f *srcFile, n int) []string {
	l := []string{"import { describe, expect, it } from 'vitest'"}
	if f.dir == "components" {
		l = append(l, "import { mount } from '@vue/test-utils'", "import { createTestingPinia } from '@pinia/testing'", "import "+f.name+" from './"+f.name+".vue'")
	} else {
		l = append(l, "import * as subject from './"+f.name+"'")
	}
	l = append(l, "", "describe('"+f.name+"', () => {")
	for len(l) < n-1 {
		title := g.fill(func() string { return rpick(r, testVerbs...) + " " + rpick(r, testObjects...) })
		l = append(l, "  it('"+title+"', "+rpick(r, "", "async ")+"() => {")
		if f.dir == "components" {
			l = append(l, "    const wrapper = mount("+f.name+", { props: { shipmentId: 'shp_test' }, global: { plugins: [createTestingPinia()] } })",
				"    await wrapper.find('input#pickup-date').setValue('2024-11-07')", "    expect(wrapper.find('button[type=submit]').attributes('disabled')).toBeUndefined()")
		} else {
			l = append(l, fmt.Sprintf("    expect(subject.%s(%s)).toBe(%s)", rpick(r, tsFuncs...), rpick(r, "new Date('2024-11-06T09:31:00Z'), 'Europe/London'", "1250, 'GBP'", "'eh11yz'", "2300"), rpick(r, "'Arrives 09:45'", "'£12.50'", "'EH1 1YZ'", "'2.3 kg'", "true")))
		}
		l = append(l, "  })", "")
	}
	return append(l, "})")
}

func (g *gen) playwrightSource(r *rand.Rand, f *srcFile, n int) []string {
	l := []string{"import { expect, test } from '@playwright/test'", "import { loginAs, seedShipment } from './fixtures'", "",
		"test.describe('" + f.name + "', () => {", "  test.beforeEach(async ({ page }) => {", "    await loginAs(page, 'ops@tidewater.test')", "    await page.goto('/shipments')", "  })", ""}
	for len(l) < n-1 {
		title := g.fill(func() string { return rpick(r, testVerbs...) + " " + rpick(r, testObjects...) })
		l = append(l, "  test('"+title+"', async ({ page }) => {", "    const shipment = await seedShipment(page, { parcels: "+fmt.Sprint(1+r.IntN(3))+" })",
			"    await page.getByRole('link', { name: shipment.reference }).click()", "    await page.getByRole('button', { name: '"+rpick(r, "Book pickup", "Print label", "Start return", "Close manifest")+"' }).click()",
			"    await page.getByLabel('"+rpick(r, "Pickup date", "Reason", "Weight (kg)", "Postcode")+"').fill('"+rpick(r, "2024-11-07", "Damaged", "2.5", "EH1 1YZ")+"')",
			"    await expect(page.getByText('"+rpick(r, "Pickup booked", "Label ready", "Return created", "Manifest closed")+"')).toBeVisible()", "  })", "")
	}
	return append(l, "})")
}

// ---- configuration ----

// configSource writes the configuration files.
func (g *gen) configSource(r *rand.Rand, f *srcFile, slot slotFn) []string {
	p := f.path
	switch {
	case strings.HasSuffix(p, "composer.json"):
		return []string{"{", "    \"name\": \"tidewater/api\",", "    \"type\": \"project\",", "    \"require\": {", "        \"php\": \"^8.3\",",
			"        \"aws/aws-sdk-php\": \"^3.325\",", "        \"guzzlehttp/guzzle\": \"^7.9\",", "        \"laravel/framework\": \"^11.30\",", "        \"laravel/sanctum\": \"^4.0\",",
			"        \"mongodb/laravel-mongodb\": \"^5.1\",", "        \"spatie/laravel-data\": \"^4.10\",", "        \"setasign/fpdi\": \"^2.6\"", "    },",
			"    \"require-dev\": {", "        \"fakerphp/faker\": \"^1.23\",", "        \"larastan/larastan\": \"^2.9\",", "        \"laravel/pint\": \"^1.18\",", "        \"mockery/mockery\": \"^1.6\",",
			"        \"nunomaduro/collision\": \"^8.5\",", "        \"phpunit/phpunit\": \"^11.4\"", "    },", "    \"autoload\": {", "        \"psr-4\": {", "            \"App\\\\\": \"app/\",",
			"            \"Database\\\\Factories\\\\\": \"database/factories/\"", "        }", "    },", "    \"scripts\": {", "        \"test\": \"phpunit\",", "        \"lint\": [\"pint --test\", \"phpstan analyse --memory-limit=1G\"]", "    },",
			"    \"config\": {", "        \"optimize-autoloader\": true,", "        \"sort-packages\": true", "    },", "    \"minimum-stability\": \"stable\"", "}"}
	case strings.HasSuffix(p, "phpunit.xml"):
		return []string{"<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "<phpunit xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"", "         xsi:noNamespaceSchemaLocation=\"vendor/phpunit/phpunit/phpunit.xsd\"",
			"         bootstrap=\"vendor/autoload.php\"", "         colors=\"true\"", "         failOnWarning=\"true\">", "    <testsuites>", "        <testsuite name=\"Unit\">", "            <directory>tests/Unit</directory>", "        </testsuite>",
			"        <testsuite name=\"Feature\">", "            <directory>tests/Feature</directory>", "        </testsuite>", "    </testsuites>", "    <source>", "        <include>", "            <directory>app</directory>", "        </include>", "    </source>",
			"    <php>", "        <env name=\"APP_ENV\" value=\"testing\"/>", "        <env name=\"DB_CONNECTION\" value=\"sqlite\"/>", "        <env name=\"DB_DATABASE\" value=\":memory:\"/>",
			"        <env name=\"QUEUE_CONNECTION\" value=\"sync\"/>", "        <env name=\"CARRIER_GATEWAY_FAKE\" value=\"true\"/>", "    </php>", "</phpunit>"}
	case strings.HasSuffix(p, "services.php"):
		l := []string{"<?php", "", "return [", "", "    'carrier_gateway' => [", "        'base_url' => env('CARRIER_GATEWAY_URL', 'https://gateway.carrier-hub.example/v2'),",
			"        'token' => env('CARRIER_GATEWAY_TOKEN'),", "        'timeout' => (int) env('CARRIER_GATEWAY_TIMEOUT', 30),", "        'connect_timeout' => 5,", "        'retries' => 2,", "    ],", ""}
		for _, c := range []string{"dpd", "evri", "royal_mail", "dhl", "an_post"} {
			l = append(l, "    '"+c+"' => [", "        'account' => env('"+strings.ToUpper(c)+"_ACCOUNT'),", fmt.Sprintf("        'service_default' => '%s',", rpick(r, "NEXT_DAY", "TRACKED_48", "EXPRESS", "ECONOMY")), "    ],", "")
		}
		l = append(l, "    'tracking_webhook' => [", fmt.Sprintf("        'callback' => '%s',", slot("url", urlFrom(r, "hooks.staging.tidewater.example", "tracking", "carriers"))), "    ],", "", "];")
		return l
	case strings.HasSuffix(p, "queue.php"):
		return []string{"<?php", "", "return [", "    'default' => env('QUEUE_CONNECTION', 'sqs'),", "", "    'connections' => [", "        'sync' => [", "            'driver' => 'sync',", "        ],", "",
			"        'sqs' => [", "            'driver' => 'sqs',", "            'key' => env('AWS_ACCESS_KEY_ID'),", "            'secret' => env('AWS_SECRET_ACCESS_KEY'),",
			"            'prefix' => env('SQS_PREFIX', 'https://sqs.eu-west-1.amazonaws.com/318274650912'),",
			"            'queue' => env('SQS_QUEUE', 'tidewater-default'),", "            'suffix' => env('SQS_SUFFIX', '-staging'),", "            'region' => env('AWS_DEFAULT_REGION', 'eu-west-1'),", "            'after_commit' => true,", "        ],", "    ],", "",
			"    // Alarms on the dead-letter queues go to " + slot("id", func() string { return "arn:aws:sns:eu-west-1:318274650912:tidewater-alerts-" + rsr(r, lowerAlnum, 6) }) + ".",
			"    'failed' => [", "        'driver' => env('QUEUE_FAILED_DRIVER', 'database-uuids'),", "        'database' => env('DB_CONNECTION', 'mariadb'),", "        'table' => 'failed_jobs',", "    ],", "];"}
	case strings.HasSuffix(p, "routes/api.php"):
		l := []string{"<?php", "", "use App\\Http\\Controllers\\Api\\V1;", "use Illuminate\\Support\\Facades\\Route;", "", "Route::prefix('v1')->middleware(['auth:sanctum', 'throttle:api'])->group(function () {"}
		for _, c := range []string{"shipments", "parcels", "labels", "manifests", "pickups", "returns"} {
			l = append(l, fmt.Sprintf("    Route::apiResource('%s', V1\\%sController::class);", c, strings.ToUpper(c[:1])+strings.TrimSuffix(c[1:], "s")))
		}
		return append(l, "    Route::post('shipments/{shipment}/labels', [V1\\LabelController::class, 'store']);", "    Route::get('tracking/{trackingNumber}', [V1\\TrackingController::class, 'show']);",
			"    Route::post('rates/quote', V1\\RateQuoteController::class);", "});")
	case strings.HasSuffix(p, ".env.example"):
		return []string{"APP_NAME=Tidewater", "APP_ENV=local", "APP_KEY=", "APP_DEBUG=true", "APP_URL=http://localhost:8000", "", "LOG_CHANNEL=stack", "LOG_LEVEL=debug", "",
			"DB_CONNECTION=mariadb", "DB_HOST=127.0.0.1", "DB_PORT=3306", "DB_DATABASE=tidewater", "DB_USERNAME=tidewater", "DB_PASSWORD=", "",
			"QUEUE_CONNECTION=sync", "SQS_PREFIX=", "SQS_SUFFIX=-local", "", "MONGODB_URI=mongodb://127.0.0.1:27017/tracking", "ELASTICSEARCH_HOST=http://127.0.0.1:9200", "",
			"CARRIER_GATEWAY_URL=https://sandbox.carrier-hub.example/v2", "CARRIER_GATEWAY_TOKEN=", "CARRIER_GATEWAY_TIMEOUT=30"}
	case strings.HasSuffix(p, "Package.swift"):
		return []string{"// swift-tools-version: 5.10", "import PackageDescription", "", "let package = Package(", "    name: \"TidewaterKit\",", "    platforms: [.iOS(.v16), .macOS(.v13)],",
			"    products: [", "        .library(name: \"TidewaterKit\", targets: [\"TidewaterKit\"]),", "    ],", "    dependencies: [",
			"        .package(url: \"https://github.com/apple/swift-collections\", from: \"1.1.4\"),", "    ],", "    targets: [",
			"        .target(name: \"TidewaterKit\", dependencies: [.product(name: \"Collections\", package: \"swift-collections\")]),",
			"        .testTarget(name: \"TidewaterKitTests\", dependencies: [\"TidewaterKit\"], resources: [.process(\"Fixtures\")]),", "    ]", ")"}
	case strings.HasSuffix(p, "package.json"):
		return []string{"{", "  \"name\": \"tidewater-web\",", "  \"private\": true,", "  \"version\": \"" + slot("version", versionFrom(r)) + "\",", "  \"type\": \"module\",", "  \"scripts\": {",
			"    \"dev\": \"vite\",", "    \"build\": \"vue-tsc -b && vite build\",", "    \"test\": \"vitest run\",", "    \"test:e2e\": \"playwright test\",", "    \"lint\": \"eslint .\"", "  },",
			"  \"dependencies\": {", "    \"date-fns-tz\": \"^3.2.0\",", "    \"pinia\": \"^2.2.6\",", "    \"vue\": \"^3.5.12\",", "    \"vue-router\": \"^4.4.5\"", "  },", "  \"devDependencies\": {",
			"    \"@playwright/test\": \"^1.48.2\",", "    \"@vitejs/plugin-vue\": \"^5.1.4\",", "    \"@vitest/coverage-v8\": \"^2.1.4\",", "    \"@vue/test-utils\": \"^2.4.6\",", "    \"eslint\": \"^9.14.0\",",
			"    \"eslint-plugin-vue\": \"^9.30.0\",", "    \"typescript-eslint\": \"^8.13.0\",", "    \"jsdom\": \"^25.0.1\",", "    \"vite\": \"^5.4.10\",", "    \"vitest\": \"^2.1.4\",", "    \"vue-tsc\": \"^2.1.10\"", "  }", "}"}
	case strings.HasSuffix(p, "vite.config.ts"):
		return []string{"import { fileURLToPath, URL } from 'node:url'", "import { defineConfig } from 'vite'", "import vue from '@vitejs/plugin-vue'", "", "export default defineConfig({",
			"  plugins: [vue()],", "  resolve: { alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) } },", "  server: { port: 5173, proxy: { '/api': 'http://localhost:8000' } },",
			"  build: { sourcemap: true, chunkSizeWarningLimit: 600 },", "  test: {", "    environment: 'jsdom',", "    include: ['src/**/*.spec.ts'],", "    coverage: { provider: 'v8', reporter: ['text', 'html'] },", "  },", "})"}
	case strings.HasSuffix(p, "playwright.config.ts"):
		return []string{"import { defineConfig, devices } from '@playwright/test'", "", "export default defineConfig({", "  testDir: './e2e',", "  fullyParallel: true,", "  retries: process.env.CI ? 2 : 0,",
			"  workers: process.env.CI ? 2 : 4,", "  reporter: [['list'], ['html', { open: 'never' }]],", "  use: {", "    baseURL: 'http://localhost:5173',", "    trace: 'retain-on-failure',", "    screenshot: 'only-on-failure',", "  },",
			"  projects: [", "    { name: 'chromium', use: { ...devices['Desktop Chrome'] } },", "    { name: 'webkit', use: { ...devices['Desktop Safari'] } },", "  ],",
			"  webServer: { command: 'npm run dev', url: 'http://localhost:5173', reuseExistingServer: !process.env.CI },", "})"}
	case strings.HasSuffix(p, "eslint.config.js"):
		return []string{"import js from '@eslint/js'", "import pluginVue from 'eslint-plugin-vue'", "import tseslint from 'typescript-eslint'", "", "export default tseslint.config(",
			"  { ignores: ['dist', 'coverage', 'playwright-report', 'test-results'] },", "  js.configs.recommended,", "  ...tseslint.configs.recommended,", "  ...pluginVue.configs['flat/recommended'],",
			"  {", "    files: ['**/*.vue'],", "    languageOptions: { parserOptions: { parser: tseslint.parser } },", "  },", "  {", "    rules: {", "      'no-console': 'warn',",
			"      '@typescript-eslint/no-explicit-any': 'error',", "      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],", "      'vue/multi-word-component-names': 'off',", "    },", "  },", ")"}
	case strings.HasSuffix(p, ".tf"):
		return g.tfSource(r, f, slot)
	case strings.HasSuffix(p, "values.yaml"), strings.HasSuffix(p, "values-staging.yaml"):
		l := []string{"image:", "  repository: 318274650912.dkr.ecr.eu-west-1.amazonaws.com/tidewater-api", "  tag: \"" + slot("version", versionFrom(r)) + "\"", "  pullPolicy: IfNotPresent", "",
			"serviceAccount:", "  create: true", "  annotations:", "    eks.amazonaws.com/role-arn: arn:aws:iam::318274650912:role/tidewater-staging-api", "",
			"api:", "  replicas: 2", "  resources:", "    requests: { cpu: 250m, memory: 384Mi }", "    limits: { cpu: \"1\", memory: 768Mi }", "  phpFpm:", "    maxChildren: 16", "    requestTerminateTimeout: 60s", "",
			"nginx:", "  image: nginx:1.27-alpine", "  fastcgiReadTimeout: 60s", ""}
		l = append(l, "workers:")
		for _, q := range []string{"label-events", "tracking-sync", "manifests", "notifications"} {
			l = append(l, "  "+q+":", "    queue: "+q, fmt.Sprintf("    replicas: %d", 1+r.IntN(3)), "    command: [\"php\", \"artisan\", \"queue:work\", \"sqs\", \"--queue="+q+"\", \"--tries=3\", \"--max-time=3600\"]",
				"    resources:", "      requests: { cpu: 100m, memory: 256Mi }", "      limits: { cpu: 500m, memory: 512Mi }")
		}
		return append(l, "", "env:", "  APP_ENV: staging", "  LOG_CHANNEL: stderr", "  QUEUE_CONNECTION: sqs", "  SQS_SUFFIX: -staging", "  DB_HOST: tidewater-staging.cluster-c8x2rq1w.eu-west-1.rds.amazonaws.com")
	case strings.HasSuffix(p, "worker-deployment.yaml"):
		return []string{"{{- range $name, $w := .Values.workers }}", "---", "apiVersion: apps/v1", "kind: Deployment", "metadata:", "  name: {{ include \"tidewater-api.fullname\" $ }}-{{ $name }}", "  labels:",
			"    {{- include \"tidewater-api.labels\" $ | nindent 4 }}", "    app.kubernetes.io/component: {{ $name }}", "spec:", "  replicas: {{ $w.replicas }}", "  selector:", "    matchLabels:",
			"      app.kubernetes.io/component: {{ $name }}", "  template:", "    metadata:", "      labels:", "        app.kubernetes.io/component: {{ $name }}", "    spec:",
			"      serviceAccountName: {{ $w.serviceAccount | default (include \"tidewater-api.serviceAccountName\" $) }}", "      containers:", "        - name: worker",
			"          image: \"{{ $.Values.image.repository }}:{{ $.Values.image.tag }}\"", "          command: {{ toJson $w.command }}", "          envFrom:", "            - configMapRef:", "                name: {{ include \"tidewater-api.fullname\" $ }}-env",
			"            - secretRef:", "                name: tidewater-api-secrets", "          resources:", "            {{- toYaml $w.resources | nindent 12 }}", "{{- end }}"}
	default: // nginx
		return []string{"server {", "    listen 8080;", "    server_name api.staging.tidewater.example;", "    root /var/www/api/public;", "    index index.php;", "",
			"    client_max_body_size 10m;", "    add_header X-Request-Id $request_id always;", "", "    location / {", "        try_files $uri $uri/ /index.php?$query_string;", "    }", "",
			"    location ~ \\.php$ {", "        fastcgi_pass " + slot("hostport", func() string { return fmt.Sprintf("127.0.0.1:%d", 9000+r.IntN(100)) }) + ";", "        fastcgi_index index.php;",
			"        fastcgi_param SCRIPT_FILENAME $realpath_root$fastcgi_script_name;", "        fastcgi_param HTTP_X_REQUEST_ID $request_id;", "        include fastcgi_params;", "        fastcgi_read_timeout 60s;", "    }", "",
			"    location = /healthz {", "        access_log off;", "        return 200 \"ok\\n\";", "    }", "}"}
	}
}

// tfSource writes the Terraform files of the staging environment.
func (g *gen) tfSource(r *rand.Rand, f *srcFile, slot slotFn) []string {
	switch f.base() {
	case "sqs.tf":
		l := []string{"locals {", "  queues = toset([\"label-events\", \"tracking-sync\", \"manifests\", \"notifications\"])", "}", ""}
		return append(l, "resource \"aws_sqs_queue\" \"dlq\" {", "  for_each                  = local.queues", "  name                      = \"tidewater-${each.key}-dlq-${var.env}\"", "  message_retention_seconds = 1209600", "  tags                      = local.tags", "}", "",
			"resource \"aws_sqs_queue\" \"jobs\" {", "  for_each                   = local.queues", "  name                       = \"tidewater-${each.key}-${var.env}\"", "  visibility_timeout_seconds = 900",
			"  receive_wait_time_seconds  = 20", "  redrive_policy = jsonencode({", "    deadLetterTargetArn = aws_sqs_queue.dlq[each.key].arn", "    maxReceiveCount     = 5", "  })", "  tags = local.tags", "}")
	case "s3.tf":
		return []string{"resource \"aws_s3_bucket\" \"labels\" {", "  bucket = \"tidewater-labels-${var.env}\"", "  tags   = local.tags", "}", "",
			"resource \"aws_s3_bucket_lifecycle_configuration\" \"labels\" {", "  bucket = aws_s3_bucket.labels.id", "", "  rule {", "    id     = \"expire-old-labels\"", "    status = \"Enabled\"", "    filter {}",
			"    expiration {", "      days = 400", "    }", "  }", "}", "", "resource \"aws_s3_bucket_public_access_block\" \"labels\" {", "  bucket                  = aws_s3_bucket.labels.id",
			"  block_public_acls       = true", "  block_public_policy     = true", "  ignore_public_acls      = true", "  restrict_public_buckets = true", "}"}
	case "iam.tf":
		return []string{"data \"aws_iam_policy_document\" \"worker_assume\" {", "  statement {", "    actions = [\"sts:AssumeRoleWithWebIdentity\"]", "    principals {", "      type        = \"Federated\"",
			"      identifiers = [var.oidc_provider_arn]", "    }", "    condition {", "      test     = \"StringEquals\"", "      variable = \"${var.oidc_provider}:sub\"",
			"      values   = [\"system:serviceaccount:tidewater-${var.env}:tidewater-api\"]", "    }", "  }", "}", "",
			"resource \"aws_iam_role\" \"api\" {", "  name                 = \"tidewater-${var.env}-api\"", "  assume_role_policy   = data.aws_iam_policy_document.worker_assume.json", "  permissions_boundary = var.permissions_boundary_arn", "}", "",
			"data \"aws_iam_policy_document\" \"api_queues\" {", "  statement {", "    actions   = [\"sqs:SendMessage\", \"sqs:GetQueueAttributes\", \"sqs:GetQueueUrl\"]", "    resources = [for q in aws_sqs_queue.jobs : q.arn]", "  }", "}", "",
			"resource \"aws_iam_role_policy\" \"api_queues\" {", "  role   = aws_iam_role.api.id", "  policy = data.aws_iam_policy_document.api_queues.json", "}"}
	default: // main.tf
		return []string{"terraform {", "  required_version = \">= 1.9.0\"", "  backend \"s3\" {", "    bucket         = \"tidewater-tfstate-staging\"", "    key            = \"envs/staging/terraform.tfstate\"",
			"    region         = \"eu-west-1\"", "    dynamodb_table = \"tidewater-tflock\"", "    encrypt        = true", "  }", "  required_providers {", "    aws = {", "      source  = \"hashicorp/aws\"", "      version = \"~> 5.74\"", "    }", "  }", "}", "",
			"provider \"aws\" {", "  region = \"eu-west-1\"", "  assume_role {", "    role_arn = \"arn:aws:iam::318274650912:role/tidewater-terraform\"", "  }", "}", "",
			"locals {", "  tags = {", "    project = \"tidewater\"", "    env     = var.env", "    owner   = \"platform\"", "    budget  = \"" + slot("key", func() string { return "cc-" + rsr(r, lowerAlnum, 6) }) + "\"", "  }", "}"}
	}
}
