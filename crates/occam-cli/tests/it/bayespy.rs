//! BayesPy's documented examples as model files, through `occam fit --json`: the bound trace must
//! equal BayesPy's (the core's fixture) to 1e-8 relative; the mixtures must reach at least
//! BayesPy's final bound with restarts.

use crate::common;
use common::*;

fn assert_trace(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-8 * w.abs(),
            "iteration {}: {g} vs BayesPy {w}",
            i + 1
        );
    }
}

#[test]
fn quickstart_trace_matches_bayespy() {
    let f = &bayespy()["quickstart"];
    let out = succeeded(
        occam()
            .args([
                "fit",
                "examples/bayespy/quickstart/quickstart.occam",
                "--json",
            ])
            .args(["--order", "mu,tau", "--tol", "1e-5"]),
    );
    let j = json(&out);
    assert_trace(&floats(&j["bound_trace"]), &floats(&f["L_trace"]));
    assert_eq!(j["iterations"], f["iterations"]);
    assert_eq!(j["converged"], true);
    let mu = &j["variables"]["mu"];
    assert_eq!(mu["distribution"], "Gaussian");
    let m = floats(&mu["moments"]);
    let e_mu = f["post"]["E_mu"].as_f64().unwrap();
    assert!((m[0] - e_mu).abs() < 1e-8 * e_mu.abs());
    let tau = floats(&j["variables"]["tau"]["parameters"]["mean"]);
    let e_tau = f["post"]["E_tau"].as_f64().unwrap();
    assert!((tau[0] - e_tau).abs() < 1e-8 * e_tau);
}

#[test]
fn regression_factorised_trace_matches_bayespy() {
    let f = &bayespy()["regression"];
    let want = floats(&f["L_trace_factorized"]);
    let out = succeeded(
        occam()
            .args([
                "fit",
                "examples/bayespy/regression/regression.occam",
                "--json",
            ])
            .args(["--order", "B,tau", "--tol", "0", "--max-iter"])
            .arg(want.len().to_string()),
    );
    let j = json(&out);
    assert_trace(&floats(&j["bound_trace"]), &want);
    let b = floats(&j["variables"]["B"]["parameters"]["mean"]);
    let eb = floats(&f["E_B"]);
    assert!(
        (b[0] - eb[0]).abs() < 1e-6 && (b[1] - eb[1]).abs() < 1e-6,
        "{b:?}"
    );
}

#[test]
fn default_order_is_parents_first_and_matches_too() {
    // Without --order the lowering adds mu before tau: the same schedule.
    let f = &bayespy()["quickstart"];
    let out = occam()
        .args([
            "fit",
            "examples/bayespy/quickstart/quickstart.occam",
            "--json",
            "--tol",
            "1e-5",
        ])
        .output()
        .unwrap();
    assert_trace(&floats(&json(&out)["bound_trace"]), &floats(&f["L_trace"]));
}

fn mixture_reaches(example: &str, fixture: &str) {
    let f = &bayespy()[fixture];
    let out = succeeded(
        occam()
            .args([
                "fit",
                &format!("examples/bayespy/{example}/{example}.occam"),
            ])
            .args(["--json", "--restarts", "3", "--strict"]),
    );
    let j = json(&out);
    let bound = j["bound"].as_f64().unwrap();
    let l_final = f["L_final"].as_f64().unwrap();
    assert!(bound >= l_final, "{example}: {bound} < BayesPy's {l_final}");
    assert_eq!(floats(&j["restart_bounds"]).len(), 3);
    let best = floats(&j["restart_bounds"])
        .into_iter()
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(
        (best - bound).abs() <= 1e-9 * bound.abs(),
        "kept the best restart"
    );
}

#[test]
fn gmm_reaches_bayespy_final_bound() {
    mixture_reaches("gmm", "gmm");
}

#[test]
fn bmm_reaches_bayespy_final_bound() {
    mixture_reaches("bmm", "bmm");
}

/// `hmm_known` written as a chain (`examples/bayespy/hmm_known`): every parameter is data, so one
/// forward–backward pass gives the exact log-likelihood (the forward algorithm's −109.5882880298,
/// BayesPy's bound after one update) and the exact marginals; the report carries them per step
/// with the Viterbi path.
#[test]
fn hmm_known_chain_from_model_text_is_exact() {
    let f = &bayespy()["hmm_known"];
    let out = succeeded(occam().args([
        "fit",
        "examples/bayespy/hmm_known/hmm_known.occam",
        "--json",
    ]));
    let j = json(&out);
    let bound = j["bound"].as_f64().unwrap();
    let want = f["L_after_1_update"].as_f64().unwrap();
    assert!(
        (bound - want).abs() <= 1e-9 * want.abs(),
        "{bound} vs BayesPy / forward algorithm {want}"
    );
    assert!((bound - -109.5882880298).abs() < 1e-9);
    let chain = &j["chains"]["z"];
    assert_eq!(chain["family"], "MarkovChain");
    assert_eq!(floats(&chain["lengths"]), vec![100.0]);
    let marg = floats(&chain["marginals"]);
    assert_eq!(marg.len(), 200);
    for (g, w) in marg.iter().zip(floats(&f["posterior_marginals_first5"])) {
        assert!((g - w).abs() < 1e-9, "{g} vs {w}");
    }
    let path = floats(&chain["viterbi"]);
    assert_eq!(path.len(), 100);
    assert!(path.iter().all(|&s| s == 0.0 || s == 1.0));
}

/// `hmm_unknown` written as a chain: BayesPy's bound trace (order Z, A, a0) to 1e-8 relative for
/// its 8 sweeps.
#[test]
fn hmm_unknown_chain_trace_matches_bayespy() {
    let f = &bayespy()["hmm_unknown"];
    let out = succeeded(
        occam()
            .args([
                "fit",
                "examples/bayespy/hmm_unknown/hmm_unknown.occam",
                "--json",
            ])
            .args(["--order", "Z,A,a0", "--tol", "0", "--max-iter", "8"]),
    );
    let j = json(&out);
    assert_trace(&floats(&j["bound_trace"]), &floats(&f["L_trace"]));
}
