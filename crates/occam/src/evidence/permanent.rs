//! Sums over the relabellings of a mixture's or a chain's components, for the relabelling-symmetric
//! importance-sampling proposal (module `proposal`): the log-permanent of a K × K matrix of log
//! densities, and a walk over every permutation.

use super::density::log_sum_exp;

/// Calls `f` on every permutation of 0..k (Heap's algorithm).
pub(crate) fn permutations(k: usize, f: &mut impl FnMut(&[usize])) {
    let mut p: Vec<usize> = (0..k).collect();
    let mut c = vec![0usize; k];
    f(&p);
    let mut i = 1;
    while i < k {
        if c[i] < i {
            p.swap(if i % 2 == 0 { 0 } else { c[i] }, i);
            f(&p);
            c[i] += 1;
            i = 1;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
}

/// Below this the permanent of the scaled entries (each at most 1) is recomputed in logarithms:
/// a product that underflowed is below 2.2e-308, and there are at most K! ≤ 4.8e8 of them for
/// K ≤ 12 ([`super::proposal::MAX_SYMMETRIC_K`]), so where the sum is at least 1e-200 what was
/// lost is below 1e-99 of it.
const SMALLEST: f64 = 1e-200;

/// ln Σ_σ exp Σ_a m[a][σ(a)] over the permutations σ, by dynamic programming over subsets of the
/// columns: f(S) = Σ_{j ∈ S} f(S ∖ j) E[|S| − 1][j], f(∅) = 1, in plain arithmetic on
/// E[a][j] = exp(m[a][j] − r_a) with r_a row a's largest entry (so every entry is at most 1 and
/// the permanent is exp(Σ r_a) f(all)): K² exponentials and K 2^(K−1) multiply-adds, where the
/// same recursion in logarithms took a log-sum-exp per subset (K 2^(K−1) exponentials). Sums of
/// positive terms lose no digits; where the sum underflows (below [`SMALLEST`]) it is recomputed
/// in logarithms ([`log_permanent_in_logs`]), as it is for a row without a finite entry.
pub(crate) fn log_permanent(m: &[f64], k: usize) -> f64 {
    let mut shift = 0.0;
    let mut e = vec![0.0; k * k];
    for a in 0..k {
        let row = &m[a * k..(a + 1) * k];
        let r = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !r.is_finite() {
            return log_permanent_in_logs(m, k);
        }
        shift += r;
        for (x, v) in e[a * k..(a + 1) * k].iter_mut().zip(row) {
            *x = (v - r).exp();
        }
    }
    let mut f = vec![0.0; 1 << k];
    f[0] = 1.0;
    for mask in 1usize..(1 << k) {
        let row = &e[(mask.count_ones() as usize - 1) * k..];
        let (mut s, mut bits) = (0.0, mask);
        while bits != 0 {
            let j = bits.trailing_zeros() as usize;
            s += f[mask ^ (1 << j)] * row[j];
            bits &= bits - 1;
        }
        f[mask] = s;
    }
    let p = f[(1 << k) - 1];
    if p >= SMALLEST {
        shift + p.ln()
    } else {
        log_permanent_in_logs(m, k)
    }
}

/// [`log_permanent`] with the recursion in logarithms (a log-sum-exp per subset).
pub(super) fn log_permanent_in_logs(m: &[f64], k: usize) -> f64 {
    let mut f = vec![f64::NEG_INFINITY; 1 << k];
    f[0] = 0.0;
    let mut terms = Vec::with_capacity(k);
    for mask in 1usize..(1 << k) {
        let row = mask.count_ones() as usize - 1;
        terms.clear();
        for j in 0..k {
            if mask & (1 << j) != 0 {
                terms.push(f[mask ^ (1 << j)] + m[row * k + j]);
            }
        }
        f[mask] = log_sum_exp(&terms);
    }
    f[(1 << k) - 1]
}
