//! The data of a linear regression, reduced once to what every evidence computation needs: the
//! Gram matrix XᵀX, Xᵀy and an exact way to evaluate the residual sum of squares ‖y − Xw‖² for
//! any w without another pass over the N rows.
//!
//! The residual is taken about a reference w₀ (a near least-squares solution), with
//! r₀ = y − Xw₀ and g₀ = Xᵀr₀ computed once: from yᵀy, Xᵀy and XᵀX when ‖r₀‖² is at least
//! [`EXACT_PASS_BELOW`] of yᵀy (little cancellation), else by a second pass over the rows:
//!
//! ‖y − Xw‖² = ‖r₀‖² − 2 (w − w₀)ᵀ g₀ + (w − w₀)ᵀ XᵀX (w − w₀),
//!
//! an identity for every w. All three terms are small when w is near w₀, so the value keeps its
//! relative accuracy even for a near-exact fit, where the textbook yᵀy − 2wᵀXᵀy + wᵀXᵀXw cancels
//! to noise.

use faer::linalg::matmul::matmul;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::linalg::solvers::Solve;
use faer::{Accum, Mat, MatRef, Par, Side};
use rayon::prelude::*;

use crate::error::{Error, Result};

/// A regression design X (N × D, rows are observations) with targets y, centred or not.
#[derive(Debug, Clone)]
pub struct Design {
    n: usize,
    d: usize,
    x_offset: Vec<f64>,
    y_offset: f64,
    y_var: f64,
    gram: Mat<f64>,
    xty: Vec<f64>,
    w0: Vec<f64>,
    rss0: f64,
    g0: Vec<f64>,
}

fn located(name: &str, values: &[f64], cols: usize) -> Result<()> {
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(Error::Data {
            file: format!("<array {name}>"),
            row: i / cols.max(1) + 1,
            column: i % cols.max(1) + 1,
            message: format!("{} is not a finite number", values[i]),
        });
    }
    Ok(())
}

