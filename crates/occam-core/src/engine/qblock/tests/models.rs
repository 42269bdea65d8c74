//! One small model per kind of block, for the contract test (`super`): each with latent parents
//! outside its blocks, so every block sends messages to a node with moments of its own.

use crate::prelude::*;
use rand::{Rng as _, SeedableRng};

/// Draws `n` values uniform on [lo, hi) from `seed`.
fn uniform(n: usize, lo: f64, hi: f64, seed: u64) -> Vec<f64> {
    let mut rng = crate::Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| lo + (hi - lo) * rng.random::<f64>())
        .collect()
}

/// x[N] ~ N(μ, τ⁻¹) observed, μ ~ N(0.5, 2⁻¹), τ ~ Gamma(2, 1); and w[N] ~ Gamma(3, ρ) observed with
/// ρ ~ Gamma(1.5, 0.5): factorised Gaussian and Gamma nodes.
pub(super) fn factorised() -> Graph {
    let mut g = Graph::new();
    let n = g.plate("N", 12);
    let mu = g.add("mu", Gaussian, &[], [c(0.5), c(2.0)]).unwrap();
    let tau = g.add("tau", Gamma { shape: 2.0 }, &[], [c(1.0)]).unwrap();
    let x = g.add("x", Gaussian, &[n], [p(mu), p(tau)]).unwrap();
    g.observe(x, &uniform(12, -1.0, 3.0, 1)).unwrap();
    let rho = g.add("rho", Gamma { shape: 1.5 }, &[], [c(0.5)]).unwrap();
    let w = g.add("w", Gamma { shape: 3.0 }, &[n], [p(rho)]).unwrap();
    g.observe(w, &uniform(12, 0.5, 4.0, 2)).unwrap();
    g
}

/// A Gaussian mixture x[N] ~ N(μ_z, τ_z⁻¹) with z[N] ~ Cat(α), α ~ Dir: z takes the fused path.
pub(super) fn mixture() -> Graph {
    let (n, k) = (30, 3);
    let mut g = Graph::new();
    let np = g.plate("N", n);
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
    let z = g.add("z", Categorical { k }, &[np], [p(alpha)]).unwrap();
    let mu = g.add("mu", Gaussian, &[kp], [c(0.0), c(0.05)]).unwrap();
    let tau = g.add("tau", Gamma { shape: 2.0 }, &[kp], [c(1.0)]).unwrap();
    let x = g
        .add_mixture("x", Gaussian, &[np], &[(z, kp)], [p(mu), p(tau)])
        .unwrap();
    let noise = uniform(n, -0.5, 0.5, 3);
    let xs: Vec<f64> = (0..n).map(|i| 4.0 * (i % k) as f64 + noise[i]).collect();
    g.observe(x, &xs).unwrap();
    g.initialize(z, Init::Random);
    g
}

/// Probabilistic PCA through the linear-Gaussian kernel: with `shared`, X keeps one covariance
/// (complete data, one precision); without, y has missing entries and a precision per row.
pub(super) fn pca(shared: bool) -> Graph {
    use super::super::super::linear::tests::{pca, Prec};
    if shared {
        pca(21, Prec::Shared, false, 0.0, false)
    } else {
        pca(21, Prec::PerRow, false, 0.3, false)
    }
}

/// An HMM: z a discrete chain (K = 2, T = 5) with p0 ~ Dir and transition rows A ~ Dir, emitting
/// x_t ~ N(μ_z, 4); with `fixed`, p0, A and μ are constants (then ln p(x) is the bound's optimum).
pub(super) fn hmm(fixed: bool) -> Graph {
    let (k, steps) = (2, 5);
    let mut g = Graph::new();
    let t = g.plate("T", steps);
    let kp = g.plate("K", k);
    let chain = MarkovChain {
        k,
        time: t,
        lengths: None,
    };
    let (p0, a, mu) = if fixed {
        (
            cv(vec![0.6, 0.4]),
            cv(vec![0.8, 0.2, 0.3, 0.7]),
            p(
                g.constant("mu", MomentKind::Gaussian { d: 1 }, &[kp], &[-1.0, 1.0])
                    .unwrap(),
            ),
        )
    } else {
        let p0 = g
            .add(
                "p0",
                Dirichlet {
                    concentration: vec![1.0; k],
                },
                &[],
                [],
            )
            .unwrap();
        let a = g
            .add(
                "A",
                Dirichlet {
                    concentration: vec![2.0, 1.0],
                },
                &[kp],
                [],
            )
            .unwrap();
        let mu = g.add("mu", Gaussian, &[kp], [c(0.0), c(0.5)]).unwrap();
        (p(p0), p(a), p(mu))
    };
    let z = g.markov_chain("z", chain, &[], [p0, a]).unwrap();
    let x = g
        .add_mixture("x", Gaussian, &[t], &[(z, kp)], [mu, c(4.0)])
        .unwrap();
    g.observe(x, &[-1.1, -0.9, 1.2, 0.8, -1.0]).unwrap();
    g
}

