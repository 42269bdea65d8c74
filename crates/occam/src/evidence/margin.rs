//! How clearly each method's best model beats its runner-up, so a comparison whose winner is a
//! coin toss says so on the line a reader acts on.
//!
//! A margin is *weak* when
//! - the difference is within two standard errors of the two estimates combined (the sampling
//!   methods: the ranking could flip with another seed), or
//! - it is under one nat: a Bayes factor under e ≈ 2.7, "not worth more than a bare mention" on
//!   Kass & Raftery's scale (1995, §3.2: 2 ln B between 0 and 2). For `cv` the same one nat of
//!   held-out log predictive density is read as a likelihood ratio, not a Bayes factor.
//!
//! Nine points in three clusters under a vague precision prior are the case that asked for it:
//! `vb`, `is` and `ais` each picked a different K, every K within half a nat of the others.

use super::{Evidence, Method};

/// The best model by one method against the runner-up.
#[derive(Clone, Debug, PartialEq)]
pub struct Margin {
    /// Index of the best model (the first of equals).
    pub best: usize,
    /// Index of the runner-up.
    pub runner_up: usize,
    /// ln p(D | best) − ln p(D | runner-up), nats (≥ 0).
    pub nats: f64,
    /// The standard error of that difference, √(se_best² + se_runner²), when either estimate
    /// has one.
    pub se: Option<f64>,
    /// The method.
    pub method: Method,
}

/// Below this many nats a margin is weak (Kass & Raftery 1995: a Bayes factor under e).
pub const WEAK_NATS: f64 = 1.0;

impl Margin {
    /// Why the margin is weak, or `None` when it is not.
    pub fn weak(&self) -> Option<String> {
        if self.se.is_some_and(|s| s > 0.0 && self.nats < 2.0 * s) {
            return Some("within 2 standard errors".into());
        }
        (self.nats < WEAK_NATS).then(|| match self.method {
            Method::Cv => "under 1 nat of held-out log predictive density".into(),
            _ => format!(
                "Bayes factor {:.2} < e: not worth more than a bare mention (Kass & Raftery 1995)",
                self.nats.exp()
            ),
        })
    }

    /// `by 0.50 ± 0.50 nats over NAME` (the ± part when there is an se), then `: weak, WHY`
    /// when weak; `name` gives a model's name from its index.
    pub fn describe(&self, name: impl Fn(usize) -> String) -> String {
        let se = self.se.map_or(String::new(), |s| format!(" ± {s:.2}"));
        let weak = self
            .weak()
            .map_or(String::new(), |w| format!(": weak, {w}"));
        format!(
            "by {:.2}{se} nats over {}{weak}",
            self.nats,
            name(self.runner_up)
        )
    }
}

