//! Property tests over random small Boltzmann machines.
use occam_binary::bm::exact::exact;
use occam_binary::bm::jt::junction_tree;
use occam_binary::bm::mf::{mean_field, MeanFieldOptions};
use occam_binary::bm::mixture::{mixture, MixtureOptions};
use occam_binary::bm::tap::{tap, TapOptions};
use occam_binary::bm::third_order::{
    exp_lower_bound, third_order_bound, third_order_from, third_order_grad_model,
    third_order_grad_mu, ThirdOrderOptions,
};
use occam_binary::bm::{BoltzmannMachine, Quality};
use occam_binary::coding::{zero_one_to_plus_minus, ZeroOneParams};
use occam_binary::exact::log_sum_exp_states;
use proptest::prelude::*;

/// `b ≤ log Z` up to rounding: bounds that are tight (e.g. independent units, where mean field is
/// exact) may land within a few ulps above the enumerated value.
fn below(b: f64, lz: f64) -> bool {
    b <= lz + 1e-12 * (1.0 + lz.abs())
}

/// A random BM: n units, couplings U(−sw, sw) on edges present with probability `density`.
fn model() -> impl Strategy<Value = BoltzmannMachine> {
    (
        2usize..9,
        0.05f64..2.0,
        0.0f64..1.0,
        0.3f64..1.0,
        any::<u64>(),
    )
        .prop_map(|(n, sw, sh, density, seed)| {
            let mut x = seed | 1;
            let mut r = move || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 11) as f64 / (1u64 << 53) as f64
            };
            let mut w = vec![0.0; n * n];
            for i in 0..n {
                for j in 0..i {
                    if r() < density {
                        let v = (2.0 * r() - 1.0) * sw;
                        w[i * n + j] = v;
                        w[j * n + i] = v;
                    }
                }
            }
            let h = (0..n).map(|_| (2.0 * r() - 1.0) * sh).collect();
            BoltzmannMachine::new(w, h, 2.0 * r() - 1.0).unwrap()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// MF ≤ B_tm ≤ B_to ≤ log Z, and every result labelled a bound is below the exact value.
    #[test]
    fn bm_bound_ordering(bm in model(), seed in 0u64..1000) {
        let lz = exact(&bm).unwrap().log_z;
        let mf = mean_field(&bm, &MeanFieldOptions { seed, ..Default::default() }).unwrap();
        prop_assert!(mf.converged);
        let tm = third_order_from(&bm, &mf.fields, mf.log_z, &ThirdOrderOptions { optimise: false, ..Default::default() });
        let to = third_order_from(&bm, &mf.fields, mf.log_z, &ThirdOrderOptions::default());
        // B_tm ≥ B_mf holds exactly at the MF fixed point; the iteration stops at |Δm| < 1e-12.
        prop_assert!(mf.log_z <= tm.log_z + 1e-10, "mf {} tm {}", mf.log_z, tm.log_z);
        prop_assert!(tm.log_z <= to.log_z, "tm {} to {}", tm.log_z, to.log_z);
        prop_assert!(below(to.log_z, lz), "to {} lz {}", to.log_z, lz);
        for q in [mf.quality, tm.quality, to.quality] {
            prop_assert_eq!(q, Quality::LowerBound);
        }
        let t = tap(&bm, &TapOptions::default()).unwrap();
        prop_assert_eq!(t.quality, Quality::Approximation);
        prop_assert!(!t.quality.is_lower_bound());
    }

    /// The mixture bound starts at the MF bound, never decreases, and stays below log Z.
    #[test]
    fn bm_mixture_bound_properties(bm in model(), m in 1usize..4, seed in 0u64..1000) {
        let lz = exact(&bm).unwrap().log_z;
        let o = MixtureOptions { components: m, seed, restarts: 2, max_rounds: 300, ..Default::default() };
        let r = mixture(&bm, &o).unwrap();
        prop_assert_eq!(r.quality, Quality::LowerBound);
        prop_assert!(r.log_z >= r.mean_field_log_z - 1e-12);
        prop_assert!(below(r.log_z, lz), "{} > {}", r.log_z, lz);
        for w in r.trace.windows(2) {
            prop_assert!(w[1] >= w[0] - 1e-10, "decrease {} -> {}", w[0], w[1]);
        }
    }

    /// Leisink & Kappen (11) on random (x, μ, λ).
    #[test]
    fn bm_exponential_bound_holds(x in -30.0f64..30.0, mu in -10.0f64..10.0, lambda in -5.0f64..5.0) {
        let b = exp_lower_bound(x, mu, lambda);
        prop_assert!(b <= x.exp() * (1.0 + 1e-12) + 1e-300, "x {x} mu {mu} l {lambda}: {b} > {}", x.exp());
    }

    /// Gradients of the third-order bound (w.r.t. μ, h and w) match central differences.
    #[test]
    fn bm_third_order_gradients(bm in model(), mus in proptest::collection::vec(-2.0f64..2.0, 8)) {
        let n = bm.n();
        let mu = &mus[..n];
        let mut g = vec![0.0; n];
        third_order_grad_mu(&bm, mu, &mut g);
        let e = 1e-6;
        for k in 0..n {
            let (mut a, mut b) = (mu.to_vec(), mu.to_vec());
            a[k] += e;
            b[k] -= e;
            let fd = (third_order_bound(&bm, &a).bound - third_order_bound(&bm, &b).bound) / (2.0 * e);
            prop_assert!((fd - g[k]).abs() < 1e-5 * (1.0 + fd.abs()), "mu {k}: fd {fd} an {}", g[k]);
        }
        let (_, dh, dw) = third_order_grad_model(&bm, mu);
        for i in 0..n {
            let (mut a, mut b) = (bm.clone(), bm.clone());
            a.thresholds_mut()[i] += e;
            b.thresholds_mut()[i] -= e;
            let fd = (third_order_bound(&a, mu).bound - third_order_bound(&b, mu).bound) / (2.0 * e);
            prop_assert!((fd - dh[i]).abs() < 1e-5 * (1.0 + fd.abs()));
            for j in 0..i {
                let (mut a, mut b) = (bm.clone(), bm.clone());
                a.set_pair(i, j, bm.w(i, j) + e);
                b.set_pair(i, j, bm.w(i, j) - e);
                let fd = (third_order_bound(&a, mu).bound - third_order_bound(&b, mu).bound) / (2.0 * e);
                prop_assert!((fd - dw[i * n + j]).abs() < 1e-5 * (1.0 + fd.abs()));
            }
        }
    }

    /// Junction tree equals enumeration on random sparse graphs.
    #[test]
    fn bm_junction_tree_matches_enumeration(bm in model()) {
        let ex = exact(&bm).unwrap();
        let jt = junction_tree(&bm).unwrap();
        prop_assert!((jt.log_z - ex.log_z).abs() < 1e-10);
        let n = bm.n();
        for i in 0..n {
            prop_assert!((jt.means[i] - ex.means[i]).abs() < 1e-10);
        }
        for &(i, j, c) in &jt.edge_correlations {
            prop_assert!((c - ex.correlations[i * n + j]).abs() < 1e-10);
        }
    }

    /// 0/1 and ±1 forms have the same log Z after the constant.
    #[test]
    fn bm_coding_conversion_preserves_log_z(bm in model()) {
        // read bm's numbers as a 0/1 model, convert, compare
        let n = bm.n();
        let p01 = ZeroOneParams { w: bm.weights().to_vec(), b: bm.thresholds().to_vec(), offset: bm.offset() };
        let z01 = log_sum_exp_states(n, |s| {
            let x: Vec<f64> = (0..n).map(|i| (s >> i & 1) as f64).collect();
            let mut a = p01.offset;
            for i in 0..n {
                a += p01.b[i] * x[i];
                for j in 0..i {
                    a += p01.w[i * n + j] * x[i] * x[j];
                }
            }
            a
        }).unwrap();
        let pm = zero_one_to_plus_minus(&p01);
        let bpm = BoltzmannMachine::new(pm.w, pm.h, pm.offset).unwrap();
        prop_assert!((exact(&bpm).unwrap().log_z - z01).abs() < 1e-11);
    }
}
