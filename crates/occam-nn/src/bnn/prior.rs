//! Weight priors and their Gamma hyper-posteriors.
//!
//! Every prior here is "a weight's precision is the product of one or two hyper-parameters":
//! * single α (committee paper (6)); grouped α with the thesis's four groups (5.43)–(5.44): input →
//!   hidden, hidden biases, hidden → output, output bias; ARD, which also splits the input → hidden
//!   weights by input;
//! * node relevance determination (thesis (6.32)–(6.35)): every node carries a hyper-parameter
//!   (α^(I)_i for the inputs and the input bias, α^(H)_j for the hidden units and the hidden bias
//!   unit, α^(O) for the output) and a weight's precision is the product of its two endpoints'.
//!
//! q(α) factorises over the hyper-parameters, each a Gamma (rate parameterisation). The
//! coordinate update of hyper-parameter j (thesis (5.35)–(5.47), (6.40)–(6.49)) is
//! ã_j = a_j + n_j/2, b̃_j = b_j + ½ Σ_{k ∋ j} ⟨w_k²⟩ Π_{j' ∈ k, j' ≠ j} ⟨α_j'⟩,
//! exact for the factorised family, so each one can only raise the bound.

use super::network::Architecture;
use occam_core::special::{gamma_entropy, gamma_expected_ln_pdf, gamma_mean_ln};
use serde::{Deserialize, Serialize};

/// A Gamma distribution gam(τ | a, b) = b^a τ^{a−1} e^{−bτ} / Γ(a) (mean a/b).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Gamma {
    /// Shape a.
    pub a: f64,
    /// Rate b.
    pub b: f64,
}

impl Gamma {
    /// ⟨τ⟩ = a/b.
    pub fn mean(&self) -> f64 {
        self.a / self.b
    }

    /// ⟨ln τ⟩ = ψ(a) − ln b (thesis (6.50), committee paper (B.2)).
    pub fn mean_ln(&self) -> f64 {
        gamma_mean_ln(self.a, self.b)
    }

    /// Entropy −(a−1)ψ(a) − ln b + a + ln Γ(a) (thesis (6.51), committee paper (B.3)).
    pub fn entropy(&self) -> f64 {
        gamma_entropy(self.a, self.b)
    }

    /// ⟨ln gam(τ | self)⟩ under τ ~ q.
    pub fn expected_ln_pdf(&self, q: &Gamma) -> f64 {
        gamma_expected_ln_pdf(self.a, self.b, q.mean(), q.mean_ln())
    }
}

/// Which weight prior.
/// Serialised in lower case (`"single"`, …); the capitalised names are accepted too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PriorKind {
    /// One α for every weight.
    #[default]
    #[serde(alias = "Single")]
    Single,
    /// Four groups: input → hidden, hidden biases, hidden → output, output bias.
    #[serde(alias = "Grouped")]
    Grouped,
    /// One α per input (over its H fan-out weights), plus the hidden-bias, hidden → output and
    /// output-bias groups.
    #[serde(alias = "Ard")]
    Ard,
    /// Node relevance determination: the precision of a weight is the product of its two nodes'.
    #[serde(alias = "Nrd")]
    Nrd,
}

/// A prior structure on a given architecture: the hyper-parameters and, per weight, the one or two
/// hyper-parameters whose product is its precision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prior {
    /// Which prior.
    pub kind: PriorKind,
    /// Gamma hyper-prior of each hyper-parameter.
    pub hyper: Vec<Gamma>,
    /// Per weight, its hyper-parameter indices (the second is `usize::MAX` when there is one).
    pub links: Vec<[usize; 2]>,
    /// Human-readable name of each hyper-parameter.
    pub names: Vec<String>,
}

const NONE: usize = usize::MAX;

