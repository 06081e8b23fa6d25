// strata's web page: the conversation view. It draws the pyramid as a
// timeline (levels as rows, turns across) and asks the /v1 API only for
// what the visible window holds, so a conversation of a million turns
// loads as fast as one of a thousand.
"use strict";
(function () {
  const main = document.getElementById("conv");
  if (!main) return;
  const conv = main.dataset.conv;
  const total = Number(main.dataset.turns);
  const levels = main.dataset.levels ? main.dataset.levels.split(",") : [];
  const timeline = document.getElementById("timeline");
  const detail = document.getElementById("detail");
  const MAXNODES = 300; // blocks per row and window
  const BINS = 24; // ranges offered when every level is too dense to draw
  const MAXTURNS = 400; // the turns row shows at most this many
  let view = { a: 0, b: Math.max(total, 1) }; // turn seq s spans [s-1, s]
  let hits = [], omitted = [];
  let loadGen = 0;

  // api calls /v1 with the page's header, which lets the server take
  // the token cookie (see docs/web.md).
  async function api(method, path, body, signal) {
    const opt = { method, headers: { "X-Strata-Page": "1" }, credentials: "same-origin", signal };
    if (body !== undefined) {
      opt.headers["Content-Type"] = "application/json";
      opt.body = JSON.stringify(body);
    }
    let r;
    try {
      r = await fetch(path, opt);
    } catch (e) {
      if (e.name !== "AbortError") showError(method + " " + path.split("?")[0] + ": " + e.message);
      throw e;
    }
    const text = await r.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
    if (!r.ok) {
      const msg = (data && (data.detail || data.title)) || text || r.statusText;
      const err = new Error(method + " " + path.split("?")[0] + ": " + r.status + " " + msg);
      showError(err.message);
      throw err;
    }
    return data;
  }
  const cpath = (rest) => "/v1/conversations/" + encodeURIComponent(conv) + rest;

  function showError(msg) {
    let p = document.getElementById("page-error");
    if (!p) {
      p = el("p", { id: "page-error", class: "error", role: "alert" });
      main.prepend(p);
    }
    p.textContent = msg;
  }

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k === "style") e.style.cssText = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const k of kids) if (k !== null && k !== undefined) e.append(k);
    return e;
  }
  const day = (t) => (t ? String(t).slice(0, 10) : "");
  const when = (t) => (t ? String(t).replace("T", " ").slice(0, 16) : "");

  // Rows: the coarsest level on top, the raw turns at the bottom.
  const rows = [];
  const overlay = el("div", { class: "overlay", "aria-hidden": "true" });
  for (let l = levels.length; l >= 0; l--) {
    const label = l === 0 ? "turns" : levels[l - 1];
    const body = el("div", { class: "lane" });
    const row = el("div", { class: "row", "data-level": String(l), role: "group", "aria-label": "level " + l + ": " + label },
      el("span", { class: "rowname" }, label), body);
    rows.push({ level: l, body });
    timeline.append(row);
  }
  timeline.append(overlay);

  const x = (v) => ((v - view.a) / (view.b - view.a)) * 100;
  function place(e, lo, hi) {
    const l = Math.max(0, x(lo)), r = Math.min(100, x(hi));
    e.style.left = l + "%";
    e.style.width = Math.max(r - l, 0.15) + "%";
  }

  function clampView() {
    let w = view.b - view.a;
    w = Math.min(Math.max(w, Math.min(8, total)), Math.max(total, 1));
    let a = Math.max(0, Math.min(view.a, total - w));
    view = { a, b: a + w };
  }
  function zoom(f, at) {
    const c = at === undefined ? (view.a + view.b) / 2 : at;
    view = { a: c - (c - view.a) * f, b: c + (view.b - c) * f };
    clampView();
    draw();
  }
  function pan(f) {
    const d = (view.b - view.a) * f;
    view = { a: view.a + d, b: view.b + d };
    clampView();
    draw();
  }
  function show(first, last) {
    const pad = Math.max(1, (last - first + 1) * 0.05);
    view = { a: first - 1 - pad, b: last + pad };
    clampView();
    draw();
  }

  // draw loads the window at once: a newer window aborts the requests of
  // an older one still in flight, so a burst of wheel events costs little.
  let inflight = null;
  function draw() {
    drawOverlay();
    load();
  }

  // load fetches each row's window; a newer window cancels an older one.
  async function load() {
    const gen = ++loadGen;
    if (inflight) inflight.abort();
    inflight = new AbortController();
    const signal = inflight.signal;
    timeline.dataset.busy = "1";
    const from = Math.max(1, Math.floor(view.a) + 1), to = Math.min(total, Math.ceil(view.b));
    document.getElementById("range").textContent = "Turns " + from + " to " + to + " of " + total;
    // Node rows load coarsest first: a level too dense for the window
    // makes every finer one denser still, so those are not asked for.
    async function nodeRows() {
      const out = [];
      let denser = "";
      for (const row of rows) {
        if (row.level === 0) continue;
        if (denser) {
          out.push({ row, dense: "finer than " + denser + ": zoom in" });
          continue;
        }
        const p = await api("GET", cpath("/nodes?level=" + row.level + "&from=" + from + "&to=" + to + "&limit=" + MAXNODES), undefined, signal);
        if (p.next) {
          denser = p.name;
          out.push({ row, dense: "more than " + MAXNODES + " " + p.name + " nodes here: zoom in" });
          continue;
        }
        out.push({ row, nodes: p.nodes });
      }
      return out;
    }
    async function turnRows() {
      return rows.filter((row) => row.level === 0).map(async (row) => {
        if (to - from + 1 > MAXTURNS) return { row, dense: "zoom in to see the turns (" + (to - from + 1) + " here)" };
        const p = await api("GET", cpath("/turns?from=" + from + "&to=" + to + "&limit=" + MAXTURNS), undefined, signal);
        return { row, turns: p.turns };
      });
    }
    const [nodeRes, turnJobs] = await Promise.allSettled([nodeRows(), turnRows()]);
    const res = [];
    if (nodeRes.status === "fulfilled") for (const v of nodeRes.value) res.push({ status: "fulfilled", value: v });
    if (turnJobs.status === "fulfilled") res.push(...(await Promise.allSettled(turnJobs.value)));
    if (gen !== loadGen) return;
    let firstDate = "", lastDate = "", drawn = 0, coarsest = null;
    for (const r of res) {
      if (r.status !== "fulfilled") continue;
      const { row, dense, nodes, turns } = r.value;
      row.body.replaceChildren();
      if (dense) {
        row.body.append(el("span", { class: "dense" }, dense));
        if (row.level > 0 && !coarsest) coarsest = row;
        continue;
      }
      for (const n of nodes || []) {
        row.body.append(nodeBlock(n));
        drawn++;
        if (!firstDate || day(n.start) < firstDate) firstDate = day(n.start);
        if (day(n.end) > lastDate) lastDate = day(n.end);
      }
      for (const t of turns || []) row.body.append(turnBlock(t));
    }
    // Every level too dense for the window (a long history seen whole):
    // the coarsest row offers the window in BINS ranges, each a block
    // that zooms to it, so that a click or a key finds the summaries.
    if (!drawn && coarsest) {
      coarsest.body.replaceChildren();
      const w = (to - from + 1) / BINS;
      for (let i = 0; i < BINS; i++) {
        const a = from + Math.floor(i * w), b = Math.min(to, from + Math.floor((i + 1) * w) - 1);
        if (b < a) continue;
        const blk = el("button", {
          type: "button", class: "blk bin", "aria-label": "turns " + a + " to " + b + ": zoom in",
          title: "turns " + a + "-" + b + ": zoom in", onclick: () => show(a, b),
        }, a + "-" + b);
        place(blk, a - 1, b);
        coarsest.body.append(blk);
      }
    }
    if (firstDate) document.getElementById("range").textContent += ", " + firstDate + " to " + lastDate;
    timeline.dataset.loaded = String(gen);
    delete timeline.dataset.busy;
  }

  function statusOf(n) {
    if (n.pending) return "pending";
    return n.status || "ok";
  }
  const statusText = { ok: "ok", over_budget: "over budget", needs_review: "needs review", pending: "pending model" };

  function nodeBlock(n) {
    const st = statusOf(n);
    const tier = n.tier || "summary";
    const lbl = (n.key ? n.key + " " : "") + n.first_seq + "-" + n.last_seq;
    const b = el("button", {
      type: "button", class: "blk tier-" + tier + " st-" + st, "data-node": n.id,
      "aria-label": levels[n.level - 1] + " " + lbl + ", " + day(n.start) + " to " + day(n.end) + ", " + (n.tier || "summary") + ", " + statusText[st],
      title: lbl + " · " + (n.summary || "").slice(0, 200),
      onclick: () => selectNode(n),
    }, (st !== "ok" ? "\u26A0 " : "") + lbl);
    place(b, n.first_seq - 1, n.last_seq);
    return b;
  }
  function turnBlock(t) {
    const pinned = (t.importance || 0) >= 0.8;
    const b = el("button", {
      type: "button", class: "blk turn" + (pinned ? " pinned" : ""), "data-seq": String(t.seq),
      "aria-label": "turn " + t.seq + " by " + speaker(t) + ", " + when(t.time) + (pinned ? ", pinned" : ""),
      title: speaker(t) + ": " + text(t).slice(0, 200),
      onclick: () => selectTurn(t),
    }, (pinned ? "\u2605" : "") + t.seq);
    place(b, t.seq - 1, t.seq);
    return b;
  }
  const speaker = (t) => t.name || t.role;
  const text = (t) => t.content || (t.tool_calls ? JSON.stringify(t.tool_calls) : "") || (t.tool_results ? JSON.stringify(t.tool_results) : "");

  const visible = (m) => m.last_seq > view.a && m.first_seq - 1 < view.b;
  function drawOverlay() {
    overlay.replaceChildren();
    for (const o of omitted.filter(visible)) {
      const e = el("div", { class: "mark omitted" });
      place(e, o.first_seq - 1, o.last_seq);
      overlay.append(e);
    }
    for (const h of hits.filter(visible)) {
      const e = el("div", { class: "mark hit", "data-seq": String(h.first_seq) });
      place(e, h.first_seq - 1, h.last_seq);
      overlay.append(e);
    }
  }

  function field(name, value) {
    return value === undefined || value === null || value === "" ? null : el("div", { class: "field" }, el("dt", {}, name), el("dd", {}, value));
  }

  function selectNode(n) {
    const st = statusOf(n);
    const facts = n.facts && n.facts.length ? el("ul", { class: "facts" }, ...n.facts.map((f) => el("li", {}, f))) : "none";
    const d = el("dl", {},
      field("Level", levels[n.level - 1] + " (" + n.level + ")"),
      field("Turns", n.first_seq + " to " + n.last_seq),
      field("Dates", when(n.start) + " to " + when(n.end)),
      field("Period", n.key),
      field("Tier", n.tier),
      field("Status", statusText[st] + (n.fallback ? " (" + n.fallback + ")" : "")),
      field("Tokens", n.source_tokens + " in the span, " + n.tokens + " in the summary"),
      field("Method", n.method + (n.model ? ", model " + n.model : "")),
      field("Themes", (n.themes || []).join(", ")),
      field("Facts", facts),
      n.aggregates ? field("Aggregates", el("pre", {}, JSON.stringify(n.aggregates, null, 1))) : null);
    const turnsBox = el("div", { class: "turns" });
    const startDay = day(n.start);
    detail.replaceChildren(
      el("h2", {}, levels[n.level - 1] + " " + (n.key ? n.key + " " : "") + n.first_seq + "-" + n.last_seq),
      el("p", { class: "summary" }, n.summary),
      d,
      el("div", { class: "actions" },
        el("button", { type: "button", id: "expand", onclick: () => { show(n.first_seq, n.last_seq); listTurns(turnsBox, n.first_seq, n.last_seq); } }, "Expand to its turns"),
        el("button", { type: "button", id: "resummarize", onclick: async () => {
          const m = await api("POST", "/v1/nodes/" + encodeURIComponent(n.id) + "/resummarize");
          selectNode(m);
          draw();
        } }, "Re-run summary"),
        startDay ? el("button", { type: "button", id: "important", onclick: async (ev) => {
          const r = await api("POST", cpath("/important?period=" + startDay + "&important=true"));
          ev.target.textContent = "Important: " + r.important.join(", ");
        } }, "Mark " + startDay + " important") : null),
      turnsBox);
    detail.focus();
  }

  async function listTurns(box, first, last) {
    box.replaceChildren(el("p", { class: "muted" }, "Loading turns " + first + " to " + last + "..."));
    const list = el("ol", { class: "turnlist", start: String(first) });
    let from = first;
    while (from && from <= last) {
      const p = await api("GET", cpath("/turns?from=" + from + "&to=" + last + "&limit=200"));
      for (const t of p.turns) list.append(turnItem(t));
      from = p.next || 0;
      if (list.children.length >= 1000) break;
    }
    box.replaceChildren(el("h3", {}, "Turns " + first + " to " + last), list);
  }

  function turnItem(t) {
    const pinned = (t.importance || 0) >= 0.8;
    const li = el("li", { "data-seq": String(t.seq) },
      el("span", { class: "who" }, speaker(t)), " ", el("time", { datetime: t.time }, when(t.time)), " ",
      el("span", { class: "text" }, text(t)), " ",
      el("button", { type: "button", class: "pin", onclick: async () => {
        const nt = await api("POST", cpath("/turns/" + t.seq + "/pin?importance=" + (pinned ? 0 : 1)));
        li.replaceWith(turnItem(nt));
        draw();
      } }, pinned ? "Unpin" : "Pin"));
    return li;
  }

  function selectTurn(t) {
    const box = el("div", { class: "turns" });
    detail.replaceChildren(el("h2", {}, "Turn " + t.seq), el("ol", { class: "turnlist", start: String(t.seq) }, turnItem(t)), box);
  }

  // Search: hits in a list and on the timeline.
  document.getElementById("search-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const q = document.getElementById("q").value.trim();
    const box = document.getElementById("hits");
    if (!q) return;
    const r = await api("GET", "/v1/search?q=" + encodeURIComponent(q) + "&conversation=" + encodeURIComponent(conv) + "&k=50");
    hits = r.hits;
    drawOverlay();
    box.replaceChildren(el("h2", {}, hits.length + " hits for \u201C" + q + "\u201D"),
      el("ol", { class: "hitlist" }, ...hits.map((h) => el("li", {},
        el("button", { type: "button", class: "hitbtn", onclick: () => show(h.first_seq, h.last_seq) },
          (h.kind === "turn" ? "turn " + h.first_seq : "summary " + h.first_seq + "-" + h.last_seq) + ", " + day(h.start)),
        " ", el("span", { class: "text" }, h.text.slice(0, 240))))));
  });

  // Zoom by time: a day, week, month or phrase.
  document.getElementById("when-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const w = document.getElementById("when").value.trim();
    if (!w) return;
    const r = await api("GET", cpath("/zoom?when=" + encodeURIComponent(w)));
    const box = el("div", { class: "turns" });
    detail.replaceChildren(el("h2", {}, r.period + ": " + r.turns + " turns"), box);
    if (!r.items.length) return;
    const first = r.items[0].first_seq, last = r.items[r.items.length - 1].last_seq;
    show(first, last);
    box.append(el("ol", { class: "turnlist" }, ...r.items.map((it) =>
      el("li", { "data-seq": String(it.first_seq) }, el("span", { class: "who" }, it.speaker || it.role || ""), " ",
        el("time", {}, when(it.start)), " ", el("span", { class: "text" }, it.text)))));
  });

  // Context preview: the package the model would get, with its meter.
  const budget = document.getElementById("budget");
  budget.addEventListener("input", () => { document.getElementById("budget-out").textContent = budget.value; });
  document.getElementById("ctx-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const b = Number(budget.value);
    const p = await api("POST", cpath("/context"), { query: document.getElementById("ctx-q").value, budget: b });
    omitted = p.omitted || [];
    drawOverlay();
    const pct = Math.round((p.tokens / p.budget) * 100);
    document.getElementById("ctx").replaceChildren(...[
      el("p", { class: "meter-line" }, el("meter", { id: "meter", min: "0", max: String(p.budget), value: String(p.tokens), "aria-label": "tokens used" }),
        " ", el("span", { id: "meter-text" }, p.tokens + " / " + p.budget + " tokens (" + pct + "%)")),
      omitted.length ? el("p", { class: "muted" }, "Omitted: " + omitted.map((o) => "turns " + o.first_seq + "-" + o.last_seq).join(", ") + " (hatched on the timeline)") : null,
      el("ol", { class: "items" }, ...p.items.map((it) => el("li", { class: "item reason-" + it.reason },
        el("span", { class: "reason" }, it.reason), " ",
        el("button", { type: "button", class: "prov", onclick: () => show(it.first_seq, it.last_seq) },
          (it.kind === "summary" ? it.level_name + " " : it.kind + " ") + it.first_seq + (it.last_seq !== it.first_seq ? "-" + it.last_seq : "") + ", " + day(it.start)),
        " ", el("span", { class: "muted" }, it.tokens + " tokens"),
        el("div", { class: "text" }, it.text))))].filter((k) => k));
  });

  // Learnings: confirm or reject each.
  async function loadLearnings() {
    const r = await api("GET", cpath("/learnings?status=all"));
    const box = document.getElementById("learnings");
    if (!r.learnings.length) { box.replaceChildren(el("p", { class: "muted" }, "No learnings yet.")); return; }
    box.replaceChildren(el("ul", { class: "learnlist" }, ...r.learnings.map(learningItem)));
  }
  function learningItem(l) {
    const li = el("li", { "data-learning": String(l.id) },
      el("span", { class: "status st-" + l.status }, l.status), " ", l.text, " ",
      el("button", { type: "button", class: "prov", onclick: () => show(l.first_seq, l.last_seq) }, "turns " + l.first_seq + "-" + l.last_seq), " ");
    for (const verb of ["confirm", "reject"]) {
      li.append(el("button", { type: "button", class: verb, onclick: async () => {
        li.replaceWith(learningItem(await api("POST", "/v1/learnings/" + l.id + "/" + verb)));
      } }, verb === "confirm" ? "Confirm" : "Reject"), " ");
    }
    return li;
  }
  document.getElementById("load-learnings").addEventListener("click", loadLearnings);

  // Zoom and pan: wheel, drag, buttons and keys.
  timeline.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const r = timeline.getBoundingClientRect();
    const lane = rows[0].body.getBoundingClientRect();
    const at = view.a + ((ev.clientX - lane.left) / lane.width) * (view.b - view.a);
    zoom(ev.deltaY < 0 ? 0.8 : 1.25, Math.max(view.a, Math.min(view.b, at)));
    void r;
  }, { passive: false });
  let drag = null;
  timeline.addEventListener("pointerdown", (ev) => { if (ev.target.closest("button")) return; drag = { x: ev.clientX, a: view.a, b: view.b }; });
  window.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    const w = rows[0].body.getBoundingClientRect().width;
    const d = ((drag.x - ev.clientX) / w) * (drag.b - drag.a);
    view = { a: drag.a + d, b: drag.b + d };
    clampView();
    draw();
  });
  window.addEventListener("pointerup", () => { drag = null; });
  timeline.addEventListener("keydown", (ev) => {
    const keys = { ArrowLeft: () => pan(-0.2), ArrowRight: () => pan(0.2), "+": () => zoom(0.5), "=": () => zoom(0.5),
      "-": () => zoom(2), "0": () => { view = { a: 0, b: total }; draw(); } };
    if (keys[ev.key]) { ev.preventDefault(); keys[ev.key](); }
  });
  document.getElementById("zoom-in").addEventListener("click", () => zoom(0.5));
  document.getElementById("zoom-out").addEventListener("click", () => zoom(2));
  document.getElementById("zoom-all").addEventListener("click", () => { view = { a: 0, b: total }; draw(); });
  detail.tabIndex = -1;
  clampView();
  draw();
})();
