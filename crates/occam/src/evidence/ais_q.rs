//! The base of a mixture's annealing path (module `ais`) where the components' priors are
//! vague ([`wanted`]): the fitted q instead of the prior. Chains move through
//!
//!   π_β(θ, z) ∝ b(θ, z)^(1−β) [p(θ) DM(z; α) p(D | z, θ)]^β,   b(θ, z) = q(θ) Π_i r_i(z_i),
//!
//! q(θ) the fitted q of every parameter but the weights (integrated out, DM the
//! Dirichlet–multinomial), widened as the importance-sampling proposal's (variances × 2), and
//! r_i row i's responsibilities under q mixed with a uniform choice (10%). Z_0 = 1 (b is
//! normalised and drawn exactly) and the increments of the log weight are (β_t − β_{t−1})
//! [ln p(θ) + ln DM(z; α) + ln p(D | z, θ) − ln b(θ, z)]. Every conditional stays in its
//! family: q and the prior are conjugate to the same likelihood, so the tempered conditional's
//! natural parameters are (1 − β) η_q + β η_prior + β × (the data's statistics)
//! ([`Base::temper`]).
//!
//! **Why not the prior.** Under vague priors (the VIBES tutorial's Gamma(0.001, 0.001)
//! precisions, Gaussian(0, 0.01) means, Dirichlet(0.001) weights) the chains from the prior
//! empty a tight cluster's component early in the path, where the likelihood is still tempered
//! and the component's Occam factor is not, and no Gibbs move opens it again once it would pay
//! (a row joining an empty component pays α times a vague prior's density): every chain ends
//! merged, 11 nats below the exact evidence on a tight and a wide cluster (test
//! `vague_a_tight_and_a_wide_cluster`; the chains traced in `ais_q_tests`). From q the occupied
//! components start where the data put them, and q^(1−β) holds them there while the
//! likelihood is tempered.
//!
//! **Two strata.** A q that sits on one partition of the rows among several the posterior
//! weighs (three clusters for two components: which two share one?) leaves the chains from q
//! in that partition, short of the others' mass. So the space is cut in two by a region R that
//! relabelling maps onto itself: x ∈ R where as many components hold rows as q uses and b at
//! the state's best relabelling (an assignment problem) is above the prior path's start
//! DM(z; a_0) p(θ) at x ([`Base::explains`]). p(D) = ∫_R p + ∫_(not R) p: half the chains run
//! from q to p·1_R (with the relabelling below), the other half from the prior (module `ais`)
//! to p·1_(not R); each half's mean weight is unbiased for its part, their sum for p(D), and
//! its variance is the sum of the halves' (module `ais_run`). Where q's partition holds the
//! posterior, the prior's half ends outside R with small weights (the tight cluster merged) or
//! inside with weight 0; where the posterior has other partitions, the prior's chains that
//! reach them carry their mass.
//!
//! **Relabelling.** The target p is symmetric under the K! relabellings g of the components; b
//! is not, and the chains stay near b's mode. The last target of the chains from q is
//! therefore p(θ, z) 1_R h(θ, z), with h(x) = 1/|S(x)| when the identity is among the
//! relabellings S(x) that maximise b(g x), 0 otherwise. Σ_g h(g x) = 1 for every x and R is
//! unchanged by relabelling, so ∫ p 1_R h = ∫_R p / K! exactly, whether the modes are separated
//! or not; that stratum's estimate is K! times the chains' mean weight. Where the modes are
//! separated every chain from q ends with h ≠ 0; where they are not, the chains that ended
//! across a boundary weigh 0 and the effective sample size says so. Components whose q overlap
//! or coincide (module `relabel`: an unused component at its prior, say), and components q
//! leaves empty, are made one group with identical base factors (the first member's q, the
//! members' mean responsibilities), so that relabelling within a group leaves b unchanged:
//! then |S(x)| = Π_g m_g! (almost surely, ties across groups having probability 0), and the
//! identity's optimality is decided by looking for a cycle of relabellings that raises ln b
//! ([`Base::in_basin`]).

use rand::rngs::StdRng;
use rand_distr::{Distribution, Normal};

use occam_core::assignment::max_assignment;
use occam_core::special::ln_gamma;

use super::ais_draw::{ln_dirichlet_draw, ln_gamma_draw, ln_one_minus_exp};
use super::flat::{Flat, Prior};
use super::not_applicable::NotApplicable;
use super::proposal::{factors, Q};
use crate::fitted::Fitted;

/// The share of a uniform choice in the base's responsibilities, (1 − ε) r_i + ε/K: VB's r is
/// more certain than the posterior, and from r itself every chain keeps the same labels, so
/// that the weights agree to round-off and their spread (the standard error) says nothing of
/// the labellings the chains never tried.
const DEFENSIVE: f64 = 0.1;

