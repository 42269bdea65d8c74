//! Bayesian MLPs (thesis ch. 5, 6.3; the VB committee paper).

pub mod entropy;
pub mod mixing;
pub mod moments;
pub mod network;
pub mod objective;
pub mod prior;
pub mod structure;
pub mod vb;
