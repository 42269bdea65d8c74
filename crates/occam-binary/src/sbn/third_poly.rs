//! Polynomial-time moments of G(s) under the factorised P_μ for the third-order bound
//! (Leisink & Kappen §4.1 gives the O(N⁴) cost; the method is derived here): every term of G is a
//! coefficient times a product over hidden units of per-unit factors (1, s_k or e^{b s_k}), so
//! the expectation of a product of up to three terms factorises over units:
//! E[g_t g_u g_v] = c_t c_u c_v Π_k [p_k f_t(+)f_u(+)f_v(+) + (1−p_k) f_t(−)f_u(−)f_v(−)],
//! with p_k = (1+m_k)/2. Summing over unordered pairs and triples (with their multiplicities)
//! gives the raw moments in O(T³·d) for T terms of support ≤ d — polynomial in the network size
//! (O(N⁴)-type for sparse parent sets, as in the paper), against O(2^H) for enumeration.
//! To limit cancellation G is first shifted by its mean. Gradients are by reverse mode through
//! the same sums.

use super::third::{TermAdjoint, Terms};

struct Factor {
    k: usize,
    fp: f64,
    fm: f64,
    /// index into `Terms::exp_b`, or usize::MAX for a spin factor.
    src: usize,
}

struct PTerm {
    c: f64,
    f: Vec<Factor>,
}

fn flatten(t: &Terms, shift: f64) -> Vec<PTerm> {
    let mut out = Vec::with_capacity(1 + t.lin.len() + t.quad.len() + t.exp_coef.len());
    out.push(PTerm {
        c: t.c0 - shift,
        f: Vec::new(),
    });
    for (k, &l) in t.lin.iter().enumerate() {
        out.push(PTerm {
            c: l,
            f: vec![Factor {
                k,
                fp: 1.0,
                fm: -1.0,
                src: usize::MAX,
            }],
        });
    }
    for (q, &(a, b, _)) in t.quad.iter().enumerate() {
        let mut f = vec![
            Factor {
                k: a,
                fp: 1.0,
                fm: -1.0,
                src: usize::MAX,
            },
            Factor {
                k: b,
                fp: 1.0,
                fm: -1.0,
                src: usize::MAX,
            },
        ];
        f.sort_by_key(|x| x.k);
        out.push(PTerm {
            c: t.quad_coef[q],
            f,
        });
    }
    for ti in 0..t.exp_coef.len() {
        let mut f: Vec<Factor> = (t.exp_start[ti]..t.exp_start[ti + 1])
            .map(|s| Factor {
                k: t.exp_k[s],
                fp: t.exp_b[s].exp(),
                fm: (-t.exp_b[s]).exp(),
                src: s,
            })
            .collect();
        f.sort_by_key(|x| x.k);
        out.push(PTerm {
            c: t.exp_coef[ti],
            f,
        });
    }
    out
}

/// Expectation of a product of the given terms, and (optionally) accumulation of
/// `scale × ∂E/∂(term params)` into the per-term adjoints (coefficient, factor values).
/// Scale of the contribution, adjoints of the coefficients and of the (f(+), f(−)) factors.
type GradSink<'a> = Option<(f64, &'a mut [f64], &'a mut [Vec<(f64, f64)>])>;

/// Reusable buffers of [`product_expectation`] (no allocation per product).
#[derive(Default)]
struct Scratch {
    ks: Vec<usize>,
    fp: Vec<f64>,
    fm: Vec<f64>,
    fi: Vec<usize>,
    e: Vec<f64>,
}

fn product_expectation(
    sc: &mut Scratch,
    terms: &[&PTerm],
    idx: &[usize],
    p: &[f64],
    grad: GradSink<'_>,
) -> f64 {
    // union of supports
    sc.ks.clear();
    for t in terms {
        for f in &t.f {
            sc.ks.push(f.k);
        }
    }
    sc.ks.sort_unstable();
    sc.ks.dedup();
    // per unit and position: factor values (1,1 when absent) and the factor index
    let np = terms.len();
    let nk = sc.ks.len();
    sc.fp.clear();
    sc.fp.resize(nk * np, 1.0);
    sc.fm.clear();
    sc.fm.resize(nk * np, 1.0);
    sc.fi.clear();
    sc.fi.resize(nk * np, usize::MAX);
    for (pos, t) in terms.iter().enumerate() {
        for (j, f) in t.f.iter().enumerate() {
            let r = sc.ks.binary_search(&f.k).unwrap_or(0);
            sc.fp[r * np + pos] = f.fp;
            sc.fm[r * np + pos] = f.fm;
            sc.fi[r * np + pos] = j;
        }
    }
    sc.e.clear();
    for r in 0..nk {
        let pk = p[sc.ks[r]];
        let (mut a, mut b) = (pk, 1.0 - pk);
        for pos in 0..np {
            a *= sc.fp[r * np + pos];
            b *= sc.fm[r * np + pos];
        }
        sc.e.push(a + b);
    }
    let cprod: f64 = terms.iter().map(|t| t.c).product();
    let eprod: f64 = sc.e.iter().product();
    if let Some((scale, adj_c, adj_f)) = grad {
        for pos in 0..np {
            let oc: f64 = terms
                .iter()
                .enumerate()
                .filter(|(q, _)| *q != pos)
                .map(|(_, t)| t.c)
                .product();
            adj_c[idx[pos]] += scale * oc * eprod;
            for r in 0..nk {
                let j = sc.fi[r * np + pos];
                if j == usize::MAX {
                    continue;
                }
                // product of the other units' expectations (no division: e may be 0)
                let other: f64 = (0..nk).filter(|&r2| r2 != r).map(|r2| sc.e[r2]).product();
                let pk = p[sc.ks[r]];
                let (mut a, mut b) = (pk, 1.0 - pk);
                for q in 0..np {
                    if q != pos {
                        a *= sc.fp[r * np + q];
                        b *= sc.fm[r * np + q];
                    }
                }
                let s = scale * cprod * other;
                adj_f[idx[pos]][j].0 += s * a;
                adj_f[idx[pos]][j].1 += s * b;
            }
        }
    }
    cprod * eprod
}

