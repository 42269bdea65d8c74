//! Parity of the one table of families: every family and factor the engine registers is reached
//! from model text, end to end (model text → `Model::from_source` → fit → report), using the slots
//! and aliases its spec declares, with data drawn from the model itself; and the report of a latent
//! variable shows the usual parameters the spec declares.
//!
//! The models are generated from the spec alone, so a spec that promises something the pipeline
//! does not do (an alias the language does not accept, a parameter the report lacks) fails here —
//! `a_planted_alias_mismatch_fails` shows it with a deliberately wrong spec.

use std::collections::{BTreeMap, BTreeSet};

use occam::{DataSet, Model, Settings};
use occam_core::dist::FAMILIES;
use occam_core::spec::{ConstDomain, EventShape, FamilySpec, ValueKind};
use occam_report::FittedReport;
use serde_json::Value;

/// Everything a parity run found wrong (empty: parity holds).
type Problems = Vec<String>;

/// A constant in `domain`, as model text. `Real` is 0 so that a rectified Gaussian's location
/// allows a random precision.
fn constant(domain: ConstDomain) -> Option<&'static str> {
    match domain {
        ConstDomain::Never => None,
        ConstDomain::Real => Some("0"),
        ConstDomain::Positive => Some("2"),
        ConstDomain::Probability => Some("0.3"),
        ConstDomain::Count => Some("5"),
        ConstDomain::Matrix => Some("identity * 2"),
    }
}

/// ` over Q` when the family has an event plate.
fn over(spec: &FamilySpec) -> &'static str {
    if spec.event == EventShape::Scalar {
        ""
    } else {
        " over Q"
    }
}

/// The first family producing `kind` whose slots all take constants: a parent for a slot.
fn producer(kind: ValueKind) -> Option<&'static FamilySpec> {
    FAMILIES
        .iter()
        .find(|f| f.value == kind && f.slots.iter().all(|s| s.takes_constant()))
}

/// `F(c1, c2)` with every slot a constant, positionally.
fn constant_call(spec: &FamilySpec) -> Option<String> {
    if spec.name == "TruncatedGaussian" {
        // The generic constants would make lower = upper: an empty support.
        return Some("TruncatedGaussian(0, 2, -1, 1)".into());
    }
    let args: Option<Vec<&str>> = spec.slots.iter().map(|s| constant(s.constant)).collect();
    Some(format!("{}({})", spec.name, args?.join(", ")))
}

/// Draws the observed variables of `text` from the model itself and attaches them.
fn drawn_data(text: &str, seed: u64) -> Result<DataSet, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join("parity.occam");
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    let loaded = occam::model::load_without_data(&path, &DataSet::new(), &BTreeMap::new(), None)
        .map_err(|e| format!("loading for sampling: {e}"))?;
    let draws = occam::sample::draw(&loaded, seed).map_err(|e| format!("sampling: {e}"))?;
    let mut data = DataSet::new();
    for d in draws {
        data.insert_array(&d.name, d.rows, d.cols, d.values, None)
            .map_err(|e| e.to_string())?;
    }
    Ok(data)
}

/// Fits `text` (with data drawn from it when something is observed) and returns its report and
/// the engine families of its nodes.
fn fit(text: &str, observed: bool) -> Result<(Value, BTreeSet<&'static str>), String> {
    let data = if observed {
        drawn_data(text, 7)?
    } else {
        DataSet::new()
    };
    let model = Model::from_source("parity.occam", text, &data).map_err(|e| e.to_string())?;
    let fitted = model
        .fit(&Settings::default())
        .map_err(|e| format!("fit: {e}"))?;
    let report = fitted.report_json();
    if !report["bound"].as_f64().is_some_and(f64::is_finite) {
        return Err(format!("the bound is not finite: {}", report["bound"]));
    }
    let c = fitted.compiled();
    let families = c
        .owner
        .keys()
        .filter_map(|n| c.vmp.node(n))
        .map(|id| c.vmp.family(id))
        .collect();
    Ok((report, families))
}

