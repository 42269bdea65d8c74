//! Rows of a `.npy` file read a block at a time (out-of-core fits): the header is parsed once,
//! then each block of rows is one seek and one read, so a file larger than memory (or than the
//! address space a process may map) is read through a buffer of one block.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::npy::{data_bytes, declared_shape, npy_data_start};
use super::{data_file, Result};

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
        let len = f.metadata().map_err(io)?.len();
        if start < 12 || start as u64 > len {
            return Err(data_file(
                path,
                format!("not a .npy file: its header ends at byte {start} of {len}"),
            ));
        }
        head.resize(start, 0);
        f.read_exact(&mut head[12..]).map_err(io)?;
        // npyz multiplies the dimensions unchecked: a shape whose byte count overflows is
        // refused before it reads them.
        if let Some(dims) = declared_shape(&head).filter(|d| data_bytes(d, 8).is_none()) {
            return Err(data_file(
                path,
                format!("the header declares shape {dims:?}, more than 2^64 bytes"),
            ));
        }
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
        let want =
            data_bytes(&[rows as u64, cols as u64], 8).and_then(|v| v.checked_add(start as u64));
        if want != Some(len) {
            let want = want.map_or("more than 2^64".to_string(), |w| w.to_string());
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
        // The block's size comes from the caller's rows per chunk (`--chunk-rows`): refuse one
        // that memory cannot hold instead of aborting.
        let size = (to - from)
            .checked_mul(self.cols)
            .and_then(|v| v.checked_mul(8))
            .ok_or_else(|| data_file(path, format!("rows {from}..{to}: too many bytes")))?;
        let mut bytes = Vec::new();
        bytes.try_reserve_exact(size).map_err(|_| {
            data_file(
                path,
                format!(
                    "rows {from}..{to} ({size} bytes) do not fit in memory: read fewer rows at a \
                     time (--chunk-rows)"
                ),
            )
        })?;
        bytes.resize(size, 0);
        let io = |e: std::io::Error| data_file(path, format!("cannot read: {e}"));
        let mut f = File::open(path).map_err(io)?;
        f.seek(SeekFrom::Start(self.start + 8 * (from * self.cols) as u64))
            .map_err(io)?;
        f.read_exact(&mut bytes).map_err(io)?;
        Ok(bytes
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.npy");
        std::fs::write(&p, bytes).unwrap();
        (dir, p)
    }

    #[test]
    fn malformed_headers_and_sizes_are_located_errors() {
        // A version-1 header whose length field ends it before byte 12.
        let mut short = b"\x93NUMPY\x01\x00\x01\x00".to_vec();
        short.extend_from_slice(&[b' '; 8]);
        let (_d, p) = file(&short);
        let e = NpyChunks::open(&p).unwrap_err().to_string();
        assert!(e.contains("header ends at byte 11"), "{e}");
        // A version-2 header longer than the file.
        let mut long = b"\x93NUMPY\x02\x00\xff\xff\xff\x7f".to_vec();
        long.extend_from_slice(&[b' '; 8]);
        let (_d, p) = file(&long);
        let e = NpyChunks::open(&p).unwrap_err().to_string();
        assert!(e.contains("of 20"), "{e}");
        // A shape whose byte count overflows.
        let header =
            "{'descr': '<f8', 'fortran_order': False, 'shape': (18446744073709551615, 4), }";
        let mut huge = b"\x93NUMPY\x01\x00".to_vec();
        let pad = (64 - (10 + header.len() + 1) % 64) % 64;
        let text = format!("{header}{}\n", " ".repeat(pad));
        huge.extend_from_slice(&(text.len() as u16).to_le_bytes());
        huge.extend_from_slice(text.as_bytes());
        let (_d, p) = file(&huge);
        let e = NpyChunks::open(&p).unwrap_err().to_string();
        assert!(e.contains("more than 2^64"), "{e}");
    }

    #[test]
    fn a_block_larger_than_memory_is_refused_naming_the_flag() {
        let chunks = NpyChunks {
            path: PathBuf::from("x.npy"),
            rows: usize::MAX / 16,
            cols: 1,
            start: 128,
        };
        let e = chunks.read(0, usize::MAX / 16).unwrap_err().to_string();
        assert!(e.contains("--chunk-rows"), "{e}");
    }
}
