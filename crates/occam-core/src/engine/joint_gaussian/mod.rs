//! A Gaussian q-block: q(x_n) joint over scalar Gaussian nodes s_1, …, s_I read together as one
//! vector x = concat(s_1, …, s_I) (Bayesian ICA's sources, Lawrence §6.5, with q(x_n) a
//! full-covariance Gaussian per plate element n instead of Π_i q(s_in)).
//!
//! Structured VMP (Winn (5.20)): the optimal q(x_n) is the exponential of the expected log joint
//! over x_n, i.e. a Gaussian whose natural parameters are the sum of
//! - each member's expected prior natural parameters [⟨τμ⟩, −½⟨τ⟩] (a mixture's Σ_k ρ_k φ_k, Winn
//!   (2.52)), on the diagonal: the members' priors are independent given their parents;
//! - the summed messages to x from its children, [η, H] with H a full I × I block (Winn (2.18),
//!   (2.49): the messages to a vector parent are joint in its coordinates).
//!
//! So Λ_n = −(H + Hᵀ) − 2 diag(φ₂), m_n = Λ_n⁻¹ (η + φ₁). Each member keeps its marginal
//! N(m_ni, (Λ_n⁻¹)_ii) as its own q (φ, u, A), which is all its parents' messages and its prior's
//! bound term read (its prior is a function of s_in alone). x's moments are the joint
//! ⟨x_n⟩ = m_n, ⟨x_n x_nᵀ⟩ = m_n m_nᵀ + Λ_n⁻¹: x keeps [m_n, Λ_n⁻¹] in its `phi` (see
//! [`refresh_joint`]) and, in its `a`, the entropy gap H[q(x_n)] − Σ_i H[q(s_in)] =
//! −½ ln|Λ_n| − ½ Σ_i ln (Λ_n⁻¹)_ii ≤ 0 (Gaussian entropies), which the block's bound adds once
//! (on its first member) to the members' factorised terms Winn (2.34)–(2.36).

use super::factorised::{factorised_bound, factorised_send};
use super::qblock::QBlock;
use super::*;
use crate::linalg::{chol_inverse_into, chol_log_det, chol_solve_in_place, cholesky_into};
use crate::special::LN_2PI;

/// A Gaussian q-block (module docs): the sources s_1..s_I in x's slot order, and x.
#[derive(Clone, Debug)]
pub(crate) struct JointGaussian {
    /// The sources, sorted (node order).
    members: Vec<usize>,
    /// The sources in x's slot order.
    sources: Vec<usize>,
    /// The concatenation x.
    x: usize,
    /// x's deterministic descendants, in topological order (refreshed after each update; the
    /// network is fixed once compiled, so the list is formed once).
    descendants: Vec<usize>,
    /// The update's work arrays, kept between sweeps (see [`Scratch`]).
    scratch: Scratch,
}

/// The update's work arrays: the members' priors (N × 2I), their marginals (N × 3I), one row's
/// dense scratch (3 I²) and a mixture's component priors. Kept by the block so a sweep allocates
/// none of them (`pool::Kept`).
type Scratch = super::pool::Kept<Work>;

#[derive(Debug, Default)]
struct Work {
    prior: Vec<f64>,
    marginal: Vec<f64>,
    row: Vec<f64>,
    components: Vec<f64>,
    gather: Vec<f64>,
}

impl JointGaussian {
    pub(super) fn new(nodes: &[Node], x: usize) -> Self {
        let sources: Vec<usize> = nodes[x]
            .parents
            .iter()
            .map(|e| match e.source {
                Source::Node(p) => p,
                Source::Const(_) => unreachable!("checked by `check`"),
            })
            .collect();
        let mut members = sources.clone();
        members.sort_unstable();
        let mut mark = vec![usize::MAX; nodes.len()];
        let descendants = super::compile::deterministic_descendants(nodes, x, &mut mark);
        JointGaussian {
            members,
            sources,
            x,
            descendants,
            scratch: Scratch::default(),
        }
    }

