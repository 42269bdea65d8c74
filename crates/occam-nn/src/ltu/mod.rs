//! Linear threshold units (thesis ch. 3).
//!
//! A layered network of ±1 units s_i = sign(Σ_j w_ij s_j + w_i0) (eq. 3.1) is the zero-temperature
//! limit of a sigmoid belief network (eq. 3.2). Training alternates two steps, like K-means
//! against EM:
//! 1. **inference** ([`icm`]): for each training pattern, with inputs and outputs clamped, set the
//!    hidden states by iterated conditional updates from a forward pass, optionally after
//!    deterministic annealing; [`energy`] holds the objective (the summed perceptron criteria,
//!    eqs. 3.26–3.28) and exact inference by enumeration for small networks;
//! 2. **learning** ([`learn`]): given all states, each unit's incoming weights are an independent
//!    soft-margin linear SVM, solved by SMO ([`smo`]) under the thesis's relaxed KKT-tolerance
//!    schedule.
//!
//! [`datasets`] and [`experiments`] reproduce Table 3.1 (Pima Indians and Leptograpsus crabs).
//!
//! Design choices, where the thesis is silent or misprinted:
//! * The printed hidden-unit update (eqs. 3.23–3.24) is not the exact T → 0 limit of the mean-field
//!   update; both are available ([`icm::UpdateRule`]). Exact ICM descends the energy and is what
//!   the enumeration tests check; the printed rule is what reproduces Table 3.1 (with exact ICM the
//!   networks fit the training data as well but generalise worse — see `data/README.md`).
//! * Weight normalisation balances each hidden unit's incoming and outgoing weight norms.
//! * Everything is seeded explicitly (xoshiro256++); grids run in parallel with per-network seeds,
//!   so results do not depend on the thread count.
pub mod datasets;
pub mod energy;
pub mod error;
pub mod experiments;
pub mod icm;
pub mod learn;
pub mod network;
pub mod smo;
