//! Apache Parquet files (the `parquet` crate, without Arrow): the columns read are flat numeric
//! columns (BOOLEAN, INT32, INT64, FLOAT or DOUBLE; optional or required), read as f64 with a null
//! or NaN a missing cell, as in a `.npy` file; the column names are the table's header, so
//! `--data x=FILE.parquet:a,b` chooses columns by name. Columns of other types (text) may sit in
//! the file: a selection that leaves them out never reads them ([`ParquetChunks::read_columns`]),
//! as a CSV selection skips a text column; reading one is an error naming it. A file is read a
//! row group at a time, so [`ParquetChunks`] reads the rows of a chunk (`--stream`) from the row
//! groups that hold them. Errors name the file, and the row and column of a bad cell (rows from
//! 1, as in a `.npy` file).

use std::fs::File;
use std::path::{Path, PathBuf};

use parquet::basic::Type as Physical;
use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::data_type::DataType;
use parquet::file::reader::{FileReader, SerializedFileReader};

use super::select::positions;
use super::{data_file, DataError, Result, Table};

/// A Parquet file of numeric columns (and maybe others, left unread), read by blocks of rows.
pub struct ParquetChunks {
    path: PathBuf,
    reader: SerializedFileReader<File>,
    /// Rows of the file.
    pub rows: usize,
    /// Columns of the file.
    pub cols: usize,
    /// The columns' names.
    pub header: Vec<String>,
    /// The first row of each row group, and the rows of the file after the last.
    starts: Vec<usize>,
    /// Whether each column may hold nulls (its values come with definition levels).
    optional: Vec<bool>,
    /// The physical type of each column that is not numeric (`None`: numeric).
    other: Vec<Option<String>>,
}

impl std::fmt::Debug for ParquetChunks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetChunks")
            .field("path", &self.path)
            .field("rows", &self.rows)
            .field("cols", &self.cols)
            .finish()
    }
}

impl ParquetChunks {
    /// Reads the footer of `path` (its data are not read): every column must be flat; columns
    /// that are not numeric may only be left out of what is read.
    pub fn open(path: &Path) -> Result<ParquetChunks> {
        let f = File::open(path).map_err(|e| DataError::io(path, e))?;
        let reader = SerializedFileReader::new(f)
            .map_err(|e| data_file(path, format!("not a Parquet file we can read: {e}")))?;
        let meta = reader.metadata();
        let schema = meta.file_metadata().schema_descr();
        let mut header = Vec::with_capacity(schema.num_columns());
        let mut optional = Vec::with_capacity(schema.num_columns());
        let mut other = Vec::with_capacity(schema.num_columns());
        for (c, col) in schema.columns().iter().enumerate() {
            let at = || format!("column {} `{}`", c + 1, col.path().string());
            if col.max_rep_level() > 0 {
                return Err(data_file(
                    path,
                    format!(
                        "{} is a list (repeated values): give one number per cell",
                        at()
                    ),
                ));
            }
            // Definition level 1 is a nullable top-level column; more is a field inside an
            // optional group, whose nulls at an outer level would need the level to tell apart.
            if col.max_def_level() > 1 {
                return Err(data_file(
                    path,
                    format!(
                        "{} is a field of a nested (struct) column: give flat columns",
                        at()
                    ),
                ));
            }
            other.push(match col.physical_type() {
                Physical::BOOLEAN
                | Physical::INT32
                | Physical::INT64
                | Physical::FLOAT
                | Physical::DOUBLE => None,
                t => Some(t.to_string()),
            });
            header.push(col.path().string());
            optional.push(col.max_def_level() > 0);
        }
        if header.is_empty() {
            return Err(data_file(path, "no columns".into()));
        }
        let mut starts = vec![0];
        for g in meta.row_groups() {
            let n = usize::try_from(g.num_rows())
                .map_err(|_| data_file(path, format!("a row group of {} rows", g.num_rows())))?;
            starts.push(starts.last().unwrap() + n);
        }
        Ok(ParquetChunks {
            path: path.to_path_buf(),
            rows: *starts.last().unwrap(),
            cols: header.len(),
            header,
            starts,
            optional,
            other,
            reader,
        })
    }

    /// Rows `from..to` as data `name`: the row groups that hold them are read, column by column;
    /// every column must be numeric.
    pub fn read(&self, name: &str, from: usize, to: usize) -> Result<Table> {
        self.read_columns(name, from, to, None)
    }

    /// Which columns `wanted` chooses (header names, positions from 0, `A..B` ranges, as
    /// `FILE:COLUMNS` writes them; `context` is added to messages): a flag per column of the
    /// file, for [`ParquetChunks::read_columns`].
    pub fn keep(&self, wanted: &[String], context: &str) -> Result<Vec<bool>> {
        let file = self.path.display().to_string();
        let mut keep = vec![false; self.cols];
        for c in positions(&file, &self.header, self.cols, wanted, context)? {
            keep[c] = true;
        }
        Ok(keep)
    }

