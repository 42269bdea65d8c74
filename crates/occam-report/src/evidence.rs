//! The JSON of one evidence estimate and the sizes of a plate sweep, as `occam compare --method
//! ... --plate NAME=SIZES --json` and the view's compare write and read them; the SVG of
//! evidence against complexity (`--plot`).

use occam::evidence::{free_parameters, margins, Evidence, EvidenceRow, Margin, Method};

use serde_json::{json, Value};

use crate::figure::{line_chart, Figure, Series};

/// One estimate as JSON: `method`, `kind`, `log_evidence`, `se`, `ess`, `seconds`,
/// `probability` (null when not given), `note`; or `method` and `not_applicable`.
pub fn evidence_json(e: &Evidence, p: Option<f64>) -> Value {
    match e {
        Evidence::Estimate(e) => json!({
            "method": e.method.name(),
            "kind": e.kind.label(),
            "log_evidence": e.log_evidence,
            "se": e.se,
            "ess": e.ess,
            "seconds": e.seconds,
            "probability": p,
            "note": e.note,
        }),
        Evidence::NotApplicable { method, reason } => json!({
            "method": method.name(),
            "not_applicable": reason,
        }),
    }
}

/// The model (its file name) with the highest estimate by each method, `None` where some model
/// has no estimate by it.
pub fn best_per_method(rows: &[EvidenceRow], methods: &[Method]) -> Vec<Option<String>> {
    (0..methods.len())
        .map(|j| {
            let v: Vec<f64> = rows
                .iter()
                .map(|r| r.evidence[j].value())
                .collect::<Option<_>>()?;
            let i = (0..v.len()).fold(0, |b, i| if v[i] > v[b] { i } else { b });
            Some(rows[i].fitted.loaded().file_name.clone())
        })
        .collect()
}

/// The JSON of `occam compare --method ... --json` (and of the view's compare): per model its
/// bound, iterations, convergence, estimates and warnings; the best model per method and its
/// margin over the runner-up (`margin`).
pub fn compare_json(rows: &[EvidenceRow], methods: &[Method]) -> Value {
    let models: Vec<Value> = rows
        .iter()
        .map(|r| {
            let o = r.fitted.outcome();
            let ev: Vec<Value> = r
                .evidence
                .iter()
                .zip(&r.probability)
                .map(|(e, p)| evidence_json(e, *p))
                .collect();
            json!({
                "model": r.fitted.loaded().file_name,
                "bound": o.bound,
                "iterations": o.iterations,
                "converged": o.converged,
                "evidence": ev,
                "warnings": o.warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
            })
        })
        .collect();
    let best: serde_json::Map<String, Value> = methods
        .iter()
        .zip(best_per_method(rows, methods))
        .map(|(m, b)| (m.name().to_string(), json!(b)))
        .collect();
    let margin: serde_json::Map<String, Value> = methods
        .iter()
        .zip(row_margins(rows, methods))
        .map(|(m, g)| (m.name().to_string(), margin_json(rows, g.as_ref())))
        .collect();
    json!({"models": models, "best": best, "margin": margin})
}

/// [`margins`] of the rows' estimates.
pub fn row_margins(rows: &[EvidenceRow], methods: &[Method]) -> Vec<Option<Margin>> {
    let ev: Vec<&[Evidence]> = rows.iter().map(|r| r.evidence.as_slice()).collect();
    margins(&ev, methods)
}

/// One method's margin as JSON: `best`, `runner_up` (file names), `nats`, `se`, `weak` (why, or
/// null); null where the method has no margin.
fn margin_json(rows: &[EvidenceRow], g: Option<&Margin>) -> Value {
    let name = |i: usize| rows[i].fitted.loaded().file_name.clone();
    g.map_or(Value::Null, |g| {
        json!({
            "best": name(g.best),
            "runner_up": name(g.runner_up),
            "nats": g.nats,
            "se": g.se,
            "weak": g.weak(),
        })
    })
}

/// Plate sizes from `FROM..TO` (at most 1000 of them) or `A,B,C`, every size at least 1;
/// `None` otherwise.
pub fn plate_sizes(s: &str) -> Option<Vec<u64>> {
    if let Some((a, b)) = s.split_once("..") {
        let (a, b): (u64, u64) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
        return (a >= 1 && a <= b && b - a < 1000).then(|| (a..=b).collect());
    }
    s.split(',')
        .map(|x| x.trim().parse().ok().filter(|&v: &u64| v >= 1))
        .collect()
}

/// The SVG of every method's ln p(D) (± se) against the models' free parameters (their order
/// when a model is not recognised), one series per method: `occam compare --plot FILE` and
/// Python's `Comparison.plot()`.
pub fn evidence_plot(rows: &[EvidenceRow], methods: &[Method]) -> String {
    let dims: Option<Vec<usize>> = rows.iter().map(|r| free_parameters(&r.fitted)).collect();
    let x = |i: usize| match &dims {
        Some(d) => d[i] as f64,
        None => (i + 1) as f64,
    };
    let series = methods
        .iter()
        .enumerate()
        .map(|(j, m)| {
            let points = rows
                .iter()
                .enumerate()
                .map(|(i, r)| (x(i), r.evidence[j].value().unwrap_or(f64::NAN)))
                .collect();
            let se = rows
                .iter()
                .map(|r| match &r.evidence[j] {
                    Evidence::Estimate(e) => e.se.unwrap_or(0.0),
                    _ => 0.0,
                })
                .collect();
            Series::new(m.name(), points).with_errors(se)
        })
        .collect();
    let fig = Figure {
        title: "ln p(D) against complexity, by method".into(),
        x_label: if dims.is_some() {
            "free parameters d".into()
        } else {
            "model (order given)".into()
        },
        y_label: "ln p(D) (nats; cv: held-out log predictive)".into(),
        series,
        references: Vec::new(),
    };
    line_chart(&fig)
}

#[cfg(test)]
mod tests {
    use super::plate_sizes;

    #[test]
    fn plate_sizes_read_ranges_and_lists() {
        assert_eq!(plate_sizes("1..4"), Some(vec![1, 2, 3, 4]));
        assert_eq!(plate_sizes("2, 5,9"), Some(vec![2, 5, 9]));
        assert_eq!(plate_sizes("0..3"), None);
        assert_eq!(plate_sizes("3..2"), None);
        assert_eq!(plate_sizes("1,0"), None);
        assert_eq!(plate_sizes("1..1001"), None);
    }
}
