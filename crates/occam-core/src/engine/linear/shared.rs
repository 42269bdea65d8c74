//! One covariance for every element of a latent Gaussian vector (PCA's x_n, factor scores).
//!
//! When a node's only child is a linear-Gaussian structure on complete data, with a precision that
//! is the same for all its elements, and its prior is one constant, Winn (2.19) with the dot
//! product's messages (2.47–2.49) gives every element the same precision part of φ:
//! φ_n = [⟨φ_p⟩₁ + Σ_d τ_d y_dn ⟨w_d⟩, ⟨φ_p⟩₂ − ½ Σ_d τ_d ⟨w_d w_dᵀ⟩], so q(x_n) = N(m_n, Σ) with
//! one Σ. Such a node stores, once its first update has run (or its initial state has this form),
//! φ = [φ₁ per element (n × q), Φ₂ (q²)], u = [m per element (n × q), Σ (q²)] and A per element:
//! O(n·q) memory instead of O(n·q²), one q × q factorisation per update, m = Φ₁ Σ one GEMM, and
//! A(φ_n) = A(0, Φ₂) + ½ φ₁ₙ·m_n (the Gaussian log-partition, A(0, Φ₂) from the family's own
//! formula). Everything that reads such a node's moments goes through `Side::Shared` or forms the
//! per-element arrays on request (`dense_state`).

use super::*;
use crate::dist::gaussian_vector_sample_rows;
use crate::engine::init::moments;

/// Whether node `node` holds its moments in the shared form (see the module doc).
pub(in crate::engine) fn is_shared(node: &Node) -> bool {
    let MomentKind::Gaussian { d } = node.kind else {
        return false;
    };
    node.n >= 2
        && node.gated.is_none()
        && node.q.u.len() == node.n * d + d * d
        && node.q.phi.len() == node.q.u.len()
}

/// A node's moments as stored (see `Side`).
pub(super) fn side(node: &Node, q: usize) -> Side<'_> {
    if is_shared(node) {
        let (m, cov) = node.q.u.split_at(node.n * q);
        Side::Shared(m, cov)
    } else {
        Side::Dense(&node.q.u)
    }
}

/// For every node that may take the shared form, the structure that is its only child.
pub(in crate::engine) fn designate(
    nodes: &[Node],
    linear: &[Option<Arc<Linear>>],
) -> Vec<Option<Arc<Linear>>> {
    let mut out = vec![None; nodes.len()];
    for (f, lin) in linear.iter().enumerate() {
        let Some(lin) = lin
            .as_ref()
            .filter(|l| l.f == f && !l.points && l.complete(nodes))
        else {
            continue;
        };
        for s in 0..2 {
            let Source::Node(p) = nodes[f].parents[s].source else {
                continue;
            };
            let x = &nodes[p];
            let family = matches!(
                x.body,
                Body::Stochastic(Dist::GaussianArd(_) | Dist::MvGaussian(_))
            );
            // τ the same for every element of x: x indexes the columns, or τ is one value. (In
            // the matrix–vector form only x's messages share their second part, not W's rows'.)
            let uniform_tau = s != lin.row_slot || lin.uniform_tau() && lin.matvec.is_none();
            if family
                && uniform_tau
                && x.n >= 2
                && !x.map
                && x.observed.is_none()
                && x.selectors.is_empty()
                && x.children == [(f, Role::Slot(s))]
                && x.parents
                    .iter()
                    .all(|e| matches!(e.source, Source::Const(_)))
                && x.kind == (MomentKind::Gaussian { d: lin.q })
            {
                out[p] = Some(lin.clone());
            }
        }
    }
    out
}

/// F's slot that node i fills.
fn slot_of(lin: &Linear, nodes: &[Node], i: usize) -> usize {
    (0..2)
        .find(|&s| matches!(nodes[lin.f].parents[s].source, Source::Node(p) if p == i))
        .expect("a designated node is a parent of F")
}

/// ⟨φ_p⟩ and ⟨A_p⟩ of a node whose parents are all constants (the same for every element).
fn constant_prior(node: &Node, nodes: &[Node]) -> (Vec<f64>, f64) {
    struct P<'a>(&'a [Node], &'a Node, &'a mut [f64]);
    impl DistVisitor for P<'_> {
        type Output = f64;
        fn visit<D: ExpFamily>(self, d: &D) -> f64 {
            let mut buf = Vec::new();
            let pa = gather(self.0, self.1, 0, &mut buf);
            d.prior(&pa[..self.1.parents.len()], self.2)
        }
    }
    let mut phi = vec![0.0; node.len];
    let dist = node.dist().expect("a stochastic node");
    let a = dist.visit(P(nodes, node, &mut phi));
    (phi, a)
}

