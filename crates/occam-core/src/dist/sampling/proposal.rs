//! The proposal R of an importance-sampled node (Winn §4.4, (4.13)–(4.19)): a mixture of
//! Gaussians, each possibly truncated to an interval. Winn's proposal (4.16) is one Gaussian, q
//! without the sampled factor's message; a prior that is itself a mixture or a truncation gives
//! the mixture of its components, each tilted by the children's Gaussian message
//! ([`super::SampledPrior::tilted`]), which is proportional to the part of q that has a closed
//! form, so only the factors left out of it (Student-t likelihoods) weight the draws.

use crate::special::LN_2PI;
use crate::Rng;
use rand::Rng as _;
use rand_distr::{Distribution, StandardNormal};
use statrs::distribution::{ContinuousCDF, Normal};

/// One Gaussian N(mean, 1/precision) of a proposal, restricted to [lower, upper] (infinite ends:
/// no truncation), with the weight it has in the mixture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Piece {
    /// The piece's weight in the mixture (the weights sum to 1).
    pub weight: f64,
    /// Mean of the untruncated Gaussian.
    pub mean: f64,
    /// Its precision.
    pub precision: f64,
    /// Lower end of the support.
    pub lower: f64,
    /// Upper end of the support.
    pub upper: f64,
    /// ln of weight · √(precision/2π) / mass on [lower, upper]: the constant of ln R's term.
    ln_c: f64,
}

impl Piece {
    fn truncated(&self) -> bool {
        self.lower > f64::NEG_INFINITY || self.upper < f64::INFINITY
    }
}

/// A mixture of (truncated) Gaussians to draw from and to weigh draws by (module docs).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Proposal {
    pieces: Vec<Piece>,
}

impl Proposal {
    /// The untruncated N(mean, 1/precision).
    pub(crate) fn gaussian(mean: f64, precision: f64) -> Self {
        Self::mixture(&[(0.0, mean, precision, f64::NEG_INFINITY, f64::INFINITY)])
            .expect("a proper Gaussian")
    }

    /// The mixture of pieces (ln weight, unnormalised; mean; precision; lower; upper), the
    /// weights normalised. None when a piece is no proper Gaussian or has no representable mass
    /// on its interval.
    pub(crate) fn mixture(pieces: &[(f64, f64, f64, f64, f64)]) -> Option<Self> {
        let top = pieces.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
        if !top.is_finite() {
            return None;
        }
        let total: f64 = pieces.iter().map(|p| (p.0 - top).exp()).sum();
        let mut out = Vec::with_capacity(pieces.len());
        for &(lw, mean, precision, lower, upper) in pieces {
            if !(precision > 0.0 && precision.is_finite() && mean.is_finite() && lower < upper) {
                return None;
            }
            let ln_w = lw - top - total.ln();
            let ln_mass = ln_mass(mean, precision, lower, upper);
            if !ln_mass.is_finite() {
                return None;
            }
            out.push(Piece {
                weight: ln_w.exp(),
                mean,
                precision,
                lower,
                upper,
                ln_c: ln_w + 0.5 * (precision.ln() - LN_2PI) - ln_mass,
            });
        }
        Some(Proposal { pieces: out })
    }

    /// The pieces.
    #[cfg(test)]
    pub(crate) fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// One draw: a uniform picks the piece (only when there are several), then a standard normal
    /// (untruncated) or a uniform through the inverse CDF (truncated) gives the value.
    pub(crate) fn draw(&self, rng: &mut Rng) -> f64 {
        let piece = if self.pieces.len() == 1 {
            &self.pieces[0]
        } else {
            let mut v: f64 = rng.random();
            let last = self.pieces.len() - 1;
            let mut k = 0;
            while k < last && v >= self.pieces[k].weight {
                v -= self.pieces[k].weight;
                k += 1;
            }
            &self.pieces[k]
        };
        let sd = piece.precision.sqrt().recip();
        if piece.truncated() {
            truncated_draw(piece.mean, sd, piece.lower, piece.upper, rng.random())
        } else {
            let z: f64 = StandardNormal.sample(rng);
            piece.mean + sd * z
        }
    }

    /// ln R(x).
    pub(crate) fn ln_density(&self, x: f64) -> f64 {
        let term = |p: &Piece| {
            if (p.lower..=p.upper).contains(&x) {
                p.ln_c - 0.5 * p.precision * (x - p.mean) * (x - p.mean)
            } else {
                f64::NEG_INFINITY
            }
        };
        let top = self
            .pieces
            .iter()
            .map(term)
            .fold(f64::NEG_INFINITY, f64::max);
        if self.pieces.len() == 1 || !top.is_finite() {
            return top;
        }
        let sum: f64 = self.pieces.iter().map(|p| (term(p) - top).exp()).sum();
        top + sum.ln()
    }
}

/// ln of N(mean, 1/precision)'s mass on [lower, upper], from the tail on the far side of the mean
/// so that an interval deep in one tail keeps its digits (−∞ when it underflows).
pub(crate) fn ln_mass(mean: f64, precision: f64, lower: f64, upper: f64) -> f64 {
    use crate::special::normal::norm_cdf;
    if lower == f64::NEG_INFINITY && upper == f64::INFINITY {
        return 0.0;
    }
    let s = precision.sqrt();
    let (a, b) = (s * (lower - mean), s * (upper - mean));
    if a > 0.0 {
        (norm_cdf(-a) - norm_cdf(-b)).ln()
    } else {
        (norm_cdf(b) - norm_cdf(a)).ln()
    }
}

/// The draw of N(mean, sd²) truncated to [lower, upper] at uniform v: the inverse CDF between
/// Φ(a) and Φ(b), on the side of the mean that keeps digits, clamped into the interval.
pub(crate) fn truncated_draw(mean: f64, sd: f64, lower: f64, upper: f64, v: f64) -> f64 {
    let std = Normal::new(0.0, 1.0).expect("the standard normal");
    let (a, b) = ((lower - mean) / sd, (upper - mean) / sd);
    let z = if a > 0.0 {
        let (pa, pb) = (std.cdf(-a), std.cdf(-b));
        -std.inverse_cdf(pa - v * (pa - pb))
    } else {
        let (pa, pb) = (std.cdf(a), std.cdf(b));
        std.inverse_cdf(pa + v * (pb - pa))
    };
    (mean + sd * z).clamp(lower, upper)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// The density integrates to 1 (trapezoid) and the draws' mean is the mixture's mean
    /// (within 4 standard errors), for a mixture of an untruncated and a truncated piece.
    #[test]
    fn density_and_draws_agree() {
        let p = Proposal::mixture(&[
            (0.3f64.ln(), -1.0, 4.0, f64::NEG_INFINITY, f64::INFINITY),
            (0.7f64.ln(), 0.5, 1.0, 0.0, 2.0),
        ])
        .unwrap();
        let h = 1e-4;
        let (mut z, mut m) = (0.0, 0.0);
        for k in 0..=100_000 {
            let x = -5.0 + k as f64 * h;
            let d = p.ln_density(x).exp();
            z += h * d;
            m += h * d * x;
        }
        assert!((z - 1.0).abs() < 1e-3, "mass {z}");
        let mut rng = Rng::seed_from_u64(3);
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| p.draw(&mut rng)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        let se = (var / n as f64).sqrt();
        assert!((mean - m).abs() < 4.0 * se, "{mean} vs {m} (±{se})");
    }
}
