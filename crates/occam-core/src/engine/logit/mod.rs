//! The data-times-vector kernel: η_n = dot(x_n, w) with observed rows x_n (a constant X, N × D)
//! and one Gaussian vector w read by every row, whose child is not the linear-Gaussian kernel's —
//! logistic regression `y[n] ~ Bernoulli(sigmoid(dot(x[n, :], w)))` (and the Binomial, the
//! Jaakkola–Jordan families, the log-link Poisson, with or without offsets added to η).
//!
//! The element-by-element path forms η_n's moments from x_n's fixed moments [x_n, x_n x_nᵀ] —
//! Winn (2.41) for a dot product: ⟨η⟩ = x_nᵀ⟨w⟩, ⟨η²⟩ = tr(x_n x_nᵀ⟨wwᵀ⟩) — and passes the
//! child's message [g_n, h_n] on (⟨η⟩, ⟨η²⟩) to w as [g_n x_n, h_n x_n x_nᵀ], Winn (2.49): every
//! row keeps its D + D² outer product (336 MB at N = 10⁵, D = 20, for 16 MB of data) and a sweep
//! touches it twice. By linearity both are matrix products of X:
//!
//! * η's moments: with m = ⟨w⟩ and Σ = ⟨wwᵀ⟩ − mmᵀ, ⟨η⟩ = X m and ⟨η²⟩ = ⟨η⟩² + rowsum((XΣ)∘X)
//!   (one GEMM, XΣ);
//! * the message to w: [Xᵀ g, Xᵀ diag(h) X] (one weighted GEMM).
//!
//! Nothing per row is kept beyond η's two moments and the child's two-number message; X keeps its
//! values only (its moments are formed on request, as for the linear kernel's covariates). The
//! child itself — its bound term per row, its message to η, and w's checked non-conjugate step
//! (`noncj`) — is the element-by-element code unchanged, so the bound is the same sum of the same
//! per-row expectations.
//!
//! Rows are processed in fixed chunks of [`kernels::CHUNK`] in parallel, partial sums added in
//! chunk order: the same bits for any thread count.

use super::*;
use crate::kernels::{self, gemm};
use faer::{Accum, MatMut, MatRef};

/// η = dot(x_n, w) served by the kernel (module docs): X is node `x` read in slot `x_slot`, w the
/// other slot's single element.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LogitDot {
    /// The constant X (N elements of D values).
    pub(super) x: usize,
    /// The dot node's slot reading X.
    pub(super) x_slot: usize,
    d: usize,
}

/// The kernel of dot node `f`, if it has the form of the module docs.
pub(super) fn detect(nodes: &[Node], f: usize) -> Option<LogitDot> {
    let fnode = &nodes[f];
    let Body::Deterministic(Factor::Dot(dot)) = &fnode.body else {
        return None;
    };
    let d = dot.d;
    if fnode.joint_gaussian
        || fnode.gated.is_some()
        || fnode.configs != 1
        || fnode.children.is_empty()
        || fnode.n == 0
    {
        return None;
    }
    (0..2).find_map(|x_slot| {
        let (xe, we) = (&fnode.parents[x_slot], &fnode.parents[1 - x_slot]);
        let (Source::Node(x), Source::Node(w)) = (&xe.source, &we.source) else {
            return None;
        };
        let (xn, wn) = (&nodes[*x], &nodes[*w]);
        let rows = matches!(xn.body, Body::Constant)
            && xn.kind == (MomentKind::Gaussian { d })
            && xn.n == fnode.n
            && xn.data.len() == xn.n * d
            && xe.stack == 1
            && xe.rule.is_identity(fnode.n);
        let vector = !matches!(wn.body, Body::Constant)
            && wn.kind == (MomentKind::Gaussian { d })
            && wn.len == d + d * d
            && we.stack == 1
            && (we.rule.is_broadcast() || wn.n == 1);
        (rows && vector).then_some(LogitDot { x: *x, x_slot, d })
    })
}

/// Runs `f` on each chunk of rows `lo..hi` (in parallel, results in chunk order).
fn chunks<T: Send>(n: usize, f: impl Fn(usize, usize) -> T + Sync + Send) -> Vec<T> {
    kernels::map_chunks(n.div_ceil(kernels::CHUNK), |c| {
        f(c * kernels::CHUNK, ((c + 1) * kernels::CHUNK).min(n))
    })
}

