//! The mixture of Bayesian PCA as an engine model: the graph of the module docs, with q(x_n, s_n)
//! joint as a gated q-block ([`Graph::gated_q`], `occam_core`'s `engine/gated_linear`), started
//! from an [`Mbpca`] state and swept in the order q(x, s), μ, W, α, τ, π.

use occam_core::linalg::Cholesky;
use occam_core::prelude::*;

use super::Mbpca;
use crate::error::{Error, Result};
use crate::latent::synth::Matrix;

/// The compiled model, its update order and the nodes the state is read from.
pub struct Engine {
    vmp: Vmp,
    order: Vec<NodeId>,
    nodes: Nodes,
}

/// The model's nodes (names as in the module docs).
#[allow(missing_docs)]
#[derive(Clone, Copy)]
pub struct Nodes {
    pub pi: NodeId,
    pub s: NodeId,
    pub alpha: NodeId,
    pub w: NodeId,
    pub x: NodeId,
    pub mu: NodeId,
    pub tau: NodeId,
}

impl Nodes {
    /// The sweep's order: q(x, s), q(μ), q(W), q(α), q(τ), q(π).
    fn order(&self) -> Vec<NodeId> {
        vec![self.s, self.mu, self.w, self.alpha, self.tau, self.pi]
    }
}

/// Sets the start of every latent node of the graph at `m`'s q (x's follows from q(s) and the
/// rest when the gated block starts).
fn start(g: &mut Graph, nodes: &Nodes, m: &Mbpca) {
    let (d, q, k) = (m.d, m.q, m.k);
    let Nodes {
        pi,
        s,
        alpha,
        w,
        mu,
        tau,
        ..
    } = *nodes;
    g.initialize(pi, Init::Natural(m.u.iter().map(|u| u - 1.0).collect()));
    g.initialize(s, Init::Moments(m.r.clone()));
    g.initialize(
        alpha,
        Init::Natural(gamma_natural(&m.alpha_shape, &m.alpha_rate)),
    );
    // ⟨w⟩ and ⟨w wᵀ⟩ = ⟨w⟩⟨w⟩ᵀ + Σ_w^(k) per row.
    let mut wu = Vec::with_capacity(k * d * (q + q * q));
    for c in 0..k {
        let cov = &m.w_cov[c * q * q..(c + 1) * q * q];
        for j in 0..d {
            let row = &m.w[(c * d + j) * q..(c * d + j + 1) * q];
            wu.extend_from_slice(row);
            for a in 0..q {
                for b in 0..q {
                    wu.push(row[a] * row[b] + cov[a * q + b]);
                }
            }
        }
    }
    g.initialize(w, Init::Moments(wu));
    let mu_u: Vec<f64> = (0..k * d)
        .flat_map(|e| {
            let v = m.mu[e];
            [v, v * v + m.mu_var[e / d]]
        })
        .collect();
    g.initialize(mu, Init::Moments(mu_u));
    g.initialize(
        tau,
        Init::Natural(gamma_natural(&[m.tau_shape], &[m.tau_rate])),
    );
}

fn build(e: BuildError) -> Error {
    Error::Run(format!("mixture of Bayesian PCA: {e}"))
}

/// Per-element [−rate, shape − 1]: a Gamma's natural parameters.
fn gamma_natural(shape: &[f64], rate: &[f64]) -> Vec<f64> {
    shape
        .iter()
        .zip(rate)
        .flat_map(|(a, b)| [-b, a - 1.0])
        .collect()
}

