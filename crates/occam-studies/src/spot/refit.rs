//! The sub-grid's prior and its refit (Winn §4.5.2): "update m_c, β_c, m_r, β_r from the
//! results of one pass of the algorithm and then reapply using these new parameter settings".
//!
//! Every spot of a sub-grid is printed by one pin, so its spots share a size and a deviation
//! from the regular array. The prior (4.1)–(4.5) is therefore held per sub-grid: the centres'
//! mean m_c of spot j is its rough location plus an offset shared by the sub-grid, m_r is shared,
//! and β_c, β_r are one precision each (Winn's μ_c ~ N(m_c, β_c⁻¹ I), likewise for r).
//!
//! The update is not printed in the thesis. Here it is the one that maximises the sum of the
//! NORMAL spots' bounds over (m, β) with every Q held at the pass's: in L only
//! −KL(Q(μ_jd) ‖ N(m_d, β⁻¹)) depends on them, so (an M-step, with x_jd = ⟨μ_jd⟩ − rough_jd and
//! v_jd = 1/precision of Q(μ_jd), rough_jd = 0 for the radii)
//!
//!   m_d = mean_j x_jd,   β⁻¹ = mean_{j, d in the pair} [(x_jd − m_d)² + v_jd],
//!
//! the pair being (c_x, c_y) for β_c and (r_x, r_y) for β_r. MISSING and BAD spots are left out:
//! their centres and radii are not seen in their pixels. a and b are kept (Winn lists only m and
//! β).
//!
//! The reading not taken ([`GridPrior::moment_match`], printed beside by the example): m the
//! mean and β⁻¹ the variance of the spots' posterior means ⟨θ_j⟩. In (4.1)–(4.5) β is the
//! precision of μ_j, not of θ_j: θ_j scatters about m with variance β⁻¹ + γ_j⁻¹, so a β⁻¹ set to
//! the θ's spread counts the γ part twice, and it is not what raises the bound. Measured on the
//! synthetic grids (example README): after Winn's first pass ⟨γ⟩ is below 1 (one θ per μ, and
//! a = 0.05, b = 0.1), v_jd ≈ 1.5 px², and the M-step's β_c^-1/2 is 1.44–1.50 px where the
//! true offsets' sd is 0.62–0.78 px and the moment reading gives 0.63–0.79 px. The M-step's
//! means are as good (within 0.024 px of the truth's); the fits it gives move from the first
//! pass's by less than a posterior sd (largest 0.85 sd, no flag changed). Repeated, the M-step does not settle in two refits (β_c^-1/2
//! 1.44–1.50, then 0.90–0.97 px): it is one step of an EM on β, whose steps keep narrowing it.

use super::fit::{Flag, SpotFit, SpotPrior};
use super::image::{Image, Layout};

/// The prior (4.1)–(4.5) of every spot of a sub-grid.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridPrior {
    /// The centres' mean as an offset (x, y) from each spot's rough location, then m_r (x, y).
    pub m: [f64; 4],
    /// β_c and β_r.
    pub beta: [f64; 2],
    /// a of the Gamma priors on γ.
    pub a: f64,
    /// b (rate) of the Gamma priors on γ.
    pub b: f64,
}

impl GridPrior {
    /// Winn's first-pass setting (§4.3.1): m_c the rough location (offset 0), m_r the nominal
    /// radius, β_c = β_r giving a standard deviation of a quarter of the spot spacing, a = 0.05,
    /// b = 0.1.
    pub fn winn(layout: &Layout) -> Self {
        GridPrior {
            m: [0.0, 0.0, layout.radius, layout.radius],
            beta: [(layout.spacing as f64 / 4.0).powi(-2); 2],
            a: 0.05,
            b: 0.1,
        }
    }

    /// Spot j's prior.
    pub fn spot(&self, layout: &Layout, j: usize) -> SpotPrior {
        let c = layout.rough(j);
        let (bc, br) = (self.beta[0], self.beta[1]);
        SpotPrior {
            m: [c[0] + self.m[0], c[1] + self.m[1], self.m[2], self.m[3]],
            beta: [bc, bc, br, br],
            a: self.a,
            b: self.b,
        }
    }

    /// The prior refitted from one pass's `fits` of `img` (module docs): m_d the mean of the NORMAL
    /// spots' ⟨μ_jd⟩ (offsets for the centres), β⁻¹ the mean of (⟨μ_jd⟩ − m_d)² + 1/precision of
    /// Q(μ_jd) over the pair's axes. An error when fewer than two spots are flagged NORMAL or the
    /// result is not a proper prior.
    pub fn refit(&self, img: &Image, fits: &[SpotFit]) -> Result<GridPrior, String> {
        self.pooled(img, fits, |f, d| (f.hyper.mu[d], 1.0 / f.hyper.mu_prec[d]))
    }

