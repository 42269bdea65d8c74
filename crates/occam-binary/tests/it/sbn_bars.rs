//! Lawrence Fig. 2.7 (bars), small-sample version: 3×3 bars on a 1–6–9 SBN, 3 runs of 300 batch
//! steps, M = 1 vs M = 5 from identical initial networks. The full 4×4, 1–8–16, 10-run study
//! (M = 1..5) is the CLI reproduction `lawrence-bars`.

use occam_binary::sbn::gen;
use occam_binary::sbn::repro::{bars_runs, BarsOptions};

#[test]
fn sbn_bars_mixture_learning_beats_mean_field_and_respects_the_entropy_bound() {
    let o = BarsOptions {
        size: 3,
        runs: 3,
        steps: 300,
        rate: 2.0,
        inner: 3,
        init_scale: 0.5,
        max_components: 5,
        seed: 0,
    };
    let bound = -gen::bars_entropy_k(3);
    let m1 = bars_runs(&o, 1).unwrap();
    let m5 = bars_runs(&o, 5).unwrap();
    for l in m1.iter().chain(&m5) {
        assert!(
            *l <= bound + 1e-12,
            "log-likelihood {l} above −entropy {bound}"
        );
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    assert!(
        mean(&m5) > mean(&m1),
        "M=5 {m5:?} not better than M=1 {m1:?}"
    );
}

#[test]
fn sbn_bars_generator_entropies() {
    // 4×4: 3.3791 nats, by enumeration of the generator (Lawrence §2.5.2); 3×3: 14 distinct images.
    assert!((gen::bars_entropy() - 3.3791).abs() < 5e-5);
    assert_eq!(gen::bars_distribution_k(3).len(), 14);
    let h3 = 12.0 / 16.0 * 16f64.ln() + 2.0 / 8.0 * 8f64.ln();
    assert!((gen::bars_entropy_k(3) - h3).abs() < 1e-12);
}
