//! The Boltzmann-machine fits' call shape (in place, maximising, positional settings) over the
//! workspace's one L-BFGS, [`occam_core::optim`]: every accepted step increases the objective, so
//! starting from a bound and maximising keeps it at least the starting value.

use occam_core::optim::{maximize, LbfgsOptions, Stop};

/// Result of [`lbfgs_maximize`].
#[derive(Debug, Clone)]
pub struct LbfgsResult {
    /// Final objective value.
    pub value: f64,
    /// Iterations done.
    pub iterations: usize,
    /// Whether a tolerance (gradient, or a relative gain below 1e-15) was met.
    pub converged: bool,
}

/// Maximises f over x in place. `fg(x, grad) -> f(x)` must fill the gradient; the search stops
/// when the largest gradient component falls below `gtol`.
pub fn lbfgs_maximize<F>(
    x: &mut [f64],
    fg: F,
    max_iter: usize,
    gtol: f64,
    memory: usize,
) -> LbfgsResult
where
    F: FnMut(&[f64], &mut [f64]) -> f64,
{
    let r = maximize(
        fg,
        x.to_vec(),
        LbfgsOptions {
            memory,
            max_iters: max_iter,
            grad_tol: gtol,
            f_tol: 1e-15,
        },
    );
    x.copy_from_slice(&r.x);
    LbfgsResult {
        value: r.f,
        iterations: r.iters,
        converged: matches!(r.stop, Stop::Gradient | Stop::Converged),
    }
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
