//! The non-conjugate families' part of the monotone-bound property test's random models
//! (`monotone_bound::random_model`): Bernoulli and Binomial leaves by quadrature
//! (`BernoulliLogitQuad`, `BinomialLogitQuad`) and log-link Poisson leaves (`PoissonLog`) whose
//! parameter is a dot product of data with a latent Gaussian vector plus a latent offset, and a
//! mixture of `PoissonLog` leaves over Gaussian per-component log-rates, and Categorical leaves
//! with softmax log-odds W x by quadrature (`CategoricalSoftmaxQuad`): one observed, one a
//! latent mixture index. Their Gaussian parents
//! take the engine's checked-step update (`engine::noncj`), which the strict run checks after
//! every update.

use occam_core::prelude::*;
use rand::Rng as _;

/// Adds the non-conjugate leaves over plate `n` (`nn` elements), with the mixture over the index
/// `z` (components `kp`, `k` of them) and the offset `mu0`, a scalar Gaussian.
#[allow(clippy::too_many_arguments)]
pub fn add_noncj_leaves(
    g: &mut Graph,
    rng: &mut occam_core::Rng,
    n: PlateId,
    nn: usize,
    z: NodeId,
    kp: PlateId,
    k: usize,
    mu0: NodeId,
) {
    let mut draw = |len: usize, lo: f64, hi: f64| -> Vec<f64> {
        (0..len)
            .map(|_| lo + (hi - lo) * rng.random::<f64>())
            .collect()
    };
    let x = g
        .constant(
            "XNC",
            MomentKind::Gaussian { d: 2 },
            &[n],
            &draw(2 * nn, -1.5, 1.5),
        )
        .unwrap();
    let w = g
        .add(
            "wnc",
            MvGaussian { d: 2 },
            &[],
            [cv(vec![0.0, 0.0]), cv(vec![1.0, 0.3, 0.3, 1.0])],
        )
        .unwrap();
    let f = g
        .deterministic("fnc", Dot { d: 2 }, &[n], [p(x), p(w)])
        .unwrap();
    let eta = g
        .deterministic("etanc", Sum { n: 2, d: 1 }, &[n], [p(f), p(mu0)])
        .unwrap();
    let yq = g.add("ynq", BernoulliLogitQuad, &[n], [p(eta)]).unwrap();
    let ys: Vec<f64> = draw(nn, 0.0, 1.0).iter().map(|u| u.round()).collect();
    let mask: Vec<bool> = draw(nn, 0.0, 1.0).iter().map(|u| *u > 0.2).collect();
    g.observe_masked(yq, &ys, Some(&mask)).unwrap();
    let yb = g
        .add("ybq", BinomialLogitQuad { trials: 3 }, &[n], [p(eta)])
        .unwrap();
    let counts: Vec<f64> = draw(nn, 0.0, 3.999).iter().map(|u| u.floor()).collect();
    g.observe(yb, &counts).unwrap();
    let yp = g.add("ypl", PoissonLog, &[n], [p(eta)]).unwrap();
    let counts: Vec<f64> = draw(nn, 0.0, 6.0).iter().map(|u| u.floor()).collect();
    g.observe(yp, &counts).unwrap();
    // A mixture of log-link Poisson leaves: per-component Gaussian log-rates.
    let mp = g.add("mpl", Gaussian, &[kp], [p(mu0), c(2.0)]).unwrap();
    let ym = g
        .add_mixture("ympl", PoissonLog, &[n], &[(z, kp)], [p(mp)])
        .unwrap();
    let counts: Vec<f64> = draw(nn, 0.0, 8.0).iter().map(|u| u.floor()).collect();
    g.observe(ym, &counts).unwrap();
    // Multinomial regression by quadrature: logits W x_n with W's rows over the components
    // (`CategoricalSoftmaxQuad`), an observed leaf and a latent index of a Gaussian mixture.
    let ws = g
        .add(
            "wsq",
            MvGaussian { d: 2 },
            &[kp],
            [cv(vec![0.0, 0.0]), cv(vec![1.0, 0.2, 0.2, 1.0])],
        )
        .unwrap();
    let es = g
        .deterministic("esq", MatVec { rows: k, cols: 2 }, &[n], [p(ws), p(x)])
        .unwrap();
    let cs = g
        .add("csq", CategoricalSoftmaxQuad::new(k), &[n], [p(es)])
        .unwrap();
    let labels: Vec<f64> = draw(nn, 0.0, k as f64 - 1e-9)
        .iter()
        .map(|u| u.floor())
        .collect();
    g.observe(cs, &labels).unwrap();
    let zs = g
        .add("zsq", CategoricalSoftmaxQuad::new(k), &[n], [p(es)])
        .unwrap();
    let xs = g
        .add_mixture("xsq", Gaussian, &[n], &[(zs, kp)], [p(mp), c(1.0)])
        .unwrap();
    g.observe(xs, &draw(nn, -3.0, 3.0)).unwrap();
}
