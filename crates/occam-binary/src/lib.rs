//! Networks of binary units: Boltzmann machines and sigmoid belief networks.
//!
//! Exact references, sampling, mean field, TAP, mixtures of mean field, Markov-chain q and the
//! Leisink–Kappen third-order bound (Lawrence 2000 ch. 2 and 4; Leisink & Kappen 2000).

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod bm;
pub mod coding;
pub mod exact;
pub mod sbn;
