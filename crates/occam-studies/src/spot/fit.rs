//! The per-spot VMP fit of Winn's model (§4.3–4.5): four scalar nodes θ = (c_x, c_y, r_x, r_y),
//! each θ_d ~ N(μ_d, γ_d⁻¹) with μ_d ~ N(m_d, β⁻¹) and γ_d ~ Gamma(a, b) (4.1)–(4.5), the
//! observed sub-image I_j importance-sampled (4.13)–(4.21), then the model comparison
//! (4.22)–(4.25) and the intensity (4.26)–(4.28).
//!
//! One sweep, in Winn's order (§4.5): the sampling node first (θ adopts the sampled moments),
//! then μ_d (precision β + ⟨γ_d⟩, mean (βm_d + ⟨γ_d⟩⟨θ_d⟩)/(β + ⟨γ_d⟩)) and γ_d (shape a + ½,
//! rate b + ½⟨(θ_d − μ_d)²⟩), each in closed form.
//!
//! Bound. The θ/I_j part is the engine's form for sampled nodes (erratum E5 replaces (4.21)):
//! with ln q(θ) = Σφ_c·u + ln P(I | θ) − ln Z at the sampling update, the term
//! ⟨ln p(θ | μ, γ)⟩ + ⟨ln P(I | θ)⟩ − ⟨ln q⟩ is Σ_d (⟨φ_prior,d⟩ − φ_c,d)·⟨u_d⟩ − ⟨A_prior,d⟩ + ln Z:
//! ⟨ln P(I | θ)⟩ cancels, so no Monte Carlo average of it is needed. ln Z and ⟨u⟩ are estimates,
//! so the bound is **approximate** (Monte Carlo error about √(1/S_eff − 1/S) nats); the μ and γ
//! updates raise it exactly, as ordinary VMP updates do.

use occam_core::dist::Sampling;
use occam_core::special::{gamma_mean_ln, kl_gamma, log_sum_exp, LN_2PI};

use super::polya::{ln_polya, SubImage};
use super::sampler::{estimate, Estimate};

/// The hyper-parameters of one spot's prior (4.1)–(4.5); Winn's setting and its refit are the
/// sub-grid's ([`super::refit::GridPrior`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpotPrior {
    /// m_c (x, y) and m_r (x, y): the rough location and the nominal radius.
    pub m: [f64; 4],
    /// β_c and β_r per axis.
    pub beta: [f64; 4],
    /// a of the Gamma priors on γ (Winn: 0.05).
    pub a: f64,
    /// b (rate) of the Gamma priors on γ (Winn: 0.1).
    pub b: f64,
}

/// The fit's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// K, the intensity bins (Winn: 300).
    pub bins: usize,
    /// The sampler: first S, the S_eff aimed at, the cap on S and the seed.
    pub sampling: Sampling,
    /// Sweeps at most.
    pub max_sweeps: usize,
    /// Stop when S_eff has reached its target (Winn's criterion, §4.5) and the bound moves by less
    /// than this, or than twice its Monte Carlo error √(1/S_eff − 1/S), between sweeps (nats).
    pub tol: f64,
}

impl Default for Settings {
    /// K = 300, S = 1000 aiming at S_eff ≥ 250 (Winn's S_eff > S/4) with S ≤ 64 000, seed 0,
    /// at most 30 sweeps, tol 1e-3 nats.
    fn default() -> Self {
        Settings {
            bins: 300,
            sampling: Sampling::default(),
            max_sweeps: 30,
            tol: 1e-3,
        }
    }
}

/// A spot's flag (§4.5.1): the model of highest posterior probability under a uniform prior.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flag {
    /// H₀: an elliptical spot.
    Normal,
    /// H₁: every pixel background (4.22).
    Missing,
    /// H₂: every pixel an equal mixture of spot and background (4.23).
    Bad,
}

/// Q(μ_d) = N(mean, 1/prec) and Q(γ_d) = Gamma(shape, rate) per axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hyper {
    /// ⟨μ_d⟩.
    pub mu: [f64; 4],
    /// Precision of Q(μ_d).
    pub mu_prec: [f64; 4],
    /// Shape of Q(γ_d).
    pub shape: [f64; 4],
    /// Rate of Q(γ_d).
    pub rate: [f64; 4],
}

/// One spot's fit.
#[derive(Clone, Debug, PartialEq)]
pub struct SpotFit {
    /// The spot's index (row-major).
    pub spot: usize,
    /// Posterior means of (c_x, c_y, r_x, r_y).
    pub mean: [f64; 4],
    /// Posterior standard deviations of (c_x, c_y, r_x, r_y).
    pub sd: [f64; 4],
    /// The last sampling update.
    pub last: Estimate,
    /// Q of the hyper-parameters.
    pub hyper: Hyper,
    /// L after each sweep (approximate: module docs).
    pub bounds: Vec<f64>,
    /// Whether the bound moved by less than tol before max_sweeps.
    pub converged: bool,
    /// ln P(I_j | H) for H₀ ≈ L (4.24), H₁ (4.22), H₂ (4.23).
    pub ln_evidence: [f64; 3],
    /// P(H | I_j) under the uniform prior (4.25).
    pub posterior: [f64; 3],
    /// The flag of the most probable model.
    pub flag: Flag,
    /// ⟨E_j⟩ and its standard deviation (4.28), E the spot pixels' mean intensity.
    pub intensity: [f64; 2],
}

impl SpotFit {
    /// The bound after the last sweep.
    pub fn bound(&self) -> f64 {
        *self.bounds.last().expect("at least one sweep")
    }
}

fn kl_gauss(m: f64, p: f64, m0: f64, p0: f64) -> f64 {
    0.5 * (p0 / p + p0 * (m - m0) * (m - m0) - 1.0 + (p / p0).ln())
}

