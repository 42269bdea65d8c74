//! The `check` report: a model's plates, variables and the conjugacy of every parent slot, once
//! it has been resolved, lowered and compiled with its data.

use occam_lang::ir::{Node, PlateSource};
use std::fmt::Write;

use crate::summary::signature;
use occam::lower::Compiled;
use occam::model::Loaded;
use occam::posterior::role;

/// The text of `occam check --split`: the data plate and which variables are local (their rows
/// on the shards) or global (replicated), or the located reason the model cannot be split.
pub fn split_report(model: &occam::Model, plate: Option<&str>) -> occam::Result<String> {
    let c = model.loaded().compile(true)?;
    let (plate, vars) = occam::shard::split_of(model, &c, plate)?;
    let names = |local: bool| {
        let v: Vec<&str> = vars
            .iter()
            .filter(|(_, l)| *l == local)
            .map(|(n, _)| n.as_str())
            .collect();
        if v.is_empty() {
            "(none)".to_string()
        } else {
            v.join(", ")
        }
    };
    let mut s = String::new();
    let _ = writeln!(s, "data-parallel split along plate {plate}:");
    let _ = writeln!(s, "  local (each shard holds its rows): {}", names(true));
    let _ = writeln!(s, "  global (replicated on every shard): {}", names(false));
    Ok(s)
}

/// The text of `occam check` for a loaded and compiled model.
pub fn check_report(loaded: &Loaded, c: &Compiled) -> String {
    let m = &loaded.model;
    let mut s = String::new();
    let _ = writeln!(s, "{}: ok", loaded.file_name);
    let _ = writeln!(s, "plates:");
    for p in &m.plates {
        let src = match &p.source {
            PlateSource::Fixed => "fixed".to_string(),
            PlateSource::Data { data, axis } => format!(
                "{} of data `{data}`",
                if *axis == 0 { "rows" } else { "columns" }
            ),
        };
        let _ = writeln!(s, "  {} = {} ({src})", p.name, p.size);
    }
    let _ = writeln!(s, "variables ({}):", m.variables.len());
    for (v, var) in m.variables.iter().enumerate() {
        let what = match &var.node {
            // The family the engine built where a link's limit changed it: `softmax` beyond
            // K = 3 is Böhning's `CategoricalSoftmax`.
            Node::Stochastic { distribution, .. } => match c.vmp.distribution(c.var_nodes[v]) {
                Some(d) if distribution == "CategoricalSoftmaxQuad" && d.name() != distribution => {
                    format!("{} (K > 3)", d.name())
                }
                _ => distribution.clone(),
            },
            Node::Deterministic { .. } => "deterministic".into(),
            Node::Data => "data input".into(),
        };
        let mut extra = String::new();
        if let Some(t) = loaded.data.tables.get(&var.name) {
            let missing = t.present.iter().filter(|p| !**p).count();
            let _ = write!(extra, ", {}×{} from {}", t.rows, t.cols, t.file);
            if let Some(chosen) = t.selection_text() {
                let _ = write!(extra, " ({chosen})");
            }
            if missing > 0 {
                let _ = write!(extra, " ({missing} missing)");
            }
        }
        let _ = writeln!(
            s,
            "  {:<24} {:<18} {}{extra}",
            signature(loaded, v),
            what,
            role(loaded, v, c)
        );
    }
    if !m.q_blocks.is_empty() {
        let _ = writeln!(s, "q-blocks (joint in q: junction tree, Winn §5.3–5.6):");
        for b in &m.q_blocks {
            let _ = write!(s, "  {}", q_block_text(m, b));
            if !b.evidence.is_empty() {
                let names: Vec<&str> = b
                    .evidence
                    .iter()
                    .map(|&v| m.variables[v].name.as_str())
                    .collect();
                let _ = write!(s, " + evidence of {}", names.join(", "));
            }
            s.push('\n');
        }
    }
    let joint: Vec<&str> = (0..m.variables.len())
        .filter(|&v| occam::posterior::joint_over_classes(c, v))
        .map(|v| m.variables[v].name.as_str())
        .collect();
    if !joint.is_empty() {
        let _ = writeln!(
            s,
            "q joint over the classes (softmax q-block: one Gaussian over every class's \
             weights): {}",
            joint.join(", ")
        );
    }
    if let Some(line) = occam::quality::understated_sds_line(loaded, c) {
        let _ = writeln!(s, "{line}");
    }
    let names = c.vmp.names();
    let aux = names.len() - m.variables.len();
    let _ = writeln!(
        s,
        "engine: {} nodes ({aux} auxiliary: deterministic expressions, gates, replications){}",
        names.len(),
        if c.has_mixture {
            "; mixtures present"
        } else {
            ""
        }
    );
    let _ = writeln!(s, "conjugacy (every parent slot checked, Winn Table 2.1):");
    for (v, var) in m.variables.iter().enumerate() {
        let Node::Stochastic { args, distribution } = &var.node else {
            continue;
        };
        if let Some(spec) = occam_core::engine::chain_family(distribution) {
            // A chain's slots: the states (or state dimension) are its event plate.
            let d = m.plates[var.event_plates[0]].size as usize;
            let discrete = spec.value == occam_core::spec::ValueKind::Categorical;
            let inputs = occam::lower::chain::inputs(discrete, d);
            for (slot, input) in spec.slots.iter().zip(inputs) {
                let arg = args.iter().find(|a| a.slot == slot.name);
                slot_line(&mut s, &loaded.source, &var.name, slot.name, arg, input);
            }
            // Inputs (`control = B, inputs = u`): B's rows are Gaussian P-vectors, P = u's event.
            let control = args.iter().find(|a| a.slot == "control");
            let inputs = args.iter().find(|a| a.slot == "inputs");
            if let (Some(b), Some(u)) = (control, inputs) {
                if let occam_lang::ir::ExprOp::Var(r) = &u.value.op {
                    let p = m.plates[m.variables[r.var].event_plates[0]].size as usize;
                    let input = occam_core::dist::SlotInput {
                        kind: occam_core::prelude::MomentKind::Gaussian { d: p },
                        stack: d,
                    };
                    slot_line(&mut s, &loaded.source, &var.name, "control", Some(b), input);
                }
            }
            continue;
        }
        let Some(dist) = c.vmp.distribution(c.var_nodes[v]) else {
            continue;
        };
        for (slot_index, slot) in dist.slots().iter().enumerate() {
            let arg = args.iter().find(|a| slot.matches(&a.slot));
            let input = dist.slot_input(slot_index);
            slot_line(&mut s, &loaded.source, &var.name, slot.name, arg, input);
        }
    }
    s
}

