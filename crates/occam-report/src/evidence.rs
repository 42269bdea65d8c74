//! The JSON of one evidence estimate and the sizes of a plate sweep, as `occam compare --method
//! ... --plate NAME=SIZES --json` and the view's compare write and read them.

use occam::evidence::Evidence;
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
