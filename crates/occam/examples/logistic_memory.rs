//! Memory of a Bayesian logistic regression fit, N = 100,000, D = 20 (issue 29: "memory within 2×
//! of the data"), on the path the Python package takes: the caller's X and y exist before the fit
//! (as NumPy's arrays do), one copy of each is handed to the data set (`DataSet::insert_array`, as
//! `occam-py` does from a NumPy buffer), the model is loaded from text (the estimator's model,
//! `python/occam/_logistic.py`), the caller's data set is dropped and the model is fitted.
//!
//! Prints one JSON line: the growth of peak RSS over the RSS just before the copy (getrusage's
//! `ru_maxrss` against `/proc/self/statm`), X's size, their ratio, the sweeps and the bound to 17
//! significant digits (the same bits before and after a memory change). Run it under a heap
//! profiler to see where the bytes go:
//!
//! ```sh
//! cargo build --release -p occam --example logistic_memory
//! heaptrack target/release/examples/logistic_memory
//! ```

use occam::{DataSet, Model, Settings};
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use rand_xoshiro::Xoshiro256PlusPlus;

const N: usize = 100_000;
const D: usize = 20;

/// The estimator's model without intercept (`_model_text(2, False, False, 1.0, ...)`).
const MODEL: &str = "plates N, D from data X
data X[N] over D
w over D ~ MvGaussian(mean = 0, precision = identity * 1.0)
y[N] ~ Bernoulli(sigmoid(dot(X[N], w)))
observe y
";

/// Resident set size now, bytes (`/proc/self/statm`, pages × page size).
fn rss() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(f64::NAN);
    pages * 4096.0
}

/// Peak resident set size of the process so far, bytes (`VmHWM` of `/proc/self/status`).
fn peak() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb * 1024.0)
}

fn main() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0);
    let w: Vec<f64> = (0..D)
        .map(|_| 0.5 * rng.sample::<f64, _>(StandardNormal))
        .collect();
    let mut x = Vec::with_capacity(N * D);
    let mut y = Vec::with_capacity(N);
    for _ in 0..N {
        let mut eta = 0.0;
        for wd in &w {
            let v: f64 = rng.sample(StandardNormal);
            eta += v * wd;
            x.push(v);
        }
        let p = 1.0 / (1.0 + (-eta).exp());
        y.push(f64::from(u8::from(rng.random::<f64>() < p)));
    }
    let base = rss();
    let mut set = DataSet::new();
    let fit = (|| {
        set.insert_array("X", N, D, x.clone(), None)?;
        set.insert_array("y", N, 1, y.clone(), None)?;
        let model = Model::from_source("logistic_memory.occam", MODEL, &set)?;
        drop(std::mem::take(&mut set));
        let settings = Settings {
            tol: 1e-4 / N as f64,
            ..Settings::default()
        };
        model.fit(&settings)
    })();
    let fit = match fit {
        Ok(f) => f,
        Err(e) => {
            eprintln!("logistic_memory: {e}");
            std::process::exit(1);
        }
    };
    let growth = peak() - base;
    let data = (N * D * 8) as f64;
    println!(
        "{{\"n\": {N}, \"d\": {D}, \"peak_growth_mb\": {:.3}, \"x_mb\": {:.3}, \"ratio\": {:.3}, \"sweeps\": {}, \"bound\": {:.16e}}}",
        growth / 1e6,
        data / 1e6,
        growth / data,
        fit.outcome().iterations,
        fit.bound()
    );
}
