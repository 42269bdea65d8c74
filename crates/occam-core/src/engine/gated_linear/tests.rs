//! The structural check from the index rules' strides (`by_strides`) against the element-by-element
//! check it stands in for; W in the grouped form (`weights`) against the per-element update, a
//! sharded fit's global update, a stochastic step, restarts and predictive draws.

use super::super::qblock::tests::models;
use super::*;

/// On the contract's mixture of Bayesian PCA, the strides show every plate read element by element
/// in the order N, K, D, and each look-up of the element-by-element check agrees.
#[test]
fn strides_show_the_block_layout() {
    let vmp = models::gated().compile().expect("compiles");
    let nodes = &vmp.nodes;
    let y = (0..nodes.len())
        .find(|&i| nodes[i].gated == Some(GatedRole::Data))
        .expect("a gated block");
    let l = Layout::of(nodes, y);
    assert!(by_strides(nodes, &l));
    let (n, k, d) = (l.n, l.k, l.d);
    let ((fw, fx), (mm, mf)) = (slots(&nodes[l.f], l.x), slots(&nodes[l.mean], l.f));
    let (f, mean) = (&nodes[l.f], &nodes[l.mean]);
    for e in 0..n * k * d {
        let (i, c, j) = (e / (k * d), (e / d) % k, e % d);
        assert_eq!(f.parents[fx].at(e), i * k + c);
        assert_eq!(f.parents[fw].at(e), c * d + j);
        assert_eq!(mean.parents[mf].at(e), e);
        assert_eq!(mean.parents[mm].at(e), c * d + j);
        assert_eq!(nodes[y].parents[0].at((i * d + j) * k + c), e);
        assert_eq!(nodes[y].selectors[0].at(i * d + j), i);
    }
    // The same layout read with W's plates swapped is not what the strides show.
    let mut swapped = nodes.clone();
    let rule = swapped[l.mean].parents[mf].rule.clone();
    std::sync::Arc::make_mut(&mut swapped[l.f].model).parents[fw].rule = rule;
    assert!(!by_strides(&swapped, &l));
}

/// W of the contract's mixture of Bayesian PCA (α shared by every row) is a member of the block,
/// per element after its start and with one covariance per component from its first update on;
/// that update gives every row the q of Winn (2.19) element by element from the block's messages
/// to W (`Vmp::update_factorised`, the path W took before): the same φ, u and bound to round-off.
#[test]
fn grouped_w_equals_the_per_element_update() {
    let fitted = || {
        let mut vmp = models::gated().compile().expect("compiles");
        vmp.initialize(5).expect("starts");
        let w = vmp.node("W").expect("W");
        assert!(!vmp.gated_grouped_w(w.0), "W per element after its start");
        for _ in 0..2 {
            for id in vmp.default_order() {
                vmp.update(id).expect("sweeps");
            }
        }
        assert!(vmp.gated_grouped_w(w.0), "W grouped once updated");
        (vmp, w)
    };
    let (mut grouped, w) = fitted();
    let (mut per_element, _) = fitted();
    grouped.update(w).expect("grouped update");
    // The per-element path reads W per element: its arrays expanded from the grouped form.
    let (u, phi) = (
        per_element.moments(w).to_vec(),
        per_element.natural(w).to_vec(),
    );
    let node = &mut per_element.nodes[w.0];
    (node.q.u, node.q.phi) = (u, phi);
    node.lazy = Default::default();
    per_element
        .update_factorised(w.0)
        .expect("per-element update");
    assert!(grouped.gated_grouped_w(w.0));
    assert!(!per_element.gated_grouped_w(w.0));
    let close = |a: &[f64], b: &[f64], what: &str| {
        assert_eq!(a.len(), b.len(), "{what}");
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            assert!(
                (x - y).abs() <= 1e-12 * (1.0 + y.abs()),
                "{what}[{i}]: grouped {x}, per element {y}"
            );
        }
    };
    close(grouped.moments(w), per_element.moments(w), "u");
    close(grouped.natural(w), per_element.natural(w), "φ");
    let (a, b) = (grouped.bound(), per_element.bound());
    assert!(
        (a - b).abs() <= 1e-12 * b.abs(),
        "bound: grouped {a}, per element {b}"
    );
    // A sweep from either state ends at the same q.
    for vmp in [&mut grouped, &mut per_element] {
        for id in vmp.default_order() {
            vmp.update(id).expect("sweeps");
        }
    }
    let (a, b) = (grouped.bound(), per_element.bound());
    assert!(
        (a - b).abs() <= 1e-12 * b.abs(),
        "after a sweep: {a} against {b}"
    );
}

