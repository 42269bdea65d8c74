//! The page in headless Chromium (Debian's `chromium`, installed by scripts/setup-browser): it
//! loads without console errors, draws every node of the graph, and the bound chart holds the
//! fit's sweeps. Skipped, saying so, when no `chromium` is on PATH.

use std::process::Command;

use crate::common::*;

/// The DOM after the page ran (`--dump-dom`), with chromium's log on stderr; `None` without
/// chromium.
fn dump_dom(url: &str) -> Option<(String, String)> {
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=8000",
            "--dump-dom",
            url,
        ])
        .output()
        .ok()?;
    Some((
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[test]
fn the_page_draws_the_graph_and_the_bound_without_console_errors() {
    let v = start("vibes_tutorial/mixture.occam", &[]);
    let status = wait_done(v.addr);
    let url = format!("http://{}/?token={TOKEN}", v.addr);
    let Some((dom, log)) = dump_dom(&url) else {
        eprintln!("SKIPPED: no `chromium` on PATH (scripts/setup-browser installs it)");
        return;
    };
    // Console messages and uncaught exceptions are logged as CONSOLE lines.
    let errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .collect();
    assert!(errors.is_empty(), "console: {errors:?}");
    for name in ["pi", "mu", "gamma", "lambda", "x"] {
        assert!(
            dom.contains(&format!("data-name=\"{name}\"")),
            "node {name} not drawn:\n{dom}"
        );
    }
    assert_eq!(dom.matches("class=\"plate\"").count(), 3, "{dom}");
    // Every sweep the fit observed is on the chart.
    let sent: usize = trace_events(v.addr)
        .iter()
        .filter(|(n, _)| n == "points")
        .map(|(_, d)| d.as_array().unwrap().len())
        .sum();
    assert!(dom.contains(&format!("data-points=\"{sent}\"")), "{dom}");
    let bound = status["bound"].as_f64().unwrap();
    assert!(dom.contains(&format!("L = {bound}")), "{dom}");
}
