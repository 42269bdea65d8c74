//! The one test of a decreasing bound, for every loop that promises an increase: a single-process
//! fit's sweeps (`Vmp::sweeps`), a sharded fit's sweeps and passes, and a file streamed in
//! chunks (`occam::stream`). Each caller says what its two bounds may differ by without a real
//! decrease (its allowance): round-off, and the Monte Carlo noise of importance-sampled terms.

use super::*;

/// Tests whether the bound fell from `prev` to `now` at sweep `iteration` (after node `node`).
/// A decrease counts when it exceeds 10⁻⁹ of |L| and `allowance()` — what round-off and Monte
/// Carlo noise can move the two bounds compared ([`Vmp::decrease_allowance`] for one model;
/// called only when the first test fails, as it may cost a bound evaluation). A counted decrease
/// is a [`RunError::BoundDecreased`] when `decrease_is_error` (strict mode), else a
/// [`Warning::BoundDecreased`] pushed on `warnings`.
pub fn check_decrease(
    prev: f64,
    now: f64,
    allowance: impl FnOnce() -> f64,
    iteration: usize,
    node: impl FnOnce() -> String,
    decrease_is_error: bool,
    warnings: &mut Vec<Warning>,
) -> Result<(), RunError> {
    if !(prev.is_finite() && now < prev - 1e-9 * (1.0 + prev.abs()) && prev - now > allowance()) {
        return Ok(());
    }
    let (by, node) = (prev - now, node());
    if decrease_is_error {
        return Err(RunError::BoundDecreased {
            iteration,
            by,
            node,
        });
    }
    warnings.push(Warning::BoundDecreased {
        iteration,
        by,
        node,
    });
    Ok(())
}

/// The Monte Carlo part of a decrease allowance: 4 standard errors of the difference of two
/// bounds whose importance-sampled ln Ẑ estimates have summed variance `variance` (each
/// ≈ Σ (1/S_eff − 1/S), [`Vmp::sampling_variance`]): 4 √(2 · variance); 0 without sampled terms.
pub fn sampling_allowance(variance: f64) -> f64 {
    4.0 * (2.0 * variance).sqrt()
}

impl Vmp {
    /// [`check_decrease`] for this model, with its allowance ([`Vmp::decrease_allowance`]) and
    /// the name of node `after`.
    pub(super) fn check_decrease(
        &self,
        prev: f64,
        now: f64,
        iteration: usize,
        after: NodeId,
        opts: &RunOptions,
        warnings: &mut Vec<Warning>,
    ) -> Result<(), RunError> {
        check_decrease(
            prev,
            now,
            || self.decrease_allowance(),
            iteration,
            || self.nodes[after.0].name.clone(),
            opts.decrease_is_error,
            warnings,
        )
    }

    /// What two of this model's bounds may differ by with no real decrease: twice round-off
    /// (each bound moved by up to `bound_roundoff`, measured at the current state; about one
    /// bound evaluation), or the importance-sampled nodes' Monte Carlo noise, whichever is
    /// larger. With importance-sampled nodes (Winn §4.4) the bound holds their ln Ẑ estimates:
    /// the draws are keyed by pass, not sweep, so each sweep reuses the same normals, but the
    /// proposal moves with the parents and a sweep can lower the estimate by Monte Carlo noise
    /// alone; decreases within 4 standard errors of the difference of two estimates
    /// ([`sampling_allowance`]) are that noise and not reported.
    pub fn decrease_allowance(&self) -> f64 {
        (2.0 * self.bound_roundoff()).max(sampling_allowance(self.sampling_variance()))
    }

    /// The summed Monte Carlo variance of the importance-sampled nodes' terms in the bound, as
    /// [`sampling_allowance`] takes it (the variance of one estimate; the allowance doubles it
    /// for the difference of two): per sampled latent element, ln Ẑ's (1/S_eff − 1/S), plus half
    /// the variance of the bound's change at its last update that the moment estimates' own error
    /// explains (`shift_variance`: the change of φ_c between updates times the moments' sd; its
    /// derivation is at `moment_shift` in module `sampled`), halved because it already is the
    /// variance of a difference. 0 without sampled elements (a q in closed form has neither).
    pub fn sampling_variance(&self) -> f64 {
        self.sampled_nodes()
            .iter()
            .flat_map(|n| n.samples.iter().zip(&n.s_eff).zip(&n.shift_variance))
            .map(|((&s, &s_eff), &shift)| (1.0 / s_eff - 1.0 / s as f64).max(0.0) + 0.5 * shift)
            .sum()
    }
}
