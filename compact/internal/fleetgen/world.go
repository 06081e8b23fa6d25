package fleetgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// root is where the product lives.
const root = "/home/dev/rookery"

// srcFile is a file of the product.
type srcFile struct {
	path    string   // from the repository root
	lang    string   // cs, cstest, dart, darttest, config
	class   string   // the C# class or Dart class
	ns      string   // C# namespace or Dart library path
	methods []string // its methods
	test    *srcFile
	n       int  // index in the world: seeds the file's own random source
	read    bool // read once: its identifiers are planted
}

func (f *srcFile) abs() string { return root + "/" + f.path }

func (f *srcFile) base() string { return f.path[strings.LastIndexByte(f.path, '/')+1:] }

// world is the product: its files.
type world struct {
	cs      []*srcFile
	dart    []*srcFile
	configs map[string]*srcFile
	all     []*srcFile
	used    map[*srcFile]bool
	branch  map[string]bool
}

type csArea struct{ name, project string }

var csAreas = []csArea{{"Scheduling", "Rookery.Domain"}, {"Sla", "Rookery.Domain"}, {"Billing", "Rookery.Domain"}, {"Parts", "Rookery.Domain"}, {"Dispatch", "Rookery.Api"}, {"Persistence", "Rookery.Infrastructure"}}

var csNouns = []string{"Visit", "WorkOrder", "Technician", "RouteStop", "TimeWindow", "Shift", "SlaPolicy", "ResponseTarget", "BusinessHours", "Quote", "LaborRate", "InvoiceLine", "PartReservation", "VanStock", "Escalation", "SiteContact", "Checklist", "TravelLeg"}

var csSuffixes = []string{"Planner", "Calculator", "Validator", "Service", "Allocator", "Mapper", "Policy", "Handler", "Scheduler", "Repository"}

var csMethods = []string{"PlanAsync", "Calculate", "Validate", "AssignAsync", "Reserve", "Release", "ComputeDeadline", "ApplyRate", "MapToDto", "HandleAsync", "Reschedule", "TryBook", "ResolveWindow", "SplitLines", "Escalate", "LoadAsync", "SaveAsync", "Normalize"}

var testStates = []string{"OnPublicHoliday", "WhenWindowsOverlap", "WithZeroDuration", "AcrossDstChange", "ForOvertimeShift", "WhenTechnicianOnLeave", "WithNegativeQuantity", "AfterCancellation", "InSiteTimeZone", "WithSeveralParts", "WhenSlaPaused", "ForEmergencyCall", "AtMidnight", "WithoutContact"}

var testExpects = []string{"RollsToNextBusinessDay", "ReturnsConflict", "ThrowsArgumentException", "KeepsLocalTime", "AppliesOvertimeRate", "SkipsTechnician", "RejectsLine", "ReleasesReservation", "UsesSiteOffset", "SumsLines", "ExtendsDeadline", "EscalatesAtOnce", "KeepsOrder", "RoundsToQuarterHour"}

type dartFeature struct{ dir, class string }

var dartFeatures = []dartFeature{
	{"visits", "VisitListController"}, {"visits", "SlotFormatter"}, {"checklist", "ChecklistController"}, {"sync", "OfflineQueue"},
	{"parts", "PartsCart"}, {"auth", "SessionStore"}, {"route", "RouteSummary"}, {"signature", "SignaturePad"},
	{"photos", "PhotoUploader"}, {"timesheet", "TimesheetTotals"},
}

var dartMethods = []string{"sortByUrgency", "format", "toggle", "flush", "add", "restore", "durationLabel", "submit", "upload", "totalFor", "groupByDay", "retryFailed", "clear", "isOverdue"}

var dartBehaviours = []string{"puts overdue visits first", "formats a slot across midnight", "keeps unsynced items", "retries after a timeout", "drops duplicate parts", "restores an expired session", "sums travel legs", "rejects an empty signature", "uploads in order", "totals overtime separately", "groups visits by local day", "shows the next visit"}

