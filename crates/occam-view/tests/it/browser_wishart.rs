//! A 2-D Wishart precision in the page (BayesPy's full-covariance mixture): clicking Λ draws,
//! for each component in use, the covariance ⟨Λ⟩⁻¹ (the inverse of the report's `mean`,
//! inverted in the page) and E[Λ⁻¹] = rate / (dof − 3) around the component's mean over the
//! data; both equal the closed forms from `fit --json`'s `rate` and `dof`, and each ellipse's
//! axes are the covariance's eigenvectors with the ratio of its eigenvalues.

use serde_json::{json, Value};

use crate::cdp::{png_size, shots_dir, Browser};
use crate::common::*;
use crate::endpoints::fit_json;

/// The symmetric 2 × 2 matrix of a JSON [[a, b], [b, c]] as [a, b, c].
fn sym(m: &Value) -> [f64; 3] {
    let at = |i: usize, j: usize| m[i][j].as_f64().unwrap();
    [at(0, 0), at(0, 1), at(1, 1)]
}

fn close(x: f64, y: f64, rel: f64) -> bool {
    (x - y).abs() <= rel * x.abs().max(y.abs())
}

#[test]
fn clicking_a_wishart_precision_draws_its_covariance_ellipses() {
    let v = start("bayespy/gmm/gmm.occam", &[]);
    let (report, _) = fit_json("bayespy/gmm/gmm.occam", &[]);
    let Some(mut b) = Browser::launch() else {
        return;
    };
    b.goto(&format!("http://{}/?token={TOKEN}", v.addr));
    b.wait_for("document.querySelector('#state').className === 'done'", 300);
    b.wait_for("document.querySelectorAll('#graph .node').length > 0", 30);
    b.click("#graph .node[data-name=\"Lambda\"]");
    b.wait_for(
        "(() => { const s = document.querySelector('#posterior svg.plot');
           return s?.dataset.variable === 'Lambda' && s.dataset.plot === 'wishart' && s.dataset.centred === 'means'; })()",
        30,
    );
    let shown = b.eval(
        "(() => { const s = document.querySelector('#posterior svg.plot');
           return { ellipses: [...s.querySelectorAll('ellipse.component')].map((e) => ({
               k: +e.dataset.component, kind: e.dataset.kind, weight: +e.dataset.weight,
               cov: JSON.parse(e.dataset.cov), rx: +e.getAttribute('rx'), ry: +e.getAttribute('ry'),
               transform: e.getAttribute('transform') })),
             points: s.querySelectorAll('circle.point').length,
             caption: document.querySelector('#posterior p.caption').textContent }; })()",
    );
    let lambda = &report["variables"]["Lambda"]["parameters"];
    let probs = report["variables"]["z"]["parameters"]["probabilities"]
        .as_array()
        .unwrap();
    let k_all = lambda["dof"].as_array().unwrap().len();
    let used: Vec<(usize, f64)> = (0..k_all)
        .map(|k| {
            let w = probs.iter().map(|r| r[k].as_f64().unwrap()).sum::<f64>() / probs.len() as f64;
            (k, w)
        })
        .filter(|&(_, w)| w > 1e-3)
        .collect();
    assert!(!used.is_empty());
    let got = shown["ellipses"].as_array().unwrap();
    assert_eq!(got.len(), 2 * used.len(), "{shown}");
    for (&(k, w), pair) in used.iter().zip(got.chunks(2)) {
        let n = lambda["dof"][k].as_f64().unwrap();
        let rate = sym(&lambda["rate"][k]);
        for (e, kind, div) in [
            (&pair[0], "inverse-mean", n),
            (&pair[1], "mean-inverse", n - 3.0),
        ] {
            assert_eq!(e["k"], json!(k));
            assert_eq!(e["kind"], kind);
            assert!(close(e["weight"].as_f64().unwrap(), w, 1e-12), "{e}");
            let cov: Vec<f64> = e["cov"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            for (c, r) in cov.iter().zip(rate) {
                assert!(
                    close(*c, r / div, 1e-9) || (r == 0.0 && c.abs() < 1e-12),
                    "component {k} {kind}: page {cov:?} against rate / {div} = {rate:?} / {div}"
                );
            }
            // The drawn axes: rotated by −θ (SVG's y points down), u = (cos θ, sin θ) is the
            // covariance's major eigenvector, and (rx / ry)² the ratio of its eigenvalues.
            let t = e["transform"].as_str().unwrap();
            let deg: f64 = t["rotate(".len()..]
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let th = (-deg).to_radians();
            let (u, w2) = ([th.cos(), th.sin()], [-th.sin(), th.cos()]);
            let s = [[cov[0], cov[1]], [cov[1], cov[2]]];
            let su = [
                s[0][0] * u[0] + s[0][1] * u[1],
                s[1][0] * u[0] + s[1][1] * u[1],
            ];
            let quad = |x: [f64; 2]| {
                x[0] * (s[0][0] * x[0] + s[0][1] * x[1]) + x[1] * (s[1][0] * x[0] + s[1][1] * x[1])
            };
            let scale = cov[0].abs() + cov[2].abs();
            assert!(
                (su[0] * u[1] - su[1] * u[0]).abs() <= 1e-9 * scale,
                "{e}: u is no eigenvector"
            );
            let (l1, l2) = (quad(u), quad(w2));
            assert!(l1 >= l2, "{e}: u is the minor axis");
            let (rx, ry) = (e["rx"].as_f64().unwrap(), e["ry"].as_f64().unwrap());
            assert!(close((rx / ry).powi(2), l1 / l2, 1e-9), "{e}");
        }
    }
    assert_eq!(shown["points"], 200);
    assert!(
        shown["caption"]
            .as_str()
            .unwrap()
            .contains("solid ⟨Λ⟩⁻¹ = rate / dof, dashed E[Λ⁻¹] = rate / (dof − 3)"),
        "{shown}"
    );
    assert!(b.console_errors().is_empty(), "{:?}", b.console_errors());
    let (w, h) = png_size(&b.screenshot(
        Some("#posterior-pane"),
        &shots_dir().join("view-wishart.png"),
    ));
    assert!(w > 100 && h > 100, "{w} × {h}");
}
