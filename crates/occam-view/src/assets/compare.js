// occam view: the compare panel (loaded with app.js, which defines el, fmt and api). The
// editor's model over a plate's sizes, by the evidence methods asked for: each method's
// ln p(D) per model on one chart, and a table with the posterior model probabilities.
"use strict";

function runCompare() {
  const plate = $("compare-plate").value.trim();
  const methods = $("compare-methods").value.split(",").map((m) => m.trim()).filter((m) => m);
  const body = { methods };
  if (plate) body.plate = plate;
  $("compare-table").innerHTML = "<tr><td>comparing…</td></tr>";
  return api("/api/compare", body).then(showCompare);
}

function showCompare(r) {
  const table = $("compare-table"), svg = $("compare-chart");
  table.innerHTML = "";
  svg.innerHTML = "";
  if (r.error) { table.insertRow().insertCell().textContent = r.error; return; }
  const methods = r.models[0].evidence.map((e) => e.method);
  const head = table.insertRow();
  ["model", ...methods.flatMap((m) => [`${m}: ln p(D)`, "P(model)"])].forEach((h) => { head.insertCell().textContent = h; });
  r.models.forEach((m, i) => {
    const tr = table.insertRow();
    tr.dataset.model = i;
    tr.insertCell().textContent = m.model.split("/").pop();
    for (const e of m.evidence) {
      const c = tr.insertCell();
      c.textContent = e.not_applicable ? "n/a" : fmt(e.log_evidence);
      c.dataset.value = e.log_evidence === undefined ? "" : e.log_evidence;
      const p = tr.insertCell();
      p.textContent = e.probability === null || e.probability === undefined ? "—" : fmt(e.probability);
      p.dataset.value = e.probability === null || e.probability === undefined ? "" : e.probability;
      if (r.best[e.method] === m.model) c.className = "best";
    }
  });
  // One line per method: ln p(D) against the models in order.
  const W = 520, H = 200, L = 70, R = 10, T = 10, B = 30, n = r.models.length;
  const vals = r.models.flatMap((m) => m.evidence.map((e) => e.log_evidence).filter((v) => v !== undefined));
  let lo = Math.min(...vals), hi = Math.max(...vals);
  if (hi - lo < 1e-9) { lo -= 1; hi += 1; }
  const sx = (i) => L + (W - L - R) * (n > 1 ? i / (n - 1) : 0.5), sy = (v) => T + (H - T - B) * (1 - (v - lo) / (hi - lo));
  el("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, class: "axis" }, svg);
  el("text", { x: L - 4, y: T + 8, "text-anchor": "end", class: "tick" }, svg, fmt(hi));
  el("text", { x: L - 4, y: H - B, "text-anchor": "end", class: "tick" }, svg, fmt(lo));
  r.models.forEach((m, i) => el("text", { x: sx(i), y: H - 10, "text-anchor": "middle", class: "tick" }, svg, (m.model.match(/\[([^\]]*)\]\s*$/) || [, i + 1])[1]));
  methods.forEach((name, j) => {
    const pts = r.models.map((m, i) => [i, m.evidence[j].log_evidence]).filter(([, v]) => v !== undefined);
    el("polyline", { points: pts.map(([i, v]) => `${sx(i)},${sy(v)}`).join(" "), class: `series c${j % 6}`, "data-method": name }, svg);
    pts.forEach(([i, v]) => el("circle", { cx: sx(i), cy: sy(v), r: 3, class: `c${j % 6}` }, svg));
    el("text", { x: L + 6, y: T + 14 + 12 * j, class: `legend c${j % 6}` }, svg, name);
  });
}
