//! CPU time of Bayesian ICA (`occam::latent::ica`, q(x_n) joint over the sources, on the engine)
//! on the three cases of the first engine-against-hand comparison (57f732b's message, issue 27):
//! `toy60` = `synth::ica_toy(60, 2, 3, 1e-2, 3)` with 3 model sources, 40 sweeps; `toy200` =
//! `synth::ica_toy(200, 2, 3, 1e-4, 5)`, 3 sources, 300 sweeps; `n10000` =
//! `synth::ica_toy(10000, 10, 20, 1e-2, 1)`, 10 sources, 10 sweeps; 2 components per source and
//! the seed-0 start in every case. The same text, with the fit call swapped for the hand-derived
//! `Ica::initialise` + `run`, was built from the tree before they were deleted (`57f732b^`) to
//! measure both sides in one run (`bench/results/issue27_perf_2026-11-30_*utc.txt`).
//!
//! Runs REPEATS whole fits (start + sweeps) of SWEEPS sweeps, then REPEATS fits of one sweep, and
//! prints the process CPU time (user + system, all threads, from `/proc/self/stat`) of each loop,
//! the per-sweep CPU time (C_SWEEPS − C_1) / (REPEATS (SWEEPS − 1)) (start and set-up cancel),
//! a checksum of the data's bits and the bound trace's first and last values (with their bits).
//!
//! ```sh
//! cargo run --release -p occam --example bench_ica_cases -- CASE [SWEEPS] [REPEATS]
//! ```

use occam::latent::ica::{Ica, Priors, Start};
use occam::latent::synth::{self, Matrix};

/// The process's CPU time (user + system, every thread) in seconds, from `/proc/self/stat`
/// (fields 14 and 15, in clock ticks of 1/100 s: Linux's USER_HZ).
fn cpu_seconds() -> Result<f64, String> {
    let stat =
        std::fs::read_to_string("/proc/self/stat").map_err(|e| format!("/proc/self/stat: {e}"))?;
    // The command name (field 2) is in parentheses and may hold spaces: count after its ')'.
    let rest = stat
        .rsplit_once(')')
        .ok_or("/proc/self/stat: no ')' after the command name")?
        .1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| -> Result<f64, String> {
        fields
            .get(i)
            .ok_or(format!("/proc/self/stat: no field {}", i + 3))?
            .parse::<f64>()
            .map_err(|e| format!("/proc/self/stat field {}: {e}", i + 3))
    };
    // Fields 14 (utime) and 15 (stime) are the 12th and 13th after the ')'.
    Ok((tick(11)? + tick(12)?) / 100.0)
}

/// One whole fit (start + `sweeps` sweeps) on the engine; the bound after each sweep.
fn fit(t: &Matrix, sources: usize, sweeps: usize) -> occam::Result<Vec<f64>> {
    let start = Start::new(t, sources, 2, Priors::default(), 0)?;
    Ok(Ica::fit_from(t, Priors::default(), &start, sweeps, 0.0)?.1)
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let case = args.first().map(String::as_str).unwrap_or("toy60");
    let (toy, sources, default_sweeps) = match case {
        "toy60" => (synth::ica_toy(60, 2, 3, 1e-2, 3), 3, 40),
        "toy200" => (synth::ica_toy(200, 2, 3, 1e-4, 5), 3, 300),
        "n10000" => (synth::ica_toy(10_000, 10, 20, 1e-2, 1), 10, 10),
        other => return Err(format!("unknown case {other} (toy60, toy200 or n10000)")),
    };
    let number = |i: usize, default: usize| -> Result<usize, String> {
        args.get(i).map_or(Ok(default), |s| {
            s.parse::<usize>()
                .map_err(|e| format!("argument {}: {s}: {e}", i + 1))
        })
    };
    let sweeps = number(1, default_sweeps)?.max(2);
    let repeats = number(2, 1)?.max(1);
    // FNV-1a over the data's bits: both sides must fit the same numbers.
    let checksum = toy.t.values.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, v| {
        (h ^ v.to_bits()).wrapping_mul(0x0100_0000_01b3)
    });
    let c0 = cpu_seconds()?;
    let mut trace = Vec::new();
    for _ in 0..repeats {
        let tr = fit(&toy.t, sources, sweeps).map_err(|e| e.to_string())?;
        if !trace.is_empty() && tr != trace {
            return Err("two fits from the same start gave different traces".into());
        }
        trace = tr;
    }
    let c1 = cpu_seconds()?;
    for _ in 0..repeats {
        fit(&toy.t, sources, 1).map_err(|e| e.to_string())?;
    }
    let c2 = cpu_seconds()?;
    let (many, one) = (c1 - c0, c2 - c1);
    let (first, last) = (trace[0], trace[trace.len() - 1]);
    println!(
        "case {case} sweeps {sweeps} repeats {repeats} data {checksum:016x} \
         cpu_fits {many:.2} cpu_one_sweep_fits {one:.2} \
         ms_per_fit {:.4} ms_per_sweep {:.5} \
         bound_first {first:?} ({:016x}) bound_last {last:?} ({:016x}) sweeps_run {}",
        1e3 * many / repeats as f64,
        1e3 * (many - one) / (repeats * (sweeps - 1)) as f64,
        first.to_bits(),
        last.to_bits(),
        trace.len(),
    );
    Ok(())
}
