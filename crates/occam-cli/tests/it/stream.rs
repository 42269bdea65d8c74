//! `occam fit --stream NAME=FILE --chunk-rows R`: a `.npy` file read in chunks fits under an
//! address-space limit (`ulimit -v`) whose room above the command's own footprint is a quarter of
//! the file — a limit under which the in-memory fit of the same file fails — and gives the
//! in-memory sharded fit of the same rows (`--shards` over the chunks as files) to 1e-10.

use std::path::Path;
use std::process::Output;

use crate::common::{json, occam, root};

/// A Gaussian per column: globals only, so the chunked batch sweep (each global from one pass)
/// is the single-process schedule, and the in-memory fit is its reference to round-off.
const MODEL: &str = "\
plates N, D from data x
mu[D] ~ Gaussian(mean = 0, precision = 1e-3)
tau[D] ~ Gamma(shape = 1e-3, rate = 1e-3)
x[N, D] ~ Gaussian(mean = mu[D], precision = tau[D])
";

/// A `.npy` file (version 1.0, little-endian float64, C order) of `rows × cols` values.
pub(crate) fn write_npy(path: &Path, rows: usize, cols: usize, values: &[f64]) {
    let mut header =
        format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for v in values {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(path, bytes).unwrap();
}

/// The arguments as `&str`.
fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// `occam ARGS` under `ulimit -v KB`.
fn limited(kb: u64, args: &[&str]) -> Output {
    let bin = assert_cmd::cargo::cargo_bin("occam");
    let mut c = std::process::Command::new("sh");
    c.arg("-c")
        .arg("ulimit -v \"$1\" && shift && exec \"$@\"")
        .arg("sh")
        .arg(kb.to_string())
        .arg(bin)
        .args(args)
        .current_dir(root())
        .env("OCCAM_PLAIN", "1")
        .env("MALLOC_ARENA_MAX", "1");
    c.output().unwrap()
}

#[test]
fn a_file_four_times_the_memory_room_fits_in_chunks_with_the_in_memory_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (rows, cols, chunk) = (120_000, 8, 4_000);
    // Column d: mean d − 3, spread 0.5 + 0.1 d (a sum of four uniforms from splitmix64, seed 3).
    let mut state = 3u64;
    let mut uniform = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) as f64 / u64::MAX as f64
    };
    let values: Vec<f64> = (0..rows * cols)
        .map(|i| {
            let e: f64 = (0..4).map(|_| uniform()).sum::<f64>() - 2.0;
            (i % cols) as f64 - 3.0 + (0.5 + 0.1 * (i % cols) as f64) * e
        })
        .collect();
    let model = dir.path().join("g.occam");
    std::fs::write(&model, MODEL).unwrap();
    let big = dir.path().join("x.npy");
    write_npy(&big, rows, cols, &values);
    let file_kb = std::fs::metadata(&big).unwrap().len() / 1024;
    // The command's own footprint: the least limit (in steps of 1 MB) under which it fits a file
    // of one chunk.
    let small = dir.path().join("small.npy");
    write_npy(&small, chunk, cols, &values[..chunk * cols]);
    let (model, big, small) = (
        model.to_str().unwrap(),
        big.to_str().unwrap(),
        small.to_str().unwrap(),
    );
    let chunk_rows = chunk.to_string();
    let stream = |file: &str| {
        let data = format!("x={file}");
        vec![
            "fit",
            model,
            "--stream",
            &data,
            "--chunk-rows",
            &chunk_rows,
            "--threads",
            "1",
            "--max-iter",
            "3",
            "--tol",
            "0",
            "--json",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>()
    };
    let small_args = stream(small);
    let footprint = (16..=512)
        .map(|mb| mb * 1024)
        .find(|&kb| limited(kb, &args(&small_args)).status.success())
        .expect("the command fits a one-chunk file in 512 MB");
    let limit = footprint + file_kb / 4;
    let big_args = stream(big);
    let out = limited(limit, &args(&big_args));
    assert!(
        out.status.success(),
        "limit {limit} KB (footprint {footprint} KB + {file_kb} KB / 4): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let streamed = json(&out);
    // The limit binds: the file read into memory does not fit under it.
    let data = format!("x={big}");
    let whole = limited(
        limit,
        &[
            "fit",
            model,
            "--data",
            &data,
            "--threads",
            "1",
            "--max-iter",
            "3",
        ],
    );
    assert!(
        !whole.status.success(),
        "the in-memory fit fits under {limit} KB"
    );
    // The in-memory answer: the same chunks as shard files, swept in one process.
    for (s, part) in values.chunks(chunk * cols).enumerate() {
        write_npy(
            &dir.path().join(format!("part-{s:03}.npy")),
            part.len() / cols,
            cols,
            part,
        );
    }
    let glob = format!("x={}/part-*.npy", dir.path().display());
    let out = occam()
        .args([
            "fit",
            model,
            "--shards",
            &glob,
            "--max-iter",
            "3",
            "--tol",
            "0",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let memory = json(&out);
    let trace = |v: &serde_json::Value| -> Vec<f64> {
        v["bound_trace"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b.as_f64().unwrap())
            .collect()
    };
    let (a, b) = (trace(&streamed), trace(&memory));
    assert_eq!(a.len(), 3);
    assert_eq!(a.len(), b.len());
    for (p, q) in a.iter().zip(&b) {
        assert!(
            (p - q).abs() <= 1e-10 * p.abs(),
            "streamed {a:?} vs in memory {b:?}"
        );
    }
    assert_eq!(
        streamed["shard_rows"].as_array().unwrap().len(),
        rows / chunk
    );
    for g in ["mu", "tau"] {
        for (k, p) in streamed["globals"][g]["params"].as_object().unwrap() {
            let q = &memory["globals"][g]["params"][k]["values"];
            for (x, y) in p["values"]
                .as_array()
                .unwrap()
                .iter()
                .zip(q.as_array().unwrap())
            {
                let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
                assert!(
                    (x - y).abs() <= 1e-10 * (1.0 + x.abs()),
                    "{g} {k}: {x} vs {y}"
                );
            }
        }
    }
}

/// A mixture (one local variable per row, `z`) streams in chunks with a ragged last chunk and a
/// bound that never falls (the command fails on a decrease); a model with two local variables
/// per row is refused with the reason, since a chunk re-visited from its start need not reach
/// the same local optimum.
#[test]
fn a_mixture_streams_and_two_local_variables_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let rows = 1003;
    let values: Vec<f64> = (0..rows)
        .map(|i| if i % 3 == 0 { -4.0 } else { 3.0 } + ((i * 37 % 101) as f64 / 101.0 - 0.5))
        .collect();
    let npy = dir.path().join("x.npy");
    write_npy(&npy, rows, 1, &values);
    let mixture = dir.path().join("m.occam");
    std::fs::write(
        &mixture,
        "plate K = 2\nplate N from data x\npi ~ Dirichlet(1) over K\nmu[K] ~ Gaussian(0, 0.01)\n\
         tau[K] ~ Gamma(1, 1)\nz[N] ~ Categorical(pi)\nx[N] ~ Gaussian(mu[z], tau[z])\n",
    )
    .unwrap();
    let stream = format!("x={}", npy.display());
    let out = occam()
        .args([
            "fit",
            "--json",
            mixture.to_str().unwrap(),
            "--stream",
            &stream,
        ])
        .args(["--chunk-rows", "250", "--max-iter", "30"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    let trace: Vec<f64> = v["trace"]
        .as_array()
        .or(v["bound_trace"].as_array())
        .expect("a bound trace")
        .iter()
        .map(|b| b.as_f64().unwrap())
        .collect();
    assert!(trace.len() > 2, "{v}");
    assert!(
        trace.windows(2).all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()),
        "{trace:?}"
    );
    let two = dir.path().join("two.occam");
    std::fs::write(
        &two,
        "plate K = 2\nplate N from data x\npi ~ Dirichlet(1) over K\nmu[K] ~ Gaussian(0, 0.01)\n\
         z[N] ~ Categorical(pi)\nh[N] ~ Gaussian(mu[z], 1)\nx[N] ~ Gaussian(h, 4)\n",
    )
    .unwrap();
    let out = occam()
        .args(["fit", two.to_str().unwrap(), "--stream", &stream])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("one local variable per row; this one has 2"),
        "{err}"
    );
}
