package fleetgen

import (
	"fmt"
	"strings"
	"time"
)

// This file writes the session: tasks the user gives, one after another,
// until the session has made its tool calls. The agent refers to what it
// saw in words; no assistant text or command names a planted identifier.

func (g *gen) session() {
	tasks := []func(){g.taskXunit, g.taskBuild, g.taskMigration, g.taskAPI500, g.taskFlutterTest, g.taskPub, g.taskAndroid, g.taskDeploy, g.taskCI}
	var order []func()
	for g.calls < g.o.ToolCalls {
		if len(order) == 0 {
			for _, k := range g.r.Perm(len(tasks)) {
				order = append(order, tasks[k])
			}
		}
		order[0]()
		order = order[1:]
	}
}

// ---- common steps ----

func (g *gen) branch(prefix, slug string) string {
	for i := 0; ; i++ {
		b := prefix + "/" + slug
		if i > 0 {
			b += fmt.Sprintf("-%d", i+1)
		}
		if !g.w.branch[b] {
			g.w.branch[b] = true
			return b
		}
	}
}

// finish checks the status, commits on a new branch and pushes.
func (g *gen) finish(slug, msg string, changed, created []string) {
	br := g.branch(pick(g, "fix", "chore", "feat"), slug)
	g.round("Checking what changed before committing.", shell("git status --short", func(o *out) {
		for _, p := range changed {
			o.add(" M " + p)
		}
		for _, p := range created {
			o.add("?? " + p)
		}
	}))
	g.round("Committing on a branch and pushing it for review.",
		shell(fmt.Sprintf("git switch -c %s && git add -A && git commit -m %q", br, msg), func(o *out) {
			o.addf("Switched to a new branch '%s'", br)
			o.addf("[%s %s] %s", br, g.passID("hash", g.mkHex(9)), msg)
			ins := g.between(6, 140)
			o.addf(" %d files changed, %d insertions(+), %d deletions(-)", len(changed)+len(created), ins, g.between(1, ins))
			for _, p := range created {
				o.addf(" create mode 100644 %s", p)
			}
		}),
		shell("git push -u origin "+br, func(o *out) {
			n := g.between(8, 40)
			o.addf("Enumerating objects: %d, done.\nCounting objects: 100%% (%d/%d), done.\nDelta compression using up to 12 threads\nWriting objects: 100%% (%d/%d), %d.%02d KiB | %d.%02d MiB/s, done.", n, n, n, n/2, n/2, g.between(1, 9), g.r.IntN(100), g.between(1, 9), g.r.IntN(100))
			o.addf("Total %d (delta %d), reused 0 (delta 0), pack-reused 0 (from 0)", n/2, n/4)
			o.add("remote: ")
			o.addf("remote: Create a pull request for '%s' on GitHub by visiting:", br)
			o.add("remote:      " + g.passID("url", func() string {
				return "https://github.com/rookery-io/rookery/pull/new/" + br + "?expand=" + g.rs(lowerAlnum, 5)
			}))
			o.add("remote: \nTo github.com:rookery-io/rookery.git")
			o.addf(" * [new branch]      %s -> %s\nbranch '%s' set up to track 'origin/%s'.", br, br, br, br)
		}))
	g.say(pick(g, "Done and pushed on a branch; ", "Committed and pushed; ") + pick(g, "the change is small, the tests that failed pass, and the constraints you gave are kept.", "verification runs are green and I stayed inside the constraints you set.", "nothing outside the task was touched."))
}

func (g *gen) csFiles(proj string) []*srcFile {
	var xs []*srcFile
	for _, f := range g.w.cs {
		if strings.Contains(f.path, "/"+proj+"/") {
			xs = append(xs, f)
		}
	}
	if len(xs) == 0 {
		return g.w.cs
	}
	return xs
}

func projOf(f *srcFile) string {
	return strings.SplitN(strings.TrimPrefix(f.path, "server/src/"), "/", 2)[0]
}

func dir(p string) string { return p[:strings.LastIndexByte(p, '/')] }

func (g *gen) ticketLink() (string, string) {
	return g.userID("id", g.mkTicket()), g.userID("url", g.mkURL("https://rookery.atlassian.net/browse/FS-", 5))
}

// csEdit returns an edit of one method body of f; the guard it adds logs
// under a new event id.
func (g *gen) csEdit(f *srcFile) (string, string) {
	old := "        return Result.Ok();\n    }"
	ev := g.fileID("id", func() string {
		return fmt.Sprintf("new EventId(%d, \"%s%s\")", g.between(4000, 4999), pick(g, "Window", "Slot", "Zone", "Rate", "Stock"), pick(g, "Guard", "Fallback", "Clamp", "Skip"))
	})
	return old, fmt.Sprintf("        %s\n        _logger.LogDebug(%s, \"Guarded {Id}\", %s);\n        return Result.Ok();\n    }", pick(g,
		"if (window.IsEmpty) return Result.Conflict(\"no_window\");",
		"total = Math.Round(total, 2, MidpointRounding.AwayFromZero);",
		"local = TimeZoneInfo.ConvertTime(local, _clock.ZoneFor(visit.SiteTimeZone));",
		"_db.ChangeTracker.Clear();"), ev, strings.ToLower(f.class[:1])+f.class[1:2]+".Id")
}

