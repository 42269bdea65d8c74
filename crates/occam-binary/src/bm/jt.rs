//! Exact inference by junction tree for sparse Boltzmann machines (Lauritzen & Spiegelhalter 1988),
//! on the shared junction tree of `occam_core::junction` (moralisation, greedy min-fill
//! triangulation, log-domain collect/distribute).
//!
//! Each unit is a binary variable (state 0 is s = −1, state 1 is s = +1); each threshold h_i s_i is a
//! one-variable factor and each coupling w_ij s_i s_j a two-variable factor. ⟨s_i⟩ and ⟨s_i s_j⟩
//! follow from the calibrated tree's variable and factor marginals.

use super::error::{BmError, Result};
use super::model::BoltzmannMachine;
use occam_core::junction::JunctionTree;

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

/// Exact inference by junction tree (module doc).
pub fn junction_tree(bm: &BoltzmannMachine) -> Result<JunctionTreeResult> {
    let n = bm.n();
    let h = bm.thresholds();
    let mut scopes: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    let mut tables: Vec<Vec<f64>> = h.iter().map(|&h| vec![-h, h]).collect();
    let mut edges = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            let w = bm.w(i, j);
            if w != 0.0 {
                // (s_i, s_j) = (−,−), (−,+), (+,−), (+,+).
                scopes.push(vec![i, j]);
                tables.push(vec![w, -w, -w, w]);
                edges.push((i, j));
            }
        }
    }
    let too_many = |units| BmError::TooManyUnits {
        units,
        max: MAX_CLIQUE,
    };
    let jt = JunctionTree::new(&vec![2; n], &scopes, 1 << MAX_CLIQUE)
        .map_err(|big| too_many(big.vars))?;
    let refs: Vec<&[f64]> = tables.iter().map(|t| t.as_slice()).collect();
    // Finite potentials give every state positive weight; `None` means overflow.
    let cal = jt
        .calibrate(&refs)
        .ok_or_else(|| too_many(jt.max_cluster()))?;
    let means = (0..n)
        .map(|i| {
            let m = jt.variable_marginal(&cal, i);
            m[1] - m[0]
        })
        .collect();
    let edge_correlations = edges
        .iter()
        .enumerate()
        .map(|(f, &(i, j))| {
            let m = jt.factor_marginal(&cal, n + f);
            (i, j, m[0] + m[3] - m[1] - m[2])
        })
        .collect();
    Ok(JunctionTreeResult {
        log_z: cal.log_z + bm.offset(),
        means,
        edge_correlations,
        max_clique: jt.max_cluster(),
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

    fn lse(xs: impl Iterator<Item = f64>) -> f64 {
        occam_core::special::log_sum_exp(&xs.collect::<Vec<f64>>())
    }

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
