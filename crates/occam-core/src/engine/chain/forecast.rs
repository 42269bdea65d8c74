//! The filtered and k-step-ahead predictive of a chain's state: p(z_t | y_{<t}) at every step of
//! a sequence (the one-step predictive, from filtering) and p(z_{L+k−1} | y_{<L}) for the `ahead`
//! steps past its end (k = 1..ahead), given the parameters' q.
//!
//! Which quantity under q over the parameters. The filter is the forward pass of the chain's own
//! model with
//! * the likelihood of step t's data under state k taken from the children's messages,
//!   exp η_t(k) = exp Σ_children ⟨ln p(y_t | θ, z_t = k)⟩ (what q(z) itself is computed from,
//!   Winn (2.53)); under a point-mass q over θ this is p(y_t | θ̂, z_t = k);
//! * the initial and transition probabilities at their posterior means ⟨p0⟩ and ⟨A⟩ (for a
//!   Dirichlet q(a) = Dir(α): α / Σα, the posterior predictive of the next state given the
//!   current one, ∫ A q(A) dA), not the subnormalised exp⟨ln A⟩ the chain's update uses. A k-step
//!   prediction multiplies by ⟨A⟩^k: exact under a point mass, the plug-in of the mean otherwise
//!   (E_q[A^k] ≠ ⟨A⟩^k for k > 1).
//! * for a Gaussian chain (Kalman filter, in information form for the update) the one-step
//!   predictive of x_{t+1} given the filtered N(m, P) has the exact mean ⟨A⟩m and covariance under
//!   the rows' q, Cov_ij = ⟨a_i⟩ᵀP⟨a_j⟩ (i ≠ j; rows independent in q) and
//!   tr(⟨a_i a_iᵀ⟩(P + mmᵀ)) − (⟨a_i⟩ᵀm)² (i = j, Winn (2.21) moments), plus the state noise at
//!   its mean precision, 1/⟨τ_i⟩ (exact for a constant noise; under a Gamma q(τ) the exact ⟨τ⁻¹⟩ is
//!   larger by a factor a/(a − 1)); x_0's predictive is N(⟨m⟩, ⟨Λ0⟩⁻¹ + Cov_q(m)).
//!
//! Under a point-mass q over every parameter both are the exact filtering recursions (the
//! forward algorithm, the Kalman filter).

use super::*;
use crate::error::ChainMomentsError;
use crate::linalg::Cholesky;

impl Vmp {
    /// The one-step and k-step-ahead predictive of every sequence's state (module doc): per
    /// sequence, `lengths[s] + ahead` steps in the chain's per-step layout — K probabilities for a
    /// discrete chain, [mean (D), second moment (D×D)] for a Gaussian one. Steps before the end
    /// are p(z_t | y_{<t}) (t = 0: the prior predictive); step L − 1 + k is the k-step-ahead
    /// prediction from the whole sequence. Reads the children's messages the chain stored at its
    /// last update (its φ), so call it right after an update of the chain.
    pub fn chain_forecast(&self, node: NodeId, ahead: usize) -> Result<Vec<Vec<f64>>, RunError> {
        let z = &self.nodes[node.0];
        let Body::Chain(ch) = &z.body else {
            return Err(RunError::Schedule(format!("`{}` is not a chain", z.name)));
        };
        if z.configs > 1 || ch.n_inputs > 0 {
            return Err(RunError::Schedule(format!(
                "`{}`: the predictive of a chain with inputs or a mixture of parameters is not \
                 written yet",
                z.name
            )));
        }
        let (row, steps) = (z.len, ch.steps);
        let mut out = Vec::with_capacity(ch.lengths.len());
        for (s, &len) in ch.lengths.iter().enumerate() {
            let eta = &z.q.phi[s * steps * row..(s * steps + len) * row];
            let seq = match ch.kind {
                ChainKind::Discrete { k } => {
                    let p0 = self.mean_probabilities(z, 0, s, k);
                    let a = self.mean_probabilities(z, 1, s, k);
                    forward(k, &p0, &a, eta, len, ahead)
                }
                ChainKind::Gaussian { d } => {
                    let mut buf = Vec::new();
                    let pa = seq_parents(&self.nodes, z, s, &mut buf);
                    kalman(d, &pa, eta, len, ahead)
                }
            };
            out.push(seq.map_err(|why| self.numerical(node.0, s * steps, why))?);
        }
        Ok(out)
    }

