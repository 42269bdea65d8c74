//! `occam sample MODEL --plate N=500 --out FILE`: ancestral sampling from the generative model.
//! Plates sized from data (`plates N, D from data x`) take their sizes from `--plate`; the
//! observed variables (those the model attaches data to) are written as CSV with a header — to
//! FILE if there is one, or as `NAME.csv` files in the directory FILE if there are several.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;
use occam_lang::ast::{self, ExprKind, Stmt, VarRhs};
use occam_lang::ir::Node;

use super::{model_path, DataArgs};
use crate::atomic;
use crate::data::{self, DataSet};
use crate::error::{CliError, Result};
use crate::model::{self, Loaded};

/// Arguments of `occam sample`.
#[derive(Args, Debug)]
pub struct SampleArgs {
    /// The generator model (.occam).
    pub model: PathBuf,
    /// Size of a plate that the model sizes from data: NAME=SIZE (repeatable).
    #[arg(long = "plate", value_name = "NAME=SIZE")]
    pub plates: Vec<String>,
    /// Seed of the draw.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Output: a CSV file (one observed variable) or a directory (one NAME.csv per variable).
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub data: DataArgs,
}

/// Parses `--plate NAME=SIZE` options.
pub fn plate_sizes(args: &[String]) -> Result<BTreeMap<String, u64>> {
    let mut out = BTreeMap::new();
    for a in args {
        let parsed = a
            .split_once('=')
            .and_then(|(n, s)| Some((n.trim().to_string(), s.trim().parse::<i64>().ok()?)));
        match parsed {
            Some((n, s)) if s > 0 && !n.is_empty() => {
                out.insert(n, s as u64);
            }
            Some((n, s)) => {
                return Err(CliError::Usage(format!(
                    "--plate {n}={s}: a plate size must be a positive integer"
                )))
            }
            None => {
                return Err(CliError::Usage(format!(
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
                CliError::Usage(format!(
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
                let categorical = var.is_some_and(|v| {
                    matches!(&v.rhs, VarRhs::Random { dist, .. } if dist.name == "Categorical" || dist.name == "Discrete")
                });
                let wishart = var.is_some_and(
                    |v| matches!(&v.rhs, VarRhs::Random { dist, .. } if dist.name == "Wishart"),
                );
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
    let dir = path.parent().unwrap_or(Path::new("."));
    data.add_defaults(dir, inputs.iter().map(String::as_str))?;
    let mut shapes = data.shapes();
    for (n, r, c) in shapes_without_data(&ast, sizes, &data, default)? {
        shapes.insert(&n, r, c);
    }
    let model = occam_lang::compile(&source, &file_name, &shapes)?;
    for name in sizes.keys() {
        if model.plate_index(name).is_none() {
            return Err(CliError::Usage(format!(
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
                return Err(CliError::Usage(format!(
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
    })
}

/// Runs `occam sample`.
pub fn run(a: &SampleArgs) -> Result<()> {
    model_path(&a.model)?;
    let sizes = plate_sizes(&a.plates)?;
    let given = DataSet::from_args(&a.data.data)?;
    let loaded = load_without_data(&a.model, &given, &sizes, None)?;
    let mut c = loaded.compile(false)?;
    let draws = c
        .vmp
        .sample_prior(a.seed)
        .map_err(|e| crate::infer::run_error(&loaded, &c, &e))?;
    let outputs: Vec<usize> = loaded
        .model
        .variables
        .iter()
        .enumerate()
        .filter(|(_, v)| v.observed && matches!(v.node, Node::Stochastic { .. }))
        .map(|(i, _)| i)
        .collect();
    if outputs.is_empty() {
        return Err(CliError::Usage(format!(
            "{}: no observed variable to write; mark one with `observe NAME` or `plates N from data NAME`",
            loaded.file_name
        )));
    }
    let as_dir = outputs.len() > 1 || a.out.is_dir();
    if as_dir {
        atomic::ensure_dir(&a.out)?;
    }
    for &v in &outputs {
        let var = &loaded.model.variables[v];
        let node = c.var_nodes[v];
        let values = &draws[node.index()];
        let rows = var
            .plates
            .first()
            .map_or(1, |&p| loaded.model.plates[p].size as usize);
        let cols = values.len() / rows.max(1);
        let header: Vec<String> = if cols == 1 {
            vec![var.name.clone()]
        } else {
            (1..=cols).map(|j| format!("{}_{j}", var.name)).collect()
        };
        let text = data::to_csv(&header, rows, values);
        let path = if as_dir {
            a.out.join(format!("{}.csv", var.name))
        } else {
            a.out.clone()
        };
        atomic::write(&path, text.as_bytes())?;
        eprintln!("wrote {} ({rows}×{cols}) to {}", var.name, path.display());
    }
    Ok(())
}
