//! BayesPy 0.6.6's documented examples (fixtures in `tests/fixtures`, see its README): same model,
//! data, initialisation and update order must give the same bound trace.

use occam_core::models::{GaussianMixture, GaussianMixtureNodes};
use occam_core::prelude::*;
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let text = match name {
        "examples" => include_str!("../fixtures/bayespy_examples.json"),
        "gmm" => include_str!("../fixtures/gmm_fixed_init.json"),
        "bmm" => include_str!("../fixtures/bmm_fixed_init.json"),
        "gmm1d" => include_str!("../fixtures/gaussian_mixture_1d.json"),
        _ => unreachable!(),
    };
    serde_json::from_str(text).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    match v {
        Value::Array(a) => a.iter().flat_map(floats).collect(),
        Value::Number(n) => vec![n.as_f64().unwrap()],
        _ => panic!("not numeric: {v}"),
    }
}

fn assert_trace(got: &[f64], want: &[f64], rel: f64) {
    assert_eq!(got.len(), want.len(), "trace lengths: {got:?} vs {want:?}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= rel * w.abs(),
            "iteration {}: {g} vs BayesPy {w} (rel {:e})",
            i + 1,
            (g - w).abs() / w.abs()
        );
    }
}

fn exact_sweeps(n: usize, order: Vec<NodeId>) -> RunOptions {
    RunOptions {
        max_iter: n,
        tol: 0.0,
        order: Some(order),
        decrease_is_error: true,
        ..Default::default()
    }
}

#[test]
fn quickstart_trace_and_posterior() {
    let f = &fixture("examples")["quickstart"];
    let y = floats(&f["y"]);
    let mut g = Graph::new();
    let n = g.plate("N", y.len());
    let mu = g.add("mu", Gaussian, &[], [c(0.0), c(1e-6)]).unwrap();
    let tau = g.add("tau", Gamma { shape: 1e-6 }, &[], [c(1e-6)]).unwrap();
    let yn = g.add("y", Gaussian, &[n], [p(mu), p(tau)]).unwrap();
    g.observe(yn, &y).unwrap();
    let mut vmp = g.compile().unwrap();
    let fit = vmp
        .run(&RunOptions {
            tol: f["tol"].as_f64().unwrap(),
            order: Some(vec![mu, tau]),
            decrease_is_error: true,
            ..Default::default()
        })
        .unwrap();
    assert!(fit.converged);
    assert_eq!(fit.iterations, f["iterations"].as_u64().unwrap() as usize);
    assert_trace(&fit.bound_trace, &floats(&f["L_trace"]), 1e-8);
    let post = &f["post"];
    let close =
        |a: f64, b: &Value| (a - b.as_f64().unwrap()).abs() < 1e-8 * b.as_f64().unwrap().abs();
    assert!(close(vmp.moments(mu)[0], &post["E_mu"]));
    assert!(close(vmp.moments(mu)[1], &post["E_mu2"]));
    assert!(close(vmp.moments(tau)[0], &post["E_tau"]));
    assert!(close(vmp.moments(tau)[1], &post["E_log_tau"]));
}

/// Linear regression y_n = [x_n, 1]·B + noise with B jointly Gaussian (factorised from τ).
#[test]
fn regression_factorised_trace() {
    let f = &fixture("examples")["regression"];
    let (x, y) = (floats(&f["x"]), floats(&f["y"]));
    let mut g = Graph::new();
    let n = g.plate("N", y.len());
    let regressors: Vec<f64> = x.iter().flat_map(|&xi| [xi, 1.0]).collect();
    let xs = g
        .constant("X", MomentKind::Gaussian { d: 2 }, &[n], &regressors)
        .unwrap();
    let b = g
        .add("B", GaussianArd { d: 2 }, &[], [c(0.0), c(1e-6)])
        .unwrap();
    let tau = g.add("tau", Gamma { shape: 1e-3 }, &[], [c(1e-3)]).unwrap();
    let mean = g
        .deterministic("F", Dot { d: 2 }, &[n], [p(xs), p(b)])
        .unwrap();
    let yn = g.add("y", Gaussian, &[n], [p(mean), p(tau)]).unwrap();
    g.observe(yn, &y).unwrap();
    let mut vmp = g.compile().unwrap();
    let want = floats(&f["L_trace_factorized"]);
    let fit = vmp.run(&exact_sweeps(want.len(), vec![b, tau])).unwrap();
    assert_trace(&fit.bound_trace, &want, 1e-8);
    let eb = floats(&f["E_B"]);
    assert!((vmp.moments(b)[0] - eb[0]).abs() < 1e-6 && (vmp.moments(b)[1] - eb[1]).abs() < 1e-6);
    assert!((vmp.moments(tau)[0] - f["E_tau"].as_f64().unwrap()).abs() < 1e-8);
}

