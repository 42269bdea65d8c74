//! Matrix–vector product y = W x with W's r rows gathered from a plate (each row a Gaussian
//! q-vector, independent under Q) and x a Gaussian q-vector: factor analysis / PCA in vector form.
//!
//! ⟨yᵢ⟩ = ⟨wᵢ⟩ᵀ⟨x⟩; ⟨yᵢyⱼ⟩ = ⟨wᵢ⟩ᵀ⟨xxᵀ⟩⟨wⱼ⟩ (i ≠ j), tr(⟨wᵢwᵢᵀ⟩⟨xxᵀ⟩) (i = j).
//! With φ = [φ₁, Φ₂]: message to row k: [φ₁ₖ⟨x⟩ + Σ_{j≠k}(Φ₂ₖⱼ + Φ₂ⱼₖ)⟨xxᵀ⟩⟨wⱼ⟩, Φ₂ₖₖ col⟨xxᵀ⟩];
//! message to x: [Σᵢ φ₁ᵢ⟨wᵢ⟩, col Σᵢⱼ Φ₂ᵢⱼ⟨wᵢwⱼᵀ⟩] with ⟨wᵢwⱼᵀ⟩ = ⟨wᵢ⟩⟨wⱼ⟩ᵀ for i ≠ j.

use super::Deterministic;
use crate::dist::SlotInput;
use crate::linalg::{mat_vec, quad_form, trace_of_product};
use crate::moments::MomentKind;
use crate::spec::{CallRule, FunctionSpec};

/// y = W x with `rows` stacked rows of dimension `cols`.
#[derive(Clone, Debug)]
pub struct MatVec {
    /// Output dimension r (rows of W).
    pub rows: usize,
    /// Input dimension q.
    pub cols: usize,
}

impl Deterministic for MatVec {
    const NAME: &'static str = "matvec";
    const FUNCTION: Option<FunctionSpec> = Some(FunctionSpec {
        name: "matvec",
        operator: Some("@"),
        min_args: 2,
        max_args: Some(2),
        summary: "W @ x: rows of W (its last plate) times a vector; the row plate becomes the event plate",
        rule: CallRule::Operator,
        example: "plate P = 3\nW[P] over Q ~ GaussianARD(0, 1)\nx[N] over Q ~ GaussianARD(0, 1)\ny[N] over P ~ GaussianARD(mean = matvec(W, x), precision = 1)\nobserve y\n",
    });
    const BILINEAR: bool = true;
    fn n_slots(&self) -> usize {
        2
    }
    fn slot_name(&self, s: usize) -> String {
        ["matrix", "vector"][s].to_string()
    }
    fn kind(&self) -> MomentKind {
        MomentKind::Gaussian { d: self.rows }
    }
    fn slot_input(&self, s: usize) -> SlotInput {
        let kind = MomentKind::Gaussian { d: self.cols };
        SlotInput {
            kind,
            stack: if s == 0 { self.rows } else { 1 },
        }
    }
    fn moments(&self, pa: &[&[f64]], u: &mut [f64]) {
        let (r, q) = (self.rows, self.cols);
        let len = q + q * q;
        let (x, xx) = (&pa[1][..q], &pa[1][q..]);
        let row = |i: usize| &pa[0][i * len..(i + 1) * len];
        for i in 0..r {
            u[i] = (0..q).map(|a| row(i)[a] * x[a]).sum();
        }
        for i in 0..r {
            for j in 0..r {
                u[r + i * r + j] = if i == j {
                    trace_of_product(&row(i)[q..], xx, q)
                } else {
                    quad_form(&row(i)[..q], xx, &row(j)[..q])
                };
            }
        }
    }
    fn message_to(&self, s: usize, phi: &[f64], pa: &[&[f64]], m: &mut [f64]) {
        let (r, q) = (self.rows, self.cols);
        let len = q + q * q;
        let (x, xx) = (&pa[1][..q], &pa[1][q..]);
        let row = |i: usize| &pa[0][i * len..(i + 1) * len];
        let big = |i: usize, j: usize| phi[r + i * r + j];
        if s == 0 {
            let mut xw = vec![0.0; q];
            for k in 0..r {
                let out = &mut m[k * len..(k + 1) * len];
                for a in 0..q {
                    out[a] = phi[k] * x[a];
                }
                for j in (0..r).filter(|&j| j != k) {
                    mat_vec(xx, &row(j)[..q], &mut xw);
                    let c = big(k, j) + big(j, k);
                    for a in 0..q {
                        out[a] += c * xw[a];
                    }
                }
                for ab in 0..q * q {
                    out[q + ab] = big(k, k) * xx[ab];
                }
            }
        } else {
            m.iter_mut().for_each(|v| *v = 0.0);
            for i in 0..r {
                for a in 0..q {
                    m[a] += phi[i] * row(i)[a];
                }
            }
            for i in 0..r {
                for j in 0..r {
                    let c = big(i, j);
                    for a in 0..q {
                        for b in 0..q {
                            let wiwj = if i == j {
                                row(i)[q + a * q + b]
                            } else {
                                row(i)[a] * row(j)[b]
                            };
                            m[q + a * q + b] += c * wiwj;
                        }
                    }
                }
            }
        }
    }
    fn test_instances() -> Vec<Self> {
        vec![MatVec { rows: 3, cols: 2 }, MatVec { rows: 1, cols: 2 }]
    }
}