/// ⟨γ⟩, ⟨ln γ⟩ and ⟨μ²⟩ of axis d.
fn expect(h: &Hyper, d: usize) -> (f64, f64, f64) {
    (
        h.shape[d] / h.rate[d],
        gamma_mean_ln(h.shape[d], h.rate[d]),
        h.mu[d] * h.mu[d] + 1.0 / h.mu_prec[d],
    )
}

/// φ_d of R_d (4.16): [⟨γ⟩⟨μ⟩, −⟨γ⟩/2].
fn proposal_phi(h: &Hyper) -> [[f64; 2]; 4] {
    std::array::from_fn(|d| {
        let g = h.shape[d] / h.rate[d];
        [g * h.mu[d], -0.5 * g]
    })
}

/// The bound (module docs) for the hyper-parameters `h`, the sampled moments `e` and the
/// natural parameters `phi_c` the sampling used.
pub fn bound(prior: &SpotPrior, h: &Hyper, e: &Estimate, phi_c: &[[f64; 2]; 4]) -> f64 {
    let mut l = e.log_z;
    for d in 0..4 {
        let (g, lng, mu2) = expect(h, d);
        l -= kl_gauss(h.mu[d], h.mu_prec[d], prior.m[d], prior.beta[d]);
        l -= kl_gamma(h.shape[d], h.rate[d], prior.a, prior.b);
        let phi_p = [g * h.mu[d], -0.5 * g];
        let a_p = 0.5 * g * mu2 - 0.5 * lng + 0.5 * LN_2PI;
        l += (phi_p[0] - phi_c[d][0]) * e.m1[d] + (phi_p[1] - phi_c[d][1]) * e.m2[d] - a_p;
    }
    l
}

/// The μ_d update (module docs).
pub fn update_mu(prior: &SpotPrior, h: &mut Hyper, e: &Estimate) {
    for d in 0..4 {
        let g = h.shape[d] / h.rate[d];
        h.mu_prec[d] = prior.beta[d] + g;
        h.mu[d] = (prior.beta[d] * prior.m[d] + g * e.m1[d]) / h.mu_prec[d];
    }
}

/// The γ_d update (module docs).
pub fn update_gamma(prior: &SpotPrior, h: &mut Hyper, e: &Estimate) {
    for d in 0..4 {
        let mu2 = h.mu[d] * h.mu[d] + 1.0 / h.mu_prec[d];
        h.shape[d] = prior.a + 0.5;
        h.rate[d] = prior.b + 0.5 * (e.m2[d] - 2.0 * e.m1[d] * h.mu[d] + mu2).max(0.0);
    }
}

/// Q(μ), Q(γ) at their priors: the start of every fit.
pub fn start(prior: &SpotPrior) -> Hyper {
    Hyper {
        mu: prior.m,
        mu_prec: prior.beta,
        shape: [prior.a; 4],
        rate: [prior.b; 4],
    }
}

/// Fits spot j of the prepared sub-image (module docs). An error names the spot when no
/// importance sample has a positive weight.
pub fn fit_spot(
    sub: &SubImage,
    u: &[f64],
    v: &[f64],
    prior: &SpotPrior,
    cfg: &Settings,
    j: usize,
) -> Result<SpotFit, String> {
    let mut h = start(prior);
    let mut bounds: Vec<f64> = Vec::new();
    let mut converged = false;
    let mut last = None;
    for _ in 0..cfg.max_sweeps {
        let phi_c = proposal_phi(&h);
        let e = estimate(
            &phi_c,
            sub,
            &cfg.sampling,
            j,
            last.map(|e: Estimate| e.proposal),
        )
        .ok_or_else(|| format!("spot {j}: no importance sample has a positive weight"))?;
        update_mu(prior, &mut h, &e);
        update_gamma(prior, &mut h, &e);
        let l = bound(prior, &h, &e, &phi_c);
        last = Some(e);
        let moved = bounds.last().map(|&p| (l - p).abs());
        bounds.push(l);
        // The bound's Monte Carlo error (module docs): a change below twice it is noise.
        let noise = 2.0 * (1.0 / e.s_eff - 1.0 / e.samples as f64).max(0.0).sqrt();
        if e.s_eff >= cfg.sampling.target && moved.is_some_and(|m| m < cfg.tol.max(noise)) {
            converged = true;
            break;
        }
    }
    let e = last.ok_or_else(|| format!("spot {j}: no sweep (max_sweeps = 0)"))?;
    let counts = sub.counts(u.len());
    let w: Vec<f64> = u.iter().zip(v).map(|(a, b)| 0.5 * (a + b)).collect();
    let l = *bounds.last().expect("one sweep");
    let ln_evidence = [l, ln_polya(&counts, v), ln_polya(&counts, &w)];
    let z = log_sum_exp(&ln_evidence);
    let posterior = ln_evidence.map(|x| (x - z).exp());
    let best = (0..3)
        .max_by(|&a, &b| ln_evidence[a].total_cmp(&ln_evidence[b]))
        .expect("three models");
    let flag = [Flag::Normal, Flag::Missing, Flag::Bad][best];
    Ok(SpotFit {
        spot: j,
        mean: e.m1,
        sd: std::array::from_fn(|d| (e.m2[d] - e.m1[d] * e.m1[d]).max(0.0).sqrt()),
        last: e,
        hyper: h,
        bounds,
        converged,
        ln_evidence,
        posterior,
        flag,
        intensity: [
            e.intensity[0],
            (e.intensity[1] - e.intensity[0] * e.intensity[0])
                .max(0.0)
                .sqrt(),
        ],
    })
}
