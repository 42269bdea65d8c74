//! Saved fits: a fitted model as one versioned file, `fit.json` — the model text, its data
//! (embedded, with each table's source file and a hash), the run's summary and the variational
//! parameters (φ, u, A) of every node — read back ([`crate::Fitted::from_saved`]) to predict
//! ([`crate::predict`]) or to start another fit from the saved q ([`crate::Model::fit_from`]).
//!
//! The format is JSON (serde): the surfaces already write `posterior.json` with the same crate,
//! a user can read and diff it, and `serde_json` writes every finite f64 in its shortest
//! round-tripping form and parses it back to the same bits, so a loaded fit predicts bit for bit
//! as the live one. Non-finite numbers (an infinite A of a degenerate element) are written as the
//! strings `"inf"`, `"-inf"`, `"nan"`. The data are embedded rather than referenced so that a fit
//! of in-memory arrays (Python) is a file too, and a moved or edited data file cannot silently
//! change a saved fit; each table keeps its original file name and an FNV-1a hash of its values.

use std::path::Path;

use occam_core::engine::QState;
use serde::{Deserialize, Serialize};

use crate::data::DataSet;
use crate::driver::Outcome;
use crate::error::{Error, Result};
use crate::lower::Compiled;
use crate::model::Loaded;

/// The format's name, the first field of every fit file.
pub const FORMAT: &str = "occam-fit";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;
/// The fit file's name inside an `--out` directory.
pub const FILE_NAME: &str = "fit.json";

/// One data table, embedded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedTable {
    /// Data name.
    pub name: String,
    /// The file it was read from (or `<array NAME>`).
    pub file: String,
    /// Rows and columns.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Header, if the file had one.
    pub header: Option<Vec<String>>,
    /// Values, row-major; missing cells as `"nan"`.
    #[serde(with = "numbers")]
    pub values: Vec<f64>,
    /// FNV-1a 64-bit hash of the values' bits (missing cells as NaN), hex.
    pub hash: String,
}

/// One node's saved q.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedNode {
    /// The engine node's name.
    pub name: String,
    /// φ of every element.
    #[serde(with = "numbers")]
    pub phi: Vec<f64>,
    /// u of every element.
    #[serde(with = "numbers")]
    pub u: Vec<f64>,
    /// A of every element.
    #[serde(with = "numbers")]
    pub a: Vec<f64>,
}

/// A saved fit (see the module doc).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedFit {
    /// Always [`FORMAT`].
    pub format: String,
    /// The format version ([`VERSION`] when written by this build).
    pub version: u32,
    /// The model file's name as diagnostics print it.
    pub model_file: String,
    /// The model text.
    pub source: String,
    /// The data the model was fitted to.
    pub data: Vec<SavedTable>,
    /// The final bound (nats).
    pub bound: f64,
    /// Sweeps of the kept run.
    pub iterations: usize,
    /// Whether the run converged.
    pub converged: bool,
    /// Seed of the kept restart.
    pub seed: u64,
    /// Every node's q, in node order.
    pub nodes: Vec<SavedNode>,
}

