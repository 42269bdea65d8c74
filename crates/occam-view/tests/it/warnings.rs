//! Warnings where they happen: a sweep that lowers the bound is a `warning` event sent right
//! after that sweep's point (so the page puts its mark on that sweep), and a fit that deleted
//! components says where its pruning began, which the page marks on the chart.

use occam::{Observer, Progress, Stage};
use std::time::Duration;

use crate::cdp::Browser;
use crate::common::*;

#[test]
fn a_bound_decrease_is_sent_at_its_sweep() {
    let trace = occam_view::trace::Trace::new();
    {
        let mut obs = occam_view::trace::TraceObserver::new(&trace);
        let mut last = None;
        for (i, b) in [-100.0, -50.0, -40.0, -45.0, -30.0].into_iter().enumerate() {
            obs.observe(&Progress {
                restart: 0,
                restarts: 1,
                iteration: i + 1,
                max_iter: 100,
                bound: b,
                change: last.map(|l: f64| b - l),
                elapsed: Duration::ZERO,
                stage: Stage::Sweeps,
            });
            last = Some(b);
        }
    }
    let events = trace.events();
    let at = events.iter().position(|(n, _)| n == "warning").unwrap();
    let w = &events[at].1;
    assert_eq!(w["iteration"], 4);
    assert_eq!(w["bound"], -45.0);
    assert!(w["message"].as_str().unwrap().contains("5.000e0"), "{w}");
    // The points sent before the warning end at its sweep: the page's mark (at the series'
    // length when the warning arrives) is on sweep 4.
    let before: Vec<f64> = events[..at]
        .iter()
        .filter(|(n, _)| n == "points")
        .flat_map(|(_, d)| d.as_array().unwrap().clone())
        .map(|p| p[3].as_f64().unwrap())
        .collect();
    assert_eq!(before, [-100.0, -50.0, -40.0, -45.0]);
    assert_eq!(events.iter().filter(|(n, _)| n == "warning").count(), 1);
}

#[test]
fn the_chart_marks_where_the_mixtures_pruning_deleted_components() {
    let v = start("vibes_tutorial/mixture.occam", &[]);
    wait_done(v.addr);
    let Some(mut b) = Browser::launch() else {
        return;
    };
    b.goto(&format!("http://{}/?token={TOKEN}", v.addr));
    b.wait_for("!!document.querySelector('#trace line.prune-mark')", 60);
    let (report, _) = crate::endpoints::fit_json("vibes_tutorial/mixture.occam", &[]);
    let start = report["prune_start"].as_u64().unwrap();
    let mark = b.eval(
        "(() => { const m = document.querySelector('#trace line.prune-mark');
           const kept = document.querySelector('#trace polyline[data-series=\"1\"]').getAttribute('points').split(' ');
           return [+m.dataset.iteration, +m.getAttribute('x1'), kept.length,
             document.querySelector('#trace .prune-label').textContent]; })()",
    );
    assert_eq!(mark[0], start);
    // The mark stands on the kept run's sweep `prune_start`: the x of that point of its line.
    let kept_x = b.eval(&format!(
        "+document.querySelector('#trace polyline[data-series=\"1\"]').getAttribute('points').split(' ')[{}].split(',')[0]",
        start - 1
    ));
    assert!(
        (mark[1].as_f64().unwrap() - kept_x.as_f64().unwrap()).abs() < 0.06,
        "{mark} vs {kept_x}"
    );
    let used = report["variables"]["mu"]["parameters"]["mean"]
        .as_array()
        .unwrap()
        .chunks(2)
        .filter(|m| m[0] != 0.0 || m[1] != 0.0)
        .count();
    assert_eq!(mark[3], format!("pruned: lambda {used}/20 in use"));
}
