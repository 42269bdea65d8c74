//! The streamed report against the JSON tree the report was built as before it streamed (the
//! reference below, kept verbatim): the same text, on models of every kind of report entry.

use super::*;
use occam_core::prelude::*;

/// Replaces the entries of every per-element list whose element is integrated out by `null`.
fn blank(values: &mut Map<String, Value>, gone: &[bool]) {
    for list in values.values_mut() {
        if let Value::Array(items) = list {
            if items.len() == gone.len() {
                for (item, &g) in items.iter_mut().zip(gone) {
                    if g {
                        *item = Value::Null;
                    }
                }
            }
        }
    }
}

/// One element's value of a posterior column as JSON: a number, a list or a list of rows, by
/// the column's per-element dimensions.
fn item_json(item: &[usize], values: &[f64]) -> Value {
    match item {
        [] => json!(values[0]),
        [_] => json!(values),
        [_, cols, ..] => json!(values.chunks((*cols).max(1)).collect::<Vec<_>>()),
    }
}

/// Posterior parameters of a node, each a list over plate elements: the facade's one summary
/// table ([`occam::posterior::columns`]: summaries of the moments by moment kind, then, for a
/// latent stochastic node, the family's usual parameters from its natural parameters).
fn parameters(c: &Compiled, node: NodeId, latent: bool) -> Map<String, Value> {
    let n = c.vmp.elements(node);
    let mut out = Map::new();
    for col in posterior::columns(c, node, latent) {
        let per = col.item.iter().product::<usize>();
        let list = if per == 0 {
            vec![item_json(&col.item, &[]); n]
        } else {
            col.values
                .chunks(per)
                .map(|v| item_json(&col.item, v))
                .collect()
        };
        out.insert(col.name, Value::Array(list));
    }
    out
}

/// The posterior of variable `v`: distribution, role, plates, parameters and moments.
fn variable(loaded: &Loaded, c: &Compiled, v: usize) -> Value {
    let var = &loaded.model.variables[v];
    let node = c.var_nodes[v];
    let r = role(loaded, v, c);
    let latent = matches!(r, "latent" | "partly observed");
    let kind = c.vmp.kind(node);
    let len = kind.len();
    let u = c.vmp.moments(node);
    let gone = integrated_out(loaded, v, c);
    let mut params = parameters(c, node, latent);
    let mut moments: Vec<Value> = u.chunks(len).map(|c| json!(c)).collect();
    if let Some(g) = &gone {
        blank(&mut params, g);
        for (m, &x) in moments.iter_mut().zip(g) {
            if x {
                *m = Value::Null;
            }
        }
    }
    let plates: Vec<Value> = var
        .plates
        .iter()
        .map(|&p| json!({"name": loaded.model.plates[p].name, "size": loaded.model.plates[p].size}))
        .collect();
    let event = var.event_plates.first().map(
        |&p| json!({"name": loaded.model.plates[p].name, "size": loaded.model.plates[p].size}),
    );
    json!({
        "distribution": distribution(loaded, v),
        "role": r,
        "map": var.map,
        "plates": plates,
        "event": event,
        "moment_kind": kind.to_string(),
        "parameters": params,
        "moments": moments,
    })
}

/// The posterior of every variable.
fn variables(loaded: &Loaded, c: &Compiled) -> Map<String, Value> {
    let mut vars = Map::new();
    for (v, var) in loaded.model.variables.iter().enumerate() {
        vars.insert(var.name.clone(), variable(loaded, c, v));
    }
    vars
}

/// The report as the JSON tree it was built as.
fn reference(loaded: &Loaded, c: &Compiled, o: &Outcome) -> Value {
    let mut node_bounds = Map::new();
    for (n, b) in &o.node_bounds {
        node_bounds.insert(n.clone(), json!(b));
    }
    let mut out = json!({
        "model": loaded.file_name,
        "bound": o.bound,
        "iterations": o.iterations,
        "converged": o.converged,
        "stop": o.stop,
        "bound_trace": o.bound_trace,
        "prune_start": o.prune_start,
        "seed": o.seed,
        "restart_bounds": o.restart_bounds,
        "best_restart": o.best_restart,
        "warnings": o.warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "node_bounds": node_bounds,
        "variables": variables(loaded, c),
        "ard": occam::latent::ard::ard(loaded, c),
    });
    if !loaded.model.q_blocks.is_empty() {
        out["q_blocks"] = q_blocks(loaded, c);
    }
    if let Some(r) = &o.rotated {
        out["rotations"] = json!(r);
    }
    let chains = occam::chains::chains(loaded, c);
    if !chains.is_empty() {
        let map: Map<String, Value> = chains
            .iter()
            .map(|ch| (ch.variable.clone(), ch.to_json()))
            .collect();
        out["chains"] = Value::Object(map);
    }
    out
}

fn fit(text: &str, name: &str, rows: &[Vec<f64>], rotate: bool) -> occam::Fitted {
    let mut d = occam::DataSet::new();
    d.insert_array(name, rows.len(), rows[0].len(), rows.concat(), None)
        .unwrap();
    occam::Model::from_source("m.occam", text, &d)
        .unwrap()
        .fit(&occam::Settings {
            rotate: Some(rotate),
            ..occam::Settings::default()
        })
        .unwrap()
}

