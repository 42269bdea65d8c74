//! Shared laws every distribution must satisfy, checked on every registry entry by finite
//! differences (the BayesPy `assert_moments` / `assert_message_to_parent` idea):
//! 1. u = ∂A/∂φ;
//! 2. each message to a parent equals ∂/∂u_parent of φ(pa)·u − ⟨A(φ(pa))⟩;
//! 3. with fixed (point-mass) parents, ⟨A⟩ from `prior` equals A(φ) from `moments`;
//! 4. seeded sample averages of u(x) match the moments.

use super::{for_each_test_instance, Dist, DistVisitor, ExpFamily, SlotInput};
use crate::moments::MomentKind;
use crate::Rng;
use rand::SeedableRng;

/// Moments of a random member of `kind` (valid, so every formula is in its domain).
pub(crate) fn random_moments(rng: &mut Rng, kind: MomentKind) -> Vec<f64> {
    let dist: Dist = match kind {
        MomentKind::Gaussian { d: 1 } => super::Gaussian.into(),
        MomentKind::Gaussian { d } => super::MvGaussian { d }.into(),
        MomentKind::Gamma => super::Gamma { shape: 1.0 }.into(),
        MomentKind::Wishart { d } => super::Wishart {
            d,
            dof: d as f64 + 1.0,
        }
        .into(),
        MomentKind::Dirichlet { k } => super::Dirichlet {
            concentration: vec![1.0; k],
        }
        .into(),
        MomentKind::Categorical { k } => super::Categorical { k }.into(),
        MomentKind::Scalar => super::Poisson.into(),
        MomentKind::GammaShape => super::ShapeGamma {
            alpha: 2.0,
            scale: 1.0,
        }
        .into(),
    };
    struct R<'a>(&'a mut Rng);
    impl DistVisitor for R<'_> {
        type Output = Vec<f64>;
        fn visit<D: ExpFamily>(self, d: &D) -> Vec<f64> {
            let phi = d.random_phi(self.0);
            let mut u = vec![0.0; d.kind().len()];
            d.moments(&phi, &mut u).unwrap();
            u
        }
    }
    dist.visit(R(rng))
}

/// Indices of the independent entries of a moment vector and how to perturb them: a symmetric
/// matrix entry (i, j) is perturbed at (i, j) and (j, i) together.
fn perturbations(input: SlotInput) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let len = input.kind.len();
    for s in 0..input.stack {
        let base = s * len;
        let (offset, d) = match input.kind {
            MomentKind::Gaussian { d } if d > 1 => (d, d),
            MomentKind::Wishart { d } if d > 1 => (0, d),
            _ => (0, 0),
        };
        for i in 0..len {
            let in_matrix = d > 0 && i >= offset && i < offset + d * d;
            if !in_matrix {
                out.push(vec![base + i]);
                continue;
            }
            let (r, c) = ((i - offset) / d, (i - offset) % d);
            match r.cmp(&c) {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => out.push(vec![base + i]),
                std::cmp::Ordering::Greater => out.push(vec![base + i, base + offset + c * d + r]),
            }
        }
    }
    out
}

struct CheckLaws(u64);