impl Design {
    /// Reads X (row-major, `n` rows of `d` values) and y (`n` values). With `centre`, the column
    /// means of X and the mean of y are subtracted first (an intercept that is not a random
    /// variable, as scikit-learn's `fit_intercept`); the offsets are kept for predictions.
    /// The passes over the rows run on rayon's pool in blocks of [`BLOCK`] rows whose sums
    /// are added in a fixed order, so the result does not depend on the number of threads.
    pub fn new(x: &[f64], n: usize, d: usize, y: &[f64], centre: bool) -> Result<Design> {
        if n == 0 || d == 0 {
            return Err(Error::DataFile {
                file: "<array X>".into(),
                message: format!(
                    "a regression needs at least one row and one column, got {n} × {d}"
                ),
            });
        }
        if x.len() != n * d {
            return Err(Error::DataFile {
                file: "<array X>".into(),
                message: format!("{} values do not make {n} rows of {d}", x.len()),
            });
        }
        if y.len() != n {
            return Err(Error::DataFile {
                file: "<array y>".into(),
                message: format!("X has {n} rows but y has {} values", y.len()),
            });
        }
        located("X", x, d)?;
        located("y", y, 1)?;
        let y_mean = y.iter().sum::<f64>() / n as f64;
        let y_var = y.iter().map(|v| (v - y_mean).powi(2)).sum::<f64>() / n as f64;
        let (x_offset, y_offset) = if centre {
            let mut m = vec![0.0; d];
            for row in x.chunks_exact(d) {
                for (a, v) in m.iter_mut().zip(row) {
                    *a += v;
                }
            }
            m.iter_mut().for_each(|a| *a /= n as f64);
            (m, y_mean)
        } else {
            (vec![0.0; d], 0.0)
        };
        let yc = |i: usize| y[i] - y_offset;
        // Pass 1: XᵀX and Xᵀy, per fixed block of rows (centred into a scratch block), the
        // blocks' sums added in block order: the same numbers on any number of threads.
        let parts: Vec<(Mat<f64>, Vec<f64>)> = blocks(n)
            .into_par_iter()
            .map(|(lo, hi)| {
                let xb = centred_block(x, d, lo, hi, &x_offset);
                let xs = MatRef::from_row_major_slice(&xb, hi - lo, d);
                // The lower triangle of X_bᵀX_b only (half the products of a full GEMM).
                let mut g = Mat::<f64>::zeros(d, d);
                triangular::matmul(
                    g.as_mut(),
                    BlockStructure::TriangularLower,
                    Accum::Replace,
                    xs.transpose(),
                    BlockStructure::Rectangular,
                    xs,
                    BlockStructure::Rectangular,
                    1.0,
                    Par::Seq,
                );
                let t: Vec<f64> = (lo..hi).map(yc).collect();
                (g, tr_mul(xs, &t))
            })
            .collect();
        let mut gram = Mat::<f64>::zeros(d, d);
        let mut xty = vec![0.0; d];
        for (g, t) in &parts {
            gram += g;
            xty.iter_mut().zip(t).for_each(|(a, b)| *a += b);
        }
        // The upper triangle from the lower: exactly symmetric.
        for i in 0..d {
            for j in 0..i {
                gram[(j, i)] = gram[(i, j)];
            }
        }
        // w₀ solves (XᵀX + δI) w₀ = Xᵀy with δ a relative 1e-10 of the mean diagonal: the
        // least-squares solution up to rounding when XᵀX is regular, a finite one when not.
        let scale = (0..d).map(|i| gram[(i, i)]).sum::<f64>() / d as f64;
        let mut reg = gram.clone();
        let delta = 1e-10 * scale.max(f64::MIN_POSITIVE);
        for i in 0..d {
            reg[(i, i)] += delta;
        }
        let w0: Vec<f64> = match reg.llt(Side::Lower) {
            Ok(llt) => {
                let mut b = Mat::from_fn(d, 1, |i, _| xty[i]);
                llt.solve_in_place(b.as_mut());
                (0..d).map(|i| b[(i, 0)]).collect()
            }
            Err(_) => vec![0.0; d],
        };
        // ‖r₀‖² and g₀ from the sums already formed (yᵀy − 2w₀ᵀXᵀy + w₀ᵀXᵀXw₀ and
        // Xᵀy − XᵀXw₀) when that cancels little: a residual of at least EXACT_PASS_BELOW of yᵀy
        // keeps ~1e-10 relative accuracy. A closer fit takes pass 2 over the rows.
        let yty: f64 = (0..n).map(|i| yc(i) * yc(i)).sum();
        let gw0: Vec<f64> = (0..d)
            .map(|i| (0..d).map(|j| gram[(i, j)] * w0[j]).sum())
            .collect();
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(u, v)| u * v).sum::<f64>();
        let rss_sums = yty - 2.0 * dot(&w0, &xty) + dot(&w0, &gw0);
        let (rss0, g0) = if rss_sums > EXACT_PASS_BELOW * yty {
            let g0 = xty.iter().zip(&gw0).map(|(a, b)| a - b).collect();
            (rss_sums, g0)
        } else {
            exact_residual(x, d, n, &x_offset, &yc, &w0)
        };
        Ok(Design {
            n,
            d,
            x_offset,
            y_offset,
            y_var,
            gram,
            xty,
            w0,
            rss0,
            g0,
        })
    }

    /// The number of rows N.
    pub fn rows(&self) -> usize {
        self.n
    }

    /// The number of inputs D.
    pub fn inputs(&self) -> usize {
        self.d
    }

    /// The column means subtracted from X (zeros without centring).
    pub fn x_offset(&self) -> &[f64] {
        &self.x_offset
    }

    /// The mean subtracted from y (0 without centring).
    pub fn y_offset(&self) -> f64 {
        self.y_offset
    }

    /// The variance of y (divided by N).
    pub fn y_var(&self) -> f64 {
        self.y_var
    }

    /// XᵀX of the (centred) design, D × D.
    pub fn gram(&self) -> MatRef<'_, f64> {
        self.gram.as_ref()
    }

    /// Xᵀy of the (centred) design.
    pub fn xty(&self) -> &[f64] {
        &self.xty
    }

    /// ‖y − Xw‖² of the (centred) design, by the identity of the module doc.
    pub fn sse(&self, w: &[f64]) -> f64 {
        let dw: Vec<f64> = w.iter().zip(&self.w0).map(|(a, b)| a - b).collect();
        let mut quad = 0.0;
        for j in 0..self.d {
            let col = self.gram.col(j);
            let s: f64 = dw.iter().zip(col.iter()).map(|(a, b)| a * b).sum();
            quad += dw[j] * s;
        }
        let cross: f64 = dw.iter().zip(&self.g0).map(|(a, b)| a * b).sum();
        (self.rss0 - 2.0 * cross + quad).max(0.0)
    }
}

