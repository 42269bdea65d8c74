//! Minibatches of random rows for a stochastic fit over shards (the engine's `shard::minibatch`):
//! the rows a minibatch names (indices into all the shards' rows, shard 0's first) are gathered
//! from the shards' data tables, and the model is compiled on them. The pruning screen draws its
//! subsample through the same gathering ([`gather`] on one data set).

use crate::data::{DataSet, Table};

/// The data of `rows` (ascending indices into the concatenated rows of `data`, whose shard s
/// has `sizes[s]` rows along the data plate): every table of `sizes[s]` rows on every shard is
/// along the plate and gives the rows it holds, in order; any other table is taken from shard 0
/// as it is. (The shards' data were read and checked when they were compiled, so a minibatch's
/// rows raise no new data error.)
pub fn gather(data: &[DataSet], sizes: &[usize], rows: &[usize]) -> DataSet {
    let Some(first) = data.first() else {
        return DataSet::new();
    };
    // Each row's shard and its row within it (rows ascending, so one walk over the shards).
    let mut at = Vec::with_capacity(rows.len());
    let (mut s, mut start) = (0, 0);
    for &r in rows {
        while s + 1 < sizes.len() && r >= start + sizes[s] {
            start += sizes[s];
            s += 1;
        }
        at.push((s, r - start));
    }
    let tables = first
        .tables
        .iter()
        .map(|(name, t0)| {
            let along = data.iter().zip(sizes).all(|(d, &n)| {
                d.tables
                    .get(name)
                    .is_some_and(|t| t.rows == n && t.cols == t0.cols)
            });
            let t = if along {
                let cols = t0.cols;
                let mut values = Vec::with_capacity(at.len() * cols);
                let mut present = Vec::with_capacity(at.len() * cols);
                for &(s, r) in &at {
                    let t = &data[s].tables[name];
                    values.extend_from_slice(&t.values[r * cols..(r + 1) * cols]);
                    present.extend_from_slice(&t.present[r * cols..(r + 1) * cols]);
                }
                Table {
                    name: t0.name.clone(),
                    file: t0.file.clone(),
                    rows: at.len(),
                    cols,
                    values,
                    present,
                    header: t0.header.clone(),
                    csv: t0.csv,
                    line_shifts: Vec::new(),
                    source_columns: t0.source_columns.clone(),
                    source_rows: None,
                }
            } else {
                t0.clone()
            };
            (name.clone(), t)
        })
        .collect();
    DataSet { tables }
}
