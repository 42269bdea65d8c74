//! The posterior predictive under q: draws of observed nodes given draws of everything else from
//! q, and the exact predictive mean and variance of a scalar Gaussian node.
//!
//! p(y* | data) ≈ ∫ p(y* | θ) q(θ) dθ (Winn §1.8.2, with q standing in for the posterior). One
//! draw: every latent stochastic node from its own q (q factorises over nodes, Winn (2.12); the
//! weights of a softmax q-block from the block's joint q, module `softmax_joint::draw`), every
//! deterministic node evaluated on the draws, every missing element of an observed node from its
//! conditional given its parents' draws — so a mixture's predictive is the mixture of its
//! components weighted by q(z), not one Gaussian. Both functions here overwrite the moments they
//! read (draws, formed products): call them on a copy made for prediction.

use super::init::{moments, sample};
use super::qblock::Block;
use super::softmax_joint::JointDraw;
use super::*;

impl Vmp {
    /// `draws` seeded draws of the nodes `targets` from the predictive under q: one vector per
    /// target, `draws × elements × value length` values (draw-major). Elements that are observed
    /// hold their data in every draw. Latent nodes marked in `ancestral` (the latent variables of
    /// new rows with nothing observed: their predictive is their prior under q, ∫ p(z | π) q(π)
    /// dπ, not their mean-field q ∝ exp⟨ln p(z | π)⟩) are drawn from their conditional given
    /// the drawn parents, like the missing elements. Leaves the model's moments at the last draw.
    ///
    /// A chain's steps are drawn each from its own marginal in the chain's moments (q(z_t), or
    /// what [`Vmp::set_chain_moments`] put there), so every entry of a child follows its marginal
    /// predictive but the draws of different steps are not joint paths. A latent node in a
    /// tree-structured q over several nodes is an error: its members' marginals are not
    /// independent.
    pub fn sample_predictive(
        &mut self,
        seed: u64,
        draws: usize,
        targets: &[NodeId],
        ancestral: &[bool],
    ) -> Result<Vec<Vec<f64>>, RunError> {
        let mut rng = Rng::seed_from_u64(seed);
        for i in 0..self.nodes.len() {
            let joint =
                self.block_of[i].is_some_and(|b| matches!(self.blocks[b as usize], Block::Tree(_)));
            if joint {
                return Err(RunError::Schedule(format!(
                    "`{}`: predictive draws through a tree-structured q are not written yet",
                    self.nodes[i].name
                )));
            }
        }
        // Latent q in the per-element layout (shared covariances, fused indices expanded).
        let phis: Vec<Vec<f64>> = (0..self.nodes.len())
            .map(|i| match self.nodes[i].body {
                Body::Stochastic(_) => self.natural(NodeId(i)).to_vec(),
                _ => Vec::new(),
            })
            .collect();
        for i in 0..self.nodes.len() {
            self.unshare(i);
        }
        let (joints, aside) = self.take_joint_draws();
        let mut out: Vec<Vec<f64>> = targets.iter().map(|_| Vec::new()).collect();
        let mut run = || -> Result<(), RunError> {
            for _ in 0..draws {
                for i in 0..self.nodes.len() {
                    let prior = ancestral.get(i).copied().unwrap_or(false);
                    let x = self.draw_any(i, &phis[i], &joints[i], prior, &mut rng)?;
                    if let Some(t) = targets.iter().position(|t| t.0 == i) {
                        out[t].extend(x);
                    }
                }
            }
            Ok(())
        };
        let done = run();
        self.restore_joint_draws(aside);
        done.map(|()| out)
    }

