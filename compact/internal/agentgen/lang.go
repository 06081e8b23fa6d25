package agentgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// language is how a project in one language names things, runs its tests
// and builds, and what its tools print.
type language struct {
	name     string
	src      func(p *project, dir, noun string) string
	test     func(p *project, dir, noun string) string
	fn       func(verb, noun string) string
	typ      func(noun string) string
	testName func(verb, noun, what string) string
	// testCmd runs one test; testAll every test; build compiles or
	// type-checks.
	testCmd func(p *project, t target) string
	testAll string
	build   string
	// router is the file that registers HTTP routes.
	router func(p *project) string
	libs   []library
}

// library is a dependency a task upgrades, and what breaks.
type library struct {
	name, from, to, changelog string
	// broken is the compile or test error after the upgrade (%s: a file).
	broken string
}

func pickLang(r *rand.Rand, name string) *language {
	switch name {
	case "go":
		return &goLang
	case "python":
		return &pyLang
	case "typescript", "ts":
		return &tsLang
	}
	return []*language{&goLang, &pyLang, &tsLang}[r.IntN(3)]
}

func camel(verb, noun string) string { return verb + capitalize(noun) }
func snake(verb, noun string) string { return verb + "_" + noun }

var goLang = language{
	name: "go",
	src:  func(_ *project, dir, noun string) string { return "internal/" + dir + "/" + noun + ".go" },
	test: func(_ *project, dir, noun string) string { return "internal/" + dir + "/" + noun + "_test.go" },
	fn:   camel,
	typ:  func(noun string) string { return capitalize(noun) + "Service" },
	testName: func(verb, noun, _ string) string {
		return "Test" + capitalize(verb) + capitalize(noun)
	},
	testCmd: func(_ *project, t target) string {
		return "go test ./internal/" + t.dom.dir + "/ -run " + t.testName + " -count=1"
	},
	testAll: "go test ./...",
	build:   "go build ./...",
	router:  func(*project) string { return "internal/http/routes.go" },
	libs: []library{
		{"github.com/redis/go-redis/v9", "v9.0.5", "v9.5.1", "https://github.com/redis/go-redis/releases/tag/v9.5.1",
			"cannot use opts (variable of type *redis.Options) as *redis.UniversalOptions value in argument to redis.NewUniversalClient"},
		{"github.com/jackc/pgx/v5", "v5.4.3", "v5.6.0", "https://github.com/jackc/pgx/blob/master/CHANGELOG.md",
			"not enough arguments in call to pgxpool.NewWithConfig"},
		{"go.uber.org/zap", "v1.24.0", "v1.27.0", "https://github.com/uber-go/zap/releases/tag/v1.27.0",
			"undefined: zap.NewProductionEncoderConfigV2"},
	},
}

var pyLang = language{
	name: "python",
	src: func(p *project, dir, noun string) string {
		return pyPkg(p) + "/" + dir + "/" + noun + ".py"
	},
	test: func(_ *project, dir, noun string) string { return "tests/" + dir + "/test_" + noun + ".py" },
	fn:   snake,
	typ:  func(noun string) string { return capitalize(noun) + "Service" },
	testName: func(verb, noun, what string) string {
		return "test_" + verb + "_" + noun + "_" + strings.ReplaceAll(what, " ", "_")
	},
	testCmd: func(_ *project, t target) string {
		return "pytest " + t.test + "::" + t.testName + " -x -q"
	},
	testAll: "pytest -q",
	build:   "mypy --strict .",
	router:  func(p *project) string { return pyPkg(p) + "/api/routes.py" },
	libs: []library{
		{"pydantic", "1.10.13", "2.6.4", "https://docs.pydantic.dev/latest/migration/",
			"AttributeError: 'OrderModel' object has no attribute 'dict'"},
		{"sqlalchemy", "1.4.52", "2.0.29", "https://docs.sqlalchemy.org/en/20/changelog/migration_20.html",
			"sqlalchemy.exc.ArgumentError: Textual SQL expression 'SELECT 1' should be explicitly declared as text('SELECT 1')"},
		{"httpx", "0.23.3", "0.27.0", "https://github.com/encode/httpx/blob/master/CHANGELOG.md",
			"TypeError: AsyncClient.__init__() got an unexpected keyword argument 'app'"},
	},
}

