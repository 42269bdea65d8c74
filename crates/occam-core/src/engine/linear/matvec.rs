//! `W @ x` with a multivariate Gaussian child: y_n ~ N(W x_n, Λ⁻¹) over a plate N, W's D rows w_i
//! (q-vectors, independent under Q) in a plate of their own, x_n latent or observed, Λ one Wishart
//! (or constant) precision for every n — factor analysis with a full noise precision, and the
//! multi-output regression y_n = W x_n + noise when x is data.
//!
//! The generic path forms the matrix–vector factor's moments per n (`factor::matvec`: ⟨F_n⟩ = W̄ x̄_n,
//! ⟨F_n F_nᵀ⟩_ij = w̄_iᵀ⟨x_n x_nᵀ⟩w̄_j for i ≠ j, tr(⟨w_i w_iᵀ⟩⟨x_n x_nᵀ⟩) for i = j) and passes the
//! child's message [Λ̄ y_n, −½ Λ̄] (MvGaussian to its mean, Winn (2.21) in vector form) through the
//! factor (2.49) per n. Everything VMP reads is a sum over n of products, so with m_n = 1 for data
//! and 0 for a missing y_n (a missing leaf is integrated out and sends nothing), Y the data with zero
//! rows where missing (N × D), and the per-sweep sums
//!
//! * YX = Σ_n m_n y_n x̄_nᵀ (D × q, one GEMM Yᵀ X̄) and S = Σ_n m_n ⟨x_n x_nᵀ⟩ (q × q; X̄ᵀ diag(m) X̄ +
//!   (Σ m) Σ when x keeps one covariance), cached until x changes,
//!
//! the messages and the bound term are:
//!
//! * to row k of W: [(Λ̄ YX)_k − Σ_{j≠k} Λ̄ₛ_kj S w̄_j, −½ Λ̄_kk S], Λ̄ₛ = ½(Λ̄ + Λ̄ᵀ) (the factor's
//!   message (2.49) with Φ₂ = −½ Λ̄ summed over n);
//! * to x_n: [(Y Λ̄ᵀ W̄)_n, −½ m_n (W̄ᵀ Λ̄ W̄ + Σ_i Λ̄_ii Cov(w_i))] — one GEMM for the first parts, one
//!   second part shared by every observed n (so x may keep one covariance, module `shared`);
//! * to Λ: [−½ R, ½ Σ m] with R = Σ m ⟨(y − F)(y − F)ᵀ⟩ = Σ m y yᵀ − YX W̄ᵀ − W̄ YXᵀ + Σ m ⟨F Fᵀ⟩, and
//!   Σ m ⟨F Fᵀ⟩_ij = w̄_iᵀ S w̄_j (i ≠ j), tr(⟨w_i w_iᵀ⟩ S) (i = j) — the MvGaussian's message to its
//!   precision summed over n;
//! * y's term (Winn (2.34) for data, without Σ f(y)): Σ_ij Λ̄_ij (YX W̄ᵀ)_ij − ½ Σ_ij Λ̄_ij (Σ m y yᵀ)_ij
//!   − ½ tr(Λ̄ Σ m ⟨F Fᵀ⟩) + ½ (Σ m)(⟨ln|Λ|⟩ − D ln 2π).
//!
//! Cost per sweep: O(N·D·q) in three GEMMs plus O(N·q²) for S (O(N·q) with one covariance); no
//! per-n D × D or q × q state.
//!
//! y's mean may also be W x_n + μ with μ one vector shared by every n (module `offset`).

use super::*;
use crate::factor::MatVec;
use crate::linalg::mat_vec;

mod offset;

/// The matrix–vector form of a [`Linear`] structure (see the module doc). Slot 0 of F is W (the
/// "row" parent: its changes leave the cached sums valid), slot 1 is x.
#[derive(Debug)]
pub(super) struct MatVecForm {
    /// Output dimension D (rows of W).
    d: usize,
    /// The sum's slot that holds the offset μ (y's mean is then W x_n + μ, module `offset`).
    offset: Option<usize>,
    data: OnceLock<VecData>,
}

