//! Data files: CSV with a header row, `.npy` and `.npz`. A table is rows × columns of numbers with
//! a mask of missing cells (empty, `NA` or `NaN` in a CSV; NaN in an array). Every error names the
//! place: `file:line:column` for CSV (the file's own lines, past empty and comment lines),
//! `file:row:column` (1-based) for arrays.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

mod csv_text;
mod select;
pub use csv_text::parse_csv;
pub use select::Selection;

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
    /// Values, row-major; 0 where missing.
    pub values: Vec<f64>,
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

    /// A data error at flat cell `i`.
    pub fn error_at(&self, i: usize, message: impl Into<String>) -> Error {
        let (row, column) = self.position(i);
        let mut message = message.into();
        if let Some(h) = self
            .header
            .as_ref()
            .and_then(|h| h.get(i % self.cols.max(1)))
        {
            message = format!("column `{h}`: {message}");
        }
        Error::Data {
            file: self.file.clone(),
            row,
            column,
            message,
        }
    }
}

/// Reads `--data NAME=FILE` (by extension: `.npy`, `.npz`, anything else is CSV).
pub fn read(name: &str, path: &Path) -> Result<Table> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    match ext.as_str() {
        "npy" => {
            let bytes = read_bounded(path)?;
            from_npy_bytes(name, path, &bytes)
        }
        "npz" => from_npz(name, path),
        _ => {
            let bytes = read_bounded(path)?;
            let text = utf8(path, &bytes)?;
            parse_csv(name, &path.display().to_string(), text)
        }
    }
}

/// The largest data file read (and the largest array a header may declare), in bytes.
pub const MAX_DATA_BYTES: u64 = 8 << 30;

/// Reads a whole file, refusing one larger than [`MAX_DATA_BYTES`].
fn read_bounded(path: &Path) -> Result<Vec<u8>> {
    let len = std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .len();
    if len > MAX_DATA_BYTES {
        return Err(data_file(
            path,
            format!("{len} bytes is more than the limit of {MAX_DATA_BYTES} bytes for a data file"),
        ));
    }
    std::fs::read(path).map_err(|e| Error::io(path, e))
}

/// The text of a CSV or model file: invalid UTF-8 is an error at its line and byte; a byte-order
/// mark is skipped.
pub(crate) fn utf8<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = good.len() - good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) + 1;
        Error::Data {
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

/// An array of a `.npz` archive: the one named like the data, or its only array.
fn from_npz(name: &str, path: &Path) -> Result<Table> {
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut archive = zip::ZipArchive::new(std::io::BufReader::new(file))
        .map_err(|e| data_file(path, format!("not a .npz file: {e}")))?;
    let names: Vec<String> = archive
        .file_names()
        .filter_map(|n| n.strip_suffix(".npy"))
        .map(String::from)
        .collect();
    let key = if names.iter().any(|n| n == name) {
        name.to_string()
    } else if names.len() == 1 {
        names[0].clone()
    } else {
        return Err(data_file(
            path,
            format!(
                "no array named `{name}` (arrays: {})",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ),
        ));
    };
    let mut entry = archive
        .by_name(&format!("{key}.npy"))
        .map_err(|e| data_file(path, format!("cannot read array `{key}`: {e}")))?;
    if entry.size() > MAX_DATA_BYTES {
        return Err(data_file(
            path,
            format!(
                "array `{key}` holds {} bytes, more than the limit of {MAX_DATA_BYTES}",
                entry.size()
            ),
        ));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(&mut entry, MAX_DATA_BYTES + 1),
        &mut bytes,
    )
    .map_err(|e| data_file(path, format!("cannot read array `{key}`: {e}")))?;
    from_npy_bytes(name, path, &bytes)
}

/// Where the data of a `.npy` file start: after the magic string, version, header length and
/// header (format versions 1, 2 and 3).
fn npy_data_start(bytes: &[u8]) -> Option<usize> {
    match *bytes.get(6)? {
        1 => Some(10 + u16::from_le_bytes([*bytes.get(8)?, *bytes.get(9)?]) as usize),
        2 | 3 => {
            let l = bytes.get(8..12)?;
            Some(12 + u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize)
        }
        _ => None,
    }
}

/// The dimensions in a `.npy` header's `'shape': (…)` entry, if they read as integers.
fn declared_shape(bytes: &[u8]) -> Option<Vec<u64>> {
    let end = npy_data_start(bytes)?.min(bytes.len());
    let header = std::str::from_utf8(bytes.get(10..end)?).ok()?;
    let after = &header[header.find("'shape'")? + 7..];
    let open = after.find('(')?;
    let close = after[open..].find(')')? + open;
    after[open + 1..close]
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.trim_end_matches('L').parse::<u64>().ok())
        .collect()
}

