//! The page in headless Chromium, driven over the DevTools protocol ([`crate::cdp`]): it loads
//! without console errors and draws every node; a mouse click on each node of the tutorial
//! mixture, the HMM and BPCA shows the plot its family calls for, with the numbers of
//! `occam fit --json`; the bound chart grows while a fit runs; an edit that introduces an error
//! is underlined on its line. Screenshots go to the target directory (or `$OCCAM_VIEW_SHOTS`:
//! scripts/view-screenshots regenerates the guide's) and are checked for structure, not pixels.
//! Each test is skipped, saying so, when no `chromium` is on PATH.

use serde_json::{json, Value};

use crate::cdp::{png_size, shots_dir, Browser};
use crate::common::*;
use crate::endpoints::fit_json;

/// Opens the view of `v` in a fresh browser and waits for its fit to be drawn.
fn open(v: &Running) -> Option<Browser> {
    let mut b = Browser::launch()?;
    b.goto(&format!("http://{}/?token={TOKEN}", v.addr));
    b.wait_for("document.querySelector('#state').className === 'done'", 300);
    b.wait_for("document.querySelectorAll('#graph .node').length > 0", 30);
    Some(b)
}

/// What the posterior pane shows once node `name` is clicked (with the mixture's panel when
/// `mixture`): the plot's kind, counts of its marks, its texts and the numbers listed under it.
fn click_node(b: &mut Browser, name: &str, mixture: bool) -> Value {
    b.click(&format!("#graph .node[data-name=\"{name}\"]"));
    let want = if mixture { "svg.mixture" } else { "svg.plot" };
    b.wait_for(
        &format!(
            "document.querySelector('#posterior svg.plot')?.dataset.variable === {0} \
             && !!document.querySelector('#posterior {want}')",
            json!(name)
        ),
        30,
    );
    b.eval(
        "(() => { const s = document.querySelector('#posterior svg.plot:not(.mixture)');
           const n = (q) => s.querySelectorAll(q).length;
           const m = document.querySelector('#posterior svg.mixture');
           return { plot: s.dataset.plot || null,
             bars: n('rect.bar'), marked: n('rect.bar.marked'),
             hinton: n('rect.hinton-pos, rect.hinton-neg'),
             density: n('polyline.density') + n('path.interval'),
             marginals: n('rect.marginal'), viterbi: n('polyline.viterbi'),
             texts: [...s.querySelectorAll('text')].map((t) => t.textContent),
             head: document.querySelector('#posterior p').textContent,
             caption: document.querySelector('#posterior p.caption').textContent,
             selected: [...document.querySelectorAll('#graph .node.selected')].map((g) => g.dataset.name),
             params: Object.fromEntries([...document.querySelectorAll('#posterior tr[data-param]')]
               .map((r) => [r.dataset.param, JSON.parse(r.dataset.values)])),
             mixture: m && { ellipses: [...m.querySelectorAll('ellipse.component')]
                 .map((e) => [+e.dataset.component, +e.dataset.weight]),
               points: m.querySelectorAll('circle.point').length } }; })()",
    )
}

