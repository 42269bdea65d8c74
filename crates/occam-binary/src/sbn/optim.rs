//! The sigmoid-belief-network fits' call shape over the workspace's one L-BFGS,
//! [`occam_core::optim`]: a step is accepted only if the objective rises, so a bound maximised
//! from a starting point never ends below its starting value.

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
    /// True unless the iteration budget ran out (a stalled line search counts as converged: no
    /// ascent step exists at the working precision).
    pub converged: bool,
}

/// Maximises f. `fg(x, g)` returns f(x) and writes ∇f(x) into g.
pub fn maximise(
    fg: impl FnMut(&[f64], &mut [f64]) -> f64,
    x0: &[f64],
    o: &LbfgsOptions,
) -> LbfgsResult {
    let r = occam_core::optim::maximize(
        fg,
        x0.to_vec(),
        occam_core::optim::LbfgsOptions {
            memory: o.memory,
            max_iters: o.max_iter,
            grad_tol: o.gtol,
            f_tol: o.ftol,
        },
    );
    LbfgsResult {
        converged: r.stop != occam_core::optim::Stop::MaxIters,
        x: r.x,
        f: r.f,
        iterations: r.iters,
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
