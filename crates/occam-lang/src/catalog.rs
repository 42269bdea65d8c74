//! The table of distributions and deterministic functions the language knows: names, aliases,
//! slots (with aliases), the kind of value each produces and which kinds each slot accepts.
//!
//! It is a view of the engine's own tables, not a copy: every family declares its spec in its
//! file in `occam-core` (`occam_core::dist::FAMILIES`), every function in its factor's file
//! (`occam_core::factor::functions`). The resolver checks every name and parent against it, so
//! the language accepts exactly what the engine declares.
//!
//! Slot aliases are the union of what the language and the engine accepted before the tables
//! were merged: e.g. a Gaussian's precision is `precision`, `tau`, `prec` or `gamma`.

use std::sync::LazyLock;

pub use occam_core::spec::{
    CallRule, ConstDomain, EventShape, FamilySpec, Fill, FnParam, FunctionSpec, SlotShape,
    SlotSpec, ValueKind,
};

/// One distribution (the engine's family spec).
pub type DistSpec = FamilySpec;

/// Every distribution the language accepts, in the engine's registry order.
pub static DISTRIBUTIONS: &[DistSpec] = occam_core::dist::FAMILIES;

/// Every deterministic function; operators `+`, `*`, `@` are listed with theirs.
pub static FUNCTIONS: LazyLock<Vec<FunctionSpec>> =
    LazyLock::new(|| occam_core::factor::functions().copied().collect());

/// The distribution named `name` or one of its aliases (exact match).
pub fn distribution(name: &str) -> Option<&'static DistSpec> {
    occam_core::dist::family(name)
}

/// The function named `name` (exact match).
pub fn function(name: &str) -> Option<&'static FunctionSpec> {
    occam_core::factor::functions().find(|f| f.name == name)
}

/// A link function: allowed only as a family's probability argument, where it makes the family
/// a logit-parameterised one of the engine (`Bernoulli(sigmoid(x))` is `BernoulliLogitQuad(x)`).
#[derive(Debug)]
pub struct LinkSpec {
    /// The function's name.
    pub name: &'static str,
    /// The families whose probability slot it may fill: (family, slot, family it becomes).
    pub families: &'static [(&'static str, &'static str, &'static str)],
    /// One line of documentation: the bound used and its quality.
    pub summary: &'static str,
}

/// Every link function. A family may have several (`sigmoid` and `sigmoid_jj`, `softmax` and
/// `softmax_bohning`): the call's name picks the row.
pub static LINKS: &[LinkSpec] = &[
    LinkSpec {
        name: "sigmoid",
        families: &[
            ("Bernoulli", "prob", "BernoulliLogitQuad"),
            ("Binomial", "prob", "BinomialLogitQuad"),
        ],
        summary: "σ(x) = 1/(1 + e^−x) of a Gaussian expression x, as a probability only; \
                  ⟨ln p(y | x)⟩ by quadrature (exact), the Gaussians' update a non-conjugate \
                  step checked against the bound",
    },
    LinkSpec {
        name: "sigmoid_jj",
        families: &[
            ("Bernoulli", "prob", "BernoulliLogit"),
            ("Binomial", "prob", "BinomialLogit"),
        ],
        summary: "σ(x) as `sigmoid`, by the Jaakkola–Jordan bound, ξ² = ⟨x²⟩ in closed form \
                  (a true lower bound; conjugate updates, posterior sds 20–30% too small)",
    },
    LinkSpec {
        name: "softmax",
        families: &[("Categorical", "probs", "CategoricalSoftmaxQuad")],
        summary: "softmax(x)_k = e^{x_k}/Σ_j e^{x_j} of a Gaussian vector x over the categories, \
                  as probabilities only; for K ≤ 3 ⟨ln softmax(x)_y⟩ by Gauss–Hermite over the \
                  K − 1 contrasts (exact), the Gaussians' update a non-conjugate step checked \
                  against the bound; for K > 3 Böhning's bound (as `softmax_bohning`: posterior \
                  sds understated)",
    },
    LinkSpec {
        name: "softmax_quad",
        families: &[("Categorical", "probs", "CategoricalSoftmaxQuad")],
        summary: "the same as `softmax` (its name before `softmax` was exact for K ≤ 3)",
    },
    LinkSpec {
        name: "softmax_bohning",
        families: &[("Categorical", "probs", "CategoricalSoftmax")],
        summary: "softmax(x) as `softmax`, by Böhning's bound expanded at ⟨x⟩ for every K (a \
                  true lower bound; conjugate updates, fast; posterior sds 8–15% and class \
                  contrasts' sds 28–49% too small on the 30-point, 3-class test)",
    },
    LinkSpec {
        name: "exp",
        families: &[("Poisson", "rate", "PoissonLog")],
        summary: "e^x of a Gaussian expression x, as a Poisson rate only (the log link); \
                  ⟨e^x⟩ = e^{μ+v/2} in closed form (exact), the Gaussians' update a \
                  non-conjugate step checked against the bound",
    },
];

