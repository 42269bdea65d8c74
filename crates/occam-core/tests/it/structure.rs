//! Plates, masks, conditional probability tables and build-time errors.
#![allow(clippy::needless_range_loop)] // index loops mirror the written-out mean-field formulas

use occam_core::prelude::*;
use occam_core::special::log_sum_exp;

/// A missing entry of a leaf is integrated out exactly: the fit equals the fit without that entry.
#[test]
fn masked_leaf_entries_are_integrated_out() {
    let full = [2.1, 3.5, -0.4, 1.7, 9.9, 0.8];
    let fit = |x: &[f64], mask: Option<&[bool]>| {
        let mut g = Graph::new();
        let n = g.plate("N", x.len());
        let mu = g.add("mu", Gaussian, &[], [c(0.0), c(0.01)]).unwrap();
        let tau = g.add("tau", Gamma { shape: 1.0 }, &[], [c(1.0)]).unwrap();
        let xn = g.add("x", Gaussian, &[n], [p(mu), p(tau)]).unwrap();
        g.observe_masked(xn, x, mask).unwrap();
        let mut vmp = g.compile().unwrap();
        let f = vmp
            .run(&RunOptions {
                tol: 1e-12,
                decrease_is_error: true,
                ..Default::default()
            })
            .unwrap();
        (f.bound, vmp.moments(mu).to_vec())
    };
    let mask = [true, true, true, true, false, true];
    let kept: Vec<f64> = full
        .iter()
        .zip(&mask)
        .filter(|(_, &m)| m)
        .map(|(x, _)| *x)
        .collect();
    let (b1, m1) = fit(&full, Some(&mask));
    let (b2, m2) = fit(&kept, None);
    assert!((b1 - b2).abs() < 1e-10, "{b1} vs {b2}");
    assert!((m1[0] - m2[0]).abs() < 1e-10);
}

/// y ~ Categorical(A[z1, z2]) with two Categorical parents (a CPT with known rows): VMP's fixed point
/// equals mean-field coordinate ascent written out by hand, and the bound equals its closed form.
#[test]
fn conditional_probability_table_with_two_parents() {
    let (k1, k2, ky) = (2, 3, 3);
    let table: Vec<f64> = (0..k1 * k2)
        .flat_map(|c| {
            let raw: Vec<f64> = (0..ky)
                .map(|y| 1.0 + ((c * 7 + y * 3) % 5) as f64)
                .collect();
            let s: f64 = raw.iter().sum();
            raw.into_iter().map(move |v| v / s)
        })
        .collect();
    let prior1 = [0.3, 0.7];
    let prior2 = [0.5, 0.2, 0.3];
    let ys = [0.0, 2.0, 1.0, 2.0];
    let mut g = Graph::new();
    let n = g.plate("N", ys.len());
    let p1 = g.plate("K1", k1);
    let p2 = g.plate("K2", k2);
    let a = g
        .add(
            "A",
            Dirichlet {
                concentration: vec![1.0; ky],
            },
            &[p1, p2],
            [],
        )
        .unwrap();
    g.observe(a, &table).unwrap();
    let z1 = g
        .add("z1", Categorical { k: k1 }, &[n], [cv(prior1.to_vec())])
        .unwrap();
    let z2 = g
        .add("z2", Categorical { k: k2 }, &[n], [cv(prior2.to_vec())])
        .unwrap();
    let y = g
        .add_mixture(
            "y",
            Categorical { k: ky },
            &[n],
            &[(z1, p1), (z2, p2)],
            [p(a)],
        )
        .unwrap();
    g.observe(y, &ys).unwrap();
    g.initialize(z1, Init::Prior);
    g.initialize(z2, Init::Prior);
    let mut vmp = g.compile().unwrap();
    let fit = vmp
        .run(&RunOptions {
            max_iter: 200,
            // All 200 sweeps: the bound is flat to the last bit while q(z) still moves by ~1e-9
            // (it is stationary at the optimum), so "no change" can stop short of the 1e-10 below.
            tol: -1.0,
            order: Some(vec![z1, z2]),
            decrease_is_error: true,
            ..Default::default()
        })
        .unwrap();

    // Hand-written mean field for each data point.
    let la = |i: usize, j: usize, y: usize| table[(i * k2 + j) * ky + y].ln();
    let mut bound = 0.0;
    for (e, &yv) in ys.iter().enumerate() {
        let yv = yv as usize;
        let mut q1: Vec<f64> = prior1.to_vec();
        let mut q2: Vec<f64> = prior2.to_vec();
        for _ in 0..200 {
            let s1: Vec<f64> = (0..k1)
                .map(|i| prior1[i].ln() + (0..k2).map(|j| q2[j] * la(i, j, yv)).sum::<f64>())
                .collect();
            let z = log_sum_exp(&s1);
            q1 = s1.iter().map(|s| (s - z).exp()).collect();
            let s2: Vec<f64> = (0..k2)
                .map(|j| prior2[j].ln() + (0..k1).map(|i| q1[i] * la(i, j, yv)).sum::<f64>())
                .collect();
            let z = log_sum_exp(&s2);
            q2 = s2.iter().map(|s| (s - z).exp()).collect();
        }
        let got1 = &vmp.moments(z1)[e * k1..(e + 1) * k1];
        let got2 = &vmp.moments(z2)[e * k2..(e + 1) * k2];
        for i in 0..k1 {
            assert!((got1[i] - q1[i]).abs() < 1e-10, "q(z1) at {e}");
        }
        for j in 0..k2 {
            assert!((got2[j] - q2[j]).abs() < 1e-10, "q(z2) at {e}");
        }
        // L = E[ln p(z1) + ln p(z2) + ln A[z1,z2,y]] + H(q1) + H(q2).
        for i in 0..k1 {
            bound += q1[i] * (prior1[i].ln() - q1[i].ln());
            for j in 0..k2 {
                bound += q1[i] * q2[j] * la(i, j, yv);
            }
        }
        for j in 0..k2 {
            bound += q2[j] * (prior2[j].ln() - q2[j].ln());
        }
    }
    // The observed A adds its Dirichlet(1) log-density: ln Γ(3) = ln 2 per row.
    bound += (k1 * k2) as f64 * 2f64.ln();
    assert!((fit.bound - bound).abs() < 1e-9, "{} vs {bound}", fit.bound);
}

