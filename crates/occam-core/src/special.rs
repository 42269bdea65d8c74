//! Special functions used by the bound terms, each defined once for the workspace.
//!
//! ln Γ and ψ come from `statrs` (well tested); the scaled complementary error function erfcx,
//! which `statrs` lacks, is written here with its source cited. The submodules hold the logistic
//! toolbox ([`logistic`]: log-sum-exp, sigmoid, softplus, binary entropy, with one cut-off
//! policy), the standard normal ([`normal`]: Φ, Owen's T, Φ₂) and the Gamma/Dirichlet/Beta
//! expectations and divergences ([`conjugate`]); their functions are re-exported here.

pub use statrs::function::gamma::{digamma, ln_gamma};

pub mod conjugate;
pub mod gaussian_softplus;
pub mod logistic;
pub mod normal;

pub use conjugate::{
    beta_mean_ln, dirichlet_mean_ln, gamma_entropy, gamma_expected_ln_pdf, gamma_mean_ln, kl_beta,
    kl_dirichlet, kl_dirichlet_symmetric, kl_gamma,
};
pub use gaussian_softplus::{expect_softplus, GaussHermite};
pub use logistic::{
    binary_entropy, binary_entropy_pm, ln_2cosh, log_add_exp, log_sigmoid, log_sum_exp, logit,
    sigmoid, softplus,
};
pub use normal::{bvn_cdf, bvn_cdf_diag, norm_cdf, norm_pdf, owens_t, INV_SQRT_2PI};

/// ln 2π.
pub const LN_2PI: f64 = 1.837_877_066_409_345_5;

/// Multivariate log-gamma ln Γ_d(a) = d(d−1)/4 ln π + Σ_{i=1}^{d} ln Γ(a + (1−i)/2).
pub fn ln_multigamma(a: f64, d: usize) -> f64 {
    ln_multigamma_and_digamma(a, d).0
}

/// Σ_{i=1}^{d} ψ(a + (1−i)/2), the derivative of ln Γ_d.
pub fn multi_digamma(a: f64, d: usize) -> f64 {
    ln_multigamma_and_digamma(a, d).1
}

/// ([`ln_multigamma`], [`multi_digamma`]) together. The arguments x_i = a − i/2 (i = 0..d) fall in
/// two chains of unit steps (a, a−1, … and a−½, a−3/2, …), so only the first of each chain is
/// evaluated by series; the rest follow from Γ(x+1) = x Γ(x) and ψ(x+1) = ψ(x) + 1/x: ln Γ(x_i) =
/// ln Γ(x_c) − ln q_i and ψ(x_i) = ψ(x_c) − Σ 1/x_j, with c = i mod 2 the chain's first argument
/// and q_i the product of the chain's arguments x_{c+2}, …, x_i. The d − 2 logarithms of the ln Γ
/// sum are then one, ln Π_i q_i, when that product cannot overflow or underflow (e.g. d = 10 and any
/// a up to 10⁶⁰: twenty factors); else one per step. The Wishart moments need both for every
/// component at every sweep.
pub fn ln_multigamma_and_digamma(a: f64, d: usize) -> (f64, f64) {
    let mut ln_g = (d * d.saturating_sub(1)) as f64 / 4.0 * std::f64::consts::PI.ln();
    let mut psi = 0.0;
    // (ln Γ, ψ) at the first argument of each chain.
    let first: Vec<(f64, f64)> = (0..d.min(2))
        .map(|i| {
            let x = a - 0.5 * i as f64;
            (ln_gamma(x), digamma(x))
        })
        .collect();
    for (i, (g, p)) in first.iter().enumerate() {
        // The chain of x_i holds the (d − i).div_ceil(2) arguments x_i, x_{i+2}, ….
        let m = (d - i).div_ceil(2) as f64;
        ln_g += m * g;
        psi += m * p;
    }
    if d <= 2 {
        return (ln_g, psi);
    }
    // Σ_i ln q_i = Σ_{i ≥ 2} w_i ln x_i, w_i the number of later arguments of x_i's chain, itself
    // included; W = Σ w_i. One product when every factor's power W stays within f64's range.
    let weight: usize = (2..d).map(|i| (d - i).div_ceil(2)).sum();
    let (lo, hi) = (a - 0.5 * (d - 1) as f64, a - 1.0);
    let one_product = weight as f64 * hi.ln().max(-lo.ln()) < 600.0;
    let mut q = [1.0; 2];
    let mut product = 1.0;
    let mut logs = 0.0;
    // Σψ: the reciprocal sums of each chain, added at each step.
    let mut recip = [0.0; 2];
    for i in 2..d {
        let x = a - 0.5 * i as f64;
        let c = i % 2;
        recip[c] += 1.0 / x;
        psi -= recip[c];
        if one_product {
            q[c] *= x;
            product *= q[c];
        } else {
            logs += (d - i).div_ceil(2) as f64 * x.ln();
        }
    }
    ln_g -= if one_product { product.ln() } else { logs };
    (ln_g, psi)
}