var tsLang = language{
	name:     "typescript",
	src:      func(_ *project, dir, noun string) string { return "src/" + dir + "/" + noun + ".ts" },
	test:     func(_ *project, dir, noun string) string { return "src/" + dir + "/" + noun + ".test.ts" },
	fn:       camel,
	typ:      func(noun string) string { return capitalize(noun) + "Service" },
	testName: func(verb, noun, what string) string { return what },
	testCmd: func(_ *project, t target) string {
		return "npx vitest run " + t.test + " -t \"" + t.testName + "\""
	},
	testAll: "npm test",
	build:   "npm run build",
	router:  func(*project) string { return "src/http/routes.ts" },
	libs: []library{
		{"axios", "0.27.2", "1.6.8", "https://github.com/axios/axios/blob/v1.x/CHANGELOG.md",
			"error TS2305: Module '\"axios\"' has no exported member 'AxiosRequestHeaders'."},
		{"zod", "3.21.4", "3.23.8", "https://github.com/colinhacks/zod/releases/tag/v3.23.8",
			"error TS2339: Property 'nonempty' does not exist on type 'ZodString'."},
		{"express", "4.18.2", "5.0.1", "https://expressjs.com/en/guide/migrating-5.html",
			"error TS2345: Argument of type 'string' is not assignable to parameter of type 'PathParams'."},
	},
}

func pyPkg(p *project) string { return strings.ReplaceAll(p.name, "-", "_") }

// Outputs.

// testFail prints a failing run of t's test: got instead of want. It
// returns the output and the error message a continuing agent needs.
func (g *gen) testFail(t target, got, want int) (string, string) {
	switch g.lang.name {
	case "go":
		line := 20 + g.r.IntN(80)
		base := t.test[strings.LastIndexByte(t.test, '/')+1:]
		msg := fmt.Sprintf("%s:%d: %s(%d) = %d, want %d", base, line, t.fn, want*7, got, want)
		return fmt.Sprintf("=== RUN   %s\n    %s\n--- FAIL: %s (0.00s)\nFAIL\nFAIL\t%s/internal/%s\t0.%03ds\nFAIL\n",
			t.testName, msg, t.testName, g.project.module, t.dom.dir, 100+g.r.IntN(800)), msg
	case "python":
		line := 20 + g.r.IntN(80)
		msg := fmt.Sprintf("assert %d == %d", got, want)
		return fmt.Sprintf(`F                                                                        [100%%]
=================================== FAILURES ===================================
%s
    def %s():
        svc = %s(store=FakeStore())
>       assert svc.%s(%d) == %d
E       %s
E        +  where %d = <bound method %s.%s of <%s.%s.%s object at 0x7f3a2c1e9d50>>(%d)

%s:%d: AssertionError
=========================== short test summary info ============================
FAILED %s::%s - %s
1 failed in 0.%02ds
`, banner(t.testName), t.testName, t.typ, t.fn, want*7, want, msg, got, t.typ, t.fn, pyPkg(&g.project), t.dom.dir, t.typ,
			want*7, t.test, line, t.test, t.testName, msg, 10+g.r.IntN(89)), msg
	default:
		line := 10 + g.r.IntN(80)
		msg := fmt.Sprintf("AssertionError: expected %d to be %d // Object.is equality", got, want)
		return fmt.Sprintf(` ❯ %s (3 tests | 1 failed) %dms
   × %s > %s %dms
     → expected %d to be %d // Object.is equality

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  %s > %s > %s
%s

- Expected
+ Received

- %d
+ %d

 ❯ %s:%d:%d
    %d|   it('%s', () => {
    %d|     expect(%s(%d)).toBe(%d)
       |                    ^

 Test Files  1 failed (1)
      Tests  1 failed | 2 passed (3)
   Duration  %dms
`, t.test, 4+g.r.IntN(20), t.fn, t.testName, 2+g.r.IntN(9), got, want, t.test, t.fn, t.testName, msg, want, got,
			t.test, line, 20+g.r.IntN(20), line-1, t.testName, line, t.fn, want*7, want, 300+g.r.IntN(900)), msg
	}
}

func banner(name string) string {
	pad := (78 - len(name) - 2) / 2
	if pad < 3 {
		pad = 3
	}
	return strings.Repeat("_", pad) + " " + name + " " + strings.Repeat("_", pad)
}

