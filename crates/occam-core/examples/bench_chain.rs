//! Occam's side of `bench/peers/compare_chains.py`: hidden Markov models on data written by the
//! script (raw little-endian f64), timed per full VMP iteration (sweep + bound), one JSON line out.
//!
//! Usage:
//!   bench_chain --model gauss --dir DIR --t T --k K --d D --iters I [--seqs S] [--threads N]
//!   bench_chain --model cat   --dir DIR --t T --k K --m M --iters I [--seqs S] [--threads N]
//!   bench_chain --model lds   --dir DIR --t T --k D --m M --iters I [--threads N]
//! `gauss`: BayesPy's HMM example at scale — a0, rows of A ~ Dirichlet(1e-3), Z ~ MarkovChain(a0, A),
//! mu_k ~ N(0, 1e-3 I) (D-dimensional, diagonal: scalar nodes over D), y_t ~ N(mu_{z_t}, I);
//! DIR holds `y.f64` (T × D) and `mu0.f64` (K × D, the initial ⟨mu⟩ shared with the peer).
//! `cat`: categorical emissions over M symbols — B_k ~ Dirichlet(1) over M, y_t ~ Cat(B_{z_t});
//! DIR holds `y.f64` (T symbols) and `b0.f64` (K × M, initial emission probabilities: q(B_k) starts
//! as Dirichlet((T/K)·b0_k), hmmlearn's own scale, and the peer is given the same start).
//! `lds`: BayesPy's linear state-space example — alpha, gamma ~ Gamma(1e-5, 1e-5) over D,
//! rows of A ~ GaussianARD(0, alpha), x ~ GaussianMarkovChain(0, 1e-3 I, A, noise precision 1),
//! rows of C ~ GaussianARD(0, gamma) (M of them), tau ~ Gamma(1e-5, 1e-5), y[T, M] ~ N(C x_t, 1/tau);
//! DIR holds `y.f64` (T × M) and `c0.f64` (M × D, the initial ⟨C⟩ shared with the peer); update
//! order x, C, gamma, A, alpha, tau.
//! `--seqs S` splits the T steps into S sequences of T/S steps (a plate of sequences).
//! Update order: Z, then the emission parameters, A, a0.

mod common;

use common::Args;
use occam_core::prelude::*;
use std::time::Instant;

fn read_f64(path: &str, len: usize) -> Result<Vec<f64>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    if bytes.len() != len * 8 {
        return Err(format!(
            "{path}: {} bytes, expected {}",
            bytes.len(),
            len * 8
        ));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect())
}

fn main() -> Result<(), String> {
    let args = Args::from_env();
    let model = args.get("--model").ok_or("--model gauss|cat is required")?;
    let dir = args.get("--dir").ok_or("--dir DIR is required")?;
    let (steps, kk) = (args.number("--t", None)?, args.number("--k", None)?);
    let (iters, seqs) = (
        args.number("--iters", Some(20))?,
        args.number("--seqs", Some(1))?,
    );
    if seqs == 0 || steps % seqs != 0 {
        return Err(format!("--seqs {seqs} must divide --t {steps}"));
    }
    args.threads()?;
    let err = |e: BuildError| e.to_string();
    if model == "lds" {
        let (d, m) = (kk, args.number("--m", None)?);
        let y = read_f64(&format!("{dir}/y.f64"), steps * m)?;
        let c0 = read_f64(&format!("{dir}/c0.f64"), m * d)?;
        let start = Instant::now();
        let (g, order) = lds(steps, d, m, &y, &c0).map_err(err)?;
        return time_sweeps(g, order, start, iters, format!("lds_t{steps}_d{d}_m{m}"));
    }
    let start = Instant::now();
    let mut g = Graph::new();
    let s = g.plate("S", seqs);
    let t = g.plate("T", steps / seqs);
    let k = g.plate("K", kk);
    let a0 = g
        .add(
            "a0",
            Dirichlet {
                concentration: vec![1e-3; kk],
            },
            &[],
            [],
        )
        .map_err(err)?;
    let a = g
        .add(
            "A",
            Dirichlet {
                concentration: vec![1e-3; kk],
            },
            &[k],
            [],
        )
        .map_err(err)?;
    let chain = MarkovChain {
        k: kk,
        time: t,
        lengths: None,
    };
    let z = g
        .markov_chain("Z", chain, &[s], [p(a0), p(a)])
        .map_err(err)?;
    let (emission, case) = match model.as_str() {
        "gauss" => {
            let d = args.number("--d", None)?;
            let y = read_f64(&format!("{dir}/y.f64"), steps * d)?;
            let mu0 = read_f64(&format!("{dir}/mu0.f64"), kk * d)?;
            let dp = g.plate("D", d);
            let mu = g
                .add("mu", Gaussian, &[k, dp], [c(0.0), c(1e-3)])
                .map_err(err)?;
            let yn = g
                .add_mixture("y", Gaussian, &[s, t, dp], &[(z, k)], [p(mu), c(1.0)])
                .map_err(err)?;
            g.observe(yn, &y).map_err(err)?;
            g.initialize(
                mu,
                Init::Moments(mu0.iter().flat_map(|m| [*m, m * m]).collect()),
            );
            (mu, format!("hmm_gauss_t{steps}_k{kk}_d{d}_s{seqs}"))
        }
        "cat" => {
            let m = args.number("--m", None)?;
            let y = read_f64(&format!("{dir}/y.f64"), steps)?;
            let b0 = read_f64(&format!("{dir}/b0.f64"), kk * m)?;
            let b = g
                .add(
                    "B",
                    Dirichlet {
                        concentration: vec![1.0; m],
                    },
                    &[k],
                    [],
                )
                .map_err(err)?;
            let yn = g
                .add_mixture("y", Categorical { k: m }, &[s, t], &[(z, k)], [p(b)])
                .map_err(err)?;
            g.observe(yn, &y).map_err(err)?;
            // q(B_k) = Dirichlet((T/K)·b0_k), the start the peer is given too.
            let scale = steps as f64 / kk as f64;
            g.initialize(
                b,
                Init::Natural(b0.iter().map(|v| scale * v - 1.0).collect()),
            );
            (b, format!("hmm_cat_t{steps}_k{kk}_m{m}_s{seqs}"))
        }
        other => return Err(format!("unknown model `{other}`")),
    };
    time_sweeps(g, vec![z, emission, a, a0], start, iters, case)
}