    /// ⟨p⟩ of the probability table in slot `slot` of discrete chain `z` for sequence s: rows of
    /// K values (one row for p0, K for A). A latent Dirichlet element gives α/Σα; a known table
    /// (data, a constant or a point estimate) gives exp of its moments ln p.
    fn mean_probabilities(&self, z: &Node, slot: usize, s: usize, k: usize) -> Vec<f64> {
        let edge = &z.parents[slot];
        let mut out = Vec::with_capacity(edge.stack * edge.plen);
        match &edge.source {
            Source::Const(m) => out.extend(m.iter().map(|v| v.exp())),
            Source::Node(p) => {
                let pn = &self.nodes[*p];
                let dirichlet = matches!(&pn.body, Body::Stochastic(d) if d.name() == "Dirichlet");
                let phi = self.natural(NodeId(*p));
                for t in 0..edge.stack {
                    let pe = if edge.stack > 1 {
                        edge.at(s * edge.stack + t)
                    } else {
                        edge.at(s)
                    };
                    let range = pe * edge.plen..(pe + 1) * edge.plen;
                    let latent = !pn.map && (pn.observed.is_none() || !pn.is_observed(pe));
                    if dirichlet && latent {
                        out.extend(phi[range].iter().map(|v| v + 1.0));
                    } else {
                        out.extend(pn.q.u[range].iter().map(|v| v.exp()));
                    }
                }
            }
        }
        for r in out.chunks_mut(k) {
            let sum: f64 = r.iter().sum();
            r.iter_mut().for_each(|v| *v /= sum);
        }
        out
    }
}

/// The forward algorithm with ⟨p0⟩ and ⟨A⟩ (row-major K×K, row j: from state j): ρ_0 = ⟨p0⟩,
/// f_t ∝ ρ_t ∘ exp η_t, ρ_{t+1} = f_t ⟨A⟩ while there are data, then ρ_{t+1} = ρ_t ⟨A⟩.
fn forward(
    k: usize,
    p0: &[f64],
    a: &[f64],
    eta: &[f64],
    len: usize,
    ahead: usize,
) -> Result<Vec<f64>, String> {
    let mut out = Vec::with_capacity((len + ahead) * k);
    let mut rho = p0.to_vec();
    let mut f = vec![0.0; k];
    for t in 0..len + ahead {
        out.extend_from_slice(&rho);
        if t < len {
            let e = &eta[t * k..(t + 1) * k];
            let top = e.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            for j in 0..k {
                f[j] = rho[j] * (e[j] - top).exp();
            }
            let sum: f64 = f.iter().sum();
            if !(sum > 0.0 && sum.is_finite()) {
                return Err(format!(
                    "step {t}: the data have zero probability under every predicted state"
                ));
            }
            f.iter_mut().for_each(|v| *v /= sum);
        } else {
            f.copy_from_slice(&rho);
        }
        for (l, r) in rho.iter_mut().enumerate() {
            *r = (0..k).map(|j| f[j] * a[j * k + l]).sum();
        }
    }
    Ok(out)
}

fn inverse(a: &[f64], d: usize, what: &str) -> Result<Vec<f64>, String> {
    let c = Cholesky::new(a, d).ok_or_else(|| format!("{what} is not positive definite"))?;
    let mut out = vec![0.0; d * d];
    c.inverse_into(&mut out);
    Ok(out)
}

/// The Kalman filter (module doc) with the parents' moments `pa` (mean0, precision0, dynamics
/// rows, noise) and the children's messages η_t = [h_t, −½ col(J_t)].
fn kalman(
    d: usize,
    pa: &[&[f64]; MAX_SLOTS],
    eta: &[f64],
    len: usize,
    ahead: usize,
) -> Result<Vec<f64>, String> {
    let (dd, row) = (d * d, d + d * d);
    let (m0, mm0, lam0) = (&pa[0][..d], &pa[0][d..d + dd], &pa[1][..dd]);
    let a_row = |i: usize| {
        let r = &pa[2][i * row..(i + 1) * row];
        (&r[..d], &r[d..])
    };
    let mut mu = m0.to_vec();
    let mut sig = inverse(lam0, d, "the initial precision")?;
    for ij in 0..dd {
        sig[ij] += mm0[ij] - m0[ij / d] * m0[ij % d];
    }
    let mut out = Vec::with_capacity((len + ahead) * row);
    for t in 0..len + ahead {
        out.extend_from_slice(&mu);
        out.extend((0..dd).map(|ij| sig[ij] + mu[ij / d] * mu[ij % d]));
        let (mf, pf) = if t < len {
            let e = &eta[t * row..(t + 1) * row];
            let prec = inverse(&sig, d, &format!("step {t}: the predicted covariance"))?;
            let mut j = prec.clone();
            for ij in 0..dd {
                j[ij] -= 2.0 * e[d + ij];
            }
            let h: Vec<f64> = (0..d)
                .map(|i| e[i] + (0..d).map(|l| prec[i * d + l] * mu[l]).sum::<f64>())
                .collect();
            let pf = inverse(&j, d, &format!("step {t}: the filtered precision"))?;
            let mf: Vec<f64> = (0..d)
                .map(|i| (0..d).map(|l| pf[i * d + l] * h[l]).sum())
                .collect();
            (mf, pf)
        } else {
            (mu.clone(), sig.clone())
        };
        let am: Vec<f64> = (0..d).map(|i| dot(a_row(i).0, &mf)).collect();
        for i in 0..d {
            for l in 0..d {
                sig[i * d + l] = if i == l {
                    let (_, aa) = a_row(i);
                    let second: f64 = (0..dd)
                        .map(|pq| aa[pq] * (pf[pq] + mf[pq / d] * mf[pq % d]))
                        .sum();
                    second - am[i] * am[i] + 1.0 / pa[3][2 * i]
                } else {
                    let (ai, al) = (a_row(i).0, a_row(l).0);
                    (0..dd).map(|pq| ai[pq / d] * pf[pq] * al[pq % d]).sum()
                };
            }
        }
        mu = am;
    }
    Ok(out)
}

