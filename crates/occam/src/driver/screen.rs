//! The pruning screen of a large fit (the engine's `prune::screen`): the model compiled again on
//! a seeded random subsample of its data plate's rows, cut into [`SCREEN_BATCHES`] shards, and
//! attached to the compiled model before the run ([`occam_core::engine::Vmp::set_prune_screen`]),
//! so that the pruning stage tries in full only the deletions the subsample cannot reject.

use rand::SeedableRng;

use crate::lower::Compiled;
use crate::model::{load_source, Loaded};

use super::Settings;

/// The default smallest data plate (rows N) screened ([`Settings::prune_screen_from`]): below it
/// every deletion gets its full trial, as before the screen (every golden and fixture is smaller).
pub const PRUNE_SCREEN_FROM: usize = 100_000;

/// The most rows of the subsample: m = min(N/10, `SCREEN_ROWS`). At N = 10⁶ a screened sweep
/// costs about 1% of a full one, and a deletion of a real cluster lies tens of standard errors
/// below acceptance (bench/results/prune_screen_*).
pub const SCREEN_ROWS: usize = 10_000;

/// Shards of the subsample: the batches its standard error is estimated from.
pub const SCREEN_BATCHES: usize = 8;

/// Seed offset of the subsample's draw (from the fit's seed), apart from the restarts' seeds.
const SCREEN_SEED: u64 = 0x5C4E_E11E_D5EE_D000;

/// Attaches the pruning screen to `c` when the fit prunes a mixture along a data plate of at least
/// `s.prune_screen_from` rows. The rows are drawn from `s.seed` alone (the same subsample for any
/// thread count). A model that cannot be compiled or split on the subsample (a plate size not set
/// by the data, a global that reads the rows one by one) is left without a screen: every deletion
/// then gets its full trial.
pub(super) fn attach(loaded: &Loaded, c: &mut Compiled, s: &Settings) {
    c.vmp.clear_prune_screen();
    if !s.prune || !c.has_mixture {
        return;
    }
    let Ok(split) = c.vmp.split(None) else {
        return;
    };
    let n = c.vmp.plate_size(split.plate());
    if n < s.prune_screen_from.max(10 * SCREEN_BATCHES) {
        return;
    }
    let m = (n / 10).min(SCREEN_ROWS);
    let mut rng = occam_core::Rng::seed_from_u64(s.seed ^ SCREEN_SEED);
    let mut rows = rand::seq::index::sample(&mut rng, n, m).into_vec();
    let along = crate::minibatch::along_plate(loaded, split.plate());
    let mut shards = Vec::with_capacity(SCREEN_BATCHES);
    for batch in rows.chunks_mut(m.div_ceil(SCREEN_BATCHES)) {
        batch.sort_unstable();
        let data =
            crate::minibatch::gather(std::slice::from_ref(&loaded.data), &[n], batch, &along);
        let Ok(sub) = load_source(
            &loaded.path,
            loaded.file_name.clone(),
            loaded.source.clone(),
            None,
            &data,
        ) else {
            return;
        };
        let Ok(compiled) = sub.compile(true) else {
            return;
        };
        shards.push(compiled.vmp);
    }
    // A mismatch (the shards are not this model on fewer rows) leaves the fit unscreened.
    let _ = c.vmp.set_prune_screen(shards);
}
