//! File formats: libDAI `.fg` factor graphs (pairwise binary models) and CSV weights, thresholds
//! and binary data. Readers return [`BmError::Parse`] with the file and 1-based line; they never
//! panic on user input.
//!
//! `.fg` (libDAI, `FactorGraph::ReadFromFile`): the number of factors, then per factor the number
//! of variables, their labels, their cardinalities, the number of nonzero entries and `index value`
//! lines, where the linear index runs with the first listed variable fastest. Lines starting with
//! `#` are comments. Only factors over one or two binary variables with strictly positive entries
//! are representable as a Boltzmann machine. State 0 ↔ s = −1, state 1 ↔ s = +1. With l = ln f:
//!   unary:  h_a += (l₁ − l₀)/2,  c += (l₀ + l₁)/2
//!   pair (index x_a + 2 x_b): w_ab += (l₀₀ + l₁₁ − l₁₀ − l₀₁)/4,
//!         h_a += (l₁₀ + l₁₁ − l₀₀ − l₀₁)/4, h_b += (l₀₁ + l₁₁ − l₀₀ − l₁₀)/4, c += mean(l)
//! which reproduces ln f exactly on the four states, so log Z is preserved.

use std::collections::BTreeMap;

use super::error::{BmError, Result};
use super::model::{BoltzmannMachine, MAX_UNITS};
use crate::coding::{zero_one_to_plus_minus, ZeroOneParams};
use occam_io::data::plain::content_lines as data_lines;

/// Coding of values in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    /// Units take values −1 / +1.
    PlusMinus,
    /// Units take values 0 / 1.
    ZeroOne,
}

struct Tokens<'a> {
    file: &'a str,
    toks: Vec<(usize, &'a str)>,
    pos: usize,
    last_line: usize,
}

impl<'a> Tokens<'a> {
    fn new(file: &'a str, text: &'a str) -> Self {
        let mut toks = Vec::new();
        for (ln, line) in text.lines().enumerate() {
            if line.trim_start().starts_with('#') {
                continue;
            }
            for t in line.split_whitespace() {
                toks.push((ln + 1, t));
            }
        }
        let last_line = text.lines().count().max(1);
        Self {
            file,
            toks,
            pos: 0,
            last_line,
        }
    }

    fn err(&self, line: usize, what: String) -> BmError {
        BmError::Parse {
            file: self.file.to_string(),
            line,
            what,
        }
    }

    fn next(&mut self, what: &str) -> Result<(usize, &'a str)> {
        match self.toks.get(self.pos) {
            Some(&t) => {
                self.pos += 1;
                Ok(t)
            }
            None => Err(self.err(
                self.last_line,
                format!("unexpected end of file, expected {what}"),
            )),
        }
    }

    fn usize(&mut self, what: &str) -> Result<(usize, usize)> {
        let (ln, t) = self.next(what)?;
        t.parse::<usize>().map(|v| (ln, v)).map_err(|_| {
            self.err(
                ln,
                format!("expected {what} (a non-negative integer), found `{t}`"),
            )
        })
    }

    fn f64(&mut self, what: &str) -> Result<(usize, f64)> {
        let (ln, t) = self.next(what)?;
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok((ln, v)),
            _ => Err(self.err(
                ln,
                format!("expected {what} (a finite number), found `{t}`"),
            )),
        }
    }
}

/// A model read from `.fg` with the original variable labels (unit i has label `labels[i]`).
#[derive(Debug, Clone)]
pub struct LabelledModel {
    /// The Boltzmann machine in ±1 coding.
    pub model: BoltzmannMachine,
    /// Variable labels in unit order (sorted ascending).
    pub labels: Vec<usize>,
}

enum Factor {
    Unary(usize, [f64; 2]),
    Pair(usize, usize, [f64; 4]),
}

/// An invalid-model error prefixed with the file(s) it came from.
fn in_file(file: &str, e: BmError) -> BmError {
    match e {
        BmError::InvalidModel(m) => BmError::InvalidModel(format!("{file}: {m}")),
        e => e,
    }
}

