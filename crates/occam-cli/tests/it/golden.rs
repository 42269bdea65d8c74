//! Golden outputs: `fit --json`, `fit`, `compare`, `check`, `graph` and `sample` on every example
//! print and write what the CLI printed before the library moved out of it
//! (`tests/golden/cases.txt`; `tests/golden/make.sh` records them with a given binary).
//!
//! Text must match exactly. Numbers matched bit for bit at the move (commit d970f12); since then
//! the linear-Gaussian kernel sums dot products as matrix products, in another order, so numbers
//! are compared to 1e-10 (relative, or absolute near zero) — the tolerance every fast path is held
//! to against the element-by-element path.

use crate::common;

use std::path::Path;

use common::{occam, root};

/// Splits text into alternating non-numeric and numeric tokens.
fn tokens(s: &str) -> Vec<(bool, &str)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut start) = (0, 0);
    while i < b.len() {
        let starts_number = (b[i].is_ascii_digit()
            || (b[i] == b'-' && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'));
        if !starts_number {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < b.len()
            && (b[j].is_ascii_digit()
                || b[j] == b'.'
                || ((b[j] == b'e' || b[j] == b'E') && j + 1 < b.len())
                || ((b[j] == b'-' || b[j] == b'+') && matches!(b[j - 1], b'e' | b'E')))
        {
            j += 1;
        }
        if start < i {
            out.push((false, &s[start..i]));
        }
        out.push((true, &s[i..j]));
        (i, start) = (j, j);
    }
    if start < b.len() {
        out.push((false, &s[start..]));
    }
    out
}

/// Whether numeric token `i` is a wall-clock time, which no two runs share: followed by `s`
/// and a space or line end (`compare`'s time column, `0.041s`), or the value of a JSON
/// `"seconds"` key.
fn is_time(t: &[(bool, &str)], i: usize) -> bool {
    let after = t.get(i + 1).map_or("", |n| n.1);
    let unit = after
        .strip_prefix('s')
        .is_some_and(|r| r.is_empty() || r.starts_with(char::is_whitespace));
    unit || (i > 0 && t[i - 1].1.ends_with("\"seconds\":"))
}

/// Equal text, and numbers equal to 1e-10 (see the module docs); times (see [`is_time`]) are
/// compared as text around them only.
fn same(got: &str, want: &str) -> bool {
    let (g, w) = (tokens(got), tokens(want));
    g.len() == w.len()
        && g.iter()
            .zip(&w)
            .enumerate()
            .all(|(i, (a, b))| match (a, b) {
                ((true, x), (true, y)) if x == y => true,
                ((true, _), (true, _)) if is_time(&g, i) && is_time(&w, i) => true,
                ((true, x), (true, y)) => match (x.parse::<f64>(), y.parse::<f64>()) {
                    (Ok(x), Ok(y)) => (x - y).abs() <= 1e-10 * x.abs().max(y.abs()).max(1.0),
                    _ => false,
                },
                // A time is right-aligned in its column: the padding before it depends on its
                // width (`0.543s`, `1.02s`), so only the text up to the padding is compared.
                ((false, x), (false, y))
                    if g.get(i + 1).is_some_and(|t| t.0)
                        && is_time(&g, i + 1)
                        && is_time(&w, i + 1) =>
                {
                    x.trim_end_matches(' ') == y.trim_end_matches(' ')
                }
                (a, b) => a == b,
            })
}

#[test]
fn numbers_compare_to_1e_10_and_text_exactly() {
    assert!(same(
        "L = -40.56550581712509 (x1)",
        "L = -40.56550581712486 (x1)"
    ));
    assert!(same("[1e-300,2.5]", "[0,2.5]"));
    assert!(!same("L = -40.5655", "L = -40.5656"));
    assert!(!same("after 5 iterations", "after 6 iterations"));
    assert!(!same("node x1", "node x2"));
    assert!(!same("a,b", "a;b"));
    // Times are not compared; the text around them is.
    assert!(same("iter 98  0.041s  best\n", "iter 98  1.25s  best\n"));
    assert!(same(
        "{\"seconds\":0.5,\"x\":1}",
        "{\"seconds\":0.25,\"x\":1}"
    ));
    assert!(!same("98  0.041s", "99  0.041s"));
    // The padding before a right-aligned time follows its width.
    assert!(same("iter 98   0.543s  best\n", "iter 98    1.02s  best\n"));
    assert!(!same(
        "iter 98   0.543s  best\n",
        "iter 99    1.02s  best\n"
    ));
    assert!(!same("0.041 s", "0.042 s"));
}

fn compare_text(case: &str, what: &str, got: &str, want: &str, failures: &mut Vec<String>) {
    if !same(got, want) {
        let line = got
            .lines()
            .zip(want.lines())
            .position(|(g, w)| g != w)
            .unwrap_or_else(|| got.lines().count().min(want.lines().count()));
        failures.push(format!(
            "{case}: {what} differs from the golden output at line {}:\n  got:  {}\n  want: {}",
            line + 1,
            got.lines().nth(line).unwrap_or("<end>"),
            want.lines().nth(line).unwrap_or("<end>")
        ));
    }
}

#[test]
fn every_example_prints_its_golden_output() {
    let dir = root().join("crates/occam-cli/tests/golden");
    let cases = std::fs::read_to_string(dir.join("cases.txt")).unwrap();
    let mut failures = Vec::new();
    let mut count = 0;
    for line in cases
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let (name, args) = line.split_once('|').unwrap();
        let name = name.trim();
        let out = tempfile::tempdir().unwrap();
        let outs = out.path().display().to_string();
        let args: Vec<String> = args
            .split_whitespace()
            .map(|a| a.replace("{OUT}", &outs))
            .collect();
        let o = occam().args(&args).output().unwrap();
        let read = |ext: &str| std::fs::read_to_string(dir.join(format!("{name}.{ext}"))).unwrap();
        let code = o.status.code().unwrap_or(-1).to_string();
        compare_text(name, "exit code", &code, read("code").trim(), &mut failures);
        let stdout = String::from_utf8_lossy(&o.stdout).replace(&outs, "{OUT}");
        let stderr = String::from_utf8_lossy(&o.stderr).replace(&outs, "{OUT}");
        compare_text(name, "stdout", &stdout, &read("stdout"), &mut failures);
        compare_text(name, "stderr", &stderr, &read("stderr"), &mut failures);
        for f in std::fs::read_dir(out.path()).unwrap() {
            let f = f.unwrap().path();
            let file = f.file_name().unwrap().to_string_lossy().into_owned();
            let want = std::fs::read_to_string(dir.join(&file))
                .unwrap_or_else(|_| panic!("{name}: wrote {file}, which has no golden copy"));
            let got = std::fs::read_to_string(&f).unwrap();
            compare_text(name, &file, &got, &want, &mut failures);
        }
        assert!(Path::new(&dir).is_dir());
        count += 1;
    }
    assert!(count >= 25, "only {count} golden cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
