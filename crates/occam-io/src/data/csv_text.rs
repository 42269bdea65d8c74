//! CSV text with a header row → [`Table`].
//!
//! Two readers with one meaning. The general one is the `csv` crate (quoted fields, any UTF-8,
//! lone-`\r` line ends). Plain files — ASCII, no quote character, `\n` or `\r\n` line ends, which
//! is every file a numeric program writes — take the direct one: the bytes are split at line ends
//! and commas where they lie, in blocks of lines parsed on the thread pool, with no per-cell
//! string. Both skip empty lines and lines starting with `#`, trim blanks around cells, read
//! empty, `NA` and `NaN` (any case) as missing, parse numbers with `str::parse` (correctly
//! rounded) and place every error at `file:line:column`; a test runs both on random texts and
//! requires the same table or the same error.

use rayon::prelude::*;

use super::error::clip;
use super::Table;
use super::{DataError, Result};

/// The most characters of a cell or column name an error message echoes (longer ones end in `…`).
pub const MAX_CELL_ECHO: usize = 200;

/// Whether a (trimmed) CSV cell means "missing".
fn is_missing(cell: &str) -> bool {
    cell.is_empty() || cell.eq_ignore_ascii_case("na") || cell.eq_ignore_ascii_case("nan")
}

/// Parses CSV text with a header row.
pub fn parse_csv(name: &str, file: &str, text: &str) -> Result<Table> {
    parse_csv_ignoring(name, file, text, &|_| Ok(Vec::new()))
}

/// Which columns (by the header) may hold anything: their cells that are not numbers are read as
/// missing, for a selection that leaves them out (an R export's text column).
pub(crate) type Ignored<'a> = &'a dyn Fn(&[String]) -> Result<Vec<bool>>;

/// [`parse_csv`], where the columns `ignored(header)` marks may hold text (read as missing).
pub(crate) fn parse_csv_ignoring(
    name: &str,
    file: &str,
    text: &str,
    ignored: Ignored<'_>,
) -> Result<Table> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (header, rows, values, present, line_shifts) = if plain(text.as_bytes()) {
        direct(file, text, BLOCK_BYTES, ignored)?
    } else {
        general(file, text, ignored)?
    };
    Ok(Table {
        name: name.into(),
        file: file.into(),
        rows,
        cols: header.len(),
        values: values.into(),
        present,
        header: Some(header),
        csv: true,
        line_shifts,
        source_columns: None,
        source_rows: None,
    })
}

/// The header, the number of rows, the values (row-major, 0 where missing), the mask and the
/// rows' line shifts ([`Table::line_shifts`]).
type Parsed = (Vec<String>, usize, Vec<f64>, Vec<bool>, Vec<(usize, usize)>);

/// Builds [`Table::line_shifts`] row by row: `at(r, line)` says that data row r is on `line`.
#[derive(Default)]
struct Shifts {
    list: Vec<(usize, usize)>,
}

impl Shifts {
    fn at(&mut self, row: usize, line: usize) {
        let shift = line.saturating_sub(row + 2);
        if shift != self.list.last().map_or(0, |l| l.1) {
            self.list.push((row, shift));
        }
    }
}

/// The file's line numbers for the `csv` crate's records. The crate's own positions lag behind
/// the file after empty and comment lines and on `\r\n` line ends: a record's reported byte is
/// where the previous record ended. From there this skips what the crate skips (line ends, and
/// comment lines at a record's start) and counts the lines on the way (`\n`, `\r\n` and a lone
/// `\r` each end one, as in the crate), once over the whole text.
struct Lines<'a> {
    bytes: &'a [u8],
    at: usize,
    line: usize,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        Lines {
            bytes: text.as_bytes(),
            at: 0,
            line: 1,
        }
    }

    /// Counts the line ends in `bytes[at..to]` and moves there.
    fn advance(&mut self, to: usize) {
        let to = to.min(self.bytes.len());
        while self.at < to {
            match self.bytes[self.at] {
                b'\n' => self.line += 1,
                b'\r' if self.bytes.get(self.at + 1) != Some(&b'\n') => self.line += 1,
                _ => {}
            }
            self.at += 1;
        }
    }

    /// The line of the record the crate reports at byte `reported`.
    fn record(&mut self, reported: u64) -> usize {
        self.advance(reported as usize);
        loop {
            match self.bytes.get(self.at) {
                Some(b'\n' | b'\r') => self.advance(self.at + 1),
                Some(b'#') => {
                    let end = memchr::memchr2(b'\n', b'\r', &self.bytes[self.at..])
                        .map_or(self.bytes.len(), |i| self.at + i);
                    self.advance(end);
                }
                _ => return self.line,
            }
        }
    }
}

