use super::*;

#[test]
fn erfcx_is_continuous_and_matches_erfc() {
    for &z in &[-2.0f64, -0.3, 0.0, 1.0, 2.9] {
        let e = (z * z).exp() * statrs::function::erf::erfc(z);
        assert!((erfcx(z) - e).abs() < 1e-9 * e.max(1.0));
    }
    // Reference values from mpmath at 30 digits.
    for &(z, v) in &[
        (2.9, 0.184_601_825_955_590_82),
        (3.0, 0.179_001_151_181_389_95),
        (5.0, 0.110_704_637_733_068_63),
        (-0.3, 1.453_749_232_842_765_6),
    ] {
        assert!(
            (erfcx(z) - v).abs() < 1e-14 * v,
            "erfcx({z}) = {} vs {v}",
            erfcx(z)
        );
    }
    let below = erfcx(5.0 - 1e-12);
    let above = erfcx(5.0);
    assert!((below - above).abs() < 1e-13);
    // Asymptotic series 1/(z√π) (1 − 1/(2z²) + 3/(4z⁴) − 15/(8z⁶) + 105/(16z⁸)), error ~1e-16 at z = 50.
    let z = 50.0f64;
    let asym = 1.0 / (z * std::f64::consts::PI.sqrt())
        * (1.0 - 0.5 / (z * z) + 0.75 / z.powi(4) - 15.0 / (8.0 * z.powi(6))
            + 105.0 / (16.0 * z.powi(8)));
    assert!((erfcx(z) - asym).abs() < 1e-12 * asym);
}

#[test]
fn fast_exp_is_within_one_ulp() {
    assert_eq!(exp_nonpositive(-800.0), 0.0);
    assert_eq!(exp_nonpositive(f64::NEG_INFINITY), 0.0);
    assert_eq!(exp_nonpositive(0.0), 1.0);
    assert_eq!(exp_nonpositive(-0.0), 1.0);
    // A fine grid over [−700, 0], every table entry's neighbourhood ((64m + j) ln2/64 ± the
    // reduction's edges) and the small arguments where e^x → 1.
    let mut worst = 0;
    let mut check = |x: f64| {
        let (f, e) = (exp_nonpositive(x), x.exp());
        let d = ulps(f, e);
        assert!(d <= 1, "exp({x:e}): {f:e} vs {e:e}, {d} ulp");
        worst = worst.max(d);
    };
    let mut x = -700.0;
    while x <= 0.0 {
        check(x);
        x += 0.000_713_7;
    }
    let step = std::f64::consts::LN_2 / 64.0;
    for i in 0..64 * 1010 {
        let c = -(i as f64) * step;
        for dx in [-0.5 * step, -1e-9, 0.0, 1e-9, 0.5 * step] {
            if (-700.0..=0.0).contains(&(c + dx)) {
                check(c + dx);
            }
        }
    }
    for i in 1..20_000 {
        check(-(i as f64) * 1e-12);
        check(-(i as f64) * 3.7e-6);
    }
    check(-700.0);
    eprintln!("exp_nonpositive: at most {worst} ulp from f64::exp");
}

/// The table holds 2^{j/64} correctly rounded: within half an ulp of a value found
/// independently (2^{j/64} by `f64::exp2`, itself within an ulp, and its neighbours).
#[test]
fn exp_table_is_two_to_the_j_over_64() {
    for (j, t) in EXP2_64.iter().enumerate() {
        assert!(ulps(*t, (j as f64 / 64.0).exp2()) <= 1, "entry {j}");
        // Squaring six times gives 2^j to about 64 · 2⁻⁵³ relative.
        let mut v = *t;
        for _ in 0..6 {
            v *= v;
        }
        let want = 2f64.powi(j as i32);
        assert!((v - want).abs() <= 1e-13 * want, "entry {j}: {v} vs {want}");
    }
}

/// Distance in units in the last place between two positive finite doubles.
fn ulps(a: f64, b: f64) -> u64 {
    a.to_bits().abs_diff(b.to_bits())
}

