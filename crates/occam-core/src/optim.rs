//! Limited-memory BFGS (Nocedal & Wright, Algorithm 7.4/7.5) with a backtracking Armijo line
//! search, for smooth objectives with analytic gradients: the one optimiser of the workspace
//! (`occam-nn`'s variational bounds, evidence and MAP fits; `occam-binary`'s Boltzmann-machine and
//! sigmoid-belief-network bounds and learning).
//!
//! Why it is written here rather than taken from `argmin`: the callers alternate a fixed iteration
//! budget of quasi-Newton steps with closed-form updates (the papers' "500 iterations, then the
//! hyper-posteriors" schedules) and rely on three behaviours a general solver does not give
//! directly. (1) Monotonicity: every accepted step strictly lowers f (Armijo), so maximising a
//! lower bound from a starting point never ends below it — the callers' monotone-bound tests rest
//! on this. (2) A stalled line search is not an error: the memory is dropped and steepest descent
//! tried; if that fails too the run ends quietly at its best point (`argmin` returns an error from
//! its line search and the caller loses the state). (3) Non-finite trial values (a log-variance
//! overflowing during a long trial step) count as "step too long" rather than aborting. The code is
//! ~150 lines with no dependency, deterministic (no threads, fixed operation order), and tested
//! below on Rosenbrock, a NaN region, and the monotonicity property.

/// Settings of [`minimize`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LbfgsOptions {
    /// Number of stored correction pairs.
    pub memory: usize,
    /// Maximum number of iterations (accepted steps).
    pub max_iters: usize,
    /// Stop when max |∂f/∂x_i| falls below this.
    pub grad_tol: f64,
    /// Stop when an accepted step lowers f by less than `f_tol · (1 + |f|)`.
    pub f_tol: f64,
}

impl Default for LbfgsOptions {
    fn default() -> Self {
        LbfgsOptions {
            memory: 10,
            max_iters: 500,
            grad_tol: 1e-8,
            f_tol: 1e-13,
        }
    }
}

/// Why [`minimize`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The iteration budget was used.
    MaxIters,
    /// The gradient fell below `grad_tol`.
    Gradient,
    /// The decrease fell below `f_tol`.
    Converged,
    /// No step along steepest descent lowered f.
    LineSearch,
    /// f or its gradient was not finite at the start.
    NonFinite,
}

