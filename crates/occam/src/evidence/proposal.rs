//! The importance-sampling proposal: the fitted q of each parameter, widened (variances about
//! `widen` times q's), and for a mixture symmetrised over the K! relabellings of the components
//! (q sits on one of the K! symmetric modes of the posterior; the proposal must cover them all),
//! mixed with a fraction `defensive` of the prior (Hesterberg's defensive importance sampling:
//! the weights stay below max p(D | θ) / defensive, and modes q missed, beyond relabelling, are
//! still reached).

use super::NotApplicable;
use rand::Rng;
use rand_distr::{Beta, Distribution, Gamma, Normal};

use super::density::{ln_dirichlet, ln_gamma_pdf, ln_normal, log_sum_exp, Theta};
use super::flat::{Flat, Prior};
use super::permanent::{log_permanent, permutations};
use super::qdensity::{logs, Prepared};
use crate::fitted::Fitted;

/// Largest K the symmetrised proposal sums over (2^K K terms per draw).
pub(crate) const MAX_SYMMETRIC_K: usize = 12;

/// Largest K the symmetrised proposal of a hidden Markov chain sums over (K! terms per draw: the
/// transition matrix couples the states pairwise, so the permanent's subset recursion does not
/// apply).
pub(crate) const MAX_CHAIN_SYMMETRIC_K: usize = 6;

/// q of one element.
#[derive(Clone, Debug)]
pub(crate) enum Q {
    /// A Gaussian (mean, variance).
    Gaussian(f64, f64),
    /// A Gamma (shape, rate).
    Gamma(f64, f64),
    /// A Beta over the element's one value, concentrations (a, b).
    Beta(f64, f64),
    /// A Dirichlet with these concentrations.
    Dirichlet(Vec<f64>),
}

impl Q {
    pub(super) fn ln_pdf(&self, x: &[f64]) -> f64 {
        match self {
            Q::Gaussian(m, v) => ln_normal(x[0], *m, 1.0 / v),
            Q::Gamma(a, b) => ln_gamma_pdf(x[0], *a, *b),
            Q::Beta(a, b) => ln_dirichlet(&[x[0], 1.0 - x[0]], &[*a, *b]),
            Q::Dirichlet(al) => ln_dirichlet(x, al),
        }
    }

    pub(crate) fn sample(&self, rng: &mut impl Rng, out: &mut Vec<f64>) {
        let tiny = |x: f64| {
            if x > f64::MIN_POSITIVE {
                x
            } else {
                f64::MIN_POSITIVE
            }
        };
        match self {
            // A parameter out of a family's domain (an overflowing prior draw) gives NaN, which
            // the sampler weighs as 0.
            Q::Gaussian(m, v) => out.push(
                Normal::new(*m, v.sqrt())
                    .map(|d| d.sample(rng))
                    .unwrap_or(f64::NAN),
            ),
            Q::Gamma(a, b) => out.push(tiny(gamma(*a, *b, rng))),
            Q::Beta(a, b) => {
                let p = Beta::new(*a, *b).map(|d| d.sample(rng)).unwrap_or(f64::NAN);
                out.push(p.clamp(f64::MIN_POSITIVE, 1.0 - f64::EPSILON));
            }
            Q::Dirichlet(al) => {
                let g: Vec<f64> = al.iter().map(|&a| tiny(gamma(a, 1.0, rng))).collect();
                let s: f64 = g.iter().sum();
                out.extend(g.iter().map(|x| tiny(x / s)));
            }
        }
    }
}

fn gamma(a: f64, b: f64, rng: &mut impl Rng) -> f64 {
    Gamma::new(a, 1.0 / b)
        .map(|d| d.sample(rng))
        .unwrap_or(f64::NAN)
}

/// Concentrations divided by about `widen`, none pushed below min(itself, 1) (a concentration
/// under 1 is already broad); the scale factor, applied to all of them.
fn temper(c: &[f64], widen: f64) -> f64 {
    c.iter()
        .map(|&a| a.min(1.0) / a)
        .fold(1.0 / widen, f64::max)
        .min(1.0)
}

