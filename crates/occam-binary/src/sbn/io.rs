//! Plain-text formats for SBNs and binary data sets.
//!
//! Network CSV (`unit,parent,weight` header; `#` comments and blank lines ignored):
//! a row with an empty parent (or `bias`) sets the bias of `unit`; any other row adds the edge
//! parent → unit. The number of units is 1 + the largest index mentioned. Units are 0-based.
//!
//! Data CSV: a header of visible unit indices (optionally followed by a `weight` column), then
//! one row per pattern with 0/1 entries (and a non-negative weight). Without a weight column
//! every pattern has weight 1/N.

use super::error::{Result, SbnError};
use super::learn::Dataset;
use super::model::{Sbn, MAX_UNITS};
use occam_io::data::plain::content_lines;
use std::fmt::Write as _;

fn perr(file: &str, line: usize, why: impl Into<String>) -> SbnError {
    SbnError::Parse {
        file: file.to_string(),
        line,
        why: why.into(),
    }
}

/// Parses a network CSV; `file` names the source in errors.
pub fn parse_sbn(text: &str, file: &str) -> Result<Sbn> {
    let mut lines = content_lines(text);
    let (hl, header) = lines
        .next()
        .ok_or_else(|| perr(file, 1, "empty file: expected header unit,parent,weight"))?;
    let cols: Vec<&str> = header.split(',').map(str::trim).collect();
    if cols != ["unit", "parent", "weight"] {
        return Err(perr(
            file,
            hl,
            format!("expected header 'unit,parent,weight', found '{header}'"),
        ));
    }
    let mut biases: Vec<(usize, f64, usize)> = Vec::new();
    let mut edges: Vec<(usize, usize, f64, usize)> = Vec::new();
    let mut n = 0usize;
    for (ln, line) in lines {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        if f.len() != 3 {
            return Err(perr(
                file,
                ln,
                format!("expected 3 fields, found {}", f.len()),
            ));
        }
        let unit: usize = f[0].parse().map_err(|_| {
            perr(
                file,
                ln,
                format!("unit '{}' is not a non-negative integer", f[0]),
            )
        })?;
        let index = |field: &str, u: usize| {
            if u >= MAX_UNITS {
                Err(perr(
                    file,
                    ln,
                    format!("{field} {u} is beyond the limit of {MAX_UNITS} units (indices 0..{MAX_UNITS})"),
                ))
            } else {
                Ok(u)
            }
        };
        let unit = index("unit", unit)?;
        let w: f64 = f[2]
            .parse()
            .map_err(|_| perr(file, ln, format!("weight '{}' is not a number", f[2])))?;
        if !w.is_finite() {
            return Err(perr(file, ln, format!("weight '{}' is not finite", f[2])));
        }
        n = n.max(unit + 1);
        if f[1].is_empty() || f[1] == "bias" {
            if biases.iter().any(|b| b.0 == unit) {
                return Err(perr(file, ln, format!("second bias for unit {unit}")));
            }
            biases.push((unit, w, ln));
        } else {
            let p: usize = f[1].parse().map_err(|_| {
                perr(
                    file,
                    ln,
                    format!("parent '{}' is not a non-negative integer", f[1]),
                )
            })?;
            let p = index("parent", p)?;
            n = n.max(p + 1);
            edges.push((unit, p, w, ln));
        }
    }
    if n == 0 {
        return Err(perr(file, hl, "no units defined"));
    }
    let mut bias = vec![0.0; n];
    for (u, w, _) in biases {
        bias[u] = w;
    }
    let mut parents: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    for &(u, p, w, ln) in &edges {
        if parents[u].iter().any(|x| x.0 == p) {
            return Err(perr(file, ln, format!("edge {p}→{u} listed twice")));
        }
        if u == p {
            return Err(perr(file, ln, format!("unit {u} is its own parent")));
        }
        parents[u].push((p, w));
    }
    Sbn::new(bias, parents).map_err(|e| perr(file, 0, e.to_string()))
}

/// Writes a network in the CSV format read by [`parse_sbn`] (full precision).
pub fn write_sbn(sbn: &Sbn) -> String {
    let mut s = String::from("unit,parent,weight\n");
    for i in 0..sbn.n_units() {
        let _ = writeln!(s, "{i},,{:?}", sbn.bias()[i]);
        for e in sbn.parent_edges(i) {
            let _ = writeln!(s, "{i},{},{:?}", sbn.edge_parent(e), sbn.weights()[e]);
        }
    }
    s
}

/// Parses a data CSV (see the module doc); `file` names the source in errors.
pub fn parse_data(text: &str, file: &str) -> Result<Dataset> {
    let mut lines = content_lines(text);
    let (hl, header) = lines
        .next()
        .ok_or_else(|| perr(file, 1, "empty file: expected a header of unit indices"))?;
    let mut cols: Vec<&str> = header.split(',').map(str::trim).collect();
    let has_w = cols.last() == Some(&"weight");
    if has_w {
        cols.pop();
    }
    let visible: Vec<usize> = cols
        .iter()
        .map(|c| {
            c.parse::<usize>()
                .map_err(|_| perr(file, hl, format!("header entry '{c}' is not a unit index")))
        })
        .collect::<Result<_>>()?;
    if visible.is_empty() {
        return Err(perr(file, hl, "no visible units in header"));
    }
    let mut seen = std::collections::HashSet::with_capacity(visible.len());
    for u in &visible {
        if !seen.insert(*u) {
            return Err(perr(
                file,
                hl,
                format!("unit {u} appears twice in the header"),
            ));
        }
    }
    let mut patterns = Vec::new();
    let mut weights = Vec::new();
    for (ln, line) in lines {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let want = visible.len() + usize::from(has_w);
        if f.len() != want {
            return Err(perr(
                file,
                ln,
                format!("expected {want} fields, found {}", f.len()),
            ));
        }
        let row: Vec<bool> = f[..visible.len()]
            .iter()
            .map(|v| match *v {
                "0" => Ok(false),
                "1" => Ok(true),
                _ => Err(perr(file, ln, format!("value '{v}' is not 0 or 1"))),
            })
            .collect::<Result<_>>()?;
        if has_w {
            let w: f64 = f[visible.len()].parse().map_err(|_| {
                perr(
                    file,
                    ln,
                    format!("weight '{}' is not a number", f[visible.len()]),
                )
            })?;
            if !(w.is_finite() && w >= 0.0) {
                return Err(perr(
                    file,
                    ln,
                    format!("weight '{w}' must be finite and non-negative"),
                ));
            }
            weights.push(w);
        }
        patterns.push(row);
    }
    if patterns.is_empty() {
        return Err(perr(file, hl, "no data rows"));
    }
    if has_w {
        Ok(Dataset {
            visible,
            patterns,
            weights,
        })
    } else {
        Ok(Dataset::uniform(visible, patterns))
    }
}

/// Writes a data set in the CSV format read by [`parse_data`] (with a weight column).
pub fn write_data(d: &Dataset) -> String {
    let mut s = String::new();
    for u in &d.visible {
        let _ = write!(s, "{u},");
    }
    s.push_str("weight\n");
    for (p, w) in d.patterns.iter().zip(&d.weights) {
        for &x in p {
            s.push(if x { '1' } else { '0' });
            s.push(',');
        }
        let _ = writeln!(s, "{w:?}");
    }
    s
}

/// Reads a file into a string, mapping the error to [`SbnError::Io`].
pub fn read_file(path: &std::path::Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| SbnError::Io {
        file: path.display().to_string(),
        why: e.to_string(),
    })
}
