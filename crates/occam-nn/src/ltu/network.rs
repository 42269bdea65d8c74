//! Layered networks of ±1 linear threshold units, s_i = sign(Σ_j w_ij s_j + w_i0) (thesis eq. 3.1).
//!
//! Layer `l` of weights maps the states of layer `l` (layer 0 holds the real-valued inputs) to the
//! units of layer `l + 1`; the last layer of units is the output layer and every layer in between
//! is hidden. Each unit's row of weights stores its fan-in weights followed by its bias w_i0 (the
//! bias is the weight from a dummy unit s_0 = 1).

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::error::{check_finite, check_len, LtuError, Result};

/// The threshold used everywhere: sign(a) with sign(0) = +1, so every unit state is ±1.
#[inline]
pub fn threshold(a: f64) -> f64 {
    if a >= 0.0 {
        1.0
    } else {
        -1.0
    }
}

/// One layer of weights: `n_out` units, each with `n_in` weights and a bias.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layer {
    n_in: usize,
    n_out: usize,
    /// Row-major `n_out × (n_in + 1)`; the last entry of each row is the bias.
    weights: Vec<f64>,
}

impl Layer {
    /// A layer from its row-major `n_out × (n_in + 1)` weights (bias last in each row).
    pub fn new(n_in: usize, n_out: usize, weights: Vec<f64>) -> Result<Self> {
        if n_in == 0 || n_out == 0 {
            return Err(LtuError::InvalidOption {
                name: "layer size",
                why: format!("layers need at least one input and one unit, got {n_in} → {n_out}"),
            });
        }
        check_len("layer weights", n_out * (n_in + 1), weights.len())?;
        check_finite("layer weights", &weights)?;
        Ok(Self {
            n_in,
            n_out,
            weights,
        })
    }

    /// Number of inputs (parents) of each unit.
    pub fn n_in(&self) -> usize {
        self.n_in
    }

    /// Number of units.
    pub fn n_out(&self) -> usize {
        self.n_out
    }

    /// The weights and bias of unit `i` (bias last).
    pub fn row(&self, i: usize) -> &[f64] {
        let w = self.n_in + 1;
        &self.weights[i * w..(i + 1) * w]
    }

    /// Mutable weights and bias of unit `i` (bias last).
    pub fn row_mut(&mut self, i: usize) -> &mut [f64] {
        let w = self.n_in + 1;
        &mut self.weights[i * w..(i + 1) * w]
    }

    /// The weight from parent `j` to unit `i`.
    #[inline]
    pub fn weight(&self, i: usize, j: usize) -> f64 {
        self.weights[i * (self.n_in + 1) + j]
    }

    /// The activation a_i = Σ_j w_ij s_j + w_i0 of unit `i` given its parents' states.
    #[inline]
    pub fn activation(&self, i: usize, parents: &[f64]) -> f64 {
        let row = self.row(i);
        let (w, bias) = row.split_at(self.n_in);
        w.iter().zip(parents).map(|(w, s)| w * s).sum::<f64>() + bias[0]
    }
}

/// A layered network of linear threshold units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LtuNetwork {
    layers: Vec<Layer>,
}

/// The states of every layer for one pattern: `states[0]` are the inputs, `states[l]` for
/// `l ≥ 1` the ±1 (or, while annealing, soft in [−1, 1]) states of layer `l`'s units.
pub type States = Vec<Vec<f64>>;

impl LtuNetwork {
    /// A network from its layers; consecutive layers must agree in size.
    pub fn from_layers(layers: Vec<Layer>) -> Result<Self> {
        if layers.is_empty() {
            return Err(LtuError::InvalidOption {
                name: "layers",
                why: "a network needs at least one layer of weights".into(),
            });
        }
        for pair in layers.windows(2) {
            check_len("layer fan-in", pair[0].n_out, pair[1].n_in)?;
        }
        Ok(Self { layers })
    }

    /// A network with sizes `[inputs, hidden…, outputs]` and every weight and bias drawn from
    /// U(−scale, scale).
    pub fn random<R: Rng + ?Sized>(sizes: &[usize], scale: f64, rng: &mut R) -> Result<Self> {
        if sizes.len() < 2 {
            return Err(LtuError::InvalidOption {
                name: "sizes",
                why: format!("need at least inputs and outputs, got {sizes:?}"),
            });
        }
        if !(scale.is_finite() && scale > 0.0) {
            return Err(LtuError::InvalidOption {
                name: "scale",
                why: format!("must be finite and positive, got {scale}"),
            });
        }
        let layers = sizes
            .windows(2)
            .map(|p| {
                let w = (0..p[1] * (p[0] + 1))
                    .map(|_| rng.random_range(-scale..scale))
                    .collect();
                Layer::new(p[0], p[1], w)
            })
            .collect::<Result<Vec<_>>>()?;
        Self::from_layers(layers)
    }

    /// The layers of weights, input side first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// Mutable layers (sizes cannot change).
    pub fn layers_mut(&mut self) -> &mut [Layer] {
        &mut self.layers
    }

    /// Layer sizes `[inputs, hidden…, outputs]`.
    pub fn sizes(&self) -> Vec<usize> {
        std::iter::once(self.layers[0].n_in)
            .chain(self.layers.iter().map(|l| l.n_out))
            .collect()
    }

    /// Number of inputs.
    pub fn n_inputs(&self) -> usize {
        self.layers[0].n_in
    }

    /// Number of output units.
    pub fn n_outputs(&self) -> usize {
        self.layers[self.layers.len() - 1].n_out
    }

    /// Total number of hidden units.
    pub fn n_hidden(&self) -> usize {
        self.layers[..self.layers.len() - 1]
            .iter()
            .map(|l| l.n_out)
            .sum()
    }

    /// Forward pass (eq. 3.1): the states of every layer given the inputs.
    pub fn forward(&self, x: &[f64]) -> Result<States> {
        check_len("inputs", self.n_inputs(), x.len())?;
        check_finite("inputs", x)?;
        Ok(self.forward_unchecked(x))
    }

    pub(crate) fn forward_unchecked(&self, x: &[f64]) -> States {
        let mut states = Vec::with_capacity(self.layers.len() + 1);
        states.push(x.to_vec());
        for layer in &self.layers {
            let parents = &states[states.len() - 1];
            let next = (0..layer.n_out)
                .map(|i| threshold(layer.activation(i, parents)))
                .collect();
            states.push(next);
        }
        states
    }

    /// The ±1 outputs for inputs `x`.
    pub fn predict(&self, x: &[f64]) -> Result<Vec<f64>> {
        Ok(self.forward(x)?.pop().unwrap_or_default())
    }

    /// Number of patterns of `x` (row-major, `n × inputs`) whose outputs differ from the ±1
    /// targets `y` (row-major, `n × outputs`) in any unit.
    pub fn count_errors(&self, x: &[f64], y: &[f64]) -> Result<usize> {
        let (d, k) = (self.n_inputs(), self.n_outputs());
        if !x.len().is_multiple_of(d) {
            return Err(LtuError::Shape {
                what: "inputs (multiple of the input size)",
                expected: d * (x.len() / d + 1),
                got: x.len(),
            });
        }
        let n = x.len() / d;
        check_len("targets", n * k, y.len())?;
        check_finite("inputs", x)?;
        Ok((0..n)
            .filter(|&p| {
                let out = self.forward_unchecked(&x[p * d..(p + 1) * d]);
                out[out.len() - 1] != y[p * k..(p + 1) * k]
            })
            .count())
    }
}
