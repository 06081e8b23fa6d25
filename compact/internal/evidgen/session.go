package evidgen

import (
	"fmt"
	"strings"
)

// session runs tasks until the tool-call count is reached, and ends with
// a user message (the turn the agent is about to answer).
func (g *gen) session() {
	focus := g.pkgs[0]
	for g.calls < g.o.ToolCalls {
		p := focus
		if g.task%3 == 2 {
			p = g.pkgs[1+g.r.IntN(len(g.pkgs)-1)]
		}
		g.runTask(p)
		g.task++
	}
	g.user("Thanks, that's all for now. Tomorrow we look at the metrics exporter; leave the branch as it is.")
}

var constraintForms = []func(g *gen) string{
	func(g *gen) string {
		return "- Don't change the response format of " + g.url(UserTurn) + "; clients parse it."
	},
	func(g *gen) string {
		return "- Keep " + g.port(UserTurn) + " free: the admin listener binds it in the test setup."
	},
	func(g *gen) string {
		return "- Customers see " + g.code(UserTurn) + " in their dashboards; keep that code unchanged."
	},
	func(g *gen) string {
		return "- Don't touch " + g.label(g.uniq(func() string {
			return fmt.Sprintf("internal/store/migrations/%04d_%s.sql", 10+g.r.IntN(90), strings.ToLower(g.pick(nouns)))
		}), UserTurn, "path") + "; migrations are frozen for the release."
	},
	func(g *gen) string {
		return "- The fix must not revert " + g.hash(UserTurn, 8) + ", it fixed the header leak."
	},
	func(g *gen) string {
		return "- " + g.testName(UserTurn) + " must keep passing; it guards the legacy clients."
	},
}

var requests = []string{
	"Requests through the gateway to %s fail since yesterday's deploy (ticket %s). Find out why and fix it.",
	"%s is flaky on CI again (see %s). Please look into it and make it deterministic.",
	"We need a retry budget for calls to %s (spec in %s). Add it with tests.",
	"After the last merge %s returns 502 for some tenants (incident %s). Please investigate.",
	"Route reloads drop requests to %s (reported in %s). Make reloads atomic.",
}

func (g *gen) runTask(p *pkg) {
	var b strings.Builder
	fmt.Fprintf(&b, requests[g.task%len(requests)], g.url(UserTurn), g.id(UserTurn, "OPS"))
	b.WriteString("\n\nConstraints:\n")
	n := 2 + g.r.IntN(3)
	for i := 0; i < n; i++ {
		b.WriteString(constraintForms[(g.task+i*2)%len(constraintForms)](g))
		b.WriteByte('\n')
	}
	if g.r.IntN(2) == 0 {
		fmt.Fprintf(&b, "\nThe last good build was %s.", g.hash(UserTurn, 12))
	}
	g.user(b.String())

	if !p.listed {
		p.listed = true
		g.shell("Let me look at the "+p.name+" package first.", "ls -la "+p.dir, g.listing(p), false)
	} else if !p.testdata && g.r.IntN(2) == 0 {
		p.testdata = true
		g.shell("Checking which fixtures the "+p.name+" tests use.", "find "+p.dir+"/testdata -type f | sort", g.fixtures(p), false)
	}
	if g.task%4 == 3 {
		g.shell("Recent history of the package, to see what changed.", "git log --oneline -n 12 -- "+p.dir, g.gitLog(), false)
	}
	for i, n := 0, 3+g.r.IntN(5); i < n; i++ {
		g.read(p)
	}
	g.failingRun(p)
	if g.task%2 == 1 {
		g.failingRequest()
	}
	for i, n := 0, 1+g.r.IntN(3); i < n; i++ {
		g.read(p)
	}
	g.say(g.plan(p))
	g.user(g.pick(approvals))
	g.change(p)
	if g.r.IntN(5) < 2 {
		g.failingRun(p)
		g.read(p)
		g.change(p)
	}
	if g.r.IntN(3) == 0 {
		g.user(g.followUp())
		g.read(p)
	}
	g.shell("Running the package's tests again.", "go test ./"+p.dir+"/", filler(fmt.Sprintf("ok  \tgithub.com/acme/gatewayd/%s\t%d.%03ds", p.dir, g.r.IntN(2), g.r.IntN(1000))), false)
	switch g.task % 3 {
	case 0:
		other := g.pkgs[g.r.IntN(len(g.pkgs))]
		g.shell("Running the verbose suite of "+other.name+" to check nothing else moved.", "go test -v -count=1 ./"+other.dir+"/", g.passingVerbose(other), false)
	case 1:
		g.passingRequest()
	default:
		g.shell("Building the binary to check the release build.", "go build -o dist/gatewayd ./cmd/gatewayd && sha256sum dist/gatewayd && go version -m dist/gatewayd | head -n 6", g.build(), false)
	}
	g.say(g.summary(p))
}

