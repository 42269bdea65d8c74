//! Loading a model without its observed data, for sampling and drawing: plates sized from data
//! (`plates N, D from data x`) take their sizes from the caller (`--plate N=500` on the command
//! line) or a default, and the data tables are stand-ins of those shapes.

use std::collections::BTreeMap;
use std::path::Path;

use occam_lang::ast::{self, ExprKind, Stmt, VarRhs};
use occam_lang::catalog::EventShape;
use occam_lang::ir::MAX_PLATE_SIZE;

use crate::data::DataSet;
use crate::error::{Error, Result};
use crate::model::{self, Loaded};

/// Parses `--plate NAME=SIZE` options.
pub fn plate_sizes(args: &[String]) -> Result<BTreeMap<String, u64>> {
    let mut out = BTreeMap::new();
    for a in args {
        let parsed = a
            .split_once('=')
            .and_then(|(n, s)| Some((n.trim().to_string(), s.trim().parse::<i64>().ok()?)));
        match parsed {
            Some((n, s)) if s > 0 && s as u64 > MAX_PLATE_SIZE && !n.is_empty() => {
                return Err(Error::Usage(format!(
                    "--plate {n}={s}: more than the limit of {MAX_PLATE_SIZE} elements in a plate"
                )))
            }
            Some((n, s)) if s > 0 && !n.is_empty() => {
                out.insert(n, s as u64);
            }
            Some((n, s)) => {
                return Err(Error::Usage(format!(
                    "--plate {n}={s}: a plate size must be a positive integer"
                )))
            }
            None => {
                return Err(Error::Usage(format!(
                    "bad --plate `{a}`: expected NAME=SIZE, e.g. --plate N=500"
                )))
            }
        }
    }
    Ok(out)
}

/// Size of a plate named `name` from `--plate` or a fixed numeric declaration.
fn size_of(file: &ast::File, sizes: &BTreeMap<String, u64>, name: &str) -> Option<u64> {
    if let Some(s) = sizes.get(name) {
        return Some(*s);
    }
    file.statements.iter().find_map(|s| match s {
        Stmt::Plates(p) => p
            .items
            .iter()
            .find_map(|i| match (i.name.name == name, &i.size) {
                (
                    true,
                    Some(ast::Expr {
                        kind: ExprKind::Number(x),
                        ..
                    }),
                ) => Some(*x as u64),
                _ => None,
            }),
        _ => None,
    })
}

/// Shapes for the data names that size plates, from plate sizes instead of data: rows from the
/// first plate, columns from the variable's remaining plates and event plate. `default` sizes
/// plates not given (for drawing); without it a missing size is an error.
pub fn shapes_without_data(
    file: &ast::File,
    sizes: &BTreeMap<String, u64>,
    have: &DataSet,
    default: Option<u64>,
) -> Result<Vec<(String, usize, usize)>> {
    let mut out = Vec::new();
    for s in &file.statements {
        let Stmt::Plates(p) = s else { continue };
        let Some(d) = &p.from_data else { continue };
        if have.tables.contains_key(&d.name) || out.iter().any(|(n, _, _)| n == &d.name) {
            continue;
        }
        let get = |name: &str| -> Result<u64> {
            size_of(file, sizes, name).or(default).ok_or_else(|| {
                Error::Usage(format!(
                    "plate `{name}` takes its size from data `{}`; give it with --plate {name}=SIZE",
                    d.name
                ))
            })
        };
        for item in &p.items {
            get(&item.name.name)?;
        }
        // The variable the data belongs to decides the columns.
        let decl = file.statements.iter().find_map(|s| match s {
            Stmt::Var(v) if v.name.name == d.name => {
                Some((v.plates.clone(), v.over.clone(), Some(v)))
            }
            Stmt::Observe(o) => o.items.iter().find_map(|i| {
                (i.name.name == d.name && (i.plates.is_some() || i.over.is_some()))
                    .then(|| (i.plates.clone().unwrap_or_default(), i.over.clone(), None))
            }),
            _ => None,
        });
        let (rows, cols) = match decl {
            Some((plates, over, var)) => {
                let rows = match plates.first() {
                    Some(pl) => get(&pl.name)?,
                    None => 1,
                };
                let mut cols = 1u64;
                for pl in plates.iter().skip(1) {
                    cols = cols.saturating_mul(get(&pl.name)?);
                }
                // How the family uses its event plate decides the columns (declared in its spec).
                let event = var.and_then(|v| match &v.rhs {
                    VarRhs::Random { dist, .. } => {
                        occam_lang::catalog::distribution(&dist.name).map(|f| f.event)
                    }
                    _ => None,
                });
                let categorical = event == Some(EventShape::Categories);
                let wishart = event == Some(EventShape::Matrix);
                if let Some(q) = over {
                    let qs = get(&q.name)?;
                    if wishart {
                        cols = cols.saturating_mul(qs * qs);
                    } else if !categorical {
                        cols = cols.saturating_mul(qs);
                    }
                }
                (rows, cols)
            }
            None => {
                let r = get(&p.items[0].name.name)?;
                let c = match p.items.get(1) {
                    Some(i) => get(&i.name.name)?,
                    None => 1,
                };
                (r, c)
            }
        };
        out.push((d.name.clone(), rows as usize, cols as usize));
    }
    Ok(out)
}

