//! The commands end to end: check, fit (text, JSON, output files), sample, graph, data formats
//! and missing values.

use crate::common;
use common::*;

use std::path::Path;

#[test]
fn check_prints_plates_nodes_and_conjugacy() {
    let out = succeeded(occam().args(["check", "examples/vibes_tutorial/mixture.occam"]));
    let s = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "K = 20 (fixed)",
        "N = 500 (rows of data `x`)",
        "D = 2 (columns of data `x`)",
        "lambda[N] over K",
        "x.mean ← mu[lambda]: Gaussian (scalar)",
        "x.precision ← gamma[lambda]: Gamma",
        "mixtures present",
    ] {
        assert!(s.contains(needle), "`{needle}` missing in:\n{s}");
    }
}

#[test]
fn check_lowers_every_example_model() {
    // Models whose data are not committed are checked with drawn data of the right shape.
    let dir = tempfile::tempdir().unwrap();
    for (model, plates) in [
        ("examples/models/bpca.occam", vec!["N=30", "D=4"]),
        ("examples/models/factor_analysis.occam", vec!["N=20"]),
        ("examples/models/gmm1d.occam", vec!["N=40"]),
        (
            "examples/models/bernoulli_mixture.occam",
            vec!["N=30", "D=6"],
        ),
        ("examples/models/quickstart.occam", vec!["N=10"]),
        ("examples/models/hmm.occam", vec![]),
    ] {
        let name = Path::new(model)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let sub = dir.path().join(&name);
        std::fs::create_dir(&sub).unwrap();
        let mut cmd = occam();
        cmd.args(["sample", model, "--seed", "5", "--out"])
            .arg(&sub);
        for p in &plates {
            cmd.args(["--plate", p]);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{model}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut check = occam();
        check.args(["check", model]);
        for f in std::fs::read_dir(&sub).unwrap() {
            let f = f.unwrap().path();
            let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
            check.arg("--data").arg(format!("{stem}={}", f.display()));
        }
        let out = check.output().unwrap();
        assert!(
            out.status.success(),
            "{model}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn fit_writes_reports_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = succeeded(
        occam()
            .args(["fit", "examples/bayespy/gmm/gmm.occam", "--out"])
            .arg(&out_dir),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("lower bound L = "), "{text}");
    assert!(
        text.contains("z[N] over K ~ Categorical (latent)"),
        "{text}"
    );
    let post: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("posterior.json")).unwrap())
            .unwrap();
    for key in [
        "bound",
        "iterations",
        "converged",
        "bound_trace",
        "variables",
    ] {
        assert!(post.get(key).is_some(), "{key}");
    }
    let lam = &post["variables"]["Lambda"];
    assert_eq!(lam["distribution"], "Wishart");
    assert_eq!(lam["plates"][0]["name"], "K");
    assert!(lam["parameters"]["dof"].is_array() && lam["parameters"]["rate"].is_array());
    assert_eq!(post["variables"]["y"]["role"], "observed");
    let csv = std::fs::read_to_string(out_dir.join("bound.csv")).unwrap();
    let trace = floats(&post["bound_trace"]);
    assert_eq!(csv.lines().count(), trace.len() + 1);
    assert!(csv.starts_with("iteration,bound\n1,"));
    let svg = std::fs::read_to_string(out_dir.join("bound.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("</svg>"));
    for h in ["hinton_mu.svg", "hinton_alpha.svg", "hinton_z.svg"] {
        let s = std::fs::read_to_string(out_dir.join(h)).unwrap();
        assert!(s.contains("<rect"), "{h}");
    }
    // Nothing but the reports: no temporary files left behind.
    let mut names: Vec<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.iter().all(|n| !n.starts_with(".occam-")), "{names:?}");
}

#[test]
fn json_has_every_variable_with_parameters_and_moments() {
    let out = occam()
        .args([
            "fit",
            "examples/bayespy/regression/regression.occam",
            "--json",
        ])
        .output()
        .unwrap();
    let j = json(&out);
    let vars = j["variables"].as_object().unwrap();
    let mut names: Vec<&str> = vars.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(names, ["B", "X", "tau", "y"]);
    let tau = &vars["tau"];
    assert_eq!(tau["distribution"], "Gamma");
    let shape = floats(&tau["parameters"]["shape"])[0];
    // Posterior shape of a Gamma precision with 10 observations: 1e-3 + 10/2.
    assert!((shape - 5.001).abs() < 1e-12, "{shape}");
    assert_eq!(
        vars["B"]["parameters"]["covariance"][0]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(vars["X"]["role"], "data");
    assert_eq!(floats(&vars["tau"]["moments"]).len(), 2);
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let bound = |threads: &str| {
        let out = occam()
            .args([
                "fit",
                "examples/bayespy/gmm/gmm.occam",
                "--json",
                "--threads",
                threads,
            ])
            .output()
            .unwrap();
        json(&out)["bound_trace"].clone()
    };
    assert_eq!(bound("1"), bound("2"));
}

#[test]
fn missing_values_are_masked() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full.csv");
    let gappy = dir.path().join("gappy.csv");
    std::fs::write(&full, "y\n1.0\n2.0\n4.0\n").unwrap();
    std::fs::write(&gappy, "y\n1.0\nNA\n2.0\n\nnan\n4.0\n").unwrap();
    let (a, b) = (fit_quickstart(&full), fit_quickstart(&gappy));
    // Missing leaves contribute nothing: the same bound and posterior as without them.
    assert!((a["bound"].as_f64().unwrap() - b["bound"].as_f64().unwrap()).abs() < 1e-9);
    assert_eq!(
        a["variables"]["mu"]["moments"],
        b["variables"]["mu"]["moments"]
    );
    assert_eq!(b["variables"]["y"]["role"], "partly observed");
    // The missing leaf entries are integrated out: no posterior, so null moments and parameters
    // in their positions; the observed entries keep theirs.
    let y = &b["variables"]["y"];
    let moments = y["moments"].as_array().unwrap();
    let gone: Vec<bool> = moments.iter().map(serde_json::Value::is_null).collect();
    assert!(gone.iter().any(|&g| g), "{y}");
    assert!(moments
        .iter()
        .filter(|m| !m.is_null())
        .all(|m| m.is_array()));
    let params = y["parameters"].as_object().unwrap();
    assert!(!params.is_empty());
    for (name, list) in params {
        let list = list.as_array().unwrap();
        assert_eq!(list.len(), gone.len(), "{name}");
        for (v, &g) in list.iter().zip(&gone) {
            assert_eq!(v.is_null(), g, "{name}: {list:?}");
        }
    }
}

/// A CSV with an `NA` cell in a multi-column leaf: the element holding it has null moments and
/// parameters; the other elements are untouched.
#[test]
fn missing_leaf_entries_have_null_posteriors() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("x.csv");
    std::fs::write(&csv, "a,b\n1.0,2.0\nNA,0.5\n3.0,1.0\n").unwrap();
    let out = succeeded(
        occam()
            .args([
                "fit",
                "examples/vibes_tutorial/single.occam",
                "--json",
                "--data",
            ])
            .arg(format!("x={}", csv.display())),
    );
    let j = json(&out);
    let x = &j["variables"]["x"];
    assert_eq!(x["role"], "partly observed");
    let m = x["moments"].as_array().unwrap();
    assert_eq!(m.len(), 6);
    for (i, v) in m.iter().enumerate() {
        assert_eq!(v.is_null(), i == 2, "element {i}: {m:?}");
    }
    for (name, list) in x["parameters"].as_object().unwrap() {
        let list = list.as_array().unwrap();
        assert_eq!(list.len(), 6, "{name}");
        for (i, v) in list.iter().enumerate() {
            assert_eq!(v.is_null(), i == 2, "{name} element {i}: {list:?}");
        }
    }
    // The latent parents keep full posteriors.
    assert!(j["variables"]["mu"]["moments"]
        .as_array()
        .unwrap()
        .iter()
        .all(|v| v.is_array()));
}