/// The data of [`hmm`]'s fixed model: (p0, A, μ, precision, x).
pub(super) const HMM: ([f64; 2], [f64; 4], [f64; 2], f64, [f64; 5]) = (
    [0.6, 0.4],
    [0.8, 0.2, 0.3, 0.7],
    [-1.0, 1.0],
    4.0,
    [-1.1, -0.9, 1.2, 0.8, -1.0],
);

/// A linear dynamical system: x a Gaussian chain (D = 1, T = 4) observed through y_t ~ N(x_t, r⁻¹);
/// with `fixed`, x_t = a x_{t−1} + N(0, τ⁻¹) with constants (see [`LDS`]), else a ~ N and τ ~ Gamma.
pub(super) fn lds(fixed: bool) -> Graph {
    let (m0, lam0, a, tau, r, y) = LDS;
    let mut g = Graph::new();
    let t = g.plate("T", y.len());
    let rows = g.plate("R", 1);
    let chain = GaussianMarkovChain {
        d: 1,
        time: t,
        lengths: None,
    };
    let (an, taun) = if fixed {
        (cv(vec![a]), cv(vec![tau]))
    } else {
        let an = g
            .add(
                "a",
                MvGaussian { d: 1 },
                &[rows],
                [cv(vec![0.5]), cv(vec![2.0])],
            )
            .unwrap();
        let taun = g
            .add("tau", Gamma { shape: 2.0 }, &[rows], [c(1.0)])
            .unwrap();
        (p(an), p(taun))
    };
    let x = g
        .gaussian_markov_chain("x", chain, &[], [cv(vec![m0]), cv(vec![lam0]), an, taun])
        .unwrap();
    let yn = g
        .add("y", MvGaussian { d: 1 }, &[t], [p(x), cv(vec![r])])
        .unwrap();
    g.observe(yn, &y).unwrap();
    g
}

/// [`lds`]'s constants: (m0, λ0, a, τ, r, y).
pub(super) const LDS: (f64, f64, f64, f64, f64, [f64; 4]) =
    (0.2, 2.0, 0.9, 3.0, 5.0, [0.3, 0.1, -0.4, 0.5]);

/// A tree block {a, b}: a ~ Cat(0.3, 0.7), b | a from the table `tb`, observed x | b from `tx`; with
/// `fixed`, tb is a constant (then ln p(x) is the bound's optimum), else tb's rows ~ Dir.
pub(super) fn tree(fixed: bool) -> Graph {
    let mut g = Graph::new();
    let two = g.plate("two", 2);
    let a = g
        .add("a", Categorical { k: 2 }, &[], [cv(vec![0.3, 0.7])])
        .unwrap();
    let dir = MomentKind::Dirichlet { k: 2 };
    let tb = if fixed {
        p(g.constant("tb", dir, &[two], &TREE.0).unwrap())
    } else {
        p(g.add(
            "tb",
            Dirichlet {
                concentration: vec![2.0, 1.0],
            },
            &[two],
            [],
        )
        .unwrap())
    };
    let tx = g
        .constant("tx", MomentKind::Dirichlet { k: 3 }, &[two], &TREE.1)
        .unwrap();
    let b = g
        .add_mixture("b", Categorical { k: 2 }, &[], &[(a, two)], [tb])
        .unwrap();
    let x = g
        .add_mixture("x", Categorical { k: 3 }, &[], &[(b, two)], [p(tx)])
        .unwrap();
    g.observe(x, &[2.0]).unwrap();
    g.joint_q(&[a, b]).unwrap();
    g
}

