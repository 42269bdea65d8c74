//! Why a product or chain of a model cannot be rotated: each names the variable and where it is
//! declared (`place`, e.g. `` `W` (line 4) ``); the caller prefixes the product.

use thiserror::Error;

/// Why one `dot(W, X)` or `dot(C, x)` cannot be rotated.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum NotRotatable {
    /// An operand is an expression, not a variable.
    #[error("an operand is not a variable")]
    NotAVariable,
    /// The two operands have different event plates.
    #[error("its operands have different event plates")]
    EventPlates,
    /// An operand that is not a Gaussian vector.
    #[error("{place} is not a GaussianARD or MvGaussian vector")]
    NotGaussianVector {
        /// The variable and where it is declared.
        place: String,
    },
    /// An operand that is a mixture, observed or MAP.
    #[error("{place} is a mixture, observed or MAP")]
    NotLatent {
        /// The variable and where it is declared.
        place: String,
    },
    /// An operand in a q-block (its q is joint with another variable's, as a gated block's x
    /// with its mixture index: rotating x alone would break that q).
    #[error("{place} is in a q-block (`q joint`)")]
    InQBlock {
        /// The variable and where it is declared.
        place: String,
    },
    /// An operand read elsewhere too.
    #[error("{place} is used {uses} times; a rotation needs it in this product only")]
    Shared {
        /// The variable and where it is declared.
        place: String,
        /// How many expressions read it.
        uses: usize,
    },
    /// A chain that is a mixture or read elsewhere too.
    #[error(
        "the chain {place} is a mixture or read {uses} times; a rotation needs it in this product only"
    )]
    SharedChain {
        /// The chain and where it is declared.
        place: String,
        /// How many expressions read it.
        uses: usize,
    },
    /// A chain with control inputs.
    #[error("the chain {place} has inputs, which a rotation does not transform")]
    ChainInputs {
        /// The chain and where it is declared.
        place: String,
    },
    /// The emission matrix is not over the chain's state plate.
    #[error("{place} is not over the chain's state plate")]
    NotOverState {
        /// The emission variable and where it is declared.
        place: String,
    },
    /// The chain's dynamics are an expression or constant.
    #[error("the dynamics of the chain {place} are not a variable")]
    DynamicsNotVariable {
        /// The chain and where it is declared.
        place: String,
    },
    /// The dynamics are not a latent square Gaussian read only by the chain.
    #[error(
        "the dynamics {place} must be a latent Gaussian `{name}[D] over D` over the state plate D, \
         read only by the chain"
    )]
    Dynamics {
        /// The dynamics variable and where it is declared.
        place: String,
        /// Its name.
        name: String,
    },
}