// Reads.

func (g *gen) read(p *pkg) {
	var cands []*file
	for _, f := range p.files {
		if !f.edited {
			cands = append(cands, f)
		}
	}
	f := cands[g.r.IntN(len(cands))]
	// Prefer files read before half of the time: agents reread.
	if g.r.IntN(2) == 0 {
		for _, c := range cands {
			if c.read > 0 && g.r.IntN(2) == 0 {
				f = c
				break
			}
		}
	}
	if f.lines == nil {
		f.lines = g.source(f)
	}
	f.read++
	if g.r.IntN(4) == 0 {
		out := make([]line, len(f.lines))
		for i, l := range f.lines {
			out[i] = line{text: fmt.Sprintf("%6d\t%s", i+1, l.text), class: l.class}
		}
		g.tool("Reading "+f.name+".", "read_file", []arg{{"path", f.path}}, out, false)
		return
	}
	g.shell(g.pick(readReasons), "cat "+f.path, f.lines, false)
}

var readReasons = []string{
	"Let me read the code around it.",
	"Checking how this file handles it.",
	"Reading the next file in the call chain.",
	"I want to see the callers before changing anything.",
	"Looking at the tests for this part.",
	"Rereading this file to confirm the order of operations.",
}

func (g *gen) listing(p *pkg) []line {
	out := filler(fmt.Sprintf("total %d", 40+len(p.files)*8), "drwxr-xr-x  5 dev dev  4096 Mar  3 10:12 .", "drwxr-xr-x 12 dev dev  4096 Mar  3 10:12 ..")
	for _, f := range p.files {
		out = append(out, line{text: fmt.Sprintf("-rw-r--r--  1 dev dev %5d Mar  %d %02d:%02d %s", 800+g.r.IntN(9000), 1+g.r.IntN(9), g.r.IntN(24), g.r.IntN(60), f.name)})
	}
	return append(out, line{text: "drwxr-xr-x  2 dev dev  4096 Mar  1 09:40 testdata"})
}

func (g *gen) fixtures(p *pkg) []line {
	var out []line
	for i, n := 0, 4+g.r.IntN(5); i < n; i++ {
		path := g.label(g.uniq(func() string {
			return fmt.Sprintf("%s/testdata/%s_%03d.golden", p.dir, strings.ToLower(g.pick(nouns)), g.r.IntN(1000))
		}), ReadOnly, "path")
		out = append(out, line{text: path, class: ReadOnly})
	}
	return out
}

func (g *gen) gitLog() []line {
	var out []line
	for i := 0; i < 12; i++ {
		l := line{text: fmt.Sprintf("%s %s: %s %s", g.hex(7), g.pick(pkgNames), strings.ToLower(g.pick(verbs)), strings.ToLower(g.pick(nouns)))}
		if i%3 == 0 {
			l = line{text: fmt.Sprintf("%s %s: %s %s", g.hash(ReadOnly, 7), g.pick(pkgNames), strings.ToLower(g.pick(verbs)), strings.ToLower(g.pick(nouns))), class: ReadOnly}
		}
		out = append(out, l)
	}
	return out
}

