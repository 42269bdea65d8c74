//! Linear threshold units (thesis ch. 3).
pub mod datasets;
pub mod energy;
pub mod error;
pub mod experiments;
pub mod icm;
pub mod learn;
pub mod network;
pub mod smo;
