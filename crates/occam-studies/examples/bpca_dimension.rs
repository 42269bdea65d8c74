//! Winn Fig. 3.3: the effective dimension of Bayesian PCA against the number of data points,
//! averaged over 20 data sets per N (10-D, per-axis std 1.0, 0.9, …, 0.1). Writes
//! `dimension.svg` and `dimension.csv` into the directory given (default `.`):
//!
//! ```sh
//! cargo run --release -p occam-studies --example bpca_dimension -- examples/bpca
//! ```

use std::path::Path;

use occam_studies::bpca;

fn main() -> occam::Result<()> {
    let dir = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    let dir = Path::new(&dir);
    let ns = [40, 70, 100, 150, 200, 300, 400, 500, 700];
    let curve = bpca::dimension_curve(&ns, 20, 1000)?;
    let mut csv = String::from("n,mean_effective_dimension\n");
    for p in &curve {
        println!("N = {:4}: mean effective dimension {:.2}", p.n, p.mean);
        csv.push_str(&format!("{},{}\n", p.n, p.mean));
    }
    occam::atomic::ensure_dir(dir)?;
    occam::atomic::write(&dir.join("dimension.csv"), csv.as_bytes())?;
    occam::atomic::write(
        &dir.join("dimension.svg"),
        bpca::dimension_figure(&curve).as_bytes(),
    )?;
    Ok(())
}
