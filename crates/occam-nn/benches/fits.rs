//! Timings: one committee fit (M = 3, H = 8, sunspots, the paper's full schedule; its components'
//! pre-training and ⟨E_D⟩ run on separate threads), one diagonal fit, HMC with 300 samples (one
//! chain, and two chains on two threads), and 4 restarts spread over the cores.
//!
//! `cargo bench -p occam-nn --bench fits` (targets, issue 11: committee fit < 5 s, HMC < 30 s).

use criterion::{criterion_group, criterion_main, Criterion};
use occam_nn::baselines::evidence::{fit_evidence, EvidenceOptions};
use occam_nn::baselines::hmc::{hmc, hmc_chains, HmcOptions};
use occam_nn::bnn::vb::{fit_vb, fit_vb_restarts, VbOptions};
use occam_nn::data::sunspots_protocol;

fn fits(c: &mut Criterion) {
    let s = sunspots_protocol(12).expect("bundled data");
    let mut g = c.benchmark_group("sunspots_h8");
    g.sample_size(10);
    g.bench_function("vb_committee_m3_full_schedule", |b| {
        b.iter(|| fit_vb(&s.train, &VbOptions::committee_paper(8, 3)).expect("fit"))
    });
    g.bench_function("vb_diagonal_full_schedule", |b| {
        b.iter(|| fit_vb(&s.train, &VbOptions::committee_paper(8, 1)).expect("fit"))
    });
    let ev = fit_evidence(&s.train, &EvidenceOptions::paper(8)).expect("evidence");
    g.bench_function("hmc_300_samples", |b| {
        b.iter(|| hmc(&s.train, &HmcOptions::paper(8), &ev.w, &ev.alpha, ev.beta).expect("hmc"))
    });
    g.bench_function("hmc_300_samples_2_chains_parallel", |b| {
        b.iter(|| {
            hmc_chains(
                &s.train,
                &HmcOptions::paper(8),
                2,
                &ev.w,
                &ev.alpha,
                ev.beta,
            )
            .expect("hmc")
        })
    });
    g.bench_function("vb_diagonal_4_restarts_parallel", |b| {
        b.iter(|| fit_vb_restarts(&s.train, &VbOptions::committee_paper(8, 1), 4).expect("fits"))
    });
    g.finish();
}

criterion_group!(benches, fits);
criterion_main!(benches);