#[test]
fn fast_ln_is_within_two_ulp() {
    // Every binade from 2⁻¹⁰²² to 2¹⁰²³ at 97 points, plus a fine grid around 1 (where ln x → 0
    // and the relative error is hardest to keep) and the values a softmax sum takes, [1, 64].
    let mut worst = 0;
    let mut check = |x: f64| {
        let (f, e) = (ln_positive(x), x.ln());
        let d = if e == 0.0 {
            u64::from(f != 0.0)
        } else if (f > 0.0) == (e > 0.0) {
            ulps(f.abs(), e.abs())
        } else {
            u64::MAX
        };
        assert!(d <= 2, "ln({x:e}): {f:e} vs {e:e}, {d} ulp");
        worst = worst.max(d);
    };
    for b in -1022..1024 {
        for i in 0..97 {
            check(2f64.powi(b) * (1.0 + i as f64 / 97.0));
        }
    }
    for i in 1..20_000 {
        check(1.0 + (i as f64 - 10_000.0) * 1.3e-5);
        check(1.0 + i as f64 * 3.15e-3);
    }
    for x in [
        f64::MIN_POSITIVE,
        f64::MAX,
        1.0,
        2.0,
        0.5,
        std::f64::consts::SQRT_2,
    ] {
        check(x);
    }
    assert_eq!(ln_positive(1.0), 0.0);
    eprintln!("ln_positive: at most {worst} ulp from f64::ln");
}

#[test]
fn softmax_rows_matches_one_row_at_a_time() {
    // Row lengths with a compile-time path (1..=16) and without (17, 25), 67 rows (a group of
    // 64 and a partial one).
    for k in [1, 2, 3, 5, 7, 8, 10, 16, 17, 25] {
        softmax_rows_of_length(k, 67);
    }
}

fn softmax_rows_of_length(k: usize, rows: usize) {
    let mut phi: Vec<f64> = (0..k * rows)
        .map(|i| ((i * 7919) % 1000) as f64 * 0.9 - 450.0)
        .collect();
    if k > 1 {
        phi[k + 1] = f64::NEG_INFINITY;
    }
    let mut u = vec![0.0; phi.len()];
    let mut a = vec![0.0; rows];
    softmax_rows(&phi, k, &mut u, &mut a).unwrap();
    for (r, row) in phi.chunks(k).enumerate() {
        let lse = log_sum_exp(row);
        let max = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        assert!((a[r] - lse).abs() <= 1e-14 * lse.abs().max(1.0), "k {k}");
        for (j, p) in row.iter().enumerate() {
            let want = (p - lse).exp();
            let got = u[r * k + j];
            if p - max < -700.0 {
                // e^{φ − m} below e^{−700} is 0 by design.
                assert_eq!(got, 0.0, "k {k}");
            } else {
                assert!((got - want).abs() <= 1e-14 * want, "k {k}: {got} vs {want}");
            }
        }
    }
    // The rows' maxima and e^{φ − m}: exp_minus_row_max gives the same bits as softmax's first
    // step, row for row (the maximum is exact, the exps elementwise).
    let (mut e, mut m) = (vec![0.0; phi.len()], vec![0.0; rows]);
    exp_minus_row_max(&phi, k, &mut e, &mut m).unwrap();
    for (r, row) in phi.chunks(k).enumerate() {
        let want = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(m[r], want, "k {k}");
        for (j, p) in row.iter().enumerate() {
            assert_eq!(e[r * k + j], exp_nonpositive(p - want), "k {k}");
        }
    }
    phi[k * 5 + k / 2] = f64::NAN;
    assert_eq!(softmax_rows(&phi, k, &mut u, &mut a), Err(5));
    phi[k * 5 + k / 2] = f64::INFINITY;
    assert_eq!(softmax_rows(&phi, k, &mut u, &mut a), Err(5));
    let all_minus_inf = vec![f64::NEG_INFINITY; k];
    assert_eq!(
        softmax_rows(&all_minus_inf, k, &mut u[..k], &mut a[..1]),
        Err(0)
    );
}

/// The dispatched softmax (AVX-512 or AVX2 where the machine has them) gives the bits of the same
/// code compiled for the baseline target (this test's own copy, inlined here). (It tests vector code
/// in an optimised build, `cargo test --release`; unoptimised, neither copy is vectorised.) Rows of
/// 17 to 64 values take the AVX-512 lanes where the CPU has them: the same bits too.
#[test]
fn softmax_gives_the_same_bits_on_every_target() {
    for (k, rows) in [
        (10, 512),
        (2, 130),
        (16, 77),
        (25, 40),
        (1, 9),
        (40, 203),
        (64, 16),
    ] {
        let mut phi: Vec<f64> = (0..k * rows)
            .map(|i| ((i * 7919) % 1000) as f64 * 0.9 - 450.0)
            .collect();
        if k > 1 {
            phi[k + 1] = f64::NEG_INFINITY;
        }
        let (mut u1, mut u2) = (vec![0.0; k * rows], vec![0.0; k * rows]);
        let (mut a1, mut a2) = (vec![0.0; rows], vec![0.0; rows]);
        softmax_rows(&phi, k, &mut u1, &mut a1).unwrap();
        with_row_length!(k, softmax_fixed(&phi, k, &mut u2, &mut a2)).unwrap();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&u1), bits(&u2), "k {k}");
        assert_eq!(bits(&a1), bits(&a2), "k {k}");
    }
}

