//! A Gamma precision: the closed form with a known mean, 1-D quadrature with a latent mean.

use super::*;

#[derive(Debug, Clone)]
struct Prec {
    shape: f64,
    rate: f64,
    /// `Some((m0, p0))`: a latent mean `mu ~ Gaussian(m0, p0)`; `None`: the known mean `mean`.
    latent_mean: Option<(f64, f64)>,
    mean: f64,
    /// The precision is `scale * t` (a Gamma product), or `t * t` when `square` (rejected).
    scale: f64,
    square: bool,
    ys: Vec<f64>,
}

impl Prec {
    fn text(&self) -> String {
        let prec = if self.square {
            "t * t".to_string()
        } else {
            format!("{} * t", self.scale)
        };
        let (mu_decl, mu) = match self.latent_mean {
            Some((m0, p0)) => (format!("mu ~ Gaussian({m0}, {p0})\n"), "mu".to_string()),
            None => (String::new(), format!("{}", self.mean)),
        };
        format!(
            "plate N = {}\nt ~ Gamma({}, {})\n{mu_decl}y[N] ~ Gaussian({mu}, {prec})\n",
            self.ys.len(),
            self.shape,
            self.rate
        )
    }

    /// ln p(D | mean m): the Gamma integrated out in closed form.
    fn given_mean(&self, m: f64) -> f64 {
        let n = self.ys.len() as f64;
        let s: f64 = self.ys.iter().map(|y| (y - m) * (y - m)).sum();
        let (a, b) = (self.shape, self.rate);
        a * b.ln() - ln_gamma(a) + ln_gamma(a + n / 2.0)
            - (a + n / 2.0) * (b + self.scale * s / 2.0).ln()
            - n / 2.0 * LN_2PI
            + n / 2.0 * self.scale.ln()
    }

    fn exact(&self) -> f64 {
        match self.latent_mean {
            None => self.given_mean(self.mean),
            Some((m0, p0)) => {
                let sd = 1.0 / p0.sqrt();
                quad_1d(m0 - 12.0 * sd, m0 + 12.0 * sd, 6000, |m| {
                    ln_normal(m, m0, p0) + self.given_mean(m)
                })
            }
        }
    }
}

fn prec() -> impl Strategy<Value = Prec> {
    (
        0.5..4.0f64,
        0.5..4.0f64,
        proptest::option::of((-1.0..1.0f64, 0.5..2.0f64)),
        -1.0..1.0f64,
        prop_oneof![Just(1.0), Just(2.0), Just(0.5)],
        proptest::bool::weighted(0.15),
        proptest::collection::vec(-3.0..3.0f64, 1..=5),
    )
        .prop_map(|(shape, rate, latent_mean, mean, scale, square, ys)| Prec {
            shape,
            rate,
            latent_mean,
            mean,
            scale,
            square,
            ys,
        })
}

fn run_prec(case: &Prec) {
    let text = case.text();
    if let Some(bound) = fit_or_refused(&text, &case.ys, case.square, "t * t") {
        check_bound(&text, bound, case.exact(), case.latent_mean.is_none());
    }
}

proptest! {
    #![proptest_config(super::config())]

    #[test]
    fn gamma_precision_bound_below_evidence(case in prec()) {
        run_prec(&case);
    }
}
