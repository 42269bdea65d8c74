//! Draws of the importance-sampled families given their parents' draws, pinned to the bits
//! they had when the engine named the families itself (before `ExpFamily::draw_given_parents`):
//! Student-t values at the drawn mean, a truncated prior and a mixture prior drawn from
//! themselves, in ancestral sampling and in the predictive's conditional draws.

use crate::dist::{GaussianMixture2, Sampling, StudentT, TruncatedGaussian};
use crate::engine::Vmp;
use crate::prelude::*;

/// x[K] ~ N(m, 1/2) read by Student-t values y[K, N] (two of six missing), a truncated w read
/// by a[N] and a mixture-prior v read by b[N]. Returns the model and y, w, v.
fn model() -> (Vmp, [NodeId; 3]) {
    let sampling = Sampling::default();
    let mut g = Graph::new();
    let k = g.plate("K", 2);
    let n = g.plate("N", 3);
    let m = g.add("m", Gaussian, &[], [c(0.0), c(1.0)]).unwrap();
    let x = g.add("x", Gaussian, &[k], [p(m), c(2.0)]).unwrap();
    let t = StudentT {
        nu: 3.0,
        scale: 0.7,
        sampling,
    };
    let y = g.add("y", t, &[k, n], [p(x)]).unwrap();
    let seen = [true, true, false, true, false, true];
    g.observe_masked(y, &[0.4, 1.9, 0.0, -0.3, 0.0, 1.2], Some(&seen))
        .unwrap();
    let tg = TruncatedGaussian {
        mean: 0.0,
        precision: 1.0,
        lower: 0.5,
        upper: 3.0,
        sampling,
    };
    let w = g.add("w", tg, &[], []).unwrap();
    let a = g.add("a", Gaussian, &[n], [p(w), c(1.0)]).unwrap();
    g.observe(a, &[0.7, 1.4, 0.2]).unwrap();
    let mix = GaussianMixture2 {
        weight: 0.4,
        means: [-1.0, 2.0],
        precisions: [2.0, 1.0],
        sampling,
    };
    let v = g.add("v", mix, &[], []).unwrap();
    let b = g.add("b", Gaussian, &[n], [p(v), c(0.5)]).unwrap();
    g.observe(b, &[-0.5, 1.5, 0.9]).unwrap();
    (g.compile().unwrap(), [y, w, v])
}

/// Ancestral sampling: every node's draw, bit for bit.
#[test]
fn ancestral_draws_keep_their_bits() {
    let (mut vmp, _) = model();
    let draws = vmp.sample_prior(11).unwrap();
    let got: Vec<(String, Vec<f64>)> = vmp
        .names()
        .into_iter()
        .map(String::from)
        .zip(draws)
        .collect();
    let want: Vec<(&str, Vec<f64>)> = vec![
        ("m", vec![1.1047800737944227]),
        ("x", vec![1.7091313777786934, 2.4790491293760573]),
        (
            "y",
            vec![
                2.6680287505088525,
                0.3369655194148742,
                1.5549298974704273,
                2.1380488120415837,
                6.281105227666588,
                3.4173794711381023,
            ],
        ),
        ("w", vec![0.9661642254752316]),
        (
            "a",
            vec![2.5527848812205725, 1.4095917520982368, 2.2845908105574297],
        ),
        ("v", vec![1.9661922421510944]),
        (
            "b",
            vec![1.3449878428093087, 1.0021852579109223, 0.700323231678379],
        ),
    ];
    let want: Vec<(String, Vec<f64>)> = want
        .into_iter()
        .map(|(name, x)| (name.to_string(), x))
        .collect();
    assert_eq!(got, want);
}

/// The predictive from the start's q: y's missing values given the drawn x, and w and v as new
/// rows' latent values (`ancestral`: drawn from their priors), three draws, bit for bit.
#[test]
fn predictive_draws_keep_their_bits() {
    let (mut vmp, [y, w, v]) = model();
    vmp.initialize(3).unwrap();
    let mut ancestral = vec![false; vmp.names().len()];
    ancestral[w.index()] = true;
    ancestral[v.index()] = true;
    let got = vmp.sample_predictive(5, 3, &[y, w, v], &ancestral).unwrap();
    let want: Vec<Vec<f64>> = vec![
        vec![
            0.4,
            1.9,
            -0.2661604134092238,
            -0.3,
            -1.0207750232857506,
            1.2,
            0.4,
            1.9,
            1.8588523729141804,
            -0.3,
            1.1460144854104244,
            1.2,
            0.4,
            1.9,
            -0.026584660723441345,
            -0.3,
            1.7362064785044937,
            1.2,
        ],
        vec![1.8800546260611695, 1.30271919949379, 0.6156972521925167],
        vec![3.50595451207011, 0.6745785914639952, -1.1529570228076143],
    ];
    assert_eq!(got, want);
}