/// Checks that variable `name` of `report` is of family `spec`, in `role`, and (when latent) shows
/// every usual parameter the spec declares, finite, one per plate element.
fn check_variable(report: &Value, name: &str, spec: &FamilySpec, role: &str) -> Problems {
    let mut out = Vec::new();
    let v = &report["variables"][name];
    if v["distribution"] != spec.name {
        out.push(format!("`{name}` is reported as {}", v["distribution"]));
    }
    if v["role"] != role {
        out.push(format!("`{name}` is {} (expected {role})", v["role"]));
    }
    if role == "latent" {
        for p in spec.params {
            let finite = |x: &Value| {
                fn all(x: &Value) -> bool {
                    match x {
                        Value::Number(n) => n.as_f64().is_some_and(f64::is_finite),
                        Value::Array(a) => a.iter().all(all),
                        _ => false,
                    }
                }
                all(x)
            };
            match v["parameters"][p].as_array() {
                Some(list) if !list.is_empty() && list.iter().all(finite) => {}
                _ => out.push(format!(
                    "{}: the report of `{name}` lacks the declared parameter `{p}` (got {})",
                    spec.name, v["parameters"]
                )),
            }
        }
    }
    out
}

/// The end-to-end parity of one family spec: observed with constant arguments; observed with a
/// random parent in every slot that takes one, named by each alias in turn (and the family by each
/// of its aliases); latent with constant arguments.
fn parity(spec: &FamilySpec) -> Problems {
    let mut problems = Vec::new();
    let head = "plate N = 30\nplate Q = 2\n";
    let mut run =
        |what: &str, text: String, observed: bool, checks: &[(&str, &FamilySpec, &str)]| match fit(
            &text, observed,
        ) {
            Ok((report, _)) => {
                for (name, s, role) in checks {
                    problems.extend(
                        check_variable(&report, name, s, role)
                            .into_iter()
                            .map(|p| format!("{} ({what}): {p}", spec.name)),
                    );
                }
            }
            Err(e) => problems.push(format!("{} ({what}): {e}\n{text}", spec.name)),
        };
    // 1. Observed, every slot a constant, positional.
    if let Some(call) = constant_call(spec) {
        let text = format!("{head}y[N]{} ~ {call}\nobserve y\n", over(spec));
        run("constants", text, true, &[("y", spec, "observed")]);
        // 3. Latent, no data: the report shows the declared usual parameters.
        let text = format!("plate Q = 2\nx{} ~ {call}\n", over(spec));
        run("latent", text, false, &[("x", spec, "latent")]);
    }
    // 2. Random parents, named arguments: round r names slot s by its alias r − 1 (its name when
    // r = 0 or when it has fewer aliases), and the family by its alias r − 1.
    let rounds = 1 + spec
        .slots
        .iter()
        .map(|s| s.aliases.len())
        .chain([spec.aliases.len()])
        .max()
        .unwrap_or(0);
    for r in 0..rounds {
        let pick = |name: &'static str, aliases: &[&'static str]| {
            if r == 0 {
                name
            } else {
                aliases.get(r - 1).copied().unwrap_or(name)
            }
        };
        let mut text = head.to_string();
        let mut args = Vec::new();
        let mut parents: Vec<(String, &FamilySpec)> = Vec::new();
        for (i, s) in spec.slots.iter().enumerate() {
            let label = pick(s.name, s.aliases);
            let parent = s.kinds.iter().find_map(|&k| producer(k));
            let value = match (parent, constant(s.constant)) {
                (Some(p), _) => {
                    let name = format!("p{i}");
                    let Some(call) = constant_call(p) else {
                        problems.push(format!("{}: no constant call for {}", spec.name, p.name));
                        return problems;
                    };
                    text.push_str(&format!("{name}{} ~ {call}\n", over(p)));
                    // A Gamma's random shape is reported with the parameters of its q, which
                    // is no Gamma (`ShapeGamma`, Winn Example 2.1).
                    let p = if s.name == "shape" && p.name == "Gamma" {
                        let q = occam_core::dist::family("ShapeGamma").unwrap();
                        &*Box::leak(Box::new(FamilySpec {
                            params: q.params,
                            ..*p
                        }))
                    } else {
                        p
                    };
                    parents.push((name.clone(), p));
                    name
                }
                // A truncation needs lower < upper, which the generic constants are not.
                (None, Some(_)) if spec.name == "TruncatedGaussian" && s.name == "upper" => {
                    "1".to_string()
                }
                (None, Some(c)) => c.to_string(),
                (None, None) => {
                    problems.push(format!("{}.{}: no value can fill it", spec.name, s.name));
                    return problems;
                }
            };
            args.push(format!("{label} = {value}"));
        }
        let fam = pick(spec.name, spec.aliases);
        text.push_str(&format!(
            "y[N]{} ~ {fam}({})\nobserve y\n",
            over(spec),
            args.join(", ")
        ));
        let mut checks: Vec<(&str, &FamilySpec, &str)> = vec![("y", spec, "observed")];
        checks.extend(parents.iter().map(|(n, p)| (n.as_str(), *p, "latent")));
        run(&format!("parents, round {r}"), text, true, &checks);
    }
    problems
}

