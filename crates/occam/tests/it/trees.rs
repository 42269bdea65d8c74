//! Joint q-blocks written in the model language (`q joint(...)`): the ASIA example
//! (`examples/asia/asia.occam`) against the same network built through the Rust API
//! (`Graph::joint_q`), and the KL ordering exact ≤ tree ≤ factorised from text, with the exact
//! evidence by enumerating the 64 latent states.

use occam::{DataSet, Model, Settings};
use occam_core::prelude::*;
use occam_report::FittedReport;

fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/asia")
}

const NAMES: [&str; 8] = [
    "asia", "smoke", "tub", "lung", "bronc", "either", "xray", "dysp",
];

/// Parents (indices into NAMES) and table (row per parent configuration, first parent slowest),
/// written out here independently of the example's CSV files.
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

/// The network through the Rust API, evidence xray = dysp = yes, with `blocks` as q-blocks.
fn rust_api(blocks: &[&[usize]]) -> f64 {
    let mut g = Graph::new();
    let states: Vec<PlateId> = NAMES
        .iter()
        .map(|n| g.plate(&format!("{n}_states"), 2))
        .collect();
    let dir = MomentKind::Dirichlet { k: 2 };
    let mut ids: Vec<NodeId> = Vec::new();
    for (v, (pa, table)) in tables().into_iter().enumerate() {
        let plates: Vec<PlateId> = pa.iter().map(|&q| states[q]).collect();
        let t = g
            .constant(&format!("p_{}", NAMES[v]), dir, &plates, &table)
            .unwrap();
        let sel: Vec<(NodeId, PlateId)> = pa.iter().map(|&q| (ids[q], states[q])).collect();
        let id = g
            .add_mixture(NAMES[v], Categorical { k: 2 }, &[], &sel, [p(t)])
            .unwrap();
        ids.push(id);
    }
    g.observe(ids[6], &[1.0]).unwrap();
    g.observe(ids[7], &[1.0]).unwrap();
    for b in blocks {
        let members: Vec<NodeId> = b.iter().map(|&v| ids[v]).collect();
        g.joint_q(&members).unwrap();
    }
    let mut vmp = g.compile().unwrap();
    let fit = vmp
        .run(&RunOptions {
            max_iter: 500,
            tol: 1e-14,
            decrease_is_error: true,
            prune_components: false,
            ..Default::default()
        })
        .unwrap();
    assert!(fit.converged);
    vmp.bound()
}

/// ln p(xray = yes, dysp = yes) by enumerating the 64 joint states of the six latent variables.
fn log_evidence() -> f64 {
    let t = tables();
    let total: f64 = (0..64usize)
        .map(|i| {
            let mut x: Vec<usize> = (0..6).map(|v| (i >> (5 - v)) & 1).collect();
            x.extend([1, 1]);
            t.iter()
                .enumerate()
                .map(|(v, (pa, table))| {
                    let row = pa.iter().fold(0, |r, &q| r * 2 + x[q]);
                    table[row * 2 + x[v]]
                })
                .product::<f64>()
        })
        .sum();
    total.ln()
}

fn data() -> DataSet {
    let mut d = DataSet::new();
    for name in NAMES
        .iter()
        .map(|n| format!("p_{n}"))
        .chain(["xray".into(), "dysp".into()])
    {
        d.insert_file(&name, &dir().join(format!("{name}.csv")))
            .unwrap();
    }
    d
}

fn settings() -> Settings {
    Settings {
        tol: 1e-14,
        max_iter: 500,
        strict: true,
        prune: false,
        ..Settings::default()
    }
}

/// The example's text with its `q joint(...)` lines replaced by `blocks`.
fn fit_text(blocks: &[&str]) -> (f64, Model) {
    let text = std::fs::read_to_string(dir().join("asia.occam")).unwrap();
    let mut src: String = text
        .lines()
        .filter(|l| !l.starts_with("q joint"))
        .map(|l| format!("{l}\n"))
        .collect();
    for b in blocks {
        src.push_str(&format!("q joint({b})\n"));
    }
    let model = Model::from_source("asia.occam", &src, &data())
        .unwrap_or_else(|e| panic!("{}", e.render_plain()));
    let fit = model
        .fit(&settings())
        .unwrap_or_else(|e| panic!("{}", e.render_plain()));
    assert!(fit.outcome().converged);
    (fit.bound(), model)
}

#[test]
fn the_asia_example_equals_the_rust_api_joint_q() {
    let model = Model::from_file(dir().join("asia.occam"), &DataSet::new())
        .unwrap_or_else(|e| panic!("{}", e.render_plain()));
    let fit = model.fit(&settings()).unwrap();
    let want = rust_api(&[&[0, 2], &[1, 3, 4]]);
    assert!(
        (fit.bound() - want).abs() < 1e-10,
        "text {} vs Rust API {want}",
        fit.bound()
    );
    let report = fit.report_json();
    let blocks = report["q_blocks"]
        .as_array()
        .expect("q_blocks in the report");
    assert_eq!(blocks.len(), 2);
    assert_eq!(
        blocks[1]["members"],
        serde_json::json!(["smoke", "lung", "bronc"])
    );
    // q(smoke = s, lung = l): lung's family marginal sums to one and its smoke margin is q(smoke).
    let fam = blocks[1]["family_marginals"]["lung"][0].as_array().unwrap();
    let fam: Vec<f64> = fam.iter().map(|x| x.as_f64().unwrap()).collect();
    let q_smoke = &report["variables"]["smoke"]["moments"][0];
    assert!((fam.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    assert!((fam[2] + fam[3] - q_smoke[1].as_f64().unwrap()).abs() < 1e-12);
}

#[test]
fn kl_from_text_is_zero_for_one_block_and_ordered_for_tree_and_factorised_q() {
    let ln_z = log_evidence();
    // Everything latent in one block: `dysp` reads `either` and `bronc`, so it joins as evidence.
    let (exact, model) = fit_text(&["asia, smoke, tub, lung, bronc, either"]);
    let m = &model.loaded().model;
    assert_eq!(m.q_blocks.len(), 1);
    let evidence: Vec<&str> = m.q_blocks[0]
        .evidence
        .iter()
        .map(|&v| m.variables[v].name.as_str())
        .collect();
    assert_eq!(evidence, ["dysp"]);
    let kl_exact = ln_z - exact;
    assert!(kl_exact.abs() < 1e-10, "KL(exact) = {kl_exact:e}");
    assert!(
        (exact - rust_api(&[&[0, 1, 2, 3, 4, 5, 6, 7]])).abs() < 1e-10,
        "one block from text vs all eight nodes in one block through the API"
    );

    let (tree, _) = fit_text(&["asia, tub", "smoke, lung, bronc"]);
    let (factorised, _) = fit_text(&[]);
    let (kl_tree, kl_factorised) = (ln_z - tree, ln_z - factorised);
    assert!(
        kl_exact.abs() < 1e-10 && 0.0 < kl_tree && kl_tree < kl_factorised,
        "KL: exact {kl_exact:e}, tree {kl_tree}, factorised {kl_factorised}"
    );
    assert!((factorised - rust_api(&[])).abs() < 1e-10);
}
