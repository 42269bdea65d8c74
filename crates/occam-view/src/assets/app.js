// occam view: the page. Hand-written SVG, no libraries, no network access beyond this server.
"use strict";

const TOKEN = new URLSearchParams(location.search).get("token") || "";
const SVGNS = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);

function api(path, body) {
  const sep = path.includes("?") ? "&" : "?";
  const opts = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  };
  return fetch(path + sep + "token=" + encodeURIComponent(TOKEN), opts).then((r) => r.json());
}

function el(tag, attrs, parent, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

function fmt(x) {
  if (x === null || x === undefined) return "—";
  if (typeof x !== "number") return String(x);
  const a = Math.abs(x);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? x.toExponential(3) : x.toPrecision(5).replace(/\.?0+$/, "");
}

// ---------------------------------------------------------------- the model graph
function drawGraph(g) {
  const svg = $("graph");
  svg.innerHTML = "";
  const defs = el("defs", {}, svg);
  const marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 8, markerHeight: 8, orient: "auto-start-reverse" }, defs);
  el("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#333" }, marker);
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  const grow = (a, b, c, d) => { x0 = Math.min(x0, a); y0 = Math.min(y0, b); x1 = Math.max(x1, c); y1 = Math.max(y1, d); };
  g.nodes.forEach((n) => grow(n.x - n.rx, n.y - n.ry, n.x + n.rx, n.y + n.ry));
  g.plates.forEach((p) => grow(p.rect[0], p.rect[1], p.rect[2], p.rect[3]));
  if (!isFinite(x0)) { x0 = 0; y0 = 0; x1 = 100; y1 = 60; }
  svg.setAttribute("viewBox", `${x0 - 20} ${y0 - 20} ${x1 - x0 + 40} ${y1 - y0 + 40}`);
  for (const p of g.plates) {
    el("rect", { x: p.rect[0], y: p.rect[1], width: p.rect[2] - p.rect[0], height: p.rect[3] - p.rect[1], rx: 6, class: "plate", "data-plate": p.name }, svg);
    el("text", { x: p.label_at[0], y: p.label_at[1], "text-anchor": p.label_right ? "end" : "start", class: "plate-label" }, svg, p.label);
  }
  const byName = Object.fromEntries(g.nodes.map((n) => [n.name, n]));
  for (const e of g.edges) {
    const pts = e.points.slice();
    const boundary = (n, towards) => {
      const dx = towards[0] - n.x, dy = towards[1] - n.y, len = Math.hypot(dx, dy) || 1;
      const ux = dx / len, uy = dy / len;
      const t = n.boxed ? Math.min(n.rx / (Math.abs(ux) || 1e-12), n.ry / (Math.abs(uy) || 1e-12))
        : 1 / Math.hypot(ux / n.rx, uy / n.ry);
      return [n.x + ux * t, n.y + uy * t];
    };
    const a = byName[e.from], b = byName[e.to];
    if (a && pts.length > 1) pts[0] = boundary(a, pts[1]);
    if (b && pts.length > 1) pts[pts.length - 1] = boundary(b, pts[pts.length - 2]);
    el("polyline", { points: pts.map((p) => p.join(",")).join(" "), class: e.index ? "edge index" : "edge", "marker-end": "url(#arrow)" }, svg);
  }
  for (const n of g.nodes) {
    const grp = el("g", { class: `node ${n.kind}${n.q_block !== null ? " qblock" : ""}`, "data-name": n.name, tabindex: 0 }, svg);
    if (n.boxed) el("rect", { x: n.x - n.rx, y: n.y - n.ry, width: 2 * n.rx, height: 2 * n.ry }, grp);
    else el("ellipse", { cx: n.x, cy: n.y, rx: n.rx, ry: n.ry }, grp);
    el("text", { x: n.x, y: n.y - 2, "text-anchor": "middle", class: "node-name" }, grp, n.name);
    el("text", { x: n.x, y: n.y + 13, "text-anchor": "middle", class: "node-label" }, grp, n.label);
    el("title", {}, grp, `${n.name}: ${n.label} (line ${n.line})`);
    grp.addEventListener("click", () => showPosterior(n.name));
  }
}

