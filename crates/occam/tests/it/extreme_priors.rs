//! Property tests: the bound never decreases under `--strict` (a decrease is an error) with
//! extreme hyper-parameters, and no sweep's bound lies above the converged one. Issue 13's two
//! cases: the quickstart model with `tau ~ Gamma(1e-6, 1e-308)` on 40 rows (a decrease of 0.42;
//! with rate 1e-100 the first sweep's "bound" was +2.37e80), and a K = 10 full-covariance
//! mixture on 100 identical rows (a decrease of 1.6e-6 after `Lambda`). The cause was the
//! latent Gaussians' own bound term A(φ) − φ·u: both hold ½ μᵀΛμ, ~10³⁰⁵ for a mean whose
//! precision came from that Gamma's prior mean, and their difference cancelled to round-off.

use occam::{DataSet, Model, Settings};
use proptest::prelude::*;

fn strict(max_iter: usize) -> Settings {
    Settings {
        strict: true,
        max_iter,
        prune: false,
        ..Settings::default()
    }
}

/// Fits `src` on `y` (rows × cols) strictly; checks the trace never exceeds its final value.
fn fit_strictly(src: &str, rows: usize, cols: usize, y: Vec<f64>, max_iter: usize) -> f64 {
    let mut d = DataSet::new();
    d.insert_array("y", rows, cols, y, None).unwrap();
    let fitted = Model::from_source("m.occam", src, &d)
        .unwrap()
        .fit(&strict(max_iter))
        .unwrap_or_else(|e| panic!("{}\n{src}", e.render_plain()));
    let o = fitted.outcome();
    let last = o.bound;
    assert!(last.is_finite(), "{src}: L = {last}");
    // What floating point can resolve of L at the final state (the driver's decrease check uses
    // the same allowance; see `Vmp::bound_roundoff`).
    let roundoff = fitted.compiled().vmp.bound_roundoff();
    for (i, b) in o.bound_trace.iter().enumerate() {
        assert!(
            *b <= last + 1e-9 * (1.0 + last.abs()) + 2.0 * roundoff,
            "{src}: sweep {} has L = {b} above the final {last} (by {})",
            i + 1,
            b - last
        );
    }
    last
}

fn quickstart(rate: &str) -> String {
    format!(
        "plate N from data y\nmu ~ Gaussian(0, 1e-6)\ntau ~ Gamma(1e-6, {rate})\ny[N] ~ Gaussian(mu, tau)\n"
    )
}

fn mixture(k: usize, d: usize) -> String {
    format!(
        "plate K = {k}\nplates N, D from data y\nalpha ~ Dirichlet(1e-5) over K\nz[N] ~ Categorical(alpha)\n\
         mu[K] over D ~ MvGaussian(mean = 0, precision = identity * 1e-5)\n\
         Lambda[K] over D ~ Wishart(dof = {d}, rate = identity * 1e-5)\n\
         y[N] over D ~ MvGaussian(mean = mu[z], precision = Lambda[z])\n"
    )
}

#[test]
fn quickstart_with_a_gamma_rate_of_1e_308_on_40_rows() {
    let y: Vec<f64> = (0..40)
        .map(|i| 5.0 + (i as f64 * 0.9).sin() * 2.0)
        .collect();
    for rate in ["1e-308", "1e-100", "1e-6"] {
        fit_strictly(&quickstart(rate), 40, 1, y.clone(), 200);
    }
}

#[test]
fn full_covariance_mixture_of_10_on_100_identical_rows() {
    let y: Vec<f64> = [1.5, -0.5].repeat(100);
    fit_strictly(&mixture(10, 2), 100, 2, y, 100);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn extreme_gamma_rates_never_lower_the_bound(
        exponent in 1i32..308,
        rows in 2usize..60,
        centre in -50.0f64..50.0,
        spread in 0.01f64..10.0,
    ) {
        let y: Vec<f64> = (0..rows).map(|i| centre + (i as f64 * 1.7).sin() * spread).collect();
        fit_strictly(&quickstart(&format!("1e-{exponent}")), rows, 1, y, 200);
    }

    /// The bound of a mixture of identical rows holds terms of size T²|y|²·10⁵ (⟨Λ⟩ grows like
    /// T·10⁵ as the scatter vanishes) that cancel to O(T), so its round-off grows like
    /// T²|y|²·10⁻¹¹ — 3·10⁻⁶ for T = 32 rows at |y| = 18, where a plain 10⁻⁹·|L| check reported
    /// a decrease. The check allows what floating point cannot resolve (`Vmp::bound_roundoff`),
    /// so rows far from the origin are included.
    #[test]
    fn mixtures_on_identical_rows_never_lower_the_bound(
        k in 2usize..11,
        rows in 5usize..100,
        a in -40.0f64..40.0,
        b in -40.0f64..40.0,
    ) {
        fit_strictly(&mixture(k, 2), rows, 2, [a, b].repeat(rows), 60);
    }
}

/// The case that a plain 10⁻⁹·|L| decrease check flagged (2.9·10⁻⁶ at sweep 5 after `z`, K = 2,
/// 32 rows at (18, −18)), and neighbours further out.
#[test]
fn identical_rows_far_from_the_origin() {
    for (a, b) in [(18.0, -18.0), (18.0, 12.0), (-25.0, 30.0)] {
        for rows in [32usize, 64, 99] {
            for k in [2usize, 5, 10] {
                fit_strictly(&mixture(k, 2), rows, 2, [a, b].repeat(rows), 60);
            }
        }
    }
}

/// On well-conditioned data the round-off allowance is far below the decrease check's own
/// 10⁻⁹·|L|: it changes nothing there (a real decrease is still caught).
#[test]
fn the_round_off_allowance_is_negligible_on_ordinary_data() {
    let rows = 200;
    let y: Vec<f64> = (0..rows)
        .flat_map(|i| {
            let t = i as f64;
            let c = if i % 2 == 0 { 3.0 } else { -3.0 };
            [c + (t * 0.7).sin(), -c + (t * 1.3).cos()]
        })
        .collect();
    for src in [mixture(4, 2), quickstart("1")] {
        let cols = if src.contains("over D") { 2 } else { 1 };
        let data = if cols == 2 {
            y.clone()
        } else {
            y[..rows].to_vec()
        };
        let mut d = DataSet::new();
        d.insert_array("y", data.len() / cols, cols, data, None)
            .unwrap();
        let fitted = Model::from_source("m.occam", &src, &d)
            .unwrap()
            .fit(&strict(100))
            .unwrap();
        let (l, r) = (fitted.bound(), fitted.compiled().vmp.bound_roundoff());
        assert!(
            r > 0.0 && r < 1e-3 * 1e-9 * (1.0 + l.abs()),
            "{src}: L = {l}, round-off {r}"
        );
    }
}
