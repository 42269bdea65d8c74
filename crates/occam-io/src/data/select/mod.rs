//! Choosing columns and rows of a data file: `--data NAME=FILE:COLUMNS@ROWS`, each part optional.
//!
//! * `COLUMNS`: comma-separated header names (`:eruptions,waiting`), positions counted from 0
//!   (`:1,2`) and ranges `A..B` with `B` excluded (`:1..3`, `:2..`, `:..2`). A name wins over a
//!   position when the header has a column named like one. In a `.npz` file a name may also be
//!   one of its arrays (`:X`), chosen instead of the array named like the data.
//! * `ROWS`: data rows (the header is not a row), counted from 0 with the end excluded:
//!   `@..200` (the first 200), `@200..` (the rest), `@5` (row 5 alone); an end may be a percentage
//!   of the rows (`@..80%`, `@80%..`), and `,shuffle=SEED` draws the rows in a seeded random order
//!   before the range is taken (`@..80%,shuffle=1` and `@80%..,shuffle=1` are a random 80/20
//!   split: disjoint, together every row, the same for the same seed). Chosen rows keep the
//!   file's order.
//!
//! Positions count from 0 because they are what NumPy and pandas users write
//! (`usecols=[1, 2]`, `X[:200]`, `X[200:]`), what the Python package takes, what `occam nn
//! predict` prints in its row column and how categories are numbered; a half-open range makes a
//! split two ranges that meet (`..200` and `200..`) with no ±1. Messages still point at a cell as
//! `file:line:column` counted from 1, as editors and compilers do.
//!
//! A table of chosen columns and rows still names the file's own lines and columns in messages.

use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::{DataError, Result, Table};

mod spec;
#[cfg(test)]
mod tests;

pub use spec::{parse_rows, split};

/// Which columns and rows of a file to attach.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    /// Columns as written (names, positions from 0 and `A..B` ranges); `None`: all.
    pub columns: Option<Vec<String>>,
    /// Rows; `None`: all.
    pub rows: Option<RowSpec>,
    /// Where it was written, for messages: ``--data `x=f.csv:a` `` (empty: nowhere to name).
    pub arg: String,
}

/// Data rows `start..end`, counted from 0 with `end` excluded; either end open.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RowSpec {
    /// First row (`None`: 0).
    pub start: Option<Bound>,
    /// One past the last row (`None`: the number of rows).
    pub end: Option<Bound>,
    /// Seed of a random order of the rows taken before the range (`None`: the file's order).
    pub shuffle: Option<u64>,
}

/// One end of a range of rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// A row index.
    Row(usize),
    /// A percentage of the rows, 0 to 100: row ⌊n·p/100⌋ of n rows.
    Percent(f64),
}

impl Bound {
    fn index(self, n: usize) -> usize {
        match self {
            Bound::Row(r) => r,
            Bound::Percent(p) if p.fract() == 0.0 => n * p as usize / 100,
            Bound::Percent(p) => ((n as f64) * p / 100.0).floor() as usize,
        }
    }
}

impl Selection {
    /// Whether it selects anything (else the table is used whole).
    pub fn is_all(&self) -> bool {
        self.columns.is_none() && self.rows.is_none()
    }

    /// `` in --data `x=f.csv:a` ``, or nothing without an argument.
    pub(crate) fn context(&self) -> String {
        if self.arg.is_empty() {
            String::new()
        } else {
            format!(" in {}", self.arg)
        }
    }
}

impl RowSpec {
    /// The file's rows (0-based, increasing) this spec takes from a table of `n` rows.
    pub fn resolve(&self, n: usize, file: &str, context: &str) -> Result<Vec<usize>> {
        let start = self.start.map_or(0, |b| b.index(n));
        let end = self.end.map_or(n, |b| b.index(n));
        let written = |b: Option<Bound>| match b {
            None => String::new(),
            Some(Bound::Row(r)) => r.to_string(),
            Some(Bound::Percent(p)) => format!("{p}%"),
        };
        let range = format!("{}..{}", written(self.start), written(self.end));
        if end > n || start > end {
            return Err(DataError::Usage(format!(
                "{file}: rows {range}{context} are rows {start}..{end} (counted from 0, end excluded), but the file has {n} data rows (0..{n})"
            )));
        }
        if start == end {
            return Err(DataError::Usage(format!(
                "{file}: rows {range}{context} select no rows (rows {start}..{end} of {n})"
            )));
        }
        let mut order: Vec<usize> = (0..n).collect();
        if let Some(seed) = self.shuffle {
            order.shuffle(&mut rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed));
        }
        let mut rows = order[start..end].to_vec();
        rows.sort_unstable();
        Ok(rows)
    }
}

