//! Linear re-parametrisations of a latent Gaussian vector node: every element's q(x_e) replaced by
//! the law of T x_e, and the sums over elements a caller reads to choose T. This is the engine's
//! half of the parameter-expansion rotations of PCA-type models (BayesPy's `RotationOptimizer`);
//! the optimisation of T lives in the facade (`occam::latent::rotation`).
//!
//! For a Gaussian q with natural parameters φ = [Λm, −½Λ], the law of x' = T x has m' = T m,
//! ⟨x'x'ᵀ⟩ = T⟨xxᵀ⟩Tᵀ and Λ' = T⁻ᵀΛT⁻¹, so φ₁' = T⁻ᵀφ₁ and Φ₂' = T⁻ᵀΦ₂T⁻¹. The log-partition
//! A(φ) = −¼ φ₁ᵀΦ₂⁻¹φ₁ − ½ ln|−2Φ₂| + (d/2) ln 2π keeps its quadratic form and gains ln|det T|.
//! Both storage forms are transformed in place, without refactorising: per element, or means
//! plus one covariance (`linear::shared`).
//!
//! Mixing the elements too ([`Vmp::mix_gaussian_rows`], the dynamics matrix of a rotated linear
//! dynamical system, A → R A R⁻¹ on its rows a_i): a_i' = T Σ_k Q_ik a_k under independent
//! q(a_k) = N(m_k, Σ_k) is Gaussian with mean T Σ_k Q_ik m_k and covariance T (Σ_k Q_ik² Σ_k) Tᵀ;
//! the rows' joint law couples them, and the factorised q keeps each row's marginal (the
//! projection onto the mean-field family, whose entropy is at least the joint's; every other term
//! of the bound reads one row at a time, so it is the same under the joint and the marginals).

use super::*;
use crate::linalg::{inverse_and_log_det, transpose};
use faer::{Accum, MatMut, MatRef};

/// Sums over the elements of a latent Gaussian vector node (all d × d, row-major).
#[derive(Clone, Debug, PartialEq)]
pub struct GaussianSums {
    /// Number of elements n.
    pub n: usize,
    /// Event dimension d.
    pub d: usize,
    /// Σ_e ⟨x_e x_eᵀ⟩.
    pub second: Vec<f64>,
    /// Σ_e ⟨φ_p⟩₁,e ⟨x_e⟩ᵀ: the prior's linear natural parameter against the means, so that the
    /// prior's linear part of the bound after x → T x is Σ_ij T_ij (this)_ij.
    pub prior_first: Vec<f64>,
    /// ⟨φ_p⟩₂, the prior's quadratic natural parameter, when every element has the same one
    /// (its part of the bound after x → T x is ⟨φ_p⟩₂ · T (Σ⟨xxᵀ⟩) Tᵀ).
    pub prior_second: Option<Vec<f64>>,
}

/// C (n × m) = A B (`linalg::mat_mul` with the shape as one tuple).
fn mul(a: &[f64], b: &[f64], (n, k, m): (usize, usize, usize)) -> Vec<f64> {
    crate::linalg::mat_mul(a, b, n, k, m)
}

/// L M R for d × d row-major matrices.
fn sandwich(l: &[f64], m: &[f64], r: &[f64], d: usize) -> Vec<f64> {
    mul(&mul(l, m, (d, d, d)), r, (d, d, d))
}

/// ⟨φ_p⟩ of element e's prior (given its parents' current moments).
fn prior_natural(nodes: &[Node], node: &Node, e: usize, phi: &mut [f64]) {
    struct P<'a>(&'a [Node], &'a Node, usize, &'a mut [f64]);
    impl DistVisitor for P<'_> {
        type Output = ();
        fn visit<D: ExpFamily>(self, d: &D) {
            let P(nodes, node, e, phi) = self;
            let (mut tmp, mut buf) = (vec![0.0; node.len], Vec::new());
            prior_of(d, nodes, node, e, phi, &mut tmp, &mut buf);
        }
    }
    node.dist()
        .expect("a stochastic node")
        .visit(P(nodes, node, e, phi));
}

impl Vmp {
    /// The event dimension of node i if its q may be transformed (a latent, fully unobserved,
    /// non-MAP Gaussian vector outside mixtures and q-blocks); otherwise why not.
    fn transformable(&self, i: usize) -> Result<usize, NotTransformable> {
        let n = &self.nodes[i];
        let (
            Body::Stochastic(Dist::GaussianArd(_) | Dist::MvGaussian(_)),
            MomentKind::Gaussian { d },
        ) = (&n.body, n.kind)
        else {
            return Err(NotTransformable::NotGaussianVector);
        };
        if !n.observed.is_none() {
            return Err(NotTransformable::Observed);
        }
        if n.map || !n.selectors.is_empty() || n.block.is_some() {
            return Err(NotTransformable::Structured);
        }
        Ok(d)
    }

