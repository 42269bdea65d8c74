//! The progress bar on stderr (only when stderr is a terminal): an observer of the library's run
//! loop, one bar per restart, showing the bound and its change after every sweep.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressStyle};
use occam::{Flow, Observer, Progress, Stage};

/// A progress-bar observer labelled `label` (`restart r/n` is added with several restarts).
pub struct Bar {
    label: String,
    enabled: bool,
    bar: Option<(usize, ProgressBar)>,
}

impl Bar {
    /// A bar for a fit labelled `label`; draws nothing unless stderr is a terminal.
    pub fn new(label: &str) -> Bar {
        Bar {
            label: label.to_string(),
            enabled: std::io::stderr().is_terminal(),
            bar: None,
        }
    }

    fn start(&self, p: &Progress) -> ProgressBar {
        let b = ProgressBar::new(p.max_iter as u64);
        if let Ok(style) = ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg}") {
            b.set_style(style.progress_chars("=> "));
        }
        b.set_prefix(if p.restarts > 1 {
            format!("{} restart {}/{}", self.label, p.restart + 1, p.restarts)
        } else {
            self.label.clone()
        });
        b
    }
}

impl Observer for Bar {
    fn observe(&mut self, p: &Progress) -> Flow {
        if !self.enabled {
            return Flow::Continue;
        }
        if self.bar.as_ref().is_none_or(|(r, _)| *r != p.restart) {
            if let Some((_, old)) = self.bar.take() {
                old.finish_and_clear();
            }
            self.bar = Some((p.restart, self.start(p)));
        }
        if let Some((_, b)) = &self.bar {
            b.set_position(p.iteration as u64);
            let stage = match p.stage {
                Stage::Sweeps => "",
                Stage::Pruning => " (pruning)",
            };
            match p.change {
                Some(c) => b.set_message(format!("bound {:.6} change {c:.3e}{stage}", p.bound)),
                None => b.set_message(format!("bound {:.6}{stage}", p.bound)),
            }
        }
        Flow::Continue
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some((_, b)) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