// dartEdit adds a version marker to an edited Dart line.
func (g *gen) dartEdit(line string) string {
	return line + fmt.Sprintf(" // %s", g.fileID("key", func() string { return fmt.Sprintf("order-rule-v%d.%d", g.between(2, 9), g.between(0, 20)) }))
}

// regressionTest writes a test class for f with a planted test name.
func (g *gen) regressionTest(f *srcFile) (string, string) {
	path := g.fileID("path", func() string {
		return dir(f.test.path) + "/" + f.class + pick(g, "Holiday", "Window", "Rounding", "Dst", "Overtime", "Reservation") + "RegressionTests.cs"
	})
	name := g.fileID("test", func() string {
		return pick(g, f.methods...) + "_" + pick(g, testStates...) + "_" + pick(g, testExpects...) + fmt.Sprintf("_Issue%d", g.between(100, 999))
	})
	cls := strings.TrimSuffix(path[strings.LastIndexByte(path, '/')+1:], ".cs")
	content := fmt.Sprintf(`using FluentAssertions;
using Xunit;

namespace %s;

public class %s
{
    [Fact]
    public void %s()
    {
        var clock = new FakeClock(new DateTimeOffset(2025, 1, 6, 8, 0, 0, TimeSpan.Zero));
        var sut = new %s(NullLogger.Instance, clock);
        var result = sut.%s(Fixtures.%s());
        result.IsSuccess.Should().BeTrue();
    }
}
`, f.test.ns, cls, name, f.class, pick(g, f.methods...), pick(g, "Visit", "WorkOrder", "Quote"))
	return path, content
}

// ---- tasks ----

// taskXunit: an xUnit test fails in the domain; read, fix, add a test.
func (g *gen) taskXunit() {
	f := g.w.subject(g, g.w.cs)
	proj := projOf(f)
	tproj := proj + ".Tests"
	t, link := g.ticketLink()
	g.user(fmt.Sprintf(pick(g,
		"%[1]s: dispatchers report wrong deadlines from %[2]s since Friday's deploy. Please find out why and fix it. Keep the public interface of the class as it is, the mobile app depends on the DTOs. Ticket: %[4]s",
		"Can you take %[1]s? Something in %[2]s is off; CI for %[3]s is red on main. Don't change the public interface, and no schema changes for this one. %[1]s is tracked at %[4]s",
	), t, f.class, proj, link))
	g.round("I'll look at the folder and where the class is used first.",
		shell("ls -la "+dir(f.abs()), func(o *out) { g.ls(o, g.csFiles(proj)) }),
		grepCall(f.class, "server/", func(o *out) { g.grepOut(o, g.csFiles(proj), g.scale(g.between(6, 14)), f.class) }))
	g.round("Reading the class and its tests.", g.readOf(f), g.readOf(f.test))
	fails := []csFail{{f, pick(g, "assert", "exception")}}
	if g.chance(0.5) {
		fails = append(fails, csFail{g.w.other(g, g.csFiles(proj), f), pick(g, "assert", "exception")})
	}
	g.round("Running the test project to reproduce.", shell("cd server && dotnet test tests/"+tproj+" --logger \"console;verbosity=normal\"", func(o *out) {
		g.dotnetTest(o, tproj, g.csFiles(proj), fails)
	}))
	if g.chance(0.5) {
		g.say(pick(g, "Reproduced. The fix changes how an edge case is computed for existing work orders as well. Should it apply to work orders already scheduled, or only to new ones?", "The failure is in the class's own logic. Do you want the old behaviour kept behind an option for tenants that rely on it?"))
		if g.chance(0.5) {
			g.user(fmt.Sprintf("Only new ones. Support will fix the scheduled ones by hand under %s.", g.userID("id", g.mkTicket())))
		} else {
			g.user(fmt.Sprintf("No option, apply it everywhere. Tenant %s complained first; I'll tell them.", g.userID("id", g.mkID("tnt"))))
		}
	}
	old, repl := g.csEdit(f)
	path, content := g.regressionTest(f)
	g.round("Fixing the edge case in place, signatures unchanged, and adding a regression test.", replaceCall(f.abs(), old, repl), writeCall(root+"/"+path, content))
	g.round("Re-running the tests.", shell("cd server && dotnet test tests/"+tproj+" --logger \"console;verbosity=normal\"", func(o *out) {
		g.dotnetTest(o, tproj, g.csFiles(proj), nil)
	}))
	if g.chance(0.6) {
		g.round("Building the whole solution, since the API depends on this project.", shell("cd server && dotnet build Rookery.sln", func(o *out) { g.dotnetBuild(o, nil, "") }))
	}
	g.finish(strings.ToLower(f.class)+"-edge-case", fmt.Sprintf("%s: fix edge case and add regression test", f.class), []string{f.path}, []string{path})
}

