//! Exponential-family distributions, one file each (Winn ch. 2, Appendix A).
//!
//! Sign convention, stated once: p(x|θ) = exp(φ(θ)·u(x) + f(x) − A(φ)) — Winn (2.1) with his
//! g = −A. u = ∂A/∂φ. Each distribution is a small value (its fixed, non-conjugate constants such as
//! a Gamma shape live in the struct) plus pure formulas over one plate element's flat slices.
//!
//! Adding a distribution is one file plus one line in `registry!` below: the line generates the
//! `Dist` enum, its dispatch, the family table the model language reads ([`FAMILIES`]), the
//! constructor lookup the lowering calls ([`build`]) and inclusion in the shared law tests.
//!
//! Each family's file declares everything about it: its [`FamilySpec`] (names, aliases, slots with
//! the value kinds and constants they accept, value kind, event shape, reported parameters), how
//! its constants build it (`from_args`), how its natural parameters become its usual parameters
//! (`usual_params`) and its number of free parameters.
//!
//! A family's natural parameters live in the space of its moments u, the space its children's
//! messages are in. A family that is usually parameterised otherwise is written in that space
//! when its conjugate updates stay in it: the stick-breaking process ([`StickBreaking`]) shares
//! the Dirichlet's u = ln π, and its K Beta sticks are a linear function of φ, formed inside
//! `moments` and `usual_params` — no change of basis in any message. Two hooks cover what the
//! engine would otherwise derive from the moment kind alone: [`ExpFamily::mean`] (`E[x]` where the
//! kind's formula does not apply) and [`ExpFamily::orders_categories`] (a prior that is not
//! symmetric in its categories, so that mixtures try putting their larger components first). A
//! third, [`ExpFamily::draw_given_parents`], lets a family whose draw given drawn parents is not
//! `sample` from `prior` (the importance-sampled ones) make that draw itself, so that the
//! engine's samplers name no family.

use crate::error::ValueError;
use crate::moments::MomentKind;
use crate::Rng;

pub use crate::spec::SlotSpec as Slot;
use crate::spec::{ArgError, Args, FamilySpec, Param};
mod quality;
mod sampling;
mod shape_quad;
/// The Jaakkola–Jordan bound of the logit families, for checks outside the family files.
pub use logistic::{jj_bound, jj_lambda, jj_xi};
pub(crate) use mv_gaussian::gaussian_vector_moments;
/// Many draws from one Gaussian-vector φ with one factorisation (the engine's shared-covariance
/// initialisation).
pub(crate) use mv_gaussian::gaussian_vector_sample_rows;
pub use quality::BoundQuality;
#[cfg(test)]
pub(crate) use sampling::SampledPrior;
pub use sampling::Sampling;
pub(crate) use sampling::{truncated_draw, Proposal};
/// u(a) of a Gamma's random shape ([`MomentKind::GammaShape`]).
pub use shape_quad::shape_stats;
/// What Böhning's bound costs the posterior sds, as the reports say it.
pub use softmax::BOHNING_SDS;

/// What a slot accepts: moments of `kind`, gathered over `stack` elements of the child's event
/// plate (`stack == 1`: an ordinary parent; `stack == d`: e.g. the d Gamma precisions of an ARD
/// Gaussian, one per event coordinate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotInput {
    /// Moment layout of one parent element.
    pub kind: MomentKind,
    /// How many parent elements the slot gathers along the child's event plate.
    pub stack: usize,
}