    /// The predictive density of stochastic node `target` at `points` (values of one element,
    /// back to back), for every element: the average over `draws` seeded draws of everything else
    /// (as [`Vmp::sample_predictive`] draws them, `ancestral` alike) of the conditional density
    /// p(x | drawn parents) = exp(φ·u(x) + f(x) − A(φ)) (Winn (2.1)). Each term is a normalised
    /// density, so the average is one for any draws; a mixture's index is drawn with weights
    /// ⟨π_k⟩ (a drawn π), never exp⟨ln π_k⟩. Returns `elements × points` values. Leaves the
    /// model's moments at the last draw.
    pub fn predictive_density(
        &mut self,
        seed: u64,
        draws: usize,
        target: NodeId,
        ancestral: &[bool],
        points: &[f64],
    ) -> Result<Vec<f64>, RunError> {
        let dist = match &self.nodes[target.0].body {
            Body::Stochastic(d) => d.clone(),
            _ => {
                return Err(RunError::Schedule(format!(
                    "`{}` has no density",
                    self.nodes[target.0].name
                )))
            }
        };
        let (n, len, vlen) = (
            self.nodes[target.0].n,
            self.nodes[target.0].len,
            value_len(&dist),
        );
        if points.is_empty() || !points.len().is_multiple_of(vlen) {
            return Err(RunError::Schedule(format!(
                "{} numbers are not points of length {vlen}",
                points.len()
            )));
        }
        let np = points.len() / vlen;
        // u(x) and f(x) of every point, once.
        let mut ux = vec![0.0; np * len];
        let mut fx = vec![0.0; np];
        for (p, x) in points.chunks_exact(vlen).enumerate() {
            fx[p] = observe(&dist, x, &mut ux[p * len..(p + 1) * len])
                .map_err(|w| self.numerical(target.0, 0, format!("point {p}: {w}")))?;
        }
        let mut rng = Rng::seed_from_u64(seed);
        let phis: Vec<Vec<f64>> = (0..self.nodes.len())
            .map(|i| match self.nodes[i].body {
                Body::Stochastic(_) => self.natural(NodeId(i)).to_vec(),
                _ => Vec::new(),
            })
            .collect();
        for i in 0..self.nodes.len() {
            self.unshare(i);
        }
        let (joints, aside) = self.take_joint_draws();
        let mut out = vec![0.0; n * np];
        let (mut phi, mut tmp, mut buf) = (vec![0.0; len], vec![0.0; len], Vec::new());
        let mut run = || -> Result<(), RunError> {
            for _ in 0..draws {
                for i in 0..self.nodes.len() {
                    if i == target.0 {
                        let node = &self.nodes[i];
                        for e in 0..n {
                            if let Dist::StudentT(t) = &dist {
                                // No exponential-family form: t_ν(x | drawn μ, s) itself.
                                let mu = elements::gather(&self.nodes, node, e, &mut buf)[0][0];
                                for p in 0..np {
                                    out[e * np + p] += t.ln_density(points[p], mu).exp();
                                }
                                continue;
                            }
                            dist_prior_of(
                                &dist,
                                &self.nodes,
                                node,
                                e,
                                &mut phi,
                                &mut tmp,
                                &mut buf,
                            );
                            let a = moments(&dist, &phi, &mut tmp).map_err(|_| {
                                self.numerical(
                                    i,
                                    e,
                                    "the predictive given the drawn parents is improper".into(),
                                )
                            })?;
                            for p in 0..np {
                                let lp = natural_dot(&phi, &ux[p * len..(p + 1) * len]) + fx[p] - a;
                                out[e * np + p] += lp.exp();
                            }
                        }
                    }
                    let prior = ancestral.get(i).copied().unwrap_or(false);
                    self.draw_any(i, &phis[i], &joints[i], prior, &mut rng)?;
                }
            }
            Ok(())
        };
        let done = run();
        self.restore_joint_draws(aside);
        done?;
        out.iter_mut().for_each(|v| *v /= draws as f64);
        Ok(out)
    }

    /// One draw of node i: from its joint q where it is the weights of a softmax q-block
    /// (`joint`, [`Vmp::take_joint_draws`]) and not drawn from its prior, else [`Vmp::draw_node`].
    fn draw_any(
        &mut self,
        i: usize,
        phi_q: &[f64],
        joint: &Option<JointDraw>,
        prior: bool,
        rng: &mut Rng,
    ) -> Result<Vec<f64>, RunError> {
        match joint {
            Some(jd) if !prior => self.draw_joint(i, jd, rng),
            _ => self.draw_node(i, phi_q, prior, rng),
        }
    }

