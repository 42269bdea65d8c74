//! Exact inference over discrete variables by junction tree (Lauritzen & Spiegelhalter 1988), shared
//! by the engine's tree-structured q (Winn §5.3–5.6, Case I) and occam-binary's Boltzmann machines.
//!
//! The structure is built once from the factors' scopes: the moral graph joins every pair of
//! variables that share a scope (a family p(x | pa) is one scope, so this is moralisation); greedy
//! min-fill elimination (ties: fewest neighbours, then lowest index) triangulates it; eliminating
//! vertex v makes the cluster C_v = {v} ∪ (its neighbours then), whose parent is the cluster of the
//! earliest-eliminated vertex of C_v \ {v}. C_v \ {v} is contained in that parent, so the clusters
//! form a junction tree with separators C_v \ {v} (a forest when the graph is disconnected). Each
//! factor goes to the cluster of its earliest-eliminated variable, which holds its whole scope.
//!
//! [`JunctionTree::calibrate`] runs sum-product in the log domain: collect in elimination order gives
//! ln Z, distribute in reverse order gives every cluster's marginal (Winn (5.25)–(5.28): one collect
//! and one distribute pass are exact on a tree). Tables are row-major over a scope, first variable
//! slowest.

use crate::special::log_sum_exp;

/// A junction tree's structure.
#[derive(Clone, Debug)]
pub struct JunctionTree {
    cards: Vec<usize>,
    clusters: Vec<Cluster>,
    /// The cluster each factor's scope lies in, and the scope.
    factors: Vec<(usize, Vec<usize>)>,
}

#[derive(Clone, Debug)]
struct Cluster {
    /// vars[0] is the eliminated vertex; vars[1..] the separator with the parent.
    vars: Vec<usize>,
    parent: Option<usize>,
    size: usize,
}

/// A cluster too large to tabulate.
#[derive(Clone, Debug, PartialEq)]
pub struct TooLarge {
    /// Variables in the cluster.
    pub vars: usize,
    /// Entries its table would have.
    pub entries: f64,
}

/// Marginals of a calibrated tree.
#[derive(Clone, Debug)]
pub struct Calibrated {
    /// ln Z: the log normaliser of exp(Σ factors).
    pub log_z: f64,
    /// Each cluster's normalised probability table.
    beliefs: Vec<Vec<f64>>,
}

/// Calls `f(index, sub_index)` for every entry of a table over variables with cardinalities `cards`,
/// where `sub_index` is the entry's index in a table over a subset whose stride for each of these
/// variables is `strides` (0 for a variable outside the subset): a mixed-radix odometer, O(1) per
/// entry.
fn for_each_sub(cards: &[usize], strides: &[usize], mut f: impl FnMut(usize, usize)) {
    let size: usize = cards.iter().product();
    let mut digits = vec![0usize; cards.len()];
    let mut sub = 0;
    for idx in 0..size {
        f(idx, sub);
        for p in (0..cards.len()).rev() {
            digits[p] += 1;
            sub += strides[p];
            if digits[p] < cards[p] {
                break;
            }
            sub -= strides[p] * cards[p];
            digits[p] = 0;
        }
    }
}

