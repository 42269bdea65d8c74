//! Multivariate Gaussian N(x | μ, Λ⁻¹) with a full precision matrix — Winn (2.58–2.59).
//!
//! u = [x, col(xxᵀ)], φ = [Λμ, −½ col(Λ)], f = 0,
//! A(φ) = ½ φ₁ᵀ Σ φ₁ − ½ ln|Λ_q| + (d/2) ln 2π with Λ_q = −2 mat(φ₂), Σ = Λ_q⁻¹;
//! ⟨x⟩ = Σφ₁, ⟨xxᵀ⟩ = Σ + ⟨x⟩⟨x⟩ᵀ. Conjugate parents: mean (Gaussian d-vector), precision
//! (Wishart d×d). Messages: to μ [⟨Λ⟩⟨x⟩, −½ col⟨Λ⟩]; to Λ [−½ col⟨(x−μ)(x−μ)ᵀ⟩, ½].

use super::{Dist, ExpFamily, OutOfDomain, SlotInput};
use crate::error::ValueError;
use crate::linalg::{
    chol_inverse_into, chol_log_det, chol_solve_in_place, cholesky_into, mat_vec, trace_of_product,
    with_scratch, Cholesky,
};
use crate::moments::MomentKind;
use crate::spec::{
    ArgError, Args, ConstDomain, EventShape, FamilySpec, SlotShape, SlotSpec, ValueKind,
};
use crate::special::LN_2PI;
use crate::Rng;
use rand::Rng as _;
use rand_distr::StandardNormal;

/// Multivariate Gaussian with a Gaussian mean vector and a Wishart precision matrix.
#[derive(Clone, Debug)]
pub struct MvGaussian {
    /// Dimension d.
    pub d: usize,
}

/// A(φ) and u = [⟨x⟩, col⟨xxᵀ⟩] of a d-dimensional Gaussian from its natural parameters.
pub(crate) fn gaussian_vector_moments(
    phi: &[f64],
    d: usize,
    u: &mut [f64],
) -> Result<f64, OutOfDomain> {
    let mut a = 0.0;
    gaussian_vector_moments_rows(phi, d, u, std::slice::from_mut(&mut a)).map_err(|(_, e)| e)?;
    Ok(a)
}

/// A(φ) − φ·u of a d-dimensional Gaussian without cancellation: A holds ½ φ₁·μ and so does
/// φ·u = ½ φ₁·μ − d/2, so the difference is ½(d − ln|Λ| + d ln 2π), the entropy. Falls back
/// to the subtraction when Λ = −2φ₂ has no Cholesky factor (never for a valid φ).
pub(crate) fn own_vector(phi: &[f64], d: usize, u: &[f64], a: f64) -> f64 {
    thread_local! {
        /// The last precision part φ₂ seen on this thread and its entropy: rows of one node often
        /// share it (the rows of a mixture of Bayesian PCA's W_k), and the same φ₂ gives the same
        /// bits, so its factorisation is not repeated.
        static LAST: std::cell::RefCell<(Vec<f64>, f64)> = const {
            std::cell::RefCell::new((Vec::new(), 0.0))
        };
    }
    let p2 = &phi[d..d + d * d];
    if let Some(h) = LAST.with_borrow(|(last, h)| (last[..] == *p2).then_some(*h)) {
        return h;
    }
    with_scratch(d * d, |l| {
        if cholesky_into(p2, -2.0, d, l) {
            let h = 0.5 * (d as f64 * (1.0 + LN_2PI) - chol_log_det(l, d));
            LAST.with_borrow_mut(|(last, lh)| {
                last.clear();
                last.extend_from_slice(p2);
                *lh = h;
            });
            h
        } else {
            a - phi.iter().zip(u).map(|(p, v)| p * v).sum::<f64>()
        }
    })
}

/// u and A(φ) of one row from the Cholesky factor `l` of its precision Λ = −2φ₂ and Σ = Λ⁻¹.
fn moments_from_factor(phi: &[f64], d: usize, l: &[f64], inv: &[f64], u: &mut [f64]) -> f64 {
    let (mean, second) = u.split_at_mut(d);
    mean.copy_from_slice(&phi[..d]);
    chol_solve_in_place(l, d, mean);
    second.copy_from_slice(inv);
    for (row, &mi) in second.chunks_exact_mut(d).zip(mean.iter()) {
        for (s, &mj) in row.iter_mut().zip(mean.iter()) {
            *s += mi * mj;
        }
    }
    let quad: f64 = phi[..d].iter().zip(mean.iter()).map(|(a, b)| a * b).sum();
    0.5 * quad - 0.5 * chol_log_det(l, d) + 0.5 * d as f64 * LN_2PI
}

