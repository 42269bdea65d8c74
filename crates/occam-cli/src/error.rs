//! The library's error type, with the tool's exit codes (2 for anything the user can fix in the
//! command line, the model or the data; 1 for a run that failed or an internal error) and its
//! rendering on stderr.

use std::io::IsTerminal;

pub use occam::{Error, Result};

/// The process exit code for `e`.
pub fn exit_code(e: &Error) -> i32 {
    if e.is_user_error() {
        2
    } else {
        1
    }
}

/// The text printed on stderr: model diagnostics fancy on a terminal, plain otherwise.
pub fn render(e: &Error) -> String {
    match e.diagnostics() {
        Some(d) if std::io::stderr().is_terminal() && std::env::var_os("OCCAM_PLAIN").is_none() => {
            d.render_fancy(true)
        }
        _ => e.render_plain(),
    }
}
