package shipgen

import (
	"fmt"
	"strings"
)

// srcFile is a file of the product.
type srcFile struct {
	path  string   // from the repository root
	lang  string   // php, phpunit, swift, xctest, vue, ts, vitest, playwright, config
	kind  string   // php: service, model, controller, job; swift: kit, app; ts: lib, store
	name  string   // class, struct, component or module
	dir   string   // the namespace's last part, the feature, or the folder
	funcs []string // methods or functions
	test  *srcFile // its test file
	n     int      // which file of the world it is
	read  bool     // read once: its identifiers are planted
}

func (f *srcFile) abs() string { return root + "/" + f.path }

// base is the file's name without its directory.
func (f *srcFile) base() string { return f.path[strings.LastIndexByte(f.path, '/')+1:] }

// world is the product: its files, and what the session did to it.
type world struct {
	php     []*srcFile // PHP classes with a PHPUnit test
	kit     []*srcFile // TidewaterKit sources
	app     []*srcFile // the iOS app's view models
	vue     []*srcFile // Vue components
	ts      []*srcFile // TypeScript modules and stores
	e2e     []*srcFile // Playwright specs
	configs []*srcFile
	all     []*srcFile
	used    map[*srcFile]bool // the subject of a task already
	branch  map[string]bool
	suites  map[string][]string // test names a runner lists, per suite
}

type phpClass struct{ name, dir, kind string }

var phpClasses = []phpClass{
	{"ZoneResolver", "Rates", "service"}, {"RateCalculator", "Rates", "service"}, {"SurchargeTable", "Rates", "service"},
	{"LabelPurchaser", "Labels", "service"}, {"CarrierClient", "Labels", "service"}, {"LabelRenderer", "Labels", "service"},
	{"EventNormalizer", "Tracking", "service"}, {"TimelineMerger", "Tracking", "service"}, {"SlotAllocator", "Pickups", "service"},
	{"CutoffPolicy", "Pickups", "service"}, {"HsCodeValidator", "Customs", "service"}, {"DutyEstimator", "Customs", "service"},
	{"ManifestBuilder", "Manifests", "service"}, {"ManifestCloser", "Manifests", "service"}, {"ReturnWindowPolicy", "Returns", "service"},
	{"Shipment", "Models", "model"}, {"Parcel", "Models", "model"}, {"Carrier", "Models", "model"}, {"Label", "Models", "model"},
	{"Manifest", "Models", "model"}, {"Pickup", "Models", "model"}, {"Depot", "Models", "model"}, {"TrackingEvent", "Models", "model"},
	{"ReturnRequest", "Models", "model"}, {"CustomsDeclaration", "Models", "model"},
	{"ShipmentController", "V1", "controller"}, {"ParcelController", "V1", "controller"}, {"LabelController", "V1", "controller"},
	{"ManifestController", "V1", "controller"}, {"PickupController", "V1", "controller"}, {"TrackingController", "V1", "controller"},
	{"ReturnRequestController", "V1", "controller"}, {"RateQuoteController", "V1", "controller"},
	{"PurchaseLabel", "Jobs", "job"}, {"SyncTrackingEvents", "Jobs", "job"}, {"CloseManifest", "Jobs", "job"},
	{"NotifyRecipient", "Jobs", "job"}, {"ExpireReturnLabels", "Jobs", "job"},
}

var phpMethods = map[string][]string{
	"service":    {"resolve", "calculate", "purchase", "render", "normalize", "merge", "allocate", "isAfterCutoff", "validate", "estimate", "build", "close", "forParcel", "applySurcharges", "quote", "refresh", "void", "windowFor", "cheapestFor"},
	"model":      {"shipment", "parcels", "carrier", "scopeOpen", "markDelivered", "cancel", "isInternational", "totalWeightGrams", "latestEvent", "trackingUrl", "depot", "events"},
	"controller": {"index", "show", "store", "update", "destroy", "cancel", "reprint"},
	"job":        {"handle", "failed", "middleware", "retryUntil", "backoff", "uniqueId"},
}

type swiftType struct{ name, dir string }

var kitTypes = []swiftType{
	{"APIClient", "Networking"}, {"Endpoint", "Networking"}, {"RetryPolicy", "Networking"}, {"ShipmentDecoder", "Models"},
	{"TrackingEventMapper", "Models"}, {"ETAFormatter", "Formatting"}, {"WeightFormatter", "Formatting"}, {"AddressFormatter", "Formatting"},
	{"TimelineBuilder", "Tracking"}, {"ShipmentCache", "Storage"}, {"TokenStore", "Auth"}, {"PostcodeValidator", "Validation"},
}

