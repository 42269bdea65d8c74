//! Soft-margin linear support vector machine by Platt's sequential minimal optimisation (SMO),
//! the per-unit learning step of thesis §3.5.2.
//!
//! Primal: minimise ½‖w‖² + C Σ_n ξ_n subject to y_n (w·x_n + b) ≥ 1 − ξ_n, ξ_n ≥ 0. Dual:
//! maximise Σ α_n − ½ Σ_nm α_n α_m y_n y_m x_n·x_m subject to 0 ≤ α_n ≤ C and Σ α_n y_n = 0, with
//! w = Σ α_n y_n x_n. SMO repeatedly optimises the dual over a pair of multipliers analytically
//! (Platt 1998). Platt's original pair heuristics and single threshold can stop with points still
//! violating the KKT conditions when only b is wrong (all multipliers at bounds), so pairs are
//! chosen and b is set as in Keerthi et al. (2001, "modification 2") — the convergence test is the
//! maximal violation, and b is centred between the two one-sided thresholds — with the second
//! point of each pair chosen by second-order gain (Fan, Chen & Lin 2005), which needs far fewer
//! iterations than the maximal violating pair. SMO stops when every point satisfies the
//! Karush–Kuhn–Tucker conditions to within `tol` (strictly):
//! α = 0 ⇒ y f(x) > 1 − tol; 0 < α < C ⇒ |y f(x) − 1| < tol; α = C ⇒ y f(x) < 1 + tol.
//! The thesis relaxes `tol` in early rounds (see [`kkt_tolerance`]) and caps SMO at 100 000
//! iterations; an iteration here is one attempted pair step. The strict inequalities matter only
//! at tol = 1, the thesis's first round: there they ask exactly that every point with α < C be
//! classified correctly, y f(x) > 0 ("no maximisation of the margin"), whereas with non-strict
//! ones the starting point α = 0, f ≡ 0 would already pass and nothing would be learnt.

use serde::{Deserialize, Serialize};

use super::error::{check_bipolar, check_finite, check_len, LtuError, Result};

/// Options of [`train_svm`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SmoOptions {
    /// The error penalty C > 0.
    pub c: f64,
    /// KKT tolerance.
    pub tol: f64,
    /// Cap on attempted pair steps.
    pub max_iter: usize,
}

/// The thesis's KKT tolerance for learning round `k` (1-based, §3.7): 10^{−(k−1)} for the first
/// four rounds (round 1: no margin maximisation at all), 10⁻⁴ afterwards.
pub fn kkt_tolerance(k: usize) -> f64 {
    if (1..=4).contains(&k) {
        10f64.powi(1 - k as i32)
    } else {
        1e-4
    }
}

/// A trained linear SVM, decision value f(x) = w·x + b.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearSvm {
    /// Weights.
    pub w: Vec<f64>,
    /// Bias.
    pub b: f64,
    /// Dual multipliers α_n.
    pub alpha: Vec<f64>,
    /// Attempted pair steps.
    pub iterations: usize,
    /// Whether SMO stopped because every point met the KKT conditions (not by the cap).
    pub converged: bool,
}

impl LinearSvm {
    /// f(x) = w·x + b.
    pub fn decision(&self, x: &[f64]) -> f64 {
        self.w.iter().zip(x).map(|(w, x)| w * x).sum::<f64>() + self.b
    }
}

/// Row-major `n × d` training inputs with their Gram matrix, shared by every unit of a layer.
#[derive(Debug, Clone)]
pub struct Gram {
    n: usize,
    d: usize,
    x: Vec<f64>,
    k: Vec<f64>,
}

impl Gram {
    /// Checks `x` (row-major `n × d`) and computes x_n·x_m for all pairs.
    pub fn new(x: Vec<f64>, n: usize, d: usize) -> Result<Self> {
        check_len("svm inputs", n * d, x.len())?;
        check_finite("svm inputs", &x)?;
        let mut k = vec![0.0; n * n];
        for a in 0..n {
            for b in a..n {
                let v: f64 = (0..d).map(|j| x[a * d + j] * x[b * d + j]).sum();
                k[a * n + b] = v;
                k[b * n + a] = v;
            }
        }
        Ok(Self { n, d, x, k })
    }

    /// Number of points.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Input dimension.
    pub fn d(&self) -> usize {
        self.d
    }

    /// Point `i`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.d..(i + 1) * self.d]
    }

    #[inline]
    fn k(&self, a: usize, b: usize) -> f64 {
        self.k[a * self.n + b]
    }
}

