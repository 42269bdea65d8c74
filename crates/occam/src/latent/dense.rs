//! The few dense matrix products the latent-variable models need, on faer's GEMM (row-major
//! slices in and out; sequential, so results are the same on any thread count). Every product
//! here, and [`gemm`] for the models' own views, leaves the vector state clean
//! ([`occam_core::linalg::clean_vector_state`]): the per-point scalar code that follows a product
//! pays no AVX-to-SSE transitions.

use faer::linalg::matmul::matmul;
use faer::{Accum, MatMut, MatRef, Par};

/// C (n × m) = A B for row-major A (n × k) and B (k × m).
pub use occam_core::linalg::mat_mul as mul;

/// C = A B (`Accum::Replace`) or C += A B (`Accum::Add`), sequential, then a clean vector state on
/// this thread.
pub fn gemm(c: MatMut<'_, f64>, accum: Accum, a: MatRef<'_, f64>, b: MatRef<'_, f64>) {
    matmul(c, accum, a, b, 1.0, Par::Seq);
    occam_core::linalg::clean_vector_state();
}

/// C (k × m) = Aᵀ B for row-major A (n × k) and B (n × m).
pub fn mul_tn(a: &[f64], b: &[f64], n: usize, k: usize, m: usize) -> Vec<f64> {
    let mut c = vec![0.0; k * m];
    gemm(
        MatMut::from_row_major_slice_mut(&mut c, k, m),
        Accum::Replace,
        MatRef::from_row_major_slice(a, n, k).transpose(),
        MatRef::from_row_major_slice(b, n, m),
    );
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_match_loops() {
        let a: Vec<f64> = (0..6).map(|i| i as f64 + 1.0).collect(); // 2 × 3
        let b: Vec<f64> = (0..12).map(|i| (i as f64) * 0.5 - 2.0).collect(); // 3 × 4
        let c = mul(&a, &b, 2, 3, 4);
        for i in 0..2 {
            for j in 0..4 {
                let s: f64 = (0..3).map(|k| a[i * 3 + k] * b[k * 4 + j]).sum();
                assert!((c[i * 4 + j] - s).abs() < 1e-12);
            }
        }
        // Aᵀ B with A 3 × 2 (the same numbers), B 3 × 4.
        let c = mul_tn(&a, &b, 3, 2, 4);
        for i in 0..2 {
            for j in 0..4 {
                let s: f64 = (0..3).map(|k| a[k * 2 + i] * b[k * 4 + j]).sum();
                assert!((c[i * 4 + j] - s).abs() < 1e-12);
            }
        }
    }
}
