//! Every evidence estimator on a hidden Markov chain (issue 28), against the exact evidence of
//! a small chain: the sum over all K^T state paths of the closed forms with every parameter
//! integrated out (`exact`). VB's bound lies below it, importance sampling and AIS within 3
//! standard errors, Laplace closer as the chain grows; the sampling estimates do not depend on
//! the thread count.

use occam::evidence::{estimate, Evidence, Kind, Method, Options};

use super::evidence::{fit, value};

/// Two states with Gaussian emissions under Normal–Gamma priors.
const GAUSSIAN: &str = "plate K = 2\nplates S, T from data x\np0 ~ Dirichlet(1) over K\n\
     A[K] ~ Dirichlet(1) over K\nz[S] over T ~ MarkovChain(initial = p0, transition = A)\n\
     tau[K] ~ Gamma(2, 1)\nmu[K] ~ Gaussian(0, 0.2 * tau)\nx[S, T] ~ Gaussian(mu[z], tau[z])\n\
     init mu = random\n";

/// Two states with categorical emissions over three values.
const CATEGORICAL: &str = "plate K = 2\nplate C = 3\nplates S, T from data x\n\
     p0 ~ Dirichlet(1) over K\nA[K] ~ Dirichlet(1) over K\ne[K] ~ Dirichlet(1) over C\n\
     z[S] over T ~ MarkovChain(initial = p0, transition = A)\nx[S, T] ~ Categorical(e[z])\n";

/// A series that stays in one regime, then the other: `t` steps.
fn regimes(t: usize) -> Vec<f64> {
    (0..t)
        .map(|i| {
            let wobble = 0.4 * ((i as f64) * 2.3).sin();
            if (i / 4) % 2 == 0 {
                -1.5 + wobble
            } else {
                1.8 + wobble
            }
        })
        .collect()
}

fn opts() -> Options {
    Options {
        samples: 20_000,
        chains: 256,
        temperatures: 250,
        seed: 5,
        ..Options::default()
    }
}

fn check_against_exact(text: &str, x: Vec<f64>) {
    let f = fit(text, &[("x", x.len(), x)]);
    let o = opts();
    let exact = value(&f, Method::Exact, &o);
    assert_eq!(exact.kind, Kind::Exact);
    let vb = value(&f, Method::Vb, &o);
    eprintln!(
        "exact {:.4} ({}), vb {:.4}",
        exact.log_evidence, exact.note, vb.log_evidence
    );
    assert!(vb.log_evidence <= exact.log_evidence + 1e-9);
    for m in [Method::Is, Method::Ais] {
        let e = value(&f, m, &o);
        let se = e.se.unwrap();
        eprintln!("{} {:.4} ± {se:.4}: {}", m.name(), e.log_evidence, e.note);
        assert!(se > 0.0 && !e.unreliable, "{}", e.note);
        assert!(
            (e.log_evidence - exact.log_evidence).abs() < 3.0 * se,
            "{} {} ± {se} vs exact {}",
            m.name(),
            e.log_evidence,
            exact.log_evidence
        );
    }
    for m in [Method::VbSym, Method::Laplace, Method::Bic] {
        let e = value(&f, m, &o);
        eprintln!("{} {:.4}: {}", m.name(), e.log_evidence, e.note);
        assert!(e.log_evidence.is_finite());
    }
    // The symmetrised bound adds at most ln K! (= ln 2 here) to the bound, and never lowers it.
    let sym = value(&f, Method::VbSym, &o).log_evidence - vb.log_evidence;
    assert!(
        (-1e-9..=2f64.ln() + 1e-9).contains(&sym),
        "vbsym - vb = {sym}"
    );
}

#[test]
fn gaussian_chain_against_enumeration() {
    // One sequence of 7 steps: 2^7 paths.
    let x = regimes(7);
    check_against_exact(GAUSSIAN, x);
}

#[test]
fn categorical_chain_against_enumeration() {
    // Two sequences of 6 steps: 2^12 paths.
    let x = vec![0.0, 0.0, 0.0, 2.0, 2.0, 1.0, 2.0, 2.0, 0.0, 0.0, 1.0, 0.0];
    let f = fit(CATEGORICAL, &[("x", 6, x)]);
    let o = opts();
    let exact = value(&f, Method::Exact, &o);
    assert!(exact.note.contains("2^12"), "{}", exact.note);
    let vb = value(&f, Method::Vb, &o);
    assert!(vb.log_evidence <= exact.log_evidence + 1e-9);
    for m in [Method::Is, Method::Ais] {
        let e = value(&f, m, &o);
        let se = e.se.unwrap();
        eprintln!(
            "{} {:.4} ± {se:.4} vs exact {:.4}",
            m.name(),
            e.log_evidence,
            exact.log_evidence
        );
        assert!((e.log_evidence - exact.log_evidence).abs() < 3.0 * se);
    }
}

