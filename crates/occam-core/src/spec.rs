//! What the model language and the reports need to know about a family or a deterministic
//! function, declared once in the family's (or factor's) own file: names and aliases, slots with
//! the value kinds and constants they accept, the value kind and event shape it produces, how its
//! constants build the core distribution, and its usual (reported) parameters.
//!
//! The language's catalog is a view of these tables ([`crate::dist::FAMILIES`],
//! [`crate::factor::functions`]); the lowering calls each family's constructor; the reports call
//! each family's `usual_params`.

use serde::{Deserialize, Serialize};

use crate::moments::MomentKind;

/// The kind of value a distribution or expression produces, i.e. which expected statistics
/// (moments) it can send to a child.
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
    /// Elementwise over the child's event plate: a scalar, a scalar variable in the event plate
    /// (e.g. ARD precisions `alpha[Q]`), or a vector over it.
    Elementwise,
    /// Over the same event plate as the child (vector mean, matrix precision, probability
    /// vector), or a broadcast constant.
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

    /// Whether the number `x` is in the domain (for `Matrix`: the multiple of the identity).
    pub fn admits(self, x: f64) -> bool {
        match self {
            ConstDomain::Never => false,
            ConstDomain::Real => x.is_finite(),
            ConstDomain::Positive | ConstDomain::Matrix => x > 0.0 && x.is_finite(),
            ConstDomain::Probability => (0.0..=1.0).contains(&x),
            ConstDomain::Count => x >= 0.0 && x.fract() == 0.0 && x.is_finite(),
        }
    }
}

/// One slot of a distribution: a conjugate parent (it takes a variable), or a fixed constant of
/// the family (it takes only a constant, e.g. a Gamma's shape).
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

    /// Whether `name` names this slot (same as [`SlotSpec::is_named`]).
    pub fn matches(&self, name: &str) -> bool {
        self.is_named(name)
    }

    /// Whether a variable may fill the slot (then it is a parent slot of the core node).
    pub const fn takes_variable(&self) -> bool {
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

/// One distribution family, as the language and the reports see it.
///
/// Slots come in positional order: first the family's fixed constants (slots that take no
/// variable), then its conjugate parent slots, which are the core node's parent slots in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FamilySpec {
    /// Canonical name.
    pub name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// The kind of value it produces.
    pub value: ValueKind,
    /// How it uses `over`.
    pub event: EventShape,
    /// Its slots, in positional order (constants first, then parents).
    pub slots: &'static [SlotSpec],
    /// Names of the usual parameters the reports show for a latent variable of this family,
    /// beyond the moment summaries (mean, variance, ...): what `usual_params` returns.
    pub params: &'static [&'static str],
    /// One line of documentation.
    pub summary: &'static str,
    /// A lowering target, not written by users: a family the lowering puts in place of another
    /// one the user wrote (a `Gamma` with a random shape becomes `ShapeGamma`,
    /// `GammaRandomShape` or `GammaTiedShape`). Hints do not offer it and the reference
    /// (`docs/distributions.md`) marks it instead of giving an example.
    pub lowering_target: bool,
    /// Written by users only as an observed variable (`StudentT`, whose parent is importance
    /// sampled): hints do not offer it as a parent.
    pub observed_only: bool,
}

impl FamilySpec {
    /// The slot named `name` (or an alias) and its position.
    pub fn slot(&self, name: &str) -> Option<(usize, &'static SlotSpec)> {
        self.slots
            .iter()
            .enumerate()
            .find(|(_, s)| s.is_named(name))
    }

    /// Whether `name` is the family's name or an alias.
    pub fn is_named(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }

    /// `Gaussian(mean (mu), precision (tau))`.
    pub fn signature(&self) -> String {
        let slots: Vec<String> = self.slots.iter().map(SlotSpec::signature).collect();
        format!("{}({})", self.name, slots.join(", "))
    }

    /// Number of leading constant-only slots (the family's fixed constants).
    pub const fn constants(&self) -> usize {
        let mut i = 0;
        while i < self.slots.len() && !self.slots[i].takes_variable() {
            i += 1;
        }
        i
    }

    /// The conjugate parent slots: the slots after the leading constants.
    pub const fn parent_slots(&self) -> &'static [SlotSpec] {
        self.slots.split_at(self.constants()).1
    }
}

/// A deterministic function or operator of the model language: everything the language needs to
/// parse, check, lower, draw and document a call, declared once beside the factor it lowers to
/// (`Deterministic::FUNCTION` in `factor/<function>.rs`).
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
    /// One line of documentation (the reference table, and the hint of a misuse).
    pub summary: &'static str,
    /// How the language checks a call and what the call's value is.
    pub rule: CallRule,
    /// A model that calls it (on data `y[N]`, with plates `N` and `Q` declared): the reference's
    /// example and the end-to-end test that fits every function from model text.
    pub example: &'static str,
}

/// How the language checks a call of a function and what the call produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallRule {
    /// An operator with rules of its own in the resolver (constant folding, flattening nested
    /// sums, a product of Gammas, the row plate of a matrix): `sum`, `product`, `dot`, `matvec`
    /// and `concat`. New functions use [`CallRule::Elementwise`].
    Operator,
    /// Argument `i` must be what `params[i]` accepts; every argument that is not a constant has
    /// the event plate (or none) of argument `like`, and the value has argument `like`'s kind,
    /// event plate and the union of the arguments' plates. The lowering builds the factor with
    /// `Deterministic::from_call` from the arguments' event sizes and fills its slots in order.
    Elementwise {
        /// One entry per argument.
        params: &'static [FnParam],
        /// The argument whose kind and event plate the value has.
        like: usize,
    },
}