/// The largest violation of the KKT conditions by `svm` on (`x`, `y`) with penalty `c`, where a
/// point's violation is how far y f(x) lies outside the range its α allows (0 if inside), and the
/// equality Σ α_n y_n = 0 and the box 0 ≤ α ≤ C count too.
pub fn kkt_violation(gram: &Gram, y: &[f64], c: f64, svm: &LinearSvm) -> f64 {
    let bound = 1e-12 * c.max(1.0);
    let mut worst = svm
        .alpha
        .iter()
        .zip(y)
        .map(|(a, y)| a * y)
        .sum::<f64>()
        .abs();
    for (i, (&a, &yi)) in svm.alpha.iter().zip(y).enumerate() {
        let r = yi * svm.decision(gram.row(i)) - 1.0;
        let v = if a <= bound {
            (-r).max(0.0)
        } else if a >= c - bound {
            r.max(0.0)
        } else {
            r.abs()
        };
        worst = worst.max(v).max((-a).max(a - c).max(0.0));
    }
    worst
}

/// Dual objective Σ α − ½‖Σ α_n y_n x_n‖².
pub fn dual_objective(svm: &LinearSvm) -> f64 {
    svm.alpha.iter().sum::<f64>() - 0.5 * svm.w.iter().map(|w| w * w).sum::<f64>()
}

/// Primal objective ½‖w‖² + C Σ max(0, 1 − y f(x)).
pub fn primal_objective(gram: &Gram, y: &[f64], c: f64, svm: &LinearSvm) -> f64 {
    0.5 * svm.w.iter().map(|w| w * w).sum::<f64>()
        + c * (0..gram.n())
            .map(|i| (1.0 - y[i] * svm.decision(gram.row(i))).max(0.0))
            .sum::<f64>()
}

struct Smo<'a> {
    g: &'a Gram,
    y: &'a [f64],
    c: f64,
    alpha: Vec<f64>,
    /// F_n = Σ_m α_m y_m x_m·x_n − y_n = w·x_n − y_n (Keerthi et al.'s F; f(x_n) = F_n + y_n + b).
    f: Vec<f64>,
    iterations: usize,
}

/// Relative size below which a multiplier change counts as no progress (Platt's eps).
const EPS: f64 = 1e-12;

impl Smo<'_> {
    /// The working pair and the maximal violation. I_up holds the points whose α can move so as to
    /// raise y f(x) (y = +1, α < C or y = −1, α > 0), I_low those whose α can lower it (Keerthi et
    /// al.); KKT holds iff max over I_low of F ≤ min over I_up of F. Returns i = argmin over I_up
    /// of F; j the point of
    /// I_low with F_j > F_i giving the largest second-order gain (F_j − F_i)² / ‖x_i − x_j‖²
    /// (Fan, Chen & Lin 2005, "WSS 2"); and max over I_low of F − F_i, whose size decides
    /// convergence. None if either set is empty.
    #[allow(clippy::needless_range_loop)]
    fn working_pair(&self) -> Option<(usize, usize, f64)> {
        let (n, c) = (self.g.n(), self.c);
        let (y, alpha, f, k) = (self.y, &self.alpha[..], &self.f[..], &self.g.k[..]);
        // Plain index loops: this is the hot loop of learning, and (unlike nested iterator
        // adapters) it stays fast in unoptimised test builds.
        let (mut up, mut f_up) = (usize::MAX, f64::INFINITY);
        for i in 0..n {
            let is_up = if y[i] > 0.0 {
                alpha[i] < c
            } else {
                alpha[i] > 0.0
            };
            if is_up && f[i] < f_up {
                (up, f_up) = (i, f[i]);
            }
        }
        if up == usize::MAX {
            return None;
        }
        let k_uu = k[up * n + up];
        let (mut low_max, mut best, mut best_gain) = (f64::NEG_INFINITY, up, f64::NEG_INFINITY);
        for t in 0..n {
            let is_low = if y[t] > 0.0 {
                alpha[t] > 0.0
            } else {
                alpha[t] < c
            };
            if !is_low {
                continue;
            }
            let b = f[t] - f_up;
            low_max = low_max.max(b);
            if b > 0.0 {
                let curv = k_uu + k[t * n + t] - 2.0 * k[up * n + t];
                let gain = b * b / if curv > 0.0 { curv } else { 1e-12 };
                if gain > best_gain {
                    (best, best_gain) = (t, gain);
                }
            }
        }
        if low_max == f64::NEG_INFINITY {
            return None;
        }
        Some((up, best, low_max))
    }

    /// Platt's analytic optimisation of the dual over (α_i1, α_i2) (Platt 1998, §12.2.1).
    #[allow(clippy::needless_range_loop)]
    fn take_step(&mut self, i1: usize, i2: usize) -> bool {
        if i1 == i2 {
            return false;
        }
        self.iterations += 1;
        let (a1, a2) = (self.alpha[i1], self.alpha[i2]);
        let (y1, y2) = (self.y[i1], self.y[i2]);
        let (f1, f2) = (self.f[i1], self.f[i2]);
        let s = y1 * y2;
        let c = self.c;
        let (lo, hi) = if y1 != y2 {
            ((a2 - a1).max(0.0), (c + a2 - a1).min(c))
        } else {
            ((a1 + a2 - c).max(0.0), (a1 + a2).min(c))
        };
        if lo >= hi {
            return false;
        }
        let (k11, k12, k22) = (self.g.k(i1, i1), self.g.k(i1, i2), self.g.k(i2, i2));
        let eta = k11 + k22 - 2.0 * k12;
        let mut new2 = if eta > 0.0 {
            (a2 + y2 * (f1 - f2) / eta).clamp(lo, hi)
        } else {
            // Degenerate pair (x_i1 = x_i2): the objective is linear along the segment, so take
            // the better end (Platt's eq. 12.22, with E + b = F).
            let g1 = y1 * f1 - a1 * k11 - s * a2 * k12;
            let g2 = y2 * f2 - s * a1 * k12 - a2 * k22;
            let obj = |a2n: f64| {
                let a1n = a1 + s * (a2 - a2n);
                a1n * g1
                    + a2n * g2
                    + 0.5 * a1n * a1n * k11
                    + 0.5 * a2n * a2n * k22
                    + s * a2n * a1n * k12
            };
            let (lobj, hobj) = (obj(lo), obj(hi));
            if lobj < hobj - EPS {
                lo
            } else if lobj > hobj + EPS {
                hi
            } else {
                a2
            }
        };
        // Snap to the box ends so that bound multipliers are exactly 0 or C.
        let snap = |a: f64| {
            if a < EPS * c {
                0.0
            } else if a > c * (1.0 - EPS) {
                c
            } else {
                a
            }
        };
        new2 = snap(new2);
        if (new2 - a2).abs() < EPS * (new2 + a2 + EPS) {
            return false;
        }
        let new1 = snap(a1 + s * (a2 - new2));
        let (d1, d2) = (y1 * (new1 - a1), y2 * (new2 - a2));
        let n = self.g.n();
        let (k1, k2) = (
            &self.g.k[i1 * n..(i1 + 1) * n],
            &self.g.k[i2 * n..(i2 + 1) * n],
        );
        let f = &mut self.f[..n];
        for m in 0..n {
            f[m] += d1 * k1[m] + d2 * k2[m];
        }
        self.alpha[i1] = new1;
        self.alpha[i2] = new2;
        true
    }

    /// Optimises until the maximal violation F_low − F_up is below 2 tol, or the cap; returns
    /// (converged, b) with b centred in the feasible interval.
    fn run(&mut self, tol: f64, max_iter: usize) -> (bool, f64) {
        loop {
            let Some((up, low, gap)) = self.working_pair() else {
                return (true, 0.0);
            };
            // F_low_max = F_up + gap; b centred between the one-sided thresholds.
            let b = -(self.f[up] + 0.5 * gap);
            if gap < 2.0 * tol {
                return (true, b);
            }
            if self.iterations >= max_iter || !self.take_step(up, low) {
                return (false, b);
            }
        }
    }
}