/// Loads a model without its observed data, sizing data plates from `sizes` (or `default`).
pub fn load_without_data(
    path: &Path,
    given: &DataSet,
    sizes: &BTreeMap<String, u64>,
    default: Option<u64>,
) -> Result<Loaded> {
    let (file_name, source, ast) = model::read_source(path)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    load_parsed_without_data(
        path,
        Some(dir),
        file_name,
        source,
        ast,
        given,
        sizes,
        default,
    )
}

/// [`load_without_data`] for source text (a model given as a string; `file_name` is what
/// diagnostics print): data inputs must be in `given` (no `NAME.csv` is looked for).
pub fn load_source_without_data(
    path: &Path,
    file_name: String,
    source: String,
    given: &DataSet,
    sizes: &BTreeMap<String, u64>,
    default: Option<u64>,
) -> Result<Loaded> {
    let ast = occam_lang::parse(&source, &file_name)?;
    load_parsed_without_data(path, None, file_name, source, ast, given, sizes, default)
}

#[allow(clippy::too_many_arguments)]
fn load_parsed_without_data(
    path: &Path,
    dir: Option<&Path>,
    file_name: String,
    source: String,
    ast: ast::File,
    given: &DataSet,
    sizes: &BTreeMap<String, u64>,
    default: Option<u64>,
) -> Result<Loaded> {
    let mut data = DataSet {
        tables: given.tables.clone(),
    };
    // Data inputs (covariates) are still needed: `NAME.csv` next to the model.
    let inputs: Vec<String> = ast
        .statements
        .iter()
        .filter_map(|s| match s {
            Stmt::Observe(o) => Some(
                o.items
                    .iter()
                    .filter(|i| i.plates.is_some() || i.over.is_some())
                    .map(|i| i.name.name.clone())
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        })
        .flatten()
        .collect();
    if let Some(dir) = dir {
        data.add_defaults(dir, inputs.iter().map(String::as_str))?;
    }
    let mut shapes = data.shapes();
    for (n, r, c) in shapes_without_data(&ast, sizes, &data, default)? {
        shapes.insert(&n, r, c);
    }
    let model = occam_lang::compile(&source, &file_name, &shapes)?;
    for name in sizes.keys() {
        if model.plate_index(name).is_none() {
            return Err(Error::Usage(format!(
                "--plate {name}: the model has no plate `{name}` (plates: {})",
                model
                    .plates
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    for (name, &size) in sizes {
        if let Some(p) = model.plates.iter().find(|p| &p.name == name) {
            if p.size != size {
                return Err(Error::Usage(format!(
                    "--plate {name}={size}: the model fixes plate `{name}` at {}",
                    p.size
                )));
            }
        }
    }
    Ok(Loaded {
        path: path.to_path_buf(),
        file_name,
        source,
        model,
        data,
        warnings: Vec::new(),
    })
}