/// The base's q has q's variances times this (module `proposal`'s widening): mean-field q is
/// narrower than the posterior, for the same reason.
const WIDEN: f64 = 2.0;

/// A component q leaves with fewer expected rows than this is grouped with the other empty ones.
const EMPTY: f64 = 0.5;

/// The base b(θ, z) of the path.
pub(crate) struct Base {
    /// q per element of each parameter (the weights' entry unused), identical within a group.
    qs: Vec<Vec<Q>>,
    /// ln r_i(k), n × K.
    ln_r: Vec<f64>,
    /// ln (K! / Π_g m_g!): the estimate's factor ln K! and ln h = −ln Π_g m_g! in the basin.
    pub(crate) ln_modes: f64,
    /// The number of groups (distinct base components), for the note.
    pub(crate) distinct: usize,
    /// The number of components q uses (expected rows at least [`EMPTY`]).
    occupied: usize,
}

/// Whether a mixture's chains should start from q: where a component's parameter has a Gamma
/// prior of shape below 1 (the VIBES tutorial's precisions), from which the prior's path does
/// not open a tight cluster's component (module doc); elsewhere the prior's path, which also
/// reaches partitions q does not hold.
pub(crate) fn wanted(flat: &Flat) -> bool {
    flat.weights.is_some()
        && flat.chain.is_none()
        && flat
            .params
            .iter()
            .any(|p| p.by_k && matches!(p.prior, Prior::Gamma { shape, .. } if shape < 1.0))
}

fn ln_factorial(n: usize) -> f64 {
    (1..=n).map(|x| (x as f64).ln()).sum()
}

impl Base {
    /// The base from a fitted mixture's q; the reason where it does not apply (no mixture index,
    /// a hidden Markov chain, q missing a part).
    pub(crate) fn new(flat: &Flat, fitted: &Fitted) -> Result<Base, NotApplicable> {
        let (Some(_), None, Some(index)) = (flat.weights, &flat.chain, &flat.index) else {
            return Err(NotApplicable::Model("not a mixture: no base from q"));
        };
        let (n, k) = (flat.n, flat.k);
        let mut qs = factors(flat, fitted, WIDEN)?;
        let post = fitted
            .posterior(index)
            .map_err(|e| NotApplicable::Other(e.to_string()))?;
        let r = post
            .param("probabilities")
            .map(|c| c.values.clone())
            .filter(|v| v.len() == n * k && v.iter().all(|p| p.is_finite() && *p >= 0.0))
            .ok_or_else(|| NotApplicable::part(index, "q has no responsibilities for every row"))?;
        // Groups: overlapping or identical q (module `relabel`), and every empty component.
        let mut group = super::relabel::groups(flat, fitted)?;
        let used: Vec<f64> = (0..k).map(|c| (0..n).map(|i| r[i * k + c]).sum()).collect();
        if let Some(first) = (0..k).find(|&c| used[c] < EMPTY) {
            let g0 = group[first];
            for c in 0..k {
                if used[c] < EMPTY {
                    let gc = group[c];
                    group.iter_mut().filter(|g| **g == gc).for_each(|g| *g = g0);
                }
            }
        }
        let leader: Vec<usize> = group
            .iter()
            .map(|&g| group.iter().position(|&h| h == g).unwrap_or(g))
            .collect();
        for (p, param) in flat.params.iter().enumerate() {
            if param.by_k && Some(p) != flat.weights {
                for c in 0..k {
                    for d in 0..param.cols {
                        qs[p][c * param.cols + d] = qs[p][leader[c] * param.cols + d].clone();
                    }
                }
            }
        }
        let mut sizes = vec![0usize; k];
        leader.iter().for_each(|&l| sizes[l] += 1);
        let mut ln_r = vec![0.0; n * k];
        for i in 0..n {
            let row = &r[i * k..(i + 1) * k];
            let total: f64 = row.iter().sum();
            for c in 0..k {
                let l = leader[c];
                let mean = (0..k)
                    .filter(|&j| leader[j] == l)
                    .map(|j| row[j])
                    .sum::<f64>()
                    / sizes[l] as f64;
                let r = mean / total.max(f64::MIN_POSITIVE);
                ln_r[i * k + c] = ((1.0 - DEFENSIVE) * r + DEFENSIVE / k as f64).ln();
            }
        }
        Ok(Base {
            qs,
            ln_r,
            ln_modes: ln_factorial(k) - sizes.iter().map(|&m| ln_factorial(m)).sum::<f64>(),
            distinct: sizes.iter().filter(|&&m| m > 0).count(),
            occupied: used.iter().filter(|&&u| u >= EMPTY).count(),
        })
    }

