//! The posterior of every variable as JSON: distribution, plates, posterior parameters (derived
//! from the natural parameters of q) and moments, per plate element.
//!
//! [`Report`] serialises the whole report straight from the engine's arrays and the summary
//! columns (flat `f64` vectors): nothing builds a JSON tree of the per-element values, whose
//! 32-byte nodes made `fit --out` need four times the memory of the fit (200,000 × 10 data,
//! a 20-component mixture: 1.44 GB against 0.36 GB). Keys come out sorted, as from a
//! `serde_json::Map`, so the streamed text equals the text of [`report`]'s tree.

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{json, Map, Value};

use occam::lower::Compiled;
use occam::model::Loaded;
use occam::posterior::{self, distribution, integrated_out, role};
use occam::Outcome;
use occam_lang::ir::QKind;

/// The whole fit report as a JSON tree (what `occam fit --json` prints and Python reads).
pub fn report(loaded: &Loaded, c: &Compiled, o: &Outcome) -> Value {
    serde_json::to_value(Report::new(loaded, c, o, true)).expect("the report serialises")
}

/// One variable's posterior (index `v` of the model's variables) exactly as the `variables`
/// entry of `occam fit --json` gives it (with data: observed values included).
pub fn variable(loaded: &Loaded, c: &Compiled, v: usize) -> Value {
    serde_json::to_value(VariableReport::new(loaded, c, v)).unwrap_or(Value::Null)
}

/// The whole fit report, serialised as it is written: see the module documentation.
pub struct Report<'a> {
    loaded: &'a Loaded,
    c: &'a Compiled,
    o: &'a Outcome,
    include_data: bool,
}

impl<'a> Report<'a> {
    /// The report of a fit; without `include_data`, each observed variable is a stub naming its
    /// data file (what `fit --out` writes by default).
    pub fn new(loaded: &'a Loaded, c: &'a Compiled, o: &'a Outcome, include_data: bool) -> Self {
        Report {
            loaded,
            c,
            o,
            include_data,
        }
    }
}

impl Serialize for Report<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (loaded, c, o) = (self.loaded, self.c, self.o);
        let node_bounds: std::collections::BTreeMap<&str, f64> = o
            .node_bounds
            .iter()
            .map(|(n, b)| (n.as_str(), *b))
            .collect();
        let chains = occam::chains::chains(loaded, c);
        let warnings: Vec<String> = o.warnings.iter().map(ToString::to_string).collect();
        // In key order (a `serde_json::Map` sorts its keys).
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("ard", &tree(&occam::latent::ard::ard(loaded, c)))?;
        m.serialize_entry("best_restart", &tree(&o.best_restart))?;
        m.serialize_entry("bound", &o.bound)?;
        // Only for bounds that are not the exact ELBO (other reports are unchanged).
        let labelled = o.bound_quality != occam::quality::BoundQuality::Exact;
        if labelled {
            m.serialize_entry("bound_quality", &o.bound_quality)?;
        }
        m.serialize_entry("bound_trace", &o.bound_trace)?;
        // Per-step chain reports, only for models with chains (other reports are unchanged).
        if !chains.is_empty() {
            let map: Map<String, Value> = chains
                .iter()
                .map(|ch| (ch.variable.clone(), ch.to_json()))
                .collect();
            m.serialize_entry("chains", &map)?;
        }
        m.serialize_entry("converged", &o.converged)?;
        m.serialize_entry("iterations", &o.iterations)?;
        m.serialize_entry("model", &loaded.file_name)?;
        m.serialize_entry("node_bounds", &node_bounds)?;
        if labelled {
            let kinds: std::collections::BTreeMap<&str, _> = o
                .node_qualities
                .iter()
                .map(|(n, k)| (n.as_str(), k))
                .collect();
            m.serialize_entry("node_qualities", &kinds)?;
        }
        // Only for screened fits (`Settings::prune_screen_from`; other reports are unchanged).
        if let Some(c) = &o.prune_screen {
            m.serialize_entry("prune_screen", &tree(c))?;
            m.serialize_entry("prune_trials", &o.prune_trials)?;
        }
        m.serialize_entry("prune_start", &tree(&o.prune_start))?;
        if !loaded.model.q_blocks.is_empty() {
            m.serialize_entry("q_blocks", &q_blocks(loaded, c))?;
        }
        m.serialize_entry("restart_bounds", &tree(&o.restart_bounds))?;
        // Only for fits with rotations (other reports are unchanged).
        if let Some(r) = &o.rotated {
            m.serialize_entry("rotations", &tree(r))?;
        }
        // Only for models with importance-sampled nodes (other reports are unchanged).
        if !o.sampled.is_empty() {
            m.serialize_entry("sampled", &tree(&o.sampled))?;
        }
        // Only where a local bound understates posterior sds (Böhning's, in softmax logits):
        // each such variable with the Categorical whose bound it is and what that costs.
        let understated = occam::quality::understated_sds_named(loaded, c);
        if !understated.is_empty() {
            let map: std::collections::BTreeMap<String, String> = understated.into_iter().collect();
            m.serialize_entry("sds_understated", &map)?;
        }
        m.serialize_entry("seed", &tree(&o.seed))?;
        m.serialize_entry("stop", &tree(&o.stop))?;
        m.serialize_entry("variables", &Variables(self))?;
        m.serialize_entry("warnings", &warnings)?;
        m.end()
    }
}

