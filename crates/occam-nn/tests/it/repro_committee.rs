//! Reproductions of the committee paper (shortened schedules, fixed seeds). The runs are seeded
//! and deterministic, so the measured values are asserted to 1e-6 (relative), with the paper's
//! values in the comments; the paper's claims that reproduce are asserted as claims. The full
//! schedules' tables are printed by `cargo run --release -p occam-nn --example reproduce` and
//! recorded in the crate README and `docs/guide/10-reproductions.md`.

use occam_nn::bnn::vb::{
    best_by_bound, degenerate_mixture, fit_committee, fit_vb_restarts, VbOptions,
};
use occam_nn::repro::{sine_data, sine_toy, sunspots, tecator, Options, Table};

/// Asserts every `(label, value)` to `rel` relative tolerance, listing all mismatches at once.
fn assert_measured(t: &Table, want: &[(&str, f64)], rel: f64) {
    let mut bad = Vec::new();
    for (label, w) in want {
        match t.get(label) {
            Some(g) if ((g - w) / w).abs() <= rel => {}
            Some(g) => bad.push(format!("{label}: measured {g:?}, recorded {w:?}")),
            None => bad.push(format!("{label}: missing")),
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn print_rows(t: &Table) {
    for r in &t.rows {
        eprintln!("    (\"{}\", {:?}),", r.label, r.measured);
    }
}

#[test]
fn sunspots_reproduces_the_papers_claims_on_1921_1955() {
    let t = sunspots(&Options::default()).unwrap();
    eprintln!("{}", t.to_text());
    print_rows(&t);
    let get = |l: &str| t.get(l).unwrap();
    // The calibration anchor: least-squares AR(12) on the same split; an independent NumPy fit
    // gives 0.1413 over the test-set variance and 0.2265 over the 1700-1979 variance.
    assert!((get("linear AR(12), test NMSE (calibration)") - 0.1413).abs() < 5e-5);
    assert!((get("linear AR(12), test MSE / variance of 1700-1979") - 0.2265).abs() < 5e-5);
    // Measured (quick schedule, seed 1; every row in SUNSPOTS) against the paper's Table 1,
    // whose text says 1921-1979; the reproduction scores 1921-1955:
    //   method                    1921-1955   1921-1979 (stated)   paper
    //   VB diagonal, M = 1        0.0969      0.1371               0.14
    //   VB committee, M = 3       0.0937      0.1542               0.11
    //   evidence                  0.1565      0.1820               0.18
    //   evidence committee (3)    0.1349      0.1662               0.14
    //   hybrid Monte Carlo        0.0965      0.1852               0.09
    //   early stopping            0.1258      0.2227               0.22 (Weigend et al.)
    //   linear AR(12)             0.1158      0.1413               -
    //   Spearman rho(bound, NMSE) over the 7 fits: -0.393 on both periods (paper: "strong
    //   correlation" of bound and generalisation, Fig. 2). Bounds: M = 1 -413.97, M = 3 -346.75.
    assert_measured(&t, &SUNSPOTS, 1e-6);
    let m1 = get("VB diagonal (M = 1), test NMSE 1921-1955");
    let m3 = get("VB committee (M = 3), test NMSE 1921-1955");
    // The paper's claims, on the reproduction's years: the committee beats the single Gaussian,
    // and the bound ranks the fits by their test error (negative rank correlation, Fig. 2). Over
    // 1921-1979 the committee is the worse of the two (0.1542 vs 0.1371): the first claim holds
    // only on the reproduction's reading.
    assert!(m3 < m1, "M = 3 {m3}, M = 1 {m1}");
    assert!(get("Spearman rho(bound, test NMSE 1921-1955) over all fits") < 0.0);
    assert!(
        get("VB committee (M = 3), test NMSE 1921-1979 (stated protocol)")
            > get("VB diagonal (M = 1), test NMSE 1921-1979 (stated protocol)")
    );
    // A mixture contains the single Gaussian and grows from the best one: its bound is not lower.
    assert!(get("VB committee (M = 3), bound") >= get("VB diagonal (M = 1), bound"));
    let mi = get("VB committee (M = 3), mutual-information term");
    assert!((0.0..=3f64.ln()).contains(&mi), "I = {mi}");
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
    let back: Table =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sunspots.json")).unwrap()).unwrap();
    assert_eq!(back.rows.len(), t.rows.len());
    for (a, b) in back.rows.iter().zip(&t.rows) {
        assert_eq!(a.label, b.label);
        assert!((a.measured - b.measured).abs() <= 1e-14 * (1.0 + b.measured.abs()));
    }
    assert_eq!(back.figures.len(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Every row of the quick sunspot table (seed 1), as measured.
const SUNSPOTS: [(&str, f64); 26] = [
    (
        "linear AR(12), test NMSE (calibration)",
        0.14125277293435592,
    ),
    (
        "linear AR(12), test MSE / variance of 1700-1979",
        0.22647843468674342,
    ),
    ("linear AR(12), test NMSE 1921-1955", 0.11577002710542234),
    (
        "VB diagonal (M = 1), test NMSE 1921-1955",
        0.09687159904154057,
    ),
    (
        "VB diagonal (M = 1), test NMSE 1921-1979 (stated protocol)",
        0.13713612814156106,
    ),
    (
        "VB diagonal (M = 1), test NMSE 1956-1979",
        0.18771856868615946,
    ),
    ("VB diagonal (M = 1), bound", -413.9746379334443),
    (
        "VB diagonal (M = 1), bound gain in the schedule's last cycle",
        29.005575014835188,
    ),
    (
        "VB committee (M = 3), test NMSE 1921-1955",
        0.09368391263524609,
    ),
    (
        "VB committee (M = 3), test NMSE 1921-1979 (stated protocol)",
        0.15424104229743826,
    ),
    (
        "VB committee (M = 3), test NMSE 1956-1979",
        0.22336538607699427,
    ),
    ("VB committee (M = 3), bound", -346.7526077425693),
    (
        "VB committee (M = 3), bound gain in the schedule's last cycle",
        22.225723410179683,
    ),
    (
        "VB committee (M = 3), mutual-information term",
        1.0502532606769275,
    ),
    (
        "VB committee (M = 3), chosen fit grown from the best single Gaussian (1 yes, 0 no)",
        1.0,
    ),
    (
        "Spearman rho(bound, test NMSE 1921-1955) over all fits",
        -0.39285714285714285,
    ),
    (
        "Spearman rho(bound, test NMSE 1921-1979) over all fits (stated protocol)",
        -0.39285714285714285,
    ),
    (
        "evidence (best by evidence), 1921-1955",
        0.15654202222970154,
    ),
    (
        "evidence (best by evidence), 1921-1979 (stated protocol)",
        0.18197761858558908,
    ),
    (
        "evidence committee (3 best), 1921-1955",
        0.13487924848036406,
    ),
    (
        "evidence committee (3 best), 1921-1979 (stated protocol)",
        0.16615673371596992,
    ),
    ("hybrid Monte Carlo, 1921-1955", 0.09646808759357511),
    (
        "hybrid Monte Carlo, 1921-1979 (stated protocol)",
        0.1851860768848483,
    ),
    ("hybrid Monte Carlo acceptance rate", 0.225),
    (
        "early stopping (best of networks by validation), 1921-1955",
        0.1257592013905886,
    ),
    (
        "early stopping (best of networks by validation), 1921-1979 (stated protocol)",
        0.22271897831205145,
    ),
];

#[test]
fn tecator_reproduces_the_linear_anchor_and_the_committee_bound() {
    let t = tecator(&Options::default()).unwrap();
    eprintln!("{}", t.to_text());
    print_rows(&t);
    let get = |l: &str| t.get(l).unwrap();
    // Thodberg's linear regression on 10 PCs: 2.78 in the paper; an independent fit gives 2.7785.
    assert!((get("linear regression on 10 PCs, test RMSE") - 2.7785).abs() < 5e-5);
    // Measured (quick schedule, seed 1; every row in TECATOR) | paper, Table 2 (test RMSE, % fat):
    //   VB diagonal M = 1 0.5660 | 0.56;  VB committee M = 3 0.5923 | 0.54;  evidence 0.5021 |
    //   0.60;  evidence committee (3) 0.5296 | 0.57;  HMC 0.5230 | 0.59;  early stopping
    //   0.6103 | 0.65. Bounds: M = 1 130.864, M = 3 132.754 (mutual information 1.050).
    assert_measured(&t, &TECATOR, 1e-6);
    // The committee's bound is not below the single Gaussian's: it grows from the best one.
    assert!(get("VB committee (M = 3), bound") >= get("VB diagonal (M = 1), bound"));
    // The paper's ordering (committee 0.54 below diagonal 0.56) does not reproduce on this
    // schedule: the committee chosen by the bound (the one grown from the single fit; its
    // components have separated, I = 1.05 of ln 3 = 1.10) predicts worse.
    // Under the paper's full schedule the two are 0.6671 and 0.6675 (README).
    let (m1, m3) = (
        get("VB diagonal (M = 1), test RMSE"),
        get("VB committee (M = 3), test RMSE"),
    );
    assert!(m3 > m1, "M = 3 {m3}, M = 1 {m1}");
}

/// Every row of the quick Tecator table (seed 1), as measured.
const TECATOR: [(&str, f64); 12] = [
    ("linear regression on 10 PCs, test RMSE", 2.7785318079335903),
    ("VB diagonal (M = 1), test RMSE", 0.5659880740639964),
    ("VB diagonal (M = 1), bound", 130.86409486945095),
    ("VB committee (M = 3), test RMSE", 0.5922651730583864),
    ("VB committee (M = 3), bound", 132.7542576405845),
    (
        "VB committee (M = 3), mutual-information term",
        1.0499521028409837,
    ),
    (
        "VB committee (M = 3), chosen fit grown from the best single Gaussian (1 yes, 0 no)",
        1.0,
    ),
    ("evidence (best by evidence)", 0.5020872557964536),
    ("evidence committee (3 best)", 0.5296435837797564),
    ("hybrid Monte Carlo", 0.5229594073356639),
    ("hybrid Monte Carlo acceptance rate", 0.95),
    (
        "early stopping (best of networks by validation)",
        0.6103163348587166,
    ),
];

#[test]
fn a_committee_grown_from_the_best_single_fit_never_ends_below_it() {
    // The degenerate mixture (every component at the single Gaussian) is the same q(w): the
    // same bound and predictions up to rounding, and 𝓘 = 0 up to rounding.
    // Measured: with 1 % jitter the grown mixture ends above its start in all three schedules
    // (-73.315 vs -73.322 after one cycle of 0 iterations; -57.424 vs -58.014; -35.169 vs
    // -38.803); with the means jittered by 5 |w̄| and no iterations it ends below (the start is
    // kept instead).
    let data = sine_data(3);
    for (cycles, iters, jitter, grown_kept) in [
        (1usize, 0usize, 0.01, true),
        (1, 2, 0.01, true),
        (2, 40, 0.01, true),
        (1, 0, 5.0, false),
    ] {
        let o = |m: usize| VbOptions {
            cycles,
            iters_per_cycle: iters,
            pretrain_iters: 5,
            seed: 4,
            ..VbOptions::committee_paper(3, m)
        };
        let singles = fit_vb_restarts(&data, &o(1), 2).unwrap();
        let best = &singles[best_by_bound(&singles)];
        let start = degenerate_mixture(&data, best, 3).unwrap();
        let b1 = best.bound.total;
        eprintln!(
            "cycles {cycles}, iters {iters}, jitter {jitter}: single {b1:?}, degenerate {:?} (I {:?})",
            start.bound.total, start.bound.mutual_information
        );
        // Measured: equal to the last bit here; I = 4.4e-16.
        assert!((start.bound.total - b1).abs() <= 1e-12 * b1.abs());
        assert!(start.bound.mutual_information.abs() <= 1e-15);
        let (p1, p3) = (
            best.predict_mean(&data.x).unwrap(),
            start.predict_mean(&data.x).unwrap(),
        );
        for (a, b) in p1.iter().zip(&p3) {
            assert!((a - b).abs() <= 1e-12);
        }
        let c = fit_committee(&data, &o(3), 2, &singles, jitter).unwrap();
        assert_eq!(c.len(), 3);
        let grown = c.last().unwrap();
        eprintln!(
            "  committee candidates {:?}",
            c.iter().map(|f| f.bound.total).collect::<Vec<_>>()
        );
        assert!(grown.bound.total >= start.bound.total);
        assert_eq!(grown.theta == start.theta, !grown_kept);
        assert!(c[best_by_bound(&c)].bound.total >= b1 - 1e-12 * b1.abs());
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