fn csv(text: &str) -> Vec<Vec<f64>> {
    text.lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.trim().parse().unwrap()).collect())
        .collect()
}

#[test]
fn the_streamed_report_is_the_tree_as_text() {
    let x: Vec<Vec<f64>> = [0.1, 0.4, f64::NAN, 3.9, 4.2, 4.0]
        .iter()
        .map(|&v| vec![v])
        .collect();
    let cases = [
        (
            "plate K = 2\nplates N, D from data x\npi ~ Dirichlet(1) over K\n\
             mu[K] ~ Gaussian(0, 0.1)\ntau[K] ~ Gamma(1, 1)\nz[N] ~ Categorical(pi)\n\
             x[N, D] ~ Gaussian(mu[z], tau[z])\n",
            "x",
            x.clone(),
            false,
        ),
        (
            "plates N, D from data x\nm ~ Gaussian(0, 1)\nt ~ Gamma(2, 1)\n\
             x[N, D] ~ Gaussian(m, t)\n",
            "x",
            x,
            false,
        ),
        (
            include_str!("../../../../examples/pca_rotation/pca.occam"),
            "y",
            csv(include_str!("../../../../examples/pca_rotation/y.csv")),
            true,
        ),
    ];
    for (text, name, rows, rotate) in cases {
        let fitted = fit(text, name, &rows, rotate);
        let (loaded, c, o) = (fitted.loaded(), fitted.compiled(), fitted.outcome());
        let streamed = serde_json::to_string_pretty(&Report::new(loaded, c, o, true)).unwrap();
        let tree = serde_json::to_string_pretty(&reference(loaded, c, o)).unwrap();
        assert_eq!(streamed, tree, "{text}");
        assert_eq!(report(loaded, c, o), reference(loaded, c, o));
    }
}

/// Weights whose q is one Gaussian over every class's (the engine's softmax q-block, with an
/// intercept): the report's `joint_covariance` lists, per class, its D × K·D rows of the
/// library's joint covariance (`Vmp::joint_covariance`), bit for bit, in the order of the
/// facade's `[K, D, K, D]` posterior parameter (what Python reads); a per-class q has none.
#[test]
fn joint_covariance_is_the_librarys() {
    let text = "plate K = 3\nplates N, D from data X\ndata X[N] over D\n\
                w[K] over D ~ MvGaussian(mean = 0, precision = identity)\n\
                b over K ~ MvGaussian(mean = 0, precision = identity * 0.01)\n\
                c[N] ~ Categorical(LINK(w @ X[N] + b))\nobserve c\n";
    let x = [
        [0.3, -1.2],
        [1.5, 0.4],
        [-0.7, 0.9],
        [2.1, -0.3],
        [-1.4, -1.1],
        [0.2, 1.8],
        [-0.9, 0.1],
        [1.1, 1.3],
        [-2.0, 0.6],
        [0.8, -2.2],
    ];
    let classes = [0.0, 1.0, 2.0, 1.0, 0.0, 2.0, 0.0, 1.0, 2.0, 0.0];
    for link in ["softmax", "softmax_bohning"] {
        let mut d = occam::DataSet::new();
        d.insert_array("X", 10, 2, x.concat(), None).unwrap();
        d.insert_array("c", 10, 1, classes.to_vec(), None).unwrap();
        let fitted = occam::Model::from_source("m.occam", &text.replace("LINK", link), &d)
            .unwrap()
            .fit(&occam::Settings::default())
            .unwrap();
        let (loaded, c, o) = (fitted.loaded(), fitted.compiled(), fitted.outcome());
        let v = (loaded.model.variables.iter())
            .position(|var| var.name == "w")
            .unwrap();
        let library = c.vmp.joint_covariance(c.var_nodes[v]).expect("joint q");
        let json = report(loaded, c, o);
        let rows = json["variables"]["w"]["parameters"]["joint_covariance"]
            .as_array()
            .expect("joint_covariance in the report");
        assert_eq!(rows.len(), 3, "{link}: one entry per class");
        let flat: Vec<f64> = rows
            .iter()
            .flat_map(|class| {
                let class = class.as_array().unwrap();
                assert_eq!(class.len(), 2, "{link}: D rows per class");
                class.iter().flat_map(|row| {
                    let row = row.as_array().unwrap();
                    assert_eq!(row.len(), 6, "{link}: K·D columns per row");
                    row.iter().map(|v| v.as_f64().unwrap())
                })
            })
            .collect();
        assert_eq!(flat, library, "{link}");
        let p = fitted.posterior("w").unwrap();
        let p = p.param("joint_covariance").unwrap();
        assert_eq!(p.shape, [3, 2, 3, 2]);
        assert_eq!(p.values, library, "{link}");
        // b's q is its own (one vector over the classes already): no entry.
        let b = &json["variables"]["b"]["parameters"];
        assert!(b.get("joint_covariance").is_none(), "{link}");
        // The streamed text is the tree's.
        let streamed = serde_json::to_string(&Report::new(loaded, c, o, true)).unwrap();
        assert_eq!(serde_json::to_string(&json).unwrap(), streamed, "{link}");
    }
}
