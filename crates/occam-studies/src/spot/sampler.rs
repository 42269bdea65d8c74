//! The importance-sampled node I_j (Winn §4.4): S joint draws of its four parents
//! θ = (c_x, c_y, r_x, r_y), weights (4.18)–(4.19), the adopted moments (4.20), S_eff, ln Ẑ
//! and the intensity (4.28).
//!
//! The target is q(θ) ∝ exp(Σ_d φ_d·[θ_d, θ_d²]) · P(I_j | θ), φ_d the natural parameters of
//! R_d (4.16): θ_d's posterior without I_j's message, i.e. N(⟨μ_d⟩, 1/⟨γ_d⟩). The first pass
//! proposes from ∏_d R_d as Winn does, so its weights are (4.19). A spot's likelihood is sharp
//! (a one-pixel shift moves a dozen pixels across the boundary), so R alone gives S_eff of a few
//! samples out of thousands; the passes then adapt the proposal exactly as the engine's
//! importance-sampled nodes do (`occam-core`'s `engine/sampled/estimate.rs`, which is scalar and
//! private, hence this 4-D copy of its rule): while S_eff < target, up to `REFITS` times, the
//! Student-t (ν = 5) with the weighted draws' mean and full 4 × 4 covariance
//! ([`super::proposal`]: c_d and r_d are correlated and the likelihood piecewise constant; the
//! engine's scalar rule is a Gaussian with twice the variance; every direction's sd at least a
//! tenth of the previous one's), kept if it raises S_eff, else the
//! kept proposal widened threefold if that does (the engine stops there instead: a Gaussian
//! narrower than a flat stretch of the target gives its tail draws the largest weights, and the
//! moment refit narrows it further); then S is doubled until S_eff ≥ target or S =
//! cap. With a proposal g other than R the weight is exp(φ·u) P(I | θ) / g(θ).
//!
//! Unlike the engine, the previous sweep's kept proposal is tried after R's pass (when R's
//! S_eff is below target) and the better one adapted: from R alone the refits often stall at an
//! S_eff of a few (the posterior is a hundred times narrower than R in each of four axes) and S
//! doubles to the cap.
//!
//! Draws are keyed by (seed, spot, pass) and not by sweep (common random numbers): the same
//! inputs give the same bits, and successive sweeps differ only through the proposal.

use occam_core::dist::Sampling;
use occam_core::Rng;
use rand::{Rng as _, SeedableRng};
use rand_distr::{ChiSquared, StandardNormal};

use super::polya::SubImage;
pub use super::proposal::Proposal;

/// Refits of the proposal at most (each kept only if it raises S_eff); the engine has 8.
const REFITS: u64 = 16;

/// What one sampling update gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// ⟨θ_d⟩ under q (4.20).
    pub m1: [f64; 4],
    /// ⟨θ_d²⟩ under q (4.20).
    pub m2: [f64; 4],
    /// ⟨θ_d θ_e⟩ under q (its diagonal is `m2`): the proposal refit's covariance.
    pub cross: [[f64; 4]; 4],
    /// ln Ẑ = ln ∫ exp(φ·u) P(I | θ) dθ.
    pub log_z: f64,
    /// S of the kept pass.
    pub samples: usize,
    /// Its S_eff = 1/Σ w².
    pub s_eff: f64,
    /// S_eff of the first pass, proposed from R itself (Winn's (4.16)–(4.19) alone).
    pub s_eff_winn: f64,
    /// ⟨E⟩ and ⟨E²⟩ of the spot's mean pixel intensity (4.28), over the draws whose ellipse holds
    /// a pixel (NaN if none does).
    pub intensity: [f64; 2],
    /// The proposal of the kept pass.
    pub proposal: Proposal,
}

fn key(seed: u64, spot: usize, pass: u64) -> Rng {
    let k = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add((spot as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9))
        .wrapping_add(pass.wrapping_mul(0x94D0_49BB_1331_11EB));
    Rng::seed_from_u64(k)
}

