//! The fuzz harness of the library (stable Rust, proptest): mutated model files fitted with data,
//! mutated CSV, `.npy` and `.npz` data files, mutated `.fg` factor graphs and SBN network files,
//! and arbitrary run settings. Every input either works or is an error that names its place (the
//! file, `file:line:column`, or the setting); nothing panics.
//!
//! Bounded by default (the whole file runs in seconds in a debug build). For a longer local run,
//! set `OCCAM_FUZZ_CASES` (cases per property; CI uses the default 48):
//!
//! ```text
//! OCCAM_FUZZ_CASES=20000 cargo test -p occam --test it fuzz::
//! ```
//!
//! A failure prints the shrunk input; proptest records it under `tests/fuzz.proptest-regressions`
//! so that it is tried first from then on.

#[path = "../../../occam-lang/tests/support/fuzz_config.rs"]
mod fuzz_config;

use std::io::Write as _;

use occam::{DataSet, Error, Model, Settings};
use occam_report::ModelReport;
use proptest::prelude::*;

const MODELS: &[&str] = &[
    include_str!("../../../../examples/models/quickstart.occam"),
    include_str!("../../../../examples/models/gmm1d.occam"),
    include_str!("../../../../examples/models/regression.occam"),
    include_str!("../../../../examples/vibes_tutorial/mixture.occam"),
];

/// Fragments spliced into model text and data files.
const WORDS: &[&str] = &[
    "plate",
    "plates",
    "from",
    "data",
    "observe",
    "over",
    "init",
    "map",
    "y",
    "x",
    "mu",
    "tau",
    "N",
    "D",
    "K",
    "Gaussian",
    "Gamma",
    "Dirichlet",
    "Categorical",
    "MvGaussian",
    "Wishart",
    "GaussianARD",
    "dot",
    "identity",
    "(",
    ")",
    "[",
    "]",
    ",",
    "=",
    "~",
    "+",
    "*",
    "@",
    "\n",
    "#",
    "0",
    "1",
    "-1",
    "1e-308",
    "1e308",
    "1e999",
    "NaN",
    "inf",
    "1000000000000",
    "2.5",
    "\u{feff}",
    "\u{0}",
    "é",
    "\"",
    "NA",
    "",
];

/// Mutates `base`: each edit deletes up to 3 characters at a position and inserts a fragment.
fn mutate(base: &str, edits: &[(usize, usize, &str)]) -> String {
    let mut s: Vec<char> = base.chars().collect();
    for (pos, del, ins) in edits {
        let at = pos % (s.len() + 1);
        let end = (at + del).min(s.len());
        s.splice(at..end, ins.chars());
    }
    s.into_iter().collect()
}

/// Mutates bytes: each edit overwrites, inserts or deletes one byte.
fn mutate_bytes(base: &[u8], edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut b = base.to_vec();
    for &(pos, op, byte) in edits {
        let at = pos % (b.len() + 1);
        match op % 3 {
            0 if at < b.len() => b[at] = byte,
            1 => b.insert(at, byte),
            _ if at < b.len() => {
                b.remove(at);
            }
            _ => b.push(byte),
        }
    }
    b
}

fn edits() -> impl Strategy<Value = Vec<(usize, usize, &'static str)>> {
    proptest::collection::vec(
        (any::<usize>(), 0usize..4, proptest::sample::select(WORDS)),
        1..5,
    )
}

fn byte_edits() -> impl Strategy<Value = Vec<(usize, u8, u8)>> {
    proptest::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..6)
}

/// The error's text names one of `places`.
fn assert_located(e: &Error, places: &[&str]) {
    let text = e.render_plain();
    assert!(
        places.iter().any(|p| text.contains(p)),
        "error names none of {places:?}:\n{text}"
    );
}

/// Data for the example models: y (8 × 2, header y0,y1) and x (8 × 2).
fn data() -> DataSet {
    let mut d = DataSet::new();
    let values: Vec<f64> = (0..16).map(|i| (i as f64 * 0.7).sin() * 3.0).collect();
    d.insert_array(
        "y",
        8,
        2,
        values.clone(),
        Some(vec!["y0".into(), "y1".into()]),
    )
    .unwrap();
    d.insert_array("x", 8, 2, values, None).unwrap();
    d
}

/// A mutated model: loaded with data, checked and fitted for a few sweeps.
fn exercise_model(src: &str) {
    let model = match Model::from_source("f.occam", src, &data()) {
        Ok(m) => m,
        // Unknown data names are named by the data's own name.
        Err(e @ Error::UnknownName(_)) => return assert_located(&e, &["data `"]),
        Err(e) => return assert_located(&e, &["f.occam:"]),
    };
    let _ = model.check();
    let settings = Settings {
        max_iter: 4,
        ..Settings::default()
    };
    if let Err(e) = model.fit(&settings) {
        // A failed run names the node and its variable's place.
        assert_located(&e, &["f.occam:", "node `"]);
    }
}