/// Reads a `.npy` image held in memory, checking that its declared shape matches its data
/// exactly (no silent truncation of trailing bytes, no overflowing or short shapes).
fn from_npy_bytes(name: &str, path: &Path, bytes: &[u8]) -> Result<Table> {
    // npyz multiplies the declared dimensions without checking for overflow: look first.
    if let Some(dims) = declared_shape(bytes) {
        let fits = dims
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .and_then(|c| c.checked_mul(16))
            .is_some_and(|b| b <= MAX_DATA_BYTES);
        if !fits {
            return Err(data_file(
                path,
                format!(
                    "the header declares shape {dims:?}, more than the limit of {MAX_DATA_BYTES} bytes"
                ),
            ));
        }
    }
    let npy =
        npyz::NpyFile::new(bytes).map_err(|e| data_file(path, format!("not a .npy file: {e}")))?;
    let item = match npy.dtype() {
        npyz::DType::Plain(ts) => ts.size_field(),
        other => {
            return Err(data_file(
                path,
                format!("unsupported array type {}", other.descr()),
            ))
        }
    };
    let shape = npy.shape().to_vec();
    let cells = shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .filter(|&c| c.checked_mul(item).is_some_and(|b| b <= MAX_DATA_BYTES));
    let Some(cells) = cells else {
        return Err(data_file(
            path,
            format!(
                "the header declares shape {shape:?}, more than the limit of {MAX_DATA_BYTES} bytes"
            ),
        ));
    };
    let data = npy_data_start(bytes).map_or(0, |s| bytes.len().saturating_sub(s)) as u64;
    if data != cells * item {
        return Err(data_file(
            path,
            format!(
                "the header declares shape {shape:?} ({} bytes of data) but the file holds {data} bytes",
                cells * item
            ),
        ));
    }
    from_npy(name, path, npy)
}

fn data_file(path: &Path, message: String) -> Error {
    Error::DataFile {
        file: path.display().to_string(),
        message,
    }
}

fn from_npy<R: std::io::Read>(name: &str, path: &Path, npy: npyz::NpyFile<R>) -> Result<Table> {
    use npyz::TypeChar;
    let shape: Vec<u64> = npy.shape().to_vec();
    let fortran = matches!(npy.order(), npyz::Order::Fortran);
    let bad = |m: String| data_file(path, m);
    let (type_char, size) = match npy.dtype() {
        npyz::DType::Plain(ts) => (ts.type_char(), ts.size_field()),
        other => return Err(bad(format!("unsupported array type {}", other.descr()))),
    };
    let io = |e: std::io::Error| data_file(path, format!("cannot read the array: {e}"));
    let raw: Vec<f64> = match (type_char, size) {
        (TypeChar::Float, 8) => npy.into_vec::<f64>().map_err(io)?,
        (TypeChar::Float, 4) => npy
            .into_vec::<f32>()
            .map_err(io)?
            .into_iter()
            .map(f64::from)
            .collect(),
        (TypeChar::Int, 8) => conv(npy.into_vec::<i64>().map_err(io)?),
        (TypeChar::Int, 4) => conv(npy.into_vec::<i32>().map_err(io)?),
        (TypeChar::Int, 2) => conv(npy.into_vec::<i16>().map_err(io)?),
        (TypeChar::Int, 1) => conv(npy.into_vec::<i8>().map_err(io)?),
        (TypeChar::Uint, 8) => conv(npy.into_vec::<u64>().map_err(io)?),
        (TypeChar::Uint, 4) => conv(npy.into_vec::<u32>().map_err(io)?),
        (TypeChar::Uint, 2) => conv(npy.into_vec::<u16>().map_err(io)?),
        (TypeChar::Uint, 1) => conv(npy.into_vec::<u8>().map_err(io)?),
        (TypeChar::Bool, _) => npy
            .into_vec::<bool>()
            .map_err(io)?
            .into_iter()
            .map(|b| if b { 1.0 } else { 0.0 })
            .collect(),
        (t, s) => {
            return Err(bad(format!(
                "unsupported array element type `{}{s}`",
                t.to_str()
            )))
        }
    };
    let (rows, cols) = match shape.as_slice() {
        [] => (1, 1),
        [n] => (*n as usize, 1),
        [r, c] => (*r as usize, *c as usize),
        _ => {
            return Err(bad(format!(
                "arrays must have 1 or 2 dimensions; this one has shape {shape:?}"
            )))
        }
    };
    let mut values = vec![0.0; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            let src = if fortran { c * rows + r } else { r * cols + c };
            values[r * cols + c] = raw[src];
        }
    }
    let mut present = vec![true; values.len()];
    for (i, v) in values.iter_mut().enumerate() {
        if v.is_nan() {
            present[i] = false;
            *v = 0.0;
        } else if !v.is_finite() {
            return Err(Error::Data {
                file: path.display().to_string(),
                row: i / cols + 1,
                column: i % cols + 1,
                message: format!("{v} is not finite (use NaN for a missing value)"),
            });
        }
    }
    Ok(Table {
        name: name.into(),
        file: path.display().to_string(),
        rows,
        cols,
        values,
        present,
        header: None,
        csv: false,
        line_shifts: Vec::new(),
        source_columns: None,
    })
}

