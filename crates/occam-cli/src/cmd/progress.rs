//! Progress on stderr: a bar when stderr is a terminal (one per restart, showing the bound and its
//! change after every sweep), or with `fit --progress N` one plain line every N sweeps (for logs
//! and pipes; also on a terminal). Both are observers of the library's run loop.

use std::io::IsTerminal;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use occam::{Flow, Observer, Progress, Stage};

/// A progress-bar observer labelled `label` (`restart r/n` is added with several restarts).
pub struct Bar {
    label: String,
    enabled: bool,
    /// Print a line every this many sweeps instead of drawing a bar.
    every: Option<usize>,
    /// The command's start, for the lines' time since it (`None`: not shown).
    since: Option<Instant>,
    bar: Option<(usize, ProgressBar)>,
}

impl Bar {
    /// A bar for a fit labelled `label`; draws nothing unless stderr is a terminal.
    pub fn new(label: &str) -> Bar {
        Bar {
            label: label.to_string(),
            enabled: std::io::stderr().is_terminal(),
            every: None,
            since: None,
            bar: None,
        }
    }

    /// One line on stderr every `every` sweeps (and at each restart's first sweep), instead of a
    /// bar, whether or not stderr is a terminal.
    /// Each line also shows the time since `since` (the command's start), so that a log tells
    /// the set-up before the first sweep from the sweeps.
    pub fn lines(label: &str, every: usize, since: Instant) -> Bar {
        Bar {
            label: label.to_string(),
            enabled: true,
            every: Some(every.max(1)),
            since: Some(since),
            bar: None,
        }
    }

    /// The plain progress line of `p` (no change on a stage's first sweep: there is none yet).
    pub fn line(&self, p: &Progress) -> String {
        let mut s = self.label.clone();
        if p.restarts > 1 {
            s += &format!(" restart {}/{}", p.restart + 1, p.restarts);
        }
        match p.stage {
            Stage::Sweeps => {}
            Stage::Pruning => s += " (pruning)",
            Stage::Candidate => s += " (random-label start)",
        }
        // The bound in full (the shortest text that reads back as the same number), so that
        // logs of two builds tell whether they computed the same bits.
        s += &format!(
            ": iteration {}/{} bound {}",
            p.iteration, p.max_iter, p.bound
        );
        if let Some(c) = p.change {
            s += &format!(" change {c:.3e}");
        }
        s += &format!(" ({:.3} s", p.elapsed.as_secs_f64());
        if let Some(t) = self.since {
            s += &format!(", {:.3} s since the start", t.elapsed().as_secs_f64());
        }
        s.push(')');
        s
    }

    /// A bar without a length: a fit stops when it converges, usually long before `--max-iter`,
    /// so a fraction of that limit would read as "3% done" at the end. It shows what is known
    /// instead: the time so far, the iterations and their rate, the bound and its last change.
    fn start(&self, p: &Progress) -> ProgressBar {
        let b = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} {prefix} {elapsed} iteration {pos} ({per_sec}) {msg}",
        ) {
            b.set_style(style);
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
        if let Some(every) = self.every {
            if p.iteration == 1 || p.iteration.is_multiple_of(every) {
                eprintln!("{}", self.line(p));
            }
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
            b.tick();
            let stage = match p.stage {
                Stage::Sweeps => "",
                Stage::Pruning => " (pruning)",
                Stage::Candidate => " (random-label start)",
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The bar has no length (a fit stops at convergence, long before `--max-iter`), and shows
    /// the elapsed time, iterations and their rate, the bound and its last change.
    #[test]
    fn the_bar_shows_time_rate_and_change_not_a_fraction_of_max_iter() {
        let mut bar = Bar {
            label: "fit".into(),
            enabled: true,
            every: None,
            since: None,
            bar: None,
        };
        let p = Progress {
            restart: 0,
            restarts: 1,
            iteration: 3,
            max_iter: 1000,
            bound: -10.5,
            change: Some(0.25),
            elapsed: Duration::from_millis(30),
            stage: Stage::Sweeps,
        };
        bar.observe(&p);
        let (_, b) = bar.bar.as_ref().unwrap();
        assert_eq!(b.length(), None);
        assert_eq!(b.position(), 3);
        assert_eq!(b.message(), "bound -10.500000 change 2.500e-1");
    }
}
