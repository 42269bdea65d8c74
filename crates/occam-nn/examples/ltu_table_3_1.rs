//! Reproduces Table 3.1 of Lawrence's thesis (linear threshold units on Pima and crabs) over the
//! thesis's full grid and prints it; with a directory argument, also writes JSON/CSV/Markdown
//! there. Run with
//! `cargo run --release -p occam-nn --example ltu_table_3_1 [-- out_dir [inits [thesis|icm [seed]]]]`;
//! `icm` swaps the thesis's printed hidden-unit update for exact ICM.

use occam_nn::ltu::experiments::{table_3_1, Options};
use occam_nn::ltu::icm::UpdateRule;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut opts = Options::default();
    if let Some(inits) = args.get(1) {
        opts.inits = inits.parse()?;
    }
    match args.get(2).map(String::as_str) {
        None | Some("thesis") => {}
        Some("icm") => opts.protocol.inference.rule = UpdateRule::Icm,
        Some(other) => return Err(format!("unknown rule `{other}` (thesis or icm)").into()),
    }
    if let Some(seed) = args.get(3) {
        opts.seed = seed.parse()?;
    }
    let start = std::time::Instant::now();
    let table = table_3_1(&opts)?;
    println!("{}", table.to_markdown());
    for s in &table.summaries {
        println!(
            "{}: {} nets, test errors best {} / mean {:.2} ± {:.2} (out of {})",
            s.dataset,
            s.nets,
            s.best_test_errors,
            s.average_test_errors,
            s.sd_test_errors,
            s.n_test
        );
    }
    println!("elapsed {:.1} s", start.elapsed().as_secs_f64());
    if let Some(dir) = args.first() {
        table.write_dir(std::path::Path::new(dir))?;
        println!("written to {dir}");
    }
    Ok(())
}
