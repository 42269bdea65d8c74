//! The 1-D density q(a) ∝ exp(φ·u(a)) of a variable a > 0 whose multiple s = c·a is a Gamma's
//! shape, with u(a) = [s, ln a, ln Γ(s), s ln s] (Winn Example 2.1, (2.68)–(2.69)): its log-normaliser
//! A(φ), its moments ⟨u⟩, draws and mode, all by quadrature.
//!
//! **Why this rule.** The integral is taken over t = ln a, where q is smooth (analytic) and, for a
//! Gamma or inverse-Gamma prior tilted by Gamma children, unimodal and close to Gaussian (Winn
//! notes Q(ln a) is log-concave for his prior): a composite Gauss–Legendre rule then converges
//! geometrically in the number of panels. The domain is bracketed adaptively: a scan of
//! h(t) = φ·u(eᵗ) + t over t ∈ [−600, 40] (a from 10⁻²⁶⁰ to 2·10¹⁷: a Gamma(α, ·) prior's left
//! tail falls as e^{αt}, so a shape prior with α ≥ 0.1 is in reach) finds the mode, a golden
//! section refines it, and bisection finds where h falls [`CUT`] nats below it on each side, so
//! the mass left out is below e⁻⁶⁰ of the total. Panels are doubled (4, 8, …, 1024) until the
//! normaliser, every moment and ⟨s²⟩ (for the reported sd) agree between two levels to [`TOL`]
//! relative: the bound term is then exact to well below 1e-9 (`BoundQuality::Exact`). A φ whose
//! density does not fall by [`CUT`] nats within the scan is not normalisable (or not in reach):
//! `OutOfDomain`.
//! The workspace's one Gauss–Legendre rule (`crate::quad`) is used; an adaptive
//! double-exponential crate would need the same bracket and allocates per call.

use super::OutOfDomain;
use crate::quad::GaussLegendre;
use std::sync::OnceLock;

/// Scan range of t = ln a and its step.
const T_LO: f64 = -600.0;
const T_HI: f64 = 40.0;
const T_STEP: f64 = 1.0;
/// Nats below the mode at which the domain is cut.
const CUT: f64 = 60.0;
/// Relative agreement of two panel levels that stops the doubling.
const TOL: f64 = 1e-13;
/// The largest relative change between the last two panel levels accepted at the panel limit.
const EXACT: f64 = 1e-9;
/// Most panels tried.
const MAX_PANELS: usize = 1024;

pub use crate::moments::shape_stats;

/// The 20-point rule, built once.
fn rule() -> &'static GaussLegendre {
    static RULE: OnceLock<GaussLegendre> = OnceLock::new();
    RULE.get_or_init(|| GaussLegendre::new(20))
}

/// The density of t = ln a: h(t) = φ·u(eᵗ) + t (the Jacobian), −∞ where it is not finite.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ShapeDensity {
    phi: [f64; 4],
    c: f64,
}

/// A normalised q: its bracket in t, mode value, log-normaliser and moments.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Normalised {
    /// Bracket [lo, hi] in t = ln a.
    pub lo: f64,
    /// Upper end of the bracket.
    pub hi: f64,
    /// max h.
    pub h_max: f64,
    /// A(φ) = ln ∫ exp(φ·u(a)) da.
    pub log_z: f64,
    /// ⟨u⟩.
    pub u: [f64; 4],
    /// ⟨s²⟩ of the shape s = c·a (its variance is ⟨s²⟩ − ⟨s⟩², a's is that over c²).
    pub s2: f64,
}

impl ShapeDensity {
    pub(crate) fn new(phi: &[f64], c: f64) -> Self {
        ShapeDensity {
            phi: [phi[0], phi[1], phi[2], phi[3]],
            c,
        }
    }

    /// h(t), with the Jacobian term `jac` times t (1 for the density of t, 0 for that of a).
    fn h_with(&self, t: f64, jac: f64) -> f64 {
        let u = shape_stats(t.exp(), self.c);
        // Zero coefficients contribute nothing even where the statistic overflows.
        let mut h = jac * t;
        for (p, v) in self.phi.iter().zip(u) {
            if *p != 0.0 {
                h += p * v;
            }
        }
        if h.is_nan() {
            f64::NEG_INFINITY
        } else {
            h
        }
    }

