//! The cost of watching a fit: the same fit unobserved and observed by the view's trace (with a
//! reader streaming it, as an open page does), in process CPU time.
//!
//! Usage: cargo run --release -p occam-view --example overhead -- MODEL NAME=FILE [ITER] [REPEATS]
//!
//! Measured (release, shared 2-core machine at load ~4, a 5-component diagonal GMM on N = 1e5
//! 2-D rows, exactly 200 sweeps, 40 runs; bench/results/view_bench_2026-11-30_0223utc.txt):
//! 14.69 s CPU unobserved against 15.01 s observed in total, +2.2%; an earlier session measured
//! +0.9% over 12 runs. Single runs scatter ±10% (10 ms ticks on a 0.37 s fit, and the load),
//! and the observed fit always runs second, with the first's fit still in memory. The figure
//! for the criterion is tests/it/overhead.rs (a page, alternated) and its instruction
//! count: +0.19%. 7–10 events per fit of 200 sweeps.

use std::sync::Arc;
use std::time::Instant;

use occam::{DataSet, Model, Settings};
use occam_view::trace::{Trace, TraceObserver};

/// User + system CPU time of the process so far, in seconds (/proc/self/stat, clock ticks).
fn cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<f64> = after
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    // Fields 14 and 15 of the line (utime, stime) are 11 and 12 after the name.
    (f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0)) / 100.0
}

fn main() -> occam::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let data = DataSet::from_args(&args[2..3])?;
    let iters: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(200);
    let repeats: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(3);
    let model = Model::from_file(&args[1], &data)?;
    // Exactly `iters` sweeps (never stopping on the tolerance), one start, no pruning.
    let settings = Settings {
        max_iter: iters,
        fixed_sweeps: true,
        prune: false,
        candidate_starts: false,
        ..Settings::default()
    };
    let (mut total_plain, mut total_watched) = (0.0, 0.0);
    for r in 0..repeats {
        let (c0, t0) = (cpu(), Instant::now());
        let plain = model.fit(&settings)?;
        let (c1, t1) = (cpu(), Instant::now());
        let trace = Arc::new(Trace::new());
        let reader = Arc::clone(&trace);
        let page = std::thread::spawn(move || reader.stream(&mut std::io::sink()));
        let watched = {
            let mut observer = TraceObserver::new(&trace);
            model.fit_observed(&settings, &mut observer)?
        };
        trace.end("done", &serde_json::json!({}));
        let _ = page.join();
        let (c2, t2) = (cpu(), Instant::now());
        assert_eq!(plain.bound(), watched.bound());
        total_plain += c1 - c0;
        total_watched += c2 - c1;
        let events = trace.events().len();
        println!(
            "run {r}: {} sweeps; unobserved {:.2} s CPU ({:.2} s wall), observed {:.2} s CPU \
             ({:.2} s wall), {events} events; CPU ratio {:.4}",
            plain.outcome().iterations,
            c1 - c0,
            (t1 - t0).as_secs_f64(),
            c2 - c1,
            (t2 - t1).as_secs_f64(),
            (c2 - c1) / (c1 - c0)
        );
    }
    println!(
        "total over {repeats} runs: unobserved {total_plain:.2} s CPU, observed {total_watched:.2} s \
         CPU, {:+.1}%",
        100.0 * (total_watched / total_plain - 1.0)
    );
    Ok(())
}