    /// The member the schedule updates (the others follow it).
    pub(super) fn leader(&self) -> usize {
        self.members[0]
    }
}

/// Checks every concatenation declared a Gaussian q-block (`Graph::joint_q`): its parents are
/// distinct latent, non-MAP scalar Gaussian nodes in its own plates, read element by element,
/// each with the concatenation as its only child.
pub(super) fn check(nodes: &[Node]) -> Result<(), BuildError> {
    for x in nodes.iter().filter(|n| n.joint_gaussian) {
        let bad = |node: &str, what: &str| BuildError::Shape {
            node: node.into(),
            what: format!("in the Gaussian q-block of `{}`: {what}", x.name),
        };
        let mut seen = Vec::new();
        for edge in &x.parents {
            let Source::Node(p) = edge.source else {
                return Err(bad(&x.name, "a member is a constant"));
            };
            let s = &nodes[p];
            if seen.contains(&p) {
                return Err(bad(&s.name, "named twice"));
            }
            seen.push(p);
            if !matches!(s.body, Body::Stochastic(Dist::Gaussian(_))) || s.len != 2 {
                return Err(bad(&s.name, "only scalar Gaussian nodes can be members"));
            }
            if !s.observed.is_none() || s.map {
                return Err(bad(&s.name, "a member must be latent and not MAP"));
            }
            if s.children.len() != 1 {
                return Err(bad(
                    &s.name,
                    "a member must be read by the concatenation only",
                ));
            }
            if s.n != x.n || edge.stack != 1 || (0..x.n).any(|e| edge.at(e) != e) {
                return Err(bad(
                    &s.name,
                    "a member must have the concatenation's plates, read element by element",
                ));
            }
        }
    }
    Ok(())
}

/// Recomputes x's moments from [m_n, Σ_n] kept in its `phi` (module docs) — or, before the block's
/// first update (`phi` zero), from the members' marginals as `concat` does (a product start);
/// `pa_moments(e, out)` writes element e's members' moments [⟨s_i⟩, ⟨s_i²⟩]… into `out` (one
/// buffer for every element).
pub(super) fn refresh_joint(
    node: &Node,
    u: &mut [f64],
    mut pa_moments: impl FnMut(usize, &mut Vec<f64>),
) {
    let (len, d) = (node.len, node.parents.len());
    let mut pa = Vec::with_capacity(2 * d);
    for e in 0..node.n {
        let kept = &node.q.phi[e * len..(e + 1) * len];
        let ue = &mut u[e * len..(e + 1) * len];
        if kept.iter().all(|&v| v == 0.0) {
            pa_moments(e, &mut pa);
            for i in 0..d {
                ue[i] = pa[2 * i];
                for j in 0..d {
                    ue[d + i * d + j] = if i == j {
                        pa[2 * i + 1]
                    } else {
                        pa[2 * i] * pa[2 * j]
                    };
                }
            }
        } else {
            joint_moments(&kept[..d], &kept[d..], ue);
        }
    }
}

/// [m, m mᵀ + Σ] from m and Σ. Σ is symmetric bit for bit (`chol_inverse_into` writes both
/// triangles from one sum), so each off-diagonal pair is formed once: m_i m_j + Σ_ij has the bits
/// of m_j m_i + Σ_ji.
fn joint_moments(m: &[f64], cov: &[f64], u: &mut [f64]) {
    let d = m.len();
    let (um, uc) = u[..d + d * d].split_at_mut(d);
    um.copy_from_slice(m);
    for (i, &mi) in m.iter().enumerate() {
        for (j, (&mj, &c)) in m[..=i].iter().zip(&cov[i * d..i * d + i + 1]).enumerate() {
            let v = mi * mj + c;
            uc[i * d + j] = v;
            uc[j * d + i] = v;
        }
    }
}