impl LogitDot {
    /// w's moments [m, ⟨wwᵀ⟩] (its one element read by every row).
    fn w_moments<'a>(&self, nodes: &'a [Node], f: usize) -> &'a [f64] {
        let we = &nodes[f].parents[1 - self.x_slot];
        let Source::Node(w) = we.source else {
            unreachable!("checked by detect")
        };
        let pe = we.at(0);
        let len = self.d + self.d * self.d;
        &nodes[w].q.u[pe * len..(pe + 1) * len]
    }

    /// Writes η's moments [⟨η_n⟩, ⟨η_n²⟩] for every row (module docs) into `u`, the dot node's
    /// moments taken out of it for the call: in place, chunk by chunk, so a refresh allocates
    /// nothing per row (each row's two numbers are formed as before: the same bits).
    pub(super) fn fill_moments(&self, nodes: &[Node], f: usize, u: &mut Vec<f64>) {
        let d = self.d;
        let x = &nodes[self.x].data;
        let wu = self.w_moments(nodes, f);
        let (m, second) = wu.split_at(d);
        // Σ = ⟨wwᵀ⟩ − mmᵀ (symmetric; column-major and row-major alike).
        let mut sigma = second.to_vec();
        for (c, col) in sigma.chunks_exact_mut(d).enumerate() {
            for (r, s) in col.iter_mut().enumerate() {
                *s -= m[r] * m[c];
            }
        }
        let n = nodes[f].n;
        if u.len() != 2 * n {
            // Every entry is written below.
            *u = vec![0.0; 2 * n];
        }
        let fill = |(c, out): (usize, &mut [f64])| {
            let lo = c * kernels::CHUNK;
            let rows = out.len() / 2;
            let xc = &x[lo * d..(lo + rows) * d];
            let mut xs = vec![0.0; rows * d];
            gemm(
                MatMut::from_row_major_slice_mut(&mut xs, rows, d),
                Accum::Replace,
                MatRef::from_row_major_slice(xc, rows, d),
                MatRef::from_row_major_slice(&sigma, d, d),
            );
            for ((xr, sr), ur) in xc
                .chunks_exact(d)
                .zip(xs.chunks_exact(d))
                .zip(out.chunks_exact_mut(2))
            {
                let mean: f64 = xr.iter().zip(m).map(|(a, b)| a * b).sum();
                let var: f64 = xr.iter().zip(sr).map(|(a, b)| a * b).sum();
                ur[0] = mean;
                ur[1] = mean * mean + var;
            }
        };
        if n <= kernels::CHUNK {
            u.chunks_mut(2 * kernels::CHUNK).enumerate().for_each(fill);
        } else {
            u.par_chunks_mut(2 * kernels::CHUNK)
                .enumerate()
                .for_each(fill);
        }
    }

    /// Adds the message to w of the child messages `md` ([g_n, h_n] per row) into `out`, w's
    /// message array: [Xᵀ g, Xᵀ diag(h) X] (module docs).
    pub(super) fn message(&self, nodes: &[Node], f: usize, md: &[f64], out: &mut [f64]) {
        let d = self.d;
        let x = &nodes[self.x].data;
        let n = nodes[f].n;
        let parts = chunks(n, |lo, hi| {
            let xc = &x[lo * d..hi * d];
            let mut first = vec![0.0; d];
            let mut hx = vec![0.0; (hi - lo) * d];
            for (r, xr) in xc.chunks_exact(d).enumerate() {
                let (g, h) = (md[2 * (lo + r)], md[2 * (lo + r) + 1]);
                first.iter_mut().zip(xr).for_each(|(s, v)| *s += g * v);
                hx[r * d..(r + 1) * d]
                    .iter_mut()
                    .zip(xr)
                    .for_each(|(s, v)| *s = h * v);
            }
            let mut gram = vec![0.0; d * d];
            kernels::weighted_sums_block(&hx, d, xc, d, &mut gram);
            (first, gram)
        });
        let we = &nodes[f].parents[1 - self.x_slot];
        let len = d + d * d;
        let pe = we.at(0);
        let target = &mut out[pe * len..(pe + 1) * len];
        for (first, gram) in parts {
            kernels::add_into(&mut target[..d], &first);
            kernels::add_into(&mut target[d..], &gram);
        }
    }
}

/// Whether node `id`'s bound term is kept until an input changes (`NodeCache::term`): a fully
/// observed child, without selectors, of a kernel's dot node or of a sum of it. Its term then reads
/// only its parents' moments, and each of them drops it when it changes (`Vmp::changed`). A sweep
/// of a logistic regression evaluates the term at one state several times — the checked step's
/// "before" (the previous step's "after"), its "after", the driver's bound — and each evaluation
/// is N quadratures.
pub(super) fn memo_bound(vmp: &Vmp, id: usize) -> bool {
    let n = &vmp.nodes[id];
    let kernel = |p: usize| vmp.logit[p].is_some();
    let reads = |p: usize| {
        kernel(p)
            || matches!(vmp.nodes[p].body, Body::Deterministic(Factor::Sum(_)))
                && vmp.nodes[p]
                    .parents
                    .iter()
                    .any(|e| matches!(e.source, Source::Node(q) if kernel(q)))
    };
    matches!(n.body, Body::Stochastic(_))
        && n.observed.is_all()
        && n.configs == 1
        && !n.config_only
        && n.groups.is_none()
        && n.parents
            .iter()
            .any(|e| matches!(e.source, Source::Node(p) if reads(p)))
}

#[cfg(test)]
mod tests;
