//! The Gaussian Markov chain (linear dynamical system): x_0 ~ N(m, Λ0⁻¹), x_t | x_{t−1} ~
//! N(A x_{t−1}, diag(τ)⁻¹), with rows a_i of A Gaussian (or constant) and τ_i Gamma (or constant).
//!
//! The expected log prior is quadratic in x with a block-tridiagonal precision: J_00 ∋ ⟨Λ0⟩,
//! h_0 ∋ ⟨Λ0⟩⟨m⟩; for t ≥ 1, J_tt ∋ diag⟨τ⟩, J_{t−1,t−1} ∋ Σ_i ⟨τ_i⟩⟨a_i a_iᵀ⟩ and J_{t,t−1} =
//! −diag⟨τ⟩⟨A⟩ (the Winn (2.21) moments of each row's Gaussian, so ⟨AᵀQA⟩ is exact, unlike a
//! Kalman filter fed ⟨A⟩). Children's messages η_t = [h, −½ col(J)] add to step t. q is smoothed by
//! [`crate::tridiag::smooth`]; its entropy is ½ n (1 + ln 2π) − ½ ln|J|, n = L·D.
//! Record: [H, L − 1, S₋ = Σ_{t≥1}⟨x_{t−1}x_{t−1}ᵀ⟩, S₊ = Σ_{t≥1}⟨x_t x_tᵀ⟩, C = Σ_{t≥1}⟨x_t x_{t−1}ᵀ⟩].
//! Messages (Winn (2.58)–(2.59) per factor): to m, [⟨Λ0⟩⟨x_0⟩, −½ col⟨Λ0⟩]; to Λ0,
//! [−½ col⟨(x_0 − m)(x_0 − m)ᵀ⟩, ½]; to a_i, [⟨τ_i⟩ C_i·, −½ ⟨τ_i⟩ col(S₋)]; to τ_i,
//! [−½ (S₊_ii − 2⟨a_i⟩ᵀC_i· + tr(⟨a_i a_iᵀ⟩S₋)), ½ (L − 1)].
//!
//! Inputs (controls, [`Graph::gaussian_markov_chain_with_inputs`]): x_t | x_{t−1} ~
//! N(A x_{t−1} + B u_t, diag(τ)⁻¹) for t ≥ 1 with u_t observed (P values) and rows b_i of B
//! Gaussian (or constant), in mean field with A. B leaves the precision as it is and adds to the
//! linear terms: h_t,i += ⟨τ_i⟩⟨b_i⟩ᵀu_t, h_{t−1} −= Σ_i ⟨τ_i⟩⟨a_i⟩⟨b_i⟩ᵀu_t. The record gains
//! X₊U = Σ_{t≥1}⟨x_t⟩u_tᵀ, X₋U = Σ_{t≥1}⟨x_{t−1}⟩u_tᵀ (D×P) and UU = Σ_{t≥1}u_t u_tᵀ (P×P); the squared
//! residual gains −2⟨b_i⟩ᵀX₊U_i· + 2⟨a_i⟩ᵀX₋U⟨b_i⟩ + tr(⟨b_i b_iᵀ⟩UU); the message to a_i becomes
//! [⟨τ_i⟩(C_i· − X₋U⟨b_i⟩), −½⟨τ_i⟩col(S₋)] and b_i gets [⟨τ_i⟩(X₊U_i· − X₋Uᵀ⟨a_i⟩), −½⟨τ_i⟩col(UU)]
//! (Winn (2.58)–(2.59) for the Gaussian factor with mean a_iᵀx_{t−1} + b_iᵀu_t).

use super::*;
use crate::linalg::{mat_vec, Cholesky};
use crate::special::LN_2PI;
use crate::tridiag::{smooth_into, Smoothed};

/// Record length: [H, L − 1, S₋, S₊, C] and, with P inputs, [X₊U, X₋U, UU].
pub(super) fn stride(d: usize, p: usize) -> usize {
    2 + 3 * d * d + 2 * d * p + p * p
}

/// The parents' expected moments: ⟨m⟩, ⟨mmᵀ⟩, ⟨Λ0⟩, ⟨ln|Λ0|⟩, rows (⟨a_i⟩, ⟨a_i a_iᵀ⟩), ⟨τ_i⟩, ⟨ln τ_i⟩.
struct Params<'a> {
    d: usize,
    pa: &'a [&'a [f64]; MAX_SLOTS],
}

