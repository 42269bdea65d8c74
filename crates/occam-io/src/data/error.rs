//! The one error of data reading: every message names the file, and the row and column of the
//! cell when there is one.

use std::path::PathBuf;

/// Why a data file or a data argument cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DataError {
    /// A file that cannot be opened or read.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A bad cell, header or shape: `file:row:column: message`.
    #[error("{file}:{row}:{column}: {message}")]
    Cell {
        /// The data file.
        file: String,
        /// 1-based line in the file (the header is line 1), or array row for `.npy`.
        row: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A data file problem without a cell to point at.
    #[error("{file}: {message}")]
    File {
        /// The data file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A malformed data argument (`--data x=FILE:COLUMNS@ROWS`).
    #[error("{0}")]
    Usage(String),
}

impl DataError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, err: impl std::fmt::Display) -> DataError {
        DataError::Io {
            path: path.into(),
            message: err.to_string(),
        }
    }
}

/// Result of data reading.
pub type Result<T> = std::result::Result<T, DataError>;

/// `text` cut to at most `max` characters, with `…` where it was cut (a cell echoed in a message).
pub(crate) fn clip(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => std::borrow::Cow::Borrowed(text),
        Some((cut, _)) => std::borrow::Cow::Owned(format!("{}…", &text[..cut])),
    }
}
