//! Stochastic VB over minibatches of random rows (`occam_core::engine` `shard::minibatch`, the
//! facade's `occam::shard::fit_shards` gathering each minibatch from the shards' data): on a 2-D
//! mixture the posterior means reach the batch fit's to 1e-2; a seed gives the same run on any
//! thread count; bad requests are refused.

use occam::shard::{fit_shards, Method, ShardRunOptions, ShardedFitted, SviOptions};
use occam::DataSet;
use occam_core::engine::EpochOrder;

use super::shards::{gmm_data, rows, uneven, GMM};

/// The mixture data `x` cut into shards of `sizes` consecutive rows.
fn shard_data(x: &[f64], sizes: &[usize]) -> Vec<DataSet> {
    let mut from = 0;
    sizes
        .iter()
        .map(|&s| {
            from += s;
            rows(&[("x", 2, x)], from - s, from)
        })
        .collect()
}

/// The fit from seed `seed` (a stochastic fit's minibatch order is drawn from it too).
fn fit(x: &[f64], sizes: &[usize], method: Method, max_iter: usize, seed: u64) -> ShardedFitted {
    let o = ShardRunOptions {
        method,
        seed,
        restarts: 1,
        max_iter,
        tol: if matches!(method, Method::Batch) {
            1e-10
        } else {
            0.0
        },
        decrease_is_error: false,
    };
    fit_shards("gmm.occam", GMM, &shard_data(x, sizes), None, &o, &mut ()).unwrap()
}

/// ⟨mu_k⟩ (D = 2; moments [m, m mᵀ + Σ] per component), sorted by the first coordinate.
fn means(f: &ShardedFitted) -> Vec<[f64; 2]> {
    let u = f.shards[0].moments("mu").unwrap();
    let mut out: Vec<[f64; 2]> = u.chunks(6).map(|c| [c[0], c[1]]).collect();
    out.sort_by(|a, b| a[0].total_cmp(&b[0]));
    out
}

fn svi(batch_rows: usize) -> Method {
    Method::Stochastic(SviOptions {
        kappa: 0.6,
        tau: 1.0,
        seed: 0, // not read: `Sharded::fit` draws the order from the fit's seed

        bound_every: 10,
        batch_rows,
    })
}

#[test]
fn an_epoch_visits_every_row_once_in_minibatches_drawn_from_the_seed() {
    let mut a = EpochOrder::new(3, 103);
    let mut b = EpochOrder::new(3, 103);
    let first = a.next_minibatches(10);
    assert_eq!(first.len(), 11);
    assert!(first[..10].iter().all(|m| m.len() == 10) && first[10].len() == 3);
    assert!(first.iter().all(|m| m.windows(2).all(|w| w[0] < w[1])));
    let mut all: Vec<usize> = first.concat();
    all.sort_unstable();
    assert_eq!(all, (0..103).collect::<Vec<_>>());
    let second = a.next_minibatches(10);
    assert_ne!(first, second);
    assert_eq!(b.next_minibatches(10), first);
    assert_eq!(b.next_minibatches(10), second);
    assert_ne!(EpochOrder::new(4, 103).next_minibatches(10), first);
}

