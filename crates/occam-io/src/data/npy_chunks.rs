//! Rows of a `.npy` file read a block at a time (out-of-core fits): the header is parsed once,
//! then each block of rows is one seek and one read, so a file larger than memory (or than the
//! address space a process may map) is read through a buffer of one block.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::{data_file, npy::npy_data_start, Result};

/// A `.npy` file of little-endian float64 values, 1-D (one column) or 2-D in C order, read by
/// blocks of rows.
#[derive(Clone, Debug)]
pub struct NpyChunks {
    path: PathBuf,
    /// Rows of the array.
    pub rows: usize,
    /// Columns of the array (1 for a 1-D array).
    pub cols: usize,
    start: u64,
}

impl NpyChunks {
    /// Reads the header of `path` (its data are not read).
    pub fn open(path: &Path) -> Result<NpyChunks> {
        let io = |e: std::io::Error| data_file(path, format!("cannot read: {e}"));
        let mut f = File::open(path).map_err(io)?;
        let mut head = vec![0u8; 12];
        f.read_exact(&mut head).map_err(io)?;
        let start = npy_data_start(&head)
            .ok_or_else(|| data_file(path, "not a .npy file (version 1–3 header)".into()))?;
        head.resize(start, 0);
        f.read_exact(&mut head[12..]).map_err(io)?;
        let npy = npyz::NpyFile::new(&head[..])
            .map_err(|e| data_file(path, format!("not a .npy file: {e}")))?;
        if npy.dtype().descr() != "'<f8'" {
            return Err(data_file(
                path,
                format!(
                    "a file read in chunks must hold little-endian float64 ('<f8'), not {}",
                    npy.dtype().descr()
                ),
            ));
        }
        if matches!(npy.order(), npyz::Order::Fortran) {
            return Err(data_file(
                path,
                "a file read in chunks must be in C order (rows contiguous), not Fortran".into(),
            ));
        }
        let (rows, cols) = match npy.shape() {
            [n] => (*n as usize, 1),
            [r, c] => (*r as usize, *c as usize),
            s => {
                return Err(data_file(
                    path,
                    format!("a file read in chunks must have 1 or 2 dimensions, not {s:?}"),
                ))
            }
        };
        let len = f.metadata().map_err(io)?.len();
        let want = start as u64 + 8 * (rows as u64) * (cols as u64);
        if len != want {
            return Err(data_file(
                path,
                format!("the header declares {rows} × {cols} values ({want} bytes with it) but the file holds {len} bytes"),
            ));
        }
        Ok(NpyChunks {
            path: path.to_path_buf(),
            rows,
            cols,
            start: start as u64,
        })
    }

    /// Rows `from..to`, row-major (one seek and one read of 8·cols·(to − from) bytes).
    pub fn read(&self, from: usize, to: usize) -> Result<Vec<f64>> {
        let path = &self.path;
        if from > to || to > self.rows {
            return Err(data_file(
                path,
                format!("rows {from}..{to} of {}", self.rows),
            ));
        }
        let io = |e: std::io::Error| data_file(path, format!("cannot read: {e}"));
        let mut f = File::open(path).map_err(io)?;
        f.seek(SeekFrom::Start(self.start + 8 * (from * self.cols) as u64))
            .map_err(io)?;
        let mut bytes = vec![0u8; 8 * (to - from) * self.cols];
        f.read_exact(&mut bytes).map_err(io)?;
        Ok(bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect())
    }
}