/// For a member that is a mixture whose parents depend on the component only (`config_only`,
/// runs of one): ⟨φ⟩ of each component, once, into `phi` (the prior of element e is then
/// Σ_q w_eq ⟨φ_q⟩, Winn (2.52)); `false` otherwise. `buf` is the gather's scratch.
fn component_priors(nodes: &[Node], s: usize, phi: &mut Vec<f64>, buf: &mut Vec<f64>) -> bool {
    let node = &nodes[s];
    let Body::Stochastic(Dist::Gaussian(gaussian)) = &node.body else {
        return false;
    };
    if !node.config_only || node.period != 1 || node.selectors.is_empty() {
        return false;
    }
    phi.clear();
    phi.resize(node.configs * 2, 0.0);
    for (q, out) in phi.chunks_exact_mut(2).enumerate() {
        // Element 0's extended element q reads component q's parents.
        let pa = gather(nodes, node, q, buf);
        gaussian.prior(&pa[..node.parents.len()], out);
    }
    true
}

/// q(x_n) from x's messages `eta` = [η, H] and the members' priors `prior` = [φ₁, φ₂] per member
/// (module docs): writes m_n, Σ_n, each member's marginal [φ₁, φ₂, A] and the entropy gap; `false` if Λ_n
/// is not positive definite. `work` is scratch (3 d² values: Λ_n, its Cholesky factor, and the
/// inverse's work array), so a row allocates nothing.
fn solve(
    eta: &[f64],
    prior: &[f64],
    work: &mut [f64],
    m: &mut [f64],
    cov: &mut [f64],
    marginal: &mut [f64],
    gap: &mut f64,
) -> bool {
    let d = m.len();
    let (lambda, rest) = work.split_at_mut(d * d);
    let (l, work) = rest.split_at_mut(d * d);
    let h = &eta[d..d + d * d];
    // −(H_ij + H_ji) is symmetric bit for bit (addition commutes): each pair is formed once.
    for i in 0..d {
        for (j, &hij) in h[i * d..i * d + i + 1].iter().enumerate() {
            let v = -(hij + h[j * d + i]);
            lambda[i * d + j] = v;
            lambda[j * d + i] = v;
        }
    }
    for i in 0..d {
        lambda[i * d + i] -= 2.0 * prior[2 * i + 1];
        m[i] = eta[i] + prior[2 * i];
    }
    // (`linalg::Cholesky`'s steps on this row's scratch.)
    if !cholesky_into(lambda, 1.0, d, l) {
        return false;
    }
    chol_inverse_into(l, d, cov, work);
    chol_solve_in_place(l, d, m);
    let mut g = -0.5 * chol_log_det(l, d);
    for i in 0..d {
        let v = cov[i * d + i];
        let ln_v = v.ln();
        g -= 0.5 * ln_v;
        marginal[3 * i] = m[i] / v;
        marginal[3 * i + 1] = -0.5 / v;
        // A of a scalar Gaussian (`dist::gaussian::moments_scalar`).
        marginal[3 * i + 2] = 0.5 * (m[i] * m[i] / v + ln_v + LN_2PI);
    }
    *gap = g;
    true
}

impl QBlock for JointGaussian {
    fn members(&self) -> &[usize] {
        &self.members
    }