// source makes a file's content: Go code with, now and then, a constant
// or comment holding a read_only identifier.
func (g *gen) source(f *file) []line {
	out := filler("package "+f.p.name, "", "import (", "\t\"context\"", "\t\"errors\"", "\t\"fmt\"", "\t\"net/http\"", "\t\"sync\"", "\t\"time\"", ")", "")
	switch g.r.IntN(4) {
	case 0:
		out = append(out, line{text: "// defaultUpstream is used when a route names none.", class: ""},
			line{text: "const defaultUpstream = \"" + g.url(ReadOnly) + "\"", class: ReadOnly})
	case 1:
		out = append(out, line{text: "// " + g.code(ReadOnly) + " is what clients see when the table is being swapped.", class: ReadOnly})
	case 2:
		out = append(out, line{text: "var fallbackAddr = \"" + g.port(ReadOnly) + "\"", class: ReadOnly})
	}
	if g.r.IntN(3) == 0 {
		out = append(out, line{text: "// See " + g.label(g.uniq(func() string {
			return fmt.Sprintf("https://github.com/acme/gatewayd/issues/%d", 100+g.r.IntN(5000))
		}), ReadOnly, "url") + " for why the lock is held here.", class: ReadOnly})
	}
	n := int(float64(8+g.r.IntN(14)) * g.o.Scale)
	typ := g.pick(nouns)
	out = append(out, filler("", fmt.Sprintf("// %s holds the state of one %s.", typ, strings.ToLower(typ)), fmt.Sprintf("type %s struct {", typ),
		"\tmu      sync.RWMutex", "\tentries map[string]*entry", "\tnow     func() time.Time", "\tlimit   int", "}", "")...)
	for i := 0; i < n; i++ {
		v, a, b := g.pick(verbs), strings.ToLower(g.pick(nouns)), strings.ToLower(g.pick(nouns))
		out = append(out, filler(
			fmt.Sprintf("// %s%s %ss the %s of a %s; it is safe for concurrent use.", strings.ToLower(v[:1])+v[1:], g.pick(nouns), strings.ToLower(v), a, b),
			fmt.Sprintf("func (t *%s) %s%s(ctx context.Context, %s string, %s int) (*entry, error) {", typ, strings.ToLower(v[:1])+v[1:], g.pick(nouns), a, b),
			"\tt.mu.RLock()",
			"\tdefer t.mu.RUnlock()",
			fmt.Sprintf("\tif %s < 0 || %s > t.limit {", b, b),
			fmt.Sprintf("\t\treturn nil, fmt.Errorf(\"%s %%q: %s %%d out of range\", %s, %s)", strings.ToLower(v), b, a, b),
			"\t}",
			fmt.Sprintf("\te, ok := t.entries[%s]", a),
			"\tif !ok {",
			fmt.Sprintf("\t\treturn nil, errNo%s", g.pick(nouns)),
			"\t}",
			"\tselect {",
			"\tcase <-ctx.Done():",
			"\t\treturn nil, ctx.Err()",
			"\tdefault:",
			"\t}",
			fmt.Sprintf("\tif e.expires.Before(t.now()) && %s%%%d == 0 {", b, 2+g.r.IntN(7)),
			fmt.Sprintf("\t\te.%s = http.StatusServiceUnavailable", strings.ToLower(g.pick(nouns))),
			"\t}",
			"\treturn e, nil",
			"}",
			"",
		)...)
	}
	return out
}

// Failing outputs.

