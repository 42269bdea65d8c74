//! Generic exact enumeration over n binary variables, with log-sum-exp stabilisation.
//!
//! A state is a `u64` whose bit i is variable i (1 = "on", i.e. s_i = +1 or x_i = 1).
//! The 2ⁿ states are split into fixed chunks of 2^`CHUNK_BITS` consecutive states; chunks run in
//! parallel under rayon, each returns a partial (max, scaled sums), and the partials are combined
//! sequentially in chunk order. The chunking does not depend on the number of threads, so the
//! result is bit-identical for any thread count.
//!
//! Two entry points per quantity: one takes a closure `log_weight(state) -> f64` (simplest, O(cost of
//! the closure) per state) and one takes a [`GrayWalker`] that updates the log-weight incrementally
//! when one bit flips (states visited in Gray-code order inside a chunk), which makes
//! Boltzmann-machine enumeration O(n) per state.

// Dense numerical kernels index several arrays with one loop variable; iterator chains would
// obscure the equations they implement.
#![allow(clippy::needless_range_loop)]

use rayon::prelude::*;
use thiserror::Error;

/// log₂ of the number of states per chunk.
pub const CHUNK_BITS: usize = 14;
/// Largest number of variables accepted.
pub const MAX_BITS: usize = 40;

/// Enumeration asked for more than [`MAX_BITS`] variables.
#[derive(Debug, Clone, Copy, Error, PartialEq, Eq)]
#[error("enumeration over {bits} binary variables exceeds the limit of {max}")]
pub struct TooManyStates {
    /// Requested number of variables.
    pub bits: usize,
    /// The limit.
    pub max: usize,
}

/// Incremental evaluator of a log-weight along a walk that flips one bit at a time.
pub trait GrayWalker {
    /// Sets the full state and returns its log-weight.
    fn start(&mut self, state: u64) -> f64;
    /// Flips bit `bit` of the current state and returns the new log-weight.
    fn flip(&mut self, bit: usize) -> f64;
}

/// A running log-sum-exp accumulator: value = max + ln(sum).
#[derive(Debug, Clone, Copy)]
struct Lse {
    max: f64,
    sum: f64,
}

impl Lse {
    const EMPTY: Lse = Lse {
        max: f64::NEG_INFINITY,
        sum: 0.0,
    };

    /// Adds exp(lw); returns the factor by which previously accumulated weights were rescaled.
    #[inline]
    fn push(&mut self, lw: f64) -> (f64, f64) {
        if lw > self.max {
            let scale = if self.max == f64::NEG_INFINITY {
                0.0
            } else {
                (self.max - lw).exp()
            };
            self.sum = self.sum * scale + 1.0;
            self.max = lw;
            (scale, 1.0)
        } else {
            let p = (lw - self.max).exp();
            self.sum += p;
            (1.0, p)
        }
    }
}

fn chunks(n_bits: usize) -> Result<(usize, u64), TooManyStates> {
    if n_bits > MAX_BITS {
        return Err(TooManyStates {
            bits: n_bits,
            max: MAX_BITS,
        });
    }
    let low = n_bits.min(CHUNK_BITS);
    Ok((low, 1u64 << (n_bits - low)))
}

/// Combines per-chunk (max, sum, stats) in chunk order; stats are scaled to the common max.
fn combine(parts: Vec<(Lse, Vec<f64>)>, dim: usize) -> (f64, Vec<f64>) {
    let gmax = parts
        .iter()
        .map(|p| p.0.max)
        .fold(f64::NEG_INFINITY, f64::max);
    let mut sum = 0.0;
    let mut stats = vec![0.0; dim];
    for (lse, st) in &parts {
        if lse.sum == 0.0 {
            continue;
        }
        let s = (lse.max - gmax).exp();
        sum += lse.sum * s;
        for (a, b) in stats.iter_mut().zip(st) {
            *a += b * s;
        }
    }
    let log_z = if sum == 0.0 {
        f64::NEG_INFINITY
    } else {
        gmax + sum.ln()
    };
    if sum > 0.0 {
        for a in stats.iter_mut() {
            *a /= sum;
        }
    }
    (log_z, stats)
}

