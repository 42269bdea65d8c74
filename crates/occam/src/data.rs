//! The data attached to a model: `--data NAME=FILE[:COLUMNS@ROWS]` arguments, in-memory arrays
//! and `NAME.csv` next to the model, each a [`Table`] read by `occam-io` (CSV with a header row,
//! `.npy`, `.npz`; every error names the file and the cell).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use occam_io::data::{
    parse_csv, parse_rows, read, read_selected, split_selection, utf8, write_parquet, Bound,
    DataError, RowSpec, Selection, Table, Values, MAX_CELL_ECHO, MAX_DATA_BYTES,
};

use crate::error::{Error, Result};

/// The data attached to one model: `--data NAME=FILE` options, then `NAME.csv` next to the model
/// for every observed variable or data input without one.
#[derive(Debug, Default, Clone)]
pub struct DataSet {
    /// Tables by data name.
    pub tables: BTreeMap<String, Table>,
}

/// Parses one `--data` argument `NAME=FILE`, where FILE may end in a selection of columns and
/// rows, `FILE:COLUMNS@ROWS` (see [`split_selection`]).
pub fn parse_data_arg(arg: &str) -> Result<(String, PathBuf, Selection)> {
    match arg.split_once('=') {
        Some((n, f)) if !n.trim().is_empty() && !f.is_empty() => {
            let (path, sel) = split_selection(f, &format!("--data `{arg}`"))?;
            Ok((n.trim().to_string(), path, sel))
        }
        _ => Err(Error::Usage(format!(
            "bad --data `{arg}`: expected NAME=FILE, e.g. --data x=data.csv (or FILE:COLUMNS@ROWS, e.g. x=faithful.csv:eruptions,waiting@..200)"
        ))),
    }
}

/// Reads `FILE` or `FILE:COLUMNS@ROWS` (the part after `NAME=` of a `--data` argument; see
/// [`split_selection`]) as data `name`: what the commands that take a data file read.
pub fn read_spec(name: &str, spec: &str) -> Result<Table> {
    let (path, sel) = split_selection(spec, &format!("`{spec}`"))?;
    if !path.exists() {
        return Err(Error::io(&path, "no such data file"));
    }
    Ok(read_selected(name, &path, &sel)?)
}

impl DataSet {
    /// An empty data set.
    pub fn new() -> DataSet {
        DataSet::default()
    }

    /// Attaches the file `path` (`.csv` with a header, `.npy` or `.npz`) as data `name`.
    pub fn insert_file(&mut self, name: &str, path: &Path) -> Result<()> {
        self.insert_selected(name, path, &Selection::default())
    }

    /// Attaches the columns and rows `sel` of the file `path` as data `name` (see
    /// [`split_selection`] for the syntax of `--data NAME=FILE:COLUMNS@ROWS`).
    pub fn insert_selected(&mut self, name: &str, path: &Path, sel: &Selection) -> Result<()> {
        if !path.exists() {
            return Err(Error::io(path, "no such data file"));
        }
        let t = read_selected(name, path, sel)?;
        self.tables.insert(name.to_string(), t);
        Ok(())
    }

    /// Attaches an in-memory array as data `name`: `rows × cols` values, row-major; NaN marks a
    /// missing cell (as in a CSV), ±∞ is an error naming the cell. The array is taken over as
    /// the table's values (no copy; models loaded from the set and their graphs share it).
    pub fn insert_array(
        &mut self,
        name: &str,
        rows: usize,
        cols: usize,
        mut values: Vec<f64>,
        header: Option<Vec<String>>,
    ) -> Result<()> {
        if rows.checked_mul(cols) != Some(values.len()) {
            return Err(Error::DataFile {
                file: name.to_string(),
                message: format!(
                    "{} values do not fill a {rows} × {cols} array",
                    values.len()
                ),
            });
        }
        let present: Vec<bool> = values.iter().map(|v| !v.is_nan()).collect();
        let infinite = values.iter().position(|v| v.is_infinite());
        // Missing cells zeroed in place: the array handed over is the table's one copy.
        values
            .iter_mut()
            .filter(|v| v.is_nan())
            .for_each(|v| *v = 0.0);
        let table = Table {
            name: name.to_string(),
            file: format!("<array {name}>"),
            rows,
            cols,
            values: values.into(),
            present,
            header,
            csv: false,
            line_shifts: Vec::new(),
            source_columns: None,
            source_rows: None,
        };
        if let Some(i) = infinite {
            return Err(table.error_at(i, format!("{} is not a finite number", table.values[i])));
        }
        self.tables.insert(name.to_string(), table);
        Ok(())
    }