/// One argument of an elementwise function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FnParam {
    /// Its name, for messages and the reference.
    pub name: &'static str,
    /// The kinds of value it accepts.
    pub kinds: &'static [ValueKind],
    /// What may fill it.
    pub fill: Fill,
}

/// What may fill an argument of a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// A random variable or expression, or data (no constant).
    Random,
    /// Data or a constant number only: a known value, which keeps the function linear in its
    /// random arguments (and the factor exact).
    Known,
}

/// An argument of a distribution, as the family's constructor sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg {
    /// A constant number.
    Number(f64),
    /// A multiple of the identity matrix.
    Identity(f64),
    /// A variable or expression of this kind (when known).
    Variable(Option<ValueKind>),
    /// Not given.
    Missing,
}

/// The arguments of one stochastic variable: what a family's constructor builds from.
#[derive(Debug, Clone, Copy)]
pub struct Args<'a> {
    /// The variable's name, for messages.
    pub var: &'a str,
    /// Size of the event plate (1 without one).
    pub event: usize,
    /// One argument per slot of the family's spec, in slot order.
    pub slots: &'a [Arg],
    /// The family's slots (names for messages).
    pub spec: &'a FamilySpec,
}

impl Args<'_> {
    /// The argument in slot `s`.
    pub fn get(&self, s: usize) -> Arg {
        self.slots.get(s).copied().unwrap_or(Arg::Missing)
    }

    /// The constant number in slot `s`, or an error located at that argument.
    pub fn number(&self, s: usize) -> Result<f64, ArgError> {
        match self.get(s) {
            Arg::Number(x) => Ok(x),
            _ => {
                let slot = self.spec.slots.get(s).map_or("?", |x| x.name);
                Err(ArgError {
                    slot: Some(s),
                    problem: ArgProblem::Unsupported,
                    message: format!("`{slot}` of `{}` must be a constant number here", self.var),
                    label: "not supported by the engine",
                    hint: Some("the engine takes this parameter as a fixed number".into()),
                })
            }
        }
    }
}

/// What is wrong with an argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgProblem {
    /// The engine cannot take this argument here.
    Unsupported,
    /// A constant outside what the family allows.
    BadConstant,
}

/// An argument a family's constructor rejects, located at slot `slot` (or the variable).
#[derive(Debug, Clone, PartialEq)]
pub struct ArgError {
    /// The slot whose argument is wrong, if one is.
    pub slot: Option<usize>,
    /// What kind of problem.
    pub problem: ArgProblem,
    /// The message.
    pub message: String,
    /// The label under the caret.
    pub label: &'static str,
    /// A hint.
    pub hint: Option<String>,
}

/// A usual parameter's value for one plate element.
#[derive(Debug, Clone, PartialEq)]
pub enum Param {
    /// A number.
    Scalar(f64),
    /// A vector.
    Vector(Vec<f64>),
    /// A matrix, row by row.
    Matrix(Vec<Vec<f64>>),
}

/// The values a constant in a slot of moment kind `kind` fixes for the parent (what the graph's
/// constant parent holds); `None` if a constant cannot fill such a slot. A scalar in a 2-category
/// slot whose constants are probabilities is p (→ [p, 1 − p]); in any other probability-vector
/// slot it is a uniform weight.
pub fn constant_values(kind: MomentKind, domain: ConstDomain, arg: Arg) -> Option<Vec<f64>> {
    let (x, identity) = match arg {
        Arg::Number(x) => (x, false),
        Arg::Identity(x) => (x, true),
        Arg::Variable(_) | Arg::Missing => return None,
    };
    match kind {
        MomentKind::Gaussian { d } if !identity => Some(vec![x; d]),
        MomentKind::Gamma if !identity => Some(vec![x]),
        MomentKind::Wishart { d } => {
            let mut m = vec![0.0; d * d];
            for i in 0..d {
                m[i * d + i] = x;
            }
            Some(m)
        }
        MomentKind::Dirichlet { k } if !identity => {
            if domain == ConstDomain::Probability && k == 2 {
                Some(vec![x, 1.0 - x])
            } else {
                Some(vec![1.0 / k as f64; k])
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_come_first_and_parents_follow() {
        for f in crate::dist::FAMILIES {
            let c = f.constants();
            assert!(
                f.parent_slots().iter().all(SlotSpec::takes_variable),
                "{}: a constant-only slot after a parent slot",
                f.name
            );
            assert_eq!(c + f.parent_slots().len(), f.slots.len());
        }
    }

    #[test]
    fn domains_admit_what_they_describe() {
        assert!(ConstDomain::Count.admits(3.0) && !ConstDomain::Count.admits(2.5));
        assert!(ConstDomain::Probability.admits(1.0) && !ConstDomain::Probability.admits(1.5));
        assert!(!ConstDomain::Positive.admits(0.0) && !ConstDomain::Never.admits(1.0));
        assert_eq!(
            constant_values(
                MomentKind::Dirichlet { k: 2 },
                ConstDomain::Probability,
                Arg::Number(0.3)
            ),
            Some(vec![0.3, 0.7])
        );
        assert_eq!(
            constant_values(MomentKind::Gamma, ConstDomain::Positive, Arg::Identity(2.0)),
            None
        );
    }
}
