//! Winn §3.4.4's digits study on scikit-learn's 8×8 digits (`examples/digits/digits.npz`, the
//! fixed split): one mixture of Bayesian PCA per digit with its order found by the bound, against
//! ML mixtures of PPCA by EM on the same split. Prints both test errors and writes
//! `confusion_mbpca.svg`, `confusion_mppca.svg` and `digits.json` into the directory given:
//!
//! ```sh
//! cargo run --release -p occam-studies --example digits -- examples/digits
//! ```

use std::path::Path;

use occam::latent::mbpca::search::SearchOptions;
use occam::latent::mppca::EmOptions;
use occam_report::latent::figures::confusion_matrix;
use occam_studies::digits::{self, Digits};

fn main() -> occam::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "examples/digits".into());
    let dir = Path::new(&dir);
    let data = Digits::read(&dir.join("digits.npz"))?;
    println!(
        "{} training and {} test images of {} pixels",
        data.train.rows, data.test.rows, data.train.cols
    );
    let mut o = SearchOptions::new(data.train.cols - 1);
    o.max_k = 8;
    o.tries = 2;
    o.tol = 1e-6;
    let t0 = std::time::Instant::now();
    let bpca = digits::mixture_of_bpca(&data, &o)?;
    println!(
        "mixture of BPCA: test error {:.2} % ({:.0} s); components {:?}, effective dimensions {:?}",
        100.0 * bpca.error,
        t0.elapsed().as_secs_f64(),
        bpca.components,
        bpca.dimensions
    );
    let mut results = vec![bpca.clone()];
    for (k, q) in [(1, 10), (2, 10), (3, 10), (4, 6)] {
        let t0 = std::time::Instant::now();
        let ml = digits::mixture_of_ppca(&data, &EmOptions::new(k, q))?;
        println!(
            "ML mixture of PPCA, K = {k}, q = {q}: test error {:.2} % ({:.1} s)",
            100.0 * ml.error,
            t0.elapsed().as_secs_f64()
        );
        results.push(ml);
    }
    occam::atomic::ensure_dir(dir)?;
    occam::atomic::write(
        &dir.join("confusion_mbpca.svg"),
        confusion_matrix("Digits: mixture of Bayesian PCA", &bpca.confusion)?.as_bytes(),
    )?;
    let best_ml = results[1..]
        .iter()
        .min_by(|a, b| a.error.total_cmp(&b.error))
        .cloned()
        .unwrap_or_else(|| results[0].clone());
    occam::atomic::write(
        &dir.join("confusion_mppca.svg"),
        confusion_matrix("Digits: ML mixture of PPCA", &best_ml.confusion)?.as_bytes(),
    )?;
    let json = serde_json::to_string_pretty(&results)
        .map_err(|e| occam::Error::Run(format!("JSON: {e}")))?;
    occam::atomic::write(&dir.join("digits.json"), json.as_bytes())?;
    Ok(())
}