/// q of every element of every parameter (per parameter, its elements in order), widened by
/// `widen` (≥ 1): the proposal's factors, and the base of the annealing path from q (module
/// `ais_q`).
pub(crate) fn factors(
    flat: &Flat,
    fitted: &Fitted,
    widen: f64,
) -> Result<Vec<Vec<Q>>, NotApplicable> {
    let mut qs = Vec::new();
    for (i, p) in flat.params.iter().enumerate() {
        let post = fitted
            .posterior(&p.name)
            .map_err(|e| NotApplicable::Other(e.to_string()))?;
        let get = |n: &str| -> Result<&[f64], NotApplicable> {
            post.param(n)
                .map(|x| x.values.as_slice())
                .ok_or_else(|| NotApplicable::part(&p.name, format!("q has no {n}")))
        };
        let n = flat.elements(i);
        let mut row = Vec::with_capacity(n);
        match p.prior {
            Prior::Gaussian { .. } | Prior::NormalGamma { .. } => {
                let (m, v) = (get("mean")?, get("variance")?);
                for e in 0..n {
                    row.push(Q::Gaussian(m[e], v[e] * widen));
                }
            }
            Prior::Gamma { .. } => {
                let (a, b) = (get("shape")?, get("rate")?);
                for e in 0..n {
                    let f = temper(&[a[e]], widen);
                    row.push(Q::Gamma(a[e] * f, b[e] * f));
                }
            }
            Prior::Beta { .. } | Prior::Dirichlet { .. } => {
                let c = get("concentration")?;
                let w = if matches!(p.prior, Prior::Beta { .. }) {
                    2
                } else {
                    p.width()
                };
                for e in 0..n {
                    let al = &c[e * w..(e + 1) * w];
                    let f = temper(al, widen);
                    row.push(if w == 2 && matches!(p.prior, Prior::Beta { .. }) {
                        Q::Beta(al[0] * f, al[1] * f)
                    } else {
                        Q::Dirichlet(al.iter().map(|a| a * f).collect())
                    });
                }
            }
        }
        if row.iter().any(|q| match q {
            Q::Gaussian(m, v) => !(m.is_finite() && *v > 0.0 && v.is_finite()),
            Q::Gamma(a, b) | Q::Beta(a, b) => !(*a > 0.0 && *b > 0.0),
            Q::Dirichlet(al) => !al.iter().all(|&a| a > 0.0),
        }) {
            return Err(NotApplicable::part(&p.name, "q is degenerate"));
        }
        qs.push(row);
    }
    Ok(qs)
}

/// The proposal: q per element of each parameter.
pub(crate) struct Proposal {
    qs: Vec<Vec<Q>>,
    /// The constants of each q (module `qdensity`).
    prepared: Vec<Vec<Prepared>>,
    /// The weights' q density's value at p = (1, ..., 1) (its normaliser), when the proposal is
    /// symmetrised over the relabellings of a mixture.
    weights_norm: f64,
    /// Symmetrise over component relabellings.
    symmetric: bool,
    /// The prior's share of the proposal.
    defensive: f64,
}

impl Proposal {
    /// The proposal from a fitted model's q, widened by `widen` (≥ 1).
    pub fn new(
        flat: &Flat,
        fitted: &Fitted,
        widen: f64,
        defensive: f64,
    ) -> Result<Proposal, NotApplicable> {
        let qs = factors(flat, fitted, widen)?;
        let symmetric = flat.has_states();
        if symmetric && flat.chain.is_some() && flat.k > MAX_CHAIN_SYMMETRIC_K {
            return Err(NotApplicable::Other(format!(
                "K = {} states: the relabelling-symmetric proposal of a chain sums over the K! \
                 relabellings (at most K = {MAX_CHAIN_SYMMETRIC_K})",
                flat.k
            )));
        }
        if symmetric && flat.k > MAX_SYMMETRIC_K {
            return Err(NotApplicable::Other(format!(
                "K = {} components: the relabelling-symmetric proposal sums over 2^K terms \
                 (at most K = {MAX_SYMMETRIC_K})",
                flat.k
            )));
        }
        Ok(Proposal::from_factors(flat, qs, defensive))
    }

    /// The proposal with these factors (per parameter, q of each element), symmetrised over the
    /// relabellings of a model with states.
    pub(super) fn from_factors(flat: &Flat, qs: Vec<Vec<Q>>, defensive: f64) -> Proposal {
        let symmetric = flat.has_states();
        let prepared = qs
            .iter()
            .map(|row| row.iter().map(Prepared::new).collect())
            .collect();
        let weights_norm = match flat.weights.map(|w| &qs[w][0]) {
            Some(Q::Dirichlet(al)) => ln_dirichlet(&vec![1.0; flat.k], al),
            _ => f64::NAN,
        };
        Proposal {
            qs,
            prepared,
            weights_norm,
            symmetric,
            defensive,
        }
    }

