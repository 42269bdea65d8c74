//! Helpers shared by the timing examples (`bench_chain`, `bench_gmm`, `bench_kmeans`, `bench_linear`)
//! and the k-means benchmark (`benches/kmeans.rs`, through `#[path]`): command-line flags, reading
//! a data CSV, process CPU time, synthetic clustered data. Each user takes what it needs.
#![allow(dead_code)]

use rand::{Rng as _, SeedableRng};
use rand_distr::{Distribution, Normal};

/// The command line as `--name value` flags.
pub struct Args(Vec<String>);

impl Args {
    /// This process's arguments.
    pub fn from_env() -> Args {
        Args(std::env::args().collect())
    }

    /// The value after `name`, if given.
    pub fn get(&self, name: &str) -> Option<String> {
        let i = self.0.iter().position(|a| a == name)?;
        self.0.get(i + 1).cloned()
    }

    /// Whether `name` is given (a flag without a value).
    pub fn flag(&self, name: &str) -> bool {
        self.0.iter().any(|a| a == name)
    }

    /// The whole number after `name`, or `default`; an error names the flag when it has no value,
    /// is missing without a default or is not a number.
    pub fn number(&self, name: &str, default: Option<usize>) -> Result<usize, String> {
        match self.get(name) {
            Some(v) => v.parse().map_err(|e| format!("{name} {v}: {e}")),
            None if self.flag(name) => Err(format!("{name} needs a value")),
            None => default.ok_or(format!("{name} is required")),
        }
    }

    /// The global thread pool sized by `--threads`, if given (else rayon's default).
    pub fn threads(&self) -> Result<(), String> {
        if self.get("--threads").is_some() {
            let t = self.number("--threads", None)?;
            rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build_global()
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

/// The rows of a CSV with a header row (`bench/peers/gen_data.py`'s files), row-major, and the
/// number of columns; a cell that is not a number or a short row is an error naming its place.
pub fn read_csv(path: &str) -> Result<(Vec<f64>, usize), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mut lines = text.lines();
    let width = lines
        .next()
        .ok_or(format!("{path}: empty file"))?
        .split(',')
        .count();
    let mut values = Vec::new();
    for (row, line) in lines.enumerate() {
        let before = values.len();
        for (col, cell) in line.split(',').enumerate() {
            values.push(
                cell.trim()
                    .parse::<f64>()
                    .map_err(|e| format!("{path}:{}:{}: {e}", row + 2, col + 1))?,
            );
        }
        if values.len() - before != width {
            return Err(format!("{path}:{}: expected {width} values", row + 2));
        }
    }
    Ok((values, width))
}

/// User + system CPU time of this process (Linux `/proc/self/stat`, 100 ticks per second), so that
/// timings on a loaded machine can be compared; `None` elsewhere.
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command name (which is in parentheses and may hold spaces).
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// `n` points in `width` dimensions from `clusters` unit-variance clusters with centres uniform on
/// [−12, 12]^width (the estimator's case b: 2000 points, 10 dimensions, 10 clusters, as
/// `bench/peers/gen_data.py` draws them).
pub fn clustered(n: usize, width: usize, clusters: usize, seed: u64) -> Vec<f64> {
    let mut rng = occam_core::Rng::seed_from_u64(seed);
    let centres: Vec<f64> = (0..clusters * width)
        .map(|_| rng.random_range(-12.0..12.0))
        .collect();
    let noise = Normal::new(0.0, 1.0).unwrap();
    (0..n)
        .flat_map(|_| {
            let c = rng.random_range(0..clusters);
            (0..width)
                .map(|w| centres[c * width + w] + noise.sample(&mut rng))
                .collect::<Vec<_>>()
        })
        .collect()
}