impl<'a> Params<'a> {
    fn m(&self) -> &'a [f64] {
        &self.pa[0][..self.d]
    }
    fn mm(&self) -> &'a [f64] {
        &self.pa[0][self.d..]
    }
    fn lam0(&self) -> &'a [f64] {
        &self.pa[1][..self.d * self.d]
    }
    fn ln_det0(&self) -> f64 {
        self.pa[1][self.d * self.d]
    }
    fn row(&self, i: usize) -> (&'a [f64], &'a [f64]) {
        let (d, len) = (self.d, self.d + self.d * self.d);
        let r = &self.pa[2][i * len..(i + 1) * len];
        (&r[..d], &r[d..])
    }
    fn tau(&self, i: usize) -> (f64, f64) {
        (self.pa[3][2 * i], self.pa[3][2 * i + 1])
    }
    /// Row i of B: ⟨b_i⟩, ⟨b_i b_iᵀ⟩ (P and P² values).
    fn brow(&self, i: usize, p: usize) -> (&'a [f64], &'a [f64]) {
        let len = p + p * p;
        let r = &self.pa[4][i * len..(i + 1) * len];
        (&r[..p], &r[p..])
    }
}

/// The input part of one sequence's record: (X₊U, X₋U, UU), or `None` without inputs.
fn input_sums(d: usize, p: usize, rec: &[f64]) -> Option<(&[f64], &[f64], &[f64])> {
    if p == 0 {
        return None;
    }
    let r = &rec[2 + 3 * d * d..];
    Some((&r[..d * p], &r[d * p..2 * d * p], &r[2 * d * p..]))
}

/// P, the inputs per step of a sequence of `len` steps.
fn n_inputs(seq: &Seq<'_>) -> usize {
    seq.inputs.len().checked_div(seq.len).unwrap_or(0)
}

/// Smoothing of one sequence: per-step moments into `u`, the record into `rec`.
pub(super) fn update(
    d: usize,
    seq: &Seq<'_>,
    eta: &[f64],
    u: &mut [f64],
    rec: &mut [f64],
) -> Result<(), SequenceError> {
    // The precision blocks and the smoother's arrays live in a workspace kept per thread: fresh
    // T·D² arrays per sequence and sweep cost more in page faults than the smoothing itself.
    WORKSPACE.with(|ws| {
        let ws = &mut *ws.borrow_mut();
        update_in(d, seq, eta, u, rec, ws)
    })
}

/// Per-thread arrays of [`update`].
#[derive(Default)]
struct Workspace {
    diag: Vec<f64>,
    sub: Vec<f64>,
    h: Vec<f64>,
    smoothed: Smoothed,
    work: Vec<f64>,
}

thread_local! {
    static WORKSPACE: std::cell::RefCell<Workspace> = std::cell::RefCell::new(Workspace::default());
}

