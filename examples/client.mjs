// Call a strata server from TypeScript or JavaScript with fetch alone
// (Node.js 18 and later, Deno, Bun, browsers).
//
//     node client.mjs http://127.0.0.1:7700 [TOKEN]
//
// Appends two turns to the conversation "trip" (again: they are skipped by
// their ext_ids), asks for a context package about the hotel, and prints it.
if (process.argv.length < 3) {
  console.error("usage: node client.mjs URL [TOKEN]");
  process.exit(1);
}
const base = process.argv[2].replace(/\/$/, "");
const token = process.argv[3] ?? "";

// fail ends the program with a message, not a stack trace.
function fail(message) {
  console.error(message);
  process.exit(1);
}

// call sends a request; it ends the program with a message on any error.
async function call(method, path, body) {
  const where = `${method} ${base}${path}`;
  const headers = {};
  if (token) headers["Authorization"] = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let resp, text;
  try {
    resp = await fetch(base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    text = await resp.text();
  } catch (e) {
    fail(`${where}: cannot reach the server: ${e.cause?.message ?? e.message}`);
  }
  let answer;
  try {
    answer = JSON.parse(text);
  } catch {
    fail(`${where}: ${resp.status}, and the answer is not JSON: ${JSON.stringify(text.slice(0, 200))}`);
  }
  if (!resp.ok) fail(`${where}: ${resp.status} ${answer?.detail ?? JSON.stringify(text.slice(0, 200))}`);
  return answer;
}

const turns = [
  { ext_id: "m1", role: "user", name: "Ana", time: "2025-06-01T09:00:00Z",
    content: "We land in Lisbon on 14 June; book the hotel near Alfama." },
  { ext_id: "m2", role: "assistant", time: "2025-06-01T09:01:00Z",
    content: "Booked Casa Alfama for 14-18 June, confirmation LX-4471." },
];
for (let i = 0; i < 2; i++) {
  const res = await call("POST", "/v1/conversations/trip/turns", { turns });
  console.log(`added ${res.added}, already present ${res.skipped}`);
}
const pkg = await call("POST", "/v1/conversations/trip/context", { query: "hotel confirmation", budget: 300 });
console.log(`${pkg.tokens} of ${pkg.budget} tokens`);
console.log(pkg.rendered);
