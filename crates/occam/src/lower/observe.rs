//! Data: `data` inputs become constant nodes, observed variables take their tables (with
//! missing cells masked), and a repeated parent with missing cells is refused.

use occam_core::prelude::*;
use occam_core::spec::ValueKind;
use occam_lang::diag::Code;
use occam_lang::ir::Model;
use occam_lang::Diagnostics;

use super::{Lowering, SourceRef};
use crate::data::DataSet;
use crate::error::{Error, Result};

/// Winn (2.41) again, now that the data is known: the resolver treats an observed variable as a
/// constant, but a missing cell of it is latent, so `x * x` with `x` observed is rejected here
/// when some cell of `x` is missing (a located error naming both uses).
pub(super) fn repeated_missing(model: &Model, src: SourceRef<'_>, data: &DataSet) -> Result<()> {
    let latent: Vec<bool> = model
        .variables
        .iter()
        .map(|v| !v.observed || data.tables.get(&v.name).is_some_and(|t| t.has_missing()))
        .collect();
    let with_missing = model
        .variables
        .iter()
        .zip(&latent)
        .any(|(v, &l)| v.observed && l);
    if !with_missing {
        return Ok(());
    }
    let found = occam_lang::reuse::repeated_parents(model, &|v| latent[v]);
    if found.is_empty() {
        return Ok(());
    }
    Err(Error::Model(Box::new(Diagnostics::new(
        src.file, src.text, found,
    ))))
}

impl Lowering<'_> {
    pub(super) fn data_input(&mut self, v: usize, data: &DataSet) -> Result<NodeId> {
        let var = self.var(v).clone();
        let Some(t) = data.tables.get(&var.name) else {
            return Err(self.src.error(
                Code::DataShape,
                var.span,
                format!("no data for the data input `{}`", var.name),
                "needs data",
                Some(format!(
                    "pass --data {n}=FILE, or put {n}.csv next to the model",
                    n = var.name
                )),
            ));
        };
        if let Some(i) = t.present.iter().position(|p| !p) {
            return Err(t.error_at(
                i,
                format!("data input `{}` cannot have missing values", var.name),
            ));
        }
        let kind = match var.kind {
            // A known probability table (used where probabilities are expected).
            ValueKind::Simplex => MomentKind::Dirichlet {
                k: self.event_size(v),
            },
            ValueKind::Vector => MomentKind::Gaussian {
                d: self.event_size(v),
            },
            _ => MomentKind::Gaussian { d: 1 },
        };
        let plates = self.core_plates(&var.plates);
        let id = self
            .g
            // The table's array itself, not a copy: the data set and the graph hold X once.
            .constant_shared(&var.name, kind, &plates, t.values.shared())
            .map_err(|e| match &e {
                BuildError::Value { element, why, .. } => {
                    t.error_at(element * kind.value_len(), why.clone())
                }
                _ => self.err(v, None, &e),
            })?;
        self.record(id, &var.name, v, kind, var.plates.clone());
        Ok(id)
    }

    pub(super) fn observe(&mut self, v: usize, id: NodeId, data: &DataSet) -> Result<()> {
        let var = self.var(v).clone();
        let Some(t) = data.tables.get(&var.name) else {
            return Err(self.src.error(
                Code::DataShape,
                var.span,
                format!("`{}` is observed but no data is attached", var.name),
                "needs data",
                Some(format!(
                    "pass --data {n}=FILE, or put {n}.csv next to the model",
                    n = var.name
                )),
            ));
        };
        let n = self.g.elements(id);
        if n == 0 || t.values.len() % n != 0 {
            return Err(Error::DataFile {
                file: t.file.clone(),
                message: format!(
                    "{} values cannot be split over the {n} elements of `{}`",
                    t.values.len(),
                    var.name
                ),
            });
        }
        let vlen = t.values.len() / n;
        let mask: Option<Vec<bool>> = t.has_missing().then(|| {
            t.present
                .chunks(vlen)
                .map(|c| c.iter().all(|&p| p))
                .collect()
        });
        self.g
            .observe_shared(id, t.values.shared(), mask.as_deref())
            .map_err(|e| match &e {
                BuildError::Value { element, why, .. } => t.error_at(
                    element * vlen,
                    format!(
                        "invalid value for `{}` ({}): {why}",
                        var.name,
                        self.dist_name(v)
                    ),
                ),
                _ => self.err(v, None, &e),
            })
    }
}