    /// Every member at once (module docs).
    fn update(&self, vmp: &mut Vmp, _member: usize) -> Result<(), RunError> {
        let (x, d) = (self.x, self.sources.len());
        let n = vmp.nodes[x].n;
        let mut work = self.scratch.take();
        // Each member's expected prior natural parameters (no child outside x: `check`); every
        // entry is written below.
        let mut prior = std::mem::take(&mut work.prior);
        prior.resize(n * 2 * d, 0.0);
        for (k, &s) in self.sources.iter().enumerate() {
            if component_priors(&vmp.nodes, s, &mut work.components, &mut work.gather) {
                let (node, phi) = (&vmp.nodes[s], &work.components);
                let rows = prior
                    .chunks_exact_mut(2 * d)
                    .map(|p| &mut p[2 * k..2 * k + 2]);
                match node.selectors.as_slice() {
                    // One selector (the common mixture): its weights are Q(z_e = q) read in
                    // place, the same values `config_weight` forms (1 × Q(z_e = q)).
                    [sel] if sel.k == node.configs => {
                        let u = &vmp.nodes[sel.node].q.u;
                        for (e, out) in rows.enumerate() {
                            let ie = sel.at(e);
                            let (mut p1, mut p2) = (0.0, 0.0);
                            for (&w, th) in u[ie * sel.k..(ie + 1) * sel.k]
                                .iter()
                                .zip(phi.chunks_exact(2))
                            {
                                p1 += w * th[0];
                                p2 += w * th[1];
                            }
                            (out[0], out[1]) = (p1, p2);
                        }
                    }
                    _ => {
                        for (e, out) in rows.enumerate() {
                            let (mut p1, mut p2) = (0.0, 0.0);
                            for (q, th) in phi.chunks_exact(2).enumerate() {
                                let w = config_weight(&vmp.nodes, node, e, q);
                                p1 += w * th[0];
                                p2 += w * th[1];
                            }
                            (out[0], out[1]) = (p1, p2);
                        }
                    }
                }
                continue;
            }
            let dist = vmp.nodes[s].dist().expect("members are stochastic").clone();
            let none = vec![0.0; n * 2];
            let state = vmp.run_update(s, &dist, &none)?;
            for e in 0..n {
                prior[(e * d + k) * 2..(e * d + k) * 2 + 2]
                    .copy_from_slice(&state.phi[e * 2..e * 2 + 2]);
            }
            vmp.nodes[s].q = state;
        }
        let messages = vmp.child_messages(x);
        let len = d + d * d;
        // x's arrays are overwritten in place (every entry is written below).
        let xq = &mut vmp.nodes[x].q;
        let (mut kept, mut gap) = (std::mem::take(&mut xq.phi), std::mem::take(&mut xq.a));
        kept.resize(n * len, 0.0);
        gap.resize(n, 0.0);
        // Every entry is written by `solve`.
        let mut marginal = std::mem::take(&mut work.marginal);
        marginal.resize(n * 3 * d, 0.0);
        work.row.resize(3 * d * d, 0.0);
        // Elements are independent given the messages: chunks run in parallel.
        let chunk = kernels::elements_per_chunk(len);
        let rows = |ch: usize,
                    kept: &mut [f64],
                    gap: &mut [f64],
                    marginal: &mut [f64],
                    work: &mut [f64]| {
            let start = ch * chunk;
            for (r, g) in gap.iter_mut().enumerate() {
                let e = start + r;
                let eta = &messages[e * len..(e + 1) * len];
                let p = &prior[e * 2 * d..(e + 1) * 2 * d];
                let out = &mut marginal[r * 3 * d..(r + 1) * 3 * d];
                let (m, cov) = kept[r * len..(r + 1) * len].split_at_mut(d);
                if !solve(eta, p, work, m, cov, out, g) {
                    return Some(e);
                }
            }
            None
        };
        let failed = if n <= chunk {
            // One chunk: on this thread (see `kernels::map_chunks`).
            rows(0, &mut kept, &mut gap, &mut marginal, &mut work.row)
        } else {
            kept.par_chunks_mut(chunk * len)
                .zip(gap.par_chunks_mut(chunk))
                .zip(marginal.par_chunks_mut(chunk * 3 * d))
                .enumerate()
                .filter_map(|(ch, ((kept, gap), marginal))| {
                    rows(ch, kept, gap, marginal, &mut vec![0.0; 3 * d * d])
                })
                .min()
        };
        if let Some(e) = failed {
            vmp.recycle(messages);
            let xq = &mut vmp.nodes[x].q;
            // Nothing was changed: x's kept q (now partly overwritten) is cleared, so its moments
            // fall back to the members' product (`refresh_joint`).
            kept.iter_mut().for_each(|v| *v = 0.0);
            gap.iter_mut().for_each(|v| *v = 0.0);
            (xq.phi, xq.a) = (kept, gap);
            (work.prior, work.marginal) = (prior, marginal);
            self.scratch.keep(work);
            return Err(vmp.numerical(
                self.sources[0],
                e,
                "the precision of the Gaussian q-block is not positive definite".into(),
            ));
        }
        vmp.recycle(messages);
        for (k, &s) in self.sources.iter().enumerate() {
            let q = &mut vmp.nodes[s].q;
            let rows = kept
                .chunks_exact(len)
                .zip(marginal.chunks_exact(3 * d))
                .zip(q.phi.chunks_exact_mut(2).zip(q.u.chunks_exact_mut(2)))
                .zip(q.a.iter_mut());
            for (((ke, me), (phi, u)), a) in rows {
                let (m, v) = (ke[k], ke[d + k * d + k]);
                let mk = &me[3 * k..3 * k + 3];
                phi.copy_from_slice(&mk[..2]);
                (u[0], u[1]) = (m, m * m + v);
                *a = mk[2];
            }
            vmp.changed(s);
        }
        (work.prior, work.marginal) = (prior, marginal);
        self.scratch.keep(work);
        let node = &mut vmp.nodes[x];
        let mut u = std::mem::take(&mut node.q.u);
        for (k, ue) in kept.chunks_exact(len).zip(u.chunks_exact_mut(len)) {
            joint_moments(&k[..d], &k[d..], ue);
        }
        (node.q.u, node.q.phi, node.q.a) = (u, kept, gap);
        vmp.changed(x);
        // x's own deterministic descendants (x itself is written above).
        for &j in &self.descendants {
            vmp.refresh(j);
        }
        Ok(())
    }