fn write_npy(path: &Path, shape: &[u64], values: &[f64]) {
    use npyz::WriterBuilder;
    let mut f = std::fs::File::create(path).unwrap();
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .writer(&mut f)
        .begin_nd()
        .unwrap();
    w.extend(values.iter().copied()).unwrap();
    w.finish().unwrap();
}

#[test]
fn npy_and_npz_data_give_the_same_fit_as_csv() {
    let dir = tempfile::tempdir().unwrap();
    let values = [1.0, 2.0, 4.0, 3.5];
    let npy = dir.path().join("y.npy");
    write_npy(&npy, &[4], &values);
    let npz = dir.path().join("data.npz");
    {
        use npyz::WriterBuilder;
        let mut z = npyz::npz::NpzWriter::create(&npz).unwrap();
        let mut w = z
            .array::<f64>("y", Default::default())
            .unwrap()
            .default_dtype()
            .shape(&[4, 1])
            .begin_nd()
            .unwrap();
        w.extend(values.iter().copied()).unwrap();
        w.finish().unwrap();
    }
    let csv = dir.path().join("y.csv");
    std::fs::write(&csv, "y\n1\n2\n4\n3.5\n").unwrap();
    let bound = |f: &Path| fit_quickstart(f)["bound"].as_f64().unwrap();
    let b = bound(&csv);
    assert_eq!(bound(&npy), b);
    assert_eq!(bound(&npz), b);
    // An infinite array entry is reported by row and column.
    let bad = dir.path().join("bad.npy");
    write_npy(&bad, &[2, 2], &[1.0, 2.0, f64::INFINITY, 3.0]);
    occam()
        .args(["fit", "examples/models/quickstart.occam", "--data"])
        .arg(format!("y={}", bad.display()))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("bad.npy:2:1"));
}

