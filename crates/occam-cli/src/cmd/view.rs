//! `occam view MODEL`: a local browser view of the model (crate `occam-view`): the graph, the
//! bound live while it is fitted, each node's posterior and an editor that re-checks and
//! re-fits.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::Args;

use super::{model_path, DataArgs, RunArgs};
use crate::error::Result;

/// Arguments of `occam view`.
#[derive(Args, Debug)]
pub struct ViewArgs {
    /// The model file (.occam).
    pub model: PathBuf,
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub run: RunArgs,
    /// Port to listen on (default: a free one).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Address to listen on. Anything but a loopback address (127.0.0.1, ::1) needs --expose.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Allow a non-loopback --bind: the page, the model, its data and fits become reachable
    /// from other machines, guarded by the token alone.
    #[arg(long)]
    pub expose: bool,
}

/// Runs `occam view`: prints the page's address (with its token) and serves until interrupted.
pub fn run(a: &ViewArgs) -> Result<()> {
    model_path(&a.model)?;
    let opts = occam_view::Options {
        bind: a.bind,
        port: a.port,
        expose: a.expose,
        token: None,
    };
    // Refuse a non-local address before reading anything.
    opts.address()?;
    let setup = occam_view::Setup {
        model: a.model.clone(),
        data: a.data.data.clone(),
        settings: a.run.settings()?,
    };
    let view = occam_view::start(setup, &opts)?;
    outln!("occam view: open {}", view.url());
    eprintln!("(serving until interrupted: Ctrl-C ends it)");
    view.serve();
    Ok(())
}
