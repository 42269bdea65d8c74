//! What the reports show of latent-variable models: the ARD summary line and relevance diagram
//! ([`ard`]), the reconstructions and projections of PCA-type fits ([`pca_outputs`]) and the
//! figures of the studies ([`figures`]).

pub mod ard;
pub mod figures;
pub mod pca_outputs;
