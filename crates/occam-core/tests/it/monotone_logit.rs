//! The logit families' part of the monotone-bound property test's random models
//! (`monotone_bound::random_model`): Bernoulli and Binomial leaves whose log-odds are a dot
//! product of data with a latent Gaussian vector plus a latent offset, a mixture of
//! BernoulliLogit leaves over Gaussian per-component log-odds, and Categorical leaves with
//! softmax log-odds (Böhning's bound): one observed, one a latent mixture index.

use occam_core::prelude::*;
use rand::Rng as _;

/// Adds the logit leaves over plate `n` (`nn` elements), with the mixture over the index `z`
/// (components `kp`, `k` of them) and the offset `mu0`, a scalar Gaussian.
#[allow(clippy::too_many_arguments)]
pub fn add_logit_leaves(
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
            "XLL",
            MomentKind::Gaussian { d: 2 },
            &[n],
            &draw(2 * nn, -2.0, 2.0),
        )
        .unwrap();
    let w = g
        .add(
            "wll",
            MvGaussian { d: 2 },
            &[],
            [cv(vec![0.0, 0.0]), cv(vec![1.0, 0.2, 0.2, 1.0])],
        )
        .unwrap();
    let f = g
        .deterministic("fll", Dot { d: 2 }, &[n], [p(x), p(w)])
        .unwrap();
    let eta = g
        .deterministic("etall", Sum { n: 2, d: 1 }, &[n], [p(f), p(mu0)])
        .unwrap();
    let yl = g.add("yll", BernoulliLogit, &[n], [p(eta)]).unwrap();
    let ys: Vec<f64> = draw(nn, 0.0, 1.0).iter().map(|u| u.round()).collect();
    let mask: Vec<bool> = draw(nn, 0.0, 1.0).iter().map(|u| *u > 0.2).collect();
    g.observe_masked(yl, &ys, Some(&mask)).unwrap();
    let yb = g
        .add("ybl", BinomialLogit { trials: 4 }, &[n], [p(eta)])
        .unwrap();
    let counts: Vec<f64> = draw(nn, 0.0, 4.999).iter().map(|u| u.floor()).collect();
    g.observe(yb, &counts).unwrap();
    // A mixture of logit leaves: per-component Gaussian log-odds.
    let tl = g.add("taull", Gamma { shape: 2.0 }, &[], [c(1.0)]).unwrap();
    let ml = g.add("mll", Gaussian, &[kp], [p(mu0), p(tl)]).unwrap();
    let ym = g
        .add_mixture("yml", BernoulliLogit, &[n], &[(z, kp)], [p(ml)])
        .unwrap();
    let ys: Vec<f64> = draw(nn, 0.0, 1.0).iter().map(|u| u.round()).collect();
    g.observe(ym, &ys).unwrap();
    // Softmax log-odds over the K components: an observed leaf and a latent mixture index.
    let mut eye = vec![0.0; k * k];
    (0..k).for_each(|i| eye[i * k + i] = 0.5);
    let gs = g
        .add("gsl", MvGaussian { d: k }, &[], [cv(vec![0.0; k]), cv(eye)])
        .unwrap();
    let cs = g
        .add("csl", CategoricalSoftmax { k }, &[n], [p(gs)])
        .unwrap();
    let labels: Vec<f64> = draw(nn, 0.0, k as f64 - 1e-9)
        .iter()
        .map(|u| u.floor())
        .collect();
    g.observe(cs, &labels).unwrap();
    let zs = g
        .add("zsl", CategoricalSoftmax { k }, &[n], [p(gs)])
        .unwrap();
    let xs = g
        .add_mixture("xsl", Gaussian, &[n], &[(zs, kp)], [p(ml), c(1.0)])
        .unwrap();
    g.observe(xs, &draw(nn, -3.0, 3.0)).unwrap();
}