/// Scaled complementary error function erfcx(z) = e^{z²} erfc(z), accurate for all real z.
///
/// For z < 5 it uses libm's erfc (a port of FreeBSD's, accurate to about 1 ulp; statrs' erfc is
/// off by ~1e-10 relative near z = 3, too coarse for bound terms); above, the continued fraction
/// of erfc (Abramowitz & Stegun 7.1.14), which converges fast there.
pub fn erfcx(z: f64) -> f64 {
    if z < 5.0 {
        (z * z).exp() * libm::erfc(z)
    } else {
        // erfc(z) e^{z²} = (1/√π) · 1/(z + (1/2)/(z + 1/(z + (3/2)/(z + 2/(z + …)))))
        let mut f = z;
        for k in (1..60).rev() {
            f = z + (k as f64 / 2.0) / f;
        }
        1.0 / (f * std::f64::consts::PI.sqrt())
    }
}

/// e^x for x ≤ 0, branch-free so loops over it vectorise (softmax of responsibilities is the
/// hottest loop of a mixture). Table-driven reduction x = (64m + j) ln2/64 + r with j in 0..64 and
/// |r| ≤ ln2/128 (the ln2/64 split in two so that the product with the integer is exact), then
/// e^x = 2^m · 2^{j/64} · e^r, 2^{j/64} read from a table of correctly rounded values and e^r − 1
/// from its degree-5 Taylor polynomial (truncation error below 4e−17 relative), added to the table
/// value as T + T·(e^r − 1) so that only T and the last addition round at full size. Inputs below
/// −700 give 0 (where `f64::exp` gives at most 1e−304); a NaN gives an unspecified value (callers
/// check for NaN first, as [`softmax_rows`] does). Plain mul/add (no fused multiply-add), so every
/// target gives the same bits; within 1 ulp of `f64::exp` (tested over [−700, 0]). The table read
/// is a gather in vector form, which is cheap on current x86: a table-free version (range ±ln2/2,
/// degree-13 polynomial) measured 1.7–2× slower per value
/// (`bench/results/gmm_kernel_2026-11-26_2335utc.txt`).
#[inline]
pub fn exp_nonpositive(x: f64) -> f64 {
    // ln2/64 in two parts: the high part has 32 significant bits, so its product with the integer
    // 64m + j (|64m + j| < 2¹⁷ here) is exact.
    const LN2_64_HI: f64 = 0.010_830_424_693_267_56;
    const LN2_64_LO: f64 = 2.981_585_826_985_293_3e-12;
    const INV_LN2_64: f64 = 92.332_482_616_893_66;
    // Below −700: evaluated at −700 and replaced by 0 (compare and select, one vector instruction
    // each, where `f64::max` and a multiplication by 0 or 1 took four).
    let under = x < -700.0;
    let x = if under { -700.0 } else { x };
    // Round to nearest by the 1.5·2⁵² shift (no libm call without SSE4.1); the low bits of `t` then
    // hold i = 64m + j in two's complement, and the shift's own low 18 bits are 0: j is the low 6
    // bits of t, and bits 6..17 of t are m's, which shifted to the exponent field give 2ᵐ with
    // integer ops only (no float → int conversion).
    const SHIFT: f64 = 6_755_399_441_055_744.0;
    let t = x * INV_LN2_64 + SHIFT;
    let i = t - SHIFT;
    let r = (x - i * LN2_64_HI) - i * LN2_64_LO;
    let bits = t.to_bits();
    let table = EXP2_64[(bits & 63) as usize];
    // e^r − 1 = r + r²/2 + r³/6 + r⁴/24 + r⁵/120.
    let r2 = r * r;
    let q = r + r2 * ((0.5 + r * (1.0 / 6.0)) + r2 * (1.0 / 24.0 + r * (1.0 / 120.0)));
    let scaled = table + table * q;
    let y = f64::from_bits(scaled.to_bits().wrapping_add((bits >> 6) << 52));
    if under {
        0.0
    } else {
        y
    }
}

