//! A Gamma's random shape (Winn Example 2.1): `a ~ Gamma(α, β)` or `Exponential(β)`, and
//! observations `y[N] ~ Gamma(c * a, r)` with a constant rate, or `Gamma(c * a, k * a)` (the
//! tied form of the Student-t scale mixture). One latent, so q(a) is the exact posterior and the
//! bound must equal ln p(D), here a 1-D quadrature over a on a linear grid (the engine integrates
//! over ln a, adaptively).

use super::*;

#[derive(Debug, Clone)]
struct Shape {
    /// `None`: `Exponential(beta)`.
    alpha: Option<f64>,
    beta: f64,
    c: f64,
    /// `Some(k)`: the rate is `k * a`; `None`: the constant `rate`.
    tied: Option<f64>,
    rate: f64,
    ys: Vec<f64>,
}

impl Shape {
    fn text(&self) -> String {
        let prior = match self.alpha {
            Some(al) => format!("Gamma({al}, {})", self.beta),
            None => format!("Exponential({})", self.beta),
        };
        let rate = match self.tied {
            Some(k) => format!("{k} * a"),
            None => format!("{}", self.rate),
        };
        format!(
            "plate N = {}\na ~ {prior}\ny[N] ~ Gamma({} * a, {rate})\n",
            self.ys.len(),
            self.c
        )
    }

    fn ln_joint(&self, a: f64) -> f64 {
        let al = self.alpha.unwrap_or(1.0);
        let prior = al * self.beta.ln() - ln_gamma(al) + (al - 1.0) * a.ln() - self.beta * a;
        let (s, b) = (self.c * a, self.tied.map_or(self.rate, |k| k * a));
        prior
            + self
                .ys
                .iter()
                .map(|y| s * b.ln() - ln_gamma(s) + (s - 1.0) * y.ln() - b * y)
                .sum::<f64>()
    }

    /// ln ∫ p(a, D) da by 20-point Gauss–Legendre panels on [0, 10⁶], graded towards 0 (the
    /// prior a^{α−1} is not smooth there): [0, 1e-12], then decades up to 0.1, then steps of 0.1
    /// up to 60, then panels 5% wider each. (The trapezoid rule of `quad_1d` is off by up to
    /// 2e-7 here. The tail past 60 matters: with a tied rate the log density falls only as
    /// a·[c ln(k/c) + c − k y + c ln y − β] per observation, e.g. 0.41 a for the case in
    /// `shape.proptest-regressions`, whose mass past 60 is 2e-8 of the total.)
    fn exact(&self) -> f64 {
        let rule = occam_core::quad::GaussLegendre::new(20);
        let mut edges = vec![0.0];
        edges.extend((0..12).map(|k| 10f64.powi(k - 12)));
        edges.extend((2..=600).map(|k| k as f64 * 0.1));
        while edges[edges.len() - 1] < 1e6 {
            edges.push(edges[edges.len() - 1] * 1.05);
        }
        let mut vals = Vec::new();
        for e in edges.windows(2) {
            let (mid, half) = (0.5 * (e[0] + e[1]), 0.5 * (e[1] - e[0]));
            for (x, w) in rule.nodes.iter().zip(&rule.weights) {
                vals.push(self.ln_joint(mid + half * x) + (w * half).ln());
            }
        }
        log_sum_exp(&vals)
    }
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        proptest::option::of(1.0..4.0f64),
        0.3..2.0f64,
        prop_oneof![Just(1.0), Just(0.5), Just(2.0)],
        proptest::option::of(0.5..2.0f64),
        0.5..3.0f64,
        proptest::collection::vec(0.2..5.0f64, 1..=6),
    )
        .prop_map(|(alpha, beta, c, tied, rate, ys)| Shape {
            alpha,
            beta,
            c,
            tied,
            rate,
            ys,
        })
}

proptest! {
    #![proptest_config(super::config())]

    #[test]
    fn gamma_shape_bound_equals_the_evidence(case in shape()) {
        let text = case.text();
        let bound = fit_or_refused(&text, &case.ys, false, "").expect("accepted");
        check_bound(&text, bound, case.exact(), true);
    }
}