/// Below this share of yᵀy, the residual at w₀ is summed over the rows (pass 2) rather than
/// taken from XᵀX and Xᵀy.
pub const EXACT_PASS_BELOW: f64 = 1e-4;

/// Pass 2: r₀ = y − Xw₀ over the rows, blocked as pass 1; returns ‖r₀‖² and g₀ = Xᵀr₀.
fn exact_residual(
    x: &[f64],
    d: usize,
    n: usize,
    x_offset: &[f64],
    yc: &(dyn Fn(usize) -> f64 + Sync),
    w0: &[f64],
) -> (f64, Vec<f64>) {
    let parts: Vec<(f64, Vec<f64>)> = blocks(n)
        .into_par_iter()
        .map(|(lo, hi)| {
            let xb = centred_block(x, d, lo, hi, x_offset);
            let xs = MatRef::from_row_major_slice(&xb, hi - lo, d);
            // r = y_c − X_c w₀ for the block, one matrix-vector product (faer).
            let mut r = Mat::from_fn(hi - lo, 1, |i, _| yc(lo + i));
            matmul(
                r.as_mut(),
                Accum::Add,
                xs,
                MatRef::from_column_major_slice(w0, d, 1),
                -1.0,
                Par::Seq,
            );
            let r: Vec<f64> = (0..hi - lo).map(|i| r[(i, 0)]).collect();
            (r.iter().map(|v| v * v).sum::<f64>(), tr_mul(xs, &r))
        })
        .collect();
    let mut rss0 = 0.0;
    let mut g0 = vec![0.0; d];
    for (r, g) in &parts {
        rss0 += r;
        g0.iter_mut().zip(g).for_each(|(a, b)| *a += b);
    }
    (rss0, g0)
}

/// Rows per block of the passes over the data.
pub const BLOCK: usize = 2048;

fn blocks(n: usize) -> Vec<(usize, usize)> {
    (0..n.div_ceil(BLOCK))
        .map(|b| (b * BLOCK, ((b + 1) * BLOCK).min(n)))
        .collect()
}

/// Rows `lo..hi` of X less the offsets, row-major.
fn centred_block(x: &[f64], d: usize, lo: usize, hi: usize, offset: &[f64]) -> Vec<f64> {
    let mut b = x[lo * d..hi * d].to_vec();
    if offset.iter().any(|&o| o != 0.0) {
        for row in b.chunks_exact_mut(d) {
            row.iter_mut().zip(offset).for_each(|(v, o)| *v -= o);
        }
    }
    b
}