/// [`tree`]'s tables: tb (rows: p(b | a)), tx (rows: p(x | b)).
pub(super) const TREE: ([f64; 4], [f64; 6]) =
    ([0.9, 0.1, 0.2, 0.8], [0.6, 0.3, 0.1, 0.1, 0.2, 0.7]);

/// Bayesian ICA (Lawrence §6.5): t[N, P] ~ N(w_pᵀ x_n, β⁻¹), x_n = concat(s_1n, s_2n) joint in q
/// (a Gaussian q-block), each source a mixture s_jn ~ N(0, g_j[z_jn]⁻¹) with z_jn ~ Cat(π_j),
/// π_j ~ Dir(1, 1), g_j[K] ~ Gamma(2, 1); W[P] ~ GaussianARD(0, α), α[I] ~ Gamma(1.5, 0.7),
/// β ~ Gamma(2, 1).
pub(super) fn ica() -> Graph {
    let (n, pn, i, k) = (15, 3, 2, 2);
    let mut g = Graph::new();
    let (np, pp, ip, kp) = (
        g.plate("N", n),
        g.plate("P", pn),
        g.plate("I", i),
        g.plate("K", k),
    );
    let alpha = g
        .add("alpha", Gamma { shape: 1.5 }, &[ip], [c(0.7)])
        .unwrap();
    let w = g
        .add("W", GaussianArd { d: i }, &[pp], [c(0.0), p(alpha)])
        .unwrap();
    let mut sources = Vec::new();
    for j in 0..i {
        let pi = g
            .add(
                &format!("pi{j}"),
                Dirichlet {
                    concentration: vec![1.0; k],
                },
                &[],
                [],
            )
            .unwrap();
        let prec = g
            .add(&format!("g{j}"), Gamma { shape: 2.0 }, &[kp], [c(1.0)])
            .unwrap();
        let z = g
            .add(&format!("z{j}"), Categorical { k }, &[np], [p(pi)])
            .unwrap();
        g.initialize(z, Init::Random);
        let s = g
            .add_mixture(
                &format!("s{j}"),
                Gaussian,
                &[np],
                &[(z, kp)],
                [c(0.0), p(prec)],
            )
            .unwrap();
        sources.push(s);
    }
    let x = g
        .deterministic("x", Concat { n: i }, &[np], sources.iter().map(|&s| p(s)))
        .unwrap();
    let f = g
        .deterministic("f", Dot { d: i }, &[np, pp], [p(w), p(x)])
        .unwrap();
    let beta = g.add("beta", Gamma { shape: 2.0 }, &[], [c(1.0)]).unwrap();
    let t = g.add("t", Gaussian, &[np, pp], [p(f), p(beta)]).unwrap();
    g.observe(t, &uniform(n * pn, -2.0, 2.0, 7)).unwrap();
    g.joint_q(&sources).unwrap();
    g
}

/// Non-conjugate leaves: t[N] ~ N(μ, τ⁻¹) latent, w ~ N(0, I₂); y[N] ~ Bernoulli(σ(t + Xw)) and
/// k[N] ~ Poisson(e^t), both by their exact expectations (`BernoulliLogitQuad`, `PoissonLog`):
/// t and w take the checked-step block, their parents μ and τ stay factorised.
pub(super) fn noncj() -> Graph {
    let nn = 15;
    let mut g = Graph::new();
    let n = g.plate("N", nn);
    let mu = g.add("mu", Gaussian, &[], [c(0.0), c(1.0)]).unwrap();
    let tau = g.add("tau", Gamma { shape: 2.0 }, &[], [c(1.0)]).unwrap();
    let t = g.add("t", Gaussian, &[n], [p(mu), p(tau)]).unwrap();
    let x = g
        .constant(
            "X",
            MomentKind::Gaussian { d: 2 },
            &[n],
            &uniform(2 * nn, -2.0, 2.0, 7),
        )
        .unwrap();
    let w = g
        .add(
            "w",
            MvGaussian { d: 2 },
            &[],
            [cv(vec![0.0, 0.0]), cv(vec![1.0, 0.0, 0.0, 1.0])],
        )
        .unwrap();
    let f = g
        .deterministic("f", Dot { d: 2 }, &[n], [p(x), p(w)])
        .unwrap();
    let eta = g
        .deterministic("eta", Sum { n: 2, d: 1 }, &[n], [p(t), p(f)])
        .unwrap();
    let y = g.add("y", BernoulliLogitQuad, &[n], [p(eta)]).unwrap();
    let ys: Vec<f64> = uniform(nn, 0.0, 1.0, 8).iter().map(|u| u.round()).collect();
    g.observe(y, &ys).unwrap();
    let k = g.add("k", PoissonLog, &[n], [p(t)]).unwrap();
    let ks: Vec<f64> = uniform(nn, 0.0, 6.0, 9).iter().map(|u| u.floor()).collect();
    g.observe(k, &ks).unwrap();
    g
}

