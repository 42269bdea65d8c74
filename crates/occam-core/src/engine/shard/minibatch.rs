//! Random-row minibatches for stochastic VB (Hoffman, Blei, Wang & Paisley 2013, Figure 6: "sample
//! a data point uniformly", here |B| of them): each epoch is a seeded permutation of the N rows of
//! the data plate ([`EpochOrder`], the order every surface draws), cut into minibatches of
//! `batch_rows` rows, so every row is visited once per epoch (without replacement). A minibatch B
//! is then a uniform random subset of |B| rows, and its local messages scaled by N/|B| are an
//! unbiased estimate of every row's (their eq. (24)–(25)): E[(N/|B|) Σ_{i∈B} t_i] = Σ_i t_i,
//! for the last, smaller minibatch of an epoch too.
//!
//! The rows of a minibatch lie on any shards, so the engine asks the caller to compile the model
//! on them ([`MakeBatch`]: the facade gathers the rows from the shards' data). The minibatches
//! depend only on the seed and N, not on where the shards run, so a seed gives the same steps on
//! any number of workers or threads. (Another cut into shards starts elsewhere: the sharded start
//! takes the globals from shard 0's rows, [`Sharded::start`].)

use super::*;

/// Compiles the model on some rows of the data plate: `rows` index all the data (shard 0's rows
/// first, then shard 1's, …), ascending; the model's rows are those rows in that order.
pub type MakeBatch<'a> = dyn FnMut(&[usize]) -> Result<Vmp, RunError> + 'a;

impl EpochOrder {
    /// The next epoch's minibatches of rows, for an order over N rows ([`EpochOrder::new`] with
    /// N minibatches): the next permutation of 0..N cut, in its order, into minibatches of
    /// `batch` rows (the last may be smaller; at least 1 row each), each sorted ascending.
    pub fn next_minibatches(&mut self, batch: usize) -> Vec<Vec<usize>> {
        self.next_epoch()
            .chunks(batch.max(1))
            .map(|c| {
                let mut c = c.to_vec();
                c.sort_unstable();
                c
            })
            .collect()
    }
}

impl Sharded {
    /// The rows of the data plate over all the shards.
    pub fn total_rows(&self) -> usize {
        let plate = self.split.plate();
        self.shards.iter().map(|v| v.plate_size(plate)).sum()
    }

    /// One epoch of stochastic steps: each shard a minibatch in `order`'s next permutation of the
    /// shards (messages scaled by S), or, with `options.batch_rows` > 0, each minibatch of rows of
    /// `order`'s next permutation of the rows compiled by `make` (scaled by N/|B|, module docs).
    pub(super) fn svi_epoch(
        &mut self,
        svi: &mut Svi,
        order: &mut EpochOrder,
        batch_rows: usize,
        make: Option<&mut MakeBatch<'_>>,
    ) -> Result<(), RunError> {
        if batch_rows == 0 {
            let scale = self.shards.len() as f64;
            for &s in order.next_epoch() {
                svi.step(&mut self.shards[s], scale)?;
            }
            return Ok(());
        }
        let Some(make) = make else {
            return Err(RunError::Schedule(
                "minibatches of random rows need the model compiled on each minibatch's rows, \
                 which this surface does not do: use the shards as minibatches"
                    .into(),
            ));
        };
        let n = self.total_rows() as f64;
        for rows in order.next_minibatches(batch_rows) {
            let mut batch = make(&rows)?;
            svi.step(&mut batch, n / rows.len() as f64)?;
        }
        Ok(())
    }
}