/// Parses libDAI `.fg` text (module doc). `file` names the source in errors.
pub fn parse_fg(file: &str, text: &str) -> Result<LabelledModel> {
    let mut tk = Tokens::new(file, text);
    let (_, nf) = tk.usize("the number of factors")?;
    let mut factors = Vec::with_capacity(nf.min(1 << 20));
    let mut labels = BTreeMap::new();
    for f in 0..nf {
        let (ln, nv) = tk.usize(&format!("the number of variables of factor {f}"))?;
        if nv == 0 || nv > 2 {
            return Err(tk.err(ln, format!("factor {f} has {nv} variables; only factors over 1 or 2 binary variables are supported")));
        }
        let mut vars = Vec::with_capacity(nv);
        for _ in 0..nv {
            let (ln, l) = tk.usize(&format!("a variable label of factor {f}"))?;
            if vars.contains(&l) {
                return Err(tk.err(ln, format!("factor {f} lists variable {l} twice")));
            }
            vars.push(l);
        }
        for &v in &vars {
            let (ln, c) = tk.usize(&format!("the cardinality of variable {v}"))?;
            if c != 2 {
                return Err(tk.err(
                    ln,
                    format!(
                        "variable {v} has cardinality {c}; only binary variables are supported"
                    ),
                ));
            }
            labels.insert(v, ());
            if labels.len() > MAX_UNITS {
                return Err(tk.err(
                    ln,
                    format!("variable {v} is unit {} of the network, more than the limit of {MAX_UNITS} units (the dense weight matrix has units² entries)", labels.len()),
                ));
            }
        }
        let size = 1usize << nv;
        let (_, nnz) = tk.usize(&format!("the number of nonzero entries of factor {f}"))?;
        let mut vals = vec![0.0; size];
        let mut seen = vec![false; size];
        for _ in 0..nnz {
            let (ln, idx) = tk.usize(&format!("an entry index of factor {f}"))?;
            if idx >= size {
                return Err(tk.err(
                    ln,
                    format!("entry index {idx} out of range 0..{size} for factor {f}"),
                ));
            }
            let (ln, v) = tk.f64(&format!("the value of entry {idx} of factor {f}"))?;
            if v < 0.0 {
                return Err(tk.err(ln, format!("negative factor value {v}")));
            }
            vals[idx] = v;
            seen[idx] = true;
        }
        if let Some(idx) = (0..size).find(|&i| vals[i] <= 0.0) {
            return Err(tk.err(
                ln,
                format!("factor {f} has a zero entry at index {idx}; hard constraints cannot be represented as a Boltzmann machine"),
            ));
        }
        let l: Vec<f64> = vals.iter().map(|v| v.ln()).collect();
        factors.push(match nv {
            1 => Factor::Unary(vars[0], [l[0], l[1]]),
            _ => Factor::Pair(vars[0], vars[1], [l[0], l[1], l[2], l[3]]),
        });
    }
    if let Ok((ln, t)) = tk.next("") {
        return Err(tk.err(
            ln,
            format!("unexpected trailing token `{t}` after {nf} factors"),
        ));
    }
    let label_list: Vec<usize> = labels.keys().copied().collect();
    let index: BTreeMap<usize, usize> = label_list
        .iter()
        .enumerate()
        .map(|(i, &l)| (l, i))
        .collect();
    let n = label_list.len();
    let mut w = vec![0.0; n * n];
    let mut h = vec![0.0; n];
    let mut c = 0.0;
    for f in factors {
        match f {
            Factor::Unary(a, l) => {
                h[index[&a]] += 0.5 * (l[1] - l[0]);
                c += 0.5 * (l[0] + l[1]);
            }
            Factor::Pair(a, b, l) => {
                let (ia, ib) = (index[&a], index[&b]);
                let (l00, l10, l01, l11) = (l[0], l[1], l[2], l[3]);
                let j = 0.25 * (l00 + l11 - l10 - l01);
                w[ia * n + ib] += j;
                w[ib * n + ia] += j;
                h[ia] += 0.25 * (l10 + l11 - l00 - l01);
                h[ib] += 0.25 * (l01 + l11 - l00 - l10);
                c += 0.25 * (l00 + l01 + l10 + l11);
            }
        }
    }
    Ok(LabelledModel {
        model: BoltzmannMachine::new(w, h, c).map_err(|e| in_file(file, e))?,
        labels: label_list,
    })
}

