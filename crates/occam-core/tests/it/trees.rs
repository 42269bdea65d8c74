//! Tree-structured q-blocks over discrete variables (`Graph::joint_q`, Winn §5.3–5.6): the ASIA
//! network (Lauritzen & Spiegelhalter 1988) checked by exact enumeration, and an unrolled HMM whose
//! block equals the Markov-chain q-block.

use occam_core::prelude::*;

/// The ASIA network with the usual tables (the deterministic "either" softened to 0.999 so that
/// every table is a proper distribution), states 0 = no, 1 = yes. Order: A, S, T, L, B, E, X, D.
struct Asia {
    g: Graph,
    ids: Vec<NodeId>,
}

const NAMES: [&str; 8] = ["A", "S", "T", "L", "B", "E", "X", "D"];
/// Parents (indices into NAMES) and table (row per parent configuration, first parent slowest).
fn tables() -> Vec<(Vec<usize>, Vec<f64>)> {
    vec![
        (vec![], vec![0.99, 0.01]),
        (vec![], vec![0.5, 0.5]),
        (vec![0], vec![0.99, 0.01, 0.95, 0.05]),
        (vec![1], vec![0.99, 0.01, 0.9, 0.1]),
        (vec![1], vec![0.7, 0.3, 0.4, 0.6]),
        (
            vec![2, 3],
            vec![0.999, 0.001, 0.001, 0.999, 0.001, 0.999, 0.001, 0.999],
        ),
        (vec![5], vec![0.95, 0.05, 0.02, 0.98]),
        (vec![5, 4], vec![0.9, 0.1, 0.2, 0.8, 0.3, 0.7, 0.1, 0.9]),
    ]
}

/// Evidence: X-ray positive, dyspnoea.
const EVIDENCE: [(usize, usize); 2] = [(6, 1), (7, 1)];

fn asia() -> Asia {
    let mut g = Graph::new();
    let states: Vec<PlateId> = NAMES.iter().map(|n| g.plate(&format!("{n}2"), 2)).collect();
    let dir = MomentKind::Dirichlet { k: 2 };
    let mut ids: Vec<NodeId> = Vec::new();
    for (v, (pa, table)) in tables().into_iter().enumerate() {
        let plates: Vec<PlateId> = pa.iter().map(|&q| states[q]).collect();
        let t = g
            .constant(&format!("p_{}", NAMES[v]), dir, &plates, &table)
            .unwrap();
        let sel: Vec<(NodeId, PlateId)> = pa.iter().map(|&q| (ids[q], states[q])).collect();
        let id = if sel.is_empty() {
            g.add(NAMES[v], Categorical { k: 2 }, &[], [p(t)]).unwrap()
        } else {
            g.add_mixture(NAMES[v], Categorical { k: 2 }, &[], &sel, [p(t)])
                .unwrap()
        };
        ids.push(id);
    }
    for (v, x) in EVIDENCE {
        g.observe(ids[v], &[x as f64]).unwrap();
    }
    Asia { g, ids }
}

/// ln p(x_0..x_7) of a full joint state.
fn log_joint(x: &[usize]) -> f64 {
    tables()
        .iter()
        .enumerate()
        .map(|(v, (pa, t))| {
            let row = pa.iter().fold(0, |r, &q| r * 2 + x[q]);
            t[row * 2 + x[v]].ln()
        })
        .sum()
}

/// Every joint state of the six latent variables with the evidence filled in.
fn states() -> Vec<Vec<usize>> {
    (0..64)
        .map(|i| {
            let mut x: Vec<usize> = (0..6).map(|v| (i >> (5 - v)) & 1).collect();
            x.extend([1, 1]);
            x
        })
        .collect()
}

fn log_evidence() -> f64 {
    let lp: Vec<f64> = states().iter().map(|x| log_joint(x)).collect();
    let m = lp.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    m + lp.iter().map(|l| (l - m).exp()).sum::<f64>().ln()
}

fn converge(vmp: &mut Vmp) -> f64 {
    let fit = vmp
        .run(&RunOptions {
            max_iter: 500,
            tol: 1e-13,
            decrease_is_error: true,
            check_every_update: true,
            prune_components: false,
            ..Default::default()
        })
        .unwrap();
    assert!(fit.converged);
    vmp.bound()
}

