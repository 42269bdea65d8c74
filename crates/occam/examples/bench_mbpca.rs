//! Benchmark of a mixture of Bayesian PCA sweep (on the engine: `occam::latent::mbpca::engine`) against the matrix products it needs and the
//! machine's GEMM rate (issue 10, "Performance"): K = 10 components, N = 10,000 points, D = 50,
//! q = D − 1 = 49 (the model's default), data from 10 clusters each spread in a 5-dimensional
//! subspace plus noise (seeded).
//!
//! The products a sweep cannot avoid: the projections (t_n − μ_m)ᵀ⟨W_m⟩ of every point on every
//! component (N × D times D × Kq, 2NDKq flops) and the sums Σ_n r_nm t_n m_nmᵀ of the W update (the
//! same count), plus the q × q products per point and component (Σ_x m, ⟨WᵀW⟩ m, Σ r m mᵀ: 3 × 2NKq²).
//! The GEMM rate is measured on the first product's shape with faer (sequential and on all
//! threads), in the same run; the sweep runs its components on all threads (results identical
//! for any thread count). Prints one JSON line with the ratio to both bounds and the load. On a
//! loaded machine the wall clock of a long sweep counts the time other processes hold the cores,
//! while a best-of-five product may not, so the CPU time of the sweep (all threads) against the
//! CPU time of the product (`cpu_ratio_to_gemm_bound`) is the load-independent measure of the
//! work; the wall-clock ratios are printed too.
//!
//! ```sh
//! cargo run --release -p occam --example bench_mbpca [-- SWEEPS]
//! ```

use std::time::Instant;

use faer::linalg::matmul::matmul;
use faer::{Accum, Mat, Par};
use occam::latent::mbpca::engine::Engine;
use occam::latent::mbpca::{initialise, Priors};
use occam::latent::synth::Matrix;
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use rand_xoshiro::Xoshiro256PlusPlus;

const N: usize = 10_000;
const D: usize = 50;
const K: usize = 10;
const Q: usize = D - 1;

fn data(seed: u64) -> Matrix {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut g = || rng.sample::<f64, _>(StandardNormal);
    let centres: Vec<f64> = (0..K * D).map(|_| 3.0 * g()).collect();
    let bases: Vec<f64> = (0..K * D * 5).map(|_| g()).collect();
    let mut values = Vec::with_capacity(N * D);
    for n in 0..N {
        let k = n % K;
        let z: Vec<f64> = (0..5).map(|_| g()).collect();
        for d in 0..D {
            let b = &bases[(k * D + d) * 5..(k * D + d + 1) * 5];
            let v = centres[k * D + d] + b.iter().zip(&z).map(|(x, y)| x * y).sum::<f64>();
            values.push(v + 0.1 * g());
        }
    }
    Matrix {
        rows: N,
        cols: D,
        values,
    }
}

/// CPU seconds used so far by every thread of this process (the first field of each
/// `/proc/self/task/*/schedstat`, nanoseconds on the CPU): unlike the wall clock, it does not
/// count the time other processes of a loaded machine hold the cores.
fn cpu_seconds() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return f64::NAN;
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .sum::<f64>()
        * 1e-9
}

/// (wall seconds, best of `reps`; CPU seconds, mean of `reps`) per (N × D)(D × Kq) product.
fn gemm_seconds(par: Par, reps: usize) -> (f64, f64) {
    let a = Mat::<f64>::from_fn(N, D, |i, j| ((i * 7 + j * 3) % 11) as f64 - 5.0);
    let b = Mat::<f64>::from_fn(D, K * Q, |i, j| ((i * 5 + j) % 13) as f64 - 6.0);
    let mut c = Mat::<f64>::zeros(N, K * Q);
    let cpu = cpu_seconds();
    let wall = (0..reps)
        .map(|_| {
            let t = Instant::now();
            matmul(c.as_mut(), Accum::Replace, a.as_ref(), b.as_ref(), 1.0, par);
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    (wall, (cpu_seconds() - cpu) / reps as f64)
}

fn main() -> occam::Result<()> {
    let sweeps: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let t = data(1);
    let m = initialise(&t, K, Q, Priors::default(), 0)?;
    let mut m = Engine::new(&m, &t)?;
    m.sweep()?; // warm-up
    let (seq_before, _) = gemm_seconds(Par::Seq, 5);
    let start = Instant::now();
    let cpu = cpu_seconds();
    let mut bound = f64::NAN;
    for _ in 0..sweeps {
        bound = m.sweep()?;
    }
    let cpu_per_sweep = (cpu_seconds() - cpu) / sweeps as f64;
    let per_sweep = start.elapsed().as_secs_f64() / sweeps as f64;
    let (n, d, k, q) = (N as f64, D as f64, K as f64, Q as f64);
    let needed = 2.0 * (2.0 * n * d * k * q) + 3.0 * (2.0 * n * k * q * q);
    let product_flops = 2.0 * n * d * k * q;
    let (seq_after, seq_cpu) = gemm_seconds(Par::Seq, 10);
    let seq = seq_before.min(seq_after);
    let (all, _) = gemm_seconds(Par::rayon(0), 5);
    let rate_seq = product_flops / seq;
    let rate_all = product_flops / all;
    let rate_cpu = product_flops / seq_cpu;
    println!(
        "{}",
        serde_json::json!({
            "case": "mbpca K=10 N=10000 D=50 q=49",
            "sweeps": sweeps,
            "ms_per_sweep": 1e3 * per_sweep,
            "cpu_ms_per_sweep": 1e3 * cpu_per_sweep,
            "needed_gflop_per_sweep": needed / 1e9,
            "gemm_gflops_sequential": rate_seq / 1e9,
            "gemm_gflops_sequential_cpu": rate_cpu / 1e9,
            "gemm_gflops_all_threads": rate_all / 1e9,
            "ms_for_needed_flops_at_gemm_rate_sequential": 1e3 * needed / rate_seq,
            "ms_for_needed_flops_at_gemm_rate_all_threads": 1e3 * needed / rate_all,
            "ratio_to_gemm_bound_sequential": per_sweep / (needed / rate_seq),
            "ratio_to_gemm_bound_all_threads": per_sweep / (needed / rate_all),
            "cpu_ratio_to_gemm_bound": cpu_per_sweep / (needed / rate_cpu),
            "bound": bound,
            "threads": rayon::current_num_threads(),
            "load_average": std::fs::read_to_string("/proc/loadavg")
                .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
                .unwrap_or_default(),
        })
    );
    Ok(())
}