/// Result of [`minimize`].
#[derive(Clone, Debug, PartialEq)]
pub struct LbfgsResult {
    /// The final (best) point.
    pub x: Vec<f64>,
    /// f at `x`.
    pub f: f64,
    /// Accepted steps.
    pub iters: usize,
    /// Function evaluations.
    pub evals: usize,
    /// Why it stopped.
    pub stop: Stop,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Minimises `f`, which returns f(x) and writes ∇f(x) into its second argument (overwriting it).
pub fn minimize(
    mut f: impl FnMut(&[f64], &mut [f64]) -> f64,
    x0: Vec<f64>,
    opts: LbfgsOptions,
) -> LbfgsResult {
    let n = x0.len();
    let mut x = x0;
    let mut g = vec![0.0; n];
    let mut fx = f(&x, &mut g);
    let mut evals = 1;
    if !fx.is_finite() || g.iter().any(|v| !v.is_finite()) {
        return LbfgsResult {
            x,
            f: fx,
            iters: 0,
            evals,
            stop: Stop::NonFinite,
        };
    }
    let mut s_hist: Vec<Vec<f64>> = Vec::new();
    let mut y_hist: Vec<Vec<f64>> = Vec::new();
    let mut rho_hist: Vec<f64> = Vec::new();
    let mut d = vec![0.0; n];
    let mut xn = vec![0.0; n];
    let mut gn = vec![0.0; n];
    let mut alpha = vec![0.0; opts.memory];
    let mut stop = Stop::MaxIters;
    let mut iters = 0;
    while iters < opts.max_iters {
        if g.iter().fold(0.0f64, |m, v| m.max(v.abs())) < opts.grad_tol {
            stop = Stop::Gradient;
            break;
        }
        // Two-loop recursion: d = −H g.
        d.copy_from_slice(&g);
        for i in (0..s_hist.len()).rev() {
            alpha[i] = rho_hist[i] * dot(&s_hist[i], &d);
            for (dj, yj) in d.iter_mut().zip(&y_hist[i]) {
                *dj -= alpha[i] * yj;
            }
        }
        let gamma = match s_hist.last() {
            Some(s) => {
                let y = y_hist.last().map(|v| v.as_slice()).unwrap_or(&[]);
                dot(s, y) / dot(y, y)
            }
            None => 1.0 / dot(&g, &g).sqrt().max(1.0),
        };
        d.iter_mut().for_each(|v| *v *= gamma);
        for i in 0..s_hist.len() {
            let b = rho_hist[i] * dot(&y_hist[i], &d);
            for (dj, sj) in d.iter_mut().zip(&s_hist[i]) {
                *dj += (alpha[i] - b) * sj;
            }
        }
        d.iter_mut().for_each(|v| *v = -*v);
        let mut slope = dot(&d, &g);
        if slope >= 0.0 || !slope.is_finite() {
            for (dj, gj) in d.iter_mut().zip(&g) {
                *dj = -gj * gamma.abs().max(1e-12);
            }
            slope = dot(&d, &g);
            s_hist.clear();
            y_hist.clear();
            rho_hist.clear();
        }
        // Backtracking Armijo search with safeguarded quadratic interpolation.
        let mut step = 1.0;
        let mut accepted = None;
        for _ in 0..40 {
            for ((xn_i, x_i), d_i) in xn.iter_mut().zip(&x).zip(&d) {
                *xn_i = x_i + step * d_i;
            }
            let fnew = f(&xn, &mut gn);
            evals += 1;
            if fnew.is_finite()
                && gn.iter().all(|v| v.is_finite())
                && fnew <= fx + 1e-4 * step * slope
            {
                accepted = Some(fnew);
                break;
            }
            let next = if fnew.is_finite() {
                let q = -slope * step * step / (2.0 * (fnew - fx - slope * step));
                q.clamp(0.1 * step, 0.5 * step)
            } else {
                0.1 * step
            };
            step = next;
        }
        let Some(fnew) = accepted else {
            if s_hist.is_empty() {
                stop = Stop::LineSearch;
                break;
            }
            s_hist.clear();
            y_hist.clear();
            rho_hist.clear();
            continue;
        };
        let s: Vec<f64> = xn.iter().zip(&x).map(|(a, b)| a - b).collect();
        let y: Vec<f64> = gn.iter().zip(&g).map(|(a, b)| a - b).collect();
        let sy = dot(&s, &y);
        if sy > 1e-12 * dot(&s, &s).sqrt() * dot(&y, &y).sqrt() {
            if s_hist.len() == opts.memory {
                s_hist.remove(0);
                y_hist.remove(0);
                rho_hist.remove(0);
            }
            s_hist.push(s);
            y_hist.push(y);
            rho_hist.push(1.0 / sy);
        }
        let decrease = fx - fnew;
        std::mem::swap(&mut x, &mut xn);
        std::mem::swap(&mut g, &mut gn);
        fx = fnew;
        iters += 1;
        if decrease < opts.f_tol * (1.0 + fx.abs()) {
            stop = Stop::Converged;
            break;
        }
    }
    LbfgsResult {
        x,
        f: fx,
        iters,
        evals,
        stop,
    }
}

/// Maximises `f` (which returns f(x) and writes ∇f(x)): [`minimize`] applied to −f. The result's
/// `f` is the maximum found (not negated).
pub fn maximize(
    mut f: impl FnMut(&[f64], &mut [f64]) -> f64,
    x0: Vec<f64>,
    opts: LbfgsOptions,
) -> LbfgsResult {
    let mut r = minimize(
        |x, g| {
            let v = f(x, g);
            g.iter_mut().for_each(|gi| *gi = -*gi);
            -v
        },
        x0,
        opts,
    );
    r.f = -r.f;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimises_the_rosenbrock_function() {
        let rosen = |x: &[f64], g: &mut [f64]| {
            let mut f = 0.0;
            g.iter_mut().for_each(|v| *v = 0.0);
            for i in 0..x.len() - 1 {
                let a = x[i + 1] - x[i] * x[i];
                let b = 1.0 - x[i];
                f += 100.0 * a * a + b * b;
                g[i] += -400.0 * a * x[i] - 2.0 * b;
                g[i + 1] += 200.0 * a;
            }
            f
        };
        let r = minimize(
            rosen,
            vec![-1.2, 1.0, -0.5, 0.8],
            LbfgsOptions {
                max_iters: 2000,
                ..Default::default()
            },
        );
        assert!(r.f < 1e-12, "{r:?}");
        assert!(r.x.iter().all(|v| (v - 1.0).abs() < 1e-5));
    }

    #[test]
    fn every_accepted_step_decreases_and_nan_regions_are_avoided() {
        // f = Σ e^{x_i} − 2 x_i, infinite (NaN) beyond x_i > 5: the search must back off.
        let f = |x: &[f64], g: &mut [f64]| {
            let mut s = 0.0;
            for (gi, xi) in g.iter_mut().zip(x) {
                if *xi > 5.0 {
                    *gi = f64::NAN;
                    return f64::NAN;
                }
                s += xi.exp() - 2.0 * xi;
                *gi = xi.exp() - 2.0;
            }
            s
        };
        let r = minimize(f, vec![-20.0, 4.0], LbfgsOptions::default());
        assert!(r.x.iter().all(|v| (v - 2f64.ln()).abs() < 1e-6), "{r:?}");
    }

    #[test]
    fn maximize_climbs_monotonically_from_its_start() {
        // A concave quadratic with very different curvatures: every value the optimiser accepts
        // is recorded through the objective; the result is the maximum and never below the start.
        let c = [1.0, -0.5, 2.0];
        let a = [1.0, 10.0, 0.1];
        let quad = |x: &[f64], g: &mut [f64]| {
            let mut f = 0.0;
            for i in 0..3 {
                f -= a[i] * (x[i] - c[i]).powi(2);
                g[i] = -2.0 * a[i] * (x[i] - c[i]);
            }
            f
        };
        let x0 = vec![3.0, -2.0, 1.0];
        let f0 = quad(&x0, &mut [0.0; 3]);
        for iters in 1..6 {
            let r = maximize(
                quad,
                x0.clone(),
                LbfgsOptions {
                    max_iters: iters,
                    ..Default::default()
                },
            );
            assert!(r.f > f0 && r.f == quad(&r.x, &mut [0.0; 3]), "{r:?}");
        }
        let r = maximize(quad, x0, LbfgsOptions::default());
        assert!(
            r.x.iter().zip(&c).all(|(x, c)| (x - c).abs() < 1e-6),
            "{r:?}"
        );
        assert!(r.f.abs() < 1e-10);
    }
}
