//! The start of a Categorical from labels or given moments (`Vmp::start_categorical`), without
//! the prior update the general start runs.

use super::*;

/// The start [`Vmp::start_categorical`] writes: labels (one-hot moments) or given moments.
#[derive(Clone, Copy)]
pub(super) enum Given<'a> {
    Labels(&'a [usize]),
    Moments(&'a [f64]),
}

impl Vmp {
    /// A Categorical started from given moments (a mixture index's k-means labels, random labels,
    /// or the user's values), without the prior update the general path runs element by element
    /// (Winn (2.19) without messages, an n × K softmax whose moments the start then overwrites).
    /// Each element's q is the one with the given moments: φ = ln u (−∞ where u is 0, in the
    /// family's domain; its own term counts 0 ln 0 as 0), so a one-hot start is the point mass
    /// with entropy 0 and the starting state's bound is a bound. (The prior's φ beside one-hot
    /// moments would credit each element with the prior's cross-entropy instead.) Returns whether
    /// node `i` was started here.
    ///
    /// A one-hot row (labels, or given moments that are exactly one 1 and zeros) is written as the
    /// point mass directly: φ = ln one-hot and A = 0, the bits that φ = ln u and the family's
    /// softmax give for it (ln 1 = 0, ln 0 = −∞; the softmax's maximum is 0, its sum 1 and
    /// ln 1 = 0), without K logarithms and one softmax call per row.
    pub(super) fn start_categorical(
        &mut self,
        i: usize,
        given: Given<'_>,
    ) -> Result<bool, RunError> {
        let node = &self.nodes[i];
        let Body::Stochastic(dist) = &node.body else {
            return Ok(false);
        };
        if !matches!(node.kind, MomentKind::Categorical { .. }) || node.block.is_some() || node.map
        {
            return Ok(false);
        }
        let dist = dist.clone();
        let (n, len) = (node.n, node.len);
        let given_len = match given {
            Given::Labels(label) => label.len() * len,
            Given::Moments(values) => values.len(),
        };
        if given_len != n * len {
            return Err(self.numerical(
                i,
                0,
                format!("initial moments need {} values, got {given_len}", n * len),
            ));
        }
        let node = &mut self.nodes[i];
        // Every latent row's φ is written below.
        node.keep_natural();
        let model = node.model.clone();
        let mut scratch = vec![0.0; len];
        // The last row formed by the general path: its given moments, φ and A. A row whose given
        // moments have the same bits has the same φ and A (the same logarithms and softmax of the
        // same numbers), copied instead of formed again: a start from uniform moments repeats
        // one row n times (Bayesian ICA's indicators; K logarithms and a softmax per row).
        // (Kept in one buffer: no allocation per row when the rows differ.)
        let mut last_phi = vec![0.0; len];
        let mut last: Option<(&[f64], f64)> = None;
        let rows = node
            .q
            .u
            .chunks_exact_mut(len)
            .zip(node.q.phi.chunks_exact_mut(len))
            .zip(node.q.a.iter_mut())
            .enumerate();
        for (e, ((u, phi), a)) in rows {
            if model.observed.get(e) {
                continue;
            }
            match given {
                Given::Labels(label) => {
                    u.iter_mut().for_each(|v| *v = 0.0);
                    u[label[e]] = 1.0;
                    *a = point_mass(phi, label[e]);
                }
                // (u is kept as given: moments that do not sum to 1 — a finite-difference
                // probe — are not renormalised; A is then ln Σ u.)
                Given::Moments(values) => {
                    let given = &values[e * len..(e + 1) * len];
                    u.copy_from_slice(given);
                    if let Some(l) = one_hot(u) {
                        *a = point_mass(phi, l);
                        continue;
                    }
                    if let Some((_, last_a)) = last.filter(|(row, _)| same_bits(row, given)) {
                        phi.copy_from_slice(&last_phi);
                        *a = last_a;
                        continue;
                    }
                    phi.iter_mut().zip(u.iter()).for_each(|(p, &v)| *p = v.ln());
                    *a = moments(&dist, phi, &mut scratch).map_err(|what| RunError::Numerical {
                        node: model.name.clone(),
                        element: e,
                        what: what.to_string(),
                    })?;
                    last_phi.copy_from_slice(phi);
                    last = Some((given, *a));
                }
            }
        }
        self.changed(i);
        Ok(true)
    }
}

/// The point mass on category `l`: writes φ = ln one-hot (0 at `l`, −∞ elsewhere) and returns
/// its A = ln 1 = 0.
fn point_mass(phi: &mut [f64], l: usize) -> f64 {
    phi.iter_mut().for_each(|p| *p = f64::NEG_INFINITY);
    phi[l] = 0.0;
    0.0
}

/// Whether two rows hold the same bits (so any function of them gives the same result).
fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// The category of a row that is exactly one 1 and zeros (either sign), else `None`.
fn one_hot(u: &[f64]) -> Option<usize> {
    let mut hot = None;
    for (j, &v) in u.iter().enumerate() {
        if v == 1.0 && hot.is_none() {
            hot = Some(j);
        } else if v != 0.0 {
            return None;
        }
    }
    hot
}

#[cfg(test)]
mod tests;
