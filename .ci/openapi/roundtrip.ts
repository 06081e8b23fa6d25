// A round trip through strata's HTTP API with the types openapi-typescript
// generates from /openapi.json (api.d.ts, made by CI): append turns, then
// get a context package that holds them, then check that a refused
// request is the problem the document says. Run: node roundtrip.js URL TOKEN.
import type { paths, components } from "./api";

declare const process: { argv: string[]; exit(code: number): never };

type AppendOp = paths["/v1/conversations/{id}/turns"]["post"];
type ContextOp = paths["/v1/conversations/{id}/context"]["post"];
type AppendBody = AppendOp["requestBody"]["content"]["application/json"];
type AppendResult = AppendOp["responses"]["200"]["content"]["application/json"];
type ContextBody = ContextOp["requestBody"]["content"]["application/json"];
type Package = ContextOp["responses"]["200"]["content"]["application/json"];
type Problem = components["schemas"]["ErrorModel"];

const [base, token] = process.argv.slice(2);
if (!base || !token) {
  console.error("usage: node roundtrip.js URL TOKEN");
  process.exit(2);
}

async function post(path: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(base + path, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: "Bearer " + token },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

function fail(msg: string): never {
  console.error("roundtrip: " + msg);
  process.exit(1);
}

const turns: AppendBody = {
  turns: [
    { ext_id: "t1", role: "user", content: "The spare key is under the blue flower pot.", time: "2024-03-01T10:00:00Z" },
    { ext_id: "t2", role: "assistant", content: "Noted: the key is under the blue pot.", time: "2024-03-01T10:01:00Z" },
  ],
};
const appended = await post("/v1/conversations/ci-roundtrip/turns", turns);
if (appended.status !== 200) fail(`append: ${appended.status} ${JSON.stringify(appended.json)}`);
const res = appended.json as AppendResult;
if (res.added !== 2) fail(`append added ${res.added} turns, want 2`);

const ask: ContextBody = { query: "where is the key?", budget: 400, format: "markdown" };
const got = await post("/v1/conversations/ci-roundtrip/context", ask);
if (got.status !== 200) fail(`context: ${got.status} ${JSON.stringify(got.json)}`);
const pkg = got.json as Package;
if (!pkg.rendered.includes("blue flower pot")) fail(`the package does not hold the appended turn: ${pkg.rendered}`);
if (pkg.tokens > ask.budget) fail(`the package's ${pkg.tokens} tokens exceed the budget of ${ask.budget}`);
const roles = pkg.items.map((it) => it.role ?? "");

const refused = await post("/v1/conversations/ci-roundtrip/turns", { turns: null });
const problem = refused.json as Problem;
if (refused.status !== 400 || problem.status !== 400 || !problem.errors?.some((e) => e.location === "body.turns")) {
  fail(`a null list: ${refused.status} ${JSON.stringify(refused.json)}, want a 400 problem naming turns`);
}
console.log(`roundtrip: appended ${res.added} turns, got a package of ${pkg.tokens} tokens (${pkg.items.length} items, roles ${roles.join(",")}), a null list refused`);