// taskBuild: a package bump breaks restore, then compilation.
func (g *gen) taskBuild() {
	pkg := pick(g, "Azure.Identity", "Azure.Messaging.ServiceBus", "Serilog.AspNetCore")
	adv := g.userID("url", func() string {
		const ghsa = "23456789cfghjmpqrvwx"
		return "https://github.com/advisories/GHSA-" + g.rs(ghsa, 4) + "-" + g.rs(ghsa, 4) + "-" + g.rs(ghsa, 4)
	})
	g.user(fmt.Sprintf("Please bump %s to the latest patch, there's an advisory: %s. Don't upgrade EF Core or the target framework while you're at it, and keep TreatWarningsAsErrors as it is.", pkg, adv))
	props := g.w.configs["packages"]
	g.round("Reading the central package versions.", g.readOf(props))
	cur := pkgVersion(pkg)
	var maj, mn, patch int
	fmt.Sscanf(cur, "%d.%d.%d", &maj, &mn, &patch)
	newVer := fmt.Sprintf("%d.%d.%d", maj, mn, patch+g.between(1, 3))
	g.round("Bumping the version.", replaceCall(props.abs(), fmt.Sprintf(`<PackageVersion Include="%s" Version="%s" />`, pkg, pkgVersion(pkg)), fmt.Sprintf(`<PackageVersion Include="%s" Version="%s" />`, pkg, newVer)))
	from, to := 0, 1
	nuVer := g.errID("version", func() string {
		from = g.between(2, 29)
		return fmt.Sprintf("Logging.Abstractions from 8.0.%d to 8.0.%d", from, to)
	})
	g.errFixed("code", "NU1605")
	nu := fmt.Sprintf("%s/server/src/Rookery.Api/Rookery.Api.csproj : error NU1605: Warning As Error: Detected package downgrade: Microsoft.Extensions.%s. Reference the package directly from the project to select a different version. \n %s/server/src/Rookery.Api/Rookery.Api.csproj : error NU1605:  Rookery.Api -> %s %s -> Microsoft.Extensions.Logging.Abstractions (>= 8.0.%d) \n %s/server/src/Rookery.Api/Rookery.Api.csproj : error NU1605:  Rookery.Api -> Microsoft.Extensions.Logging.Abstractions (>= 8.0.%d)", root, nuVer, root, pkg, newVer, from, root, to)
	g.round("Building.", shell("cd server && dotnet build Rookery.sln", func(o *out) { g.dotnetBuild(o, nil, nu) }))
	g.say("Restore fails: the new package needs a newer logging abstractions package than the API project pins directly. I can raise that direct pin to what the package needs (it's a patch of the 8.0 line, not an EF Core or framework change). Is that fine?")
	g.user(pick(g, "Yes, raise the pin. Keep it on 8.0.x.", "Fine, as long as it stays on the 8.0 line."))
	apiproj := g.w.configs["apiproj"]
	g.round("Raising the direct pin.", replaceCall(apiproj.abs(), fmt.Sprintf(`Include="Microsoft.Extensions.Logging.Abstractions" Version="8.0.%d"`, to), fmt.Sprintf(`Include="Microsoft.Extensions.Logging.Abstractions" Version="8.0.%d" /><!-- %s -->`, from, g.fileID("id", g.mkURL("pinned-for-GHSA-", 4)))))
	var errs []csError
	bad := g.w.subject(g, g.w.cs)
	errs = append(errs, g.compileError(bad))
	if g.chance(0.6) {
		errs = append(errs, g.compileError(g.w.other(g, g.w.cs, bad)))
	}
	g.round("Building again.", shell("cd server && dotnet build Rookery.sln", func(o *out) { g.dotnetBuild(o, errs, "") }))
	g.round("Restore passes now, but the new version changed an API the code uses. Reading the files with errors.", g.readOf(errs[0].f))
	var changed = []string{props.path, apiproj.path}
	for _, e := range errs {
		old, repl := g.csEdit(e.f)
		g.round("Adapting the call to the new signature.", replaceCall(e.f.abs(), old, repl))
		changed = append(changed, e.f.path)
	}
	g.round("Building again.", shell("cd server && dotnet build Rookery.sln", func(o *out) { g.dotnetBuild(o, nil, "") }))
	g.round("And the tests.", shell("cd server && dotnet test tests/Rookery.Domain.Tests --logger \"console;verbosity=normal\"", func(o *out) {
		g.dotnetTest(o, "Rookery.Domain.Tests", g.csFiles("Rookery.Domain"), nil)
	}))
	g.finish("bump-"+strings.ToLower(strings.ReplaceAll(pkg, ".", "-")), "Bump "+pkg+" for the security advisory", changed, nil)
}