    /// One draw of node i (its values; empty for deterministic nodes and constants), its moments
    /// left at u(draw).
    fn draw_node(
        &mut self,
        i: usize,
        phi_q: &[f64],
        prior: bool,
        rng: &mut Rng,
    ) -> Result<Vec<f64>, RunError> {
        let dist = match &self.nodes[i].body {
            Body::Stochastic(d) => d.clone(),
            Body::Deterministic(_) => {
                match self.linear[i].clone().filter(|l| l.f == i) {
                    Some(lin) => self.nodes[i].q.u = lin.f_moments(&self.nodes),
                    None => self.refresh(i),
                }
                self.changed(i);
                return Ok(Vec::new());
            }
            Body::Chain(_) => return Ok(self.draw_chain_steps(i, rng)),
            Body::Constant => return Ok(Vec::new()),
        };
        let node = &self.nodes[i];
        let (n, len, vlen) = (node.n, node.len, value_len(&dist));
        let has_data = !node.observed.is_none();
        let mut phi = vec![0.0; len];
        let mut tmp = vec![0.0; len];
        let mut buf = Vec::new();
        let mut x = vec![0.0; n * vlen];
        let mut u = node.q.u.clone();
        u.resize(n * len, 0.0);
        for e in 0..n {
            let xe = &mut x[e * vlen..(e + 1) * vlen];
            if has_data && node.is_observed(e) || node.map {
                // Known values (and point estimates) stay; their value is the datum itself.
                if node.data.len() == n * vlen {
                    xe.copy_from_slice(&node.data[e * vlen..(e + 1) * vlen]);
                }
                continue;
            }
            let conditional = has_data || prior;
            // A missing element of an observed node (or a new row's latent value): its
            // conditional given the draws, drawn by the family itself where that is not `sample`
            // from `prior` (`ExpFamily::draw_given_parents`: a Student-t at its drawn mean, a
            // truncated or mixture prior from itself, as ancestral sampling draws them).
            if !(conditional && dist_draw_given(&dist, &self.nodes, node, e, rng, xe)) {
                if conditional {
                    dist_prior_of(&dist, &self.nodes, node, e, &mut phi, &mut tmp, &mut buf);
                } else {
                    phi.copy_from_slice(&phi_q[e * len..(e + 1) * len]);
                }
                if moments(&dist, &phi, &mut tmp).is_err() {
                    return Err(self.numerical(
                        i,
                        e,
                        "the predictive given the drawn parents is improper".into(),
                    ));
                }
                sample(&dist, &phi, rng, xe);
            }
            observe(&dist, xe, &mut u[e * len..(e + 1) * len])
                .map_err(|w| self.numerical(i, e, w.to_string()))?;
        }
        self.nodes[i].q.u = u;
        self.changed(i);
        Ok(x)
    }

