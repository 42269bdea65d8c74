//! Choosing columns and rows of a data file on the command line:
//! `--data NAME=FILE:COLUMNS@ROWS`, each part optional.
//!
//! * `COLUMNS`: comma-separated names from the header (`:eruptions,waiting`), or 1-based column
//!   numbers and ranges as `cut -f` takes them (`:2,3`, `:2-4`); a name wins over a number when
//!   the header has a column named like one.
//! * `ROWS`: a 1-based, inclusive range of data rows (`@1-200`, `@201-`, `@-50`) — a train/test
//!   split of one file in two commands.
//!
//! A path that exists as given is never split, so a file whose name holds `:` or `@` still reads.

use std::ops::Range;
use std::path::PathBuf;

use super::Table;
use super::{DataError, Result};

/// Which columns and rows of a file to attach.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    /// Columns as written (names or 1-based numbers and ranges); `None`: all.
    pub columns: Option<Vec<String>>,
    /// Data rows, 1-based and inclusive as written: (first, last), either open.
    pub rows: Option<(Option<usize>, Option<usize>)>,
}

impl Selection {
    /// Whether it selects anything (else the table is used whole).
    pub fn is_all(&self) -> bool {
        self.columns.is_none() && self.rows.is_none()
    }
}

/// Splits `FILE:COLUMNS@ROWS` into the file and its selection (see the module docs); `arg` is
/// the whole `--data` argument, for messages.
pub fn split(spec: &str, arg: &str) -> Result<(PathBuf, Selection)> {
    let whole = PathBuf::from(spec);
    if whole.exists() {
        return Ok((whole, Selection::default()));
    }
    let mut rest = spec;
    let mut sel = Selection::default();
    if let Some((head, rows)) = rest.rsplit_once('@') {
        if !rows.is_empty() && rows.chars().all(|c| c.is_ascii_digit() || c == '-') {
            sel.rows = Some(row_range(rows, arg)?);
            rest = head;
        }
    }
    if let Some((head, cols)) = rest.rsplit_once(':') {
        if !cols.is_empty() && !PathBuf::from(rest).exists() {
            sel.columns = Some(cols.split(',').map(|c| c.trim().to_string()).collect());
            rest = head;
        }
    }
    Ok((PathBuf::from(rest), sel))
}

fn row_range(s: &str, arg: &str) -> Result<(Option<usize>, Option<usize>)> {
    let bad = || {
        DataError::Usage(format!(
            "bad rows in --data `{arg}`: `@{s}`; write a 1-based inclusive range such as @1-200, @201- or @-50"
        ))
    };
    let num = |t: &str| -> Result<Option<usize>> {
        if t.is_empty() {
            return Ok(None);
        }
        match t.parse::<usize>() {
            Ok(0) | Err(_) => Err(bad()),
            Ok(n) => Ok(Some(n)),
        }
    };
    let (a, b) = match s.split_once('-') {
        Some((a, b)) => (num(a)?, num(b)?),
        None => {
            let n = num(s)?;
            (n, n)
        }
    };
    if matches!((a, b), (Some(a), Some(b)) if a > b) || (a.is_none() && b.is_none()) {
        return Err(bad());
    }
    Ok((a, b))
}

/// The file's 0-based column of each selected column.
fn columns(t: &Table, wanted: &[String]) -> Result<Vec<usize>> {
    let mut out = Vec::new();
    let unknown = |w: &str| {
        let names = t.header.as_ref().map(|h| h.join(", ")).unwrap_or_default();
        DataError::Usage(format!(
            "{}: no column `{w}` (columns: {}; or 1-based numbers 1 to {})",
            t.file,
            if names.is_empty() {
                "no header"
            } else {
                &names
            },
            t.cols
        ))
    };
    for w in wanted {
        if let Some(i) = t
            .header
            .as_ref()
            .and_then(|h| h.iter().position(|c| c.trim() == w))
        {
            out.push(i);
            continue;
        }
        let number = |s: &str| -> Result<usize> {
            match s.trim().parse::<usize>() {
                Ok(n) if (1..=t.cols).contains(&n) => Ok(n - 1),
                _ => Err(unknown(w)),
            }
        };
        match w.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (number(a)?, number(b)?);
                if a > b {
                    return Err(unknown(w));
                }
                out.extend(a..=b);
            }
            None => out.push(number(w)?),
        }
    }
    Ok(out)
}

