//! Draws of a softmax q-block's weights from their joint q, for the posterior predictive
//! (`engine::predictive`).
//!
//! The predictive draws every latent node from its own q; for W in a softmax q-block its own q
//! is the marginal N(m_k, Σ_kk) of each class, and classes drawn independently from those lose
//! the cross-class covariance the block exists to keep (module docs of `softmax_joint`: the
//! contrasts w_k − w_0 are what the data inform, the sum Σ_k w_k keeps its prior). So W's groups
//! are drawn from the kept joint N(m, Σ): v = m + Lz, LLᵀ = Σ, z standard normal. And while
//! drawing, the logits η must follow the drawn weights (η = W x_n of the draw), not the joint q's
//! moments that `fill_logits` forms from the kept state: the kept state is set aside for the
//! draws and put back after them.

use rand::Rng as _;
use rand_distr::StandardNormal;

use super::*;

/// Node i's joint q prepared for draws: each group's K·D means and the lower Cholesky factor of
/// its covariance (`cholesky_semidefinite`: a direction without variance gets a zero column).
#[derive(Clone, Debug)]
pub(in crate::engine) struct JointDraw {
    /// Inputs D (each element's value length).
    d: usize,
    /// K·D.
    j: usize,
    /// Groups' means, `groups × j`.
    mean: Vec<f64>,
    /// Groups' lower factors, `groups × j × j`, row-major.
    chol: Vec<f64>,
}

/// The kept states set aside by [`Vmp::take_joint_draws`]: (η's node, its `phi`).
pub(in crate::engine) type SetAside = Vec<(usize, Vec<f64>)>;

impl Vmp {
    /// For every node, its joint q for draws if it is the weights W of a softmax q-block that
    /// has been updated (`None` otherwise), and the blocks' kept states, set aside so that η's
    /// moments are formed from the drawn W (module docs); give them back with
    /// [`Vmp::restore_joint_draws`].
    pub(in crate::engine) fn take_joint_draws(&mut self) -> (Vec<Option<JointDraw>>, SetAside) {
        let mut draws: Vec<Option<JointDraw>> = (0..self.nodes.len()).map(|_| None).collect();
        let mut aside = Vec::new();
        for (i, slot) in draws.iter_mut().enumerate() {
            let Some(Block::SoftmaxJoint(b)) = self.block_of(i) else {
                continue;
            };
            if b.node[0] != i {
                continue;
            }
            let Some(kept) = b.kept(self) else {
                continue;
            };
            let j = b.dim();
            let (mut mean, mut chol) = (Vec::new(), Vec::new());
            for g in kept.chunks_exact(j + j * j) {
                mean.extend_from_slice(&g[..j]);
                chol.extend(crate::linalg::cholesky_semidefinite(&g[j..], j));
            }
            *slot = Some(JointDraw {
                d: b.d,
                j,
                mean,
                chol,
            });
            let eta = b.eta;
            let phi = &mut self.nodes[eta].q.phi;
            aside.push((eta, phi.clone()));
            phi.iter_mut().for_each(|v| *v = 0.0);
        }
        (draws, aside)
    }

    /// Puts back the kept states set aside by [`Vmp::take_joint_draws`] (η's moments stay
    /// those of the last draw, as every drawn node's do).
    pub(in crate::engine) fn restore_joint_draws(&mut self, aside: SetAside) {
        for (eta, phi) in aside {
            self.nodes[eta].q.phi = phi;
        }
    }

    /// One draw of W (node `i`) from its joint q `jd`: its values, every element's moments left
    /// at u(draw). Group g holds the elements gK … gK + K − 1, class c's weights at
    /// `(gK + c)·D` of the values, as they are at `gK·D + c·D` of the group's vector.
    pub(in crate::engine) fn draw_joint(
        &mut self,
        i: usize,
        jd: &JointDraw,
        rng: &mut Rng,
    ) -> Result<Vec<f64>, RunError> {
        let Body::Stochastic(dist) = &self.nodes[i].body else {
            unreachable!("a softmax q-block's weights are a stochastic node")
        };
        let dist = dist.clone();
        let (n, len, j) = (self.nodes[i].n, self.nodes[i].len, jd.j);
        let mut x = vec![0.0; n * jd.d];
        let mut z = vec![0.0; j];
        for ((xg, m), l) in x
            .chunks_exact_mut(j)
            .zip(jd.mean.chunks_exact(j))
            .zip(jd.chol.chunks_exact(j * j))
        {
            z.iter_mut().for_each(|v| *v = rng.sample(StandardNormal));
            for a in 0..j {
                xg[a] = m[a] + (0..=a).map(|b| l[a * j + b] * z[b]).sum::<f64>();
            }
        }
        let mut u = vec![0.0; n * len];
        for e in 0..n {
            observe(
                &dist,
                &x[e * jd.d..(e + 1) * jd.d],
                &mut u[e * len..(e + 1) * len],
            )
            .map_err(|w| self.numerical(i, e, w.to_string()))?;
        }
        self.nodes[i].q.u = u;
        self.changed(i);
        Ok(x)
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::qblock::tests::models;

    /// Draws of W from the predictive have the joint q's means and covariance, the cross-class
    /// entries included (which draws from the classes' own q would have at zero), within 4 of
    /// their Monte Carlo standard errors; the kept joint q is back after the draws.
    #[test]
    fn weights_are_drawn_from_the_joint_q() {
        let mut vmp = models::softmax_joint().compile().unwrap();
        vmp.initialize(5).unwrap();
        for _ in 0..30 {
            for id in vmp.default_order() {
                vmp.update(id).unwrap();
            }
        }
        let w = vmp.node("w").unwrap();
        let (joint, gaps) = vmp.joint_q(w).expect("the block's joint q");
        assert_eq!(gaps.len(), 1);
        let j = 6;
        assert_eq!(joint.len(), j + j * j);
        let (m, cov) = joint.split_at(j);
        let draws = 40_000;
        let out = vmp.sample_predictive(7, draws, &[w], &[]).unwrap();
        assert_eq!(
            vmp.joint_q(w),
            Some((joint.clone(), gaps)),
            "kept joint put back"
        );
        assert_eq!(out[0].len(), draws * j);
        let s = draws as f64;
        let mean: Vec<f64> = (0..j)
            .map(|a| out[0].chunks_exact(j).map(|v| v[a]).sum::<f64>() / s)
            .collect();
        let mut worst = 0.0f64;
        let mut crossing = 0.0f64;
        for a in 0..j {
            let se = (cov[a * j + a] / s).sqrt();
            worst = worst.max((mean[a] - m[a]).abs() / se);
            for b in 0..j {
                let c: f64 = out[0]
                    .chunks_exact(j)
                    .map(|v| (v[a] - mean[a]) * (v[b] - mean[b]))
                    .sum::<f64>()
                    / (s - 1.0);
                // The sample covariance's sd for a Gaussian: ((Σ_aa Σ_bb + Σ_ab²) / S)^½.
                let se = ((cov[a * j + a] * cov[b * j + b] + cov[a * j + b].powi(2)) / s).sqrt();
                worst = worst.max((c - cov[a * j + b]).abs() / se);
                if a / 2 != b / 2 {
                    crossing = crossing.max(cov[a * j + b].abs() / se);
                }
            }
        }
        assert!(worst < 4.0, "a moment {worst} se from the joint q's");
        assert!(
            crossing > 20.0,
            "the cross-class covariance is {crossing} se at most"
        );
    }
}
