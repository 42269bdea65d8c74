//! Reproductions of the committee paper (shortened schedules, fixed seeds). The papers' seeds are
//! unknown, so numbers are checked as bands; the measured values and the papers' are printed by
//! `cargo run --release -p occam-nn --example reproduce` and recorded in the crate README.

use occam_nn::repro::{sine_toy, sunspots, tecator, Options};

#[test]
fn sunspots_methods_land_in_the_published_range() {
    let t = sunspots(&Options::default()).unwrap();
    eprintln!("{}", t.to_text());
    let lin = t.get("linear AR(12), test NMSE (calibration)").unwrap();
    // The calibration anchor: least-squares AR(12) on the same split, test-set-variance NMSE 0.141.
    assert!((lin - 0.1413).abs() < 5e-4, "{lin}");
    // The same predictions over the variance of the whole 1700-1979 series (Weigend's average
    // relative variance): 338.72 / 1495.6 = 0.2265.
    let whole = t
        .get("linear AR(12), test MSE / variance of 1700-1979")
        .unwrap();
    assert!((whole - 0.2265).abs() < 5e-4, "{whole}");
    // Published test NMSEs for this protocol run from 0.09 (the paper's HMC) to 0.262 (the thesis's
    // early stopping); the paper's VB rows are 0.14 (M = 1) and 0.11 (M = 3), the thesis's 0.178 and
    // 0.172. Our shortened schedule must land inside the published range for every method; the
    // paper's ordering (M = 3 < M = 1, negative bound/error rank correlation) is reported by the
    // example, not asserted: it does not hold for every seed and schedule here (see the README).
    for label in [
        "VB diagonal (M = 1), test NMSE",
        "VB committee (M = 3), test NMSE",
        "evidence (best by evidence)",
        "evidence committee (3 best)",
        "hybrid Monte Carlo",
    ] {
        let v = t.get(label).unwrap();
        assert!((0.09..=0.262).contains(&v), "{label}: {v}");
    }
    let mi = t
        .get("VB committee (M = 3), mutual-information term")
        .unwrap();
    assert!((0.0..=3f64.ln() + 1e-12).contains(&mi), "I = {mi}");
    let rho = t
        .get("Spearman rho(bound, test NMSE) over all restarts")
        .unwrap();
    assert!((-1.0..=1.0).contains(&rho));
    // Table and figures are written as CSV, JSON and SVG.
    let dir = std::env::temp_dir().join(format!("occam-nn-sunspots-{}", std::process::id()));
    t.write(&dir).unwrap();
    for f in [
        "sunspots.csv",
        "sunspots.json",
        "sunspots_fig2.svg",
        "sunspots_fig3.csv",
    ] {
        assert!(dir.join(f).is_file(), "{f} missing");
    }
    let back: occam_nn::repro::Table =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sunspots.json")).unwrap()).unwrap();
    assert_eq!(back.rows.len(), t.rows.len());
    for (a, b) in back.rows.iter().zip(&t.rows) {
        assert_eq!(a.label, b.label);
        assert!((a.measured - b.measured).abs() <= 1e-14 * (1.0 + b.measured.abs()));
    }
    assert_eq!(back.figures.len(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tecator_reproduces_the_papers_rmse_bands() {
    let t = tecator(&Options::default()).unwrap();
    eprintln!("{}", t.to_text());
    let lin = t.get("linear regression on 10 PCs, test RMSE").unwrap();
    assert!((lin - 2.7785).abs() < 5e-4, "{lin}");
    let m1 = t.get("VB diagonal (M = 1), test RMSE").unwrap();
    let m3 = t.get("VB committee (M = 3), test RMSE").unwrap();
    // Paper: 0.56 and 0.54 (Thodberg's quadratic regression 0.80, early stopping 0.65): bands of
    // ±25% around the paper's values.
    assert!((0.42..=0.70).contains(&m1), "RMSE M = 1 {m1}");
    assert!((0.40..=0.675).contains(&m3), "RMSE M = 3 {m3}");
    // The paper's ordering (M = 3 below M = 1) holds at the full schedule (0.537 vs 0.668) but not
    // for every seed of this shortened one, so it is reported (README), not asserted.
    for (label, paper) in [
        ("evidence (best by evidence)", 0.60),
        ("hybrid Monte Carlo", 0.59),
        ("early stopping (best of networks by validation)", 0.65),
    ] {
        let v = t.get(label).unwrap();
        assert!(
            (0.75 * paper..=1.25 * paper).contains(&v),
            "{label}: {v} (paper {paper})"
        );
    }
}

#[test]
fn sine_toy_mixture_information_approaches_its_cap() {
    let t = sine_toy(&Options::default()).unwrap();
    eprintln!("{}", t.to_text());
    let mi = t.get("mutual-information bound I").unwrap();
    let cap = t.get("-sum Q ln Q (cap)").unwrap();
    // Thesis: 1.5229 below the cap 1.5614 (gap 2.5%); ln 5 = 1.6094. Its seed is unknown, so a 5%
    // band on each (measured: 1.5694 below 1.5966 here; 1.46-1.57 over seeds 1-8 in the full
    // schedule). The committee paper's joint optimisation gives 1.22-1.49: the band tells them apart.
    assert!(
        mi > 0.0 && mi <= cap + 1e-12 && cap <= 5f64.ln() + 1e-12,
        "I {mi}, cap {cap}"
    );
    assert!((mi / 1.5229 - 1.0).abs() <= 0.05, "I {mi} (thesis 1.5229)");
    assert!(
        (cap / 1.5614 - 1.0).abs() <= 0.05,
        "cap {cap} (thesis 1.5614)"
    );
    assert!(cap - mi <= 0.1 * cap, "gap {} of the cap", 1.0 - mi / cap);
    assert!(t.get("bound, mixture").unwrap() > t.get("bound, diagonal").unwrap());
}