/// Trains a soft-margin linear SVM on the points of `gram` with ±1 labels `y`, starting from
/// α = 0. If every label is the same the dual's only feasible point is α = 0, and the solution is
/// w = 0, b = that label (every point then has margin exactly 1).
pub fn train_svm(gram: &Gram, y: &[f64], opts: &SmoOptions) -> Result<LinearSvm> {
    check_len("svm labels", gram.n(), y.len())?;
    check_bipolar("svm labels", y)?;
    if !(opts.c.is_finite() && opts.c > 0.0) {
        return Err(LtuError::InvalidOption {
            name: "C",
            why: format!("must be finite and positive, got {}", opts.c),
        });
    }
    if !(opts.tol.is_finite() && opts.tol > 0.0) {
        return Err(LtuError::InvalidOption {
            name: "KKT tolerance",
            why: format!("must be finite and positive, got {}", opts.tol),
        });
    }
    let n = gram.n();
    if n == 0 || y.iter().all(|&v| v == y[0]) {
        return Ok(LinearSvm {
            w: vec![0.0; gram.d()],
            b: y.first().copied().unwrap_or(0.0),
            alpha: vec![0.0; n],
            iterations: 0,
            converged: true,
        });
    }
    let mut smo = Smo {
        g: gram,
        y,
        c: opts.c,
        alpha: vec![0.0; n],
        f: y.iter().map(|y| -y).collect(),
        iterations: 0,
    };
    let (converged, b) = smo.run(opts.tol, opts.max_iter);
    let mut w = vec![0.0; gram.d()];
    for (i, (&a, &yi)) in smo.alpha.iter().zip(y).enumerate() {
        if a > 0.0 {
            for (wj, xj) in w.iter_mut().zip(gram.row(i)) {
                *wj += a * yi * xj;
            }
        }
    }
    Ok(LinearSvm {
        w,
        b,
        alpha: smo.alpha,
        iterations: smo.iterations,
        converged,
    })
}