    /// One draw.
    pub fn sample(&self, flat: &Flat, rng: &mut impl Rng) -> Theta {
        if self.defensive > 0.0 && rng.random::<f64>() < self.defensive {
            return prior_draw(flat, rng);
        }
        let mut theta: Theta = self
            .qs
            .iter()
            .map(|row| {
                let mut v = Vec::new();
                row.iter().for_each(|q| q.sample(rng, &mut v));
                v
            })
            .collect();
        if self.symmetric {
            // A uniform relabelling σ: component k's values move to σ(k).
            let mut sigma: Vec<usize> = (0..flat.k).collect();
            for i in (1..flat.k).rev() {
                sigma.swap(i, rng.random_range(0..=i));
            }
            let initial = flat.chain.as_ref().map(|c| c.initial);
            for (i, p) in flat.params.iter().enumerate() {
                if p.by_k || Some(i) == flat.weights || Some(i) == initial {
                    let w = if p.by_k { p.cols * p.width() } else { 1 };
                    let old = theta[i].clone();
                    for (k, &s) in sigma.iter().enumerate() {
                        theta[i][s * w..(s + 1) * w].copy_from_slice(&old[k * w..(k + 1) * w]);
                    }
                }
            }
            if let Some(c) = &flat.chain {
                // A chain's transition rows also move their entries: A'[σa][σb] = A[a][b].
                let k = flat.k;
                for row in theta[c.transition].chunks_mut(k) {
                    let old = row.to_vec();
                    for (b, &s) in sigma.iter().enumerate() {
                        row[s] = old[b];
                    }
                }
            }
        }
        theta
    }

    /// ln of the proposal density at θ, given `ln_prior` = ln p(θ) under the priors.
    pub fn ln_pdf(&self, flat: &Flat, theta: &Theta, ln_prior: f64) -> f64 {
        let q = self.ln_q(flat, theta);
        if self.defensive > 0.0 {
            log_sum_exp(&[
                (1.0 - self.defensive).ln() + q,
                self.defensive.ln() + ln_prior,
            ])
        } else {
            q
        }
    }

    /// ln of the (symmetrised) q part at θ.
    fn ln_q(&self, flat: &Flat, theta: &Theta) -> f64 {
        let elem = |i: usize, e: usize| {
            let w = flat.params[i].width();
            &theta[i][e * w..(e + 1) * w]
        };
        if self.symmetric && flat.chain.is_some() {
            return self.ln_q_chain(flat, theta);
        }
        if !self.symmetric {
            return (0..self.qs.len())
                .map(|i| {
                    (0..self.qs[i].len())
                        .map(|e| self.qs[i][e].ln_pdf(elem(i, e)))
                        .sum::<f64>()
                })
                .sum();
        }
        // q_sym(θ) = (1/K!) Σ_σ q(σ⁻¹θ): the fixed part, plus the log-permanent of M[k][j] =
        // ln q_k(θ_j) over the component parameters and the weights' per-entry terms.
        let k = flat.k;
        let (fixed, m) = self.relabel_matrix(flat, theta);
        let ln_k_factorial: f64 = (1..=k).map(|x| (x as f64).ln()).sum();
        fixed + log_permanent(&m, k) - ln_k_factorial
    }

    /// The symmetric q's parts at θ: the part fixed under relabelling and M[a][j] = ln q_a(θ_j)
    /// (row-major, K × K) over the component parameters and the weights' per-entry terms.
    pub(super) fn relabel_matrix(&self, flat: &Flat, theta: &Theta) -> (f64, Vec<f64>) {
        let elem = |i: usize, e: usize| {
            let w = flat.params[i].width();
            &theta[i][e * w..(e + 1) * w]
        };
        // Each factor's constants are prepared once (module `qdensity`) and each value's
        // logarithms taken once per draw, not once per pair (a, j): the same bits.
        let k = flat.k;
        let mut fixed = 0.0;
        let mut m = vec![0.0; k * k];
        let (mut lx, mut at) = (Vec::new(), Vec::new());
        for (i, p) in flat.params.iter().enumerate() {
            if Some(i) == flat.weights {
                let Q::Dirichlet(al) = &self.qs[i][0] else {
                    continue;
                };
                fixed += self.weights_norm; // the normaliser (all ln p_j = 0)
                let ln_p: Vec<f64> = theta[i][..k].iter().map(|x| x.ln()).collect();
                for a in 0..k {
                    for j in 0..k {
                        m[a * k + j] += (al[a] - 1.0) * ln_p[j];
                    }
                }
            } else if p.by_k {
                lx.clear();
                at.clear();
                for e in 0..self.qs[i].len() {
                    at.push(lx.len());
                    logs(&self.qs[i][e], elem(i, e), &mut lx);
                }
                at.push(lx.len());
                for a in 0..k {
                    for j in 0..k {
                        for d in 0..p.cols {
                            let e = j * p.cols + d;
                            m[a * k + j] += self.prepared[i][a * p.cols + d]
                                .ln_pdf(elem(i, e), &lx[at[e]..at[e + 1]]);
                        }
                    }
                }
            } else {
                fixed += (0..self.qs[i].len())
                    .map(|e| self.qs[i][e].ln_pdf(elem(i, e)))
                    .sum::<f64>();
            }
        }
        (fixed, m)
    }
}