#[test]
fn sample_writes_one_csv_per_observed_variable() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("two.occam");
    std::fs::write(
        &model,
        "plate N = 4\nmu ~ Gaussian(0, 1)\na[N] ~ Gaussian(mu, 1)\nb[N] ~ Poisson(2)\nobserve a, b\n",
    )
    .unwrap();
    let out = dir.path().join("draws");
    occam()
        .arg("sample")
        .arg(&model)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let a = std::fs::read_to_string(out.join("a.csv")).unwrap();
    let b = std::fs::read_to_string(out.join("b.csv")).unwrap();
    assert_eq!(a.lines().next(), Some("a"));
    assert_eq!(a.lines().count(), 5);
    assert!(b.lines().skip(1).all(|l| l.parse::<u64>().is_ok()), "{b}");
    // Same seed, same draws; another seed, other draws.
    let again = dir.path().join("again");
    occam()
        .arg("sample")
        .arg(&model)
        .arg("--out")
        .arg(&again)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(again.join("a.csv")).unwrap(), a);
    let other = dir.path().join("other");
    occam()
        .arg("sample")
        .arg(&model)
        .args(["--seed", "9", "--out"])
        .arg(&other)
        .assert()
        .success();
    assert_ne!(std::fs::read_to_string(other.join("a.csv")).unwrap(), a);
}

