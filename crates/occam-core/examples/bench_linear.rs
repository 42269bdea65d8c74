//! Occam's side of `bench/peers/compare_linear.py`: BayesPy's regression and PCA example models on
//! data written by the script (raw little-endian f64), timed per full VMP iteration (sweep + bound),
//! one JSON line out. Set-up (graph building and compilation) is timed separately, and the
//! process's peak resident memory (VmHWM) is reported after building, compiling, initialising and
//! iterating. The data are handed over to the model (`Vec`, no second copy); PCA's initial moments
//! from x0 (the peer's start, N·(Q + Q²) values) are the caller's input and are formed before the
//! set-up clock starts.
//!
//! Usage:
//!   bench_linear --model regression --dir DIR --n N --c C --iters I [--threads T] [--generic]
//!   bench_linear --model pca --dir DIR --n N --d D --q Q --iters I [--threads T] [--generic]
//!       [--init random]
//!   bench_linear --model pca_mean ... (as pca): BPCA with a mean, y_dn ~ N(w_dᵀ x_n + μ_d, τ⁻¹)
//! DIR holds `x.f64` (N × C covariates) and `y.f64` (N) for regression; `y.f64` (D × N) and `x0.f64`
//! (N × Q, the initial ⟨X⟩ shared with the peer) for PCA (`--init random`: X starts at draws from
//! its prior instead, without x0 and without the N·(Q + Q²) initial moments x0 needs). `--generic`
//! compiles without the linear-Gaussian kernel (the element-by-element reference path).

mod common;

use common::Args;
use occam_core::models::{LinearRegression, Pca};
use occam_core::prelude::*;
use std::time::Instant;

/// Reads `len` little-endian f64 values, in blocks (no second copy of the file in memory).
fn read_f64(path: &str, len: usize) -> Result<Vec<f64>, String> {
    use std::io::Read as _;
    let mut file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
    let mut values = Vec::with_capacity(len);
    let mut block = vec![0u8; 1 << 16];
    loop {
        let got = file.read(&mut block).map_err(|e| format!("{path}: {e}"))?;
        if got == 0 {
            break;
        }
        if got % 8 != 0 {
            file.read_exact(&mut block[got..got + 8 - got % 8])
                .map_err(|e| format!("{path}: {e}"))?;
        }
        let whole = got.div_ceil(8) * 8;
        values.extend(
            block[..whole]
                .chunks_exact(8)
                .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes"))),
        );
    }
    if values.len() != len {
        return Err(format!("{path}: {} values, expected {len}", values.len()));
    }
    Ok(values)
}

/// The process's peak resident memory so far in MB (`VmHWM`; NaN where /proc is not there).
fn peak_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
            let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb / 1024.0)
        })
        .unwrap_or(f64::NAN)
}

/// BayesPy's PCA example model with a mean per row, μ_d ~ N(0, 10³) (as `Pca`, with y's mean
/// dot(W[D], X[N]) + μ[D]); returns the nodes and μ.
fn pca_mean(
    g: &mut Graph,
    y: Vec<f64>,
    d: usize,
    q: usize,
) -> Result<(occam_core::models::PcaNodes, NodeId), BuildError> {
    let dp = g.try_plate("D", d)?;
    let np = g.try_plate("N", y.len() / d.max(1))?;
    let qp = g.try_plate("Q", q)?;
    let (shape, rate) = (1e-5, 1e-5);
    let alpha = g.add("alpha", Gamma { shape }, &[qp], [c(rate)])?;
    let w = g.add("W", GaussianArd { d: q }, &[dp], [c(0.0), p(alpha)])?;
    let x = g.add("X", GaussianArd { d: q }, &[np], [c(0.0), c(1.0)])?;
    let mu = g.add("mu", Gaussian, &[dp], [c(0.0), c(1e-3)])?;
    let tau = g.add("tau", Gamma { shape }, &[], [c(rate)])?;
    let f = g.deterministic("F", Dot { d: q }, &[dp, np], [p(w), p(x)])?;
    let s = g.deterministic("S", Sum { n: 2, d: 1 }, &[dp, np], [p(f), p(mu)])?;
    let y_node = g.add("y", Gaussian, &[dp, np], [p(s), p(tau)])?;
    g.observe_values(y_node, y, None)?;
    let nodes = occam_core::models::PcaNodes {
        alpha,
        w,
        x,
        tau,
        y: y_node,
    };
    Ok((nodes, mu))
}

