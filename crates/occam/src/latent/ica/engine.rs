//! Bayesian ICA as an engine model: the graph of the module docs, with q(x_n) joint over the
//! sources as a Gaussian q-block ([`Graph::joint_q`] over the sources, read as one vector by
//! `concat`), started from a [`Start`] and swept in the order x, z, g, π, μ, W, α, β.

use occam_core::prelude::*;

use super::start::Start;
use super::Priors;
use crate::error::{Error, Result};
use crate::latent::synth::Matrix;

/// The compiled model and the nodes the results are read from.
pub(super) struct Fitted {
    pub vmp: Vmp,
    pub alpha: NodeId,
    pub x: NodeId,
}

/// Per-element [−rate, shape − 1]: a Gamma's natural parameters (`dist::gamma`).
fn gamma_natural(shape: &[f64], rate: &[f64]) -> Vec<f64> {
    shape
        .iter()
        .zip(rate)
        .flat_map(|(a, b)| [-b, a - 1.0])
        .collect()
}

fn build(e: BuildError) -> Error {
    Error::Run(format!("Bayesian ICA: {e}"))
}

/// The model on data `t` (N × P) with `start`'s sources and components, each node started at
/// `start`; and the update order.
pub(super) fn model(t: &Matrix, priors: Priors, start: &Start) -> Result<(Vmp, Vec<NodeId>)> {
    let (n, pn, i, m) = (t.rows, t.cols, start.i, start.m);
    let mut g = Graph::new();
    let (np, pp, ip, kp) = (
        g.plate("N", n),
        g.plate("P", pn),
        g.plate("I", i),
        g.plate("K", m),
    );
    let alpha = g
        .add(
            "alpha",
            Gamma {
                shape: priors.alpha.0,
            },
            &[ip],
            [c(priors.alpha.1)],
        )
        .map_err(build)?;
    g.initialize(
        alpha,
        Init::Natural(gamma_natural(&start.alpha_shape, &start.alpha_rate)),
    );
    let w = g
        .add("W", GaussianArd { d: i }, &[pp], [c(0.0), p(alpha)])
        .map_err(build)?;
    // W starts at the point mass ⟨W⟩: [w_p, w_p w_pᵀ] per row.
    let w_moments: Vec<f64> = start
        .w
        .chunks_exact(i)
        .flat_map(|row| {
            let outer = row.iter().flat_map(|a| row.iter().map(move |b| a * b));
            row.iter().copied().chain(outer).collect::<Vec<_>>()
        })
        .collect();
    g.initialize(w, Init::Moments(w_moments));
    let (mut z, mut prec, mut pi, mut sources) = (vec![], vec![], vec![], vec![]);
    for j in 0..i {
        let pij = g
            .add(
                &format!("pi{j}"),
                Dirichlet {
                    concentration: vec![priors.u0; m],
                },
                &[],
                [],
            )
            .map_err(build)?;
        let u = &start.pi_u[j * m..(j + 1) * m];
        g.initialize(pij, Init::Natural(u.iter().map(|v| v - 1.0).collect()));
        let gj = g
            .add(
                &format!("g{j}"),
                Gamma { shape: priors.g.0 },
                &[kp],
                [c(priors.g.1)],
            )
            .map_err(build)?;
        let r = j * m..(j + 1) * m;
        g.initialize(
            gj,
            Init::Natural(gamma_natural(&start.g_shape[r.clone()], &start.g_rate[r])),
        );
        let zj = g
            .add(&format!("z{j}"), Categorical { k: m }, &[np], [p(pij)])
            .map_err(build)?;
        g.initialize(zj, Init::Moments(vec![1.0 / m as f64; n * m]));
        let sj = g
            .add_mixture(
                &format!("s{j}"),
                Gaussian,
                &[np],
                &[(zj, kp)],
                [c(0.0), p(gj)],
            )
            .map_err(build)?;
        z.push(zj);
        prec.push(gj);
        pi.push(pij);
        sources.push(sj);
    }
    let x = g
        .deterministic("x", Concat { n: i }, &[np], sources.iter().map(|&s| p(s)))
        .map_err(build)?;
    let f = g
        .deterministic("f", Dot { d: i }, &[np, pp], [p(w), p(x)])
        .map_err(build)?;
    let mu = g
        .add("mu", Gaussian, &[pp], [c(0.0), c(priors.tau)])
        .map_err(build)?;
    g.initialize(
        mu,
        Init::Moments(start.mu.iter().flat_map(|v| [*v, v * v]).collect()),
    );
    let mean = g
        .deterministic("mean", Sum { n: 2, d: 1 }, &[np, pp], [p(f), p(mu)])
        .map_err(build)?;
    let beta = g
        .add(
            "beta",
            Gamma {
                shape: priors.beta.0,
            },
            &[],
            [c(priors.beta.1)],
        )
        .map_err(build)?;
    g.initialize(
        beta,
        Init::Natural(gamma_natural(&[start.beta_shape], &[start.beta_rate])),
    );
    let tn = g
        .add("t", Gaussian, &[np, pp], [p(mean), p(beta)])
        .map_err(build)?;
    g.observe(tn, &t.values).map_err(build)?;
    g.joint_q(&sources).map_err(build)?;
    let mut order = vec![sources[0]];
    order.extend(z);
    order.extend(prec);
    order.extend(pi);
    order.extend([mu, w, alpha, beta]);
    let vmp = g.compile().map_err(build)?;
    Ok((vmp, order))
}

/// Sweeps until the bound changes by less than `tol` per data value or `max_iter` sweeps; the
/// bound after each. A decrease beyond round-off is an error.
pub(super) fn run(
    t: &Matrix,
    priors: Priors,
    start: &Start,
    max_iter: usize,
    tol: f64,
) -> Result<(Fitted, Vec<f64>)> {
    let (mut vmp, order) = model(t, priors, start)?;
    let opts = RunOptions {
        max_iter,
        tol,
        order: Some(order),
        decrease_is_error: true,
        ..RunOptions::default()
    };
    let fit = vmp
        .run(&opts)
        .map_err(|e| Error::Run(format!("Bayesian ICA: {e}")))?;
    let node = |name: &str| vmp.node(name).expect("built above");
    let (alpha, x) = (node("alpha"), node("x"));
    Ok((Fitted { vmp, alpha, x }, fit.bound_trace))
}