impl SlotInput {
    /// An ordinary (unstacked) slot.
    pub fn single(kind: MomentKind) -> Self {
        SlotInput { kind, stack: 1 }
    }
    /// Total length of the gathered parent moments.
    pub fn len(&self) -> usize {
        self.kind.len() * self.stack
    }
    /// Never true.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// A natural-parameter vector outside the distribution's domain (e.g. a non-positive precision);
/// the text says which condition failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct OutOfDomain(pub &'static str);

/// Formulas of one exponential family, over one plate element.
///
/// `pa[s]` holds the (gathered) moments of the parent in slot `s`; `u` a moment vector of this
/// variable (for messages: a weighted *sum* of moment vectors, with `w` the sum of weights, which
/// is exact because every message is multilinear — Winn §2.1.2).
pub trait ExpFamily: Clone + std::fmt::Debug + Send + Sync + 'static {
    /// What the model language and the reports know of the family.
    const SPEC: FamilySpec;
    /// Model-language name.
    const NAME: &'static str = Self::SPEC.name;
    /// Conjugate parent slots, in positional order: the spec's slots after its constants.
    const SLOTS: &'static [Slot] = Self::SPEC.parent_slots();
    /// Builds the distribution from a variable's arguments (its constants; one per slot of
    /// [`ExpFamily::SPEC`]), e.g. a Gamma's shape. A family may build another, equal, family
    /// (a GaussianARD with a vector mean and a constant precision is an MvGaussian); the built
    /// family's slots must be the spec's parent slots, by name.
    fn from_args(args: &Args<'_>) -> Result<Dist, ArgError>;
    /// The usual parameters of the member with natural parameters φ, named as in
    /// `SPEC.params` and in that order (e.g. a Gamma's shape and rate).
    fn usual_params(&self, _phi: &[f64]) -> Vec<(&'static str, Param)> {
        Vec::new()
    }
    /// Number of free parameters of a member of the family (the dimension of its
    /// natural-parameter domain), for parameter counts such as BIC.
    fn free_params(&self) -> usize;
    /// Layout of this variable's moments (what its children receive).
    fn kind(&self) -> MomentKind;
    /// What slot `slot` accepts.
    fn slot_input(&self, slot: usize) -> SlotInput;
    /// Whether slot `slot` must hold a constant because a random parent there is not conjugate
    /// for this instance (e.g. a rectified Gaussian's precision when its location is not 0).
    fn needs_constant_parent(&self, _slot: usize) -> bool {
        false
    }
    /// Number of values one observation of this variable holds.
    fn value_len(&self) -> usize {
        self.kind().value_len()
    }
    /// Whether every finite value is in the support, so that `observe` refuses only NaN and ±∞
    /// (Gaussians): observed data are then checked in bulk, without forming u(x) element by
    /// element. A family that says so has its `observe` tested for it by the law tests.
    fn finite_values_are_valid(&self) -> bool {
        false
    }
    /// Writes ⟨φ(pa)⟩ and returns ⟨A(φ(pa))⟩, the expected log-partition of the prior — Winn
    /// (2.14), with ⟨g⟩ = −⟨A⟩ (the expectation, not A(⟨φ⟩) as the printed (2.36) has it; see
    /// docs/seed-corrections.md).
    fn prior(&self, pa: &[&[f64]], phi: &mut [f64]) -> f64;
    /// Writes u = ∂A/∂φ and returns A(φ).
    fn moments(&self, phi: &[f64], u: &mut [f64]) -> Result<f64, OutOfDomain>;
    /// `moments` of consecutive elements: φ and u row-major, A(φ) of each into `a`; stops at the
    /// first element outside the domain and returns its row. Families with a batched form (the
    /// Categorical's block softmax) override it; the law tests check both agree.
    fn moments_rows(
        &self,
        phi: &[f64],
        u: &mut [f64],
        a: &mut [f64],
    ) -> Result<(), (usize, OutOfDomain)> {
        let len = self.kind().len();
        for (r, ar) in a.iter_mut().enumerate() {
            let range = r * len..(r + 1) * len;
            *ar = self
                .moments(&phi[range.clone()], &mut u[range])
                .map_err(|e| (r, e))?;
        }
        Ok(())
    }
    /// Writes u(x) for a fixed value x and returns f(x); a [`ValueError`] if x is outside the
    /// support.
    fn observe_value(&self, x: &[f64], u: &mut [f64]) -> Result<f64, ValueError>;
    /// Message to slot `slot`: ∂/∂pa\[slot\] of Σ_i w_i [φ(pa)·u_i − A(φ(pa))], given u = Σ w_i u_i
    /// and w = Σ w_i — Winn (2.18).
    fn message_to(&self, slot: usize, u: &[f64], w: f64, pa: &[&[f64]], m: &mut [f64]);
    /// Draws x from the member with natural parameters φ.
    fn sample(&self, phi: &[f64], rng: &mut Rng, x: &mut [f64]);
    /// The mode of the member with natural parameters φ (MAP factors, Winn §2.6.1).
    fn mode(&self, phi: &[f64], x: &mut [f64]);
    /// ⟨f(x)⟩ under the member with natural parameters φ and moments u (zero for most families).
    fn expected_base_measure(&self, _phi: &[f64], _u: &[f64]) -> f64 {
        0.0
    }
    /// An element's own part of the bound, A(φ) − φ·u (its entropy plus ⟨f⟩), given u and
    /// A = A(φ). The default subtracts. A family whose A(φ) and φ·u both grow without bound as
    /// q sharpens overrides it with a closed form, so that the difference does not cancel to
    /// round-off: both hold ½ μᵀΛμ for a Gaussian, ~10³⁰³ for a mean whose precision came from
    /// `Gamma(1e-6, 1e-308)`'s prior mean. The law tests check the two agree.
    fn own_term(&self, phi: &[f64], u: &[f64], a: f64) -> f64 {
        a - phi.iter().zip(u).map(|(p, v)| p * v).sum::<f64>()
    }
    /// A random start's q, centred on the drawn value `x` with the spread of `phi` (the prior's
    /// φ, sharpened by the engine): writes its natural parameters into `out` and returns true.
    /// Such a start has moments consistent with its φ, so the bound of the starting state is a
    /// bound (Winn §2.5.1's "random draw" start uses the point mass u(x), whose entropy is −∞ for
    /// a continuous family; beside the prior's φ its moments would be no q at all). Location
    /// families keep the spread, scale families their shape, discrete families give the point
    /// mass or a q within 10⁻⁹ of it (law 6 in `laws.rs`). The default returns false: a random
    /// start of the family then keeps the prior's q.
    fn centred_at(&self, _phi: &[f64], _x: &[f64], _out: &mut [f64]) -> bool {
        false
    }
    /// Differential (or discrete) entropy: A(φ) − φ·u − ⟨f⟩.
    fn entropy(&self, phi: &[f64]) -> Result<f64, OutOfDomain> {
        let mut u = vec![0.0; self.kind().len()];
        let a = self.moments(phi, &mut u)?;
        let dot: f64 = phi.iter().zip(&u).map(|(p, v)| p * v).sum();
        Ok(a - dot - self.expected_base_measure(phi, &u))
    }
    /// Moments that are equal for every fixed value x, as a shorter layout: for each moment of
    /// u(x), its position in the packed moments (positions `0..max + 1`, every one used). A
    /// mixture child whose values are all data then has its scores Θ·u and statistics Wᵀ U formed
    /// on the packed moments, with the parameters of each packed position summed
    /// (`engine::packed`). `None` (the default): the layout has no repeated moment worth packing.
    fn packed_moments(&self) -> Option<Vec<usize>> {
        None
    }
    /// `E[x]` where the engine cannot form it from the moments alone: `None` (the default) for
    /// every family whose mean follows from its moment kind (a Dirichlet-kind variable's mean is
    /// (φ + 1)/Σ(φ + 1)); the stick-breaking process, which shares the Dirichlet's moments but
    /// not its parameterisation, returns its own.
    fn mean(&self, _phi: &[f64]) -> Option<Vec<f64>> {
        None
    }
    /// Whether the family favours some orders of its categories over others, so that a mixture
    /// whose weights it gives gains from having its larger components first (the stick-breaking
    /// process; the engine's pruning stage then tries that order). False by default.
    fn orders_categories(&self) -> bool {
        false
    }
    /// What this family's bound term is (see [`BoundQuality`]): `Exact` unless the family
    /// replaces ⟨A⟩ by a local bound (the Jaakkola–Jordan and Böhning families) or an estimate.
    fn bound_quality(&self) -> BoundQuality {
        BoundQuality::Exact
    }
    /// Whether its messages to its parents are gradients of a term that is not linear in the
    /// parents' moments (non-conjugate VMP, Knowles & Minka 2011): a Gaussian parent's update
    /// from them is a natural-gradient step that can lower the bound, which the engine then
    /// checks and shortens (`engine::noncj`). False for conjugate families and for local-bound
    /// families whose term is linear in the moments at the optimal local parameter.
    fn non_conjugate(&self) -> bool {
        false
    }
    /// Draws x given its parents' drawn values (`pa`: each parent slot's moments u of the
    /// drawn value), for ancestral sampling and the predictive's draws given drawn parents, when
    /// that draw is not `sample` from `prior(pa)`; returns whether it drew. The importance-sampled
    /// families need it (module `sampling`): their `prior` is a Gaussian envelope or nothing, and
    /// their `sample` draws from the Gaussian their q is carried as. False (the default): the
    /// engine draws `sample` from `prior(pa)`.
    fn draw_given_parents(&self, _pa: &[&[f64]], _rng: &mut Rng, _x: &mut [f64]) -> bool {
        false
    }
    /// Representative instances (dimensions, constants) for the shared law tests.
    fn test_instances() -> Vec<Self>;
    /// A random natural-parameter vector inside the domain, for the law tests.
    fn random_phi(&self, rng: &mut Rng) -> Vec<f64>;
}

/// Generic code over every family: `Dist::visit` calls `visit::<D>` with the concrete type, so a hot
/// loop dispatches once, outside the loop.
pub trait DistVisitor {
    /// Result type.
    type Output;
    /// Called with the concrete distribution.
    fn visit<D: ExpFamily>(self, dist: &D) -> Self::Output;
}

macro_rules! registry {
    ($($variant:ident => $module:ident :: $ty:ident),* $(,)?) => {
        $(mod $module; pub use $module::$ty;)*

        /// Every distribution Occam knows, as a closed enum.
        #[derive(Clone, Debug)]
        pub enum Dist {
            $(
                #[doc = concat!("See [`", stringify!($ty), "`].")]
                $variant($ty),
            )*
        }

        $(impl From<$ty> for Dist {
            fn from(d: $ty) -> Self {
                Dist::$variant(d)
            }
        })*

        impl Dist {
            /// Calls the visitor with the concrete distribution.
            pub fn visit<V: DistVisitor>(&self, v: V) -> V::Output {
                match self {
                    $(Dist::$variant(d) => v.visit(d),)*
                }
            }
        }

        /// Every family's spec, in registry order: the table the model language reads.
        pub const FAMILIES: &[FamilySpec] = &[$(<$ty as ExpFamily>::SPEC),*];

        /// Builds the family named `name` (canonical name) from a variable's arguments; `None`
        /// if no family has that name.
        pub fn build(name: &str, args: &Args<'_>) -> Option<Result<Dist, ArgError>> {
            $(if <$ty as ExpFamily>::SPEC.name == name {
                return Some(<$ty as ExpFamily>::from_args(args));
            })*
            None
        }

        /// Runs `V` on every test instance of every distribution (the shared law tests).
        #[cfg(test)]
        pub(crate) fn for_each_test_instance(mut f: impl FnMut(Dist)) {
            $(for d in <$ty as ExpFamily>::test_instances() { f(Dist::$variant(d)); })*
        }
    };
}

registry! {
    Gaussian => gaussian::Gaussian,
    MvGaussian => mv_gaussian::MvGaussian,
    GaussianArd => gaussian_ard::GaussianArd,
    RectifiedGaussian => rectified_gaussian::RectifiedGaussian,
    Gamma => gamma::Gamma,
    Exponential => exponential::Exponential,
    Wishart => wishart::Wishart,
    Dirichlet => dirichlet::Dirichlet,
    Beta => beta::Beta,
    Categorical => categorical::Categorical,
    Bernoulli => bernoulli::Bernoulli,
    Binomial => binomial::Binomial,
    Poisson => poisson::Poisson,
    Geometric => geometric::Geometric,
    NegativeBinomial => negative_binomial::NegativeBinomial,
    StickBreaking => stick_breaking::StickBreaking,
    BernoulliLogit => logistic::BernoulliLogit,
    BinomialLogit => logistic_binomial::BinomialLogit,
    CategoricalSoftmax => softmax::CategoricalSoftmax,
    CategoricalSoftmaxQuad => softmax_quad::CategoricalSoftmaxQuad,
    BernoulliLogitQuad => logistic_quad::BernoulliLogitQuad,
    BinomialLogitQuad => logistic_binomial_quad::BinomialLogitQuad,
    PoissonLog => poisson_log::PoissonLog,
    ShapeGamma => shape_gamma::ShapeGamma,
    GammaRandomShape => gamma_random_shape::GammaRandomShape,
    GammaTiedShape => gamma_tied_shape::GammaTiedShape,
    StudentT => student_t::StudentT,
    TruncatedGaussian => truncated_gaussian::TruncatedGaussian,
    GaussianMixture2 => gaussian_mixture2::GaussianMixture2,
}

/// The spec of the family named `name` or one of its aliases.
pub fn family(name: &str) -> Option<&'static FamilySpec> {
    FAMILIES.iter().find(|f| f.is_named(name))
}

