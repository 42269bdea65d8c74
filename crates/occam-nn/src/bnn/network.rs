//! The network f(x, w) = Σ_h v_h g(u_hᵀx̃) + v_0 (thesis (5.2), committee paper (2)) with
//! g(a) = erf(a/√2), x̃ = (x, 1) (input bias inside each u_h) and an output bias v_0 (the hidden
//! "unit" fixed at 1).
//!
//! Weight layout (K = H(I+1) + H + 1): u_h occupies [h(I+1), (h+1)(I+1)) with the bias last, then
//! v_1..v_H, then the output bias.

use crate::normal::{g, g_prime};
use serde::{Deserialize, Serialize};

/// Errors of network construction and fitting.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum NetError {
    /// A network needs at least one input and one hidden unit.
    #[error("empty architecture: {inputs} inputs, {hidden} hidden units")]
    EmptyArchitecture {
        /// Inputs.
        inputs: usize,
        /// Hidden units.
        hidden: usize,
    },
    /// Data whose column count does not match the network.
    #[error("data have {got} input columns, the network {expected}")]
    InputDim {
        /// Network inputs.
        expected: usize,
        /// Data columns.
        got: usize,
    },
    /// A parameter vector of the wrong length.
    #[error("parameter vector has length {got}, expected {expected}")]
    ParamLen {
        /// Expected length.
        expected: usize,
        /// Given length.
        got: usize,
    },
    /// An invalid setting.
    #[error("invalid setting {name}: {why}")]
    Setting {
        /// Name of the setting.
        name: &'static str,
        /// Why it is invalid.
        why: String,
    },
    /// No data.
    #[error("empty data set")]
    NoData,
    /// Every restart failed numerically.
    #[error("numerical failure: {0}")]
    Numerical(String),
}

/// Shape of a one-hidden-layer network with one output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Architecture {
    /// Number of inputs I (excluding the bias).
    pub inputs: usize,
    /// Number of hidden units H (excluding the bias unit).
    pub hidden: usize,
}

impl Architecture {
    /// Checks that the network is non-empty.
    pub fn new(inputs: usize, hidden: usize) -> Result<Self, NetError> {
        if inputs == 0 || hidden == 0 {
            return Err(NetError::EmptyArchitecture { inputs, hidden });
        }
        Ok(Architecture { inputs, hidden })
    }

    /// Fan-in of a hidden unit including its bias, I + 1.
    pub fn fan_in(&self) -> usize {
        self.inputs + 1
    }

    /// Number of weights K = H(I+1) + H + 1.
    pub fn n_weights(&self) -> usize {
        self.hidden * self.fan_in() + self.hidden + 1
    }

    /// Index of u_{h,i} (i = I is the input bias).
    pub fn u(&self, h: usize, i: usize) -> usize {
        h * self.fan_in() + i
    }

    /// Index of v_h (h = H is the output bias).
    pub fn v(&self, h: usize) -> usize {
        self.hidden * self.fan_in() + h
    }

    /// The network output for one input row.
    pub fn forward(&self, w: &[f64], x: &[f64]) -> f64 {
        let mut f = w[self.v(self.hidden)];
        for h in 0..self.hidden {
            f += w[self.v(h)] * g(self.preactivation(w, h, x));
        }
        f
    }

    /// u_hᵀx̃ for one input row.
    pub fn preactivation(&self, w: &[f64], h: usize, x: &[f64]) -> f64 {
        let u = &w[self.u(h, 0)..self.u(h, 0) + self.fan_in()];
        u[..self.inputs]
            .iter()
            .zip(x)
            .map(|(a, b)| a * b)
            .sum::<f64>()
            + u[self.inputs]
    }

    /// The output and, added into `grad` with weight `scale`, scale · ∂f/∂w.
    pub fn forward_grad(&self, w: &[f64], x: &[f64], scale: f64, grad: &mut [f64]) -> f64 {
        let mut f = w[self.v(self.hidden)];
        grad[self.v(self.hidden)] += scale;
        for h in 0..self.hidden {
            let a = self.preactivation(w, h, x);
            let vh = w[self.v(h)];
            f += vh * g(a);
            grad[self.v(h)] += scale * g(a);
            let c = scale * vh * g_prime(a);
            let base = self.u(h, 0);
            for (gi, xi) in grad[base..base + self.inputs].iter_mut().zip(x) {
                *gi += c * xi;
            }
            grad[base + self.inputs] += c;
        }
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_counts_match_the_papers() {
        // K = 113 for sunspots (12 × 8), 37 for Tecator with H = 3, 97 with H = 8, 16 for the toy.
        assert_eq!(Architecture::new(12, 8).unwrap().n_weights(), 113);
        assert_eq!(Architecture::new(10, 3).unwrap().n_weights(), 37);
        assert_eq!(Architecture::new(10, 8).unwrap().n_weights(), 97);
        assert_eq!(Architecture::new(1, 5).unwrap().n_weights(), 16);
        assert!(Architecture::new(0, 3).is_err());
    }

    #[test]
    fn forward_gradient_matches_finite_differences() {
        let a = Architecture::new(3, 4).unwrap();
        let w: Vec<f64> = (0..a.n_weights())
            .map(|k| ((k as f64) * 0.77).sin())
            .collect();
        let x = [0.3, -1.2, 0.8];
        let mut grad = vec![0.0; a.n_weights()];
        a.forward_grad(&w, &x, 1.0, &mut grad);
        for k in 0..w.len() {
            let mut wp = w.clone();
            let mut wn = w.clone();
            wp[k] += 1e-6;
            wn[k] -= 1e-6;
            let fd = (a.forward(&wp, &x) - a.forward(&wn, &x)) / 2e-6;
            assert!((fd - grad[k]).abs() < 1e-8, "weight {k}");
        }
    }
}
