//! Prints every reproduced table (measured next to the documents' numbers) and writes CSV/JSON.
//!
//! `cargo run --release -p occam-nn --example reproduce -- [quick|full] [OUT_DIR] [TABLE...]`
//! with TABLE among toy, sunspots, tecator, t51, t52, t61, t62, protocols (default:
//! all; `protocols` is the sunspot protocol study of `repro::sunspot_protocols`).

use occam_nn::repro::{
    sine_toy, sunspots, tecator, thesis_table5, thesis_table6, Options, ThesisData,
};
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let full = args.first().map(|a| a == "full").unwrap_or(false);
    let out = PathBuf::from(
        args.get(1)
            .cloned()
            .unwrap_or_else(|| "target/occam-nn-repro".into()),
    );
    let wanted: Vec<&str> = args.iter().skip(2).map(String::as_str).collect();
    let opts = Options {
        full,
        ..Default::default()
    };
    let all = [
        "toy",
        "sunspots",
        "tecator",
        "t51",
        "t52",
        "t61",
        "t62",
        "protocols",
        "protocols-trainz",
    ];
    for name in all {
        if !wanted.is_empty() && !wanted.contains(&name) {
            continue;
        }
        if wanted.is_empty() && name == "protocols-trainz" {
            continue; // a part of `protocols`, only on request
        }
        let t0 = std::time::Instant::now();
        if name == "protocols" || name == "protocols-trainz" {
            // One part per scaling, each printed and written as soon as it is done
            // (`protocols-trainz`: the training-years z-score only).
            let parts = if name == "protocols" { 3 } else { 1 };
            for (scaling, label) in occam_nn::repro::STUDY_SCALINGS.into_iter().take(parts) {
                match occam_nn::repro::sunspot_protocol_part(&opts, scaling) {
                    Ok(mut t) => {
                        t.name = format!("sunspot_protocols_{scaling:?}").to_lowercase();
                        println!(
                            "[{label}] {}  ({:.1} s)\n",
                            t.to_text(),
                            t0.elapsed().as_secs_f64()
                        );
                        if let Err(e) = t.write(&out) {
                            eprintln!("{e}");
                        }
                    }
                    Err(e) => eprintln!("protocols [{label}]: {e}"),
                }
            }
            continue;
        }
        let table = match name {
            "toy" => sine_toy(&opts),
            "sunspots" => sunspots(&opts),
            "tecator" => tecator(&opts),
            "t51" => thesis_table5(&opts, ThesisData::Sunspots),
            "t52" => thesis_table5(&opts, ThesisData::Tecator),
            "t61" => thesis_table6(&opts, ThesisData::Sunspots),
            _ => thesis_table6(&opts, ThesisData::Tecator),
        };
        match table {
            Ok(t) => {
                println!("{}  ({:.1} s)\n", t.to_text(), t0.elapsed().as_secs_f64());
                if let Err(e) = t.write(&out) {
                    eprintln!("{e}");
                }
            }
            Err(e) => eprintln!("{name}: {e}"),
        }
    }
}