/// Writes `bytes` as `name` in a scratch directory and reads it as data `y`.
fn read_data(name: &str, bytes: &[u8]) -> Result<(), Error> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    DataSet::new().insert_file("y", &path)
}

/// A valid `.npy` file of `rows × cols` little-endian doubles.
fn npy(rows: usize, cols: usize) -> Vec<u8> {
    let mut header =
        format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend((header.len() as u16).to_le_bytes());
    b.extend(header.as_bytes());
    for i in 0..rows * cols {
        b.extend((i as f64 * 0.5).to_le_bytes());
    }
    b
}

/// A `.npz` archive holding `y.npy` (`bytes`).
fn npz(bytes: &[u8]) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut z = zip::ZipWriter::new(&mut out);
        z.start_file("y.npy", zip::write::FileOptions::default())
            .unwrap();
        z.write_all(bytes).unwrap();
        z.finish().unwrap();
    }
    out.into_inner()
}

const CSV: &str = "y0,y1\n1.5,2\n-0.5,NA\n3,4e-2\n";
const FG: &str = "2\n\n1\n0\n2\n2\n0 1.5\n1 0.5\n\n2\n0 1\n2 2\n4\n0 2\n1 1\n2 1\n3 2\n";
const SBN: &str = "unit,parent,weight\n0,,0.5\n1,0,-1.25\n2,0,0.75\n2,1,0.5\n";

proptest! {
    #![proptest_config(fuzz_config::config(48))]

    #[test]
    fn mutated_models_load_check_and_fit_or_name_the_place(which in 0..MODELS.len(), e in edits()) {
        exercise_model(&mutate(MODELS[which], &e));
    }

    #[test]
    fn mutated_csv_files_read_or_name_the_file(e in edits(), b in byte_edits()) {
        let text = mutate(CSV, &e);
        for bytes in [text.as_bytes().to_vec(), mutate_bytes(text.as_bytes(), &b)] {
            if let Err(err) = read_data("d.csv", &bytes) {
                assert_located(&err, &["d.csv"]);
            }
        }
    }

    #[test]
    fn mutated_npy_files_read_or_name_the_file(rows in 0usize..4, cols in 1usize..3, b in byte_edits()) {
        let bytes = mutate_bytes(&npy(rows, cols), &b);
        if let Err(err) = read_data("d.npy", &bytes) {
            assert_located(&err, &["d.npy"]);
        }
    }

    #[test]
    fn mutated_npz_files_read_or_name_the_file(b in byte_edits(), inner in byte_edits()) {
        let inside = npz(&mutate_bytes(&npy(3, 2), &inner));
        for bytes in [inside.clone(), mutate_bytes(&inside, &b)] {
            if let Err(err) = read_data("d.npz", &bytes) {
                assert_located(&err, &["d.npz"]);
            }
        }
    }

    #[test]
    fn mutated_factor_graphs_read_or_name_the_file(e in edits(), b in byte_edits()) {
        use occam_binary::bm::io::parse_fg;
        let text = mutate(FG, &e);
        let bytes = mutate_bytes(text.as_bytes(), &b);
        for t in [text, String::from_utf8_lossy(&bytes).into_owned()] {
            if let Err(err) = parse_fg("g.fg", &t) {
                let msg = err.to_string();
                prop_assert!(msg.contains("g.fg"), "{}", msg);
            }
        }
    }

    #[test]
    fn mutated_sbn_files_read_or_name_the_file(e in edits()) {
        use occam_binary::sbn::io::parse_sbn;
        if let Err(err) = parse_sbn(&mutate(SBN, &e), "n.csv") {
            let msg = err.to_string();
            prop_assert!(msg.contains("n.csv"), "{}", msg);
        }
    }

    #[test]
    fn settings_are_valid_or_name_the_field(
        tol in prop_oneof![any::<f64>(), Just(-1.0), Just(f64::NAN), Just(0.0)],
        max_iter in prop_oneof![any::<usize>(), 0usize..3],
        restarts in prop_oneof![any::<usize>(), 0usize..3],
    ) {
        let s = Settings { tol, max_iter, restarts, ..Settings::default() };
        if let Err(err) = s.validate() {
            let msg = err.to_string();
            prop_assert!(
                ["tol", "max_iter", "restarts"].iter().any(|f| msg.starts_with(f)),
                "{}", msg
            );
        }
    }
}