/// Whether the direct reader reads `bytes` exactly as the `csv` crate does: ASCII without a
/// quote character, and every `\r` the first half of a `\r\n` line end.
fn plain(bytes: &[u8]) -> bool {
    bytes.is_ascii()
        && memchr::memchr(b'"', bytes).is_none()
        && memchr::memchr_iter(b'\r', bytes).all(|i| bytes.get(i + 1) == Some(&b'\n'))
}

/// The header's checks: present, unique names, and not a row of numbers.
fn check_header(file: &str, header: &[String]) -> Result<()> {
    if header.is_empty() || (header.len() == 1 && header[0].is_empty()) {
        return Err(DataError::File {
            file: file.into(),
            message: "empty file: expected a header row naming the columns".into(),
        });
    }
    // First column of each name: a hash map, where a scan of the earlier names per column took
    // minutes on a header of 10⁵ columns.
    let mut first_of: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::with_capacity(header.len());
    for (c, h) in header.iter().enumerate() {
        let earlier = match first_of.entry(h.as_str()) {
            std::collections::hash_map::Entry::Occupied(o) => Some(*o.get()),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(c);
                None
            }
        };
        if let Some(first) = earlier {
            return Err(DataError::Cell {
                file: file.into(),
                row: 1,
                column: c + 1,
                message: format!(
                    "column name `{}` is used twice (columns {} and {})",
                    clip(h, MAX_CELL_ECHO),
                    first + 1,
                    c + 1
                ),
            });
        }
    }
    if let Some(c) = header.iter().position(|h| h.parse::<f64>().is_ok()) {
        return Err(DataError::Cell {
            file: file.into(),
            row: 1,
            column: c + 1,
            message: format!(
                "the first line must be a header naming the columns; `{}` is a number",
                clip(&header[c], MAX_CELL_ECHO)
            ),
        });
    }
    Ok(())
}

/// What is wrong with one trimmed cell, if anything: its value, or `None` if missing.
fn cell_value(cell: &str) -> std::result::Result<Option<f64>, CellError> {
    if is_missing(cell) {
        return Ok(None);
    }
    match cell.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(Some(v)),
        Ok(_) => Err(CellError::NotFinite),
        Err(_) => Err(CellError::NotANumber),
    }
}

/// Why a cell is refused.
#[derive(Clone, Copy, Debug, PartialEq)]
enum CellError {
    NotANumber,
    NotFinite,
}

/// The error of a refused cell at `line`, `column` (1-based).
fn cell_error(
    file: &str,
    header: &[String],
    line: usize,
    column: usize,
    cell: &str,
    e: CellError,
) -> DataError {
    // Cells and names are echoed clipped: a 1 MB cell must not become a 1 MB message.
    let h = clip(&header[column - 1], MAX_CELL_ECHO);
    let cell = clip(cell, MAX_CELL_ECHO);
    DataError::Cell {
        file: file.into(),
        row: line,
        column,
        message: match e {
            CellError::NotANumber => match numpy_scalar(&cell) {
                Some(x) => format!(
                    "column `{h}`: `{cell}` is not a number: it is how NumPy prints a scalar \
                     (its repr); write the number itself, `{x}` (convert with float(v) or \
                     v.item() before writing, or write the array with numpy.savetxt)"
                ),
                None => format!("column `{h}`: `{cell}` is not a number"),
            },
            CellError::NotFinite => {
                format!("column `{h}`: `{cell}` is not finite (write NA for a missing value)")
            }
        },
    }
}

