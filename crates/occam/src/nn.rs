//! Lawrence's networks through the library (crate `occam-nn`): fitting a network to a data file
//! and predicting with the saved network ([`fit_file`], [`SavedNetwork`]), and the reproductions of
//! the thesis and the committee paper by name, each returning its table as text (measured next to
//! the documents' numbers) and writing CSV, JSON and SVG into a directory.

use std::path::Path;

pub use occam_nn::*;

mod fit;
pub use fit::{
    fit_arrays, fit_file, fit_spec, fit_table, predict_arrays, predicted_rows_csv, predictions_csv,
    read_spec, spec_from_json, Columns, PredictedRows, SavedNetwork,
};

use crate::error::{Error, Result};
use occam_nn::bnn::moments::G2Form;
use occam_nn::repro::ThesisData;

/// The reproductions `reproduce` knows, with what each is.
pub const REPRODUCTIONS: &[(&str, &str)] = &[
    (
        "toy",
        "thesis §5: 30-point sine toy, mixture of 5 Gaussians (mutual-information bound)",
    ),
    (
        "sunspots",
        "committee paper Table 1: sunspots, 12 lags, VB M = 1 and 3 against the baselines",
    ),
    (
        "tecator",
        "committee paper Table 2: Tecator fat from 10 principal components",
    ),
    (
        "t51",
        "thesis Table 5.1: sunspots, VB against evidence, HMC, early stopping",
    ),
    (
        "t52",
        "thesis Table 5.2: Tecator, VB against evidence, HMC, early stopping",
    ),
    (
        "t61",
        "thesis Table 6.1: sunspots, single/grouped/ARD/NRD priors",
    ),
    (
        "t62",
        "thesis Table 6.2: Tecator, single/grouped/ARD/NRD priors",
    ),
    (
        "protocols",
        "committee paper Table 1 under every reading of its protocol (scaling, schedule, test years, NMSE denominator)",
    ),
    (
        "ltu",
        "thesis Table 3.1: linear threshold units on Pima and crabs (full grid)",
    ),
];

/// How to run a reproduction.
#[derive(Clone, Debug)]
pub struct ReproduceOptions {
    /// Seed of every random choice.
    pub seed: u64,
    /// The papers' full schedules (slow); otherwise the shortened ones the tests use.
    pub full: bool,
    /// ⟨g²⟩ exactly (a true bound) or by the papers' c = 1.24 approximation.
    pub exact_g2: bool,
}

/// Runs reproduction `name`; writes its files into `out` if given; returns its table as text.
pub fn reproduce(name: &str, o: &ReproduceOptions, out: Option<&Path>) -> Result<String> {
    let opts = repro::Options {
        seed: o.seed,
        full: o.full,
        form: if o.exact_g2 {
            G2Form::Exact
        } else {
            G2Form::Approx
        },
    };
    let run_err = |e: &dyn std::fmt::Display| Error::Run(format!("{name}: {e}"));
    if name == "ltu" {
        let table = ltu::experiments::table_3_1(&ltu::experiments::Options {
            seed: o.seed,
            inits: if o.full { 10 } else { 1 },
            ..Default::default()
        })
        .map_err(|e| run_err(&e))?;
        if let Some(dir) = out {
            crate::atomic::ensure_dir(dir)?;
            table.write_dir(dir).map_err(|e| run_err(&e))?;
        }
        return Ok(table.to_markdown());
    }
    let table = match name {
        "toy" => repro::sine_toy(&opts),
        "sunspots" => repro::sunspots(&opts),
        "tecator" => repro::tecator(&opts),
        "t51" => repro::thesis_table5(&opts, ThesisData::Sunspots),
        "t52" => repro::thesis_table5(&opts, ThesisData::Tecator),
        "t61" => repro::thesis_table6(&opts, ThesisData::Sunspots),
        "t62" => repro::thesis_table6(&opts, ThesisData::Tecator),
        "protocols" => repro::sunspot_protocols(&opts),
        _ => {
            return Err(Error::Usage(format!(
                "no reproduction named `{name}` (known: {})",
                REPRODUCTIONS
                    .iter()
                    .map(|r| r.0)
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
    }
    .map_err(|e| run_err(&e))?;
    if let Some(dir) = out {
        crate::atomic::ensure_dir(dir)?;
        table.write(dir).map_err(|e| run_err(&e))?;
    }
    Ok(table.to_text())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_names_list_the_known_ones() {
        let o = ReproduceOptions {
            seed: 1,
            full: false,
            exact_g2: true,
        };
        let e = reproduce("sunspot", &o, None).err().unwrap();
        assert!(e.is_user_error());
        assert!(e.to_string().contains("known: toy, sunspots"), "{e}");
    }

    #[test]
    fn the_toy_reproduction_runs_and_writes_its_table() {
        let dir = tempfile::tempdir().unwrap();
        let o = ReproduceOptions {
            seed: 1,
            full: false,
            exact_g2: true,
        };
        let text = reproduce("toy", &o, Some(dir.path())).unwrap();
        assert!(text.contains("toy") || text.contains("sine"), "{text}");
        let files: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(files.iter().any(|f| f.ends_with(".json")), "{files:?}");
        assert!(files.iter().any(|f| f.ends_with(".csv")), "{files:?}");
    }
}