/// Writes a model as libDAI `.fg` text: one unary factor per unit (carrying c/n) and one pair
/// factor per nonzero coupling. Labels are the unit indices.
pub fn write_fg(bm: &BoltzmannMachine) -> Result<String> {
    let n = bm.n();
    if n == 0 {
        return Err(BmError::InvalidModel(
            "cannot write a model with no units as .fg".into(),
        ));
    }
    let cshare = bm.offset() / n as f64;
    let mut pairs = Vec::new();
    for i in 0..n {
        for j in i + 1..n {
            if bm.w(i, j) != 0.0 {
                pairs.push((i, j, bm.w(i, j)));
            }
        }
    }
    let mut out = format!(
        "# Boltzmann machine written by occam-binary (state 0 = -1, 1 = +1)\n{}\n",
        n + pairs.len()
    );
    let check = |v: f64| -> Result<f64> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(BmError::InvalidModel(format!(
                "factor value {v} not representable (parameters too large)"
            )))
        }
    };
    for (i, hi) in bm.thresholds().iter().enumerate() {
        let f0 = check((cshare - hi).exp())?;
        let f1 = check((cshare + hi).exp())?;
        out += &format!("\n1\n{i}\n2\n2\n0 {f0:e}\n1 {f1:e}\n");
    }
    for (i, j, w) in pairs {
        let (p, m) = (check(w.exp())?, check((-w).exp())?);
        out += &format!("\n2\n{i} {j}\n2 2\n4\n0 {p:e}\n1 {m:e}\n2 {m:e}\n3 {p:e}\n");
    }
    Ok(out)
}

/// Splits a CSV/whitespace line into finite numbers (`occam_io`'s plain reader); `line` is
/// 1-based for errors.
fn numbers(file: &str, line: usize, text: &str) -> Result<Vec<f64>> {
    occam_io::data::plain::numbers(file, line, text).map_err(|e| match e {
        occam_io::data::DataError::Cell {
            file,
            row,
            column,
            message,
        } => BmError::Parse {
            file,
            line: row,
            what: format!("column {column}: {message}"),
        },
        other => BmError::Parse {
            file: file.to_string(),
            line,
            what: other.to_string(),
        },
    })
}

/// Parses a numeric matrix (rows of comma- or space-separated numbers).
pub fn parse_matrix(file: &str, text: &str) -> Result<Vec<Vec<f64>>> {
    let mut rows = Vec::new();
    let mut width = None;
    for (ln, l) in data_lines(text) {
        let r = numbers(file, ln, l)?;
        match width {
            None => width = Some(r.len()),
            Some(w) if w != r.len() => {
                return Err(BmError::Parse {
                    file: file.to_string(),
                    line: ln,
                    what: format!("expected {w} columns, found {}", r.len()),
                })
            }
            _ => {}
        }
        rows.push(r);
    }
    Ok(rows)
}

/// Reads a model from a weights CSV (n rows × n columns, symmetric, zero diagonal) and a
/// thresholds CSV (n numbers, one row or one column), in the given coding.
pub fn parse_weights_thresholds(
    wfile: &str,
    wtext: &str,
    hfile: &str,
    htext: &str,
    coding: Coding,
) -> Result<BoltzmannMachine> {
    let rows = parse_matrix(wfile, wtext)?;
    let n = rows.len();
    if n > MAX_UNITS {
        return Err(BmError::Parse {
            file: wfile.into(),
            line: 0,
            what: format!("{n} weight rows is more than the limit of {MAX_UNITS} units (the dense weight matrix has units² entries)"),
        });
    }
    let mut w = Vec::with_capacity(n * n);
    for (i, r) in rows.iter().enumerate() {
        if r.len() != n {
            return Err(BmError::Parse {
                file: wfile.into(),
                line: 0,
                what: format!(
                    "weights must be square: {n} rows but row {} has {} columns",
                    i + 1,
                    r.len()
                ),
            });
        }
        w.extend_from_slice(r);
    }
    let mut h = Vec::new();
    for (ln, l) in data_lines(htext) {
        h.extend(numbers(hfile, ln, l)?);
    }
    if h.len() != n {
        return Err(BmError::Parse {
            file: hfile.into(),
            line: 0,
            what: format!(
                "expected {n} thresholds (one per weight row), found {}",
                h.len()
            ),
        });
    }
    let model = match coding {
        Coding::PlusMinus => BoltzmannMachine::new(w, h, 0.0),
        Coding::ZeroOne => {
            // Validates symmetry and the diagonal, naming the files.
            BoltzmannMachine::new(w.clone(), h.clone(), 0.0)
                .map_err(|e| in_file(&format!("{wfile} and {hfile}"), e))?;
            let p = zero_one_to_plus_minus(&ZeroOneParams {
                w,
                b: h,
                offset: 0.0,
            });
            BoltzmannMachine::new(p.w, p.h, p.offset)
        }
    };
    model.map_err(|e| in_file(&format!("{wfile} and {hfile}"), e))
}