    /// Reads every `--data` argument.
    pub fn from_args(args: &[String]) -> Result<DataSet> {
        let mut set = DataSet::default();
        for a in args {
            let (name, path, sel) = parse_data_arg(a)?;
            set.insert_selected(&name, &path, &sel)?;
        }
        Ok(set)
    }

    /// Adds `NAME.csv` from `dir` for each name in `names` that has no table yet and whose file
    /// exists.
    pub fn add_defaults<'a>(
        &mut self,
        dir: &Path,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<()> {
        for n in names {
            if self.tables.contains_key(n) {
                continue;
            }
            let p = dir.join(format!("{n}.csv"));
            if p.is_file() {
                let t = read(n, &p)?;
                self.tables.insert(n.to_string(), t);
            }
        }
        Ok(())
    }

    /// The shapes for the language's resolver.
    pub fn shapes(&self) -> occam_lang::DataShapes {
        let mut s = occam_lang::DataShapes::new();
        for (n, t) in &self.tables {
            s.insert(n, t.rows, t.cols);
        }
        s
    }
}

/// Writes a table as CSV text with a header.
pub fn to_csv(header: &[String], rows: usize, values: &[f64]) -> String {
    let cols = header.len().max(1);
    let mut out = header.join(",");
    out.push('\n');
    for r in 0..rows {
        let line: Vec<String> = values[r * cols..(r + 1) * cols]
            .iter()
            .map(|v| format_number(*v))
            .collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

/// Shortest round-tripping text of a number (integers without a decimal point).
pub fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The array handed to `insert_array` is the table's values, and the model loaded from the
    /// set and its fitted graph read that same array for the data input X and the observed y
    /// (issue 29: X was held twice, once here and once as the graph's constant); a NaN is zeroed
    /// in that array.
    #[test]
    fn the_data_set_and_the_fit_hold_one_array() {
        let (n, d) = (40, 3);
        let x: Vec<f64> = (0..n * d)
            .map(|i| ((i * 7) % 11) as f64 / 5.0 - 1.0)
            .collect();
        let mut y: Vec<f64> = (0..n).map(|i| (i % 2) as f64).collect();
        y[3] = f64::NAN;
        let mut set = DataSet::new();
        let ptr = x.as_ptr();
        set.insert_array("X", n, d, x, None).unwrap();
        set.insert_array("y", n, 1, y, None).unwrap();
        assert_eq!(
            set.tables["X"].values.as_ptr(),
            ptr,
            "the array is taken over"
        );
        assert_eq!(
            (set.tables["y"].values[3], set.tables["y"].present[3]),
            (0.0, false)
        );
        let text = "plates N, D from data X\ndata X[N] over D\n\
                    w over D ~ MvGaussian(mean = 0, precision = identity * 1.0)\n\
                    y[N] ~ Bernoulli(sigmoid(dot(X[N], w)))\nobserve y\n";
        let model = crate::Model::from_source("shared.occam", text, &set).unwrap();
        drop(set);
        let fit = model
            .fit(&crate::Settings {
                max_iter: 2,
                ..crate::Settings::default()
            })
            .unwrap();
        let (vmp, tables) = (&fit.compiled().vmp, &fit.loaded().data.tables);
        for name in ["X", "y"] {
            let node = vmp.node(name).unwrap();
            assert!(
                tables[name].values.same_array(vmp.data_array(node)),
                "{name}: the graph holds a copy of the data set's array"
            );
        }
        assert_eq!(tables["X"].values.as_ptr(), ptr);
    }

    #[test]
    fn numbers_as_written() {
        assert_eq!(format_number(3.0), "3");
        assert_eq!(format_number(-0.25), "-0.25");
    }
}
