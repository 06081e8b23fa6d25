// Call a strata server from TypeScript or JavaScript with fetch alone
// (Node.js 18 and later, Deno, Bun, browsers).
//
//     node client.mjs http://127.0.0.1:7700 [TOKEN]
//
// Appends two turns to the conversation "trip" (again: they are skipped by
// their ext_ids), asks for a context package about the hotel, and prints it.
const base = process.argv[2].replace(/\/$/, "");
const token = process.argv[3] ?? "";

async function call(method, path, body) {
  const headers = {};
  if (token) headers["Authorization"] = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const resp = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await resp.json();
  if (!resp.ok) {
    console.error(`${method} ${path}: ${resp.status} ${answer.detail}`);
    process.exit(1);
  }
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
