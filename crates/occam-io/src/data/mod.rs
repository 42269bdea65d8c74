//! Data files: CSV with a header row, `.npy`, `.npz` and Parquet. A table is rows × columns of numbers with
//! a mask of missing cells (empty, `NA` or `NaN` in a CSV; NaN in an array). Every error names the
//! place: `file:line:column` for CSV (the file's own lines, past empty and comment lines),
//! `file:row:column` (1-based) for arrays.

use std::path::Path;

mod csv_chunks;
mod csv_text;
mod error;
mod npy;
mod npy_chunks;
mod parquet_file;
mod parquet_write;
pub mod plain;
mod select;
mod values;
pub use csv_chunks::CsvChunks;
pub use csv_text::{parse_csv, MAX_CELL_ECHO};
pub use error::{DataError, Result};
pub use npy_chunks::NpyChunks;
pub use parquet_file::{read_parquet, ParquetChunks};
pub use parquet_write::write_parquet;
pub use select::{parse_rows, split as split_selection, Bound, RowSpec, Selection};
pub use values::Values;

/// A numeric table read from a data file.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The data name (the variable it is attached to).
    pub name: String,
    /// The file it came from, for messages.
    pub file: String,
    /// Number of rows (plate elements along the first axis).
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// Values, row-major; 0 where missing. Shared by the clones of the table and the graphs
    /// built from it ([`Values`]: copy-on-write).
    pub values: Values,
    /// `present[i]` is false for a missing cell.
    pub present: Vec<bool>,
    /// Column names (CSV header), if any.
    pub header: Option<Vec<String>>,
    /// Whether `row` positions are file lines (CSV: header is line 1) or array rows.
    pub csv: bool,
    /// For a CSV whose data rows do not all follow a header on line 1 line after line (empty or
    /// comment lines, lines before the header, line ends inside quotes): `(r, s)` pairs, increasing
    /// in r, saying that data row r (0-based), and the rows after it up to the next pair, sit s
    /// lines further down the file than line r + 2. Empty when there is no such line.
    pub line_shifts: Vec<(usize, usize)>,
    /// For a table of chosen columns (`--data x=FILE:COLUMNS`): the file's 0-based column of
    /// each, so that messages name the file's own column; `None`: the file's columns in order.
    pub source_columns: Option<Vec<usize>>,
    /// For a table of chosen rows (`--data x=FILE@ROWS`): the file's data row (0-based, header
    /// excluded) of each, so that outputs can name the file's own rows; `None`: in order.
    pub source_rows: Option<Vec<usize>>,
}

impl Table {
    /// Whether any cell is missing.
    pub fn has_missing(&self) -> bool {
        self.present.iter().any(|p| !p)
    }

    /// The (row, column) position of flat cell `i` as printed in messages (1-based; for a CSV the
    /// row is the file line, so data row 1 is line 2).
    pub fn position(&self, i: usize) -> (usize, usize) {
        let (r, c) = (i / self.cols.max(1), i % self.cols.max(1));
        let shift = match self.line_shifts.partition_point(|&(row, _)| row <= r) {
            0 => 0,
            k => self.line_shifts[k - 1].1,
        };
        (
            r + 1 + usize::from(self.csv) + shift,
            self.source_column(c) + 1,
        )
    }

    /// A data error at flat cell `i`, as any error type a [`DataError`] converts into (the
    /// caller's own, through `From`).
    pub fn error_at<E: From<DataError>>(&self, i: usize, message: impl Into<String>) -> E {
        let (row, column) = self.position(i);
        let mut message = message.into();
        if let Some(h) = self
            .header
            .as_ref()
            .and_then(|h| h.get(i % self.cols.max(1)))
        {
            message = format!("column `{h}`: {message}");
        }
        DataError::Cell {
            file: self.file.clone(),
            row,
            column,
            message,
        }
        .into()
    }
}

/// Reads `--data NAME=FILE` (by extension: `.npy`, `.npz`, `.parquet`, anything else is CSV).
pub fn read(name: &str, path: &Path) -> Result<Table> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "npy" => {
            let bytes = read_bounded(path)?;
            npy::from_npy_bytes(name, path, &bytes)
        }
        "npz" => npy::from_npz(name, path, None).map(|(t, _)| t),
        "parquet" => read_parquet(name, path),
        _ => {
            let bytes = read_bounded(path)?;
            let text = utf8(path, &bytes)?;
            parse_csv(name, &path.display().to_string(), text)
        }
    }
}

