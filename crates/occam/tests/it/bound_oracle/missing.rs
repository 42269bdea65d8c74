//! Missing observations: one latent, `y[N] ~ Gaussian(expr, tau)` with NaN cells, whose rows
//! drop out of the exact evidence.

use super::*;

#[derive(Debug, Clone)]
struct Missing {
    a: (f64, f64),
    /// The mean expression of `y` in `a` (repeated terms allowed) and its linear form.
    terms: Vec<Option<f64>>,
    offset: f64,
    tau: f64,
    ys: Vec<Option<f64>>,
}

impl Missing {
    fn coef(&self) -> f64 {
        self.terms.iter().map(|c| c.unwrap_or(1.0)).sum()
    }

    fn text(&self) -> String {
        let expr: Vec<String> = self
            .terms
            .iter()
            .map(|c| c.map_or("a".to_string(), |c| format!("{c} * a")))
            .collect();
        format!(
            "plate N = {}\na ~ Gaussian({}, {})\ny[N] ~ Gaussian({} + {}, {})\n",
            self.ys.len(),
            self.a.0,
            self.a.1,
            expr.join(" + "),
            self.offset,
            self.tau
        )
    }

    /// The present rows are jointly Gaussian; missing rows drop out.
    fn exact(&self) -> f64 {
        let y: Vec<f64> = self.ys.iter().flatten().copied().collect();
        let h = self.coef();
        let n = y.len();
        let mean = vec![h * self.a.0 + self.offset; n];
        let cov: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| h * h / self.a.1 + if i == j { 1.0 / self.tau } else { 0.0 })
                    .collect()
            })
            .collect();
        ln_mvn(&y, &mean, &cov)
    }
}

fn missing() -> impl Strategy<Value = Missing> {
    (
        (-1.0..1.0f64, 0.5..4.0f64),
        proptest::collection::vec(
            prop_oneof![Just(None), Just(Some(2.0)), Just(Some(-1.0))],
            1..=3,
        ),
        -1.0..1.0f64,
        0.5..4.0f64,
        proptest::collection::vec(proptest::option::weighted(0.6, -3.0..3.0f64), 2..=5),
    )
        .prop_filter("some row present", |t| t.4.iter().any(Option::is_some))
        .prop_map(|(a, terms, offset, tau, ys)| Missing {
            a,
            terms,
            offset,
            tau,
            ys,
        })
}

fn run_missing(case: &Missing) {
    let text = case.text();
    let mut data = DataSet::new();
    let values: Vec<f64> = case.ys.iter().map(|y| y.unwrap_or(f64::NAN)).collect();
    data.insert_array("y", values.len(), 1, values, None)
        .unwrap();
    let f = fit(&text, &data).unwrap_or_else(|c| panic!("{text}\nrejected: {c:?}"));
    // q(a) q(y_missing) is factorised (a missing y depends on a), so only the inequality; with
    // every row present q(a) is exact.
    let all = case.ys.iter().all(Option::is_some);
    check_bound(&text, f.bound(), case.exact(), all);
}

proptest! {
    #![proptest_config(super::config())]

    #[test]
    fn missing_rows_bound_below_evidence(case in missing()) {
        run_missing(&case);
    }
}
