//! Reports of a fit: JSON, a readable summary, SVG plots and Hinton diagrams.

pub mod binary;
pub mod chain_figure;
pub mod chains;
pub mod figure;
pub mod hinton;
pub mod json;
pub mod outputs;
pub mod summary;
pub mod svg;
pub mod table;