/// What the data contribute, formed once.
#[derive(Debug)]
struct VecData {
    /// Y with zero rows where y_n is missing (N × D); `None` when every y_n is data (y's values are
    /// read in place).
    ym: Option<Vec<f64>>,
    /// m_n; `None` when every y_n is data.
    mask: Option<Vec<f64>>,
    /// Σ m y yᵀ (D × D).
    yy: Vec<f64>,
    /// Σ m y (D).
    ysum: Vec<f64>,
    /// Σ m.
    count: f64,
}

/// Whether edge `e` reads parent element k for extended element k (n elements).
fn identity(edge: &Edge, n: usize) -> bool {
    edge.rule.is_identity(n)
}

/// The matrix–vector structure of deterministic node `f`, if it has one (see the module doc).
pub(super) fn detect(nodes: &[Node], f: usize) -> Option<Linear> {
    let fnode = &nodes[f];
    let Body::Deterministic(Factor::MatVec(MatVec { rows: d, cols: q })) = fnode.body else {
        return None;
    };
    let [(m, Role::Slot(fslot))] = fnode.children[..] else {
        return None;
    };
    let n = fnode.n;
    // y's mean: F itself, or the sum of F and an offset (module `offset`).
    let (y, sum) = match &nodes[m].body {
        Body::Deterministic(Factor::Sum(s)) if s.d == d && s.n == 2 => {
            let sn = &nodes[m];
            let [(y, Role::Slot(0))] = sn.children[..] else {
                return None;
            };
            if sn.n != n || sn.configs != 1 || !identity(&sn.parents[fslot], n) {
                return None;
            }
            (y, Some(m))
        }
        _ if fslot == 0 => (m, None),
        _ => return None,
    };
    let yn = &nodes[y];
    if !matches!(yn.body, Body::Stochastic(Dist::MvGaussian(_)))
        || yn.kind != (MomentKind::Gaussian { d })
        || yn.configs != 1
        || fnode.configs != 1
        || yn.map
        || !yn.children.is_empty()
        || yn.observed.is_none()
        || yn.n != n
        || !matches!(yn.parents[0].source, Source::Node(p) if p == sum.unwrap_or(f))
        || !identity(&yn.parents[0], n)
    {
        return None;
    }
    // W: D rows, row t of every F element is W's element t (or a stacked constant).
    let w = &fnode.parents[0];
    let w_node = match w.source {
        Source::Const(_) => None,
        Source::Node(p) => {
            if nodes[p].n != d || !(w.rule.periodic(d) && w.rule.is_identity(d)) {
                return None;
            }
            Some(p)
        }
    };
    // x: one element per element of F.
    let x = &fnode.parents[1];
    let Source::Node(xp) = x.source else {
        return None;
    };
    if nodes[xp].n != n || !identity(x, n) || Some(xp) == w_node {
        return None;
    }
    // Λ: one precision for every n.
    let lam = &yn.parents[1];
    let lam_node = match lam.source {
        Source::Const(_) => None,
        Source::Node(p) => Some(p),
    };
    if let Some(p) = lam_node {
        if !lam.rule.is_broadcast() || nodes[p].n != 1 || p == xp || Some(p) == w_node {
            return None;
        }
    }
    let offset = match sum {
        Some(m) => {
            let taken: Vec<usize> = [Some(xp), w_node, lam_node].into_iter().flatten().collect();
            Some(offset::detect(nodes, m, fslot, d, &taken)?)
        }
        None => None,
    };
    Some(Linear {
        y,
        f,
        sum,
        offsets: Vec::new(),
        q,
        row_slot: 0,
        rows: d,
        cols: n,
        tau_of_row: Vec::new(),
        points: false,
        unit_tau: Vec::new(),
        data: OnceLock::new(),
        own: 0.0,
        matvec: Some(MatVecForm {
            d,
            offset,
            data: OnceLock::new(),
        }),
    })
}