impl Engine {
    /// The model on data `t` (N × D) started at `m`'s q.
    pub fn new(m: &Mbpca, t: &Matrix) -> Result<Engine> {
        m.check_data(t)?;
        let (n, d, q, k) = (t.rows, m.d, m.q, m.k);
        let pr = m.priors;
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
                    concentration: vec![pr.u0; k],
                },
                &[],
                [],
            )
            .map_err(build)?;
        let s = g
            .add("s", Categorical { k }, &[np], [p(pi)])
            .map_err(build)?;
        let alpha = g
            .add("alpha", Gamma { shape: pr.a_alpha }, &[qp], [c(pr.b_alpha)])
            .map_err(build)?;
        let w = g
            .add("W", GaussianArd { d: q }, &[kp, dp], [c(0.0), p(alpha)])
            .map_err(build)?;
        let x = g
            .add("x", GaussianArd { d: q }, &[np, kp], [c(0.0), c(1.0)])
            .map_err(build)?;
        let f = g
            .deterministic("f", Dot { d: q }, &[np, kp, dp], [p(w), p(x)])
            .map_err(build)?;
        let mu = g
            .add("mu", Gaussian, &[kp, dp], [c(0.0), c(pr.beta)])
            .map_err(build)?;
        let mean = g
            .deterministic("mean", Sum { n: 2, d: 1 }, &[np, kp, dp], [p(f), p(mu)])
            .map_err(build)?;
        let tau = g
            .add("tau", Gamma { shape: pr.a_tau }, &[], [c(pr.b_tau)])
            .map_err(build)?;
        let y = g
            .add_mixture("t", Gaussian, &[np, dp], &[(s, kp)], [p(mean), p(tau)])
            .map_err(build)?;
        g.observe(y, &t.values).map_err(build)?;
        g.gated_q(s, x).map_err(build)?;
        let nodes = Nodes {
            pi,
            s,
            alpha,
            w,
            x,
            mu,
            tau,
        };
        Engine::from_graph(g, nodes, m)
    }

    /// The model compiled elsewhere (the same graph written in the modelling language,
    /// `examples/mbpca/mbpca.occam`) with its nodes `nodes`, started at `m`'s q.
    pub fn from_graph(mut g: Graph, nodes: Nodes, m: &Mbpca) -> Result<Engine> {
        start(&mut g, &nodes, m);
        let mut vmp = g.compile().map_err(build)?;
        vmp.initialize(0).map_err(run)?;
        Ok(Engine {
            vmp,
            order: nodes.order(),
            nodes,
        })
    }

    /// One sweep: q(x, s), q(μ), q(W), q(α), q(τ), q(π); returns the bound after it.
    pub fn sweep(&mut self) -> Result<f64> {
        for &id in &self.order {
            self.vmp.update(id).map_err(run)?;
        }
        Ok(self.vmp.bound())
    }

    /// The bound at the current q.
    pub fn bound(&self) -> f64 {
        self.vmp.bound()
    }

    /// Writes the current q into `m` (set up for the same data and K).
    pub fn read(&self, m: &mut Mbpca) -> Result<()> {
        let (d, q, k) = (m.d, m.q, m.k);
        let v = &self.vmp;
        let ids = &self.nodes;
        m.u = v.natural(ids.pi).iter().map(|p| p + 1.0).collect();
        let (a, tau) = (v.natural(ids.alpha), v.natural(ids.tau));
        m.alpha_rate = a.chunks_exact(2).map(|p| -p[0]).collect();
        m.alpha_shape = a.chunks_exact(2).map(|p| p[1] + 1.0).collect();
        (m.tau_rate, m.tau_shape) = (-tau[0], tau[1] + 1.0);
        let mu = v.moments(ids.mu);
        m.mu = mu.chunks_exact(2).map(|p| p[0]).collect();
        let mu_phi = v.natural(ids.mu);
        m.mu_var = (0..k).map(|c| -0.5 / mu_phi[2 * c * d + 1]).collect();
        let (wu, wphi) = (v.moments(ids.w), v.natural(ids.w));
        let len = q + q * q;
        m.w = wu.chunks_exact(len).flat_map(|r| r[..q].to_vec()).collect();
        for c in 0..k {
            // Σ_w^(k) = (−2 Φ₂)⁻¹ of any row (every row of W_k has the same precision).
            let lam: Vec<f64> = wphi[c * d * len + q..c * d * len + len]
                .iter()
                .map(|v| -2.0 * v)
                .collect();
            let ch = Cholesky::new(&lam, q).ok_or_else(|| {
                Error::Run("mixture of Bayesian PCA: q(W) is not a proper Gaussian".into())
            })?;
            ch.inverse_into(&mut m.w_cov[c * q * q..(c + 1) * q * q]);
        }
        let (x, x_cov) = v
            .gated_latent(ids.x)
            .ok_or_else(|| Error::Run("mixture of Bayesian PCA: q(x, s) has not started".into()))?;
        m.x.copy_from_slice(x);
        m.x_cov.copy_from_slice(x_cov);
        m.r.copy_from_slice(v.moments(ids.s));
        Ok(())
    }
}

fn run(e: RunError) -> Error {
    Error::Run(format!("mixture of Bayesian PCA: {e}"))
}