/// Per method (the columns of `evidence`, one row per model), the margin of the best model over
/// the runner-up; `None` for a method where some model has no estimate, or with fewer than two
/// models.
pub fn margins(evidence: &[&[Evidence]], methods: &[Method]) -> Vec<Option<Margin>> {
    (0..methods.len())
        .map(|j| {
            let est: Vec<(f64, Option<f64>)> = evidence
                .iter()
                .map(|row| match &row[j] {
                    Evidence::Estimate(e) => Some((e.log_evidence, e.se)),
                    Evidence::NotApplicable { .. } => None,
                })
                .collect::<Option<_>>()?;
            if est.len() < 2 {
                return None;
            }
            let best = (0..est.len()).fold(0, |b, i| if est[i].0 > est[b].0 { i } else { b });
            let runner_up = (0..est.len()).filter(|&i| i != best).fold(
                None,
                |r: Option<usize>, i| match r {
                    Some(r) if est[r].0 >= est[i].0 => Some(r),
                    _ => Some(i),
                },
            )?;
            let se = match (est[best].1, est[runner_up].1) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0.0).hypot(b.unwrap_or(0.0))),
            };
            Some(Margin {
                best,
                runner_up,
                nats: est[best].0 - est[runner_up].0,
                se,
                method: methods[j],
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{Estimate, Kind};
    use super::*;

    fn est(method: Method, v: f64, se: Option<f64>) -> Evidence {
        Evidence::Estimate(Estimate {
            method,
            kind: Kind::LowerBound,
            log_evidence: v,
            se,
            ess: None,
            seconds: 0.0,
            note: String::new(),
            unreliable: false,
        })
    }

    #[test]
    fn margins_name_the_runner_up_and_say_when_the_win_is_weak() {
        let m = [Method::Vb, Method::Is];
        let rows = [
            vec![
                est(Method::Vb, -10.0, None),
                est(Method::Is, -9.0, Some(0.3)),
            ],
            vec![
                est(Method::Vb, -12.5, None),
                est(Method::Is, -9.5, Some(0.4)),
            ],
            vec![
                est(Method::Vb, -8.0, None),
                est(Method::Is, -20.0, Some(0.1)),
            ],
        ];
        let rows: Vec<&[Evidence]> = rows.iter().map(Vec::as_slice).collect();
        let got = margins(&rows, &m);
        // vb: model 2 by 2 nats over model 0 — not weak.
        let vb = got[0].clone().unwrap();
        assert_eq!((vb.best, vb.runner_up), (2, 0));
        assert!((vb.nats - 2.0).abs() < 1e-15 && vb.se.is_none());
        assert_eq!(vb.weak(), None);
        // is: model 0 by 0.5 nats over model 1, se √(0.3² + 0.4²) = 0.5: within 2 se.
        let is = got[1].clone().unwrap();
        assert_eq!((is.best, is.runner_up), (0, 1));
        assert!((is.se.unwrap() - 0.5).abs() < 1e-15);
        assert_eq!(is.weak().unwrap(), "within 2 standard errors");
        assert_eq!(
            is.describe(|i| format!("m{i}")),
            "by 0.50 ± 0.50 nats over m1: weak, within 2 standard errors"
        );
        assert_eq!(vb.describe(|i| format!("m{i}")), "by 2.00 nats over m0");
    }

    #[test]
    fn a_margin_under_one_nat_is_weak_and_one_at_or_above_is_not() {
        let m = [Method::Vb];
        for (gap, weak) in [(0.99, true), (1.0, false), (3.0, false)] {
            let rows = [
                vec![est(Method::Vb, -5.0, None)],
                vec![est(Method::Vb, -5.0 + gap, None)],
            ];
            let rows: Vec<&[Evidence]> = rows.iter().map(Vec::as_slice).collect();
            let g = margins(&rows, &m)[0].clone().unwrap();
            assert_eq!((g.best, g.runner_up), (1, 0));
            assert_eq!(g.weak().is_some(), weak, "gap {gap}: {:?}", g.weak());
            if weak {
                assert!(g.weak().unwrap().starts_with("Bayes factor 2.69 < e"));
            }
        }
        // A large se makes even 3 nats weak.
        let rows = [
            vec![est(Method::Vb, -5.0, Some(2.0))],
            vec![est(Method::Vb, -2.0, None)],
        ];
        let rows: Vec<&[Evidence]> = rows.iter().map(Vec::as_slice).collect();
        assert!(margins(&rows, &m)[0].clone().unwrap().weak().is_some());
    }

    #[test]
    fn no_margin_without_every_estimate_or_a_second_model() {
        let m = [Method::Exact];
        let na = Evidence::NotApplicable {
            method: Method::Exact,
            reason: "x".into(),
        };
        let rows = [vec![est(Method::Exact, -1.0, None)], vec![na]];
        let rows: Vec<&[Evidence]> = rows.iter().map(Vec::as_slice).collect();
        assert_eq!(margins(&rows, &m), vec![None]);
        let one = [vec![est(Method::Exact, -1.0, None)]];
        let one: Vec<&[Evidence]> = one.iter().map(Vec::as_slice).collect();
        assert_eq!(margins(&one, &m), vec![None]);
    }
}