/// 2^{j/64}, j = 0..64, each correctly rounded (computed at 60 digits).
pub(crate) const EXP2_64: [f64; 64] = [
    1.0,
    1.0108892860517005,
    1.0218971486541166,
    1.0330248790212284,
    1.0442737824274138,
    1.0556451783605572,
    1.0671404006768237,
    1.0787607977571199,
    1.0905077326652577,
    1.102382583307841,
    1.1143867425958924,
    1.1265216186082418,
    1.1387886347566916,
    1.1511892299529827,
    1.1637248587775775,
    1.1763969916502812,
    1.189207115002721,
    1.202156731452703,
    1.215247359980469,
    1.22848053610687,
    1.241857812073484,
    1.255380757024691,
    1.2690509571917332,
    1.2828700160787783,
    1.2968395546510096,
    1.3109612115247644,
    1.3252366431597413,
    1.339667524053303,
    1.3542555469368927,
    1.3690024229745905,
    1.383909881963832,
    1.3989796725383112,
    std::f64::consts::SQRT_2,
    1.42961333839197,
    1.4451808069770467,
    1.460917794180647,
    1.4768261459394993,
    1.4929077282912648,
    1.5091644275934228,
    1.5255981507445384,
    1.5422108254079407,
    1.559004400237837,
    1.5759808451078865,
    1.593142151342267,
    1.6104903319492543,
    1.6280274218573478,
    1.645755478153965,
    1.6636765803267364,
    1.681792830507429,
    1.7001063537185235,
    1.718619298122478,
    1.7373338352737062,
    1.7562521603732995,
    1.7753764925265212,
    1.7947090750031072,
    1.8142521755003989,
    1.8340080864093424,
    1.8539791250833855,
    1.8741676341103,
    1.8945759815869656,
    1.9152065613971474,
    1.9360617934922943,
    1.9571441241754002,
    1.978456026387951,
];

/// ln x for positive, finite, normal x (no subnormals, zeros, infinities or NaN: the caller's domain,
/// e.g. a softmax's sum in [1, K]), branch-free so loops over it vectorise like [`exp_nonpositive`].
/// x = 2ᵉ m with m in [√½, √2) read from the bits (the exponent turned into a float by the 2⁵² shift,
/// no float ↔ int conversion); with f = m − 1 (exact) and s = f/(2 + f), ln m = 2 atanh s =
/// f − (f²/2 − s(f²/2 + R)), R = Σ_{i≥1} 2s^{2i}/(2i + 1) — fdlibm's `__ieee754_log` arrangement, in
/// which the exact f carries the result and the rounded terms only a correction; the series to
/// s²⁰ (|s| ≤ 0.172) leaves a truncation error below 1e−18 relative. Plain mul/add (no fused
/// multiply-add), so every target gives the same bits; within 2 ulp of `f64::ln` (tested).
#[inline]
pub fn ln_positive(x: f64) -> f64 {
    const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    const SHIFT: f64 = 4_503_599_627_370_496.0; // 2⁵²
    let bits = x.to_bits();
    let m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    // The biased exponent as the low bits of 2⁵² + e: exact.
    let e = f64::from_bits(SHIFT.to_bits() | (bits >> 52)) - (SHIFT + 1023.0);
    let big = m > std::f64::consts::SQRT_2;
    let (m, e) = if big { (m * 0.5, e + 1.0) } else { (m, e) };
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    // 2/(2i + 1), i = 1..10, by Horner's scheme in z.
    const C: [f64; 10] = [
        2.0 / 3.0,
        2.0 / 5.0,
        2.0 / 7.0,
        2.0 / 9.0,
        2.0 / 11.0,
        2.0 / 13.0,
        2.0 / 15.0,
        2.0 / 17.0,
        2.0 / 19.0,
        2.0 / 21.0,
    ];
    let mut p = C[9];
    for c in C[..9].iter().rev() {
        p = p * z + c;
    }
    let r = z * p;
    let hfsq = 0.5 * f * f;
    // e ln 2 in two parts: e · LN2_HI is exact (LN2_HI has 32 significant bits).
    e * LN2_HI - ((hfsq - (s * (hfsq + r) + e * LN2_LO)) - f)
}