fn conv<T: Into<F64Like>>(v: Vec<T>) -> Vec<f64> {
    v.into_iter().map(|x| x.into().0).collect()
}

/// Lossy conversion of integer array elements to f64.
struct F64Like(f64);
macro_rules! like {
    ($($t:ty),*) => {$(impl From<$t> for F64Like { fn from(x: $t) -> Self { F64Like(x as f64) } })*};
}
like!(i64, i32, i16, i8, u64, u32, u16, u8);

/// The data attached to one model: `--data NAME=FILE` options, then `NAME.csv` next to the model
/// for every observed variable or data input without one.
#[derive(Debug, Default, Clone)]
pub struct DataSet {
    /// Tables by data name.
    pub tables: BTreeMap<String, Table>,
}

/// Parses one `--data` argument `NAME=FILE`, where FILE may end in a selection of columns and
/// rows, `FILE:COLUMNS@ROWS` (see [`select`]).
pub fn parse_data_arg(arg: &str) -> Result<(String, PathBuf, Selection)> {
    match arg.split_once('=') {
        Some((n, f)) if !n.trim().is_empty() && !f.is_empty() => {
            let (path, sel) = select::split(f, arg)?;
            Ok((n.trim().to_string(), path, sel))
        }
        _ => Err(Error::Usage(format!(
            "bad --data `{arg}`: expected NAME=FILE, e.g. --data x=data.csv (or FILE:COLUMNS@ROWS, e.g. x=faithful.csv:eruptions,waiting@1-200)"
        ))),
    }
}

impl DataSet {
    /// An empty data set.
    pub fn new() -> DataSet {
        DataSet::default()
    }

    /// Attaches the file `path` (`.csv` with a header, `.npy` or `.npz`) as data `name`.
    pub fn insert_file(&mut self, name: &str, path: &Path) -> Result<()> {
        if !path.exists() {
            return Err(Error::io(path, "no such data file"));
        }
        let t = read(name, path)?;
        self.tables.insert(name.to_string(), t);
        Ok(())
    }

    /// Attaches an in-memory array as data `name`: `rows × cols` values, row-major; NaN marks a
    /// missing cell (as in a CSV), ±∞ is an error naming the cell.
    pub fn insert_array(
        &mut self,
        name: &str,
        rows: usize,
        cols: usize,
        values: Vec<f64>,
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
        let table = Table {
            name: name.to_string(),
            file: format!("<array {name}>"),
            rows,
            cols,
            values: values
                .iter()
                .map(|&v| if v.is_nan() { 0.0 } else { v })
                .collect(),
            present,
            header,
            csv: false,
            line_shifts: Vec::new(),
            source_columns: None,
        };
        if let Some(i) = values.iter().position(|v| v.is_infinite()) {
            return Err(table.error_at(i, format!("{} is not a finite number", values[i])));
        }
        self.tables.insert(name.to_string(), table);
        Ok(())
    }

    /// Reads every `--data` argument.
    pub fn from_args(args: &[String]) -> Result<DataSet> {
        let mut set = DataSet::default();
        for a in args {
            let (name, path, sel) = parse_data_arg(a)?;
            set.insert_file(&name, &path)?;
            if !sel.is_all() {
                let t = set.tables[&name].select(&sel)?;
                set.tables.insert(name, t);
            }
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
        assert_eq!(format_number(3.0), "3");
        assert_eq!(format_number(-0.25), "-0.25");
    }
}