/// log Σ_state exp(log_weight(state)) over all 2^n_bits states.
pub fn log_sum_exp_states<F>(n_bits: usize, log_weight: F) -> Result<f64, TooManyStates>
where
    F: Fn(u64) -> f64 + Sync,
{
    let (low, n_chunks) = chunks(n_bits)?;
    let parts: Vec<Lse> = (0..n_chunks)
        .into_par_iter()
        .map(|c| {
            let base = c << low;
            let mut acc = Lse::EMPTY;
            for r in 0..(1u64 << low) {
                acc.push(log_weight(base | r));
            }
            acc
        })
        .collect();
    let (lz, _) = combine(parts.into_iter().map(|l| (l, Vec::new())).collect(), 0);
    Ok(lz)
}

/// Exact moments of the bits under p(state) ∝ exp(log_weight(state)).
#[derive(Debug, Clone, PartialEq)]
pub struct BitMoments {
    /// log Σ exp(log_weight).
    pub log_z: f64,
    /// P(bit_i = 1).
    pub p_on: Vec<f64>,
    /// P(bit_i = 1 and bit_j = 1), row-major n×n, symmetric, diagonal = p_on.
    pub p_pair: Vec<f64>,
}

fn accumulate_bits(state: u64, n: usize, p: f64, st: &mut [f64]) {
    // st[0..n] singles, st[n..] upper-triangular pairs packed row-major in an n×n block.
    let mut a = state;
    while a != 0 {
        let i = a.trailing_zeros() as usize;
        a &= a - 1;
        st[i] += p;
        let mut b = a;
        while b != 0 {
            let j = b.trailing_zeros() as usize;
            b &= b - 1;
            st[n + i * n + j] += p;
        }
    }
}

fn rescale(st: &mut [f64], s: f64) {
    if s != 1.0 {
        for x in st.iter_mut() {
            *x *= s;
        }
    }
}

fn finish_moments(n: usize, log_z: f64, st: Vec<f64>) -> BitMoments {
    let p_on = st[..n].to_vec();
    let mut p_pair = vec![0.0; n * n];
    for i in 0..n {
        p_pair[i * n + i] = p_on[i];
        for j in i + 1..n {
            let v = st[n + i * n + j];
            p_pair[i * n + j] = v;
            p_pair[j * n + i] = v;
        }
    }
    BitMoments {
        log_z,
        p_on,
        p_pair,
    }
}

/// log Z, single and pairwise bit probabilities, by enumeration with a closure.
pub fn bit_moments<F>(n_bits: usize, log_weight: F) -> Result<BitMoments, TooManyStates>
where
    F: Fn(u64) -> f64 + Sync,
{
    let (low, n_chunks) = chunks(n_bits)?;
    let dim = n_bits + n_bits * n_bits;
    let parts: Vec<(Lse, Vec<f64>)> = (0..n_chunks)
        .into_par_iter()
        .map(|c| {
            let base = c << low;
            let mut acc = Lse::EMPTY;
            let mut st = vec![0.0; dim];
            for r in 0..(1u64 << low) {
                let s = base | r;
                let (scale, p) = acc.push(log_weight(s));
                rescale(&mut st, scale);
                accumulate_bits(s, n_bits, p, &mut st);
            }
            (acc, st)
        })
        .collect();
    let (lz, st) = combine(parts, dim);
    Ok(finish_moments(n_bits, lz, st))
}

/// Walks the states of one chunk in Gray-code order, calling `visit(state, log_weight)`.
fn walk_chunk<W: GrayWalker>(
    walker: &mut W,
    base: u64,
    low: usize,
    mut visit: impl FnMut(u64, f64),
) {
    let mut state = base;
    let mut lw = walker.start(state);
    visit(state, lw);
    for k in 1..(1u64 << low) {
        let bit = k.trailing_zeros() as usize;
        state ^= 1u64 << bit;
        lw = walker.flip(bit);
        visit(state, lw);
    }
}

/// log Z by enumeration with an incremental walker (one walker per chunk, created by `make`).
pub fn log_sum_exp_gray<W, M>(n_bits: usize, make: M) -> Result<f64, TooManyStates>
where
    W: GrayWalker,
    M: Fn() -> W + Sync,
{
    let (low, n_chunks) = chunks(n_bits)?;
    let parts: Vec<(Lse, Vec<f64>)> = (0..n_chunks)
        .into_par_iter()
        .map(|c| {
            let mut w = make();
            let mut acc = Lse::EMPTY;
            walk_chunk(&mut w, c << low, low, |_, lw| {
                acc.push(lw);
            });
            (acc, Vec::new())
        })
        .collect();
    Ok(combine(parts, 0).0)
}