    fn h(&self, t: f64) -> f64 {
        self.h_with(t, 1.0)
    }

    /// The maximiser and maximum of h_with(·, jac): scan, then golden section around the best
    /// grid point.
    fn mode_of(&self, jac: f64) -> Result<(f64, f64, Vec<f64>), OutOfDomain> {
        let n = ((T_HI - T_LO) / T_STEP).round() as usize;
        let grid: Vec<f64> = (0..=n)
            .map(|i| self.h_with(T_LO + i as f64 * T_STEP, jac))
            .collect();
        let best = (0..=n).fold(0, |b, i| if grid[i] > grid[b] { i } else { b });
        if !grid[best].is_finite() {
            return Err(OutOfDomain("the shape's q has no finite density in reach"));
        }
        let t0 = T_LO + best as f64 * T_STEP;
        let (mut a, mut b) = ((t0 - T_STEP).max(T_LO), (t0 + T_STEP).min(T_HI));
        let g = 0.5 * (5f64.sqrt() - 1.0);
        let (mut x1, mut x2) = (b - g * (b - a), a + g * (b - a));
        let (mut f1, mut f2) = (self.h_with(x1, jac), self.h_with(x2, jac));
        for _ in 0..80 {
            if f1 >= f2 {
                b = x2;
                x2 = x1;
                f2 = f1;
                x1 = b - g * (b - a);
                f1 = self.h_with(x1, jac);
            } else {
                a = x1;
                x1 = x2;
                f1 = f2;
                x2 = a + g * (b - a);
                f2 = self.h_with(x2, jac);
            }
        }
        let (t, h) = if f1 >= f2 { (x1, f1) } else { (x2, f2) };
        let (t, h) = if grid[best] > h {
            (t0, grid[best])
        } else {
            (t, h)
        };
        Ok((t, h, grid))
    }

    /// Bracket, normaliser and moments (module docs). The last result is kept per thread:
    /// draws and reports ask again for the q just computed.
    pub(crate) fn normalise(&self) -> Result<Normalised, OutOfDomain> {
        type Last = ([f64; 4], f64, Result<Normalised, OutOfDomain>);
        thread_local! {
            static LAST: std::cell::RefCell<Option<Last>> = const { std::cell::RefCell::new(None) };
        }
        if let Some(hit) = LAST.with(|l| match &*l.borrow() {
            Some((p, c, r)) if *p == self.phi && *c == self.c => Some(r.clone()),
            _ => None,
        }) {
            return hit;
        }
        let r = self.normalise_uncached();
        LAST.with(|l| *l.borrow_mut() = Some((self.phi, self.c, r.clone())));
        r
    }

    fn normalise_uncached(&self) -> Result<Normalised, OutOfDomain> {
        let (t_star, h_max, grid) = self.mode_of(1.0)?;
        let target = h_max - CUT;
        let at = |i: usize| T_LO + i as f64 * T_STEP;
        // Outermost grid points below the cut, on each side of the mode.
        let i_star = ((t_star - T_LO) / T_STEP).floor() as usize;
        let left = (0..=i_star.min(grid.len() - 1))
            .rev()
            .find(|&i| grid[i] < target);
        let right = (i_star + 1..grid.len()).find(|&i| grid[i] < target);
        let (Some(l), Some(r)) = (left, right) else {
            return Err(OutOfDomain(
                "the shape's q is not normalisable: its density does not fall off within \
                 a in [1e-260, 2e17]",
            ));
        };
        let lo = self.crossing(at(l), t_star, target);
        let hi = self.crossing(at(r), t_star, target);
        let mut prev: Option<[f64; 6]> = None;
        let mut panels = 4;
        loop {
            let sums = self.integrate(lo, hi, h_max, panels);
            if let Some(p) = prev {
                let change = (0..6)
                    .map(|k| {
                        let scale = if k == 0 {
                            sums[0]
                        } else {
                            sums[k].abs().max(sums[0])
                        };
                        (sums[k] - p[k]).abs() / scale
                    })
                    .fold(0.0, f64::max);
                // At the panel limit the sums of 20k terms carry round-off near TOL: accept a
                // change within the 1e-9 that an exact label allows (`BoundQuality`), and
                // refuse, rather than report as exact, an integral that has not converged.
                if change > EXACT && panels >= MAX_PANELS {
                    return Err(OutOfDomain(
                        "the shape's q: quadrature did not converge (its density is too \
                         peaked or too heavy-tailed for the panel limit)",
                    ));
                }
                if change <= TOL || panels >= MAX_PANELS {
                    let z = sums[0];
                    if !(z > 0.0 && z.is_finite()) {
                        return Err(OutOfDomain("the shape's q has no finite normaliser"));
                    }
                    return Ok(Normalised {
                        lo,
                        hi,
                        h_max,
                        log_z: h_max + z.ln(),
                        u: [sums[1] / z, sums[2] / z, sums[3] / z, sums[4] / z],
                        s2: sums[5] / z,
                    });
                }
            }
            prev = Some(sums);
            panels *= 2;
        }
    }