/// Predictive draws expand a grouped W to per-element moments *and* natural parameters
/// (`Vmp::unshare`): a second draw on the same engine reads W's φ per element (it once found the
/// grouped, shorter φ there and indexed past its end), and its draws equal the first's.
#[test]
fn predictive_draws_twice_read_a_grouped_w_per_element() {
    let mut vmp = swept();
    let w = vmp.node("W").expect("W");
    let phi_dense = vmp.natural(w).to_vec();
    let ancestral = vec![false; vmp.nodes.len()];
    let first = vmp
        .sample_predictive(9, 3, &[w], &ancestral)
        .expect("draws");
    assert!(!vmp.gated_grouped_w(w.0), "W per element after the draws");
    assert_eq!(vmp.natural(w), &phi_dense[..], "φ expanded, not drawn over");
    let second = vmp
        .sample_predictive(9, 3, &[w], &ancestral)
        .expect("draws again");
    assert_eq!(first, second);
    let node = &vmp.nodes[w.0];
    // len = q + q² per element, q values drawn per element and draw.
    let q = ((4.0 * node.len as f64 + 1.0).sqrt() as usize - 1) / 2;
    assert_eq!(first[0].len(), 3 * node.n * q);
    assert!(first[0].iter().all(|x| x.is_finite()));
}

/// The contract's mixture of Bayesian PCA after two sweeps from seed 5: W grouped.
fn swept() -> Vmp {
    let mut vmp = models::gated().compile().expect("compiles");
    vmp.initialize(5).expect("starts");
    for _ in 0..2 {
        for id in vmp.default_order() {
            vmp.update(id).expect("sweeps");
        }
    }
    let w = vmp.node("W").expect("W");
    assert!(vmp.gated_grouped_w(w.0), "W grouped once updated");
    vmp
}

/// A grouped W is a global a sharded fit can update (`shard`): its update from the summed
/// messages of the block's rows (`Vmp::update_global`, here one replica holding every row) is
/// the update from the block's own sums, to the bit (the same operations: each message part is
/// formed as `block.rs` sends it and added to the prior once). On ec2a717 the split refused W
/// ("a gated q-block, whose sharded update is not built").
#[test]
fn a_grouped_w_updates_from_the_summed_messages_of_its_rows() {
    let mut local = swept();
    let mut global = swept();
    let w = local.node("W").expect("W");
    let split = global
        .split(None)
        .expect("W is a global a sharded fit updates");
    assert!(!split.is_local(w));
    let messages = global.local_messages(&split, w);
    assert_eq!(messages.len(), global.nodes[w.0].n * global.nodes[w.0].len);
    global
        .update_global(&split, w, messages)
        .expect("global update");
    local.update(w).expect("update");
    assert!(global.gated_grouped_w(w.0));
    assert_eq!(global.nodes[w.0].q, local.nodes[w.0].q);
    assert_eq!(global.bound(), local.bound());
}

/// A stochastic step on a grouped W (`Vmp::step_global`, ρ = 0.3) blends natural parameters per
/// element: W's φ after it is 0.7 φ_old + 0.3 φ̂ of every row (φ̂ the full update), and its
/// moments are those of that φ (per element, the family's own ∂A/∂φ); ρ = 1 is the update.
#[test]
fn a_stochastic_step_blends_a_grouped_w_per_element() {
    let mut stepped = swept();
    let w = stepped.node("W").expect("W");
    let split = stepped.split(None).expect("splits");
    let old = stepped.natural(w).to_vec();
    let mut full = swept();
    full.update(w).expect("update");
    let new = full.natural(w).to_vec();
    let messages = stepped.local_messages(&split, w);
    stepped
        .step_global(&split, w, messages.clone(), 0.3)
        .expect("step");
    let got = stepped.natural(w).to_vec();
    assert_eq!(got.len(), old.len());
    for (e, ((g, o), n)) in got.iter().zip(&old).zip(&new).enumerate() {
        let want = 0.7 * o + 0.3 * n;
        assert!(
            (g - want).abs() <= 1e-13 * (1.0 + want.abs()),
            "φ[{e}]: {g} against {want}"
        );
    }
    // The moments of the blended φ: Σ = (−2Φ₂)⁻¹ and m = Σ φ₁ per row (q = 2).
    let (len, u) = (stepped.nodes[w.0].len, stepped.moments(w).to_vec());
    for (e, (p, ue)) in got.chunks_exact(len).zip(u.chunks_exact(len)).enumerate() {
        let (a, b, c) = (-2.0 * p[2], -(p[3] + p[4]), -2.0 * p[5]);
        let det = a * c - b * b;
        let cov = [c / det, -b / det, -b / det, a / det];
        let m = [cov[0] * p[0] + cov[1] * p[1], cov[2] * p[0] + cov[3] * p[1]];
        let want = [
            m[0],
            m[1],
            m[0] * m[0] + cov[0],
            m[0] * m[1] + cov[1],
            m[1] * m[0] + cov[2],
            m[1] * m[1] + cov[3],
        ];
        for (i, (g, w)) in ue.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-12 * (1.0 + w.abs()),
                "u[{e}][{i}]: {g} against {w}"
            );
        }
    }
    // ρ = 1: the update itself.
    let mut one = swept();
    one.step_global(&split, w, messages, 1.0).expect("step");
    assert_eq!(one.nodes[w.0].q, full.nodes[w.0].q);
}