    /// The members' factorised terms (their priors and marginal entropies), and on the first
    /// member the entropy gap of every q(x_n) (module docs).
    fn bound(&self, vmp: &Vmp, cache: &Cache, member: usize, sizes: bool) -> f64 {
        let own = factorised_bound(vmp, cache, member, sizes);
        if member != self.leader() {
            return own;
        }
        let gap: f64 = vmp.nodes[self.x].q.a.iter().sum();
        own + if sizes { gap.abs() } else { gap }
    }

    fn send(&self, vmp: &Vmp, member: usize, role: Role, out: &mut [f64]) {
        factorised_send(vmp, member, role, out)
    }

    /// A member's own start; on the leader's, x's kept [m, Σ] and gap are cleared, so x starts as
    /// the product of the members' starts (`refresh_joint`). Once per block: the leader is the
    /// first member in node order, which `Vmp::start_nodes` starts before the other members and
    /// before x (a deterministic child of every member) is refreshed; clearing N (I + I²) values
    /// per member cost a third of the N = 10⁴, I = 10 start (callgrind).
    fn start(&self, vmp: &mut Vmp, member: usize, rng: &mut Rng) -> Result<(), RunError> {
        if member == self.leader() {
            let x = &mut vmp.nodes[self.x];
            x.q.phi.iter_mut().for_each(|v| *v = 0.0);
            x.q.a.iter_mut().for_each(|v| *v = 0.0);
        }
        vmp.start_stochastic(member, rng)
    }
}

impl Vmp {
    /// Whether node i is a joint Gaussian block's member other than its leader (the schedule
    /// skips it: updating any member updates the whole block).
    pub(super) fn joint_follower(&self, i: usize) -> bool {
        matches!(self.block_of(i), Some(Block::JointGaussian(b)) if b.leader() != i)
    }
}

#[cfg(test)]
mod tests;