impl JunctionTree {
    /// Builds the tree for variables of cardinalities `cards` and factors over `scopes` (each scope
    /// a list of distinct variables). Errs if a cluster's table would exceed `max_entries`.
    pub fn new(
        cards: &[usize],
        scopes: &[Vec<usize>],
        max_entries: usize,
    ) -> Result<Self, TooLarge> {
        let n = cards.len();
        let mut adj: Vec<Vec<bool>> = vec![vec![false; n]; n];
        for s in scopes {
            for &x in s {
                for &y in s {
                    if x != y {
                        adj[x][y] = true;
                    }
                }
            }
        }
        let order = min_fill_order(&adj);
        let mut rank = vec![0; n];
        for (r, &v) in order.iter().enumerate() {
            rank[v] = r;
        }
        let mut clusters = Vec::with_capacity(n);
        for &v in &order {
            let mut nb: Vec<usize> = (0..n).filter(|&u| adj[v][u] && rank[u] > rank[v]).collect();
            nb.sort_by_key(|&u| rank[u]);
            for &x in &nb {
                for &y in &nb {
                    if x != y {
                        adj[x][y] = true;
                    }
                }
            }
            let mut vars = vec![v];
            vars.extend_from_slice(&nb);
            let entries: f64 = vars.iter().map(|&x| cards[x] as f64).product();
            if entries > max_entries as f64 {
                return Err(TooLarge {
                    vars: vars.len(),
                    entries,
                });
            }
            clusters.push(Cluster {
                parent: nb.first().map(|&u| rank[u]),
                size: entries as usize,
                vars,
            });
        }
        let factors = scopes
            .iter()
            .map(|s| {
                let first = s.iter().map(|&x| rank[x]).min().unwrap_or(0);
                (first, s.clone())
            })
            .collect();
        Ok(JunctionTree {
            cards: cards.to_vec(),
            clusters,
            factors,
        })
    }

    /// Number of variables in the largest cluster.
    pub fn max_cluster(&self) -> usize {
        self.clusters
            .iter()
            .map(|c| c.vars.len())
            .max()
            .unwrap_or(0)
    }

    /// Strides, in a table over `sub`, of each variable of cluster c (0 if not in `sub`).
    fn strides(&self, c: usize, sub: &[usize]) -> Vec<usize> {
        let mut st = vec![0; sub.len()];
        let mut acc = 1;
        for p in (0..sub.len()).rev() {
            st[p] = acc;
            acc *= self.cards[sub[p]];
        }
        self.clusters[c]
            .vars
            .iter()
            .map(|v| sub.iter().position(|s| s == v).map_or(0, |p| st[p]))
            .collect()
    }

    fn cluster_cards(&self, c: usize) -> Vec<usize> {
        self.clusters[c]
            .vars
            .iter()
            .map(|&v| self.cards[v])
            .collect()
    }

    fn sub_size(&self, sub: &[usize]) -> usize {
        sub.iter().map(|&v| self.cards[v]).product()
    }

    /// Log-domain marginal of cluster c's log table onto `sub` (⊆ the cluster).
    fn log_marginal(&self, c: usize, table: &[f64], sub: &[usize]) -> Vec<f64> {
        let (cards, strides) = (self.cluster_cards(c), self.strides(c, sub));
        let size = self.sub_size(sub);
        let mut mx = vec![f64::NEG_INFINITY; size];
        for_each_sub(&cards, &strides, |i, s| mx[s] = mx[s].max(table[i]));
        let mut acc = vec![0.0; size];
        for_each_sub(&cards, &strides, |i, s| {
            if mx[s] > f64::NEG_INFINITY {
                acc[s] += (table[i] - mx[s]).exp();
            }
        });
        mx.iter().zip(&acc).map(|(m, a)| m + a.ln()).collect()
    }

    /// Adds a table over `sub` (⊆ cluster c) to cluster c's table, with sign `sign`.
    fn add_sub(&self, c: usize, table: &mut [f64], sub: &[usize], values: &[f64], sign: f64) {
        let (cards, strides) = (self.cluster_cards(c), self.strides(c, sub));
        for_each_sub(&cards, &strides, |i, s| {
            // −∞ − (−∞) stays −∞: a zero-probability entry stays impossible.
            if table[i] > f64::NEG_INFINITY {
                table[i] += sign * values[s];
            }
        });
    }

