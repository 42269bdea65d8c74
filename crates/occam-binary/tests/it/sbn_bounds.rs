//! Property tests on random small SBNs: every quantity labelled a lower bound is ≤ the exact
//! log-likelihood; Saul MF ≤ first order (full ξ) ≤ third order (full ξ) (LK §4, "third order >
//! mean field always" at the mean-field μ); the mean-field trace never decreases; the MF
//! gradient matches finite differences.

use crate::sbn_common;
use occam_binary::sbn::infer::{approximate, InferMethod};
use occam_binary::sbn::mf::{self, MfInit, MfOptions};
use occam_binary::sbn::third::{self, LkOptions};
use occam_binary::sbn::{exact, gen};
use proptest::prelude::*;
use sbn_common::random_sbn;

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn sbn_all_bounds_below_exact_and_ordered(seed in 0u64..100_000, n in 3usize..9, nv in 1usize..3, span in 0.2f64..3.0) {
        let (sbn, ev) = random_sbn(seed, n, nv, 0.6, span);
        let ll = exact::log_likelihood(&sbn, &ev).unwrap();
        let tol = 1e-9 * (1.0 + ll.abs());
        let f = mf::fit(&sbn, &ev, &MfOptions { init: MfInit::Uniform(seed), ..MfOptions::default() }).unwrap();
        prop_assert!(f.trace.windows(2).all(|w| w[1] >= w[0] - 1e-12 * (1.0 + w[0].abs())), "MF trace {:?}", f.trace);
        let ch = third::chain_from_mf(&sbn, &ev, &f, &LkOptions::default()).unwrap();
        prop_assert!(f.bound <= ch.first.bound + tol, "saul {} > first {}", f.bound, ch.first.bound);
        prop_assert!(ch.first.bound <= ch.third.bound + tol, "first {} > third {}", ch.first.bound, ch.third.bound);
        prop_assert!(ch.third.bound <= ll + tol, "third {} > exact {}", ch.third.bound, ll);
        for m in [InferMethod::MeanField, InferMethod::Mixture(3), InferMethod::FirstOrder, InferMethod::ThirdOrder] {
            let a = approximate(&sbn, &ev, m, seed).unwrap();
            prop_assert!(a.is_lower_bound);
            prop_assert!(a.value <= ll + tol, "{} = {} > exact {}", a.method, a.value, ll);
        }
    }

    #[test]
    fn sbn_chain_bound_below_exact_on_random_layered_nets(seed in 0u64..100_000, span in 0.2f64..3.0) {
        let (sbn, ev) = gen::saul_246(span, span, seed).unwrap();
        let ll = exact::log_likelihood(&sbn, &ev).unwrap();
        let a = approximate(&sbn, &ev, InferMethod::Chain, seed).unwrap();
        let m = approximate(&sbn, &ev, InferMethod::MeanField, seed).unwrap();
        prop_assert!(a.value <= ll + 1e-9 * (1.0 + ll.abs()));
        prop_assert!(a.value >= m.value - 1e-9 * (1.0 + ll.abs()));
    }
}

#[test]
fn sbn_mean_field_gradient_matches_finite_differences() {
    for seed in 0..4 {
        let (sbn, ev) = random_sbn(seed + 30, 8, 3, 0.6, 1.5);
        let f = mf::fit(&sbn, &ev, &MfOptions::default()).unwrap();
        let p0 = sbn.params();
        let mut g = vec![0.0; p0.len()];
        mf::grad_params(&sbn, &f.state, 1.0, &mut g);
        sbn_common::check_fd("MF dL/dW", &g, &p0, 1e-6, 1e-6, |p| {
            let mut s = sbn.clone();
            s.set_params(p).unwrap();
            mf::bound(&s, &ev, &f.state)
        });
    }
}

#[test]
fn sbn_optimal_xi_minimises_the_unit_term() {
    let (sbn, ev) = random_sbn(77, 8, 3, 0.7, 2.5);
    let f = mf::fit(&sbn, &ev, &MfOptions::default()).unwrap();
    for i in 0..sbn.n_units() {
        let x = f.state.xi[i];
        let t0 = mf::unit_term(&sbn, i, &f.state.mu, x);
        for d in [-1e-3, 1e-3, -0.1, 0.1] {
            assert!(
                mf::unit_term(&sbn, i, &f.state.mu, x + d) <= t0 + 1e-12,
                "unit {i}"
            );
        }
    }
}
