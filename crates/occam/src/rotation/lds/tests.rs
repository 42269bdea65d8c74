//! Rotations of BayesPy's linear state-space demo (`examples/lds_rotation`): the engine's bound
//! after a transform equals the objective's prediction, the identity changes nothing, a step never
//! lowers the bound, and the sweeps to convergence fall.

use super::super::objective::Prior;
use super::super::{detect, identity, Rotation};
use super::*;
use crate::data::DataSet;
use crate::driver::{self, Outcome};
use crate::lower::Compiled;
use crate::{Model, Settings};

const MODEL: &str = include_str!("../../../../../examples/lds_rotation/lssm.occam");
const DATA: &str = include_str!("../../../../../examples/lds_rotation/y.csv");
const LDS: &str = include_str!("../../../../../examples/models/lds.occam");
const LDS_DATA: &str = include_str!("../../../../../examples/models/lds/y.csv");

fn data(csv: &str) -> DataSet {
    let rows: Vec<Vec<f64>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let (m, n) = (rows.len(), rows[0].len());
    let mut d = DataSet::new();
    d.insert_array("y", m, n, rows.concat(), None).unwrap();
    d
}

/// A fit of a model: the model, its engine in the fitted state and the outcome.
struct Run {
    model: Model,
    c: Compiled,
    outcome: Outcome,
}

fn fit_model(source: &str, csv: &str, rotate: bool, max_iter: usize) -> Run {
    let model = Model::from_source("lssm.occam", source, &data(csv)).unwrap();
    let loaded = model.loaded();
    let mut c = loaded.compile(true).unwrap();
    let settings = Settings {
        rotate: Some(rotate),
        max_iter,
        strict: true,
        ..Settings::default()
    };
    let outcome = driver::fit(loaded, &mut c, &settings, &mut ()).unwrap();
    Run { model, c, outcome }
}

fn fit(rotate: bool, max_iter: usize) -> Run {
    fit_model(MODEL, DATA, rotate, max_iter)
}

fn chain(f: &Run) -> ChainRotation {
    match detect(f.model.loaded(), &f.c).unwrap().remove(0) {
        Rotation::Chain(c) => c,
        Rotation::Product(p) => panic!("a product rotation {}", p.name()),
    }
}

/// R = I + a fixed perturbation of size `eps`.
fn perturbed(d: usize, eps: f64) -> Vec<f64> {
    (0..d * d)
        .map(|k| f64::from(k % (d + 1) == 0) + eps * ((k * 7919 % 13) as f64 - 6.0) / 6.0)
        .collect()
}

/// The objective with every prior held (no ARD re-optimisation): the exact change of the bound
/// when only x, A and C move.
fn held(vmp: &Vmp, rot: &ChainRotation) -> Lds {
    let held = ChainRotation {
        dynamics: Factor {
            ard: None,
            ..rot.dynamics.clone()
        },
        emission: Factor {
            ard: None,
            ..rot.emission.clone()
        },
        ..rot.clone()
    };
    held.lds(vmp).unwrap()
}

#[test]
fn the_engines_bound_changes_as_the_objective_predicts() {
    for (source, csv) in [(MODEL, DATA), (LDS, LDS_DATA)] {
        for sweeps in [1, 5, 40] {
            let mut f = fit_model(source, csv, false, sweeps);
            let rot = chain(&f);
            assert_eq!(rot.name(), "C·x, A");
            let vmp = &mut f.c.vmp;
            let lds = held(vmp, &rot);
            assert!(matches!(lds.dynamics.prior, RowPrior::Held { .. }));
            assert!(matches!(lds.emission.prior, Prior::Fixed { .. }));
            let r = perturbed(rot.d, 0.1);
            let predicted = lds_objective::bound(&lds, &r).unwrap().0
                - lds_objective::bound(&lds, &identity(rot.d)).unwrap().0;
            let before = vmp.bound();
            rot.apply(vmp, &r).unwrap();
            let after = vmp.bound();
            assert!(
                predicted.abs() > 1e-3,
                "the test rotation must matter: {predicted}"
            );
            assert!(
                ((after - before) - predicted).abs() < 1e-9 * before.abs().max(1.0),
                "after {sweeps} sweeps: bound moved {}, objective predicted {predicted}",
                after - before
            );
            // Every cached product was dropped: the bound from the arrays alone agrees.
            assert!((vmp.fresh_bound() - after).abs() < 1e-9 * after.abs().max(1.0));
        }
    }
}