// taskMigration: a unique index migration fails on duplicate rows.
func (g *gen) taskMigration() {
	t := g.userID("id", g.mkTicket())
	g.user(fmt.Sprintf("%s: double bookings again. Add a unique index on visits (technician, slot start) through an EF Core migration and apply it to the local database. No raw SQL against staging; the local SQL Server in docker is fine to change.", t))
	ctx := g.w.configs["dbcontext"]
	g.round("Reading the DbContext configuration first.", g.readOf(ctx))
	g.round("Adding the index to the model.", replaceCall(ctx.abs(), "    modelBuilder.Entity<Visit>().HasIndex(v => new { v.TechnicianId, v.SlotStart });", "    modelBuilder.Entity<Visit>().HasIndex(v => new { v.TechnicianId, v.SlotStart }).IsUnique();"))
	index := "IX_Visits_TechnicianId_SlotStart"
	mig := g.fill(g.mkMigration("UniqueVisitSlot"))
	g.round("Creating the migration.", shell("cd server && dotnet ef migrations add UniqueVisitSlot -p src/Rookery.Infrastructure -s src/Rookery.Api", func(o *out) {
		o.add("Build started...\nBuild succeeded.")
		o.addf("info: Microsoft.EntityFrameworkCore.Migrations[0]\n      Created migration %s", mig)
		o.add("Done. To undo this action, use 'ef migrations remove'")
	}))
	older := []string{g.fill(g.mkMigration("AddVisitSlotEnd")), mig}
	g.round("Applying it locally.", shell("cd server && dotnet ef database update -p src/Rookery.Infrastructure -s src/Rookery.Api", func(o *out) {
		g.efUpdate(o, older, 1, index)
	}))
	g.round("Existing rows already break the index. Counting them.", shell(`sqlcmd -S localhost,14333 -U sa -d rookery -C -Q "SELECT TechnicianId, SlotStart, COUNT(*) AS n FROM dbo.Visits GROUP BY TechnicianId, SlotStart HAVING COUNT(*) > 1 ORDER BY n DESC"`, func(o *out) {
		o.add("TechnicianId SlotStart                          n")
		o.add("------------ ---------------------------------- -----------")
		rows := g.scale(g.between(6, 14))
		for range rows {
			o.addf("%12d %s %11d", g.between(100, 9999), g.fill(func() string {
				return g.now.Add(-time.Duration(g.between(24, 3000)) * time.Hour).Truncate(15 * time.Minute).Format("2006-01-02 15:04:05.0000000 +00:00")
			}), g.between(2, 3))
		}
		o.add("")
		o.addf("(%d rows affected)", rows)
	}))
	g.say("There are duplicate bookings in the data, so the index can't be created as is. Options: keep the earliest booking of each pair and mark the others cancelled in the same migration, or stop and clean the data by hand first. Which do you want?")
	g.user(pick(g, "Cancel the later duplicates in the migration, don't delete rows. Audit needs them.", "Keep the earliest, mark the rest cancelled in the migration. No deletes."))
	path := g.fileID("path", func() string {
		return "server/src/Rookery.Infrastructure/Migrations/" + g.now.Format("20060102") + fmt.Sprintf("%06d", g.between(100000, 235959)) + "_CancelDuplicateVisits.cs"
	})
	reason := g.fileID("code", func() string { return fmt.Sprintf("dup-slot-%d", g.between(10, 99)) })
	g.round("Writing a migration that cancels the later duplicates before the index is built.", writeCall(root+"/"+path, fmt.Sprintf(`using Microsoft.EntityFrameworkCore.Migrations;

namespace Rookery.Infrastructure.Migrations;

/// <inheritdoc />
public partial class CancelDuplicateVisits : Migration
{
    protected override void Up(MigrationBuilder migrationBuilder)
    {
        // Rows are kept for the audit trail: later duplicates are cancelled.
        migrationBuilder.Sql(@"
WITH d AS (
  SELECT Id, ROW_NUMBER() OVER (PARTITION BY TechnicianId, SlotStart ORDER BY CreatedAt, Id) AS rn
  FROM dbo.Visits WHERE Status <> 'Cancelled')
UPDATE v SET Status = 'Cancelled', CancelReason = '%s'
FROM dbo.Visits v JOIN d ON d.Id = v.Id WHERE d.rn > 1;");
    }

    protected override void Down(MigrationBuilder migrationBuilder)
    {
    }
}
`, reason)))
	g.round("Applying again.", shell("cd server && dotnet ef database update -p src/Rookery.Infrastructure -s src/Rookery.Api", func(o *out) {
		g.efUpdate(o, older[1:], -1, index)
	}))
	g.round("Checking the migration history.", shell("cd server && dotnet ef migrations list -p src/Rookery.Infrastructure -s src/Rookery.Api", func(o *out) {
		o.add("Build started...\nBuild succeeded.")
		for range g.scale(g.between(5, 12)) {
			o.add(g.fill(g.mkMigration(pick(g, "Initial", "AddTechnicianSkills", "AddQuoteLines", "SiteTimeZone", "PartsReservations", "VisitChecklist"))))
		}
		o.add(older[0])
		o.add(mig)
	}))
	g.finish("unique-visit-slot", "Add unique index on visit slot; cancel existing duplicates", []string{ctx.path}, []string{path})
}