/// A mixture of Bayesian PCA (Winn §3.3): y[N, D] gated by s[N] ~ Cat(π), π ~ Dir(1, 1, 1), over
/// mean[N, K, D] = dot(W[K, D], x[N, K]) + μ[K, D], x_nk ~ N(0, I₂) joint with s_n in q (a gated
/// q-block), W ~ GaussianARD(0, α) with α[Q] ~ Gamma(1.5, 0.7) shared by the components,
/// μ ~ N(0, 0.1⁻¹), τ ~ Gamma(2, 1).
pub(in crate::engine) fn gated() -> Graph {
    let (n, k, q, d) = (14, 3, 2, 3);
    let mut g = Graph::new();
    let (np, kp, qp, dp) = (
        g.plate("N", n),
        g.plate("K", k),
        g.plate("Q", q),
        g.plate("D", d),
    );
    let pi = g
        .add(
            "pi",
            Dirichlet {
                concentration: vec![1.0; k],
            },
            &[],
            [],
        )
        .unwrap();
    let s = g.add("s", Categorical { k }, &[np], [p(pi)]).unwrap();
    g.initialize(s, Init::Random);
    let alpha = g
        .add("alpha", Gamma { shape: 1.5 }, &[qp], [c(0.7)])
        .unwrap();
    let w = g
        .add("W", GaussianArd { d: q }, &[kp, dp], [c(0.0), p(alpha)])
        .unwrap();
    g.initialize(w, Init::Random);
    let x = g
        .add("x", GaussianArd { d: q }, &[np, kp], [c(0.0), c(1.0)])
        .unwrap();
    let f = g
        .deterministic("f", Dot { d: q }, &[np, kp, dp], [p(w), p(x)])
        .unwrap();
    let mu = g.add("mu", Gaussian, &[kp, dp], [c(0.0), c(0.1)]).unwrap();
    g.initialize(mu, Init::Random);
    let mean = g
        .deterministic("mean", Sum { n: 2, d: 1 }, &[np, kp, dp], [p(f), p(mu)])
        .unwrap();
    let tau = g.add("tau", Gamma { shape: 2.0 }, &[], [c(1.0)]).unwrap();
    let y = g
        .add_mixture("y", Gaussian, &[np, dp], &[(s, kp)], [p(mean), p(tau)])
        .unwrap();
    g.observe(y, &uniform(n * d, -2.0, 2.0, 9)).unwrap();
    g.gated_q(s, x).unwrap();
    g
}

