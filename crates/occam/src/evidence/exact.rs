//! The exact log evidence of a recognised model: for a one-layer conjugate model the closed
//! form Z(s_p + Σ s, n_p + N)/Z(s_p, n_p) of each group of observations ([`super::conjugate`]);
//! for a mixture, the sum over all K^N assignments of the rows to components of the
//! Dirichlet-multinomial probability of the assignment times the closed-form evidence of each
//! component's rows (the parameters integrated out). Refused past [`Options::max_assignments`]
//! or when a parameter is not conjugate to the observations that read it.

use super::conjugate::{dirichlet_multinomial, pair, Conjugate};
use super::flat::{Flat, Prior};
use super::NotApplicable;
use super::Options;

/// One conjugate group: an observation's column, with the parameters it reads.
pub(crate) struct Group {
    /// The conjugate pair.
    pub kind: Conjugate,
    /// Offset of its statistics within a component's statistics.
    pub at: usize,
}

/// The conjugate groups of a recognised model (one per column of each observation), the width
/// of a component's statistics and each row's statistics (rows × width); an error when a
/// parameter is not conjugate to the one observation that reads it.
pub(crate) fn conjugate_groups(
    flat: &Flat,
) -> Result<(Vec<Group>, usize, Vec<f64>), NotApplicable> {
    let mut groups = Vec::new();
    let mut uses = vec![0usize; flat.params.len()];
    let mut width = 0;
    for o in &flat.obs {
        let (kind, params) = pair(flat, &o.lik)?;
        for &p in &params {
            uses[p] += 1;
            if flat.weights.is_some() && !flat.params[p].by_k {
                return Err(NotApplicable::variable(
                    &flat.params[p].name,
                    "is shared by all components, which couples them (no closed form per \
                     assignment)",
                ));
            }
            if flat.params[p].cols == 1 && o.cols > 1 {
                return Err(NotApplicable::variable(
                    &flat.params[p].name,
                    format!("is shared by the columns of `{}`", o.name),
                ));
            }
        }
        for _ in 0..o.cols {
            groups.push(Group {
                kind: kind.clone(),
                at: width,
            });
            width += kind.len();
        }
    }
    if let Some(p) = uses.iter().position(|&u| u > 1) {
        return Err(NotApplicable::variable(
            &flat.params[p].name,
            "is read by several observations",
        ));
    }
    // Row statistics: rows × width, one block per group (column of an observation).
    let mut rows = vec![0.0; flat.n * width];
    let mut g = 0;
    for o in &flat.obs {
        for d in 0..o.cols {
            let grp = &groups[g];
            for i in 0..flat.n {
                let at = i * o.cols + d;
                if o.present[at] {
                    let row = &mut rows[i * width + grp.at..i * width + grp.at + grp.kind.len()];
                    grp.kind
                        .add(o.values[at], row)
                        .map_err(|e| NotApplicable::Row {
                            var: o.name.clone(),
                            row: i + 1,
                            why: e.to_string(),
                        })?;
                }
            }
            g += 1;
        }
    }
    Ok((groups, width, rows))
}

/// The exact log evidence, or why it is not available.
pub(crate) fn exact(flat: &Flat, opts: &Options) -> Result<f64, NotApplicable> {
    let (groups, width, rows) = conjugate_groups(flat)?;
    let Some(w) = flat.weights else {
        let s: Vec<f64> = (0..width)
            .map(|j| (0..flat.n).map(|i| rows[i * width + j]).sum())
            .collect();
        return Ok(groups
            .iter()
            .map(|g| g.kind.log_marginal(&s[g.at..g.at + g.kind.len()]))
            .sum());
    };
    let Prior::Dirichlet { alpha, .. } = flat.params[w].prior else {
        return Err(NotApplicable::Model(
            "mixture weights without a Dirichlet prior",
        ));
    };
    let k = flat.k;
    let count = (k as f64).powi(flat.n as i32);
    if count > opts.max_assignments as f64 {
        return Err(NotApplicable::Other(format!(
            "{k}^{} = {count:.3e} assignments exceed the limit of {} (--max-assignments)",
            flat.n, opts.max_assignments
        )));
    }
    let mut e = Enumeration {
        groups: &groups,
        width,
        rows: &rows,
        n: flat.n,
        k,
        alpha,
        stats: vec![0.0; k * width],
        counts: vec![0.0; k],
        term: vec![0.0; k],
        acc: Lse::default(),
    };
    let empty: f64 = groups
        .iter()
        .map(|g| g.kind.log_marginal(&vec![0.0; g.kind.len()]))
        .sum();
    e.term.iter_mut().for_each(|t| *t = empty);
    e.walk(0);
    Ok(e.acc.value())
}

/// A running log-sum-exp.
#[derive(Default)]
struct Lse {
    max: f64,
    sum: f64,
    any: bool,
}

impl Lse {
    fn push(&mut self, x: f64) {
        if !self.any {
            (self.max, self.sum, self.any) = (x, 1.0, true);
        } else if x > self.max {
            self.sum = self.sum * (self.max - x).exp() + 1.0;
            self.max = x;
        } else {
            self.sum += (x - self.max).exp();
        }
    }

    fn value(&self) -> f64 {
        self.max + self.sum.ln()
    }
}

/// Depth-first walk over the assignments, updating only the component a row joins.
struct Enumeration<'a> {
    groups: &'a [Group],
    width: usize,
    rows: &'a [f64],
    n: usize,
    k: usize,
    alpha: f64,
    stats: Vec<f64>,
    counts: Vec<f64>,
    /// ln p(rows of component c) for the current partial assignment.
    term: Vec<f64>,
    acc: Lse,
}

impl Enumeration<'_> {
    fn component(&self, c: usize) -> f64 {
        let s = &self.stats[c * self.width..(c + 1) * self.width];
        self.groups
            .iter()
            .map(|g| g.kind.log_marginal(&s[g.at..g.at + g.kind.len()]))
            .sum()
    }

    fn walk(&mut self, i: usize) {
        if i == self.n {
            let assign = dirichlet_multinomial(self.alpha, self.k, &self.counts);
            self.acc.push(assign + self.term.iter().sum::<f64>());
            return;
        }
        let row = &self.rows[i * self.width..(i + 1) * self.width];
        for c in 0..self.k {
            let old = self.term[c];
            for (s, r) in self.stats[c * self.width..].iter_mut().zip(row) {
                *s += r;
            }
            self.counts[c] += 1.0;
            self.term[c] = self.component(c);
            self.walk(i + 1);
            for (s, r) in self.stats[c * self.width..].iter_mut().zip(row) {
                *s -= r;
            }
            self.counts[c] -= 1.0;
            self.term[c] = old;
        }
    }
}