impl Proposal {
    /// ln q_sym(θ) = ln (1/K!) Σ_σ q(θ_σ) of a chain, θ_σ its states relabelled by σ (component,
    /// initial-probability and transition entries a of θ_σ are those σ(a) of θ), summed over the
    /// K! relabellings one by one.
    fn ln_q_chain(&self, flat: &Flat, theta: &Theta) -> f64 {
        let chain = flat.chain.as_ref().expect("a chain model");
        let k = flat.k;
        let mut fixed = 0.0;
        // m[a][j]: ln q_a of component j's emission parameters.
        let mut m = vec![0.0; k * k];
        let dirichlet = |q: &Q| match q {
            Q::Dirichlet(al) => (ln_dirichlet(&vec![1.0; al.len()], al), al.clone()),
            _ => (f64::NAN, Vec::new()),
        };
        let (c0, a0) = dirichlet(&self.qs[chain.initial][0]);
        let rows: Vec<(f64, Vec<f64>)> = self.qs[chain.transition].iter().map(dirichlet).collect();
        fixed += c0 + rows.iter().map(|r| r.0).sum::<f64>();
        let ln_p0: Vec<f64> = theta[chain.initial].iter().map(|p| p.ln()).collect();
        let ln_a: Vec<f64> = theta[chain.transition].iter().map(|p| p.ln()).collect();
        for (i, p) in flat.params.iter().enumerate() {
            if i == chain.initial || i == chain.transition {
                continue;
            }
            let w = p.width();
            let elem = |e: usize| &theta[i][e * w..(e + 1) * w];
            if p.by_k {
                for a in 0..k {
                    for j in 0..k {
                        for d in 0..p.cols {
                            m[a * k + j] += self.qs[i][a * p.cols + d].ln_pdf(elem(j * p.cols + d));
                        }
                    }
                }
            } else {
                fixed += (0..self.qs[i].len())
                    .map(|e| self.qs[i][e].ln_pdf(elem(e)))
                    .sum::<f64>();
            }
        }
        let mut terms = Vec::new();
        permutations(k, &mut |sigma: &[usize]| {
            let mut v = 0.0;
            for a in 0..k {
                let sa = sigma[a];
                v += m[a * k + sa] + (a0[a] - 1.0) * ln_p0[sa];
                let al = &rows[a].1;
                for b in 0..k {
                    v += (al[b] - 1.0) * ln_a[sa * k + sigma[b]];
                }
            }
            terms.push(v);
        });
        let ln_k_factorial: f64 = (1..=k).map(|x| (x as f64).ln()).sum();
        fixed + log_sum_exp(&terms) - ln_k_factorial
    }
}

/// A draw from the prior (Gamma precisions of Normal–Gamma means first).
pub(crate) fn prior_draw(flat: &Flat, rng: &mut impl Rng) -> Theta {
    let mut theta: Theta = vec![Vec::new(); flat.params.len()];
    let order = (0..flat.params.len())
        .filter(|&i| !matches!(flat.params[i].prior, Prior::NormalGamma { .. }))
        .chain(
            (0..flat.params.len())
                .filter(|&i| matches!(flat.params[i].prior, Prior::NormalGamma { .. })),
        );
    for i in order.collect::<Vec<_>>() {
        let taus = match flat.params[i].prior {
            Prior::NormalGamma { tau, .. } => theta[tau].clone(),
            _ => vec![f64::NAN; flat.elements(i)],
        };
        let mut v = Vec::new();
        for t in taus {
            let q = match flat.params[i].prior {
                Prior::Gaussian { mean, precision } => Q::Gaussian(mean, 1.0 / precision),
                Prior::NormalGamma { mean, kappa, .. } => Q::Gaussian(mean, 1.0 / (kappa * t)),
                Prior::Gamma { shape, rate } => Q::Gamma(shape, rate),
                Prior::Beta { a, b } => Q::Beta(a, b),
                Prior::Dirichlet { alpha, width } => Q::Dirichlet(vec![alpha; width]),
            };
            q.sample(rng, &mut v);
        }
        theta[i] = v;
    }
    theta
}