    /// Sum-product: the log tables of the factors (in the order of the scopes given to `new`) in,
    /// ln Z and every cluster's marginal out. `None` if no configuration has positive weight.
    pub fn calibrate(&self, factors: &[&[f64]]) -> Option<Calibrated> {
        let nc = self.clusters.len();
        let mut tables: Vec<Vec<f64>> = self.clusters.iter().map(|c| vec![0.0; c.size]).collect();
        for ((c, scope), f) in self.factors.iter().zip(factors) {
            let (cards, strides) = (self.cluster_cards(*c), self.strides(*c, scope));
            let t = &mut tables[*c];
            for_each_sub(&cards, &strides, |i, s| t[i] += f[s]);
        }
        // Collect, in elimination order (every child comes before its parent).
        let mut up: Vec<Vec<f64>> = vec![Vec::new(); nc];
        let mut log_z = 0.0;
        for c in 0..nc {
            let sep = &self.clusters[c].vars[1..];
            let msg = self.log_marginal(c, &tables[c], sep);
            match self.clusters[c].parent {
                Some(p) => {
                    let mut t = std::mem::take(&mut tables[p]);
                    self.add_sub(p, &mut t, sep, &msg, 1.0);
                    tables[p] = t;
                    up[c] = msg;
                }
                None => log_z += msg[0],
            }
        }
        if !log_z.is_finite() {
            return None;
        }
        // Distribute, in reverse order: the parent's full belief without c's own message, onto
        // the separator.
        for c in (0..nc).rev() {
            let Some(p) = self.clusters[c].parent else {
                continue;
            };
            let sep = &self.clusters[c].vars[1..];
            let mut t = tables[p].clone();
            self.add_sub(p, &mut t, sep, &up[c], -1.0);
            let down = self.log_marginal(p, &t, sep);
            let mut own = std::mem::take(&mut tables[c]);
            self.add_sub(c, &mut own, sep, &down, 1.0);
            tables[c] = own;
        }
        let beliefs = tables
            .into_iter()
            .map(|t| {
                let z = log_sum_exp(&t);
                t.iter().map(|v| (v - z).exp()).collect()
            })
            .collect();
        Some(Calibrated { log_z, beliefs })
    }

    /// The marginal over factor f's scope (in its order) of a calibrated tree.
    pub fn factor_marginal(&self, cal: &Calibrated, f: usize) -> Vec<f64> {
        let (c, scope) = &self.factors[f];
        self.marginal_in(cal, *c, scope)
    }

    fn marginal_in(&self, cal: &Calibrated, c: usize, sub: &[usize]) -> Vec<f64> {
        let (cards, strides) = (self.cluster_cards(c), self.strides(c, sub));
        let mut out = vec![0.0; self.sub_size(sub)];
        let b = &cal.beliefs[c];
        for_each_sub(&cards, &strides, |i, s| out[s] += b[i]);
        out
    }

    /// The marginal of one variable.
    pub fn variable_marginal(&self, cal: &Calibrated, v: usize) -> Vec<f64> {
        let c = self
            .clusters
            .iter()
            .position(|c| c.vars[0] == v)
            .expect("every variable has its elimination cluster");
        self.marginal_in(cal, c, &[v])
    }

    /// H(q) = Σ cluster entropies − Σ separator entropies (exact on a junction tree; the entropy
    /// the tree-structured bound adds, Winn §5.3).
    pub fn entropy(&self, cal: &Calibrated) -> f64 {
        let h = |p: &[f64]| -> f64 { p.iter().filter(|&&v| v > 0.0).map(|&v| -v * v.ln()).sum() };
        (0..self.clusters.len())
            .map(|c| {
                let sep = &self.clusters[c].vars[1..];
                let cluster = h(&cal.beliefs[c]);
                match self.clusters[c].parent {
                    Some(_) => cluster - h(&self.marginal_in(cal, c, sep)),
                    None => cluster,
                }
            })
            .sum()
    }
}

