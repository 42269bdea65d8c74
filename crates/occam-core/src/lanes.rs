//! Eight f64 lanes as one value: the arithmetic of a kernel written once over [`Lanes`] and run
//! as AVX-512 vectors (`Avx512`, where the CPU has it) or as plain arrays (`Scalar`, the
//! reference the tests compare the vectors with, bit for bit).
//!
//! Every operation is one IEEE operation per lane (a fused multiply-add only where a kernel calls
//! [`Lanes::mul_add`], whose one rounding both implementations give; no reassociation), so a
//! kernel gives the same bits through either implementation; [`exp_nonpositive`] and
//! [`ln_positive`] here are [`crate::special`]'s functions of the same names written over lanes,
//! operation for operation, and give their bits too (tested).

use crate::special::EXP2_64;

/// Eight f64 lanes and the operations the kernels use on them.
pub(crate) trait Lanes: Copy {
    /// Eight f64 values.
    type V: Copy;
    /// Eight booleans.
    type M: Copy;
    /// Every lane x.
    fn splat(self, x: f64) -> Self::V;
    /// The first min(8, s.len()) values of s, 0 in the other lanes.
    fn load(self, s: &[f64]) -> Self::V;
    /// The first min(8, s.len()) lanes of v into s.
    fn store(self, s: &mut [f64], v: Self::V);
    /// The lanes as an array.
    fn to_array(self, v: Self::V) -> [f64; 8];
    /// a + b.
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    /// a − b.
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    /// a · b.
    fn mul(self, a: Self::V, b: Self::V) -> Self::V;
    /// a · b + c, rounded once (IEEE fused multiply-add).
    fn mul_add(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// a · b + c rounded once where m, else c (a masked fused multiply-add).
    fn mul_add_where(self, m: Self::M, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// a / b.
    fn div(self, a: Self::V, b: Self::V) -> Self::V;
    /// a if a > b, else b (so b when either is NaN: the x86 `max` instruction's rule).
    fn max(self, a: Self::V, b: Self::V) -> Self::V;
    /// a < b.
    fn lt(self, a: Self::V, b: Self::V) -> Self::M;
    /// a ≥ b (false for NaN).
    fn ge(self, a: Self::V, b: Self::V) -> Self::M;
    /// a ≠ b (true for NaN).
    fn ne(self, a: Self::V, b: Self::V) -> Self::M;
    /// Lanes 0..n true, the others false.
    fn first(self, n: usize) -> Self::M;
    /// a where m, else b.
    fn select(self, m: Self::M, a: Self::V, b: Self::V) -> Self::V;
    /// Whether every lane of m is true.
    fn all(self, m: Self::M) -> bool;
    /// table[bits(t) mod 64].
    fn table64(self, t: Self::V, table: &[f64; 64]) -> Self::V;
    /// y with (bits(t) >> 6) << 52 added to its bits (wrapping): y · 2^m for the m in bits 6.. of t.
    fn scale_exponent(self, y: Self::V, t: Self::V) -> Self::V;
    /// The float with x's mantissa bits and the exponent of 1 (a value in [1, 2)).
    fn mantissa(self, x: Self::V) -> Self::V;
    /// The float whose bits are those of 2⁵² with x's biased exponent in the low bits: 2⁵² + e.
    fn exponent_field(self, x: Self::V) -> Self::V;
    /// The 8 × 8 transpose: lane j of out\[i\] is lane i of v\[j\].
    fn transpose(self, v: [Self::V; 8]) -> [Self::V; 8];
}

/// Plain arrays: the reference the vector implementations are tested against (in the engine,
/// a machine without AVX-512 keeps the row-major kernels, which its own vector units run faster
/// than eight plain lanes: 175 against 42 ns per element for the fused block, measured on the
/// AVX-512 machine).
#[cfg(test)]
#[derive(Clone, Copy)]
pub(crate) struct Scalar;

#[cfg(test)]
fn map(a: [f64; 8], f: impl Fn(f64) -> f64) -> [f64; 8] {
    let mut o = [0.0; 8];
    for i in 0..8 {
        o[i] = f(a[i]);
    }
    o
}

#[cfg(test)]
fn zip(a: [f64; 8], b: [f64; 8], f: impl Fn(f64, f64) -> f64) -> [f64; 8] {
    let mut o = [0.0; 8];
    for i in 0..8 {
        o[i] = f(a[i], b[i]);
    }
    o
}

#[cfg(test)]
fn test(a: [f64; 8], b: [f64; 8], f: impl Fn(f64, f64) -> bool) -> [bool; 8] {
    let mut o = [false; 8];
    for i in 0..8 {
        o[i] = f(a[i], b[i]);
    }
    o
}

#[cfg(test)]
impl Lanes for Scalar {
    type V = [f64; 8];
    type M = [bool; 8];
    #[inline(always)]
    fn splat(self, x: f64) -> [f64; 8] {
        [x; 8]
    }
    #[inline(always)]
    fn load(self, s: &[f64]) -> [f64; 8] {
        let mut o = [0.0; 8];
        let n = s.len().min(8);
        o[..n].copy_from_slice(&s[..n]);
        o
    }
    #[inline(always)]
    fn store(self, s: &mut [f64], v: [f64; 8]) {
        let n = s.len().min(8);
        s[..n].copy_from_slice(&v[..n]);
    }
    #[inline(always)]
    fn to_array(self, v: [f64; 8]) -> [f64; 8] {
        v
    }
    #[inline(always)]
    fn add(self, a: [f64; 8], b: [f64; 8]) -> [f64; 8] {
        zip(a, b, |x, y| x + y)
    }
    #[inline(always)]
    fn sub(self, a: [f64; 8], b: [f64; 8]) -> [f64; 8] {
        zip(a, b, |x, y| x - y)
    }
    #[inline(always)]
    fn mul(self, a: [f64; 8], b: [f64; 8]) -> [f64; 8] {
        zip(a, b, |x, y| x * y)
    }
    #[inline(always)]
    fn mul_add(self, a: [f64; 8], b: [f64; 8], c: [f64; 8]) -> [f64; 8] {
        let mut o = [0.0; 8];
        for i in 0..8 {
            o[i] = a[i].mul_add(b[i], c[i]);
        }
        o
    }
    #[inline(always)]
    fn mul_add_where(self, m: [bool; 8], a: [f64; 8], b: [f64; 8], c: [f64; 8]) -> [f64; 8] {
        let mut o = c;
        for i in 0..8 {
            if m[i] {
                o[i] = a[i].mul_add(b[i], c[i]);
            }
        }
        o
    }
    #[inline(always)]
    fn div(self, a: [f64; 8], b: [f64; 8]) -> [f64; 8] {
        zip(a, b, |x, y| x / y)
    }
    #[inline(always)]
    fn max(self, a: [f64; 8], b: [f64; 8]) -> [f64; 8] {
        zip(a, b, |x, y| if x > y { x } else { y })
    }
    #[inline(always)]
    fn lt(self, a: [f64; 8], b: [f64; 8]) -> [bool; 8] {
        test(a, b, |x, y| x < y)
    }
    #[inline(always)]
    fn ge(self, a: [f64; 8], b: [f64; 8]) -> [bool; 8] {
        test(a, b, |x, y| x >= y)
    }
    #[inline(always)]
    fn ne(self, a: [f64; 8], b: [f64; 8]) -> [bool; 8] {
        test(a, b, |x, y| x != y)
    }
    #[inline(always)]
    fn first(self, n: usize) -> [bool; 8] {
        std::array::from_fn(|i| i < n)
    }
    #[inline(always)]
    fn select(self, m: [bool; 8], a: [f64; 8], b: [f64; 8]) -> [f64; 8] {
        std::array::from_fn(|i| if m[i] { a[i] } else { b[i] })
    }
    #[inline(always)]
    fn all(self, m: [bool; 8]) -> bool {
        m.iter().all(|&b| b)
    }
    #[inline(always)]
    fn table64(self, t: [f64; 8], table: &[f64; 64]) -> [f64; 8] {
        map(t, |x| table[(x.to_bits() & 63) as usize])
    }
    #[inline(always)]
    fn scale_exponent(self, y: [f64; 8], t: [f64; 8]) -> [f64; 8] {
        zip(y, t, |y, t| {
            f64::from_bits(y.to_bits().wrapping_add((t.to_bits() >> 6) << 52))
        })
    }
    #[inline(always)]
    fn mantissa(self, x: [f64; 8]) -> [f64; 8] {
        map(x, |x| f64::from_bits((x.to_bits() & MANTISSA) | ONE))
    }
    #[inline(always)]
    fn exponent_field(self, x: [f64; 8]) -> [f64; 8] {
        map(x, |x| {
            f64::from_bits(SHIFT52.to_bits() | (x.to_bits() >> 52))
        })
    }
    #[inline(always)]
    fn transpose(self, v: [[f64; 8]; 8]) -> [[f64; 8]; 8] {
        std::array::from_fn(|i| std::array::from_fn(|j| v[j][i]))
    }
}

const MANTISSA: u64 = 0x000f_ffff_ffff_ffff;
const ONE: u64 = 0x3ff0_0000_0000_0000;
const SHIFT52: f64 = 4_503_599_627_370_496.0;

#[cfg(target_arch = "x86_64")]
mod avx512;
pub(crate) mod softmax;
#[cfg(target_arch = "x86_64")]
pub(crate) use avx512::Avx512;

/// [`crate::special::exp_nonpositive`] on eight lanes: the same operations in the same order
/// (see there for the method), so the same bits.
#[inline(always)]
pub(crate) fn exp_nonpositive<L: Lanes>(l: L, x: L::V) -> L::V {
    const LN2_64_HI: f64 = 0.010_830_424_693_267_56;
    const LN2_64_LO: f64 = 2.981_585_826_985_293_3e-12;
    const INV_LN2_64: f64 = 92.332_482_616_893_66;
    const SHIFT: f64 = 6_755_399_441_055_744.0;
    let floor = l.splat(-700.0);
    let under = l.lt(x, floor);
    let x = l.select(under, floor, x);
    let t = l.add(l.mul(x, l.splat(INV_LN2_64)), l.splat(SHIFT));
    let i = l.sub(t, l.splat(SHIFT));
    let r = l.sub(
        l.sub(x, l.mul(i, l.splat(LN2_64_HI))),
        l.mul(i, l.splat(LN2_64_LO)),
    );
    let table = l.table64(t, &EXP2_64);
    let r2 = l.mul(r, r);
    let c = |v| l.splat(v);
    let q = l.add(
        r,
        l.mul(
            r2,
            l.add(
                l.add(c(0.5), l.mul(r, c(1.0 / 6.0))),
                l.mul(r2, l.add(c(1.0 / 24.0), l.mul(r, c(1.0 / 120.0)))),
            ),
        ),
    );
    let scaled = l.add(table, l.mul(table, q));
    let y = l.scale_exponent(scaled, t);
    l.select(under, l.splat(0.0), y)
}

/// [`crate::special::ln_positive`] on eight lanes: the same operations in the same order (see
/// there for the method and its domain), so the same bits.
#[inline(always)]
pub(crate) fn ln_positive<L: Lanes>(l: L, x: L::V) -> L::V {
    const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    let c = |v| l.splat(v);
    let m = l.mantissa(x);
    let e = l.sub(l.exponent_field(x), c(SHIFT52 + 1023.0));
    let big = l.lt(c(std::f64::consts::SQRT_2), m);
    let m = l.select(big, l.mul(m, c(0.5)), m);
    let e = l.select(big, l.add(e, c(1.0)), e);
    let f = l.sub(m, c(1.0));
    let s = l.div(f, l.add(c(2.0), f));
    let z = l.mul(s, s);
    let mut p = c(2.0 / 21.0);
    for i in (1..10).rev() {
        p = l.add(l.mul(p, z), c(2.0 / (2 * i + 1) as f64));
    }
    let r = l.mul(z, p);
    let hfsq = l.mul(l.mul(c(0.5), f), f);
    l.sub(
        l.mul(e, c(LN2_HI)),
        l.sub(
            l.sub(hfsq, l.add(l.mul(s, l.add(hfsq, r)), l.mul(e, c(LN2_LO)))),
            f,
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> Vec<f64> {
        let mut v: Vec<f64> = (0..4000)
            .map(|i| -710.0 * (i as f64 / 3999.0).powi(3))
            .collect();
        v.extend([
            0.0,
            -0.0,
            -1e-300,
            -700.0,
            -700.0000001,
            -800.0,
            f64::NEG_INFINITY,
        ]);
        v.extend((0..64).map(|j| -(j as f64) * std::f64::consts::LN_2 / 64.0));
        v
    }

    /// Runs `f` over `xs` eight at a time with lanes `l` (the last group padded with `pad`).
    fn per_lanes<L: Lanes>(l: L, xs: &[f64], pad: f64, f: impl Fn(L, L::V) -> L::V) -> Vec<f64> {
        xs.chunks(8)
            .flat_map(|c| {
                let mut x = [pad; 8];
                x[..c.len()].copy_from_slice(c);
                l.to_array(f(l, l.load(&x)))[..c.len()].to_vec()
            })
            .collect()
    }

    fn bits(v: &[f64]) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    /// The lanes exp and ln give `special`'s bits, with plain arrays and (where the CPU has it)
    /// AVX-512.
    #[test]
    fn lanes_exp_and_ln_give_the_scalar_bits() {
        let xs = values();
        let want: Vec<f64> = xs
            .iter()
            .map(|&x| crate::special::exp_nonpositive(x))
            .collect();
        assert_eq!(
            bits(&per_lanes(Scalar, &xs, 0.0, exp_nonpositive)),
            bits(&want)
        );
        let pos: Vec<f64> = (0..3000)
            .map(|i| 1.0 + 15.0 * i as f64 / 2999.0)
            .chain([1.0, std::f64::consts::SQRT_2, 2.0, 1e-300, 1e300, 0.75])
            .collect();
        let want_ln: Vec<f64> = pos
            .iter()
            .map(|&x| crate::special::ln_positive(x))
            .collect();
        assert_eq!(
            bits(&per_lanes(Scalar, &pos, 1.0, ln_positive)),
            bits(&want_ln)
        );
        avx512_gives_the_same_bits(&xs, &want, &pos, &want_ln);
    }

    #[cfg(target_arch = "x86_64")]
    fn avx512_gives_the_same_bits(xs: &[f64], want: &[f64], pos: &[f64], want_ln: &[f64]) {
        if let Some(l) = Avx512::detect() {
            assert_eq!(bits(&per_lanes(l, xs, 0.0, exp_nonpositive)), bits(want));
            assert_eq!(bits(&per_lanes(l, pos, 1.0, ln_positive)), bits(want_ln));
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn avx512_gives_the_same_bits(_: &[f64], _: &[f64], _: &[f64], _: &[f64]) {}

    /// Transposes, partial loads and stores, selects and masks agree between the two lane types.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn avx512_lanes_match_plain_arrays() {
        if let Some(l) = Avx512::detect() {
            let rows: Vec<[f64; 8]> = (0..8)
                .map(|i| std::array::from_fn(|j| (8 * i + j) as f64))
                .collect();
            let s: [[f64; 8]; 8] = rows.clone().try_into().unwrap();
            let v: [_; 8] = std::array::from_fn(|i| l.load(&rows[i]));
            let t = l.transpose(v);
            let want = Scalar.transpose(s);
            for i in 0..8 {
                assert_eq!(l.to_array(t[i]), want[i]);
                assert_eq!(want[i][3], s[3][i]);
            }
            for n in 0..=8 {
                assert_eq!(
                    l.to_array(l.load(&rows[1][..n])),
                    Scalar.load(&rows[1][..n])
                );
                let (mut a, mut b) = ([-1.0; 8], [-1.0; 8]);
                l.store(&mut a[..n], v[2]);
                Scalar.store(&mut b[..n], s[2]);
                assert_eq!(a, b);
                let (x, y) = (l.load(&rows[0]), l.splat(3.5));
                let got = l.to_array(l.select(l.first(n), x, y));
                let want = Scalar.select(Scalar.first(n), rows[0], [3.5; 8]);
                assert_eq!(got, want);
            }
            let (x, y) = ([1.0, -0.0, 0.0, f64::NAN, 2.0, -1.0, 5.0, 0.0], [0.0; 8]);
            let (lx, ly) = (l.load(&x), l.load(&y));
            assert_eq!(bits(&l.to_array(l.max(lx, ly))), bits(&Scalar.max(x, y)));
            assert_eq!(l.all(l.ne(lx, ly)), Scalar.all(Scalar.ne(x, y)));
            assert_eq!(l.all(l.ge(lx, ly)), Scalar.all(Scalar.ge(x, y)));
            assert!(l.all(l.ge(l.splat(1.0), l.splat(1.0))));
            // One rounding: (1 + 2⁻⁵²)(1 − 2⁻⁵²) − 1 = −2⁻¹⁰⁴, where a rounded product gives 0.
            let e = f64::EPSILON;
            let (a, b, c) = ([1.0 + e; 8], [1.0 - e; 8], [-1.0; 8]);
            let fused = l.to_array(l.mul_add(l.load(&a), l.load(&b), l.load(&c)));
            assert_eq!(bits(&fused), bits(&Scalar.mul_add(a, b, c)));
            assert_eq!(fused[0], -e * e);
            // Masked: the fused value where the mask is set, c elsewhere (also where a · b is
            // NaN).
            let mut a = a;
            a[5] = f64::NAN;
            let m = [true, false, true, true, false, false, true, false];
            let mask = (0..8).filter(|&i| m[i]).fold(0u8, |b, i| b | 1 << i);
            let got = l.to_array(l.mul_add_where(mask, l.load(&a), l.load(&b), l.load(&c)));
            let want = Scalar.mul_add_where(m, a, b, c);
            assert_eq!(bits(&got), bits(&want));
            assert_eq!((want[0], want[1], want[5]), (-e * e, -1.0, -1.0));
        }
    }
}
