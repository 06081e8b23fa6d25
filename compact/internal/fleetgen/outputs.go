package fleetgen

import (
	"fmt"
	"strings"
	"time"
)

// This file writes tool outputs as the tools print them. Lines that
// report a failure go through out.err; identifiers on them are planted
// as error_line, those of passing runs as passing_output, and random
// tokens of other lines go through fill.

// ---- .NET ----

var csProjects = []string{"Rookery.Domain", "Rookery.Infrastructure", "Rookery.Api", "Rookery.Domain.Tests", "Rookery.Api.Tests"}

func projDir(p string) string {
	if strings.HasSuffix(p, ".Tests") {
		return root + "/server/tests/" + p
	}
	return root + "/server/src/" + p
}

var csWarnings = []struct{ code, msg string }{
	{"CS8618", "Non-nullable property 'Notes' must contain a non-null value when exiting constructor. Consider adding the 'required' modifier or declaring the property as nullable."},
	{"CS8602", "Dereference of a possibly null reference."},
	{"CS0168", "The variable 'ex' is declared but never used"},
	{"CS1998", "This async method lacks 'await' operators and will run synchronously. Consider using the 'await' operator to await non-blocking API calls, or 'await Task.Run(...)' to do CPU-bound work on a background thread."},
	{"CS8604", "Possible null reference argument for parameter 'value' in 'void ArgumentException.ThrowIfNullOrEmpty(string? argument, string? paramName = null)'."},
}

// warning writes a compiler warning at a filler site of a file.
func (g *gen) warning(o *out, f *srcFile) {
	w := csWarnings[g.r.IntN(len(csWarnings))]
	site := g.fill(func() string { return fmt.Sprintf("%s(%d,%d)", f.base(), g.between(10, 240), g.between(5, 60)) })
	proj := strings.SplitN(strings.TrimPrefix(f.path, "server/src/"), "/", 2)[0]
	o.addf("%s/%s: warning %s: %s [%s/%s.csproj]", root, strings.TrimSuffix(f.path, f.base())+site, w.code, w.msg, projDir(proj), proj)
}

// csError is a compile error of a build.
type csError struct {
	f         *srcFile
	code, msg string
}

var csErrorMsgs = []struct{ code, msg string }{
	{"CS0246", "The type or namespace name '%s' could not be found (are you missing a using directive or an assembly reference?)"},
	{"CS1061", "'%s' does not contain a definition for 'SlaDeadline' and no accessible extension method 'SlaDeadline' accepting a first argument of type '%[1]s' could be found (are you missing a using directive or an assembly reference?)"},
	{"CS0029", "Cannot implicitly convert type 'System.DateTime' to '%s'"},
	{"CS7036", "There is no argument given that corresponds to the required parameter 'timeProvider' of '%s.%[1]s(ILogger, TimeProvider)'"},
	{"CS1503", "Argument 2: cannot convert from 'NodaTime.Instant' to '%s'"},
}

// dotnetBuild writes `dotnet build`: restore, one line per project, the
// warnings, and the errors twice (as MSBuild repeats them in the summary).
func (g *gen) dotnetBuild(o *out, errs []csError, nu string) {
	o.add("  Determining projects to restore...")
	if nu != "" {
		o.exit = 1
		o.err(nu)
		o.add("  Failed to restore " + root + "/server/src/Rookery.Api/Rookery.Api.csproj (in 1.21 sec).")
		o.add("  Restored " + root + "/server/src/Rookery.Domain/Rookery.Domain.csproj (in 312 ms).")
		o.add("")
		o.add("Build FAILED.")
		o.add("")
		o.err(nu)
		o.add("    0 Warning(s)")
		o.add("    1 Error(s)")
		o.add("")
		o.addf("Time Elapsed 00:00:0%d.%02d", g.between(2, 9), g.r.IntN(100))
		return
	}
	o.add("  All projects are up-to-date for restore.")
	var lines []string
	for i, p := range csProjects {
		for range g.scale(g.between(1, 4)) {
			if len(g.w.cs) > 0 {
				f := g.w.cs[g.r.IntN(len(g.w.cs))]
				if strings.Contains(f.path, "/"+p+"/") && g.chance(0.7) {
					g.warning(o, f)
				}
			}
		}
		broken := false
		for _, e := range errs {
			if strings.Contains(e.f.path, "/"+p+"/") || (i > 2 && len(errs) > 0) {
				broken = true
			}
		}
		if broken {
			for _, e := range errs {
				if strings.Contains(e.f.path, "/"+p+"/") {
					o.err(e.msg)
					lines = append(lines, e.msg)
				}
			}
			continue
		}
		o.addf("  %s -> %s/bin/Debug/net8.0/%s.dll", p, projDir(p), p)
	}
	o.add("")
	if len(errs) > 0 {
		o.exit = 1
		o.add("Build FAILED.")
		o.add("")
		for _, l := range lines {
			o.err(l)
		}
		o.addf("    0 Warning(s)\n    %d Error(s)", len(lines))
	} else {
		o.add("Build succeeded.")
		o.addf("    %d Warning(s)\n    0 Error(s)", g.between(0, 9))
	}
	o.add("")
	o.addf("Time Elapsed 00:00:%02d.%02d", g.between(6, 48), g.r.IntN(100))
}

// compileError makes an error at a planted site of f.
func (g *gen) compileError(f *srcFile) csError {
	e := csErrorMsgs[g.r.IntN(len(csErrorMsgs))]
	site := g.errID("site", func() string { return fmt.Sprintf("%s(%d,%d)", f.base(), g.between(12, 260), g.between(9, 70)) })
	g.errFixed("code", e.code)
	proj := strings.SplitN(strings.TrimPrefix(f.path, "server/src/"), "/", 2)[0]
	typ := pick(g, "WorkOrderId", "SlotRange", "IHolidayCalendar", "TimeProvider", "DateTimeOffset")
	msg := strings.ReplaceAll(e.msg, "%s", typ)
	msg = strings.ReplaceAll(msg, "%[1]s", typ)
	return csError{f, e.code, fmt.Sprintf("%s/%s: error %s: %s [%s/%s.csproj]", root, strings.TrimSuffix(f.path, f.base())+site, e.code, msg, projDir(proj), proj)}
}

// csFail is a failing xUnit test.
type csFail struct {
	f    *srcFile
	kind string // assert, exception, null
}