fn fnv(values: &[f64]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for v in values {
        for b in v.to_bits().to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

impl SavedFit {
    /// The saved form of a fit: the loaded model, its compiled state and the run's outcome.
    pub fn of(loaded: &Loaded, compiled: &Compiled, o: &Outcome) -> SavedFit {
        let data = loaded
            .data
            .tables
            .values()
            .map(|t| {
                let values: Vec<f64> = t
                    .values
                    .iter()
                    .zip(&t.present)
                    .map(|(&v, &p)| if p { v } else { f64::NAN })
                    .collect();
                SavedTable {
                    name: t.name.clone(),
                    file: t.file.clone(),
                    rows: t.rows,
                    cols: t.cols,
                    header: t.header.clone(),
                    hash: fnv(&values),
                    values,
                }
            })
            .collect();
        let vmp = &compiled.vmp;
        let nodes = vmp
            .names()
            .into_iter()
            .zip(vmp.q_state())
            .map(|(name, q)| SavedNode {
                name: name.to_string(),
                phi: q.phi,
                u: q.u,
                a: q.a,
            })
            .collect();
        SavedFit {
            format: FORMAT.into(),
            version: VERSION,
            model_file: loaded.file_name.clone(),
            source: loaded.source.clone(),
            data,
            bound: o.bound,
            iterations: o.iterations,
            converged: o.converged,
            seed: o.seed,
            nodes,
        }
    }

    /// The JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a saved fit serialises")
    }

    /// Parses a fit file's text; `file` names it in errors. A file of another format version is
    /// refused naming both versions; a damaged one with the parser's line and column.
    pub fn from_json(file: &str, text: &str) -> Result<SavedFit> {
        let bad = |m: String| Error::DataFile {
            file: file.to_string(),
            message: m,
        };
        let head: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            bad(format!(
                "not a readable Occam fit file (truncated or damaged?): {e}"
            ))
        })?;
        if head.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            return Err(bad(format!(
                "not an Occam fit file (no `\"format\": \"{FORMAT}\"`)"
            )));
        }
        let version = head.get("version").and_then(|v| v.as_u64());
        if version != Some(VERSION as u64) {
            return Err(bad(format!(
                "fit file format version {} cannot be read by this Occam, which reads version {VERSION}; fit the model again",
                version.map_or("(none)".to_string(), |v| v.to_string())
            )));
        }
        serde_json::from_value(head).map_err(|e| bad(format!("damaged Occam fit file: {e}")))
    }

    /// Reads a fit file, or `DIR/fit.json` if `path` is a directory.
    pub fn read(path: &Path) -> Result<SavedFit> {
        let file = if path.is_dir() {
            path.join(FILE_NAME)
        } else {
            path.to_path_buf()
        };
        let text = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
        SavedFit::from_json(&file.display().to_string(), &text)
    }

    /// Writes the fit file atomically to `path` (or `DIR/fit.json` for a directory).
    pub fn write(&self, path: &Path) -> Result<()> {
        let file = if path.is_dir() {
            path.join(FILE_NAME)
        } else {
            path.to_path_buf()
        };
        crate::atomic::write(&file, self.to_json().as_bytes())
    }

    /// The saved data as a data set.
    pub fn data_set(&self) -> Result<DataSet> {
        let mut d = DataSet::new();
        for t in &self.data {
            if fnv(&t.values) != t.hash {
                return Err(Error::DataFile {
                    file: self.model_file.clone(),
                    message: format!(
                        "saved data `{}` do not match their hash (damaged fit file)",
                        t.name
                    ),
                });
            }
            d.insert_array(&t.name, t.rows, t.cols, t.values.clone(), t.header.clone())?;
            if let Some(table) = d.tables.get_mut(&t.name) {
                table.file = t.file.clone();
            }
        }
        Ok(d)
    }

    /// The saved q, matched to the nodes of a model by name (`None` for a node not saved).
    pub fn q_for(&self, names: &[&str]) -> Vec<Option<QState>> {
        names
            .iter()
            .map(|n| {
                self.nodes.iter().find(|s| s.name == *n).map(|s| QState {
                    phi: s.phi.clone(),
                    u: s.u.clone(),
                    a: s.a.clone(),
                })
            })
            .collect()
    }
}

/// f64 arrays in JSON: finite numbers as numbers, others as `"inf"`, `"-inf"`, `"nan"`.
mod numbers {
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[f64], s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(v.len()))?;
        for x in v {
            if x.is_finite() {
                seq.serialize_element(x)?;
            } else if x.is_nan() {
                seq.serialize_element("nan")?;
            } else if *x > 0.0 {
                seq.serialize_element("inf")?;
            } else {
                seq.serialize_element("-inf")?;
            }
        }
        seq.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
        let raw = Vec::<serde_json::Value>::deserialize(d)?;
        raw.into_iter()
            .map(|v| match v {
                serde_json::Value::Number(n) => n
                    .as_f64()
                    .ok_or_else(|| D::Error::custom("a number out of range")),
                serde_json::Value::String(s) => match s.as_str() {
                    "nan" => Ok(f64::NAN),
                    "inf" => Ok(f64::INFINITY),
                    "-inf" => Ok(f64::NEG_INFINITY),
                    _ => Err(D::Error::custom(format!("`{s}` is not a number"))),
                },
                other => Err(D::Error::custom(format!("`{other}` is not a number"))),
            })
            .collect()
    }
}