    /// Sums over the elements of a latent Gaussian vector node (see [`GaussianSums`]); an error
    /// naming the node if it is not one.
    pub fn gaussian_sums(&self, node: NodeId) -> Result<GaussianSums, RunError> {
        let i = self.id(node);
        let d = self
            .transformable(i)
            .map_err(|what| RunError::Schedule(format!("`{}` {what}", self.nodes[i].name)))?;
        let x = &self.nodes[i];
        let (n, len) = (x.n, x.len);
        let shared = linear::shared::is_shared(x);
        let means: &[f64] = if shared { &x.q.u[..n * d] } else { &x.q.u };
        let stride = if shared { d } else { len };
        let mut second = vec![0.0; d * d];
        if shared {
            // Σ (m mᵀ + Σ) = MᵀM + n Σ.
            let m = &x.q.u[..n * d];
            kernels::gemm(
                MatMut::from_row_major_slice_mut(&mut second, d, d),
                Accum::Replace,
                MatRef::from_row_major_slice(m, n, d).transpose(),
                MatRef::from_row_major_slice(m, n, d),
            );
            second
                .iter_mut()
                .zip(&x.q.u[n * d..])
                .for_each(|(s, c)| *s += n as f64 * c);
        } else {
            for row in x.q.u.chunks_exact(len) {
                kernels::add_into(&mut second, &row[d..]);
            }
        }
        let constant = x
            .parents
            .iter()
            .all(|e| matches!(e.source, Source::Const(_)));
        let mut phi = vec![0.0; len];
        let mut prior_first = vec![0.0; d * d];
        let mut prior_second = None::<Vec<f64>>;
        let mut uniform = true;
        for e in 0..if constant { 1 } else { n } {
            prior_natural(&self.nodes, x, e, &mut phi);
            let rows: Vec<&[f64]> = if constant {
                means.chunks_exact(stride).map(|r| &r[..d]).collect()
            } else {
                vec![&means[e * stride..e * stride + d]]
            };
            for m in rows {
                for a in 0..d {
                    for b in 0..d {
                        prior_first[a * d + b] += phi[a] * m[b];
                    }
                }
            }
            match &prior_second {
                None => prior_second = Some(phi[d..].to_vec()),
                Some(p) => uniform &= p[..] == phi[d..],
            }
        }
        Ok(GaussianSums {
            n,
            d,
            second,
            prior_first,
            prior_second: prior_second.filter(|_| uniform),
        })
    }

    /// ⟨φ_p⟩ of every element of a stochastic node outside mixtures (elements × its moment length),
    /// given its parents' current moments — e.g. a Gamma's [−⟨rate⟩, shape − 1].
    pub fn prior_natural(&self, node: NodeId) -> Result<Vec<f64>, RunError> {
        let x = &self.nodes[self.id(node)];
        if x.dist().is_none() || !x.selectors.is_empty() {
            return Err(RunError::Schedule(format!(
                "`{}` is not a stochastic node outside a mixture",
                x.name
            )));
        }
        let mut out = vec![0.0; x.n * x.len];
        for (e, phi) in out.chunks_exact_mut(x.len).enumerate() {
            prior_natural(&self.nodes, x, e, phi);
        }
        Ok(out)
    }

