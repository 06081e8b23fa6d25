package fleetgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// This file writes the product's files as read_file prints them. A file's
// text comes from its own random source, so two reads agree; identifiers
// are planted in it on its first read, and a later read shows filler in
// their place.

type slotFn func(kind string, mk func() string) string

func (g *gen) fileRand(f *srcFile) *rand.Rand {
	return rand.New(rand.NewPCG(g.seed*0x9e3779b97f4a7c15+uint64(f.n), uint64(f.n)^0x726f6f6b))
}

func (g *gen) readOf(f *srcFile) tcall {
	return readCall(f.abs(), func(o *out) { g.readFile(f, o) })
}

// readFile writes f with numbered lines.
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
	n := int(float64(50+r.IntN(90)) * g.sc() * 0.6)
	var lines []string
	switch f.lang {
	case "cs":
		lines = csSource(r, f, slot, n)
	case "cstest":
		lines = csTestSource(g, r, f, n)
	case "dart":
		lines = dartSource(r, f, slot, n)
	case "darttest":
		lines = dartTestSource(g, r, f, n)
	default:
		lines = g.configSource(r, f, slot, n)
	}
	for i, l := range lines {
		o.addf("%6d\t%s", i+1, l)
	}
}

func rpick(r *rand.Rand, xs ...string) string { return xs[r.IntN(len(xs))] }

var csBodies = [][]string{
	{"if (%[1]s is null)", "{", "    throw new ArgumentNullException(nameof(%[1]s));", "}"},
	{"var window = _calendar.WindowFor(%[1]s.SiteId, %[1]s.RequestedAt);", "if (!window.Contains(%[1]s.RequestedAt))", "{", "    _logger.LogDebug(\"Request {Id} outside window {Window}\", %[1]s.Id, window);", "    return Result.Conflict(\"outside_window\");", "}"},
	{"var total = %[1]s.Lines.Sum(l => l.Quantity * l.UnitPrice);", "total = Math.Round(total, 2, MidpointRounding.ToEven);"},
	{"await using var tx = await _db.Database.BeginTransactionAsync(ct);", "_db.Update(%[1]s);", "await _db.SaveChangesAsync(ct);", "await tx.CommitAsync(ct);"},
	{"foreach (var stop in %[1]s.Stops.OrderBy(s => s.Sequence))", "{", "    elapsed += stop.TravelTime + stop.OnSiteTime;", "}"},
	{"var offset = _clock.OffsetFor(%[1]s.SiteTimeZone);", "var local = %[1]s.RequestedAt.ToOffset(offset);"},
	{"if (_options.Value.StrictMode && %[1]s.Status == Status.Cancelled)", "{", "    return Result.Invalid(\"cancelled\");", "}"},
}

func csSource(r *rand.Rand, f *srcFile, slot slotFn, n int) []string {
	arg := strings.ToLower(f.class[:1]) + f.class[1:2]
	lines := []string{
		"using Microsoft.Extensions.Logging;",
		"using Microsoft.Extensions.Options;",
		"using Rookery.Domain.Common;",
		"",
		"namespace " + f.ns + ";",
		"",
		"/// <summary>",
		"/// " + rpick(r, "Plans", "Computes", "Checks", "Keeps") + " " + rpick(r, "visits", "deadlines", "reservations", "lines", "windows") + " for a work order.",
		"/// </summary>",
		fmt.Sprintf("public sealed class %s : I%s", f.class, f.class),
		"{",
		"    private readonly ILogger<" + f.class + "> _logger;",
		"    private readonly IClock _clock;",
		fmt.Sprintf("    private const string CacheKey = %q;", slot("key", func() string {
			return rpick(r, "sla", "visits", "parts", "routes") + ":" + strings.ToLower(f.class[:3]) + ":" + rsr(r, lowerAlnum, 6)
		})),
		"",
	}
	for len(lines) < n {
		m := f.methods[r.IntN(len(f.methods))]
		async := strings.HasSuffix(m, "Async")
		ret := "Result"
		if async {
			ret = "Task<Result>"
		}
		lines = append(lines, fmt.Sprintf("    public %s%s %s(%s %s%s)", map[bool]string{true: "async ", false: ""}[async], ret, m, rpick(r, "Visit", "WorkOrder", "Quote", "Shift"), arg, map[bool]string{true: ", CancellationToken ct = default", false: ""}[async]), "    {")
		for range 1 + r.IntN(3) {
			for _, l := range csBodies[r.IntN(len(csBodies))] {
				lines = append(lines, "        "+fmt.Sprintf(l, arg))
			}
		}
		lines = append(lines, "        return Result.Ok();", "    }", "")
	}
	return append(lines, "}")
}