    /// [`ParquetChunks::read`] of the columns `keep` marks (`None`: all): the others are not
    /// read (they may hold text) and their cells are missing, so the table keeps the file's
    /// columns for a selection by name or position to choose from. A kept column that is not
    /// numeric is an error naming it.
    pub fn read_columns(
        &self,
        name: &str,
        from: usize,
        to: usize,
        keep: Option<&[bool]>,
    ) -> Result<Table> {
        let path = &self.path;
        let kept = |c: usize| keep.is_none_or(|k| k.get(c).copied().unwrap_or(false));
        if let Some(c) = (0..self.cols).find(|&c| kept(c) && self.other[c].is_some()) {
            let how = if keep.is_some() {
                "leave it out of the columns chosen (`FILE:COLUMNS`)"
            } else {
                "choose the numeric columns with `FILE:COLUMNS` (e.g. `x=FILE.parquet:a,b`), \
                 which leaves it unread"
            };
            return Err(data_file(
                path,
                format!(
                    "column {} `{}` holds {} values, not numbers: {how}",
                    c + 1,
                    self.header[c],
                    self.other[c].as_deref().unwrap_or_default()
                ),
            ));
        }
        if from > to || to > self.rows {
            return Err(data_file(
                path,
                format!("rows {from}..{to} of {}", self.rows),
            ));
        }
        let cols = self.cols;
        let size = (to - from).checked_mul(cols);
        let mut values = Vec::new();
        if size.is_none_or(|s| values.try_reserve_exact(s).is_err()) {
            return Err(data_file(
                path,
                format!(
                    "rows {from}..{to} do not fit in memory: read fewer rows at a time \
                     (--chunk-rows)"
                ),
            ));
        }
        values.resize(size.unwrap_or(0), 0.0);
        let mut present = vec![true; values.len()];
        for c in (0..cols).filter(|&c| !kept(c)) {
            for r in 0..to - from {
                present[r * cols + c] = false;
            }
        }
        let bad = |e: parquet::errors::ParquetError| data_file(path, format!("cannot read: {e}"));
        for g in 0..self.starts.len() - 1 {
            let (a, b) = (self.starts[g], self.starts[g + 1]);
            if b <= from || a >= to || a == b {
                continue;
            }
            let group = self.reader.get_row_group(g).map_err(bad)?;
            let (skip, take) = (from.saturating_sub(a), to.min(b) - a.max(from));
            for c in (0..cols).filter(|&c| kept(c)) {
                let reader = group.get_column_reader(c).map_err(bad)?;
                let column = read_column(reader, self.optional[c], skip, take).map_err(bad)?;
                for (k, v) in column.into_iter().enumerate() {
                    let i = (a.max(from) - from + k) * cols + c;
                    match v {
                        Some(v) if v.is_nan() => present[i] = false,
                        Some(v) if !v.is_finite() => {
                            return Err(DataError::Cell {
                                file: path.display().to_string(),
                                row: a.max(from) + k + 1,
                                column: c + 1,
                                message: format!(
                                    "column `{}`: {v} is not finite (use null or NaN for a \
                                     missing value)",
                                    self.header[c]
                                ),
                            })
                        }
                        Some(v) => values[i] = v,
                        None => present[i] = false,
                    }
                }
            }
        }
        Ok(Table {
            name: name.into(),
            file: path.display().to_string(),
            rows: to - from,
            cols,
            values: values.into(),
            present,
            header: Some(self.header.clone()),
            csv: false,
            line_shifts: Vec::new(),
            source_columns: None,
            source_rows: None,
        })
    }
}

/// Reads a whole Parquet file as data `name`.
pub fn read_parquet(name: &str, path: &Path) -> Result<Table> {
    let f = ParquetChunks::open(path)?;
    f.read(name, 0, f.rows)
}

/// `take` values of one column chunk after the first `skip`, a null as `None` (`optional`: the
/// column has definition levels).
fn read_column(
    reader: ColumnReader,
    optional: bool,
    skip: usize,
    take: usize,
) -> parquet::errors::Result<Vec<Option<f64>>> {
    match reader {
        ColumnReader::BoolColumnReader(r) => {
            values(r, optional, skip, take, |v| f64::from(u8::from(v)))
        }
        ColumnReader::Int32ColumnReader(r) => values(r, optional, skip, take, f64::from),
        ColumnReader::Int64ColumnReader(r) => values(r, optional, skip, take, |v| v as f64),
        ColumnReader::FloatColumnReader(r) => values(r, optional, skip, take, f64::from),
        ColumnReader::DoubleColumnReader(r) => values(r, optional, skip, take, |v| v),
        _ => Err(parquet::errors::ParquetError::General(
            "a column that is not numeric".into(),
        )),
    }
}

fn values<T: DataType>(
    mut r: ColumnReaderImpl<T>,
    optional: bool,
    skip: usize,
    take: usize,
    to_f64: impl Fn(T::T) -> f64,
) -> parquet::errors::Result<Vec<Option<f64>>>
where
    T::T: Copy,
{
    if skip > 0 && r.skip_records(skip)? != skip {
        return Err(parquet::errors::ParquetError::EOF(format!(
            "fewer than {skip} rows in a row group"
        )));
    }
    let mut out = Vec::with_capacity(take);
    let (mut defs, mut vals) = (Vec::new(), Vec::new());
    while out.len() < take {
        defs.clear();
        vals.clear();
        let (records, _, _) = r.read_records(take - out.len(), Some(&mut defs), None, &mut vals)?;
        if records == 0 {
            return Err(parquet::errors::ParquetError::EOF(format!(
                "{} of {take} rows in a row group",
                out.len()
            )));
        }
        if optional {
            let mut v = vals.iter();
            for &d in &defs[..records] {
                out.push(if d > 0 {
                    v.next().map(|&x| to_f64(x))
                } else {
                    None
                });
            }
        } else {
            out.extend(vals[..records].iter().map(|&x| Some(to_f64(x))));
        }
    }
    Ok(out)
}
