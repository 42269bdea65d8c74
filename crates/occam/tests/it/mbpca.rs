//! Mixtures of Bayesian PCA (Winn §3.3): the hand-derived variational updates against the generic
//! engine's Bayesian PCA, and the bound-driven model-order search on Winn's noisy sinusoid and
//! noisy sphere.

use occam::latent::mbpca::search::{search, SearchOptions};
use occam::latent::mbpca::{initialise, Priors};
use occam::latent::mppca::{self, EmOptions, Mppca};
use occam::latent::synth;
use occam::Settings;
use occam_report::latent::figures::confusion_matrix;
use occam_studies::digits::{self, Digits};
use occam_studies::ppca::Ppca;
use occam_studies::{bpca, vqpca};

#[test]
fn one_component_matches_the_engines_bayesian_pca() {
    // With K = 1 the mixture is Bayesian PCA with the same priors and the same factorisation
    // (q(x_n) q(W) q(mu) q(alpha) q(tau); q(pi) and q(s) are point masses), so the converged
    // bounds of two independent implementations must agree.
    let t = synth::winn_ex31(100, 7);
    let engine = bpca::fit(
        &t,
        &Settings {
            tol: 1e-11,
            max_iter: 5_000,
            // Random starts of the engine can end in optima with fewer columns; the best of
            // three reaches the optimum of the PCA-initialised mixture.
            restarts: 3,
            // Rotations (`latent::rotation`) only add steps that raise the bound; where the run
            // stops, sweeps no longer raise it either, so it is a fixed point of the same VMP
            // updates the mixture's are compared with. Without them each restart crawled along
            // the rotation direction towards the 5,000-sweep limit (≈ 134 s CPU in debug).
            rotate: Some(true),
            ..Settings::default()
        },
    )
    .unwrap();
    assert!(engine.fitted.outcome().converged);
    let mut m = initialise(&t, 1, 9, Priors::default(), 0).unwrap();
    let trace = m.run(&t, 5_000, 1e-11).unwrap();
    let ours = *trace.last().unwrap();
    let theirs = engine.fitted.bound();
    assert!(
        (ours - theirs).abs() < 1e-6 * theirs.abs(),
        "mixture K = 1: {ours}, engine BPCA: {theirs}"
    );
    assert_eq!(
        occam::latent::effective_dimension(&m.relevance()),
        engine.ard.effective_dimension
    );
}

/// The search's settings for the tests: each convergence stops at a relative bound change of
/// 1e-6 (the default 1e-7 only polishes digits that no kept/rejected decision here depends on).
fn fast(q: usize) -> SearchOptions {
    let mut o = SearchOptions::new(q);
    o.tol = 1e-6;
    o
}

#[test]
fn noisy_sinusoid_search_finds_one_dimensional_pieces() {
    // Winn Fig. 3.5: the search ends with about 8 components of effective dimension 1. Our data:
    // N = 300, x uniform on [0, 2π], t = (x, sin x) + N(0, 0.05²).
    let t = synth::sinusoid(300, 0.05, 1);
    let s = search(&t, &fast(1)).unwrap();
    let k = s.model.k;
    eprintln!("sinusoid: K = {k}, L = {}, steps {:?}", s.bound, s.steps);
    // The kept moves raise the bound.
    let kept: Vec<f64> = s.steps.iter().filter(|x| x.kept).map(|x| x.bound).collect();
    assert!(kept.windows(2).all(|w| w[1] > w[0]), "{kept:?}");
    assert!((5..=12).contains(&k), "K = {k} (thesis: about 8)");
    assert_eq!(s.effective_dimension(), 1);
    assert!(s.component_dimensions().iter().all(|&d| d == 1));
    assert_eq!(s.effective_components(1.0), k);
}

#[test]
fn noisy_sphere_search_finds_two_dimensional_pieces() {
    // Winn §3.4.2: about 12 components of effective dimension 2. Our data: N = 600 points uniform
    // on the unit sphere plus N(0, 0.05² I).
    let t = synth::sphere(600, 0.05, 3);
    let s = search(&t, &fast(2)).unwrap();
    let k = s.model.k;
    eprintln!("sphere: K = {k}, L = {}, steps {:?}", s.bound, s.steps);
    assert!((8..=16).contains(&k), "K = {k} (thesis: about 12)");
    assert!(s.component_dimensions().iter().all(|&d| d == 2));
    assert_eq!(s.effective_dimension(), 2);
}

#[test]
fn mixture_of_ppca_em_with_one_component_reaches_the_closed_form() {
    // K = 1: EM from a poor start (W shrunk, noise doubled, mean moved) must climb to the
    // closed-form maximum of PPCA (Winn (3.3)–(3.4)), never going down.
    let t = synth::winn_ex31(300, 11);
    let closed = Ppca::fit(&t, 3).unwrap();
    let best = closed.log_likelihood(&t).unwrap();
    let mut m = Mppca::initialise(&t, 1, 3, 0).unwrap();
    m.w.iter_mut().for_each(|v| *v *= 0.3);
    m.noise_var[0] *= 2.0;
    m.mean.iter_mut().for_each(|v| *v += 0.2);
    let mut trace = Vec::new();
    for _ in 0..300 {
        trace.push(m.em_step(&t, 0.0).unwrap());
    }
    let last: f64 = m.log_density(&t).unwrap().iter().sum();
    trace.push(last);
    assert!(
        trace.windows(2).all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()),
        "{trace:?}"
    );
    assert!(
        trace[0] < best - 10.0,
        "the start is already optimal: {}",
        trace[0]
    );
    assert!(
        (last - best).abs() < 1e-6 * best.abs(),
        "EM {last}, closed form {best}"
    );
    assert!((m.noise_var[0] - closed.noise_var).abs() < 1e-4 * closed.noise_var);
}