/// Every element's (u, φ) of a node in the shared form, per element (for inspection and reports).
pub(in crate::engine) fn dense_state(node: &Node) -> (Vec<f64>, Vec<f64>) {
    let MomentKind::Gaussian { d: q } = node.kind else {
        unreachable!("shared nodes are Gaussian vectors")
    };
    let (m, cov) = node.q.u.split_at(node.n * q);
    let u = Side::Shared(m, cov).dense(q).into_owned();
    let (phi1, phi2) = node.q.phi.split_at(node.n * q);
    let mut phi = Vec::with_capacity(node.n * node.len);
    for row in phi1.chunks_exact(q) {
        phi.extend_from_slice(row);
        phi.extend_from_slice(phi2);
    }
    (u, phi)
}

/// The shared form [m per element, Σ] of per-element moments u, if every element has the same
/// ⟨x xᵀ⟩ − m mᵀ.
fn compress_moments(u: &[f64], n: usize, q: usize) -> Option<Vec<f64>> {
    let l = q + q * q;
    if u.len() != n * l || n == 0 {
        return None;
    }
    // ⟨x xᵀ⟩ − m mᵀ of one element, row a against the first element's (no division per entry).
    let same_residual = |row: &[f64], cov: &mut [f64], first: bool| {
        let (m, second) = row.split_at(q);
        (0..q).all(|a| {
            let (s, c) = (&second[a * q..(a + 1) * q], &mut cov[a * q..(a + 1) * q]);
            let ma = m[a];
            if first {
                c.iter_mut()
                    .zip(s.iter().zip(m))
                    .for_each(|(c, (s, mb))| *c = s - ma * mb);
                true
            } else {
                c.iter()
                    .zip(s.iter().zip(m))
                    .all(|(c, (s, mb))| s - ma * mb == *c)
            }
        })
    };
    let mut cov = vec![0.0; q * q];
    same_residual(&u[..l], &mut cov, true);
    if !u
        .chunks_exact(l)
        .all(|row| same_residual(row, &mut cov, false))
    {
        return None;
    }
    let mut su: Vec<f64> = u.chunks_exact(l).flat_map(|r| &r[..q]).copied().collect();
    su.extend_from_slice(&cov);
    Some(su)
}

/// The shared form [φ₁ per element, Φ₂] of per-element natural parameters, if every element has
/// the same Φ₂.
fn compress_natural(phi: &[f64], q: usize) -> Option<Vec<f64>> {
    let l = q + q * q;
    if !phi.chunks_exact(l).all(|r| r[q..] == phi[q..l]) {
        return None;
    }
    let mut sphi: Vec<f64> = phi.chunks_exact(l).flat_map(|r| &r[..q]).copied().collect();
    sphi.extend_from_slice(&phi[q..l]);
    Some(sphi)
}

/// The shared form's (φ, u, A) from φ₁ (elements × q) and the shared Φ₂: one factorisation gives Σ
/// and A(0, Φ₂) (the family's own formulas at φ₁ = 0), then m = Φ₁ Σ (GEMM) and
/// A_n = A(0, Φ₂) + ½ φ₁ₙ·m_n. On failure, the element that broke and why.
pub(super) fn shared_moments(
    dist: &Dist,
    phi1: Vec<f64>,
    phi2: &[f64],
    q: usize,
) -> Result<NodeState, (usize, String)> {
    let mut u = Vec::new();
    let a = shared_moments_into(dist, &phi1, phi2, q, &mut u)?;
    let mut phi = phi1;
    phi.extend_from_slice(phi2);
    Ok(NodeState { phi, u, a })
}