#[test]
fn every_family_is_reached_from_model_text_with_every_alias() {
    let mut problems = Vec::new();
    for spec in FAMILIES {
        problems.extend(parity(spec));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn a_planted_alias_mismatch_fails() {
    // A table entry that promises an alias (`sd`) the pipeline does not accept.
    let gaussian = occam_core::dist::family("Gaussian").unwrap();
    let mut slots = gaussian.slots.to_vec();
    slots[1].aliases = &["tau", "sd"];
    let wrong = FamilySpec {
        slots: Box::leak(slots.into_boxed_slice()),
        ..*gaussian
    };
    let problems = parity(&wrong);
    assert!(
        problems.iter().any(|p| p.contains("no slot `sd`")),
        "{problems:?}"
    );
    // And one that promises a reported parameter the family does not produce.
    let wrong = FamilySpec {
        params: &["precision", "scale"],
        ..*gaussian
    };
    let problems = parity(&wrong);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("lacks the declared parameter `scale`")),
        "{problems:?}"
    );
    // The true entry passes.
    assert_eq!(parity(gaussian), Problems::new());
}

/// One model per operator and per factor no function names; every function's own model is its
/// declared example (`FunctionSpec::example`), so a new function needs no line here.
const FACTOR_MODELS: &[&str] = &[
    // +
    "a ~ Gaussian(0, 1)\nb ~ Gaussian(0, 1)\ny[N] ~ Gaussian(mean = a + b, precision = 1)\nobserve y\n",
    // *
    "a ~ Gaussian(1, 1)\nb ~ Gaussian(1, 1)\ny[N] ~ Gaussian(mean = a * b, precision = 1)\nobserve y\n",
    // product of positives: gamma_product
    "t ~ Gamma(2, 2)\ns ~ Gamma(2, 2)\ny[N] ~ Gaussian(mean = 0, precision = 2 * t * s)\nobserve y\n",
    // @
    "plate P = 3\nW[P] over Q ~ GaussianARD(0, 1)\nx[N] over Q ~ GaussianARD(0, 1)\ny[N] over P ~ GaussianARD(mean = W @ x, precision = 1)\nobserve y\n",
    // gate: an indexed reference inside an expression
    "plate K = 2\npi ~ Dirichlet(1) over K\nz[N] ~ Categorical(pi)\nmu[K] ~ Gaussian(0, 0.01)\nb ~ Gaussian(0, 1)\ny[N] ~ Gaussian(mean = mu[z] + b, precision = 1)\nobserve y\n",
];

#[test]
fn every_factor_is_reached_from_model_text() {
    let models: Vec<&str> = FACTOR_MODELS
        .iter()
        .copied()
        .chain(occam_core::factor::functions().map(|f| f.example))
        .collect();
    let mut used = BTreeSet::new();
    let mut problems = Vec::new();
    for m in &models {
        let text = format!("plate N = 30\nplate Q = 2\n{m}");
        match fit(&text, true) {
            Ok((_, families)) => used.extend(families),
            Err(e) => problems.push(format!("{e}\n{text}")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for name in occam_core::factor::NAMES {
        assert!(used.contains(name), "no model reaches the factor `{name}`");
    }
    // Every function's example calls it, and every operator is used in some model.
    for f in occam_core::factor::functions() {
        assert!(
            f.example.contains(&format!("{}(", f.name)),
            "the example of `{}` does not call it",
            f.name
        );
        if let Some(op) = f.operator {
            assert!(
                models.iter().any(|m| m.contains(&format!(" {op} "))),
                "`{op}` is never used"
            );
        }
    }
}