struct Name;
impl DistVisitor for Name {
    type Output = &'static str;
    fn visit<D: ExpFamily>(self, _: &D) -> &'static str {
        D::NAME
    }
}
struct Kind;
impl DistVisitor for Kind {
    type Output = MomentKind;
    fn visit<D: ExpFamily>(self, d: &D) -> MomentKind {
        d.kind()
    }
}
struct Slots;
impl DistVisitor for Slots {
    type Output = &'static [Slot];
    fn visit<D: ExpFamily>(self, _: &D) -> &'static [Slot] {
        D::SLOTS
    }
}
struct Spec;
impl DistVisitor for Spec {
    type Output = &'static FamilySpec;
    fn visit<D: ExpFamily>(self, _: &D) -> &'static FamilySpec {
        &D::SPEC
    }
}
struct Usual<'a>(&'a [f64]);
impl DistVisitor for Usual<'_> {
    type Output = Vec<(&'static str, Param)>;
    fn visit<D: ExpFamily>(self, d: &D) -> Vec<(&'static str, Param)> {
        d.usual_params(self.0)
    }
}
struct Free;
impl DistVisitor for Free {
    type Output = usize;
    fn visit<D: ExpFamily>(self, d: &D) -> usize {
        d.free_params()
    }
}
struct Input(usize);
impl DistVisitor for Input {
    type Output = SlotInput;
    fn visit<D: ExpFamily>(self, d: &D) -> SlotInput {
        d.slot_input(self.0)
    }
}