fn update_in(
    d: usize,
    seq: &Seq<'_>,
    eta: &[f64],
    u: &mut [f64],
    rec: &mut [f64],
    ws: &mut Workspace,
) -> Result<(), SequenceError> {
    let (len, dd, row) = (seq.len, d * d, d + d * d);
    let p = Params { d, pa: &seq.pa };
    let zeroed = |v: &mut Vec<f64>, n: usize| {
        v.clear();
        v.resize(n, 0.0);
    };
    zeroed(&mut ws.diag, len * dd);
    zeroed(&mut ws.sub, len.saturating_sub(1) * dd);
    zeroed(&mut ws.h, len * d);
    let (diag, sub, h) = (&mut ws.diag, &mut ws.sub, &mut ws.h);
    diag[..dd].copy_from_slice(p.lam0());
    mat_vec(p.lam0(), p.m(), &mut h[..d]);
    // Σ_i ⟨τ_i⟩⟨a_i a_iᵀ⟩, added to every step that has a successor.
    let mut m = vec![0.0; dd];
    for i in 0..d {
        let (tau, aa) = (p.tau(i).0, p.row(i).1);
        m.iter_mut().zip(aa).for_each(|(v, a)| *v += tau * a);
    }
    for t in 1..len {
        for i in 0..d {
            let (tau, a) = (p.tau(i).0, p.row(i).0);
            diag[t * dd + i * d + i] += tau;
            for j in 0..d {
                sub[(t - 1) * dd + i * d + j] = -tau * a[j];
            }
        }
        diag[(t - 1) * dd..t * dd]
            .iter_mut()
            .zip(&m)
            .for_each(|(v, w)| *v += w);
    }
    let np = n_inputs(seq);
    for t in (1..len).filter(|_| np > 0) {
        let ut = &seq.inputs[t * np..(t + 1) * np];
        for i in 0..d {
            let (tau, a) = (p.tau(i).0, p.row(i).0);
            let bu = tau * dot(p.brow(i, np).0, ut);
            h[t * d + i] += bu;
            h[(t - 1) * d..t * d]
                .iter_mut()
                .zip(a)
                .for_each(|(v, a)| *v -= a * bu);
        }
    }
    for t in 0..len {
        let e = &eta[t * row..(t + 1) * row];
        h[t * d..(t + 1) * d]
            .iter_mut()
            .zip(&e[..d])
            .for_each(|(v, w)| *v += w);
        for i in 0..d {
            for j in 0..d {
                // −2 · sym(η₂): the children's precision.
                diag[t * dd + i * d + j] -= e[d + i * d + j] + e[d + j * d + i];
            }
        }
    }
    smooth_into(d, diag, sub, h, &mut ws.smoothed, &mut ws.work)
        .map_err(|step| SequenceError::NotPositiveDefinite { step })?;
    let sm = &ws.smoothed;
    for t in 0..len {
        let (mu, cov) = (&sm.mean[t * d..(t + 1) * d], &sm.cov[t * dd..(t + 1) * dd]);
        let ut = &mut u[t * row..(t + 1) * row];
        ut[..d].copy_from_slice(mu);
        for ij in 0..dd {
            ut[d + ij] = cov[ij] + mu[ij / d] * mu[ij % d];
        }
    }
    let n = (len * d) as f64;
    rec[0] = 0.5 * n * (1.0 + LN_2PI) - 0.5 * sm.log_det;
    rec[1] = len.saturating_sub(1) as f64;
    let (prev, rest) = rec[2..].split_at_mut(dd);
    let (cur, rest) = rest.split_at_mut(dd);
    let (cross, rest) = rest.split_at_mut(dd);
    if np > 0 {
        let (xpu, rest) = rest.split_at_mut(d * np);
        let (xmu, uu) = rest.split_at_mut(d * np);
        for t in 1..len {
            let ut = &seq.inputs[t * np..(t + 1) * np];
            let (mu, mp) = (&sm.mean[t * d..(t + 1) * d], &sm.mean[(t - 1) * d..t * d]);
            for i in 0..d {
                for k in 0..np {
                    xpu[i * np + k] += mu[i] * ut[k];
                    xmu[i * np + k] += mp[i] * ut[k];
                }
            }
            for k in 0..np * np {
                uu[k] += ut[k / np] * ut[k % np];
            }
        }
    }
    for t in 1..len {
        let (mu, mp) = (&sm.mean[t * d..(t + 1) * d], &sm.mean[(t - 1) * d..t * d]);
        for ij in 0..dd {
            prev[ij] += u[(t - 1) * row + d + ij];
            cur[ij] += u[t * row + d + ij];
            cross[ij] += sm.cross[(t - 1) * dd + ij] + mu[ij / d] * mp[ij % d];
        }
    }
    Ok(())
}

/// −½ Σ_{t≥1} ⟨(x_{t,i} − a_iᵀx_{t−1} − b_iᵀu_t)²⟩ · (−2): the expected squared residual of
/// coordinate i (`np` inputs).
fn residual(d: usize, np: usize, p: &Params<'_>, rec: &[f64], i: usize) -> f64 {
    let dd = d * d;
    let (prev, cur, cross) = (
        &rec[2..2 + dd],
        &rec[2 + dd..2 + 2 * dd],
        &rec[2 + 2 * dd..2 + 3 * dd],
    );
    let (a, aa) = p.row(i);
    let plain = cur[i * d + i] - 2.0 * dot(a, &cross[i * d..(i + 1) * d]) + dot(aa, prev);
    let Some((xpu, xmu, uu)) = input_sums(d, np, rec) else {
        return plain;
    };
    let (b, bb) = p.brow(i, np);
    let a_xmu_b: f64 = (0..d)
        .map(|j| a[j] * dot(&xmu[j * np..(j + 1) * np], b))
        .sum();
    plain - 2.0 * dot(b, &xpu[i * np..(i + 1) * np]) + 2.0 * a_xmu_b + dot(bb, uu)
}

/// ⟨(x_0 − m)(x_0 − m)ᵀ⟩.
fn initial_scatter(d: usize, p: &Params<'_>, u: &[f64]) -> Vec<f64> {
    let (x, xx) = (&u[..d], &u[d..d + d * d]);
    let (m, mm) = (p.m(), p.mm());
    (0..d * d)
        .map(|ij| {
            let (i, j) = (ij / d, ij % d);
            xx[ij] - x[i] * m[j] - m[i] * x[j] + mm[ij]
        })
        .collect()
}