// taskAPI500: clients get 500 behind HAProxy; logs, fix, verify.
func (g *gen) taskAPI500() {
	trace := g.userID("hash", g.mkTrace())
	g.user(fmt.Sprintf("The dispatch board gets 500s on bulk reschedule. One of them:\n```\nHTTP/1.1 500 Internal Server Error\n{\"type\":\"https://tools.ietf.org/html/rfc9110#section-15.6.1\",\"title\":\"An error occurred while processing your request.\",\"status\":500,\"traceId\":\"%s\"}\n```\nHAProxy also marked a backend down around then. Reproduce locally first; don't restart anything on staging.", trace))
	g.round("Looking at the HAProxy log from staging first.", shell("ssh lb-01.stg.rookery.net 'sudo tail -n 300 /var/log/haproxy.log'", func(o *out) {
		g.haproxyLog(o, g.scale(g.between(40, 70)), fmt.Sprintf("api-%02d", g.between(1, 4)))
	}))
	f := g.w.subject(g, g.w.cs)
	route := "/api/v1/visits/bulk-reschedule"
	body := `{"visitIds":[4411,4412,4413],"shiftMinutes":90,"reason":"technician sick"}`
	g.round("Starting the API locally and sending the same request.",
		shell("cd server && (dotnet run --project src/Rookery.Api > /tmp/api.log 2>&1 &) && sleep 8 && curl -s localhost:5080/healthz", func(o *out) { o.add("Healthy") }),
		httpCall("POST", "http://localhost:5080"+route, body, func(o *out) {
			o.exit = 1
			g.httpResp(o, "500 Internal Server Error", true, fmt.Sprintf(`{"type":"https://tools.ietf.org/html/rfc9110#section-15.6.1","title":"An error occurred while processing your request.","status":500,"traceId":"%s"}`, g.errID("hash", g.mkTrace())))
		}))
	g.round("Reproduced. Reading the API log.", readCall("/tmp/api.log", func(o *out) { g.aspnetLog(o, g.scale(g.between(8, 16)), f, route) }))
	g.round("Reading the controller and the service it calls.", g.readOf(g.w.configs["dispatchctl"]), g.readOf(f))
	old, repl := g.csEdit(f)
	g.round("A work order without a site time zone reaches code that assumes one. Guarding it.", replaceCall(f.abs(), old, repl))
	g.round("Restarting the API and retrying.",
		shell("pkill -f 'Rookery.Api' ; cd server && (dotnet run --project src/Rookery.Api > /tmp/api.log 2>&1 &) && sleep 8 && curl -s localhost:5080/healthz", func(o *out) { o.add("Healthy") }),
		httpCall("POST", "http://localhost:5080"+route, body, func(o *out) {
			g.httpResp(o, "200 OK", false, fmt.Sprintf(`{"rescheduled":3,"batchId":"%s","conflicts":[]}`, g.passID("uuid", g.mkUUID())))
		}))
	g.round("API tests.", shell("cd server && dotnet test tests/Rookery.Api.Tests --logger \"console;verbosity=normal\"", func(o *out) {
		g.dotnetTest(o, "Rookery.Api.Tests", g.w.cs, nil)
	}))
	g.finish("bulk-reschedule-500", "Guard missing site time zone in bulk reschedule", []string{f.path}, nil)
}

// taskFlutterTest: a widget test fails in the app.
func (g *gen) taskFlutterTest() {
	f := g.w.subject(g, g.w.dart)
	t, link := g.ticketLink()
	g.user(fmt.Sprintf("%s: technicians see visits in the wrong order in the app since 2.%d. %s. Fix it in the app only, the API is right. Don't bump any packages.", t, g.between(10, 30), link))
	g.round("Running the app's tests first.", shell("cd mobile && flutter test", func(o *out) { g.flutterTest(o, []*srcFile{f}) }))
	g.round("Reading the code under test and the test.", g.readOf(f), g.readOf(f.test))
	g.round("Fixing the ordering.", replaceCall(f.abs(), "    final sorted = visits.sorted((a, b) => a.slot.start.compareTo(b.slot.start));", g.dartEdit("    final sorted = visits.sorted((a, b) => a.slot.start.toUtc().compareTo(b.slot.start.toUtc()));")))
	g.round("Re-running the tests.", shell("cd mobile && flutter test", func(o *out) { g.flutterTest(o, nil) }))
	g.round("And the analyzer.", shell("cd mobile && flutter analyze --no-fatal-infos", func(o *out) { g.flutterAnalyze(o, nil) }))
	g.finish("visit-order", "Compare visit slots in UTC", []string{f.path}, nil)
}