impl Vmp {
    /// Puts per-sequence state moments (the layout of [`Vmp::chain_forecast`], one `Vec` per
    /// sequence of at most the time plate's steps) into chain node `node`'s moments, zero past
    /// each given length: the state marginals [`Vmp::sample_predictive`] and
    /// [`Vmp::gaussian_predictive`] then read.
    pub fn set_chain_moments(
        &mut self,
        node: NodeId,
        moments: &[Vec<f64>],
    ) -> Result<(), ChainMomentsError> {
        let z = &self.nodes[node.0];
        let Body::Chain(ch) = &z.body else {
            return Err(ChainMomentsError::NotChain {
                node: z.name.clone(),
            });
        };
        let (row, steps) = (z.len, ch.steps);
        if moments.len() != ch.lengths.len()
            || moments
                .iter()
                .any(|m| !m.len().is_multiple_of(row) || m.len() > steps * row)
        {
            return Err(ChainMomentsError::Sizes {
                node: z.name.clone(),
                given: moments.len(),
                sequences: ch.lengths.len(),
                steps,
            });
        }
        let mut u = vec![0.0; z.n * row];
        for (s, m) in moments.iter().enumerate() {
            u[s * steps * row..s * steps * row + m.len()].copy_from_slice(m);
        }
        self.nodes[node.0].q.u = u;
        self.changed(node.0);
        self.refresh_dependents(node.0);
        Ok(())
    }

    /// One draw of every step of chain node i from its own marginal in the node's moments (not a
    /// joint path: each child entry's draws then follow its marginal predictive); the moments are
    /// left at the draws' (one-hot, or [x, xxᵀ]). Steps with zero moments (past a sequence's end)
    /// draw state 0 or x = 0.
    pub(in crate::engine) fn draw_chain_steps(&mut self, i: usize, rng: &mut Rng) -> Vec<f64> {
        use rand::Rng as _;
        let z = &self.nodes[i];
        let Body::Chain(ch) = &z.body else {
            unreachable!("draw_chain_steps on a chain node")
        };
        let row = z.len;
        let mut u = z.q.u.clone();
        let mut x = Vec::new();
        match ch.kind {
            ChainKind::Discrete { k } => {
                for r in u.chunks_exact_mut(k) {
                    let mut left = rng.random::<f64>() * r.iter().sum::<f64>();
                    let state = r
                        .iter()
                        .position(|&p| {
                            left -= p;
                            left <= 0.0 && p > 0.0
                        })
                        .unwrap_or(0);
                    r.iter_mut().for_each(|v| *v = 0.0);
                    r[state] = 1.0;
                    x.push(state as f64);
                }
            }
            ChainKind::Gaussian { d } => {
                for r in u.chunks_exact_mut(row) {
                    let mut cov: Vec<f64> = (0..d * d)
                        .map(|ij| r[d + ij] - r[ij / d] * r[ij % d])
                        .collect();
                    let z: Vec<f64> = (0..d)
                        .map(|_| rng.sample::<f64, _>(rand_distr::StandardNormal))
                        .collect();
                    let mut noise = vec![0.0; d];
                    // Symmetrise; a zero (past the end) or singular covariance draws no noise.
                    for a in 0..d {
                        for b in 0..a {
                            let v = 0.5 * (cov[a * d + b] + cov[b * d + a]);
                            cov[a * d + b] = v;
                            cov[b * d + a] = v;
                        }
                    }
                    if let Some(c) = Cholesky::new(&cov, d) {
                        c.lower_times(&z, &mut noise);
                    }
                    let xs: Vec<f64> = (0..d).map(|a| r[a] + noise[a]).collect();
                    r[..d].copy_from_slice(&xs);
                    for ij in 0..d * d {
                        r[d + ij] = xs[ij / d] * xs[ij % d];
                    }
                    x.extend(xs);
                }
            }
        }
        self.nodes[i].q.u = u;
        self.changed(i);
        x
    }
}
