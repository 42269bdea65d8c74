// occam view: the posterior of a 2-D Wishart precision as covariance ellipses (loaded after
// plots.js, before app.js, which defines el, fmt and api).
//
// q(Λ) = Wishart(n, V) in the report's parametrisation (`dof` n, `rate` V: ⟨Λ⟩ = n V⁻¹, the
// `mean` of fit --json). Two covariances are drawn for each element in use, both as the
// contour at 2 sd (the points x − m with (x − m)ᵀ Σ⁻¹ (x − m) = 4):
//  - solid: ⟨Λ⟩⁻¹ = V / n, the covariance at the posterior mean precision (the inverse of the
//    report's `mean`);
//  - dashed: E[Λ⁻¹] = V / (n − D − 1) (D = 2; the mean of the inverse-Wishart, finite for
//    n > 3), the posterior mean covariance. It is the solid one scaled by n / (n − 3): the
//    gap between the two shows how uncertain the precision still is.
// Centred on the means of the Gaussian that reads Λ as its precision (and over its data's
// scatter) when the graph shows one; on the origin otherwise.
"use strict";

function inv2(m) { // the inverse of a symmetric 2 × 2 [[a, b], [b, c]]
  const [a, b, c] = [m[0][0], m[0][1], m[1][1]], det = a * c - b * b;
  return [[c / det, -b / det], [-b / det, a / det]];
}

// The semi-axes (at k sd) and the angle (degrees, counter-clockwise from the first axis) of
// the ellipse of the covariance [[a, b], [b, c]].
function axes2(s, k) {
  const [a, b, c] = [s[0][0], s[0][1], s[1][1]];
  const mid = (a + c) / 2, r = Math.hypot((a - c) / 2, b);
  return { rx: k * Math.sqrt(Math.max(mid + r, 0)), ry: k * Math.sqrt(Math.max(mid - r, 0)), deg: 90 / Math.PI * Math.atan2(2 * b, a - c) };
}

function isWishart2(v) {
  const p = v.parameters;
  return v.distribution === "Wishart" && p.dof && p.rate && p.mean && p.mean.length > 0 && p.mean[0].length === 2;
}

// The observed child reading `name` (a precision) and its other parents: {data, index, means}.
function precisionChildOf(g, name) {
  if (!g) return null;
  for (const e of g.edges.filter((x) => x.from === name && !x.index)) {
    const y = g.nodes.find((n) => n.name === e.to);
    if (!y || y.kind !== "observed") continue;
    const into = g.edges.filter((x) => x.to === y.name);
    const index = into.find((x) => x.index);
    return { data: y.name, index: index ? index.from : null, means: into.filter((x) => !x.index && x.from !== name).map((x) => x.from) };
  }
  return null;
}

const rows2 = (m) => (Array.isArray(m[0]) ? m : byRows(m, 2));

// Draws the ellipses of the Wishart posterior `d` into `svg` (see the top of this file), with
// `ctx` the posteriors of its observed child, the child's index and mean parents (each may be
// missing); returns the caption.
function wishartPlot(svg, d, ctx, W, H) {
  const p = d.variable.parameters, K = p.mean.length;
  const data = ctx.data && ctx.data.variable.parameters.mean ? rows2(ctx.data.variable.parameters.mean) : [];
  const meanPost = (ctx.means || []).find((x) => { const m = x.variable.parameters.mean; return m && rows2(m).length === K && rows2(m)[0].length === 2; });
  const meanVar = meanPost ? meanPost.variable : null;
  const centre = meanVar ? rows2(meanVar.parameters.mean) : Array.from({ length: K }, () => [0, 0]);
  const probs = ctx.index ? ctx.index.variable.parameters.probabilities || [] : [];
  const weight = Array.from({ length: K }, (_, k) => (probs.length && probs[0].length === K ? probs.reduce((a, r) => a + r[k], 0) / probs.length : 1 / K));
  const used = [...Array(K).keys()].filter((k) => K === 1 || !probs.length || weight[k] > 1e-3);
  const shapes = [];
  for (const k of used) {
    const n = p.dof[k], atMean = inv2(p.mean[k]);
    shapes.push({ k, kind: "inverse-mean", cov: atMean });
    if (n > 3) shapes.push({ k, kind: "mean-inverse", cov: p.rate[k].map((r) => r.map((x) => x / (n - 3))) });
  }
  const xs = data.map((q) => q[0]), ys = data.map((q) => q[1]);
  for (const s of shapes) { // the bounding box of the ellipse at 2 sd: ± 2 √Σ_ii
    const [m, hx, hy] = [centre[s.k], 2 * Math.sqrt(s.cov[0][0]), 2 * Math.sqrt(s.cov[1][1])];
    xs.push(m[0] - hx, m[0] + hx); ys.push(m[1] - hy, m[1] + hy);
  }
  const [x0, x1, y0, y1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const sc = Math.min((W - 20) / (x1 - x0 || 1), (H - 20) / (y1 - y0 || 1));
  const sx = (x) => 10 + (x - x0) * sc, sy = (y) => H - 10 - (y - y0) * sc;
  svg.innerHTML = "";
  svg.dataset.plot = "wishart";
  svg.dataset.centred = meanVar ? "means" : "origin";
  for (const [a, b] of data) el("circle", { cx: sx(a).toFixed(1), cy: sy(b).toFixed(1), r: 1.5, class: "point" }, svg);
  for (const s of shapes) {
    const { rx, ry, deg } = axes2(s.cov, 2), [cx, cy] = [sx(centre[s.k][0]), sy(centre[s.k][1])];
    el("ellipse", {
      cx, cy, rx: rx * sc, ry: ry * sc, transform: `rotate(${-deg} ${cx} ${cy})`,
      class: s.kind === "inverse-mean" ? "component" : "component spread",
      "data-component": s.k, "data-kind": s.kind, "data-weight": weight[s.k],
      "data-cov": JSON.stringify([s.cov[0][0], s.cov[0][1], s.cov[1][1]]),
    }, svg);
  }
  for (const k of used) el("text", { x: sx(centre[k][0]), y: sy(centre[k][1]), "text-anchor": "middle", class: "tick" }, svg, probs.length ? `${k}: ${fmt(weight[k])}` : `${k}`);
  const where = meanVar ? `around the means of ${meanPost.name}` + (data.length ? `, over ${ctx.data.name}` : "") : "around the origin";
  return `covariance at 2 sd of ${used.length} of ${K} elements${probs.length ? " in use (weight > 0.001)" : ""}, ${where}: solid ⟨Λ⟩⁻¹ = rate / dof, dashed E[Λ⁻¹] = rate / (dof − 3)`;
}

// Replaces the clicked Wishart's plot by its ellipses once the child's posteriors are in.
function showWishart(svg, cap, d) {
  const ctx = precisionChildOf(graph, d.name);
  const names = ctx ? [ctx.data, ctx.index, ...ctx.means] : [];
  Promise.all(names.map((n) => (n ? api("/api/posterior/" + encodeURIComponent(n)) : Promise.resolve(null)))).then((posts) => {
    if (!svg.isConnected) return; // another node was clicked meanwhile
    const ok = (x) => (x && !x.error ? x : null);
    const got = { data: ok(posts[0]), index: ok(posts[1]), means: posts.slice(2).filter(ok) };
    cap.textContent = wishartPlot(svg, d, got, 480, 220);
  });
}
