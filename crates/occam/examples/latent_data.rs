//! Writes the data files of the latent-variable examples from their seeded generators
//! (`occam::latent::synth`), so every committed CSV can be regenerated:
//!
//! ```sh
//! cargo run -p occam --example latent_data -- examples
//! ```

use std::path::Path;

use occam::latent::synth::{self, Matrix};

fn write(dir: &Path, name: &str, prefix: &str, m: &Matrix) -> occam::Result<()> {
    let header: Vec<String> = (0..m.cols).map(|j| format!("{prefix}{j}")).collect();
    let text = occam::data::to_csv(&header, m.rows, &m.values);
    occam::atomic::write(&dir.join(name), text.as_bytes())
}

fn main() -> occam::Result<()> {
    let root = std::env::args().nth(1).unwrap_or_else(|| "examples".into());
    let root = Path::new(&root);
    write(&root.join("bpca"), "y.csv", "y", &synth::winn_ex31(300, 31))?;
    let (fa, _) = synth::factor_analysis(500, 8);
    write(&root.join("factor_analysis"), "y.csv", "y", &fa)?;
    let (x, y, _) = synth::ard_regression(200, 4);
    write(&root.join("ard_regression"), "X.csv", "x", &x)?;
    write(&root.join("ard_regression"), "y.csv", "y", &y)?;
    let toy = synth::ica_toy(200, 2, 3, 1e-4, 5);
    write(&root.join("ica"), "t.csv", "t", &toy.t)?;
    write(&root.join("ica"), "sources.csv", "s", &toy.sources)?;
    write(
        &root.join("mbpca"),
        "sinusoid.csv",
        "t",
        &synth::sinusoid(300, 0.05, 1),
    )?;
    write(
        &root.join("mbpca"),
        "sphere.csv",
        "t",
        &synth::sphere(600, 0.05, 3),
    )?;
    Ok(())
}