func (g *gen) failingRun(p *pkg) {
	// The failure names its source file and that file's test by path:
	// neither can be a file the session has written.
	edited := map[string]bool{}
	for _, f := range p.files {
		edited[f.name] = f.edited
	}
	var cands []*file
	for _, f := range p.files {
		if !f.edited && !strings.HasSuffix(f.name, "_test.go") && !edited[strings.TrimSuffix(f.name, ".go")+"_test.go"] {
			cands = append(cands, f)
		}
	}
	src := cands[g.r.IntN(len(cands))]
	src.sited = true
	testFile := strings.TrimSuffix(src.name, ".go") + "_test.go"
	for _, f := range p.files {
		if f.name == testFile {
			f.sited = true
		}
	}
	var out []line
	e := func(s string) { out = append(out, line{text: s, class: ErrorLine}) }
	f := func(s string) { out = append(out, line{text: s}) }
	test := g.testName(ErrorLine)
	switch g.r.IntN(3) {
	case 0: // a panic with its index and stack
		idx := 1 + g.r.IntN(9)
		e("--- FAIL: " + test + " (0.00s)")
		e(fmt.Sprintf("panic: runtime error: index out of range [%d] with length %d [recovered]", idx, idx))
		e(fmt.Sprintf("\tpanic: runtime error: index out of range [%d] with length %d", idx, idx))
		f("")
		f(fmt.Sprintf("goroutine %d [running]:", 7+g.r.IntN(40)))
		f("testing.tRunner.func1.2({0x6f1a40, 0xc0000a2018})")
		f("\t/usr/local/go/src/testing/testing.go:1631 +0x24a")
		f("testing.tRunner.func1()")
		f("\t/usr/local/go/src/testing/testing.go:1634 +0x377")
		f("panic({0x6f1a40?, 0xc0000a2018?})")
		f("\t/usr/local/go/src/runtime/panic.go:785 +0x132")
		e(fmt.Sprintf("github.com/acme/gatewayd/%s.(*%s).%s(...)", p.dir, g.pick(nouns), strings.ToLower(g.pick(verbs))))
		e("\t/home/dev/gatewayd/" + g.site(ErrorLine, src.path) + " +0x2c5")
		e(fmt.Sprintf("github.com/acme/gatewayd/%s.%s(0xc0001036c0)", p.dir, test))
		e("\t/home/dev/gatewayd/" + g.site(ErrorLine, p.dir+"/"+testFile) + " +0x8d")
		f("testing.tRunner(0xc0001036c0, 0x7236e8)")
		f("\t/usr/local/go/src/testing/testing.go:1690 +0xf4")
		f("created by testing.(*T).Run in goroutine 1")
		f("\t/usr/local/go/src/testing/testing.go:1743 +0x390")
		e("exit status 2")
	case 1: // an integration test against a server that prints its address
		addr := g.addr()
		sub := strings.ToLower(g.pick(nouns)) + "_502"
		e("--- FAIL: " + test + " (1.02s)")
		e("    --- FAIL: " + g.label(test+"/"+sub, ErrorLine, "test") + " (0.98s)")
		f(fmt.Sprintf("        server_test.go:%d: gateway listening on %s", 20+g.r.IntN(30), addr))
		e(fmt.Sprintf("        server_test.go:%d: level=error msg=\"upstream call failed\" code=%s upstream=%s request_id=%s attempt=3",
			50+g.r.IntN(30), g.code(ErrorLine), g.url(ErrorLine), g.id(ErrorLine, "req")))
		e(fmt.Sprintf("        %s: POST %s: got 502 Bad Gateway, want 200", g.site(ErrorLine, testFile), g.localURL(ErrorLine, addr)))
		if g.r.IntN(2) == 0 {
			e(fmt.Sprintf("        %s: upstream dial: dial tcp %s: connect: connection refused", g.site(ErrorLine, testFile), g.port(ErrorLine)))
		}
		e("FAIL")
	default: // assertion failures
		e("--- FAIL: " + test + " (0.03s)")
		for i, n := 0, 1+g.r.IntN(3); i < n; i++ {
			switch g.r.IntN(3) {
			case 0:
				e(fmt.Sprintf("    %s: route order = [%s %s], want [%s %s]", g.site(ErrorLine, testFile),
					strings.ToLower(g.pick(nouns)), strings.ToLower(g.pick(nouns)), strings.ToLower(g.pick(nouns)), strings.ToLower(g.pick(nouns))))
			case 1:
				e(fmt.Sprintf("    %s: checksum of %s = %s, want %s", g.site(ErrorLine, testFile),
					g.label(g.uniq(func() string {
						return fmt.Sprintf("%s/testdata/%s_%03d.json", p.dir, strings.ToLower(g.pick(nouns)), g.r.IntN(1000))
					}), ErrorLine, "path"),
					g.hash(ErrorLine, 16), g.hash(ErrorLine, 16)))
			default:
				e(fmt.Sprintf("    %s: err = %s: %s exhausted, want nil", g.site(ErrorLine, testFile), g.code(ErrorLine), strings.ToLower(g.pick(nouns))))
			}
		}
		e("FAIL")
	}
	e(fmt.Sprintf("FAIL\tgithub.com/acme/gatewayd/%s\t%d.%03ds", p.dir, g.r.IntN(2), g.r.IntN(1000)))
	f("FAIL")
	g.shell(g.pick(runReasons), "go test ./"+p.dir+"/", out, true)
}

