//! SMO for the per-unit soft-margin SVM: KKT conditions, duality, and agreement with a brute-force
//! (active-set enumeration) solution of the dual QP on tiny problems.

use occam_nn::ltu::error::LtuError;
use occam_nn::ltu::smo::{
    dual_objective, kkt_tolerance, kkt_violation, primal_objective, train_svm, Gram, LinearSvm,
    SmoOptions,
};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// n points in d dimensions, labelled by a random hyperplane with `flip` of them flipped.
fn problem(seed: u64, n: usize, d: usize, flip: f64) -> (Gram, Vec<f64>) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let normal: Vec<f64> = (0..d).map(|_| rng.random_range(-1.0..1.0)).collect();
    let x: Vec<f64> = (0..n * d).map(|_| rng.random_range(-1.0..1.0)).collect();
    let mut y: Vec<f64> = (0..n)
        .map(|i| {
            let a: f64 = (0..d).map(|j| normal[j] * x[i * d + j]).sum::<f64>() + 0.2;
            if a >= 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    for v in y.iter_mut() {
        if rng.random::<f64>() < flip {
            *v = -*v;
        }
    }
    if y.iter().all(|&v| v == y[0]) {
        y[0] = -y[0];
    }
    (Gram::new(x, n, d).unwrap(), y)
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(a, b)| a * b).sum()
}

/// Solves A z = r by Gaussian elimination with partial pivoting; None if (nearly) singular.
fn solve(mut a: Vec<Vec<f64>>, mut r: Vec<f64>) -> Option<Vec<f64>> {
    let m = r.len();
    for col in 0..m {
        let p = (col..m).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[p][col].abs() < 1e-10 {
            return None;
        }
        a.swap(col, p);
        r.swap(col, p);
        for row in col + 1..m {
            let f = a[row][col] / a[col][col];
            let pivot = a[col].clone();
            for (v, p) in a[row][col..].iter_mut().zip(&pivot[col..]) {
                *v -= f * p;
            }
            r[row] -= f * r[col];
        }
    }
    let mut z = vec![0.0; m];
    for row in (0..m).rev() {
        let s: f64 = (row + 1..m).map(|k| a[row][k] * z[k]).sum();
        z[row] = (r[row] - s) / a[row][row];
    }
    Some(z)
}

/// The dual optimum by enumerating, for every point, α = 0, α = C or α free (then the free
/// points sit exactly on the margin and Σ α y = 0: a linear system). Every feasible candidate is a
/// dual-feasible point, and some optimal point is a candidate, so the best candidate is optimal.
fn brute_force_dual(g: &Gram, y: &[f64], c: f64) -> (f64, Vec<f64>) {
    let n = g.n();
    let k = |a: usize, b: usize| dot(g.row(a), g.row(b));
    let mut best = (f64::NEG_INFINITY, Vec::new());
    for code in 0..3usize.pow(n as u32) {
        let mut state = vec![0u8; n];
        let mut cc = code;
        for s in state.iter_mut() {
            *s = (cc % 3) as u8;
            cc /= 3;
        }
        let free: Vec<usize> = (0..n).filter(|&i| state[i] == 2).collect();
        let mut alpha: Vec<f64> = state
            .iter()
            .map(|&s| if s == 1 { c } else { 0.0 })
            .collect();
        if !free.is_empty() {
            let m = free.len() + 1;
            let mut a = vec![vec![0.0; m]; m];
            let mut r = vec![0.0; m];
            for (row, &i) in free.iter().enumerate() {
                for (col, &j) in free.iter().enumerate() {
                    a[row][col] = y[i] * y[j] * k(i, j);
                }
                a[row][m - 1] = y[i];
                r[row] = 1.0
                    - (0..n)
                        .map(|j| alpha[j] * y[i] * y[j] * k(i, j))
                        .sum::<f64>();
            }
            for (col, &j) in free.iter().enumerate() {
                a[m - 1][col] = y[j];
            }
            r[m - 1] = -(0..n).map(|j| alpha[j] * y[j]).sum::<f64>();
            let Some(z) = solve(a, r) else { continue };
            if z[..free.len()].iter().any(|&v| v < -1e-12 || v > c + 1e-12) {
                continue;
            }
            for (&i, &v) in free.iter().zip(&z) {
                alpha[i] = v.clamp(0.0, c);
            }
        }
        if alpha.iter().zip(y).map(|(a, y)| a * y).sum::<f64>().abs() > 1e-9 {
            continue;
        }
        let mut w = vec![0.0; g.d()];
        for i in 0..n {
            for (wj, xj) in w.iter_mut().zip(g.row(i)) {
                *wj += alpha[i] * y[i] * xj;
            }
        }
        let obj = alpha.iter().sum::<f64>() - 0.5 * dot(&w, &w);
        if obj > best.0 {
            best = (obj, w);
        }
    }
    best
}

fn opts(c: f64, tol: f64) -> SmoOptions {
    SmoOptions {
        c,
        tol,
        max_iter: 1_000_000,
    }
}

