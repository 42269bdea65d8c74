//! The proposal's factor densities ln q(x) ([`super::proposal::Q`]) with what does not depend on
//! x evaluated once per factor, and the logarithms of x once per value: the relabelling-symmetric
//! proposal evaluates every component's q at every component's values (K² densities per draw),
//! which spent most of its time on the same ln Γ(a), ln b and ln x again and again. Each
//! evaluation performs the operations of [`super::density`]'s `ln_normal`, `ln_gamma_pdf` and
//! `ln_dirichlet` in the same order, so the values are the same bits.

use std::f64::consts::PI;

use occam_core::special::ln_gamma;

use super::proposal::Q;

/// One factor q with its constants.
#[derive(Clone, Debug)]
pub(crate) enum Prepared {
    /// ln N(x; m, v) = c − (h (x − m)) (x − m), c = ½ ln((1/v) / 2π), h = ½ (1/v).
    Gaussian { c: f64, h: f64, m: f64 },
    /// ln Gamma(x; a, b) = (c + (a − 1) ln x) − b x, c = a ln b − ln Γ(a); −∞ for x ≤ 0.
    Gamma { c: f64, a1: f64, b: f64 },
    /// ln Dir(p; α) = ln Γ(Σα) + Σ_j ((α_j − 1) ln p_j − ln Γ(α_j)); −∞ when a p_j ≤ 0. A Beta is
    /// the Dirichlet over (x, 1 − x).
    Dirichlet { g0: f64, a1: Vec<f64>, g: Vec<f64> },
}

impl Prepared {
    /// The constants of `q`.
    pub fn new(q: &Q) -> Prepared {
        let dirichlet = |al: &[f64]| Prepared::Dirichlet {
            g0: ln_gamma(al.iter().sum()),
            a1: al.iter().map(|a| a - 1.0).collect(),
            g: al.iter().map(|&a| ln_gamma(a)).collect(),
        };
        match q {
            Q::Gaussian(m, v) => {
                let t = 1.0 / v;
                Prepared::Gaussian {
                    c: 0.5 * (t / (2.0 * PI)).ln(),
                    h: 0.5 * t,
                    m: *m,
                }
            }
            Q::Gamma(a, b) => Prepared::Gamma {
                c: a * b.ln() - ln_gamma(*a),
                a1: a - 1.0,
                b: *b,
            },
            Q::Beta(a, b) => dirichlet(&[*a, *b]),
            Q::Dirichlet(al) => dirichlet(al),
        }
    }

    /// ln q(x) given `lx`, the [`logs`] of x.
    pub fn ln_pdf(&self, x: &[f64], lx: &[f64]) -> f64 {
        match self {
            Prepared::Gaussian { c, h, m } => c - h * (x[0] - m) * (x[0] - m),
            Prepared::Gamma { c, a1, b } => {
                if x[0] <= 0.0 {
                    return f64::NEG_INFINITY;
                }
                c + a1 * lx[0] - b * x[0]
            }
            Prepared::Dirichlet { g0, a1, g } => {
                let mut s = *g0;
                let beta = [x[0], 1.0 - x[0]];
                let p = if a1.len() == 2 && x.len() == 1 {
                    &beta[..]
                } else {
                    x
                };
                for j in 0..a1.len() {
                    if p[j] <= 0.0 {
                        return f64::NEG_INFINITY;
                    }
                    s += a1[j] * lx[j] - g[j];
                }
                s
            }
        }
    }
}

/// The logarithms [`Prepared::ln_pdf`] reads of one value x of a factor `q` (appended to `out`):
/// none for a Gaussian, ln x for a Gamma, ln x and ln(1 − x) for a Beta, ln p_j for a Dirichlet.
pub(crate) fn logs(q: &Q, x: &[f64], out: &mut Vec<f64>) {
    match q {
        Q::Gaussian(..) => {}
        Q::Gamma(..) => out.push(x[0].ln()),
        Q::Beta(..) => {
            out.push(x[0].ln());
            out.push((1.0 - x[0]).ln());
        }
        Q::Dirichlet(_) => out.extend(x.iter().map(|p| p.ln())),
    }
}
