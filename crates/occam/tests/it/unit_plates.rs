//! Every example with each of its fixed-size plates shrunk to one element (a 1-D latent state, one
//! mixture component, one latent dimension) either fits or is an error that names its place: a
//! plate of size 1 is an ordinary plate, never a different model structure.

use std::path::{Path, PathBuf};

use occam::{DataSet, Error, Model, Settings};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every example model with the data its folder holds: `NAME.csv` beside it (read by
/// `Model::from_file`) or in a folder named after the model (`models/hmm_chain/y.csv`).
fn examples() -> Vec<(PathBuf, DataSet)> {
    let mut out = Vec::new();
    let mut dirs = vec![root().join("examples")];
    while let Some(dir) = dirs.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "occam") {
                let mut d = DataSet::new();
                let side = p.with_extension("");
                if side.is_dir() {
                    for f in std::fs::read_dir(&side).unwrap() {
                        let f = f.unwrap().path();
                        if f.extension().is_some_and(|e| e == "csv") {
                            let name = f.file_stem().unwrap().to_str().unwrap().to_string();
                            d.insert_file(&name, &f).unwrap();
                        }
                    }
                }
                out.push((p, d));
            }
        }
    }
    out
}

/// `plate NAME = SIZE` lines of a model (fixed sizes only), as (line index, name).
fn fixed_plates(text: &str) -> Vec<(usize, String)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let rest = l.trim_start().strip_prefix("plate ")?;
            let (name, size) = rest.split_once('=')?;
            let size = size.split('#').next()?.trim();
            (size.parse::<u64>().ok()? > 1).then(|| (i, name.trim().to_string()))
        })
        .collect()
}

#[test]
fn every_example_fits_or_names_its_error_with_any_plate_of_size_one() {
    let settings = Settings {
        max_iter: 40,
        ..Settings::default()
    };
    let mut fitted: Vec<String> = Vec::new();
    let mut tried = 0;
    for (path, data) in examples() {
        let text = std::fs::read_to_string(&path).unwrap();
        let dir = path.parent().unwrap();
        // Only models that load as shipped (some need data a test passes by hand).
        let Ok(model) = Model::from_file(&path, &data) else {
            continue;
        };
        drop(model);
        for (line, plate) in fixed_plates(&text) {
            let shrunk: String = text
                .lines()
                .enumerate()
                .map(|(i, l)| {
                    if i == line {
                        format!("plate {plate} = 1")
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("\n");
            let file = dir.join(format!(
                ".unit_{plate}_{}",
                path.file_name().unwrap().to_str().unwrap()
            ));
            std::fs::write(&file, &shrunk).unwrap();
            let got = Model::from_file(&file, &data).and_then(|m| m.fit(&settings));
            std::fs::remove_file(&file).unwrap();
            tried += 1;
            match got {
                Ok(f) => {
                    assert!(
                        f.bound().is_finite(),
                        "{} with {plate} = 1: bound {}",
                        path.display(),
                        f.bound()
                    );
                    let name = path.strip_prefix(root().join("examples")).unwrap();
                    fitted.push(format!("{} {plate}", name.display()));
                }
                Err(e @ Error::Run(_)) => {
                    panic!("{} with {plate} = 1: the run failed: {e}", path.display())
                }
                Err(e) => {
                    let text = e.to_string();
                    // Category labels beyond a shrunk category plate are refused where they are
                    // written: the data file, row and column (examples/iris_softmax, K = 1).
                    if text.contains("is not a category") {
                        assert!(text.contains(".csv:"), "{text}");
                        continue;
                    }
                    assert!(
                        text.contains(".unit_"),
                        "{} with {plate} = 1: an error naming no place: {text}",
                        path.display()
                    );
                    // The only refusals: data or a `concat` whose length a shrunk plate no longer
                    // matches, and a model shipped without its data.
                    assert!(
                        text.contains("has shape")
                            || text.contains("over an unnamed dimension of size")
                            || text.contains("is observed but no data is attached"),
                        "{} with {plate} = 1: {text}",
                        path.display()
                    );
                }
            }
        }
    }
    // 19 shrunk models in the examples as of this test; all of them fit.
    assert!(tried >= 19, "only {tried} shrunk models tried");
    assert!(fitted.len() >= 13, "{fitted:?}");
    // The local-level model: a 1-D latent state of a linear dynamical system (it was refused as
    // "parent `A` is in plate `D (size 1)`").
    assert!(
        fitted.contains(&"models/lds.occam D".to_string()),
        "{fitted:?}"
    );
}