    /// The t between `out` (h below target) and `inside` (h above) where h crosses the target.
    fn crossing(&self, mut out: f64, mut inside: f64, target: f64) -> f64 {
        for _ in 0..60 {
            let mid = 0.5 * (out + inside);
            if self.h(mid) < target {
                out = mid;
            } else {
                inside = mid;
            }
        }
        out
    }

    /// ∫ e^{h − h_max} [1, u, s²] dt on [lo, hi] with `panels` panels of the 20-point rule.
    fn integrate(&self, lo: f64, hi: f64, h_max: f64, panels: usize) -> [f64; 6] {
        let r = rule();
        let w = (hi - lo) / panels as f64;
        let mut s = [0.0; 6];
        for p in 0..panels {
            let (c, half) = (lo + (p as f64 + 0.5) * w, 0.5 * w);
            for (x, wt) in r.nodes.iter().zip(&r.weights) {
                let t = c + half * x;
                let e = wt * half * (self.h(t) - h_max).exp();
                let u = shape_stats(t.exp(), self.c);
                s[0] += e;
                for k in 0..4 {
                    s[k + 1] += e * u[k];
                }
                s[5] += e * u[0] * u[0];
            }
        }
        s
    }

    /// A draw of a by inversion of the CDF of t on a fine grid over the bracket (trapezoid
    /// cumulative sums, linear interpolation): accurate to the grid's resolution, 1/4096 of the
    /// bracket. The table of the last q drawn from is kept per thread, so many draws from one q
    /// (a predictive sample) build it once.
    pub(crate) fn sample(&self, norm: &Normalised, uniform: f64) -> f64 {
        const N: usize = 4096;
        type Table = ([f64; 4], f64, f64, f64, Vec<f64>);
        thread_local! {
            static LAST: std::cell::RefCell<Option<Table>> = const { std::cell::RefCell::new(None) };
        }
        let dt = (norm.hi - norm.lo) / N as f64;
        LAST.with(|last| {
            let mut last = last.borrow_mut();
            let fresh = !matches!(&*last, Some((p, c, lo, hi, _))
                if *p == self.phi && *c == self.c && *lo == norm.lo && *hi == norm.hi);
            if fresh {
                let dens: Vec<f64> = (0..=N)
                    .map(|i| (self.h(norm.lo + i as f64 * dt) - norm.h_max).exp())
                    .collect();
                let mut cum = vec![0.0; N + 1];
                for i in 1..=N {
                    cum[i] = cum[i - 1] + 0.5 * (dens[i - 1] + dens[i]) * dt;
                }
                *last = Some((self.phi, self.c, norm.lo, norm.hi, cum));
            }
            let cum = &last.as_ref().expect("built above").4;
            let goal = uniform * cum[N];
            let i = cum.partition_point(|&c| c < goal).clamp(1, N);
            let f = (goal - cum[i - 1]) / (cum[i] - cum[i - 1]).max(f64::MIN_POSITIVE);
            (norm.lo + (i as f64 - 1.0 + f.clamp(0.0, 1.0)) * dt).exp()
        })
    }