/// Calls `$f::<K>(args)` with the row length K = k as a compile-time constant for k in 1..=16, so
/// that the per-row loops of a block unroll (no loop overhead per row of a few values), and with
/// K = 0 (the row length read at run time) for longer rows.
macro_rules! with_row_length {
    ($k:expr, $f:ident($($arg:expr),*)) => {
        match $k {
            1 => $f::<1>($($arg),*),
            2 => $f::<2>($($arg),*),
            3 => $f::<3>($($arg),*),
            4 => $f::<4>($($arg),*),
            5 => $f::<5>($($arg),*),
            6 => $f::<6>($($arg),*),
            7 => $f::<7>($($arg),*),
            8 => $f::<8>($($arg),*),
            9 => $f::<9>($($arg),*),
            10 => $f::<10>($($arg),*),
            11 => $f::<11>($($arg),*),
            12 => $f::<12>($($arg),*),
            13 => $f::<13>($($arg),*),
            14 => $f::<14>($($arg),*),
            15 => $f::<15>($($arg),*),
            16 => $f::<16>($($arg),*),
            _ => $f::<0>($($arg),*),
        }
    };
}
pub(crate) use with_row_length;

/// Row-wise softmax of row-major φ (rows × k): u = e^{φ−m}/s and a = m + ln s per row, with m the
/// row maximum — the moments of `rows` Categoricals at once. The exps of the whole block run in one
/// loop (vectorised, and compiled for AVX-512 and AVX2 too, chosen at run time); no fused multiply-add
/// is used, so every target gives the same bits. Rows of 17 to 64 values go eight at a time through
/// AVX-512 lanes where the CPU has them (`lanes::softmax`: the same operations in the same order, so
/// the same bits, without a chain of k dependent additions per row). Returns the first row that has
/// a NaN, a +∞ or only −∞ entries.
pub fn softmax_rows(phi: &[f64], k: usize, u: &mut [f64], a: &mut [f64]) -> Result<(), usize> {
    use crate::lanes::softmax;
    let tiled = if softmax::applies(k) && phi.len() == k * a.len() && u.len() == phi.len() {
        a.len() / 8 * 8
    } else {
        0
    };
    if tiled > 0
        && softmax::softmax_tiles(&phi[..tiled * k], k, &mut u[..tiled * k], &mut a[..tiled])
    {
        return softmax_row_major(&phi[tiled * k..], k, &mut u[tiled * k..], &mut a[tiled..])
            .map_err(|r| tiled + r);
    }
    softmax_row_major(phi, k, u, a)
}

/// [`softmax_rows`] row by row (see there).
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq", "x86_64+avx2"))]
fn softmax_row_major(phi: &[f64], k: usize, u: &mut [f64], a: &mut [f64]) -> Result<(), usize> {
    with_row_length!(k, softmax_fixed(phi, k, u, a))
}

/// [`softmax_rows`] with rows of K values (K = 0: k, read at run time).
#[inline(always)]
fn softmax_fixed<const K: usize>(
    phi: &[f64],
    k: usize,
    u: &mut [f64],
    a: &mut [f64],
) -> Result<(), usize> {
    let k = if K == 0 { k } else { K };
    exp_minus_max_fixed::<K>(phi, k, u, a)?;
    // Rows in groups of 64: the sums s (each in [1, k]: the row's largest term is e⁰) of a group
    // first, then their ln in one vectorised loop ([`ln_positive`] instead of a libm call per row).
    let mut sums = [0.0; 64];
    for (g, (us, as_)) in u.chunks_mut(64 * k).zip(a.chunks_mut(64)).enumerate() {
        for (i, ((out, s), _)) in us
            .chunks_exact_mut(k)
            .zip(sums.iter_mut())
            .zip(as_.iter())
            .enumerate()
        {
            // Added left to right (the same bits for every K).
            *s = out.iter().sum();
            // s ≥ 1 (the largest term is e⁰); the exit, never taken, keeps the compiler from
            // vectorising this loop across rows with strided gathers and scatters.
            if !(*s >= 1.0) {
                return Err(64 * g + i);
            }
            let inv = 1.0 / *s;
            out.iter_mut().for_each(|v| *v *= inv);
        }
        for (ar, s) in as_.iter_mut().zip(&sums) {
            *ar += ln_positive(*s);
        }
    }
    Ok(())
}