#[test]
fn smo_meets_kkt_conditions_and_closes_the_duality_gap() {
    for seed in 0..12u64 {
        let (g, y) = problem(seed, 40, 3, 0.15);
        for c in [0.1, 1.0, 10.0] {
            let tol = 1e-6;
            let svm = train_svm(&g, &y, &opts(c, tol)).unwrap();
            assert!(svm.converged);
            let v = kkt_violation(&g, &y, c, &svm);
            assert!(v < tol + 1e-9, "seed {seed} C {c}: KKT violation {v}");
            let (p, d) = (primal_objective(&g, &y, c, &svm), dual_objective(&svm));
            // Weak duality, and each point's contribution to the gap is at most C·tol when the
            // KKT conditions hold to within tol.
            assert!(p >= d - 1e-9, "seed {seed} C {c}: primal {p} < dual {d}");
            assert!(p - d <= 2.0 * c * tol * 40.0 + 1e-9, "gap {}", p - d);
        }
    }
}

#[test]
fn smo_matches_brute_force_dual_on_tiny_problems() {
    for seed in 0..40u64 {
        let n = 4 + (seed as usize % 3);
        let (g, y) = problem(100 + seed, n, 2, 0.25);
        let c = [0.3, 1.0, 5.0][seed as usize % 3];
        let (best, w_best) = brute_force_dual(&g, &y, c);
        let svm = train_svm(&g, &y, &opts(c, 1e-9)).unwrap();
        let d = dual_objective(&svm);
        assert!(
            (d - best).abs() <= 1e-7 * (1.0 + best.abs()),
            "seed {seed}: SMO dual {d}, brute force {best}"
        );
        // The dual is ½-strongly concave in w: ½‖w − w*‖² ≤ D* − D.
        let dw: f64 = svm
            .w
            .iter()
            .zip(&w_best)
            .map(|(a, b)| (a - b).powi(2))
            .sum();
        assert!(
            dw <= 2.0 * (best - d).max(0.0) + 1e-10,
            "seed {seed}: ‖Δw‖² = {dw}"
        );
    }
}

#[test]
fn tolerance_one_only_asks_for_correct_classification() {
    // Round 1 of the thesis's schedule: tolerance 1 requires y f(x) > 0 for points with α < C.
    assert_eq!(kkt_tolerance(1), 1.0);
    for seed in 0..8u64 {
        let (g, y) = problem(200 + seed, 50, 3, 0.0);
        let svm = train_svm(&g, &y, &opts(1e6, 1.0)).unwrap();
        assert!(svm.converged);
        for (i, (&a, &yi)) in svm.alpha.iter().zip(&y).enumerate() {
            if a < 1e6 {
                assert!(yi * svm.decision(g.row(i)) > 0.0, "seed {seed}, point {i}");
            }
        }
        let tight = train_svm(&g, &y, &opts(1e6, 1e-6)).unwrap();
        assert!(tight.iterations >= svm.iterations);
    }
}

#[test]
fn kkt_schedule_is_the_thesis_one() {
    let got: Vec<f64> = (1..=7).map(kkt_tolerance).collect();
    let want = [1.0, 0.1, 0.01, 1e-3, 1e-4, 1e-4, 1e-4];
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-15 * w, "{got:?}");
    }
}

#[test]
fn one_class_gives_the_constant_solution() {
    let g = Gram::new(vec![0.5, -1.0, 2.0, 0.0, 1.0, 1.0], 3, 2).unwrap();
    for label in [1.0, -1.0] {
        let svm = train_svm(&g, &[label; 3], &opts(1.0, 1e-4)).unwrap();
        assert_eq!(svm.w, vec![0.0, 0.0]);
        assert_eq!(svm.b, label);
        assert!(kkt_violation(&g, &[label; 3], 1.0, &svm) == 0.0);
    }
}

#[test]
fn iteration_cap_is_respected_and_reported() {
    let (g, y) = problem(7, 60, 3, 0.2);
    let o = SmoOptions {
        c: 100.0,
        tol: 1e-8,
        max_iter: 25,
    };
    let svm: LinearSvm = train_svm(&g, &y, &o).unwrap();
    assert!(!svm.converged);
    assert!(svm.iterations <= 25);
}

#[test]
fn bad_input_is_an_error() {
    let g = Gram::new(vec![0.0, 1.0, 1.0, 0.0], 2, 2).unwrap();
    let e = train_svm(&g, &[1.0, 0.5], &opts(1.0, 1e-3)).unwrap_err();
    assert!(matches!(e, LtuError::NotBipolar { index: 1, .. }), "{e}");
    let e = train_svm(&g, &[1.0], &opts(1.0, 1e-3)).unwrap_err();
    assert!(matches!(e, LtuError::Shape { .. }), "{e}");
    let e = train_svm(&g, &[1.0, -1.0], &opts(0.0, 1e-3)).unwrap_err();
    assert!(
        matches!(e, LtuError::InvalidOption { name: "C", .. }),
        "{e}"
    );
    let e = train_svm(&g, &[1.0, -1.0], &opts(1.0, f64::NAN)).unwrap_err();
    assert!(matches!(e, LtuError::InvalidOption { .. }), "{e}");
    assert!(matches!(
        Gram::new(vec![0.0, f64::INFINITY], 1, 2),
        Err(LtuError::NonFinite { index: 1, .. })
    ));
    assert!(matches!(
        Gram::new(vec![0.0; 3], 2, 2),
        Err(LtuError::Shape { .. })
    ));
}