#[test]
fn graph_as_svg_and_dot() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("g.svg");
    occam()
        .args(["graph", "examples/vibes_tutorial/mixture.occam", "--out"])
        .arg(&svg)
        .assert()
        .success();
    let s = std::fs::read_to_string(&svg).unwrap();
    assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
    assert_eq!(s.matches("class=\"node\"").count(), 5, "one shape per node");
    assert!(
        s.contains("mixture index"),
        "the legend explains the dashed index edges"
    );
    assert!(
        s.contains("K = 20") && s.contains("N = 500"),
        "plates are labelled"
    );
    assert!(s.contains("fill=\"#c8c8c8\""), "observed x is shaded");
    assert!(
        s.contains("stroke-dasharray=\"5,3\""),
        "index edges are dashed"
    );
    let dot = dir.path().join("g.dot");
    occam()
        .args(["graph", "examples/models/regression.occam", "--out"])
        .arg(&dot)
        .assert()
        .success();
    let d = std::fs::read_to_string(&dot).unwrap();
    assert!(d.starts_with("digraph model {"));
    assert!(d.contains("\"B\" -> \"y\";") && d.contains("\"X\" -> \"y\";"));
    assert!(
        d.contains("shape=box, style=filled"),
        "data input drawn as a box: {d}"
    );
    assert!(d.contains("subgraph cluster_"));
    let dot = dir.path().join("m.dot");
    occam()
        .args(["graph", "examples/vibes_tutorial/mixture.occam", "--out"])
        .arg(&dot)
        .assert()
        .success();
    let d = std::fs::read_to_string(&dot).unwrap();
    assert!(d.starts_with("digraph model {") && d.contains("// Graphviz clusters cannot overlap"));
    assert!(d.contains("label=\"N × D (N = 500, D = 2)\""), "{d}");
    assert!(d.contains("label=\"K × D (K = 20, D = 2)\""), "{d}");
    assert!(d.contains("label=\"N = 500\""), "{d}");
    occam()
        .args([
            "graph",
            "examples/models/regression.occam",
            "--out",
            "g.png",
        ])
        .assert()
        .code(2);
}

/// Every lowering path: a gate (`mu[z]` inside a sum), deterministic variables, a Gamma product
/// with a constant, an Exponential parent (the core Exponential, with Gamma moments), a scalar
/// precision replicated over an ARD event plate, a dot product.
#[test]
fn lowering_covers_gates_products_and_replication() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.occam");
    std::fs::write(
        &model,
        "plate K = 2\nplate Q = 3\nplate N from data y\n\
         pi ~ Dirichlet(1) over K\nz[N] ~ Categorical(pi)\nmu[K] ~ Gaussian(0, 0.01)\n\
         b ~ Gaussian(0, 1)\ntau ~ Gamma(2, 2)\nlam ~ Exponential(1)\ns = 2 * tau\n\
         w over Q ~ GaussianARD(mean = 0, precision = lam)\n\
         v[N] over Q ~ GaussianARD(mean = 0, precision = 1)\n\
         f[N] = mu[z] + b\ny[N] ~ Gaussian(mean = f + dot(w, v), precision = s)\nobserve y\n",
    )
    .unwrap();
    occam()
        .arg("sample")
        .arg(&model)
        .args(["--plate", "N=40", "--seed", "4", "--out"])
        .arg(dir.path().join("y.csv"))
        .assert()
        .success();
    let out =
        succeeded(
            occam()
                .arg("fit")
                .arg(&model)
                .args(["--json", "--strict", "--restarts", "2"]),
        );
    let j = json(&out);
    let v = &j["variables"];
    assert_eq!(v["f"]["role"], "deterministic");
    assert_eq!(v["s"]["role"], "deterministic");
    assert_eq!(v["lam"]["distribution"], "Exponential");
    let tau = floats(&v["tau"]["moments"]);
    let s = floats(&v["s"]["moments"]);
    assert!((s[0] - 2.0 * tau[0]).abs() < 1e-12 && (s[1] - (tau[1] + 2f64.ln())).abs() < 1e-12);
    // f = mu[z] + b: its mean is the responsibility-weighted component mean plus b.
    let mu = floats(&v["mu"]["parameters"]["mean"]);
    let b = floats(&v["b"]["parameters"]["mean"])[0];
    let z = floats(&v["z"]["moments"]);
    let f = floats(&v["f"]["parameters"]["mean"]);
    let want = z[0] * mu[0] + z[1] * mu[1] + b;
    assert!((f[0] - want).abs() < 1e-9, "{} vs {want}", f[0]);
    assert_monotone_segments(&j, "lowering model");
}