var runReasons = []string{
	"Running the package's tests to reproduce it.",
	"Let me reproduce the failure first.",
	"Running the tests to see where it breaks now.",
	"Checking whether the change fixed it.",
}

func (g *gen) failingRequest() {
	var out []line
	e := func(s string) { out = append(out, line{text: s, class: ErrorLine}) }
	// The target is the gateway under test (named by the call, so it
	// carries no label); the evidence is what the 502 says.
	target := fmt.Sprintf("http://%s/v1/%s/%s", g.addr(), g.pick(apis), strings.ToLower(g.base62(8)))
	rid := g.id(ErrorLine, "req")
	e("HTTP/1.1 502 Bad Gateway")
	out = append(out, line{text: "content-type: application/json"}, line{text: "date: Tue, 04 Mar 2025 10:14:07 GMT"})
	e("x-request-id: " + rid)
	out = append(out, line{text: ""})
	cause := "upstream returned 503"
	if g.r.IntN(3) == 0 {
		cause = "dial tcp " + g.port(ErrorLine) + ": connect: connection refused (ECONNREFUSED)"
	}
	e(fmt.Sprintf(`{"error":{"code":%q,"message":%q,"upstream":%q,"request_id":%q}}`, g.code(ErrorLine), cause, g.url(ErrorLine), rid))
	g.tool("Calling the running gateway directly.", "http_request", []arg{{"method", "GET"}, {"url", target}}, out, true)
}

// Passing outputs.

func (g *gen) passingVerbose(p *pkg) []line {
	var out []line
	pass := func(s string) { out = append(out, line{text: s, class: PassingOutput}) }
	n := int(float64(120+g.r.IntN(160)) * g.o.Scale)
	labelled := map[int]bool{}
	for len(labelled) < 3 {
		labelled[g.r.IntN(n)] = true
	}
	base := "Test" + strings.ToUpper(p.name[:1]) + p.name[1:] + "Golden"
	for i := 0; i < n; i++ {
		if labelled[i] {
			name := g.testName(PassingOutput)
			pass("=== RUN   " + name)
			pass(fmt.Sprintf("    %s_test.go:%d: admin listening on %s", p.name, 20+g.r.IntN(40), g.port(PassingOutput)))
			pass(fmt.Sprintf("--- PASS: %s (0.%02ds)", name, g.r.IntN(100)))
			continue
		}
		name := fmt.Sprintf("%s/case_%03d", base, i)
		out = append(out, filler("=== RUN   "+name, fmt.Sprintf("--- PASS: %s (0.00s)", name))...)
	}
	out = append(out, filler("PASS", fmt.Sprintf("coverage: %d.%d%% of statements", 60+g.r.IntN(35), g.r.IntN(10)))...)
	pass(fmt.Sprintf("ok  \tgithub.com/acme/gatewayd/%s\t%d.%03ds", p.dir, g.r.IntN(3), g.r.IntN(1000)))
	return out
}

