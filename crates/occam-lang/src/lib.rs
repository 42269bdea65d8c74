//! The Occam model language.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod ast;
pub mod diag;
pub mod lex;
pub mod parse;
pub mod span;

pub use parse::parse;
