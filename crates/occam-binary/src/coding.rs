//! Exact conversions between 0/1 and ±1 codings of binary units (s = 2x − 1).
//!
//! Boltzmann machine, 0/1 form: log w(x) = c₀₁ + ½ xᵀ W x + bᵀ x, x ∈ {0,1}ⁿ, zero diagonal.
//! ±1 form: log w(s) = c + ½ sᵀ Θ s + θᵀ s. Substituting x = (s + 1)/2 (derived here):
//!   Θ = W/4,  θ_i = b_i/2 + ¼ Σ_j W_ij,  c = c₀₁ + ⅛ Σ_ij W_ij + ½ Σ_i b_i,
//! and conversely W = 4Θ, b_i = 2θ_i − 2 Σ_j Θ_ij, c₀₁ = c + ½ Σ_ij Θ_ij − Σ_i θ_i.
//! The two forms assign the same weight to corresponding states, so log Z agrees exactly.
//!
//! Sigmoid belief network (Saul et al.'s 0/1 form, used for Leisink & Kappen §5.2's toy; derived
//! here): P(X_i = 1 | pa) = sigmoid(Σ_j J_ij X_j + h_i) in 0/1 coding equals Leisink & Kappen (26)
//! in ±1 coding with θ^{ij} = J_ij/4 and θ^i = h_i/2 + ¼ Σ_j J_ij.

// Dense numerical kernels index several arrays with one loop variable; iterator chains would
// obscure the equations they implement.
#![allow(clippy::needless_range_loop)]

/// Parameters (W, b, c) of a 0/1-coded Boltzmann machine; W row-major n×n.
#[derive(Debug, Clone, PartialEq)]
pub struct ZeroOneParams {
    /// Weights W (symmetric, zero diagonal).
    pub w: Vec<f64>,
    /// Biases b.
    pub b: Vec<f64>,
    /// Log-weight constant c₀₁.
    pub offset: f64,
}

/// Parameters (Θ, θ, c) of a ±1-coded Boltzmann machine; Θ row-major n×n.
#[derive(Debug, Clone, PartialEq)]
pub struct PlusMinusParams {
    /// Weights Θ (symmetric, zero diagonal).
    pub w: Vec<f64>,
    /// Thresholds θ.
    pub h: Vec<f64>,
    /// Log-weight constant c.
    pub offset: f64,
}

/// 0/1 → ±1 (module doc formulas).
pub fn zero_one_to_plus_minus(p: &ZeroOneParams) -> PlusMinusParams {
    let n = p.b.len();
    let w: Vec<f64> = p.w.iter().map(|x| 0.25 * x).collect();
    let mut h = vec![0.0; n];
    let mut c = p.offset;
    for i in 0..n {
        let row: f64 = p.w[i * n..(i + 1) * n].iter().sum();
        h[i] = 0.5 * p.b[i] + 0.25 * row;
        c += 0.125 * row + 0.5 * p.b[i];
    }
    PlusMinusParams { w, h, offset: c }
}

/// ±1 → 0/1 (module doc formulas).
pub fn plus_minus_to_zero_one(p: &PlusMinusParams) -> ZeroOneParams {
    let n = p.h.len();
    let w: Vec<f64> = p.w.iter().map(|x| 4.0 * x).collect();
    let mut b = vec![0.0; n];
    let mut c = p.offset;
    for i in 0..n {
        let row: f64 = p.w[i * n..(i + 1) * n].iter().sum();
        b[i] = 2.0 * p.h[i] - 2.0 * row;
        c += 0.5 * row - p.h[i];
    }
    ZeroOneParams { w, b, offset: c }
}

/// SBN 0/1 (J, h) → ±1 (θ^{ij}, θ^i): θ^{ij} = J_ij/4, θ^i = h_i/2 + ¼ Σ_j J_ij (J row-major, row = child).
pub fn sbn_zero_one_to_plus_minus(j: &[f64], h: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let n = h.len();
    let theta: Vec<f64> = j.iter().map(|x| 0.25 * x).collect();
    let th: Vec<f64> = (0..n)
        .map(|i| 0.5 * h[i] + 0.25 * j[i * n..(i + 1) * n].iter().sum::<f64>())
        .collect();
    (theta, th)
}