    /// Replaces every element's q(x_e) by the law of T x_e (T row-major d × d, invertible); see
    /// the module doc. Other nodes are untouched: their cached products are dropped and the
    /// deterministic nodes below refreshed.
    pub fn transform_gaussian(&mut self, node: NodeId, t: &[f64]) -> Result<(), RunError> {
        let i = self.id(node);
        let d = self
            .transformable(i)
            .map_err(|what| RunError::Schedule(format!("`{}` {what}", self.nodes[i].name)))?;
        let (t_inv, log_det) = inverse_and_log_det(t, d).ok_or_else(|| {
            self.numerical(i, 0, "the transform is not finite and invertible".into())
        })?;
        let (tt, t_inv_t) = (transpose(t, d, d), transpose(&t_inv, d, d));
        let x = &mut self.nodes[i];
        let n = x.n;
        if linear::shared::is_shared(x) {
            // Rows: m' = T m (M Tᵀ), φ₁' = T⁻ᵀ φ₁ (Φ₁ T⁻¹); one covariance and one Φ₂.
            let m = kernels::product_strided(&x.q.u[..n * d], d, &tt, (0, d, d));
            let p1 = kernels::product_strided(&x.q.phi[..n * d], d, &t_inv, (0, d, d));
            let cov = sandwich(t, &x.q.u[n * d..], &tt, d);
            let p2 = sandwich(&t_inv_t, &x.q.phi[n * d..], &t_inv, d);
            x.q.u = [m, cov].concat();
            x.q.phi = [p1, p2].concat();
        } else {
            let len = x.len;
            for (u, phi) in
                x.q.u
                    .chunks_exact_mut(len)
                    .zip(x.q.phi.chunks_exact_mut(len))
            {
                let m = mul(t, &u[..d], (d, d, 1));
                let second = sandwich(t, &u[d..], &tt, d);
                let p1 = mul(&t_inv_t, &phi[..d], (d, d, 1));
                let p2 = sandwich(&t_inv_t, &phi[d..], &t_inv, d);
                u[..d].copy_from_slice(&m);
                u[d..].copy_from_slice(&second);
                phi[..d].copy_from_slice(&p1);
                phi[d..].copy_from_slice(&p2);
            }
        }
        x.q.a.iter_mut().for_each(|a| *a += log_det);
        x.lazy = std::sync::OnceLock::new();
        self.changed(i);
        self.refresh_dependents(i);
        Ok(())
    }

    /// Replaces the elements' q(x_e) of a latent Gaussian vector node with n elements by the
    /// marginals of x_e' = T Σ_k Q_ek x_k (Q n × n, T d × d, both row-major); see the module doc.
    /// Other nodes are untouched: their cached products are dropped and the deterministic nodes
    /// below refreshed.
    pub fn mix_gaussian_rows(
        &mut self,
        node: NodeId,
        q: &[f64],
        t: &[f64],
    ) -> Result<(), RunError> {
        let i = self.id(node);
        let d = self
            .transformable(i)
            .map_err(|what| RunError::Schedule(format!("`{}` {what}", self.nodes[i].name)))?;
        let n = self.nodes[i].n;
        if q.len() != n * n || t.len() != d * d {
            return Err(RunError::Schedule(format!(
                "`{}`: a {n}-element mix needs Q of {n} × {n} and T of {d} × {d}",
                self.nodes[i].name
            )));
        }
        self.unshare(i);
        let tt = transpose(t, d, d);
        let (dd, len) = (d * d, self.nodes[i].len);
        let dist = self.nodes[i].dist().expect("a stochastic node").clone();
        let x = &self.nodes[i];
        // Means and covariances of the rows now.
        let means: Vec<&[f64]> = x.q.u.chunks_exact(len).map(|u| &u[..d]).collect();
        let covs: Vec<Vec<f64>> =
            x.q.u
                .chunks_exact(len)
                .map(|u| (0..dd).map(|k| u[d + k] - u[k / d] * u[k % d]).collect())
                .collect();
        let mut phi = vec![0.0; n * len];
        for (e, out) in phi.chunks_exact_mut(len).enumerate() {
            let (mut m, mut w) = (vec![0.0; d], vec![0.0; dd]);
            for k in 0..n {
                let c = q[e * n + k];
                m.iter_mut().zip(means[k]).for_each(|(o, v)| *o += c * v);
                w.iter_mut()
                    .zip(&covs[k])
                    .for_each(|(o, v)| *o += c * c * v);
            }
            let m = mul(t, &m, (d, d, 1));
            let cov = sandwich(t, &w, &tt, d);
            // φ = [Λm, −½Λ], Λ = Σ⁻¹.
            let (lam, _) = inverse_and_log_det(&cov, d)
                .ok_or_else(|| self.numerical(i, e, "the mixed covariance is singular".into()))?;
            out[..d].copy_from_slice(&mul(&lam, &m, (d, d, 1)));
            out[d..]
                .iter_mut()
                .zip(&lam)
                .for_each(|(o, l)| *o = -0.5 * l);
        }
        let mut u = vec![0.0; n * len];
        let mut a = vec![0.0; n];
        for (e, (u, phi)) in u
            .chunks_exact_mut(len)
            .zip(phi.chunks_exact(len))
            .enumerate()
        {
            a[e] = super::init::moments(&dist, phi, u)
                .map_err(|why| self.numerical(i, e, format!("the mixed row: {why}")))?;
        }
        let x = &mut self.nodes[i];
        (x.q.u, x.q.phi, x.q.a) = (u, phi, a);
        x.lazy = std::sync::OnceLock::new();
        self.changed(i);
        self.refresh_dependents(i);
        Ok(())
    }
}
