//! The text of a selection: `FILE:COLUMNS@ROWS` split into the file and its parts, and the
//! `ROWS` part parsed (see the parent module's docs for the syntax and why it counts from 0).

use std::path::PathBuf;

use super::{Bound, RowSpec, Selection};
use crate::data::{DataError, Result};

/// The example every rows message ends with.
const ROWS_HELP: &str = "write rows as A..B, counted from 0 with B excluded as in Python's [A:B] \
     (@..200 is the first 200 rows, @200.. the rest; @..80% and @80%.. split by fraction; \
     add ,shuffle=SEED to draw the rows at random)";

/// Whether `s` holds a path separator (so it is part of a path, never a column list or rows).
fn has_separator(s: &str) -> bool {
    s.contains('/') || s.contains('\\')
}

/// Splits `FILE:COLUMNS@ROWS` into the file and its selection; `arg` says where it was written,
/// for messages (``--data `x=f.csv:a` ``, or `` `f.csv:a` ``).
///
/// A path that exists as written is never split, so a file whose name holds `:` or `@` reads.
/// Otherwise the part after the last `@`, then the part after the last `:`, are split off when
/// they hold no path separator: `C:\data\x.csv` stays one path (its last `:` is followed by
/// `\`), and so does a one-letter head (`C:x.csv`, a Windows drive).
pub fn split(spec: &str, arg: &str) -> Result<(PathBuf, Selection)> {
    let mut sel = Selection {
        arg: arg.to_string(),
        ..Selection::default()
    };
    if PathBuf::from(spec).exists() {
        return Ok((PathBuf::from(spec), sel));
    }
    let mut rest = spec;
    if let Some((head, rows)) = rest.rsplit_once('@') {
        if !has_separator(rows) && !rows.contains(':') && !head.is_empty() {
            match parse_rows(rows, arg) {
                Ok(r) => {
                    sel.rows = Some(r);
                    rest = head;
                }
                // Bad rows after an existing file are an error; after a missing file, the `@`
                // may be part of its name, and the missing file is the error to report.
                Err(e) => {
                    let file = head.rsplit_once(':').map_or(head, |(f, _)| f);
                    if PathBuf::from(head).exists() || PathBuf::from(file).exists() {
                        return Err(e);
                    }
                }
            }
        }
    }
    if !PathBuf::from(rest).exists() {
        if let Some((head, cols)) = rest.rsplit_once(':') {
            let drive = head.len() == 1 && head.chars().all(|c| c.is_ascii_alphabetic());
            if !cols.is_empty() && !has_separator(cols) && !head.is_empty() && !drive {
                sel.columns = Some(cols.split(',').map(|c| c.trim().to_string()).collect());
                rest = head;
            }
        }
    }
    Ok((PathBuf::from(rest), sel))
}

/// Parses `ROWS` (without the `@`): `A..B`, `A..`, `..B` or `N`, each end a row index or a
/// percentage of the rows, then optionally `,shuffle=SEED`; `arg` says where it was written, for
/// messages (empty: nowhere to name).
pub fn parse_rows(s: &str, arg: &str) -> Result<RowSpec> {
    let within = if arg.is_empty() {
        String::new()
    } else {
        format!(" in {arg}")
    };
    let bad = |why: &str| DataError::Usage(format!("bad rows `@{s}`{within}: {why}; {ROWS_HELP}"));
    let mut parts = s.split(',');
    let range = parts.next().unwrap_or_default().trim();
    let mut shuffle = None;
    for p in parts {
        match p.trim().split_once('=') {
            Some(("shuffle", seed)) => {
                shuffle = Some(
                    seed.trim()
                        .parse::<u64>()
                        .map_err(|_| bad(&format!("`{seed}` is not a seed (an integer from 0)")))?,
                )
            }
            _ => return Err(bad(&format!("`{p}` is not `shuffle=SEED`"))),
        }
    }
    let bound = |t: &str| -> Result<Option<Bound>> {
        let t = t.trim();
        if t.is_empty() {
            return Ok(None);
        }
        if let Some(p) = t.strip_suffix('%') {
            return match p.trim().parse::<f64>() {
                Ok(p) if (0.0..=100.0).contains(&p) => Ok(Some(Bound::Percent(p))),
                _ => Err(bad(&format!("`{t}` is not a percentage from 0% to 100%"))),
            };
        }
        t.parse::<usize>()
            .map(|n| Some(Bound::Row(n)))
            .map_err(|_| bad(&format!("`{t}` is not a row index")))
    };
    let (start, end) = match range.split_once("..") {
        Some((a, b)) => (bound(a)?, bound(b)?),
        None => {
            if let Some((a, b)) = range.split_once('-') {
                if a.trim().parse::<usize>().is_ok() {
                    return Err(bad(&format!(
                        "`{a}-{b}` is not a range here (ranges are written with `..`)"
                    )));
                }
            }
            match bound(range)? {
                Some(Bound::Row(n)) => (Some(Bound::Row(n)), Some(Bound::Row(n + 1))),
                Some(Bound::Percent(_)) => {
                    return Err(bad("a single row is a row index, not a percentage"))
                }
                None => return Err(bad("no rows given")),
            }
        }
    };
    Ok(RowSpec {
        start,
        end,
        shuffle,
    })
}