/// The number inside a NumPy scalar's repr, `np.float64(1.5)` or `int64(3)` (what a CSV written
/// from a list of NumPy scalars with `str`/`repr` holds): `Some("1.5")`; `None` for anything else.
fn numpy_scalar(cell: &str) -> Option<&str> {
    let c = cell.trim();
    let (name, rest) = c.split_once('(')?;
    let inner = rest.strip_suffix(')')?.trim();
    let name = name
        .strip_prefix("np.")
        .or(name.strip_prefix("numpy."))
        .unwrap_or(name);
    let numpy = ["float", "int", "uint"].iter().any(|k| {
        name.strip_prefix(k)
            .is_some_and(|b| b.chars().all(|d| d.is_ascii_digit()))
    });
    (numpy && inner.parse::<f64>().is_ok()).then_some(inner)
}

/// The error of a row with `len` fields where the header has `expected`.
fn length_error(file: &str, line: usize, len: usize, expected: usize) -> DataError {
    DataError::Cell {
        file: file.into(),
        row: line,
        column: len.min(expected) + 1,
        message: format!("this row has {len} fields but the header has {expected}"),
    }
}

fn no_rows(file: &str) -> DataError {
    DataError::File {
        file: file.into(),
        message: "no data rows after the header".into(),
    }
}

/// The `csv` crate's reading: any valid CSV.
fn general(file: &str, text: &str, ignored: Ignored<'_>) -> Result<Parsed> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    let mut lines = Lines::new(text);
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| csv_error(file, &e, &mut lines))?
        .iter()
        .map(String::from)
        .collect();
    check_header(file, &header)?;
    let free = ignored(&header)?;
    let header_line = lines.record(0);
    let mut shifts = Shifts::default();
    let mut values = Vec::new();
    let mut present = Vec::new();
    let mut rows = 0;
    // One record reused for every row (no allocation per row).
    let mut record = csv::StringRecord::new();
    while reader
        .read_record(&mut record)
        .map_err(|e| csv_error(file, &e, &mut lines))?
    {
        let line = record
            .position()
            .map_or(rows + 1 + header_line, |p| lines.record(p.byte()));
        shifts.at(rows, line);
        for (c, cell) in record.iter().enumerate() {
            let v = match cell_value(cell) {
                Err(_) if free.get(c) == Some(&true) => None,
                v => v.map_err(|e| cell_error(file, &header, line, c + 1, cell, e))?,
            };
            values.push(v.unwrap_or(0.0));
            present.push(v.is_some());
        }
        rows += 1;
    }
    if rows == 0 {
        return Err(no_rows(file));
    }
    Ok((header, rows, values, present, shifts.list))
}

fn csv_error(file: &str, e: &csv::Error, lines: &mut Lines) -> DataError {
    let mut line = |pos: &Option<csv::Position>| pos.as_ref().map_or(0, |p| lines.record(p.byte()));
    match e.kind() {
        csv::ErrorKind::UnequalLengths {
            pos,
            expected_len,
            len,
        } => length_error(file, line(pos), *len as usize, *expected_len as usize),
        csv::ErrorKind::Utf8 { pos, .. } => DataError::Cell {
            file: file.into(),
            row: line(pos),
            column: 1,
            message: "invalid UTF-8".into(),
        },
        _ => DataError::File {
            file: file.into(),
            message: e.to_string(),
        },
    }
}

/// Bytes per block of lines parsed as one task (cut at the next line end).
const BLOCK_BYTES: usize = 1 << 20;

/// The next line of `text` from byte `at`: the line without its end, and where the next one
/// starts.
fn line_at(text: &str, at: usize) -> (&str, usize) {
    let end = memchr::memchr(b'\n', &text.as_bytes()[at..]).map_or(text.len(), |i| at + i);
    let line = &text[at..end];
    (line.strip_suffix('\r').unwrap_or(line), end + 1)
}

/// A line the `csv` crate skips: empty, or a comment.
fn skipped(line: &str) -> bool {
    line.is_empty() || line.starts_with('#')
}

/// One block's rows, or its first refused row, with lines counted from the block's start.
struct Block {
    rows: usize,
    values: Vec<f64>,
    present: Vec<bool>,
    /// (row, line) of the block's first row and of every row after a skipped line.
    lines: Vec<(usize, usize)>,
    problem: Option<(usize, Problem)>,
}

/// A refused row of a block.
enum Problem {
    Length(usize),
    Cell(usize, String, CellError),
}

