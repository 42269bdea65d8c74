//! Minibatches of random rows for a stochastic fit over shards (the engine's `shard::minibatch`):
//! the rows a minibatch names (indices into all the shards' rows, shard 0's first) are gathered
//! from the shards' data tables, and the model is compiled on them. The pruning screen draws its
//! subsample through the same gathering ([`gather`] on one data set).
//!
//! Which tables are cut by rows is the model's to say ([`along_plate`]: the data of the variables
//! whose outermost plate is the data plate), not the tables' row counts: a table of another plate
//! (prior means over K components) may have as many rows as a shard by coincidence.

use crate::data::{DataSet, Table};
use crate::model::Loaded;

/// The names of the data tables along `plate` in `loaded`'s model: those of the variables
/// (observed, or data inputs) whose outermost plate is `plate`, the tables a shard holds some
/// rows of. Sorted.
pub fn along_plate(loaded: &Loaded, plate: &str) -> Vec<String> {
    let m = &loaded.model;
    let mut out: Vec<String> = m
        .variables
        .iter()
        .filter(|v| v.plates.first().is_some_and(|&p| m.plates[p].name == plate))
        .filter(|v| loaded.data.tables.contains_key(&v.name))
        .map(|v| v.name.clone())
        .collect();
    out.sort();
    out
}

/// Checks that every table in `along` has the same number of lines per row of the plate in every
/// shard (1, or a chain's steps per sequence): a minibatch cuts each row as that many lines, so
/// shards whose chains have different lengths cannot be mixed into one minibatch. The error
/// names the table and the two shards.
pub fn same_lines_per_row(
    data: &[DataSet],
    sizes: &[usize],
    along: &[String],
) -> std::result::Result<(), String> {
    for name in along {
        let mut first: Option<(usize, usize)> = None;
        for (s, (d, &n)) in data.iter().zip(sizes).enumerate() {
            let Some(t) = d.tables.get(name) else {
                continue;
            };
            if n == 0 {
                continue;
            }
            let per = t.rows / n;
            match first {
                None => first = Some((s, per)),
                Some((s0, p0)) if p0 != per => {
                    return Err(format!(
                        "`{name}` has {p0} lines per row in shard {} and {per} in shard {}: \
                         random-row minibatches need the same lines per row (chain length) in \
                         every shard",
                        s0 + 1,
                        s + 1
                    ))
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// The data of `rows` (ascending indices into the concatenated rows of `data`, whose shard s
/// has `sizes[s]` rows along the data plate): every table named in `along` ([`along_plate`])
/// gives the rows it holds, in order (a table with k lines per element of the plate, k lines
/// per row); any other table is taken from shard 0 as it is. (The shards' data were read and
/// checked when they were compiled, so a minibatch's rows raise no new data error.)
pub fn gather(data: &[DataSet], sizes: &[usize], rows: &[usize], along: &[String]) -> DataSet {
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
            // Lines per row of the plate (1, or a chain's steps per sequence), from shard 0.
            let per = match sizes.first() {
                Some(&n) if n > 0 && t0.rows % n == 0 => t0.rows / n,
                _ => 1,
            };
            let t = if along.contains(name) {
                let cols = t0.cols;
                let w = per * cols;
                let mut values = Vec::with_capacity(at.len() * w);
                let mut present = Vec::with_capacity(at.len() * w);
                for &(s, r) in &at {
                    let t = &data[s].tables[name];
                    values.extend_from_slice(&t.values[r * w..(r + 1) * w]);
                    present.extend_from_slice(&t.present[r * w..(r + 1) * w]);
                }
                Table {
                    name: t0.name.clone(),
                    file: t0.file.clone(),
                    rows: at.len() * per,
                    cols,
                    values: values.into(),
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
