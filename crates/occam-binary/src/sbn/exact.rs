//! Exact log-likelihood of the visible units and exact posterior marginals of the hidden units,
//! by enumerating the 2^H hidden states (Lawrence §2.5: "the exact log-likelihood is available").
//!
//! The states are cut into fixed chunks of 2^[`CHUNK_BITS`] consecutive states; rayon evaluates
//! chunks in parallel, each returning (max, Σ e^{l−max}, Σ e^{l−max} x_h), and the partials are
//! combined sequentially in chunk order, so the result does not depend on the thread count.

use super::error::{Result, SbnError};
use super::model::{Evidence, Sbn};
use occam_core::special::{sigmoid, softplus};
use rayon::prelude::*;

/// log₂ of the chunk size.
pub const CHUNK_BITS: usize = 12;
/// Largest number of hidden units accepted.
pub const MAX_HIDDEN: usize = 30;

/// Exact results for one evidence pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactResult {
    /// ln P(visible) = ln Σ_h P(h, v).
    pub log_likelihood: f64,
    /// P(x_i = 1 | v) for every unit (observed units give 0/1).
    pub marginals: Vec<f64>,
}

struct Partial {
    max: f64,
    sum: f64,
    acc: Vec<f64>,
}

/// Checks the evidence and the number of hidden units to enumerate; returns the hidden units and
/// the state with every observed unit set (hidden ones 0).
fn enumeration_start<'a>(sbn: &Sbn, ev: &'a Evidence) -> Result<(&'a [usize], Vec<f64>)> {
    ev.check(sbn)?;
    let hid = ev.hidden();
    if hid.len() > MAX_HIDDEN {
        return Err(SbnError::TooManyHidden {
            hidden: hid.len(),
            max: MAX_HIDDEN,
        });
    }
    let base = (0..sbn.n_units())
        .map(|i| if ev.get(i) == Some(true) { 1.0 } else { 0.0 })
        .collect();
    Ok((hid, base))
}

/// Exact log-likelihood and posterior marginals.
pub fn exact(sbn: &Sbn, ev: &Evidence) -> Result<ExactResult> {
    let (hid, base) = enumeration_start(sbn, ev)?;
    let h = hid.len();
    let total: u64 = 1u64 << h;
    let chunk: u64 = 1u64 << CHUNK_BITS.min(h);
    let n_chunks = total / chunk;
    let parts: Vec<Partial> = (0..n_chunks)
        .into_par_iter()
        .map(|c| {
            let mut x = base.clone();
            let mut p = Partial {
                max: f64::NEG_INFINITY,
                sum: 0.0,
                acc: vec![0.0; h],
            };
            for s in c * chunk..(c + 1) * chunk {
                for (k, &u) in hid.iter().enumerate() {
                    x[u] = ((s >> k) & 1) as f64;
                }
                let l = sbn.log_joint(&x);
                if l > p.max {
                    let sc = if p.max == f64::NEG_INFINITY {
                        0.0
                    } else {
                        (p.max - l).exp()
                    };
                    p.sum *= sc;
                    p.acc.iter_mut().for_each(|a| *a *= sc);
                    p.max = l;
                }
                let w = (l - p.max).exp();
                p.sum += w;
                for k in 0..h {
                    if (s >> k) & 1 == 1 {
                        p.acc[k] += w;
                    }
                }
            }
            p
        })
        .collect();
    let gmax = parts.iter().fold(f64::NEG_INFINITY, |m, p| m.max(p.max));
    let mut sum = 0.0;
    let mut acc = vec![0.0; h];
    for p in &parts {
        let sc = (p.max - gmax).exp();
        sum += p.sum * sc;
        for (a, pa) in acc.iter_mut().zip(&p.acc) {
            *a += pa * sc;
        }
    }
    let mut marginals = base;
    for (k, &u) in hid.iter().enumerate() {
        marginals[u] = acc[k] / sum;
    }
    Ok(ExactResult {
        log_likelihood: gmax + sum.ln(),
        marginals,
    })
}

/// Exact ln P(v) only.
pub fn log_likelihood(sbn: &Sbn, ev: &Evidence) -> Result<f64> {
    Ok(exact(sbn, ev)?.log_likelihood)
}

/// Gradient of the exact ln P(v) wrt [weights..., biases...] (0/1 coding):
/// ∂/∂w_ij = ⟨(x_i − σ(z_i)) x_j⟩_{P(h|v)}, ∂/∂b_i = ⟨x_i − σ(z_i)⟩. Returns (ln P(v), gradient).
pub fn log_likelihood_grad(sbn: &Sbn, ev: &Evidence) -> Result<(f64, Vec<f64>)> {
    let (hid, base) = enumeration_start(sbn, ev)?;
    let (h, n, ne) = (hid.len(), base.len(), sbn.n_edges());
    let total: u64 = 1u64 << h;
    let chunk: u64 = 1u64 << CHUNK_BITS.min(h);
    let parts: Vec<Partial> = (0..total / chunk)
        .into_par_iter()
        .map(|c| {
            let mut x = base.clone();
            let mut g = vec![0.0; ne + n];
            let mut p = Partial {
                max: f64::NEG_INFINITY,
                sum: 0.0,
                acc: vec![0.0; ne + n],
            };
            for s in c * chunk..(c + 1) * chunk {
                for (k, &u) in hid.iter().enumerate() {
                    x[u] = ((s >> k) & 1) as f64;
                }
                let mut l = 0.0;
                for i in 0..n {
                    let z = sbn.field(i, &x);
                    l += z * x[i] - softplus(z);
                    let r = x[i] - sigmoid(z);
                    g[ne + i] = r;
                    for e in sbn.parent_edges(i) {
                        g[e] = r * x[sbn.edge_parent(e)];
                    }
                }
                if l > p.max {
                    let sc = if p.max == f64::NEG_INFINITY {
                        0.0
                    } else {
                        (p.max - l).exp()
                    };
                    p.sum *= sc;
                    p.acc.iter_mut().for_each(|a| *a *= sc);
                    p.max = l;
                }
                let w = (l - p.max).exp();
                p.sum += w;
                for (a, gi) in p.acc.iter_mut().zip(&g) {
                    *a += w * gi;
                }
            }
            p
        })
        .collect();
    let gmax = parts.iter().fold(f64::NEG_INFINITY, |m, p| m.max(p.max));
    let mut sum = 0.0;
    let mut acc = vec![0.0; ne + n];
    for p in &parts {
        let sc = (p.max - gmax).exp();
        sum += p.sum * sc;
        for (a, pa) in acc.iter_mut().zip(&p.acc) {
            *a += pa * sc;
        }
    }
    acc.iter_mut().for_each(|a| *a /= sum);
    Ok((gmax + sum.ln(), acc))
}

/// Distribution of the visible units: ln P(v) for all 2^V settings of `visible` (bit k of the
/// index is the value of `visible[k]`), every other unit summed out.
pub fn visible_distribution(sbn: &Sbn, visible: &[usize]) -> Result<Vec<f64>> {
    let n = sbn.n_units();
    let v = visible.len();
    if v > 20 {
        return Err(SbnError::TooManyHidden { hidden: v, max: 20 });
    }
    (0..1usize << v)
        .map(|s| {
            let mut val = vec![None; n];
            for (k, &u) in visible.iter().enumerate() {
                if u >= n {
                    return Err(SbnError::UnitOutOfRange {
                        what: "visible unit".into(),
                        unit: u,
                        n,
                    });
                }
                val[u] = Some((s >> k) & 1 == 1);
            }
            log_likelihood(sbn, &Evidence::new(val))
        })
        .collect()
}
