//! The Gamma-shape families' part of the monotone-bound property test's random models
//! (`monotone_bound::random_model`), Winn Example 2.1: a shape variable a (`ShapeGamma`, its
//! q(a) by 1-D quadrature) under a Gamma rate parent, read by observed Gamma leaves with a
//! random shape and a latent rate (`GammaRandomShape`); and a Student-t written as a scale
//! mixture, λ_n ~ Gamma(ν/2, ν/2) latent (`GammaTiedShape`, shape ν scaled by ½) as the
//! precisions of observed Gaussian leaves around the offset `mu0`.

use occam_core::prelude::*;
use rand::Rng as _;

/// Adds the Gamma-shape leaves over plate `n` (`nn` elements), with `b` a Gamma variable (the
/// shape variable's rate) and `mu0` a scalar Gaussian (the Student-t leaves' location).
pub fn add_shape_leaves(
    g: &mut Graph,
    rng: &mut occam_core::Rng,
    n: PlateId,
    nn: usize,
    b: NodeId,
    mu0: NodeId,
) {
    let mut draw = |len: usize, lo: f64, hi: f64| -> Vec<f64> {
        (0..len)
            .map(|_| lo + (hi - lo) * rng.random::<f64>())
            .collect()
    };
    let alpha = draw(2, 1.0, 4.0);
    // Random shape, independent rate: x_n ~ Gamma(a, r), a ~ Gamma(α, b), r ~ Gamma(2, 1).
    let a = g
        .add(
            "ash",
            ShapeGamma {
                alpha: alpha[0],
                scale: 1.0,
            },
            &[],
            [p(b)],
        )
        .unwrap();
    let r = g.add("rsh", Gamma { shape: 2.0 }, &[], [c(1.0)]).unwrap();
    let x = g.add("xsh", GammaRandomShape, &[n], [p(a), p(r)]).unwrap();
    let xs = draw(nn, 0.2, 4.0);
    let mask: Vec<bool> = draw(nn, 0.0, 1.0).iter().map(|u| *u > 0.2).collect();
    g.observe_masked(x, &xs, Some(&mask)).unwrap();
    // Student-t by its scale mixture: ν ~ Gamma(α, 1), λ_n ~ Gamma(ν/2, ν/2), y_n ~ N(mu0, λ_n).
    let nu = g
        .add(
            "nush",
            ShapeGamma {
                alpha: alpha[1],
                scale: 0.5,
            },
            &[],
            [c(1.0)],
        )
        .unwrap();
    let lam = g
        .add("lamsh", GammaTiedShape { rate_factor: 1.0 }, &[n], [p(nu)])
        .unwrap();
    let y = g.add("ysh", Gaussian, &[n], [p(mu0), p(lam)]).unwrap();
    g.observe(y, &draw(nn, -3.0, 3.0)).unwrap();
}
