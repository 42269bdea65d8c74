//! Mixtures of mean field (Lawrence §2.4.2, corrected updates): the bound is below the
//! true ELBO of its own q (hence below ln P(v)), never decreases, never falls below the mean-field
//! bound it grows from, 𝓘 = 0 for constant R, and Fig. 2.4 reproduces.

use crate::sbn_common;
use occam_binary::sbn::exact;
use occam_binary::sbn::mf::{self, MfInit, MfOptions};
use occam_binary::sbn::mixture::{self, MixInit, MixOptions, MixState};
use occam_binary::sbn::repro::{mixture_study, MixtureStudyOptions};
use occam_binary::sbn::{Evidence, Sbn};
use proptest::prelude::*;
use sbn_common::random_sbn;

/// E_q[ln P(h,v)] − E_q[ln q(h)] of the mixture q, by enumeration.
fn true_elbo(sbn: &Sbn, ev: &Evidence, st: &MixState) -> f64 {
    let hid = ev.hidden();
    let n = sbn.n_units();
    let mut x: Vec<f64> = (0..n)
        .map(|i| if ev.get(i) == Some(true) { 1.0 } else { 0.0 })
        .collect();
    let mut elbo = 0.0;
    for s in 0..1usize << hid.len() {
        for (k, &u) in hid.iter().enumerate() {
            x[u] = ((s >> k) & 1) as f64;
        }
        let mut q = 0.0;
        for m in 0..st.m {
            let mut p = st.q[m];
            for &u in hid {
                let mu = st.mu[m * n + u];
                p *= if x[u] > 0.5 { mu } else { 1.0 - mu };
            }
            q += p;
        }
        if q > 0.0 {
            elbo += q * (sbn.log_joint(&x) - q.ln());
        }
    }
    elbo
}

fn monotone(trace: &[f64]) -> bool {
    trace
        .windows(2)
        .all(|w| w[1] >= w[0] - 1e-10 * (1.0 + w[0].abs()))
}

#[test]
fn sbn_constant_smoothing_gives_zero_mutual_information_term() {
    let (sbn, ev) = random_sbn(1, 8, 3, 0.5, 1.0);
    let fit = mf::fit(&sbn, &ev, &MfOptions::default()).unwrap();
    let st = mixture::from_mf(&fit.state);
    assert!((mixture::bound(&sbn, &ev, &st) - fit.bound).abs() < 1e-12);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn sbn_mixture_bound_is_below_own_elbo_and_monotone(seed in 0u64..10_000, n in 4usize..9, m in 1usize..5) {
        let (sbn, ev) = random_sbn(seed, n, 2, 0.6, 2.0);
        let ll = exact::log_likelihood(&sbn, &ev).unwrap();
        for init in [MixInit::Random(seed), MixInit::Grow { seed, jitter: 1.0 }] {
            let opts = MixOptions { components: m, init, max_sweeps: 60, tol: 1e-12, mf: MfOptions { init: MfInit::Uniform(seed), ..MfOptions::default() } };
            let fit = mixture::fit(&sbn, &ev, &opts).unwrap();
            let elbo = true_elbo(&sbn, &ev, &fit.state);
            prop_assert!(fit.bound <= elbo + 1e-9, "bound {} > ELBO {}", fit.bound, elbo);
            prop_assert!(elbo <= ll + 1e-9);
            prop_assert!(monotone(&fit.trace), "trace {:?}", fit.trace);
        }
    }

    #[test]
    fn sbn_grown_mixture_never_below_its_mean_field(seed in 0u64..10_000, n in 4usize..9) {
        let (sbn, ev) = random_sbn(seed, n, 2, 0.6, 2.0);
        let mfo = MfOptions { init: MfInit::Uniform(seed), ..MfOptions::default() };
        let mf_fit = mf::fit(&sbn, &ev, &mfo).unwrap();
        let opts = MixOptions { components: 4, init: MixInit::Grow { seed, jitter: 1.0 }, max_sweeps: 60, tol: 1e-12, mf: mfo };
        let path = mixture::grow_path(&sbn, &ev, &mf_fit, 4, &opts);
        let mut prev = mf_fit.bound;
        for f in &path {
            prop_assert!(f.bound >= prev - 1e-10 * (1.0 + prev.abs()), "stage bound {} < previous {}", f.bound, prev);
            prop_assert!(monotone(&f.trace));
            prev = f.bound;
        }
    }
}

#[test]
fn sbn_mixture_gradient_matches_finite_differences() {
    let (sbn, ev) = random_sbn(5, 7, 3, 0.6, 1.0);
    let opts = MixOptions {
        components: 3,
        init: MixInit::Random(3),
        max_sweeps: 30,
        tol: 1e-12,
        mf: MfOptions::default(),
    };
    let fit = mixture::fit(&sbn, &ev, &opts).unwrap();
    let p0 = sbn.params();
    let mut g = vec![0.0; p0.len()];
    mixture::grad_params(&sbn, &fit.state, 1.0, &mut g);
    // the gradient at fixed variational parameters: 𝓘 does not depend on the weights
    sbn_common::check_fd("mixture dL/dW", &g, &p0, 1e-6, 1e-6, |p| {
        let mut s = sbn.clone();
        s.set_params(p).unwrap();
        mixture::bound(&s, &ev, &fit.state)
    });
}

#[test]
fn sbn_lawrence_fig_2_4_relative_error_falls_with_components() {
    // Saul's 2–4–6 nets, U(−1,1) weights and biases, visible clamped to 0 (Lawrence §2.5).
    let r = mixture_study(&MixtureStudyOptions {
        networks: 30,
        max_components: 5,
        span: 1.0,
        seed: 11,
        random_init: false,
    })
    .unwrap();
    let e = &r.mean_relative_error;
    assert_eq!(r.bound_violations, 0);
    assert_eq!(r.non_monotone, 0);
    // Measured (30 nets, seed 11, deterministic): mean |L − 𝓛|/|L| for M = 1..5 is
    // 0.015488, 0.0071321, 0.0036259, 0.0022801, 0.0015173 (re-recorded when the SBN code moved
    // to occam_core::special's binary entropy: M = 4 moved by 1.0e−5 relative, the others by at
    // most 1.3e−7, as the last-bit change steers a mixture fit that stops at its iteration limit) — M = 5 is 90.2 % below mean field.
    // The thesis (5000 nets; Fig. 2.4's histogram means are not in the text) states "a 27 %
    // decrease in the error" for five components at span 1. Its claim that the error falls with
    // every added component reproduces; the size of the fall does not (90 % here, on 30 nets),
    // so the measured values are asserted.
    let measured = [
        0.015487695436617602,
        0.007132145613307742,
        0.003625949012183346,
        0.0022800742835924767,
        0.0015173289922788117,
    ];
    for (got, want) in e.iter().zip(measured) {
        assert!(
            (got / want - 1.0).abs() < 1e-9,
            "relative errors {e:?}, recorded {measured:?}"
        );
    }
    for w in e.windows(2) {
        assert!(w[1] < w[0], "not falling with M: {e:?}");
    }
    let drop = 1.0 - e[4] / e[0];
    assert!((drop - 0.9020).abs() < 1e-4, "M = 5 vs mean field: {drop}");
}
