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
const trace = { series: new Map(), warnings: [], source: null, pending: false };

function resetTrace() {
  trace.series.clear();
  trace.warnings = [];
  $("warnings").innerHTML = "";
  drawTrace();
}

function scheduleTrace() {
  if (trace.pending) return;
  trace.pending = true;
  requestAnimationFrame(() => { trace.pending = false; drawTrace(); });
}

function drawTrace() {
  const svg = $("trace");
  svg.innerHTML = "";
  const W = 520, H = 260, L = 70, R = 10, T = 10, B = 30;
  let n = 0, lo = Infinity, hi = -Infinity;
  for (const s of trace.series.values()) {
    n = Math.max(n, s.length);
    for (const [, b] of s) { lo = Math.min(lo, b); hi = Math.max(hi, b); }
  }
  el("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }, svg);
  el("line", { x1: L, y1: T, x2: L, y2: H - B, class: "axis" }, svg);
  svg.dataset.points = [...trace.series.values()].reduce((a, s) => a + s.length, 0);
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
    if (w.x !== undefined) el("circle", { cx: sx(w.x), cy: sy(w.bound), r: 4, class: "warn-dot" }, svg);
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
      s.push([s.length + 1, b]);
    }
    scheduleTrace();
  });
  es.addEventListener("warning", (ev) => {
    const w = JSON.parse(ev.data);
    if (w.iteration !== undefined) {
      const key = w.stage === "sweeps" ? `${w.restart + 1}` : `${w.restart + 1} (${w.stage})`;
      w.x = (trace.series.get(key) || []).length;
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
    drawTrace(); // the whole trace now, without waiting for an animation frame
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

function axes(svg, W, H) {
  el("line", { x1: 40, y1: H - 25, x2: W - 10, y2: H - 25, class: "axis" }, svg);
}

function density(svg, f, lo, hi, interval, W, H) {
  const xs = Array.from({ length: 201 }, (_, i) => lo + (hi - lo) * i / 200);
  const ys = xs.map(f);
  const top = Math.max(...ys.filter(isFinite)) || 1;
  const sx = (x) => 40 + (W - 50) * (x - lo) / (hi - lo), sy = (y) => H - 25 - (H - 40) * Math.min(y / top, 1);
  axes(svg, W, H);
  const band = xs.map((x, i) => [x, ys[i]]).filter(([x]) => x >= interval[0] && x <= interval[1]);
  if (band.length) {
    const d = `M ${sx(band[0][0])} ${H - 25} ` + band.map(([x, y]) => `L ${sx(x)} ${sy(y)}`).join(" ") + ` L ${sx(band[band.length - 1][0])} ${H - 25} Z`;
    el("path", { d, class: "interval" }, svg);
  }
  el("polyline", { points: xs.map((x, i) => `${sx(x)},${sy(ys[i])}`).join(" "), class: "density" }, svg);
  el("text", { x: 40, y: H - 8, class: "tick" }, svg, fmt(lo));
  el("text", { x: W - 10, y: H - 8, "text-anchor": "end", class: "tick" }, svg, fmt(hi));
  el("text", { x: W / 2, y: H - 8, "text-anchor": "middle", class: "tick" }, svg, `95%: [${fmt(interval[0])}, ${fmt(interval[1])}]`);
}

function lgamma(x) { // Lanczos (g = 7, n = 9)
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lgamma(1 - x);
  x -= 1;
  let a = c[0];
  const t = x + 7.5;
  for (let i = 1; i < 9; i++) a += c[i] / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

function gammaQuantiles(shape, rate, lo, hi) { // 2.5% and 97.5% by the CDF on a fine grid
  const n = 4000, h = (hi - lo) / n;
  const f = (x) => (x <= 0 ? 0 : Math.exp(shape * Math.log(rate) - lgamma(shape) + (shape - 1) * Math.log(x) - rate * x));
  let acc = 0, q1 = lo, q2 = hi, prev = f(lo + 1e-12);
  for (let i = 1; i <= n; i++) {
    const x = lo + i * h, y = f(x);
    acc += 0.5 * (prev + y) * h; prev = y;
    if (acc < 0.025) q1 = x;
    if (acc < 0.975) q2 = x;
  }
  return [q1, q2];
}

function bars(svg, values, errors, labels, W, H) {
  const n = values.length;
  const lo = Math.min(0, ...values.map((v, i) => v - (errors ? errors[i] : 0)));
  const hi = Math.max(0, ...values.map((v, i) => v + (errors ? errors[i] : 0)));
  const span = hi - lo || 1;
  const sy = (y) => 10 + (H - 35) * (1 - (y - lo) / span);
  const bw = (W - 50) / n;
  axes(svg, W, H);
  el("line", { x1: 40, y1: sy(0), x2: W - 10, y2: sy(0), class: "axis" }, svg);
  values.forEach((v, i) => {
    const x = 40 + i * bw;
    el("rect", { x: x + bw * 0.15, y: Math.min(sy(v), sy(0)), width: bw * 0.7, height: Math.abs(sy(v) - sy(0)), class: "bar" }, svg);
    if (errors) el("line", { x1: x + bw / 2, x2: x + bw / 2, y1: sy(v - errors[i]), y2: sy(v + errors[i]), class: "errbar" }, svg);
    if (n <= 30) el("text", { x: x + bw / 2, y: H - 10, "text-anchor": "middle", class: "tick" }, svg, labels ? labels[i] : i);
  });
  el("text", { x: 36, y: sy(hi) + 4, "text-anchor": "end", class: "tick" }, svg, fmt(hi));
  el("text", { x: 36, y: sy(lo), "text-anchor": "end", class: "tick" }, svg, fmt(lo));
}

function hinton(svg, rows, W, H) { // squares of area ∝ |value|, white positive, black negative
  const r = rows.length, c = rows[0].length;
  const big = Math.max(...rows.flat().map(Math.abs)) || 1;
  const cell = Math.min((W - 20) / c, (H - 20) / r);
  el("rect", { x: 10, y: 10, width: cell * c, height: cell * r, class: "hinton-bg" }, svg);
  rows.forEach((row, i) => row.forEach((v, j) => {
    const s = cell * 0.9 * Math.sqrt(Math.abs(v) / big);
    el("rect", { x: 10 + j * cell + (cell - s) / 2, y: 10 + i * cell + (cell - s) / 2, width: s, height: s, class: v >= 0 ? "hinton-pos" : "hinton-neg" }, svg);
  }));
}

function chainPlot(svg, chain, W, H) { // state marginals of the first sequence, Viterbi path over them
  const m = chain.marginals[0], path = chain.viterbi ? chain.viterbi[0] : null;
  if (!m || !m.length) return;
  const T = m.length, K = m[0].length, cw = (W - 50) / T, ch = (H - 35) / K;
  m.forEach((row, t) => row.forEach((p, k) => {
    el("rect", { x: 40 + t * cw, y: 10 + k * ch, width: cw + 0.5, height: ch + 0.5, class: "marginal", "fill-opacity": p.toFixed(3) }, svg);
  }));
  if (path) el("polyline", { points: path.map((k, t) => `${40 + (t + 0.5) * cw},${10 + (k + 0.5) * ch}`).join(" "), class: "viterbi" }, svg);
  for (let k = 0; k < K; k++) el("text", { x: 36, y: 10 + (k + 0.6) * ch, "text-anchor": "end", class: "tick" }, svg, k);
  el("text", { x: W - 10, y: H - 8, "text-anchor": "end", class: "tick" }, svg, `sequence 1 of ${chain.marginals.length}: ${T} steps`);
}

function plotFor(d, svg, W, H) {
  const v = d.variable, p = v.parameters, kinds = v.plates.map((x) => x.name);
  if (d.chain && d.chain.marginals) return chainPlot(svg, d.chain, W, H), "state marginals and the most probable path";
  const first = (k) => (p[k] ? p[k] : null);
  if (first("probabilities")) { // Categorical: component weights (mean responsibility)
    const rows = p.probabilities, K = rows[0].length;
    const w = Array.from({ length: K }, (_, k) => rows.reduce((a, r) => a + r[k], 0) / rows.length);
    return bars(svg, w, null, null, W, H), `weights: mean probability of each of ${K} categories over ${rows.length} elements`;
  }
  if (first("concentration")) { // Dirichlet: mean weights (a matrix: one row per element)
    const means = p.mean;
    if (means.length === 1) return bars(svg, means[0], null, null, W, H), "mean weights";
    return hinton(svg, means, W, H), `mean weights, one row per element of ${kinds.join(", ")}`;
  }
  const mean = first("mean");
  if (mean && Array.isArray(mean[0])) { // a vector Gaussian: means (± sd) or a Hinton diagram
    const sd = p.covariance ? p.covariance.map((c) => c.map((row, i) => Math.sqrt(Math.max(row[i], 0)))) : null;
    if (mean.length === 1) return bars(svg, mean[0], sd && sd[0], null, W, H), "means ± 1 sd";
    return hinton(svg, mean, W, H), `Hinton diagram of the means (rows: ${kinds.join(", ")})`;
  }
  if (mean && p.shape && p.rate) { // Gamma
    if (mean.length === 1) {
      const a = p.shape[0], b = p.rate[0], m = a / b, s = Math.sqrt(a) / b;
      const lo = Math.max(0, m - 5 * s), hi = m + 5 * s;
      const f = (x) => (x <= 0 ? 0 : Math.exp(a * Math.log(b) - lgamma(a) + (a - 1) * Math.log(x) - b * x));
      return density(svg, f, lo, hi, gammaQuantiles(a, b, lo, hi), W, H), `Gamma(shape ${fmt(a)}, rate ${fmt(b)})`;
    }
    return bars(svg, mean, null, null, W, H), "means";
  }
  if (mean && p.variance) { // scalar Gaussian: a density, or means ± sd
    const sd = p.variance.map((x) => Math.sqrt(Math.max(x, 0)));
    if (mean.length === 1) {
      const m = mean[0], s = sd[0] || 1e-12;
      const f = (x) => Math.exp(-0.5 * ((x - m) / s) ** 2);
      return density(svg, f, m - 4 * s, m + 4 * s, [m - 1.959964 * s, m + 1.959964 * s], W, H), `Gaussian(mean ${fmt(m)}, sd ${fmt(s)})`;
    }
    if (v.plates.length === 2 && mean.length <= 2500) {
      const c = v.plates[1].size, rows = [];
      for (let i = 0; i < mean.length; i += c) rows.push(mean.slice(i, i + c));
      return hinton(svg, rows, W, H), `Hinton diagram of the means (${kinds.join(" × ")})`;
    }
    return bars(svg, mean.slice(0, 200), sd.slice(0, 200), null, W, H), "means ± 1 sd" + (mean.length > 200 ? " (first 200)" : "");
  }
  return null;
}

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
    const table = document.createElement("table");
    table.className = "numbers";
    for (const [k, vals] of Object.entries(v.parameters)) {
      const tr = table.insertRow();
      tr.insertCell().textContent = k;
      tr.insertCell().textContent = JSON.stringify(vals.slice(0, 6)) + (vals.length > 6 ? ` … (${vals.length})` : "");
    }
    box.appendChild(table);
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
  return api("/api/graph").then((g) => { if (g.nodes) drawGraph(g); });
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
  const ed = $("editor");
  ed.addEventListener("input", () => renderUnderlay([]));
  ed.addEventListener("scroll", () => { $("underlay").scrollTop = ed.scrollTop; $("underlay").scrollLeft = ed.scrollLeft; });
}

start();