var xunitFrames = []string{
	"   at System.RuntimeMethodHandle.InvokeMethod(Object target, Void** arguments, Signature sig, Boolean isConstructor)",
	"   at System.Reflection.MethodBaseInvoker.InvokeWithNoArgs(Object obj, BindingFlags invokeAttr)",
}

var xunitAsyncFrames = []string{
	"--- End of stack trace from previous location ---",
}

// dotnetTest writes `dotnet test` of one test project with the console
// logger at normal verbosity, so each test is listed.
func (g *gen) dotnetTest(o *out, proj string, pool []*srcFile, fails []csFail) {
	o.add("  Determining projects to restore...\n  All projects are up-to-date for restore.")
	src := strings.TrimSuffix(proj, ".Tests")
	o.addf("  %s -> %s/bin/Debug/net8.0/%s.dll", src, projDir(src), src)
	o.addf("  %s -> %s/bin/Debug/net8.0/%s.dll", proj, projDir(proj), proj)
	o.addf("Test run for %s/bin/Debug/net8.0/%s.dll (.NETCoreApp,Version=v8.0)", projDir(proj), proj)
	o.add("VSTest version 17.11.1 (x64)\n\nStarting test execution, please wait...\nA total of 1 test files matched the specified pattern.")
	total := g.scale(g.between(40, 70))
	at := map[int]csFail{}
	for _, f := range fails {
		at[g.r.IntN(total)] = f
	}
	passed := 0
	for i := range total {
		if f, ok := at[i]; ok {
			g.xunitFailure(o, f)
			continue
		}
		f := pool[g.r.IntN(len(pool))]
		name := g.fill(func() string {
			return fmt.Sprintf("%s.%s.%s_%s_%s", f.test.ns, f.test.class, pick(g, f.methods...), pick(g, testStates...), pick(g, testExpects...))
		})
		o.addf("  Passed %s [%d ms]", name, g.between(1, 90))
		passed++
	}
	o.add("")
	if len(at) > 0 {
		o.exit = 1
		o.errf("Failed!  - Failed: %5d, Passed: %5d, Skipped:     0, Total: %5d, Duration: %d ms - %s.dll (net8.0)", len(at), passed, passed+len(at), g.between(300, 4000), proj)
	} else {
		o.addf("Passed!  - Failed:     0, Passed: %5d, Skipped:     0, Total: %5d, Duration: %d ms - %s.dll (net8.0)", passed, passed, g.between(300, 4000), proj)
	}
}

func (g *gen) xunitFailure(o *out, c csFail) {
	f := c.f
	test := g.errID("test", g.mkCSTest(f))
	method := test[strings.LastIndexByte(test, '.')+1:]
	o.errf("  Failed %s [%d ms]", test, g.between(2, 300))
	o.err("  Error Message:")
	testSite := g.errID("site", func() string {
		return fmt.Sprintf("%s.cs:line %d", f.test.class, g.between(20, 300))
	})
	srcSite := func() string {
		return g.errID("site", func() string { return fmt.Sprintf("%s.cs:line %d", f.class, g.between(20, 300)) })
	}
	dir := root + "/" + strings.TrimSuffix(f.test.path, f.test.base())
	sdir := root + "/" + strings.TrimSuffix(f.path, f.base())
	switch c.kind {
	case "assert":
		d := time.Date(2025, time.Month(g.between(1, 12)), g.between(1, 28), g.between(6, 18), 15*g.r.IntN(4), 0, 0, time.UTC)
		o.err("   Assert.Equal() Failure: Values differ")
		o.errf("Expected: %s", d.Format("2006-01-02T15:04:05.0000000+00:00"))
		o.errf("Actual:   %s", d.Add(-time.Duration(g.between(1, 72))*time.Hour).Format("2006-01-02T15:04:05.0000000+00:00"))
		o.err("  Stack Trace:")
		o.errf("     at %s.%s.%s() in %s%s", f.test.ns, f.test.class, method, dir, testSite)
		o.err(strings.Join(xunitFrames, "\n"))
	default:
		ex := pick(g, "System.InvalidOperationException : Sequence contains no elements", "System.ArgumentOutOfRangeException : Specified argument was out of the range of valid values. (Parameter 'slot')", "System.Collections.Generic.KeyNotFoundException : The given key 'site-"+g.fill(func() string { return fmt.Sprint(g.between(100, 999)) })+"' was not present in the dictionary.")
		vis := g.errID("id", g.mkID("vis"))
		o.errf("   %s", ex)
		o.err("  Stack Trace:")
		o.err("     at System.Linq.ThrowHelper.ThrowNoElementsException()\n   at System.Linq.Enumerable.First[TSource](IEnumerable`1 source)")
		o.errf("   at %s.%s.%s(Visit %s) in %s%s", f.ns, f.class, pick(g, f.methods...), vis, sdir, srcSite())
		o.errf("   at %s.%s.%s() in %s%s", f.test.ns, f.test.class, method, dir, testSite)
		o.err(xunitAsyncFrames[0])
		o.err(strings.Join(xunitFrames, "\n"))
	}
	o.err("")
}