impl Table {
    /// The columns and rows of `sel` (see the module docs): a table whose messages still name the
    /// file's own lines and columns.
    pub fn select(&self, sel: &Selection) -> Result<Table> {
        if sel.is_all() {
            return Ok(self.clone());
        }
        let cols = match &sel.columns {
            Some(w) => columns(self, w)?,
            None => (0..self.cols).collect(),
        };
        let rows: Range<usize> = match sel.rows {
            None => 0..self.rows,
            Some((a, b)) => {
                let first = a.unwrap_or(1) - 1;
                let last = b.unwrap_or(self.rows);
                if first >= self.rows || last > self.rows {
                    return Err(DataError::Usage(format!(
                        "{}: rows {}-{} asked for, but the file has {} data rows",
                        self.file,
                        first + 1,
                        last,
                        self.rows
                    )));
                }
                first..last
            }
        };
        let mut values = Vec::with_capacity(rows.len() * cols.len());
        let mut present = Vec::with_capacity(rows.len() * cols.len());
        for r in rows.clone() {
            for &c in &cols {
                values.push(self.values[r * self.cols + c]);
                present.push(self.present[r * self.cols + c]);
            }
        }
        // Row r of the selection is the file's row r + first: its line shift is the file's plus
        // `first` lines.
        let shift_at = |r: usize| match self.line_shifts.partition_point(|&(row, _)| row <= r) {
            0 => 0,
            k => self.line_shifts[k - 1].1,
        };
        let mut line_shifts = vec![(0, rows.start + shift_at(rows.start))];
        line_shifts.extend(
            self.line_shifts
                .iter()
                .filter(|&&(row, _)| row > rows.start && row < rows.end)
                .map(|&(row, s)| (row - rows.start, s + rows.start)),
        );
        let source_columns = cols
            .iter()
            .map(|&c| self.source_column(c))
            .collect::<Vec<_>>();
        Ok(Table {
            name: self.name.clone(),
            file: self.file.clone(),
            rows: rows.len(),
            cols: cols.len(),
            values,
            present,
            header: self
                .header
                .as_ref()
                .map(|h| cols.iter().map(|&c| h[c].clone()).collect()),
            csv: self.csv,
            line_shifts,
            source_columns: Some(source_columns),
        })
    }

    /// The file's 0-based column of column `c`.
    pub fn source_column(&self, c: usize) -> usize {
        self.source_columns
            .as_ref()
            .and_then(|s| s.get(c).copied())
            .unwrap_or(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faithful() -> Table {
        let text =
            "rownames,eruptions,waiting\n1,3.6,79\n# a comment\n2,1.8,54\n3,3.333,74\n4,2.283,62\n";
        super::super::parse_csv("x", "f.csv", text).unwrap()
    }

    #[test]
    fn columns_by_name_number_and_range() {
        let t = faithful();
        let by_name = t
            .select(&Selection {
                columns: Some(vec!["eruptions".into(), "waiting".into()]),
                rows: None,
            })
            .unwrap();
        assert_eq!((by_name.rows, by_name.cols), (4, 2));
        assert_eq!(
            by_name.values,
            [3.6, 79.0, 1.8, 54.0, 3.333, 74.0, 2.283, 62.0]
        );
        assert_eq!(by_name.header.as_deref().unwrap(), ["eruptions", "waiting"]);
        let by_range = t
            .select(&Selection {
                columns: Some(vec!["2-3".into()]),
                rows: None,
            })
            .unwrap();
        assert_eq!(by_range.values, by_name.values);
        let one = t
            .select(&Selection {
                columns: Some(vec!["3".into()]),
                rows: Some((Some(2), Some(3))),
            })
            .unwrap();
        assert_eq!(one.values, [54.0, 74.0]);
        // Messages name the file's own line (past the comment) and column.
        assert_eq!(one.position(0), (4, 3));
        assert_eq!(one.position(1), (5, 3));
        let e = t
            .select(&Selection {
                columns: Some(vec!["wait".into()]),
                rows: None,
            })
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no column `wait` (columns: rownames, eruptions, waiting"),
            "{e}"
        );
        let e = t
            .select(&Selection {
                columns: None,
                rows: Some((Some(3), Some(9))),
            })
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("rows 3-9 asked for, but the file has 4 data rows"),
            "{e}"
        );
    }

    #[test]
    fn specs_split_into_file_columns_and_rows() {
        let (f, s) = split("d/f.csv:a,b@2-", "x=d/f.csv:a,b@2-").unwrap();
        assert_eq!(f, PathBuf::from("d/f.csv"));
        assert_eq!(s.columns, Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(s.rows, Some((Some(2), None)));
        let (f, s) = split("f.csv@-50", "x=f.csv@-50").unwrap();
        assert_eq!(
            (f, s.columns, s.rows),
            (PathBuf::from("f.csv"), None, Some((None, Some(50))))
        );
        for bad in ["f.csv@0-3", "f.csv@5-2", "f.csv@-"] {
            let e = split(bad, bad).unwrap_err().to_string();
            assert!(e.contains("write a 1-based inclusive range"), "{bad}: {e}");
        }
    }
}