#[test]
fn the_identity_changes_nothing() {
    let mut f = fit(false, 5);
    let rot = chain(&f);
    let vmp = &mut f.c.vmp;
    let lds = rot.lds(vmp).unwrap();
    let eye = identity(rot.d);
    let (a, b) = (
        lds_objective::bound(&lds, &eye).unwrap().0,
        lds_objective::bound(&lds, &eye).unwrap().0,
    );
    assert_eq!(a, b);
    let before = vmp.bound();
    let moments = vmp.moments(rot.chain.node).to_vec();
    rot.apply(vmp, &eye).unwrap();
    let after = vmp.bound();
    assert!(
        (after - before).abs() < 1e-12 * before.abs(),
        "{before} → {after}"
    );
    assert_eq!(vmp.moments(rot.chain.node), &moments[..]);
}

#[test]
fn a_rotation_step_never_lowers_the_bound() {
    for sweeps in [1, 3, 20, 200] {
        let mut f = fit(false, sweeps);
        let rot = chain(&f);
        let vmp = &mut f.c.vmp;
        let before = vmp.bound();
        let predicted = rot.step(vmp).unwrap();
        let after = vmp.bound();
        // The objective takes the ARD precisions at their optimum given A and C; updating them
        // after the step can only add to the predicted rise.
        assert!(
            predicted > 0.0,
            "after {sweeps} sweeps a rotation should help"
        );
        assert!(
            after - before >= predicted - 1e-9 * before.abs().max(1.0),
            "after {sweeps} sweeps: bound {before} → {after}, predicted rise {predicted}"
        );
        assert!((vmp.fresh_bound() - after).abs() < 1e-9 * after.abs().max(1.0));
    }
}

#[test]
fn bayespy_lssm_demo_converges_in_fewer_sweeps_with_rotations() {
    // BayesPy 0.6.6 on the same data: bench/peers/bayespy_lds_rotation.py, numbers in
    // examples/lds_rotation/README.md.
    let plain = fit(false, 20000);
    let rotated = fit(true, 20000);
    let (a, b) = (&plain.outcome, &rotated.outcome);
    eprintln!(
        "BayesPy's LSSM demo: {} sweeps to L = {:.6} without rotations, {} sweeps to L = {:.6} with",
        a.iterations, a.bound, b.iterations, b.bound
    );
    assert!(a.converged && b.converged);
    let rot = b.rotated.as_ref().expect("rotations reported");
    assert_eq!(rot.pairs, ["C·x, A"]);
    assert!(rot.gain > 0.0);
    assert!(
        a.iterations >= 5 * b.iterations,
        "sweeps: {} without rotations, {} with",
        a.iterations,
        b.iterations
    );
    assert!(
        b.bound >= a.bound - 1e-6 * a.bound.abs(),
        "bound {} without rotations, {} with",
        a.bound,
        b.bound
    );
    // Strict mode: no sweep lowered the bound (rotations included).
    assert!(b
        .bound_trace
        .windows(2)
        .all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()));
}

#[test]
fn chains_that_cannot_be_rotated_are_located_errors() {
    let rotate = |source: &str| {
        Model::from_source("lssm.occam", source, &data(DATA))
            .unwrap()
            .fit(&Settings {
                rotate: Some(true),
                ..Settings::default()
            })
            .err()
            .unwrap()
            .to_string()
    };
    // A read twice.
    let twice = MODEL.replace(
        "tau ~ Gamma(shape = 1e-5, rate = 1e-5)",
        "tau ~ Gamma(shape = 1e-5, rate = 1e-5)\nz[D] over D ~ GaussianARD(mean = A, precision = 1)",
    );
    let e = rotate(&twice);
    assert!(
        e.contains("the dynamics `A` (lssm.occam:8:1) must be a latent Gaussian")
            && e.contains("the product in `y` (lssm.occam:"),
        "{e}"
    );
    // The chain read twice.
    let twice = MODEL.replace(
        "tau ~ Gamma(shape = 1e-5, rate = 1e-5)",
        "tau ~ Gamma(shape = 1e-5, rate = 1e-5)\nz[T] over D ~ GaussianARD(mean = x, precision = 1)",
    );
    let e = rotate(&twice);
    assert!(
        e.contains("the chain `x` (lssm.occam:9:1) is a mixture or read 2 times"),
        "{e}"
    );
}