// efUpdate writes `dotnet ef database update`; a failing one stops at a
// SqlException of the migration's statement.
func (g *gen) efUpdate(o *out, migs []string, failAt int, index string) {
	o.add("Build started...\nBuild succeeded.")
	o.add("info: Microsoft.EntityFrameworkCore.Infrastructure[10403]\n      Entity Framework Core 8.0.11 initialized 'RookeryDbContext' using provider 'Microsoft.EntityFrameworkCore.SqlServer:8.0.11' with options: MaxPoolSize=128")
	for i, m := range migs {
		o.addf("Applying migration '%s'.", m)
		if i != failAt {
			for range g.scale(2) {
				o.addf("info: Microsoft.EntityFrameworkCore.Database.Command[20101]\n      Executed DbCommand (%dms) [Parameters=[], CommandType='Text', CommandTimeout='30']\n      %s", g.between(2, 90), pick(g, "ALTER TABLE [Visits] ADD [SlotEnd] datetimeoffset NOT NULL DEFAULT '0001-01-01T00:00:00.0000000+00:00';", "INSERT INTO [__EFMigrationsHistory] ([MigrationId], [ProductVersion])\n      VALUES (N'"+m+"', N'8.0.11');", "CREATE INDEX [IX_WorkOrders_SiteId] ON [WorkOrders] ([SiteId]);", "EXEC(N'UPDATE [Visits] SET [SlotEnd] = DATEADD(minute, [DurationMinutes], [SlotStart])');"))
			}
			continue
		}
		o.exit = 1
		dup := g.errID("id", func() string {
			return fmt.Sprintf("(%d, %s)", g.between(100, 9999), g.now.Add(-time.Duration(g.between(24, 2000))*time.Hour).Truncate(15*time.Minute).Format("2006-01-02 15:04:05.0000000"))
		})
		cid := g.errID("uuid", g.mkUUID())
		num := g.errFixed("sql_state", "Error Number:1505,State:1,Class:16")
		msg := fmt.Sprintf("The CREATE UNIQUE INDEX statement terminated because a duplicate key was found for the object name 'dbo.Visits' and the index name '%s'. The duplicate key value is %s.", index, dup)
		o.add("fail: Microsoft.EntityFrameworkCore.Database.Command[20102]")
		o.err(fmt.Sprintf("      Failed executing DbCommand (%dms) [Parameters=[], CommandType='Text', CommandTimeout='30']", g.between(20, 900)))
		o.addf("      CREATE UNIQUE INDEX [%s] ON [Visits] ([TechnicianId], [SlotStart]);", index)
		o.err("Microsoft.Data.SqlClient.SqlException (0x80131904): " + msg)
		o.err("The statement has been terminated.")
		o.err(strings.Join(sqlFrames, "\n"))
		o.err("ClientConnectionId:" + cid)
		o.err(num)
		o.err(msg)
		o.err("The statement has been terminated.")
		return
	}
	o.add("Done.")
}

var sqlFrames = []string{
	"   at Microsoft.Data.SqlClient.SqlConnection.OnError(SqlException exception, Boolean breakConnection, Action`1 wrapCloseInAction)",
	"   at Microsoft.Data.SqlClient.SqlInternalConnection.OnError(SqlException exception, Boolean breakConnection, Action`1 wrapCloseInAction)",
	"   at Microsoft.Data.SqlClient.TdsParser.ThrowExceptionAndWarning(TdsParserStateObject stateObj, Boolean callerHasConnectionLock, Boolean asyncClose)",
	"   at Microsoft.Data.SqlClient.TdsParser.TryRun(RunBehavior runBehavior, SqlCommand cmdHandler, SqlDataReader dataStream, BulkCopySimpleResultSet bulkCopyHandler, TdsParserStateObject stateObj, Boolean& dataReady)",
	"   at Microsoft.Data.SqlClient.SqlCommand.RunExecuteNonQueryTds(String methodName, Boolean isAsync, Int32 timeout, Boolean asyncWrite)",
	"   at Microsoft.Data.SqlClient.SqlCommand.InternalExecuteNonQuery(TaskCompletionSource`1 completion, Boolean sendToPipe, Int32 timeout, Boolean& usedCache, Boolean asyncWrite, Boolean inRetry, String methodName)",
	"   at Microsoft.Data.SqlClient.SqlCommand.ExecuteNonQuery()",
	"   at Microsoft.EntityFrameworkCore.Storage.RelationalCommand.ExecuteNonQuery(RelationalCommandParameterObject parameterObject)",
	"   at Microsoft.EntityFrameworkCore.Migrations.MigrationCommand.ExecuteNonQuery(IRelationalConnection connection, IReadOnlyDictionary`2 parameterValues)",
	"   at Microsoft.EntityFrameworkCore.Migrations.Internal.MigrationCommandExecutor.ExecuteNonQuery(IEnumerable`1 migrationCommands, IRelationalConnection connection)",
	"   at Microsoft.EntityFrameworkCore.Migrations.Internal.Migrator.Migrate(String targetMigration)",
	"   at Microsoft.EntityFrameworkCore.Design.Internal.MigrationsOperations.UpdateDatabase(String targetMigration, String connectionString, String contextType)",
	"   at Microsoft.EntityFrameworkCore.Design.OperationExecutor.UpdateDatabase.<>c__DisplayClass0_0.<.ctor>b__0()",
	"   at Microsoft.EntityFrameworkCore.Design.OperationExecutor.OperationBase.Execute(Action action)",
}

var aspnetFrames = []string{
	"         at Microsoft.AspNetCore.Mvc.Infrastructure.ActionMethodExecutor.TaskOfIActionResultExecutor.Execute(ActionContext actionContext, IActionResultTypeMapper mapper, ObjectMethodExecutor executor, Object controller, Object[] arguments)",
	"         at Microsoft.AspNetCore.Mvc.Infrastructure.ControllerActionInvoker.<InvokeActionMethodAsync>g__Awaited|12_0(ControllerActionInvoker invoker, ValueTask`1 actionResultValueTask)",
	"         at Microsoft.AspNetCore.Mvc.Infrastructure.ControllerActionInvoker.<InvokeNextActionFilterAsync>g__Awaited|10_0(ControllerActionInvoker invoker, Task lastTask, State next, Scope scope, Object state, Boolean isCompleted)",
	"         at Microsoft.AspNetCore.Mvc.Infrastructure.ResourceInvoker.<InvokeFilterPipelineAsync>g__Awaited|20_0(ResourceInvoker invoker, Task lastTask, State next, Scope scope, Object state, Boolean isCompleted)",
	"         at Microsoft.AspNetCore.Routing.EndpointMiddleware.<Invoke>g__AwaitRequestTask|7_0(Endpoint endpoint, Task requestTask, ILogger logger)",
	"         at Microsoft.AspNetCore.Authorization.AuthorizationMiddleware.Invoke(HttpContext context)",
	"         at Microsoft.AspNetCore.Authentication.AuthenticationMiddleware.Invoke(HttpContext context)",
	"         at Microsoft.AspNetCore.Diagnostics.ExceptionHandlerMiddlewareImpl.<Invoke>g__Awaited|10_0(ExceptionHandlerMiddlewareImpl middleware, HttpContext context, Task task)",
}

