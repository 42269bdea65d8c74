//! # occam-studies: the hand-derived studies of the seed papers
//!
//! Studies built from many fits and from baselines derived by hand beside the engine: Winn
//! §3.4.4's handwritten digits ([`digits`]: a mixture of Bayesian PCA per digit against ML
//! mixtures of PPCA), the effective-dimension curve of Bayesian PCA ([`bpca`], Winn Fig. 3.3),
//! and the maximum-likelihood baselines ([`ppca`]: PPCA in closed form, [`vqpca`]: local PCA by
//! VQ), the Bayesian Occam's razor on polynomial degree ([`polynomial`]), and Winn ch. 4's microarray
//! spot model on synthetic spots ([`spot`], hand-derived VMP with importance sampling). The
//! others call the facade (`occam`) for every fit and `occam-report` for their figures;
//! nothing in the pipeline imports them.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod bpca;
pub mod digits;
pub mod polynomial;
pub mod ppca;
pub mod spot;
pub mod vqpca;