impl DistVisitor for CheckLaws {
    type Output = ();
    fn visit<D: ExpFamily>(self, dist: &D) {
        let mut rng = Rng::seed_from_u64(self.0);
        let kind = dist.kind();
        let n = kind.len();
        let phi = dist.random_phi(&mut rng);
        let mut u = vec![0.0; n];
        let a0 = dist.moments(&phi, &mut u).unwrap();
        assert!(a0.is_finite(), "{}: A not finite", D::NAME);
        // Law 1: u = ∂A/∂φ (symmetric perturbation of matrix blocks).
        for idx in perturbations(SlotInput::single(kind)) {
            let h = 1e-5;
            let eval = |sign: f64| {
                let mut p = phi.clone();
                for &i in &idx {
                    p[i] += sign * h;
                }
                let mut tmp = vec![0.0; n];
                dist.moments(&p, &mut tmp).unwrap()
            };
            let fd = (eval(1.0) - eval(-1.0)) / (2.0 * h);
            let analytic: f64 = idx.iter().map(|&i| u[i]).sum();
            assert!(
                (fd - analytic).abs() < 1e-6 * (1.0 + analytic.abs()),
                "{} {kind}: ∂A/∂φ{idx:?} = {fd}, moments give {analytic}",
                D::NAME
            );
        }
        // The own bound term equals A − φ·u (closed forms that avoid cancellation included).
        let plain = a0 - phi.iter().zip(&u).map(|(p, v)| p * v).sum::<f64>();
        let own = dist.own_term(&phi, &u, a0);
        assert!(
            (own - plain).abs() < 1e-8 * (1.0 + plain.abs() + a0.abs()),
            "{}: own term {own}, A − φ·u = {plain}",
            D::NAME
        );
        // Batched moments equal element-by-element moments, bit for bit (also when Gaussian rows
        // share their precision part, which the batched form factorises once).
        let mut phis: Vec<f64> = (0..3).flat_map(|_| dist.random_phi(&mut rng)).collect();
        if let MomentKind::Gaussian { d } = dist.kind() {
            let (first, rest) = phis.split_at_mut(n);
            rest[d..n].copy_from_slice(&first[d..]);
        }
        let (mut ub, mut ab) = (vec![0.0; 3 * n], vec![0.0; 3]);
        dist.moments_rows(&phis, &mut ub, &mut ab).unwrap();
        for r in 0..3 {
            let mut ue = vec![0.0; n];
            let ae = dist.moments(&phis[r * n..(r + 1) * n], &mut ue).unwrap();
            assert_eq!(ae.to_bits(), ab[r].to_bits(), "{}: A of row {r}", D::NAME);
            assert_eq!(ue, ub[r * n..(r + 1) * n], "{}: u of row {r}", D::NAME);
        }
        // Laws 2 and 3.
        let inputs: Vec<SlotInput> = (0..D::SLOTS.len()).map(|s| dist.slot_input(s)).collect();
        let pa: Vec<Vec<f64>> = inputs
            .iter()
            .map(|inp| {
                (0..inp.stack)
                    .flat_map(|_| random_moments(&mut rng, inp.kind))
                    .collect()
            })
            .collect();
        let child_u = {
            let p = dist.random_phi(&mut rng);
            let mut cu = vec![0.0; n];
            dist.moments(&p, &mut cu).unwrap();
            cu
        };
        let w = 1.0;
        let objective = |pa: &[Vec<f64>]| {
            let refs: Vec<&[f64]> = pa.iter().map(|v| v.as_slice()).collect();
            let mut ph = vec![0.0; n];
            let a = dist.prior(&refs, &mut ph);
            ph.iter().zip(&child_u).map(|(p, c)| p * c).sum::<f64>() - w * a
        };
        for (slot, inp) in inputs.iter().enumerate() {
            if dist.needs_constant_parent(slot) {
                continue;
            }
            let refs: Vec<&[f64]> = pa.iter().map(|v| v.as_slice()).collect();
            let mut m = vec![0.0; inp.len()];
            dist.message_to(slot, &child_u, w, &refs, &mut m);
            for idx in perturbations(*inp) {
                let h = 1e-6;
                let eval = |sign: f64| {
                    let mut p = pa.clone();
                    for &i in &idx {
                        p[slot][i] += sign * h;
                    }
                    objective(&p)
                };
                let fd = (eval(1.0) - eval(-1.0)) / (2.0 * h);
                let analytic: f64 = idx.iter().map(|&i| m[i]).sum();
                assert!(
                    (fd - analytic).abs() < 1e-6 * (1.0 + analytic.abs()),
                    "{}: message to slot {} entry {idx:?}: FD {fd}, message {analytic}",
                    D::NAME,
                    D::SLOTS[slot].name
                );
            }
        }
        // Law 3: point-mass parents. Draw parent values, take u(value) as their moments.
        let fixed: Vec<Vec<f64>> = inputs
            .iter()
            .map(|inp| {
                (0..inp.stack)
                    .flat_map(|_| {
                        let m = random_moments(&mut rng, inp.kind);
                        let value: Vec<f64> = match inp.kind {
                            MomentKind::Gaussian { d } => m[..d].to_vec(),
                            MomentKind::Gamma => vec![m[0]],
                            MomentKind::Wishart { d } => m[..d * d].to_vec(),
                            MomentKind::Dirichlet { .. } => {
                                m.iter().map(|v| v.exp()).collect::<Vec<_>>()
                            }
                            MomentKind::Categorical { .. } => vec![0.0],
                            MomentKind::Scalar | MomentKind::GammaShape => vec![m[0]],
                        };
                        let value = match inp.kind {
                            MomentKind::Dirichlet { .. } => {
                                let s: f64 = value.iter().sum();
                                value.iter().map(|v| v / s).collect()
                            }
                            _ => value,
                        };
                        inp.kind.fixed_moments(&value).unwrap()
                    })
                    .collect()
            })
            .collect();
        let refs: Vec<&[f64]> = fixed.iter().map(|v| v.as_slice()).collect();
        let mut ph = vec![0.0; n];
        let a_prior = dist.prior(&refs, &mut ph);
        let mut tmp = vec![0.0; n];
        let a_direct = dist.moments(&ph, &mut tmp).unwrap();
        assert!(
            (a_prior - a_direct).abs() < 1e-9 * (1.0 + a_direct.abs()),
            "{}: ⟨A⟩ with point-mass parents {a_prior} ≠ A(φ) {a_direct}",
            D::NAME
        );
        // Law 4: sample averages of u(x) match the moments (5 standard errors).
        let draws = 20_000;
        let mut x = vec![0.0; dist.value_len()];
        let mut ux = vec![0.0; n];
        let mut sum = vec![0.0; n];
        let mut sum_sq = vec![0.0; n];
        for _ in 0..draws {
            dist.sample(&phi, &mut rng, &mut x);
            dist.observe_value(&x, &mut ux).unwrap();
            for i in 0..n {
                sum[i] += ux[i];
                sum_sq[i] += ux[i] * ux[i];
            }
        }
        for i in 0..n {
            let mean = sum[i] / draws as f64;
            let sd = (sum_sq[i] / draws as f64 - mean * mean).max(0.0).sqrt();
            let tol = 5.0 * sd / (draws as f64).sqrt() + 1e-9;
            assert!(
                (mean - u[i]).abs() < tol,
                "{}: sample mean of u[{i}] = {mean}, moment {} (tol {tol})",
                D::NAME,
                u[i]
            );
        }
    }
}