// aspnetLog writes the console log of the API: requests, EF commands
// and, when failing, the unhandled exception of one request.
func (g *gen) aspnetLog(o *out, n int, fail *srcFile, route string) {
	o.add("info: Microsoft.Hosting.Lifetime[14]\n      Now listening on: http://localhost:5080\ninfo: Microsoft.Hosting.Lifetime[0]\n      Application started. Press Ctrl+C to shut down.\ninfo: Microsoft.Hosting.Lifetime[0]\n      Hosting environment: Development\ninfo: Microsoft.Hosting.Lifetime[0]\n      Content root path: " + root + "/server/src/Rookery.Api")
	failAt := -1
	if fail != nil {
		failAt = n * 2 / 3
	}
	for i := range n {
		path := pick(g, "/api/v1/visits?day=2025-02-0"+fmt.Sprint(g.between(1, 9)), "/api/v1/technicians/availability", "/api/v1/workorders/open", "/healthz")
		method := "GET"
		if i == failAt {
			path, method = route, "POST"
		}
		o.addf("info: Microsoft.AspNetCore.Hosting.Diagnostics[1]\n      Request starting HTTP/1.1 %s http://localhost:5080%s - %s -", method, path, map[bool]string{true: "application/json", false: "-"}[method == "POST"])
		if path != "/healthz" {
			o.addf("info: Microsoft.EntityFrameworkCore.Database.Command[20101]\n      Executed DbCommand (%dms) [Parameters=[@__day_0='?' (DbType = Date)], CommandType='Text', CommandTimeout='30']\n      SELECT [v].[Id], [v].[SlotStart], [v].[SlotEnd], [v].[TechnicianId]\n      FROM [Visits] AS [v]\n      WHERE CONVERT(date, [v].[SlotStart]) = @__day_0", g.between(1, 60))
		}
		if i == failAt {
			trace := g.errID("hash", g.mkTrace())
			o.add("fail: Microsoft.AspNetCore.Diagnostics.ExceptionHandlerMiddleware[1]")
			o.err("      An unhandled exception has occurred while executing the request.")
			o.errf("      System.NullReferenceException: Object reference not set to an instance of an object.")
			o.errf("         at %s.%s.%s(WorkOrder workOrder, CancellationToken ct) in %s/%s", fail.ns, fail.class, pick(g, fail.methods...), root, strings.TrimSuffix(fail.path, fail.base())+g.errID("site", func() string {
				return fmt.Sprintf("%s.cs:line %d", fail.class, g.between(30, 280))
			}))
			o.errf("         at Rookery.Api.Controllers.VisitsController.BulkReschedule(BulkRescheduleRequest request, CancellationToken ct) in %s/server/src/Rookery.Api/Controllers/%s", root, g.errID("site", func() string {
				return fmt.Sprintf("VisitsController.cs:line %d", g.between(40, 220))
			}))
			o.err(strings.Join(aspnetFrames, "\n"))
			o.errf("info: Microsoft.AspNetCore.Hosting.Diagnostics[2]\n      Request finished HTTP/1.1 POST http://localhost:5080%s - 500 - application/problem+json;+charset=utf-8 %d.%04dms", route, g.between(20, 900), g.r.IntN(10000))
			o.errf("      TraceId: %s", trace)
			continue
		}
		o.addf("info: Microsoft.AspNetCore.Hosting.Diagnostics[2]\n      Request finished HTTP/1.1 %s http://localhost:5080%s - 200 - application/json;+charset=utf-8 %d.%04dms", method, path, g.between(1, 90), g.r.IntN(10000))
	}
}

// ---- Flutter and Dart ----

var flutterFrames = []string{
	"package:matcher                                     expect",
	"package:flutter_test/src/widget_tester.dart 474:18  expect",
}

// flutterTest writes `flutter test` in the expanded reporter.
func (g *gen) flutterTest(o *out, fails []*srcFile) {
	total := g.scale(g.between(35, 60))
	at := map[int]*srcFile{}
	for _, f := range fails {
		at[g.r.IntN(total)] = f
	}
	pass, failed := 0, 0
	t := 2
	for i := range total {
		if i%6 == 0 {
			f := g.w.dart[g.r.IntN(len(g.w.dart))]
			o.addf("00:%02d +%d: loading %s/%s", t, pass, root, f.test.path)
			t++
		}
		if f, ok := at[i]; ok {
			failed++
			name := g.errID("test", g.mkDartTest(f))
			site := g.errID("site", func() string {
				return fmt.Sprintf("%s_test.dart %d:%d", f.ns[strings.IndexByte(f.ns, '/')+1:], g.between(14, 160), g.between(5, 9))
			})
			o.errf("00:%02d +%d -%d: %s [E]", t, pass, failed, name)
			want := g.between(2, 9)
			o.errf("  Expected: <%d>\n    Actual: <%d>", want, want-g.between(1, 2))
			o.add("")
			o.add(strings.Join(flutterFrames, "\n"))
			o.errf("  test/%s", strings.Replace(site, "_test.dart", "_test.dart", 1))
			o.add("")
			o.errf("To run this test again: /home/dev/flutter/bin/cache/dart-sdk/bin/dart test %s/%s -p vm --plain-name '%s'", root, f.test.path, name)
			o.add("")
			continue
		}
		f := g.w.dart[g.r.IntN(len(g.w.dart))]
		name := g.fill(func() string {
			return fmt.Sprintf("%s.%s() %s", f.class, pick(g, f.methods...), pick(g, dartBehaviours...))
		})
		pass++
		o.addf("00:%02d +%d: %s", t, pass, name)
	}
	if failed > 0 {
		o.exit = 1
		o.errf("00:%02d +%d -%d: Some tests failed.", t+1, pass, failed)
	} else {
		o.addf("00:%02d +%d: All tests passed!", t+1, pass)
	}
}