    /// The exact predictive mean and variance of every element of a scalar `Gaussian` node whose
    /// precision is a constant or a Gamma node: by the laws of total expectation and variance over
    /// q, E\[y\] = Σ_k w_k ⟨m_k⟩ and E\[y²\] = Σ_k w_k (⟨m_k²⟩ + ⟨τ_k⁻¹⟩), w_k = q(component k)
    /// (one term without a mixture), with ⟨τ⁻¹⟩ = b / (a − 1) for q(τ) = Gamma(a, b) (infinite
    /// for a ≤ 1). `None` for any other node. Forms the moments of dot products served by the
    /// linear kernel (it overwrites them).
    pub fn gaussian_predictive(&mut self, node: NodeId) -> Option<Vec<(f64, f64)>> {
        let i = node.0;
        match &self.nodes[i].body {
            Body::Stochastic(d) if d.name() == "Gaussian" => {}
            _ => return None,
        }
        // The precision's ⟨τ⁻¹⟩ per parent element.
        let prec = self.nodes[i].parents[1].clone();
        let inverse: Vec<f64> = match &prec.source {
            Source::Const(m) => vec![1.0 / m[0]],
            Source::Node(p) => {
                let pn = &self.nodes[*p];
                match &pn.body {
                    Body::Stochastic(d) if d.name() == "Gamma" => {
                        let phi = self.natural(NodeId(*p)).to_vec();
                        (0..pn.n)
                            .map(|e| {
                                if pn.observed.is_none() && !pn.map || !pn.is_observed(e) {
                                    let (a, b) = (phi[e * 2 + 1] + 1.0, -phi[e * 2]);
                                    if a > 1.0 {
                                        b / (a - 1.0)
                                    } else {
                                        f64::INFINITY
                                    }
                                } else {
                                    1.0 / pn.q.u[e * 2]
                                }
                            })
                            .collect()
                    }
                    Body::Constant => self
                        .moments(NodeId(*p))
                        .chunks(2)
                        .map(|u| 1.0 / u[0])
                        .collect(),
                    _ => return None,
                }
            }
        };
        // Products the linear kernel keeps as sums: form them per element.
        for j in 0..i {
            if matches!(self.nodes[j].body, Body::Deterministic(_)) {
                match self.linear[j].clone().filter(|l| l.f == j) {
                    Some(lin) => self.nodes[j].q.u = lin.f_moments(&self.nodes),
                    None => self.refresh(j),
                }
            }
        }
        let node = &self.nodes[i];
        let mut buf = Vec::new();
        let mut out = Vec::with_capacity(node.n);
        for e in 0..node.n {
            let (mut mean, mut second) = (0.0, 0.0);
            for q in 0..node.configs {
                let w = if node.configs == 1 {
                    1.0
                } else {
                    config_weight(&self.nodes, node, e, q)
                };
                if w == 0.0 {
                    continue;
                }
                let ext = e * node.configs + q;
                let pa = gather(&self.nodes, node, ext, &mut buf);
                let inv = match &prec.source {
                    Source::Const(_) => inverse[0],
                    Source::Node(_) => inverse[prec.at(ext)],
                };
                mean += w * pa[0][0];
                second += w * (pa[0][1] + inv);
            }
            out.push((mean, (second - mean * mean).max(0.0)));
        }
        Some(out)
    }
}

impl Vmp {
    /// The exact predictive mean and variance under q of every element of a Student-t node
    /// (`None` for any other node). Its value is y = μ + s·t with μ from q (its mean parent's
    /// moments) and t a standard Student-t of ν degrees independent of μ, so ⟨y⟩ = ⟨μ⟩ and
    /// Var y = Var_q(μ) + s² ν/(ν − 2) for ν > 2, exactly; for 1 < ν ≤ 2 the variance is
    /// infinite, and for ν ≤ 1 the mean is undefined too (NaN). The distribution itself, a
    /// Gaussian smeared by a Student-t, has no closed form: its quantiles are the draws'
    /// ([`Vmp::sample_predictive`]).
    pub fn student_t_predictive(&self, node: NodeId) -> Option<Vec<(f64, f64)>> {
        let node = &self.nodes[node.0];
        let Some(Dist::StudentT(t)) = node.dist() else {
            return None;
        };
        let noise = if t.nu > 2.0 {
            t.scale * t.scale * t.nu / (t.nu - 2.0)
        } else {
            f64::INFINITY
        };
        let mut buf = Vec::new();
        let out = (0..node.n)
            .map(|e| {
                let pa = elements::gather(&self.nodes, node, e, &mut buf);
                let (m, m2) = (pa[0][0], pa[0][1]);
                let mean = if t.nu > 1.0 { m } else { f64::NAN };
                (mean, (m2 - m * m).max(0.0) + noise)
            })
            .collect();
        Some(out)
    }
}