// taskPub: a dependency bump fails version solving, then analysis.
func (g *gen) taskPub() {
	adv := g.userID("url", func() string {
		return fmt.Sprintf("https://firebase.google.com/support/release-notes/android#%s", g.now.AddDate(0, 0, -g.between(3, 60)).Format("2006-01-02"))
	})
	g.user(fmt.Sprintf("Bump firebase_messaging to the latest 15.x please (%s). Keep the minimum Android SDK where it is.", adv))
	pub := g.w.configs["pubspec"]
	g.round("Reading the pubspec.", g.readOf(pub))
	minor := ""
	g.round("Raising the constraint.", replaceCall(pub.abs(), "  firebase_messaging: ^14.9.4", "  "+g.fileID("version", func() string {
		minor = fmt.Sprintf("%d.%d", g.between(2, 7), g.between(0, 9))
		return "firebase_messaging: ^15." + minor
	})))
	fm := g.errID("version", func() string { return "firebase_messaging >=15." + minor })
	fc := g.errID("version", func() string { return fmt.Sprintf("firebase_core ^3.%d.%d", g.between(6, 14), g.between(0, 4)) })
	g.round("Resolving.", shell("cd mobile && flutter pub get", func(o *out) {
		o.exit = 1
		o.add("Resolving dependencies...")
		o.add("Note: intl is pinned to version 0.19.0 by flutter_localizations from the flutter SDK.\nSee https://dart.dev/go/sdk-version-pinning for details.\n")
		o.errf("Because %s depends on %s and rookery_field depends on firebase_core ^2.32.0, %s is forbidden.", fm, fc, fm)
		o.errf("So, because rookery_field depends on firebase_messaging ^15.%s, version solving failed.", minor)
		o.add("\n\nYou can try the following suggestion to make the pubspec resolve:\n* Consider downgrading your constraint on firebase_messaging: flutter pub add firebase_messaging:^14.9.4")
		o.err("Failed to update packages.")
	}))
	g.say("Version solving fails: the new messaging release needs the next major of firebase_core, which the app pins to the old major. Upgrading firebase_core is a major bump that may change initialization code. Go ahead with it, or stay on messaging 14.x?")
	g.user(pick(g, "Go ahead with firebase_core, but nothing else major.", "Upgrade firebase_core too. No other majors."))
	g.round("Raising firebase_core.", replaceCall(pub.abs(), "  firebase_core: ^2.32.0", "  "+g.fileID("version", func() string { return fmt.Sprintf("firebase_core: ^3.%d.%d", g.between(6, 14), g.between(0, 4)) })))
	g.round("Resolving again.", shell("cd mobile && flutter pub get", func(o *out) {
		o.add("Resolving dependencies...\nDownloading packages...")
		for range g.scale(g.between(6, 12)) {
			o.add(g.fill(func() string {
				return fmt.Sprintf("  %s %d.%d.%d (%d.%d.%d available)", pick(g, "async", "characters", "meta", "material_color_utilities", "vm_service", "leak_tracker", "path", "test_api", "web", "plugin_platform_interface"), g.between(0, 15), g.between(0, 20), g.between(0, 9), g.between(0, 15), g.between(0, 20), g.between(0, 9))
			}))
		}
		o.add("> " + g.passID("version", func() string { return fmt.Sprintf("firebase_core %s (was 2.32.0)", g.mkVersion(3)()) }))
		o.add("> " + g.passID("version", func() string { return fmt.Sprintf("firebase_messaging 15.2.%d (was 14.9.4)", g.between(1, 9)) }))
		o.addf("Changed %d dependencies!\n%d packages have newer versions incompatible with dependency constraints.\nTry `flutter pub outdated` for more information.", g.between(4, 9), g.between(3, 12))
	}))
	bad := g.w.subject(g, g.w.dart)
	g.round("Analyzing.", shell("cd mobile && flutter analyze", func(o *out) { g.flutterAnalyze(o, []*srcFile{bad}) }))
	g.round("Reading the file the analyzer flags.", g.readOf(bad))
	g.round("Moving to the new API.", replaceCall(bad.abs(), "    final now = _clock.now();", g.dartEdit("    final now = _clock.now().toUtc();")))
	g.round("Analyzing and testing again.",
		shell("cd mobile && flutter analyze --no-fatal-infos", func(o *out) { g.flutterAnalyze(o, nil) }),
		shell("cd mobile && flutter test", func(o *out) { g.flutterTest(o, nil) }))
	g.finish("firebase-messaging-15", "Bump firebase_messaging to 15 and firebase_core to 3", []string{pub.path, bad.path, "mobile/pubspec.lock"}, nil)
}