var appTypes = []swiftType{
	{"ShipmentListViewModel", "Shipments"}, {"TrackingDetailViewModel", "Tracking"}, {"PickupBookingViewModel", "Pickup"},
	{"LabelShareViewModel", "Labels"}, {"ScannerViewModel", "Scanner"}, {"ReturnFlowViewModel", "Returns"}, {"NotificationSettingsViewModel", "Settings"},
}

var swiftFuncs = []string{"string", "decode", "send", "delay", "build", "validate", "store", "load", "invalidate", "refresh", "merge", "normalized", "format", "parse", "reload", "groupByDay", "apply", "select", "book", "confirm", "share", "handleScan", "submit", "toggle"}

var vueComponents = []string{"ShipmentTable", "PickupForm", "TrackingTimeline", "LabelPreview", "RateQuoteCard", "ManifestList", "ReturnWizard", "AddressFields", "ParcelEditor", "CarrierPicker"}

var tsModules = []string{"eta", "money", "weight", "postcode", "api", "dates", "csv", "labels"}

var tsStores = []string{"shipments", "pickups", "session", "manifests", "returns"}

var tsFuncs = []string{"formatEta", "formatMoney", "toKilograms", "normalisePostcode", "fetchJson", "addWorkingDays", "toCsvRow", "labelFileName", "parseIsoDate", "roundToQuarter", "isRemoteArea", "splitAddress"}

var e2eSpecs = []string{"pickup", "tracking", "login", "labels", "manifests", "returns", "rates", "shipments"}

var configPaths = []string{
	"api/composer.json", "api/phpunit.xml", "api/config/services.php", "api/config/queue.php", "api/routes/api.php", "api/.env.example",
	"ios/TidewaterKit/Package.swift",
	"web/package.json", "web/vite.config.ts", "web/playwright.config.ts", "web/eslint.config.js",
	"infra/terraform/envs/staging/sqs.tf", "infra/terraform/envs/staging/s3.tf", "infra/terraform/envs/staging/iam.tf", "infra/terraform/envs/staging/main.tf",
	"infra/helm/tidewater-api/values.yaml", "infra/helm/tidewater-api/values-staging.yaml", "infra/helm/tidewater-api/templates/worker-deployment.yaml",
	"infra/nginx/api.conf",
}

// Pieces of test names.
var testVerbs = []string{"rejects", "resolves", "rounds", "keeps", "splits", "merges", "orders", "skips", "retries", "books", "prices", "voids", "closes", "formats", "groups", "refunds", "labels", "caps", "validates", "expires"}

var testObjects = []string{"remote postcode", "pickup after cutoff", "parcel over max weight", "manifest with voided label", "return outside window",
	"customs value in yen", "surcharge for saturday", "duplicate tracking event", "timeline across dst", "depot closed on bank holiday",
	"label for northern ireland", "quote without dimensions", "two parcel shipment", "event from unknown carrier", "eta on the same day",
	"weight in ounces", "hs code with dots", "duty for gifts", "pickup on sunday", "address with unit number", "rate card for zone four",
	"cancelled shipment", "delivered parcel", "late scan", "reprinted label"}

var testQualifiers = []string{"", "twice", "when empty", "for guests", "after midnight", "in bst", "for business accounts", "with retries", "on staging"}

// Fixed text of outputs: framework and vendor stack frames, compiler
// lines, log messages. Kept here so identifiers are drawn outside it.
var laravelFrames = []string{
	"vendor/laravel/framework/src/Illuminate/Database/Connection.php(779): Illuminate\\Database\\Connection->runQueryCallback('insert into `pa...', Array, Object(Closure))",
	"vendor/laravel/framework/src/Illuminate/Database/Connection.php(545): Illuminate\\Database\\Connection->run('insert into `pa...', Array, Object(Closure))",
	"vendor/laravel/framework/src/Illuminate/Database/Query/Builder.php(3746): Illuminate\\Database\\Connection->insert('insert into `pa...', Array)",
	"vendor/laravel/framework/src/Illuminate/Database/Eloquent/Builder.php(2093): Illuminate\\Database\\Query\\Builder->insertGetId(Array, 'id')",
	"vendor/laravel/framework/src/Illuminate/Database/Eloquent/Model.php(1361): Illuminate\\Database\\Eloquent\\Builder->__call('insertGetId', Array)",
	"vendor/laravel/framework/src/Illuminate/Database/Eloquent/Model.php(1182): Illuminate\\Database\\Eloquent\\Model->performInsert(Object(Illuminate\\Database\\Eloquent\\Builder))",
}

