//! A table written as a Parquet file (every column DOUBLE, optional where a cell is missing, a null
//! there; snappy-compressed), in row groups of a given size, through the atomic writer: the files
//! [`super::ParquetChunks`] reads, for tests, benchmarks and shard files made from a table.

use std::path::Path;
use std::sync::Arc;

use parquet::basic::{Compression, Repetition, Type as Physical};
use parquet::data_type::DoubleType;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

use super::{data_file, DataError, Result, Table};

/// Writes `t` to `path` as Parquet, `group_rows` rows per row group (at least 1); its columns are
/// named by its header, else `c1`, `c2`, ….
pub fn write_parquet(path: &Path, t: &Table, group_rows: usize) -> Result<()> {
    let bad = |e: parquet::errors::ParquetError| data_file(path, format!("cannot write: {e}"));
    let cols = t.cols;
    let name = |c: usize| {
        t.header
            .as_ref()
            .and_then(|h| h.get(c).cloned())
            .unwrap_or_else(|| format!("c{}", c + 1))
    };
    let missing = |c: usize| (0..t.rows).any(|r| !t.present[r * cols + c]);
    let fields = (0..cols)
        .map(|c| {
            let repetition = if missing(c) {
                Repetition::OPTIONAL
            } else {
                Repetition::REQUIRED
            };
            Type::primitive_type_builder(&name(c), Physical::DOUBLE)
                .with_repetition(repetition)
                .build()
                .map(Arc::new)
        })
        .collect::<parquet::errors::Result<Vec<_>>>()
        .map_err(bad)?;
    let schema = Type::group_type_builder("table")
        .with_fields(fields)
        .build()
        .map_err(bad)?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .build();
    let mut bytes = Vec::new();
    let mut w =
        SerializedFileWriter::new(&mut bytes, Arc::new(schema), Arc::new(props)).map_err(bad)?;
    let step = group_rows.max(1);
    for from in (0..t.rows).step_by(step) {
        let to = (from + step).min(t.rows);
        let mut group = w.next_row_group().map_err(bad)?;
        let mut c = 0;
        while let Some(mut col) = group.next_column().map_err(bad)? {
            let (mut vals, mut defs) = (Vec::new(), Vec::new());
            for r in from..to {
                let i = r * cols + c;
                defs.push(i16::from(t.present[i]));
                if t.present[i] {
                    vals.push(t.values[i]);
                }
            }
            let defs = missing(c).then_some(&defs[..]);
            col.typed::<DoubleType>()
                .write_batch(&vals, defs, None)
                .map_err(bad)?;
            col.close().map_err(bad)?;
            c += 1;
        }
        group.close().map_err(bad)?;
    }
    w.close().map_err(bad)?;
    crate::write(path, &bytes).map_err(|e| DataError::io(path, e))
}