func csTestSource(g *gen, r *rand.Rand, f *srcFile, n int) []string {
	lines := []string{"using FluentAssertions;", "using Rookery.Domain.Common;", "using Xunit;", "", "namespace " + f.ns + ";", "", "public class " + f.class, "{", "    private readonly FakeClock _clock = new(new DateTimeOffset(2025, 1, 6, 8, 0, 0, TimeSpan.Zero));", ""}
	for len(lines) < n {
		name := g.fill(func() string {
			return rpick(r, f.methods...) + "_" + rpick(r, testStates...) + "_" + rpick(r, testExpects...)
		})
		if r.IntN(3) == 0 {
			lines = append(lines, "    [Theory]", fmt.Sprintf("    [InlineData(%d, %d)]", r.IntN(90), r.IntN(90)), fmt.Sprintf("    [InlineData(%d, %d)]", r.IntN(90), r.IntN(90)), "    public void "+name+"(int minutes, int expected)")
		} else {
			lines = append(lines, "    [Fact]", "    public void "+name+"()")
		}
		lines = append(lines, "    {", "        var sut = new "+strings.TrimSuffix(f.class, "Tests")+"(NullLogger.Instance, _clock);", "        var result = sut."+rpick(r, f.methods...)+"(Fixtures."+rpick(r, "Visit", "WorkOrder", "Quote", "Shift")+"());", "        result.IsSuccess.Should().BeTrue();", "    }", "")
	}
	return append(lines, "}")
}

func dartSource(r *rand.Rand, f *srcFile, slot slotFn, n int) []string {
	lines := []string{"import 'package:collection/collection.dart';", "import 'package:flutter/foundation.dart';", "", "import '../core/clock.dart';", "import '../core/result.dart';", "", "class " + f.class + " extends ChangeNotifier {", "  " + f.class + "(this._clock);", "", "  final Clock _clock;",
		fmt.Sprintf("  static const _prefsKey = '%s';", slot("key", func() string { return "rookery." + strings.ToLower(f.class[:4]) + "." + rsr(r, lowerAlnum, 6) })), ""}
	for len(lines) < n {
		m := f.methods[r.IntN(len(f.methods))]
		lines = append(lines, fmt.Sprintf("  %s %s(List<Visit> visits) {", rpick(r, "List<Visit>", "String", "void", "Duration"), m),
			"    final now = _clock.now();",
			"    final sorted = visits.sorted((a, b) => a.slot.start.compareTo(b.slot.start));",
			rpick(r, "    if (sorted.isEmpty) return const [];", "    notifyListeners();", "    debugPrint('"+m+": ${sorted.length} visits');"),
			"    return "+rpick(r, "sorted", "sorted.where((v) => v.slot.end.isBefore(now)).toList()", "Duration.zero")+";",
			"  }", "")
	}
	return append(lines, "}")
}

