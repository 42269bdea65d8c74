//! Loading a model file with its data: read, parse, attach data (`--data` and `NAME.csv` next to
//! the model), resolve, lower and compile.

use std::path::{Path, PathBuf};

use occam_lang::ast::{self, Stmt};
use occam_lang::Model;

use crate::data::DataSet;
use crate::error::{Error, Result};
use crate::lower::{self, Compiled, SourceRef};
use crate::warning::Warning;

mod without_data;
use occam_lang::ir::{Node, PlateSource};
pub use without_data::{
    load_source_without_data, load_without_data, plate_sizes, shapes_without_data,
};

/// A model file, resolved against its data.
pub struct Loaded {
    /// The model file.
    pub path: PathBuf,
    /// Its name as printed in diagnostics (the path as given).
    pub file_name: String,
    /// The source text.
    pub source: String,
    /// The resolved model.
    pub model: Model,
    /// The attached data.
    pub data: DataSet,
    /// What the model leaves out of the data, or a model that observes nothing.
    pub warnings: Vec<Warning>,
}

impl Loaded {
    /// The source reference for diagnostics.
    pub fn src(&self) -> SourceRef<'_> {
        SourceRef {
            file: &self.file_name,
            text: &self.source,
        }
    }

    /// `file:line:column` of variable `v`.
    pub fn location(&self, v: usize) -> String {
        let p = self.model.variables[v].position;
        format!("{}:{}:{}", self.file_name, p.line, p.column)
    }

    /// Lowers and compiles the model (observing its data if `observe`).
    pub fn compile(&self, observe: bool) -> Result<Compiled> {
        let lowered = lower::lower(&self.model, self.src(), &self.data, observe)?;
        lower::compile(lowered, &self.model, self.src())
    }
}

/// The text of a model file: invalid UTF-8 is an error at its line, column and byte offset; a
/// byte-order mark is skipped.
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    Ok(crate::data::utf8(path, &bytes)?.to_string())
}

/// Reads and parses a model file.
pub fn read_source(path: &Path) -> Result<(String, String, ast::File)> {
    let source = read_text(path)?;
    let file_name = path.display().to_string();
    let ast = occam_lang::parse(&source, &file_name)?;
    Ok((file_name, source, ast))
}

/// Names that the model marks as observed in its text: `plates ... from data X`, `observe X`,
/// `data X[...]`. Only these are looked for as `NAME.csv` next to the model.
pub fn data_names(file: &ast::File) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |n: &str| {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    };
    for s in &file.statements {
        match s {
            Stmt::Plates(p) => {
                if let Some(d) = &p.from_data {
                    push(&d.name);
                }
            }
            Stmt::Observe(o) => {
                for i in &o.items {
                    push(&i.name.name);
                }
            }
            _ => {}
        }
    }
    out
}

/// Loads a model with data from `--data` arguments (already read) and `NAME.csv` defaults.
pub fn load(path: &Path, given: &DataSet) -> Result<Loaded> {
    let source = read_text(path)?;
    let file_name = path.display().to_string();
    let dir = path.parent().unwrap_or(Path::new("."));
    load_source(path, file_name, source, Some(dir), given)
}

/// Loads a model from source text named `file_name` (as diagnostics print it), with the data
/// `given` and, if `dir` is given, `NAME.csv` files there for observed names without data.
pub fn load_source(
    path: &Path,
    file_name: String,
    source: String,
    dir: Option<&Path>,
    given: &DataSet,
) -> Result<Loaded> {
    let ast = occam_lang::parse(&source, &file_name)?;
    let mut data = given.clone();
    if let Some(dir) = dir {
        let names = data_names(&ast);
        data.add_defaults(dir, names.iter().map(String::as_str))?;
    }
    let model = occam_lang::compile(&source, &file_name, &data.shapes())?;
    if !model
        .variables
        .iter()
        .any(|v| matches!(v.node, Node::Stochastic { .. }))
    {
        // Nothing to infer: a fit would report L = 0 for a model that says nothing.
        let src = SourceRef {
            file: &file_name,
            text: &source,
        };
        return Err(src.error(
            occam_lang::Code::Misuse,
            occam_lang::span::Span::new(0, 0),
            "the model declares no random variable: there is nothing to infer",
            "empty model",
            Some("declare one with `~`, e.g. `x ~ Gaussian(0, 1)`".into()),
        ));
    }
    check_data_names(&model, given)?;
    let mut loaded = Loaded {
        path: path.to_path_buf(),
        file_name,
        source,
        model,
        data,
        warnings: Vec::new(),
    };
    loaded.warnings = data_warnings(&loaded, dir);
    Ok(loaded)
}