/// The suggestion for an unknown column `w`: a header name equal but for case, else one it
/// begins (`wait` → `waiting`, from 3 characters), else the nearest within a third of its length
/// in edits (at least 1, at most 3, fewer than its length; a swap of neighbours is one).
fn nearest<'a>(w: &str, names: &'a [String]) -> Option<&'a str> {
    let len = w.chars().count();
    let limit = (len / 3).clamp(1, 3);
    let lower = w.to_lowercase();
    names
        .iter()
        .filter(|n| n.as_str() != w)
        .filter_map(|n| {
            let l = n.to_lowercase();
            let rank = if l == lower {
                (0, 0)
            } else if len >= 3 && l.starts_with(&lower) {
                (1, 0)
            } else {
                let d = strsim::osa_distance(&lower, &l);
                if d > limit || d >= len {
                    return None;
                }
                (2, d)
            };
            Some((rank, n.as_str()))
        })
        .min_by_key(|&(rank, _)| rank)
        .map(|(_, n)| n)
}

/// [`Table::column_positions`] of a table of `cols` columns named `names` (empty: no header).
pub(crate) fn positions(
    file: &str,
    names: &[String],
    cols: usize,
    wanted: &[String],
    context: &str,
) -> Result<Vec<usize>> {
    let listing = || {
        let positions = if cols == 0 {
            "no columns".to_string()
        } else {
            format!("positions 0 to {}", cols - 1)
        };

        if names.is_empty() {
            format!("no column names; {positions}")
        } else {
            format!("columns: {}; or {positions}", names.join(", "))
        }
    };
    let unknown = |w: &str, why: String| {
        let hint = nearest(w, names)
            .map(|n| format!("; did you mean `{n}`?"))
            .unwrap_or_default();
        DataError::Usage(format!("{}: {why}{context}{hint} ({})", file, listing()))
    };
    let position = |w: &str, s: &str| -> Result<usize> {
        match s.trim().parse::<usize>() {
            Ok(n) if n < cols => Ok(n),
            Ok(n) => Err(unknown(
                w,
                format!("column {n} is past the last (counted from 0)"),
            )),
            Err(_) => Err(unknown(w, format!("no column `{w}`"))),
        }
    };
    let mut out = Vec::new();
    for w in wanted {
        let w = w.trim();
        if let Some(i) = names.iter().position(|c| c.trim() == w) {
            out.push(i);
            continue;
        }
        if let Some((a, b)) = w.split_once("..") {
            let a = if a.trim().is_empty() {
                0
            } else {
                position(w, a)?
            };
            let b = if b.trim().is_empty() {
                cols
            } else {
                match b.trim().parse::<usize>() {
                    Ok(b) if b <= cols => b,
                    _ => {
                        return Err(unknown(
                            w,
                            format!("`{w}` is not a range of columns 0..{}", cols),
                        ))
                    }
                }
            };
            if a >= b {
                return Err(unknown(w, format!("`{w}` selects no columns")));
            }
            out.extend(a..b);
            continue;
        }
        if let Some((a, b)) = w.split_once('-') {
            if a.trim().parse::<usize>().is_ok() && b.trim().parse::<usize>().is_ok() {
                return Err(unknown(
                    w,
                    format!(
                        "no column `{w}` (a range of positions is written A..B, counted from 0 with B excluded as in Python's [A:B])"
                    ),
                ));
            }
        }
        out.push(position(w, w)?);
    }
    Ok(out)
}

impl Table {
    /// The 0-based columns of `wanted` (header names, positions from 0, `A..B` ranges), in the
    /// order written; `context` (e.g. `` in --data `x=f.csv:a` ``) is added to messages.
    pub fn column_positions(&self, wanted: &[String], context: &str) -> Result<Vec<usize>> {
        positions(
            &self.file,
            self.header.as_deref().unwrap_or_default(),
            self.cols,
            wanted,
            context,
        )
    }

