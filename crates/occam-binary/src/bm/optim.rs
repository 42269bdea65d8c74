//! A small L-BFGS maximiser with a backtracking Armijo line search (Nocedal & Wright alg. 7.4/3.1).
//! Every accepted step increases the objective, so starting from a bound and maximising keeps it
//! at least the starting value.

/// Result of [`lbfgs_maximize`].
#[derive(Debug, Clone)]
pub struct LbfgsResult {
    /// Final objective value.
    pub value: f64,
    /// Iterations done.
    pub iterations: usize,
    /// Whether the gradient tolerance was met.
    pub converged: bool,
}

/// Maximises f over x in place. `fg(x, grad) -> f(x)` must fill the gradient.
pub fn lbfgs_maximize<F>(
    x: &mut [f64],
    mut fg: F,
    max_iter: usize,
    gtol: f64,
    memory: usize,
) -> LbfgsResult
where
    F: FnMut(&[f64], &mut [f64]) -> f64,
{
    let n = x.len();
    let mut g = vec![0.0; n];
    let mut f = fg(x, &mut g);
    let mut s_hist: Vec<Vec<f64>> = Vec::new();
    let mut y_hist: Vec<Vec<f64>> = Vec::new();
    let mut d = vec![0.0; n];
    let mut xn = vec![0.0; n];
    let mut gn = vec![0.0; n];
    let norm = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
    for it in 0..max_iter {
        if !f.is_finite() || norm(&g) <= gtol * (1.0 + f.abs()) {
            return LbfgsResult {
                value: f,
                iterations: it,
                converged: f.is_finite(),
            };
        }
        // Two-loop recursion on the ascent direction (we minimise −f).
        d.iter_mut().zip(&g).for_each(|(d, g)| *d = *g);
        let k = s_hist.len();
        let mut alpha = vec![0.0; k];
        for i in (0..k).rev() {
            let rho = 1.0 / dotv(&y_hist[i], &s_hist[i]);
            alpha[i] = rho * dotv(&s_hist[i], &d);
            for (dj, yj) in d.iter_mut().zip(&y_hist[i]) {
                *dj -= alpha[i] * yj;
            }
        }
        if k > 0 {
            let gamma = dotv(&s_hist[k - 1], &y_hist[k - 1]) / dotv(&y_hist[k - 1], &y_hist[k - 1]);
            d.iter_mut().for_each(|v| *v *= gamma);
        } else {
            let gn0 = norm(&g);
            d.iter_mut().for_each(|v| *v /= gn0.max(1.0));
        }
        for i in 0..k {
            let rho = 1.0 / dotv(&y_hist[i], &s_hist[i]);
            let beta = rho * dotv(&y_hist[i], &d);
            for (dj, sj) in d.iter_mut().zip(&s_hist[i]) {
                *dj += (alpha[i] - beta) * sj;
            }
        }
        let mut slope = dotv(&g, &d);
        if slope <= 0.0 {
            d.iter_mut().zip(&g).for_each(|(d, g)| *d = *g);
            s_hist.clear();
            y_hist.clear();
            slope = dotv(&g, &g);
        }
        let mut step = 1.0;
        let mut accepted = false;
        for _ in 0..60 {
            for i in 0..n {
                xn[i] = x[i] + step * d[i];
            }
            let fnew = fg(&xn, &mut gn);
            if fnew.is_finite() && fnew >= f + 1e-4 * step * slope {
                let s: Vec<f64> = (0..n).map(|i| xn[i] - x[i]).collect();
                // y for the minimisation of −f: y = −(gn − g)
                let y: Vec<f64> = (0..n).map(|i| g[i] - gn[i]).collect();
                if dotv(&s, &y) > 1e-300 {
                    if s_hist.len() == memory {
                        s_hist.remove(0);
                        y_hist.remove(0);
                    }
                    s_hist.push(s);
                    y_hist.push(y);
                }
                x.copy_from_slice(&xn);
                g.copy_from_slice(&gn);
                let prev = f;
                f = fnew;
                accepted = true;
                if (f - prev).abs() <= 1e-15 * (1.0 + f.abs()) {
                    return LbfgsResult {
                        value: f,
                        iterations: it + 1,
                        converged: true,
                    };
                }
                break;
            }
            step *= 0.5;
        }
        if !accepted {
            return LbfgsResult {
                value: f,
                iterations: it,
                converged: false,
            };
        }
    }
    LbfgsResult {
        value: f,
        iterations: max_iter,
        converged: false,
    }
}

#[inline]
fn dotv(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maximises_a_concave_quadratic_and_rosenbrock() {
        let mut x = vec![3.0, -2.0, 1.0];
        let r = lbfgs_maximize(
            &mut x,
            |x, g| {
                let c = [1.0, -0.5, 2.0];
                let a = [1.0, 10.0, 0.1];
                let mut f = 0.0;
                for i in 0..3 {
                    f -= a[i] * (x[i] - c[i]).powi(2);
                    g[i] = -2.0 * a[i] * (x[i] - c[i]);
                }
                f
            },
            200,
            1e-12,
            7,
        );
        assert!(r.converged);
        assert!(
            (x[0] - 1.0).abs() < 1e-6 && (x[1] + 0.5).abs() < 1e-6 && (x[2] - 2.0).abs() < 1e-6
        );
        let mut y = vec![-1.2, 1.0];
        lbfgs_maximize(
            &mut y,
            |x, g| {
                let f = (1.0 - x[0]).powi(2) + 100.0 * (x[1] - x[0] * x[0]).powi(2);
                g[0] = -(-2.0 * (1.0 - x[0]) - 400.0 * x[0] * (x[1] - x[0] * x[0]));
                g[1] = -(200.0 * (x[1] - x[0] * x[0]));
                -f
            },
            500,
            1e-12,
            7,
        );
        assert!(
            (y[0] - 1.0).abs() < 1e-5 && (y[1] - 1.0).abs() < 1e-5,
            "{y:?}"
        );
    }
}
