//! The bound of a running fit as server-sent events.
//!
//! [`TraceObserver`] is the driver's observer: it keeps each sweep's bound in a buffer and hands
//! the buffer to the [`Trace`] at most once per [`FLUSH_EVERY`] (one `points` event holding
//! every sweep since the last), so a watched fit pays a clock read per sweep and a lock twenty
//! times a second. Each point names its restart and stage, so the page draws every restart (and
//! every candidate start, and the pruning sweeps) as a trace of its own. A sweep that lowers the
//! bound is a `warning` event where it happened; the fit's own warnings (collapsed components,
//! a bound still rising, ...) follow at its end, then `done` with the bound, or `error`.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use occam::{Flow, Observer, Progress, Stage};
use serde_json::{json, Value};

/// The shortest time between two `points` events of one fit (at most 20 events a second).
pub const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// A drop of the bound over one sweep larger than this (relative to the bound) is a `warning`
/// event (the rounding of a sum of many terms stays far below it).
const DECREASE: f64 = 1e-9;

/// The events of one fit, in order, and whether it has ended.
#[derive(Default)]
pub struct Trace {
    log: Mutex<Log>,
    changed: Condvar,
    cancelled: AtomicBool,
}

#[derive(Default)]
struct Log {
    /// Each event as its server-sent-events frame (`event: …\ndata: …\n\n`).
    frames: Vec<String>,
    ended: bool,
}

impl Trace {
    /// An empty trace.
    pub fn new() -> Trace {
        Trace::default()
    }

    /// Appends an event named `name` with JSON `data`.
    pub fn push(&self, name: &str, data: &Value) {
        let frame = format!("event: {name}\ndata: {data}\n\n");
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.frames.push(frame);
        self.changed.notify_all();
    }

    /// Appends the last event and ends the trace: readers stop after it.
    pub fn end(&self, name: &str, data: &Value) {
        self.push(name, data);
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.ended = true;
        self.changed.notify_all();
    }

    /// Asks the fit writing this trace to stop (a newer fit replaced it).
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// Waits until the trace has ended (its fit finished, failed or was replaced).
    pub fn wait_ended(&self) {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        while !log.ended {
            log = self.changed.wait(log).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Every event so far as (name, data), for tests and the status endpoint.
    pub fn events(&self) -> Vec<(String, Value)> {
        let log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        log.frames.iter().filter_map(|f| parse_frame(f)).collect()
    }

    /// Writes the events from the first on, waiting for new ones, until the trace ends or the
    /// reader goes away; a comment line every 15 s keeps an idle connection open.
    pub fn stream(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let mut next = 0;
        loop {
            let (chunk, ended) = {
                let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
                if next == log.frames.len() && !log.ended {
                    log = self
                        .changed
                        .wait_timeout(log, Duration::from_secs(15))
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
                let chunk = log.frames[next..].concat();
                next = log.frames.len();
                (chunk, log.ended)
            };
            if !chunk.is_empty() {
                out.write_all(chunk.as_bytes())?;
            } else if !ended {
                out.write_all(b": waiting\n\n")?;
            }
            out.flush()?;
            if ended {
                return Ok(());
            }
        }
    }
}

/// (name, data) of one frame.
fn parse_frame(f: &str) -> Option<(String, Value)> {
    let name = f.strip_prefix("event: ")?.lines().next()?.to_string();
    let data = f.lines().nth(1)?.strip_prefix("data: ")?;
    Some((name, serde_json::from_str(data).ok()?))
}

fn stage_name(s: Stage) -> &'static str {
    match s {
        Stage::Sweeps => "sweeps",
        Stage::Pruning => "pruning",
        Stage::Candidate => "candidate",
    }
}

/// The observer that fills a [`Trace`] (see the module documentation).
pub struct TraceObserver<'t> {
    trace: &'t Trace,
    points: Vec<Value>,
    last: Instant,
}

impl<'t> TraceObserver<'t> {
    /// An observer writing to `trace`.
    pub fn new(trace: &'t Trace) -> Self {
        TraceObserver {
            trace,
            points: Vec::new(),
            last: Instant::now(),
        }
    }

    /// Sends the sweeps not yet sent as one `points` event.
    pub fn flush(&mut self) {
        if !self.points.is_empty() {
            let points = std::mem::take(&mut self.points);
            self.trace.push("points", &Value::Array(points));
        }
        self.last = Instant::now();
    }
}

impl Observer for TraceObserver<'_> {
    fn observe(&mut self, p: &Progress) -> Flow {
        // [restart, stage, iteration, bound]: short, since a fast fit sends thousands.
        self.points.push(json!([
            p.restart,
            stage_name(p.stage),
            p.iteration,
            p.bound
        ]));
        if let Some(c) = p.change {
            if c < -DECREASE * p.bound.abs().max(1.0) {
                self.flush();
                self.trace.push(
                    "warning",
                    &json!({
                        "restart": p.restart, "stage": stage_name(p.stage),
                        "iteration": p.iteration, "bound": p.bound,
                        "message": format!("the bound decreased by {:.3e} at iteration {}", -c, p.iteration),
                    }),
                );
            }
        }
        if self.last.elapsed() >= FLUSH_EVERY {
            self.flush();
        }
        if self.trace.cancelled.load(Ordering::Relaxed) {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }
}

impl Drop for TraceObserver<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}