/// BayesPy's linear state-space model (module docs).
fn lds(
    steps: usize,
    d: usize,
    m: usize,
    y: &[f64],
    c0: &[f64],
) -> Result<(Graph, Vec<NodeId>), BuildError> {
    let mut g = Graph::new();
    let t = g.plate("T", steps);
    let q = g.plate("Q", d);
    let r = g.plate("R", d);
    let o = g.plate("M", m);
    let alpha = g.add("alpha", Gamma { shape: 1e-5 }, &[q], [c(1e-5)])?;
    let a = g.add("A", GaussianArd { d }, &[r], [c(0.0), p(alpha)])?;
    let mut lam0 = vec![0.0; d * d];
    (0..d).for_each(|i| lam0[i * d + i] = 1e-3);
    let chain = GaussianMarkovChain {
        d,
        time: t,
        lengths: None,
    };
    let x = g.gaussian_markov_chain(
        "x",
        chain,
        &[],
        [cv(vec![0.0; d]), cv(lam0), p(a), cv(vec![1.0; d])],
    )?;
    let gamma = g.add("gamma", Gamma { shape: 1e-5 }, &[q], [c(1e-5)])?;
    let cm = g.add("C", GaussianArd { d }, &[o], [c(0.0), p(gamma)])?;
    let f = g.deterministic("F", Dot { d }, &[t, o], [p(x), p(cm)])?;
    let tau = g.add("tau", Gamma { shape: 1e-5 }, &[], [c(1e-5)])?;
    let yn = g.add("y", Gaussian, &[t, o], [p(f), p(tau)])?;
    g.observe(yn, y)?;
    let mut u = Vec::with_capacity(m * (d + d * d));
    for row in c0.chunks_exact(d) {
        u.extend_from_slice(row);
        u.extend((0..d * d).map(|ij| row[ij / d] * row[ij % d]));
    }
    g.initialize(cm, Init::Moments(u));
    Ok((g, vec![x, cm, gamma, a, alpha, tau]))
}

/// Compiles and initialises `g` (set-up time from `start`), then times `iters` full iterations
/// (a sweep in `order` and the bound) and prints the JSON line.
fn time_sweeps(
    g: Graph,
    order: Vec<NodeId>,
    start: Instant,
    iters: usize,
    case: String,
) -> Result<(), String> {
    let mut vmp = g.compile().map_err(|e| e.to_string())?;
    vmp.initialize(0).map_err(|e| e.to_string())?;
    let setup_ms = start.elapsed().as_secs_f64() * 1e3;
    let sweep = RunOptions {
        max_iter: 1,
        tol: 0.0,
        order: Some(order),
        ..Default::default()
    };
    let mut times = Vec::with_capacity(iters);
    let mut trace = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t = Instant::now();
        trace.push(vmp.run(&sweep).map_err(|e| e.to_string())?.bound);
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let mean = times.iter().sum::<f64>() / iters.max(1) as f64;
    times.sort_by(f64::total_cmp);
    let median = times.get(iters / 2).copied().unwrap_or(f64::NAN);
    let bound = trace.last().copied().unwrap_or(f64::NAN);
    println!(
        "{{\"peer\": \"occam\", \"case\": \"{case}\", \"ms_per_iter\": {mean:.4}, \"ms_per_iter_median\": {median:.4}, \"setup_ms\": {setup_ms:.2}, \"iterations\": {iters}, \"bound\": {bound}, \"trace\": {trace:?}}}"
    );
    Ok(())
}