// flutterAnalyze writes `flutter analyze` with infos and the errors.
func (g *gen) flutterAnalyze(o *out, errs []*srcFile) {
	o.add("Analyzing mobile...")
	o.add("")
	n := 0
	for range g.scale(g.between(3, 8)) {
		f := g.w.dart[g.r.IntN(len(g.w.dart))]
		site := g.fill(func() string {
			return fmt.Sprintf("%s:%d:%d", f.path[len("mobile/"):], g.between(5, 200), g.between(3, 40))
		})
		o.addf("   info • %s • %s • %s", pick(g, "Prefer const with constant constructors", "Use 'const' literals as arguments to constructors of '@immutable' classes", "Unnecessary use of 'toList' in a spread", "Don't use 'BuildContext's across async gaps"), site, pick(g, "prefer_const_constructors", "prefer_const_literals_to_create_immutables", "unnecessary_to_list_in_spreads", "use_build_context_synchronously"))
		n++
	}
	for _, f := range errs {
		site := g.errID("site", func() string {
			return fmt.Sprintf("%s:%d:%d", f.path[len("mobile/"):], g.between(5, 200), g.between(3, 40))
		})
		e := pick(g, [2]string{"The method 'onTokenRefresh' isn't defined for the type 'FirebaseMessaging'", "undefined_method"},
			[2]string{"The named parameter 'vapidKey' isn't defined", "undefined_named_parameter"},
			[2]string{"The argument type 'String?' can't be assigned to the parameter type 'String'. ", "argument_type_not_assignable"})
		g.errFixed("code", e[1])
		o.errf("  error • %s • %s • %s", e[0], site, e[1])
		n++
	}
	o.add("")
	if len(errs) > 0 {
		o.exit = 1
		o.errf("%d issues found. (ran in %d.%ds)", n, g.between(2, 9), g.r.IntN(10))
	} else if n > 0 {
		o.addf("%d issues found. (ran in %d.%ds)", n, g.between(2, 9), g.r.IntN(10))
	} else {
		o.addf("No issues found! (ran in %d.%ds)", g.between(2, 9), g.r.IntN(10))
	}
}

// ---- Android ----

var logTags = []string{"I/flutter", "D/FlutterGeolocator", "I/ActivityManager", "D/CompatibilityChangeReporter", "W/System", "I/Choreographer", "D/ProfileInstaller", "I/FirebaseApp", "D/FLTFireMsgService", "I/chromium", "W/ziparchive", "D/EGL_emulation"}

var logMsgs = []string{"Fetched 14 visits for 2025-02-03", "Skipped 31 frames!  The application may be doing too much work on its main thread.", "Installing profile for io.rookery.field", "Device unlocked: initializing all Firebase APIs for app [DEFAULT]", "Compat change id reported: 263076149; UID 10211; state: ENABLED", "A resource failed to call close.", "sync: queue drained", "app_time_stats: avg=16.47ms min=2.11ms max=71.02ms count=60", "route: /visits/today", "location update accuracy=12.0"}

// logcatLines writes filler logcat lines in the threadtime format.
func (g *gen) logcatLines(o *out, n int, t time.Time, pid int) time.Time {
	for range n {
		t = t.Add(time.Duration(g.between(5, 900)) * time.Millisecond)
		tag := pick(g, logTags...)
		o.addf("%s %5d %5d %s %s: %s", t.Format("01-02 15:04:05.000"), pid, pid+g.between(0, 40), tag[:1], tag[2:], pick(g, logMsgs...))
	}
	return t
}

var fgsFrames = []string{
	"E AndroidRuntime: 	at android.app.MissingForegroundServiceTypeException$1.createFromParcel(MissingForegroundServiceTypeException.java:53)",
	"E AndroidRuntime: 	at android.app.MissingForegroundServiceTypeException$1.createFromParcel(MissingForegroundServiceTypeException.java:49)",
	"E AndroidRuntime: 	at android.os.Parcel.readParcelableInternal(Parcel.java:4884)",
	"E AndroidRuntime: 	at android.os.Parcel.readParcelable(Parcel.java:4866)",
	"E AndroidRuntime: 	at android.os.Parcel.createExceptionOrNull(Parcel.java:3066)",
	"E AndroidRuntime: 	at android.os.Parcel.createException(Parcel.java:3055)",
	"E AndroidRuntime: 	at android.os.Parcel.readException(Parcel.java:3038)",
	"E AndroidRuntime: 	at android.app.IActivityManager$Stub$Proxy.setServiceForeground(IActivityManager.java:7234)",
	"E AndroidRuntime: 	at android.app.Service.startForeground(Service.java:775)",
}

var looperFrames = []string{
	"E AndroidRuntime: 	at android.app.ActivityThread.handleServiceArgs(ActivityThread.java:5044)",
	"E AndroidRuntime: 	at android.app.ActivityThread$H.handleMessage(ActivityThread.java:2456)",
	"E AndroidRuntime: 	at android.os.Handler.dispatchMessage(Handler.java:107)",
	"E AndroidRuntime: 	at android.os.Looper.loopOnce(Looper.java:232)",
	"E AndroidRuntime: 	at android.os.Looper.loop(Looper.java:317)",
	"E AndroidRuntime: 	at android.app.ActivityThread.main(ActivityThread.java:8705)",
	"E AndroidRuntime: 	at java.lang.reflect.Method.invoke(Native Method)",
	"E AndroidRuntime: 	at com.android.internal.os.RuntimeInit$MethodAndArgsCaller.run(RuntimeInit.java:580)",
	"E AndroidRuntime: 	at com.android.internal.os.ZygoteInit.main(ZygoteInit.java:886)",
}

// logcatCrash writes `adb logcat -d -v threadtime` around a FATAL
// EXCEPTION of the host app's tracking service.
func (g *gen) logcatCrash(o *out) {
	t := g.now.Add(-time.Duration(g.between(5, 40)) * time.Minute)
	pid := g.between(9000, 31000)
	o.add("--------- beginning of main")
	t = g.logcatLines(o, g.scale(g.between(15, 30)), t, pid)
	o.addf("%s %5d %5d I flutter: sync: uploaded batch %s", t.Format("01-02 15:04:05.000"), pid, pid+3, g.passID("id", g.mkID("bt")))
	t = g.logcatLines(o, g.scale(g.between(15, 30)), t, pid)
	o.add("--------- beginning of crash")
	pfx := t.Format("01-02 15:04:05.000") + fmt.Sprintf(" %5d %5d ", pid, pid)
	rec := g.errID("hash", func() string {
		return fmt.Sprintf("ProcessRecord{%s %d:io.rookery.field/u0a%d}", g.hex(7), pid, g.between(100, 400))
	})
	o.err(pfx + "E AndroidRuntime: FATAL EXCEPTION: main")
	o.errf("%sE AndroidRuntime: Process: io.rookery.field, PID: %d", pfx, pid)
	o.errf("%sE AndroidRuntime: java.lang.RuntimeException: Unable to start service io.rookery.field.tracking.LocationTrackingService@%s with Intent { cmp=io.rookery.field/.tracking.LocationTrackingService }: android.app.MissingForegroundServiceTypeException: Starting FGS without a type  callerApp=%s targetSDK=34", pfx, g.errID("hash", g.mkHex(7)), rec)
	o.err(strings.Join(prefixed(pfx, looperFrames[:1]), "\n"))
	o.err(strings.Join(prefixed(pfx, looperFrames[1:]), "\n"))
	o.errf("%sE AndroidRuntime: Caused by: android.app.MissingForegroundServiceTypeException: Starting FGS without a type  callerApp=%s targetSDK=34", pfx, rec)
	o.err(strings.Join(prefixed(pfx, fgsFrames), "\n"))
	o.errf("%sE AndroidRuntime: 	at io.rookery.field.tracking.LocationTrackingService.onStartCommand(%s)", pfx, g.errID("site", func() string { return fmt.Sprintf("LocationTrackingService.kt:%d", g.between(30, 140)) }))
	o.err(strings.Join(prefixed(pfx, looperFrames), "\n"))
	o.add(fmt.Sprintf("%s %5d %5d I Process : Sending signal. PID: %d SIG: 9", t.Add(40*time.Millisecond).Format("01-02 15:04:05.000"), pid, pid, pid))
	g.logcatLines(o, g.scale(g.between(10, 25)), t.Add(2*time.Second), g.between(1000, 2000))
}

