//! The product of two scalar latents: ln p(D) by 2-D quadrature; `a * a` must be refused.

use super::*;

#[derive(Debug, Clone)]
struct Prod {
    a: (f64, f64),
    b: (f64, f64),
    scale: f64,
    offset: f64,
    tau: f64,
    ys: Vec<f64>,
    /// `a * a` instead of `a * b` (rejected).
    square: bool,
}

impl Prod {
    fn text(&self) -> String {
        let rhs = if self.square { "a" } else { "b" };
        format!(
            "plate N = {}\na ~ Gaussian({}, {})\nb ~ Gaussian({}, {})\ny[N] ~ Gaussian({} * a * {rhs} + {}, {})\n",
            self.ys.len(),
            self.a.0,
            self.a.1,
            self.b.0,
            self.b.1,
            self.scale,
            self.offset,
            self.tau
        )
    }

    /// ln p(D) by a 2-D grid over ±8 prior sd (a 1-D grid for `a * a`).
    fn exact(&self) -> f64 {
        let (sa, sb) = (1.0 / self.a.1.sqrt(), 1.0 / self.b.1.sqrt());
        if self.square {
            return quad_1d(self.a.0 - 12.0 * sa, self.a.0 + 12.0 * sa, 6000, |a| {
                ln_normal(a, self.a.0, self.a.1)
                    + self
                        .ys
                        .iter()
                        .map(|&y| ln_normal(y, self.scale * a * a + self.offset, self.tau))
                        .sum::<f64>()
            });
        }
        quad_2d(
            (self.a.0 - 8.0 * sa, self.a.0 + 8.0 * sa),
            (self.b.0 - 8.0 * sb, self.b.0 + 8.0 * sb),
            800,
            |a, b| {
                ln_normal(a, self.a.0, self.a.1)
                    + ln_normal(b, self.b.0, self.b.1)
                    + self
                        .ys
                        .iter()
                        .map(|&y| ln_normal(y, self.scale * a * b + self.offset, self.tau))
                        .sum::<f64>()
            },
        )
    }
}

fn prod() -> impl Strategy<Value = Prod> {
    (
        (-1.0..1.0f64, 1.0..4.0f64),
        (-1.0..1.0f64, 1.0..4.0f64),
        prop_oneof![Just(1.0), Just(2.0), Just(-0.5)],
        -1.0..1.0f64,
        0.5..2.0f64,
        proptest::collection::vec(-3.0..3.0f64, 1..=3),
        proptest::bool::weighted(0.15),
    )
        .prop_map(|(a, b, scale, offset, tau, ys, square)| Prod {
            a,
            b,
            scale,
            offset,
            tau,
            ys,
            square,
        })
}

fn run_prod(case: &Prod) {
    let text = case.text();
    if let Some(bound) = fit_or_refused(&text, &case.ys, case.square, "a * a") {
        check_bound(&text, bound, case.exact(), false);
    }
}

proptest! {
    #![proptest_config(super::config())]

    #[test]
    fn product_bound_below_evidence(case in prod()) {
        run_prod(&case);
    }
}