var selectFrames = []string{
	"vendor/laravel/framework/src/Illuminate/Database/Connection.php(779): Illuminate\\Database\\Connection->runQueryCallback('select `id`, `c...', Array, Object(Closure))",
	"vendor/laravel/framework/src/Illuminate/Database/Connection.php(398): Illuminate\\Database\\Connection->run('select `id`, `c...', Array, Object(Closure))",
	"vendor/laravel/framework/src/Illuminate/Database/Query/Builder.php(3133): Illuminate\\Database\\Connection->select('select `id`, `c...', Array, true)",
	"vendor/laravel/framework/src/Illuminate/Database/Query/Builder.php(3118): Illuminate\\Database\\Query\\Builder->runSelect()",
	"vendor/laravel/framework/src/Illuminate/Database/Query/Builder.php(3706): Illuminate\\Database\\Query\\Builder->Illuminate\\Database\\Query\\{closure}()",
	"vendor/laravel/framework/src/Illuminate/Database/Query/Builder.php(3117): Illuminate\\Database\\Query\\Builder->onceWithColumns(Array, Object(Closure))",
	"vendor/laravel/framework/src/Illuminate/Database/Eloquent/Builder.php(875): Illuminate\\Database\\Query\\Builder->get(Array)",
	"vendor/laravel/framework/src/Illuminate/Database/Eloquent/Builder.php(857): Illuminate\\Database\\Eloquent\\Builder->getModels(Array)",
	"vendor/laravel/framework/src/Illuminate/Database/Concerns/BuildsQueries.php(333): Illuminate\\Database\\Eloquent\\Builder->get(Array)",
}

var routingFrames = []string{
	"vendor/laravel/framework/src/Illuminate/Routing/ControllerDispatcher.php(46): Illuminate\\Routing\\Controller->callAction('store', Array)",
	"vendor/laravel/framework/src/Illuminate/Routing/Route.php(260): Illuminate\\Routing\\ControllerDispatcher->dispatch(Object(Illuminate\\Routing\\Route), Object(App\\Http\\Controllers\\Api\\V1\\Controller), 'store')",
	"vendor/laravel/framework/src/Illuminate/Routing/Route.php(206): Illuminate\\Routing\\Route->runController()",
	"vendor/laravel/framework/src/Illuminate/Routing/Router.php(806): Illuminate\\Routing\\Route->run()",
	"vendor/laravel/framework/src/Illuminate/Pipeline/Pipeline.php(144): Illuminate\\Routing\\Router->Illuminate\\Routing\\{closure}(Object(Illuminate\\Http\\Request))",
	"vendor/laravel/framework/src/Illuminate/Routing/Middleware/SubstituteBindings.php(51): Illuminate\\Pipeline\\Pipeline->Illuminate\\Pipeline\\{closure}(Object(Illuminate\\Http\\Request))",
	"vendor/laravel/framework/src/Illuminate/Pipeline/Pipeline.php(183): Illuminate\\Routing\\Middleware\\SubstituteBindings->handle(Object(Illuminate\\Http\\Request), Object(Closure))",
	"vendor/laravel/sanctum/src/Http/Middleware/EnsureFrontendRequestsAreStateful.php(25): Illuminate\\Pipeline\\Pipeline->Illuminate\\Pipeline\\{closure}(Object(Illuminate\\Http\\Request))",
	"vendor/laravel/framework/src/Illuminate/Routing/Middleware/ThrottleRequests.php(161): Illuminate\\Pipeline\\Pipeline->Illuminate\\Pipeline\\{closure}(Object(Illuminate\\Http\\Request))",
	"vendor/laravel/framework/src/Illuminate/Pipeline/Pipeline.php(119): Illuminate\\Pipeline\\Pipeline->Illuminate\\Pipeline\\{closure}(Object(Illuminate\\Http\\Request))",
	"vendor/laravel/framework/src/Illuminate/Routing/Router.php(805): Illuminate\\Pipeline\\Pipeline->then(Object(Closure))",
	"vendor/laravel/framework/src/Illuminate/Routing/Router.php(784): Illuminate\\Routing\\Router->runRouteWithinStack(Object(Illuminate\\Routing\\Route), Object(Illuminate\\Http\\Request))",
	"vendor/laravel/framework/src/Illuminate/Foundation/Http/Kernel.php(200): Illuminate\\Routing\\Router->dispatch(Object(Illuminate\\Http\\Request))",
	"vendor/laravel/framework/src/Illuminate/Foundation/Http/Middleware/TransformsRequest.php(21): Illuminate\\Foundation\\Http\\Kernel->Illuminate\\Foundation\\Http\\{closure}(Object(Illuminate\\Http\\Request))",
	"vendor/laravel/framework/src/Illuminate/Http/Middleware/HandleCors.php(62): Illuminate\\Pipeline\\Pipeline->Illuminate\\Pipeline\\{closure}(Object(Illuminate\\Http\\Request))",
	"vendor/laravel/framework/src/Illuminate/Foundation/Http/Kernel.php(175): Illuminate\\Pipeline\\Pipeline->then(Object(Closure))",
	"vendor/laravel/framework/src/Illuminate/Foundation/Http/Kernel.php(144): Illuminate\\Foundation\\Http\\Kernel->sendRequestThroughRouter(Object(Illuminate\\Http\\Request))",
	"vendor/laravel/framework/src/Illuminate/Foundation/Application.php(1188): Illuminate\\Foundation\\Http\\Kernel->handle(Object(Illuminate\\Http\\Request))",
	"public/index.php(17): Illuminate\\Foundation\\Application->handleRequest(Object(Illuminate\\Http\\Request))",
}

