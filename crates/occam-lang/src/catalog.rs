//! The one table of distributions and deterministic functions the language
//! knows: names, aliases, slots (with aliases), the kind of value each produces
//! and which kinds each slot accepts. The resolver checks every name and
//! parent against it; the core's registry can later replace or check it.

use serde::{Deserialize, Serialize};

/// The kind of value a distribution or expression produces, i.e. which
/// expected statistics (moments) it can send to a child.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ValueKind {
    /// A real scalar with ⟨x⟩, ⟨x²⟩ (Gaussian, RectifiedGaussian, sums, dot products).
    Real,
    /// A positive scalar with ⟨x⟩, ⟨log x⟩ (Gamma, Exponential, their products).
    Positive,
    /// A probability in (0, 1) with ⟨log p⟩, ⟨log(1−p)⟩ (Beta).
    Probability,
    /// A real vector over an event plate with ⟨x⟩, ⟨xxᵀ⟩ (MvGaussian, GaussianARD).
    Vector,
    /// A positive-definite matrix over an event plate (Wishart).
    Matrix,
    /// A probability vector over an event plate with ⟨log p⟩ (Dirichlet).
    Simplex,
    /// One of the categories of an event plate, as one-hot ⟨δ⟩ (Categorical).
    Categorical,
    /// 0 or 1 (Bernoulli).
    Binary,
    /// A non-negative integer (Binomial, Poisson).
    Count,
}

impl ValueKind {
    /// A short phrase for messages: "real-valued", ...
    pub fn describe(self) -> &'static str {
        match self {
            ValueKind::Real => "real-valued",
            ValueKind::Positive => "positive",
            ValueKind::Probability => "a probability",
            ValueKind::Vector => "a real vector",
            ValueKind::Matrix => "a positive-definite matrix",
            ValueKind::Simplex => "a probability vector",
            ValueKind::Categorical => "categorical",
            ValueKind::Binary => "binary",
            ValueKind::Count => "a count",
        }
    }
}

/// How a distribution uses its event plate (`over Q`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventShape {
    /// No event plate: a scalar.
    Scalar,
    /// A vector over the event plate, required.
    Vector,
    /// A square matrix over the event plate, required.
    Matrix,
    /// Categories over the event plate; inferred from the probabilities when not given.
    Categories,
}

/// How an argument's shape must relate to the child's event plate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SlotShape {
    /// A scalar (no event plate).
    Scalar,
    /// Elementwise over the child's event plate: a scalar, a scalar variable
    /// in the event plate (e.g. ARD precisions `alpha[Q]`), or a vector over it.
    Elementwise,
    /// Over the same event plate as the child (vector mean, matrix precision,
    /// probability vector), or a broadcast constant.
    ChildEvent,
}

/// Which constants a slot accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConstDomain {
    /// No constant: a variable is required.
    Never,
    /// Any real number.
    Real,
    /// A number > 0.
    Positive,
    /// A number in [0, 1].
    Probability,
    /// An integer ≥ 0.
    Count,
    /// A positive multiple of `identity` (a positive number means that multiple).
    Matrix,
}

impl ConstDomain {
    /// Phrase for messages: "a positive number", ...
    pub fn describe(self) -> &'static str {
        match self {
            ConstDomain::Never => "no constant",
            ConstDomain::Real => "a number",
            ConstDomain::Positive => "a positive number",
            ConstDomain::Probability => "a number in [0, 1]",
            ConstDomain::Count => "a non-negative integer",
            ConstDomain::Matrix => "a positive multiple of `identity`",
        }
    }
}

/// One parent slot of a distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlotSpec {
    /// Canonical name, e.g. `precision`.
    pub name: &'static str,
    /// Other accepted names, e.g. `tau`.
    pub aliases: &'static [&'static str],
    /// Value kinds of variables that are conjugate here; empty if only constants.
    pub kinds: &'static [ValueKind],
    /// Which constants are accepted.
    pub constant: ConstDomain,
    /// Shape relative to the child's event plate.
    pub shape: SlotShape,
    /// What the slot expects, for messages ("Gamma-distributed (or ...)").
    pub expects: &'static str,
}

impl SlotSpec {
    /// Whether `name` names this slot.
    pub fn is_named(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }

    /// Whether a variable may fill the slot.
    pub fn takes_variable(&self) -> bool {
        !self.kinds.is_empty()
    }

    /// Whether a constant may fill the slot.
    pub fn takes_constant(&self) -> bool {
        self.constant != ConstDomain::Never
    }

    /// `precision (tau)`.
    pub fn signature(&self) -> String {
        if self.aliases.is_empty() {
            self.name.to_string()
        } else {
            format!("{} ({})", self.name, self.aliases.join(", "))
        }
    }
}

/// One distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DistSpec {
    /// Canonical name.
    pub name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// The kind of value it produces.
    pub value: ValueKind,
    /// How it uses `over`.
    pub event: EventShape,
    /// Its parent slots, in positional order.
    pub slots: &'static [SlotSpec],
    /// One line of documentation.
    pub summary: &'static str,
}