func dartTestSource(g *gen, r *rand.Rand, f *srcFile, n int) []string {
	lines := []string{"import 'package:flutter_test/flutter_test.dart';", "import 'package:rookery_field/src/" + f.ns + ".dart';", "", "import '../fakes.dart';", "", "void main() {", "  group('" + f.class + "', () {", "    late FakeClock clock;", "", "    setUp(() => clock = FakeClock(DateTime.utc(2025, 1, 6, 8)));", ""}
	for len(lines) < n {
		lines = append(lines, fmt.Sprintf("    test('%s', () {", rpick(r, dartBehaviours...)),
			"      final sut = "+f.class+"(clock);",
			fmt.Sprintf("      final result = sut.%s(fixtureVisits(%d));", rpick(r, f.methods...), 2+r.IntN(9)),
			fmt.Sprintf("      expect(result, hasLength(%d));", 1+r.IntN(9)),
			"    });", "")
	}
	return append(lines, "  });", "}")
}

// configSource writes the configuration files. Each is short on its own;
// long files are padded with the sections such files repeat.
func (g *gen) configSource(r *rand.Rand, f *srcFile, slot slotFn, n int) []string {
	var ls []string
	add := func(s ...string) { ls = append(ls, s...) }
	switch f.class {
	case "appsettings", "appstaging":
		add("{", `  "Logging": {`, `    "LogLevel": {`, `      "Default": "Information",`, `      "Microsoft.AspNetCore": "Warning",`, `      "Microsoft.EntityFrameworkCore.Database.Command": "Warning"`, `    }`, `  },`,
			`  "ConnectionStrings": {`, fmt.Sprintf(`    "Rookery": "Server=%s;Database=rookery;User Id=rookery_app;Password=${SQL_PASSWORD};TrustServerCertificate=True"`, slot("hostport", g.mkHostPort())), `  },`,
			`  "Sla": {`, `    "DefaultResponseMinutes": 240,`, fmt.Sprintf(`    "HolidayCalendar": %q`, slot("key", g.mkKey())), `  },`,
			`  "Dispatch": {`, fmt.Sprintf(`    "QueueName": "dispatch-%s",`, slot("id", func() string { return rsr(r, lowerAlnum, 8) + "-q" })), `    "MaxBatch": 50`, `  },`)
		for len(ls) < n-2 {
			add(fmt.Sprintf(`  "Feature%s": { "Enabled": %v, "Rollout": %d },`, rpick(r, "RouteOptimizer", "PhotoCompression", "OfflineParts", "SlaPause", "BulkReschedule", "SignatureV2"), r.IntN(2) == 0, r.IntN(101)))
		}
		add(`  "AllowedHosts": "*"`, "}")
	case "packages", "apiproj":
		add("<Project>", "  <PropertyGroup>", "    <ManagePackageVersionsCentrally>true</ManagePackageVersionsCentrally>", "    <TargetFramework>net8.0</TargetFramework>", "    <Nullable>enable</Nullable>", "    <TreatWarningsAsErrors>false</TreatWarningsAsErrors>", "  </PropertyGroup>", "  <ItemGroup>")
		for _, p := range []string{"Microsoft.EntityFrameworkCore.SqlServer", "Microsoft.EntityFrameworkCore.Design", "Microsoft.AspNetCore.OpenApi", "Serilog.AspNetCore", "Azure.Identity", "Azure.Messaging.ServiceBus", "FluentValidation", "Polly.Extensions", "xunit", "xunit.runner.visualstudio", "FluentAssertions", "Microsoft.NET.Test.Sdk", "Testcontainers.MsSql", "NodaTime"} {
			add(fmt.Sprintf(`    <PackageVersion Include="%s" Version="%s" />`, p, pkgVersion(p)))
		}
		add("  </ItemGroup>", "</Project>")
	case "pubspec":
		add("name: rookery_field", "description: Rookery technician app.", "publish_to: 'none'", fmt.Sprintf("version: %s", slot("version", func() string { return fmt.Sprintf("2.%d.%d+%d", 10+r.IntN(20), r.IntN(10), 200+r.IntN(700)) })), "", "environment:", "  sdk: '>=3.4.0 <4.0.0'", "", "dependencies:", "  flutter:", "    sdk: flutter")
		for _, d := range pubDeps {
			add(fmt.Sprintf("  %s: ^%s", d[0], d[1]))
		}
		add("", "dev_dependencies:", "  flutter_test:", "    sdk: flutter", "  flutter_lints: ^4.0.0", "  mocktail: ^1.0.4", "", "flutter:", "  uses-material-design: true", "  assets:", "    - assets/images/", "    - assets/checklists/")
	case "site", "apirole", "roledefaults":
		add("---", "- name: Deploy the Rookery API", "  hosts: api", "  become: true", "  serial: \"50%\"", "  roles:", "    - common", "    - dotnet_runtime", "    - rookery_api", "")
		for len(ls) < n {
			add(fmt.Sprintf("- name: %s", rpick(r, "Render appsettings", "Install the systemd unit", "Copy the release", "Wait for health", "Drain from HAProxy", "Enable in HAProxy")), "  ansible.builtin."+rpick(r, "template", "copy", "uri", "systemd_service", "haproxy")+":", "    "+rpick(r, "src: appsettings.Production.json.j2", "dest: /opt/rookery/api/", "url: \"http://{{ inventory_hostname }}:5080/healthz\"", "name: rookery-api"), "    "+rpick(r, "mode: \"0640\"", "state: started", "status_code: 200", "backend: be_api"), "")
		}
		add(fmt.Sprintf("# rollout key %s", slot("key", func() string { return "rollout/" + rsr(r, lowerAlnum, 10) })))
	case "inventory":
		add("plugin: azure.azcollection.azure_rm", "include_vm_resource_groups:", "  - rg-rookery-stg", "auth_source: auto", "plain_host_names: true", "keyed_groups:", "  - prefix: tag", "    key: tags", "conditional_groups:", "  api: \"'api' in tags.role\"", "  worker: \"'worker' in tags.role\"", "hostvar_expressions:", "  ansible_host: private_ipv4_addresses | first", fmt.Sprintf("# subscription %s", slot("uuid", g.mkUUID())))
	case "haproxy":
		add("global", "    log /dev/log local0", "    maxconn 4096", "    stats socket /run/haproxy/admin.sock mode 660 level admin", "", "defaults", "    mode http", "    log global", "    option httplog", "    timeout connect 5s", "    timeout client 30s", "    timeout server 30s", "", "frontend fe_https", "    bind :443 ssl crt /etc/haproxy/certs/rookery.pem", "    default_backend be_api", "", "backend be_api", "    balance roundrobin", "    option httpchk GET /healthz", "    http-check expect status 200")
		for i := 1; i <= 4; i++ {
			add(fmt.Sprintf("    server api-%02d 10.20.1.%d:5080 check inter 2s fall 3 rise 2", i, 10+i))
		}
		add(fmt.Sprintf("    # reviewed in %s", slot("id", g.mkTicket())))
	case "ci":
		add("name: CI", "on:", "  push:", "    branches: [main]", "  pull_request:", "", "jobs:", "  server:", "    runs-on: ubuntu-24.04", "    steps:", "      - uses: actions/checkout@v4", "      - uses: actions/setup-dotnet@v4", "        with:", "          dotnet-version: '8.0.x'", "      - run: dotnet restore server/Rookery.sln", "      - run: dotnet build server/Rookery.sln --no-restore -c Release", "      - name: Test", "        run: dotnet test server/Rookery.sln --no-build -c Release --logger trx", "", "  mobile:", "    runs-on: ubuntu-24.04", "    steps:", "      - uses: actions/checkout@v4", "      - uses: subosito/flutter-action@v2", "        with:", "          flutter-version: '3.24.5'", "      - run: flutter pub get", "        working-directory: mobile", "      - run: flutter analyze", "        working-directory: mobile", "      - run: flutter test", "        working-directory: mobile", fmt.Sprintf("# cache key %s", slot("key", func() string { return "ci-cache-" + rsr(r, lowerAlnum, 9) })))
	default:
		// Source files of the Android host, the EF context, Program.cs and
		// the rest: code-like lines.
		add(fmt.Sprintf("// %s", f.path), "")
		add(mustLines[f.class]...)
		for len(ls) < n {
			add(rpick(r, "    override fun onCreate(savedInstanceState: Bundle?) {", "        super.onCreate(savedInstanceState)", "builder.Services.AddDbContext<RookeryDbContext>(o => o.UseSqlServer(cs));", "    modelBuilder.Entity<Visit>().HasIndex(v => new { v.TechnicianId, v.SlotStart });", "resource sqlDb 'Microsoft.Sql/servers/databases@2023-08-01-preview' = {", "        val channel = MethodChannel(flutterEngine.dartExecutor.binaryMessenger, CHANNEL)", "app.MapControllers();", "    [HttpPost(\"bulk-reschedule\")]", "        minSdk = 24", "    }", ""))
		}
		add(fmt.Sprintf("// owner: %s", slot("id", g.mkTicket())))
	}
	return ls
}