var phpunitFrames = []string{
	"vendor/laravel/framework/src/Illuminate/Testing/Concerns/AssertsStatusCodes.php",
	"vendor/laravel/framework/src/Illuminate/Testing/TestResponseAssert.php",
	"vendor/laravel/framework/src/Illuminate/Testing/TestResponse.php",
}

var guzzleFrames = []string{
	"vendor/guzzlehttp/guzzle/src/Handler/CurlFactory.php(161): GuzzleHttp\\Handler\\CurlFactory::createRejection(Object(GuzzleHttp\\Handler\\EasyHandle), Array)",
	"vendor/guzzlehttp/guzzle/src/Handler/CurlFactory.php(113): GuzzleHttp\\Handler\\CurlFactory::finishError(Object(GuzzleHttp\\Handler\\CurlHandler), Object(GuzzleHttp\\Handler\\EasyHandle), Object(GuzzleHttp\\Handler\\CurlFactory))",
	"vendor/guzzlehttp/guzzle/src/Handler/CurlHandler.php(43): GuzzleHttp\\Handler\\CurlFactory::finish(Object(GuzzleHttp\\Handler\\CurlHandler), Object(GuzzleHttp\\Handler\\EasyHandle), Object(GuzzleHttp\\Handler\\CurlFactory))",
	"vendor/guzzlehttp/guzzle/src/Middleware.php(30): GuzzleHttp\\Handler\\CurlHandler->__invoke(Object(GuzzleHttp\\Psr7\\Request), Array)",
	"vendor/guzzlehttp/guzzle/src/PrepareBodyMiddleware.php(64): GuzzleHttp\\Middleware::GuzzleHttp\\{closure}(Object(GuzzleHttp\\Psr7\\Request), Array)",
	"vendor/guzzlehttp/guzzle/src/Client.php(333): GuzzleHttp\\PrepareBodyMiddleware->__invoke(Object(GuzzleHttp\\Psr7\\Request), Array)",
	"vendor/laravel/framework/src/Illuminate/Http/Client/PendingRequest.php(926): GuzzleHttp\\Client->request('POST', 'https://api.car...', Array)",
	"vendor/laravel/framework/src/Illuminate/Support/helpers.php(338): Illuminate\\Http\\Client\\PendingRequest->Illuminate\\Http\\Client\\{closure}(1)",
	"vendor/laravel/framework/src/Illuminate/Http/Client/PendingRequest.php(920): retry(1, Object(Closure), 0, Object(Closure))",
}