impl Prior {
    /// Builds the prior for `arch` with the same Gamma hyper-prior `hp` on every hyper-parameter.
    pub fn new(kind: PriorKind, arch: &Architecture, hp: Gamma) -> Self {
        let (i_n, h_n) = (arch.inputs, arch.hidden);
        let k = arch.n_weights();
        let mut links = vec![[NONE, NONE]; k];
        let names: Vec<String>;
        match kind {
            PriorKind::Single => {
                names = vec!["alpha".into()];
                links.iter_mut().for_each(|l| l[0] = 0);
            }
            PriorKind::Grouped | PriorKind::Ard => {
                let n_in = if kind == PriorKind::Ard { i_n } else { 1 };
                let mut nm: Vec<String> = if kind == PriorKind::Ard {
                    (0..i_n).map(|i| format!("alpha_input_{}", i + 1)).collect()
                } else {
                    vec!["alpha_input_hidden".into()]
                };
                nm.extend(
                    [
                        "alpha_hidden_bias",
                        "alpha_hidden_output",
                        "alpha_output_bias",
                    ]
                    .map(String::from),
                );
                names = nm;
                for h in 0..h_n {
                    for i in 0..i_n {
                        links[arch.u(h, i)][0] = if n_in == 1 { 0 } else { i };
                    }
                    links[arch.u(h, i_n)][0] = n_in;
                    links[arch.v(h)][0] = n_in + 1;
                }
                links[arch.v(h_n)][0] = n_in + 2;
            }
            PriorKind::Nrd => {
                // Inputs 0..I (I = input bias node), hidden I+1 ..= I+1+H (last = hidden bias
                // unit), output last.
                let hid = |j: usize| i_n + 1 + j;
                let out = i_n + 1 + h_n + 1;
                let mut nm: Vec<String> = (0..i_n).map(|i| format!("alpha_in_{}", i + 1)).collect();
                nm.push("alpha_in_bias".into());
                nm.extend((0..h_n).map(|j| format!("alpha_hid_{}", j + 1)));
                nm.push("alpha_hid_bias".into());
                nm.push("alpha_out".into());
                names = nm;
                for h in 0..h_n {
                    for i in 0..=i_n {
                        links[arch.u(h, i)] = [i, hid(h)];
                    }
                    links[arch.v(h)] = [hid(h), out];
                }
                links[arch.v(h_n)] = [hid(h_n), out];
            }
        }
        Prior {
            kind,
            hyper: vec![hp; names.len()],
            links,
            names,
        }
    }

    /// Number of hyper-parameters.
    pub fn n_hyper(&self) -> usize {
        self.hyper.len()
    }

    /// Initial posteriors: each hyper-parameter's Gamma with the shape its update would give and
    /// mean `mean`.
    pub fn init_posterior(&self, mean: f64) -> Vec<Gamma> {
        let mut count = vec![0usize; self.n_hyper()];
        for l in &self.links {
            for &j in l.iter().filter(|&&j| j != NONE) {
                count[j] += 1;
            }
        }
        self.hyper
            .iter()
            .zip(count)
            .map(|(h, c)| {
                let a = h.a + 0.5 * c as f64;
                Gamma { a, b: a / mean }
            })
            .collect()
    }

    /// ⟨precision⟩ of every weight, Π ⟨α_j⟩ over its links.
    pub fn weight_precisions(&self, post: &[Gamma]) -> Vec<f64> {
        self.links
            .iter()
            .map(|l| {
                l.iter()
                    .filter(|&&j| j != NONE)
                    .map(|&j| post[j].mean())
                    .product()
            })
            .collect()
    }

    /// Σ_k ⟨ln precision_k⟩ = Σ_k Σ_{j ∈ k} ⟨ln α_j⟩.
    pub fn sum_mean_ln_precision(&self, post: &[Gamma]) -> f64 {
        self.links
            .iter()
            .flat_map(|l| l.iter().filter(|&&j| j != NONE).map(|&j| post[j].mean_ln()))
            .sum()
    }

    /// Σ_j [⟨ln p(α_j)⟩ + H(q(α_j))].
    pub fn hyper_terms(&self, post: &[Gamma]) -> f64 {
        self.hyper
            .iter()
            .zip(post)
            .map(|(p, q)| p.expected_ln_pdf(q) + q.entropy())
            .sum()
    }