    /// The reading of §4.5.2 not taken (module docs), reported beside the refit: m_d the mean of
    /// the NORMAL spots' posterior means ⟨θ_jd⟩ (offsets for the centres), β⁻¹ their variance
    /// about m pooled over the pair's axes. Errors as [`GridPrior::refit`].
    pub fn moment_match(&self, img: &Image, fits: &[SpotFit]) -> Result<GridPrior, String> {
        self.pooled(img, fits, |f, d| (f.mean[d], 0.0))
    }

    /// m and β from each NORMAL spot's (value, extra variance) per axis: m_d the mean value (an
    /// offset from the rough location for the centres), β⁻¹ the mean of the squared deviation
    /// plus the extra variance over the pair's two axes.
    fn pooled(
        &self,
        img: &Image,
        fits: &[SpotFit],
        at: impl Fn(&SpotFit, usize) -> (f64, f64),
    ) -> Result<GridPrior, String> {
        let normal: Vec<&SpotFit> = fits.iter().filter(|f| f.flag == Flag::Normal).collect();
        if normal.len() < 2 {
            return Err(format!(
                "prior refit (§4.5.2): {} NORMAL spot(s) of {}, at least 2 needed",
                normal.len(),
                fits.len()
            ));
        }
        let n = normal.len() as f64;
        let offset = |f: &SpotFit, d: usize| {
            let base = if d < 2 {
                img.layout.rough(f.spot)[d]
            } else {
                0.0
            };
            at(f, d).0 - base
        };
        let m: [f64; 4] =
            std::array::from_fn(|d| normal.iter().map(|f| offset(f, d)).sum::<f64>() / n);
        let spread = |axes: [usize; 2]| -> f64 {
            let s: f64 = normal
                .iter()
                .flat_map(|f| axes.map(|d| (offset(f, d) - m[d]).powi(2) + at(f, d).1))
                .sum();
            2.0 * n / s
        };
        let beta = [spread([0, 1]), spread([2, 3])];
        if !m.iter().chain(&beta).all(|v| v.is_finite()) || beta.iter().any(|&b| b <= 0.0) {
            return Err(format!(
                "prior refit (§4.5.2): m {m:?}, β {beta:?} from {} NORMAL spots is no proper prior",
                normal.len()
            ));
        }
        Ok(GridPrior { m, beta, ..*self })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spot::fit::{bound, Hyper};
    use crate::spot::sampler::{Estimate, Proposal};
    use crate::spot::{generate, EXAMPLE};
    use occam_core::Rng;
    use rand::{Rng as _, SeedableRng};

    /// A fit of spot j with Q(μ_j) = N(mu, 1/prec) and the rest fixed (the refit reads only
    /// Q(μ) and the flag; the bound's other terms do not depend on the prior's m and β).
    fn fake(j: usize, mu: [f64; 4], prec: [f64; 4], flag: Flag) -> SpotFit {
        let e = Estimate {
            m1: mu,
            m2: mu.map(|m| m * m + 0.01),
            cross: [[0.0; 4]; 4],
            log_z: -1000.0,
            samples: 1000,
            s_eff: 500.0,
            s_eff_winn: 1.0,
            intensity: [3000.0, 3000.0f64.powi(2) + 100.0],
            proposal: Proposal::independent(mu, [0.1; 4]),
        };
        SpotFit {
            spot: j,
            mean: mu,
            sd: [0.1; 4],
            last: e,
            hyper: Hyper {
                mu,
                mu_prec: prec,
                shape: [0.55; 4],
                rate: [0.01; 4],
            },
            bounds: vec![-1000.0],
            converged: true,
            ln_evidence: [0.0; 3],
            posterior: [1.0, 0.0, 0.0],
            flag,
            intensity: [3000.0, 10.0],
        }
    }

    /// Σ over the NORMAL spots of the bound (4.1)–(4.5) part that depends on the prior.
    fn objective(g: &GridPrior, img: &Image, fits: &[SpotFit]) -> f64 {
        fits.iter()
            .filter(|f| f.flag == Flag::Normal)
            .map(|f| {
                bound(
                    &g.spot(&img.layout, f.spot),
                    &f.hyper,
                    &f.last,
                    &[[0.0, -0.5]; 4],
                )
            })
            .sum()
    }

    /// The refit is the maximiser of the summed bound over (m, β) (module docs): its central
    /// differences vanish (to round-off) along each of the six coordinates, and a step of 5% either
    /// way lowers the sum; a MISSING spot, far off, does not move it.
    #[test]
    fn refit_maximises_the_summed_bound() {
        let img = generate(EXAMPLE, 1);
        let mut rng = Rng::seed_from_u64(3);
        let mut fits: Vec<SpotFit> = (0..12)
            .map(|j| {
                let c = img.layout.rough(j);
                let mut z = |s: f64| s * (rng.random::<f64>() - 0.5);
                let mu = [
                    c[0] + 0.4 + z(2.0),
                    c[1] - 0.3 + z(2.0),
                    5.0 + z(1.0),
                    6.0 + z(1.0),
                ];
                let prec: [f64; 4] = std::array::from_fn(|_| 20.0 + 200.0 * rng.random::<f64>());
                fake(j, mu, prec, Flag::Normal)
            })
            .collect();
        fits.push(fake(12, [0.0, 0.0, 40.0, 40.0], [1.0; 4], Flag::Missing));
        let g = GridPrior::winn(&img.layout).refit(&img, &fits).unwrap();
        let at = |k: usize, x: f64| {
            let mut h = g;
            if k < 4 {
                h.m[k] = x;
            } else {
                h.beta[k - 4] = x;
            }
            objective(&h, &img, &fits)
        };
        let best = objective(&g, &img, &fits);
        for k in 0..6 {
            let x = if k < 4 { g.m[k] } else { g.beta[k - 4] };
            let h = 1e-4 * x.abs();
            let slope = (at(k, x + h) - at(k, x - h)) / (2.0 * h);
            // Round-off of the sum (about 1e4 in size) over a step of 1e-4 |x|: below 1e-7.
            assert!(slope.abs() < 1e-6, "coordinate {k}: slope {slope:e}");
            for step in [0.95, 1.05] {
                assert!(at(k, x * step) < best, "coordinate {k}, × {step}");
            }
        }
        // Without the MISSING spot the refit is the same.
        let normal: Vec<SpotFit> = fits[..12].to_vec();
        assert_eq!(
            GridPrior::winn(&img.layout).refit(&img, &normal).unwrap(),
            g
        );
    }

    /// The reading not taken: the NORMAL spots' ⟨θ⟩ offsets' mean and pooled variance (divisor
    /// 2n), by hand for three spots; the MISSING one is left out and Q(μ) plays no part.
    #[test]
    fn moment_match_is_the_spots_sample_moments() {
        let img = generate(EXAMPLE, 1);
        let off = [
            [0.5, -0.5, 5.0, 6.0],
            [1.0, 0.0, 5.5, 5.0],
            [-0.3, 0.2, 6.0, 5.5],
        ];
        let mut fits: Vec<SpotFit> = off
            .iter()
            .enumerate()
            .map(|(j, o)| {
                let c = img.layout.rough(j);
                let theta = [c[0] + o[0], c[1] + o[1], o[2], o[3]];
                // Q(μ) far from ⟨θ⟩: the moment reading must not read it.
                fake(j, theta, [1.0; 4], Flag::Normal)
            })
            .collect();
        for f in &mut fits {
            f.hyper.mu = [0.0; 4];
        }
        fits.push(fake(3, [0.0, 0.0, 40.0, 40.0], [1.0; 4], Flag::Missing));
        let g = GridPrior::winn(&img.layout)
            .moment_match(&img, &fits)
            .unwrap();
        let m = [0.4, -0.1, 5.5, 5.5];
        for d in 0..4 {
            assert!(
                (g.m[d] - m[d]).abs() < 1e-12,
                "axis {d}: {} vs {}",
                g.m[d],
                m[d]
            );
        }
        let var = |axes: [usize; 2]| {
            off.iter()
                .flat_map(|o| axes.map(|d| (o[d] - m[d]).powi(2)))
                .sum::<f64>()
                / 6.0
        };
        // Centres: (0.01 + 0.36 + 0.49) + (0.16 + 0.01 + 0.09) = 1.12, / 6; radii: 0.25 + 0 +
        // 0.25 + 0.25 + 0.25 + 0 = 1.0, / 6.
        assert!((var([0, 1]) - 1.12 / 6.0).abs() < 1e-12);
        assert!((var([2, 3]) - 1.0 / 6.0).abs() < 1e-12);
        assert!((g.beta[0] - 6.0 / 1.12).abs() < 1e-9, "{}", g.beta[0]);
        assert!((g.beta[1] - 6.0).abs() < 1e-9, "{}", g.beta[1]);
        assert_eq!((g.a, g.b), (0.05, 0.1));
    }

    /// Fewer than two NORMAL spots: an error that names the step.
    #[test]
    fn refit_needs_two_normal_spots() {
        let img = generate(EXAMPLE, 1);
        let fits = vec![
            fake(0, [9.5, 9.5, 5.5, 5.5], [10.0; 4], Flag::Normal),
            fake(1, [29.5, 9.5, 5.5, 5.5], [10.0; 4], Flag::Bad),
        ];
        let e = GridPrior::winn(&img.layout).refit(&img, &fits).unwrap_err();
        assert!(
            e.contains("prior refit (§4.5.2): 1 NORMAL spot(s) of 2"),
            "{e}"
        );
    }
}