#[test]
fn multigamma_reduces_to_gamma() {
    assert!((ln_multigamma(3.7, 1) - ln_gamma(3.7)).abs() < 1e-14);
    let h = 1e-6;
    let fd = (ln_multigamma(4.0 + h, 3) - ln_multigamma(4.0 - h, 3)) / (2.0 * h);
    assert!((fd - multi_digamma(4.0, 3)).abs() < 1e-7);
}

/// The chained ln Γ_d and Σψ equal the term-by-term sums (every term evaluated by series), from
/// just above the domain's edge (a = (d − 1)/2 + 1e-3, where the smallest argument is 1e-3 and its
/// terms are largest) to far above it, for every d up to 12.
#[test]
fn multigamma_chain_equals_term_by_term_sums() {
    for d in 1..=12 {
        for extra in [1e-3, 0.01, 0.3, 0.5, 1.0, 2.75, 10.0, 137.5, 1e4, 1e7] {
            let a = (d as f64 - 1.0) / 2.0 + extra;
            let (g, p) = ln_multigamma_and_digamma(a, d);
            let args = (1..=d).map(|i| a + (1.0 - i as f64) / 2.0);
            let g0 = (d * (d - 1)) as f64 / 4.0 * std::f64::consts::PI.ln()
                + args.clone().map(ln_gamma).sum::<f64>();
            let p0: f64 = args.map(digamma).sum();
            let scale = |x: f64| x.abs().max(1.0);
            assert!(
                (g - g0).abs() <= 1e-13 * scale(g0),
                "ln Γ_{d}({a}): {g} vs {g0}"
            );
            assert!(
                (p - p0).abs() <= 1e-13 * scale(p0),
                "Σψ_{d}({a}): {p} vs {p0}"
            );
        }
    }
}

/// The chains with one logarithm of a product agree with the chains taken one logarithm per step
/// (the previous form, kept here as the reference) to 1e-14 relative, over d up to 16 and a from
/// just above the domain's edge to 1e200 (where the product would overflow and the logarithms are
/// taken per step).
#[test]
fn multigamma_one_logarithm_equals_one_per_step() {
    fn per_step(a: f64, d: usize) -> (f64, f64) {
        let mut ln_g = (d * d.saturating_sub(1)) as f64 / 4.0 * std::f64::consts::PI.ln();
        let mut psi = 0.0;
        let mut last = [(0.0, 0.0); 2];
        for i in 0..d {
            let x = a - 0.5 * i as f64;
            let (g, p) = if i < 2 {
                (ln_gamma(x), digamma(x))
            } else {
                let (g1, p1) = last[i % 2];
                (g1 - x.ln(), p1 - 1.0 / x)
            };
            last[i % 2] = (g, p);
            ln_g += g;
            psi += p;
        }
        (ln_g, psi)
    }
    let mut worst: f64 = 0.0;
    for d in 1..=16 {
        for extra in [
            1e-3, 0.01, 0.3, 0.5, 0.77, 1.0, 2.75, 7.3, 10.0, 44.4, 137.5, 1e3, 1e4, 1e7, 1e30,
            1e200,
        ] {
            let a = (d as f64 - 1.0) / 2.0 + extra;
            let (g, p) = ln_multigamma_and_digamma(a, d);
            let (g0, p0) = per_step(a, d);
            let rel = |x: f64, y: f64| (x - y).abs() / y.abs().max(1.0);
            worst = worst.max(rel(g, g0)).max(rel(p, p0));
            assert!(rel(g, g0) <= 1e-14, "ln Γ_{d}({a}): {g} vs {g0}");
            assert!(rel(p, p0) <= 1e-14, "Σψ_{d}({a}): {p} vs {p0}");
        }
    }
    eprintln!("ln_multigamma_and_digamma: at most {worst:e} relative from the per-step chains");
}