/// Writes weights and thresholds as CSV text (±1 coding).
pub fn write_weights_thresholds(bm: &BoltzmannMachine) -> (String, String) {
    let n = bm.n();
    let mut w = String::new();
    for i in 0..n {
        let row: Vec<String> = (0..n).map(|j| format!("{:e}", bm.w(i, j))).collect();
        w += &row.join(",");
        w.push('\n');
    }
    let h: Vec<String> = bm.thresholds().iter().map(|x| format!("{x:e}")).collect();
    (w, h.join("\n") + "\n")
}

/// Parses binary patterns (one per row) and returns them in ±1 coding.
pub fn parse_binary_data(file: &str, text: &str, coding: Coding) -> Result<Vec<Vec<f64>>> {
    let mut out = Vec::new();
    let mut width = None;
    for (ln, l) in data_lines(text) {
        let r = numbers(file, ln, l)?;
        if width.is_some_and(|w| w != r.len()) {
            return Err(BmError::Parse {
                file: file.into(),
                line: ln,
                what: format!("expected {} columns, found {}", width.unwrap_or(0), r.len()),
            });
        }
        width = Some(r.len());
        let mut row = Vec::with_capacity(r.len());
        for (k, v) in r.into_iter().enumerate() {
            let s = match (coding, v) {
                (Coding::PlusMinus, x) if x == 1.0 || x == -1.0 => x,
                (Coding::ZeroOne, x) if x == 0.0 || x == 1.0 => 2.0 * x - 1.0,
                _ => {
                    let want = if coding == Coding::PlusMinus {
                        "-1 or 1"
                    } else {
                        "0 or 1"
                    };
                    return Err(BmError::Parse {
                        file: file.into(),
                        line: ln,
                        what: format!("column {}: expected {want}, found {v}", k + 1),
                    });
                }
            };
            row.push(s);
        }
        out.push(row);
    }
    if out.is_empty() {
        return Err(BmError::Parse {
            file: file.into(),
            line: 1,
            what: "no data rows".into(),
        });
    }
    Ok(out)
}

/// Reads a whole file, mapping I/O errors to [`BmError::Io`].
/// Text that is not UTF-8 is a parse error at the line and byte where it stops being so.
pub fn read_text(path: &std::path::Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| BmError::Io {
        path: path.display().to_string(),
        source: e,
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line = bytes[..good].iter().filter(|&&b| b == b'\n').count() + 1;
        let column = good
            - bytes[..good]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1)
            + 1;
        BmError::Parse {
            file: path.display().to_string(),
            line,
            what: format!(
                "byte {} (0x{:02x}) at column {column} is not valid UTF-8 text",
                good + 1,
                bytes[good]
            ),
        }
    })
}

