//! The Occam side of `bench/peers/bayespy_ica.py` (issue 10, Bayesian ICA against BayesPy): fits
//! a model file to one data table with a fixed update order and no stopping rule, and prints one
//! JSON line with the bound after every sweep and the time per sweep.
//!
//! The time per sweep is (T_ITERS − T_1) / (ITERS − 1), where T_k is the best of `REPEATS` wall
//! times of a whole k-sweep fit (parsing, compiling and the start cancel in the difference).
//!
//! ```sh
//! cargo run --release -p occam --example bench_ica -- MODEL.occam t.csv s1,z1,...,alpha ITERS [REPEATS]
//! ```

use std::path::Path;
use std::time::Instant;

use occam::{DataSet, Model, Settings};

fn main() -> occam::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        return Err(occam::Error::Usage(
            "usage: bench_ica MODEL.occam T.csv ORDER ITERS [REPEATS]".into(),
        ));
    }
    let order: Vec<String> = args[3].split(',').map(String::from).collect();
    let number = |s: &str, what: &str| {
        s.parse::<usize>()
            .ok()
            .filter(|&v| v >= 1)
            .ok_or_else(|| occam::Error::Usage(format!("{what}: expected an integer ≥ 1, got {s}")))
    };
    let iters = number(&args[4], "ITERS")?.max(2);
    let repeats = args.get(5).map_or(Ok(2), |s| number(s, "REPEATS"))?;
    let mut data = DataSet::new();
    data.insert_file("t", Path::new(&args[2]))?;
    let model = Model::from_file(&args[1], &data)?;
    let settings = |max_iter: usize| Settings {
        max_iter,
        tol: 0.0,
        prune: false,
        order: Some(order.clone()),
        ..Settings::default()
    };
    let (mut one, mut many) = (f64::INFINITY, f64::INFINITY);
    let mut trace = Vec::new();
    for _ in 0..repeats {
        let start = Instant::now();
        model.fit(&settings(1))?;
        one = one.min(start.elapsed().as_secs_f64());
        let start = Instant::now();
        let fitted = model.fit(&settings(iters))?;
        many = many.min(start.elapsed().as_secs_f64());
        trace = fitted.outcome().bound_trace.clone();
    }
    println!(
        "{}",
        serde_json::json!({
            "sweeps": iters,
            "bound_trace": trace,
            "ms_per_sweep": 1e3 * (many - one) / (iters - 1) as f64,
            "seconds_one_sweep": one,
            "seconds_all_sweeps": many,
        })
    );
    Ok(())
}
