//! Rows of a CSV file read a block at a time (out-of-core fits, as [`super::NpyChunks`] for
//! `.npy`): one pass when opened finds the header and, every `chunk_rows` data rows, the byte and
//! line where a block starts (memory: two numbers per block); each block is then one seek and one
//! read of its bytes, parsed by the in-memory reader ([`super::parse_csv`]) after the header
//! line, so its cells mean what they mean in a whole-file read and every error names the file's
//! own line.
//!
//! Blocks are cut at line ends, so a quoted field (which may hold one) is refused: a chunked CSV
//! is a plain one, as every numeric program writes.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::csv_text::parse_csv_ignoring;
use super::select::positions;
use super::{data_file, DataError, Result, Table};

/// A CSV file with a header line, read by blocks of `chunk_rows` data rows.
#[derive(Clone, Debug)]
pub struct CsvChunks {
    path: PathBuf,
    /// Data rows (lines after the header that are neither empty nor comments).
    pub rows: usize,
    /// Columns (of the header).
    pub cols: usize,
    header: String,
    /// Each block's first byte and the file line (1-based) it is on, then the file's end.
    starts: Vec<(u64, usize)>,
}

/// Whether a line (without its end) is read as no row: empty or blank, or a `#` comment.
fn skipped(line: &[u8]) -> bool {
    let t = line.trim_ascii();
    t.is_empty() || t[0] == b'#'
}

