//! One error type for the library: every message names its place (`file:line:column` of the
//! model, `file:row:column` of the data, the node of a failed run). [`Error::is_user_error`]
//! separates what a user fixes in the input (the CLI exits 2) from a run that failed (exit 1).

use std::path::PathBuf;

use occam_lang::Diagnostics;

/// Every way loading, compiling, fitting or writing can fail.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad command-line usage (an unknown option value, a malformed `--data`, ...).
    #[error("{0}")]
    Usage(String),
    /// A file that cannot be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// Model errors (from the language, or core build errors mapped back to the model source).
    #[error("{}", .0.render_plain())]
    Model(Box<Diagnostics>),
    /// A data file with a bad cell, header or shape: `file:row:column: message`.
    #[error("{file}:{row}:{column}: {message}")]
    Data {
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
    DataFile {
        /// The data file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// Bad input to the binary-network tools (the message names the file and line).
    #[error("{0}")]
    Input(String),
    /// Inference failed (numerical breakdown, a decreasing bound when that is an error).
    #[error("{0}")]
    Run(String),
    /// A name that the model does not have (attached data, a variable asked for), with the
    /// nearest names.
    #[error("{0}")]
    UnknownName(String),
    /// An observer (Ctrl-C, a callback) stopped the run.
    #[error("{0}")]
    Interrupted(String),
}

impl Error {
    /// Whether the input (arguments, model or data) is at fault, rather than the run.
    pub fn is_user_error(&self) -> bool {
        !matches!(self, Error::Run(_) | Error::Interrupted(_))
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, err: impl std::fmt::Display) -> Error {
        Error::Io {
            path: path.into(),
            message: err.to_string(),
        }
    }

    /// The model diagnostics, for a model error (to render them with colour on a terminal).
    pub fn diagnostics(&self) -> Option<&Diagnostics> {
        match self {
            Error::Model(d) => Some(d),
            _ => None,
        }
    }

    /// The text to show a user, without colour: located model diagnostics, or `error: …`.
    pub fn render_plain(&self) -> String {
        match self {
            Error::Model(d) => d.render_plain(),
            Error::Run(m) => format!("error: inference failed: {m}\n"),
            other => format!("error: {other}\n"),
        }
    }
}

impl From<occam_io::data::DataError> for Error {
    fn from(e: occam_io::data::DataError) -> Self {
        use occam_io::data::DataError as D;
        match e {
            D::Io { path, message } => Error::Io { path, message },
            D::Cell {
                file,
                row,
                column,
                message,
            } => Error::Data {
                file,
                row,
                column,
                message,
            },
            D::File { file, message } => Error::DataFile { file, message },
            D::Usage(m) => Error::Usage(m),
        }
    }
}

impl From<Diagnostics> for Error {
    fn from(d: Diagnostics) -> Self {
        Error::Model(Box::new(d))
    }
}

/// Result of a library call.
pub type Result<T> = std::result::Result<T, Error>;
