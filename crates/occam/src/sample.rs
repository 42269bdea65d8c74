//! Ancestral sampling from the generative model. Plates sized from data (`plates N, D from data
//! x`) take their sizes from the caller (`--plate N=500` on the command line); the draws of the
//! observed variables (those the model attaches data to) come back as tables.

use std::collections::BTreeMap;
use std::path::Path;

use occam_lang::ast::{self, ExprKind, Stmt, VarRhs};
use occam_lang::catalog::EventShape;
use occam_lang::ir::Node;

use crate::data::{self, DataSet};
use crate::error::{Error, Result};
use crate::model::{self, Loaded};
use occam_lang::ir::MAX_PLATE_SIZE;

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

/// One observed variable's draw: `rows × cols` values, row-major, with CSV column names.
#[derive(Clone, Debug)]
pub struct Draw {
    /// The variable.
    pub name: String,
    /// Column names (`x`, or `x_1`, `x_2`, …).
    pub header: Vec<String>,
    /// Number of rows (the size of the variable's first plate).
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// The values, row-major.
    pub values: Vec<f64>,
}

impl Draw {
    /// The draw as CSV text with a header line.
    pub fn to_csv(&self) -> String {
        data::to_csv(&self.header, self.rows, &self.values)
    }
}

/// Draws every observed variable of a model loaded without data (see [`load_without_data`]) by
/// ancestral sampling from `seed`.
pub fn draw(loaded: &Loaded, seed: u64) -> Result<Vec<Draw>> {
    let mut c = loaded.compile(false)?;
    let draws = c
        .vmp
        .sample_prior(seed)
        .map_err(|e| crate::driver::run_error(loaded, &c, &e))?;
    let outputs: Vec<usize> = loaded
        .model
        .variables
        .iter()
        .enumerate()
        .filter(|(_, v)| v.observed && matches!(v.node, Node::Stochastic { .. }))
        .map(|(i, _)| i)
        .collect();
    if outputs.is_empty() {
        return Err(Error::Usage(format!(
            "{}: no observed variable to write; mark one with `observe NAME` or `plates N from data NAME`",
            loaded.file_name
        )));
    }
    Ok(outputs
        .into_iter()
        .map(|v| {
            let var = &loaded.model.variables[v];
            let values = draws[c.var_nodes[v].index()].clone();
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
            Draw {
                name: var.name.clone(),
                header,
                rows,
                cols,
                values,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GMM: &str = "plate K = 3\nplates N, D from data y\nalpha ~ Dirichlet(1) over K\n\
        z[N] ~ Categorical(alpha)\nmu[K] over D ~ MvGaussian(mean = 0, precision = identity)\n\
        Lambda[K] over D ~ Wishart(dof = 2, rate = identity)\n\
        y[N] over D ~ MvGaussian(mean = mu[z], precision = Lambda[z])\n";

    #[test]
    fn source_text_is_sampled_like_a_file() {
        let sizes = BTreeMap::from([("N".to_string(), 7), ("D".to_string(), 2)]);
        let given = DataSet::new();
        let l = load_source_without_data(
            Path::new("g.occam"),
            "g.occam".into(),
            GMM.into(),
            &given,
            &sizes,
            None,
        )
        .unwrap();
        let d = draw(&l, 1).unwrap();
        assert_eq!((d[0].name.as_str(), d[0].rows, d[0].cols), ("y", 7, 2));
        assert_eq!(draw(&l, 1).unwrap()[0].values, d[0].values);
        // A missing plate size names the plate; a syntax error is located in the named text.
        let e = load_source_without_data(
            Path::new("g.occam"),
            "g.occam".into(),
            GMM.into(),
            &given,
            &BTreeMap::new(),
            None,
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("plate `N`"), "{e}");
        let e = load_source_without_data(
            Path::new("g.occam"),
            "g.occam".into(),
            "plate K = 3\nmu ~ Gaussian(0, 1\n".into(),
            &given,
            &sizes,
            None,
        )
        .err()
        .unwrap();
        assert!(
            e.render_plain().contains("--> g.occam:3:1"),
            "{}",
            e.render_plain()
        );
    }
}