func prefixed(pfx string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = pfx + x
	}
	return out
}

// anrTrace writes the ANR trace file the agent pulls from the device:
// the main thread blocked on a lock the sync thread holds.
func (g *gen) anrTrace(o *out) {
	pid := g.between(9000, 31000)
	t := g.now.Add(-time.Duration(g.between(60, 300)) * time.Minute)
	o.addf("Subject: Input dispatching timed out (%s io.rookery.field/io.rookery.field.MainActivity is not responding. Waited 5001ms for MotionEvent)", g.hex(7))
	o.add("")
	o.addf("----- pid %d at %s -----", pid, t.Format("2006-01-02 15:04:05.000000000-0700"))
	o.add("Cmd line: io.rookery.field\nBuild fingerprint: 'google/husky/husky:14/AP2A.240905.003/12231197:user/release-keys'\nABI: 'arm64'\nBuild type: optimized")
	for range g.scale(g.between(10, 20)) {
		o.addf("%s", pick(g, "Heap: 41% free, 12MB/21MB; 301832 objects", "Total time spent in GC: 139.201ms", "Dumping cumulative Gc timings", "Registered native bytes allocated: 4917", "ClassLinker: loaded 11231 classes", "JIT compiled 4210 methods"))
	}
	o.add("")
	lock := g.errID("hash", func() string { return "<0x" + g.hex(8) + ">" })
	o.err(`"main" prio=5 tid=1 Blocked`)
	o.addf("  | group=\"main\" sCount=1 ucsCount=0 flags=1 obj=0x72a1c3b8 self=0xb400007c%s", g.fill(g.mkHex(8)))
	o.addf("  | sysTid=%d nice=-10 cgrp=top-app sched=0/0 handle=0x7d1c0f54f8", pid)
	o.errf("  at io.rookery.field.sync.OfflineQueueBridge.flush(%s)", g.errID("site", func() string { return fmt.Sprintf("OfflineQueueBridge.kt:%d", g.between(40, 200)) }))
	o.errf("  - waiting to lock %s (a java.lang.Object) held by thread 27", lock)
	o.errf("  at io.rookery.field.MainActivity.onPause(%s)", g.errID("site", func() string { return fmt.Sprintf("MainActivity.kt:%d", g.between(30, 150)) }))
	o.err("  at android.app.Activity.performPause(Activity.java:8789)\n  at android.app.Instrumentation.callActivityOnPause(Instrumentation.java:1620)\n  at android.app.ActivityThread.performPauseActivityIfNeeded(ActivityThread.java:5474)")
	o.add("")
	o.errf(`"rookery-sync" prio=5 tid=27 Native`)
	o.errf("  - locked %s (a java.lang.Object)", lock)
	o.add("  at java.net.SocketInputStream.socketRead0(Native method)\n  at okhttp3.internal.http1.Http1ExchangeCodec.readResponseHeaders(Http1ExchangeCodec.kt:178)")
	o.errf("  at io.rookery.field.sync.OfflineQueueBridge.uploadLocked(%s)", g.errID("site", func() string { return fmt.Sprintf("OfflineQueueBridge.kt:%d", g.between(40, 200)) }))
	for range g.scale(g.between(8, 16)) {
		o.add("")
		o.addf("\"%s\" daemon prio=5 tid=%d %s", pick(g, "FinalizerDaemon", "ReferenceQueueDaemon", "HeapTaskDaemon", "binder:"+fmt.Sprint(pid)+"_2", "Signal Catcher", "1.ui", "1.raster", "1.io", "OkHttp TaskRunner"), g.between(2, 40), pick(g, "Waiting", "WaitingForTaskProcessor", "Native", "Sleeping"))
		o.add("  at java.lang.Object.wait(Native method)\n  at java.lang.Daemons$Daemon.run(Daemons.java:140)\n  at java.lang.Thread.run(Thread.java:1012)")
	}
	o.add("")
	o.addf("----- end %d -----", pid)
}

// gradleNotes are lines of a passing Gradle build of the host app.
var gradleNotes = []string{
	"w: file:///home/dev/rookery/mobile/android/app/src/main/kotlin/io/rookery/field/MainActivity.kt:41:9 'onBackPressed(): Unit' is deprecated. Deprecated in Java.",
	"Note: Some input files use or override a deprecated API.",
	"Note: Recompile with -Xlint:deprecation for details.",
}

// ---- operations ----

var ansibleTasks = []string{"Gathering Facts", "common : Ensure base packages", "common : Configure journald", "dotnet_runtime : Install aspnetcore-runtime-8.0", "rookery_api : Create release directory", "rookery_api : Unpack the release", "rookery_api : Render appsettings.Production.json", "rookery_api : Install the systemd unit", "rookery_api : Drain from HAProxy", "rookery_api : Restart rookery-api", "rookery_api : Wait for health", "rookery_api : Enable in HAProxy"}