    /// The prior's contribution to the bound given ⟨w_k²⟩ (all terms that involve α):
    /// Σ_k [½⟨ln prec_k⟩ − ½ ln 2π − ½ ⟨prec_k⟩⟨w_k²⟩] + Σ_j [⟨ln p(α_j)⟩ + H(q(α_j))].
    pub fn bound_terms(&self, post: &[Gamma], w2: &[f64]) -> f64 {
        let prec = self.weight_precisions(post);
        0.5 * self.sum_mean_ln_precision(post)
            - 0.5 * occam_core::special::LN_2PI * self.links.len() as f64
            - 0.5 * prec.iter().zip(w2).map(|(p, w)| p * w).sum::<f64>()
            + self.hyper_terms(post)
    }

    /// Coordinate updates of every hyper-parameter in turn, given ⟨w_k²⟩ (each is exact given the
    /// others, so the bound cannot fall).
    pub fn update(&self, post: &mut [Gamma], w2: &[f64]) {
        for j in 0..self.n_hyper() {
            let mut a = self.hyper[j].a;
            let mut b = self.hyper[j].b;
            for (l, w) in self.links.iter().zip(w2) {
                if l[0] == j || l[1] == j {
                    let other = if l[0] == j { l[1] } else { l[0] };
                    let o = if other == NONE {
                        1.0
                    } else {
                        post[other].mean()
                    };
                    a += 0.5;
                    b += 0.5 * w * o;
                }
            }
            post[j] = Gamma { a, b };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_methods_are_the_core_closed_forms() {
        // The formulas themselves are tested in `occam_core::special::conjugate` (quadrature,
        // 50-digit references); here, that ⟨ln p⟩ at p = q is minus the entropy.
        let q = Gamma { a: 3.5, b: 2.0 };
        assert!((q.expected_ln_pdf(&q) + q.entropy()).abs() < 1e-12);
        assert_eq!(q.mean_ln(), occam_core::special::digamma(3.5) - 2f64.ln());
    }

    #[test]
    fn group_structures_have_the_thesis_shapes() {
        let a = Architecture::new(12, 8).unwrap();
        let hp = Gamma { a: 1.0, b: 1.0 };
        assert_eq!(Prior::new(PriorKind::Single, &a, hp).n_hyper(), 1);
        assert_eq!(Prior::new(PriorKind::Grouped, &a, hp).n_hyper(), 4);
        assert_eq!(Prior::new(PriorKind::Ard, &a, hp).n_hyper(), 15);
        let nrd = Prior::new(PriorKind::Nrd, &a, hp);
        // 12 inputs + input bias + 8 hidden + hidden bias + output.
        assert_eq!(nrd.n_hyper(), 23);
        // Shapes of the updates (6.40)–(6.49): inputs H/2, hidden (I+2)/2, output (H+1)/2.
        let post = nrd.init_posterior(1.0);
        assert!((post[0].a - (1.0 + 4.0)).abs() < 1e-12);
        assert!((post[13].a - (1.0 + 7.0)).abs() < 1e-12);
        assert!((post[22].a - (1.0 + 4.5)).abs() < 1e-12);
    }

    #[test]
    fn hyper_updates_maximise_the_prior_terms() {
        let arch = Architecture::new(3, 2).unwrap();
        let w2: Vec<f64> = (0..arch.n_weights())
            .map(|k| 0.1 + (k as f64 * 0.9).sin().abs())
            .collect();
        for kind in [
            PriorKind::Single,
            PriorKind::Grouped,
            PriorKind::Ard,
            PriorKind::Nrd,
        ] {
            let p = Prior::new(kind, &arch, Gamma { a: 0.5, b: 0.2 });
            let mut post = p.init_posterior(2.0);
            let mut last = p.bound_terms(&post, &w2);
            for _ in 0..5 {
                p.update(&mut post, &w2);
                let now = p.bound_terms(&post, &w2);
                assert!(now >= last - 1e-12, "{kind:?}: {now} < {last}");
                last = now;
            }
            // Stationary under a perturbation of any one posterior (coordinate optimum).
            for j in 0..p.n_hyper() {
                for f in [0.9, 1.1] {
                    let mut q = post.clone();
                    q[j].b *= f;
                    let mut q2 = post.clone();
                    q2[j].a *= f;
                    assert!(p.bound_terms(&q, &w2) <= last + 1e-9);
                    assert!(p.bound_terms(&q2, &w2) <= last + 1e-9);
                }
            }
        }
    }
}
