//! The penalised error M(w) = β E_D(w) + ½ Σ_k α_k w_k² of a deterministic network (committee paper
//! (8)–(9), (15)), its gradient and its Hessian, shared by the evidence procedure, hybrid Monte
//! Carlo and early stopping.

use crate::bnn::network::Architecture;
use occam_core::optim::{minimize, LbfgsOptions};

/// A data set bound to a network, for point-estimate methods.
#[derive(Clone, Copy, Debug)]
pub struct MapProblem<'a> {
    /// The network.
    pub arch: Architecture,
    /// Inputs (row-major N × I).
    pub x: &'a [f64],
    /// Targets.
    pub t: &'a [f64],
}

impl MapProblem<'_> {
    /// E_D(w) = ½ Σ_n (t_n − f(x_n, w))²; adds `scale · ∂E_D/∂w` into `grad` when given.
    pub fn error(&self, w: &[f64], mut grad: Option<(&mut [f64], f64)>) -> f64 {
        let i_n = self.arch.inputs;
        let mut e = 0.0;
        for (n, &t) in self.t.iter().enumerate() {
            let x = &self.x[n * i_n..(n + 1) * i_n];
            match grad.as_mut() {
                Some((g, c)) => {
                    // f is linear in the scale passed to forward_grad, so pass the residual after.
                    let f = self.arch.forward(w, x);
                    let r = f - t;
                    self.arch.forward_grad(w, x, *c * r, g);
                    e += 0.5 * r * r;
                }
                None => {
                    let r = self.arch.forward(w, x) - t;
                    e += 0.5 * r * r;
                }
            }
        }
        e
    }

    /// M(w) = β E_D + ½ Σ α_k w_k², with its gradient written into `grad`.
    pub fn penalised(&self, w: &[f64], alpha: &[f64], beta: f64, grad: &mut [f64]) -> f64 {
        grad.iter_mut().for_each(|g| *g = 0.0);
        let e = self.error(w, Some((grad, beta)));
        let mut m = beta * e;
        for ((g, wk), a) in grad.iter_mut().zip(w).zip(alpha) {
            *g += a * wk;
            m += 0.5 * a * wk * wk;
        }
        m
    }

    /// Minimises M(w) from `w0` with at most `iters` L-BFGS iterations.
    pub fn train(&self, w0: Vec<f64>, alpha: &[f64], beta: f64, iters: usize) -> Vec<f64> {
        minimize(
            |w, g| self.penalised(w, alpha, beta, g),
            w0,
            LbfgsOptions {
                max_iters: iters,
                ..Default::default()
            },
        )
        .x
    }

    /// ∇∇E_D at w (row-major K × K) by central differences of the analytic gradient (step 1e-5
    /// relative), symmetrised. Exact second derivatives of the erf network are possible but this is
    /// called a handful of times per fit and its O(h²) error is far below the eigenvalue scale.
    pub fn hessian_error(&self, w: &[f64]) -> Vec<f64> {
        let k = w.len();
        let mut h = vec![0.0; k * k];
        let mut gp = vec![0.0; k];
        let mut gn = vec![0.0; k];
        let mut wp = w.to_vec();
        for j in 0..k {
            let step = 1e-5 * (1.0 + w[j].abs());
            wp[j] = w[j] + step;
            gp.iter_mut().for_each(|g| *g = 0.0);
            self.error(&wp, Some((&mut gp, 1.0)));
            wp[j] = w[j] - step;
            gn.iter_mut().for_each(|g| *g = 0.0);
            self.error(&wp, Some((&mut gn, 1.0)));
            wp[j] = w[j];
            for i in 0..k {
                h[i * k + j] = (gp[i] - gn[i]) / (2.0 * step);
            }
        }
        for i in 0..k {
            for j in 0..i {
                let s = 0.5 * (h[i * k + j] + h[j * k + i]);
                h[i * k + j] = s;
                h[j * k + i] = s;
            }
        }
        h
    }

    /// Network outputs at each row of `x`.
    pub fn predict(&self, w: &[f64], x: &[f64]) -> Vec<f64> {
        x.chunks_exact(self.arch.inputs)
            .map(|r| self.arch.forward(w, r))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradient_and_hessian_match_finite_differences() {
        let arch = Architecture::new(2, 3).unwrap();
        let x: Vec<f64> = (0..16).map(|i| ((i as f64) * 0.61).sin()).collect();
        let t: Vec<f64> = (0..8).map(|i| ((i as f64) * 0.37).cos()).collect();
        let p = MapProblem { arch, x: &x, t: &t };
        let w: Vec<f64> = (0..arch.n_weights())
            .map(|k| ((k as f64) * 1.3).sin())
            .collect();
        let alpha: Vec<f64> = (0..w.len()).map(|k| 0.1 * (k + 1) as f64).collect();
        let mut g = vec![0.0; w.len()];
        p.penalised(&w, &alpha, 3.0, &mut g);
        let mut scratch = vec![0.0; w.len()];
        for k in 0..w.len() {
            let mut a = w.clone();
            let mut b = w.clone();
            a[k] += 1e-6;
            b[k] -= 1e-6;
            let fd = (p.penalised(&a, &alpha, 3.0, &mut scratch)
                - p.penalised(&b, &alpha, 3.0, &mut scratch))
                / 2e-6;
            assert!((fd - g[k]).abs() < 1e-7 * (1.0 + fd.abs()), "∂M/∂w[{k}]");
        }
        // Hessian against second differences of E_D.
        let h = p.hessian_error(&w);
        let k = w.len();
        for (i, j) in [(0, 0), (1, 4), (5, 9), (k - 1, 2)] {
            let e = 1e-4;
            let f = |di: f64, dj: f64| {
                let mut v = w.clone();
                v[i] += di;
                v[j] += dj;
                p.error(&v, None)
            };
            let fd = (f(e, e) - f(e, -e) - f(-e, e) + f(-e, -e)) / (4.0 * e * e);
            assert!(
                (fd - h[i * k + j]).abs() < 1e-5 * (1.0 + fd.abs()),
                "H[{i},{j}] {} vs {fd}",
                h[i * k + j]
            );
        }
    }
}
