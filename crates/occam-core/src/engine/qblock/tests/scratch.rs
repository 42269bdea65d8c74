//! Independent references for the contract test: a factorised node's bound term element by
//! element from its definition, and ln p(data) of the fixed chain and tree models.

use super::super::super::*;
use super::super::Block;
use super::models::{HMM, LDS, TREE};
use crate::special::LN_2PI;

/// Winn (2.34)–(2.36) for node m, element by element: Σ_e Σ_q w_eq (⟨φ(pa_q)⟩·u_e − ⟨A(pa_q)⟩) plus
/// each element's own part, from per-element arrays (a shared covariance's per-element moments, a
/// linear kernel's dot node given its factor's moments, its data's u(y) and f(y)), with no cached
/// sum, run, group or kernel. `None` for chains, tree-block members and sampled nodes.
pub(super) fn term(vmp: &Vmp, m: usize) -> Option<f64> {
    let node = &vmp.nodes[m];
    if let Some(Block::Gated(b)) = vmp.block_of(m) {
        if m != b.layout.w {
            return Some(gated_term(vmp, &b.layout, m));
        }
        // W kept with one covariance per component: element by element below, from its rows'
        // per-element arrays.
    }
    if node.block.is_some() || !matches!(node.body, Body::Stochastic(_)) {
        return None;
    }
    if let Some(Block::Sampled(_)) = vmp.block_of(m) {
        // An estimate: checked against quadrature instead (crates/occam/tests/it/sampled.rs).
        return None;
    }
    let mut nodes = vmp.nodes.clone();
    for (i, n) in nodes.iter_mut().enumerate() {
        if linear::shared::is_shared(&vmp.nodes[i]) || vmp.gated_grouped_w(i) {
            let id = NodeId(i);
            let a = n.q.a.clone();
            assert_eq!(a.len(), n.n, "one A per element in the shared form");
            n.q = NodeState {
                phi: vmp.natural(id).to_vec(),
                u: vmp.moments(id).to_vec(),
                a,
            };
        } else if n.q.u.is_empty() && matches!(n.body, Body::Constant) {
            // Covariates kept as values only (`linear` points, `logit`): their fixed moments.
            n.q.u = vmp.moments(NodeId(i)).to_vec();
        } else if vmp.serves_data(i) {
            n.q.u = vec![0.0; n.n * n.len];
            n.q.a = vec![0.0; n.n];
            n.observed_state();
        }
    }
    for i in 0..nodes.len() {
        let Body::Deterministic(f) = &nodes[i].body else {
            continue;
        };
        if nodes[i].joint_gaussian || nodes[i].gated.is_some() || vmp.softmax_joint_of(i).is_some()
        {
            // Its moments are the joint q's, which its parents' marginals do not give (a gated
            // block's dot and sum keep none: its members' terms are `gated_term`'s).
            continue;
        }
        let f = f.clone();
        let node = &nodes[i];
        let mut u = vec![0.0; node.n * node.len];
        let mut buf = Vec::new();
        for e in 0..node.n {
            let pa = gather(&nodes, node, e, &mut buf);
            f.moments(
                &pa[..node.parents.len()],
                &mut u[e * node.len..(e + 1) * node.len],
            );
        }
        nodes[i].q.u = u;
    }
    struct Scratch<'a>(&'a [Node], &'a Node);
    impl DistVisitor for Scratch<'_> {
        type Output = f64;
        fn visit<D: ExpFamily>(self, d: &D) -> f64 {
            let (nodes, c) = (self.0, self.1);
            let (mut phi, mut buf, mut total) = (vec![0.0; c.len], Vec::new(), 0.0);
            for e in (0..c.n).filter(|&e| c.participates(e)) {
                let u = &c.q.u[e * c.len..(e + 1) * c.len];
                for q in 0..c.configs {
                    let w = config_weight(nodes, c, e, q);
                    if w == 0.0 {
                        continue;
                    }
                    let pa = gather(nodes, c, e * c.configs + q, &mut buf);
                    let a = d.prior(&pa[..c.parents.len()], &mut phi);
                    total += w * (natural_dot(&phi, u) - a);
                }
                total += own_term(c, e, &mut Vec::new());
            }
            total
        }
    }
    let node = &nodes[m];
    let own = node
        .dist()
        .expect("stochastic")
        .visit(Scratch(&nodes, node));
    Some(own + joint_gap(vmp, m) + softmax_gap(vmp, m))
}