#[test]
fn every_example_model_can_be_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let mut models = Vec::new();
    for sub in [
        "examples/models",
        "examples/vibes_tutorial",
        "examples/bayespy/gmm",
    ] {
        for e in std::fs::read_dir(root().join(sub)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "occam") {
                models.push(p);
            }
        }
    }
    assert!(models.len() >= 13, "{models:?}");
    for (i, m) in models.iter().enumerate() {
        for ext in ["svg", "dot"] {
            let out = dir.path().join(format!("{i}.{ext}"));
            let o = occam()
                .arg("graph")
                .arg(m)
                .arg("--out")
                .arg(&out)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "{}: {}",
                m.display(),
                String::from_utf8_lossy(&o.stderr)
            );
            assert!(std::fs::metadata(&out).unwrap().len() > 50);
        }
    }
}

/// A drawn node: name, plates, and centre and half-sizes.
type DrawnNode = (String, Vec<String>, (f64, f64, f64, f64));

/// The value of attribute `name` in the SVG element `el`.
fn attr<'a>(el: &'a str, name: &str) -> &'a str {
    let key = format!(" {name}=\"");
    let start = el.find(&key).unwrap_or_else(|| panic!("no {name} in {el}")) + key.len();
    let len = el[start..].find('"').unwrap();
    &el[start..start + len]
}

fn num(el: &str, name: &str) -> f64 {
    attr(el, name).parse().unwrap()
}

/// Elements (their opening tags) of the SVG carrying `class="..."`.
fn elements<'a>(svg: &'a str, class: &str) -> Vec<&'a str> {
    let key = format!("class=\"{class}\"");
    svg.lines()
        .filter(|l| l.contains(&key))
        .map(|l| l.trim())
        .collect()
}

fn points(s: &str) -> Vec<(f64, f64)> {
    s.split_whitespace()
        .map(|p| {
            let (x, y) = p.split_once(',').unwrap();
            (x.parse().unwrap(), y.parse().unwrap())
        })
        .collect()
}

