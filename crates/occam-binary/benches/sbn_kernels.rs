//! Timings on Saul's 2–4–6 SBN (weights and biases U(−1,1), bottom layer clamped):
//! one Saul mean-field fit, one third-order evaluation (value + gradient) at the mean-field
//! solution with both moment engines, and one full ξ-optimised third-order fit.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use occam_binary::sbn::mf::{self, MfOptions};
use occam_binary::sbn::third::{self, LkOptions, MomentEngine, PmParams};
use occam_binary::sbn::{exact, gen};

fn bench(c: &mut Criterion) {
    let (sbn, ev) = gen::saul_246(1.0, 1.0, 0).expect("generator");
    c.bench_function("sbn_246_mf_fit", |b| {
        b.iter(|| mf::fit(black_box(&sbn), &ev, &MfOptions::default()).expect("mf"))
    });
    let fit = mf::fit(&sbn, &ev, &MfOptions::default()).expect("mf");
    let (m, xi) = third::from_saul(&sbn, &ev, &fit.state);
    let th = PmParams::from_sbn(&sbn);
    for (name, eng) in [
        ("enumerate", MomentEngine::Enumerate),
        ("polynomial", MomentEngine::Polynomial),
    ] {
        c.bench_function(&format!("sbn_246_third_order_eval_{name}"), |b| {
            b.iter(|| {
                third::third_order(black_box(&sbn), &ev, &th, &xi, &m, eng, true).expect("third")
            })
        });
    }
    c.bench_function("sbn_246_third_order_fit", |b| {
        b.iter(|| {
            third::chain_from_mf(black_box(&sbn), &ev, &fit, &LkOptions::default()).expect("chain")
        })
    });
    c.bench_function("sbn_246_exact", |b| {
        b.iter(|| exact::log_likelihood(black_box(&sbn), &ev).expect("exact"))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
