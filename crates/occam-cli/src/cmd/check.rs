//! `occam check MODEL`: resolve, lower and compile the model with its data, and print plates,
//! nodes and the conjugacy of every parent slot.

use std::fmt::Write;
use std::path::PathBuf;

use clap::Args;
use occam_lang::ir::{Node, PlateSource};

use super::{model_path, DataArgs};
use crate::data::DataSet;
use crate::error::Result;
use crate::model;
use crate::report::json::role;
use crate::report::summary::signature;

/// Arguments of `occam check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The model file (.occam).
    pub model: PathBuf,
    #[command(flatten)]
    pub data: DataArgs,
}

/// Runs `occam check`.
pub fn run(a: &CheckArgs) -> Result<()> {
    model_path(&a.model)?;
    let given = DataSet::from_args(&a.data.data)?;
    let loaded = model::load(&a.model, &given)?;
    let c = loaded.compile(true)?;
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
            Node::Stochastic { distribution, .. } => distribution.clone(),
            Node::Deterministic { .. } => "deterministic".into(),
            Node::Data => "data input".into(),
        };
        let mut extra = String::new();
        if let Some(t) = loaded.data.tables.get(&var.name) {
            let missing = t.present.iter().filter(|p| !**p).count();
            let _ = write!(extra, ", {}×{} from {}", t.rows, t.cols, t.file);
            if missing > 0 {
                let _ = write!(extra, " ({missing} missing)");
            }
        }
        let _ = writeln!(
            s,
            "  {:<24} {:<18} {}{extra}",
            signature(&loaded, v),
            what,
            role(&loaded, v, &c)
        );
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
        let Node::Stochastic { args, .. } = &var.node else {
            continue;
        };
        let Some(dist) = c.vmp.distribution(c.var_nodes[v]) else {
            continue;
        };
        for (slot_index, slot) in dist.slots().iter().enumerate() {
            let input = dist.slot_input(slot_index);
            let text = args
                .iter()
                .find(|a| slot.matches(&a.slot))
                .map(|a| loaded.source[a.value.span.start..a.value.span.end].to_string())
                .unwrap_or_else(|| "?".into());
            let gathered = if input.stack > 1 {
                format!(" × {}", input.stack)
            } else {
                String::new()
            };
            let _ = writeln!(
                s,
                "  {}.{} ← {text}: {}{gathered}",
                var.name, slot.name, input.kind
            );
        }
    }
    print!("{s}");
    Ok(())
}
