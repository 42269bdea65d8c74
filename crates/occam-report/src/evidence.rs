//! The JSON of one evidence estimate and the sizes of a plate sweep, as `occam compare --method
//! ... --plate NAME=SIZES --json` and the view's compare write and read them.

use occam::evidence::{Evidence, EvidenceRow, Method};
use serde_json::{json, Value};

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
/// bound, iterations, convergence, estimates and warnings; the best model per method.
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
    json!({"models": models, "best": best})
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