/// Greedy min-fill elimination order of an undirected graph given as an adjacency matrix (ties:
/// fewest neighbours, then lowest index).
pub fn min_fill_order(adj: &[Vec<bool>]) -> Vec<usize> {
    let n = adj.len();
    let mut adj = adj.to_vec();
    let mut nbrs: Vec<Vec<usize>> = (0..n)
        .map(|i| (0..n).filter(|&j| j != i && adj[i][j]).collect())
        .collect();
    let mut alive = vec![true; n];
    let mut order = Vec::with_capacity(n);
    for _ in 0..n {
        let mut best = (usize::MAX, usize::MAX, usize::MAX);
        for v in (0..n).filter(|&v| alive[v]) {
            let nb = &nbrs[v];
            let mut fill = 0;
            for (a, &x) in nb.iter().enumerate() {
                fill += nb[a + 1..].iter().filter(|&&y| !adj[x][y]).count();
            }
            best = best.min((fill, nb.len(), v));
        }
        let v = best.2;
        let nb = std::mem::take(&mut nbrs[v]);
        for &x in &nb {
            nbrs[x].retain(|&u| u != v);
            for &y in &nb {
                if x != y && !adj[x][y] {
                    adj[x][y] = true;
                    nbrs[x].push(y);
                }
            }
        }
        alive[v] = false;
        order.push(v);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force over every joint state: ln Z, the joint, and H.
    fn enumerate(cards: &[usize], scopes: &[Vec<usize>], tables: &[Vec<f64>]) -> (f64, Vec<f64>) {
        let total: usize = cards.iter().product();
        let mut logp = vec![0.0; total];
        for (idx, lp) in logp.iter_mut().enumerate() {
            let mut x = vec![0; cards.len()];
            let mut r = idx;
            for v in (0..cards.len()).rev() {
                x[v] = r % cards[v];
                r /= cards[v];
            }
            for (s, t) in scopes.iter().zip(tables) {
                let i = s.iter().fold(0, |a, &v| a * cards[v] + x[v]);
                *lp += t[i];
            }
        }
        let z = log_sum_exp(&logp);
        (z, logp.iter().map(|l| (l - z).exp()).collect())
    }

    #[test]
    fn equals_enumeration_on_a_loopy_mixed_cardinality_network() {
        // A cycle 0–1–2–3–0 with a chord-free loop (triangulation needed), a family {4 | 1, 2}
        // (moralisation), a disconnected variable 5, and one impossible entry.
        let cards = [2, 3, 2, 4, 3, 2];
        let scopes = vec![
            vec![0, 1],
            vec![1, 2],
            vec![2, 3],
            vec![3, 0],
            vec![1, 2, 4],
            vec![5],
            vec![0],
        ];
        let mut seed = 7u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) * 3.0 - 1.5
        };
        let mut tables: Vec<Vec<f64>> = scopes
            .iter()
            .map(|s| {
                (0..s.iter().map(|&v| cards[v]).product())
                    .map(|_| rnd())
                    .collect()
            })
            .collect();
        tables[6][1] = f64::NEG_INFINITY;
        let jt = JunctionTree::new(&cards, &scopes, 1 << 20).unwrap();
        let refs: Vec<&[f64]> = tables.iter().map(|t| t.as_slice()).collect();
        let cal = jt.calibrate(&refs).unwrap();
        let (z, joint) = enumerate(&cards, &scopes, &tables);
        assert!((cal.log_z - z).abs() < 1e-12, "{} vs {z}", cal.log_z);
        let h: f64 = joint
            .iter()
            .filter(|&&p| p > 0.0)
            .map(|p| -p * p.ln())
            .sum();
        assert!((jt.entropy(&cal) - h).abs() < 1e-12);
        // Family marginals against sums of the joint.
        for (f, s) in scopes.iter().enumerate() {
            let m = jt.factor_marginal(&cal, f);
            let mut want = vec![0.0; m.len()];
            for (idx, p) in joint.iter().enumerate() {
                let mut x = vec![0; cards.len()];
                let mut r = idx;
                for v in (0..cards.len()).rev() {
                    x[v] = r % cards[v];
                    r /= cards[v];
                }
                want[s.iter().fold(0, |a, &v| a * cards[v] + x[v])] += p;
            }
            for (a, b) in m.iter().zip(&want) {
                assert!((a - b).abs() < 1e-12, "factor {f}: {a} vs {b}");
            }
        }
        assert_eq!(jt.variable_marginal(&cal, 0)[1], 0.0);
        assert!(JunctionTree::new(&cards, &scopes, 4).is_err());
    }
}