/// Aᵀv for an N × D matrix A.
fn tr_mul(a: MatRef<'_, f64>, v: &[f64]) -> Vec<f64> {
    let mut out = Mat::<f64>::zeros(a.ncols(), 1);
    matmul(
        out.as_mut(),
        Accum::Replace,
        a.transpose(),
        MatRef::from_column_major_slice(v, v.len(), 1),
        1.0,
        Par::Seq,
    );
    (0..a.ncols()).map(|i| out[(i, 0)]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> (Vec<f64>, Vec<f64>) {
        // 7 rows, 3 columns, a fixed pseudo-random pattern.
        let x: Vec<f64> = (0..21)
            .map(|i| ((i * 37 % 11) as f64 - 5.0) / 3.0 + 10.0)
            .collect();
        let y: Vec<f64> = (0..7).map(|i| (i as f64 * 0.7).sin() + 2.0).collect();
        (x, y)
    }

    fn direct_sse(x: &[f64], y: &[f64], d: usize, off: &[f64], yo: f64, w: &[f64]) -> f64 {
        x.chunks(d)
            .zip(y)
            .map(|(r, t)| {
                let p: f64 = r
                    .iter()
                    .zip(off)
                    .zip(w)
                    .map(|((a, o), b)| (a - o) * b)
                    .sum();
                (t - yo - p).powi(2)
            })
            .sum()
    }

    #[test]
    fn sse_identity_matches_the_rows() {
        let (x, y) = data();
        for centre in [false, true] {
            let des = Design::new(&x, 7, 3, &y, centre).unwrap();
            for w in [[0.0, 0.0, 0.0], [1.0, -2.0, 0.5], [0.1, 0.2, -0.3]] {
                let direct = direct_sse(&x, &y, 3, des.x_offset(), des.y_offset(), &w);
                assert!(
                    (des.sse(&w) - direct).abs() < 1e-10 * direct.max(1.0),
                    "{centre}"
                );
            }
        }
    }

    /// A near-exact fit (residual 1e-12 of yᵀy) takes the pass over the rows and keeps the
    /// residual's relative accuracy; the sums alone would have cancelled to noise.
    #[test]
    fn near_exact_fits_keep_their_residual() {
        let (x, _) = data();
        let w = [0.5, -1.0, 2.0];
        let y: Vec<f64> = x
            .chunks(3)
            .enumerate()
            .map(|(i, r)| dot3(r, &w) + 1e-6 * ((i % 3) as f64 - 1.0))
            .collect();
        for centre in [false, true] {
            let des = Design::new(&x, 7, 3, &y, centre).unwrap();
            let yty: f64 = y.iter().map(|v| (v - des.y_offset()).powi(2)).sum();
            for w in [w, [0.5 + 1e-7, -1.0, 2.0]] {
                let direct = direct_sse(&x, &y, 3, des.x_offset(), des.y_offset(), &w);
                assert!(direct < EXACT_PASS_BELOW * yty);
                assert!((des.sse(&w) - direct).abs() < 1e-6 * direct, "{centre}");
            }
        }
    }

    fn dot3(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(u, v)| u * v).sum()
    }

    #[test]
    fn the_same_numbers_on_any_thread_count() {
        let (n, d) = (3 * BLOCK + 17, 4);
        let x: Vec<f64> = (0..n * d)
            .map(|i| ((i * 7919 % 1009) as f64).sin() + 3.0)
            .collect();
        let y: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).cos()).collect();
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| Design::new(&x, n, d, &y, true).unwrap())
        };
        let (a, b) = (on(1), on(3));
        let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        let gram = |g: &Design| {
            (0..d * d)
                .map(|i| g.gram[(i / d, i % d)])
                .collect::<Vec<_>>()
        };
        assert_eq!(bits(&gram(&a)), bits(&gram(&b)));
        assert_eq!(bits(&a.xty), bits(&b.xty));
        assert_eq!(a.rss0.to_bits(), b.rss0.to_bits());
        assert_eq!(bits(&a.g0), bits(&b.g0));
    }

    #[test]
    fn bad_input_is_located() {
        let (mut x, y) = data();
        x[7] = f64::NAN;
        let e = Design::new(&x, 7, 3, &y, true).unwrap_err().to_string();
        assert_eq!(e, "<array X>:3:2: NaN is not a finite number");
        let e = Design::new(&x[..20], 7, 3, &y, true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("20 values do not make 7 rows of 3"), "{e}");
        let e = Design::new(&data().0, 7, 3, &y[..6], true)
            .unwrap_err()
            .to_string();
        assert!(e.contains("X has 7 rows but y has 6"), "{e}");
    }
}