impl CsvChunks {
    /// Reads `path` once to find its header and where every block of `chunk_rows` rows starts.
    pub fn open(path: &Path, chunk_rows: usize) -> Result<CsvChunks> {
        if chunk_rows == 0 {
            return Err(data_file(path, "chunks of 0 rows: give 1 or more".into()));
        }
        let io = |e: std::io::Error| data_file(path, format!("cannot read: {e}"));
        let file = path.display().to_string();
        let mut r = BufReader::new(File::open(path).map_err(io)?);
        let (mut at, mut line_no, mut rows) = (0u64, 0usize, 0usize);
        let mut header: Option<String> = None;
        let mut starts = Vec::new();
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = r.read_until(b'\n', &mut line).map_err(io)?;
            if n == 0 {
                break;
            }
            line_no += 1;
            let start = at;
            at += n as u64;
            let body = line.strip_suffix(b"\n").unwrap_or(&line);
            let body = body.strip_suffix(b"\r").unwrap_or(body);
            if let Some(col) = body.iter().position(|&b| b == b'"') {
                return Err(DataError::Cell {
                    file,
                    row: line_no,
                    column: 1 + body[..col].iter().filter(|&&b| b == b',').count(),
                    message: "a quoted field: a CSV read in chunks (--chunk-rows) is cut at \
                              line ends, so it must be plain (no quotes)"
                        .into(),
                });
            }
            if skipped(body) {
                continue;
            }
            if header.is_none() {
                let text = std::str::from_utf8(body).map_err(|_| DataError::Cell {
                    file: file.clone(),
                    row: line_no,
                    column: 1,
                    message: "the header is not UTF-8 text".into(),
                })?;
                header = Some(text.strip_prefix('\u{feff}').unwrap_or(text).to_string());
                continue;
            }
            if rows.is_multiple_of(chunk_rows) {
                starts.push((start, line_no));
            }
            rows += 1;
        }
        let header = header.ok_or_else(|| data_file(path, "no header line".into()))?;
        starts.push((at, line_no + 1));
        Ok(CsvChunks {
            path: path.to_path_buf(),
            rows,
            cols: header.split(',').count(),
            header,
            starts,
        })
    }

    /// The blocks.
    pub fn chunks(&self) -> usize {
        self.starts.len() - 1
    }

    /// Block `c` as a table named `name` (its rows' lines are the file's in every message).
    pub fn read(&self, name: &str, c: usize) -> Result<Table> {
        self.read_columns(name, c, None)
    }

    /// [`CsvChunks::read`] where only the columns `wanted` chooses (names, positions, ranges as
    /// `FILE:COLUMNS` writes them; `.1` is added to messages) must hold numbers: the others may
    /// hold text, read as missing cells, as a `--data FILE:COLUMNS` selection reads them.
    pub fn read_columns(
        &self,
        name: &str,
        c: usize,
        wanted: Option<(&[String], &str)>,
    ) -> Result<Table> {
        let path = &self.path;
        if c + 1 >= self.starts.len() {
            return Err(data_file(path, format!("block {c} of {}", self.chunks())));
        }
        let ((from, line), (to, _)) = (self.starts[c], self.starts[c + 1]);
        let size = usize::try_from(to - from)
            .map_err(|_| data_file(path, format!("block {c}: too many bytes")))?;
        let mut text = Vec::new();
        text.try_reserve_exact(self.header.len() + 1 + size)
            .map_err(|_| {
                data_file(
                    path,
                    format!(
                        "block {c} ({size} bytes) does not fit in memory: read fewer rows at a \
                         time (--chunk-rows)"
                    ),
                )
            })?;
        text.extend_from_slice(self.header.as_bytes());
        text.push(b'\n');
        let io = |e: std::io::Error| data_file(path, format!("cannot read: {e}"));
        let mut f = File::open(path).map_err(io)?;
        f.seek(SeekFrom::Start(from)).map_err(io)?;
        let got = f.take(size as u64).read_to_end(&mut text).map_err(io)?;
        if got != size {
            return Err(data_file(path, "the file changed while it was read".into()));
        }
        // The block's first row is on file line `line`, and on line 2 of the text parsed.
        let shift = line - 2;
        let file = path.display().to_string();
        let text = std::str::from_utf8(&text).map_err(|e| {
            let before = &text[..e.valid_up_to()];
            let lines = before.iter().filter(|&&b| b == b'\n').count();
            DataError::Cell {
                file: file.clone(),
                row: lines + 1 + shift,
                column: 1,
                message: "not UTF-8 text".into(),
            }
        })?;
        let ignored = |header: &[String]| -> Result<Vec<bool>> {
            let Some((wanted, context)) = wanted else {
                return Ok(Vec::new());
            };
            let mut free = vec![true; header.len()];
            for k in positions(&file, header, header.len(), wanted, context)? {
                free[k] = false;
            }
            Ok(free)
        };
        let mut t = parse_csv_ignoring(name, &file, text, &ignored).map_err(|e| match e {
            DataError::Cell {
                file,
                row,
                column,
                message,
            } => DataError::Cell {
                file,
                row: if row >= 2 { row + shift } else { row },
                column,
                message,
            },
            e => e,
        })?;
        // Row r of the block is on line r + 2 + (its shift in the block) + shift of the file.
        let mut shifts = vec![(0, shift)];
        for &(r, s) in &t.line_shifts {
            if r == 0 {
                shifts[0].1 = s + shift;
            } else {
                shifts.push((r, s + shift));
            }
        }
        t.line_shifts = if shift == 0 && t.line_shifts.is_empty() {
            Vec::new()
        } else {
            shifts
        };
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.csv");
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    #[test]
    fn blocks_are_the_whole_files_rows_and_errors_name_the_files_line() {
        let text = "# made by hand\na,b\n1,2\n3,4\n\n5,6\r\n# note\n7,8\n9,10\n";
        let (_d, p) = file(text);
        let whole = super::super::read("x", &p).unwrap();
        for rows in 1..=6 {
            let c = CsvChunks::open(&p, rows).unwrap();
            assert_eq!((c.rows, c.cols), (5, 2));
            assert_eq!(c.chunks(), 5usize.div_ceil(rows));
            let mut values = Vec::new();
            for k in 0..c.chunks() {
                let t = c.read("x", k).unwrap();
                // Every row's file line, as the whole file's table gives it.
                for r in 0..t.rows {
                    let at = k * rows + r;
                    assert_eq!(
                        t.position(r * 2).0,
                        whole.position(at * 2).0,
                        "{rows} {k} {r}"
                    );
                }
                values.extend(t.values.iter());
            }
            assert_eq!(values, whole.values);
        }
        let (_d, p) = file("a,b\n1,2\n3,4\n5,x\n");
        let c = CsvChunks::open(&p, 2).unwrap();
        let e = c.read("x", 1).unwrap_err().to_string();
        let whole = super::super::read("x", &p).unwrap_err().to_string();
        assert_eq!(e, whole);
        assert!(e.contains(":4:2:"), "{e}");
        let (_d, p) = file("a,b\n1,2\n\"3\",4\n");
        let e = CsvChunks::open(&p, 2).unwrap_err().to_string();
        assert!(e.contains(":3:1:") && e.contains("quoted"), "{e}");
        let (_d, p) = file("# nothing\n\n");
        let e = CsvChunks::open(&p, 2).unwrap_err().to_string();
        assert!(e.contains("no header"), "{e}");
    }
}