// configs are the files tasks read and edit, by role.
var configPaths = map[string]string{
	"appsettings":    "server/src/Rookery.Api/appsettings.json",
	"appstaging":     "server/src/Rookery.Api/appsettings.Staging.json",
	"packages":       "server/Directory.Packages.props",
	"apiproj":        "server/src/Rookery.Api/Rookery.Api.csproj",
	"pubspec":        "mobile/pubspec.yaml",
	"manifest":       "mobile/android/app/src/main/AndroidManifest.xml",
	"site":           "ops/ansible/site.yml",
	"inventory":      "ops/ansible/inventories/staging/azure_rm.yml",
	"haproxy":        "ops/haproxy/haproxy.cfg",
	"ci":             ".github/workflows/ci.yml",
	"apirole":        "ops/ansible/roles/rookery_api/tasks/main.yml",
	"dbcontext":      "server/src/Rookery.Infrastructure/Persistence/RookeryDbContext.cs",
	"trackingsvc":    "mobile/android/app/src/main/kotlin/io/rookery/field/tracking/LocationTrackingService.kt",
	"analysisopts":   "mobile/analysis_options.yaml",
	"programcs":      "server/src/Rookery.Api/Program.cs",
	"dispatchctl":    "server/src/Rookery.Api/Controllers/VisitsController.cs",
	"roledefaults":   "ops/ansible/roles/rookery_api/defaults/main.yml",
	"bicep":          "ops/azure/sql.bicep",
	"mainactivity":   "mobile/android/app/src/main/kotlin/io/rookery/field/MainActivity.kt",
	"buildgradle":    "mobile/android/app/build.gradle",
	"offlinequeuekt": "mobile/android/app/src/main/kotlin/io/rookery/field/sync/OfflineQueueBridge.kt",
}

func newWorld(g *gen) *world {
	w := &world{configs: map[string]*srcFile{}, used: map[*srcFile]bool{}, branch: map[string]bool{}}
	add := func(f *srcFile) *srcFile {
		f.n = len(w.all)
		w.all = append(w.all, f)
		return f
	}
	names := map[string]bool{}
	for len(w.cs) < 16 {
		a := csAreas[g.r.IntN(len(csAreas))]
		cls := pick(g, csNouns...) + pick(g, csSuffixes...)
		if names[cls] {
			continue
		}
		names[cls] = true
		ms := pickN(g, csMethods, 4)
		f := add(&srcFile{path: fmt.Sprintf("server/src/%s/%s/%s.cs", a.project, a.name, cls), lang: "cs", class: cls, ns: a.project + "." + a.name, methods: ms})
		tp := strings.Replace(a.project, "Rookery.", "Rookery.", 1) + ".Tests"
		f.test = add(&srcFile{path: fmt.Sprintf("server/tests/%s/%s/%sTests.cs", tp, a.name, cls), lang: "cstest", class: cls + "Tests", ns: tp + "." + a.name, methods: ms})
		w.cs = append(w.cs, f)
	}
	for _, d := range dartFeatures {
		snake := snakeCase(d.class)
		f := add(&srcFile{path: fmt.Sprintf("mobile/lib/src/%s/%s.dart", d.dir, snake), lang: "dart", class: d.class, ns: d.dir + "/" + snake, methods: pickN(g, dartMethods, 3)})
		f.test = add(&srcFile{path: fmt.Sprintf("mobile/test/%s/%s_test.dart", d.dir, snake), lang: "darttest", class: d.class, ns: d.dir + "/" + snake, methods: f.methods})
		w.dart = append(w.dart, f)
	}
	keys := make([]string, 0, len(configPaths))
	for k := range configPaths {
		keys = append(keys, k)
	}
	sortStrings(keys)
	for _, k := range keys {
		w.configs[k] = add(&srcFile{path: configPaths[k], lang: "config", class: k})
	}
	return w
}

// subject picks a file of xs no task has used yet, if there is one.
func (w *world) subject(g *gen, xs []*srcFile) *srcFile {
	for range 40 {
		f := xs[g.r.IntN(len(xs))]
		if !w.used[f] {
			w.used[f] = true
			return f
		}
	}
	return xs[g.r.IntN(len(xs))]
}

// other picks a file of xs other than f.
func (w *world) other(g *gen, xs []*srcFile, f *srcFile) *srcFile {
	for {
		x := xs[g.r.IntN(len(xs))]
		if x != f {
			return x
		}
	}
}

func pickN(g *gen, xs []string, n int) []string {
	var out []string
	for _, i := range g.r.Perm(len(xs))[:n] {
		out = append(out, xs[i])
	}
	return out
}

func sortStrings(xs []string) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

