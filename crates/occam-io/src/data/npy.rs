//! `.npy` and `.npz` arrays: the header's shape checked against the data before anything is
//! allocated, every numeric element type read as f64, NaN a missing cell.

use std::path::Path;

use super::{data_file, DataError, Result, Table, MAX_DATA_BYTES};

/// An array of a `.npz` archive: the one named like the data, or its only array.
/// Reads the array of a `.npz` named `name`, or the only one; a name in `columns` (a
/// `--data x=FILE.npz:KEY` selection) that is one of the file's arrays is read instead, and its
/// place in `columns` returned (it is not a column).
pub(super) fn from_npz(
    name: &str,
    path: &Path,
    columns: Option<&[String]>,
) -> Result<(Table, Option<usize>)> {
    let file = std::fs::File::open(path).map_err(|e| DataError::io(path, e))?;
    let mut archive = zip::ZipArchive::new(std::io::BufReader::new(file))
        .map_err(|e| data_file(path, format!("not a .npz file: {e}")))?;
    // Sorted: the archive lists its entries in hash order, and messages list them.
    let mut names: Vec<String> = archive
        .file_names()
        .filter_map(|n| n.strip_suffix(".npy"))
        .map(String::from)
        .collect();
    names.sort();
    let chosen = columns.and_then(|c| {
        c.iter()
            .position(|w| names.iter().any(|n| n == w.trim()))
            .map(|i| (i, c[i].trim().to_string()))
    });
    let key = if let Some((_, k)) = &chosen {
        k.clone()
    } else if names.iter().any(|n| n == name) {
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
    Ok((from_npy_bytes(name, path, &bytes)?, chosen.map(|(i, _)| i)))
}

/// Where the data of a `.npy` file start: after the magic string, version, header length and
/// header (format versions 1, 2 and 3).
pub(super) fn npy_data_start(bytes: &[u8]) -> Option<usize> {
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
pub(super) fn declared_shape(bytes: &[u8]) -> Option<Vec<u64>> {
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

/// The bytes of an array of shape `dims` with `item` bytes per value, `None` past 2^64 (npyz
/// multiplies the declared dimensions without checking).
pub(super) fn data_bytes(dims: &[u64], item: u64) -> Option<u64> {
    dims.iter().try_fold(item, |a, &d| a.checked_mul(d))
}

/// Reads a `.npy` image held in memory, checking that its declared shape matches its data
/// exactly (no silent truncation of trailing bytes, no overflowing or short shapes).
pub(super) fn from_npy_bytes(name: &str, path: &Path, bytes: &[u8]) -> Result<Table> {
    // npyz multiplies the declared dimensions without checking for overflow: look first.
    if let Some(dims) = declared_shape(bytes) {
        let fits = data_bytes(&dims, 16).is_some_and(|b| b <= MAX_DATA_BYTES);
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
            return Err(DataError::Cell {
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
        values: values.into(),
        present,
        header: None,
        csv: false,
        line_shifts: Vec::new(),
        source_columns: None,
        source_rows: None,
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