var swiftCrashFrames = []string{
	"SwiftUI                       \t       0x1a3f1c2d8 closure #1 in ViewGraph.updateOutputs(async:) + 216",
	"SwiftUI                       \t       0x1a3f1b9a0 ViewGraph.updateOutputs(async:) + 176",
	"SwiftUI                       \t       0x1a3e0e4f4 ViewRendererHost.render(interval:updateDisplayList:targetTimestamp:) + 408",
	"SwiftUI                       \t       0x1a3e0c1c8 _UIHostingView.layoutSubviews() + 240",
	"UIKitCore                     \t       0x1a18b5e64 -[UIView(CALayerDelegate) layoutSublayersOfLayer:] + 2192",
	"QuartzCore                    \t       0x1a0a1c8f0 CA::Layer::layout_if_needed(CA::Transaction*) + 496",
	"QuartzCore                    \t       0x1a0a1c6d4 CA::Layer::layout_and_display_if_needed(CA::Transaction*) + 148",
	"QuartzCore                    \t       0x1a0a2f1a8 CA::Context::commit_transaction(CA::Transaction*, double, double*) + 472",
	"QuartzCore                    \t       0x1a0a2e8c0 CA::Transaction::commit() + 648",
	"UIKitCore                     \t       0x1a18c2d40 _UIApplicationFlushCATransaction + 52",
	"CoreFoundation                \t       0x19e9f2b5c __CFRUNLOOP_IS_CALLING_OUT_TO_AN_OBSERVER_CALLBACK_FUNCTION__ + 36",
	"CoreFoundation                \t       0x19e9f1a4c __CFRunLoopDoObservers + 552",
	"CoreFoundation                \t       0x19e9f0b1c __CFRunLoopRun + 1024",
	"CoreFoundation                \t       0x19e9f0288 CFRunLoopRunSpecific + 572",
	"GraphicsServices              \t       0x1ea1b54c0 GSEventRunModal + 164",
	"UIKitCore                     \t       0x1a18e6b74 -[UIApplication _run] + 816",
	"UIKitCore                     \t       0x1a18e51a4 UIApplicationMain + 340",
	"SwiftUI                       \t       0x1a3c2a6a8 closure #1 in KitRendererCommon(_:) + 168",
	"SwiftUI                       \t       0x1a3c2a5dc runApp<A>(_:) + 112",
	"SwiftUI                       \t       0x1a3c2a52c static App.main() + 180",
	"dyld                          \t       0x1c4a1fec8 start + 2724",
}

var swiftIdleFrames = []string{
	"libsystem_kernel.dylib        \t       0x1f0b8d688 mach_msg2_trap + 8",
	"libsystem_kernel.dylib        \t       0x1f0b90d98 mach_msg2_internal + 80",
	"libsystem_kernel.dylib        \t       0x1f0b90cb0 mach_msg_overwrite + 424",
	"libsystem_kernel.dylib        \t       0x1f0b90afc mach_msg + 24",
	"CoreFoundation                \t       0x19e9f1a84 __CFRunLoopServiceMachPort + 160",
	"CoreFoundation                \t       0x19e9f0d48 __CFRunLoopRun + 1212",
	"libsystem_pthread.dylib       \t       0x1f5a3e0d0 start_wqthread + 0",
	"libsystem_pthread.dylib       \t       0x1f5a3f474 _pthread_wqthread + 288",
	"libsystem_kernel.dylib        \t       0x1f0b8f3c8 __workq_kernreturn + 8",
	"Foundation                    \t       0x19dc0a2b0 -[NSThread main] + 48",
	"Foundation                    \t       0x19dc0c8f4 __NSThread__start__ + 724",
	"libsystem_pthread.dylib       \t       0x1f5a3c06c _pthread_start + 136",
}

var vendorJSFrames = []string{
	"at node_modules/.pnpm/@vue+test-utils@2.4.6/node_modules/@vue/test-utils/dist/vue-test-utils.cjs.js:7754:31",
	"at callWithErrorHandling node_modules/.pnpm/@vue+runtime-core@3.5.12/node_modules/@vue/runtime-core/dist/runtime-core.cjs.js:200:19",
	"at callWithAsyncErrorHandling node_modules/.pnpm/@vue+runtime-core@3.5.12/node_modules/@vue/runtime-core/dist/runtime-core.cjs.js:207:17",
	"at ReactiveEffect.getter [as fn] node_modules/.pnpm/@vue+runtime-core@3.5.12/node_modules/@vue/runtime-core/dist/runtime-core.cjs.js:3236:5",
}

var gitAreas = []string{"api", "ios", "web", "infra", "kit", "data"}

var gitSubjects = []string{"round surcharges per parcel", "retry carrier purchase on 502", "move zone table to rates service", "add depot cut-off to pickups",
	"bump laravel framework", "fix flaky manifest close test", "log request id on 5xx", "drop legacy v0 tracking endpoint", "split label renderer",
	"index tracking events on carrier ref", "handle parcels without dimensions", "cache eta strings per locale", "paginate shipment table",
	"add playwright trace on retry", "stream csv export", "show customs step for non-eu", "pin helm chart to 1.9", "queue label purchase"}

