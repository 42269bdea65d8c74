//! `occam`: check, fit, compare, sample and draw Occam models (variational message passing).
//!
//! Exit codes: 0 success; 2 bad usage, model or data (with `file:line:column` of the model, or
//! `file:row:column` of the data); 1 a run that failed (numerical breakdown, naming the node) or
//! an internal error.
#![forbid(unsafe_code)]

mod cmd;
mod error;

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
