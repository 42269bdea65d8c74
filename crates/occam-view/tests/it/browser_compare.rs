//! The compare panel in headless Chromium: a plate sweep typed into the page shows each
//! method's ln p(D) and posterior model probability per model, the numbers of
//! `POST /api/compare` (which occam-cli's tests hold equal to `occam compare --json`).

use serde_json::json;

use crate::cdp::{png_size, shots_dir, Browser};
use crate::common::*;

#[test]
fn the_compare_panel_shows_a_plate_sweeps_evidence_and_probabilities() {
    let v = start("vibes_tutorial/mixture.occam", &[]);
    wait_done(v.addr);
    let Some(mut b) = Browser::launch() else {
        return;
    };
    b.goto(&format!("http://{}/?token={TOKEN}", v.addr));
    b.wait_for("document.querySelector('#state').className === 'done'", 60);
    b.eval(
        "(() => { const p = document.querySelector('#compare-plate'); p.focus(); p.select(); })()",
    );
    b.call("Input.insertText", json!({"text": "K=1..4"}));
    b.click("#compare");
    b.wait_for(
        "document.querySelectorAll('#compare-table tr[data-model]').length === 4",
        120,
    );
    let shown = b.eval(
        "[...document.querySelectorAll('#compare-table tr[data-model]')].map((r) =>
           [...r.cells].slice(1).map((c) => c.dataset.value === '' ? null : +c.dataset.value))",
    );
    let (_, want) = post_json(
        v.addr,
        "/api/compare",
        &json!({"plate": "K=1..4", "methods": ["vb", "bic"]}),
    );
    for (i, m) in want["models"].as_array().unwrap().iter().enumerate() {
        for (j, e) in m["evidence"].as_array().unwrap().iter().enumerate() {
            assert_eq!(
                shown[i][2 * j].as_f64(),
                e["log_evidence"].as_f64(),
                "{shown}"
            );
            assert_eq!(
                shown[i][2 * j + 1].as_f64(),
                e["probability"].as_f64(),
                "{shown}"
            );
        }
    }
    // One line per method, through one point per model.
    for m in ["vb", "bic"] {
        let n = b.eval(&format!(
            "document.querySelector('#compare-chart polyline[data-method=\"{m}\"]').getAttribute('points').split(' ').length"
        ));
        assert_eq!(n, 4, "{m}");
    }
    assert!(b.console_errors().is_empty(), "{:?}", b.console_errors());
    let (w, h) =
        png_size(&b.screenshot(Some("#compare-pane"), &shots_dir().join("view-compare.png")));
    assert!(w > 100 && h > 100);
}
