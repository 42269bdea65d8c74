//! Ordinary least squares by the normal equations (Cholesky of AᵀA): the linear baselines of
//! `occam-nn`'s sunspot and Tecator reproductions. Well-conditioned, tall designs only: a
//! rank-deficient AᵀA is refused as [`LinalgError::Singular`].

use super::clean_vector_state;
use super::error::{check_finite, LinalgError};
use faer::prelude::Solve;
use faer::{Mat, Side};

/// argmin_β ‖Aβ − b‖² for a row-major `rows × cols` design A (rows ≥ cols), by the normal
/// equations AᵀAβ = Aᵀb solved through faer's Cholesky.
pub fn least_squares(a: &[f64], cols: usize, b: &[f64]) -> Result<Vec<f64>, LinalgError> {
    let rows = b.len();
    if cols == 0 || a.len() != rows * cols {
        return Err(LinalgError::Shape {
            what: "least squares: design rows × cols and one target per row",
            expected: rows * cols,
            got: a.len(),
        });
    }
    if rows < cols {
        return Err(LinalgError::TooFew {
            what: "least squares (rows ≥ columns)",
            need: cols,
            got: rows,
        });
    }
    check_finite("least-squares design", a)?;
    check_finite("least-squares targets", b)?;
    let a = Mat::<f64>::from_fn(rows, cols, |i, j| a[i * cols + j]);
    let ata = a.transpose() * &a;
    let atb = a.transpose() * Mat::<f64>::from_fn(rows, 1, |i, _| b[i]);
    let llt = ata.llt(Side::Lower);
    clean_vector_state();
    let llt = llt.map_err(|_| LinalgError::Singular {
        what: "least squares normal equations",
    })?;
    let beta = llt.solve(&atb);
    clean_vector_state();
    Ok((0..cols).map(|j| beta[(j, 0)]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_an_exact_line_and_the_closed_form_slope() {
        // b = 2 − 3x exactly: β = (2, −3).
        let xs = [0.0, 0.5, 1.0, 2.0, 3.5];
        let a: Vec<f64> = xs.iter().flat_map(|&x| [1.0, x]).collect();
        let b: Vec<f64> = xs.iter().map(|x| 2.0 - 3.0 * x).collect();
        let beta = least_squares(&a, 2, &b).unwrap();
        assert!((beta[0] - 2.0).abs() < 1e-13 && (beta[1] + 3.0).abs() < 1e-13);
        // Noisy: slope = cov(x, y)/var(x), intercept = ȳ − slope x̄.
        let y = [1.0, 0.2, 0.9, -0.4, 3.0];
        let n = xs.len() as f64;
        let (mx, my) = (xs.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
        let sxy: f64 = xs.iter().zip(&y).map(|(x, y)| (x - mx) * (y - my)).sum();
        let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
        let beta = least_squares(&a, 2, &y).unwrap();
        assert!((beta[1] - sxy / sxx).abs() < 1e-13);
        assert!((beta[0] - (my - sxy / sxx * mx)).abs() < 1e-13);
        // The residual is orthogonal to every column (finite-difference-free optimality).
        for c in 0..2 {
            let g: f64 = (0..5)
                .map(|i| a[i * 2 + c] * (a[i * 2] * beta[0] + a[i * 2 + 1] * beta[1] - y[i]))
                .sum();
            assert!(g.abs() < 1e-12);
        }
    }

    #[test]
    fn refuses_bad_shapes_and_collinear_designs() {
        assert!(matches!(
            least_squares(&[1.0, 2.0], 2, &[1.0, 2.0]),
            Err(LinalgError::Shape { .. })
        ));
        assert!(matches!(
            least_squares(&[1.0, 2.0], 2, &[1.0]),
            Err(LinalgError::TooFew { .. })
        ));
        // A zero column: AᵀA has an exact zero pivot.
        let collinear = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0];
        assert_eq!(
            least_squares(&collinear, 2, &[1.0, 2.0, 3.0]),
            Err(LinalgError::Singular {
                what: "least squares normal equations"
            })
        );
    }
}
