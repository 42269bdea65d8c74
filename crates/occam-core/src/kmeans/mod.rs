//! k-means clustering for initialising mixture indices: greedy k-means++ seeding (Arthur &
//! Vassilvitskii 2007, with 2 + ⌊ln k⌋ candidates per seed as in scikit-learn) followed by Lloyd
//! iterations until no point changes cluster.
//!
//! Plain k-means++ seeding alone often puts two seeds in one cluster and none in another; VMP then
//! starts from one component covering two clusters and two splitting one, a local optimum it
//! rarely leaves (and `compare` over K then picks the wrong K). The greedy choice and a few Lloyd
//! steps remove most of these starts at a cost of O(iterations · n · k · width).

mod elkan;
mod lloyd;
mod local_pca;
mod seeding;

pub use local_pca::{kmeans_steps, local_pca, LocalPca, LOCAL_PCA_STEPS};

use lloyd::lloyd;
use seeding::seeds;

/// The most Lloyd iterations run (they usually stop far earlier, when no label changes).
pub const MAX_LLOYD: usize = 100;

/// Labels in `0..k.min(n)` for the `n` rows of `x` (row-major, `width` values each), from seeds
/// drawn with `rng`. Ties go to the lower label. Deterministic given the generator's state.
pub fn kmeans(x: &[f64], n: usize, width: usize, k: usize, rng: &mut crate::Rng) -> Vec<usize> {
    assert_eq!(x.len(), n * width, "kmeans: data length");
    if n == 0 || k == 0 {
        return vec![0; n];
    }
    let k = k.min(n);
    let (centres, mut label, d2) = seeds(x, n, width, k, rng);
    lloyd(x, n, width, k, &centres, &mut label, &d2);
    label
}

#[cfg(test)]
mod tests;