/// The direct reading of plain text (see [`plain`]), in blocks of about `block_bytes`.
fn direct(file: &str, text: &str, block_bytes: usize, ignored: Ignored<'_>) -> Result<Parsed> {
    let bytes = text.as_bytes();
    // The header: the first line that is not skipped.
    let (mut at, mut line) = (0, 1);
    let mut header = Vec::new();
    while at < bytes.len() {
        let (first, next) = line_at(text, at);
        (at, line) = (next, line + 1);
        if !skipped(first) {
            header = first.split(',').map(|c| c.trim().to_string()).collect();
            break;
        }
    }
    check_header(file, &header)?;
    let free = ignored(&header)?;
    let cols = header.len();
    // Blocks of whole lines, cut where the data lie (not by thread count): the same blocks and
    // the same table on any number of threads.
    let mut cuts = vec![at.min(bytes.len())];
    while let Some(&last) = cuts.last().filter(|&&c| c < bytes.len()) {
        let end = (last + block_bytes.max(1)).min(bytes.len());
        let cut = memchr::memchr(b'\n', &bytes[end..]).map_or(bytes.len(), |i| end + i + 1);
        cuts.push(cut);
    }
    let blocks: Vec<(usize, Block)> = cuts
        .par_windows(2)
        .map(|w| {
            let part = &text[w[0]..w[1]];
            (
                memchr::memchr_iter(b'\n', part.as_bytes()).count(),
                block(part, cols, &free),
            )
        })
        .collect();
    let rows = blocks.iter().map(|b| b.1.rows).sum();
    let mut values = Vec::with_capacity(rows * cols);
    let mut present = Vec::with_capacity(rows * cols);
    let (mut shifts, mut before) = (Shifts::default(), 0);
    for (lines, b) in blocks {
        if let Some((l, p)) = b.problem {
            let l = line + l;
            return Err(match p {
                Problem::Length(len) => length_error(file, l, len, cols),
                Problem::Cell(c, cell, e) => cell_error(file, &header, l, c + 1, &cell, e),
            });
        }
        values.extend_from_slice(&b.values);
        present.extend_from_slice(&b.present);
        for &(r, l) in &b.lines {
            shifts.at(before + r, line + l);
        }
        before += b.rows;
        line += lines;
    }
    if rows == 0 {
        return Err(no_rows(file));
    }
    Ok((header, rows, values, present, shifts.list))
}

/// Parses the whole lines of `part` as rows of `cols` cells (a cell of a `free` column that is
/// not a number is missing).
fn block(part: &str, cols: usize, free: &[bool]) -> Block {
    let mut b = Block {
        rows: 0,
        values: Vec::with_capacity(part.len() / 8),
        present: Vec::with_capacity(part.len() / 8),
        lines: Vec::new(),
        problem: None,
    };
    let (mut at, mut line) = (0, 0);
    let mut after_skipped = true;
    while at < part.len() {
        let (text, next) = line_at(part, at);
        after_skipped |= skipped(text);
        if !skipped(text) {
            if after_skipped {
                b.lines.push((b.rows, line));
                after_skipped = false;
            }
            let mut fields = 0;
            for (c, cell) in text.split(',').enumerate() {
                fields += 1;
                if c >= cols {
                    continue;
                }
                let cell = cell.trim();
                match cell_value(cell) {
                    Ok(v) => {
                        b.values.push(v.unwrap_or(0.0));
                        b.present.push(v.is_some());
                    }
                    Err(_) if free.get(c) == Some(&true) => {
                        b.values.push(0.0);
                        b.present.push(false);
                    }
                    Err(e) => {
                        // A row of the wrong length is refused as such first, as the `csv`
                        // crate does (it reads the whole record before its cells are parsed).
                        let n = text.split(',').count();
                        let p = if n == cols {
                            Problem::Cell(c, cell.into(), e)
                        } else {
                            Problem::Length(n)
                        };
                        b.problem = Some((line, p));
                        return b;
                    }
                }
            }
            if fields != cols {
                b.problem = Some((line, Problem::Length(fields)));
                return b;
            }
            b.rows += 1;
        }
        (at, line) = (next, line + 1);
    }
    b
}

#[cfg(test)]
mod tests;
