//! The x86 vector registers' upper halves put back to their clean state after wide-vector code.
//!
//! faer's GEMM microkernels (AVX-512, hand-scheduled) return without `vzeroupper`, which leaves the
//! upper bits of the vector registers "dirty". While they are, every instruction of code compiled
//! for the baseline target (SSE encoding: the per-element updates, statrs' ln Γ and ψ, the bound
//! terms) pays a transition cost, and each call into libm's VEX-encoded `log` more: measured on
//! this project's AVX-512 machine, a libm `log` took 230 ns with dirty upper halves against 7 ns
//! clean, and the Wisharts' moments of the issue-2 GMM case b were a quarter of a fit's time. The
//! engine calls [`clean`] after the mixture update's products and before its scalar per-element
//! work; it changes no value.

/// Clears the upper halves of the vector registers (`vzeroupper`) where the CPU has AVX; nothing
/// elsewhere. No value changes: only registers no live value is held in are cleared.
pub(super) fn clean() {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX, the one feature the function enables.
        unsafe { zero_upper() }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
fn zero_upper() {
    std::arch::x86_64::_mm256_zeroupper();
}

#[cfg(test)]
mod tests {
    /// Callable anywhere (a no-op without AVX), and leaves the values the caller holds as they
    /// are.
    #[test]
    fn clean_keeps_values() {
        let v: Vec<f64> = (0..64).map(|i| i as f64 * 0.25).collect();
        let w = v.clone();
        super::clean();
        assert_eq!(v, w);
    }
}
