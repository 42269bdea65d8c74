//! The tile kernel against the row-major formulas, and the AVX-512 build against plain arrays.

use super::*;

fn noise(i: usize, salt: usize) -> f64 {
    ((i * 7919 + salt * 104_729) % 1000) as f64 / 1000.0 - 0.5
}

struct Case {
    us: Vec<Vec<f64>>,
    lens: Vec<usize>,
    thetas: Vec<Vec<f64>>,
    as_: Vec<Vec<f64>>,
}

fn case(rows: usize, k: usize, lens: &[usize]) -> Case {
    let us = lens
        .iter()
        .enumerate()
        .map(|(c, &len)| (0..rows * len).map(|i| 3.0 * noise(i, c + 1)).collect())
        .collect();
    let thetas = lens
        .iter()
        .enumerate()
        .map(|(c, &len)| (0..k * len).map(|i| 4.0 * noise(i, c + 11)).collect())
        .collect();
    let as_ = lens
        .iter()
        .enumerate()
        .map(|(c, _)| (0..k).map(|i| noise(i, c + 21)).collect())
        .collect();
    Case {
        us,
        lens: lens.to_vec(),
        thetas,
        as_,
    }
}

/// Each child's Θ as len × K (the case holds K × len).
fn thetas(c: &Case) -> Vec<Vec<f64>> {
    let k = c.as_[0].len();
    (0..c.lens.len())
        .map(|i| crate::linalg::transpose(&c.thetas[i], k, c.lens[i]))
        .collect()
}

fn children<'a>(c: &'a Case, thetas: &'a [Vec<f64>]) -> Vec<TileChild<'a>> {
    (0..c.lens.len())
        .map(|i| TileChild {
            u: &c.us[i],
            len: c.lens[i],
            theta: &thetas[i],
            a: &c.as_[i],
        })
        .collect()
}

type Out = (Vec<f64>, Vec<f64>, Vec<f64>, TileSums);

