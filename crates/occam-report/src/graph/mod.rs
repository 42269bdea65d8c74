//! `occam graph MODEL --out FILE.svg|.dot`: the Bayesian network as VIBES draws it — plates as
//! boxes, observed nodes shaded, deterministic nodes dashed, Categorical index edges dashed. The
//! SVG comes from a small layered layout written here (no graphviz needed); `.dot` is DOT text.
//!
//! [`dot`] writes the DOT text, [`svg`] the drawing, whose placement and edge routing live in
//! `layout`; [`layout_json`] gives the same layout as JSON (for `occam view`).

mod dot;
mod json;
mod layout;
mod svg;

pub use dot::dot;
pub use json::layout_json;
pub use svg::svg;

use std::collections::BTreeMap;
use std::path::Path;

use occam_lang::ir::{ExprOp, Node, PlateSource};
use occam_lang::Model;

use occam::data::DataSet;
use occam::error::{Error, Result};
use occam::model::{self, Loaded};

/// Outline of the members of a joint q-block.
pub(super) const Q_BLOCK_COLOUR: &str = "#1f5fbf";

/// The joint q-block variable `v` is a member of (its index), if any.
pub(super) fn q_block_of(m: &Model, v: usize) -> Option<usize> {
    m.q_blocks.iter().position(|b| b.members.contains(&v))
}

/// An edge of the drawing: parent, child, whether the parent is a Categorical index.
pub(super) fn edges(m: &Model) -> Vec<(usize, usize, bool)> {
    let mut out = Vec::new();
    for v in 0..m.variables.len() {
        let mut index_vars = Vec::new();
        let mut visit = |e: &occam_lang::ir::Expr| {
            e.visit(|x| {
                if let ExprOp::Var(r) = &x.op {
                    index_vars.extend(r.index.iter().filter_map(|i| i.by.as_ref().map(|c| c.var)));
                }
            })
        };
        match &m.variables[v].node {
            Node::Stochastic { args, .. } => args.iter().for_each(|a| visit(&a.value)),
            Node::Deterministic { expr } => visit(expr),
            Node::Data => {}
        }
        for p in m.parents(v) {
            out.push((p, v, index_vars.contains(&p)));
        }
    }
    out
}

pub(super) fn label(m: &Model, v: usize) -> String {
    match &m.variables[v].node {
        Node::Stochastic { distribution, .. } => distribution.clone(),
        Node::Deterministic { .. } => "deterministic".into(),
        Node::Data => "data".into(),
    }
}
/// `N = 500`, or just `N` when the size would come from data that is not attached.
pub fn plate_labels(loaded: &Loaded) -> Vec<String> {
    loaded
        .model
        .plates
        .iter()
        .map(|p| match &p.source {
            PlateSource::Data { data, .. } if !loaded.data.tables.contains_key(data) => {
                p.name.clone()
            }
            _ => format!("{} = {}", p.name, p.size),
        })
        .collect()
}

/// The most variables and plates an SVG drawing lays out (the layout compares node positions with
/// every edge, and a drawing of more is unreadable anyway; DOT text has no limit).
pub const MAX_DRAWN: usize = 1000;

/// Checks that [`svg`] can lay `m` out within [`MAX_DRAWN`] variables and plates.
pub fn check_drawable(m: &Model) -> Result<()> {
    let (v, p) = (m.variables.len(), m.plates.len());
    if v > MAX_DRAWN || p > MAX_DRAWN {
        return Err(Error::Usage(format!(
            "the model has {v} variables and {p} plates; an SVG drawing holds at most \
             {MAX_DRAWN} of each (write .dot for Graphviz instead)"
        )));
    }
    Ok(())
}

/// Loads a model for drawing: with its data if present, otherwise with data plates of size 1.
pub fn load_for_drawing(path: &Path, given: &DataSet) -> Result<Loaded> {
    match model::load(path, given) {
        Ok(l) => Ok(l),
        Err(Error::Model(_)) => {
            occam::model::load_without_data(path, given, &BTreeMap::new(), Some(1))
        }
        Err(e) => Err(e),
    }
}