impl Dist {
    /// Model-language name.
    pub fn name(&self) -> &'static str {
        self.visit(Name)
    }
    /// Moment layout of the variable.
    pub fn kind(&self) -> MomentKind {
        self.visit(Kind)
    }
    /// Parent slots.
    pub fn slots(&self) -> &'static [Slot] {
        self.visit(Slots)
    }
    /// What slot `s` accepts.
    pub fn slot_input(&self, s: usize) -> SlotInput {
        self.visit(Input(s))
    }
    /// The family's spec.
    pub fn spec(&self) -> &'static FamilySpec {
        self.visit(Spec)
    }
    /// Usual parameters of the member with natural parameters φ (one plate element).
    pub fn usual_params(&self, phi: &[f64]) -> Vec<(&'static str, Param)> {
        self.visit(Usual(phi))
    }
    /// Number of free parameters of one member.
    pub fn free_params(&self) -> usize {
        self.visit(Free)
    }
    /// [`ExpFamily::own_term`] of one element.
    pub fn own_term(&self, phi: &[f64], u: &[f64], a: f64) -> f64 {
        self.visit(Own(phi, u, a))
    }
    /// [`ExpFamily::mean`] of one element.
    pub fn mean(&self, phi: &[f64]) -> Option<Vec<f64>> {
        self.visit(Mean(phi))
    }
    /// [`ExpFamily::orders_categories`].
    pub fn orders_categories(&self) -> bool {
        self.visit(Ordered)
    }
    /// [`ExpFamily::bound_quality`].
    pub fn bound_quality(&self) -> BoundQuality {
        self.visit(Quality)
    }
    /// [`ExpFamily::non_conjugate`].
    pub fn non_conjugate(&self) -> bool {
        self.visit(NonConjugate)
    }
    /// [`ExpFamily::packed_moments`].
    pub fn packed_moments(&self) -> Option<Vec<usize>> {
        self.visit(PackedMoments)
    }
    /// [`ExpFamily::draw_given_parents`].
    pub fn draw_given_parents(&self, pa: &[&[f64]], rng: &mut Rng, x: &mut [f64]) -> bool {
        self.visit(DrawGiven(pa, rng, x))
    }
}

