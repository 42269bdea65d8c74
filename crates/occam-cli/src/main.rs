//! `occam`: check, fit, compare, sample and draw Occam models (variational message passing).
//!
//! Exit codes: 0 success; 2 bad usage, model or data (with `file:line:column` of the model, or
//! `file:row:column` of the data); 1 a run that failed (numerical breakdown, naming the node) or
//! an internal error.
#![forbid(unsafe_code)]

/// `print!` that survives a closed pipe (`occam fit | head`): the command ends quietly with exit
/// 0 instead of panicking; any other write error on stdout ends it with exit 1.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdout_write(format_args!($($arg)*))
    };
}

/// `println!` with the closed-pipe handling of `out!`.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::stdout_write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

mod cmd;
mod error;

/// Writes to stdout; see `out!`.
fn stdout_write(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut lock = std::io::stdout().lock();
    if let Err(e) = lock.write_fmt(args).and_then(|()| lock.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to standard output: {e}");
        std::process::exit(1);
    }
}

use clap::Parser;

fn main() {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("internal error: {info}\nThis is a bug in occam; please report it.");
        std::process::exit(1);
    }));
    let cli = cmd::Cli::parse();
    let code = match cmd::run(cli) {
        Ok(()) => 0,
        Err(e) => {
            eprint!("{}", error::render(&e));
            error::exit_code(&e)
        }
    };
    std::process::exit(code);
}