// mustLines are lines a file holds because an edit replaces them.
var mustLines = map[string][]string{
	"manifest":       {`<manifest xmlns:android="http://schemas.android.com/apk/res/android">`, `    <application android:label="Rookery" android:name="${applicationName}" android:icon="@mipmap/ic_launcher">`, `    <service android:name=".tracking.LocationTrackingService" android:exported="false" />`},
	"trackingsvc":    {"class LocationTrackingService : Service() {", "    override fun onStartCommand(intent: Intent?, flags: Int, startId: Int): Int {", "        startForeground(NOTIFICATION_ID, notification)"},
	"roledefaults":   {"---", "rookery_api_port: 5080", "rookery_api_env: {}"},
	"offlinequeuekt": {"class OfflineQueueBridge(private val scope: CoroutineScope) {", "    fun flush(batch: List<Item>) {", "        synchronized(lock) { uploadLocked(batch) }", "    }"},
	"dbcontext":      {"protected override void OnModelCreating(ModelBuilder modelBuilder)", "{", "    modelBuilder.Entity<Visit>().HasIndex(v => new { v.TechnicianId, v.SlotStart });"},
	"bicep":          {"param env string", "resource sqlDb 'Microsoft.Sql/servers/databases@2023-08-01-preview' = {"},
}