    /// The columns and rows of `sel` (see the module docs): a table whose messages still name the
    /// file's own lines and columns.
    pub fn select(&self, sel: &Selection) -> Result<Table> {
        if sel.is_all() {
            return Ok(self.clone());
        }
        let context = sel.context();
        let cols = match &sel.columns {
            Some(w) => self.column_positions(w, &context)?,
            None => (0..self.cols).collect(),
        };
        let rows: Vec<usize> = match &sel.rows {
            None => (0..self.rows).collect(),
            Some(r) => r.resolve(self.rows, &self.file, &context)?,
        };
        let mut t = self.take(&rows, &cols);
        // What was not chosen keeps the file's own order: no mapping to report.
        if sel.columns.is_none() {
            t.source_columns.clone_from(&self.source_columns);
        }
        if sel.rows.is_none() {
            t.source_rows.clone_from(&self.source_rows);
        }
        Ok(t)
    }

    /// The table of rows `rows` (increasing) and columns `cols` of this one.
    fn take(&self, rows: &[usize], cols: &[usize]) -> Table {
        let mut values = Vec::with_capacity(rows.len() * cols.len());
        let mut present = Vec::with_capacity(rows.len() * cols.len());
        for &r in rows {
            for &c in cols {
                values.push(self.values[r * self.cols + c]);
                present.push(self.present[r * self.cols + c]);
            }
        }
        // Row i of the selection is the file's row rows[i], which sits (rows[i] − i) + the
        // file's own shift lines below where row i would: a pair wherever that changes.
        let shift_at = |r: usize| match self.line_shifts.partition_point(|&(row, _)| row <= r) {
            0 => 0,
            k => self.line_shifts[k - 1].1,
        };
        let mut line_shifts: Vec<(usize, usize)> = Vec::new();
        for (i, &r) in rows.iter().enumerate() {
            let s = r - i + shift_at(r);
            if line_shifts.last().map_or(s != 0, |&(_, last)| last != s) {
                line_shifts.push((i, s));
            }
        }
        Table {
            name: self.name.clone(),
            file: self.file.clone(),
            rows: rows.len(),
            cols: cols.len(),
            values: values.into(),
            present,
            header: self
                .header
                .as_ref()
                .map(|h| cols.iter().map(|&c| h[c].clone()).collect()),
            csv: self.csv,
            line_shifts,
            source_columns: Some(cols.iter().map(|&c| self.source_column(c)).collect()),
            source_rows: Some(rows.iter().map(|&r| self.source_row(r)).collect()),
        }
    }

    /// What a selection chose, in the syntax of `--data NAME=FILE:COLUMNS@ROWS` (0-based, end
    /// excluded): e.g. `columns eruptions, waiting; rows 0..200` or `rows 3 ranges, 150 of 272`
    /// when shuffled rows are no one range; `None` for a whole file.
    pub fn selection_text(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(cols) = &self.source_columns {
            let names: Vec<String> = match &self.header {
                Some(h) => h.iter().map(|n| clip(n)).collect(),
                None => cols.iter().map(|c| c.to_string()).collect(),
            };
            parts.push(format!("columns {}", shorten(&names)));
        }
        if let Some(rows) = &self.source_rows {
            let mut ranges: Vec<(usize, usize)> = Vec::new();
            for &r in rows {
                match ranges.last_mut() {
                    Some((_, end)) if *end == r => *end += 1,
                    _ => ranges.push((r, r + 1)),
                }
            }
            let text: Vec<String> = ranges.iter().map(|(a, b)| format!("{a}..{b}")).collect();
            parts.push(if ranges.len() <= 3 {
                format!("rows {}", text.join(", "))
            } else {
                format!(
                    "{} rows in {} runs, from {}",
                    rows.len(),
                    ranges.len(),
                    shorten(&text)
                )
            });
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// The file's data row (0-based, header excluded) of row `r`.
    pub fn source_row(&self, r: usize) -> usize {
        self.source_rows
            .as_ref()
            .and_then(|s| s.get(r).copied())
            .unwrap_or(r)
    }

    /// The file's 0-based column of column `c`.
    pub fn source_column(&self, c: usize) -> usize {
        self.source_columns
            .as_ref()
            .and_then(|s| s.get(c).copied())
            .unwrap_or(c)
    }
}

/// At most the first 8 items of a list, then how many more.
fn shorten(items: &[String]) -> String {
    match items.len() {
        0..=8 => items.join(", "),
        n => format!("{}, … ({} more)", items[..8].join(", "), n - 8),
    }
}

/// A column name clipped to 40 characters for a summary line.
fn clip(name: &str) -> String {
    match name.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &name[..i]),
        None => name.to_string(),
    }
}
