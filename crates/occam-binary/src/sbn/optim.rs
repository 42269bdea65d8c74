//! A small monotone L-BFGS maximiser (Nocedal & Wright, Alg. 7.4 two-loop recursion) with
//! backtracking Armijo line search. A step is accepted only if the objective does not fall,
//! so a bound maximised from a starting point never ends below its starting value.

/// Options of [`maximise`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LbfgsOptions {
    /// Maximum number of iterations.
    pub max_iter: usize,
    /// Stop when the largest gradient component is below this.
    pub gtol: f64,
    /// Stop when an iteration raises f by less than ftol·(1+|f|).
    pub ftol: f64,
    /// Number of stored correction pairs.
    pub memory: usize,
}

impl Default for LbfgsOptions {
    fn default() -> Self {
        LbfgsOptions {
            max_iter: 200,
            gtol: 1e-8,
            ftol: 1e-13,
            memory: 8,
        }
    }
}

/// Outcome of [`maximise`].
#[derive(Debug, Clone, PartialEq)]
pub struct LbfgsResult {
    /// Final point.
    pub x: Vec<f64>,
    /// f at the final point.
    pub f: f64,
    /// Iterations used.
    pub iterations: usize,
    /// True if a tolerance was met.
    pub converged: bool,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Maximises f. `fg(x, g)` returns f(x) and writes ∇f(x) into g.
pub fn maximise(
    mut fg: impl FnMut(&[f64], &mut [f64]) -> f64,
    x0: &[f64],
    o: &LbfgsOptions,
) -> LbfgsResult {
    let n = x0.len();
    let mut x = x0.to_vec();
    let mut g = vec![0.0; n];
    let mut f = fg(&x, &mut g);
    if n == 0 || !f.is_finite() {
        return LbfgsResult {
            x,
            f,
            iterations: 0,
            converged: true,
        };
    }
    let mut s_hist: Vec<Vec<f64>> = Vec::new();
    let mut y_hist: Vec<Vec<f64>> = Vec::new();
    let mut xn = vec![0.0; n];
    let mut gn = vec![0.0; n];
    let mut converged = false;
    let mut it = 0;
    while it < o.max_iter {
        it += 1;
        let gmax = g.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        if gmax < o.gtol {
            converged = true;
            break;
        }
        // two-loop recursion on −f (ascent direction d = H g)
        let mut d = g.clone();
        let k = s_hist.len();
        let mut alpha = vec![0.0; k];
        for i in (0..k).rev() {
            let rho = 1.0 / dot(&y_hist[i], &s_hist[i]);
            alpha[i] = rho * dot(&s_hist[i], &d);
            for (dj, yj) in d.iter_mut().zip(&y_hist[i]) {
                *dj -= alpha[i] * yj;
            }
        }
        let gamma = if k > 0 {
            dot(&s_hist[k - 1], &y_hist[k - 1]) / dot(&y_hist[k - 1], &y_hist[k - 1])
        } else {
            1.0 / gmax.max(1.0)
        };
        d.iter_mut().for_each(|v| *v *= gamma);
        for i in 0..k {
            let rho = 1.0 / dot(&y_hist[i], &s_hist[i]);
            let beta = rho * dot(&y_hist[i], &d);
            for (dj, sj) in d.iter_mut().zip(&s_hist[i]) {
                *dj += (alpha[i] - beta) * sj;
            }
        }
        let mut slope = dot(&g, &d);
        if slope <= 0.0 || !slope.is_finite() {
            d = g.iter().map(|v| v / gmax.max(1.0)).collect();
            slope = dot(&g, &d);
            s_hist.clear();
            y_hist.clear();
        }
        let mut step = 1.0;
        let mut accepted = false;
        for _ in 0..50 {
            for i in 0..n {
                xn[i] = x[i] + step * d[i];
            }
            let fnew = fg(&xn, &mut gn);
            if fnew.is_finite() && fnew >= f + 1e-4 * step * slope {
                let gain = fnew - f;
                let s: Vec<f64> = xn.iter().zip(&x).map(|(a, b)| a - b).collect();
                // y for the minimisation of −f: y = −(gn − g)
                let y: Vec<f64> = gn.iter().zip(&g).map(|(a, b)| b - a).collect();
                if dot(&s, &y) > 1e-300 {
                    s_hist.push(s);
                    y_hist.push(y);
                    if s_hist.len() > o.memory {
                        s_hist.remove(0);
                        y_hist.remove(0);
                    }
                }
                x.copy_from_slice(&xn);
                g.copy_from_slice(&gn);
                f = fnew;
                accepted = true;
                if gain < o.ftol * (1.0 + f.abs()) {
                    converged = true;
                }
                break;
            }
            step *= 0.5;
        }
        if !accepted {
            converged = true;
            break;
        }
        if converged {
            break;
        }
    }
    LbfgsResult {
        x,
        f,
        iterations: it,
        converged,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maximises_a_concave_quadratic() {
        let r = maximise(
            |x, g| {
                g[0] = -2.0 * (x[0] - 1.0);
                g[1] = -20.0 * (x[1] + 2.0);
                -(x[0] - 1.0).powi(2) - 10.0 * (x[1] + 2.0).powi(2)
            },
            &[0.0, 0.0],
            &LbfgsOptions::default(),
        );
        assert!(
            (r.x[0] - 1.0).abs() < 1e-6 && (r.x[1] + 2.0).abs() < 1e-6,
            "{r:?}"
        );
    }
}
