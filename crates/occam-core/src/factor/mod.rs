//! Deterministic factors X = f(Y₁, …, Y_M) — Winn §2.2.2, (2.41–2.49).
//!
//! A deterministic node contributes nothing to the bound. Its moments are a multilinear function ψ
//! of its parents' moments (2.41); its message to parent k is [Σ child messages]ᵀ Ψ_k (2.49),
//! where Ψ_k is the derivative of u_X with respect to u_{Y_k} — written as `message_to` below,
//! which receives φ = Σ child messages (the natural parameter of X's pseudo-posterior).
//!
//! Adding a factor is one file plus one line in `registry!`. A factor the model language calls
//! by name declares its [`FunctionSpec`] in its own file (name, arity, argument kinds, value kind,
//! documentation line, an example model) and, for a [`CallRule::Elementwise`] function, builds
//! itself from a call with [`Deterministic::from_call`]: the language's table of functions is
//! [`functions`], and the lowering of a call is [`call`]. Nothing else names a function: the
//! resolver, the lowering, the drawing, the reference page and the end-to-end tests read the
//! table (`scale.rs` is the example).

use crate::dist::SlotInput;
use crate::moments::MomentKind;
use crate::spec::{CallRule, FunctionSpec};

/// Formulas of one deterministic function over one plate element's flat slices.
pub trait Deterministic: Clone + std::fmt::Debug + Send + Sync + 'static {
    /// Name (the model-language name of the function, when it has one).
    const NAME: &'static str;
    /// How the model language calls it, or `None` for a factor the lowering creates by itself
    /// (its doc says from which construct).
    const FUNCTION: Option<FunctionSpec>;
    /// Whether the output's mean is a product of two or more parents' means (`dot`, `@`, `*` of
    /// Gaussians). Then zero means in every latent factor are a fixed point of the updates — the
    /// mean is zero and every message's linear term vanishes (Winn (2.49)) — so a start from
    /// zero-mean priors never leaves it; the initialisation breaks the symmetry for such factors.
    const BILINEAR: bool = false;
    /// Number of parent slots.
    fn n_slots(&self) -> usize;
    /// Name of slot `s`.
    fn slot_name(&self, s: usize) -> String;
    /// Layout of the output moments.
    fn kind(&self) -> MomentKind;
    /// What slot `s` accepts.
    fn slot_input(&self, s: usize) -> SlotInput;
    /// Forward moments ⟨u_X⟩ = ψ(⟨u_{Y_1}⟩, …) — Winn (2.41).
    fn moments(&self, pa: &[&[f64]], u: &mut [f64]);
    /// Message to slot `s` from the summed child messages `phi` — Winn (2.49).
    fn message_to(&self, s: usize, phi: &[f64], pa: &[&[f64]], m: &mut [f64]);
    /// Representative instances for the shared law tests.
    fn test_instances() -> Vec<Self>;
    /// The factor for a call of an elementwise function ([`CallRule::Elementwise`]) whose
    /// arguments have event sizes `dims` (1 for a scalar; a constant argument has the size of
    /// the value), or `None` if it takes no such call. Its slots are the call's arguments, in
    /// order.
    fn from_call(dims: &[usize]) -> Option<Self> {
        let _ = dims;
        None
    }
}

macro_rules! registry {
    ($($variant:ident => $module:ident :: $ty:ident),* $(,)?) => {
        $(mod $module; pub use $module::$ty;)*

        /// Every deterministic factor, as a closed enum.
        #[derive(Clone, Debug)]
        pub enum Factor {
            $(
                #[doc = concat!("See [`", stringify!($ty), "`].")]
                $variant($ty),
            )*
        }

        $(impl From<$ty> for Factor {
            fn from(f: $ty) -> Self {
                Factor::$variant(f)
            }
        })*

        impl Factor {
            /// Model-language name.
            pub fn name(&self) -> &'static str {
                match self { $(Factor::$variant(_) => <$ty as Deterministic>::NAME,)* }
            }
            /// See [`Deterministic::BILINEAR`].
            pub fn is_bilinear(&self) -> bool {
                match self { $(Factor::$variant(_) => <$ty as Deterministic>::BILINEAR,)* }
            }
            /// Number of parent slots.
            pub fn n_slots(&self) -> usize {
                match self { $(Factor::$variant(f) => f.n_slots(),)* }
            }
            /// Name of slot `s`.
            pub fn slot_name(&self, s: usize) -> String {
                match self { $(Factor::$variant(f) => f.slot_name(s),)* }
            }
            /// Output moment layout.
            pub fn kind(&self) -> MomentKind {
                match self { $(Factor::$variant(f) => f.kind(),)* }
            }
            /// What slot `s` accepts.
            pub fn slot_input(&self, s: usize) -> SlotInput {
                match self { $(Factor::$variant(f) => f.slot_input(s),)* }
            }
            /// Forward moments.
            pub fn moments(&self, pa: &[&[f64]], u: &mut [f64]) {
                match self { $(Factor::$variant(f) => f.moments(pa, u),)* }
            }
            /// Message to slot `s`.
            pub fn message_to(&self, s: usize, phi: &[f64], pa: &[&[f64]], m: &mut [f64]) {
                match self { $(Factor::$variant(f) => f.message_to(s, phi, pa, m),)* }
            }
        }

        /// Every factor's name, in registry order.
        pub const NAMES: &[&str] = &[$(<$ty as Deterministic>::NAME),*];

        const FUNCTION_TABLE: &[Option<FunctionSpec>] = &[$(<$ty as Deterministic>::FUNCTION),*];

        /// The model language's functions: every factor that declares one, in registry order.
        pub fn functions() -> impl Iterator<Item = &'static FunctionSpec> {
            FUNCTION_TABLE.iter().filter_map(Option::as_ref)
        }

        /// The factor a call of the elementwise function `name` lowers to, for arguments of event
        /// sizes `dims` (see [`Deterministic::from_call`]).
        pub fn call(name: &str, dims: &[usize]) -> Option<Factor> {
            $(
                if <$ty as Deterministic>::FUNCTION.is_some_and(|f| {
                    f.name == name && matches!(f.rule, CallRule::Elementwise { .. })
                }) {
                    return <$ty as Deterministic>::from_call(dims).map(Factor::$variant);
                }
            )*
            None
        }

        #[cfg(test)]
        pub(crate) fn for_each_test_instance(mut f: impl FnMut(Factor)) {
            $(for x in <$ty as Deterministic>::test_instances() { f(Factor::$variant(x)); })*
        }
    };
}

registry! {
    Sum => sum::Sum,
    Product => product::Product,
    Dot => dot::Dot,
    MatVec => matvec::MatVec,
    Concat => concat::Concat,
    GammaProduct => gamma_product::GammaProduct,
    Gate => gate::Gate,
    Scale => scale::Scale,
}

#[cfg(test)]
mod laws;