/// Reads `--data NAME=FILE:COLUMNS@ROWS`: [`read`], then the selection (see
/// [`Table::select`]); in a `.npz` file a name in `COLUMNS` that is one of its arrays chooses
/// that array.
///
/// A CSV column left out may hold text (an R export's factor column): its cells are not read
/// as numbers.
pub fn read_selected(name: &str, path: &Path, sel: &Selection) -> Result<Table> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let Some(columns) = &sel.columns else {
        return read(name, path)?.select(sel);
    };
    if ext == "npy" {
        return read(name, path)?.select(sel);
    }
    if ext == "parquet" {
        // Only the chosen columns are read: a text column left out is never decoded.
        let f = ParquetChunks::open(path)?;
        let keep = f.keep(columns, &sel.context())?;
        return f.read_columns(name, 0, f.rows, Some(&keep))?.select(sel);
    }
    if ext != "npz" {
        let bytes = read_bounded(path)?;
        let text = utf8(path, &bytes)?;
        let file = path.display().to_string();
        let context = if sel.arg.is_empty() {
            String::new()
        } else {
            format!(" in {}", sel.arg)
        };
        let ignored = |header: &[String]| -> Result<Vec<bool>> {
            let keep = select::positions(&file, header, header.len(), columns, &context)?;
            let mut free = vec![true; header.len()];
            for c in keep {
                free[c] = false;
            }
            Ok(free)
        };
        return csv_text::parse_csv_ignoring(name, &file, text, &ignored)?.select(sel);
    }
    let (t, key) = npy::from_npz(name, path, sel.columns.as_deref())?;
    let mut sel = sel.clone();
    if let (Some(i), Some(c)) = (key, sel.columns.as_mut()) {
        c.remove(i);
        if c.is_empty() {
            sel.columns = None;
        }
    }
    t.select(&sel)
}

/// The largest data file read (and the largest array a header may declare), in bytes.
pub const MAX_DATA_BYTES: u64 = 8 << 30;

/// Reads a whole file, refusing one larger than [`MAX_DATA_BYTES`].
fn read_bounded(path: &Path) -> Result<Vec<u8>> {
    let len = std::fs::metadata(path)
        .map_err(|e| DataError::io(path, e))?
        .len();
    if len > MAX_DATA_BYTES {
        return Err(data_file(
            path,
            format!("{len} bytes is more than the limit of {MAX_DATA_BYTES} bytes for a data file"),
        ));
    }
    std::fs::read(path).map_err(|e| DataError::io(path, e))
}

/// The text of a CSV or model file: invalid UTF-8 is an error at its line and byte; a byte-order
/// mark is skipped.
pub fn utf8<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = good.len() - good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        DataError::Cell {
            file: path.display().to_string(),
            row: line,
            column,
            message: format!(
                "invalid UTF-8 at byte {} (save the file as UTF-8 text)",
                e.valid_up_to()
            ),
        }
    })?;
    Ok(text.strip_prefix('\u{feff}').unwrap_or(text))
}

pub(crate) fn data_file(path: &Path, message: String) -> DataError {
    DataError::File {
        file: path.display().to_string(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::npy::from_npy_bytes;
    use super::*;

    /// A version-1 `.npy` image of little-endian f64 with the given header shape and values.
    fn npy(shape: &str, values: &[f64]) -> Vec<u8> {
        let mut header = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}");
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend((header.len() as u16).to_le_bytes());
        b.extend(header.as_bytes());
        for v in values {
            b.extend(v.to_le_bytes());
        }
        b
    }

    fn npy_error(shape: &str, values: &[f64], extra: &[u8]) -> String {
        let mut b = npy(shape, values);
        b.extend(extra);
        from_npy_bytes("x", Path::new("x.npy"), &b)
            .err()
            .unwrap()
            .to_string()
    }

    #[test]
    fn npy_shape_must_match_the_data_exactly() {
        let t = from_npy_bytes(
            "x",
            Path::new("x.npy"),
            &npy("(2, 2)", &[1.0, 2.0, 3.0, 4.0]),
        )
        .unwrap();
        assert_eq!((t.rows, t.cols, t.values[3]), (2, 2, 4.0));
        let e = npy_error("(3,)", &[1.0, 2.0, 3.0], &[0, 0, 0]);
        assert!(
            e.contains("x.npy")
                && e.contains("declares shape [3] (24 bytes of data) but the file holds 27 bytes"),
            "{e}"
        );
        let e = npy_error("(4,)", &[1.0, 2.0, 3.0], &[]);
        assert!(
            e.contains("declares shape [4]") && e.contains("holds 24 bytes"),
            "{e}"
        );
        let e = npy_error("(4294967296, 4294967296, 4294967296)", &[1.0], &[]);
        assert!(e.contains("more than the limit"), "{e}");
        let e = npy_error("(1000000000000,)", &[1.0], &[]);
        assert!(e.contains("more than the limit"), "{e}");
    }

    #[test]
    fn invalid_utf8_names_line_column_and_byte() {
        let e = utf8(Path::new("x.csv"), b"a,b\n1,2\n3,\xff\n")
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            e,
            "x.csv:3:3: invalid UTF-8 at byte 10 (save the file as UTF-8 text)"
        );
    }

    #[test]
    fn positions_of_cells() {
        let t = parse_csv("x", "x.csv", "a,b\n1,2\n3,4\n").unwrap();
        assert_eq!(t.position(3), (3, 2));
    }
}