// fixedText joins the fixed vocabularies.
func fixedText() string {
	var b strings.Builder
	lists := [][]string{swiftFuncs, vueComponents, tsModules, tsStores, tsFuncs, e2eSpecs, configPaths, testVerbs, testObjects,
		laravelFrames, selectFrames, routingFrames, phpunitFrames, guzzleFrames, swiftCrashFrames, swiftIdleFrames, vendorJSFrames,
		gitAreas, gitSubjects, phpStmts, phpReturns, swiftStmts, tsStmts, laravelMessages, nginxMessages, testQualifiers}
	for _, m := range phpMethods {
		lists = append(lists, m)
	}
	for _, xs := range lists {
		for _, x := range xs {
			b.WriteString(x)
			b.WriteByte('\n')
		}
	}
	for _, c := range phpClasses {
		b.WriteString(c.name + "\n")
	}
	for _, t := range append(append([]swiftType{}, kitTypes...), appTypes...) {
		b.WriteString(t.name + "\n")
	}
	b.WriteString(systemPrompt)
	return b.String()
}

// newWorld lays out the product's files.
func newWorld(g *gen) *world {
	w := &world{used: map[*srcFile]bool{}, branch: map[string]bool{}, suites: map[string][]string{}}
	add := func(f *srcFile) *srcFile {
		f.n = len(w.all)
		w.all = append(w.all, f)
		return f
	}
	for _, c := range phpClasses {
		f := &srcFile{lang: "php", kind: c.kind, name: c.name, dir: c.dir, funcs: pickN(g, phpMethods[c.kind], min(len(phpMethods[c.kind]), 4+g.r.IntN(3)))}
		t := &srcFile{lang: "phpunit", kind: c.kind, name: c.name + "Test", dir: c.dir}
		switch c.kind {
		case "service":
			f.path = "api/app/Services/" + c.dir + "/" + c.name + ".php"
			t.path = "api/tests/Unit/" + c.dir + "/" + c.name + "Test.php"
		case "model":
			f.path = "api/app/Models/" + c.name + ".php"
			t.path = "api/tests/Unit/Models/" + c.name + "Test.php"
		case "controller":
			f.path = "api/app/Http/Controllers/Api/V1/" + c.name + ".php"
			t.path = "api/tests/Feature/Api/V1/" + c.name + "Test.php"
		default:
			f.path = "api/app/Jobs/" + c.name + ".php"
			t.path = "api/tests/Unit/Jobs/" + c.name + "Test.php"
		}
		add(f)
		f.test = add(t)
		w.php = append(w.php, f)
	}
	for _, k := range kitTypes {
		f := add(&srcFile{path: "ios/TidewaterKit/Sources/TidewaterKit/" + k.dir + "/" + k.name + ".swift", lang: "swift", kind: "kit", name: k.name, dir: k.dir, funcs: pickN(g, swiftFuncs[:14], 3+g.r.IntN(3))})
		f.test = add(&srcFile{path: "ios/TidewaterKit/Tests/TidewaterKitTests/" + k.name + "Tests.swift", lang: "xctest", kind: "kit", name: k.name + "Tests", dir: "TidewaterKitTests"})
		w.kit = append(w.kit, f)
	}
	for _, a := range appTypes {
		f := add(&srcFile{path: "ios/Tidewater/Features/" + a.dir + "/" + a.name + ".swift", lang: "swift", kind: "app", name: a.name, dir: a.dir, funcs: pickN(g, swiftFuncs[14:], 3+g.r.IntN(3))})
		f.test = add(&srcFile{path: "ios/TidewaterTests/" + a.name + "Tests.swift", lang: "xctest", kind: "app", name: a.name + "Tests", dir: "TidewaterTests"})
		w.app = append(w.app, f)
	}
	for _, c := range vueComponents {
		f := add(&srcFile{path: "web/src/components/" + c + ".vue", lang: "vue", name: c, dir: "components", funcs: pickN(g, tsFuncs, 3)})
		f.test = add(&srcFile{path: "web/src/components/" + c + ".spec.ts", lang: "vitest", name: c, dir: "components"})
		w.vue = append(w.vue, f)
	}
	for _, m := range tsModules {
		f := add(&srcFile{path: "web/src/lib/" + m + ".ts", lang: "ts", kind: "lib", name: m, dir: "lib", funcs: pickN(g, tsFuncs, 2+g.r.IntN(3))})
		f.test = add(&srcFile{path: "web/src/lib/" + m + ".spec.ts", lang: "vitest", kind: "lib", name: m, dir: "lib"})
		w.ts = append(w.ts, f)
	}
	for _, s := range tsStores {
		f := add(&srcFile{path: "web/src/stores/" + s + ".ts", lang: "ts", kind: "store", name: s, dir: "stores", funcs: pickN(g, []string{"load", "refresh", "select", "book", "cancel", "reset", "upsert", "remove"}, 4)})
		f.test = add(&srcFile{path: "web/src/stores/" + s + ".spec.ts", lang: "vitest", kind: "store", name: s, dir: "stores"})
		w.ts = append(w.ts, f)
	}
	for _, s := range e2eSpecs {
		w.e2e = append(w.e2e, add(&srcFile{path: "web/e2e/" + s + ".spec.ts", lang: "playwright", name: s, dir: "e2e"}))
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

// others picks up to n files of xs other than f.
func (w *world) others(g *gen, xs []*srcFile, f *srcFile, n int) []*srcFile {
	var res []*srcFile
	for _, k := range g.r.Perm(len(xs)) {
		if xs[k] != f && len(res) < n {
			res = append(res, xs[k])
		}
	}
	return res
}

// config returns the configuration file whose path ends with suffix.
func (w *world) config(suffix string) *srcFile {
	for _, f := range w.configs {
		if strings.HasSuffix(f.path, suffix) {
			return f
		}
	}
	panic("shipgen: no config file " + suffix)
}

// phpOf lists the PHP classes of a kind.
func (w *world) phpOf(kind string) []*srcFile {
	var res []*srcFile
	for _, f := range w.php {
		if f.kind == kind {
			res = append(res, f)
		}
	}
	return res
}

// branchName returns a branch name not used yet. A repeated slug gets a
// word in front rather than a number behind, so that no branch name (nor
// the link a push prints for it) is the start of another.
func (g *gen) branchName(prefix, slug string) string {
	words := []string{"", "followup-", "more-", "second-", "again-", "extra-"}
	for i := 0; ; i++ {
		w := words[i%len(words)]
		if i >= len(words) {
			w += fmt.Sprintf("%d-", i/len(words)+1)
		}
		b := prefix + "/" + w + slug
		if !g.w.branch[b] {
			g.w.branch[b] = true
			return b
		}
	}
}

// head returns the first n of xs, or all of them.
func head[T any](xs []T, n int) []T { return xs[:max(0, min(len(xs), n))] }

func pickN(g *gen, xs []string, n int) []string {
	res := make([]string, 0, n)
	for _, k := range g.r.Perm(len(xs))[:n] {
		res = append(res, xs[k])
	}
	return res
}

func dir(p string) string { return p[:strings.LastIndexByte(p, '/')] }

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

// snake turns CamelCase into snake_case.
func snake(s string) string {
	var b strings.Builder
	for i, c := range s {
		if c >= 'A' && c <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(c - 'A' + 'a')
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// kebab turns CamelCase into kebab-case.
func kebab(s string) string { return strings.ReplaceAll(snake(s), "_", "-") }

// camel turns words separated by spaces or underscores into camelCase.
func camel(s string) string {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '_' })
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// Alphabets of random identifiers.
const (
	hexDigits  = "0123456789abcdef"
	lowerAlnum = "abcdefghijkmnpqrstuvwxyz23456789"
	upperAlnum = "ABCDEFGHJKLMNPQRSTUVWXYZ0123456789"
	base62     = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	letters    = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lowers     = "abcdefghkmnpqrstuvwxyz"
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

// Makers of identifiers, for plant and fill.

func (g *gen) mkID(prefix string) func() string {
	return func() string { return prefix + "_" + g.rs(base62, 14+g.r.IntN(4)) }
}

func (g *gen) mkUUID() func() string { return g.uuid }

func (g *gen) mkUpperUUID() func() string { return func() string { return strings.ToUpper(g.uuid()) } }

func (g *gen) mkHash(n int) func() string { return func() string { return g.hex(n) } }

// mkCode is an application error code of the API, such as TW-E4021.
func (g *gen) mkCode() func() string {
	return func() string { return fmt.Sprintf("TW-E%d", 1000+g.r.IntN(9000)) }
}

func (g *gen) mkTicket(prefixes ...string) func() string {
	if len(prefixes) == 0 {
		prefixes = []string{"SHIP", "OPS", "MOB", "WEB", "INFRA", "CS"}
	}
	return func() string { return fmt.Sprintf("%s-%d", pick(g, prefixes...), 100+g.r.IntN(4900)) }
}

func (g *gen) mkSite(base string, lo, hi int) func() string {
	return func() string { return fmt.Sprintf("%s:%d", base, g.between(lo, hi)) }
}

func (g *gen) mkSiteCol(base string, lo, hi int) func() string {
	return func() string { return fmt.Sprintf("%s:%d:%d", base, g.between(lo, hi), g.between(3, 60)) }
}

// mkPHPSite is a site as PHP's stack traces write it: File.php(88).
func (g *gen) mkPHPSite(base string, lo, hi int) func() string {
	return func() string { return fmt.Sprintf("%s(%d)", base, g.between(lo, hi)) }
}

// mkTracking is a carrier tracking number.
func (g *gen) mkTracking() func() string {
	return func() string {
		return fmt.Sprintf("%s%09d%s", pick(g, "TW", "JD", "RX", "CP"), g.r.IntN(1_000_000_000), pick(g, "GB", "IE", "NL", "DE"))
	}
}

func (g *gen) mkVersion() func() string {
	return func() string { return fmt.Sprintf("%d.%d.%d", pick(g, 3, 4, 5), 20+g.r.IntN(40), g.r.IntN(30)) }
}

func (g *gen) mkEnv() func() string {
	return func() string {
		return "TW_" + pick(g, "LABELS", "CARRIER", "PICKUP", "TRACKING", "MANIFEST", "RATES", "CUSTOMS", "RETURNS") + "_" +
			pick(g, "TIMEOUT", "RETRY", "CACHE", "BATCH", "CUTOFF", "QUEUE", "WINDOW", "POOL") + "_" +
			pick(g, "SECONDS", "MS", "LIMIT", "SIZE", "TTL", "DAYS", "NAME") + fmt.Sprintf("_%d", 2+g.r.IntN(8))
	}
}

func (g *gen) mkKey(prefix string) func() string {
	return func() string {
		return prefix + "." + pick(g, "labels", "carriers", "pickups", "tracking", "manifests", "rates", "customs", "returns") + "." +
			pick(g, "timeout", "retry", "cache", "batch", "cutoff", "queue", "window") + "_" +
			pick(g, "seconds", "ms", "limit", "size", "ttl", "days", "mode") + "_" + g.rs(lowers, 3)
	}
}

// mkURL is an https URL on host with one of segs and a random tail.
func (g *gen) mkURL(host string, segs ...string) func() string {
	return func() string {
		return fmt.Sprintf("https://%s/%s/%s", host, pick(g, segs...), g.rs(lowerAlnum, 8+g.r.IntN(6)))
	}
}

// mkURLNum is a URL ending in a number of n digits, then tail.
func (g *gen) mkURLNum(prefix string, n int, tail string) func() string {
	return func() string {
		lo := 1
		for range n - 1 {
			lo *= 10
		}
		return fmt.Sprintf("%s%d%s", prefix, lo+g.r.IntN(9*lo), tail)
	}
}

// mkHostPort is a private address with a port.
func (g *gen) mkHostPort(ports ...int) func() string {
	return func() string {
		return fmt.Sprintf("10.%d.%d.%d:%d", 40+g.r.IntN(8), g.r.IntN(256), 2+g.r.IntN(250), pick(g, ports...))
	}
}

// ip is a private address of the cluster, as filler.
func (g *gen) ip() string {
	return g.fill(func() string { return fmt.Sprintf("10.%d.%d.%d", 40+g.r.IntN(8), g.r.IntN(256), 2+g.r.IntN(250)) })
}

// mkNode is an EKS node name.
func (g *gen) mkNode() func() string {
	return func() string {
		return fmt.Sprintf("ip-10-%d-%d-%d.eu-west-1.compute.internal", 40+g.r.IntN(8), g.r.IntN(256), 2+g.r.IntN(250))
	}
}

// testName is a PHPUnit test method name.
func (g *gen) testName() string {
	q := pick(g, testQualifiers...)
	s := "test_" + pick(g, testVerbs...) + "_" + strings.ReplaceAll(pick(g, testObjects...), " ", "_")
	if q != "" {
		s += "_" + strings.ReplaceAll(q, " ", "_")
	}
	return s
}

// testWords is a test title in words.
func (g *gen) testWords() string {
	s := pick(g, testVerbs...) + " " + pick(g, testObjects...)
	if q := pick(g, testQualifiers...); q != "" {
		s += " " + q
	}
	return s
}

// swiftTestName is an XCTest method name.
func (g *gen) swiftTestName() string {
	w := camel(g.testWords())
	return "test" + strings.ToUpper(w[:1]) + w[1:]
}

// testdox turns a PHPUnit method name into the sentence --testdox prints.
func testdox(method string) string {
	s := strings.ReplaceAll(strings.TrimPrefix(method, "test_"), "_", " ")
	return strings.ToUpper(s[:1]) + s[1:]
}