/// Maps a 0/1 value to ±1.
#[inline]
pub fn to_pm(x: f64) -> f64 {
    2.0 * x - 1.0
}

/// Maps a ±1 value to 0/1.
#[inline]
pub fn to_01(s: f64) -> f64 {
    0.5 * (s + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::log_sum_exp_states;

    fn sym(n: usize, seed: u64) -> Vec<f64> {
        let mut w = vec![0.0; n * n];
        let mut x = seed;
        for i in 0..n {
            for j in 0..i {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let v = ((x >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 3.0;
                w[i * n + j] = v;
                w[j * n + i] = v;
            }
        }
        w
    }

    fn lw01(p: &ZeroOneParams, s: u64) -> f64 {
        let n = p.b.len();
        let x: Vec<f64> = (0..n).map(|i| (s >> i & 1) as f64).collect();
        let mut a = p.offset;
        for i in 0..n {
            a += p.b[i] * x[i];
            for j in 0..n {
                a += 0.5 * p.w[i * n + j] * x[i] * x[j];
            }
        }
        a
    }
    fn lwpm(p: &PlusMinusParams, s: u64) -> f64 {
        let n = p.h.len();
        let x: Vec<f64> = (0..n)
            .map(|i| if s >> i & 1 == 1 { 1.0 } else { -1.0 })
            .collect();
        let mut a = p.offset;
        for i in 0..n {
            a += p.h[i] * x[i];
            for j in 0..n {
                a += 0.5 * p.w[i * n + j] * x[i] * x[j];
            }
        }
        a
    }

    #[test]
    fn log_z_agrees_after_constant_both_directions() {
        let n = 7;
        let p01 = ZeroOneParams {
            w: sym(n, 3),
            b: (0..n).map(|i| i as f64 * 0.3 - 1.0).collect(),
            offset: 0.7,
        };
        let pm = zero_one_to_plus_minus(&p01);
        for s in 0..(1u64 << n) {
            assert!((lw01(&p01, s) - lwpm(&pm, s)).abs() < 1e-12);
        }
        let z01 = log_sum_exp_states(n, |s| lw01(&p01, s)).unwrap();
        let zpm = log_sum_exp_states(n, |s| lwpm(&pm, s)).unwrap();
        assert!((z01 - zpm).abs() < 1e-12);
        // The constant matters: without it the two differ.
        let mut pm0 = pm.clone();
        pm0.offset = 0.0;
        let z0 = log_sum_exp_states(n, |s| lwpm(&pm0, s)).unwrap();
        assert!((z01 - z0 - pm.offset).abs() < 1e-12);
        let back = plus_minus_to_zero_one(&pm);
        for (a, b) in back.w.iter().zip(&p01.w) {
            assert!((a - b).abs() < 1e-14);
        }
        for (a, b) in back.b.iter().zip(&p01.b) {
            assert!((a - b).abs() < 1e-14);
        }
        assert!((back.offset - p01.offset).abs() < 1e-13);
    }

    #[test]
    fn sbn_conversion_matches_conditional() {
        // P(X_0 = 1 | X_1) = sigmoid(J x_1 + h) must equal σ₂(θ s_1 + θ⁰) = 1/(1+exp(−2(θ s_1 + θ⁰))).
        let (jv, hv) = (1.3, -0.4);
        let j = vec![0.0, jv, 0.0, 0.0];
        let h = vec![hv, 0.0];
        let (t, th) = sbn_zero_one_to_plus_minus(&j, &h);
        for x1 in [0.0, 1.0] {
            let p01 = 1.0 / (1.0 + (-(jv * x1 + hv)).exp());
            let s1 = to_pm(x1);
            let ppm = 1.0 / (1.0 + (-2.0 * (t[1] * s1 + th[0])).exp());
            assert!((p01 - ppm).abs() < 1e-14);
        }
    }
}