// taskAndroid: a crash and an ANR of the Android host.
func (g *gen) taskAndroid() {
	crash := g.userID("url", g.mkURL("https://console.firebase.google.com/project/rookery-field/crashlytics/app/android:io.rookery.field/issues/", 9))
	g.user(fmt.Sprintf("The app crashes on Android 14 when tracking starts, and there are ANRs when it goes to the background. Crashlytics: %s. I've got a Pixel 8 on USB with the debug build. Fix both, don't raise minSdk.", crash))
	g.round("Capturing the crash from the device log.", shell("adb logcat -d -v threadtime | tail -n 500", func(o *out) { g.logcatCrash(o) }))
	svc, man := g.w.configs["trackingsvc"], g.w.configs["manifest"]
	g.round("Reading the service and the manifest.", g.readOf(svc), g.readOf(man))
	fgs := g.fileID("key", func() string { return fmt.Sprintf("rookery_tracking_%d", g.between(10, 99)) })
	g.round("Declaring the service type and passing it when going to the foreground.",
		replaceCall(man.abs(), `<service android:name=".tracking.LocationTrackingService" android:exported="false" />`, `<service android:name=".tracking.LocationTrackingService" android:exported="false" android:foregroundServiceType="location" />`+"\n    <uses-permission android:name=\"android.permission.FOREGROUND_SERVICE_LOCATION\" />"),
		replaceCall(svc.abs(), "        startForeground(NOTIFICATION_ID, notification)", "        ServiceCompat.startForeground(this, NOTIFICATION_ID, notification, ServiceInfo.FOREGROUND_SERVICE_TYPE_LOCATION)\n        // channel "+fgs))
	anr := "/data/anr/anr_" + g.now.Add(-2*time.Hour).Format("2006-01-02-15-04-05-000")
	g.round("Now the ANR: pulling the last trace.", shell("adb shell ls -t /data/anr | head -3 && adb pull "+anr+" /tmp/anr.txt", func(o *out) {
		o.add(anr[len("/data/anr/"):])
		o.add("anr_" + g.now.Add(-30*time.Hour).Format("2006-01-02-15-04-05-000"))
		o.addf("%s: 1 file pulled, 0 skipped. %d.%d MB/s (%d bytes in 0.0%ds)", anr, g.between(5, 40), g.r.IntN(10), g.between(200000, 900000), g.between(1, 9))
	}))
	g.round("Reading it.", readCall("/tmp/anr.txt", func(o *out) { g.anrTrace(o) }))
	q := g.w.configs["offlinequeuekt"]
	g.round("The main thread waits on a lock the sync thread holds during network I/O. Reading the bridge.", g.readOf(q))
	g.round("Moving the upload off the lock.", replaceCall(q.abs(), "        synchronized(lock) { uploadLocked(batch) }", "        val batch = synchronized(lock) { pending.drain() }\n        scope.launch(Dispatchers.IO) { upload(batch) }"))
	g.round("Building and installing the debug app.", shell("cd mobile && flutter build apk --debug && adb install -r build/app/outputs/flutter-apk/app-debug.apk", func(o *out) {
		o.add("Running Gradle task 'assembleDebug'...")
		for range g.scale(g.between(3, 8)) {
			o.add(pick(g, gradleNotes...))
		}
		o.addf("Running Gradle task 'assembleDebug'...                            %d.%ds", g.between(20, 90), g.r.IntN(10))
		o.add("✓ Built build/app/outputs/flutter-apk/app-debug.apk")
		o.add("Performing Streamed Install\nSuccess")
	}))
	g.finish("android14-fgs-anr", "Android: typed foreground service, upload off the queue lock", []string{man.path, svc.path, q.path}, nil)
}