#[test]
fn every_distribution_obeys_the_laws() {
    let mut seed = 1;
    for_each_test_instance(|dist| {
        for _ in 0..3 {
            seed += 1;
            dist.visit(CheckLaws(seed));
        }
    });
}

/// Law 6: a family that declares every finite value valid (so that observed data are checked in
/// bulk for NaN and ±∞ only) accepts finite values of any sign and size, subnormal ones included,
/// and refuses NaN and ±∞ in any position; a family that does not declare it refuses some finite
/// value or value length's worth of them (else it should declare it).
struct CheckFiniteValues(u64);
impl DistVisitor for CheckFiniteValues {
    type Output = ();
    fn visit<D: ExpFamily>(self, dist: &D) {
        use rand::Rng as _;
        let mut rng = Rng::seed_from_u64(self.0);
        let (vlen, len) = (dist.value_len(), dist.kind().len());
        let mut u = vec![0.0; len];
        let specials = [
            0.0, -0.0, 1e300, -1e300, 5e-324, -2.5e-310, -3.5, 0.5, 7.0, 2.0,
        ];
        let finite: Vec<Vec<f64>> = (0..40)
            .map(|t| {
                (0..vlen)
                    .map(|i| {
                        if t < specials.len() {
                            specials[(t + i) % specials.len()]
                        } else {
                            rng.random_range(-1e6..1e6)
                        }
                    })
                    .collect()
            })
            .collect();
        let all_accepted = finite.iter().all(|x| dist.observe_value(x, &mut u).is_ok());
        assert_eq!(
            all_accepted,
            dist.finite_values_are_valid(),
            "{}: finite_values_are_valid says {}, observe accepts all finite values: {}",
            D::NAME,
            dist.finite_values_are_valid(),
            all_accepted
        );
        if dist.finite_values_are_valid() {
            for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                for i in 0..vlen {
                    let mut x = finite[11].clone();
                    x[i] = bad;
                    assert!(
                        dist.observe_value(&x, &mut u).is_err(),
                        "{}: {bad} at {i}",
                        D::NAME
                    );
                }
            }
        }
    }
}

