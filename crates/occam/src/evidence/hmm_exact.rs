//! The exact log evidence of a small hidden Markov chain (module `hmm`): the sum over all
//! K^(S·T) state paths of
//!
//!   DirMult(initial states; α_0) · Π_j DirMult(transitions out of j; α_A) · Π_k Z_k,
//!
//! the initial and transition probabilities integrated out (Dirichlet-multinomial), and Z_k the
//! closed-form evidence of the values the path puts in state k, its emission parameters
//! integrated out ([`super::conjugate`]). Refused past [`Options::max_assignments`] paths or
//! when an emission parameter is not conjugate to the values that read it, or is shared by the
//! states.

use super::conjugate::{dirichlet_multinomial, pair, Conjugate};
use super::flat::{Flat, Prior};
use super::NotApplicable;
use super::Options;

/// The symmetric concentration of a Dirichlet parameter.
pub(crate) fn alpha(flat: &Flat, p: usize) -> Result<f64, NotApplicable> {
    match flat.params[p].prior {
        Prior::Dirichlet { alpha, .. } => Ok(alpha),
        _ => Err(NotApplicable::part(&flat.params[p].name, "not a Dirichlet")),
    }
}

/// The exact log evidence of a chain model, or why it is not available.
pub(crate) fn exact(flat: &Flat, opts: &Options) -> Result<f64, NotApplicable> {
    let chain = flat.chain.as_ref().expect("a chain model");
    let (k, t_len) = (flat.k, chain.steps);
    let units = flat.n * t_len;
    let count = (k as f64).powi(units as i32);
    if count > opts.max_assignments as f64 {
        return Err(NotApplicable::Other(format!(
            "{k}^{units} = {count:.3e} state paths exceed the limit of {} (--max-assignments)",
            opts.max_assignments
        )));
    }
    let (groups, width, unit_stats) = step_statistics(flat)?;
    let mut walk = Walk {
        groups: &groups,
        width,
        stats: &unit_stats,
        k,
        t_len,
        units,
        a0: alpha(flat, chain.initial)?,
        aa: alpha(flat, chain.transition)?,
        state_stats: vec![0.0; k * width],
        initial: vec![0.0; k],
        transitions: vec![0.0; k * k],
        path: vec![0; units],
        terms: Vec::new(),
    };
    walk.walk(0);
    Ok(super::density::log_sum_exp(&walk.terms))
}

/// The observations of a chain model as conjugate groups (one per observed variable, at its
/// offset in a state's statistics): the groups, the width of a state's statistics and each
/// step's statistics (S·T steps × width). An error when an emission parameter is not conjugate
/// to the values that read it, or is shared by the states.
#[allow(clippy::type_complexity)]
pub(crate) fn step_statistics(
    flat: &Flat,
) -> Result<(Vec<(Conjugate, usize)>, usize, Vec<f64>), NotApplicable> {
    let t_len = flat.chain.as_ref().expect("a chain model").steps;
    let units = flat.n * t_len;
    // One conjugate group per observed variable; its statistics per step, units × width.
    let mut groups: Vec<(Conjugate, usize)> = Vec::new();
    let mut width = 0;
    for o in &flat.obs {
        let (kind, params) = pair(flat, &o.lik)?;
        if let Some(&p) = params.iter().find(|&&p| !flat.params[p].by_k) {
            return Err(NotApplicable::variable(
                &flat.params[p].name,
                "is shared by all states, which couples them (no closed form per path)",
            ));
        }
        let len = kind.len();
        groups.push((kind, width));
        width += len;
    }
    let mut unit_stats = vec![0.0; units * width];
    for (o, (kind, at)) in flat.obs.iter().zip(&groups) {
        for u in 0..units {
            if o.present[u] {
                let row = &mut unit_stats[u * width + at..u * width + at + kind.len()];
                kind.add(o.values[u], row).map_err(|e| NotApplicable::Row {
                    var: o.name.clone(),
                    row: u / t_len + 1,
                    why: e.to_string(),
                })?;
            }
        }
    }
    Ok((groups, width, unit_stats))
}

/// Depth-first walk over the state paths.
struct Walk<'a> {
    groups: &'a [(Conjugate, usize)],
    width: usize,
    stats: &'a [f64],
    k: usize,
    t_len: usize,
    units: usize,
    a0: f64,
    aa: f64,
    state_stats: Vec<f64>,
    initial: Vec<f64>,
    transitions: Vec<f64>,
    path: Vec<usize>,
    terms: Vec<f64>,
}

impl Walk<'_> {
    fn leaf(&self) -> f64 {
        let k = self.k;
        let mut v = dirichlet_multinomial(self.a0, k, &self.initial);
        for j in 0..k {
            v += dirichlet_multinomial(self.aa, k, &self.transitions[j * k..(j + 1) * k]);
            let s = &self.state_stats[j * self.width..(j + 1) * self.width];
            for (kind, at) in self.groups {
                v += kind.log_marginal(&s[*at..*at + kind.len()]);
            }
        }
        v
    }

    fn walk(&mut self, u: usize) {
        if u == self.units {
            let v = self.leaf();
            self.terms.push(v);
            return;
        }
        let (k, w) = (self.k, self.width);
        let t = u % self.t_len;
        for c in 0..k {
            self.path[u] = c;
            let slot = if t == 0 {
                &mut self.initial[c]
            } else {
                &mut self.transitions[self.path[u - 1] * k + c]
            };
            *slot += 1.0;
            for j in 0..w {
                self.state_stats[c * w + j] += self.stats[u * w + j];
            }
            self.walk(u + 1);
            for j in 0..w {
                self.state_stats[c * w + j] -= self.stats[u * w + j];
            }
            let slot = if t == 0 {
                &mut self.initial[c]
            } else {
                &mut self.transitions[self.path[u - 1] * k + c]
            };
            *slot -= 1.0;
        }
    }
}
