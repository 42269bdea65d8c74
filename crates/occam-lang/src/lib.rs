//! The Occam model language.
