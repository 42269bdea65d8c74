//! Linear-Gaussian latents with repeated references and a deterministic chain: ln p(D) in
//! closed form (the observations are jointly Gaussian).

use super::*;

/// A term of a linear expression: a reference to latent `i` (or to the chain `d` when `i` is the
/// number of latents), with a coefficient (`None`: a bare reference).
type Term = (usize, Option<f64>);

#[derive(Debug, Clone)]
struct Linear {
    /// (prior mean, prior precision) of each latent `a0`, `a1`, ...
    latents: Vec<(f64, f64)>,
    /// `d = ...` over the latents, if there is a chain.
    chain: Option<Vec<Term>>,
    /// Each observation `yj ~ Gaussian(terms + offset, tau)` with its value.
    obs: Vec<(Vec<Term>, f64, f64, f64)>,
}

fn render(terms: &[Term], m: usize) -> String {
    terms
        .iter()
        .map(|&(i, c)| {
            let name = if i == m {
                "d".to_string()
            } else {
                format!("a{i}")
            };
            match c {
                None => name,
                Some(c) => format!("{c} * {name}"),
            }
        })
        .collect::<Vec<_>>()
        .join(" + ")
}

/// The linear form (coefficients on the latents) of `terms`, with `d` expanded.
fn expand(terms: &[Term], m: usize, chain: &Option<Vec<Term>>) -> Vec<f64> {
    let mut h = vec![0.0; m];
    for &(i, c) in terms {
        let c = c.unwrap_or(1.0);
        if i == m {
            for (k, v) in expand(chain.as_deref().unwrap_or(&[]), m, &None)
                .into_iter()
                .enumerate()
            {
                h[k] += c * v;
            }
        } else {
            h[i] += c;
        }
    }
    h
}

impl Linear {
    fn text(&self) -> String {
        let m = self.latents.len();
        let mut s = String::new();
        for (i, (mu, p)) in self.latents.iter().enumerate() {
            s += &format!("a{i} ~ Gaussian({mu}, {p})\n");
        }
        if let Some(c) = &self.chain {
            s += &format!("d = {}\n", render(c, m));
        }
        for (j, (terms, off, tau, _)) in self.obs.iter().enumerate() {
            s += &format!("y{j} ~ Gaussian({} + {off}, {tau})\n", render(terms, m));
        }
        s
    }

    /// Whether some observation reaches a latent both directly and through `d`.
    fn repeats(&self) -> bool {
        let m = self.latents.len();
        let Some(chain) = &self.chain else {
            return false;
        };
        self.obs.iter().any(|(terms, ..)| {
            terms.iter().any(|&(i, _)| i == m)
                && terms
                    .iter()
                    .any(|&(i, _)| i < m && chain.iter().any(|&(k, _)| k == i))
        })
    }

    fn exact(&self) -> f64 {
        let m = self.latents.len();
        let rows: Vec<Vec<f64>> = self
            .obs
            .iter()
            .map(|(t, ..)| expand(t, m, &self.chain))
            .collect();
        let n = self.obs.len();
        let mean: Vec<f64> = (0..n)
            .map(|j| self.obs[j].1 + (0..m).map(|k| rows[j][k] * self.latents[k].0).sum::<f64>())
            .collect();
        let cov: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        let s: f64 = (0..m)
                            .map(|k| rows[i][k] * rows[j][k] / self.latents[k].1)
                            .sum();
                        s + if i == j { 1.0 / self.obs[i].2 } else { 0.0 }
                    })
                    .collect()
            })
            .collect();
        let y: Vec<f64> = self.obs.iter().map(|o| o.3).collect();
        ln_mvn(&y, &mean, &cov)
    }
}

fn terms(m: usize, with_d: bool) -> impl Strategy<Value = Vec<Term>> {
    let refs = if with_d { m + 1 } else { m };
    proptest::collection::vec(
        (
            0..refs,
            prop_oneof![
                Just(None),
                Just(Some(1.0)),
                Just(Some(2.0)),
                Just(Some(-1.0)),
                Just(Some(0.5))
            ],
        ),
        1..=4,
    )
}

fn linear() -> impl Strategy<Value = Linear> {
    (1usize..=3, any::<bool>())
        .prop_flat_map(|(m, has_chain)| {
            let latents = proptest::collection::vec((-1.0..1.0f64, 0.5..4.0f64), m);
            let chain = if has_chain {
                terms(m, false).prop_map(Some).boxed()
            } else {
                Just(None).boxed()
            };
            let obs = proptest::collection::vec(
                (terms(m, has_chain), -1.0..1.0f64, 0.5..4.0f64, -3.0..3.0f64),
                1..=3,
            );
            (latents, chain, obs)
        })
        .prop_map(|(latents, chain, obs)| Linear {
            latents,
            chain,
            obs,
        })
}

fn run_linear(case: &Linear) {
    let text = case.text();
    let mut data = DataSet::new();
    for (j, o) in case.obs.iter().enumerate() {
        scalar(&mut data, &format!("y{j}"), o.3);
    }
    match fit(&text, &data) {
        Err(codes) => {
            assert!(case.repeats(), "{text}\nrejected: {codes:?}");
            assert_eq!(codes[0], Code::RepeatedParent, "{text}");
        }
        Ok(f) => {
            // The evidence is that of the model as written, repeats or not: the bound first.
            check_bound(&text, f.bound(), case.exact(), case.latents.len() == 1);
            assert!(!case.repeats(), "{text}\naccepted a repeat through `d`");
        }
    }
}

proptest! {
    #![proptest_config(super::config())]

    #[test]
    fn linear_gaussian_bound_below_evidence(case in linear()) {
        run_linear(&case);
    }
}
