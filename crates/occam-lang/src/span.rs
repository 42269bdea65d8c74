//! Byte spans into the model source, and their line/column positions.

use serde::{Deserialize, Serialize};

/// A half-open byte range `start..end` into the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Span {
    /// First byte of the span.
    pub start: usize,
    /// One past the last byte of the span.
    pub end: usize,
}

impl Span {
    /// A span covering `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// The smallest span covering both `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }
}

/// A 1-based line and column (counted in characters) in the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineCol {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, in Unicode scalar values.
    pub column: usize,
}

/// Line starts of a source, to find many offsets' lines in O(log lines) each (calling
/// [`line_col`] for every variable of a long model was quadratic).
pub struct LineIndex<'a> {
    source: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// Indexes the lines of `source`.
    pub fn new(source: &'a str) -> Self {
        let starts = std::iter::once(0)
            .chain(source.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { source, starts }
    }

    /// [`line_col`] of `offset`.
    pub fn line_col(&self, offset: usize) -> LineCol {
        let mut offset = offset.min(self.source.len());
        while !self.source.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset);
        let start = self.starts[line - 1];
        let column = self.source[start..offset].chars().count() + 1;
        LineCol { line, column }
    }
}

/// The line and column where byte offset `offset` of `source` lies.
///
/// Offsets past the end, or inside a multi-byte character, are clamped to the
/// nearest character boundary at or before them.
pub fn line_col(source: &str, offset: usize) -> LineCol {
    let mut offset = offset.min(source.len());
    while !source.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &source[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = source[line_start..offset].chars().count() + 1;
    LineCol { line, column }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_index_agrees_with_line_col() {
        let src = "ab\nc\u{e9}d\n\nxyz";
        let idx = LineIndex::new(src);
        for off in 0..=src.len() + 2 {
            assert_eq!(idx.line_col(off), line_col(src, off), "offset {off}");
        }
    }

    #[test]
    fn line_col_counts_from_one() {
        let src = "ab\ncd\n";
        assert_eq!(line_col(src, 0), LineCol { line: 1, column: 1 });
        assert_eq!(line_col(src, 4), LineCol { line: 2, column: 2 });
        assert_eq!(line_col(src, 99), LineCol { line: 3, column: 1 });
    }

    #[test]
    fn line_col_counts_characters_not_bytes() {
        let src = "μ = 1";
        assert_eq!(line_col(src, 3), LineCol { line: 1, column: 3 });
        assert_eq!(line_col(src, 1), LineCol { line: 1, column: 1 });
    }
}