/// For the weights of a softmax q-block, Σ_g (H[q(v_g)] − Σ_k H[q(w_gk)]) from the joint
/// covariance the engine reports, by LU determinants; 0 for every other node.
fn softmax_gap(vmp: &Vmp, m: usize) -> f64 {
    let Some(Block::SoftmaxJoint(_)) = vmp.block_of(m) else {
        return 0.0;
    };
    let Some(cov) = vmp.joint_covariance(NodeId(m)) else {
        return 0.0;
    };
    let MomentKind::Gaussian { d } = vmp.nodes[m].kind else {
        unreachable!("a Gaussian vector")
    };
    let mut gap = 0.0;
    let groups = vmp.nodes[m].n * d * vmp.nodes[m].n * d / cov.len();
    let j = vmp.nodes[m].n * d / groups;
    for s in cov.chunks_exact(j * j) {
        let (_, log_det) = crate::linalg::inverse_and_log_det(s, j).expect("a covariance");
        gap += 0.5 * log_det;
        for c in 0..j / d {
            let block: Vec<f64> = (0..d * d)
                .map(|ab| s[(c * d + ab / d) * j + c * d + ab % d])
                .collect();
            let (_, ld) = crate::linalg::inverse_and_log_det(&block, d).expect("a covariance");
            gap -= 0.5 * ld;
        }
    }
    gap
}

/// For the first member of a Gaussian q-block, Σ_n (H[q(x_n)] − Σ_i H[q(x_ni)]) from x's joint
/// moments (Σ_n = ⟨x xᵀ⟩ − ⟨x⟩⟨x⟩ᵀ); 0 for every other node.
fn joint_gap(vmp: &Vmp, m: usize) -> f64 {
    let Some(Block::JointGaussian(_)) = vmp.block_of(m) else {
        return 0.0;
    };
    let x = vmp.nodes[m].children[0].0;
    let sources: Vec<usize> = vmp.nodes[x]
        .parents
        .iter()
        .map(|e| match e.source {
            Source::Node(p) => p,
            Source::Const(_) => unreachable!(),
        })
        .collect();
    if sources.iter().min() != Some(&m) {
        return 0.0;
    }
    let (node, d) = (&vmp.nodes[x], sources.len());
    let mut gap = 0.0;
    for u in node.q.u.chunks_exact(node.len) {
        let cov: Vec<f64> = (0..d * d).map(|c| u[d + c] - u[c / d] * u[c % d]).collect();
        let (_, log_det) = crate::linalg::inverse_and_log_det(&cov, d).expect("a covariance");
        gap += 0.5 * log_det - 0.5 * (0..d).map(|i| cov[i * d + i].ln()).sum::<f64>();
    }
    gap
}

/// ln N(x; m, 1/λ).
fn ln_normal(x: f64, m: f64, lam: f64) -> f64 {
    0.5 * (lam.ln() - LN_2PI - lam * (x - m) * (x - m))
}

/// ln Σ exp.
fn log_sum_exp(v: &[f64]) -> f64 {
    let top = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    top + v.iter().map(|x| (x - top).exp()).sum::<f64>().ln()
}

/// ln p(x) of the fixed HMM, by enumerating its 2⁵ paths.
pub(super) fn hmm_evidence() -> f64 {
    let (p0, a, mu, lam, x) = HMM;
    let steps = x.len();
    let paths: Vec<f64> = (0..1usize << steps)
        .map(|bits| {
            let z = |t: usize| (bits >> t) & 1;
            let mut lp = p0[z(0)].ln() + ln_normal(x[0], mu[z(0)], lam);
            for t in 1..steps {
                lp += a[z(t - 1) * 2 + z(t)].ln() + ln_normal(x[t], mu[z(t)], lam);
            }
            lp
        })
        .collect();
    log_sum_exp(&paths)
}

/// ln p(y) of the fixed LDS: y ~ N(μ, C + I/r) with μ_t = aᵗ m0, Var x_0 = 1/λ0,
/// Var x_t = a² Var x_{t−1} + 1/τ and Cov(x_s, x_t) = a^{t−s} Var x_s (s ≤ t).
pub(super) fn lds_evidence() -> f64 {
    let (m0, lam0, a, tau, r, y) = LDS;
    let steps = y.len();
    let mut var = vec![1.0 / lam0];
    for t in 1..steps {
        var.push(a * a * var[t - 1] + 1.0 / tau);
    }
    let mut cov = vec![0.0; steps * steps];
    for s in 0..steps {
        for t in s..steps {
            let v = a.powi((t - s) as i32) * var[s];
            cov[s * steps + t] = v;
            cov[t * steps + s] = v;
        }
        cov[s * steps + s] += 1.0 / r;
    }
    let (inv, log_det) = crate::linalg::inverse_and_log_det(&cov, steps).unwrap();
    let dev: Vec<f64> = (0..steps).map(|t| y[t] - a.powi(t as i32) * m0).collect();
    let quad: f64 = (0..steps)
        .flat_map(|s| (0..steps).map(move |t| (s, t)))
        .map(|(s, t)| dev[s] * inv[s * steps + t] * dev[t])
        .sum();
    -0.5 * (steps as f64 * LN_2PI + log_det + quad)
}