/// ⟨ln N(x_0 | m, Λ0⁻¹)⟩ + Σ_t ⟨ln N(x_t | A x_{t−1}, diag(τ)⁻¹)⟩ + H.
pub(super) fn bound(d: usize, seq: &Seq<'_>, u: &[f64], rec: &[f64]) -> f64 {
    let p = Params { d, pa: &seq.pa };
    let np = n_inputs(seq);
    let scatter = initial_scatter(d, &p, u);
    let first = 0.5 * p.ln_det0() - 0.5 * d as f64 * LN_2PI - 0.5 * dot(p.lam0(), &scatter);
    let n = rec[1];
    let trans: f64 = (0..d)
        .map(|i| {
            let (tau, ln_tau) = p.tau(i);
            0.5 * n * (ln_tau - LN_2PI) - 0.5 * tau * residual(d, np, &p, rec, i)
        })
        .sum();
    first + trans + rec[0]
}

/// The message to the parent in `slot` (module docs).
pub(super) fn message(d: usize, slot: usize, seq: &Seq<'_>, u: &[f64], rec: &[f64], m: &mut [f64]) {
    let (dd, row) = (d * d, d + d * d);
    let p = Params { d, pa: &seq.pa };
    let np = n_inputs(seq);
    match slot {
        0 => {
            mat_vec(p.lam0(), &u[..d], &mut m[..d]);
            m[d..]
                .iter_mut()
                .zip(p.lam0())
                .for_each(|(v, l)| *v = -0.5 * l);
        }
        1 => {
            let s = initial_scatter(d, &p, u);
            m[..dd].iter_mut().zip(&s).for_each(|(v, w)| *v = -0.5 * w);
            m[dd] = 0.5;
        }
        2 => {
            let (prev, cross) = (&rec[2..2 + dd], &rec[2 + 2 * dd..2 + 3 * dd]);
            for i in 0..d {
                let tau = p.tau(i).0;
                let mi = &mut m[i * row..(i + 1) * row];
                for j in 0..d {
                    mi[j] = tau * cross[i * d + j];
                }
                if let Some((_, xmu, _)) = input_sums(d, np, rec) {
                    let b = p.brow(i, np).0;
                    for j in 0..d {
                        mi[j] -= tau * dot(&xmu[j * np..(j + 1) * np], b);
                    }
                }
                mi[d..]
                    .iter_mut()
                    .zip(prev)
                    .for_each(|(v, w)| *v = -0.5 * tau * w);
            }
        }
        3 => {
            for i in 0..d {
                m[2 * i] = -0.5 * residual(d, np, &p, rec, i);
                m[2 * i + 1] = 0.5 * rec[1];
            }
        }
        _ => {
            let (xpu, xmu, uu) = input_sums(d, np, rec).expect("slot 4 is B, with inputs");
            let brow = np + np * np;
            for i in 0..d {
                let (tau, a) = (p.tau(i).0, p.row(i).0);
                let mi = &mut m[i * brow..(i + 1) * brow];
                for k in 0..np {
                    let back: f64 = (0..d).map(|j| xmu[j * np + k] * a[j]).sum();
                    mi[k] = tau * (xpu[i * np + k] - back);
                }
                mi[np..]
                    .iter_mut()
                    .zip(uu)
                    .for_each(|(v, w)| *v = -0.5 * tau * w);
            }
        }
    }
}

/// Ancestral draw of one sequence given the parents' drawn values: states into `x`, [x, xxᵀ] into `u`.
pub(super) fn sample(d: usize, seq: &Seq<'_>, rng: &mut Rng, x: &mut [f64], u: &mut [f64]) {
    use rand::Rng as _;
    let p = Params { d, pa: &seq.pa };
    let row = d + d * d;
    let normal = |rng: &mut Rng| -> f64 { rng.sample(rand_distr::StandardNormal) };
    // x_0 = m + chol(Λ0⁻¹) z.
    let mut cov = vec![0.0; d * d];
    if let Some(c) = Cholesky::new(p.lam0(), d) {
        c.inverse_into(&mut cov);
    }
    let z: Vec<f64> = (0..d).map(|_| normal(rng)).collect();
    let mut noise = vec![0.0; d];
    if let Some(c) = Cholesky::new(&cov, d) {
        c.lower_times(&z, &mut noise);
    }
    for t in 0..seq.len {
        if t == 0 {
            for i in 0..d {
                x[i] = p.m()[i] + noise[i];
            }
        } else {
            let np = n_inputs(seq);
            for i in 0..d {
                let mut mean = dot(p.row(i).0, &x[(t - 1) * d..t * d]);
                if np > 0 {
                    mean += dot(p.brow(i, np).0, &seq.inputs[t * np..(t + 1) * np]);
                }
                x[t * d + i] = mean + normal(rng) / p.tau(i).0.sqrt();
            }
        }
        let (xt, ut) = (&x[t * d..(t + 1) * d], &mut u[t * row..(t + 1) * row]);
        ut[..d].copy_from_slice(xt);
        for ij in 0..d * d {
            ut[d + ij] = xt[ij / d] * xt[ij % d];
        }
    }
}
