//! One error type for the whole tool, with its exit code: 2 for anything the user can fix in the
//! command line, the model or the data; 1 for a run that failed (numerical breakdown, ...) or an
//! internal error.

use std::io::IsTerminal;
use std::path::PathBuf;

use occam_lang::Diagnostics;

/// Every way a command can fail.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
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
}

impl CliError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Run(_) => 1,
            _ => 2,
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, err: impl std::fmt::Display) -> CliError {
        CliError::Io {
            path: path.into(),
            message: err.to_string(),
        }
    }

    /// The text printed on stderr: model diagnostics fancy on a terminal, plain otherwise.
    pub fn render(&self) -> String {
        match self {
            CliError::Model(d) => {
                if std::io::stderr().is_terminal() && std::env::var_os("OCCAM_PLAIN").is_none() {
                    d.render_fancy(true)
                } else {
                    d.render_plain()
                }
            }
            CliError::Run(m) => format!("error: inference failed: {m}\n"),
            other => format!("error: {other}\n"),
        }
    }
}

impl From<Diagnostics> for CliError {
    fn from(d: Diagnostics) -> Self {
        CliError::Model(Box::new(d))
    }
}

/// Result of a command.
pub type Result<T> = std::result::Result<T, CliError>;
