//! Exact inference by junction tree for sparse Boltzmann machines (Lauritzen & Spiegelhalter 1988).
//!
//! 1. Greedy min-fill elimination order (ties: fewest neighbours, then lowest index).
//! 2. One clique per eliminated vertex v: C_v = {v} ∪ (neighbours of v when eliminated). Its parent is
//!    the clique of the earliest-eliminated vertex of C_v \ {v}; C_v \ {v} ⊆ C_parent, so this is a
//!    junction tree with separator C_v \ {v}.
//! 3. Each unary term h_i s_i goes to C_i and each pair term w_ij s_i s_j to the clique of whichever
//!    of i, j is eliminated first (it contains the other).
//! 4. Sum-product in the log domain: a collect pass in elimination order gives log Z, a distribute
//!    pass gives every clique's marginal, from which ⟨s_i⟩ and ⟨s_i s_j⟩ on edges follow.

use super::error::{BmError, Result};
use super::model::BoltzmannMachine;

/// Largest clique accepted (2^k table entries).
pub const MAX_CLIQUE: usize = 25;

/// Junction-tree results.
#[derive(Debug, Clone)]
pub struct JunctionTreeResult {
    /// Exact log Z.
    pub log_z: f64,
    /// ⟨s_i⟩.
    pub means: Vec<f64>,
    /// ⟨s_i s_j⟩ for every edge (i < j, w_ij ≠ 0).
    pub edge_correlations: Vec<(usize, usize, f64)>,
    /// Largest clique size (treewidth + 1 of the order used).
    pub max_clique: usize,
}

struct Clique {
    vars: Vec<usize>, // vars[0] = the eliminated vertex
    parent: Option<usize>,
    table: Vec<f64>,
}

fn lse(xs: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = xs.collect();
    let m = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}