#[test]
fn families_that_accept_every_finite_value_say_so() {
    let mut seed = 100;
    for_each_test_instance(|dist| {
        seed += 1;
        dist.visit(CheckFiniteValues(seed));
    });
}

/// Law 5, the family's declaration: its usual parameters are the ones its spec names, in order
/// and finite inside the domain; its slots, parent slots and their inputs agree; names and
/// aliases are unique (within the family for slots, across the registry for families).
struct CheckSpec(u64);
impl DistVisitor for CheckSpec {
    type Output = ();
    fn visit<D: ExpFamily>(self, dist: &D) {
        let mut rng = Rng::seed_from_u64(self.0);
        let spec = &D::SPEC;
        assert_eq!(D::NAME, spec.name);
        let phi = dist.random_phi(&mut rng);
        let names: Vec<&str> = dist.usual_params(&phi).iter().map(|(n, _)| *n).collect();
        assert_eq!(names, spec.params, "{}: usual parameters", D::NAME);
        for (n, p) in dist.usual_params(&phi) {
            let values: Vec<f64> = match p {
                super::Param::Scalar(x) => vec![x],
                super::Param::Vector(v) => v,
                super::Param::Matrix(m) => m.concat(),
            };
            assert!(values.iter().all(|v| v.is_finite()), "{}.{n}", D::NAME);
        }
        assert!(dist.free_params() >= 1, "{}", D::NAME);
        assert!(dist.free_params() <= dist.kind().len(), "{}", D::NAME);
        // Every core parent slot is a slot of the spec that takes a variable, in order; a family
        // may hold a leading slot that also takes a variable as a constant (the Gamma's shape,
        // whose random form is another family).
        let parents = spec.parent_slots();
        assert!(parents.ends_with(D::SLOTS), "{}", D::NAME);
        assert!(
            parents[..parents.len() - D::SLOTS.len()]
                .iter()
                .all(|s| s.takes_constant()),
            "{}",
            D::NAME
        );
        assert!(D::SLOTS.iter().all(|s| s.takes_variable()), "{}", D::NAME);
        let mut all: Vec<&str> = spec
            .slots
            .iter()
            .flat_map(|s| std::iter::once(s.name).chain(s.aliases.iter().copied()))
            .collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "{}: a slot name or alias repeats", D::NAME);
        for s in spec.slots {
            assert!(
                s.takes_constant() || s.takes_variable(),
                "{}.{}",
                D::NAME,
                s.name
            );
        }
    }
}

#[test]
fn every_family_declares_a_consistent_spec() {
    let mut seed = 100;
    for_each_test_instance(|dist| {
        seed += 1;
        dist.visit(CheckSpec(seed));
    });
    let mut names: Vec<&str> = super::FAMILIES
        .iter()
        .flat_map(|f| std::iter::once(f.name).chain(f.aliases.iter().copied()))
        .collect();
    let n = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), n, "a family name or alias repeats");
}