/// One line of the slot listing: `  var.slot ← source text: moment kind` (× the number gathered
/// for a stacked slot), `?` for a slot the model leaves to its default.
fn slot_line(
    s: &mut String,
    source: &str,
    var: &str,
    slot: &str,
    arg: Option<&occam_lang::ir::Arg>,
    input: occam_core::dist::SlotInput,
) {
    let text = arg.map_or("?", |a| &source[a.value.span.start..a.value.span.end]);
    let gathered = if input.stack > 1 {
        format!(" × {}", input.stack)
    } else {
        String::new()
    };
    let _ = writeln!(s, "  {var}.{slot} ← {text}: {}{gathered}", input.kind);
}

/// `joint(a, b, c)`: a q-block's members as the model names them.
pub fn q_block_text(m: &occam_lang::Model, b: &occam_lang::ir::QBlock) -> String {
    let names: Vec<&str> = b
        .members
        .iter()
        .map(|&v| m.variables[v].name.as_str())
        .collect();
    format!("joint({})", names.join(", "))
}

/// The errors of a model that does not check, as JSON for an editor to underline: one entry per
/// located diagnostic (`line`, `column`, `end_line`, `end_column`, 1-based, the end exclusive;
/// `message`, `label`, `hint`, `code`), as `occam check` prints them. An error without a place in
/// the model (a data file, a failed run) is one entry with `line` null and its whole text.
pub fn diagnostics_json(e: &occam::Error) -> serde_json::Value {
    use occam_lang::span::line_col;
    use serde_json::json;
    let Some(d) = e.diagnostics() else {
        return json!([{
            "line": null, "column": null, "end_line": null, "end_column": null,
            "message": e.to_string(), "label": "", "hint": null, "code": null,
        }]);
    };
    let items: Vec<serde_json::Value> = d
        .items
        .iter()
        .map(|i| {
            let (a, b) = (
                line_col(&d.source, i.span.start),
                line_col(&d.source, i.span.end),
            );
            json!({
                "line": a.line, "column": a.column, "end_line": b.line, "end_column": b.column,
                "message": i.message, "label": i.label, "hint": i.hint,
                "code": format!("{:?}", i.code),
            })
        })
        .collect();
    serde_json::Value::Array(items)
}
