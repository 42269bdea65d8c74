//! The Cheeseman–Stutz approximation for a hidden Markov chain (module `hmm`): complete the data
//! with the expected statistics Ŷ of the state paths and take
//!
//!   ln p(X) ≈ ln p(X, Ŷ) + ln p(X | θ̂) − ln p(X, Ŷ | θ̂),
//!
//! as module `cs` does for a mixture. Here Ŷ are the forward–backward expectations at θ̂ = q's
//! mean (Rabiner 1989, eqs. 27 and 37: the E step at θ̂, as in Cheeseman & Stutz's own use):
//! the expected initial states Σ_s γ_1(k), transitions Σ_s Σ_t ξ_t(j, k) and each state's share
//! γ_t(k) of every value. ln p(X, Ŷ) is the exact complete-data evidence at those soft counts,
//! the same closed forms as `exact` sums over the paths (Dirichlet-multinomials of the initial
//! states and of each state's transitions, and each state's conjugate evidence of its values);
//! ln p(X, Ŷ | θ̂) = Σ_k γ̂_1(k) ln p0_k + Σ_jk ξ̂_jk ln A_jk + Σ_t Σ_k γ_t(k) ln f(x_t | θ̂_k).
//!
//! Because Ŷ are the expectations under p(z | X, θ̂), ln p(X | θ̂) − ln p(X, Ŷ | θ̂) is the
//! entropy of that posterior over paths, so where it is concentrated on one path z* the
//! estimate is ln p(X, z*) with every parameter integrated out: the largest term of the exact
//! sum. Like VB's q, it sees one labelling of the states; the exact sum has K! equal ones.

use super::conjugate::dirichlet_multinomial;
use super::density::{ln_f, Theta};
use super::flat::Flat;
use super::hmm::expected;
use super::hmm_exact::{alpha, step_statistics};
use super::NotApplicable;

/// The Cheeseman–Stutz estimate of a chain model at θ̂, or why it does not apply.
pub(crate) fn cheeseman_stutz(flat: &Flat, theta: &Theta) -> Result<f64, NotApplicable> {
    let chain = flat.chain.as_ref().expect("a chain model");
    let (k, t_len) = (flat.k, chain.steps);
    let (groups, width, stats) = step_statistics(flat)?;
    let (a0, aa) = (alpha(flat, chain.initial)?, alpha(flat, chain.transition)?);
    let x = expected(flat, theta);
    if !x.log_lik.is_finite() {
        return Err(NotApplicable::Other(
            "ln p(D | θ̂) at q's mean is not finite".into(),
        ));
    }
    // ln p(X, Ŷ): the closed forms at the expected counts and statistics.
    let mut complete = dirichlet_multinomial(a0, k, &x.initial);
    let mut state = vec![0.0; k * width];
    for (u, step) in stats.chunks(width.max(1)).enumerate().take(flat.n * t_len) {
        for c in 0..k {
            let g = x.gamma[u * k + c];
            for (s, v) in state[c * width..(c + 1) * width].iter_mut().zip(step) {
                *s += g * v;
            }
        }
    }
    for j in 0..k {
        complete += dirichlet_multinomial(aa, k, &x.transitions[j * k..(j + 1) * k]);
        let s = &state[j * width..(j + 1) * width];
        complete += groups
            .iter()
            .map(|(kind, at)| kind.log_marginal(&s[*at..*at + kind.len()]))
            .sum::<f64>();
    }
    // ln p(X, Ŷ | θ̂).
    let (p0, a) = (&theta[chain.initial], &theta[chain.transition]);
    let mut at_theta: f64 = (0..k)
        .filter(|&j| x.initial[j] > 0.0)
        .map(|j| x.initial[j] * p0[j].ln())
        .sum();
    at_theta += (0..k * k)
        .filter(|&jl| x.transitions[jl] > 0.0)
        .map(|jl| x.transitions[jl] * a[jl].ln())
        .sum::<f64>();
    for o in &flat.obs {
        for s in 0..flat.n {
            for t in 0..t_len {
                // One value per step, in the same unit order as `step_statistics`.
                let at = s * t_len + t;
                if !o.present[at] {
                    continue;
                }
                for c in 0..k {
                    let g = x.gamma[(s * t_len + t) * k + c];
                    if g > 0.0 {
                        at_theta += g * ln_f(flat, theta, &o.lik, o.values[at], c, t);
                    }
                }
            }
        }
    }
    Ok(complete + x.log_lik - at_theta)
}
