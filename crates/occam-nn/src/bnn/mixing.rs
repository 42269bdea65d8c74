//! The fixed-point update of the mixing weights Q(m) (thesis §5.4.3; the committee paper keeps
//! Q(m) = 1/M fixed).
//!
//! With λ held at its current optimum, the bound is Σ_m Q_m A_m − Σ_m Q_m ln Q_m + const with
//! A_m = −⟨β⟩⟨E_D⟩_m − ½ Σ_k ⟨α_k⟩ ⟨w_k²⟩_m + H(q_m) + ⟨ln r_m⟩_m − Σ_{m'} λ_{m'} ⟨r_{m'}⟩_m + ln λ_m,
//! whose maximiser is Q_m ∝ exp(A_m); re-optimising λ afterwards (done inside the entropy bound)
//! can only raise it further, so the update never lowers the bound.

use super::entropy::{entropy_bound, Layout};
use super::objective::{Hyper, Problem};
use super::prior::Prior;
use occam_core::special::{log_sum_exp, LN_2PI};

/// Replaces `q` by its fixed-point update.
pub fn update_mixing(
    p: &Problem<'_>,
    theta: &[f64],
    lay: Layout,
    q: &mut [f64],
    prior: &Prior,
    hyper: &Hyper,
) {
    if lay.m < 2 {
        return;
    }
    let k = lay.k;
    let lambda = entropy_bound(theta, lay, q, None).lambda;
    let prec = prior.weight_precisions(&hyper.alpha);
    let beta = hyper.beta.mean();
    let slice = |o: usize| &theta[o..o + k];
    let mut a = vec![0.0; lay.m];
    for (m, am) in a.iter_mut().enumerate() {
        let (wm, lv) = (slice(lay.mean(m)), slice(lay.log_var(m)));
        let mut v = -beta * p.expected_error(theta, lay, m, None);
        for i in 0..k {
            v -= 0.5 * prec[i] * (wm[i] * wm[i] + lv[i].exp());
        }
        v += 0.5 * lv.iter().sum::<f64>() + 0.5 * k as f64 * (1.0 + LN_2PI);
        let (rm, lr) = (slice(lay.r_mean(m)), slice(lay.r_log_var(m)));
        for i in 0..k {
            let d = wm[i] - rm[i];
            v -= 0.5 * (lv[i].exp() + d * d) / lr[i].exp();
        }
        for (mp, lam) in lambda.iter().enumerate() {
            let (rm, lr) = (slice(lay.r_mean(mp)), slice(lay.r_log_var(mp)));
            let mut lg = 0.0;
            for i in 0..k {
                let (s, rho, d) = (lv[i].exp(), lr[i].exp(), wm[i] - rm[i]);
                lg += -0.5 * (1.0 + s / rho).ln() - 0.5 * d * d / (s + rho);
            }
            v -= lam * lg.exp();
        }
        *am = v + lambda[m].ln();
    }
    let z = log_sum_exp(&a);
    for (qm, am) in q.iter_mut().zip(&a) {
        *qm = (am - z).exp();
    }
}
