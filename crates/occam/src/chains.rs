//! Per-step reports of the chain q-blocks (`MarkovChain`, `GaussianMarkovChain`): a discrete
//! chain's state marginals q(z_t = k) and its most probable path (Viterbi on the expected log
//! parameters and the emissions' messages, `Vmp::viterbi`); a Gaussian chain's smoothed means
//! and standard deviations. Arrays are padded to the time plate (NaN beyond a sequence's end) for
//! Python; the JSON keeps each sequence at its own length.

use serde_json::{json, Value};

use crate::lower::Compiled;
use crate::model::Loaded;

/// What one chain variable's q says per step.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainReport {
    /// The variable's name.
    pub variable: String,
    /// `MarkovChain` or `GaussianMarkovChain`.
    pub family: &'static str,
    /// Length of each sequence (row-major over the sequence plates).
    pub lengths: Vec<usize>,
    /// Size of the time plate (the longest sequence).
    pub steps: usize,
    /// Number of states K (discrete) or the state dimension D (Gaussian).
    pub states: usize,
    /// Discrete: q(z_t = k); Gaussian: ⟨x_t⟩. `[sequences × steps × states]`, NaN past the end.
    pub values: Vec<f64>,
    /// Gaussian: the smoothed standard deviations, same layout; empty for a discrete chain.
    pub sds: Vec<f64>,
    /// Discrete: the most probable state path of each sequence; empty for a Gaussian chain.
    pub viterbi: Vec<Vec<usize>>,
}

impl ChainReport {
    /// Whether it is a discrete chain.
    pub fn is_discrete(&self) -> bool {
        self.family == "MarkovChain"
    }

    /// Row `t` of sequence `s` of a padded `[sequences × steps × states]` array.
    pub fn row<'a>(&self, a: &'a [f64], s: usize, t: usize) -> &'a [f64] {
        let at = (s * self.steps + t) * self.states;
        &a[at..at + self.states]
    }

    /// JSON: each sequence's rows up to its length.
    pub fn to_json(&self) -> Value {
        let ragged = |a: &[f64]| -> Vec<Vec<Vec<f64>>> {
            self.lengths
                .iter()
                .enumerate()
                .map(|(s, &len)| (0..len).map(|t| self.row(a, s, t).to_vec()).collect())
                .collect()
        };
        if self.is_discrete() {
            json!({
                "family": self.family,
                "states": self.states,
                "lengths": self.lengths,
                "marginals": ragged(&self.values),
                "viterbi": self.viterbi,
            })
        } else {
            json!({
                "family": self.family,
                "states": self.states,
                "lengths": self.lengths,
                "means": ragged(&self.values),
                "sds": ragged(&self.sds),
            })
        }
    }

    /// CSV: one row per (sequence, step) within the lengths.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("sequence,step");
        let k = self.states;
        if self.is_discrete() {
            (0..k).for_each(|j| out.push_str(&format!(",p_{j}")));
            out.push_str(",viterbi\n");
        } else {
            (0..k).for_each(|j| out.push_str(&format!(",mean_{j}")));
            (0..k).for_each(|j| out.push_str(&format!(",sd_{j}")));
            out.push('\n');
        }
        for (s, &len) in self.lengths.iter().enumerate() {
            for t in 0..len {
                out.push_str(&format!("{s},{t}"));
                for v in self.row(&self.values, s, t) {
                    out.push_str(&format!(",{v}"));
                }
                if self.is_discrete() {
                    out.push_str(&format!(",{}\n", self.viterbi[s][t]));
                } else {
                    for v in self.row(&self.sds, s, t) {
                        out.push_str(&format!(",{v}"));
                    }
                    out.push('\n');
                }
            }
        }
        out
    }
}

/// The report of chain variable `v`, or `None` if it is not a chain.
pub fn chain(loaded: &Loaded, c: &Compiled, v: usize) -> Option<ChainReport> {
    let var = &loaded.model.variables[v];
    let node = c.var_nodes[v];
    let lengths = c.vmp.chain_lengths(node)?.to_vec();
    let family = c.vmp.family(node);
    let steps = loaded.model.plates[*var.plates.last()?].size as usize;
    let states = loaded.model.plates[*var.event_plates.first()?].size as usize;
    let u = c.vmp.moments(node);
    let discrete = family == "MarkovChain";
    let row = if discrete {
        states
    } else {
        states + states * states
    };
    let n = lengths.len() * steps;
    let mut values = vec![f64::NAN; n * states];
    let mut sds = if discrete {
        Vec::new()
    } else {
        vec![f64::NAN; n * states]
    };
    for (s, &len) in lengths.iter().enumerate() {
        for t in 0..len {
            let e = s * steps + t;
            let ue = &u[e * row..(e + 1) * row];
            values[e * states..(e + 1) * states].copy_from_slice(&ue[..states]);
            if !discrete {
                for i in 0..states {
                    let var = ue[states + i * states + i] - ue[i] * ue[i];
                    sds[e * states + i] = var.max(0.0).sqrt();
                }
            }
        }
    }
    let viterbi = if discrete {
        c.vmp.viterbi(node).unwrap_or_default()
    } else {
        Vec::new()
    };
    Some(ChainReport {
        variable: var.name.clone(),
        family,
        lengths,
        steps,
        states,
        values,
        sds,
        viterbi,
    })
}

/// Every chain variable's report, in model order.
pub fn chains(loaded: &Loaded, c: &Compiled) -> Vec<ChainReport> {
    (0..loaded.model.variables.len())
        .filter_map(|v| chain(loaded, c, v))
        .collect()
}