/// `moments_rows` of d-dimensional Gaussians: a row whose precision part φ₂ equals the previous
/// factorised row's (e.g. every latent vector of PCA without missing data) reuses its Cholesky
/// factor and inverse; the result is the same as row by row. The factor, the inverse and the
/// inverse's scratch live in this thread's [`with_scratch`] buffer: nothing is allocated.
pub(crate) fn gaussian_vector_moments_rows(
    phi: &[f64],
    d: usize,
    u: &mut [f64],
    a: &mut [f64],
) -> Result<(), (usize, OutOfDomain)> {
    let len = d + d * d;
    with_scratch(3 * d * d, |buf| {
        let (l, rest) = buf.split_at_mut(d * d);
        let (inv, work) = rest.split_at_mut(d * d);
        let mut last: Option<usize> = None;
        for (r, ar) in a.iter_mut().enumerate() {
            let p = &phi[r * len..(r + 1) * len];
            let same = last.is_some_and(|row| phi[row * len + d..(row + 1) * len] == p[d..]);
            if !same {
                if !cholesky_into(&p[d..], -2.0, d, l) {
                    return Err((
                        r,
                        OutOfDomain("Gaussian precision must be positive definite"),
                    ));
                }
                chol_inverse_into(l, d, inv, work);
                last = Some(r);
            }
            *ar = moments_from_factor(p, d, l, inv, &mut u[r * len..(r + 1) * len]);
        }
        Ok(())
    })
}

/// The packing of u = [x, col(xxᵀ)] (see [`ExpFamily::packed_moments`]): x's d values, then
/// the d(d + 1)/2 distinct entries of the symmetric xxᵀ, row by row over the upper triangle;
/// (xxᵀ)ᵢⱼ and (xxᵀ)ⱼᵢ share a position (xᵢxⱼ = xⱼxᵢ exactly in floating point). At d = 10, 65
/// values instead of 110.
pub(crate) fn symmetric_packing(d: usize) -> Vec<usize> {
    let upper = |i: usize, j: usize| d + i * d - i * (i + 1) / 2 + j;
    (0..d)
        .chain((0..d * d).map(|ij| {
            let (i, j) = (ij / d, ij % d);
            upper(i.min(j), i.max(j))
        }))
        .collect()
}

pub(crate) fn gaussian_vector_sample(phi: &[f64], d: usize, rng: &mut Rng, x: &mut [f64]) {
    gaussian_vector_sample_rows(phi, d, rng, x)
}

/// Draws from one φ into every row of `xs` (d values each) with one factorisation: the same draws,
/// bit for bit, as `gaussian_vector_sample` row after row.
pub(crate) fn gaussian_vector_sample_rows(phi: &[f64], d: usize, rng: &mut Rng, xs: &mut [f64]) {
    let mut u = vec![0.0; d + d * d];
    gaussian_vector_moments(phi, d, &mut u).expect("sampling needs a valid φ");
    let (mean, second) = u.split_at(d);
    let cov: Vec<f64> = (0..d * d)
        .map(|ij| second[ij] - mean[ij / d] * mean[ij % d])
        .collect();
    let chol = Cholesky::new(&cov, d).expect("covariance is positive definite");
    // The standard normals in the order of the one-row path (row by row), then L z for a block
    // of rows at once.
    let mut z = Vec::new();
    for block in xs.chunks_mut(256 * d.max(1)) {
        z.clear();
        z.extend((0..block.len()).map(|_| rng.sample::<f64, _>(StandardNormal)));
        chol.lower_times_rows(&z, block);
        for x in block.chunks_exact_mut(d) {
            x.iter_mut().zip(mean).for_each(|(xi, m)| *xi += m);
        }
    }
}

pub(crate) fn gaussian_vector_observe(
    x: &[f64],
    d: usize,
    u: &mut [f64],
) -> Result<f64, ValueError> {
    if let Some(v) = x.iter().find(|v| !v.is_finite()) {
        return Err(ValueError::NotFiniteReal { value: *v });
    }
    let (mean, second) = u[..d + d * d].split_at_mut(d);
    mean.copy_from_slice(&x[..d]);
    for (row, &xi) in second.chunks_exact_mut(d).zip(mean.iter()) {
        for (s, &xj) in row.iter_mut().zip(mean.iter()) {
            *s = xi * xj;
        }
    }
    Ok(0.0)
}

pub(crate) fn gaussian_vector_mode(phi: &[f64], d: usize, x: &mut [f64]) {
    let mut u = vec![0.0; d + d * d];
    gaussian_vector_moments(phi, d, &mut u).expect("mode needs a valid φ");
    x.copy_from_slice(&u[..d]);
}

