use super::*;

fn sine(n: usize, scale: f64, shift: f64) -> Dataset {
    let x: Vec<f64> = (0..n).map(|i| i as f64 / n as f64).collect();
    let t: Vec<f64> = x
        .iter()
        .enumerate()
        .map(|(i, v)| {
            (2.0 * std::f64::consts::PI * v).sin() + 0.05 * ((i * 7919 % 13) as f64 - 6.0) / 6.0
        })
        .collect();
    let x = x.iter().map(|v| 3.0 * v - 1.0).collect();
    Dataset::new(x, 1, t.iter().map(|v| scale * v + shift).collect()).unwrap()
}

fn quick(method: Method) -> NetSpec {
    NetSpec {
        hidden: 3,
        restarts: 2,
        pretrain_iters: 10,
        cycles: 2,
        iters_per_cycle: 60,
        method,
        ..NetSpec::default()
    }
}

#[test]
fn predictions_are_in_the_targets_units() {
    // Standardisation makes the fit invariant to the target's units. Scaling by a power of two is
    // exact in floating point (means, sds and z-scores are the same bits), so the predictions must
    // be exactly 8 times the unscaled fit's and the variances 64 times.
    let a = fit_network(&sine(25, 1.0, 0.0), &quick(Method::Vb)).unwrap();
    let b = fit_network(&sine(25, 8.0, 0.0), &quick(Method::Vb)).unwrap();
    let x = [-1.0, -0.3, 0.4, 1.7];
    let (pa, pb) = (a.predict(&x).unwrap(), b.predict(&x).unwrap());
    for i in 0..x.len() {
        assert_eq!(pb.mean[i], 8.0 * pa.mean[i], "{i}");
        let (va, vb) = (
            pa.var_total.as_ref().unwrap()[i],
            pb.var_total.as_ref().unwrap()[i],
        );
        assert_eq!(vb, 64.0 * va, "{i}");
    }
    assert_eq!(b.train_rmse, 8.0 * a.train_rmse);
    // The mapping back: mean = μ_t + σ_t z, variances × σ_t², on the posterior's own predictions
    // of the standardised inputs.
    let mut c = a.clone();
    c.target_scale = ZScore {
        mean: vec![100.0],
        sd: vec![3.0],
    };
    let Posterior::Vb(fit) = &a.posterior else {
        panic!("a VB fit")
    };
    let raw = fit.predict(&a.input_scale.apply(&x)).unwrap();
    let pc = c.predict(&x).unwrap();
    for (i, r) in raw.iter().enumerate() {
        assert_eq!(pc.mean[i], 100.0 + 3.0 * r.mean);
        assert_eq!(pc.var_function.as_ref().unwrap()[i], 9.0 * r.var_function);
        assert_eq!(pc.var_total.as_ref().unwrap()[i], 9.0 * r.var_total);
    }
    // The fit is a real fit: training error well below the targets' spread (sd 0.7).
    assert!(a.train_rmse < 0.2, "{}", a.train_rmse);
}

#[test]
fn a_saved_network_predicts_the_same_bits() {
    let net = fit_network(&sine(20, 2.0, 1.0), &quick(Method::Vb)).unwrap();
    let text = serde_json::to_string(&net).unwrap();
    let back: TrainedNet = serde_json::from_str(&text).unwrap();
    // Every number reads back to the same bits (serde_json's float_roundtrip parsing).
    assert_eq!(back, net);
    let x = [0.1, 0.9];
    assert_eq!(net.predict(&x).unwrap(), back.predict(&x).unwrap());
}

#[test]
fn every_method_fits_and_predicts() {
    let d = sine(24, 1.0, 0.0);
    for m in [
        Method::Vb,
        Method::Evidence,
        Method::Hmc,
        Method::EarlyStopping,
    ] {
        let net = fit_network(&d, &quick(m)).unwrap();
        let p = net.predict(&d.x).unwrap();
        assert_eq!(p.mean.len(), d.n());
        assert!(net.train_rmse < 0.4, "{m:?}: {}", net.train_rmse);
        assert_eq!(net.bound.is_some(), m == Method::Vb, "{m:?}");
        if let (Some(vf), Some(vt)) = (&p.var_function, &p.var_total) {
            assert!(vf.iter().zip(vt).all(|(f, t)| *f >= 0.0 && t > f), "{m:?}");
        } else {
            assert!(
                matches!(m, Method::Evidence | Method::EarlyStopping),
                "{m:?}"
            );
        }
    }
}