/// The chain q-blocks (`MarkovChain`, `GaussianMarkovChain`), written like distributions but
/// with their `over` plate as the time plate (`occam_core::engine::CHAINS`).
pub static CHAINS: &[DistSpec] = occam_core::engine::CHAINS;

/// The chain named `name` or one of its aliases (exact match).
pub fn chain(name: &str) -> Option<&'static DistSpec> {
    occam_core::engine::chain_family(name)
}

/// Whether `spec` is one of the chains.
pub fn is_chain(spec: &DistSpec) -> bool {
    CHAINS.iter().any(|c| c.name == spec.name)
}

/// All distribution and chain names and aliases, for suggestions.
pub fn distribution_names() -> impl Iterator<Item = &'static str> {
    DISTRIBUTIONS
        .iter()
        .chain(CHAINS)
        .flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied()))
}

/// Names of the distributions whose values are of one of `kinds` (the ones a user writes: a
/// lowering target, [`DistSpec::lowering_target`], and a family written only as observed,
/// [`DistSpec::observed_only`], are not offered).
pub fn producers(kinds: &[ValueKind]) -> Vec<&'static str> {
    DISTRIBUTIONS
        .iter()
        .filter(|d| kinds.contains(&d.value) && !d.lowering_target && !d.observed_only)
        .map(|d| d.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_skip_the_lowering_targets() {
        let targets: Vec<&str> = DISTRIBUTIONS
            .iter()
            .filter(|d| d.lowering_target)
            .map(|d| d.name)
            .collect();
        assert_eq!(
            targets,
            ["ShapeGamma", "GammaRandomShape", "GammaTiedShape"]
        );
        let positive = producers(&[ValueKind::Positive]);
        assert!(positive.contains(&"Gamma"), "{positive:?}");
        assert!(
            targets.iter().all(|t| !positive.contains(t)),
            "{positive:?}"
        );
        // StudentT is written by users, but only observed: never offered as a parent.
        let real = producers(&[ValueKind::Real]);
        assert!(
            real.contains(&"Gaussian") && !real.contains(&"StudentT"),
            "{real:?}"
        );
    }

    #[test]
    fn names_and_aliases_are_unique() {
        let mut all: Vec<&str> = distribution_names().collect();
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
        for d in DISTRIBUTIONS {
            let mut slots: Vec<&str> = d
                .slots
                .iter()
                .flat_map(|s| std::iter::once(s.name).chain(s.aliases.iter().copied()))
                .collect();
            let m = slots.len();
            slots.sort();
            slots.dedup();
            assert_eq!(slots.len(), m, "{}", d.name);
            for s in d.slots {
                assert!(
                    s.takes_constant() || s.takes_variable(),
                    "{}.{}",
                    d.name,
                    s.name
                );
            }
        }
    }

    #[test]
    fn lookups() {
        assert_eq!(
            distribution("MultivariateGaussian").unwrap().name,
            "MvGaussian"
        );
        assert_eq!(distribution("Gaussian").unwrap().slot("tau").unwrap().0, 1);
        assert_eq!(
            distribution("Gaussian").unwrap().signature(),
            "Gaussian(mean (mu, location), precision (tau, prec, gamma))"
        );
        assert_eq!(
            producers(&[ValueKind::Positive]),
            vec!["Gamma", "Exponential"]
        );
        assert!(function("dot").is_some());
        let names: Vec<&str> = FUNCTIONS.iter().map(|f| f.name).collect();
        // The operators come first; the elementwise functions follow in the engine's order.
        assert_eq!(names[..5], ["sum", "product", "dot", "matvec", "concat"]);
        assert!(names.contains(&"scale"));
    }

    #[test]
    fn the_rectified_gaussian_mean_is_a_constant() {
        // The engine has no conjugate random mean for it; the language must say so up front.
        let (i, mean) = distribution("RectifiedGaussian")
            .unwrap()
            .slot("mean")
            .unwrap();
        assert_eq!(i, 0);
        assert!(!mean.takes_variable() && mean.takes_constant());
    }
}