// testPass prints a passing run: of one test (t), or of everything.
func (g *gen) testPass(t target, all bool) string {
	switch g.lang.name {
	case "go":
		if !all {
			return fmt.Sprintf("ok  \t%s/internal/%s\t0.%03ds\n", g.project.module, t.dom.dir, 100+g.r.IntN(800))
		}
		var b strings.Builder
		fmt.Fprintf(&b, "?   \t%s/cmd/server\t[no test files]\n", g.project.module)
		for _, d := range g.project.domains {
			fmt.Fprintf(&b, "ok  \t%s/internal/%s\t0.%03ds\n", g.project.module, d.dir, 100+g.r.IntN(800))
		}
		fmt.Fprintf(&b, "ok  \t%s/internal/http\t1.%03ds\n", g.project.module, g.r.IntN(999))
		return b.String()
	case "python":
		n := 1
		if all {
			n = 40 + g.r.IntN(200)
		}
		return strings.Repeat(".", min(n, 72)) + strings.Repeat(" ", max(0, 73-min(n, 72))) + "[100%]\n" +
			fmt.Sprintf("%d passed in %d.%02ds\n", n, g.r.IntN(5), g.r.IntN(100))
	default:
		var b strings.Builder
		files := []string{t.test}
		if all {
			files = nil
			for _, d := range g.project.domains {
				files = append(files, "src/"+d.dir+"/"+d.nouns[0]+".test.ts")
			}
		}
		total := 0
		for _, f := range files {
			n := 2 + g.r.IntN(9)
			total += n
			fmt.Fprintf(&b, " ✓ %s (%d tests) %dms\n", f, n, 3+g.r.IntN(40))
		}
		fmt.Fprintf(&b, "\n Test Files  %d passed (%d)\n      Tests  %d passed (%d)\n   Start at  %02d:%02d:%02d\n   Duration  %d.%02ds (transform %dms, setup 0ms, collect %dms, tests %dms)\n",
			len(files), len(files), total, total, 9+g.r.IntN(9), g.r.IntN(60), g.r.IntN(60), 1+g.r.IntN(3), g.r.IntN(100),
			100+g.r.IntN(300), 200+g.r.IntN(400), 10+g.r.IntN(90))
		return b.String()
	}
}

// buildOK prints a successful build.
func (g *gen) buildOK() string {
	switch g.lang.name {
	case "go":
		return ""
	case "python":
		return fmt.Sprintf("Success: no issues found in %d source files\n", 30+g.r.IntN(120))
	default:
		return fmt.Sprintf(`
> %s@%d.%d.%d build
> tsc -p tsconfig.json && vite build

vite v5.4.%d building for production...
transforming...
✓ %d modules transformed.
rendering chunks...
computing gzip size...
dist/index.html                   0.46 kB │ gzip:  0.30 kB
dist/assets/index-%s.css   12.%02d kB │ gzip:  3.02 kB
dist/assets/index-%s.js   %d.%02d kB │ gzip: 61.87 kB
✓ built in %d.%02ds
`, g.project.name, 1+g.r.IntN(3), g.r.IntN(10), g.r.IntN(10), g.r.IntN(12), 300+g.r.IntN(500), g.hex(8), g.r.IntN(100),
			g.hex(8), 120+g.r.IntN(200), g.r.IntN(100), 2+g.r.IntN(5), g.r.IntN(100))
	}
}

// compileErr prints a failed build at file:line:col, where the code
// calls wrong (a misspelling of right). It returns the output and the
// message.
func (g *gen) compileErr(file string, line, col int, wrong string) (string, string) {
	switch g.lang.name {
	case "go":
		msg := "undefined: " + wrong
		pkg := file[:strings.LastIndexByte(file, '/')]
		return fmt.Sprintf("# %s/%s\n%s:%d:%d: %s\n", g.project.module, pkg, file, line, col, msg), msg
	case "python":
		msg := fmt.Sprintf("Name %q is not defined  [name-defined]", wrong)
		return fmt.Sprintf("%s:%d: error: %s\nFound 1 error in 1 file (checked %d source files)\n", file, line, msg, 30+g.r.IntN(120)), msg
	default:
		msg := fmt.Sprintf("error TS2304: Cannot find name '%s'.", wrong)
		return fmt.Sprintf("\n> %s@1.4.0 build\n> tsc -p tsconfig.json && vite build\n\n%s(%d,%d): %s\n\nFound 1 error in %s:%d\n\n",
			g.project.name, file, line, col, msg, file, line), msg
	}
}

