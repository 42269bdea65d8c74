//! `occam view MODEL`: a local browser view of the model (crate `occam-view`): the graph, the
//! bound live while it is fitted, each node's posterior and an editor that re-checks and
//! re-fits.

use std::net::IpAddr;
use std::path::PathBuf;

use clap::Args;
use occam_report::FittedReport;

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

/// `occam fit --view`: the view of `a`'s model and data fitted with its settings; prints the
/// page's address, then the fit's summary when it ends, and serves until interrupted.
pub fn fit_and_serve(a: &super::fit::FitArgs) -> Result<()> {
    let setup = occam_view::Setup {
        model: a.model.clone(),
        data: a.data.data.clone(),
        settings: a.run.settings()?,
    };
    let view = std::sync::Arc::new(occam_view::start(setup, &occam_view::Options::default())?);
    outln!("occam fit --view: open {}", view.url());
    let serving = std::sync::Arc::clone(&view);
    let server = std::thread::spawn(move || serving.serve());
    let trace = std::sync::Arc::clone(&view.session().state().trace);
    trace.wait_ended();
    {
        let st = view.session().state();
        match (&st.fitted, &st.error) {
            (Some(f), _) => out!("{}", f.summary()),
            (None, Some(e)) => eprintln!("the fit failed: {e}"),
            (None, None) => {}
        }
    }
    eprintln!("(still serving the view: Ctrl-C ends it)");
    let _ = server.join();
    Ok(())
}