    /// The mode of the density of a (not of ln a).
    pub(crate) fn mode(&self) -> Result<f64, OutOfDomain> {
        Ok(self.mode_of(0.0)?.0.exp())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::special::ln_gamma;

    #[test]
    fn a_gamma_prior_alone_normalises_to_its_closed_form() {
        // φ = [−b, α − 1, 0, 0]: A = ln Γ(α) − α ln b, ⟨a⟩ = α/b, ⟨ln a⟩ = ψ(α) − ln b.
        for (alpha, b) in [(2.0, 0.1), (0.5, 3.0), (30.0, 2.0), (1.0, 1e-3)] {
            let n = ShapeDensity::new(&[-b, alpha - 1.0, 0.0, 0.0], 1.0)
                .normalise()
                .unwrap();
            let a = ln_gamma(alpha) - alpha * f64::ln(b);
            assert!(
                (n.log_z - a).abs() < 1e-11 * a.abs().max(1.0),
                "{alpha} {b}"
            );
            assert!((n.u[0] - alpha / b).abs() < 1e-11 * (alpha / b));
            let ml = crate::special::digamma(alpha) - f64::ln(b);
            assert!((n.u[1] - ml).abs() < 1e-11 * ml.abs().max(1.0));
            // var a = α/b².
            let var = n.s2 - n.u[0] * n.u[0];
            assert!(
                (var - alpha / (b * b)).abs() < 1e-9 * alpha / (b * b),
                "{alpha} {b}"
            );
        }
    }

    #[test]
    fn tilted_moments_match_a_plain_quadrature_in_a() {
        // A Gamma(2, 0.1) prior on ν, 12 tied children with rate = shape = ν/2 (c = 1/2) and
        // 5 untied ones: φ = [−0.1/c + Σ(ln x − x) terms, 1, −17, 12]; reference by composite
        // Gauss–Legendre on a linear grid in a (not the engine's log-scale bracket).
        let c = 0.5;
        let phi = [-0.2 - 14.0, 1.0, -17.0, 12.0];
        let n = ShapeDensity::new(&phi, c).normalise().unwrap();
        let rule = GaussLegendre::new(20);
        let f = |a: f64| {
            let u = shape_stats(a, c);
            (phi.iter().zip(&u).map(|(p, v)| p * v).sum::<f64>(), u)
        };
        let peak = (1..4000)
            .map(|i| f(i as f64 * 0.01).0)
            .fold(f64::NEG_INFINITY, f64::max);
        let (mut z, mut m, mut s2) = (0.0, [0.0; 4], 0.0);
        let panels = 4000;
        let h = 40.0 / panels as f64;
        for p in 0..panels {
            let (mid, half) = ((p as f64 + 0.5) * h, 0.5 * h);
            for (x, w) in rule.nodes.iter().zip(&rule.weights) {
                let (lp, u) = f(mid + half * x);
                let e = w * half * (lp - peak).exp();
                z += e;
                for k in 0..4 {
                    m[k] += e * u[k];
                }
                s2 += e * u[0] * u[0];
            }
        }
        assert!(
            (n.log_z - (peak + f64::ln(z))).abs() < 1e-9,
            "{} vs {}",
            n.log_z,
            peak + z.ln()
        );
        // The sd of ν (a) as the posterior summary reports it, against the plain quadrature's.
        let sd = |s2: f64, m: f64| (s2 - m * m).sqrt() / c;
        let want = sd(s2 / z, m[0] / z);
        assert!(
            (sd(n.s2, n.u[0]) - want).abs() < 1e-9 * want,
            "sd {} vs {want}",
            sd(n.s2, n.u[0])
        );
        for k in 0..4 {
            let want = m[k] / z;
            assert!(
                (n.u[k] - want).abs() < 1e-9 * want.abs().max(1.0),
                "{k}: {} vs {want}",
                n.u[k]
            );
        }
    }

    #[test]
    fn a_density_that_does_not_fall_off_is_out_of_domain() {
        // exp(+a): not normalisable.
        assert!(ShapeDensity::new(&[1.0, 0.0, 0.0, 0.0], 1.0)
            .normalise()
            .is_err());
        // a^{-2} near 0: not integrable there.
        assert!(ShapeDensity::new(&[-1.0, -2.0, 0.0, 0.0], 1.0)
            .normalise()
            .is_err());
    }
}