/// Whether segment a–b passes through the ellipse (cx, cy, rx, ry).
fn segment_meets_ellipse(a: (f64, f64), b: (f64, f64), e: (f64, f64, f64, f64)) -> bool {
    let p = ((a.0 - e.0) / e.2, (a.1 - e.1) / e.3);
    let q = ((b.0 - e.0) / e.2, (b.1 - e.1) / e.3);
    let d = (q.0 - p.0, q.1 - p.1);
    let l2 = d.0 * d.0 + d.1 * d.1;
    let t = if l2 > 0.0 {
        (-(p.0 * d.0 + p.1 * d.1) / l2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (x, y) = (p.0 + t * d.0, p.1 + t * d.1);
    x * x + y * y < 1.0
}

/// The drawn network's geometry: every node lies inside exactly the boxes of its own plates (and
/// wholly outside every other plate's box), nodes do not overlap, and no edge passes through a
/// node other than its two ends.
#[test]
fn graph_layout_is_sound() {
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<String> = std::fs::read_dir(root().join("examples/vibes_tutorial"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "occam"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    for m in [
        "bpca",
        "regression",
        "gmm1d",
        "hmm",
        "factor_analysis",
        "bernoulli_mixture",
    ] {
        let p = root().join(format!("examples/models/{m}.occam"));
        if p.exists() {
            files.push(p.display().to_string());
        }
    }
    for file in &files {
        let out = dir.path().join("g.svg");
        occam()
            .args(["graph", file, "--out"])
            .arg(&out)
            .assert()
            .success();
        let svg = std::fs::read_to_string(&out).unwrap();
        let nodes: Vec<DrawnNode> = elements(&svg, "node")
            .iter()
            .map(|el| {
                let plates = attr(el, "data-plates");
                (
                    attr(el, "data-var").to_string(),
                    plates
                        .split(',')
                        .filter(|p| !p.is_empty())
                        .map(str::to_string)
                        .collect(),
                    (
                        num(el, "data-cx"),
                        num(el, "data-cy"),
                        num(el, "data-rx"),
                        num(el, "data-ry"),
                    ),
                )
            })
            .collect();
        assert!(!nodes.is_empty(), "{file}");
        let boxes: Vec<(String, (f64, f64, f64, f64))> = elements(&svg, "plate")
            .iter()
            .map(|el| {
                let (x, y) = (num(el, "x"), num(el, "y"));
                (
                    attr(el, "data-plate").to_string(),
                    (x, y, x + num(el, "width"), y + num(el, "height")),
                )
            })
            .collect();
        for (name, plates, (cx, cy, rx, ry)) in &nodes {
            for (plate, r) in &boxes {
                let centre_in = r.0 < *cx && *cx < r.2 && r.1 < *cy && *cy < r.3;
                let whole_in = r.0 < cx - rx && cx + rx < r.2 && r.1 < cy - ry && cy + ry < r.3;
                let apart = cx + rx < r.0 || r.2 < cx - rx || cy + ry < r.1 || r.3 < cy - ry;
                if plates.contains(plate) {
                    // In one of its plate's boxes (a plate may be drawn as several boxes).
                    if centre_in {
                        assert!(whole_in, "{file}: `{name}` sticks out of plate {plate}");
                    }
                } else {
                    assert!(
                        apart,
                        "{file}: `{name}` is not in plate {plate} but touches its box"
                    );
                }
            }
            for plate in plates {
                let n = boxes
                    .iter()
                    .filter(|(p, r)| p == plate && r.0 < *cx && *cx < r.2 && r.1 < *cy && *cy < r.3)
                    .count();
                assert_eq!(n, 1, "{file}: `{name}` must be in one box of plate {plate}");
            }
        }
        for (i, a) in nodes.iter().enumerate() {
            for b in &nodes[i + 1..] {
                let (p, q) = (a.2, b.2);
                let apart = p.0 + p.2 < q.0 - q.2
                    || q.0 + q.2 < p.0 - p.2
                    || p.1 + p.3 < q.1 - q.3
                    || q.1 + q.3 < p.1 - p.3;
                assert!(apart, "{file}: `{}` and `{}` overlap", a.0, b.0);
            }
        }
        let edges = elements(&svg, "edge");
        for el in &edges {
            let (from, to) = (attr(el, "data-from"), attr(el, "data-to"));
            let route = points(attr(el, "data-route"));
            assert!(route.len() >= 2);
            let centre = |n: &str| nodes.iter().find(|x| x.0 == n).unwrap().2;
            let (f, t) = (centre(from), centre(to));
            assert!((route[0].0 - f.0).abs() < 0.1 && (route[0].1 - f.1).abs() < 0.1);
            let last = route[route.len() - 1];
            assert!((last.0 - t.0).abs() < 0.1 && (last.1 - t.1).abs() < 0.1);
            for (name, _, e) in &nodes {
                if name == from || name == to {
                    continue;
                }
                for s in route.windows(2) {
                    assert!(
                        !segment_meets_ellipse(s[0], s[1], *e),
                        "{file}: edge {from} -> {to} passes through `{name}`"
                    );
                }
            }
        }
    }
    // The mixture specifically: lambda (plate N) must not be inside the D box, x is inside both
    // N and D, and the crossed boxes overlap rather than nest.
    let out = dir.path().join("m.svg");
    occam()
        .args(["graph", "examples/vibes_tutorial/mixture.occam", "--out"])
        .arg(&out)
        .assert()
        .success();
    let svg = std::fs::read_to_string(&out).unwrap();
    let rect = |plate: &str| {
        let el = elements(&svg, "plate")
            .into_iter()
            .find(|el| attr(el, "data-plate") == plate)
            .unwrap();
        let (x, y) = (num(el, "x"), num(el, "y"));
        (x, y, x + num(el, "width"), y + num(el, "height"))
    };
    let (n, d) = (rect("N"), rect("D"));
    let nested = |a: (f64, f64, f64, f64), b: (f64, f64, f64, f64)| {
        a.0 >= b.0 && a.1 >= b.1 && a.2 <= b.2 && a.3 <= b.3
    };
    assert!(
        !nested(n, d) && !nested(d, n),
        "crossed plates overlap: {n:?} {d:?}"
    );
    assert!(
        n.0 < d.2 && d.0 < n.2 && n.1 < d.3 && d.1 < n.3,
        "{n:?} {d:?}"
    );
    assert_eq!(elements(&svg, "edge").len(), 4);
}

/// `occam fit examples/models/quickstart.occam --json --data y=FILE`, parsed.
fn fit_quickstart(data: &Path) -> serde_json::Value {
    let out = succeeded(
        occam()
            .args([
                "fit",
                "examples/models/quickstart.occam",
                "--json",
                "--data",
            ])
            .arg(format!("y={}", data.display())),
    );
    json(&out)
}

#[test]
fn fit_out_names_every_file_it_wrote() {
    // Bayesian PCA writes more than the generic tables (reconstruction and projection files);
    // the closing line must list exactly the directory's contents.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fit");
    let o = succeeded(
        occam()
            .args([
                "fit",
                "examples/bpca/bpca.occam",
                "--max-iter",
                "5",
                "--out",
            ])
            .arg(&out),
    );
    let text = String::from_utf8_lossy(&o.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("wrote "))
        .unwrap_or_else(|| panic!("no `wrote` line in:\n{text}"));
    let (head, names) = line.split_once(": ").unwrap();
    let mut listed: Vec<&str> = names.split(", ").collect();
    let mut present: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        head.starts_with(&format!("wrote {} files to ", present.len())),
        "{line}"
    );
    listed.sort_unstable();
    present.sort_unstable();
    assert_eq!(listed, present);
    assert!(
        listed.iter().any(|n| n.starts_with("reconstruction_")),
        "{line}"
    );
    assert!(
        listed.iter().any(|n| n.starts_with("projection_")),
        "{line}"
    );
}

/// `--single-start`: the k-means start alone, so every sweep shown by `--progress 1` is in the
/// kept trace; by default the two random-label candidate starts add sweeps of their own.
#[test]
fn single_start_runs_the_k_means_start_alone() {
    let run = |extra: &[&str]| {
        let mut args = vec![
            "fit",
            "examples/vibes_tutorial/mixture.occam",
            "--data",
            "x=examples/vibes_tutorial/x.csv",
            "--no-prune",
            "--json",
            "--progress",
            "1",
        ];
        args.extend_from_slice(extra);
        let out = succeeded(occam().args(&args));
        let shown = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains(": iteration "))
            .count();
        let fit = json(&out);
        (shown, fit["iterations"].as_u64().unwrap() as usize)
    };
    let (shown, kept) = run(&["--single-start"]);
    assert_eq!(shown, kept, "--single-start ran sweeps outside its trace");
    let (shown, kept) = run(&[]);
    assert!(
        shown > kept,
        "no candidate sweeps by default: {shown} = {kept}"
    );
}

/// `compare --method is`: a ranking over importance-sampling estimates with too few effective
/// samples says so on its "best by" line, not only in the rows' notes (150 points from three
/// Gaussians; with K = 4 the widened q is far from the posterior: ESS ≈ 30 of 20,000 draws).
#[test]
fn a_ranking_over_unreliable_estimates_says_so() {
    let (code, stdout, stderr) = run_in(
        &[(
            "m.occam",
            b"plate K = 3\nplates N from data y\nw ~ Dirichlet(1) over K\nmu[K] ~ Gaussian(0, 0.01)\n\
              tau[K] ~ Gamma(1, 1)\nz[N] ~ Categorical(w)\ny[N] ~ Gaussian(mu[z], tau[z])\n",
        )],
        &[
            "compare",
            "m.occam",
            "--data",
            &format!("y={}", root().join("examples/dp_mixture/y.csv").display()),
            "--plate",
            "K=2,4",
            "--method",
            "vb,is",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let best = |m: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("best by {m}:")))
            .unwrap_or_else(|| panic!("no best-by-{m} line in:\n{stdout}"))
            .to_string()
    };
    assert!(best("is").contains("UNRELIABLE"), "{stdout}");
    assert!(!best("vb").contains("UNRELIABLE"), "{stdout}");
}
