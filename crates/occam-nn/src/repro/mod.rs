//! Reproductions of the papers' experiments as functions returning serialisable tables of measured
//! numbers next to the documents' numbers (`occam_nn::repro::sunspots(&Options)` etc.), which can be
//! written as CSV and JSON into a directory.
//!
//! `Options::full` selects the papers' schedules (restarts, cycles, iterations); without it every
//! schedule is shortened so the checks fit in a test run. Every random choice comes from
//! `Options::seed`; the papers' seeds are unknown, so their numbers are compared as bands.

mod baselines;
mod figure;
mod sunspot_study;
mod sunspots;
mod tecator;
mod thesis;
mod toy;

pub use baselines::{baseline_rows, baseline_rows_scored, PaperBaselines, Score};
pub use figure::{Figure, PlotError};
pub use sunspot_study::{sunspot_protocol_part, sunspot_protocols, STUDY_SCALINGS};
pub use sunspots::{sunspot_vb_options, sunspots, REPRODUCED_YEARS};
pub use tecator::tecator;
pub use thesis::{thesis_table5, thesis_table6, ThesisData};
pub use toy::{sine_data, sine_toy};

use crate::bnn::moments::G2Form;
use crate::bnn::network::NetError;
use crate::data::DataError;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Errors of the reproductions.
#[derive(Debug, thiserror::Error)]
pub enum ReproError {
    /// A network error.
    #[error(transparent)]
    Net(#[from] NetError),
    /// A data error.
    #[error(transparent)]
    Data(#[from] DataError),
    /// Writing the tables failed.
    #[error("writing {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
}

/// Settings shared by the reproductions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Options {
    /// Seed of every random choice.
    pub seed: u64,
    /// The papers' full schedules (else shortened ones for tests).
    pub full: bool,
    /// The ⟨g²⟩ form used by the variational fits.
    pub form: G2Form,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            seed: 1,
            full: false,
            form: G2Form::Exact,
        }
    }
}

impl Options {
    /// `full_value` under the full schedule, else `quick_value`.
    pub fn scale(&self, full_value: usize, quick_value: usize) -> usize {
        if self.full {
            full_value
        } else {
            quick_value
        }
    }
}

/// One measured quantity next to the document's value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// What was measured.
    pub label: String,
    /// Our value.
    pub measured: f64,
    /// The document's value, when it gives one.
    pub paper: Option<f64>,
}

impl Row {
    /// A row.
    pub fn new(label: &str, measured: f64, paper: Option<f64>) -> Self {
        Row {
            label: label.into(),
            measured,
            paper,
        }
    }
}

/// A reproduced table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// Short name (file stem).
    pub name: String,
    /// What it reproduces.
    pub description: String,
    /// The rows.
    pub rows: Vec<Row>,
    /// Settings worth knowing (⟨g²⟩ form, NMSE denominator, ...).
    pub note: String,
    /// Figures (written as CSV + SVG next to the table).
    #[serde(default)]
    pub figures: Vec<Figure>,
}

impl Table {
    /// An empty table.
    pub fn new(name: &str, description: &str) -> Self {
        Table {
            name: name.into(),
            description: description.into(),
            rows: Vec::new(),
            note: String::new(),
            figures: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn push(&mut self, row: Row) {
        self.rows.push(row);
    }

    /// The rows of a committee (M > 1) labelled `label`, from its fits `all` (the grown one last,
    /// as `bnn::vb::fit_committee` returns them): the chosen fit's mutual-information term and
    /// whether the bound chose the committee grown from the best single Gaussian.
    pub fn committee_rows(&mut self, label: &str, all: &[crate::bnn::vb::VbFit]) {
        let chosen = crate::bnn::vb::best_by_bound(all);
        self.push(Row::new(
            &format!("{label}, mutual-information term"),
            all[chosen].bound.mutual_information,
            None,
        ));
        self.push(Row::new(
            &format!("{label}, chosen fit grown from the best single Gaussian (1 yes, 0 no)"),
            f64::from(u8::from(chosen + 1 == all.len())),
            None,
        ));
    }

    /// The measured value of the row with this label.
    pub fn get(&self, label: &str) -> Option<f64> {
        self.rows
            .iter()
            .find(|r| r.label == label)
            .map(|r| r.measured)
    }

    /// CSV text: `label,measured,paper`.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("label,measured,paper\n");
        for r in &self.rows {
            let paper = r.paper.map(|p| p.to_string()).unwrap_or_default();
            s.push_str(&format!(
                "\"{}\",{},{}\n",
                r.label.replace('"', "'"),
                r.measured,
                paper
            ));
        }
        s
    }

    /// A plain-text rendering for examples.
    pub fn to_text(&self) -> String {
        let mut s = format!("{} — {}\n", self.name, self.description);
        for r in &self.rows {
            let paper = r
                .paper
                .map(|p| format!("{p:.4}"))
                .unwrap_or_else(|| "-".into());
            s.push_str(&format!(
                "  {:<48} measured {:>10.4}   paper {:>8}\n",
                r.label, r.measured, paper
            ));
        }
        if !self.note.is_empty() {
            s.push_str(&format!("  note: {}\n", self.note));
        }
        s
    }

    /// Writes `<name>.csv` and `<name>.json` into `dir` (created if needed).
    pub fn write(&self, dir: &Path) -> Result<(), ReproError> {
        let io = |path: &Path| {
            let path = path.display().to_string();
            move |source| ReproError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let csv = dir.join(format!("{}.csv", self.name));
        occam_io::write(&csv, self.to_csv().as_bytes()).map_err(io(&csv))?;
        let json = dir.join(format!("{}.json", self.name));
        let text = serde_json::to_string_pretty(self).map_err(|e| ReproError::Io {
            path: json.display().to_string(),
            source: std::io::Error::other(e),
        })?;
        occam_io::write(&json, text.as_bytes()).map_err(io(&json))?;
        for f in &self.figures {
            f.write(dir)?;
        }
        Ok(())
    }
}
