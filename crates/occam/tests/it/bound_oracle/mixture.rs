//! Mixtures of K ≤ 3 latent means over N ≤ 6 points: all K^N assignments, the means
//! integrated out in closed form.

use super::*;

#[derive(Debug, Clone)]
struct Mix {
    k: usize,
    m0: f64,
    p0: f64,
    tau: f64,
    ys: Vec<f64>,
}

impl Mix {
    fn text(&self) -> String {
        format!(
            "plate K = {}\nplate N = {}\nmu[K] ~ Gaussian({}, {})\nz[N] ~ Categorical(1) over K\ny[N] ~ Gaussian(mu[z], {})\n",
            self.k,
            self.ys.len(),
            self.m0,
            self.p0,
            self.tau
        )
    }

    /// ln p(D): every assignment (probability K^−N), each component's mean integrated out.
    fn exact(&self) -> f64 {
        let n = self.ys.len();
        let total = self.k.pow(n as u32);
        let mut terms = Vec::with_capacity(total);
        for code in 0..total {
            let mut z = vec![0; n];
            let mut c = code;
            for zi in z.iter_mut() {
                *zi = c % self.k;
                c /= self.k;
            }
            let mut lp = -(n as f64) * (self.k as f64).ln();
            for comp in 0..self.k {
                let ys: Vec<f64> = (0..n)
                    .filter(|&i| z[i] == comp)
                    .map(|i| self.ys[i])
                    .collect();
                let cnt = ys.len() as f64;
                let s: f64 = ys.iter().sum();
                let ss: f64 = ys.iter().map(|y| y * y).sum();
                let post = self.p0 + cnt * self.tau;
                let lin = self.tau * s + self.p0 * self.m0;
                lp += -0.5 * cnt * LN_2PI + 0.5 * cnt * self.tau.ln() + 0.5 * self.p0.ln()
                    - 0.5 * post.ln()
                    - 0.5 * self.tau * ss
                    - 0.5 * self.p0 * self.m0 * self.m0
                    + lin * lin / (2.0 * post);
            }
            terms.push(lp);
        }
        log_sum_exp(&terms)
    }
}

fn mix() -> impl Strategy<Value = Mix> {
    (
        2usize..=3,
        -1.0..1.0f64,
        0.2..2.0f64,
        0.5..4.0f64,
        proptest::collection::vec(-3.0..3.0f64, 1..=6),
    )
        .prop_map(|(k, m0, p0, tau, ys)| Mix { k, m0, p0, tau, ys })
}

fn run_mix(case: &Mix) {
    let text = case.text();
    let mut data = DataSet::new();
    data.insert_array("y", case.ys.len(), 1, case.ys.clone(), None)
        .unwrap();
    let f = fit(&text, &data).unwrap_or_else(|c| panic!("{text}\nrejected: {c:?}"));
    check_bound(&text, f.bound(), case.exact(), false);
}

proptest! {
    #![proptest_config(super::config())]

    #[test]
    fn mixture_bound_below_evidence(case in mix()) {
        run_mix(&case);
    }
}

#[test]
fn mixture_oracle_with_one_component_is_gaussian() {
    // K = 1 has one assignment: the enumeration is the joint Gaussian of the points.
    let m = Mix {
        k: 1,
        m0: 0.2,
        p0: 0.7,
        tau: 2.0,
        ys: vec![0.5, -1.0, 2.0],
    };
    let n = 3;
    let cov: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| 1.0 / m.p0 + if i == j { 1.0 / m.tau } else { 0.0 })
                .collect()
        })
        .collect();
    let closed = ln_mvn(&m.ys, &[m.m0; 3], &cov);
    assert!(
        (m.exact() - closed).abs() < 1e-12,
        "{} vs {closed}",
        m.exact()
    );
}