pub(crate) fn random_gaussian_vector_phi(d: usize, rng: &mut Rng) -> Vec<f64> {
    let lam = crate::linalg::random_spd(rng, d);
    let mean: Vec<f64> = (0..d).map(|_| 4.0 * rng.random::<f64>() - 2.0).collect();
    let mut phi = vec![0.0; d];
    mat_vec(&lam, &mean, &mut phi);
    phi.extend(lam.iter().map(|v| -0.5 * v));
    phi
}

impl ExpFamily for MvGaussian {
    const SPEC: FamilySpec = FamilySpec {
        lowering_target: false,
        observed_only: false,
        name: "MvGaussian",
        aliases: &["MultivariateGaussian"],
        value: ValueKind::Vector,
        event: EventShape::Vector,
        slots: &[
            SlotSpec {
                name: "mean",
                aliases: &["mu", "location"],
                kinds: &[ValueKind::Vector],
                constant: ConstDomain::Real,
                shape: SlotShape::ChildEvent,
                expects: "a Gaussian vector over the same event plate (or a constant)",
            },
            SlotSpec {
                name: "precision",
                aliases: &["Lambda", "prec", "tau"],
                kinds: &[ValueKind::Matrix],
                constant: ConstDomain::Matrix,
                shape: SlotShape::ChildEvent,
                expects: "Wishart-distributed over the same event plate (or a constant such as `identity * 1e-3`)",
            },
        ],
        params: &[],
        summary: "vector Gaussian with a full precision matrix",
    };

    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError> {
        Ok(MvGaussian { d: args.event }.into())
    }
    fn free_params(&self) -> usize {
        self.d + self.d * (self.d + 1) / 2
    }

    fn kind(&self) -> MomentKind {
        MomentKind::Gaussian { d: self.d }
    }
    fn slot_input(&self, slot: usize) -> SlotInput {
        SlotInput::single(if slot == 0 {
            MomentKind::Gaussian { d: self.d }
        } else {
            MomentKind::Wishart { d: self.d }
        })
    }
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64 {
        let d = self.d;
        let (mu, lam) = (pa[0], pa[1]);
        mat_vec(&lam[..d * d], &mu[..d], &mut phi[..d]);
        for i in 0..d * d {
            phi[d + i] = -0.5 * lam[i];
        }
        0.5 * (trace_of_product(&lam[..d * d], &mu[d..], d) - lam[d * d] + d as f64 * LN_2PI)
    }
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain> {
        gaussian_vector_moments(phi, self.d, u)
    }
    fn centred_at(&self, phi: &[f64], x: &[f64], out: &mut [f64]) -> bool {
        super::gaussian::centred_gaussian(phi, self.d, x, out)
    }
    fn own_term(&self, phi: &[f64], u: &[f64], a: f64) -> f64 {
        own_vector(phi, self.d, u, a)
    }
    fn moments_rows(
        &self,
        phi: &[f64],
        u: &mut [f64],
        a: &mut [f64],
    ) -> Result<(), (usize, OutOfDomain)> {
        gaussian_vector_moments_rows(phi, self.d, u, a)
    }
    fn finite_values_are_valid(&self) -> bool {
        true
    }
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError> {
        gaussian_vector_observe(x, self.d, u)
    }
    fn message_to(&self, slot: usize, u: &[f64], w: f64, pa: &[&[f64]], m: &mut [f64]) {
        let d = self.d;
        let (mu, lam) = (pa[0], pa[1]);
        if slot == 0 {
            mat_vec(&lam[..d * d], &u[..d], &mut m[..d]);
            for i in 0..d * d {
                m[d + i] = -0.5 * w * lam[i];
            }
        } else {
            for i in 0..d {
                for j in 0..d {
                    m[i * d + j] = -0.5
                        * (u[d + i * d + j] - u[i] * mu[j] - mu[i] * u[j] + w * mu[d + i * d + j]);
                }
            }
            m[d * d] = 0.5 * w;
        }
    }
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]) {
        gaussian_vector_sample(phi, self.d, rng, x)
    }
    fn mode(&self, phi: &[f64], x: &mut [f64]) {
        gaussian_vector_mode(phi, self.d, x)
    }
    fn packed_moments(&self) -> Option<Vec<usize>> {
        Some(symmetric_packing(self.d))
    }
    fn test_instances() -> Vec<Self> {
        vec![MvGaussian { d: 1 }, MvGaussian { d: 3 }]
    }
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64> {
        random_gaussian_vector_phi(self.d, rng)
    }
}
