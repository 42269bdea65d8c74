//! The gated q-block (`q joint(s, x)`, `examples/mbpca/mbpca.occam`, a mixture of Bayesian PCA)
//! on uneven shards sweeps as one process: `Sharded::start_from` cuts the single-process start
//! (the block's data start, seed 11) into rows — s's per-row arrays, x's rows of means with the
//! covariances Σ_k whole and each shard's sums over its own rows — and 30 sweeps later the bound
//! after every sweep and the moments of every node (W, μ, τ, π, α replicated; s, x, the dot and the
//! sum per row) equal the single-process fit's to 1e-10 relative (`shards::same_as_single`).

use super::shards::{same_as_single, uneven};
use occam_core::engine::Sharded;

/// The example's model and its noisy sphere (N = 600, D = 3).
fn mbpca() -> (String, Vec<f64>) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/mbpca/");
    let text = std::fs::read_to_string(format!("{root}mbpca.occam")).unwrap();
    let csv = std::fs::read_to_string(format!("{root}sphere.csv")).unwrap();
    let t = csv
        .lines()
        .skip(1)
        .flat_map(|l| l.split(',').map(|v| v.parse::<f64>().unwrap()))
        .collect();
    (text, t)
}

#[test]
fn a_mixture_of_bayesian_pca_on_three_uneven_shards_sweeps_as_one_process() {
    let (text, t) = mbpca();
    let n = t.len() / 3;
    same_as_single(&text, &[("t", 3, &t)], n, &uneven(n, &[1, 5, 3]));
}

#[test]
fn a_mixture_of_bayesian_pca_on_four_uneven_shards_sweeps_as_one_process() {
    let (text, t) = mbpca();
    let n = t.len() / 3;
    same_as_single(&text, &[("t", 3, &t)], n, &uneven(n, &[7, 1, 4, 2]));
}

#[test]
fn a_gated_block_without_a_start_cannot_be_cut_into_rows() {
    let (text, t) = mbpca();
    let n = t.len() / 3;
    let data = |from, to| super::shards::rows(&[("t", 3, &t)], from, to);
    let full = super::shards::compile(&text, &data(0, n));
    let shards = vec![
        super::shards::compile(&text, &data(0, 250)),
        super::shards::compile(&text, &data(250, n)),
    ];
    let mut sharded = Sharded::new(shards, None, None).unwrap();
    let err = sharded.start_from(&full).unwrap_err().to_string();
    assert!(err.contains("`x`") && err.contains("no state yet"), "{err}");
}

/// The shards keep W as the single process does, with one covariance per component (its q state
/// holds K·D·q means and K covariances, 3·3·2 + 3·2·2 = 30 values, not 3·3·(2 + 4) = 54 per
/// element): each replica updates it from the messages of every shard's rows
/// (`Vmp::update_global`), so the replicas hold the same bits. A sharded start without the full
/// data (`Sharded::start`: shard 0's globals, W already grouped, copied into the other shard,
/// whose W is still per element) is accepted, and the sweeps from it never lower the bound.
#[test]
fn the_shards_keep_w_with_one_covariance_per_component() {
    let (text, t) = mbpca();
    let n = t.len() / 3;
    let data = |from, to| super::shards::rows(&[("t", 3, &t)], from, to);
    let cut = uneven(n, &[2, 3])[0];
    let shards = vec![
        super::shards::compile(&text, &data(0, cut)),
        super::shards::compile(&text, &data(cut, n)),
    ];
    let mut sharded = Sharded::new(shards, None, None).unwrap();
    sharded.start(3).unwrap();
    let w = sharded.shards()[0].node("W").unwrap();
    let mut last = sharded.bound();
    for sweep in 1..=20 {
        let l = sharded.sweep().unwrap();
        assert!(
            l >= last - 1e-10 * l.abs(),
            "sweep {sweep}: {l} after {last}"
        );
        last = l;
    }
    let states: Vec<_> = sharded
        .shards()
        .iter()
        .map(|v| v.q_state()[w.index()].clone())
        .collect();
    assert_eq!(states[0].u.len(), 30);
    assert_eq!(states[0].phi.len(), 30);
    assert_eq!(states[0], states[1]);
}