// upgradeErr prints the build or test failure an upgrade causes.
func (g *gen) upgradeErr(lib library, file string) (string, string) {
	line, col := 20+g.r.IntN(60), 5+g.r.IntN(30)
	switch g.lang.name {
	case "go":
		pkg := file[:strings.LastIndexByte(file, '/')]
		return fmt.Sprintf("# %s/%s\n%s:%d:%d: %s\n", g.project.module, pkg, file, line, col, lib.broken), lib.broken
	case "python":
		fn := "test_" + strings.TrimSuffix(file[strings.LastIndexByte(file, '/')+1:], ".py") + "_roundtrip"
		return fmt.Sprintf(`..F.
=================================== FAILURES ===================================
%s

    def %s():
>       payload = build_payload(sample())

tests/test_models.py:%d:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

%s:%d: in build_payload
    return model.dict(exclude_none=True)
E   %s
=========================== short test summary info ============================
FAILED tests/test_models.py::%s - %s
1 failed, 3 passed in 0.%02ds
`, banner(fn), fn, line, file, line+7, lib.broken, fn, lib.broken, 10+g.r.IntN(89)), lib.broken
	default:
		return fmt.Sprintf("\n> %s@1.4.0 build\n> tsc -p tsconfig.json && vite build\n\n%s(%d,%d): %s\n\nFound 1 error in %s:%d\n\n",
			g.project.name, file, line, col, lib.broken, file, line), lib.broken
	}
}

// crash prints a production crash in t's code: a nil client in method
// m of t.typ. It returns the output and the error message.
func (g *gen) crash(t target, m string) (string, string) {
	switch g.lang.name {
	case "go":
		msg := "panic: runtime error: invalid memory address or nil pointer dereference"
		return fmt.Sprintf(`%s
[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x%s]

goroutine %d [running]:
%s/internal/%s.(*%s).%s(0x0, {0x%s, 0xc000%s})
	/home/runner/work/%s/%s/%s:%d +0x2a
%s/internal/http.(*Server).handle%s(0xc0001c4000, {0xa41e80, 0xc0002a8000}, 0xc000314000)
	/home/runner/work/%s/%s/internal/http/handlers.go:%d +0x1c5
net/http.HandlerFunc.ServeHTTP(0xc000132a80, {0xa41e80, 0xc0002a8000}, 0xc000314000)
	/usr/local/go/src/net/http/server.go:2171 +0x29
net/http.serverHandler.ServeHTTP({0xc0001ae1e0}, {0xa41e80, 0xc0002a8000}, 0xc000314000)
	/usr/local/go/src/net/http/server.go:3142 +0x8e
net/http.(*conn).serve(0xc0001b6000, {0xa42638, 0xc0001a0ea0})
	/usr/local/go/src/net/http/server.go:2044 +0x5e8
created by net/http.(*Server).Serve in goroutine 1
	/usr/local/go/src/net/http/server.go:3290 +0x4b4
exit status 2
`, msg, g.hex(6), 20+g.r.IntN(400), g.project.module, t.dom.dir, t.typ, m, g.hex(6), g.hex(6), g.project.name, g.project.name,
			t.src, 40+g.r.IntN(160), g.project.module, capitalize(t.noun), g.project.name, g.project.name, 60+g.r.IntN(200)), msg
	case "python":
		msg := "AttributeError: 'NoneType' object has no attribute 'post'"
		return fmt.Sprintf(`Traceback (most recent call last):
  File "/usr/local/lib/python3.12/site-packages/starlette/routing.py", line 74, in app
    response = await func(request)
  File "/usr/local/lib/python3.12/site-packages/fastapi/routing.py", line 299, in app
    raise e
  File "/app/%s/api/routes.py", line %d, in %s_endpoint
    return await svc.%s(payload)
  File "/app/%s", line %d, in %s
    resp = await self.client.post(self.url, json=body, timeout=self.timeout)
%s
`, pyPkg(&g.project), 40+g.r.IntN(100), t.noun, m, t.src, 40+g.r.IntN(160), m, msg), msg
	default:
		msg := "TypeError: Cannot read properties of undefined (reading 'post')"
		return fmt.Sprintf(`%s
    at %s.%s (/app/dist/%s:%d:31)
    at async handle%s (/app/dist/src/http/routes.js:%d:5)
    at async /app/node_modules/express/lib/router/layer.js:95:5
    at async next (/app/node_modules/express/lib/router/route.js:149:13)
`, msg, t.typ, m, strings.TrimSuffix(t.src, ".ts")+".js", 40+g.r.IntN(160), capitalize(t.noun), 60+g.r.IntN(200)), msg
	}
}