#[test]
fn mixture_of_ppca_em_climbs_and_beats_one_component() {
    let t = synth::sinusoid(300, 0.05, 1);
    let f = mppca::fit(&t, &EmOptions::new(6, 1)).unwrap();
    let tr = &f.trace;
    assert!(
        tr.windows(2).all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()),
        "{tr:?}"
    );
    let one = Ppca::fit(&t, 1).unwrap().log_likelihood(&t).unwrap();
    let six = *tr.last().unwrap();
    assert!(six > one + 100.0, "K = 6: {six}, K = 1: {one}");
    assert!((f.model.pi.iter().sum::<f64>() - 1.0).abs() < 1e-12);
}

#[test]
fn vqpca_reconstruction_error_never_rises() {
    // Winn Algorithm 3.1 on the sinusoid: the total reconstruction error falls at every
    // reassignment, and six local lines reconstruct far better than one global line.
    let t = synth::sinusoid(300, 0.05, 1);
    let v = vqpca::fit(&t, 6, 1, 100, 0).unwrap();
    assert!(v.trace.len() >= 2, "{:?}", v.trace);
    assert!(
        v.trace.windows(2).all(|w| w[1] <= w[0] * (1.0 + 1e-12)),
        "{:?}",
        v.trace
    );
    let global = Ppca::fit(&t, 1).unwrap().noise_var * t.rows as f64; // one discarded axis
    let local = *v.trace.last().unwrap();
    assert!(local < global / 5.0, "VQPCA {local}, PCA {global}");
}

fn digits_file() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/digits/digits.npz")
}

#[test]
fn digits_subset_is_classified_by_predictive_density() {
    // Winn §3.4.4's study on a fixed subset of scikit-learn's 8×8 digits (the first 40 training
    // and 20 test images of each digit): one mixture of Bayesian PCA per digit (q = 10, at most
    // two components), each test image given to the largest predictive density; and ML mixtures
    // of PPCA on the same subset. Measured (deterministic): 2 of the 200 test images wrong with
    // either model (1.0 %), every digit's model one component, ARD keeping 5, 2, 2, 3, 3, 3, 3,
    // 2, 6, 4 of the 10 columns; the full study (`cargo run --release -p occam --example
    // digits`, 602 test images) gets 0.66 %.
    let data = Digits::read(&digits_file()).unwrap();
    assert_eq!(
        (data.train.rows, data.test.rows, data.train.cols),
        (1195, 602, 64)
    );
    assert!(data.train.values.iter().all(|v| (0.0..=1.0).contains(v)));
    let d = data.subset(40, 20);
    assert_eq!((d.train.rows, d.test.rows), (400, 200));
    let mut o = SearchOptions::new(10);
    o.max_k = 2;
    o.tol = 1e-6;
    o.max_iter = 200;
    let bayes = digits::mixture_of_bpca(&d, &o).unwrap();
    let ml = digits::mixture_of_ppca(&d, &EmOptions::new(1, 10)).unwrap();
    eprintln!(
        "digits subset: mixture of BPCA {:.1} % (K {:?}, dims {:?}), ML PPCA {:.1} %",
        100.0 * bayes.error,
        bayes.components,
        bayes.dimensions,
        100.0 * ml.error
    );
    assert_eq!(bayes.components, [1; 10]);
    assert_eq!(bayes.dimensions, [5, 2, 2, 3, 3, 3, 3, 2, 6, 4]);
    for out in [&bayes, &ml] {
        assert_eq!(
            out.error,
            2.0 / 200.0,
            "{}: test error {}",
            out.method,
            out.error
        );
        let total: usize = out.confusion.iter().flatten().sum();
        let right: usize = (0..10).map(|c| out.confusion[c][c]).sum();
        assert_eq!(total, 200);
        assert!((1.0 - right as f64 / 200.0 - out.error).abs() < 1e-12);
    }
    // ARD keeps fewer than the 10 columns allowed in some digit's model.
    assert!(bayes.dimensions.iter().all(|&q| (1..=10).contains(&q)));
    let svg = confusion_matrix("digits", &bayes.confusion).unwrap();
    assert!(
        svg.contains("</svg>") && svg.contains("misclassified"),
        "{svg}"
    );
    // A label outside 0..9 is a located error, not a panic.
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.npz");
    let npy = |name: &str, shape: &str, bytes: &[u8]| {
        let header = format!("{{'descr': '|u1', 'fortran_order': False, 'shape': {shape}, }}");
        let mut h = header.into_bytes();
        while (h.len() + 11) % 64 != 0 {
            h.push(b' ');
        }
        h.push(b'\n');
        let mut v = b"\x93NUMPY\x01\x00".to_vec();
        v.extend_from_slice(&(h.len() as u16).to_le_bytes());
        v.extend_from_slice(&h);
        v.extend_from_slice(bytes);
        (format!("{name}.npy"), v)
    };
    let file = std::fs::File::create(&bad).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    for (name, bytes) in [
        npy("x_train", "(2, 2)", &[0, 1, 2, 3]),
        npy("y_train", "(2,)", &[1, 12]),
        npy("x_test", "(1, 2)", &[0, 1]),
        npy("y_test", "(1,)", &[3]),
    ] {
        zip.start_file(name, zip::write::FileOptions::default())
            .unwrap();
        std::io::Write::write_all(&mut zip, &bytes).unwrap();
    }
    zip.finish().unwrap();
    let e = Digits::read(&bad).unwrap_err().to_string();
    assert!(e.contains("bad.npz") && e.contains("digit label"), "{e}");
}
