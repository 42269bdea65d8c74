//! Learning: ±1 ↔ 0/1 parameter maps, determinism across thread counts, and the small-sample
//! version of the Leisink–Kappen cascade learning experiment (the full 20-run L = 5 version is
//! the CLI reproduction `lk-learning`).

use occam_binary::sbn::learn::{self, Coding, Dataset, LearnOptions, Method};
use occam_binary::sbn::repro::{lk_learning, LkLearningOptions};
use occam_binary::sbn::third::PmParams;
use occam_binary::sbn::{exact, gen};

#[test]
fn sbn_plus_minus_parameters_round_trip() {
    let (sbn, _) = gen::saul_246(1.3, 0.7, 5).unwrap();
    let back = learn::to_sbn(&sbn, &PmParams::from_sbn(&sbn)).unwrap();
    for (a, b) in sbn.params().iter().zip(back.params()) {
        assert!((a - b).abs() < 1e-12);
    }
}

fn cascade_data(layers: usize, seed: u64) -> (occam_binary::sbn::Sbn, Dataset) {
    let g = gen::cascade(layers, 0.0, 0.5, seed).unwrap();
    let vis = gen::cascade_bottom(layers);
    let lp = exact::visible_distribution(&g, &vis).unwrap();
    let patterns = (0..lp.len())
        .map(|s| (0..vis.len()).map(|k| (s >> k) & 1 == 1).collect())
        .collect();
    (
        g,
        Dataset {
            visible: vis,
            patterns,
            weights: lp.iter().map(|l| l.exp()).collect(),
        },
    )
}

#[test]
fn sbn_learning_is_identical_for_any_thread_count() {
    let (_, data) = cascade_data(4, 1);
    let init = gen::cascade(4, 0.0, 0.5, 99).unwrap();
    let o = LearnOptions {
        method: Method::ThirdOrder,
        steps: 3,
        rate: 1.0,
        coding: Coding::PlusMinus,
        learn_biases: false,
        ..LearnOptions::default()
    };
    let run = |t: usize| {
        occam_core::threads::on_threads(t, || learn::learn(&init, &data, &o).unwrap()).unwrap()
    };
    let (a, b) = (run(1), run(2));
    assert_eq!(a.sbn, b.sbn);
    assert_eq!(a.objective, b.objective);
}

#[test]
fn sbn_every_method_raises_the_exact_likelihood_from_a_random_start() {
    let (_, data) = cascade_data(4, 2);
    let init = gen::cascade(4, 0.0, 0.5, 7).unwrap();
    let l0 = learn::exact_objective(&init, &data).unwrap();
    for m in [
        Method::Exact,
        Method::MeanField,
        Method::Mixture(2),
        Method::ThirdOrder,
    ] {
        let r = learn::learn(
            &init,
            &data,
            &LearnOptions {
                method: m,
                steps: 15,
                rate: 1.0,
                coding: Coding::PlusMinus,
                learn_biases: false,
                ..LearnOptions::default()
            },
        )
        .unwrap();
        let l1 = learn::exact_objective(&r.sbn, &data).unwrap();
        assert!(l1 > l0, "{m:?}: {l0} -> {l1}");
        // the objective of a bound never exceeds the exact objective at the same weights
        assert!(r.objective.iter().all(|v| v.is_finite()));
    }
}

#[test]
fn sbn_lk_cascade_learning_third_order_recovers_weights_better_than_mean_field() {
    // Small-sample version of LK §5.2 (paper: L = 5, 20 runs, MF 0.566 vs third 0.073):
    // L = 4, 5 runs, every method started at the generating weights (the paper's second protocol).
    let r = lk_learning(&LkLearningOptions {
        runs: 5,
        layers: 4,
        sigma2: 0.5,
        steps: 60,
        rate: 2.0,
        seed: 0,
        init_at_generator: true,
    })
    .unwrap();
    // Measured (deterministic, seeds 0..4; re-recorded when the SBN code moved to
    // occam_core::special's softplus and binary entropy, which changed the last bits and the
    // weight errors by at most 1.4e−9 relative): weight error (46) against the exactly trained net,
    // mean field / third order per run, and the exact objective (45) of the exactly, mean-field
    // and third-order trained nets. Paper (L = 5, 20 runs, 300 steps): MF 0.566, third 0.073,
    // third better in all 20 runs. Here (L = 4, 5 runs, 60 steps) the means are 1.6184 / 1.3375:
    // the paper's ordering reproduces in every run, its factor of 8 does not at this size.
    let measured = [
        (
            0.8497567520467977,
            0.8209039264728238,
            -2.7499136159532678,
            -2.7499764401964133,
            -2.7499763368306462,
        ),
        (
            2.3373510997139317,
            2.1010300830285074,
            -2.758462243964826,
            -2.7586576305011237,
            -2.758530624264809,
        ),
        (
            0.8974971751637169,
            0.8350313848683395,
            -2.7206216606175873,
            -2.720868776532695,
            -2.7208599357588583,
        ),
        (
            2.532777586496222,
            1.7059754641966631,
            -2.7534379266705793,
            -2.7534840075277205,
            -2.753443694285673,
        ),
        (
            1.474731115702452,
            1.2247384277709765,
            -2.7658716082116377,
            -2.7660949581352523,
            -2.7660016630945123,
        ),
    ];
    let close = |got: f64, want: f64| (got / want - 1.0).abs() < 1e-9;
    assert_eq!(r.runs.len(), measured.len());
    for (run, m) in r.runs.iter().zip(measured) {
        let got = (
            run.error_mf,
            run.error_third,
            run.loglik_exact,
            run.loglik_mf,
            run.loglik_third,
        );
        assert!(
            close(got.0, m.0)
                && close(got.1, m.1)
                && close(got.2, m.2)
                && close(got.3, m.3)
                && close(got.4, m.4),
            "{run:?}, recorded {m:?}"
        );
        assert!(run.error_third < run.error_mf, "{run:?}");
        // Both approximate learners end within 9.1e-5 (relative) of the exact objective
        // (largest 9.08e-5: run 2's mean field); the paper: "usually smaller than 0.1 %" for σ₂ ≤ 1.
        for l in [run.loglik_mf, run.loglik_third] {
            assert!(
                l < run.loglik_exact && (l / run.loglik_exact - 1.0).abs() < 9.1e-5,
                "{run:?}"
            );
        }
    }
    assert_eq!(r.third_better, 5, "{r:?}");
    assert!(close(r.mean_error_mf, 1.6184227464359808), "{r:?}");
    assert!(close(r.mean_error_third, 1.3375358573930627), "{r:?}");
}