// source writes a file of the target's package: its function fn (with
// body), others, and the usual furniture.
func (g *gen) source(t target, body string, others []string) string {
	var b strings.Builder
	switch g.lang.name {
	case "go":
		fmt.Fprintf(&b, "package %s\n\nimport (\n\t\"context\"\n\t\"errors\"\n\t\"fmt\"\n\t\"log/slog\"\n\t\"time\"\n)\n\n", t.dom.dir)
		fmt.Fprintf(&b, "// Err%sNotFound is returned when no %s matches.\nvar Err%sNotFound = errors.New(\"%s: %s not found\")\n\n",
			capitalize(t.noun), t.noun, capitalize(t.noun), t.dom.dir, t.noun)
		fmt.Fprintf(&b, "// %s serves %ss.\ntype %s struct {\n\tstore   Store\n\tlogger  *slog.Logger\n\ttimeout time.Duration\n}\n\n", t.typ, t.noun, t.typ)
		if len(others) == 0 {
			others = []string{""} // the function alone
		}
		for i, o := range others {
			if i == len(others)/2 {
				fmt.Fprintf(&b, "// %s is the %s of an amount in cents.\nfunc %s(amount int64, pct int) int64 {\n%s\n}\n\n", t.fn, t.noun, t.fn, body)
			}
			if o == "" {
				continue
			}
			switch g.r.IntN(3) {
			case 0:
				fmt.Fprintf(&b, "// %s loads the %s with the given id and checks its version.\nfunc (s *%s) %s(ctx context.Context, id string) error {\n\tctx, cancel := context.WithTimeout(ctx, s.timeout)\n\tdefer cancel()\n\tv, err := s.store.Get(ctx, id)\n\tif errors.Is(err, ErrNotFound) {\n\t\treturn Err%sNotFound\n\t}\n\tif err != nil {\n\t\treturn fmt.Errorf(\"%s %%s: %%w\", id, err)\n\t}\n\tif v.Version < minVersion {\n\t\treturn fmt.Errorf(\"%s %%s: version %%d is too old\", id, v.Version)\n\t}\n\ts.logger.Debug(\"%s\", \"id\", id, \"version\", v.Version)\n\treturn nil\n}\n\n",
					capitalize(o), t.noun, t.typ, capitalize(o), capitalize(t.noun), strings.ReplaceAll(o, "_", " "), t.noun, o)
			case 1:
				fmt.Fprintf(&b, "func %s(items []%s, limit int) []%s {\n\tout := make([]%s, 0, min(len(items), limit))\n\tfor _, it := range items {\n\t\tif it.Deleted || it.Amount <= 0 {\n\t\t\tcontinue\n\t\t}\n\t\tout = append(out, it)\n\t\tif len(out) == limit {\n\t\t\tbreak\n\t\t}\n\t}\n\treturn out\n}\n\n",
					o, capitalize(t.noun), capitalize(t.noun), capitalize(t.noun))
			default:
				fmt.Fprintf(&b, "func (s *%s) %s(ctx context.Context, batch []string) (int, error) {\n\tn := 0\n\tfor _, id := range batch {\n\t\tselect {\n\t\tcase <-ctx.Done():\n\t\t\treturn n, ctx.Err()\n\t\tdefault:\n\t\t}\n\t\tif err := s.store.Touch(ctx, id, time.Now()); err != nil {\n\t\t\ts.logger.Warn(\"%s failed\", \"id\", id, \"err\", err)\n\t\t\tcontinue\n\t\t}\n\t\tn++\n\t}\n\treturn n, nil\n}\n\n",
					t.typ, capitalize(o), o)
			}
		}
	case "python":
		fmt.Fprintf(&b, "from __future__ import annotations\n\nimport logging\nfrom dataclasses import dataclass\nfrom decimal import Decimal\n\nlog = logging.getLogger(__name__)\n\n\n")
		fmt.Fprintf(&b, "class %sNotFound(LookupError):\n    \"\"\"No %s matches.\"\"\"\n\n\n@dataclass\nclass %s:\n    store: Store\n    timeout: float = 5.0\n\n", capitalize(t.noun), t.noun, t.typ)
		if len(others) == 0 {
			others = []string{""}
		}
		for i, o := range others {
			if i == len(others)/2 {
				fmt.Fprintf(&b, "    def %s(self, amount: int, pct: int = 15) -> int:\n        \"\"\"The %s of an amount in cents.\"\"\"\n%s\n\n", t.fn, t.noun, body)
			}
			if o == "" {
				continue
			}
			switch g.r.IntN(3) {
			case 0:
				fmt.Fprintf(&b, "    def %s(self, item_id: str) -> None:\n        \"\"\"Load the %s and check its version.\"\"\"\n        row = self.store.get(item_id, timeout=self.timeout)\n        if row is None:\n            raise %sNotFound(item_id)\n        if row.version < MIN_VERSION:\n            raise ValueError(f\"{item_id}: version {row.version} is too old\")\n        log.debug(\"%s %%s version=%%s\", item_id, row.version)\n\n", o, t.noun, capitalize(t.noun), o)
			case 1:
				fmt.Fprintf(&b, "    def %s(self, items: list[dict], limit: int = 50) -> list[dict]:\n        out = []\n        for item in items:\n            if item.get(\"deleted\") or item.get(\"amount\", 0) <= 0:\n                continue\n            out.append(item)\n            if len(out) == limit:\n                break\n        return out\n\n", o)
			default:
				fmt.Fprintf(&b, "    async def %s(self, batch: list[str]) -> int:\n        n = 0\n        for item_id in batch:\n            try:\n                await self.store.touch(item_id)\n            except StoreError as exc:\n                log.warning(\"%s failed for %%s: %%s\", item_id, exc)\n                continue\n            n += 1\n        return n\n\n", o, o)
			}
		}
	default:
		fmt.Fprintf(&b, "import { z } from 'zod';\nimport type { Store } from '../store';\nimport { logger } from '../log';\n\n")
		fmt.Fprintf(&b, "export class %sNotFoundError extends Error {}\n\nexport class %s {\n  constructor(private readonly store: Store, private readonly timeoutMs = 5000) {}\n\n", capitalize(t.noun), t.typ)
		for _, o := range others {
			switch g.r.IntN(3) {
			case 0:
				fmt.Fprintf(&b, "  /** Loads the %s and checks its version. */\n  async %s(id: string): Promise<void> {\n    const row = await this.store.get(id, { timeoutMs: this.timeoutMs });\n    if (!row) throw new %sNotFoundError(id);\n    if (row.version < MIN_VERSION) {\n      throw new Error(`${id}: version ${row.version} is too old`);\n    }\n    logger.debug({ id, version: row.version }, '%s');\n  }\n\n", t.noun, o, capitalize(t.noun), o)
			case 1:
				fmt.Fprintf(&b, "  %s(items: Item[], limit = 50): Item[] {\n    const out: Item[] = [];\n    for (const item of items) {\n      if (item.deleted || item.amount <= 0) continue;\n      out.push(item);\n      if (out.length === limit) break;\n    }\n    return out;\n  }\n\n", o)
			default:
				fmt.Fprintf(&b, "  async %s(batch: string[]): Promise<number> {\n    let n = 0;\n    for (const id of batch) {\n      try {\n        await this.store.touch(id);\n        n++;\n      } catch (err) {\n        logger.warn({ id, err }, '%s failed');\n      }\n    }\n    return n;\n  }\n\n", o, o)
			}
		}
		fmt.Fprintf(&b, "}\n\n/** The %s of an amount in cents. */\nexport function %s(amount: number, pct = 15): number {\n%s\n}\n", t.noun, t.fn, body)
	}
	return b.String()
}

// buggy and fixed are the two versions of the target function's body.
func (g *gen) buggy() (string, string) {
	switch g.lang.name {
	case "go":
		return "\treturn amount * int64(100-pct) / 100", "\treturn (amount*int64(100-pct) + 50) / 100"
	case "python":
		return "        return amount * (100 - pct) // 100", "        return (amount * (100 - pct) + 50) // 100"
	default:
		return "  return Math.floor((amount * (100 - pct)) / 100);", "  return Math.round((amount * (100 - pct)) / 100);"
	}
}