// ---------------------------------------------------------------- the bound trace
const trace = { series: new Map(), warnings: [], marks: [], source: null, pending: false };

function resetTrace() {
  trace.series.clear();
  trace.warnings = [];
  trace.marks = [];
  $("warnings").innerHTML = "";
  drawTrace();
}

// Redraws at most every REDRAW_MS, on a timer rather than an animation frame: a fast fit sends
// twenty batches a second, and a hidden or headless page (which runs no animation frames) still
// shows the chart growing.
const REDRAW_MS = 100;
// A series keeps at most MAX_KEPT points, so a long fast fit keeps the page's memory bounded:
// past it, every other point of its older half is dropped (the newest sweeps stay whole).
const MAX_KEPT = 4000;
function thin(s) {
  const half = s.length >> 1, kept = s.slice(0, half).filter((_, i) => i % 2 === 0).concat(s.slice(half));
  s.length = 0;
  for (const p of kept) s.push(p);
}
function scheduleTrace() {
  if (trace.pending) return;
  trace.pending = true;
  setTimeout(() => { trace.pending = false; drawTrace(); }, REDRAW_MS);
}

function drawTrace() {
  const svg = $("trace");
  svg.innerHTML = "";
  const W = 520, H = 260, L = 70, R = 10, T = 10, B = 30;
  let n = 0, lo = Infinity, hi = -Infinity;
  for (const s of trace.series.values()) {
    n = Math.max(n, s.n);
    for (const [, b] of s) { lo = Math.min(lo, b); hi = Math.max(hi, b); }
  }
  el("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }, svg);
  el("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }, svg);
  svg.dataset.points = [...trace.series.values()].reduce((a, s) => a + s.n, 0);
  svg.dataset.kept = [...trace.series.values()].reduce((a, s) => a + s.length, 0);
  if (n === 0) return;
  // The bound's first sweeps dwarf the rest: show the range of the later half with a margin.
  const tail = [...trace.series.values()].flatMap((s) => s.slice(Math.floor(s.length / 4)).map((p) => p[1]));
  lo = Math.min(...tail); hi = Math.max(...tail);
  if (hi - lo < 1e-9) { lo -= 1; hi += 1; }
  const pad = 0.05 * (hi - lo); lo -= pad; hi += pad;
  const sx = (i) => L + (W - L - R) * (n > 1 ? (i - 1) / (n - 1) : 0.5);
  const sy = (b) => T + (H - T - B) * (1 - (Math.min(Math.max(b, lo), hi) - lo) / (hi - lo));
  el("text", { x: L - 4, y: T + 8, "text-anchor": "end", class: "tick" }, svg, fmt(hi));
  el("text", { x: L - 4, y: H - B, "text-anchor": "end", class: "tick" }, svg, fmt(lo));
  el("text", { x: W - R, y: H - 8, "text-anchor": "end", class: "tick" }, svg, `iteration ${n}`);
  let k = 0;
  for (const [key, s] of trace.series) {
    const pts = s.map(([i, b]) => `${sx(i).toFixed(1)},${sy(b).toFixed(1)}`).join(" ");
    el("polyline", { points: pts, class: `series c${k % 6}`, "data-series": key }, svg);
    el("text", { x: L + 6, y: T + 14 + 12 * k, class: `legend c${k % 6}` }, svg, `restart ${key}`);
    k += 1;
  }
  for (const w of trace.warnings) {
    if (w.x === undefined) continue;
    const dot = el("circle", { cx: sx(w.x), cy: sy(w.bound), r: 4, class: "warn-dot", "data-iteration": w.iteration }, svg);
    el("title", {}, dot, w.message);
  }
  // Where the kept run's pruning began: the components it deleted, at that sweep.
  for (const m of trace.marks) {
    el("line", { x1: sx(m.x), x2: sx(m.x), y1: T, y2: H - B, class: "prune-mark", "data-iteration": m.x }, svg);
    el("text", { x: sx(m.x) - 4, y: H - B - 6, "text-anchor": "end", class: "tick prune-label" }, svg, m.text);
  }
}

function follow() {
  if (trace.source) trace.source.close();
  resetTrace();
  const es = new EventSource("/api/trace?token=" + encodeURIComponent(TOKEN));
  trace.source = es;
  es.addEventListener("points", (ev) => {
    for (const [r, stage, i, b] of JSON.parse(ev.data)) {
      const key = stage === "sweeps" ? `${r + 1}` : `${r + 1} (${stage})`;
      if (!trace.series.has(key)) trace.series.set(key, []);
      // x: the series' own sweep count (pruning trials restart their iteration numbers).
      const s = trace.series.get(key);
      s.n = (s.n || 0) + 1;
      s.push([s.n, b]);
      if (s.length > MAX_KEPT) thin(s);
    }
    scheduleTrace();
  });
  es.addEventListener("warning", (ev) => {
    const w = JSON.parse(ev.data);
    if (w.iteration !== undefined) {
      const key = w.stage === "sweeps" ? `${w.restart + 1}` : `${w.restart + 1} (${w.stage})`;
      w.x = (trace.series.get(key) || { n: 0 }).n;
    }
    trace.warnings.push(w);
    const li = document.createElement("li");
    li.textContent = w.message;
    $("warnings").appendChild(li);
    scheduleTrace();
  });
  es.addEventListener("done", (ev) => {
    const d = JSON.parse(ev.data);
    $("state").textContent = `L = ${d.bound} after ${d.iterations} iterations${d.converged ? "" : " (not converged)"}`;
    $("state").className = "done";
    es.close();
    const pruned = (d.components || []).filter((c) => c.in_use < c.total);
    if (d.prune_start !== null && d.prune_start !== undefined && pruned.length) {
      trace.marks.push({ x: d.prune_start, text: "pruned: " + pruned.map((c) => `${c.variable} ${c.in_use}/${c.total} in use`).join(", ") });
    }
    drawTrace(); // the whole trace now, without waiting for the redraw timer
    if (current) showPosterior(current);
  });
  es.addEventListener("error", (ev) => {
    if (ev.data) {
      showDiagnostics(JSON.parse(ev.data).diagnostics);
      $("state").textContent = "the model does not fit";
      $("state").className = "error";
    }
    es.close();
  });
}

// ---------------------------------------------------------------- posteriors
let current = null;
let graph = null;

function showPosterior(name) {
  current = name;
  $("posterior-name").textContent = name;
  document.querySelectorAll("#graph .node").forEach((n) => n.classList.toggle("selected", n.dataset.name === name));
  api("/api/posterior/" + encodeURIComponent(name)).then((d) => {
    const box = $("posterior");
    box.innerHTML = "";
    if (d.error) { box.textContent = d.error; return; }
    const v = d.variable;
    const head = document.createElement("p");
    head.textContent = `${v.distribution} (${v.role}), plates: ${v.plates.map((x) => `${x.name} = ${x.size}`).join(", ") || "none"}`;
    box.appendChild(head);
    const svg = el("svg", { viewBox: "0 0 480 220", class: "plot", "data-variable": name });
    box.appendChild(svg);
    const what = plotFor(d, svg, 480, 220);
    const cap = document.createElement("p");
    cap.className = "caption";
    cap.textContent = what || "no plot for this family: the numbers are below";
    box.appendChild(cap);
    if (isWishart2(v)) showWishart(svg, cap, d);
    const table = document.createElement("table");
    table.className = "numbers";
    for (const [k, vals] of Object.entries(v.parameters)) {
      const tr = table.insertRow();
      tr.dataset.param = k;
      tr.insertCell().textContent = k;
      const shown = JSON.stringify(vals.slice(0, 6));
      tr.dataset.values = shown;
      tr.insertCell().textContent = shown + (vals.length > 6 ? ` … (${vals.length})` : "");
    }
    box.appendChild(table);
    const mix = mixtureOf(graph, name);
    if (mix) showMixture(box, table, mix);
  });
}

// The mixture's components as ellipses over the data's scatter, under the clicked node's plot.
function showMixture(box, before, mix) {
  const names = [mix.data, mix.index, ...mix.params];
  Promise.all(names.map((n) => api("/api/posterior/" + encodeURIComponent(n)))).then((posts) => {
    if (posts.some((d) => d.error)) return;
    const svg = el("svg", { viewBox: "0 0 480 320", class: "plot mixture", "data-data": mix.data });
    const n = ellipses(svg, posts, 480, 320);
    if (n === false || !before.isConnected) return; // another node was clicked meanwhile
    box.insertBefore(svg, before);
    const cap = document.createElement("p");
    cap.className = "caption";
    box.insertBefore(cap, before);
    cap.textContent = `${mix.data} with the ${n} components in use (weight > 0.001): mean ± 2 sd of ${mix.params.join(" and ")}, labelled with their weights`;
  });
}

// ---------------------------------------------------------------- the editor
function showDiagnostics(list) {
  const ul = $("diagnostics");
  ul.innerHTML = "";
  const text = $("editor").value;
  const lines = text.split("\n");
  const offset = (line, col) => lines.slice(0, line - 1).reduce((a, l) => a + l.length + 1, 0) + col - 1;
  const marks = [];
  for (const d of list || []) {
    const li = document.createElement("li");
    li.textContent = (d.line ? `${d.line}:${d.column}: ` : "") + d.message + (d.label ? ` (${d.label})` : "") + (d.hint ? ` — hint: ${d.hint}` : "");
    li.className = "diagnostic";
    if (d.line) {
      li.dataset.line = d.line;
      const a = offset(d.line, d.column), b = Math.max(offset(d.end_line, d.end_column), a + 1);
      marks.push([a, b]);
      li.addEventListener("click", () => { const e = $("editor"); e.focus(); e.setSelectionRange(a, b); });
    }
    ul.appendChild(li);
  }
  renderUnderlay(marks);
}

function renderUnderlay(marks) {
  const text = $("editor").value, u = $("underlay");
  u.innerHTML = "";
  let at = 0;
  for (const [a, b] of marks.sort((x, y) => x[0] - y[0])) {
    if (a < at) continue;
    u.appendChild(document.createTextNode(text.slice(at, a)));
    const m = document.createElement("mark");
    m.textContent = text.slice(a, b) || " ";
    u.appendChild(m);
    at = b;
  }
  u.appendChild(document.createTextNode(text.slice(at) + "\n"));
}

function check() {
  return api("/api/check", { source: $("editor").value }).then((r) => {
    $("report").textContent = r.ok ? r.report : "";
    showDiagnostics(r.ok ? [] : r.diagnostics);
    return r;
  });
}

function refit() {
  api("/api/fit", { source: $("editor").value }).then((r) => {
    if (!r.ok) { showDiagnostics(r.diagnostics); return; }
    showDiagnostics([]);
    $("state").textContent = "fitting…";
    $("state").className = "";
    loadGraph();
    follow();
  });
}

function loadGraph() {
  return api("/api/graph").then((g) => { if (g.nodes) { graph = g; drawGraph(g); } });
}

function start() {
  api("/api/status").then((s) => {
    $("model").textContent = s.model;
    $("editor").value = s.source;
    renderUnderlay([]);
    if (s.diagnostics) showDiagnostics(s.diagnostics);
    $("state").textContent = s.state === "done" ? `L = ${s.bound}` : s.state;
    loadGraph();
    follow();
  });
  $("check").addEventListener("click", check);
  $("fit").addEventListener("click", refit);
  $("compare").addEventListener("click", runCompare);
  const ed = $("editor");
  ed.addEventListener("input", () => renderUnderlay([]));
  ed.addEventListener("scroll", () => { $("underlay").scrollTop = ed.scrollTop; $("underlay").scrollLeft = ed.scrollLeft; });
}

start();