/// Every data name given must be a variable or a plate's data source of the model.
fn check_data_names(model: &Model, given: &DataSet) -> Result<()> {
    let mut known: Vec<&str> = model.variables.iter().map(|v| v.name.as_str()).collect();
    for p in &model.plates {
        if let PlateSource::Data { data, .. } = &p.source {
            if !known.contains(&data.as_str()) {
                known.push(data);
            }
        }
    }
    for (name, table) in &given.tables {
        if known.contains(&name.as_str()) {
            continue;
        }
        let near = occam_lang::diag::nearest(name, known.iter().copied());
        let hint = match near.first() {
            Some(n) => format!("; did you mean `{n}`?"),
            None => String::new(),
        };
        return Err(Error::UnknownName(format!(
            "data `{name}` ({}): the model has no variable named `{name}`{hint} (variables: {})",
            table.file,
            known.join(", ")
        )));
    }
    Ok(())
}

/// Data that the model ignores (attached, or `NAME.csv` beside the model, for a latent `NAME`),
/// and a model that observes nothing.
fn data_warnings(loaded: &Loaded, dir: Option<&Path>) -> Vec<Warning> {
    let mut out = Vec::new();
    for (v, var) in loaded.model.variables.iter().enumerate() {
        if var.observed || !matches!(var.node, Node::Stochastic { .. }) {
            continue;
        }
        let file = match loaded.data.tables.get(&var.name) {
            Some(t) => Some(t.file.clone()),
            None => dir
                .map(|d| d.join(format!("{}.csv", var.name)))
                .filter(|p| p.is_file())
                .map(|p| p.display().to_string()),
        };
        if let Some(file) = file {
            out.push(Warning::DataNotObserved {
                variable: var.name.clone(),
                location: loaded.location(v),
                file,
            });
        }
    }
    for var in loaded.model.variables.iter().filter(|v| v.observed) {
        let Some(t) = loaded.data.tables.get(&var.name) else {
            continue;
        };
        if !t.values.is_empty() && t.present.iter().all(|p| !p) {
            out.push(Warning::AllMissing {
                variable: var.name.clone(),
                file: t.file.clone(),
                values: t.values.len(),
            });
        }
        // A `data` covariate may well be 0..N−1 or 1..N (the x of a regression); the values of a
        // modelled variable never are by chance, so for those the count rule applies too.
        let modelled = matches!(var.node, Node::Stochastic { .. });
        if let Some(w) = index_column(&var.name, t, modelled) {
            out.push(w);
        }
    }
    let observes = loaded
        .model
        .variables
        .iter()
        .any(|v| v.observed && matches!(v.node, Node::Stochastic { .. }));
    if !observes {
        out.push(Warning::NothingObserved {
            model: loaded.file_name.clone(),
        });
    }
    out
}

/// Headers that R (`write.csv`: `""`, `rownames` from Rdatasets), pandas (`Unnamed: 0`, `index`)
/// and other exports give a column of row names.
const INDEX_HEADERS: &[&str] = &[
    "",
    "rownames",
    "row.names",
    "row_names",
    "unnamed: 0",
    "index",
];

/// A warning when the first of several columns of `t` looks like a row index: its header is one of
/// [`INDEX_HEADERS`], or (with `counts`) it holds exactly 1..N or 0..N−1 (N ≥ 3 rows, every cell
/// present).
fn index_column(variable: &str, t: &crate::data::Table, counts: bool) -> Option<Warning> {
    if t.cols < 2 || t.rows == 0 {
        return None;
    }
    let column = |r: usize| t.values[r * t.cols];
    let header = t
        .header
        .as_ref()
        .and_then(|h| h.first())
        .map(|h| h.trim().to_string());
    let named = header
        .as_deref()
        .is_some_and(|h| INDEX_HEADERS.contains(&h.to_ascii_lowercase().as_str()));
    let counts = counts
        && t.rows >= 3
        && (0..t.rows).all(|r| t.present[r * t.cols])
        && [0.0, 1.0]
            .iter()
            .any(|&base| (0..t.rows).all(|r| column(r) == base + r as f64));
    (named || counts).then(|| Warning::IndexColumn {
        variable: variable.to_string(),
        file: t.file.clone(),
        header: header.unwrap_or_default(),
        first: column(0),
        last: column(t.rows - 1),
        columns: t.cols,
    })
}