/// [`shared_moments`] writing u = [m, Σ] into `u` (its buffer reused when it has the shared form's
/// length: no second n × q array of means while the new ones are formed) and returning A. On
/// failure `u` holds the new Σ's product only in its means part: see `Vmp::update_shared`.
fn shared_moments_into(
    dist: &Dist,
    phi1: &[f64],
    phi2: &[f64],
    q: usize,
    u: &mut Vec<f64>,
) -> Result<Vec<f64>, (usize, String)> {
    let mut centred = vec![0.0; q];
    centred.extend_from_slice(phi2);
    let mut u0 = vec![0.0; q + q * q];
    let a0 = moments(dist, &centred, &mut u0).map_err(|w| (0, w.to_string()))?;
    let cov = &u0[q..];
    let nq = phi1.len();
    if u.len() != nq + q * q {
        *u = vec![0.0; nq + q * q];
    }
    kernels::product_strided_into(phi1, q, cov, (0, q, q), &mut u[..nq]);
    let a: Vec<f64> = phi1
        .par_chunks(q)
        .zip(u[..nq].par_chunks(q))
        .map(|(p, m)| a0 + 0.5 * dot(p, m))
        .collect();
    if let Some(e) = a.iter().position(|v| !v.is_finite()) {
        return Err((e, "non-finite log-partition".into()));
    }
    u[nq..].copy_from_slice(cov);
    Ok(a)
}

impl Vmp {
    /// Winn (2.19) for a node that may take the shared form (module doc): Φ₂ = ⟨φ_p⟩₂ + the shared
    /// second part of the message, one factorisation for Σ and A(0, Φ₂), then φ₁ = ⟨φ_p⟩₁ + the
    /// first parts, m = Φ₁ Σ (GEMM) and A_n = A(0, Φ₂) + ½ φ₁ₙ·m_n.
    pub(in crate::engine) fn update_shared(&mut self, i: usize) -> Result<(), RunError> {
        let lin = self.shared[i].clone().expect("a designated node");
        let (nodes, x, q) = (&self.nodes, &self.nodes[i], lin.q);
        let msg = lin.grid_message(nodes, &self.cache, slot_of(&lin, nodes, i));
        assert!(
            msg.shared,
            "a designated node's messages share their second part"
        );
        let dist = x.dist().expect("a stochastic node");
        let (prior, _) = constant_prior(x, nodes);
        let mut phi1 = msg.first;
        phi1.par_chunks_mut(q)
            .for_each(|row| kernels::add_into(row, &prior[..q]));
        let mut phi2 = prior[q..].to_vec();
        kernels::add_into(&mut phi2, &msg.second);
        // The new means are written over the old ones (O(n·q) memory: the node's state once, the
        // new φ₁ beside it). Should the new q fail, the old means are formed again from the old
        // φ₁ and Σ, which are kept until then (the moments of the node's q).
        let dist = dist.clone();
        let reuse = is_shared(&self.nodes[i]);
        let mut u = if reuse {
            std::mem::take(&mut self.nodes[i].q.u)
        } else {
            Vec::new()
        };
        let a = match shared_moments_into(&dist, &phi1, &phi2, q, &mut u) {
            Ok(a) => a,
            Err((e, w)) => {
                if reuse {
                    let node = &mut self.nodes[i];
                    let nq = node.n * q;
                    let (old_m, old_cov) = u.split_at_mut(nq);
                    kernels::product_strided_into(&node.q.phi[..nq], q, old_cov, (0, q, q), old_m);
                    node.q.u = u;
                }
                return Err(self.numerical(i, e, w));
            }
        };
        phi1.extend_from_slice(&phi2);
        let node = &mut self.nodes[i];
        node.q = NodeState { phi: phi1, u, a };
        node.lazy = std::sync::OnceLock::new();
        self.changed(i);
        self.refresh_dependents(i);
        Ok(())
    }

    /// The bound term of a node in the shared form — Winn (2.34) summed over its elements, with
    /// S = Σ m_n and G = Σ ⟨x_n x_nᵀ⟩ = MᵀM + n Σ: ⟨φ_p⟩₁·S + ⟨φ_p⟩₂·G − n⟨A_p⟩ (prior part) plus
    /// Σ A_n − Σ φ₁ₙ·m_n − Φ₂·G (own part).
    pub(in crate::engine) fn shared_bound(&self, i: usize) -> f64 {
        let x = &self.nodes[i];
        let MomentKind::Gaussian { d: q } = x.kind else {
            unreachable!("shared nodes are Gaussian vectors")
        };
        let (m, cov) = x.q.u.split_at(x.n * q);
        let (phi1, phi2) = x.q.phi.split_at(x.n * q);
        let g = Side::Shared(m, cov).gram(q);
        let mut s = vec![0.0; q];
        m.chunks_exact(q).for_each(|r| kernels::add_into(&mut s, r));
        let (prior, ap) = constant_prior(x, &self.nodes);
        let prior_part = dot(&prior[..q], &s) + dot(&prior[q..], &g) - x.n as f64 * ap;
        let own = x.q.a.iter().sum::<f64>() - dot(phi1, m) - dot(phi2, &g);
        prior_part + own
    }

