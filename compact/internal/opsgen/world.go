package opsgen

import (
	"fmt"
	"strings"
)

// The repository the agent works in: a monorepo of four components and
// their deployment files.

const repoRoot = "/home/dev/ledgerline"

type component struct {
	name string
	lang string // go, py, ts, rs
	dir  string // under the repository root
	mod  string // Go module path, Python package, npm package or crate
	pkgs []pkg
}

type pkg struct {
	dir   string // under the component
	files []string
	tests []string
	mod   string // Go import path suffix, Python module, Rust module
}

var components = []component{
	{name: "ingestd", lang: "go", dir: "services/ingestd", mod: "github.com/ledgerline/ingestd", pkgs: []pkg{
		{dir: "internal/batch", files: []string{"batcher.go", "flush.go", "window.go", "pool.go"}, tests: []string{"batcher_test.go", "flush_test.go"}, mod: "internal/batch"},
		{dir: "internal/api", files: []string{"handler.go", "routes.go", "middleware.go", "errors.go"}, tests: []string{"handler_test.go"}, mod: "internal/api"},
		{dir: "internal/store", files: []string{"pg.go", "migrate.go", "entries.go", "tx.go"}, tests: []string{"pg_test.go", "entries_test.go"}, mod: "internal/store"},
		{dir: "internal/dlq", files: []string{"sink.go", "replay.go"}, tests: []string{"sink_test.go"}, mod: "internal/dlq"},
	}},
	{name: "etl", lang: "py", dir: "pipelines/etl", mod: "etl", pkgs: []pkg{
		{dir: "etl/loaders", files: []string{"parquet_loader.py", "csv_loader.py", "base.py"}, tests: []string{"tests/test_loaders.py"}, mod: "etl.loaders"},
		{dir: "etl/transform", files: []string{"currency.py", "dedupe.py", "windows.py"}, tests: []string{"tests/test_transform.py"}, mod: "etl.transform"},
		{dir: "etl/sinks", files: []string{"warehouse.py", "s3_sink.py"}, tests: []string{"tests/test_sinks.py"}, mod: "etl.sinks"},
	}},
	{name: "console", lang: "ts", dir: "web/console", mod: "@ledgerline/console", pkgs: []pkg{
		{dir: "src/api", files: []string{"client.ts", "retry.ts", "types.ts"}, tests: []string{"src/api/retry.test.ts", "src/api/client.test.ts"}, mod: "api"},
		{dir: "src/components", files: []string{"BatchTable.tsx", "TenantPicker.tsx", "DlqPanel.tsx"}, tests: []string{"src/components/BatchTable.test.tsx"}, mod: "components"},
		{dir: "src/hooks", files: []string{"useBatches.ts", "usePolling.ts"}, tests: []string{"src/hooks/useBatches.test.ts"}, mod: "hooks"},
	}},
	{name: "normalizer", lang: "rs", dir: "crates/normalizer", mod: "normalizer", pkgs: []pkg{
		{dir: "src", files: []string{"currency.rs", "schema.rs", "dedupe.rs", "lib.rs"}, mod: "currency"},
		{dir: "src/io", files: []string{"reader.rs", "writer.rs"}, mod: "io::reader"},
	}},
}

// path returns a file of a package relative to the repository root.
func (c component) path(p pkg, file string) string {
	if c.lang == "py" && strings.HasPrefix(file, "tests/") || c.lang == "ts" && strings.HasPrefix(file, "src/") {
		return c.dir + "/" + file
	}
	return c.dir + "/" + p.dir + "/" + file
}

// rel returns a file of a package relative to the component.
func (c component) rel(p pkg, file string) string {
	if c.lang == "py" && strings.HasPrefix(file, "tests/") || c.lang == "ts" && strings.HasPrefix(file, "src/") {
		return file
	}
	return p.dir + "/" + file
}

var deployFiles = []string{"deploy/compose.yaml", "deploy/k8s/ingestd.yaml", "deploy/k8s/etl-cronjob.yaml", "deploy/terraform/main.tf", "Makefile", "scripts/backfill.sh"}

// Source code for reads: plausible files of each language, built from
// statements, with no identifier the generator plants.

var goStmts = []string{
	"if err != nil {\n\t\treturn fmt.Errorf(\"%s: %%w\", err)\n\t}",
	"for _, e := range %s {\n\t\tif e.Tenant != tenant {\n\t\t\tcontinue\n\t\t}\n\t\tout = append(out, e)\n\t}",
	"ctx, cancel := context.WithTimeout(ctx, b.cfg.%sTimeout)\n\tdefer cancel()",
	"b.mu.Lock()\n\tdefer b.mu.Unlock()",
	"if len(b.pending) >= b.cfg.Max%s {\n\t\tb.flushLocked(ctx)\n\t}",
	"rows, err := tx.Query(ctx, query%s, tenant, since)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\tdefer rows.Close()",
	"b.metrics.%s.Add(float64(len(out)))",
	"select {\n\tcase <-ctx.Done():\n\t\treturn ctx.Err()\n\tcase b.%sCh <- batch:\n\t}",
	"sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })",
	"slog.DebugContext(ctx, \"%s\", \"tenant\", tenant, \"n\", len(out))",
}