fn run(c: &Case, k: usize, rows: usize, avx: bool) -> Option<Out> {
    let (mut phi, mut u, mut a) = (vec![0.0; rows * k], vec![0.0; rows * k], vec![0.0; rows]);
    let th = thetas(c);
    let ch = children(c, &th);
    let t = if avx && has_avx512() {
        block(&ch, k, 0, Some(&mut phi), &mut u, &mut a)?
    } else {
        block_scalar(&ch, k, 0, Some(&mut phi), &mut u, &mut a)?
    };
    Some((phi, u, a, t))
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// The block equals the row-major formulas (scores, `special::softmax_rows`, the sums as plain
/// loops) to rounding, and the dispatched kernel (AVX-512 where the CPU has it) gives the plain
/// arrays' bits: several children, K from 1 to 16, runs from 1 to 16 moments, blocks that do
/// not fill their last tile of eight.
#[test]
fn tile_block_matches_the_row_formulas_and_every_target_gives_the_same_bits() {
    for (rows, k, lens) in [
        (512, 10, vec![6]),
        (13, 2, vec![1]),
        (7, 5, vec![2, 3]),
        (64, 16, vec![16]),
        (9, 1, vec![4]),
        (40, 9, vec![9, 1]),
        (100, 8, vec![8]),
    ] {
        let c = case(rows, k, &lens);
        let (phi, u, a, t) = run(&c, k, rows, false).expect("in the domain");
        let got = run(&c, k, rows, true).expect("in the domain");
        assert_eq!(
            (bits(&phi), bits(&u), bits(&a)),
            (bits(&got.0), bits(&got.1), bits(&got.2)),
            "k {k} lens {lens:?}"
        );
        assert_eq!(bits(&t.cols), bits(&got.3.cols));
        assert_eq!(
            (t.a.to_bits(), t.dot.to_bits()),
            (got.3.a.to_bits(), got.3.dot.to_bits())
        );
        for (s, g) in t.s.iter().zip(&got.3.s) {
            assert_eq!(bits(s), bits(g));
        }
        // The row formulas.
        let mut want_phi = vec![0.0; rows * k];
        for (ci, &len) in lens.iter().enumerate() {
            for r in 0..rows {
                for kk in 0..k {
                    let dot: f64 = (0..len)
                        .map(|j| c.us[ci][r * len + j] * c.thetas[ci][kk * len + j])
                        .sum();
                    want_phi[r * k + kk] += dot - c.as_[ci][kk];
                }
            }
        }
        let (mut want_u, mut want_a) = (vec![0.0; rows * k], vec![0.0; rows]);
        crate::special::softmax_rows(&want_phi, k, &mut want_u, &mut want_a).unwrap();
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * (1.0 + y.abs());
        for i in 0..rows * k {
            assert!(
                close(phi[i], want_phi[i]) && close(u[i], want_u[i]),
                "k {k} i {i}"
            );
        }
        for r in 0..rows {
            assert!(close(a[r], want_a[r]));
        }
        for kk in 0..k {
            let col: f64 = (0..rows).map(|r| want_u[r * k + kk]).sum();
            assert!(close(t.cols[kk], col));
            for (ci, &len) in lens.iter().enumerate() {
                for j in 0..len {
                    let s: f64 = (0..rows)
                        .map(|r| want_u[r * k + kk] * c.us[ci][r * len + j])
                        .sum();
                    assert!((t.s[ci][kk * len + j] - s).abs() <= 1e-10 * (1.0 + s.abs()));
                }
            }
        }
        let dot: f64 = want_phi.iter().zip(&want_u).map(|(p, u)| p * u).sum();
        assert!((t.dot - dot).abs() <= 1e-10 * (1.0 + dot.abs()));
        assert!((t.a - want_a.iter().sum::<f64>()).abs() <= 1e-10 * rows as f64);
    }
}

/// A row whose scores are NaN or +∞ is left to the general path (`None`), in either build;
/// a −∞ score (a component of probability 0) is in the domain and contributes 0 to φ·u.
#[test]
fn rows_outside_the_domain_are_left_to_the_general_path() {
    let (rows, k) = (20, 3);
    for bad in [f64::NAN, f64::INFINITY] {
        let mut c = case(rows, k, &[2]);
        c.us[0][2 * 11] = bad;
        assert!(run(&c, k, rows, false).is_none());
        assert!(run(&c, k, rows, true).is_none());
    }
    let mut c = case(rows, k, &[2]);
    c.as_[0][1] = f64::INFINITY;
    let (_, u, _, t) = run(&c, k, rows, true).expect("−∞ scores are allowed");
    assert!((0..rows).all(|r| u[r * k + 1] == 0.0));
    assert!(t.dot.is_finite());
    // More than 16 components or a run longer than 16: not handled here.
    for (k, len) in [(17, 2), (3, 17)] {
        let c = case(4, k, &[len]);
        let (mut phi, mut u, mut a) = (vec![0.0; 4 * k], vec![0.0; 4 * k], vec![0.0; 4]);
        let th = thetas(&c);
        assert!(block(&children(&c, &th), k, 0, Some(&mut phi), &mut u, &mut a).is_none());
    }
}

/// A block that starts at element `start` of the children's moments, with or without φ written,
/// gives the bits of the same rows run as a block of their own (the fused update's tiled path
/// keeps no φ, and reads each child's moments from its first element on).
#[test]
fn a_block_inside_the_moments_without_phi_gives_the_same_bits() {
    for avx in [false, true] {
        let (k, lens, start, rows) = (10, vec![6, 2], 24, 37);
        let whole = case(start + rows, k, &lens);
        let mut own = case(rows, k, &lens);
        for (ci, &len) in lens.iter().enumerate() {
            own.us[ci] = whole.us[ci][start * len..].to_vec();
        }
        own.thetas = whole.thetas.clone();
        own.as_ = whole.as_.clone();
        let (_, want_u, want_a, want) = run(&own, k, rows, avx).expect("in the domain");
        let (mut u, mut a) = (vec![0.0; rows * k], vec![0.0; rows]);
        let th = thetas(&whole);
        let ch = children(&whole, &th);
        let got = if avx && has_avx512() {
            block(&ch, k, start, None, &mut u, &mut a)
        } else {
            block_scalar(&ch, k, start, None, &mut u, &mut a)
        }
        .expect("in the domain");
        assert_eq!((bits(&u), bits(&a)), (bits(&want_u), bits(&want_a)));
        assert_eq!(bits(&got.cols), bits(&want.cols));
        assert_eq!(
            (got.a.to_bits(), got.dot.to_bits()),
            (want.a.to_bits(), want.dot.to_bits())
        );
        for (s, w) in got.s.iter().zip(&want.s) {
            assert_eq!(bits(s), bits(w));
        }
    }
}
