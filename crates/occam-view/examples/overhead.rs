//! The cost of watching a fit: the same fit unobserved and observed by the view's trace (with a
//! reader streaming it, as an open page does), in process CPU time.
//!
//! Usage: cargo run --release -p occam-view --example overhead -- MODEL NAME=FILE [ITER] [REPEATS]
//!
//! Measured (release, a 5-component diagonal GMM on N = 1e5 2-D rows, exactly 200 sweeps, 40
//! runs in alternated order, the machine's other jobs held off, load 2.4–3.5;
//! bench/results/view_bench_2026-11-30_0425utc.txt): 21.87 s CPU unobserved against 22.07 s
//! observed, +0.9%, and in a second set −0.2% (mean log ratio −0.21% ± 0.45% s.e.). Before the
//! order alternated, the observed fit always ran second and the same machine gave +4.7%: that
//! was the order, not the observer. Single runs scatter ±10% (10 ms ticks on a 0.55 s fit).
//! 7–8 events per fit of 200 sweeps.

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
    // One unobserved fit; its CPU and wall seconds.
    let plain_fit = || -> occam::Result<(f64, f64, f64)> {
        let (c0, t0) = (cpu(), Instant::now());
        let plain = model.fit(&settings)?;
        Ok((cpu() - c0, t0.elapsed().as_secs_f64(), plain.bound()))
    };
    // One fit observed by the trace with a reader streaming it, as an open page does.
    let watched_fit = || -> occam::Result<(f64, f64, f64, usize)> {
        let (c0, t0) = (cpu(), Instant::now());
        let trace = Arc::new(Trace::new());
        let reader = Arc::clone(&trace);
        let page = std::thread::spawn(move || reader.stream(&mut std::io::sink()));
        let watched = {
            let mut observer = TraceObserver::new(&trace);
            model.fit_observed(&settings, &mut observer)?
        };
        trace.end("done", &serde_json::json!({}));
        let _ = page.join();
        let events = trace.events().len();
        Ok((
            cpu() - c0,
            t0.elapsed().as_secs_f64(),
            watched.bound(),
            events,
        ))
    };
    for r in 0..repeats {
        // Alternate the order (unobserved first on even runs), so that neither fit always
        // runs with the other's memory freshly released.
        let ((cp, wp, bp), (cw, ww, bw, events)) = if r % 2 == 0 {
            let p = plain_fit()?;
            (p, watched_fit()?)
        } else {
            let w = watched_fit()?;
            (plain_fit()?, w)
        };
        assert_eq!(bp, bw);
        total_plain += cp;
        total_watched += cw;
        let first = if r % 2 == 0 { "unobserved" } else { "observed" };
        println!(
            "run {r} ({first} first): {iters} sweeps; unobserved {cp:.2} s CPU ({wp:.2} s wall), \
             observed {cw:.2} s CPU ({ww:.2} s wall), {events} events; CPU ratio {:.4}",
            cw / cp
        );
    }
    println!(
        "total over {repeats} runs: unobserved {total_plain:.2} s CPU, observed {total_watched:.2} s \
         CPU, {:+.1}%",
        100.0 * (total_watched / total_plain - 1.0)
    );
    Ok(())
}