/// A small entry as a JSON tree, so that the keys of its structs come out sorted as in the
/// tree-built report (the per-element values never go through here).
fn tree<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// The `variables` object: every variable by name (in name order), or the stub of an observed
/// variable whose data are left out.
struct Variables<'r, 'a>(&'r Report<'a>);

impl Serialize for Variables<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Report {
            loaded,
            c,
            include_data,
            ..
        } = *self.0;
        let vars = &loaded.model.variables;
        let mut order: Vec<usize> = (0..vars.len()).collect();
        order.sort_by(|&a, &b| vars[a].name.cmp(&vars[b].name));
        order.dedup_by(|a, b| vars[*a].name == vars[*b].name);
        let mut m = s.serialize_map(Some(order.len()))?;
        for v in order {
            let role = role(loaded, v, c);
            if !include_data && matches!(role, "observed" | "data") {
                let file = loaded.data.tables.get(&vars[v].name).map(|t| &t.file);
                m.serialize_entry(
                    &vars[v].name,
                    &json!({
                        "role": role,
                        "data_file": file,
                        "omitted": "observed values left out (fit --out DIR --include-data keeps them)",
                    }),
                )?;
            } else {
                m.serialize_entry(&vars[v].name, &VariableReport::new(loaded, c, v))?;
            }
        }
        m.end()
    }
}

/// One variable's posterior: distribution, role, plates, parameters and moments.
struct VariableReport {
    head: Map<String, Value>,
    params: Vec<(String, Rows)>,
    moments: Rows,
}

impl VariableReport {
    fn new(loaded: &Loaded, c: &Compiled, v: usize) -> Self {
        let var = &loaded.model.variables[v];
        let node = c.var_nodes[v];
        let r = role(loaded, v, c);
        let latent = matches!(r, "latent" | "partly observed");
        let kind = c.vmp.kind(node);
        let gone = integrated_out(loaded, v, c).map(std::sync::Arc::new);
        let n = c.vmp.elements(node);
        let mut params: Vec<(String, Rows)> = posterior::columns(c, node, latent)
            .into_iter()
            .map(|col| {
                let rows = Rows {
                    n,
                    item: col.item,
                    values: col.values,
                    gone: gone.clone(),
                };
                (col.name, rows)
            })
            .collect();
        // A joint q over the classes' weights: each class's rows of the joint covariance
        // (`posterior::joint_covariance_column`).
        if let Some((_, col)) = posterior::joint_covariance_column(c, node) {
            let rows = Rows {
                n,
                item: col.item,
                values: col.values,
                gone: gone.clone(),
            };
            params.push((col.name, rows));
        }
        // As a map's entries: sorted by name, the last of a repeated name kept.
        params.reverse();
        params.sort_by(|a, b| a.0.cmp(&b.0));
        params.dedup_by(|a, b| a.0 == b.0);
        let moments = Rows {
            n,
            item: vec![kind.len()],
            values: c.vmp.moments(node).to_vec(),
            gone,
        };
        let plate = |p: usize| json!({"name": loaded.model.plates[p].name, "size": loaded.model.plates[p].size});
        let mut head = Map::new();
        head.insert("distribution".into(), json!(distribution(loaded, v)));
        head.insert(
            "event".into(),
            json!(var.event_plates.first().map(|&p| plate(p))),
        );
        head.insert("map".into(), json!(var.map));
        head.insert("moment_kind".into(), json!(kind.to_string()));
        if let Some(q) = posterior::q_family(c, v) {
            head.insert("q_family".into(), json!(q));
        }
        head.insert(
            "plates".into(),
            Value::Array(var.plates.iter().map(|&p| plate(p)).collect()),
        );
        head.insert("role".into(), json!(r));
        VariableReport {
            head,
            params,
            moments,
        }
    }
}

