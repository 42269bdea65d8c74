//! Baselines on the same networks and data (committee paper §2, §4; thesis §5.3.1–5.3.2): the evidence
//! procedure, hybrid Monte Carlo and early stopping.

pub mod early_stopping;
pub mod evidence;
pub mod hmc;
pub mod map;