    /// Initialises a designated node directly in the shared form, in O(n·q) memory: q = the prior,
    /// point masses at draws from it (drawn as the element-by-element initialisation draws them),
    /// or given moments that have one covariance. `false`: left to the element-by-element path.
    pub(in crate::engine) fn init_shared(
        &mut self,
        i: usize,
        init: &Init,
        rng: &mut Rng,
    ) -> Result<bool, RunError> {
        let x = &self.nodes[i];
        let (Some(_), MomentKind::Gaussian { d: q }) = (&self.shared[i], x.kind) else {
            return Ok(false);
        };
        let n = x.n;
        let dist = x.dist().expect("a stochastic node");
        let (prior, _) = constant_prior(x, &self.nodes);
        let of_prior = || shared_moments(dist, prior[..q].repeat(n), &prior[q..], q);
        let state = match init {
            Init::Prior => of_prior().map_err(|(e, w)| self.numerical(i, e, w))?,
            Init::Random => {
                // The designated families draw with `gaussian_vector_sample`: one factorisation.
                // Each row's q is centred on its draw with the prior's precision sharpened (as
                // the element path's random start, `engine/init.rs`): φ₁ₙ = κΛ xₙ, Σ shared.
                // The prior must be proper to be drawn from (checked as its q would be, once).
                let mut centred = vec![0.0; q];
                centred.extend_from_slice(&prior[q..]);
                moments(dist, &centred, &mut vec![0.0; x.len])
                    .map_err(|w| self.numerical(i, 0, w.to_string()))?;
                let mut draws = vec![0.0; n * q];
                gaussian_vector_sample_rows(&prior, q, rng, &mut draws);
                let kappa = super::super::init::RANDOM_START_SHARPNESS;
                let phi2: Vec<f64> = prior[q..].iter().map(|v| kappa * v).collect();
                let lam: Vec<f64> = phi2.iter().map(|v| -2.0 * v).collect();
                let phi1 = kernels::product_strided(&draws, q, &lam, (0, q, q));
                drop(draws);
                shared_moments(dist, phi1, &phi2, q).map_err(|(e, w)| self.numerical(i, e, w))?
            }
            Init::Moments(values) if values.len() == n * x.len => {
                let Some(u) = compress_moments(values, n, q) else {
                    return Ok(false);
                };
                let prior = of_prior().map_err(|(e, w)| self.numerical(i, e, w))?;
                NodeState { u, ..prior }
            }
            _ => return Ok(false),
        };
        let node = &mut self.nodes[i];
        node.q = state;
        node.lazy = std::sync::OnceLock::new();
        self.changed(i);
        Ok(true)
    }

    /// After initialisation: node i takes the shared form if it is designated and its state has it.
    pub(in crate::engine) fn share_if_possible(&mut self, i: usize) {
        let node = &self.nodes[i];
        if self.shared[i].is_none() || is_shared(node) {
            return;
        }
        let MomentKind::Gaussian { d: q } = node.kind else {
            return;
        };
        let compressed = compress_natural(&node.q.phi, q)
            .and_then(|phi| Some((phi, compress_moments(&node.q.u, node.n, q)?)));
        if let Some((phi, u)) = compressed {
            let node = &mut self.nodes[i];
            (node.q.phi, node.q.u) = (phi, u);
            node.lazy = std::sync::OnceLock::new();
            self.changed(i);
        }
    }

    /// Node i back in the per-element form (before its moments are overwritten element by
    /// element): a node with one shared covariance, or a gated block's W with one covariance per
    /// component (`gated_linear/weights.rs`); any other node is left as it is.
    pub(in crate::engine) fn unshare(&mut self, i: usize) {
        // A mixture of BPCA's W kept with one covariance per component (gated block) is
        // expanded the same way: the draws write per-element moments, so its φ must be too.
        let grouped = self.gated_grouped_w(i);
        if grouped || is_shared(&self.nodes[i]) {
            let (u, phi) = if grouped {
                self.gated_dense(i)
            } else {
                dense_state(&self.nodes[i])
            };
            let node = &mut self.nodes[i];
            (node.q.u, node.q.phi) = (u, phi);
            node.lazy = std::sync::OnceLock::new();
            self.changed(i);
        }
    }
}
