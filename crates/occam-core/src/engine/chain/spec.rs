//! What the model language and the reference need to know about the two chain q-blocks: their
//! names, slots and the kinds each slot accepts, in the same [`FamilySpec`] form as the
//! distribution families (`crate::dist::FAMILIES`).
//!
//! A chain is written `z[S] over T ~ MarkovChain(...)`: its `over` plate is the time plate (the
//! steps joint in q), its states (K) or state vector (D) come from the parents. Besides these
//! slots a chain takes an optional `lengths` argument (a data input over the sequences, or a
//! constant count): the length of each sequence, at most the time plate's size.

use crate::spec::{ConstDomain, EventShape, FamilySpec, SlotShape, SlotSpec, ValueKind};

/// `z[S] over T ~ MarkovChain(initial, transition)`: a discrete Markov chain (slot order = the
/// core node's parent slots, [`crate::graph::Graph::markov_chain`]).
pub const MARKOV_CHAIN: FamilySpec = FamilySpec {
    lowering_target: false,
    observed_only: false,
    name: "MarkovChain",
    aliases: &["CategoricalMarkovChain", "HMM"],
    value: ValueKind::Categorical,
    event: EventShape::Categories,
    slots: &[
        SlotSpec {
            name: "initial",
            aliases: &["p0", "initial_probs", "pi"],
            kinds: &[ValueKind::Simplex],
            constant: ConstDomain::Positive,
            shape: SlotShape::ChildEvent,
            expects: "Dirichlet-distributed over the states (or a constant: equal probabilities)",
        },
        SlotSpec {
            name: "transition",
            aliases: &["A", "transitions"],
            kinds: &[ValueKind::Simplex],
            constant: ConstDomain::Positive,
            shape: SlotShape::ChildEvent,
            expects: "one Dirichlet row per state over the states, `A[K] ~ Dirichlet(1) over K` (or a constant)",
        },
    ],
    params: &[],
    summary: "a discrete Markov chain along its `over` (time) plate, exact forward–backward in q; \
              the states come from `initial`/`transition`; optional `lengths = L` (data over the \
              sequences) for ragged sequences",
};

/// `x[S] over T ~ GaussianMarkovChain(mean0, precision0, dynamics, noise)`: a linear dynamical
/// system ([`crate::graph::Graph::gaussian_markov_chain`]). The optional `control = B, inputs = u`
/// (named arguments like `lengths`, not slots: the model language checks them as a pair) lower to
/// [`crate::graph::Graph::gaussian_markov_chain_with_inputs`].
pub const GAUSSIAN_MARKOV_CHAIN: FamilySpec = FamilySpec {
    lowering_target: false,
    observed_only: false,
    name: "GaussianMarkovChain",
    aliases: &["LDS", "LinearDynamicalSystem"],
    value: ValueKind::Vector,
    event: EventShape::Vector,
    slots: &[
        SlotSpec {
            name: "mean0",
            aliases: &["initial_mean", "mu0"],
            kinds: &[ValueKind::Vector],
            constant: ConstDomain::Real,
            shape: SlotShape::ChildEvent,
            expects: "a Gaussian vector over the state plate (or a constant)",
        },
        SlotSpec {
            name: "precision0",
            aliases: &["initial_precision", "Lambda0"],
            kinds: &[ValueKind::Matrix],
            constant: ConstDomain::Matrix,
            shape: SlotShape::ChildEvent,
            expects: "Wishart-distributed over the state plate (or a constant such as `identity * 1`)",
        },
        SlotSpec {
            name: "dynamics",
            aliases: &["A", "transition"],
            kinds: &[ValueKind::Vector],
            constant: ConstDomain::Real,
            shape: SlotShape::ChildEvent,
            expects: "one Gaussian row per state dimension over the state plate, `A[D] over D ~ GaussianARD(...)` (or data)",
        },
        SlotSpec {
            name: "noise",
            aliases: &["tau", "noise_precision"],
            kinds: &[ValueKind::Positive],
            constant: ConstDomain::Positive,
            shape: SlotShape::Elementwise,
            expects: "Gamma-distributed, one per state dimension `tau[D]` (or a positive constant)",
        },
    ],
    params: &[],
    summary: "a linear dynamical system x_t = A x_{t−1} + noise along its `over` (time) plate, \
              exact smoothing in q; the state plate comes from the parents; optional `lengths = L`; \
              optional observed inputs, `control = B, inputs = u` (both or neither), for \
              x_t = A x_{t−1} + B u_t + noise from step 1: B one row per state dimension over an \
              input plate P (`B[D] over P`, latent or data), u data over the chain's plates and P \
              (`data u[S, T] over P`)",
};

/// The chain families, in the order the reference lists them.
pub const CHAINS: &[FamilySpec] = &[MARKOV_CHAIN, GAUSSIAN_MARKOV_CHAIN];

/// The chain family named `name` or one of its aliases.
pub fn chain_family(name: &str) -> Option<&'static FamilySpec> {
    CHAINS.iter().find(|f| f.is_named(name))
}
