//! Law for every factor: the message to slot s equals ∂/∂u_{Y_s} of φ·ψ(u_{Y_1}, …), by central
//! finite differences on random parent moments and a random φ (Winn (2.48–2.49)).

use super::{for_each_test_instance, Factor};
use crate::dist::laws::random_moments;
use crate::moments::MomentKind;
use crate::Rng;
use rand::{Rng as _, SeedableRng};

#[test]
fn every_factor_message_is_the_gradient_of_its_moments() {
    let mut rng = Rng::seed_from_u64(11);
    for_each_test_instance(|f: Factor| {
        for _ in 0..3 {
            let pa: Vec<Vec<f64>> = (0..f.n_slots())
                .map(|s| {
                    let inp = f.slot_input(s);
                    (0..inp.stack)
                        .flat_map(|_| random_moments(&mut rng, inp.kind))
                        .collect()
                })
                .collect();
            let n = f.kind().len();
            let phi: Vec<f64> = (0..n).map(|_| rng.random::<f64>() * 2.0 - 1.0).collect();
            let objective = |pa: &[Vec<f64>]| {
                let refs: Vec<&[f64]> = pa.iter().map(|v| v.as_slice()).collect();
                let mut u = vec![0.0; n];
                f.moments(&refs, &mut u);
                u.iter().zip(&phi).map(|(a, b)| a * b).sum::<f64>()
            };
            for s in 0..f.n_slots() {
                let refs: Vec<&[f64]> = pa.iter().map(|v| v.as_slice()).collect();
                let mut m = vec![0.0; f.slot_input(s).len()];
                f.message_to(s, &phi, &refs, &mut m);
                for i in 0..m.len() {
                    let h = 1e-6;
                    let mut plus = pa.clone();
                    plus[s][i] += h;
                    let mut minus = pa.clone();
                    minus[s][i] -= h;
                    let fd = (objective(&plus) - objective(&minus)) / (2.0 * h);
                    assert!(
                        (fd - m[i]).abs() < 1e-6 * (1.0 + fd.abs()),
                        "{}: slot {s} entry {i}: FD {fd}, message {}",
                        f.name(),
                        m[i]
                    );
                }
            }
        }
    });
}

#[test]
fn every_elementwise_function_builds_its_factor_from_a_call() {
    use crate::spec::CallRule;
    for f in super::functions() {
        let CallRule::Elementwise { params, like } = f.rule else {
            continue;
        };
        assert!(like < params.len(), "{}", f.name);
        assert_eq!(
            (f.min_args, f.max_args),
            (params.len(), Some(params.len())),
            "{}: the arity is the parameter list",
            f.name
        );
        for d in [1, 4] {
            let dims = vec![d; params.len()];
            let factor = super::call(f.name, &dims)
                .unwrap_or_else(|| panic!("{}: no factor for sizes {dims:?}", f.name));
            assert_eq!(factor.name(), f.name);
            assert_eq!(factor.n_slots(), params.len(), "{}", f.name);
            assert_eq!(factor.kind(), MomentKind::Gaussian { d }, "{}", f.name);
        }
    }
}
