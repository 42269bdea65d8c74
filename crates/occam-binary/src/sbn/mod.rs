//! Sigmoid belief networks.
