//! One run of each benchmarked fit with its wall time, for a machine too loaded for criterion's
//! repeated samples: run it under `/usr/bin/time` to see the CPU seconds next to the wall seconds.
//! The benchmark proper is `benches/fits.rs`.
//!
//! `cargo run --release -p occam-nn --example time_fits -- [committee|hmc1|hmc2]...`

use occam_nn::baselines::evidence::{fit_evidence, EvidenceOptions};
use occam_nn::baselines::hmc::{hmc, hmc_chains, HmcOptions};
use occam_nn::bnn::vb::{fit_vb, VbOptions};
use occam_nn::data::sunspots_protocol;
use std::time::Instant;

fn main() {
    let s = sunspots_protocol(12).expect("bundled data");
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    let want = |n: &str| wanted.is_empty() || wanted.iter().any(|w| w == n);
    if want("committee") {
        let t0 = Instant::now();
        let fit = fit_vb(&s.train, &VbOptions::committee_paper(8, 3)).expect("fit");
        println!(
            "committee fit (M = 3, H = 8, 3 x 100 + 5 x 500 iterations): {:.2} s wall, bound {:.3}",
            t0.elapsed().as_secs_f64(),
            fit.bound.total
        );
    }
    if want("hmc1") || want("hmc2") {
        let ev = fit_evidence(&s.train, &EvidenceOptions::paper(8)).expect("evidence");
        let o = HmcOptions::paper(8);
        if want("hmc1") {
            let t0 = Instant::now();
            let r = hmc(&s.train, &o, &ev.w, &ev.alpha, ev.beta).expect("hmc");
            println!(
                "HMC, 1 chain x 300 samples (50 leapfrog steps): {:.2} s wall, acceptance {:.2}",
                t0.elapsed().as_secs_f64(),
                r.acceptance
            );
        }
        if want("hmc2") {
            let t0 = Instant::now();
            let r = hmc_chains(&s.train, &o, 2, &ev.w, &ev.alpha, ev.beta).expect("hmc");
            println!(
                "HMC, 2 chains x 300 samples on 2 threads: {:.2} s wall, {} kept samples",
                t0.elapsed().as_secs_f64(),
                r.samples.len()
            );
        }
    }
}