/// Min-fill elimination order on the graph of nonzero weights.
pub fn min_fill_order(bm: &BoltzmannMachine) -> Vec<usize> {
    let n = bm.n();
    let mut adj: Vec<Vec<bool>> = (0..n)
        .map(|i| (0..n).map(|j| i != j && bm.w(i, j) != 0.0).collect())
        .collect();
    let mut nbrs: Vec<Vec<usize>> = (0..n)
        .map(|i| (0..n).filter(|&j| adj[i][j]).collect())
        .collect();
    let mut alive = vec![true; n];
    let mut order = Vec::with_capacity(n);
    for _ in 0..n {
        let mut best = (usize::MAX, usize::MAX, usize::MAX);
        for v in (0..n).filter(|&v| alive[v]) {
            let nb = &nbrs[v];
            let mut fill = 0;
            for (a, &x) in nb.iter().enumerate() {
                for &y in &nb[a + 1..] {
                    if !adj[x][y] {
                        fill += 1;
                    }
                }
            }
            let key = (fill, nb.len(), v);
            if key < best {
                best = key;
            }
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

/// Index into a sub-table: bit k of the result is bit pos[k] of `idx`.
#[inline]
fn sub_index(idx: usize, pos: &[usize]) -> usize {
    let mut r = 0;
    for (k, &p) in pos.iter().enumerate() {
        r |= ((idx >> p) & 1) << k;
    }
    r
}

/// Positions in `of` of each variable of `sub` (all must be present).
fn positions(sub: &[usize], of: &[usize]) -> Vec<usize> {
    sub.iter()
        .map(|v| of.iter().position(|u| u == v).expect("separator ⊆ clique"))
        .collect()
}

/// Sums out everything but `keep` (given as positions) from a log table.
fn marginalise(table: &[f64], keep: &[usize]) -> Vec<f64> {
    let mut out = vec![f64::NEG_INFINITY; 1 << keep.len()];
    let mut mx = vec![f64::NEG_INFINITY; 1 << keep.len()];
    for (idx, &t) in table.iter().enumerate() {
        let s = sub_index(idx, keep);
        if t > mx[s] {
            mx[s] = t;
        }
    }
    let mut acc = vec![0.0; 1 << keep.len()];
    for (idx, &t) in table.iter().enumerate() {
        let s = sub_index(idx, keep);
        if mx[s] > f64::NEG_INFINITY {
            acc[s] += (t - mx[s]).exp();
        }
    }
    for s in 0..out.len() {
        out[s] = mx[s] + acc[s].ln();
    }
    out
}

/// Exact inference by junction tree (module doc).
pub fn junction_tree(bm: &BoltzmannMachine) -> Result<JunctionTreeResult> {
    let n = bm.n();
    let order = min_fill_order(bm);
    let mut rank = vec![0; n];
    for (r, &v) in order.iter().enumerate() {
        rank[v] = r;
    }
    // Elimination cliques.
    let mut adj: Vec<Vec<bool>> = (0..n)
        .map(|i| (0..n).map(|j| i != j && bm.w(i, j) != 0.0).collect())
        .collect();
    let mut cliques: Vec<Clique> = Vec::with_capacity(n);
    let mut max_clique = 0;
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
        if vars.len() > MAX_CLIQUE {
            return Err(BmError::TooManyUnits {
                units: vars.len(),
                max: MAX_CLIQUE,
            });
        }
        max_clique = max_clique.max(vars.len());
        let parent = nb.first().map(|&u| rank[u]);
        cliques.push(Clique {
            table: vec![0.0; 1 << vars.len()],
            vars,
            parent,
        });
    }
    // Potentials.
    let h = bm.thresholds();
    for (c, &v) in order.iter().enumerate() {
        let cl = &mut cliques[c];
        let k = cl.vars.len();
        let mut terms: Vec<(usize, Option<usize>, f64)> = vec![(0, None, h[v])];
        for (b, &u) in cl.vars.iter().enumerate().skip(1) {
            let w = bm.w(v, u);
            if w != 0.0 {
                terms.push((0, Some(b), w));
            }
        }
        for idx in 0..(1usize << k) {
            let s = |p: usize| if (idx >> p) & 1 == 1 { 1.0 } else { -1.0 };
            let mut t = 0.0;
            for &(a, b, w) in &terms {
                t += match b {
                    None => w * s(a),
                    Some(b) => w * s(a) * s(b),
                };
            }
            cl.table[idx] = t;
        }
    }
    // Collect: clique c sends to its parent, in elimination order.
    let mut up_msgs: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut log_z = bm.offset();
    for c in 0..n {
        let keep: Vec<usize> = (1..cliques[c].vars.len()).collect();
        let msg = marginalise(&cliques[c].table, &keep);
        match cliques[c].parent {
            Some(p) => {
                let sep = &cliques[c].vars[1..];
                let pos = positions(sep, &cliques[p].vars);
                let pt = &mut cliques[p].table;
                for (idx, t) in pt.iter_mut().enumerate() {
                    *t += msg[sub_index(idx, &pos)];
                }
                up_msgs[c] = msg;
            }
            None => log_z += msg[0],
        }
    }
    // Distribute, in reverse elimination order: full beliefs.
    for c in (0..n).rev() {
        if let Some(p) = cliques[c].parent {
            let sep: Vec<usize> = cliques[c].vars[1..].to_vec();
            let pos_p = positions(&sep, &cliques[p].vars);
            // parent full belief minus c's upward message, marginalised to the separator
            let mut tbl = cliques[p].table.clone();
            for (idx, t) in tbl.iter_mut().enumerate() {
                *t -= up_msgs[c][sub_index(idx, &pos_p)];
            }
            let down = marginalise(&tbl, &pos_p);
            let keep: Vec<usize> = (1..cliques[c].vars.len()).collect();
            let ct = &mut cliques[c].table;
            for (idx, t) in ct.iter_mut().enumerate() {
                *t += down[sub_index(idx, &keep)];
            }
        }
    }
    // Marginals.
    let mut means = vec![0.0; n];
    let mut edges = Vec::new();
    for (c, &v) in order.iter().enumerate() {
        let cl = &cliques[c];
        let z = lse(cl.table.iter().copied());
        let one = marginalise(&cl.table, &[0]);
        means[v] = (one[1] - z).exp() - (one[0] - z).exp();
        for (b, &u) in cl.vars.iter().enumerate().skip(1) {
            if bm.w(v, u) != 0.0 {
                let pair = marginalise(&cl.table, &[0, b]);
                // index bit0 = s_v, bit1 = s_u; s_v s_u = +1 on 00 and 11
                let c = (pair[0] - z).exp() + (pair[3] - z).exp()
                    - (pair[1] - z).exp()
                    - (pair[2] - z).exp();
                edges.push((v.min(u), v.max(u), c));
            }
        }
    }
    edges.sort_by_key(|e| (e.0, e.1));
    Ok(JunctionTreeResult {
        log_z,
        means,
        edge_correlations: edges,
        max_clique,
    })
}

/// An L×L grid Ising model with couplings and thresholds from a seeded uniform draw in
/// [−w_scale, w_scale] and [−h_scale, h_scale].
pub fn grid(l: usize, w_scale: f64, h_scale: f64, seed: u64) -> Result<BoltzmannMachine> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let n = l * l;
    let mut w = vec![0.0; n * n];
    for r in 0..l {
        for c in 0..l {
            let i = r * l + c;
            for j in [
                if c + 1 < l { Some(i + 1) } else { None },
                if r + 1 < l { Some(i + l) } else { None },
            ]
            .into_iter()
            .flatten()
            {
                let v = rng.random_range(-w_scale..=w_scale);
                w[i * n + j] = v;
                w[j * n + i] = v;
            }
        }
    }
    let h = (0..n)
        .map(|_| rng.random_range(-h_scale..=h_scale))
        .collect();
    BoltzmannMachine::new(w, h, 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::exact::exact;

    #[test]
    fn equals_enumeration_on_4x4_grids_and_dense_nets() {
        for seed in 0..3 {
            let bm = grid(4, 1.0, 0.5, seed).unwrap();
            let jt = junction_tree(&bm).unwrap();
            let ex = exact(&bm).unwrap();
            assert!(
                (jt.log_z - ex.log_z).abs() < 1e-10,
                "{} vs {}",
                jt.log_z,
                ex.log_z
            );
            for i in 0..16 {
                assert!((jt.means[i] - ex.means[i]).abs() < 1e-10);
            }
            assert_eq!(jt.edge_correlations.len(), 24);
            for &(i, j, c) in &jt.edge_correlations {
                assert!((c - ex.correlations[i * 16 + j]).abs() < 1e-10);
            }
        }
        // a dense model (one clique) and a disconnected one
        let dense = crate::bm::sk::sk_network(8, 0.3, 1.0, 5).unwrap();
        let mut off = dense.clone();
        off.set_offset(0.7);
        assert!((junction_tree(&off).unwrap().log_z - exact(&off).unwrap().log_z).abs() < 1e-10);
        let iso = BoltzmannMachine::new(vec![0.0; 9], vec![0.1, -0.2, 0.3], 0.0).unwrap();
        assert!((junction_tree(&iso).unwrap().log_z - exact(&iso).unwrap().log_z).abs() < 1e-12);
    }

    #[test]
    fn runs_on_10x10_grid() {
        let bm = grid(10, 0.5, 0.2, 1).unwrap();
        let jt = junction_tree(&bm).unwrap();
        // greedy min-fill is not optimal (the optimum is 11 on a 10×10 grid)
        assert!(
            jt.max_clique <= 15,
            "min-fill clique too large: {}",
            jt.max_clique
        );
        assert!(jt.log_z.is_finite());
        // mean field is a lower bound on the exact value
        let mf = crate::bm::mf::mean_field(&bm, &Default::default()).unwrap();
        assert!(mf.log_z <= jt.log_z);
        assert!(jt.means.iter().all(|m| m.abs() <= 1.0));
        // Cross-check by conditioning on column 4: the clamped model splits into two parts with
        // different junction trees; log Z = logsumexp over the 2¹⁰ column states.
        let col: Vec<usize> = (0..10).map(|r| r * 10 + 4).collect();
        let mut parts = Vec::with_capacity(1024);
        for s in 0..1024u32 {
            let clamps: Vec<(usize, f64)> = col
                .iter()
                .enumerate()
                .map(|(k, &u)| (u, if s >> k & 1 == 1 { 1.0 } else { -1.0 }))
                .collect();
            let (red, _) = bm.clamp(&clamps).unwrap();
            parts.push(junction_tree(&red).unwrap().log_z);
        }
        let lz = lse(parts.into_iter());
        assert!((lz - jt.log_z).abs() < 1e-9, "{lz} vs {}", jt.log_z);
    }
}

#[cfg(test)]
mod shipped {
    /// The shipped `data/grid4x4.fg` is exactly `grid(4, 1.0, 0.5, 0)`.
    #[test]
    fn shipped_grid_file_is_reproducible() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/grid4x4.fg");
        let want = crate::bm::io::write_fg(&super::grid(4, 1.0, 0.5, 0).unwrap()).unwrap();
        if std::env::var_os("OCCAM_WRITE_DATA").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), want);
    }
}