struct DrawGiven<'a, 'p>(&'a [&'p [f64]], &'a mut Rng, &'a mut [f64]);
impl DistVisitor for DrawGiven<'_, '_> {
    type Output = bool;
    fn visit<D: ExpFamily>(self, d: &D) -> bool {
        d.draw_given_parents(self.0, self.1, self.2)
    }
}

struct PackedMoments;

struct Quality;
impl DistVisitor for Quality {
    type Output = BoundQuality;
    fn visit<D: ExpFamily>(self, d: &D) -> BoundQuality {
        d.bound_quality()
    }
}

struct NonConjugate;
impl DistVisitor for NonConjugate {
    type Output = bool;
    fn visit<D: ExpFamily>(self, d: &D) -> bool {
        d.non_conjugate()
    }
}

struct Mean<'a>(&'a [f64]);

struct Ordered;

impl DistVisitor for Ordered {
    type Output = bool;
    fn visit<D: ExpFamily>(self, d: &D) -> bool {
        d.orders_categories()
    }
}

impl DistVisitor for Mean<'_> {
    type Output = Option<Vec<f64>>;
    fn visit<D: ExpFamily>(self, d: &D) -> Option<Vec<f64>> {
        d.mean(self.0)
    }
}

impl DistVisitor for PackedMoments {
    type Output = Option<Vec<usize>>;
    fn visit<D: ExpFamily>(self, d: &D) -> Option<Vec<usize>> {
        d.packed_moments()
    }
}

struct Own<'a>(&'a [f64], &'a [f64], f64);

impl DistVisitor for Own<'_> {
    type Output = f64;
    fn visit<D: ExpFamily>(self, d: &D) -> f64 {
        d.own_term(self.0, self.1, self.2)
    }
}

#[cfg(test)]
pub(crate) mod laws;
