package shipgen

import (
	"fmt"
	"strings"
	"time"
)

// This file writes the session: tasks the user gives one after another
// until the session has made its tool calls. Each task reads, runs,
// fails, edits and verifies. No assistant text and no command names an
// identifier planted in another place: the agent refers to what it saw
// in words, and selects pods by label and tests by class or file.

// session writes the tasks in a random order, drawn anew each round.
func (g *gen) session() {
	tasks := []func(){g.taskPHPUnit, g.taskLaravel500, g.taskMigration, g.taskComposer, g.taskSwiftTest, g.taskSwiftCompile, g.taskIOSCrash,
		g.taskPlaywright, g.taskVitest, g.taskTerraform, g.taskCrashLoop, g.taskGateway, g.taskData, g.taskSurvey}
	var order []func()
	// A session that has made its calls but is well short of its size
	// (its tasks happened to print little) takes one more task.
	budget := float64(g.o.ToolCalls) * bytesPerCall * g.o.OutputScale
	for g.calls < g.o.ToolCalls || float64(g.size) < 0.92*budget && g.calls < g.o.ToolCalls+g.o.ToolCalls/12 {
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

func (g *gen) readOf(f *srcFile) tcall {
	return readCall(f.abs(), func(o *out) { g.readFile(f, o) })
}

// searchOf searches for pattern among the files xs (their matches).
func (g *gen) searchOf(pattern, path, glob string, xs []*srcFile) tcall {
	return searchCall(pattern, path, glob, func(o *out) { g.rg(o, xs, g.scale(g.between(6, 16))) })
}

// lsOf lists the directory of f with the files xs.
func (g *gen) lsOf(d string, xs []*srcFile) tcall {
	return shell("ls -la "+d, func(o *out) { g.ls(o, xs) })
}

// sameDir lists the files of xs in f's directory.
func sameDir(xs []*srcFile, f *srcFile) []*srcFile {
	var res []*srcFile
	for _, x := range xs {
		if dir(x.path) == dir(f.path) {
			res = append(res, x)
		}
	}
	return res
}

// ticketLink is a link to the issue tracker, planted in a user turn.
func (g *gen) ticketLink() string {
	return g.userID("url", func() string {
		return fmt.Sprintf("https://tidewater.atlassian.net/browse/%s?focusedCommentId=%d", g.mkTicket("SHIP", "OPS", "MOB")(), 100000+g.r.IntN(900000))
	})
}

// ---- PHP ----

// taskPHPUnit: a PHPUnit test fails in the API; the agent reads, fixes,
// adds a regression test and verifies.
func (g *gen) taskPHPUnit() {
	kind := pick(g, "assert", "type", "query", "http")
	var f *srcFile
	if kind == "query" || kind == "http" {
		f = g.w.subject(g, g.w.phpOf("controller"))
	} else {
		var xs []*srcFile
		for _, x := range g.w.php {
			if x.kind != "controller" {
				xs = append(xs, x)
			}
		}
		f = g.w.subject(g, xs)
	}
	ticket := g.userID("id", g.mkTicket("SHIP", "CS"))
	sentry := g.userID("url", g.mkURLNum("https://tidewater.sentry.io/issues/", 10, "/?project=4507"))
	g.user(fmt.Sprintf(pick(g,
		"%[1]s: the API's CI is red since this morning, and Sentry shows the same thing on staging (%[2]s). It's in %[3]s. Can you find it and fix it? Don't change the JSON the v1 endpoints return, and don't add composer packages.",
		"Picking up %[1]s. Something in %[3]s broke; the PHPUnit job fails and %[2]s has the staging traces. Please fix it with a regression test. Keep the v1 response shapes and leave composer.json alone.",
	), ticket, sentry, f.name) + g.maybePaste())
	g.round(pick(g, "I'll look at the class and where it is used first.", "Let me find the class and its callers."),
		g.lsOf(dir(f.path), sameDir(g.w.php, f)),
		g.searchOf(f.name, "api/app", "*.php", g.w.php))
	other := g.w.others(g, g.w.php, f, 1)[0]
	g.round("Reading the class and one of its collaborators.", g.readOf(f), g.readOf(other))
	classes := g.w.others(g, g.w.php, f, g.scale(3)+1)
	classes = append(classes, f)
	g.round("Running the suites to reproduce.", shell("cd api && vendor/bin/phpunit --testdox", func(o *out) {
		g.phpunit(o, phpunitSpec{classes: classes, fail: &phpFail{class: f, kind: kind}, testdox: true})
	}))
	g.round(pick(g, "Reproduced. Reading the test to see what it expects before touching the code.", "One test fails; let me read its test class."), g.readOf(f.test))
	if g.chance(0.5) {
		g.say(pick(g,
			"Before I change it: the fix changes what the endpoint does for parcels that were already booked. Should it apply to existing bookings too, or only to new ones?",
			"Question: the old behaviour is what the iOS app currently works around. Do you want the fix behind a config flag so we can switch it off per account, or applied everywhere?",
		))
		if g.chance(0.5) {
			g.user(fmt.Sprintf("Only new ones. Support will fix the existing bookings by hand, that's %s.", g.userID("id", g.mkTicket("CS"))))
		} else {
			g.user(fmt.Sprintf("Everywhere, but behind a flag defaulting to on. Account %s is the one that complained; check with them afterwards.", g.userID("id", g.mkID("acct"))))
		}
	}
	old, repl := g.phpEdit(f)
	reg := g.fileID("path", func() string {
		return dir(f.test.path) + "/" + strings.TrimSuffix(f.test.name, "Test") + pick(g, "Regression", "Cutoff", "Rounding", "NullParcel", "Booking") + "Test.php"
	})
	g.round(pick(g, "The method mishandles one case. Fixing it in place, signatures unchanged, with a focused regression test.", "Fixing the edge case without changing any public signature, and adding a regression test."),
		replaceCall(f.abs(), old, repl), writeCall(root+"/"+reg, g.phpRegression(f, reg)))
	changed := []string{f.path}
	if g.chance(0.5) {
		// The fix breaks an older test that encoded the bug.
		c2 := classes[0]
		g.round("Re-running the suites.", shell("cd api && vendor/bin/phpunit --testdox", func(o *out) {
			g.phpunit(o, phpunitSpec{classes: classes, fail: &phpFail{class: c2, kind: pick(g, "assert", "type")}, testdox: true})
		}))
		g.round("The fix broke another test. Reading it.", g.readOf(c2.test))
		g.round(pick(g, "That test asserted the old, wrong result. Updating its expectation.", "It relied on the buggy behaviour; correcting what it expects."),
			replaceCall(c2.test.abs(), "        $this->assertSame('Z3', $result);", "        $this->assertSame('Z4', $result);"))
		changed = append(changed, c2.test.path)
	}
	g.round("Re-running the suites.", shell("cd api && vendor/bin/phpunit --testdox", func(o *out) {
		g.phpunit(o, phpunitSpec{classes: classes, testdox: true})
	}))
	if g.chance(0.6) {
		g.round("Green. Running the linters CI runs.", shell("cd api && composer lint", func(o *out) { g.composerLint(o) }))
	}
	br := g.branchName("fix", kebab(f.name)+"-"+pick(g, "edge-case", "null-parcel", "cutoff", "rounding"))
	g.round("Committing.", g.status(changed, []string{reg}), g.commit(br, fmt.Sprintf("api: fix %s edge case and add regression test", f.name), changed, []string{reg}))
	g.say(pick(g,
		"Done. The class mishandled one case; it now follows the documented rule, the v1 JSON is unchanged, no composer packages were added, and the new regression test covers it. The whole suite passes; the change is committed on a branch.",
		"Fixed and committed on a branch. The failing test passes with the rest of the suite, there is a new regression test, and neither the response shapes nor composer.json changed.",
	))
}

// maybePaste returns, now and then, an error the user pastes.
func (g *gen) maybePaste() string {
	if !g.chance(0.55) {
		return ""
	}
	return fmt.Sprintf("\n\nThis is what the dashboard got:\n```\nHTTP/2 500\nx-request-id: %s\n\n{\"message\":\"Server Error\",\"code\":\"%s\",\"trace_id\":\"%s\"}\n```",
		g.userID("hash", g.mkHash(32)), g.userID("code", g.mkCode()), g.userID("uuid", g.mkUUID()))
}

// phpEdit returns an edit of f; the new text holds a file_written
// identifier.
func (g *gen) phpEdit(f *srcFile) (string, string) {
	switch g.r.IntN(4) {
	case 0:
		return "$cutoff = $depot->cutoffFor($date)->setTimezone('Europe/London');",
			fmt.Sprintf("$cutoff = $depot->cutoffFor($date)->setTimezone($depot->timezone ?? 'Europe/London');\n        Log::debug('pickup cutoff', ['code' => '%s', 'cutoff' => $cutoff->toIso8601String()]);", g.fileID("code", g.mkCode()))
	case 1:
		return "$weight = max(1, (int) ceil($parcel->weight_grams / 1000));",
			fmt.Sprintf("$weight = max(1, (int) ceil(($parcel->weight_grams ?? 0) / 1000));\n        $weight = min($weight, (int) config('%s', 30));", g.fileID("key", g.mkKey("rates")))
	case 2:
		return "$validated = $request->validated();",
			fmt.Sprintf("$validated = $request->validated();\n        $validated['depot_id'] ??= Depot::defaultFor($request->user()->account)->id; // %s", g.fileID("id", g.mkTicket("SHIP")))
	default:
		return "$response->throw();",
			fmt.Sprintf("$response->throw(fn ($r, $e) => report(new CarrierUnavailable('%s', previous: $e)));", g.fileID("code", g.mkCode()))
	}
}

func (g *gen) phpRegression(f *srcFile, path string) string {
	cls := strings.TrimSuffix(path[strings.LastIndexByte(path, '/')+1:], ".php")
	ns := strings.ReplaceAll(strings.TrimPrefix(dir(path), "api/tests/"), "/", "\\")
	var b strings.Builder
	fmt.Fprintf(&b, "<?php\n\nnamespace Tests\\%s;\n\nuse App\\Models\\Depot;\nuse App\\Models\\Parcel;\nuse App\\Models\\User;\nuse Illuminate\\Foundation\\Testing\\RefreshDatabase;\nuse Tests\\TestCase;\n\n", ns)
	fmt.Fprintf(&b, "// Reproduces the staging failure for account %s.\nclass %s extends TestCase\n{\n    use RefreshDatabase;\n\n", g.fileID("id", g.mkID("acct")), cls)
	for range g.between(2, 3) {
		name := g.fill(g.testName)
		if f.kind == "controller" {
			fmt.Fprintf(&b, "    public function %s(): void\n    {\n        $user = User::factory()->create();\n        Depot::factory()->create(['cutoff_local' => '16:30']);\n\n        $this->actingAs($user)\n            ->postJson('/api/v1/pickups', ['date' => '2024-11-10', 'slot' => 'am'])\n            ->assertCreated()\n            ->assertJsonPath('data.status', 'booked');\n    }\n\n", name)
		} else {
			fmt.Fprintf(&b, "    public function %s(): void\n    {\n        $parcel = Parcel::factory()->create(['weight_grams' => null]);\n\n        $this->assertNotNull(app(\\%s\\%s::class)->%s($parcel));\n    }\n\n", name, phpNamespace(f), f.name, f.funcs[0])
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// composerLint writes composer lint: pint --test and phpstan.
func (g *gen) composerLint(o *out) {
	o.add("> pint --test")
	o.add("")
	files := g.between(180, 260)
	o.add("  " + strings.Repeat(".", min(files, 90)))
	o.add("  " + strings.Repeat(".", max(0, min(files-90, 90))))
	o.add("")
	o.addf("  ─────────────────────────────────────────────────────────────────── Laravel  \n    PASS   ...................................................... %d files  ", files)
	o.add("")
	o.add("> phpstan analyse --memory-limit=1G")
	o.add("Note: Using configuration file " + apiRoot + "/phpstan.neon.")
	o.addf(" %d/%d [▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓] 100%%", files-40, files-40)
	o.add("")
	o.add("")
	o.add(" [OK] No errors                                                                                  ")
	o.add("")
}

// apiResource is an endpoint of the API a task can break: what it
// creates, the table of the model it reads, the columns that model may
// read, and a request body.
type apiResource struct {
	path, model, table, controller string
	cols                           []string
	body                           func(g *gen) string
}

var apiResources = []apiResource{
	{"pickups", "Depot", "depots", "PickupController", []string{"cutoff_local", "timezone", "collection_window"}, func(g *gen) string {
		return fmt.Sprintf(`{"shipment_id":"%s","date":"2024-11-%02d","slot":"am"}`, g.fill(g.mkID("shp")), g.between(7, 28))
	}},
	{"shipments", "Carrier", "carriers", "ShipmentController", []string{"max_weight_grams", "service_window", "volumetric_divisor"}, func(g *gen) string {
		return fmt.Sprintf(`{"reference":"%s","carrier":"dpd","service":"NEXT_DAY","parcels":[{"weight_grams":%d,"dimensions":{"l":40,"w":30,"h":20}}]}`, g.fill(func() string { return fmt.Sprintf("TW-%06d", g.r.IntN(1000000)) }), g.between(100, 30000))
	}},
	{"returns", "ReturnRequest", "return_requests", "ReturnRequestController", []string{"label_fee_minor", "window_days", "drop_off_code"}, func(g *gen) string {
		return fmt.Sprintf(`{"shipment_id":"%s","reason":"damaged","parcels":[1]}`, g.fill(g.mkID("shp")))
	}},
}

// taskLaravel500: an endpoint returns 500 on the local stack; the
// migration for a new column was never written.
func (g *gen) taskLaravel500() {
	res := pick(g, apiResources...)
	g.user(fmt.Sprintf(pick(g,
		"POST /api/v1/%[1]s returns 500 on my local stack since I pulled main (%[2]s). Can you fix it? Schema changes go in a new migration, never edit old ones, and the response JSON must stay the same.",
		"Locally, creating %[1]s fails with a 500 after today's merge, see %[2]s. Please fix it. New migrations only, don't touch existing ones; keep the v1 JSON as it is.",
	), res.path, g.ticketLink()))
	col := pick(g, res.cols...)
	body := res.body(g)
	headers := `{"Accept": "application/json", "Content-Type": "application/json", "Authorization": "Bearer $TW_LOCAL_TOKEN"}`
	state := "SQLSTATE[42S22]"
	svc := g.pickOf(g.w.phpOf("service"))
	ctl := g.phpModel(res.controller)
	query := func(id string) string {
		return fmt.Sprintf("%s: Column not found: 1054 Unknown column '%s.%s' in 'field list' (Connection: mariadb, SQL: select `id`, `code`, `%s` from `%s` where `%s`.`id` = %s limit 1)", state, res.table, col, col, res.table, res.table, id)
	}
	g.round("Reproducing it against the local server.", requestCall("POST", "http://localhost:8000/api/v1/"+res.path, headers, body, func(o *out) {
		o.err("HTTP/1.1 500 Internal Server Error")
		o.add("Host: localhost:8000\nConnection: close\nContent-Type: application/json\nCache-Control: no-cache, private")
		o.add("Date: " + g.now.Format("Mon, 02 Jan 2006 15:04:05 GMT"))
		o.errf("X-Request-Id: %s", g.errID("uuid", g.mkUUID()))
		o.add("")
		g.errFixed("sql_state", state)
		g.debugBody(o, svc, ctl, "Illuminate\\Database\\QueryException", query("'"+g.errID("id", g.mkID(res.table[:3]))+"'"))
		o.exit = 1
	}))
	g.round("Reading the end of the Laravel log.", shell("cd api && tail -n 200 storage/logs/laravel.log", func(o *out) {
		n := g.scale(g.between(18, 30))
		t := g.laravelLog(o, "local", n, true, g.now.Add(-time.Duration(n*20)*time.Second))
		msg := query("?")
		g.laravelLogError(o, "local", t.Add(2*time.Second), svc, ctl, apiRoot, msg, "Illuminate\\\\Database\\\\QueryException(code: 42S22): "+msg+" at "+apiRoot+"/vendor/laravel/framework/src/Illuminate/Database/Connection.php:825",
			"PDOException(code: 42S22): "+state+": Column not found: 1054 Unknown column '"+res.table+"."+col+"' in 'field list' at "+apiRoot+"/vendor/laravel/framework/src/Illuminate/Database/Connection.php:407")
		g.laravelLog(o, "local", g.scale(3), false, t.Add(5*time.Second))
	}))
	g.round("The code reads a column the database does not have. Installing the locked dependencies first, in case the pull changed them.", shell("cd api && composer install", func(o *out) { g.composerInstall(o) }))
	g.round("Checking which migrations ran, and where the column is used.", shell("cd api && php artisan migrate:status", func(o *out) { g.migrateStatus(o, nil) }),
		g.searchOf(col, "api/", "*.php", append([]*srcFile{svc}, g.w.others(g, g.w.php, svc, 3)...)))
	g.round("Reading the model and the service that uses the column.", g.readOf(g.phpModel(res.model)), g.readOf(svc))
	stamp := g.now.Format("2006_01_02_150405")
	mig := g.fileID("path", func() string {
		return fmt.Sprintf("api/database/migrations/%s_add_%s_to_%s_%s.php", stamp, col, res.table, g.rs(lowers, 3))
	})
	name := strings.TrimSuffix(mig[strings.LastIndexByte(mig, '/')+1:], ".php")
	g.round("No migration adds the column: the model change was merged without one. Writing it.", writeCall(root+"/"+mig,
		fmt.Sprintf("<?php\n\nuse Illuminate\\Database\\Migrations\\Migration;\nuse Illuminate\\Database\\Schema\\Blueprint;\nuse Illuminate\\Support\\Facades\\Schema;\n\n// The %s model reads this since %s.\nreturn new class extends Migration\n{\n    public function up(): void\n    {\n        Schema::table('%s', function (Blueprint $table) {\n            $table->string('%s')->nullable()->after('code');\n        });\n    }\n\n    public function down(): void\n    {\n        Schema::table('%s', function (Blueprint $table) {\n            $table->dropColumn('%s');\n        });\n    }\n};\n",
			res.model, g.fileID("hash", g.mkHash(10)), res.table, col, res.table, col)))
	g.round("Running it.", shell("cd api && php artisan migrate", func(o *out) { g.migrate(o, []string{name}, false) }))
	g.round("Sending the same request again.", requestCall("POST", "http://localhost:8000/api/v1/"+res.path, headers, body, func(o *out) {
		id := g.passID("id", g.mkID(res.path[:3]))
		o.add("HTTP/1.1 201 Created\nHost: localhost:8000\nContent-Type: application/json")
		o.add("Location: http://localhost:8000/api/v1/" + res.path + "/" + id)
		o.add("X-Request-Id: " + g.passID("uuid", g.mkUUID()))
		o.add("")
		o.addf("{\n    \"data\": {\n        \"id\": \"%s\",\n        \"status\": \"%s\",\n        \"%s\": %q,\n        \"created_at\": \"%s\"\n    }\n}", id, pick(g, "booked", "pending", "created"), col, pick(g, "16:30", "Europe/London", "08:00-12:00"), g.now.Format(time.RFC3339))
	}))
	classes := append(g.w.others(g, g.w.phpOf("controller"), ctl, g.scale(2)), ctl)
	g.round("Running the feature tests.", shell("cd api && vendor/bin/phpunit --testdox --testsuite Feature", func(o *out) {
		g.phpunit(o, phpunitSpec{classes: classes, testdox: true})
	}))
	br := g.branchName("fix", res.table+"-"+strings.ReplaceAll(col, "_", "-")+"-migration")
	g.round("Committing.", g.commit(br, "api: add missing migration for "+res.table+"."+col, nil, []string{mig}))
	g.say("Fixed: the model reads a column that no migration created, so the query failed with an unknown column. I added a new migration (no old one edited); the request returns 201 again with the same JSON and the feature tests pass.")
}

// phpModel returns the PHP class of the name.
func (g *gen) phpModel(name string) *srcFile {
	for _, f := range g.w.php {
		if f.name == name {
			return f
		}
	}
	panic("shipgen: no PHP class " + name)
}

// taskMigration: a unique index fails on duplicates; the user decides
// what happens to them.
func (g *gen) taskMigration() {
	g.user(fmt.Sprintf(pick(g,
		"We bought two labels for the same parcel again (%s). Add a unique index on parcels.tracking_number so it can't happen. Test it against the staging snapshot on my local MariaDB first; nothing on staging itself.",
		"Please make parcels.tracking_number unique (%s has the background). Try it on the local copy of the staging data, not on staging.",
	), g.userID("id", g.mkTicket("SHIP"))) + fmt.Sprintf(" The last duplicate was parcel %s.", g.userID("id", g.mkID("prc"))))
	parcel := g.phpModel("Parcel")
	g.round("Looking at the model and where tracking numbers are written.", g.readOf(parcel), g.searchOf("tracking_number", "api/app", "*.php", g.w.php))
	stamp := g.now.Format("2006_01_02_150405")
	mig := g.fileID("path", func() string {
		return fmt.Sprintf("api/database/migrations/%s_add_unique_tracking_number_to_parcels_%s.php", stamp, g.rs(lowers, 3))
	})
	name := strings.TrimSuffix(mig[strings.LastIndexByte(mig, '/')+1:], ".php")
	g.round("Writing the migration.", writeCall(root+"/"+mig,
		fmt.Sprintf("<?php\n\nuse Illuminate\\Database\\Migrations\\Migration;\nuse Illuminate\\Database\\Schema\\Blueprint;\nuse Illuminate\\Support\\Facades\\Schema;\n\nreturn new class extends Migration\n{\n    public function up(): void\n    {\n        Schema::table('parcels', function (Blueprint $table) {\n            $table->unique('tracking_number');\n        });\n    }\n\n    public function down(): void\n    {\n        Schema::table('parcels', function (Blueprint $table) {\n            $table->dropUnique(['tracking_number']);\n        });\n    }\n};\n")))
	g.round("Running it on the local snapshot.", shell("cd api && php artisan migrate", func(o *out) { g.migrate(o, []string{name}, true) }))
	g.round("Existing duplicates block the index. Listing them, read-only.", shell(`cd api && php artisan tinker --execute="dump(DB::table('parcels')->select('tracking_number', DB::raw('count(*) as n'), DB::raw('group_concat(id) as ids'))->groupBy('tracking_number')->having('n', '>', 1)->limit(50)->get()->all());"`, func(o *out) {
		n := g.scale(g.between(5, 10))
		o.addf("array:%d [ // vendor/psy/psysh/src/ExecutionClosure.php(38) : eval()'d code:1", n)
		for i := range n {
			tn := g.fill(g.mkTracking())
			if i%4 == 1 {
				tn = g.passID("id", g.mkTracking())
			}
			o.addf("  %d => {#%d\n    +\"tracking_number\": \"%s\"\n    +\"n\": %d\n    +\"ids\": \"%d,%d\"\n  }", i, 6000+g.r.IntN(900), tn, 2, g.between(1000, 90000), g.between(90000, 190000))
		}
		o.add("]")
	}))
	g.say(fmt.Sprintf("There are %s tracking numbers used twice on the snapshot; each pair is an older parcel whose label was voided and a newer one. The index can't go on as is. Should I clear the tracking number on the voided parcel of each pair (keeping it in a legacy column), or do you want the duplicates handled some other way?", pick(g, "a handful of", "several", "a few dozen")))
	g.user(fmt.Sprintf(pick(g,
		"Move it to a legacy_tracking_number column on the voided ones and then add the index, all in the same migration. Support signed off in %s.",
		"Keep the old numbers in a legacy column on the voided parcels, then add the index. Same migration is fine. Approved in %s.",
	), g.userID("url", g.mkURLNum("https://tidewater.atlassian.net/wiki/spaces/OPS/pages/", 9, "/Duplicate+labels"))))
	g.round("Moving the voided parcels' numbers aside before the index, in the same migration.", replaceCall(root+"/"+mig,
		"        Schema::table('parcels', function (Blueprint $table) {\n            $table->unique('tracking_number');\n        });",
		fmt.Sprintf("        Schema::table('parcels', function (Blueprint $table) {\n            $table->string('legacy_tracking_number')->nullable()->after('tracking_number');\n        });\n\n        // Voided duplicates keep their number in the legacy column (%s).\n        DB::table('parcels')\n            ->whereNotNull('voided_at')\n            ->whereIn('tracking_number', DB::table('parcels')->select('tracking_number')->groupBy('tracking_number')->havingRaw('count(*) > 1'))\n            ->update(['legacy_tracking_number' => DB::raw('tracking_number'), 'tracking_number' => null]);\n\n        Schema::table('parcels', function (Blueprint $table) {\n            $table->unique('tracking_number');\n        });", g.fileID("key", g.mkKey("migrations")))))
	g.round("Rolling back the failed step and running it again.", shell("cd api && php artisan migrate", func(o *out) { g.migrate(o, []string{name}, false) }))
	g.round("Running the unit tests of the label code.", shell("cd api && vendor/bin/phpunit --testdox tests/Unit/Labels tests/Unit/Models", func(o *out) {
		var xs []*srcFile
		for _, f := range g.w.php {
			if f.dir == "Labels" || f.kind == "model" {
				xs = append(xs, f)
			}
		}
		g.phpunit(o, phpunitSpec{classes: xs[:min(len(xs), g.scale(3)+2)], testdox: true})
	}))
	br := g.branchName("feat", "unique-tracking-number")
	g.round("Committing.", g.commit(br, "api: unique tracking numbers, voided duplicates moved to a legacy column", nil, []string{mig}))
	g.say("The migration now moves the voided parcels' tracking numbers to a legacy column and then adds the unique index; it ran cleanly on the local snapshot and the label tests pass. Nothing ran against staging.")
}

// taskComposer: a security upgrade that composer cannot resolve at
// first.
func (g *gen) taskComposer() {
	g.user(fmt.Sprintf(pick(g,
		"Dependabot flagged spatie/laravel-data (%s). Please upgrade it to a fixed version. Stay on Laravel 11 and PHP 8.3; dev tools may move if they must.",
		"There's a security advisory on spatie/laravel-data, see %s. Upgrade it; no Laravel or PHP bump, but dev dependencies can change.",
	), g.userID("url", g.mkURLNum("https://github.com/tidewater-logistics/tidewater/security/dependabot/", 3, ""))))
	g.round("Checking what composer's audit reports.", shell("cd api && composer audit", func(o *out) {
		o.err("Found 1 security vulnerability advisory affecting 1 package:")
		for _, kv := range [][2]string{
			{"Package", "spatie/laravel-data"},
			{"Severity", "medium"},
			{"Advisory ID", g.errID("id", func() string {
				return "PKSA-" + g.rs("123456789bcdfghjkmnpqrstvwxyz", 4) + "-" + g.rs("123456789bcdfghjkmnpqrstvwxyz", 4) + "-" + g.rs("123456789bcdfghjkmnpqrstvwxyz", 4)
			})},
			{"CVE", g.errID("id", func() string { return fmt.Sprintf("CVE-2024-%d", 40000+g.r.IntN(9999)) })},
			{"Title", "Mass assignment of nested data objects bypasses validation"},
			{"URL", g.errID("url", func() string {
				const a = "23456789cfghjmpqrvwx"
				return "https://github.com/advisories/GHSA-" + g.rs(a, 4) + "-" + g.rs(a, 4) + "-" + g.rs(a, 4)
			})},
			{"Affected versions", ">=4.0.0,<4.11.0"},
			{"Reported at", g.now.Add(-72 * time.Hour).Format(time.RFC3339)},
		} {
			if kv[0] == "Package" {
				o.err("+-------------------+----------------------------------------------------------------------------------+")
			}
			o.errf("| %-17s | %-80s |", kv[0], kv[1])
		}
		o.err("+-------------------+----------------------------------------------------------------------------------+")
		o.exit = 1
	}))
	g.round("Requiring the fixed version.", shell("cd api && composer require spatie/laravel-data:^4.11", func(o *out) {
		o.add("./composer.json has been updated\nRunning composer update spatie/laravel-data\nLoading composer repositories with package information\nUpdating dependencies")
		o.err("Your requirements could not be resolved to an installable set of packages.")
		o.add("")
		o.err("  Problem 1")
		o.err("    - Root composer.json requires spatie/laravel-data ^4.11 -> satisfiable by spatie/laravel-data[4.11.0, 4.11.1].")
		o.err("    - spatie/laravel-data[4.11.0, ..., 4.11.1] require phpdocumentor/reflection ^6.0 -> satisfiable by phpdocumentor/reflection[6.0.0].")
		o.err("    - phpdocumentor/reflection 6.0.0 requires nikic/php-parser ^5.0 -> found nikic/php-parser[v5.0.0, ..., v5.3.1] but the package is fixed to v4.19.4 (lock file version) by a partial update and that version does not match. Make sure you list it as an argument for the update command.")
		o.add("")
		o.add("Use the option --with-all-dependencies (-W) to allow upgrades, downgrades and removals for packages currently locked to specific versions.")
		o.add("You can also try re-running composer require with an explicit version constraint, e.g. \"composer require spatie/laravel-data:*\" to figure out if any version is installable, or \"composer require spatie/laravel-data:^2.1\" if you know which you need.")
		o.add("")
		o.err("Installation failed, reverting ./composer.json and ./composer.lock to their original content.")
		o.exit = 2
	}))
	g.round("Checking what holds the parser back.", shell("cd api && composer why nikic/php-parser", func(o *out) {
		for _, l := range []string{"larastan/larastan          v2.9.9   requires  nikic/php-parser (^4.19.1)", "phpstan/phpstan            1.12.7   requires  nikic/php-parser (^4.19.1)",
			"psy/psysh                  v0.12.4  requires  nikic/php-parser (^5.0 || ^4.0)", "phpunit/phpunit            11.4.3   requires  nikic/php-parser (^5.3.1)"} {
			o.add(l)
		}
	}))
	g.say("The fixed version needs a newer PHP parser, and larastan 2 (a dev tool) pins the old one. Upgrading larastan to 3 and phpstan to 2 resolves it; that changes only dev dependencies, but phpstan 2 may report new findings. Go ahead?")
	g.user(fmt.Sprintf(pick(g, "Yes, go ahead. If phpstan finds new things, baseline them for now and link %s.", "OK for the dev tools. Baseline new phpstan findings under %s."), g.userID("id", g.mkTicket("SHIP"))))
	g.round("Upgrading the dev tools and the package together.", shell("cd api && composer require --dev larastan/larastan:^3.0 -W && composer require spatie/laravel-data:^4.11 -W", func(o *out) {
		o.add("./composer.json has been updated\nRunning composer update larastan/larastan --with-all-dependencies\nLoading composer repositories with package information\nUpdating dependencies")
		o.add("Lock file operations: 0 installs, 3 updates, 0 removals\n  - Upgrading larastan/larastan (v2.9.9 => v3.0.2)\n  - Upgrading nikic/php-parser (v4.19.4 => v5.3.1)\n  - Upgrading phpstan/phpstan (1.12.7 => 2.0.2)")
		o.add("Writing lock file\nInstalling dependencies from lock file (including require-dev)\nPackage operations: 0 installs, 3 updates, 0 removals\n  - Upgrading nikic/php-parser (v4.19.4 => v5.3.1): Extracting archive\n  - Upgrading phpstan/phpstan (1.12.7 => 2.0.2): Extracting archive\n  - Upgrading larastan/larastan (v2.9.9 => v3.0.2): Extracting archive")
		o.add("Generating optimized autoload files")
		o.add("./composer.json has been updated\nRunning composer update spatie/laravel-data --with-all-dependencies\nLoading composer repositories with package information\nUpdating dependencies")
		o.add("Lock file operations: 1 install, 1 update, 0 removals\n  - Locking phpdocumentor/reflection (6.0.0)\n  - Upgrading spatie/laravel-data (4.10.1 => 4.11.1)\nWriting lock file")
		o.add("Installing dependencies from lock file (including require-dev)\nPackage operations: 1 install, 1 update, 0 removals\n  - Installing phpdocumentor/reflection (6.0.0): Extracting archive\n  - Upgrading spatie/laravel-data (4.10.1 => 4.11.1): Extracting archive")
		o.add("Generating optimized autoload files\n> Illuminate\\Foundation\\ComposerScripts::postAutoloadDump\n> @php artisan package:discover --ansi\n\n   INFO  Discovering packages.\n")
		for _, p := range []string{"laravel/sanctum", "laravel/tinker", "mongodb/laravel-mongodb", "nesbot/carbon", "nunomaduro/collision", "nunomaduro/termwind", "spatie/laravel-data"} {
			o.addf("  %s %s DONE", p, strings.Repeat(".", 60-len(p)))
		}
		o.addf("\n%d packages you are using are looking for funding.\nUse the `composer fund` command to find out more!\nNo security vulnerability advisories found.\nUsing version ^3.0 for larastan/larastan\nUsing version ^4.11 for spatie/laravel-data", g.between(60, 90))
	}))
	base := "api/phpstan-baseline.neon"
	g.round("Running phpstan to see what the new version reports.", shell("cd api && vendor/bin/phpstan analyse --memory-limit=1G --generate-baseline="+strings.TrimPrefix(base, "api/"), func(o *out) {
		o.add("Note: Using configuration file " + apiRoot + "/phpstan.neon.")
		n := g.between(180, 240)
		o.addf(" %d/%d [▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓] 100%%", n, n)
		o.add("")
		o.addf(" [OK] Baseline generated with %d errors.", g.between(3, 12))
		o.add("")
	}))
	g.round("Including the baseline and running the tests.", writeCall(root+"/api/phpstan.neon", fmt.Sprintf("includes:\n    - vendor/larastan/larastan/extension.neon\n    - %s\n\nparameters:\n    level: 6\n    paths:\n        - app\n        - database\n    # New findings of phpstan 2 are tracked in %s.\n", strings.TrimPrefix(base, "api/"), g.fileID("id", g.mkTicket("SHIP")))),
		shell("cd api && vendor/bin/phpunit", func(o *out) { g.phpunit(o, phpunitSpec{}) }))
	g.round("Auditing again and committing.", shell("cd api && composer audit", func(o *out) { o.add("No security vulnerability advisories found.") }),
		g.commit(g.branchName("chore", "laravel-data-4-11"), "api: upgrade spatie/laravel-data to 4.11 (security), larastan 3", []string{"api/composer.json", "api/composer.lock", "api/phpstan.neon"}, []string{base}))
	g.say("Upgraded spatie/laravel-data to 4.11.1, which fixes the advisory; composer audit is clean. It needed a newer PHP parser, so larastan moved to 3 and phpstan to 2 (dev only). New phpstan findings are in a baseline file. Laravel and PHP versions are unchanged and the tests pass.")
}

// ---- Swift ----

// taskSwiftTest: an XCTest case of TidewaterKit fails.
func (g *gen) taskSwiftTest() {
	f := g.w.subject(g, g.w.kit)
	g.user(fmt.Sprintf(pick(g,
		"%[1]s: the TidewaterKit tests fail on CI since the last merge (%[2]s). Please fix it. Keep the iOS 16 deployment target and don't add package dependencies.",
		"TidewaterKit's tests are red (%[1]s, see %[2]s). Something in %[3]s. Fix it without raising the deployment target or adding packages.",
	), g.userID("id", g.mkTicket("MOB")), g.ticketLink(), f.name))
	fail := &xcFail{file: f, kind: pick(g, "equal", "equal", "unwrap", "throw")}
	g.round("Running the package tests.", shell("cd ios/TidewaterKit && swift test", func(o *out) { g.swiftTest(o, fail) }))
	g.round("Reading the type and its tests.", g.readOf(f), g.readOf(f.test))
	old, repl := g.swiftEdit()
	reg := g.fileID("path", func() string {
		return "ios/TidewaterKit/Tests/TidewaterKitTests/" + f.name + pick(g, "Regression", "Edge", "Rounding", "Decoding") + "Tests.swift"
	})
	g.round("Fixing it and adding a regression test.", replaceCall(f.abs(), old, repl), writeCall(root+"/"+reg, g.xctestRegression(f, reg)))
	g.round("Running the package tests again.", shell("cd ios/TidewaterKit && swift test", func(o *out) { g.swiftTest(o, nil) }))
	if g.chance(0.6) {
		g.round("And the app's tests, which use the package.", shell("cd ios && xcodebuild test -project Tidewater.xcodeproj -scheme Tidewater -destination 'platform=iOS Simulator,name=iPhone 16,OS=18.1'", func(o *out) {
			g.xcodebuildTest(o, "", nil)
		}))
	}
	br := g.branchName("fix", "kit-"+kebab(f.name))
	g.round("Committing.", g.commit(br, "TidewaterKit: fix "+f.name+" and add regression test", []string{f.path}, []string{reg}))
	g.say("Fixed in the package; its tests pass, including a new regression test, and the app's tests still pass. Deployment target and dependencies are unchanged.")
}

// swiftEdit returns an edit of a Swift type; the new text holds a
// file_written identifier.
func (g *gen) swiftEdit() (string, string) {
	switch g.r.IntN(3) {
	case 0:
		return "let rounded = (minutes / 15) * 15",
			fmt.Sprintf("let rounded = Int((Double(minutes) / 15).rounded(.up)) * 15 // %s", g.fileID("id", g.mkTicket("MOB")))
	case 1:
		return "let decoder = JSONDecoder()\ndecoder.dateDecodingStrategy = .iso8601",
			fmt.Sprintf("let decoder = JSONDecoder()\ndecoder.dateDecodingStrategy = .custom(ISO8601.flexible)\ndecoder.userInfo[.schemaVersion] = %q", g.fileID("version", g.mkVersion()))
	default:
		return "let postcode = raw.uppercased().filter { !$0.isWhitespace }",
			fmt.Sprintf("let postcode = raw.uppercased().filter { $0.isLetter || $0.isNumber }\n        logger.debug(\"%s \\(postcode, privacy: .private)\")", g.fileID("key", g.mkKey("kit")))
	}
}

func (g *gen) xctestRegression(f *srcFile, path string) string {
	cls := strings.TrimSuffix(path[strings.LastIndexByte(path, '/')+1:], ".swift")
	var b strings.Builder
	fmt.Fprintf(&b, "import XCTest\n@testable import TidewaterKit\n\n/// Cases from the failing CI run (%s).\nfinal class %s: XCTestCase {\n", g.fileID("id", g.mkTicket("MOB")), cls)
	for range g.between(2, 3) {
		fmt.Fprintf(&b, "    func %s() throws {\n        let sut = %s(baseURL: URL(string: \"https://api.test\")!)\n        XCTAssertNoThrow(try sut.%s(Fixtures.shipment(weightGrams: %d)))\n    }\n\n", g.fill(g.swiftTestName), f.name, f.funcs[0], g.between(1, 30000))
	}
	b.WriteString("}\n")
	return b.String()
}

// taskSwiftCompile: a signature change leaves call sites that no longer
// compile.
func (g *gen) taskSwiftCompile() {
	f := g.w.subject(g, g.w.kit)
	g.user(fmt.Sprintf(pick(g,
		"Could you make %s.%s take a Measurement<UnitMass> instead of grams as Int? The Int version keeps causing unit bugs (%s). Keep a deprecated overload for the app until the next release.",
		"Please change %s.%s to take Measurement<UnitMass> rather than an Int of grams (%s). Leave a deprecated Int overload so the app still builds.",
	), f.name, f.funcs[0], g.userID("id", g.mkTicket("MOB"))) + fmt.Sprintf(" The last unit bug was %s.", g.userID("url", g.mkURLNum("https://tidewater.sentry.io/issues/", 10, "/?project=4508"))))
	g.round("Reading the type.", g.readOf(f))
	g.round("Changing the signature and keeping a deprecated overload.", replaceCall(f.abs(), "    public init(baseURL: URL) {",
		fmt.Sprintf("    @available(*, deprecated, message: \"Pass a Measurement<UnitMass>; removed in %s\")\n    public func %s(_ grams: Int) -> String {\n        %s(Measurement(value: Double(grams), unit: .grams))\n    }\n\n    public init(baseURL: URL) {", g.fileID("version", g.mkVersion()), f.funcs[0], f.funcs[0])))
	callers := g.w.others(g, g.w.kit, f, 2)
	g.round("Building the package.", shell("cd ios/TidewaterKit && swift build", func(o *out) {
		g.swiftBuild(o, func(o *out) {
			for _, c := range callers {
				g.swiftCompileError(o, c, "cannot convert value of type 'Double' to expected argument type 'Measurement<UnitMass>'", "return formatter.string(from: kg)")
			}
		})
	}))
	g.round("Two callers pass a Double. Reading them.", g.readOf(callers[0]), g.readOf(callers[1]))
	var edits []tcall
	for _, c := range callers {
		edits = append(edits, replaceCall(c.abs(), "return formatter.string(from: measurement.converted(to: .kilograms))", "return formatter.string(from: measurement.converted(to: .kilograms).rounded(toPlaces: 1))"))
	}
	g.round("Passing measurements at both call sites.", edits...)
	g.round("Building and testing the package.", shell("cd ios/TidewaterKit && swift build && swift test", func(o *out) {
		g.swiftBuild(o, nil)
		g.swiftTest(o, nil)
	}))
	g.round("Building the app against it.", shell("cd ios && xcodebuild test -project Tidewater.xcodeproj -scheme Tidewater -destination 'platform=iOS Simulator,name=iPhone 16,OS=18.1'", func(o *out) {
		g.xcodebuildTest(o, "", nil)
	}))
	changed := []string{f.path, callers[0].path, callers[1].path}
	g.round("Committing.", g.status(changed, nil), g.commit(g.branchName("refactor", "kit-measurement-"+kebab(f.funcs[0])), "TidewaterKit: take Measurement<UnitMass> in "+f.name, changed, nil))
	g.say("Done. The method takes a Measurement<UnitMass>, with a deprecated Int overload for the app. Two call sites in the package still passed a Double; the compiler caught them and they are fixed. Package and app tests pass.")
}

// taskIOSCrash: a TestFlight crash; the agent reads the report,
// reproduces it in a test, fixes and verifies.
func (g *gen) taskIOSCrash() {
	f := g.w.subject(g, g.w.app)
	version := fmt.Sprintf("%d.%d.0 (%d)", g.between(3, 4), g.between(10, 19), g.between(300, 700))
	g.user(fmt.Sprintf(pick(g,
		"TestFlight build %[1]s crashes for testers when they open %[2]s (%[3]s). I exported the report to ~/Downloads/Tidewater-crash.crash. Please fix it. No UI changes, and the fix has to go into %[4]s.",
		"Testers report a crash in %[2]s on TestFlight (%[3]s), build %[1]s; the crash report is in ~/Downloads/Tidewater-crash.crash. Fix it without touching the UI; target release is %[4]s.",
	), version, strings.TrimSuffix(f.name, "ViewModel"), g.userID("url", g.mkURLNum("https://appstoreconnect.apple.com/teams/", 8, "/apps/6448213307/testflight/ios")), g.userID("version", g.mkVersion())))
	g.round("Reading the crash report.", readCall("/Users/dev/Downloads/Tidewater-crash.crash", func(o *out) { g.crashReport(o, f, version) }))
	g.round("The main thread trapped in the view model's grouping by day. Reading it and its tests.", g.readOf(f), g.readOf(f.test))
	only := "TidewaterTests/" + f.test.name
	fail := &xcFail{file: f, kind: pick(g, "equal", "unwrap")}
	g.round("Running its tests to see whether one catches it.", shell("cd ios && xcodebuild test -project Tidewater.xcodeproj -scheme Tidewater -destination 'platform=iOS Simulator,name=iPhone 16,OS=18.1' -only-testing:"+only, func(o *out) {
		g.xcodebuildTest(o, only, fail)
	}))
	reg := g.fileID("path", func() string {
		return "ios/TidewaterTests/" + f.name + pick(g, "Crash", "EmptyDay", "Grouping") + "Tests.swift"
	})
	g.round("An empty day makes the grouping index past the end. Guarding it and adding a test for the case.",
		replaceCall(f.abs(), "sections = grouped.keys.sorted().map { ShipmentSection(day: $0, items: grouped[$0] ?? []) }",
			fmt.Sprintf("sections = grouped.keys.sorted().compactMap { day in\n            guard let items = grouped[day], !items.isEmpty else { return nil }\n            return ShipmentSection(day: day, items: items)\n        }\n        logger.info(\"%s sections=\\(sections.count)\")", g.fileID("key", g.mkKey("app")))),
		writeCall(root+"/"+reg, fmt.Sprintf("import XCTest\n@testable import Tidewater\n\n// Crash from TestFlight, incident group "+g.fileID("hash", g.mkHash(16))+".\n@MainActor\nfinal class %s: XCTestCase {\n    func testEmptyDayDoesNotCrash() async throws {\n        let sut = %s(client: .stub(shipments: [.fixture(expectedAt: nil)]))\n        await sut.reload()\n        XCTAssertTrue(sut.sections.isEmpty)\n    }\n}\n", strings.TrimSuffix(reg[strings.LastIndexByte(reg, '/')+1:], ".swift"), f.name)))
	g.round("Running the app's tests.", shell("cd ios && xcodebuild test -project Tidewater.xcodeproj -scheme Tidewater -destination 'platform=iOS Simulator,name=iPhone 16,OS=18.1'", func(o *out) {
		g.xcodebuildTest(o, "", nil)
	}))
	g.round("Committing.", g.commit(g.branchName("fix", "ios-"+kebab(strings.TrimSuffix(f.name, "ViewModel"))+"-crash"), "iOS: don't crash on days without shipments", []string{f.path}, []string{reg}))
	g.say("Fixed. The crash was a trap in the view model when a day had no shipments; it now skips empty days, and a test covers the case. All app tests pass; no UI change. It is on a branch for the release.")
}

// ---- web ----

// taskPlaywright: an end-to-end test fails; the agent fixes the
// component, runs lint, the unit tests, the e2e suite and the build.
func (g *gen) taskPlaywright() {
	spec := g.w.subject(g, g.w.e2e)
	comp := g.w.subject(g, g.w.vue)
	button := pick(g, "Confirm pickup", "Print label", "Start return", "Close manifest", "Save address")
	g.user(fmt.Sprintf(pick(g,
		"The %[1]s e2e test fails on every PR since yesterday (%[2]s). Fix the app, not the test, unless the test is wrong. No waitForTimeout and no extra retries; selectors stay role-based.",
		"Playwright's %[1]s spec is red on CI (%[2]s). Please fix it properly: no sleeps, no retries, keep getByRole selectors.",
	), spec.name, g.userID("url", g.mkURLNum("https://github.com/tidewater-logistics/tidewater/actions/runs/", 11, "/job/"+fmt.Sprint(g.between(10000000, 99999999))))))
	fails := []*pwFail{{spec: spec, kind: pick(g, "visible", "timeout"), name: button}}
	if g.chance(0.6) {
		fails = append(fails, &pwFail{spec: spec, kind: pick(g, "visible", "timeout"), name: button})
	}
	suite := g.w.others(g, g.w.e2e, spec, g.scale(2)+1)
	suite = append(suite[:len(suite)/2], append([]*srcFile{spec}, suite[len(suite)/2:]...)...)
	g.round("Running the suite locally.", shell("cd web && npx playwright test --project=chromium --reporter=list", func(o *out) {
		g.playwright(o, suite, fails)
	}))
	g.round("Reading the failing spec and the component it drives.", g.readOf(spec), g.readOf(comp))
	g.round("Checking the component's unit tests.", shell("cd web && npx vitest run "+specPath(comp), func(o *out) { g.vitest(o, []*srcFile{comp}, nil, true, false) }))
	key := g.fileID("key", g.mkKey("web"))
	g.round("The button stays disabled until a slot is picked, and the slot list no longer loads for the next day. Fixing the component.",
		replaceCall(comp.abs(), "const canSubmit = computed(() => !!date.value && !!slot.value && !submitting.value && !props.disabled)",
			fmt.Sprintf("const slots = computed(() => store.slotsFor(date.value))\nconst slotHint = t('%s')\nconst canSubmit = computed(() => !!date.value && (!!slot.value || slots.value.length === 1) && !submitting.value && !props.disabled)", key)))
	g.round("Linting.", shell("cd web && npx eslint src/components", func(o *out) { g.eslint(o, []*srcFile{comp}) }))
	g.round("An unused variable and an any from the edit. Fixing both.", replaceCall(comp.abs(), "const slot = ref<string | null>(null)", "const slot = ref<string | null>(slots.value[0] ?? null)"))
	g.round("Linting again.", shell("cd web && npx eslint src/components", func(o *out) { g.eslint(o, nil) }))
	g.round("Running the whole e2e suite.", shell("cd web && npx playwright test --project=chromium --reporter=list", func(o *out) {
		g.playwright(o, head(g.w.e2e, g.scale(3)+2), nil)
	}))
	g.round("And the production build.", shell("cd web && npx vite build", func(o *out) { g.viteBuild(o) }))
	br := g.branchName("fix", "web-"+spec.name+"-e2e")
	g.round("Committing and pushing for review.", g.commit(br, "web: enable submit once a slot is available", []string{comp.path}, nil), g.push(br))
	g.say("Fixed in the component: the submit button waited for a slot that never got selected when only one slot was offered. The e2e suite, unit tests, lint and build pass; no sleeps or retries were added and selectors are unchanged. The branch is pushed for review.")
}

// taskVitest: a unit test of a TypeScript module or component fails.
func (g *gen) taskVitest() {
	xs := append(append([]*srcFile{}, g.w.ts...), g.w.vue...)
	f := g.w.subject(g, xs)
	kind := "equal"
	if f.lang == "vue" {
		kind = "type"
	}
	what := "shows wrong delivery times"
	if kind == "type" {
		what = "throws when a pickup is booked before the slots have loaded"
	}
	g.user(fmt.Sprintf(pick(g,
		"The dashboard %[3]s (%[1]s). I think it's in web/src/%[2]s. Please fix it with a test. Don't add dependencies.",
		"%[1]s: the dashboard %[3]s, and the unit tests fail too. Look at web/src/%[2]s. No new npm packages please.",
	), g.userID("id", g.mkTicket("WEB")), strings.TrimPrefix(f.path, "web/src/"), what) + fmt.Sprintf(" Example from support: %s", g.userID("url", g.mkURLNum("https://tidewater.zendesk.com/agent/tickets/", 6, ""))))
	others := g.w.others(g, xs, f, g.scale(4))
	g.round("Running the unit tests.", shell("cd web && npx vitest run --reporter=verbose", func(o *out) {
		g.vitest(o, append(others, f), &vitestFail{file: f, kind: kind}, true, false)
	}))
	g.round("Reading the module and its spec.", g.readOf(f), g.readOf(f.test))
	reg := g.fileID("path", func() string {
		return dir(f.test.path) + "/" + f.name + "." + pick(g, "regression", "dst", "rounding", "edge") + ".spec.ts"
	})
	var fix tcall
	why := "It drops the seconds before rounding to the quarter hour, so a time just past the quarter rounds down. Fixing it and adding cases."
	if kind != "type" {
		fix = replaceCall(f.abs(), "const minutes = Math.ceil(zoned.getMinutes() / 15) * 15", fmt.Sprintf("const minutes = Math.ceil((zoned.getMinutes() + zoned.getSeconds() / 60) / 15) * 15 // %s", g.fileID("id", g.mkTicket("WEB"))))
	} else {
		fix = replaceCall(f.abs(), "    const pickup = await store.book(props.shipmentId, date.value, slot.value!)\n    emit('booked', pickup.id)",
			fmt.Sprintf("    const pickup = await store.book(props.shipmentId, date.value, slot.value ?? '')\n    if (!pickup) return // %s\n    emit('booked', pickup.id)", g.fileID("id", g.mkTicket("WEB"))))
		why = "Submitting before the slots load books with no slot; the store returns nothing and the component reads its id. Guarding it and adding cases."
	}
	g.round(why, fix,
		writeCall(root+"/"+reg, g.vitestRegression(f, kind)))
	g.round("Running the unit tests with coverage.", shell("cd web && npx vitest run --coverage", func(o *out) {
		g.vitest(o, append(others, f), nil, false, true)
	}))
	g.round("Committing.", g.status([]string{f.path}, []string{reg}), g.commit(g.branchName("fix", "web-"+kebab(f.name)), "web: fix "+f.name+" rounding", []string{f.path}, []string{reg}))
	if kind == "type" {
		g.say("Fixed: submitting before the slots loaded made the component read the id of a booking that never happened; it now stops there. The unit tests pass with a new regression spec, and no dependencies were added.")
		return
	}
	g.say("Fixed: the time was rounded down inside a quarter hour. The unit tests pass with a new regression spec, and no dependencies were added.")
}

func (g *gen) vitestRegression(f *srcFile, kind string) string {
	if kind == "type" {
		return fmt.Sprintf("import { describe, expect, it } from 'vitest'\nimport { mount } from '@vue/test-utils'\nimport { createTestingPinia } from '@pinia/testing'\nimport %s from './%s.vue'\n\n// Cases from support case %s.\ndescribe('%s regressions', () => {\n  it('does not emit when booking returns nothing', async () => {\n    const wrapper = mount(%s, { props: { shipmentId: 'shp_test' }, global: { plugins: [createTestingPinia({ stubActions: true })] } })\n    await wrapper.find('form').trigger('submit')\n    expect(wrapper.emitted('booked')).toBeUndefined()\n  })\n})\n",
			f.name, f.name, g.fileID("id", g.mkID("case")), f.name, f.name)
	}
	return fmt.Sprintf("import { describe, expect, it } from 'vitest'\nimport * as subject from './%s'\n\n// Cases from support case %s.\ndescribe('%s regressions', () => {\n  it('rounds up inside the quarter hour', () => {\n    expect(subject.%s(new Date('2024-11-06T09:31:20Z'), 'Europe/London')).toBe('Arrives 09:45')\n  })\n})\n",
		f.name, g.fileID("id", g.mkID("case")), f.name, f.funcs[0])
}

// ---- infrastructure ----

// taskTerraform: a change to the staging infrastructure fails on apply
// with an error of the AWS API; the user decides how to go on.
func (g *gen) taskTerraform() {
	g.user(fmt.Sprintf(pick(g,
		"The label worker should have its own IAM role that can receive and delete on the label-events queue, plus a retry queue (%s). Staging only. Don't touch the state backend and don't use -target.",
		"Please give the label-events worker a dedicated role with receive/delete on its queue, and add a label-retries queue (%s). Staging only; no -target, leave the backend config alone.",
	), g.userID("id", g.mkTicket("INFRA"))))
	g.round("Reading the queue and IAM definitions.", g.readOf(g.w.config("sqs.tf")), g.readOf(g.w.config("iam.tf")))
	path := g.fileID("path", func() string { return "infra/terraform/envs/staging/label_worker_" + g.rs(lowers, 3) + ".tf" })
	file := path[strings.LastIndexByte(path, '/')+1:]
	g.round("Writing the role, its policy and the retry queue in a new file.", writeCall(root+"/"+path, fmt.Sprintf(`# Label worker: own role and retry queue. Reviewed in %s.
resource "aws_sqs_queue" "label_retries" {
  name                       = "tidewater-label-retries-${var.env}"
  visibility_timeout_seconds = 900
  tags                       = local.tags
}

resource "aws_iam_role" "label_worker" {
  name               = "tidewater-${var.env}-label-worker"
  assume_role_policy = data.aws_iam_policy_document.worker_assume.json
}

# Receive and delete only; sending stays with the api role (%s).
data "aws_iam_policy_document" "label_worker" {
  statement {
    actions   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"]
    resources = [aws_sqs_queue.jobs["label-events"].arn, aws_sqs_queue.label_retries.arn]
  }
}

resource "aws_iam_role_policy" "label_worker" {
  role   = aws_iam_role.label_worker.id
  policy = data.aws_iam_policy_document.label_worker.json
}
`, g.fileID("id", g.mkTicket("INFRA")), g.fileID("hash", g.mkHash(12)))))
	g.round("Formatting and validating.", shell("cd infra/terraform/envs/staging && terraform fmt -check && terraform validate", func(o *out) {
		o.add("Success! The configuration is valid.\n")
	}))
	role := tfResource{"aws_iam_role.label_worker", "create", [][2]string{{"arn", "(known after apply)"}, {"assume_role_policy", "jsonencode(...)"}, {"create_date", "(known after apply)"}, {"force_detach_policies", "false"}, {"id", "(known after apply)"}, {"max_session_duration", "3600"}, {"name", "\"tidewater-staging-label-worker\""}, {"path", "\"/\""}, {"unique_id", "(known after apply)"}}, "tidewater-staging-label-worker", 8}
	policy := tfResource{"aws_iam_role_policy.label_worker", "create", [][2]string{{"id", "(known after apply)"}, {"name", "(known after apply)"}, {"policy", "jsonencode(\n            {\n              + Statement = [\n                  + {\n                      + Action   = [\n                          + \"sqs:ReceiveMessage\",\n                          + \"sqs:DeleteMessage\",\n                          + \"sqs:ChangeMessageVisibility\",\n                          + \"sqs:GetQueueAttributes\",\n                        ]\n                      + Effect   = \"Allow\"\n                      + Resource = [\n                          + \"arn:aws:sqs:eu-west-1:" + account + ":tidewater-label-events-staging\",\n                          + (known after apply),\n                        ]\n                    },\n                ]\n              + Version   = \"2012-10-17\"\n            }\n        )"}, {"role", "(known after apply)"}}, "tidewater-staging-label-worker:terraform-" + g.fill(func() string { return fmt.Sprintf("2024110%d%014d", g.between(1, 9), g.r.Int64N(100000000000000)) }), 21}
	queue := tfResource{"aws_sqs_queue.label_retries", "create", [][2]string{{"arn", "(known after apply)"}, {"content_based_deduplication", "false"}, {"delay_seconds", "0"}, {"fifo_queue", "false"}, {"id", "(known after apply)"}, {"max_message_size", "262144"}, {"message_retention_seconds", "345600"}, {"name", "\"tidewater-label-retries-staging\""}, {"receive_wait_time_seconds", "0"}, {"tags", "{\n          + \"env\"     = \"staging\"\n          + \"owner\"   = \"platform\"\n          + \"project\" = \"tidewater\"\n        }"}, {"url", "(known after apply)"}, {"visibility_timeout_seconds", "900"}}, "https://sqs.eu-west-1.amazonaws.com/" + account + "/tidewater-label-retries-staging", 2}
	g.round("Planning.", shell("cd infra/terraform/envs/staging && terraform plan -out=tfplan", func(o *out) { g.tfPlan(o, []tfResource{role, policy, queue}) }))
	mode := pick(g, "boundary", "deleted")
	// The apply creates what does not depend on the failing resource
	// first; the failing one is last.
	applied, again := []tfResource{queue, role}, []tfResource{role, policy}
	if mode == "deleted" {
		applied, again = []tfResource{role, policy, queue}, []tfResource{queue}
	}
	g.round("Applying the saved plan.", shell("cd infra/terraform/envs/staging && terraform apply tfplan", func(o *out) {
		g.tfApply(o, applied, func(o *out, r tfResource) {
			rid := g.errID("uuid", g.mkUUID())
			if mode == "boundary" {
				who := g.errID("id", func() string {
					return fmt.Sprintf("arn:aws:sts::%s:assumed-role/tidewater-terraform/aws-go-sdk-%d", account, 1730000000000000000+g.r.Int64N(9000000000000000))
				})
				g.tfAWSError(o, r, file, fmt.Sprintf("creating IAM Role (tidewater-staging-label-worker): operation error IAM: CreateRole, https response error StatusCode: 403, RequestID: %s, api error AccessDenied: User: %s is not authorized to perform: iam:CreateRole on resource: arn:aws:iam::%s:role/tidewater-staging-label-worker because no permissions boundary allows the iam:CreateRole action", rid, who, account))
			} else {
				g.tfAWSError(o, r, file, fmt.Sprintf("creating SQS Queue (tidewater-label-retries-staging): operation error SQS: CreateQueue, https response error StatusCode: 400, RequestID: %s, QueueDeletedRecently: You must wait 60 seconds after deleting a queue before you can create another with the same name.", rid))
			}
		})
	}))
	if mode == "boundary" {
		g.say("The role creation was denied: the Terraform role may only create roles that carry the platform's permissions boundary, and the new role has none. The existing api role sets the boundary from a variable. Shall I set the same boundary on the new role?")
		g.user(fmt.Sprintf(pick(g, "Yes, same boundary as the api role. Nothing else changes. %s", "Do that, same variable as the api role. Reference %s in the PR."), g.userID("url", g.mkURLNum("https://tidewater.atlassian.net/wiki/spaces/PLAT/pages/", 9, "/IAM+boundaries"))))
		g.round("Adding the boundary to the role.", replaceCall(root+"/"+path, "  assume_role_policy = data.aws_iam_policy_document.worker_assume.json\n}",
			"  assume_role_policy   = data.aws_iam_policy_document.worker_assume.json\n  permissions_boundary = var.permissions_boundary_arn\n}"))
	} else {
		g.say("The retry queue was refused: a queue of that name was deleted less than a minute ago (someone tried this by hand, it seems). The role and policy were created. I can wait a minute and apply again, or rename the queue. Which do you prefer?")
		g.user(fmt.Sprintf(pick(g, "Wait and apply again, keep the name. It was me, see %s.", "Keep the name; that was my manual test (%s). Just retry."), g.userID("url", g.mkURLNum("https://tidewater.slack.com/archives/C06PLAT", 7, ""))))
		g.round("Waiting out the minute.", shell("sleep 70", func(o *out) {}))
	}
	g.round("Planning again.", shell("cd infra/terraform/envs/staging && terraform plan -out=tfplan", func(o *out) { g.tfPlan(o, again) }))
	g.round("Applying.", shell("cd infra/terraform/envs/staging && terraform apply tfplan", func(o *out) {
		g.tfApply(o, again, nil)
		o.add("\nOutputs:\n")
		o.addf("label_retries_queue_url = \"%s\"", g.passID("url", func() string {
			return fmt.Sprintf("https://sqs.eu-west-1.amazonaws.com/%s/tidewater-label-retries-staging?v=%s", account, g.rs(lowerAlnum, 5))
		}))
		o.addf("label_worker_role_unique_id = \"%s\"", g.passID("id", func() string { return "AROA" + g.rs("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 17) }))
	}))
	g.round("Committing.", g.commit(g.branchName("infra", "label-worker-role"), "infra: label worker role and retry queue (staging)", nil, []string{path}))
	g.say("Applied on staging: the label worker has its own role with receive and delete on its queue and the new retry queue. The first apply failed on the AWS side, which we resolved as you decided. No -target and no backend change. Next step would be pointing the worker's service account at the role.")
}

// taskCrashLoop: a worker is in CrashLoopBackOff on staging; its log
// shows an access error of the queue; a values change fixes it.
func (g *gen) taskCrashLoop() {
	g.user(fmt.Sprintf(pick(g,
		"The label-events worker on staging is crash-looping since the deploy an hour ago (%s). Please get it running. Helm only, no kubectl edit, and don't change the image tag.",
		"%s: label-events workers keep restarting on staging. Fix it through the chart values; no kubectl edit/patch, same image.",
	), g.userID("id", g.mkTicket("OPS"))) + fmt.Sprintf(" Alert: %s", g.userID("url", g.mkURL("grafana.tidewater.example", "alerting/grafana", "d/k8s-workloads"))))
	image := "318274650912.dkr.ecr.eu-west-1.amazonaws.com/tidewater-api:" + g.fill(g.mkVersion())
	sel := "-l app.kubernetes.io/component=label-events"
	rsHash := g.fill(func() string { return g.rs(podChars, 10) })
	var pods []crashPod
	for range 2 {
		pods = append(pods, crashPod{g.fill(func() string { return "tidewater-api-label-events-" + rsHash + "-" + g.rs(podChars, 5) }), ""})
	}
	g.round("Looking at the pods.", shell("kubectl -n "+namespace+" get pods -o wide", func(o *out) { g.kubePods(o, pods, false) }))
	g.round("Describing the crashing pods.", shell("kubectl -n "+namespace+" describe pod "+sel, func(o *out) {
		for i := range pods {
			if i > 0 {
				o.add("\n")
			}
			g.kubeDescribeCrash(o, "label-events", image, &pods[i])
		}
	}))
	g.round("And the namespace's recent events.", shell("kubectl -n "+namespace+" get events --sort-by=.lastTimestamp", func(o *out) { g.kubeEventList(o, pods, image) }))
	g.round("Reading the log of the last run.", shell("kubectl -n "+namespace+" logs "+sel+" --previous --tail=200", func(o *out) { g.workerCrashLog(o, "label-events") }))
	g.round("The worker runs as the api role, which may send but not receive. Reading the chart values and the worker template.", g.readOf(g.w.config("values-staging.yaml")), g.readOf(g.w.config("worker-deployment.yaml")))
	vals := root + "/infra/helm/tidewater-api/values-staging.yaml"
	g.round("Giving the label-events worker its own service account, bound to the worker role.", replaceCall(vals, "  label-events:\n    queue: label-events",
		fmt.Sprintf("  label-events:\n    queue: label-events\n    serviceAccount: tidewater_label_worker  # role from %s", g.fileID("id", g.mkTicket("INFRA")))))
	helm := "helm upgrade tidewater-api infra/helm/tidewater-api -n " + namespace + " -f infra/helm/tidewater-api/values-staging.yaml --reuse-values"
	rev := g.between(30, 90)
	g.round("Upgrading the release.", shell(helm, func(o *out) { g.helmUpgrade(o, rev, "tidewater_label_worker") }))
	g.round("Service account names can't contain underscores. Fixing the name, and adding the service account with the role annotation.",
		replaceCall(vals, "    serviceAccount: tidewater_label_worker", "    serviceAccount: tidewater-label-worker"),
		replaceCall(vals, "serviceAccount:\n  create: true", fmt.Sprintf("serviceAccount:\n  create: true\n  extra:\n    - name: tidewater-label-worker\n      annotations:\n        eks.amazonaws.com/role-arn: arn:aws:iam::318274650912:role/tidewater-staging-label-worker\n        tidewater.io/owner: %s", g.fileID("key", g.mkKey("platform")))))
	g.round("Upgrading again.", shell(helm, func(o *out) { g.helmUpgrade(o, rev+1, "") }))
	g.round("Waiting for the rollout and checking the pods.", shell("kubectl -n "+namespace+" rollout status deploy/tidewater-api-label-events --timeout=180s", func(o *out) {
		o.add("Waiting for deployment \"tidewater-api-label-events\" rollout to finish: 1 old replicas are pending termination...")
		o.add("Waiting for deployment \"tidewater-api-label-events\" rollout to finish: 1 of 2 updated replicas are available...")
		o.add("deployment \"tidewater-api-label-events\" successfully rolled out")
	}), shell("kubectl -n "+namespace+" get pods -o wide", func(o *out) { g.kubePods(o, nil, true) }))
	g.round("Reading the new worker's log.", shell("kubectl -n "+namespace+" logs "+sel+" --tail=120", func(o *out) { g.workerLog(o, "label-events", g.scale(g.between(10, 20))) }),
		shell("helm history tidewater-api -n "+namespace+" --max 8", func(o *out) { g.helmHistory(o, rev+1) }))
	g.round("Committing the values.", g.commit(g.branchName("fix", "label-worker-service-account"), "helm: run label-events worker under its own service account", []string{"infra/helm/tidewater-api/values-staging.yaml"}, nil))
	g.say("The label-events workers are running again. They ran under the api service account, whose role may send to the queue but not receive from it, so every start failed with an access error. The worker now has its own service account bound to the worker role; done through the chart values only, image unchanged.")
}

// taskGateway: creating a label times out at the gateway on staging.
func (g *gen) taskGateway() {
	g.user(fmt.Sprintf(pick(g,
		"Creating a label on staging hangs for a minute and then fails with a 504 (%s). Can you find out why? You may read logs on staging but don't restart anything there.",
		"%s: label purchase on staging ends in a gateway timeout. Please investigate; read-only on staging, no restarts.",
	), g.userID("id", g.mkTicket("SHIP", "OPS"))))
	base := "https://api.staging.tidewater.example/api/v1"
	headers := `{"Accept": "application/json", "Authorization": "Bearer $TW_STAGING_TOKEN"}`
	ship := ""
	g.round("Finding a shipment to try it on.", requestCall("GET", base+"/shipments?status=ready&per_page=10", headers, "", func(o *out) {
		o.add("HTTP/2 200\ncontent-type: application/json\nx-request-id: " + g.fill(g.mkHash(32)) + "\n")
		o.add("{\n    \"data\": [")
		n := g.scale(g.between(4, 8))
		for i := range n {
			id := g.fill(g.mkID("shp"))
			if i == 0 {
				ship = id
			} else if i%3 == 2 {
				id = g.passID("id", g.mkID("shp"))
			}
			sep := ","
			if i == n-1 {
				sep = ""
			}
			o.addf("        {\"id\": \"%s\", \"reference\": \"%s\", \"status\": \"ready\", \"carrier\": \"%s\", \"parcels\": %d}%s", id, g.fill(func() string { return fmt.Sprintf("TW-%06d", g.r.IntN(1000000)) }), pick(g, "dpd", "evri", "royal_mail"), g.between(1, 3), sep)
		}
		o.addf("    ],\n    \"meta\": {\"current_page\": 1, \"per_page\": 10, \"total\": %d}\n}", g.between(n, 300))
	}))
	g.round("Buying a label for it.", requestCall("POST", base+"/shipments/"+ship+"/labels", headers, `{"format":"pdf","size":"a6"}`, func(o *out) {
		o.err("HTTP/2 504")
		o.add("content-type: text/html\ncontent-length: 160")
		o.errf("x-request-id: %s", g.errID("hash", g.mkHash(32)))
		o.add("")
		o.err("<html>\n<head><title>504 Gateway Time-out</title></head>\n<body>\n<center><h1>504 Gateway Time-out</h1></center>\n<hr><center>nginx/1.27.2</center>\n</body>\n</html>")
		o.exit = 1
	}))
	upstream := g.errID("hostport", g.mkHostPort(9000))
	g.round("Reading nginx's log in the API pods.", shell("kubectl -n "+namespace+" logs deploy/tidewater-api -c nginx --since=30m", func(o *out) {
		g.nginxErrors(o, upstream, g.scale(g.between(22, 34)))
	}))
	client := g.phpModel("CarrierClient")
	g.round("PHP did not answer within the gateway's timeout. Reading PHP-FPM's log.", shell("kubectl -n "+namespace+" logs deploy/tidewater-api -c php-fpm --since=30m", func(o *out) {
		g.fpmLog(o, client, g.scale(g.between(16, 26)))
	}))
	g.round("The carrier call waits 30 seconds and retries twice, longer than the gateway allows. Reading the client, the controller and the config.",
		g.readOf(client), g.readOf(g.phpModel("LabelController")), g.readOf(g.w.config("services.php")))
	g.say("The label purchase calls the carrier gateway synchronously with a 30 second timeout and two retries, so a slow carrier holds the request past nginx's 60 seconds. I can either cap the carrier call below the gateway timeout, or make label creation asynchronous (202 and the label arrives by webhook), which changes the API contract. Which do you want?")
	g.user(fmt.Sprintf(pick(g,
		"Cap it for now: 8 seconds, one retry, configurable. The async version is planned in %s.",
		"Don't change the contract yet. Lower the timeout to 8s with one retry, behind config. Async comes later (%s).",
	), g.ticketLink()))
	key := g.fileID("env", g.mkEnv())
	g.round("Making the timeout and retries configurable, with the new defaults.",
		replaceCall(root+"/api/config/services.php", "        'timeout' => (int) env('CARRIER_GATEWAY_TIMEOUT', 30),\n        'connect_timeout' => 5,\n        'retries' => 2,",
			fmt.Sprintf("        'timeout' => (int) env('CARRIER_GATEWAY_TIMEOUT', 8),\n        'connect_timeout' => 3,\n        'retries' => (int) env('%s', 1),", key)),
		replaceCall(client.abs(), "$response = Http::withToken($this->token)\n    ->timeout(30)\n    ->retry(2, 250)",
			"$response = Http::withToken($this->token)\n    ->timeout(config('services.carrier_gateway.timeout'))\n    ->connectTimeout(config('services.carrier_gateway.connect_timeout'))\n    ->retry(config('services.carrier_gateway.retries'), 250)"))
	g.round("Running the label tests.", shell("cd api && vendor/bin/phpunit --testdox tests/Unit/Labels tests/Feature/Api/V1", func(o *out) {
		var xs []*srcFile
		for _, f := range g.w.php {
			if f.dir == "Labels" || f.kind == "controller" {
				xs = append(xs, f)
			}
		}
		g.phpunit(o, phpunitSpec{classes: xs[:min(len(xs), g.scale(3)+2)], testdox: true})
	}))
	br := g.branchName("fix", "carrier-timeout")
	g.round("Committing and pushing.", g.commit(br, "api: cap carrier gateway calls below the gateway timeout", []string{"api/config/services.php", client.path}, nil), g.push(br))
	g.say("The 504s come from the carrier call outlasting the gateway: 30 seconds per attempt with retries against nginx's 60. The call is now capped at 8 seconds with one retry, both configurable; tests pass and the branch is pushed. Nothing on staging was restarted; it takes effect with the next deploy.")
}

// ---- data ----

// taskData: a read-only investigation in MongoDB and Elasticsearch.
func (g *gen) taskData() {
	g.user(fmt.Sprintf(pick(g,
		"Customers see gaps in the tracking timeline of DPD parcels since Monday (%[1]s, e.g. shipment %[2]s). Find out whether events are missing in Mongo or only in search. Read-only: no writes to Mongo or Elasticsearch.",
		"%[1]s: DPD tracking timelines have holes since Monday; one example is %[2]s. Are the events missing in the store or only in the search index? Strictly read-only please.",
	), g.userID("id", g.mkTicket("CS")), g.userID("id", g.mkID("shp"))))
	mongo := "mongosh \"$TRACKING_RO_URI\" --quiet --eval"
	g.round("Counting DPD events per day in the event store.", shell(mongo+` 'db.events.aggregate([{$match: {carrier: "dpd", occurredAt: {$gte: ISODate("2024-10-28")}}}, {$group: {_id: {$dateToString: {format: "%Y-%m-%d", date: "$occurredAt"}}, n: {$sum: 1}}}, {$sort: {_id: 1}}]).toArray()'`, func(o *out) {
		o.add("[")
		for i := range 10 {
			o.addf("  { _id: '2024-%s', n: %d }%s", time.Date(2024, 10, 28+i, 0, 0, 0, 0, time.UTC).Format("01-02"), g.between(90000, 160000)/map[bool]int{true: 3, false: 1}[i >= 7], map[bool]string{true: "", false: ","}[i == 9])
		}
		o.add("]")
	}))
	g.round("Grouping the shipments with sequence gaps.", shell(mongo+` 'db.events.aggregate([{$match: {carrier: "dpd", occurredAt: {$gte: ISODate("2024-11-04")}}}, {$sort: {seq: 1}}, {$group: {_id: "$shipmentId", seqs: {$push: "$seq"}}}, {$project: {gaps: {$setDifference: [{$range: [{$min: "$seqs"}, {$max: "$seqs"}]}, "$seqs"]}}}, {$match: {"gaps.0": {$exists: true}}}]).toArray()'`, func(o *out) {
		o.errf("%s: PlanExecutor error during aggregation :: caused by :: Exceeded memory limit for $group, but didn't allow external spilling; pass allowDiskUse:true to opt in.", g.errFixed("code", "MongoServerError[QueryExceededMemoryLimitNoDiskUseAllowed]"))
		o.exit = 1
	}))
	g.round("Too much for memory. Allowing disk use and limiting the output.", shell(mongo+` 'db.events.aggregate([{$match: {carrier: "dpd", occurredAt: {$gte: ISODate("2024-11-04")}}}, {$sort: {seq: 1}}, {$group: {_id: "$shipmentId", seqs: {$push: "$seq"}, last: {$max: "$occurredAt"}}}, {$project: {shipmentId: "$_id", events: {$size: "$seqs"}, firstSeq: {$min: "$seqs"}, lastSeq: {$max: "$seqs"}, gaps: {$setDifference: [{$range: [{$min: "$seqs"}, {$max: "$seqs"}]}, "$seqs"]}, lastEventAt: "$last"}}, {$match: {"gaps.0": {$exists: true}}}, {$limit: 40}], {allowDiskUse: true}).toArray()'`, func(o *out) {
		g.mongoDocs(o, g.scale(g.between(6, 12)), 4)
	}))
	g.round("Reading what the tracking sync worker logged about DPD.", shell("kubectl -n "+namespace+" logs deploy/tidewater-api-tracking-sync --since=96h | grep -iE 'dpd|webhook' | tail -n 300", func(o *out) {
		g.syncLog(o, g.scale(g.between(20, 34)))
	}))
	g.round("Checking that the query uses the carrier index.", shell(mongo+` 'db.events.find({carrier: "dpd", occurredAt: {$gte: ISODate("2024-11-04")}}).explain("executionStats")'`, func(o *out) { g.mongoExplain(o) }))
	g.round("Opening a tunnel to the search cluster.", shell("kubectl -n "+namespace+" port-forward svc/tidewater-search-es-http 9200:9200 >/tmp/es-pf.log 2>&1 & sleep 2; cat /tmp/es-pf.log", func(o *out) {
		o.add("Forwarding from 127.0.0.1:9200 -> 9200\nForwarding from [::1]:9200 -> 9200")
	}))
	es := "https://localhost:9200"
	esHeaders := `{"Authorization": "ApiKey $ES_RO_KEY", "Content-Type": "application/json"}`
	g.round("Listing the indices.", requestCall("GET", es+"/_cat/indices/shipments-*,tracking-*?v&s=index:desc", esHeaders, "", func(o *out) {
		o.add("HTTP/1.1 200 OK\nX-elastic-product: Elasticsearch\ncontent-type: text/plain; charset=UTF-8\n")
		g.esIndices(o)
	}))
	g.round("Searching DPD shipments whose last event is older than a day.", requestCall("POST", es+"/shipments-v7/_search", esHeaders,
		`{"size":20,"query":{"bool":{"filter":[{"term":{"carrier":"dpd"}},{"range":{"eventCount":{"lte":"2024-11-04T00:00:00Z"}}}]}},"sort":[{"lastEventAt":"asc"}]}`, func(o *out) { g.esQueryError(o) }))
	g.round("Wrong field in the range. Querying on the date field.", requestCall("POST", es+"/shipments-v7/_search", esHeaders,
		`{"size":20,"query":{"bool":{"filter":[{"term":{"carrier":"dpd"}},{"range":{"lastEventAt":{"lte":"now-1d"}}},{"term":{"status":"in_transit"}}]}},"sort":[{"lastEventAt":"asc"}]}`, func(o *out) {
			o.add("HTTP/1.1 200 OK\nX-elastic-product: Elasticsearch\ncontent-type: application/json\n")
			g.esHits(o, g.scale(g.between(4, 8)))
		}))
	g.say("The events are missing in the store itself, not only in search: since Monday, DPD shipments have gaps in their event sequence in Mongo, and the search index mirrors what Mongo has. Daily volume from DPD dropped by about two thirds on Monday, and the sync worker has been rejecting part of DPD's webhooks since then because their signatures no longer verify (it looks like a key rotation on their side). Nothing was written. Do you want a script that lists the events to re-request from DPD for the affected shipments?")
	g.user(fmt.Sprintf(pick(g,
		"Yes, write it as a mongosh script that only lists what to re-request, as JSON; the sync job will take it from there. Don't run it. Background: %s.",
		"Please write the mongosh script, listing only (no writes), output as JSON for the sync job. Leave it unrun. See %s.",
	), g.userID("url", g.mkURLNum("https://tidewater.atlassian.net/wiki/spaces/DATA/pages/", 9, "/Tracking+backfill"))))
	path := g.fileID("path", func() string {
		return "data/mongo/" + g.now.Format("2006-01-02") + "-dpd-gaps-" + g.rs(lowers, 4) + ".js"
	})
	g.round("Writing the script, not running it.", writeCall(root+"/"+path, fmt.Sprintf(`// Lists DPD shipments with gaps in their event sequence since 2024-11-04,
// as JSON lines for the sync job (%s). Read-only.
const since = ISODate("2024-11-04T00:00:00Z");
db.events.aggregate([
  { $match: { carrier: "dpd", occurredAt: { $gte: since } } }, // index %s
  { $sort: { seq: 1 } },
  { $group: { _id: "$shipmentId", seqs: { $push: "$seq" } } },
  { $project: { gaps: { $setDifference: [{ $range: [{ $min: "$seqs" }, { $max: "$seqs" }] }, "$seqs"] } } },
  { $match: { "gaps.0": { $exists: true } } },
], { allowDiskUse: true }).forEach((d) => print(JSON.stringify({ shipmentId: d._id, missing: d.gaps })));
`, g.fileID("key", g.mkKey("sync")), g.fileID("key", func() string { return "carrier_1_occurredAt_-1_" + g.rs(lowers, 3) }))))
	g.say("Written to data/mongo; it only reads and prints JSON lines for the sync job. I did not run it, and nothing was written to Mongo or Elasticsearch.")
}

// taskSurvey: reading many files to explain a flow; no code changes.
func (g *gen) taskSurvey() {
	g.user(fmt.Sprintf(pick(g,
		"Before next sprint's work on returns (%s), give me a short map of how a label gets bought: from the web dashboard and the iOS app through the API to the carrier and the queue workers. No code changes; put the notes in a markdown file under docs/design.",
		"I need an overview for the design review (%s): how does label purchase flow from the clients through the API, the carrier gateway and the workers? Read what you need, change no code, leave the notes in docs/design.",
	), g.userID("id", g.mkTicket("SHIP"))) + fmt.Sprintf(" The returns PRD is at %s if you want context.", g.userID("url", g.mkURLNum("https://tidewater.atlassian.net/wiki/spaces/PROD/pages/", 9, "/Returns+v2"))))
	g.round("Starting from the API's routes and the label code.", g.readOf(g.w.config("routes/api.php")), g.searchOf("PurchaseLabel", "api/app", "*.php", g.w.php))
	var reads []*srcFile
	reads = append(reads, g.phpModel("LabelController"), g.phpModel("LabelPurchaser"))
	reads = append(reads, g.w.others(g, g.w.phpOf("job"), nil, 2)...)
	reads = append(reads, g.w.others(g, g.w.vue, nil, 1)...)
	reads = append(reads, g.w.others(g, g.w.ts, nil, 1)...)
	reads = append(reads, g.w.others(g, g.w.app, nil, 1)...)
	reads = append(reads, g.w.others(g, g.w.kit, nil, 1)...)
	for i := 0; i+1 < len(reads); i += 2 {
		g.round(pick(g, "Reading the next layer.", "Following the call into the next files.", "Next two files on the path."), g.readOf(reads[i]), g.readOf(reads[i+1]))
	}
	g.round("The queue configuration and the worker deployment.", g.readOf(g.w.config("queue.php")), g.readOf(g.w.config("values.yaml")))
	g.round("And the recent history of those areas.", shell("git log --oneline -n 40 -- api/app/Services/Labels api/app/Jobs web/src ios/Tidewater", func(o *out) {
		g.gitLog(o, pick(g, gitAreas...), g.scale(10))
	}))
	note := g.fileID("path", func() string {
		return "docs/design/" + pick(g, "label-purchase-flow", "labels-map", "label-lifecycle") + "-" + g.rs(lowers, 3) + ".md"
	})
	g.round("Writing the notes.", writeCall(root+"/"+note, "# How a label is bought\n\nFor the returns design review ("+g.fileID("id", g.mkTicket("SHIP"))+").\n\n1. Clients: the dashboard's label preview and the iOS label share screen call POST /api/v1/shipments/{id}/labels.\n2. API: the label controller validates the shipment and calls the label purchaser.\n3. The purchaser calls the carrier gateway synchronously and stores the PDF; on failure it queues a retry.\n4. Workers: PurchaseLabel and SyncTrackingEvents run from SQS queues, one deployment per queue.\n5. Tracking events arrive by webhook and land in MongoDB; search is fed from there.\n\nOpen question for returns: return labels reuse the same synchronous path.\n"))
	g.say("Notes written under docs/design. In short: both clients call the same label endpoint; the API buys the label synchronously from the carrier gateway and stores the PDF, queueing a retry on failure; queue workers (one deployment per SQS queue) handle retries and tracking sync; tracking events land in MongoDB and feed search. Return labels would reuse the synchronous path, which is the main risk for the returns work. No code changed.")
}
