//! occam-view end to end: a view started on a free port in this process, asked over plain HTTP.

mod browser;
mod browser_compare;
mod browser_wishart;
mod cdp;
mod common;
mod endpoints;
mod overhead;
mod responsive;
mod security;
mod warnings;
