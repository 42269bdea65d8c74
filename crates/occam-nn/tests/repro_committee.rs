//! Reproductions of the committee paper (shortened schedules, fixed seeds). The papers' seeds are
//! unknown, so numbers are checked as bands; the measured values and the papers' are printed by
//! `cargo run --release -p occam-nn --example reproduce` and recorded in the crate README.

use occam_nn::repro::{sine_toy, sunspots, tecator, Options};

#[test]
fn sunspots_committee_beats_a_single_gaussian_and_the_bound_ranks_test_error() {
    let t = sunspots(&Options::default()).unwrap();
    eprintln!("{}", t.to_text());
    let lin = t.get("linear AR(12), test NMSE (calibration)").unwrap();
    // The calibration anchor: least-squares AR(12) on the same split, test-set-variance NMSE 0.141.
    assert!((lin - 0.1413).abs() < 5e-4, "{lin}");
    let m1 = t.get("VB diagonal (M = 1), test NMSE").unwrap();
    let m3 = t.get("VB committee (M = 3), test NMSE").unwrap();
    // Paper: 0.14 (M = 1) and 0.11 (M = 3); thesis Table 5.1: 0.178 and 0.172; early stopping
    // 0.22-0.262. Band: better than early stopping, no better than the paper's HMC 0.09.
    assert!((0.09..0.22).contains(&m1), "M = 1 NMSE {m1}");
    assert!((0.09..0.22).contains(&m3), "M = 3 NMSE {m3}");
    assert!(
        m3 < m1,
        "committee {m3} should beat the single Gaussian {m1}"
    );
    let mi = t
        .get("VB committee (M = 3), mutual-information term")
        .unwrap();
    assert!((0.0..=3f64.ln() + 1e-12).contains(&mi), "I = {mi}");
    // Fig. 2: a higher bound goes with a lower test error.
    let rho = t
        .get("Spearman rho(bound, test NMSE) over all restarts")
        .unwrap();
    assert!(rho < 0.0, "rank correlation {rho}");
}

#[test]
fn tecator_vb_beats_linear_pcr_and_the_committee_beats_one_gaussian() {
    let t = tecator(&Options::default()).unwrap();
    eprintln!("{}", t.to_text());
    let lin = t.get("linear regression on 10 PCs, test RMSE").unwrap();
    assert!((lin - 2.7785).abs() < 5e-4, "{lin}");
    let m1 = t.get("VB diagonal (M = 1), test RMSE").unwrap();
    let m3 = t.get("VB committee (M = 3), test RMSE").unwrap();
    // Paper: 0.56 and 0.54 (Thodberg's quadratic regression 0.80, early stopping 0.65).
    assert!(m1 < 1.0 && m3 < 0.8, "RMSE M=1 {m1}, M=3 {m3}");
    assert!(m3 < m1);
}

#[test]
fn sine_toy_mixture_information_approaches_its_cap() {
    let t = sine_toy(&Options::default()).unwrap();
    eprintln!("{}", t.to_text());
    let mi = t.get("mutual-information bound I").unwrap();
    let cap = t.get("-sum Q ln Q (cap)").unwrap();
    // Thesis: 1.5229 below the cap 1.5614 (gap 2.5%); ln 5 = 1.6094.
    assert!(
        mi > 0.0 && mi <= cap + 1e-12 && cap <= 5f64.ln() + 1e-12,
        "I {mi}, cap {cap}"
    );
    assert!(t.get("bound, mixture").unwrap() > t.get("bound, diagonal").unwrap());
}
