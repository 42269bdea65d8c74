use super::super::fused::tests::{track_generic, unfused};
use super::Packed;
use crate::prelude::*;
use std::sync::Arc;

fn symmetric_packing(d: usize) -> Vec<usize> {
    MvGaussian { d }
        .packed_moments()
        .expect("MvGaussian declares its packing")
}

/// The symmetric packing of u = [x, col(xxᵀ)]: x first, then the upper triangle row by row, with
/// (i, j) and (j, i) at one position and every position used.
#[test]
fn the_symmetric_packing_shares_each_off_diagonal_pair() {
    assert_eq!(symmetric_packing(2), vec![0, 1, 2, 3, 3, 4]);
    assert_eq!(
        symmetric_packing(3),
        vec![0, 1, 2, 3, 4, 5, 4, 6, 7, 5, 7, 8]
    );
    for d in 1..12 {
        let at = symmetric_packing(d);
        let len = d + d * (d + 1) / 2;
        let mut used = vec![0; len];
        at.iter().for_each(|&p| used[p] += 1);
        assert!(used[..d].iter().all(|&n| n == 1), "d = {d}");
        for i in 0..d {
            for j in 0..d {
                assert_eq!(at[d + i * d + j], at[d + j * d + i], "d = {d}");
                assert_eq!(used[at[d + i * d + j]], if i == j { 1 } else { 2 });
            }
        }
    }
}

/// x[N] over D ~ mixture of MvGaussian(mu[K], Lambda[K]) over z[N] ~ Categorical(pi), with every
/// x observed (`period` 1), or y[N, M] over D with the means mu[K, M] (runs of M vectors).
fn model(d: usize, runs: usize) -> (Vmp, NodeId, NodeId) {
    let (n, k) = (240, 3);
    let noise = |i: usize, salt: usize| ((i * 7919 + salt * 104_729) % 1000) as f64 / 1000.0;
    let mut g = Graph::new();
    let np = g.plate("N", n);
    let kp = g.plate("K", k);
    let mp = g.plate("M", runs);
    let pi = g
        .add(
            "pi",
            Dirichlet {
                concentration: vec![1.0; k],
            },
            &[],
            [],
        )
        .unwrap();
    let z = g.add("z", Categorical { k }, &[np], [p(pi)]).unwrap();
    let eye: Vec<f64> = (0..d * d)
        .map(|ij| if ij / d == ij % d { 1.0 } else { 0.0 })
        .collect();
    let prec: Vec<f64> = eye.iter().map(|v| 0.1 * v).collect();
    let mu = g
        .add(
            "mu",
            MvGaussian { d },
            &[kp, mp],
            [cv(vec![0.0; d]), cv(prec)],
        )
        .unwrap();
    let lam = g
        .add(
            "Lambda",
            Wishart {
                d,
                dof: d as f64 + 1.0,
            },
            &[kp],
            [cv(eye)],
        )
        .unwrap();
    let x = g
        .add_mixture(
            "x",
            MvGaussian { d },
            &[np, mp],
            &[(z, kp)],
            [p(mu), p(lam)],
        )
        .unwrap();
    let xs: Vec<f64> = (0..n * runs * d)
        .map(|i| {
            let row = i / (runs * d);
            3.0 * (row % k) as f64 * if i % 2 == 0 { 1.0 } else { -1.0 } + noise(i, 1)
        })
        .collect();
    g.observe(x, &xs).unwrap();
    (g.compile().unwrap(), z, x)
}

/// With packed data moments (d ≥ 5, one vector per index element or runs of two), the fused
/// index update gives the element-by-element update's q(z), bound terms and every later update,
/// sweep after sweep (to rounding: Θ·u and S are sums in another order).
#[test]
fn the_fused_update_on_packed_moments_equals_the_generic_update() {
    for (d, runs) in [(5, 1), (6, 2)] {
        let (mut fused, z, x) = model(d, runs);
        let (mut generic, _, _) = model(d, runs);
        assert!(fused.is_fused(z.index()), "z should take the fused path");
        let packed = fused.nodes[x.index()].packed.as_ref().expect("x is packed");
        let per = d + d * (d + 1) / 2;
        assert_eq!(packed.len, runs * per);
        assert_eq!(fused.nodes[x.index()].period, runs);
        unfused(&mut generic);
        track_generic(&mut fused, &mut generic, 10, &format!("d {d}, "), |_, _| {});
    }
}

/// Below the saving threshold (d = 2: 5 of 6 moments) the data are not packed; a latent or
/// partly observed child never is.
#[test]
fn small_or_latent_children_are_not_packed() {
    let (vmp, _, x) = model(2, 1);
    assert!(vmp.nodes[x.index()].packed.is_none());
    let (mut vmp, _, x) = model(5, 1);
    let node = &mut vmp.nodes[x.index()];
    Arc::make_mut(&mut node.model).observed = crate::network::Observed::None;
    assert!(Packed::of(node).is_none());
}

/// Folding Θ and unfolding S: Θ·u on the packed layout is the full product to rounding, and the
/// unfolded S of packed moments is, bit for bit, the S of the full moments summed in the same
/// order.
#[test]
fn folded_scores_and_unfolded_statistics_match_the_full_layout() {
    let (vmp, _, x) = model(6, 2);
    let node = &vmp.nodes[x.index()];
    let packed = node.packed.as_ref().unwrap();
    let run = node.period * node.len;
    let theta: Vec<f64> = (0..2 * run).map(|i| ((i * 37) % 11) as f64 - 5.0).collect();
    let folded = packed.fold(&theta);
    for (full, short) in node
        .q
        .u
        .chunks_exact(run)
        .zip(packed.u.chunks_exact(packed.len))
    {
        for (t, f) in theta.chunks_exact(run).zip(folded.chunks_exact(packed.len)) {
            let a: f64 = t.iter().zip(full).map(|(t, u)| t * u).sum();
            let b: f64 = f.iter().zip(short).map(|(t, u)| t * u).sum();
            assert!((a - b).abs() <= 1e-12 * (1.0 + a.abs()), "{a} vs {b}");
        }
    }
    let w: Vec<f64> = (0..node.n / node.period)
        .map(|r| (r % 5) as f64 * 0.25)
        .collect();
    let weighted = |u: &[f64], len: usize| {
        let mut s = vec![0.0; len];
        for (row, &wr) in u.chunks_exact(len).zip(&w) {
            s.iter_mut().zip(row).for_each(|(s, v)| *s += wr * v);
        }
        s
    };
    assert_eq!(
        packed.unfold(&weighted(&packed.u, packed.len)),
        weighted(&node.q.u, run)
    );
}