/// Law 6, random starts: a family that centres a q on a draw ([`ExpFamily::centred_at`]) gives
/// natural parameters in its domain (moments and A finite, own term finite) whose mean is the
/// draw: a location family (the Gaussians) keeps the spread, so the centred q's entropy equals
/// that of the q it was centred from; the scale families keep their shape (Gamma's a,
/// Dirichlet's and Beta's total concentration, Wishart's ν), so the mean is exact; the discrete
/// families give the point mass (Categorical, exactly) or a q within 10⁻⁹ of it (Bernoulli).
struct CheckCentred(u64);
impl DistVisitor for CheckCentred {
    type Output = bool;
    fn visit<D: ExpFamily>(self, dist: &D) -> bool {
        let mut rng = Rng::seed_from_u64(self.0);
        let phi = dist.random_phi(&mut rng);
        let mut x = vec![0.0; dist.value_len()];
        dist.sample(&dist.random_phi(&mut rng), &mut rng, &mut x);
        let mut out = vec![0.0; phi.len()];
        if !dist.centred_at(&phi, &x, &mut out) {
            return false;
        }
        let mut u = vec![0.0; dist.kind().len()];
        let a = dist.moments(&out, &mut u).expect("centred φ in the domain");
        let own = dist.own_term(&out, &u, a);
        assert!(
            a.is_finite() && own.is_finite(),
            "{}: A {a}, own term {own}",
            D::NAME
        );
        // The mean of the value under the centred q, against the draw.
        let (mean, want, tol): (Vec<f64>, Vec<f64>, f64) = match dist.kind() {
            MomentKind::Categorical { k } => {
                assert!(own.abs() <= 1e-12, "{}: point mass entropy {own}", D::NAME);
                let onehot = (0..k).map(|c| f64::from(u8::from(c == x[0] as usize)));
                (u.clone(), onehot.collect(), 0.0)
            }
            MomentKind::Dirichlet { .. } => {
                let total: f64 = out.iter().map(|v| v + 1.0).sum();
                let mean = out.iter().map(|v| (v + 1.0) / total).collect();
                let want = if x.len() == 1 {
                    vec![x[0], 1.0 - x[0]]
                } else {
                    x.clone()
                };
                (mean, want, 1e-9)
            }
            _ if D::NAME == "Bernoulli" => (u.clone(), x.clone(), 2e-9),
            _ => (u.clone(), x.clone(), 1e-9),
        };
        for (i, (m, v)) in mean.iter().zip(&want).enumerate() {
            assert!(
                (m - v).abs() <= tol * (1.0 + v.abs()),
                "{} mean[{i}]: {m} against the draw {v}",
                D::NAME
            );
        }
        if matches!(D::NAME, "Gaussian" | "GaussianARD" | "MvGaussian") {
            let (h0, h1) = (dist.entropy(&phi).unwrap(), dist.entropy(&out).unwrap());
            assert!(
                (h0 - h1).abs() <= 1e-9 * (1.0 + h0.abs()),
                "{}: {h0} vs {h1}",
                D::NAME
            );
        }
        true
    }
}

#[test]
fn centred_random_starts_have_the_draw_as_mean_and_the_prior_spread() {
    let (mut seed, mut centred) = (500, Vec::new());
    for_each_test_instance(|dist| {
        seed += 1;
        if dist.visit(CheckCentred(seed)) {
            centred.push(dist.name());
        }
    });
    // The families that centre (a random start of any other keeps its prior q: `init.rs`); a
    // new family that should is added here.
    for f in [
        "Gaussian",
        "GaussianARD",
        "MvGaussian",
        "Categorical",
        "Bernoulli",
        "Gamma",
        "Exponential",
        "Beta",
        "Dirichlet",
        "Wishart",
    ] {
        assert!(centred.contains(&f), "{f} does not centre: {centred:?}");
    }
}
