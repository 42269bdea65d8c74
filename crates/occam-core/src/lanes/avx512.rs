//! [`Lanes`] as AVX-512 vectors (x86-64; the standard library has the AVX-512 intrinsics from Rust
//! 1.89, the workspace's minimum; used where the CPU has AVX-512 F and DQ).

use super::{Lanes, MANTISSA, ONE, SHIFT52};

/// AVX-512 (F and DQ) vectors. A value of this type exists only where the CPU has those features
/// ([`Avx512::detect`]): that is what makes its intrinsic calls sound.
#[derive(Clone, Copy)]
pub(crate) struct Avx512(());

impl Avx512 {
    /// The token, if this CPU has AVX-512 F and DQ.
    pub(crate) fn detect() -> Option<Avx512> {
        (std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq"))
        .then_some(Avx512(()))
    }
}

/// Calls AVX-512 intrinsics from an `Avx512` method. SAFETY (every use): an `Avx512` value exists
/// only after `Avx512::detect` found AVX-512 F and DQ on this CPU, which are all the intrinsics
/// below need; the methods are inlined into the `#[target_feature]` kernels that use them. The
/// only memory the intrinsics touch is named at each pointer use.
macro_rules! avx {
    ($e:expr) => {{
        #[allow(unused_unsafe)]
        // SAFETY: see the macro's documentation.
        unsafe {
            $e
        }
    }};
}

impl Lanes for Avx512 {
    type V = std::arch::x86_64::__m512d;
    type M = u8;
    #[inline(always)]
    fn splat(self, x: f64) -> Self::V {
        avx!(std::arch::x86_64::_mm512_set1_pd(x))
    }
    #[inline(always)]
    fn load(self, s: &[f64]) -> Self::V {
        use std::arch::x86_64::*;
        let n = s.len().min(8);
        // The mask enables lanes 0..n only: the load reads s[..n] and nothing past it (masked-off
        // lanes do not fault).
        avx!(_mm512_maskz_loadu_pd(((1u16 << n) - 1) as u8, s.as_ptr()))
    }
    #[inline(always)]
    fn store(self, s: &mut [f64], v: Self::V) {
        use std::arch::x86_64::*;
        let n = s.len().min(8);
        // The mask writes s[..n] only.
        avx!(_mm512_mask_storeu_pd(
            s.as_mut_ptr(),
            ((1u16 << n) - 1) as u8,
            v
        ))
    }
    #[inline(always)]
    fn to_array(self, v: Self::V) -> [f64; 8] {
        let mut o = [0.0; 8];
        // Writes the 8 values of `o`.
        avx!(std::arch::x86_64::_mm512_storeu_pd(o.as_mut_ptr(), v));
        o
    }
    #[inline(always)]
    fn add(self, a: Self::V, b: Self::V) -> Self::V {
        avx!(std::arch::x86_64::_mm512_add_pd(a, b))
    }
    #[inline(always)]
    fn sub(self, a: Self::V, b: Self::V) -> Self::V {
        avx!(std::arch::x86_64::_mm512_sub_pd(a, b))
    }
    #[inline(always)]
    fn mul(self, a: Self::V, b: Self::V) -> Self::V {
        avx!(std::arch::x86_64::_mm512_mul_pd(a, b))
    }
    #[inline(always)]
    fn mul_add(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V {
        avx!(std::arch::x86_64::_mm512_fmadd_pd(a, b, c))
    }
    #[inline(always)]
    fn mul_add_where(self, m: u8, a: Self::V, b: Self::V, c: Self::V) -> Self::V {
        avx!(std::arch::x86_64::_mm512_mask3_fmadd_pd(a, b, c, m))
    }
    #[inline(always)]
    fn div(self, a: Self::V, b: Self::V) -> Self::V {
        avx!(std::arch::x86_64::_mm512_div_pd(a, b))
    }
    #[inline(always)]
    fn max(self, a: Self::V, b: Self::V) -> Self::V {
        // vmaxpd returns its second operand unless the first is greater.
        avx!(std::arch::x86_64::_mm512_max_pd(a, b))
    }
    #[inline(always)]
    fn lt(self, a: Self::V, b: Self::V) -> u8 {
        use std::arch::x86_64::*;
        avx!(_mm512_cmp_pd_mask::<_CMP_LT_OQ>(a, b))
    }
    #[inline(always)]
    fn ge(self, a: Self::V, b: Self::V) -> u8 {
        use std::arch::x86_64::*;
        avx!(_mm512_cmp_pd_mask::<_CMP_GE_OQ>(a, b))
    }
    #[inline(always)]
    fn ne(self, a: Self::V, b: Self::V) -> u8 {
        use std::arch::x86_64::*;
        avx!(_mm512_cmp_pd_mask::<_CMP_NEQ_UQ>(a, b))
    }
    #[inline(always)]
    fn first(self, n: usize) -> u8 {
        ((1u16 << n.min(8)) - 1) as u8
    }
    #[inline(always)]
    fn select(self, m: u8, a: Self::V, b: Self::V) -> Self::V {
        avx!(std::arch::x86_64::_mm512_mask_blend_pd(m, b, a))
    }
    #[inline(always)]
    fn all(self, m: u8) -> bool {
        m == u8::MAX
    }
    #[inline(always)]
    fn table64(self, t: Self::V, table: &[f64; 64]) -> Self::V {
        use std::arch::x86_64::*;
        let idx = avx!(_mm512_and_si512(
            _mm512_castpd_si512(t),
            _mm512_set1_epi64(63)
        ));
        // Every index is in 0..64 (masked above) and `table` has 64 values: the gather reads
        // inside the table only.
        avx!(_mm512_i64gather_pd::<8>(idx, table.as_ptr()))
    }
    #[inline(always)]
    fn scale_exponent(self, y: Self::V, t: Self::V) -> Self::V {
        use std::arch::x86_64::*;
        avx!(_mm512_castsi512_pd(_mm512_add_epi64(
            _mm512_castpd_si512(y),
            _mm512_slli_epi64::<52>(_mm512_srli_epi64::<6>(_mm512_castpd_si512(t)))
        )))
    }
    #[inline(always)]
    fn mantissa(self, x: Self::V) -> Self::V {
        use std::arch::x86_64::*;
        avx!(_mm512_castsi512_pd(_mm512_or_si512(
            _mm512_and_si512(_mm512_castpd_si512(x), _mm512_set1_epi64(MANTISSA as i64)),
            _mm512_set1_epi64(ONE as i64)
        )))
    }
    #[inline(always)]
    fn exponent_field(self, x: Self::V) -> Self::V {
        use std::arch::x86_64::*;
        avx!(_mm512_castsi512_pd(_mm512_or_si512(
            _mm512_srli_epi64::<52>(_mm512_castpd_si512(x)),
            _mm512_set1_epi64(SHIFT52.to_bits() as i64)
        )))
    }
    #[inline(always)]
    fn transpose(self, v: [Self::V; 8]) -> [Self::V; 8] {
        use std::arch::x86_64::*;
        // Three rounds of two-register shuffles (24 in all): pairs of lanes, then 128-bit and
        // 256-bit blocks.
        avx!({
            let t0 = _mm512_unpacklo_pd(v[0], v[1]);
            let t1 = _mm512_unpackhi_pd(v[0], v[1]);
            let t2 = _mm512_unpacklo_pd(v[2], v[3]);
            let t3 = _mm512_unpackhi_pd(v[2], v[3]);
            let t4 = _mm512_unpacklo_pd(v[4], v[5]);
            let t5 = _mm512_unpackhi_pd(v[4], v[5]);
            let t6 = _mm512_unpacklo_pd(v[6], v[7]);
            let t7 = _mm512_unpackhi_pd(v[6], v[7]);
            // 128-bit blocks 0 and 2 of a and b, then 1 and 3: (a0 a2 b0 b2), (a1 a3 b1 b3).
            let u0 = _mm512_shuffle_f64x2::<0b10_00_10_00>(t0, t2);
            let u1 = _mm512_shuffle_f64x2::<0b10_00_10_00>(t1, t3);
            let u2 = _mm512_shuffle_f64x2::<0b11_01_11_01>(t0, t2);
            let u3 = _mm512_shuffle_f64x2::<0b11_01_11_01>(t1, t3);
            let u4 = _mm512_shuffle_f64x2::<0b10_00_10_00>(t4, t6);
            let u5 = _mm512_shuffle_f64x2::<0b10_00_10_00>(t5, t7);
            let u6 = _mm512_shuffle_f64x2::<0b11_01_11_01>(t4, t6);
            let u7 = _mm512_shuffle_f64x2::<0b11_01_11_01>(t5, t7);
            [
                _mm512_shuffle_f64x2::<0b10_00_10_00>(u0, u4),
                _mm512_shuffle_f64x2::<0b10_00_10_00>(u1, u5),
                _mm512_shuffle_f64x2::<0b10_00_10_00>(u2, u6),
                _mm512_shuffle_f64x2::<0b10_00_10_00>(u3, u7),
                _mm512_shuffle_f64x2::<0b11_01_11_01>(u0, u4),
                _mm512_shuffle_f64x2::<0b11_01_11_01>(u1, u5),
                _mm512_shuffle_f64x2::<0b11_01_11_01>(u2, u6),
                _mm512_shuffle_f64x2::<0b11_01_11_01>(u3, u7),
            ]
        })
    }
}
