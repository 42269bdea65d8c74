//! The oracles themselves (quadrature and ln Γ against closed forms), and the repeated-parent
//! cases of issue 25.

use super::*;
use std::f64::consts::PI;

#[test]
fn quadrature_matches_closed_forms() {
    // 2-D: y ~ N(a + b, 1/τ) with a, b Gaussian: y ~ N(ma + mb, 1/pa + 1/pb + 1/τ).
    let (ma, pa, mb, pb, tau, y): (f64, f64, f64, f64, f64, f64) = (0.3, 2.0, -0.7, 0.5, 3.0, 1.9);
    let (sa, sb) = (1.0 / pa.sqrt(), 1.0 / pb.sqrt());
    let q = quad_2d(
        (ma - 8.0 * sa, ma + 8.0 * sa),
        (mb - 8.0 * sb, mb + 8.0 * sb),
        800,
        |a: f64, b: f64| ln_normal(a, ma, pa) + ln_normal(b, mb, pb) + ln_normal(y, a + b, tau),
    );
    let closed = ln_normal(y, ma + mb, 1.0 / (1.0 / pa + 1.0 / pb + 1.0 / tau));
    assert!((q - closed).abs() < 1e-11, "{q} vs {closed}");
    // 1-D: the Normal–Gamma marginal with a latent mean against the Gaussian closed form in the
    // limit of a sharp Gamma is not closed; check the quadrature on a Gaussian instead.
    let q1 = quad_1d(ma - 12.0 * sa, ma + 12.0 * sa, 6000, |a| {
        ln_normal(a, ma, pa) + ln_normal(y, a, tau)
    });
    let closed1 = ln_normal(y, ma, 1.0 / (1.0 / pa + 1.0 / tau));
    assert!((q1 - closed1).abs() < 1e-11, "{q1} vs {closed1}");
    // ln Γ against known values.
    assert!((ln_gamma(0.5) - PI.sqrt().ln()).abs() < 1e-13);
    assert!((ln_gamma(10.0) - 362_880f64.ln()).abs() < 1e-12);
    assert!((ln_gamma(3.7) - 1.428_072_326_665_388_3).abs() < 1e-12);
}

/// Issue 25: `b = a + a` gave L = −1.693 above ln p(y) = −1.949, sd(a) 0.577 for 0.447.
#[test]
fn a_plus_a_is_exact() {
    let text = "a ~ Gaussian(0, 1)\nb = a + a\ny ~ Gaussian(b, 1)\n";
    let mut data = DataSet::new();
    scalar(&mut data, "y", 1.5);
    let f = fit(text, &data).expect("a + a is collected to 2 * a");
    // y = 2a + e: y ~ N(0, 4 + 1); a | y has precision 1 + 4 = 5.
    let exact = ln_normal(1.5, 0.0, 1.0 / 5.0);
    assert!((exact - -1.948_657_489_421_723).abs() < 1e-12, "{exact}");
    assert!((f.bound() - exact).abs() < 1e-9, "{} vs {exact}", f.bound());
    let post = f.posterior("a").unwrap();
    let var = post.param("variance").unwrap().values[0];
    assert!(
        (var.sqrt() - 0.2f64.sqrt()).abs() < 1e-9,
        "sd {}",
        var.sqrt()
    );
    assert!((var.sqrt() - 0.447).abs() < 1e-3);
    let mean = post.param("mean").unwrap().values[0];
    assert!((mean - 0.6).abs() < 1e-9, "mean {mean}");
}

/// `b = a * a` gave L = −5.64 above ln p(y) = −6.42; it is now a located error.
#[test]
fn a_times_a_is_rejected() {
    let text = "a ~ Gaussian(0, 1)\nb = a * a\ny ~ Gaussian(b, 1)\n";
    let mut data = DataSet::new();
    scalar(&mut data, "y", 1.5);
    assert_eq!(fit(text, &data).err(), Some(vec![Code::RepeatedParent]));
}

/// An observed variable is a constant under q, so `x * x` is accepted, unless some cell of `x`
/// is missing: that cell is latent, and the fit rejects the repeat.
#[test]
fn observed_repeat_with_missing_cells_is_rejected_at_fit() {
    let text =
        "plate N = 3\nx[N] ~ Gaussian(0, 1)\nw ~ Gaussian(0, 1)\ny[N] ~ Gaussian(w * x * x, 1)\n";
    let mut data = DataSet::new();
    data.insert_array("y", 3, 1, vec![0.5, 1.0, -0.3], None)
        .unwrap();
    data.insert_array("x", 3, 1, vec![1.0, 2.0, -1.0], None)
        .unwrap();
    fit(text, &data).expect("x fully observed: a constant");
    let mut data = DataSet::new();
    data.insert_array("y", 3, 1, vec![0.5, 1.0, -0.3], None)
        .unwrap();
    data.insert_array("x", 3, 1, vec![1.0, f64::NAN, -1.0], None)
        .unwrap();
    let e = Model::from_source("m.occam", text, &data)
        .and_then(|m| m.fit(&settings()))
        .err()
        .expect("a missing x is latent: x * x repeats it");
    let d = e.diagnostics().expect("a located error");
    assert_eq!(d.items[0].code, Code::RepeatedParent);
    let plain = d.render_plain();
    assert!(
        plain.contains("`x` is observed, but its missing cells are latent")
            && plain.contains("m.occam:4:"),
        "{plain}"
    );
}