/// Gaussian mixture with Wishart precisions, Q(z) initialised from stored responsibilities.
#[test]
fn gmm_fixed_init_trace() {
    let f = &fixture("gmm");
    let y = floats(&f["y"]);
    let (d, k) = (2, 10);
    let mut g = Graph::new();
    let GaussianMixtureNodes {
        alpha,
        z,
        mu,
        lambda,
        ..
    } = GaussianMixture::new(k).add(&mut g, &y, d).unwrap();
    g.initialize(z, Init::Moments(floats(&f["z_init"])));
    let mut vmp = g.compile().unwrap();
    let want = floats(&f["L_trace"]);
    let fit = vmp
        .run(&exact_sweeps(want.len(), vec![mu, lambda, z, alpha]))
        .unwrap();
    assert_trace(&fit.bound_trace, &want, 1e-8);
    let post = &f["post"];
    let e_mu = floats(&post["E_mu"]);
    for (got, want) in vmp
        .moments(mu)
        .chunks(d + d * d)
        .flat_map(|c| c[..d].to_vec())
        .zip(&e_mu)
    {
        assert!(
            (got - want).abs() < 1e-6 * (1.0 + want.abs()),
            "E[mu]: {got} vs {want}"
        );
    }
    let z_sum: Vec<f64> = (0..k)
        .map(|j| vmp.moments(z).chunks(k).map(|r| r[j]).sum())
        .collect();
    for (got, want) in z_sum.iter().zip(floats(&post["z_sum"])) {
        assert!(
            (got - want).abs() < 1e-6 * (1.0 + want),
            "Σ_n r_nk: {got} vs {want}"
        );
    }
}

/// Bernoulli mixture with Beta priors; Q(P) initialised from stored Beta parameters.
#[test]
fn bmm_fixed_init_trace() {
    let f = &fixture("bmm");
    let x = floats(&f["x"]);
    let (dd, k) = (10, 10);
    let mut g = Graph::new();
    let n = g.plate("N", x.len() / dd);
    let d = g.plate("D", dd);
    let kp = g.plate("K", k);
    let r = g
        .add(
            "R",
            Dirichlet {
                concentration: vec![1e-5; k],
            },
            &[],
            [],
        )
        .unwrap();
    let z = g.add("z", Categorical { k }, &[n], [p(r)]).unwrap();
    let pp = g
        .add(
            "P",
            Beta {
                alpha: 0.5,
                beta: 0.5,
            },
            &[d, kp],
            [],
        )
        .unwrap();
    let xn = g
        .add_mixture("x", Bernoulli, &[n, d], &[(z, kp)], [p(pp)])
        .unwrap();
    g.observe(xn, &x).unwrap();
    let p_init: Vec<f64> = floats(&f["P_init"]).iter().map(|v| v - 1.0).collect();
    g.initialize(pp, Init::Natural(p_init));
    g.initialize(z, Init::Prior);
    let mut vmp = g.compile().unwrap();
    let want = floats(&f["L_trace"]);
    let fit = vmp.run(&exact_sweeps(want.len(), vec![z, r, pp])).unwrap();
    assert_trace(&fit.bound_trace, &want, 1e-8);
}

/// 1-D mixture of Gaussians with Gamma precisions on the galaxies velocities.
#[test]
fn gaussian_mixture_1d_trace() {
    let f = &fixture("gmm1d");
    let y = floats(&f["y"]);
    let k = 5;
    let mut g = Graph::new();
    let n = g.plate("N", y.len());
    let kp = g.plate("K", k);
    let alpha = g
        .add(
            "alpha",
            Dirichlet {
                concentration: vec![1.0; k],
            },
            &[],
            [],
        )
        .unwrap();
    let z = g.add("z", Categorical { k }, &[n], [p(alpha)]).unwrap();
    let mu = g.add("mu", Gaussian, &[kp], [c(0.0), c(1e-3)]).unwrap();
    let tau = g
        .add("tau", Gamma { shape: 1e-3 }, &[kp], [c(1e-3)])
        .unwrap();
    let yn = g
        .add_mixture("y", Gaussian, &[n], &[(z, kp)], [p(mu), p(tau)])
        .unwrap();
    g.observe(yn, &y).unwrap();
    g.initialize(z, Init::Moments(floats(&f["z_init"])));
    let mut vmp = g.compile().unwrap();
    let want = floats(&f["L_trace"]);
    let fit = vmp
        .run(&exact_sweeps(want.len(), vec![mu, tau, z, alpha]))
        .unwrap();
    assert_trace(&fit.bound_trace, &want, 1e-8);
}