impl DistSpec {
    /// The slot named `name` (or an alias) and its position.
    pub fn slot(&self, name: &str) -> Option<(usize, &'static SlotSpec)> {
        self.slots
            .iter()
            .enumerate()
            .find(|(_, s)| s.is_named(name))
    }

    /// `Gaussian(mean (mu), precision (tau))`.
    pub fn signature(&self) -> String {
        let slots: Vec<String> = self.slots.iter().map(SlotSpec::signature).collect();
        format!("{}({})", self.name, slots.join(", "))
    }
}

/// A deterministic function or operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunctionSpec {
    /// Canonical name, callable as `name(...)`.
    pub name: &'static str,
    /// The infix operator that means the same, if any.
    pub operator: Option<&'static str>,
    /// Fewest arguments.
    pub min_args: usize,
    /// Most arguments (`None`: any number).
    pub max_args: Option<usize>,
    /// One line of documentation.
    pub summary: &'static str,
}

const REAL: &[ValueKind] = &[ValueKind::Real];
const POSITIVE: &[ValueKind] = &[ValueKind::Positive];
const NONE: &[ValueKind] = &[];

const fn slot(
    name: &'static str,
    aliases: &'static [&'static str],
    kinds: &'static [ValueKind],
    constant: ConstDomain,
    shape: SlotShape,
    expects: &'static str,
) -> SlotSpec {
    SlotSpec {
        name,
        aliases,
        kinds,
        constant,
        shape,
        expects,
    }
}

const GAUSSIAN_SLOTS: &[SlotSpec] = &[
    slot(
        "mean",
        &["mu"],
        REAL,
        ConstDomain::Real,
        SlotShape::Scalar,
        "Gaussian-distributed (or a sum, product or dot product of Gaussians, or a constant)",
    ),
    slot(
        "precision",
        &["tau"],
        POSITIVE,
        ConstDomain::Positive,
        SlotShape::Scalar,
        "Gamma-distributed (or a product of Gammas, or a constant)",
    ),
];

/// Every distribution the language accepts.
pub static DISTRIBUTIONS: &[DistSpec] = &[
    DistSpec {
        name: "Gaussian",
        aliases: &["Normal"],
        value: ValueKind::Real,
        event: EventShape::Scalar,
        slots: GAUSSIAN_SLOTS,
        summary: "scalar Gaussian with mean and precision (inverse variance)",
    },
    DistSpec {
        name: "MvGaussian",
        aliases: &["MultivariateGaussian"],
        value: ValueKind::Vector,
        event: EventShape::Vector,
        slots: &[
            slot("mean", &["mu"], &[ValueKind::Vector], ConstDomain::Real, SlotShape::ChildEvent,
                "a Gaussian vector over the same event plate (or a constant)"),
            slot("precision", &["Lambda"], &[ValueKind::Matrix], ConstDomain::Matrix, SlotShape::ChildEvent,
                "Wishart-distributed over the same event plate (or a constant such as `identity * 1e-3`)"),
        ],
        summary: "vector Gaussian with a full precision matrix",
    },
    DistSpec {
        name: "GaussianARD",
        aliases: &[],
        value: ValueKind::Vector,
        event: EventShape::Vector,
        slots: &[
            slot("mean", &["mu"], &[ValueKind::Real, ValueKind::Vector], ConstDomain::Real, SlotShape::Elementwise,
                "Gaussian per element of the event plate, a Gaussian vector over it, or a constant"),
            slot("precision", &["tau", "alpha"], POSITIVE, ConstDomain::Positive, SlotShape::Elementwise,
                "Gamma-distributed per element of the event plate (or a product of Gammas, or a constant)"),
        ],
        summary: "vector Gaussian with a diagonal precision (automatic relevance determination)",
    },
    DistSpec {
        name: "RectifiedGaussian",
        aliases: &[],
        value: ValueKind::Real,
        event: EventShape::Scalar,
        slots: GAUSSIAN_SLOTS,
        summary: "Gaussian truncated to x ≥ 0",
    },
    DistSpec {
        name: "Gamma",
        aliases: &[],
        value: ValueKind::Positive,
        event: EventShape::Scalar,
        slots: &[
            slot("shape", &["a"], NONE, ConstDomain::Positive, SlotShape::Scalar, "a positive constant"),
            slot("rate", &["b"], POSITIVE, ConstDomain::Positive, SlotShape::Scalar,
                "Gamma-distributed (or a positive constant)"),
        ],
        summary: "Gamma with shape and rate (mean shape / rate)",
    },
    DistSpec {
        name: "Exponential",
        aliases: &[],
        value: ValueKind::Positive,
        event: EventShape::Scalar,
        slots: &[slot("rate", &["lambda"], POSITIVE, ConstDomain::Positive, SlotShape::Scalar,
            "Gamma-distributed (or a positive constant)")],
        summary: "exponential, i.e. Gamma with shape 1",
    },
    DistSpec {
        name: "Wishart",
        aliases: &[],
        value: ValueKind::Matrix,
        event: EventShape::Matrix,
        slots: &[
            slot("dof", &["nu"], NONE, ConstDomain::Positive, SlotShape::Scalar, "a positive constant"),
            slot("rate", &[], &[ValueKind::Matrix], ConstDomain::Matrix, SlotShape::ChildEvent,
                "Wishart-distributed over the same event plate (or a constant such as `identity * 1e-5`)"),
        ],
        summary: "Wishart over precision matrices, E[Λ] = dof · rate⁻¹",
    },
    DistSpec {
        name: "Dirichlet",
        aliases: &[],
        value: ValueKind::Simplex,
        event: EventShape::Vector,
        slots: &[slot("concentration", &["alpha"], NONE, ConstDomain::Positive, SlotShape::Elementwise,
            "a positive constant")],
        summary: "Dirichlet over probability vectors; the categories are the event plate",
    },
    DistSpec {
        name: "Beta",
        aliases: &[],
        value: ValueKind::Probability,
        event: EventShape::Scalar,
        slots: &[
            slot("alpha", &["a"], NONE, ConstDomain::Positive, SlotShape::Scalar, "a positive constant"),
            slot("beta", &["b"], NONE, ConstDomain::Positive, SlotShape::Scalar, "a positive constant"),
        ],
        summary: "Beta over probabilities",
    },
    DistSpec {
        name: "Categorical",
        aliases: &["Discrete"],
        value: ValueKind::Categorical,
        event: EventShape::Categories,
        slots: &[slot("probs", &["p"], &[ValueKind::Simplex], ConstDomain::Positive, SlotShape::ChildEvent,
            "Dirichlet-distributed over the categories, e.g. a table row `A[z_prev]` (or a constant)")],
        summary: "one of the categories of its event plate",
    },
    DistSpec {
        name: "Bernoulli",
        aliases: &[],
        value: ValueKind::Binary,
        event: EventShape::Scalar,
        slots: &[slot("prob", &["p"], &[ValueKind::Probability], ConstDomain::Probability, SlotShape::Scalar,
            "Beta-distributed (or a constant in [0, 1])")],
        summary: "0 or 1",
    },
    DistSpec {
        name: "Binomial",
        aliases: &[],
        value: ValueKind::Count,
        event: EventShape::Scalar,
        slots: &[
            slot("trials", &["n"], NONE, ConstDomain::Count, SlotShape::Scalar, "a non-negative integer constant"),
            slot("prob", &["p"], &[ValueKind::Probability], ConstDomain::Probability, SlotShape::Scalar,
                "Beta-distributed (or a constant in [0, 1])"),
        ],
        summary: "number of successes in `trials` Bernoulli draws",
    },
    DistSpec {
        name: "Poisson",
        aliases: &[],
        value: ValueKind::Count,
        event: EventShape::Scalar,
        slots: &[slot("rate", &["lambda"], POSITIVE, ConstDomain::Positive, SlotShape::Scalar,
            "Gamma-distributed (or a positive constant)")],
        summary: "Poisson counts",
    },
];

