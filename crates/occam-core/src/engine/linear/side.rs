//! How the kernel reads a factor's moments (per element, or means with one shared covariance) and
//! the messages it sends back (per element, or with one shared second part).

use super::*;

/// The moments of one factor of F as stored: per element, or means with one covariance that every
/// element shares (module `shared`).
#[derive(Clone, Copy, Debug)]
pub(super) enum Side<'a> {
    /// [⟨x⟩, ⟨x xᵀ⟩] per element, rows of q + q² values.
    Dense(&'a [f64]),
    /// Means (elements × q) and the covariance Σ: ⟨x xᵀ⟩_e = ⟨x⟩_e ⟨x⟩_eᵀ + Σ.
    Shared(&'a [f64], &'a [f64]),
}

impl<'a> Side<'a> {
    /// The means as a strided view for `kernels`: values and (offset, width, stride).
    pub(super) fn means(self, q: usize) -> (&'a [f64], (usize, usize, usize)) {
        match self {
            Side::Dense(u) => (u, (0, q, q + q * q)),
            Side::Shared(m, _) => (m, (0, q, q)),
        }
    }

    pub(super) fn mean(self, q: usize, i: usize) -> &'a [f64] {
        let (v, (_, _, stride)) = self.means(q);
        &v[i * stride..i * stride + q]
    }

    /// tr(⟨x_i x_iᵀ⟩ B) for a q × q matrix B: m_iᵀ B m_i + tr(Σ B) when shared.
    pub(super) fn trace_with(self, q: usize, i: usize, b: &[f64]) -> f64 {
        match self {
            Side::Dense(u) => {
                let l = q + q * q;
                trace_of_product(&u[i * l + q..(i + 1) * l], b, q)
            }
            Side::Shared(m, cov) => {
                let mi = &m[i * q..(i + 1) * q];
                let quad: f64 = (0..q)
                    .map(|a| mi[a] * dot(&b[a * q..(a + 1) * q], mi))
                    .sum();
                quad + trace_of_product(cov, b, q)
            }
        }
    }

    /// Σ_i w_i ⟨x_i x_iᵀ⟩ (q²) over the elements: one GEMM Mᵀ diag(w) M plus (Σ w) Σ when shared.
    pub(super) fn weighted_second(self, q: usize, w: &[f64]) -> Vec<f64> {
        match self {
            Side::Dense(u) => kernels::weighted_sums_strided(w, 1, u, (q, q * q, q + q * q)),
            Side::Shared(m, cov) => {
                let wm: Vec<f64> = m
                    .chunks_exact(q)
                    .zip(w)
                    .flat_map(|(row, wi)| row.iter().map(move |v| wi * v))
                    .collect();
                let mut s = kernels::weighted_sums_strided(&wm, q, m, (0, q, q));
                let total: f64 = w.iter().sum();
                s.iter_mut().zip(cov).for_each(|(s, c)| *s += total * c);
                s
            }
        }
    }

    /// Σ_i ⟨x_i x_iᵀ⟩ (q²) over the elements: MᵀM + n Σ when shared.
    pub(super) fn gram(self, q: usize) -> Vec<f64> {
        match self {
            Side::Dense(u) => {
                let n = u.len() / (q + q * q);
                kernels::weighted_sums_strided(&vec![1.0; n], 1, u, (q, q * q, q + q * q))
            }
            Side::Shared(m, cov) => {
                let n = (m.len() / q) as f64;
                let mut s = kernels::weighted_sums_strided(m, q, m, (0, q, q));
                s.iter_mut().zip(cov).for_each(|(s, c)| *s += n * c);
                s
            }
        }
    }

    /// One element's [⟨x⟩, ⟨x xᵀ⟩] into `buf`.
    pub(super) fn element(self, q: usize, i: usize, buf: &mut Vec<f64>) {
        buf.clear();
        match self {
            Side::Dense(u) => buf.extend_from_slice(&u[i * (q + q * q)..(i + 1) * (q + q * q)]),
            Side::Shared(m, cov) => {
                let mi = &m[i * q..(i + 1) * q];
                buf.extend_from_slice(mi);
                buf.extend((0..q * q).map(|ab| mi[ab / q] * mi[ab % q] + cov[ab]));
            }
        }
    }

    /// Every element's [⟨x⟩, ⟨x xᵀ⟩] (formed when shared: only masked data need it).
    pub(super) fn dense(self, q: usize) -> std::borrow::Cow<'a, [f64]> {
        match self {
            Side::Dense(u) => std::borrow::Cow::Borrowed(u),
            Side::Shared(m, _) => {
                let mut all = Vec::with_capacity(m.len() / q * (q + q * q));
                let mut buf = Vec::new();
                for i in 0..m.len() / q {
                    self.element(q, i, &mut buf);
                    all.extend_from_slice(&buf);
                }
                std::borrow::Cow::Owned(all)
            }
        }
    }
}

/// The message through F to one of its parents on a grid: first parts per element (elements × q)
/// and second parts, q² per element or one block every element shares.
pub(super) struct Message {
    pub(super) first: Vec<f64>,
    pub(super) second: Vec<f64>,
    pub(super) shared: bool,
}

impl Message {
    /// Adds the message into a parent's accumulator (rows of q + q²).
    pub(super) fn add_to(&self, q: usize, out: &mut [f64]) {
        let qq = q * q;
        let add = |(i, o): (usize, &mut [f64])| {
            let second = if self.shared {
                &self.second[..]
            } else {
                &self.second[i * qq..(i + 1) * qq]
            };
            kernels::add_into(&mut o[..q], &self.first[i * q..(i + 1) * q]);
            kernels::add_into(&mut o[q..], second);
        };
        if kernels::sequential(out.len()) {
            out.chunks_mut(q + qq).enumerate().for_each(add);
        } else {
            out.par_chunks_mut(q + qq).enumerate().for_each(add);
        }
    }
}
