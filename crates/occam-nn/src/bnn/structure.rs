//! Structure learning with the node relevance determination prior (thesis §6.5.7–6.5.9): alternate
//! variational cycles (the "E-step") with an "M-step" that tries removing the hidden node and the
//! input node with the fewest well-determined parameters, keeping a removal only if the bound rises.
//!
//! The ranking uses MacKay's effective number of parameters per node,
//! γ_node = Σ_{k ∋ node} (1 − ⟨α_k⟩ ⟨s_k⟩), with ⟨α_k⟩ the weight's expected prior precision and s_k
//! its posterior variance (Q-weighted over components). The thesis's printed (6.53) sums
//! α_h α_i / d²_ih instead, which is large for an irrelevant node (large α, small variance) and so
//! ranks backwards; the bound check makes the heuristic non-critical either way.

use super::entropy::Layout;
use super::network::{Architecture, NetError};
use super::prior::{Prior, PriorKind};
use super::vb::{continue_fit, fit_vb, VbFit, VbOptions};
use crate::data::Dataset;
use serde::{Deserialize, Serialize};

/// One attempted removal.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StructureStep {
    /// Cycle index.
    pub cycle: usize,
    /// "hidden j" or "input i" (original column).
    pub node: String,
    /// Bound of the current structure after the cycle.
    pub bound_kept: f64,
    /// Bound of the candidate after one cycle.
    pub bound_removed: f64,
    /// Whether the removal was kept.
    pub accepted: bool,
}

/// The result of structure EM.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StructureFit {
    /// The final fit (on the kept input columns).
    pub fit: VbFit,
    /// The original input columns still in the network.
    pub inputs: Vec<usize>,
    /// Every attempted removal.
    pub history: Vec<StructureStep>,
}

impl StructureFit {
    /// Predictive means for rows of the original inputs (all columns).
    pub fn predict_mean(&self, x: &[f64], columns: usize) -> Result<Vec<f64>, NetError> {
        let sub = select_columns(x, columns, &self.inputs);
        self.fit.predict_mean(&sub)
    }
}

fn select_columns(x: &[f64], d: usize, keep: &[usize]) -> Vec<f64> {
    x.chunks_exact(d)
        .flat_map(|r| keep.iter().map(move |&c| r[c]))
        .collect()
}

/// For each weight of the smaller network, its index in the larger one.
fn kept_weights(
    a: &Architecture,
    drop_hidden: Option<usize>,
    drop_input: Option<usize>,
) -> Vec<usize> {
    let hs: Vec<usize> = (0..a.hidden).filter(|&h| Some(h) != drop_hidden).collect();
    let is: Vec<usize> = (0..=a.inputs).filter(|&i| Some(i) != drop_input).collect();
    let mut out = Vec::new();
    for &h in &hs {
        out.extend(is.iter().map(|&i| a.u(h, i)));
    }
    out.extend(hs.iter().map(|&h| a.v(h)));
    out.push(a.v(a.hidden));
    out
}

/// The fit with one node removed (its weights and its NRD hyper-parameter dropped).
fn remove_node(
    fit: &VbFit,
    drop_hidden: Option<usize>,
    drop_input: Option<usize>,
) -> Result<VbFit, NetError> {
    let a = fit.arch;
    let arch = Architecture::new(
        a.inputs - usize::from(drop_input.is_some()),
        a.hidden - usize::from(drop_hidden.is_some()),
    )?;
    let map = kept_weights(&a, drop_hidden, drop_input);
    let (old, new) = (
        fit.layout(),
        Layout {
            m: fit.components,
            k: arch.n_weights(),
        },
    );
    let mut theta = vec![0.0; new.len()];
    for m in 0..fit.components {
        for (j, &k) in map.iter().enumerate() {
            theta[new.mean(m) + j] = fit.theta[old.mean(m) + k];
            theta[new.log_var(m) + j] = fit.theta[old.log_var(m) + k];
            if fit.components > 1 {
                theta[new.r_mean(m) + j] = fit.theta[old.r_mean(m) + k];
                theta[new.r_log_var(m) + j] = fit.theta[old.r_log_var(m) + k];
            }
        }
    }
    // NRD hyper-parameters: inputs 0..=I, hidden I+1..=I+H+1, output last.
    let drop_hyper = drop_input.or(drop_hidden.map(|h| a.inputs + 1 + h));
    let prior = Prior::new(PriorKind::Nrd, &arch, fit.prior.hyper[0]);
    let mut hyper = fit.hyper.clone();
    hyper.alpha = fit
        .hyper
        .alpha
        .iter()
        .enumerate()
        .filter(|(j, _)| Some(*j) != drop_hyper)
        .map(|(_, g)| *g)
        .collect();
    Ok(VbFit {
        arch,
        theta,
        prior,
        hyper,
        ..fit.clone()
    })
}