/// KL(exact) = 0 ≤ KL(tree q) ≤ KL(factorised q), each KL = ln p(evidence) − L(q), with ln p(evidence)
/// and the tree q's bound recomputed by enumerating the 64 latent states.
#[test]
fn asia_kl_is_zero_for_one_block_and_ordered_for_tree_and_factorised_q() {
    let ln_z = log_evidence();
    // One block with everything (the observed X and D are members too: D reads E and B).
    let Asia { mut g, ids } = asia();
    g.joint_q(&ids).unwrap();
    let mut vmp = g.compile().unwrap();
    let kl_exact = ln_z - converge(&mut vmp);
    assert!(kl_exact.abs() < 1e-10, "KL(exact) = {kl_exact}");
    // Its marginals are the posterior's.
    let post: Vec<f64> = states()
        .iter()
        .map(|x| (log_joint(x) - ln_z).exp())
        .collect();
    for v in 0..6 {
        let want: f64 = states()
            .iter()
            .zip(&post)
            .filter(|(x, _)| x[v] == 1)
            .map(|(_, p)| p)
            .sum();
        let got = vmp.moments(ids[v])[1];
        assert!((got - want).abs() < 1e-10, "{}: {got} vs {want}", NAMES[v]);
    }

    // Tree-structured q: q(A, T) q(S, L, B) q(E).
    let Asia { mut g, ids } = asia();
    g.joint_q(&[ids[0], ids[2]]).unwrap();
    g.joint_q(&[ids[1], ids[3], ids[4]]).unwrap();
    let mut vmp = g.compile().unwrap();
    let bound_tree = converge(&mut vmp);
    let fam = |v: usize| vmp.family_marginals(ids[v]).unwrap().to_vec();
    let (q_at, q_sl, q_sb) = (fam(2), fam(3), fam(4));
    let q_s = vmp.moments(ids[1]).to_vec();
    let q_e = vmp.moments(ids[5]).to_vec();
    let q = |x: &[usize]| {
        q_at[x[0] * 2 + x[2]] * q_sl[x[1] * 2 + x[3]] * q_sb[x[1] * 2 + x[4]] / q_s[x[1]]
            * q_e[x[5]]
    };
    let total: f64 = states().iter().map(|x| q(x)).sum();
    assert!((total - 1.0).abs() < 1e-12);
    let enumerated: f64 = states()
        .iter()
        .map(|x| q(x))
        .zip(states().iter().map(|x| log_joint(x)))
        .filter(|(q, _)| *q > 0.0)
        .map(|(q, lp)| q * (lp - q.ln()))
        .sum();
    assert!(
        (enumerated - bound_tree).abs() < 1e-10,
        "{enumerated} vs {bound_tree}"
    );
    let kl_tree = ln_z - bound_tree;

    // Fully factorised q.
    let Asia { g, .. } = asia();
    let mut vmp = g.compile().unwrap();
    let kl_factorised = ln_z - converge(&mut vmp);
    assert!(
        0.0 < kl_tree && kl_tree <= kl_factorised,
        "KL: exact {kl_exact:e}, tree {kl_tree}, factorised {kl_factorised}"
    );
}

/// An HMM unrolled into one Categorical node per step, all in one block, is the Markov-chain
/// q-block: the same bound after every sweep (Dirichlet transitions learnt, Gaussian emissions).
#[test]
fn unrolled_chain_in_one_block_equals_the_markov_chain_q() {
    let xs = [-1.1, -0.2, 0.9, 1.2, 0.1, -0.9, -1.3];
    let (kk, steps) = (3, xs.len());
    let p0 = vec![0.5, 0.3, 0.2];
    let mu = [-1.0, 0.0, 1.0];
    let conc = vec![1.5, 0.7, 1.0];
    let opts = |order: Vec<NodeId>| RunOptions {
        max_iter: 12,
        tol: 0.0,
        order: Some(order),
        decrease_is_error: true,
        prune_components: false,
        ..Default::default()
    };

    let mut g = Graph::new();
    let k = g.plate("K", kk);
    let t = g.plate("T", steps);
    let a = g
        .add(
            "A",
            Dirichlet {
                concentration: conc.clone(),
            },
            &[k],
            [],
        )
        .unwrap();
    let m = g
        .constant("mu", MomentKind::Gaussian { d: 1 }, &[k], &mu)
        .unwrap();
    let chain = MarkovChain {
        k: kk,
        time: t,
        lengths: None,
    };
    let z = g
        .markov_chain("z", chain, &[], [cv(p0.clone()), p(a)])
        .unwrap();
    let x = g
        .add_mixture("x", Gaussian, &[t], &[(z, k)], [p(m), c(4.0)])
        .unwrap();
    g.observe(x, &xs).unwrap();
    let mut reference = g.compile().unwrap();
    let want = reference.run(&opts(vec![z, a])).unwrap();

    let mut g = Graph::new();
    let k = g.plate("K", kk);
    let a = g
        .add(
            "A",
            Dirichlet {
                concentration: conc,
            },
            &[k],
            [],
        )
        .unwrap();
    let m = g
        .constant("mu", MomentKind::Gaussian { d: 1 }, &[k], &mu)
        .unwrap();
    let mut zs: Vec<NodeId> = Vec::new();
    for (s, &xv) in xs.iter().enumerate() {
        let zt = if s == 0 {
            g.add("z0", Categorical { k: kk }, &[], [cv(p0.clone())])
                .unwrap()
        } else {
            g.add_mixture(
                &format!("z{s}"),
                Categorical { k: kk },
                &[],
                &[(zs[s - 1], k)],
                [p(a)],
            )
            .unwrap()
        };
        let xt = g
            .add_mixture(&format!("x{s}"), Gaussian, &[], &[(zt, k)], [p(m), c(4.0)])
            .unwrap();
        g.observe(xt, &[xv]).unwrap();
        zs.push(zt);
    }
    g.joint_q(&zs).unwrap();
    let mut unrolled = g.compile().unwrap();
    let got = unrolled.run(&opts(vec![zs[0], a])).unwrap();
    assert_eq!(got.bound_trace.len(), want.bound_trace.len());
    for (i, (a, b)) in got.bound_trace.iter().zip(&want.bound_trace).enumerate() {
        assert!((a - b).abs() < 1e-9 * b.abs(), "sweep {i}: {a} vs {b}");
    }
    let zm = reference.moments(z);
    for (s, &zt) in zs.iter().enumerate() {
        for j in 0..kk {
            let (a, b) = (unrolled.moments(zt)[j], zm[s * kk + j]);
            assert!((a - b).abs() < 1e-9, "step {s}, state {j}: {a} vs {b}");
        }
    }
}