#[test]
fn laplace_approaches_the_exact_evidence_as_the_chain_grows() {
    let mut errors = Vec::new();
    for t in [8, 16] {
        let x = regimes(t);
        let f = fit(GAUSSIAN, &[("x", t, x)]);
        let o = Options::default();
        let exact = value(&f, Method::Exact, &o).log_evidence;
        let laplace = value(&f, Method::Laplace, &o).log_evidence;
        let bic = value(&f, Method::Bic, &o).log_evidence;
        eprintln!("T = {t}: exact {exact:.4}, laplace {laplace:.4}, bic {bic:.4}");
        errors.push((laplace - exact).abs());
    }
    assert!(errors[1] < errors[0], "{errors:?}");
}

#[test]
fn chain_estimates_do_not_depend_on_the_thread_count() {
    let x = regimes(7);
    let f = fit(GAUSSIAN, &[("x", 7, x)]);
    let o = Options {
        samples: 2000,
        chains: 16,
        temperatures: 40,
        seed: 3,
        ..Options::default()
    };
    for m in [Method::Is, Method::Ais] {
        let run =
            |threads: usize| occam_core::threads::on_threads(threads, || value(&f, m, &o)).unwrap();
        let (a, b) = (run(1), run(3));
        assert_eq!(a.log_evidence.to_bits(), b.log_evidence.to_bits());
        assert_eq!(a.se.map(f64::to_bits), b.se.map(f64::to_bits));
    }
}

#[test]
fn what_does_not_apply_to_a_chain_says_why() {
    let x = regimes(7);
    let f = fit(GAUSSIAN, &[("x", 7, x)]);
    for (m, why) in [(Method::Cv, "cross-validation of a hidden Markov chain")] {
        match estimate(&f, m, &Options::default()) {
            Evidence::NotApplicable { reason, .. } => assert!(reason.contains(why), "{reason}"),
            Evidence::Estimate(e) => panic!("{} applied: {e:?}", m.name()),
        }
    }
}

/// AIS with Gibbs moves (`--ais-moves gibbs`): each chain's state paths by forward filtering,
/// backward sampling under the tempered likelihood, p0 and A and the emission parameters from
/// their conjugate conditionals (modules `ais`, `ais_chain`).
fn gibbs(seed: u64) -> Options {
    Options {
        ais_moves: occam::evidence::AisMoves::Gibbs,
        chains: 128,
        temperatures: 200,
        seed,
        ..Options::default()
    }
}

/// Gibbs AIS within 3 standard errors of the exact evidence for each of seeds 0..5, and VB's
/// bound below it.
fn gibbs_against_exact(f: &occam::Fitted) {
    let exact = value(f, Method::Exact, &Options::default());
    assert_eq!(exact.kind, Kind::Exact);
    let vb = value(f, Method::Vb, &Options::default()).log_evidence;
    assert!(
        vb < exact.log_evidence,
        "vb {vb} vs exact {}",
        exact.log_evidence
    );
    for seed in 0..5 {
        let e = value(f, Method::Ais, &gibbs(seed));
        let se = e.se.unwrap();
        eprintln!(
            "seed {seed}: ais {:.4} ± {se:.4} vs exact {:.4} (vb {vb:.4}): {}",
            e.log_evidence, exact.log_evidence, e.note
        );
        assert!(
            e.note.contains("forward filtering, backward sampling"),
            "{}",
            e.note
        );
        assert!(se > 0.0 && !e.unreliable, "{}", e.note);
        assert!(
            (e.log_evidence - exact.log_evidence).abs() < 3.0 * se,
            "seed {seed}: {} ± {se} vs exact {}",
            e.log_evidence,
            exact.log_evidence
        );
    }
}

#[test]
fn gibbs_ais_on_a_categorical_chain_against_enumeration() {
    // One sequence of 8 steps over three values: 2^8 paths.
    let x = vec![0.0, 0.0, 2.0, 2.0, 1.0, 2.0, 0.0, 0.0];
    gibbs_against_exact(&fit(CATEGORICAL, &[("x", 8, x)]));
}

#[test]
fn gibbs_ais_on_a_gaussian_chain_against_enumeration() {
    // Normal–Gamma emissions: the precision drawn given the mean and the mean given it.
    gibbs_against_exact(&fit(GAUSSIAN, &[("x", 7, regimes(7))]));
}

#[test]
fn gibbs_ais_is_the_same_bits_for_a_seed_and_any_thread_count() {
    let x = vec![0.0, 0.0, 2.0, 2.0, 1.0, 2.0, 0.0, 0.0];
    let f = fit(CATEGORICAL, &[("x", 8, x)]);
    let o = Options {
        chains: 16,
        temperatures: 40,
        ..gibbs(7)
    };
    let run = |threads: usize| {
        occam_core::threads::on_threads(threads, || value(&f, Method::Ais, &o)).unwrap()
    };
    let (a, b, c) = (run(1), run(3), run(3));
    for other in [&b, &c] {
        assert_eq!(a.log_evidence.to_bits(), other.log_evidence.to_bits());
        assert_eq!(a.se.map(f64::to_bits), other.se.map(f64::to_bits));
    }
    let d = value(&f, Method::Ais, &Options { seed: 8, ..o });
    assert_ne!(a.log_evidence.to_bits(), d.log_evidence.to_bits());
}
