//! Plain numeric text without a header, as the binary-network tools read their weights,
//! thresholds and patterns: one row per line, numbers split at commas, semicolons or white space,
//! empty lines and `#` comment lines skipped.

use super::{DataError, Result};

/// The lines that hold content, with their 1-based numbers, trimmed: empty lines and lines
/// starting with `#` left out.
pub fn content_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// The finite numbers of line `line` (1-based) of `file`, split at commas, semicolons and white
/// space; a cell that is not a finite number is a [`DataError::Cell`] at its line and column
/// (the `message` without the column, which the caller may print its own way).
pub fn numbers(file: &str, line: usize, text: &str) -> Result<Vec<f64>> {
    text.split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter(|t| !t.is_empty())
        .enumerate()
        .map(|(k, t)| match t.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(DataError::Cell {
                file: file.to_string(),
                row: line,
                column: k + 1,
                message: format!("expected a finite number, found `{t}`"),
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_cells() {
        let text = "# weights\n1, 2;3\n\n  4 5e-1  \n";
        let lines: Vec<_> = content_lines(text).collect();
        assert_eq!(lines, vec![(2, "1, 2;3"), (4, "4 5e-1")]);
        assert_eq!(
            numbers("w.csv", 2, lines[0].1).unwrap(),
            vec![1.0, 2.0, 3.0]
        );
        let e = numbers("w.csv", 4, "1,inf,x").unwrap_err();
        assert_eq!(
            e,
            DataError::Cell {
                file: "w.csv".into(),
                row: 4,
                column: 2,
                message: "expected a finite number, found `inf`".into()
            }
        );
    }
}
