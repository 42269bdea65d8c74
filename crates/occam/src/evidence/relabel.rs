//! The label-switching correction of a mixture's VB bound. The posterior of a K-component
//! mixture is symmetric under the K! relabellings of its components; a factorised q sits on one
//! of those modes, so when the modes are separated the evidence is about K! times the mass
//! around one of them, and L + ln K! is the better score. Components whose q are identical (an
//! unused component at its prior, say) or overlapping make fewer distinct modes: relabelling
//! two of them maps the mode onto itself. The correction counted here is therefore
//! ln (K! / Π_g m_g!) over groups g of m_g components that are identical or overlap (every
//! parameter's q means within two standard deviations of each other, with variances within a
//! factor of 4).

use super::flat::{Flat, Prior};
use super::NotApplicable;
use crate::fitted::Fitted;

/// The correction and what it assumed.
#[derive(Clone, Debug)]
pub(crate) struct Relabel {
    /// ln (K! / Π m_g!).
    pub log_count: f64,
    /// The groups of components treated as one, if any.
    pub note: String,
}

/// q's mean and variance of every element of component `k`'s parameters.
fn summary(flat: &Flat, fitted: &Fitted) -> Result<Vec<Vec<(f64, f64)>>, NotApplicable> {
    let mut out = vec![Vec::new(); flat.k];
    for p in flat.params.iter().filter(|p| p.by_k) {
        let post = fitted
            .posterior(&p.name)
            .map_err(|e| NotApplicable::Other(e.to_string()))?;
        let get = |n: &str| -> Result<Vec<f64>, NotApplicable> {
            post.param(n)
                .map(|x| x.values.clone())
                .ok_or_else(|| NotApplicable::part(&p.name, format!("q has no {n}")))
        };
        let per = p.cols
            * match p.prior {
                Prior::Beta { .. } => 2,
                _ => p.width(),
            };
        let moments: Vec<(f64, f64)> = match p.prior {
            Prior::Gaussian { .. } | Prior::NormalGamma { .. } => {
                let (m, v) = (get("mean")?, get("variance")?);
                m.into_iter().zip(v).collect()
            }
            Prior::Gamma { .. } => {
                let (a, b) = (get("shape")?, get("rate")?);
                a.iter()
                    .zip(&b)
                    .map(|(a, b)| (a / b, a / (b * b)))
                    .collect()
            }
            Prior::Beta { .. } | Prior::Dirichlet { .. } => {
                let c = get("concentration")?;
                let w = per / p.cols;
                c.chunks(w)
                    .flat_map(|al| {
                        let a0: f64 = al.iter().sum();
                        al.iter()
                            .map(move |a| (a / a0, a * (a0 - a) / (a0 * a0 * (a0 + 1.0))))
                            .collect::<Vec<_>>()
                    })
                    .collect()
            }
        };
        let stride = moments.len() / flat.k;
        for (k, o) in out.iter_mut().enumerate() {
            o.extend_from_slice(&moments[k * stride..(k + 1) * stride]);
        }
    }
    Ok(out)
}

fn same(a: &[(f64, f64)], b: &[(f64, f64)], overlap: bool) -> bool {
    a.iter().zip(b).all(|(&(m1, v1), &(m2, v2))| {
        if overlap {
            // Both q narrow enough to sit on each other: an unused component at its broad
            // prior does not overlap a used one (relabelling them makes a distinct mode).
            (m1 - m2).abs() < 2.0 * v1.min(v2).sqrt() && v1.max(v2) < 4.0 * v1.min(v2)
        } else {
            (m1 - m2).abs() <= 1e-9 * (1.0 + m1.abs()) && (v1 - v2).abs() <= 1e-9 * (1.0 + v1)
        }
    })
}

fn ln_factorial(n: usize) -> f64 {
    (1..=n).map(|x| (x as f64).ln()).sum()
}

/// The label-switching correction of a fitted mixture.
pub(crate) fn relabellings(flat: &Flat, fitted: &Fitted) -> Result<Relabel, NotApplicable> {
    if flat.weights.is_none() && flat.chain.is_none() {
        return Err(NotApplicable::Model("no mixture index: nothing to relabel"));
    }
    Ok(count(&summary(flat, fitted)?))
}

/// ln (K! / Π m_g!) for components summarised by (mean, variance) of each of their
/// coordinates, `s[k]` for component k (module doc).
pub(crate) fn count(s: &[Vec<(f64, f64)>]) -> Relabel {
    let k = s.len();
    let (group, overlapping) = grouped(s);
    let mut sizes = vec![0usize; k];
    group.iter().for_each(|&g| sizes[g] += 1);
    let log_count = ln_factorial(k) - sizes.iter().map(|&m| ln_factorial(m)).sum::<f64>();
    let distinct = sizes.iter().filter(|&&m| m > 0).count();
    let mut note = format!("{distinct} distinct of {k} components");
    if !overlapping.is_empty() {
        let pairs: Vec<String> = overlapping
            .iter()
            .map(|(a, b)| format!("{}~{}", a + 1, b + 1))
            .collect();
        note.push_str(&format!(
            "; overlapping (modes not separated, not relabelled): {}",
            pairs.join(", ")
        ));
    }
    Relabel { log_count, note }
}

/// The group of every component (components identical or overlapping share one, module doc)
/// and the overlapping pairs, from their summaries `s`.
fn grouped(s: &[Vec<(f64, f64)>]) -> (Vec<usize>, Vec<(usize, usize)>) {
    let k = s.len();
    // Union–find over "identical or overlapping".
    let mut group: Vec<usize> = (0..k).collect();
    let mut overlapping = Vec::new();
    for i in 0..k {
        for j in 0..i {
            let identical = same(&s[i], &s[j], false);
            if identical || same(&s[i], &s[j], true) {
                if !identical {
                    overlapping.push((j, i));
                }
                let (gi, gj) = (group[i], group[j]);
                group.iter_mut().for_each(|g| {
                    if *g == gi {
                        *g = gj
                    }
                });
            }
        }
    }
    (group, overlapping)
}

/// The group of every component of a fitted mixture (module doc): components whose q are
/// identical or overlap share a group number.
pub(crate) fn groups(flat: &Flat, fitted: &Fitted) -> Result<Vec<usize>, NotApplicable> {
    Ok(grouped(&summary(flat, fitted)?).0)
}