fn pass(
    phi: &[[f64; 2]; 4],
    img: &SubImage,
    g: &Proposal,
    mut rng: Rng,
    s: usize,
) -> Option<Estimate> {
    let (mut scratch, mut touched) = (Vec::new(), Vec::new());
    let mut draws = Vec::with_capacity(s);
    let chi =
        g.nu.is_finite()
            .then(|| ChiSquared::new(g.nu).expect("ν > 0"));
    for _ in 0..s {
        let z: [f64; 4] = std::array::from_fn(|_| rng.sample(StandardNormal));
        let w = match chi {
            Some(c) => rng.sample(c),
            None => 1.0,
        };
        let (t, neg_ln_g) = g.draw(&z, w);
        let lw = neg_ln_g
            + (0..4)
                .map(|d| phi[d][0] * t[d] + phi[d][1] * t[d] * t[d])
                .sum::<f64>();
        let (ll, f) = img.ln_lik([t[0], t[1]], [t[2], t[3]], &mut scratch, &mut touched);
        draws.push((t, lw + ll, f));
    }
    let top = draws.iter().map(|d| d.1).fold(f64::NEG_INFINITY, f64::max);
    if !top.is_finite() {
        return None;
    }
    let w: Vec<f64> = draws.iter().map(|d| (d.1 - top).exp()).collect();
    let total: f64 = w.iter().sum();
    let (mut m1, mut cross, mut sq) = ([0.0; 4], [[0.0; 4]; 4], 0.0);
    let (mut e1, mut e2, mut we) = (0.0, 0.0, 0.0);
    for (wi, (t, _, f)) in w.iter().zip(&draws) {
        let wn = wi / total;
        for d in 0..4 {
            m1[d] += wn * t[d];
            for e in 0..4 {
                cross[d][e] += wn * t[d] * t[e];
            }
        }
        sq += wn * wn;
        if let Some(f) = f {
            e1 += wn * f;
            e2 += wn * f * f;
            we += wn;
        }
    }
    Some(Estimate {
        m1,
        m2: std::array::from_fn(|d| cross[d][d]),
        cross,
        log_z: top + (total / s as f64).ln(),
        samples: s,
        s_eff: 1.0 / sq,
        s_eff_winn: f64::NAN,
        intensity: [e1 / we, e2 / we],
        proposal: *g,
    })
}

/// The sampling update of spot `spot` for the R_d = N(φ_d) of (4.16) (module docs), `warm` the
/// previous update's kept proposal, tried after R (the better of the two is adapted); None if φ
/// is no proper Gaussian or no draw of any pass has a positive weight.
pub fn estimate(
    phi: &[[f64; 2]; 4],
    img: &SubImage,
    cfg: &Sampling,
    spot: usize,
    warm: Option<Proposal>,
) -> Option<Estimate> {
    if phi
        .iter()
        .any(|p| p[1].is_nan() || p[1] >= 0.0 || !p[0].is_finite())
    {
        return None;
    }
    let mut s = cfg.samples.max(2);
    let rng = |n: u64| key(cfg.seed, spot, n);
    let mut g = Proposal::independent(
        phi.map(|p| -0.5 * p[0] / p[1]),
        phi.map(|p| (-2.0 * p[1]).sqrt().recip()),
    );
    let mut kept = pass(phi, img, &g, rng(0), s);
    let winn = kept.map_or(0.0, |e| e.s_eff);
    if let Some(w) = warm.filter(|_| winn < cfg.target) {
        let r = pass(phi, img, &w, rng(1), s);
        if r.is_some_and(|r| kept.is_none_or(|k| r.s_eff > k.s_eff)) {
            (g, kept) = (w, r);
        }
    }
    // Each refit is built from the best pass so far and kept if it raises S_eff; when it does
    // not, the best proposal widened threefold is tried (a proposal narrower than a flat stretch
    // of the target gives its tail draws the largest weights, and the moment refit then narrows
    // it further). From R a spot's first pass often has S_eff ≈ 1 and the walk to the posterior
    // takes several refits.
    for n in 1..=REFITS {
        let Some(b) = kept.filter(|b| b.s_eff < cfg.target) else {
            break;
        };
        let refit = g.refit(&b.m1, &b.cross);
        let wide = Some(g.widened(3.0));
        for (cand, key) in [(refit, 2 * n), (wide, 2 * n + 1)] {
            let Some(cand) = cand else { continue };
            if let Some(r) = pass(phi, img, &cand, rng(key), s).filter(|r| r.s_eff > b.s_eff) {
                (g, kept) = (cand, Some(r));
                break;
            }
        }
    }
    let mut n = 2 * REFITS + 2;
    while kept.is_none_or(|b| b.s_eff < cfg.target) && s < cfg.cap {
        s = (2 * s).min(cfg.cap);
        if let Some(r) = pass(phi, img, &g, rng(n), s) {
            kept = Some(r);
        }
        n += 1;
    }
    kept.map(|e| Estimate {
        s_eff_winn: winn,
        ..e
    })
}