/// Importance-sampled nodes (module `sampled`): x[K] ~ N(m, 2⁻¹) read by Student-t values
/// y[K, N] and by Gaussian values z[K] ~ N(x, τ⁻¹), with m ~ N(0, 1) and τ ~ Gamma(2, 1) outside
/// the block; a truncated-Gaussian w and a two-component mixture v, each the mean of observed
/// Gaussians.
pub(super) fn sampled() -> Graph {
    use crate::dist::{GaussianMixture2, Sampling, StudentT, TruncatedGaussian};
    let sampling = Sampling::default();
    let mut g = Graph::new();
    let k = g.plate("K", 2);
    let n = g.plate("N", 5);
    let m = g.add("m", Gaussian, &[], [c(0.0), c(1.0)]).unwrap();
    let tau = g.add("tau", Gamma { shape: 2.0 }, &[], [c(1.0)]).unwrap();
    let x = g.add("x", Gaussian, &[k], [p(m), c(2.0)]).unwrap();
    let t = StudentT {
        nu: 3.0,
        scale: 0.7,
        sampling,
    };
    let y = g.add("y", t, &[k, n], [p(x)]).unwrap();
    g.observe(y, &uniform(10, -1.0, 2.5, 21)).unwrap();
    let z = g.add("z", Gaussian, &[k], [p(x), p(tau)]).unwrap();
    g.observe(z, &[0.3, 1.1]).unwrap();
    let tg = TruncatedGaussian {
        mean: 0.0,
        precision: 1.0,
        lower: 0.5,
        upper: 3.0,
        sampling,
    };
    let w = g.add("w", tg, &[], []).unwrap();
    let a = g.add("a", Gaussian, &[n], [p(w), c(1.0)]).unwrap();
    g.observe(a, &uniform(5, 0.0, 1.5, 22)).unwrap();
    let mix = GaussianMixture2 {
        weight: 0.4,
        means: [-1.0, 2.0],
        precisions: [2.0, 1.0],
        sampling,
    };
    let v = g.add("v", mix, &[], []).unwrap();
    let b = g.add("b", Gaussian, &[n], [p(v), c(0.5)]).unwrap();
    g.observe(b, &uniform(5, -0.5, 1.5, 23)).unwrap();
    g
}

/// Multinomial regression (the softmax q-block): W[K] over 2 ~ N(μ, ½I) with μ ~ N(0, I), logits
/// η_n = W x_n with known x_n, read by two observed Categoricals, one by the exact expectation
/// (`CategoricalSoftmaxQuad`), one by Böhning's bound (`CategoricalSoftmax`) with an intercept,
/// η_n + b, b ~ N(0, I₃): W's q is one Gaussian over its 3 × 2 weights; μ and b stay factorised.
pub(in crate::engine) fn softmax_joint() -> Graph {
    let (nn, k) = (12, 3);
    let mut g = Graph::new();
    let n = g.plate("N", nn);
    let kp = g.plate("K", k);
    let mu = g
        .add(
            "mu",
            MvGaussian { d: 2 },
            &[],
            [cv(vec![0.0, 0.0]), cv(vec![1.0, 0.0, 0.0, 1.0])],
        )
        .unwrap();
    let w = g
        .add(
            "w",
            MvGaussian { d: 2 },
            &[kp],
            [p(mu), cv(vec![2.0, 0.3, 0.3, 2.0])],
        )
        .unwrap();
    let x = g
        .constant(
            "X",
            MomentKind::Gaussian { d: 2 },
            &[n],
            &uniform(2 * nn, -2.0, 2.0, 17),
        )
        .unwrap();
    let eta = g
        .deterministic("eta", MatVec { rows: k, cols: 2 }, &[n], [p(w), p(x)])
        .unwrap();
    let labels = |seed| -> Vec<f64> {
        uniform(nn, 0.0, k as f64 - 1e-9, seed)
            .iter()
            .map(|u| u.floor())
            .collect()
    };
    let cq = g
        .add("cq", CategoricalSoftmaxQuad::new(k), &[n], [p(eta)])
        .unwrap();
    g.observe(cq, &labels(18)).unwrap();
    let b = g
        .add(
            "b",
            MvGaussian { d: k },
            &[],
            [cv(vec![0.0; k]), cv(identity(k))],
        )
        .unwrap();
    let logits = g
        .deterministic("logits", Sum { n: 2, d: k }, &[n], [p(eta), p(b)])
        .unwrap();
    let cb = g
        .add("cb", CategoricalSoftmax { k }, &[n], [p(logits)])
        .unwrap();
    g.observe(cb, &labels(19)).unwrap();
    g
}

/// The k × k identity, row-major.
fn identity(k: usize) -> Vec<f64> {
    (0..k * k)
        .map(|i| f64::from(u8::from(i % (k + 1) == 0)))
        .collect()
}