    /// A draw of θ (kept values: module `ais`) and z from b.
    pub(crate) fn draw(&self, flat: &Flat, rng: &mut StdRng) -> (Vec<Vec<f64>>, Vec<usize>) {
        let theta = (0..flat.params.len())
            .map(|p| {
                let mut v = Vec::new();
                if Some(p) != flat.weights {
                    self.qs[p].iter().for_each(|q| draw_kept(q, rng, &mut v));
                }
                v
            })
            .collect();
        let k = flat.k;
        let z = (0..flat.n)
            .map(|i| super::ais_draw::categorical(&self.ln_r[i * k..(i + 1) * k], rng))
            .collect();
        (theta, z)
    }

    /// ln r_i(k).
    pub(crate) fn ln_r(&self, i: usize, k: usize, width: usize) -> f64 {
        self.ln_r[i * width + k]
    }

    /// ln b(θ, z) at kept values.
    pub(crate) fn ln_b(&self, flat: &Flat, theta: &[Vec<f64>], z: &[usize]) -> f64 {
        let mut s: f64 = z
            .iter()
            .enumerate()
            .map(|(i, &c)| self.ln_r[i * flat.k + c])
            .sum();
        for (p, param) in flat.params.iter().enumerate() {
            if Some(p) == flat.weights {
                continue;
            }
            let w = param.width();
            for (e, q) in self.qs[p].iter().enumerate() {
                s += ln_kept(q, &theta[p][e * w..(e + 1) * w]);
            }
        }
        s
    }

    /// Adds (1 − b)(η_q − η_prior) of element `e` of parameter `p` to its statistics `a` (in
    /// the layout `ais_draw::draw` reads with `prior`): `draw` then samples from the tempered
    /// conditional ∝ q^(1−b) prior^b × (statistics already multiplied by b). `ln_tau` is the
    /// element's Normal–Gamma precision's logarithm.
    pub(crate) fn temper(
        &self,
        prior: &Prior,
        p: usize,
        e: usize,
        b: f64,
        ln_tau: f64,
        a: &mut [f64],
    ) {
        let c = 1.0 - b;
        match (&self.qs[p][e], prior) {
            (Q::Gaussian(m, v), &Prior::Gaussian { mean, precision }) => {
                a[0] += c * (1.0 / v - precision);
                a[1] += c * (m / v - precision * mean);
            }
            (Q::Gaussian(m, v), &Prior::NormalGamma { mean, kappa, .. }) => {
                // The precision `ais_draw::draw` gives the prior, clamped alike.
                let precision = kappa * ln_tau.exp().max(f64::MIN_POSITIVE);
                a[0] += c * (1.0 / v - precision);
                a[1] += c * (m / v - precision * mean);
            }
            (Q::Gamma(qa, qb), &Prior::Gamma { shape, rate }) => {
                a[0] += c * (qa - shape);
                a[1] += c * (qb - rate);
            }
            (Q::Beta(qa, qb), &Prior::Beta { a: pa, b: pb }) => {
                a[0] += c * (qa - pa);
                a[1] += c * (qb - pb);
            }
            (Q::Dirichlet(al), &Prior::Dirichlet { alpha, .. }) => {
                for (x, q) in a.iter_mut().zip(al) {
                    *x += c * (q - alpha);
                }
            }
            // `factors` builds q in the prior's family.
            _ => a.iter_mut().for_each(|x| *x = f64::NAN),
        }
    }

    /// Whether the identity is among the relabellings g maximising b(g(θ, z)) (module doc): no
    /// cycle of components a → g(a) raises Σ_a M[a][g(a)], M[a][j] = ln b's component-a factors
    /// at component j's parameters and rows. Floyd–Warshall over gains M[a][j] − M[a][a] in
    /// max-plus arithmetic; a cycle of gain above round-off is a better relabelling.
    pub(crate) fn in_basin(&self, flat: &Flat, theta: &[Vec<f64>], z: &[usize]) -> bool {
        let k = flat.k;
        let m = self.scores(flat, theta, z);
        let scale: f64 = 1.0 + (0..k).map(|a| m[a * k + a].abs()).sum::<f64>();
        let mut g: Vec<f64> = (0..k * k).map(|x| m[x] - m[(x / k) * (k + 1)]).collect();
        for via in 0..k {
            for a in 0..k {
                let ga = g[a * k + via];
                for j in 0..k {
                    let v = ga + g[via * k + j];
                    if v > g[a * k + j] {
                        g[a * k + j] = v;
                    }
                }
            }
        }
        (0..k).all(|a| g[a * k + a] <= 1e-9 * scale)
    }