// ansibleRun writes an ansible-playbook run over hosts; unreachable is a
// host that fails at fact gathering, failTask the index of a task where
// failHost fails.
func (g *gen) ansibleRun(o *out, hosts []string, unreachable string, failTask int, failHost string) {
	o.add("")
	o.add("PLAY [Deploy the Rookery API] ***************************************************")
	live := append([]string(nil), hosts...)
	failed := map[string]bool{}
	for i, task := range ansibleTasks {
		o.add("")
		o.addf("TASK [%s] %s", task, strings.Repeat("*", max(3, 70-len(task))))
		for _, h := range live {
			if failed[h] {
				continue
			}
			if i == 0 && h == unreachable {
				o.errf("fatal: [%s]: UNREACHABLE! => {\"changed\": false, \"msg\": \"Failed to connect to the host via ssh: ssh: connect to host %s port 22: Connection timed out\", \"unreachable\": true}", h, g.errID("host", func() string { return fmt.Sprintf("10.20.%d.%d", g.between(2, 9), g.between(20, 250)) }))
				failed[h] = true
				continue
			}
			if i == failTask && h == failHost {
				url := g.errID("url", func() string { return fmt.Sprintf("http://%s:5080/healthz?probe=%s", h, g.rs(lowerAlnum, 6)) })
				o.errf("FAILED - RETRYING: [%s]: %s (1 retries left).", h, task)
				o.errf("fatal: [%s]: FAILED! => {\"attempts\": 10, \"cache_control\": \"no-store\", \"changed\": false, \"connection\": \"close\", \"content_type\": \"application/problem+json\", \"elapsed\": 0, \"json\": {\"status\": 503, \"title\": \"Unhealthy\", \"traceId\": \"%s\"}, \"msg\": \"Status code was 503 and not [200]: HTTP Error 503: Service Unavailable\", \"redirected\": false, \"status\": 503, \"url\": \"%s\"}", h, g.errID("hash", g.mkTrace()), url)
				failed[h] = true
				continue
			}
			if strings.Contains(task, "Render") || strings.Contains(task, "Restart") || strings.Contains(task, "Unpack") {
				o.addf("changed: [%s]", h)
			} else {
				o.addf("ok: [%s]", h)
			}
		}
	}
	o.add("")
	if unreachable == "" && failHost == "" {
		o.add("RUNNING HANDLER [rookery_api : Reload haproxy] *********************************")
		for _, h := range hosts {
			o.addf("changed: [%s]", h)
		}
		o.add("")
	}
	o.add("PLAY RECAP *********************************************************************")
	for _, h := range hosts {
		line := fmt.Sprintf("%-34s : ok=%-3d changed=%-3d unreachable=%d    failed=%d    skipped=%d    rescued=0    ignored=0", h, len(ansibleTasks)-3, 3, b2i(h == unreachable), b2i(h == failHost), g.between(0, 2))
		if h == unreachable || h == failHost {
			o.err(line)
		} else {
			o.add(line)
		}
	}
	switch {
	case failHost != "":
		o.exit = 2
	case unreachable != "":
		o.exit = 4
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// haproxyLog writes lines of /var/log/haproxy.log; with fail, a backend
// server goes down and requests get 503 and 504 in between.
func (g *gen) haproxyLog(o *out, n int, fail string) {
	t := g.now.Add(-time.Duration(g.between(20, 90)) * time.Minute)
	down := -1
	if fail != "" {
		down = n / 2
	}
	for i := range n {
		t = t.Add(time.Duration(g.between(50, 4000)) * time.Millisecond)
		ts := t.Format("Jan _2 15:04:05") + " lb-01 haproxy[1187]: "
		if i == down {
			o.errf("%s[WARNING]  (1187) : Server be_api/%s is DOWN, reason: Layer7 timeout, check duration: 2001ms. 2 active and 0 backup servers left. 3 sessions active, 0 requeued, 0 remaining in queue.", ts, fail)
			continue
		}
		client := g.fill(g.mkClient())
		srv := fmt.Sprintf("api-%02d", g.between(1, 4))
		tr := g.between(2, 80)
		status, timers, flags := 200, fmt.Sprintf("0/0/1/%d/%d", tr, tr+1+g.between(0, 9)), "----"
		if down >= 0 && i > down && i < down+4 {
			client = g.errID("hostport", g.mkClient())
			status, timers, flags, srv = 504, fmt.Sprintf("0/0/1/-1/%d", 30000+g.between(1, 9)), "sH--", fail
			line := fmt.Sprintf("%s%s [%s] fe_https~ be_api/%s %s %d 198 - - %s %d/%d/%d/%d/0 0/0 \"POST /api/v1/visits/bulk-reschedule HTTP/1.1\"", ts, client, t.Format("02/Jan/2006:15:04:05.000"), srv, timers, status, flags, g.between(100, 400), g.between(90, 390), g.between(10, 60), g.between(1, 20))
			o.err(line)
			continue
		}
		path := pick(g, "/api/v1/visits?day=today", "/api/v1/technicians/availability", "/healthz", "/api/v1/workorders/open")
		if i%31 == 5 {
			path = "/api/v1/workorders/" + g.passID("id", g.mkID("wo"))
		}
		o.addf("%s%s [%s] fe_https~ be_api/%s %s %d %d - - %s %d/%d/%d/%d/0 0/0 \"GET %s HTTP/1.1\"", ts, client, t.Format("02/Jan/2006:15:04:05.000"), srv, timers, status, g.between(300, 9000), flags, g.between(100, 400), g.between(90, 390), g.between(10, 60), g.between(1, 20), path)
	}
}

// ghRunLog writes `gh run view --log-failed` of a CI job whose test step
// failed on a culture-dependent assertion.
func (g *gen) ghRunLog(o *out, f *srcFile) {
	t := g.now.Add(-time.Duration(g.between(30, 200)) * time.Minute)
	line := func(step, s string) string {
		t = t.Add(time.Duration(g.between(3, 900)) * time.Millisecond)
		return fmt.Sprintf("server\t%s\t%s %s", step, t.Format("2006-01-02T15:04:05.0000000Z"), s)
	}
	for _, s := range []string{"##[group]Run dotnet test server/Rookery.sln --no-build -c Release --logger trx", "dotnet test server/Rookery.sln --no-build -c Release --logger trx", "shell: /usr/bin/bash -e {0}", "env:", "  DOTNET_ROOT: /usr/share/dotnet", "##[endgroup]"} {
		o.add(line("Test", s))
	}
	for range g.scale(g.between(15, 30)) {
		o.add(line("Test", g.fill(func() string {
			x := g.w.cs[g.r.IntN(len(g.w.cs))]
			return fmt.Sprintf("  Passed %s.%s.%s_%s_%s [%d ms]", x.test.ns, x.test.class, pick(g, x.methods...), pick(g, testStates...), pick(g, testExpects...), g.between(1, 80))
		})))
	}
	test := g.errID("test", g.mkCSTest(f))
	site := g.errID("site", func() string { return fmt.Sprintf("%s.cs:line %d", f.test.class, g.between(20, 300)) })
	o.err(line("Test", "  Failed "+test+fmt.Sprintf(" [%d ms]", g.between(2, 90))))
	o.err(line("Test", "  Error Message:"))
	o.err(line("Test", "   Assert.Equal() Failure: Strings differ"))
	amount := g.between(1000, 9999)
	o.err(line("Test", fmt.Sprintf("           ↓ (pos %d)", 1)))
	o.err(line("Test", fmt.Sprintf("Expected: \"%d,%03d.50\"", amount/1000, amount%1000)))
	o.err(line("Test", fmt.Sprintf("Actual:   \"%d.%03d,50\"", amount/1000, amount%1000)))
	o.err(line("Test", "  Stack Trace:"))
	o.err(line("Test", fmt.Sprintf("     at %s.%s.%s() in /home/runner/work/rookery/rookery/%s", f.test.ns, f.test.class, test[strings.LastIndexByte(test, '.')+1:], strings.TrimSuffix(f.test.path, f.test.base())+site)))
	o.err(line("Test", "   at System.RuntimeMethodHandle.InvokeMethod(Object target, Void** arguments, Signature sig, Boolean isConstructor)"))
	for range g.scale(g.between(5, 12)) {
		o.add(line("Test", g.fill(func() string {
			x := g.w.cs[g.r.IntN(len(g.w.cs))]
			return fmt.Sprintf("  Passed %s.%s.%s_%s_%s [%d ms]", x.test.ns, x.test.class, pick(g, x.methods...), pick(g, testStates...), pick(g, testExpects...), g.between(1, 80))
		})))
	}
	o.add(line("Test", "Results File: /home/runner/work/rookery/rookery/server/tests/Rookery.Domain.Tests/TestResults/_fv-az1432-118_"+t.Format("2006-01-02_15_04_05")+".trx"))
	o.err(line("Test", fmt.Sprintf("Failed!  - Failed:     1, Passed: %4d, Skipped:     0, Total: %4d, Duration: %d s - Rookery.Domain.Tests.dll (net8.0)", 180, 181, g.between(2, 9))))
	o.err(line("Test", "##[error]Process completed with exit code 1."))
}

// azDeployment writes `az deployment group show` of a failed deployment:
// its state, correlation id and error.
func (g *gen) azDeployment(o *out, name string) {
	sub := g.fill(g.mkUUID())
	o.add("{")
	o.errf(`  "correlationId": "%s",`, g.errID("uuid", g.mkUUID()))
	o.add(`  "duration": "PT1M` + fmt.Sprint(g.between(2, 59)) + `.` + fmt.Sprint(g.between(100, 999)) + `S",`)
	o.add(`  "error": {`)
	o.err(`    "code": "DeploymentFailed",`)
	o.add(`    "details": [`)
	o.add(`      {`)
	o.err(`        "code": "ElasticPoolSkuCombinationInvalid",`)
	o.errf(`        "message": "Elastic pool '%s' and sku 'GP_Gen5' combination is invalid.",`, g.errID("id", func() string { return "ep-rookery-stg-" + g.rs(lowerAlnum, 4) }))
	o.add(`        "target": null`)
	o.add(`      }`)
	o.add(`    ],`)
	o.err(`    "message": "At least one resource deployment operation failed. Please list deployment operations for details. Please see https://aka.ms/arm-deployment-operations for usage details.",`)
	o.errf(`    "target": "/subscriptions/%s/resourceGroups/rg-rookery-stg/providers/Microsoft.Resources/deployments/%s"`, sub, name)
	o.add(`  },`)
	o.err(`  "provisioningState": "Failed",`)
	o.addf(`  "timestamp": "%s"`, g.now.Add(-7*time.Minute).Format("2006-01-02T15:04:05.000000+00:00"))
	o.add("}")
}

// ---- common ----

// httpResp writes a response: status line, headers, body.
func (g *gen) httpResp(o *out, status string, fail bool, body string) {
	line := "HTTP/1.1 " + status
	if fail {
		o.err(line)
	} else {
		o.add(line)
	}
	o.addf("date: %s", g.now.Format(time.RFC1123))
	o.add("server: Kestrel")
	o.add("content-type: application/" + map[bool]string{true: "problem+json", false: "json"}[fail] + "; charset=utf-8")
	o.add("")
	if fail {
		o.err(body)
	} else {
		o.add(body)
	}
}

// grepOut writes grep matches over files.
func (g *gen) grepOut(o *out, files []*srcFile, n int, what string) {
	for range n {
		f := files[g.r.IntN(len(files))]
		o.addf("%s:%d:%s", f.path, g.between(3, 300), pick(g, "        var window = _calendar.WindowFor(visit.SiteId, visit.RequestedAt);", "    public async Task<Result> "+what+"(WorkOrder workOrder, CancellationToken ct = default)", "        _logger.LogInformation(\"Rescheduling {Count} visits\", request.VisitIds.Count);", "  final sorted = visits.sorted((a, b) => a.slot.start.compareTo(b.slot.start));", "        services.AddScoped<I"+what+", "+what+">();", "    // "+what+" runs inside the caller's transaction"))
	}
}

// ls writes a directory listing.
func (g *gen) ls(o *out, files []*srcFile) {
	o.addf("total %d", 4*len(files)+8)
	o.add("drwxr-xr-x  6 dev dev  4096 Jan 29 11:02 .\ndrwxr-xr-x 12 dev dev  4096 Jan 29 11:02 ..")
	for _, f := range files {
		o.addf("-rw-r--r--  1 dev dev %5d %s %s", g.between(800, 16000), pick(g, "Jan 14 09:31", "Jan 22 16:05", "Jan 30 10:44", "Feb  1 12:19"), f.base())
	}
}