fn main() -> Result<(), String> {
    let args = Args::from_env();
    let model = args
        .get("--model")
        .ok_or("--model regression|pca is required")?;
    let dir = args.get("--dir").ok_or("--dir DIR is required")?;
    let (n, iters) = (args.number("--n", None)?, args.number("--iters", Some(20))?);
    let generic = args.flag("--generic");
    args.threads()?;
    let err = |e: BuildError| e.to_string();
    let (start, g, order, case) = match model.as_str() {
        "regression" => {
            let c = args.number("--c", None)?;
            let x = read_f64(&format!("{dir}/x.f64"), n * c)?;
            let y = read_f64(&format!("{dir}/y.f64"), n)?;
            let start = Instant::now();
            let mut g = Graph::new();
            let m = LinearRegression::new()
                .add(&mut g, x, c, &y, None)
                .map_err(err)?;
            (start, g, vec![m.b, m.tau], format!("regression_n{n}_c{c}"))
        }
        "pca" | "pca_mean" => {
            let (d, q) = (args.number("--d", None)?, args.number("--q", None)?);
            let y = read_f64(&format!("{dir}/y.f64"), d * n)?;
            let random = args.get("--init").is_some_and(|v| v == "random");
            // The start the peer is given, as Occam's initial moments [x, x xᵀ] per row: the
            // caller's input, formed before the set-up clock starts.
            let u0 = if random {
                Vec::new()
            } else {
                let x0 = read_f64(&format!("{dir}/x0.f64"), n * q)?;
                let mut u = Vec::with_capacity(n * (q + q * q));
                for x in x0.chunks_exact(q) {
                    u.extend_from_slice(x);
                    u.extend((0..q * q).map(|ab| x[ab / q] * x[ab % q]));
                }
                u
            };
            let start = Instant::now();
            let mut g = Graph::new();
            let (m, mu) = if model == "pca" {
                (
                    Pca::new(q).add_values(&mut g, y, d, None).map_err(err)?,
                    None,
                )
            } else {
                let (m, mu) = pca_mean(&mut g, y, d, q).map_err(err)?;
                (m, Some(mu))
            };
            if random {
                g.initialize(m.x, Init::Random);
            } else {
                g.initialize(m.x, Init::Moments(u0));
            }
            let order = [Some(m.w), Some(m.x), mu, Some(m.alpha), Some(m.tau)];
            (
                start,
                g,
                order.into_iter().flatten().collect(),
                format!("{model}_n{n}_d{d}_q{q}"),
            )
        }
        other => return Err(format!("unknown model `{other}`")),
    };
    let built = start.elapsed();
    let mut peaks = vec![peak_mb()];
    let mut vmp = if generic {
        g.compile_generic()
    } else {
        g.compile()
    }
    .map_err(err)?;
    let compiled = start.elapsed();
    peaks.push(peak_mb());
    vmp.initialize(0).map_err(|e| e.to_string())?;
    let setup_ms = start.elapsed().as_secs_f64() * 1e3;
    peaks.push(peak_mb());
    // Set-up in parts: building the graph (with observing the data), compiling, initialising.
    let parts = [
        built.as_secs_f64() * 1e3,
        (compiled - built).as_secs_f64() * 1e3,
        setup_ms - compiled.as_secs_f64() * 1e3,
    ];
    let sweep = RunOptions {
        max_iter: 1,
        tol: 0.0,
        order: Some(order),
        ..Default::default()
    };
    // One untimed warm-up iteration, then `iters` timed ones (each a sweep and the bound).
    vmp.run(&sweep).map_err(|e| e.to_string())?;
    let mut times = Vec::with_capacity(iters);
    let mut bound = f64::NAN;
    for _ in 0..iters {
        let t = Instant::now();
        bound = vmp.run(&sweep).map_err(|e| e.to_string())?.bound;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    peaks.push(peak_mb());
    let mean = times.iter().sum::<f64>() / iters.max(1) as f64;
    times.sort_by(f64::total_cmp);
    let median = times.get(iters / 2).copied().unwrap_or(f64::NAN);
    println!(
        "{{\"peer\": \"occam{}\", \"case\": \"{case}\", \"ms_per_iter\": {mean:.4}, \"ms_per_iter_median\": {median:.4}, \"setup_ms\": {setup_ms:.2}, \"setup_parts_ms\": [{:.2}, {:.2}, {:.2}], \"peak_mb_after_build_compile_init_run\": [{:.1}, {:.1}, {:.1}, {:.1}], \"iterations\": {}, \"bound\": {bound}}}",
        if generic { "-generic" } else { "" },
        parts[0],
        parts[1],
        parts[2],
        peaks[0],
        peaks[1],
        peaks[2],
        peaks[3],
        iters + 1
    );
    Ok(())
}