var pubDeps = [][2]string{{"provider", "6.1.2"}, {"go_router", "14.2.7"}, {"dio", "5.7.0"}, {"collection", "1.18.0"}, {"intl", "0.19.0"}, {"shared_preferences", "2.3.2"}, {"sqflite", "2.4.0"}, {"geolocator", "12.0.0"}, {"firebase_core", "2.32.0"}, {"firebase_messaging", "14.9.4"}, {"image_picker", "1.1.2"}, {"signature", "5.5.0"}}

func pkgVersion(p string) string {
	switch {
	case strings.HasPrefix(p, "Microsoft.EntityFrameworkCore"), strings.HasPrefix(p, "Microsoft.AspNetCore"):
		return "8.0.11"
	case p == "xunit":
		return "2.9.2"
	case p == "Microsoft.NET.Test.Sdk":
		return "17.11.1"
	}
	v := map[string]string{"Azure.Identity": "1.13.1", "Azure.Messaging.ServiceBus": "7.18.1", "Serilog.AspNetCore": "8.0.2", "FluentValidation": "11.10.0", "Polly.Extensions": "8.4.2", "xunit.runner.visualstudio": "2.8.2", "FluentAssertions": "6.12.1", "Testcontainers.MsSql": "3.10.0", "NodaTime": "3.2.0"}[p]
	if v == "" {
		v = "1.0.0"
	}
	return v
}
