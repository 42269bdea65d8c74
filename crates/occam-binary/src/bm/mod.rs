//! Boltzmann machines (Ising models).