#[test]
fn random_row_minibatches_reach_the_batch_posterior_means_on_any_thread_count() {
    let n = 3000;
    let x = gmm_data(n, 7);
    let sizes = uneven(n, &[3, 1, 2, 4, 1, 2, 3, 1, 2, 1]);
    let batch = fit(&x, &sizes, Method::Batch, 1000, 0);
    assert!(batch.converged);
    // 100 epochs of 6 minibatches of 500 random rows: 600 steps.
    let s = fit(&x, &sizes, svi(500), 100, 0);
    assert_eq!(s.steps, 600);
    assert_eq!(s.epochs, (1..=10).map(|e| 10 * e).collect::<Vec<_>>());
    let (mb, ms) = (means(&batch), means(&s));
    for (p, q) in mb.iter().zip(&ms) {
        for d in 0..2 {
            assert!((p[d] - q[d]).abs() <= 1e-2, "batch {mb:?} vs svi {ms:?}");
        }
    }
    // The full bound at the stochastic globals is a bound at a q: below the batch optimum's
    // and close to it.
    let (lb, ls) = (
        *batch.bound_trace.last().unwrap(),
        *s.bound_trace.last().unwrap(),
    );
    assert!(ls <= lb + 1e-9 * lb.abs(), "svi {ls} above batch {lb}");
    assert!(lb - ls <= 1e-4 * lb.abs(), "svi {ls} vs batch {lb}");
    // The same seed on 1 thread or 2: the same run, to the bit.
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let again = pool.install(|| fit(&x, &sizes, svi(500), 100, 0));
        assert_eq!(means(&again), ms, "{threads} threads");
        assert_eq!(again.bound_trace, s.bound_trace, "{threads} threads");
    }
    // Another seed: other minibatches, another run.
    let other = fit(&x, &sizes, svi(500), 100, 1);
    assert_ne!(other.bound_trace, s.bound_trace);
}

#[test]
fn random_rows_on_a_file_read_in_chunks_are_refused() {
    let dir = std::env::temp_dir().join(format!("occam-minibatch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("x.csv");
    std::fs::write(&path, "a,b\n1,2\n3,4\n").unwrap();
    let o = ShardRunOptions {
        method: svi(1),
        seed: 0,
        restarts: 1,
        max_iter: 3,
        tol: 0.0,
        decrease_is_error: false,
    };
    let err = occam::stream::fit_stream("gmm.occam", GMM, "x", &path, 1, &o, &mut ())
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("--batch-rows") && err.contains("--shards"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The mixture with its components' prior means as data `m0` (K rows, not along the data plate).
const GMM_M0: &str = "\
plate K = 3
plates N, D from data x
data m0[K] over D
pi ~ Dirichlet(1) over K
z[N] ~ Categorical(pi)
mu[K] over D ~ MvGaussian(mean = m0, precision = identity * 1e-2)
Lambda[K] over D ~ Wishart(dof = 3, rate = identity * 1)
x[N] over D ~ MvGaussian(mean = mu[z], precision = Lambda[z])
";

#[test]
fn a_table_with_as_many_rows_as_a_shard_but_another_plate_is_not_cut_into_minibatches() {
    // Shards of 3 rows and m0 of K = 3 rows: the row counts agree, the plates do not. A
    // minibatch of 4 rows must keep m0 whole (it was cut to 4 rows: a shape error).
    let (n, sizes) = (30, vec![3; 10]);
    let x = gmm_data(n, 11);
    let zeros = vec![0.0; 6];
    let with_m0: Vec<DataSet> = shard_data(&x, &sizes)
        .into_iter()
        .map(|mut d| {
            d.insert_array("m0", 3, 2, zeros.clone(), None).unwrap();
            d
        })
        .collect();
    let o = ShardRunOptions {
        method: svi(4),
        seed: 3,
        restarts: 1,
        max_iter: 5,
        tol: 0.0,
        decrease_is_error: false,
    };
    let a = fit_shards("gmm.occam", GMM_M0, &with_m0, None, &o, &mut ()).unwrap();
    assert_eq!(a.steps, 5 * 8);
    // The same run as the mixture whose prior mean is the constant 0.
    let b = fit_shards("gmm.occam", GMM, &shard_data(&x, &sizes), None, &o, &mut ()).unwrap();
    assert_eq!(a.bound_trace.len(), b.bound_trace.len());
    for (p, q) in a.bound_trace.iter().zip(&b.bound_trace) {
        assert!((p - q).abs() <= 1e-12 * q.abs(), "m0 = 0: {p} vs 0: {q}");
    }
    assert_eq!(means(&a), means(&b));
    // The data plate's tables are the model's to say.
    let shard = occam::shard::Shard::new("gmm.occam", GMM_M0, &with_m0[0], None).unwrap();
    assert_eq!(shard.along_plate(), vec!["x".to_string()]);
}