func (g *gen) passingRequest() {
	target := fmt.Sprintf("http://%s/v1/%s/%s", g.addr(), g.pick(apis), strings.ToLower(g.base62(8)))
	out := filler("HTTP/1.1 200 OK", "content-type: application/json", "date: Tue, 04 Mar 2025 10:21:44 GMT")
	rid := g.id(PassingOutput, "req")
	out = append(out, line{text: "x-request-id: " + rid, class: PassingOutput}, line{text: ""})
	var items []string
	for i, n := 0, int(float64(10+g.r.IntN(20))*g.o.Scale); i < n; i++ {
		items = append(items, fmt.Sprintf(`{"name":"%s-%d","weight":%d,"healthy":true}`, strings.ToLower(g.pick(nouns)), i, 1+g.r.IntN(9)))
	}
	out = append(out, line{text: fmt.Sprintf(`{"id":%q,"upstream":%q,"etag":%q,"request_id":%q,"targets":[%s]}`,
		g.id(PassingOutput, "rt"), g.url(PassingOutput), g.hash(PassingOutput, 20), rid, strings.Join(items, ",")), class: PassingOutput})
	g.tool("Checking the endpoint end to end against the local gateway.", "http_request", []arg{{"method", "GET"}, {"url", target}}, out, false)
}

func (g *gen) build() []line {
	return []line{
		{text: g.hash(PassingOutput, 64) + "  dist/gatewayd", class: PassingOutput},
		{text: "dist/gatewayd: go1.23.4"},
		{text: "\tpath\tgithub.com/acme/gatewayd/cmd/gatewayd"},
		{text: "\tmod\tgithub.com/acme/gatewayd\t(devel)\t"},
		{text: "\tbuild\tvcs.revision=" + g.hash(PassingOutput, 40), class: PassingOutput},
		{text: "\tbuild\tvcs.modified=true"},
	}
}

// Changes.

func (g *gen) change(p *pkg) {
	var cands []*file
	for _, f := range p.files {
		if !f.sited && !f.edited {
			cands = append(cands, f)
		}
	}
	if len(cands) == 0 || g.r.IntN(3) == 0 {
		g.write(p)
		return
	}
	f := cands[g.r.IntN(len(cands))]
	f.edited = true
	g.label(f.path, FileWritten, "path")
	old := "\treturn e, nil"
	if f.lines != nil {
		for _, l := range f.lines {
			if l.class == "" && strings.HasPrefix(l.text, "\tif ") {
				old = l.text
				break
			}
		}
	}
	var nw string
	switch g.r.IntN(3) {
	case 0:
		nw = fmt.Sprintf("\tif errors.Is(err, errBudget) {\n\t\treturn nil, fmt.Errorf(\"%s: retry budget exhausted for %%s\", host)\n\t}\n%s", g.code(FileWritten), old)
	case 1:
		nw = fmt.Sprintf("%s\n\t// The budget service answers at %s; a 503 there must not turn into a 502 here.\n\tt.budget = newBudgetClient(%q)", old, g.url(FileWritten), g.url(FileWritten))
	default:
		nw = fmt.Sprintf("%s\n\tt.mu.Lock()\n\tdefer t.mu.Unlock()\n\tt.snapshot = %q // tables built before this revision are stale", old, g.hash(FileWritten, 12))
	}
	g.tool("Fixing it in "+f.name+" so that "+g.pick(fixWhy)+".", "edit_file", []arg{{"path", f.path}, {"old_string", old}, {"new_string", nw}}, []line{{text: "The file " + f.path + " has been updated.", class: FileWritten}}, false)
}