/// log Z and bit moments by enumeration with an incremental walker.
pub fn bit_moments_gray<W, M>(n_bits: usize, make: M) -> Result<BitMoments, TooManyStates>
where
    W: GrayWalker,
    M: Fn() -> W + Sync,
{
    let (low, n_chunks) = chunks(n_bits)?;
    let dim = n_bits + n_bits * n_bits;
    let parts: Vec<(Lse, Vec<f64>)> = (0..n_chunks)
        .into_par_iter()
        .map(|c| {
            let mut w = make();
            let mut acc = Lse::EMPTY;
            let mut st = vec![0.0; dim];
            walk_chunk(&mut w, c << low, low, |s, lw| {
                let (scale, p) = acc.push(lw);
                rescale(&mut st, scale);
                accumulate_bits(s, n_bits, p, &mut st);
            });
            (acc, st)
        })
        .collect();
    let (lz, st) = combine(parts, dim);
    Ok(finish_moments(n_bits, lz, st))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Independent bits: log Z = Σ ln(1 + e^{a_i}), P(on) = σ(a_i).
    #[test]
    fn independent_bits_closed_form() {
        let a = [
            0.3, -1.2, 2.0, 0.0, -0.4, 0.9, 1.1, -2.2, 0.05, 0.6, -0.3, 0.2, 1.3, -0.8, 0.4, 0.1,
        ];
        let n = a.len();
        let lw = |s: u64| {
            (0..n)
                .filter(|&i| s >> i & 1 == 1)
                .map(|i| a[i])
                .sum::<f64>()
        };
        let exact: f64 = a.iter().map(|x| x.exp().ln_1p()).sum();
        let lz = log_sum_exp_states(n, lw).unwrap();
        assert!((lz - exact).abs() < 1e-12, "{lz} vs {exact}");
        let m = bit_moments(n, lw).unwrap();
        for i in 0..n {
            let sig = 1.0 / (1.0 + (-a[i]).exp());
            assert!((m.p_on[i] - sig).abs() < 1e-12);
            for j in 0..n {
                if i != j {
                    let sj = 1.0 / (1.0 + (-a[j]).exp());
                    assert!((m.p_pair[i * n + j] - sig * sj).abs() < 1e-12);
                }
            }
        }
    }

    struct Indep {
        a: Vec<f64>,
        s: u64,
        lw: f64,
    }
    impl GrayWalker for Indep {
        fn start(&mut self, state: u64) -> f64 {
            self.s = state;
            self.lw = (0..self.a.len())
                .filter(|&i| state >> i & 1 == 1)
                .map(|i| self.a[i])
                .sum();
            self.lw
        }
        fn flip(&mut self, bit: usize) -> f64 {
            if self.s >> bit & 1 == 1 {
                self.lw -= self.a[bit];
            } else {
                self.lw += self.a[bit];
            }
            self.s ^= 1 << bit;
            self.lw
        }
    }

    #[test]
    fn gray_walk_matches_closure_and_is_thread_independent() {
        let a: Vec<f64> = (0..17)
            .map(|i| ((i * 37 % 11) as f64 - 5.0) * 0.3)
            .collect();
        let n = a.len();
        let lw = |s: u64| {
            (0..n)
                .filter(|&i| s >> i & 1 == 1)
                .map(|i| a[i])
                .sum::<f64>()
        };
        let make = || Indep {
            a: a.clone(),
            s: 0,
            lw: 0.0,
        };
        let g = log_sum_exp_gray(n, make).unwrap();
        let c = log_sum_exp_states(n, lw).unwrap();
        assert!((g - c).abs() < 1e-11);
        let g1 = occam_core::threads::on_threads(1, || log_sum_exp_gray(n, make).unwrap()).unwrap();
        assert_eq!(g.to_bits(), g1.to_bits());
        let m1 = occam_core::threads::on_threads(1, || bit_moments_gray(n, make).unwrap()).unwrap();
        let m2 = bit_moments_gray(n, make).unwrap();
        assert_eq!(m1, m2);
    }

    #[test]
    fn too_many_bits_is_an_error() {
        assert!(log_sum_exp_states(41, |_| 0.0).is_err());
        assert_eq!(log_sum_exp_states(0, |_| 1.5).unwrap(), 1.5);
    }
}