/// Whether two JSON trees hold the same numbers (compared as f64, so 0 equals 0.0).
fn same_numbers(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_numbers(p, q))
        }
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Clicks every node of `nodes` = (name, plot kind, count of its marks, words of its caption)
/// and checks the plot, its labels and that the numbers shown are `fit --json`'s.
fn check_nodes(b: &mut Browser, report: &Value, nodes: &[(&str, &str, usize, &str)], mix: &[&str]) {
    for &(name, kind, count, words) in nodes {
        let shown = click_node(b, name, mix.contains(&name));
        let var = &report["variables"][name];
        assert_eq!(shown["plot"], kind, "plot of {name}: {shown}");
        let marks = match kind {
            "bars" | "relevance" => &shown["bars"],
            "hinton" => &shown["hinton"],
            "density" => &shown["density"],
            "chain" => &shown["marginals"],
            _ => unreachable!(),
        };
        assert_eq!(marks, count, "marks of {name}'s {kind}: {shown}");
        assert!(
            shown["caption"].as_str().unwrap().contains(words),
            "{name}: caption {} lacks {words:?}",
            shown["caption"]
        );
        assert_eq!(shown["selected"], json!([name]));
        let plates: Vec<String> = var["plates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| format!("{} = {}", p["name"].as_str().unwrap(), p["size"]))
            .collect();
        let plates = if plates.is_empty() {
            "none".to_string()
        } else {
            plates.join(", ")
        };
        assert_eq!(
            shown["head"],
            format!(
                "{} ({}), plates: {plates}",
                var["distribution"].as_str().unwrap(),
                var["role"].as_str().unwrap()
            )
        );
        // The numbers under the plot: the first six of each parameter of `fit --json`.
        let params = var["parameters"].as_object().unwrap();
        assert_eq!(shown["params"].as_object().unwrap().len(), params.len());
        for (k, vals) in params {
            let first: Vec<Value> = vals.as_array().unwrap().iter().take(6).cloned().collect();
            assert!(
                same_numbers(&shown["params"][k], &Value::Array(first)),
                "{name}.{k}: page {} against fit --json",
                shown["params"][k]
            );
        }
    }
}

#[test]
fn clicking_each_node_of_the_tutorial_mixture_shows_its_plot() {
    let v = start("vibes_tutorial/mixture.occam", &[]);
    let status = wait_done(v.addr);
    let Some(mut b) = open(&v) else { return };
    let (report, _) = fit_json("vibes_tutorial/mixture.occam", &[]);
    assert_eq!(status["bound"], report["bound"]);
    for name in ["pi", "mu", "gamma", "lambda", "x"] {
        let n = b.eval(&format!(
            "document.querySelectorAll('#graph .node[data-name=\"{name}\"]').length"
        ));
        assert_eq!(n, 1, "node {name} drawn once");
    }
    assert_eq!(
        b.eval("document.querySelectorAll('#graph .plate').length"),
        3
    );
    // Every sweep the fit observed is on the chart, and the header gives the bound.
    let sent: usize = trace_events(v.addr)
        .iter()
        .filter(|(n, _)| n == "points")
        .map(|(_, d)| d.as_array().unwrap().len())
        .sum();
    let drawn = b.wait_for("+document.querySelector('#trace').dataset.points", 10);
    assert_eq!(drawn, sent);
    let state = b.eval("document.querySelector('#state').textContent");
    assert!(
        state
            .as_str()
            .unwrap()
            .starts_with(&format!("L = {} after", report["bound"])),
        "{state}"
    );
    let mixture = ["mu", "gamma", "lambda", "x"];
    check_nodes(
        &mut b,
        &report,
        &[
            ("pi", "bars", 20, "mean weights"),
            ("mu", "hinton", 40, "Hinton diagram of the means (K × D)"),
            ("gamma", "hinton", 40, "Hinton diagram of the means (K × D)"),
            (
                "lambda",
                "bars",
                20,
                "weights: mean probability of each of 20",
            ),
            ("x", "hinton", 1000, "Hinton diagram of the means (N × D)"),
        ],
        &mixture,
    );
    // The components in use as ellipses over the data: the weights are lambda's mean
    // responsibilities, those above 1e-3 drawn.
    let shown = click_node(&mut b, "mu", true);
    let probs = report["variables"]["lambda"]["parameters"]["probabilities"]
        .as_array()
        .unwrap();
    let mut want = Vec::new();
    for k in 0..20 {
        let w = probs.iter().map(|r| r[k].as_f64().unwrap()).sum::<f64>() / probs.len() as f64;
        if w > 1e-3 {
            want.push((k, w));
        }
    }
    let got = shown["mixture"]["ellipses"].as_array().unwrap();
    assert_eq!(got.len(), want.len(), "{shown}");
    // The components drawn are those the fit kept (a deleted component's mean is back at its
    // prior's, 0).
    let mu = report["variables"]["mu"]["parameters"]["mean"]
        .as_array()
        .unwrap();
    let kept: Vec<usize> = (0..20)
        .filter(|k| mu[2 * k] != 0.0 || mu[2 * k + 1] != 0.0)
        .collect();
    assert_eq!(want.iter().map(|w| w.0).collect::<Vec<_>>(), kept);
    for (g, (k, w)) in got.iter().zip(&want) {
        assert_eq!(g[0].as_u64().unwrap() as usize, *k);
        assert!(
            (g[1].as_f64().unwrap() - w).abs() <= 1e-12 * w,
            "{g} vs {w}"
        );
    }
    assert_eq!(shown["mixture"]["points"], 500);
    assert!(b.console_errors().is_empty(), "{:?}", b.console_errors());

    let dir = shots_dir();
    let page = b.screenshot(None, &dir.join("view-page.png"));
    assert_eq!(png_size(&page), crate::cdp::VIEWPORT);
    for (sel, file) in [
        ("#graph-pane", "view-graph.png"),
        ("#posterior-pane", "view-mixture.png"),
    ] {
        let rect = b.eval(&format!(
            "(() => {{ const r = document.querySelector('{sel}').getBoundingClientRect(); return [r.width, r.height]; }})()"
        ));
        let (w, h) = png_size(&b.screenshot(Some(sel), &dir.join(file)));
        assert!(
            (w as f64 - rect[0].as_f64().unwrap()).abs() <= 1.0,
            "{file}: {w}"
        );
        assert!(
            (h as f64 - rect[1].as_f64().unwrap()).abs() <= 1.0,
            "{file}: {h}"
        );
    }
}

#[test]
fn clicking_each_node_of_the_hmm_shows_its_plot() {
    let dir = examples().join("models/hmm_chain");
    let data = vec![
        format!("y={}", dir.join("y.csv").display()),
        format!("L={}", dir.join("L.csv").display()),
    ];
    let v = start("models/hmm_chain.occam", &data);
    wait_done(v.addr);
    let Some(mut b) = open(&v) else { return };
    let (report, _) = fit_json("models/hmm_chain.occam", &data);
    let steps = report["chains"]["z"]["marginals"][0]
        .as_array()
        .unwrap()
        .len();
    assert!(steps > 10);
    check_nodes(
        &mut b,
        &report,
        &[
            ("p0", "bars", 3, "mean weights"),
            ("A", "hinton", 9, "mean weights, one row per element of K"),
            (
                "z",
                "chain",
                3 * steps,
                "state marginals and the most probable path",
            ),
            ("mu", "bars", 3, "means ± 1 sd"),
            ("tau", "bars", 3, "means"),
            ("y", "hinton", 180, "Hinton diagram of the means (S × T)"),
            ("L", "bars", 3, "means ± 1 sd"),
        ],
        &[],
    );
    // The Viterbi path is drawn over the marginals, through one point per step.
    click_node(&mut b, "z", false);
    let path = b.eval(
        "document.querySelector('#posterior polyline.viterbi').getAttribute('points').split(' ').length",
    );
    assert_eq!(path, steps);
    let label = b.eval("[...document.querySelectorAll('#posterior svg.plot text')].map((t) => t.textContent).pop()");
    assert_eq!(
        label,
        format!("sequence 1 of 3: {steps} steps"),
        "the chain's label"
    );
    assert!(b.console_errors().is_empty(), "{:?}", b.console_errors());
    let (w, h) =
        png_size(&b.screenshot(Some("#posterior-pane"), &shots_dir().join("view-hmm.png")));
    assert!(w > 100 && h > 100);
}

#[test]
fn clicking_each_node_of_bpca_shows_its_plot_and_the_ard_relevances() {
    let v = start("bpca/bpca.occam", &[]);
    wait_done(v.addr);
    let Some(mut b) = open(&v) else { return };
    let (report, _) = fit_json("bpca/bpca.occam", &[]);
    let ard = &report["ard"][0];
    assert_eq!(ard["variable"], "alpha");
    check_nodes(
        &mut b,
        &report,
        &[
            ("W", "hinton", 90, "Hinton diagram of the means (rows: D)"),
            ("X", "hinton", 2700, "Hinton diagram of the means (rows: N)"),
            (
                "alpha",
                "relevance",
                9,
                "ARD relevances over Q (of W): 3 of 9 effective",
            ),
            ("mu", "bars", 10, "means ± 1 sd"),
            ("tau", "density", 2, "Gamma(shape"),
            ("y", "bars", 200, "means ± 1 sd (first 200)"),
        ],
        &[],
    );
    // The relevances drawn are the report's, the effective ones marked.
    click_node(&mut b, "alpha", false);
    let marked = b.eval("document.querySelectorAll('#posterior rect.bar.marked').length");
    assert_eq!(marked, ard["effective_dimension"]);
    let heights = b.eval(
        "[...document.querySelectorAll('#posterior rect.bar')].map((r) => +r.getAttribute('height'))",
    );
    let rel: Vec<f64> = ard["relevance"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let h: Vec<f64> = heights
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let top = rel.iter().cloned().fold(0.0, f64::max);
    let tallest = h.iter().cloned().fold(0.0, f64::max);
    for (r, hh) in rel.iter().zip(&h) {
        assert!(
            (hh / tallest - r / top).abs() < 1e-9,
            "bar {hh} for relevance {r}"
        );
    }
    // tau's density: the 95% interval is labelled and lies around the mean.
    click_node(&mut b, "tau", false);
    let texts = b.eval(
        "[...document.querySelectorAll('#posterior svg.plot text')].map((t) => t.textContent)",
    );
    let interval = texts
        .as_array()
        .unwrap()
        .iter()
        .find_map(|t| t.as_str().unwrap().strip_prefix("95%: ["))
        .expect("the interval's label");
    let (lo, hi) = interval.trim_end_matches(']').split_once(", ").unwrap();
    let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
    let mean = report["variables"]["tau"]["parameters"]["mean"][0]
        .as_f64()
        .unwrap();
    assert!(lo < mean && mean < hi, "[{lo}, {hi}] around {mean}");
    assert!(b.console_errors().is_empty(), "{:?}", b.console_errors());
    click_node(&mut b, "alpha", false);
    let (w, h) =
        png_size(&b.screenshot(Some("#posterior-pane"), &shots_dir().join("view-ard.png")));
    assert!(w > 100 && h > 100);
}

#[test]
fn the_bound_chart_gains_points_while_a_fit_runs() {
    // The tutorial mixture on its data repeated eight times (N = 4000): slow enough in a test
    // build for many of the 50 ms batches.
    let dir = tempfile::tempdir().unwrap();
    let src = examples().join("vibes_tutorial");
    std::fs::copy(src.join("mixture.occam"), dir.path().join("mixture.occam")).unwrap();
    let x = std::fs::read_to_string(src.join("x.csv")).unwrap();
    let (head, rows) = x.split_once('\n').unwrap();
    let mut big = format!("{head}\n");
    for _ in 0..8 {
        big.push_str(rows.trim_end());
        big.push('\n');
    }
    std::fs::write(dir.path().join("x.csv"), big).unwrap();
    let v = start_at(&dir.path().join("mixture.occam"), &[]);
    wait_done(v.addr);
    let Some(mut b) = open(&v) else { return };
    // A fresh fit, started from the page's Fit button while the page watches.
    b.click("#fit");
    b.wait_for("document.querySelector('#state').className !== 'done'", 10);
    let mut seen: Vec<u64> = Vec::new();
    loop {
        let s = b.eval(
            "[+document.querySelector('#trace').dataset.points, document.querySelector('#state').className]",
        );
        if s[1] == "done" {
            break;
        }
        let n = s[0].as_u64().unwrap();
        if seen.last() != Some(&n) {
            seen.push(n);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let total = b.wait_for("+document.querySelector('#trace').dataset.points", 10);
    let total = total.as_u64().unwrap();
    let sent: usize = trace_events(v.addr)
        .iter()
        .filter(|(n, _)| n == "points")
        .map(|(_, d)| d.as_array().unwrap().len())
        .sum();
    assert_eq!(total as usize, sent);
    let between: Vec<u64> = seen
        .iter()
        .copied()
        .filter(|&n| n > 0 && n < total)
        .collect();
    assert!(
        between.len() >= 2,
        "the chart showed {seen:?} while fitting, {total} at the end"
    );
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    let (w, h) = png_size(&b.screenshot(Some("#trace-pane"), &shots_dir().join("view-bound.png")));
    assert!(w > 100 && h > 100);
    assert!(b.console_errors().is_empty(), "{:?}", b.console_errors());
}

#[test]
fn an_edit_that_introduces_an_error_is_underlined_on_its_line() {
    let v = start("vibes_tutorial/mixture.occam", &[]);
    wait_done(v.addr);
    let Some(mut b) = open(&v) else { return };
    let source = std::fs::read_to_string(examples().join("vibes_tutorial/mixture.occam")).unwrap();
    // Select `lambda` in `mu[lambda]` and type `lamda` over it, as a user would.
    let at = source.find("mu[lambda]").unwrap() + "mu[".len();
    let line = source[..at].matches('\n').count() + 1;
    b.eval(&format!(
        "(() => {{ const e = document.querySelector('#editor'); e.focus(); e.setSelectionRange({at}, {}); }})()",
        at + "lambda".len()
    ));
    b.call("Input.insertText", json!({"text": "lamda"}));
    let edited = b.eval("document.querySelector('#editor').value");
    assert_eq!(edited, source.replacen("mu[lambda]", "mu[lamda]", 1));
    b.click("#check");
    b.wait_for("!!document.querySelector('#underlay mark')", 30);
    let mark = b.eval(
        "(() => { const u = document.querySelector('#underlay'), m = u.querySelector('mark'); let before = '';
           for (const n of u.childNodes) { if (n === m) break; before += n.textContent; }
           return [before.split('\\n').length, before.length - before.lastIndexOf('\\n'), m.textContent,
             document.querySelector('#diagnostics li').dataset.line]; })()",
    );
    // The page's own request gives the same diagnostic as the check endpoint.
    let (_, r) = post_json(v.addr, "/api/check", &json!({"source": edited}));
    let d = &r["diagnostics"][0];
    assert_eq!(mark[0], line, "underlined line: {mark} ({r})");
    assert_eq!(mark[0], d["line"]);
    assert_eq!(mark[1], d["column"]);
    assert_eq!(mark[2], "lamda");
    assert_eq!(mark[3], line.to_string());
    assert!(b.console_errors().is_empty(), "{:?}", b.console_errors());
    let (w, h) =
        png_size(&b.screenshot(Some("#editor-pane"), &shots_dir().join("view-editor.png")));
    assert!(w > 100 && h > 100);
}