func snakeCase(s string) string {
	var b strings.Builder
	for i, c := range s {
		if c >= 'A' && c <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}

// ---- random identifiers ----

const (
	letters    = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lowerAlnum = "abcdefghijkmnopqrstuvwxyz0123456789"
	hexDigits  = "0123456789abcdef"
)

func (g *gen) rs(alphabet string, n int) string { return rsr(g.r, alphabet, n) }

func rsr(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func (g *gen) hex(n int) string { return g.rs(hexDigits, n) }

func (g *gen) uuid() string {
	h := g.hex(32)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-" + string("89ab"[g.r.IntN(4)]) + h[17:20] + "-" + h[20:]
}

func (g *gen) mkUUID() func() string     { return g.uuid }
func (g *gen) mkHex(n int) func() string { return func() string { return g.hex(n) } }

// mkTrace makes a W3C trace id as ASP.NET Core reports it.
func (g *gen) mkTrace() func() string {
	return func() string { return "00-" + g.hex(32) + "-" + g.hex(16) + "-00" }
}

func (g *gen) mkTicket() func() string {
	return func() string {
		return fmt.Sprintf("%s-%d", pick(g, "RKY", "OPS", "MOB", "FS", "INC"), 100+g.r.IntN(9800))
	}
}

func (g *gen) mkID(prefix string) func() string {
	return func() string { return prefix + "_" + g.rs(lowerAlnum, 12) }
}

func (g *gen) mkHost(env string) func() string {
	return func() string {
		return fmt.Sprintf("%s-%s.%s.rookery.net", pick(g, "vmss-api", "vmss-worker", "vm-jobs", "vm-sync"), g.rs(lowerAlnum, 6), env)
	}
}

func (g *gen) mkHostPort() func() string {
	return func() string {
		return fmt.Sprintf("%s-%02d.%s.rookery.internal:%d", pick(g, "sql", "redis", "api", "sync", "queue", "seq"), 1+g.r.IntN(40), pick(g, "stg", "prd", "dev"), pick(g, 1433, 6380, 5341, 8443, 9090, 14333, 5672))
	}
}

func (g *gen) mkClient() func() string {
	return func() string {
		return fmt.Sprintf("%d.%d.%d.%d:%d", pick(g, 203, 198, 192), g.between(0, 255), g.between(0, 255), g.between(2, 254), g.between(20000, 65000))
	}
}

func (g *gen) mkCSTest(f *srcFile) func() string {
	return func() string {
		return fmt.Sprintf("%s.%s.%s_%s_%s", f.test.ns, f.test.class, pick(g, f.methods...), pick(g, testStates...), pick(g, testExpects...))
	}
}

func (g *gen) mkDartTest(f *srcFile) func() string {
	return func() string {
		return fmt.Sprintf("%s.%s() %s with %d visits", f.class, pick(g, f.methods...), pick(g, dartBehaviours...), g.between(2, 60))
	}
}

func (g *gen) mkEnv() func() string {
	return func() string {
		return "ROOKERY_" + pick(g, "SLA", "DISPATCH", "SYNC", "PARTS", "ROUTE", "BILLING") + "_" + pick(g, "GRACE", "BATCH", "RETRY", "WINDOW", "CACHE", "LOCK") + "_" + pick(g, "MINUTES", "SIZE", "LIMIT", "TTL", "SECONDS") + fmt.Sprintf("_V%d", 2+g.r.IntN(8))
	}
}

func (g *gen) mkKey() func() string {
	return func() string {
		return pick(g, "Scheduling", "Sla", "Dispatch", "Sync", "Parts", "Billing") + ":" + pick(g, "Grace", "Batch", "Retry", "Window", "Cache", "Lock") + pick(g, "Minutes", "Size", "Limit", "Ttl") + ":" + fmt.Sprint(g.between(2, 99))
	}
}

func (g *gen) mkVersion(major int) func() string {
	return func() string { return fmt.Sprintf("%d.%d.%d", major, g.between(1, 40), g.between(0, 19)) }
}

func (g *gen) mkURL(prefix string, digits int) func() string {
	return func() string {
		n := g.between(1, 9)
		for range digits - 1 {
			n = n*10 + g.r.IntN(10)
		}
		return fmt.Sprintf("%s%d", prefix, n)
	}
}

func (g *gen) mkMigration(name string) func() string {
	return func() string {
		t := g.now.Add(-g.randDur())
		return t.Format("20060102150405") + "_" + name
	}
}

func (g *gen) randDur() time.Duration { return time.Duration(g.between(60, 86400*3)) * time.Second }