#[test]
fn a_committee_and_nrd_structure_em_fit_through_the_spec() {
    let d = sine(20, 1.0, 0.0);
    let net = fit_network(
        &d,
        &NetSpec {
            components: 2,
            ..quick(Method::Vb)
        },
    )
    .unwrap();
    match &net.posterior {
        Posterior::Vb(f) => assert_eq!(f.components, 2),
        other => panic!("{other:?}"),
    }
    let nrd = fit_network(
        &d,
        &NetSpec {
            prior: PriorKind::Nrd,
            structure_cycles: 1,
            ..quick(Method::Vb)
        },
    )
    .unwrap();
    assert!(matches!(nrd.posterior, Posterior::Structure(_)));
    assert_eq!(nrd.predict(&[0.5]).unwrap().mean.len(), 1);
}

#[test]
fn a_partial_json_spec_takes_the_papers_defaults_and_rejects_unknown_fields() {
    let s: NetSpec = serde_json::from_str(r#"{"hidden": 3, "method": "early_stopping"}"#).unwrap();
    assert_eq!(s.hidden, 3);
    assert_eq!(s.method, Method::EarlyStopping);
    assert_eq!(s.iters_per_cycle, 500);
    assert_eq!(s.alpha_prior, Gamma { a: 3e-4, b: 1e-4 });
    let e = serde_json::from_str::<NetSpec>(r#"{"hiden": 3}"#).unwrap_err();
    assert!(e.to_string().contains("hiden"), "{e}");
}

#[test]
fn bad_specs_and_inputs_are_errors_that_name_the_setting() {
    let d = sine(10, 1.0, 0.0);
    let cases = [
        (
            NetSpec {
                hidden: 0,
                ..quick(Method::Vb)
            },
            "hidden",
        ),
        (
            NetSpec {
                components: 3,
                ..quick(Method::Evidence)
            },
            "components",
        ),
        (
            NetSpec {
                prior: PriorKind::Nrd,
                ..quick(Method::Hmc)
            },
            "prior",
        ),
        (
            NetSpec {
                structure_cycles: 2,
                ..quick(Method::Vb)
            },
            "structure_cycles",
        ),
        (
            NetSpec {
                committee: 5,
                ..quick(Method::Evidence)
            },
            "committee",
        ),
    ];
    for (spec, name) in cases {
        let e = fit_network(&d, &spec).unwrap_err();
        assert!(e.to_string().contains(name), "{name}: {e}");
    }
    let net = fit_network(&d, &quick(Method::EarlyStopping)).unwrap();
    assert!(matches!(net.predict(&[]), Ok(p) if p.mean.is_empty()));
    let e = net.predict(&[f64::NAN]).unwrap_err();
    assert!(e.to_string().contains("row 1 column 1"), "{e}");
    let two = Dataset::new(vec![0.0; 20], 2, vec![1.0; 10]).unwrap();
    let e = fit_network(&two, &quick(Method::Vb)).unwrap_err();
    assert!(e.to_string().contains("zero variance"), "{e}");
}

#[test]
fn a_saved_network_with_a_wrong_length_or_index_is_refused_by_name() {
    // Every method's network reads back and passes the check as written...
    for method in [
        Method::Vb,
        Method::Evidence,
        Method::Hmc,
        Method::EarlyStopping,
    ] {
        let net = fit_network(&sine(16, 1.0, 0.0), &quick(method)).unwrap();
        net.check_saved().unwrap();
    }
    // ...and each edit a truncated or hand-edited file can make is named, not a panic later
    // (a θ one value short used to index past its end in `predict`).
    let net = fit_network(&sine(16, 1.0, 0.0), &quick(Method::Vb)).unwrap();
    type Edit = fn(&mut TrainedNet);
    let edits: [(&str, Edit); 6] = [
        ("theta", |n| match &mut n.posterior {
            Posterior::Vb(f) => {
                f.theta.pop();
            }
            _ => unreachable!(),
        }),
        ("q", |n| match &mut n.posterior {
            Posterior::Vb(f) => f.q.push(0.5),
            _ => unreachable!(),
        }),
        ("prior.links", |n| match &mut n.posterior {
            Posterior::Vb(f) => f.prior.links[0][0] = 99,
            _ => unreachable!(),
        }),
        ("input_scale.mean", |n| n.inputs = 2),
        ("target_scale.sd", |n| n.target_scale.sd.clear()),
        ("theta", |n| match &mut n.posterior {
            Posterior::Vb(f) => f.theta[0] = f64::NAN,
            _ => unreachable!(),
        }),
    ];
    for (field, edit) in edits {
        let mut bad = net.clone();
        edit(&mut bad);
        let text = serde_json::to_string(&bad).unwrap();
        let back: TrainedNet = serde_json::from_str(&text).unwrap_or(bad);
        let e = back.check_saved().unwrap_err().to_string();
        assert!(e.contains(field), "{field}: {e}");
    }
}