/// γ per hidden unit and per input node (not the biases).
fn effective_parameters(fit: &VbFit) -> (Vec<f64>, Vec<f64>) {
    let a = fit.arch;
    let lay = fit.layout();
    let prec = fit.prior.weight_precisions(&fit.hyper.alpha);
    let det = |k: usize| -> f64 {
        1.0 - prec[k]
            * (0..fit.components)
                .map(|m| fit.q[m] * fit.theta[lay.log_var(m) + k].exp())
                .sum::<f64>()
    };
    let hidden = (0..a.hidden)
        .map(|h| (0..=a.inputs).map(|i| det(a.u(h, i))).sum::<f64>() + det(a.v(h)))
        .collect();
    let inputs = (0..a.inputs)
        .map(|i| (0..a.hidden).map(|h| det(a.u(h, i))).sum())
        .collect();
    (hidden, inputs)
}

fn argmin(v: &[f64]) -> Option<usize> {
    (0..v.len()).min_by(|&a, &b| v[a].total_cmp(&v[b]))
}

/// Structure EM: an initial NRD fit (`opts.cycles` cycles), then `cycles` × (one cycle; try removing
/// the least-determined hidden node; try removing the least-determined input), each removal kept only
/// if the candidate's bound after one cycle exceeds the current structure's after one cycle.
pub fn structure_em(
    data: &Dataset,
    opts: &VbOptions,
    cycles: usize,
) -> Result<StructureFit, NetError> {
    if opts.prior != PriorKind::Nrd {
        return Err(NetError::Setting {
            name: "prior",
            why: "structure EM needs the NRD prior".into(),
        });
    }
    let mut inputs: Vec<usize> = (0..data.d).collect();
    let mut sub = data.clone();
    let mut fit = fit_vb(&sub, opts)?;
    let mut history = Vec::new();
    for cycle in 0..cycles {
        fit = continue_fit(&sub, &fit, opts, 1)?;
        let (g_hidden, g_inputs) = effective_parameters(&fit);
        if fit.arch.hidden > 1 {
            if let Some(h) = argmin(&g_hidden) {
                let cand = continue_fit(&sub, &remove_node(&fit, Some(h), None)?, opts, 1)?;
                let kept = continue_fit(&sub, &fit, opts, 1)?;
                let accepted = cand.bound.total > kept.bound.total;
                history.push(StructureStep {
                    cycle,
                    node: format!("hidden {h}"),
                    bound_kept: kept.bound.total,
                    bound_removed: cand.bound.total,
                    accepted,
                });
                fit = if accepted { cand } else { kept };
            }
        }
        if fit.arch.inputs > 1 {
            if let Some(i) = argmin(&g_inputs[..fit.arch.inputs.min(g_inputs.len())]) {
                let cols: Vec<usize> = (0..fit.arch.inputs).filter(|&c| c != i).collect();
                let sub_c = Dataset {
                    x: select_columns(&sub.x, sub.d, &cols),
                    d: cols.len(),
                    t: sub.t.clone(),
                };
                let cand = continue_fit(&sub_c, &remove_node(&fit, None, Some(i))?, opts, 1)?;
                let kept = continue_fit(&sub, &fit, opts, 1)?;
                let accepted = cand.bound.total > kept.bound.total;
                history.push(StructureStep {
                    cycle,
                    node: format!("input {}", inputs[i]),
                    bound_kept: kept.bound.total,
                    bound_removed: cand.bound.total,
                    accepted,
                });
                if accepted {
                    fit = cand;
                    sub = sub_c;
                    inputs.remove(i);
                } else {
                    fit = kept;
                }
            }
        }
    }
    Ok(StructureFit {
        fit,
        inputs,
        history,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bnn::prior::Gamma;

    #[test]
    fn removal_keeps_the_remaining_weights_and_hypers() {
        let arch = Architecture::new(3, 2).unwrap();
        let map = kept_weights(&arch, Some(0), None);
        assert_eq!(map.len(), Architecture::new(3, 1).unwrap().n_weights());
        assert_eq!(map[0], arch.u(1, 0));
        let map = kept_weights(&arch, None, Some(1));
        assert_eq!(map.len(), Architecture::new(2, 2).unwrap().n_weights());
        assert_eq!(&map[..3], &[arch.u(0, 0), arch.u(0, 2), arch.u(0, 3)]);
    }

    #[test]
    fn structure_em_prunes_an_irrelevant_input_and_never_lowers_the_bound() {
        // t depends on input 0 only; inputs 1 and 2 are noise.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(4);
        let n = 60;
        let x: Vec<f64> = (0..3 * n).map(|_| rng.random_range(-1.5..1.5)).collect();
        let t: Vec<f64> = (0..n)
            .map(|i| (1.5 * x[3 * i]).sin() + 0.05 * rng.random_range(-1.0..1.0))
            .collect();
        let data = Dataset::new(x, 3, t).unwrap();
        let opts = VbOptions {
            prior: PriorKind::Nrd,
            cycles: 2,
            iters_per_cycle: 150,
            alpha_prior: Gamma { a: 1e-3, b: 1e-3 },
            init_beta: 50.0,
            init_alpha: 1.0,
            ..VbOptions::committee_paper(3, 1)
        };
        let s = structure_em(&data, &opts, 4).unwrap();
        for h in &s.history {
            if h.accepted {
                assert!(h.bound_removed > h.bound_kept);
            }
        }
        assert!(s.inputs.contains(&0), "kept inputs {:?}", s.inputs);
        assert!(s.inputs.len() < 3, "no input pruned: {:?}", s.history);
    }
}
