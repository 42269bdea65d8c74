//! Time per sweep of `occam::latent::ica` (Bayesian ICA with q(x_n) joint over the sources, on
//! the engine) on seeded data: `synth::ica_toy(N, SOURCES, SENSORS, 1e-2, 1)` fitted with
//! SOURCES model sources, 2 components each, from the seed-0 start. Prints one JSON line: the
//! bound after every sweep and (T_ITERS − T_1) / (ITERS − 1), T_k the best of REPEATS wall times of
//! a whole k-sweep fit (the start and compiling cancel).
//!
//! ```sh
//! cargo run --release -p occam --example bench_ica_joint -- [N] [SENSORS] [SOURCES] [ITERS] [REPEATS]
//! ```

use std::time::Instant;

use occam::latent::ica::{Ica, Priors, Start};
use occam::latent::synth;

fn main() -> occam::Result<()> {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| {
            s.parse::<usize>()
                .map_err(|_| occam::Error::Usage(format!("expected an integer, got {s}")))
        })
        .collect::<occam::Result<_>>()?;
    let arg = |i: usize, default: usize| args.get(i).copied().unwrap_or(default).max(1);
    let (n, sensors, sources) = (arg(0, 10_000), arg(1, 20), arg(2, 10));
    let (iters, repeats) = (arg(3, 11).max(2), arg(4, 3));
    let toy = synth::ica_toy(n, sources, sensors, 1e-2, 1);
    let start = Start::new(&toy.t, sources, 2, Priors::default(), 0)?;
    let time = |sweeps: usize| -> occam::Result<(f64, Vec<f64>)> {
        let t0 = Instant::now();
        let (_, trace) = Ica::fit_from(&toy.t, Priors::default(), &start, sweeps, 0.0)?;
        Ok((t0.elapsed().as_secs_f64(), trace))
    };
    let (mut one, mut many, mut trace) = (f64::INFINITY, f64::INFINITY, Vec::new());
    for _ in 0..repeats {
        one = one.min(time(1)?.0);
        let (t, tr) = time(iters)?;
        many = many.min(t);
        trace = tr;
    }
    println!(
        "{}",
        serde_json::json!({
            "n": n, "sensors": sensors, "sources": sources, "sweeps": iters,
            "bound_trace": trace,
            "ms_per_sweep": 1e3 * (many - one) / (iters - 1) as f64,
            "seconds_one_sweep": one,
        })
    );
    Ok(())
}
