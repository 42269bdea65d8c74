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

    /// The mean and variance under R, each piece's from [`truncated_mean_var`], mixed as
    /// Σ w_k (v_k + (m_k − m)²) about the mixture's mean m: no ⟨x²⟩ − ⟨x⟩² anywhere, which loses
    /// every digit of the variance when the mean is large against the spread.
    pub(crate) fn mean_var(&self) -> (f64, f64) {
        let parts: Vec<(f64, f64, f64)> = self
            .pieces
            .iter()
            .map(|p| {
                let (m, v) = truncated_mean_var(p.mean, p.precision, p.lower, p.upper);
                (p.weight, m, v)
            })
            .collect();
        let mean: f64 = parts.iter().map(|&(w, m, _)| w * m).sum();
        let var = parts
            .iter()
            .map(|&(w, m, v)| w * (v + (m - mean) * (m - mean)))
            .sum();
        (mean, var)
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

/// ⟨x⟩ and ⟨x²⟩ of N(mean, 1/precision) restricted to [lower, upper] (infinite ends: none). With
/// z = √precision (x − mean) on [a, b] and Z = Φ(b) − Φ(a), ⟨z⟩ = (φ(a) − φ(b))/Z and
/// ⟨z²⟩ = 1 + (a φ(a) − b φ(b))/Z. The ratios φ/Z are formed in logs with Z from [`ln_mass`]; an
/// interval beyond 5 sds in one tail (mirrored to the upper one) takes them from Mills' ratio
/// R(t) = (1 − Φ(t))/φ(t) instead, φ(a)/Z = 1/(R(a) − e^{−(b² − a²)/2} R(b)), because exp of
/// −a²/2 loses a² ε of its digits and the variance, about 1/a² of ⟨z²⟩, would lose a⁴ ε.
pub(crate) fn truncated_moments(mean: f64, precision: f64, lower: f64, upper: f64) -> [f64; 2] {
    let sd = precision.sqrt().recip();
    if lower == f64::NEG_INFINITY && upper == f64::INFINITY {
        return [mean, mean * mean + sd * sd];
    }
    let (a, b) = ((lower - mean) / sd, (upper - mean) / sd);
    // Mirror an interval below the mean to above it: z → −z.
    let (sign, a, b) = if b < 0.0 { (-1.0, -b, -a) } else { (1.0, a, b) };
    let (ra, rb) = if a > 5.0 {
        let gap = if b.is_finite() {
            (-0.5 * (b - a) * (b + a)).exp()
        } else {
            0.0
        };
        let ra = 1.0 / (mills(a) - gap * if gap > 0.0 { mills(b) } else { 0.0 });
        (ra, ra * gap)
    } else {
        let ln_z = ln_mass(0.0, 1.0, a, b);
        let ratio = |t: f64| {
            if t.is_finite() {
                (-0.5 * t * t - 0.5 * LN_2PI - ln_z).exp()
            } else {
                0.0
            }
        };
        (ratio(a), ratio(b))
    };
    // t φ(t)/Z at an end (0 at an infinite one).
    let end = |t: f64, r: f64| if t.is_finite() { t * r } else { 0.0 };
    let (z1, z2) = (sign * (ra - rb), 1.0 + end(a, ra) - end(b, rb));
    [
        mean + sd * z1,
        mean * mean + 2.0 * mean * sd * z1 + sd * sd * z2,
    ]
}

/// The mean and variance of N(mean, 1/precision) restricted to [lower, upper], from the standard
/// truncated moments of [`truncated_moments`]: mean + sd⟨z⟩ and sd² (⟨z²⟩ − ⟨z⟩²), the
/// variance formed in z (of order 1 about the interval), never as ⟨x²⟩ − ⟨x⟩², whose
/// cancellation loses (mean/sd)² ε of it.
pub(crate) fn truncated_mean_var(mean: f64, precision: f64, lower: f64, upper: f64) -> (f64, f64) {
    let sd = precision.sqrt().recip();
    // The standard interval's moments: those of N(0, 1) on [(lower − mean)/sd, (upper − mean)/sd].
    let [z1, z2] = truncated_moments(0.0, 1.0, (lower - mean) / sd, (upper - mean) / sd);
    (mean + sd * z1, sd * sd * (z2 - z1 * z1).max(0.0))
}

/// Mills' ratio R(t) = (1 − Φ(t))/φ(t) for t > 5, by its continued fraction
/// R(t) = 1/(t + 1/(t + 2/(t + 3/(t + …)))) (Abramowitz & Stegun 26.2.14), evaluated by
/// Lentz's method to a relative change below 1e-16.
fn mills(t: f64) -> f64 {
    let (mut f, mut c, mut d) = (t, t, 0.0);
    for k in 1..500 {
        d = 1.0 / (t + k as f64 * d);
        c = t + k as f64 / c;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    1.0 / f
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

    /// Mills' ratio against Φ's tail, where that is still exact enough: at t = 6 and 8,
    /// (1 − Φ(t))/φ(t) from `erfc` agrees to 1e-13.
    #[test]
    fn mills_ratio_is_the_normal_tail_over_the_density() {
        use crate::special::normal::{norm_cdf, norm_pdf};
        for t in [5.5, 6.0, 8.0] {
            let direct = norm_cdf(-t) / norm_pdf(t);
            assert!((mills(t) / direct - 1.0).abs() < 1e-13, "at {t}");
        }
    }

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
