//! # occam-view: a local browser view of a model
//!
//! `occam view MODEL` (issue 31) serves one page on `127.0.0.1` that shows the model graph (the
//! layout of `occam graph`), the bound live while the fit runs, the posterior of any clicked
//! node (the numbers of `occam fit --json`, from the same serializer) and an editor that
//! re-checks (with `occam check`'s located diagnostics) and re-fits the edited text.
//!
//! The design choice: a small synchronous HTTP server ([`tiny_http`], four small dependencies,
//! no async runtime) on a thread per request; the fit runs on its own thread and talks to the
//! page only through a [`trace::Trace`], which the driver's observer fills in batches (one
//! flush per 50 ms at most), so a watched fit pays one clock read per sweep. The page, its
//! script and its style are embedded in the binary (`include_str!`): no network access, no CDN;
//! it draws with hand-written SVG.
//!
//! Safe by default: the server binds a loopback address unless told to expose itself
//! ([`Options::expose`]); every request must carry the session's random token (128 bits from
//! the operating system's generator, as Jupyter's); data files named by the page must lie in the
//! model's folder or the folder of data given at start.
//!
//! - [`View`]: binds, starts the first fit and serves ([`View::serve`]).
//! - [`session`]: the model text, its data, the current fit and its trace.
//! - [`trace`]: the bound per sweep as server-sent events, throttled.
//! - [`api`]: the JSON of each endpoint.
//! - [`compare`]: the compare view (a plate sweep or several models, by evidence methods).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod api;
pub mod compare;
pub mod session;
pub mod trace;

mod server;
mod token;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use occam::{Error, Result, Settings};

pub use server::View;

/// Where and how the view listens.
#[derive(Clone, Debug)]
pub struct Options {
    /// Address to bind (default 127.0.0.1).
    pub bind: IpAddr,
    /// Port; 0 picks a free one.
    pub port: u16,
    /// Allow a non-loopback `bind` (the page and the fits become reachable from other
    /// machines, guarded by the token only).
    pub expose: bool,
    /// The token to require; `None` draws a fresh one (tests give their own).
    pub token: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            expose: false,
            token: None,
        }
    }
}

impl Options {
    /// The socket address to bind, refusing a non-local address without [`Options::expose`].
    pub fn address(&self) -> Result<SocketAddr> {
        if !self.bind.is_loopback() && !self.expose {
            return Err(Error::Usage(format!(
                "--bind {}: not a loopback address, so the view (the model, its data and fits) \
                 would be reachable from other machines; add --expose to do so deliberately",
                self.bind
            )));
        }
        Ok(SocketAddr::new(self.bind, self.port))
    }
}

/// What to view: the model file, its `--data` arguments and the fit settings.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The model file.
    pub model: PathBuf,
    /// `--data NAME=FILE` arguments, as `occam fit` takes them.
    pub data: Vec<String>,
    /// Settings of every fit the view runs.
    pub settings: Settings,
}

/// Starts a view of `setup` (see [`View::start`]); shorthand for the CLI.
pub fn start(setup: Setup, opts: &Options) -> Result<View> {
    View::start(Arc::new(session::Session::new(setup)?), opts)
}