/// Restarts of a model whose W is grouped after each restart's first sweep: every restart starts
/// W again per element (`Vmp::run_update`; on ec2a717 the second restart read the grouped arrays
/// per element and panicked, slice 36 of 30), and each restart's bound is the bound of a single
/// fit from its seed, to the bit; the kept restart's W is the single fit's.
#[test]
fn restarts_start_a_grouped_w_again() {
    let opts = RunOptions {
        max_iter: 40,
        seed: 5,
        restarts: 3,
        ..RunOptions::default()
    };
    let mut vmp = models::gated().compile().expect("compiles");
    let fit = vmp.run(&opts).expect("restarts run");
    assert_eq!(fit.restart_bounds.len(), 3);
    let w = vmp.node("W").expect("W");
    let mut kept = None;
    for (r, &bound) in fit.restart_bounds.iter().enumerate() {
        let mut single = models::gated().compile().expect("compiles");
        let one = single
            .run(&RunOptions {
                seed: opts.seed + r as u64,
                restarts: 1,
                ..opts.clone()
            })
            .expect("fits");
        assert_eq!(one.bound, bound, "restart {r}");
        if r == fit.best_restart {
            kept = Some(single);
        }
    }
    let single = kept.expect("a kept restart");
    assert_eq!(fit.bound, single.bound());
    assert_eq!(vmp.moments(w), single.moments(w));
    assert_eq!(vmp.natural(w), single.natural(w));
}

/// Predictive draws of a grouped W follow q(W): 2 × 3000 draws (seeds 9 and 10, on one engine,
/// the second after the first has expanded W per element) have each row's mean m_kd and each
/// component's covariance Σ_k (pooled over its D = 3 rows) read from the grouped state, within
/// 4.5 Monte-Carlo standard errors: sd(mean) = √(Σ_ii / S), sd(cov_ij) = √((Σ_ii Σ_jj + Σ_ij²)
/// / (S·D)) with S = 6000 draws (27 checks: a false alarm at 4.5 sd has probability ≈ 2·10⁻⁴,
/// and the draws are seeded). On ec2a717 the second batch read W's grouped φ per element.
#[test]
fn predictive_draws_of_a_grouped_w_have_its_mean_and_covariance() {
    let mut vmp = swept();
    let w = vmp.node("W").expect("W");
    let l = match vmp.block_of(w.0) {
        Some(Block::Gated(b)) => b.layout.clone(),
        _ => panic!("W is in the gated block"),
    };
    let (k, q, d) = (l.k, l.q, l.d);
    let (means, covs) = {
        let u = &vmp.nodes[w.0].q.u;
        (u[..k * d * q].to_vec(), u[k * d * q..].to_vec())
    };
    let ancestral = vec![false; vmp.nodes.len()];
    let per = 3000;
    let mut draws = Vec::new();
    for seed in [9, 10] {
        let out = vmp
            .sample_predictive(seed, per, &[w], &ancestral)
            .expect("draws");
        draws.extend(out.into_iter().next().expect("W's draws"));
    }
    let s = 2 * per;
    assert_eq!(draws.len(), s * k * d * q);
    let draw = |t: usize, row: usize| &draws[(t * k * d + row) * q..(t * k * d + row + 1) * q];
    for c in 0..k {
        let cov = &covs[c * q * q..(c + 1) * q * q];
        let mut pooled = vec![0.0; q * q];
        for j in 0..d {
            let row = c * d + j;
            let m = &means[row * q..(row + 1) * q];
            let mut mean = vec![0.0; q];
            for t in 0..s {
                for (a, x) in draw(t, row).iter().enumerate() {
                    mean[a] += x / s as f64;
                }
            }
            for a in 0..q {
                let sd = (cov[a * q + a] / s as f64).sqrt();
                assert!(
                    (mean[a] - m[a]).abs() <= 4.5 * sd,
                    "mean of w[{c},{j}][{a}]: {} against {} (sd {sd:e})",
                    mean[a],
                    m[a]
                );
            }
            for t in 0..s {
                let x = draw(t, row);
                for a in 0..q {
                    for b in 0..q {
                        pooled[a * q + b] += (x[a] - m[a]) * (x[b] - m[b]) / (s * d) as f64;
                    }
                }
            }
        }
        for a in 0..q {
            for b in a..q {
                let want = cov[a * q + b];
                let var = cov[a * q + a] * cov[b * q + b] + want * want;
                let sd = (var / (s * d) as f64).sqrt();
                let got = pooled[a * q + b];
                assert!(
                    (got - want).abs() <= 4.5 * sd,
                    "Σ_{c}[{a},{b}]: {got} against {want} (sd {sd:e})"
                );
            }
        }
    }
}
