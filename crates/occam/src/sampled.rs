//! What the importance-sampled nodes report (Winn §4.4): per node, the S and the effective
//! sample size S_eff = 1/Σ w² of each sampled element's last update, how many elements had q in
//! closed form instead (not sampled), and a warning when S reached its cap with S_eff still
//! below the target.

use crate::lower::Compiled;

/// One importance-sampled node's sampling.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SampledReport {
    /// The node.
    pub node: String,
    /// S of each sampled latent element's last update.
    pub samples: Vec<usize>,
    /// S_eff of each sampled latent element's last update.
    pub s_eff: Vec<f64>,
    /// How many latent elements had q in closed form (the prior tilted by Gaussian messages, no
    /// Student-t value reading them): not sampled, so in neither list above.
    pub closed_form: usize,
    /// The S_eff the sampler aims at.
    pub target: f64,
    /// The largest S it may use.
    pub cap: usize,
}

impl SampledReport {
    /// The smallest S_eff over the elements.
    pub fn min_s_eff(&self) -> f64 {
        self.s_eff.iter().copied().fold(f64::INFINITY, f64::min)
    }
}

/// The reports of the model's importance-sampled nodes, in node order.
pub(crate) fn reports(c: &Compiled) -> Vec<SampledReport> {
    c.vmp
        .sampled_nodes()
        .into_iter()
        .map(|s| SampledReport {
            node: s.name,
            samples: s.samples,
            s_eff: s.s_eff,
            closed_form: s.closed_form,
            target: s.sampling.target,
            cap: s.sampling.cap,
        })
        .collect()
}

/// A warning for each node whose S stopped at the cap with S_eff below the target.
pub(crate) fn warnings(reports: &[SampledReport]) -> Vec<crate::warning::Warning> {
    reports
        .iter()
        .filter(|r| r.min_s_eff() < r.target)
        .map(|r| crate::warning::Warning::SamplesCapped {
            variable: r.node.clone(),
            s_eff: r.min_s_eff(),
            samples: r
                .s_eff
                .iter()
                .zip(&r.samples)
                .min_by(|a, b| a.0.total_cmp(b.0))
                .map_or(0, |(_, &s)| s),
            target: r.target,
            cap: r.cap,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node whose smallest S_eff is below the target (S stopped at the cap) gets a warning that
    /// names it, its S_eff, the target and the cap; one at the target gets none.
    #[test]
    fn a_capped_sampler_is_a_warning() {
        let report = |s_eff: Vec<f64>| SampledReport {
            node: "mu".into(),
            samples: vec![64_000; s_eff.len()],
            s_eff,
            closed_form: 0,
            target: 250.0,
            cap: 64_000,
        };
        assert!(warnings(&[report(vec![900.0, 250.0])]).is_empty());
        // Below the target with S under the cap (every larger pass failed): still a warning.
        let mut short = report(vec![240.0]);
        short.samples = vec![2000];
        assert_eq!(warnings(&[short.clone()]).len(), 1);
        // S frozen below the cap by the element's plan, S_eff fallen since: the text says so and
        // does not blame the cap.
        let text = warnings(&[short])[0].to_string();
        for needle in [
            "S = 2000 was chosen at its first update",
            "fell to 240 since",
        ] {
            assert!(text.contains(needle), "`{needle}` in {text}");
        }
        assert!(!text.contains("at the cap"), "{text}");
        let w = warnings(&[report(vec![900.0, 31.4])]);
        assert_eq!(w.len(), 1);
        // Every element in closed form: nothing sampled, nothing to warn of.
        let mut closed = report(Vec::new());
        closed.closed_form = 3;
        assert!(warnings(&[closed]).is_empty());
        let text = w[0].to_string();
        for needle in [
            "`mu`",
            "S at the cap 64000",
            "effective sample size of 31",
            "target 250",
        ] {
            assert!(text.contains(needle), "`{needle}` in {text}");
        }
    }
}