/// ln p(x = 2) of the fixed tree model: Σ_a Σ_b p(a) p(b | a) p(x = 2 | b).
pub(super) fn tree_evidence() -> f64 {
    let (tb, tx) = TREE;
    let pa = [0.3, 0.7];
    let mut total = 0.0;
    for a in 0..2 {
        for b in 0..2 {
            total += pa[a] * tb[a * 2 + b] * tx[b * 3 + 2];
        }
    }
    total.ln()
}

/// A gated block's member term point by point from its definition (module `gated_linear`), with
/// no sums and no products: s: Σ r (⟨ln π⟩ − ln r); x: Σ r (⟨ln N(x | 0, I)⟩ + H[N(m, Σ)]); y:
/// Σ r ⟨ln N(y_n | W_k x + μ_k, τ⁻¹ I)⟩, E‖y − W x − μ‖² expanded coordinate by coordinate.
fn gated_term(vmp: &Vmp, l: &super::super::gated_linear::Layout, m: usize) -> f64 {
    let (n, k, q, d) = (l.n, l.k, l.q, l.d);
    let nodes = &vmp.nodes;
    let r = &nodes[l.s].q.u;
    let xu = &nodes[l.x].q.u;
    let cov = |c: usize| &xu[n * k * q + c * q * q..n * k * q + (c + 1) * q * q];
    let mean = |i: usize, c: usize| &xu[(i * k + c) * q..(i * k + c + 1) * q];
    let mut total = 0.0;
    if m == l.s {
        let ln_pi = match &nodes[l.s].parents[0].source {
            Source::Node(p) => nodes[*p].q.u.clone(),
            Source::Const(v) => v.clone(),
        };
        for i in 0..n {
            for c in 0..k {
                let ri = r[i * k + c];
                if ri > 0.0 {
                    total += ri * (ln_pi[c] - ri.ln());
                }
            }
        }
    } else if m == l.x {
        for c in 0..k {
            let s = cov(c);
            let (_, log_det) = crate::linalg::inverse_and_log_det(s, q).expect("a covariance");
            let entropy = 0.5 * q as f64 * (1.0 + LN_2PI) + 0.5 * log_det;
            for i in 0..n {
                let xx: f64 = (0..q).map(|a| mean(i, c)[a].powi(2) + s[a * q + a]).sum();
                let prior = -0.5 * q as f64 * LN_2PI - 0.5 * xx;
                total += r[i * k + c] * (prior + entropy);
            }
        }
    } else if m == l.y {
        let tau = match &nodes[l.y].parents[1].source {
            Source::Node(p) => nodes[*p].q.u.clone(),
            Source::Const(v) => v.clone(),
        };
        let (wu, mu) = (vmp.moments(NodeId(l.w)), &nodes[l.mu].q.u);
        let y = &nodes[l.y].data;
        let len = q + q * q;
        for i in 0..n {
            for c in 0..k {
                let (xm, s) = (mean(i, c), cov(c));
                let mut e2 = 0.0;
                for j in 0..d {
                    let row = &wu[(c * d + j) * len..(c * d + j + 1) * len];
                    let (mj, mj2) = (mu[2 * (c * d + j)], mu[2 * (c * d + j) + 1]);
                    // E(wᵀx) and E(wᵀx)² = tr(⟨w wᵀ⟩⟨x xᵀ⟩).
                    let wx: f64 = (0..q).map(|a| row[a] * xm[a]).sum();
                    let mut wx2 = 0.0;
                    for a in 0..q {
                        for b in 0..q {
                            wx2 += row[q + a * q + b] * (xm[a] * xm[b] + s[b * q + a]);
                        }
                    }
                    let yv = y[i * d + j];
                    e2 += yv * yv + wx2 + mj2 - 2.0 * yv * wx - 2.0 * yv * mj + 2.0 * wx * mj;
                }
                total += r[i * k + c] * (0.5 * d as f64 * (tau[1] - LN_2PI) - 0.5 * tau[0] * e2);
            }
        }
    }
    total
}
