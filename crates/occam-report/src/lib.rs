//! # occam-report: what Occam shows of a model and its fit
//!
//! The presentation floor: it reads the results of the facade (`occam`: a [`occam::Model`], a
//! [`occam::Fitted`] model, its posteriors and chains) and writes them as text, JSON, CSV and
//! SVG. It never fits, and nothing below it imports it: the pipeline (text + data → model → fit
//! → posterior) lives in `occam`, and this crate only renders what the pipeline returns.
//!
//! - [`json`], [`summary`]: the report of `occam fit --json` and the text summary of `occam fit`
//!   ([`FittedReport`] on a [`occam::Fitted`]).
//! - [`check`]: the conjugacy report of `occam check`; [`graph`]: the Bayesian network as SVG
//!   (a layered layout of its own) or DOT ([`ModelReport`] on a [`occam::Model`]).
//! - [`outputs`]: the files of `occam fit --out DIR`; [`table`], [`hinton`], [`svg`],
//!   [`figure`], [`chain_figure`]: the tables and drawings they are made of; [`latent`]: the ARD
//!   summary line and relevance diagram, the PCA reconstructions and projections, the digits'
//!   figures.
//! - [`binary`]: the outputs of the binary-network reproductions; [`reference`](mod@reference): the generated
//!   reference of every distribution and function (`occam help distributions`).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod binary;
pub mod chain_figure;
pub mod check;
pub mod evidence;
pub mod figure;
pub mod graph;
pub mod hinton;
pub mod json;
pub mod latent;
pub mod outputs;
pub mod reference;
pub mod summary;
pub mod svg;
pub mod table;

/// The reports of a fitted model.
pub trait FittedReport {
    /// The full report as a JSON tree (what Python reads).
    fn report_json(&self) -> serde_json::Value;
    /// The full report, serialised without a JSON tree (what `occam fit --json` prints and
    /// `posterior.json` holds); without `include_data`, observed variables are stubs naming
    /// their data files.
    fn report(&self, include_data: bool) -> json::Report<'_>;
    /// The text summary (what `occam fit` prints).
    fn summary(&self) -> String;
}

impl FittedReport for occam::Fitted {
    fn report_json(&self) -> serde_json::Value {
        json::report(self.loaded(), self.compiled(), self.outcome())
    }

    fn report(&self, include_data: bool) -> json::Report<'_> {
        json::Report::new(self.loaded(), self.compiled(), self.outcome(), include_data)
    }

    fn summary(&self) -> String {
        summary::summary(self.loaded(), self.compiled(), self.outcome())
    }
}

/// The reports of a model before any fit: its `check` text and its drawing.
pub trait ModelReport {
    /// The `check` report: plates, variables and the conjugacy of every parent slot.
    fn check(&self) -> occam::Result<String>;
    /// The Bayesian network as SVG (plates as boxes, observed nodes shaded).
    fn graph_svg(&self) -> String;
    /// The Bayesian network as Graphviz DOT text.
    fn graph_dot(&self) -> String;
}

impl ModelReport for occam::Model {
    fn check(&self) -> occam::Result<String> {
        let c = self.loaded().compile(true)?;
        Ok(check::check_report(self.loaded(), &c))
    }

    fn graph_svg(&self) -> String {
        graph::svg(&self.loaded().model, &graph::plate_labels(self.loaded()))
    }

    fn graph_dot(&self) -> String {
        graph::dot(&self.loaded().model, &graph::plate_labels(self.loaded()))
    }
}