var pyStmts = []string{
	"if frame.empty:\n        return %s",
	"for row in rows:\n        if row.get(\"tenant_id\") is None:\n            continue\n        out.append(self._%s(row))",
	"with self._conn.cursor() as cur:\n        cur.execute(SQL_%s, (tenant, since))\n        rows = cur.fetchall()",
	"log.debug(\"%s\", extra={\"tenant\": tenant, \"rows\": len(rows)})",
	"amount = Decimal(row[\"amount\"]).quantize(Decimal(\"0.01\"), rounding=ROUND_HALF_EVEN)",
	"key = (row[\"tenant_id\"], row[\"entry_id\"])\n    if key in seen:\n        continue\n    seen.add(key)",
	"table = pq.read_table(path, columns=self.columns)\n    frame = table.to_pandas()",
	"return [%s(r) for r in rows if r]",
}

var tsStmts = []string{
	"const res = await fetch(`${base}/%s`, { signal, headers });\n  if (!res.ok) {\n    throw new HttpError(res.status, await res.text());\n  }",
	"for (const b of batches) {\n    if (b.tenantId !== tenantId) continue;\n    out.push(to%s(b));\n  }",
	"const delay = Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** attempt);\n  await sleep(delay);",
	"setState((s) => ({ ...s, %s: next }));",
	"if (attempt >= opts.retries) {\n    return Promise.reject(lastError);\n  }",
	"const rows = useMemo(() => batches.map(%sRow), [batches]);",
	"useEffect(() => {\n    const id = setInterval(refresh, intervalMs);\n    return () => clearInterval(id);\n  }, [%s]);",
}

var rsStmts = []string{
	"let cents = amount.checked_mul(100).ok_or(Error::Overflow)?;",
	"for entry in entries.iter().filter(|e| e.tenant == tenant) {\n        out.push(%s(entry)?);\n    }",
	"match schema.field(name) {\n        Some(f) => f.%s(),\n        None => return Err(Error::MissingField(name.to_owned())),\n    }",
	"let mut seen = HashSet::with_capacity(rows.len());\n    rows.retain(|r| seen.insert((r.tenant, r.%s)));",
	"writer.write_all(&buf[..n]).map_err(Error::Io)?;",
	"debug!(tenant = %%tenant, rows = out.len(), \"%s\");",
}

// source returns n lines of plausible source for path in lang.
func (g *gen) source(lang, path string, n int) string {
	var b strings.Builder
	name := path[strings.LastIndexByte(path, '/')+1:]
	stem := strings.TrimSuffix(name, name[strings.LastIndexByte(name, '.'):])
	switch lang {
	case "go":
		fmt.Fprintf(&b, "package %s\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"log/slog\"\n\t\"sort\"\n\t\"sync\"\n)\n\n", lastDir(path))
	case "py":
		fmt.Fprintf(&b, "\"\"\"%s: %s handling for the ETL pipeline.\"\"\"\nfrom __future__ import annotations\n\nimport logging\nfrom decimal import ROUND_HALF_EVEN, Decimal\n\nlog = logging.getLogger(__name__)\n\n", stem, g.pick(words))
	case "ts":
		fmt.Fprintf(&b, "import { useEffect, useMemo, useState } from \"react\";\nimport { HttpError, sleep } from \"./%s\";\n\n", g.pick(words))
	case "rs":
		b.WriteString("use std::collections::HashSet;\n\nuse crate::error::Error;\nuse tracing::debug;\n\n")
	}
	stmts := map[string][]string{"go": goStmts, "py": pyStmts, "ts": tsStmts, "rs": rsStmts}[lang]
	for strings.Count(b.String(), "\n") < n {
		fn := g.pick(words) + title(g.pick(words))
		switch lang {
		case "go":
			fmt.Fprintf(&b, "// %s %s the pending %s of one tenant.\nfunc (b *Batcher) %s(ctx context.Context, tenant string) error {\n", fn, strings.ToLower(g.pick(verbs)), g.pick(words), fn)
		case "py":
			fmt.Fprintf(&b, "def %s_%s(self, tenant, since=None):\n    \"\"\"%s the %s rows of a tenant.\"\"\"\n", g.pick(words), g.pick(words), g.pick(verbs), g.pick(words))
		case "ts":
			fmt.Fprintf(&b, "export async function %s(tenantId: string, opts: Options): Promise<%s[]> {\n", fn, title(g.pick(words)))
		case "rs":
			fmt.Fprintf(&b, "/// %s the %s of one tenant.\npub fn %s_%s(tenant: TenantId, rows: &mut Vec<Row>) -> Result<(), Error> {\n", g.pick(verbs), g.pick(words), g.pick(words), g.pick(words))
		}
		for range g.between(2, 5) {
			s := g.pick(stmts)
			if strings.Contains(s, "%s") {
				s = fmt.Sprintf(s, title(g.pick(words)))
			}
			ind := "\t"
			if lang != "go" {
				ind = "    "
				if lang == "ts" {
					ind = "  "
				}
				s = strings.ReplaceAll(s, "\t", "    ")
			}
			b.WriteString(ind + s + "\n")
		}
		switch lang {
		case "go":
			b.WriteString("\treturn nil\n}\n\n")
		case "py":
			b.WriteString("    return out\n\n\n")
		case "ts":
			b.WriteString("  return out;\n}\n\n")
		case "rs":
			b.WriteString("    Ok(())\n}\n\n")
		}
	}
	return b.String()
}

func lastDir(path string) string {
	d := path[:max(0, strings.LastIndexByte(path, '/'))]
	return d[strings.LastIndexByte(d, '/')+1:]
}

// numbered prefixes each line with its number, as a file viewer prints.
func numbered(s string, from int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var b strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&b, "%6d\t%s\n", from+i, l)
	}
	return b.String()
}