impl Serialize for VariableReport {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Params<'p>(&'p [(String, Rows)]);
        impl Serialize for Params<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(self.0.len()))?;
                for (name, rows) in self.0 {
                    m.serialize_entry(name, rows)?;
                }
                m.end()
            }
        }
        // Keys in order: distribution, event, map, moment_kind | moments, parameters | plates,
        // q_family (only where q is not the written family), role.
        let mut m = s.serialize_map(None)?;
        for (k, v) in self.head.iter().take_while(|(k, _)| k.as_str() < "moments") {
            m.serialize_entry(k, v)?;
        }
        m.serialize_entry("moments", &self.moments)?;
        m.serialize_entry("parameters", &Params(&self.params))?;
        for (k, v) in self.head.iter().skip_while(|(k, _)| k.as_str() < "moments") {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// A per-element list of one column's values: each element a number, a list or a list of rows
/// by the column's per-element dimensions (`item`); `null` for an element integrated out
/// (where the list has one entry per element).
struct Rows {
    n: usize,
    item: Vec<usize>,
    values: Vec<f64>,
    gone: Option<std::sync::Arc<Vec<bool>>>,
}

impl Serialize for Rows {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let per = self.item.iter().product::<usize>();
        let count = self.values.len().checked_div(per).unwrap_or(self.n);
        let gone = self.gone.as_deref().filter(|g| g.len() == count);
        let mut seq = s.serialize_seq(Some(count))?;
        for e in 0..count {
            if gone.is_some_and(|g| g[e]) {
                seq.serialize_element(&Option::<f64>::None)?;
                continue;
            }
            let values = if per == 0 {
                &[][..]
            } else {
                &self.values[e * per..(e + 1) * per]
            };
            match self.item.as_slice() {
                [] => seq.serialize_element(&values[0])?,
                [_] => seq.serialize_element(values)?,
                [_, cols, ..] => {
                    let rows: Vec<&[f64]> = values.chunks((*cols).max(1)).collect();
                    seq.serialize_element(&rows)?
                }
            }
        }
        seq.end()
    }
}

/// The joint q-blocks: members, the evidence inside each block, and each member's family marginals
/// q(indices = k, member = j) per element (configurations × K, the first index slowest); a gated
/// block (`q joint(s, x)`, the gated linear block) also has `"kind": "gated"`.
fn q_blocks(loaded: &Loaded, c: &Compiled) -> Value {
    let m = &loaded.model;
    let name = |v: &usize| m.variables[*v].name.clone();
    let blocks: Vec<Value> = m
        .q_blocks
        .iter()
        .map(|b| {
            let mut fams = Map::new();
            for &v in &b.members {
                let node = c.var_nodes[v];
                let n = c.vmp.elements(node).max(1);
                if let Some(f) = c.vmp.family_marginals(node) {
                    let per = f.len() / n;
                    fams.insert(name(&v), json!(f.chunks(per.max(1)).collect::<Vec<_>>()));
                }
            }
            let mut out = json!({
                "members": b.members.iter().map(name).collect::<Vec<_>>(),
                "evidence": b.evidence.iter().map(name).collect::<Vec<_>>(),
                "family_marginals": fams,
            });
            if b.kind == QKind::Gated {
                // `q joint(s, x)`: members [s, x], q(x_n, s_n = k) = r_nk N(m_nk, Σ_k).
                out["kind"] = json!("gated");
            }
            out
        })
        .collect();
    Value::Array(blocks)
}

#[cfg(test)]
mod tests;