/// Every deterministic function; operators `+`, `*`, `@` are listed with theirs.
pub static FUNCTIONS: &[FunctionSpec] = &[
    FunctionSpec {
        name: "sum",
        operator: Some("+"),
        min_args: 1,
        max_args: None,
        summary: "sum of Gaussian scalars (or vectors over one event plate) and constants",
    },
    FunctionSpec {
        name: "product",
        operator: Some("*"),
        min_args: 1,
        max_args: None,
        summary: "product of Gaussian scalars, or of Gammas (a precision), with constant factors",
    },
    FunctionSpec {
        name: "dot",
        operator: None,
        min_args: 2,
        max_args: Some(2),
        summary: "inner product of two vectors over the same event plate",
    },
    FunctionSpec {
        name: "matvec",
        operator: Some("@"),
        min_args: 2,
        max_args: Some(2),
        summary: "W @ x: rows of W (its last plate) times a vector; the row plate becomes the event plate",
    },
    FunctionSpec {
        name: "concat",
        operator: None,
        min_args: 1,
        max_args: None,
        summary: "scalars into a vector",
    },
];

/// The distribution named `name` or one of its aliases (exact match).
pub fn distribution(name: &str) -> Option<&'static DistSpec> {
    DISTRIBUTIONS
        .iter()
        .find(|d| d.name == name || d.aliases.contains(&name))
}

/// The function named `name` (exact match).
pub fn function(name: &str) -> Option<&'static FunctionSpec> {
    FUNCTIONS.iter().find(|f| f.name == name)
}

/// All distribution names and aliases, for suggestions.
pub fn distribution_names() -> impl Iterator<Item = &'static str> {
    DISTRIBUTIONS
        .iter()
        .flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied()))
}

/// Names of the distributions whose values are of one of `kinds`.
pub fn producers(kinds: &[ValueKind]) -> Vec<&'static str> {
    DISTRIBUTIONS
        .iter()
        .filter(|d| kinds.contains(&d.value))
        .map(|d| d.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
            "Gaussian(mean (mu), precision (tau))"
        );
        assert_eq!(
            producers(&[ValueKind::Positive]),
            vec!["Gamma", "Exponential"]
        );
        assert!(function("dot").is_some());
    }
}