var fixWhy = []string{
	"the lock is held while the table is swapped",
	"the budget error is mapped before the retry loop sees it",
	"the snapshot is taken before the reload starts",
	"the index comes from the new table, not the old one",
}

func (g *gen) write(p *pkg) {
	path := g.label(g.uniq(func() string {
		return fmt.Sprintf("%s/%s_%s.go", p.dir, strings.ToLower(g.pick(nouns)), strings.ToLower(g.pick(verbs)))
	}), FileWritten, "path")
	f := &file{p: p, name: path[strings.LastIndexByte(path, '/')+1:], path: path, edited: true}
	p.files = append(p.files, f)
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\nimport (\n\t\"errors\"\n\t\"time\"\n)\n\n", p.name)
	fmt.Fprintf(&b, "// errBudget is returned when the retry budget of a tenant is spent (%s).\n", g.code(FileWritten))
	fmt.Fprintf(&b, "var errBudget = errors.New(\"retry budget exhausted\")\n\n")
	fmt.Fprintf(&b, "// budgetEndpoint is where the limits come from.\nconst budgetEndpoint = %q\n\n", g.url(FileWritten))
	fmt.Fprintf(&b, "// adminAddr is the listener the budget dashboard reads.\nconst adminAddr = %q\n\n", g.port(FileWritten))
	for i, n := 0, int(float64(4+g.r.IntN(6))*g.o.Scale); i < n; i++ {
		v, a := g.pick(verbs), g.pick(nouns)
		fmt.Fprintf(&b, "// %s%s %ss the %s budget.\nfunc (b *budget) %s%s(now time.Time) bool {\n\tb.mu.Lock()\n\tdefer b.mu.Unlock()\n\tif now.Sub(b.last) > b.window {\n\t\tb.spent = 0\n\t\tb.last = now\n\t}\n\tif b.spent >= b.limit {\n\t\treturn false\n\t}\n\tb.spent++\n\treturn true\n}\n\n",
			strings.ToLower(v[:1])+v[1:], a, strings.ToLower(v), strings.ToLower(a), strings.ToLower(v[:1])+v[1:], a)
	}
	g.tool("Adding the budget in a file of its own.", "write_file", []arg{{"path", path}, {"content", b.String()}}, []line{{text: fmt.Sprintf("Wrote %d bytes to %s.", b.Len(), path), class: FileWritten}}, false)
}

// Talk.

var approvals = []string{
	"Go ahead.",
	"OK, do it, but keep the change small.",
	"Makes sense. Go ahead and add a test for it.",
	"Fine. Don't refactor the surrounding code in the same change.",
}

func (g *gen) plan(p *pkg) string {
	return fmt.Sprintf("I see the cause: in the %s package %s. I'll change it so that %s, then rerun the tests. Shall I go ahead?",
		p.name, g.pick([]string{"the table is swapped without the lock", "a 503 from the budget service is treated as fatal", "the index is taken from the old route table", "the snapshot is taken after the reload started"}),
		g.pick(fixWhy))
}

func (g *gen) followUp() string {
	switch g.r.IntN(3) {
	case 0:
		return "Also: support says the 502 shows on " + g.url(UserTurn) + " too, request id " + g.id(UserTurn, "req") + ". Check it is the same cause."
	case 1:
		return "One more thing: keep the error code " + g.code(UserTurn) + " for the budget case, the SDKs match on it. And don't add dependencies."
	default:
		return "Before you go on: the staging listener is " + g.port(UserTurn) + ", make sure the tests don't bind it."
	}
}

func (g *gen) summary(p *pkg) string {
	return fmt.Sprintf("Done. The %s tests pass now. The failure came from %s; I changed the code so that %s, "+
		"and kept the constraints you gave. The verbose run and the end-to-end check are clean.",
		p.name, g.pick([]string{"a table swapped without the lock", "a retry loop that treated a 503 from the budget service as fatal", "an index taken from the old route table", "a snapshot taken after the reload started"}),
		g.pick(fixWhy))
}