/// Mean R1 and central moments κ₂, κ₃ of G under P_μ in polynomial time; with `adj_w` the
/// chain rule of a1·R1 + a2·κ₂ + a3·κ₃ is added into the adjoint (same contract as
/// `third::moments_enum`).
pub fn moments_poly(
    t: &Terms,
    m: &[f64],
    adj_w: Option<(f64, f64, f64, &mut TermAdjoint)>,
) -> (f64, f64, f64) {
    let p: Vec<f64> = m.iter().map(|&x| 0.5 * (1.0 + x)).collect();
    let mut sc = Scratch::default();
    // pass 0: the mean, for the shift
    let raw = flatten(t, 0.0);
    let mut shift = 0.0;
    for (i, tt) in raw.iter().enumerate() {
        shift += product_expectation(&mut sc, &[tt], &[i], &p, None);
    }
    let terms = flatten(t, shift);
    let nt = terms.len();
    let mut r = [0.0f64; 3];
    for a in 0..nt {
        r[0] += product_expectation(&mut sc, &[&terms[a]], &[a], &p, None);
        for b in a..nt {
            let mb = if a == b { 1.0 } else { 2.0 };
            r[1] += mb * product_expectation(&mut sc, &[&terms[a], &terms[b]], &[a, b], &p, None);
            for c in b..nt {
                let mc = multiplicity(a, b, c);
                r[2] += mc
                    * product_expectation(
                        &mut sc,
                        &[&terms[a], &terms[b], &terms[c]],
                        &[a, b, c],
                        &p,
                        None,
                    );
            }
        }
    }
    let (r1, r2, r3) = (r[0], r[1], r[2]);
    let k2 = r2 - r1 * r1;
    let k3 = r3 - 3.0 * r1 * r2 + 2.0 * r1 * r1 * r1;
    if let Some((a1, a2, a3, adj)) = adj_w {
        let g1 = a1 - 2.0 * a2 * r1 + a3 * (-3.0 * r2 + 6.0 * r1 * r1);
        let g2 = a2 - 3.0 * a3 * r1;
        let g3 = a3;
        let mut adj_c = vec![0.0; nt];
        let mut adj_f: Vec<Vec<(f64, f64)>> = terms
            .iter()
            .map(|tt| vec![(0.0, 0.0); tt.f.len()])
            .collect();
        for a in 0..nt {
            product_expectation(
                &mut sc,
                &[&terms[a]],
                &[a],
                &p,
                Some((g1, &mut adj_c, &mut adj_f)),
            );
            for b in a..nt {
                let mb = if a == b { 1.0 } else { 2.0 };
                product_expectation(
                    &mut sc,
                    &[&terms[a], &terms[b]],
                    &[a, b],
                    &p,
                    Some((g2 * mb, &mut adj_c, &mut adj_f)),
                );
                for c in b..nt {
                    let mc = multiplicity(a, b, c);
                    product_expectation(
                        &mut sc,
                        &[&terms[a], &terms[b], &terms[c]],
                        &[a, b, c],
                        &p,
                        Some((g3 * mc, &mut adj_c, &mut adj_f)),
                    );
                }
            }
        }
        // scatter back to the Terms layout (same order as `flatten`)
        adj.c0 += adj_c[0];
        let h = t.lin.len();
        for k in 0..h {
            adj.lin[k] += adj_c[1 + k];
        }
        let nq = t.quad.len();
        for q in 0..nq {
            adj.quad[q] += adj_c[1 + h + q];
        }
        for ti in 0..t.exp_coef.len() {
            let i = 1 + h + nq + ti;
            adj.coef[ti] += adj_c[i];
            for (j, f) in terms[i].f.iter().enumerate() {
                let (ap, am) = adj_f[i][j];
                adj.b[f.src] += ap * f.fp - am * f.fm;
            }
        }
    }
    (r1 + shift, k2, k3)
}

#[inline]
fn multiplicity(a: usize, b: usize, c: usize) -> f64 {
    if a == b && b == c {
        1.0
    } else if a == b || b == c {
        3.0
    } else {
        6.0
    }
}
