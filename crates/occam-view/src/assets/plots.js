// occam view: the posterior plots (loaded before app.js, which defines el, fmt and api).
"use strict";

function axes(svg, W, H) {
  el("line", { x1: 40, y1: H - 25, x2: W - 10, y2: H - 25, class: "axis" }, svg);
}

function density(svg, f, lo, hi, interval, W, H) {
  svg.dataset.plot = "density";
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

function bars(svg, values, errors, labels, W, H, marked) {
  svg.dataset.plot = "bars";
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
    el("rect", { x: x + bw * 0.15, y: Math.min(sy(v), sy(0)), width: bw * 0.7, height: Math.abs(sy(v) - sy(0)), class: marked && marked[i] ? "bar marked" : "bar" }, svg);
    if (errors) el("line", { x1: x + bw / 2, x2: x + bw / 2, y1: sy(v - errors[i]), y2: sy(v + errors[i]), class: "errbar" }, svg);
    if (n <= 30) el("text", { x: x + bw / 2, y: H - 10, "text-anchor": "middle", class: "tick" }, svg, labels ? labels[i] : i);
  });
  el("text", { x: 36, y: sy(hi) + 4, "text-anchor": "end", class: "tick" }, svg, fmt(hi));
  el("text", { x: 36, y: sy(lo), "text-anchor": "end", class: "tick" }, svg, fmt(lo));
}

function hinton(svg, rows, W, H) { // squares of area ∝ |value|, white positive, black negative
  svg.dataset.plot = "hinton";
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
  svg.dataset.plot = "chain";
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
  if (d.ard) { // an ARD precision: the relevance of each column it switches on or off
    const a = d.ard;
    bars(svg, a.relevance, null, null, W, H, a.effective);
    svg.dataset.plot = "relevance";
    return `ARD relevances over ${a.plate} (of ${a.weights.join(", ")}): ${a.effective_dimension} of ${a.relevance.length} effective (dark)`;
  }
  if (isWishart2(v)) return wishartPlot(svg, d, {}, W, H); // redrawn around its means by showWishart
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
    if (v.plates.length === 2) return hinton(svg, byRows(mean, v.plates[1].size), W, H), `Hinton diagram of the means (${kinds.join(" × ")})`;
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
      return hinton(svg, byRows(mean, v.plates[1].size), W, H), `Hinton diagram of the means (${kinds.join(" × ")})`;
    }
    return bars(svg, mean.slice(0, 200), sd.slice(0, 200), null, W, H), "means ± 1 sd" + (mean.length > 200 ? " (first 200)" : "");
  }
  return null;
}

function byRows(flat, c) { // a row-major [R, C] array as R rows
  const rows = [];
  for (let i = 0; i < flat.length; i += c) rows.push(flat.slice(i, i + c));
  return rows;
}

// ---------------------------------------------------------------- a mixture over 2-D data
// The mixture `clicked` belongs to, read off the graph: an observed node over two plates, the
// last of size 2, with an index parent (the assignments) and two other parents over [K, 2]
// (means and diagonal precisions). `null` when `clicked` is no part of one.
function mixtureOf(g, clicked) {
  if (!g) return null;
  for (const x of g.nodes.filter((n) => n.kind === "observed" && n.plates.length === 2)) {
    const into = g.edges.filter((e) => e.to === x.name);
    const index = into.find((e) => e.index), params = into.filter((e) => !e.index).map((e) => e.from);
    if (!index || params.length !== 2) continue;
    if ([x.name, index.from, ...params].includes(clicked)) return { data: x.name, index: index.from, params };
  }
  return null;
}

// Draws the data's scatter with each used component's ellipse (mean ± 2 sd along each axis,
// sd = 1/sqrt(E[precision])); returns false when the posteriors are not of that shape.
function ellipses(svg, posts, W, H) {
  const [xd, zd, ...ps] = posts.map((d) => d.variable);
  const mean = ps.find((v) => v.distribution === "Gaussian"), prec = ps.find((v) => v.distribution === "Gamma");
  if (!mean || !prec || xd.plates[1].size !== 2 || mean.plates.length !== 2 || mean.plates[1].size !== 2) return false;
  const pts = byRows(xd.parameters.mean, 2), mu = byRows(mean.parameters.mean, 2), tau = byRows(prec.parameters.mean, 2);
  const probs = zd.parameters.probabilities || [];
  const K = mu.length, weight = Array.from({ length: K }, (_, k) => probs.reduce((a, r) => a + (r[k] || 0), 0) / (probs.length || 1));
  const used = [...Array(K).keys()].filter((k) => weight[k] > 1e-3);
  const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
  for (const k of used) { xs.push(mu[k][0] + 2 / Math.sqrt(tau[k][0]), mu[k][0] - 2 / Math.sqrt(tau[k][0])); ys.push(mu[k][1] + 2 / Math.sqrt(tau[k][1]), mu[k][1] - 2 / Math.sqrt(tau[k][1])); }
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const s = Math.min((W - 20) / (x1 - x0 || 1), (H - 20) / (y1 - y0 || 1));
  const sx = (x) => 10 + (x - x0) * s, sy = (y) => H - 10 - (y - y0) * s;
  svg.dataset.plot = "ellipses";
  for (const [a, b] of pts) el("circle", { cx: sx(a).toFixed(1), cy: sy(b).toFixed(1), r: 1.5, class: "point" }, svg);
  for (const k of used) {
    el("ellipse", { cx: sx(mu[k][0]), cy: sy(mu[k][1]), rx: 2 * s / Math.sqrt(tau[k][0]), ry: 2 * s / Math.sqrt(tau[k][1]), class: "component", "data-component": k, "data-weight": weight[k] }, svg);
    el("text", { x: sx(mu[k][0]), y: sy(mu[k][1]), "text-anchor": "middle", class: "tick" }, svg, `${k}: ${fmt(weight[k])}`);
  }
  return used.length;
}