// taskDeploy: an Ansible rollout to staging fails on two hosts.
func (g *gen) taskDeploy() {
	rel := g.userID("version", func() string {
		return fmt.Sprintf("v2.%d.%d-rc.%d", g.between(10, 40), g.between(0, 9), g.between(1, 6))
	})
	g.user(fmt.Sprintf("Please roll %s out to the staging API hosts with the playbook. Half the hosts at a time as the play does; don't touch production inventories.", rel))
	site, inv := g.w.configs["site"], g.w.configs["inventory"]
	g.round("Reading the playbook and the staging inventory.", g.readOf(site), g.readOf(inv))
	hosts := []string{"vm-api-01.stg.rookery.net", "vm-api-02.stg.rookery.net", "vm-api-03.stg.rookery.net"}
	gone := g.errID("host", g.mkHost("stg"))
	all := append(append([]string(nil), hosts...), gone)
	failHost := hosts[g.r.IntN(len(hosts))]
	g.round("Running the rollout.", shell("cd ops/ansible && ansible-playbook -i inventories/staging/azure_rm.yml site.yml --limit api -e rookery_release=$RELEASE", func(o *out) {
		g.ansibleRun(o, all, gone, 10, failHost)
	}))
	g.round("One instance is unreachable and another fails its health check. Checking which instances the scale set still has.", shell("az vm list -g rg-rookery-stg --query \"[].{name:name, state:powerState}\" -d -o table", func(o *out) {
		o.add("Name       State\n---------  ----------")
		for _, h := range hosts {
			o.addf("%-10s VM running", strings.SplitN(h, ".", 2)[0][3:])
		}
	}))
	def := g.w.configs["roledefaults"]
	g.round("The unreachable one is gone from the scale set; the inventory plugin will drop it. Reading the role defaults for the health failure.", g.readOf(def))
	env := g.fileID("env", g.mkEnv())
	g.round("The new release reads a setting the role doesn't render. Adding it.", replaceCall(def.abs(), "rookery_api_env: {}", fmt.Sprintf("rookery_api_env:\n  %s: \"20\"", env)))
	g.round("Running the rollout again.", shell("cd ops/ansible && ansible-playbook -i inventories/staging/azure_rm.yml site.yml --limit api -e rookery_release=$RELEASE", func(o *out) {
		g.ansibleRun(o, hosts, "", -1, "")
	}))
	g.round("Checking HAProxy sees all backends healthy.", shell("ssh lb-01.stg.rookery.net 'sudo tail -n 120 /var/log/haproxy.log'", func(o *out) {
		g.haproxyLog(o, g.scale(g.between(15, 30)), "")
	}))
	g.finish("ansible-api-env", "ansible: render the new API setting", []string{def.path}, nil)
}

// taskCI: a CI job fails on a culture-dependent test; then a failed
// Azure deployment of the staging database.
func (g *gen) taskCI() {
	run := g.userID("url", g.mkURL("https://github.com/rookery-io/rookery/actions/runs/13"+fmt.Sprint(g.between(100000000, 999999999))+"/job/", 11))
	g.user(fmt.Sprintf("CI on main is red: %s. Passes on my machine. Also the staging SQL deployment failed last night, have a look after. Don't change the runner image.", run))
	f := g.w.subject(g, g.w.cs)
	g.round("Fetching the failed job's log.", shell("gh run view --log-failed --job $(gh run view --json jobs -q '.jobs[] | select(.conclusion==\"failure\") | .databaseId')", func(o *out) { g.ghRunLog(o, f) }))
	g.round("The formatted amount depends on the runner's culture. Reading the code that formats it.", g.readOf(f))
	g.round("Formatting with the invariant culture.", replaceCall(f.abs(), "        return Result.Ok();\n    }", "        Text = total.ToString(\"N2\", CultureInfo.InvariantCulture);\n        return Result.Ok();\n    }"))
	g.round("Running the tests under a German culture to be sure.", shell("cd server && LANG=de_DE.UTF-8 dotnet test tests/Rookery.Domain.Tests --logger \"console;verbosity=normal\"", func(o *out) {
		g.dotnetTest(o, "Rookery.Domain.Tests", g.csFiles("Rookery.Domain"), nil)
	}))
	name := "sql-" + g.now.Add(-14*time.Hour).Format("20060102-1504")
	g.round("Now the staging deployment.", shell("az deployment group show -g rg-rookery-stg -n "+name+" --query \"{provisioningState:properties.provisioningState, correlationId:properties.correlationId, duration:properties.duration, timestamp:properties.timestamp, error:properties.error}\"", func(o *out) { g.azDeployment(o, name) }))
	bicep := g.w.configs["bicep"]
	g.round("Reading the template.", g.readOf(bicep))
	g.say("The database asks for a vCore sku inside a pool of another model. I can either take the database out of the pool with its own General Purpose sku, or match the pool's sku. Which one?")
	g.user(pick(g, "Match the pool. We're not paying for another vCore database on staging.", "Keep it in the pool and match its sku."))
	g.round("Matching the pool's sku.", replaceCall(bicep.abs(), "resource sqlDb 'Microsoft.Sql/servers/databases@2023-08-01-preview' = {", "resource sqlDb 'Microsoft.Sql/servers/databases@2023-08-01-preview' = {\n  sku: { name: 'ElasticPool', tier: 'Standard' }\n  // pool: "+g.fileID("id", func() string { return "ep-rookery-stg-" + g.rs(lowerAlnum, 4) + "-std" })))
	g.round("Redeploying to staging.", shell("az deployment group create -g rg-rookery-stg -f ops/azure/sql.bicep -p env=stg -o json --query \"{state:properties.provisioningState, id:id}\"", func(o *out) {
		o.add("{")
		o.addf(`  "id": "/subscriptions/%s/resourceGroups/rg-rookery-stg/providers/Microsoft.Resources/deployments/%s",`, g.passID("uuid", g.mkUUID()), "sql")
		o.add(`  "state": "Succeeded"`)
		o.add("}")
	}))
	g.finish("ci-culture-sql-sku", "Format amounts invariantly; match the staging pool sku", []string{f.path, bicep.path}, nil)
}
