//! The Cheeseman–Stutz approximation from VB's expected statistics: complete the data with the
//! expected sufficient statistics Ŷ of q(z) and take
//!
//!   ln p(X) ≈ ln p(X, Ŷ) + ln p(X | θ̂) − ln p(X, Ŷ | θ̂),
//!
//! with ln p(X, Ŷ) the exact complete-data evidence (the closed forms of [`super::conjugate`]
//! at the soft counts and statistics, the Dirichlet-multinomial of the soft component counts),
//! θ̂ q's mean, and ln p(X, Ŷ | θ̂) = Σ_n Σ_k r_nk [ln π̂_k + ln p(x_n | θ̂_k)]. On a model
//! without a mixture index it is the exact evidence.

use super::conjugate::dirichlet_multinomial;
use super::density::{log_lik, row_in_component, Theta};
use super::exact::conjugate_groups;
use super::flat::{Flat, Prior};
use super::NotApplicable;
use crate::fitted::Fitted;

/// The Cheeseman–Stutz estimate, or why it does not apply.
pub(crate) fn cheeseman_stutz(
    flat: &Flat,
    fitted: &Fitted,
    theta: &Theta,
) -> Result<f64, NotApplicable> {
    let (groups, width, rows) = conjugate_groups(flat)?;
    let (n, k) = (flat.n, flat.k);
    let r: Vec<f64> = match &flat.index {
        Some(z) => {
            let post = fitted
                .posterior(z)
                .map_err(|e| NotApplicable::Other(e.to_string()))?;
            post.param("probabilities")
                .map(|p| p.values.clone())
                .ok_or_else(|| NotApplicable::part(z, "q has no probabilities"))?
        }
        None => vec![1.0; n],
    };
    if r.len() != n * k {
        return Err(NotApplicable::Model("responsibilities of another shape"));
    }
    let mut stats = vec![0.0; k * width];
    let mut counts = vec![0.0; k];
    for i in 0..n {
        for c in 0..k {
            let w = r[i * k + c];
            counts[c] += w;
            for j in 0..width {
                stats[c * width + j] += w * rows[i * width + j];
            }
        }
    }
    let mut complete = 0.0;
    for c in 0..k {
        let s = &stats[c * width..(c + 1) * width];
        complete += groups
            .iter()
            .map(|g| g.kind.log_marginal(&s[g.at..g.at + g.kind.len()]))
            .sum::<f64>();
    }
    let ln_w: Vec<f64> = match flat.weights {
        Some(w) => {
            let Prior::Dirichlet { alpha, .. } = flat.params[w].prior else {
                return Err(NotApplicable::Model(
                    "mixture weights without a Dirichlet prior",
                ));
            };
            complete += dirichlet_multinomial(alpha, k, &counts);
            theta[w].iter().map(|p| p.ln()).collect()
        }
        None => vec![0.0],
    };
    let mut at_theta = 0.0;
    for i in 0..n {
        for c in 0..k {
            let w = r[i * k + c];
            if w > 0.0 {
                at_theta += w * (ln_w[c] + row_in_component(flat, theta, i, c));
            }
        }
    }
    Ok(complete + log_lik(flat, theta) - at_theta)
}