/// Writes a whole file atomically (Occam's one writer, `occam_io`), mapping I/O errors to
/// [`BmError::Io`].
pub fn write_text(path: &std::path::Path, text: &str) -> Result<()> {
    occam_io::write(path, text.as_bytes()).map_err(|e| BmError::Io {
        path: path.display().to_string(),
        source: e,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::exact::exact_log_z;

    const EXAMPLE: &str = "# libDAI-style example\n3\n\n1\n0\n2\n2\n0 0.2\n1 0.8\n\n1\n1\n2\n2\n0 0.5\n1 0.5\n\n2\n0 1\n2 2\n4\n0 1.0\n1 0.3\n2 0.3\n3 1.0\n";

    #[test]
    fn fg_log_z_matches_direct_sum() {
        let m = parse_fg("ex.fg", EXAMPLE).unwrap();
        assert_eq!(m.labels, vec![0, 1]);
        // Z = Σ f0(x0) f1(x1) f01(x0, x1), index x0 + 2 x1
        let f0 = [0.2, 0.8];
        let f1 = [0.5, 0.5];
        let f01 = [1.0, 0.3, 0.3, 1.0];
        let mut z = 0.0f64;
        for x0 in 0..2 {
            for x1 in 0..2 {
                z += f0[x0] * f1[x1] * f01[x0 + 2 * x1];
            }
        }
        assert!((exact_log_z(&m.model).unwrap() - z.ln()).abs() < 1e-13);
    }

    #[test]
    fn fg_round_trip_preserves_log_z() {
        let bm = crate::bm::sk::sk_network(7, 0.5, 1.0, 3).unwrap();
        let mut bm2 = bm.clone();
        bm2.set_offset(-0.4);
        let text = write_fg(&bm2).unwrap();
        let back = parse_fg("rt.fg", &text).unwrap();
        assert!((exact_log_z(&back.model).unwrap() - exact_log_z(&bm2).unwrap()).abs() < 1e-12);
        for i in 0..7 {
            for j in 0..7 {
                assert!((back.model.w(i, j) - bm.w(i, j)).abs() < 1e-13);
            }
        }
    }

    #[test]
    fn fg_errors_name_the_line() {
        let cases: &[(&str, usize, &str)] = &[
            ("2\n\n1\n0\n2\n2\n0 1\n1 x\n", 8, "finite number"),
            ("1\n\n3\n0 1 2\n2 2 2\n0\n", 3, "1 or 2"),
            ("1\n\n1\n0\n3\n0\n", 5, "cardinality 3"),
            ("1\n\n1\n0\n2\n1\n5 1.0\n", 7, "out of range"),
            ("1\n\n1\n0\n2\n1\n0 1.0\n", 3, "zero entry"),
            ("2\n\n1\n0\n2\n2\n0 1\n1 1\n", 8, "end of file"),
            ("1\n\n1\n0\n2\n2\n0 1\n1 -1\n", 8, "negative"),
            ("1\n\n2\n3 3\n2 2\n0\n", 4, "twice"),
            ("1\n\n1\n0\n2\n2\n0 1\n1 1\n7\n", 9, "trailing"),
        ];
        for (text, line, what) in cases {
            match parse_fg("bad.fg", text) {
                Err(BmError::Parse {
                    file,
                    line: l,
                    what: w,
                }) => {
                    assert_eq!(file, "bad.fg");
                    assert_eq!(l, *line, "{text:?}: {w}");
                    assert!(w.contains(what), "{w} should mention {what}");
                }
                other => panic!("{text:?}: expected parse error, got {other:?}"),
            }
        }
    }

    #[test]
    fn csv_models_and_data() {
        let w = "0, 0.5, 0\n0.5 0 -1\n# comment\n0,-1,0\n";
        let h = "0.1\n-0.2\n0.3\n";
        let bm = parse_weights_thresholds("w.csv", w, "h.csv", h, Coding::PlusMinus).unwrap();
        assert_eq!(bm.w(1, 2), -1.0);
        let (wt, ht) = write_weights_thresholds(&bm);
        let back = parse_weights_thresholds("w", &wt, "h", &ht, Coding::PlusMinus).unwrap();
        assert_eq!(back, bm);
        // 0/1 coding: same distribution over states, exact constant
        let b01 = parse_weights_thresholds("w.csv", w, "h.csv", h, Coding::ZeroOne).unwrap();
        let mut z = 0.0f64;
        let wm = [[0.0, 0.5, 0.0], [0.5, 0.0, -1.0], [0.0, -1.0, 0.0]];
        let hv = [0.1, -0.2, 0.3];
        for s in 0..8 {
            let x: Vec<f64> = (0..3).map(|i| (s >> i & 1) as f64).collect();
            let mut e = 0.0;
            for i in 0..3 {
                e += hv[i] * x[i];
                for j in 0..i {
                    e += wm[i][j] * x[i] * x[j];
                }
            }
            z += e.exp();
        }
        assert!((exact_log_z(&b01).unwrap() - z.ln()).abs() < 1e-13);
        match parse_weights_thresholds("w.csv", "0,1\n2,0\n", "h.csv", "0 0", Coding::PlusMinus) {
            Err(BmError::InvalidModel(m)) => assert!(m.contains("symmetric")),
            other => panic!("{other:?}"),
        }
        match parse_weights_thresholds("w.csv", "0,1\n1,0,3\n", "h.csv", "0 0", Coding::PlusMinus) {
            Err(BmError::Parse { line, .. }) => assert_eq!(line, 2),
            other => panic!("{other:?}"),
        }
        let d = parse_binary_data("d.csv", "1,1\n0,1\n", Coding::ZeroOne).unwrap();
        assert_eq!(d, vec![vec![1.0, 1.0], vec![-1.0, 1.0]]);
        match parse_binary_data("d.csv", "1,1\n\n1,2\n", Coding::PlusMinus) {
            Err(BmError::Parse { line, what, .. }) => {
                assert_eq!(line, 3);
                assert!(what.contains("column 2"));
            }
            other => panic!("{other:?}"),
        }
    }
}