/// Row-wise e^{φ − m} with m the row maximum, into `out`, and m into `maxes`: [`softmax_rows`]
/// without the normalisation (same vectorised exps, same bits on every target). Returns the first
/// row that has a NaN, a +∞ or only −∞ entries.
#[multiversion::multiversion(targets("x86_64+avx512f+avx512dq", "x86_64+avx2"))]
pub fn exp_minus_row_max(
    phi: &[f64],
    k: usize,
    out: &mut [f64],
    maxes: &mut [f64],
) -> Result<(), usize> {
    with_row_length!(k, exp_minus_max_fixed(phi, k, out, maxes))
}

/// [`exp_minus_row_max`] with rows of K values (K = 0: k, read at run time).
#[inline(always)]
fn exp_minus_max_fixed<const K: usize>(
    phi: &[f64],
    k: usize,
    out: &mut [f64],
    maxes: &mut [f64],
) -> Result<(), usize> {
    let k = if K == 0 { k } else { K };
    // p · 0 is NaN exactly when p is NaN or ±∞: one vectorised pass over the block, and the rows
    // are checked one by one only when it finds one (a −∞ entry is allowed).
    let mut probe = [0.0; 8];
    let chunks = phi.chunks_exact(8);
    let tail: f64 = chunks.remainder().iter().map(|p| p * 0.0).sum();
    for c in chunks {
        for i in 0..8 {
            probe[i] += c[i] * 0.0;
        }
    }
    if (probe.iter().sum::<f64>() + tail).is_nan() {
        for (r, row) in phi.chunks_exact(k).enumerate() {
            let mut m = f64::NEG_INFINITY;
            let mut nan = false;
            for &p in row {
                nan |= p.is_nan();
                m = if p > m { p } else { m };
            }
            if nan || m == f64::INFINITY || m == f64::NEG_INFINITY {
                return Err(r);
            }
        }
    }
    for (r, ((row, o), mr)) in phi
        .chunks_exact(k)
        .zip(out.chunks_exact_mut(k))
        .zip(maxes.iter_mut())
        .enumerate()
    {
        // The maximum is exact in any order (no NaN here): even and odd entries in two running
        // maxima, so the chain is half as long.
        let max = |m: f64, p: f64| if p > m { p } else { m };
        let pairs = row.chunks_exact(2);
        let last = pairs.remainder().first().copied();
        let (mut m0, mut m1) = (f64::NEG_INFINITY, f64::NEG_INFINITY);
        for p in pairs {
            (m0, m1) = (max(m0, p[0]), max(m1, p[1]));
        }
        let m = max(max(m0, last.unwrap_or(f64::NEG_INFINITY)), m1);
        // (Found by the probe already; the exit also keeps the compiler from vectorising this
        // loop across rows with strided gathers and scatters, slower than one row's vector ops.)
        if m == f64::NEG_INFINITY {
            return Err(r);
        }
        *mr = m;
        o.iter_mut().zip(row).for_each(|(o, p)| *o = p - m);
    }
    out.iter_mut().for_each(|v| *v = exp_nonpositive(*v));
    Ok(())
}

/// ln B(a, b) = ln Γ(a) + ln Γ(b) − ln Γ(a + b).
pub fn ln_beta(a: f64, b: f64) -> f64 {
    ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b)
}

/// ln C(n, k).
pub fn ln_binomial(n: f64, k: f64) -> f64 {
    ln_gamma(n + 1.0) - ln_gamma(k + 1.0) - ln_gamma(n - k + 1.0)
}

#[cfg(test)]
mod tests;