    /// Whether the state lies in q's region R (module doc): as many components in use as q
    /// uses, and u(θ, z) = max_g ln b(g(θ, z)),
    /// the best relabelling's score (an assignment problem), above `ln_start`, the log density
    /// of the prior path's start at the same state. Both sides are unchanged by relabelling
    /// the state; a score that is not finite is outside.
    pub(crate) fn explains(
        &self,
        flat: &Flat,
        theta: &[Vec<f64>],
        z: &[usize],
        ln_start: f64,
    ) -> bool {
        let mut seen = vec![false; flat.k];
        z.iter().for_each(|&c| seen[c] = true);
        if seen.iter().filter(|&&s| s).count() != self.occupied {
            return false;
        }
        let m = self.scores(flat, theta, z);
        max_assignment(&m, flat.k).is_some_and(|(_, u)| u > ln_start)
    }

    /// M[a][j] (K × K): ln b's component-a factors at component j's parameters and rows.
    fn scores(&self, flat: &Flat, theta: &[Vec<f64>], z: &[usize]) -> Vec<f64> {
        let k = flat.k;
        let mut m = vec![0.0; k * k];
        for (p, param) in flat.params.iter().enumerate() {
            if !param.by_k || Some(p) == flat.weights {
                continue;
            }
            let (w, cols) = (param.width(), param.cols);
            for a in 0..k {
                for j in 0..k {
                    for d in 0..cols {
                        let e = j * cols + d;
                        m[a * k + j] +=
                            ln_kept(&self.qs[p][a * cols + d], &theta[p][e * w..(e + 1) * w]);
                    }
                }
            }
        }
        for (i, &j) in z.iter().enumerate() {
            for a in 0..k {
                m[a * k + j] += self.ln_r[i * k + a];
            }
        }
        m
    }
}

/// A draw from `q` in kept values (a Gaussian's value, the logarithm of a Gamma, of a Beta's
/// probability, of each Dirichlet probability).
fn draw_kept(q: &Q, rng: &mut StdRng, out: &mut Vec<f64>) {
    match q {
        Q::Gaussian(m, v) => out.push(
            Normal::new(*m, v.sqrt())
                .map(|d| d.sample(rng))
                .unwrap_or(f64::NAN),
        ),
        Q::Gamma(a, b) => out.push(ln_gamma_draw(*a, *b, rng)),
        Q::Beta(a, b) => {
            let mut two = Vec::with_capacity(2);
            ln_dirichlet_draw(&[*a, *b], rng, &mut two);
            out.push(two[0]);
        }
        Q::Dirichlet(al) => ln_dirichlet_draw(al, rng, out),
    }
}

/// ln of `q`'s density at kept values `v` (module `ais`), with respect to the parameter itself
/// (a Gamma's τ, not ln τ: the prior's density in [`ln_prior`] is taken alike, and only ratios
/// are used).
pub(crate) fn ln_kept(q: &Q, v: &[f64]) -> f64 {
    match q {
        Q::Gaussian(m, var) => {
            -0.5 * (2.0 * std::f64::consts::PI * var).ln() - 0.5 * (v[0] - m) * (v[0] - m) / var
        }
        Q::Gamma(a, b) => a * b.ln() - ln_gamma(*a) + (a - 1.0) * v[0] - b * v[0].exp(),
        Q::Beta(a, b) => {
            ln_gamma(a + b) - ln_gamma(*a) - ln_gamma(*b)
                + (a - 1.0) * v[0]
                + (b - 1.0) * ln_one_minus_exp(v[0])
        }
        Q::Dirichlet(al) => {
            ln_gamma(al.iter().sum()) - al.iter().map(|&x| ln_gamma(x)).sum::<f64>()
                + al.iter().zip(v).map(|(a, l)| (a - 1.0) * l).sum::<f64>()
        }
    }
}

/// ln p(θ) at kept values, every parameter but the mixture weights (integrated out).
pub(crate) fn ln_prior(flat: &Flat, theta: &[Vec<f64>]) -> f64 {
    let mut s = 0.0;
    for (p, param) in flat.params.iter().enumerate() {
        if Some(p) == flat.weights {
            continue;
        }
        let w = param.width();
        for e in 0..flat.elements(p) {
            let v = &theta[p][e * w..(e + 1) * w];
            s += match param.prior {
                Prior::Gaussian { mean, precision } => {
                    ln_kept(&Q::Gaussian(mean, 1.0 / precision), v)
                }
                Prior::NormalGamma { mean, kappa, tau } => {
                    let ln_t = theta[tau][e];
                    0.5 * (kappa.ln() + ln_t - (2.0 * std::f64::consts::PI).ln())
                        - 0.5 * kappa * ln_t.exp() * (v[0] - mean) * (v[0] - mean)
                }
                Prior::Gamma { shape, rate } => ln_kept(&Q::Gamma(shape, rate), v),
                Prior::Beta { a, b } => ln_kept(&Q::Beta(a, b), v),
                Prior::Dirichlet { alpha, width } => ln_kept(&Q::Dirichlet(vec![alpha; width]), v),
            };
        }
    }
    s
}