#[test]
fn build_errors_name_the_node_slot_and_plate() {
    let mut g = Graph::new();
    let n = g.plate("N", 4);
    let k = g.plate("K", 3);
    let mu = g.add("mu", Gaussian, &[], [c(0.0), c(1.0)]).unwrap();
    // A Gaussian where the precision should be: not conjugate.
    let err = g.add("x", Gaussian, &[n], [p(mu), p(mu)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "node `x`: slot `precision` expects Gamma, but `mu` provides Gaussian (scalar)"
    );
    // A parent in a plate the child is not in.
    let muk = g.add("muk", Gaussian, &[k], [c(0.0), c(1.0)]).unwrap();
    let err = g.add("y", Gaussian, &[n], [p(muk), c(1.0)]).unwrap_err();
    assert!(matches!(err, BuildError::PlateMismatch { .. }));
    assert_eq!(err.to_string(), "node `y`: parent `muk` is in plate `K (size 3)`, which `y` is not in; `y` has plates [N=4]");
    // Wrong number of parents, bad constants, bad data.
    let err = g.add("z", Gaussian, &[n], [p(mu)]).unwrap_err();
    assert!(
        err.to_string()
            .contains("takes 2 parent(s) (mean, precision), got 1"),
        "{err}"
    );
    let err = g.add("w", Gaussian, &[n], [c(0.0), c(-1.0)]).unwrap_err();
    assert!(
        err.to_string()
            .contains("slot `precision`: -1 must be positive"),
        "{err}"
    );
    let x = g.add("x", Gaussian, &[n], [p(mu), c(1.0)]).unwrap();
    let err = g.observe(x, &[1.0, 2.0, f64::NAN, 4.0]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "node `x`, element 2: NaN is not a finite real number"
    );
    let err = g.observe(x, &[1.0, 2.0]).unwrap_err();
    assert!(
        err.to_string().contains("expected 4 observed values"),
        "{err}"
    );
    let err = g.add("x", Gaussian, &[n], [p(mu), c(1.0)]).unwrap_err();
    assert_eq!(
        err,
        BuildError::Duplicate {
            what: "node",
            name: "x".into()
        }
    );
    // A mixture index that is not Categorical over the selected plate.
    let err = g
        .add_mixture("m", Gaussian, &[n], &[(mu, k)], [p(muk), c(1.0)])
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("expects Categorical (3 categories)"),
        "{err}"
    );
    // A rectified Gaussian with a non-zero location cannot take a random precision.
    let tau = g.add("tau", Gamma { shape: 1.0 }, &[], [c(1.0)]).unwrap();
    let err = g
        .add("r", RectifiedGaussian { location: 1.0 }, &[n], [p(tau)])
        .unwrap_err();
    assert!(err.to_string().contains("must be a constant"), "{err}");
}