/// The sums that every message and the bound read, at the current moments of W, x and Λ.
struct Sums {
    /// Λ̄ (D × D) and ⟨ln|Λ|⟩.
    lam: Vec<f64>,
    ln_det: f64,
    /// W̄ (D × q).
    wm: Vec<f64>,
    /// YX (D × q), S (q × q) and, with an offset, s_x = Σ m x̄ (q, in `mb`), cached under F.
    xp: Arc<ColumnProducts>,
    /// YX and Σ m y yᵀ, of the data less the offset when there is one (module `offset`).
    yc: Vec<f64>,
    yy: Vec<f64>,
}

impl MatVecForm {
    fn data<'a>(&'a self, lin: &Linear, nodes: &[Node]) -> &'a VecData {
        self.data.get_or_init(|| {
            let (d, y) = (self.d, &nodes[lin.y]);
            let complete = y.observed.is_all();
            let (ym, mask) = if complete {
                (None, None)
            } else {
                let mut ym = y.data.to_vec();
                let mut mask = vec![1.0; y.n];
                for e in (0..y.n).filter(|&e| !y.is_observed(e)) {
                    ym[e * d..(e + 1) * d].iter_mut().for_each(|v| *v = 0.0);
                    mask[e] = 0.0;
                }
                (Some(ym), Some(mask))
            };
            let rows = ym.as_deref().unwrap_or(&y.data);
            let yy = kernels::weighted_sums_strided(rows, d, rows, (0, d, d));
            let count = mask.as_ref().map_or(y.n as f64, |m| m.iter().sum());
            let mut ysum = vec![0.0; d];
            rows.chunks_exact(d)
                .for_each(|r| kernels::add_into(&mut ysum, r));
            VecData {
                ym,
                mask,
                yy,
                ysum,
                count,
            }
        })
    }

    /// Y with zero rows where missing (N × D).
    fn ym<'a>(&'a self, lin: &Linear, nodes: &'a [Node]) -> &'a [f64] {
        self.data(lin, nodes)
            .ym
            .as_deref()
            .unwrap_or(&nodes[lin.y].data)
    }

    /// Λ̄ and ⟨ln|Λ|⟩.
    fn precision<'a>(&self, lin: &Linear, nodes: &'a [Node]) -> (&'a [f64], f64) {
        let dd = self.d * self.d;
        let u = match &nodes[lin.y].parents[1].source {
            Source::Const(m) => &m[..],
            Source::Node(p) => &nodes[*p].q.u[..],
        };
        (&u[..dd], u[dd])
    }

    /// YX and S (cached under F until x changes) with Λ̄ and W̄.
    fn sums(&self, lin: &Linear, nodes: &[Node], cache: &Cache) -> Sums {
        let (d, q) = (self.d, lin.q);
        let xp = cached(
            cache,
            lin.f,
            |e| &mut e.linear,
            || {
                let data = self.data(lin, nodes);
                let x = lin.side(nodes, 1);
                let (means, view) = x.means(q);
                let yc = kernels::weighted_sums_strided(self.ym(lin, nodes), d, means, view);
                let mc2 = match &data.mask {
                    Some(m) => x.weighted_second(q, m),
                    None => x.gram(q),
                };
                let mut mb = Vec::new();
                if self.offset.is_some() {
                    mb = vec![0.0; q];
                    for e in 0..nodes[lin.y].n {
                        let me = data.mask.as_ref().map_or(1.0, |m| m[e]);
                        if me != 0.0 {
                            kernels::add_into(&mut mb, x.mean(q, e));
                        }
                    }
                }
                Arc::new(ColumnProducts { yc, mc2, mb })
            },
        );
        let (lam, ln_det) = self.precision(lin, nodes);
        let w = lin.side(nodes, 0);
        let wm = (0..d).flat_map(|i| w.mean(q, i).to_vec()).collect();
        let (yc, yy) = (xp.yc.clone(), self.data(lin, nodes).yy.clone());
        let mut s = Sums {
            lam: lam.to_vec(),
            ln_det,
            wm,
            xp,
            yc,
            yy,
        };
        self.apply_offset(lin, nodes, &mut s);
        s
    }

    /// Σ m ⟨F Fᵀ⟩ (D × D) from S: w̄_iᵀ S w̄_j off the diagonal, tr(⟨w_i w_iᵀ⟩ S) on it.
    fn second_f(&self, lin: &Linear, nodes: &[Node], s: &Sums) -> Vec<f64> {
        let (d, q) = (self.d, lin.q);
        let w = lin.side(nodes, 0);
        let sw = self.s_times_w(q, s);
        let mut ff = vec![0.0; d * d];
        let mut buf = Vec::new();
        for i in 0..d {
            for j in 0..d {
                ff[i * d + j] = if i == j {
                    w.element(q, i, &mut buf);
                    trace_of_product(&buf[q..], &s.xp.mc2, q)
                } else {
                    dot(&s.wm[i * q..(i + 1) * q], &sw[j * q..(j + 1) * q])
                };
            }
        }
        ff
    }

    /// S w̄_j for every row j (D × q).
    fn s_times_w(&self, q: usize, s: &Sums) -> Vec<f64> {
        let mut sw = vec![0.0; s.wm.len()];
        for (o, wj) in sw.chunks_exact_mut(q).zip(s.wm.chunks_exact(q)) {
            mat_vec(&s.xp.mc2, wj, o);
        }
        sw
    }

    /// Σ_n y_n ⟨F_n⟩ᵀ = YX W̄ᵀ (D × D).
    fn y_f(&self, q: usize, s: &Sums) -> Vec<f64> {
        let d = self.d;
        let mut out = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                out[i * d + j] = dot(&s.yc[i * q..(i + 1) * q], &s.wm[j * q..(j + 1) * q]);
            }
        }
        out
    }

    /// The message to W's rows (added into `out`, D rows of q + q²) — see the module doc.
    fn message_to_rows(&self, lin: &Linear, nodes: &[Node], cache: &Cache, out: &mut [f64]) {
        let (d, q) = (self.d, lin.q);
        let l = q + q * q;
        let s = self.sums(lin, nodes, cache);
        let sw = self.s_times_w(q, &s);
        for k in 0..d {
            let o = &mut out[k * l..(k + 1) * l];
            for j in 0..d {
                let yx = &s.yc[j * q..(j + 1) * q];
                let lkj = s.lam[k * d + j];
                o[..q].iter_mut().zip(yx).for_each(|(o, v)| *o += lkj * v);
                if j != k {
                    let c = -0.5 * (lkj + s.lam[j * d + k]);
                    let swj = &sw[j * q..(j + 1) * q];
                    o[..q].iter_mut().zip(swj).for_each(|(o, v)| *o += c * v);
                }
            }
            let lkk = s.lam[k * d + k];
            o[q..]
                .iter_mut()
                .zip(&s.xp.mc2)
                .for_each(|(o, v)| *o += -0.5 * lkk * v);
        }
    }

    /// The message to x (first parts per n, one second part shared when every y_n is data) — see
    /// the module doc.
    pub(super) fn message_to_x(&self, lin: &Linear, nodes: &[Node]) -> Message {
        let (d, q) = (self.d, lin.q);
        let (lam, _) = self.precision(lin, nodes);
        let w = lin.side(nodes, 0);
        // P = Λ̄ᵀ W̄ (D × q): the first part of x_n's message is y_nᵀ P.
        let mut p = vec![0.0; d * q];
        for j in 0..d {
            for i in 0..d {
                let lij = lam[i * d + j];
                p[j * q..(j + 1) * q]
                    .iter_mut()
                    .zip(w.mean(q, i))
                    .for_each(|(o, v)| *o += lij * v);
            }
        }
        let mut first = kernels::product_strided(self.ym(lin, nodes), d, &p, (0, q, q));
        if let Some(mu) = self.offset(lin, nodes) {
            // Ỹ = Y − 1 μ̄ᵀ on the observed rows: μ̄ᵀ P off each of their first parts.
            let mut mp = vec![0.0; q];
            for (j, &mj) in mu.mean.iter().enumerate() {
                mp.iter_mut()
                    .zip(&p[j * q..(j + 1) * q])
                    .for_each(|(o, v)| *o += mj * v);
            }
            let mask = self.data(lin, nodes).mask.as_ref();
            for (e, o) in first.chunks_exact_mut(q).enumerate() {
                if mask.is_none_or(|m| m[e] != 0.0) {
                    o.iter_mut().zip(&mp).for_each(|(o, v)| *o -= v);
                }
            }
        }
        // W̄ᵀ Λ̄ W̄ + Σ_i Λ̄_ii Cov(w_i) = Σ_ij Λ̄_ij w̄_i w̄_jᵀ with ⟨w_i w_iᵀ⟩ on the diagonal.
        let mut second = vec![0.0; q * q];
        let mut buf = Vec::new();
        for i in 0..d {
            let wi = w.mean(q, i);
            // Σ_j Λ̄_ij w̄_j, the diagonal term left out.
            let mut lw = vec![0.0; q];
            for j in (0..d).filter(|&j| j != i) {
                let lij = lam[i * d + j];
                lw.iter_mut()
                    .zip(w.mean(q, j))
                    .for_each(|(o, v)| *o += lij * v);
            }
            w.element(q, i, &mut buf);
            let lii = lam[i * d + i];
            for a in 0..q {
                for b in 0..q {
                    second[a * q + b] += -0.5 * (wi[a] * lw[b] + lii * buf[q + a * q + b]);
                }
            }
        }
        match &self.data(lin, nodes).mask {
            None => Message {
                first,
                second,
                shared: true,
            },
            Some(m) => Message {
                first,
                second: m
                    .iter()
                    .flat_map(|&mn| second.iter().map(move |v| mn * v))
                    .collect(),
                shared: false,
            },
        }
    }

    /// Adds the message through F to its parent in slot `slot` (W or x) into `out`.
    pub(super) fn message(
        &self,
        lin: &Linear,
        nodes: &[Node],
        cache: &Cache,
        slot: usize,
        out: &mut [f64],
    ) {
        if slot == 0 {
            self.message_to_rows(lin, nodes, cache, out);
        } else {
            self.message_to_x(lin, nodes).add_to(lin.q, out);
        }
    }

    /// Adds y's message to Λ, [−½ R, ½ Σ m], into `out`.
    pub(super) fn precision_message(
        &self,
        lin: &Linear,
        nodes: &[Node],
        cache: &Cache,
        out: &mut [f64],
    ) {
        let d = self.d;
        let s = self.sums(lin, nodes, cache);
        let data = self.data(lin, nodes);
        let (yf, ff) = (self.y_f(lin.q, &s), self.second_f(lin, nodes, &s));
        for i in 0..d {
            for j in 0..d {
                let r = s.yy[i * d + j] - yf[i * d + j] - yf[j * d + i] + ff[i * d + j];
                out[i * d + j] += -0.5 * r;
            }
        }
        out[d * d] += 0.5 * data.count;
    }

    /// y's bound term without Σ f(y) (see the module doc).
    pub(super) fn bound(&self, lin: &Linear, nodes: &[Node], cache: &Cache) -> f64 {
        let d = self.d;
        let s = self.sums(lin, nodes, cache);
        let data = self.data(lin, nodes);
        let (yf, ff) = (self.y_f(lin.q, &s), self.second_f(lin, nodes, &s));
        dot(&s.lam, &yf) - 0.5 * dot(&s.lam, &s.yy) - 0.5 * trace_of_product(&s.lam, &ff, d)
            + 0.5 * data.count * (s.ln_det - d as f64 * LN_2PI)
    }

    /// F's moments per element (⟨F_n⟩, ⟨F_n F_nᵀ⟩), for ancestral sampling and inspection.
    pub(super) fn f_moments(&self, lin: &Linear, nodes: &[Node]) -> Vec<f64> {
        let (f, q) = (&nodes[lin.f], lin.q);
        let Body::Deterministic(factor) = &f.body else {
            unreachable!("F is a factor")
        };
        let w = lin.side(nodes, 0).dense(q);
        let x = lin.side(nodes, 1);
        let mut u = vec![0.0; f.n * f.len];
        let mut buf = Vec::new();
        for (e, ue) in u.chunks_exact_mut(f.len).enumerate() {
            x.element(q, e, &mut buf);
            factor.moments(&[&w, &buf], ue);
        }
        u
    }
}

#[cfg(test)]
mod tests;