/// Observed values are checked in blocks: the first invalid one (±∞ or NaN, in any block, with or
/// without a mask) is the one named, with its element; a mask that marks an invalid value missing
/// skips it.
#[test]
fn the_first_invalid_observed_value_is_named_wherever_it_is() {
    let n = 1000;
    let observe = |values: Vec<f64>, mask: Option<&[bool]>| {
        let mut g = Graph::new();
        let np = g.plate("N", n);
        let x = g.add("x", Gaussian, &[np], [c(0.0), c(1.0)]).unwrap();
        g.observe_values(x, values, mask).map_err(|e| e.to_string())
    };
    let base: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
    assert!(observe(base.clone(), None).is_ok());
    for (at, bad) in [
        (0, f64::NAN),
        (255, f64::INFINITY),
        (256, f64::NAN),
        (999, -f64::INFINITY),
    ] {
        let mut v = base.clone();
        v[at] = bad;
        v[(at + 300).min(n - 1).max(at)] = bad; // a later invalid value is not the one named
        let want = format!("node `x`, element {at}: {bad} is not a finite real number");
        assert_eq!(observe(v.clone(), None).unwrap_err(), want);
        let all = vec![true; n];
        assert_eq!(observe(v.clone(), Some(&all)).unwrap_err(), want);
        // Missing: skipped, so the next invalid value (if any) is named.
        let mut mask = vec![true; n];
        mask[at] = false;
        let later = (at + 300).min(n - 1).max(at);
        match observe(v, Some(&mask)) {
            Ok(()) => assert_eq!(later, at),
            Err(e) => assert!(e.contains(&format!("element {later}:")), "{e}"),
        }
    }
}

#[test]
fn run_errors_are_reported() {
    let mut g = Graph::new();
    let n = g.plate("N", 3);
    let mu = g.add("mu", Gaussian, &[], [c(0.0), c(1.0)]).unwrap();
    let x = g.add("x", Gaussian, &[n], [p(mu), c(1.0)]).unwrap();
    g.observe(x, &[1.0, 2.0, 3.0]).unwrap();
    let mut vmp = g.compile().unwrap();
    let err = vmp
        .run(&RunOptions {
            order: Some(vec![]),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid update order: latent node `mu` is missing from the order"
    );
    let err = vmp
        .run(&RunOptions {
            order: Some(vec![mu, x]),
            ..Default::default()
        })
        .unwrap_err();
    assert!(
        err.to_string().contains("`x` has no latent elements"),
        "{err}"
    );
}

/// The same for vector Gaussians, checked in blocks of 256 elements of d values each: the
/// element named is the one holding the first invalid value, wherever it sits in its vector.
#[test]
fn the_first_invalid_observed_vector_is_named_wherever_it_is() {
    let (n, d) = (600, 3);
    let identity: Vec<f64> = (0..d * d)
        .map(|i| if i % (d + 1) == 0 { 1.0 } else { 0.0 })
        .collect();
    let observe = |values: Vec<f64>| {
        let mut g = Graph::new();
        let np = g.plate("N", n);
        let x = g
            .add(
                "x",
                MvGaussian { d },
                &[np],
                [cv(vec![0.0; d]), cv(identity.clone())],
            )
            .unwrap();
        g.observe_values(x, values, None).map_err(|e| e.to_string())
    };
    let base: Vec<f64> = (0..n * d).map(|i| (i as f64 * 0.37).sin()).collect();
    assert!(observe(base.clone()).is_ok());
    for (at, w, bad) in [
        (0, 0, f64::NAN),
        (255, 2, f64::INFINITY),
        (256, 1, f64::NAN),
        (599, 2, -f64::INFINITY),
    ] {
        let mut v = base.clone();
        v[at * d + w] = bad;
        // A later invalid value is not the one named.
        let later = (at * d + w + 400).min(n * d - 1);
        v[later] = bad;
        let want = format!("node `x`, element {at}: {bad} is not a finite real number");
        assert_eq!(observe(v).unwrap_err(), want);
    }
}
