//! Gauss–Legendre quadrature (nodes by Newton's method on the Legendre recurrence), a composite
//! rule over a finite interval and expectations under a standard normal: the one quadrature of the
//! workspace (Owen's T in [`crate::special`], the network moments of `occam-nn`, quadrature checks
//! in tests). Written here because the quadrature crates on crates.io either allocate per call or
//! lack fixed-order rules with cached nodes.

/// Nodes and weights of the n-point Gauss–Legendre rule on [−1, 1].
#[derive(Clone, Debug)]
pub struct GaussLegendre {
    /// Nodes in increasing order.
    pub nodes: Vec<f64>,
    /// Weights (sum to 2).
    pub weights: Vec<f64>,
}

impl GaussLegendre {
    /// Computes the rule with `n ≥ 1` points; each node is refined by Newton's method from the
    /// Tricomi initial guess until it moves by less than 1e-15.
    pub fn new(n: usize) -> Self {
        let n = n.max(1);
        let mut nodes = vec![0.0; n];
        let mut weights = vec![0.0; n];
        for i in 0..n.div_ceil(2) {
            let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
            let mut dp = 1.0;
            for _ in 0..100 {
                // P_n(x) and P_n'(x) by the three-term recurrence.
                let (mut p0, mut p1) = (1.0, x);
                for k in 2..=n {
                    let p2 = ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64;
                    p0 = p1;
                    p1 = p2;
                }
                let pn = if n == 1 { x } else { p1 };
                let pm = if n == 1 { 1.0 } else { p0 };
                dp = n as f64 * (x * pn - pm) / (x * x - 1.0);
                let dx = pn / dp;
                x -= dx;
                if dx.abs() < 1e-15 {
                    break;
                }
            }
            if n == 1 {
                x = 0.0;
                dp = 1.0;
            }
            let w = 2.0 / ((1.0 - x * x) * dp * dp);
            nodes[i] = -x;
            nodes[n - 1 - i] = x;
            weights[i] = w;
            weights[n - 1 - i] = w;
        }
        if n == 1 {
            weights[0] = 2.0;
        }
        GaussLegendre { nodes, weights }
    }

    /// ∫_a^b f(x) dx with this rule.
    pub fn integrate(&self, a: f64, b: f64, mut f: impl FnMut(f64) -> f64) -> f64 {
        let (c, h) = (0.5 * (a + b), 0.5 * (b - a));
        self.nodes
            .iter()
            .zip(&self.weights)
            .map(|(x, w)| w * f(c + h * x))
            .sum::<f64>()
            * h
    }

    /// ∫_a^b f(x) dx on `panels` equal sub-intervals.
    pub fn composite(&self, a: f64, b: f64, panels: usize, mut f: impl FnMut(f64) -> f64) -> f64 {
        let panels = panels.max(1);
        let h = (b - a) / panels as f64;
        (0..panels)
            .map(|p| self.integrate(a + p as f64 * h, a + (p + 1) as f64 * h, &mut f))
            .sum()
    }
}

/// E[f(s)] for s ~ N(0, 1), by composite Gauss–Legendre on [−12, 12] (the tails beyond carry less
/// than 1e-32 of the mass); accurate to ~1e-14 for smooth bounded f.
pub fn expect_standard_normal(f: impl Fn(f64) -> f64) -> f64 {
    use std::sync::OnceLock;
    static RULE: OnceLock<GaussLegendre> = OnceLock::new();
    let rule = RULE.get_or_init(|| GaussLegendre::new(20));
    let c = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
    rule.composite(-12.0, 12.0, 48, |s| c * (-0.5 * s * s).exp() * f(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legendre_rules_integrate_polynomials_exactly() {
        for n in [1, 2, 5, 20, 41] {
            let r = GaussLegendre::new(n);
            assert!((r.weights.iter().sum::<f64>() - 2.0).abs() < 1e-13);
            for p in 0..(2 * n) {
                let exact = if p % 2 == 1 {
                    0.0
                } else {
                    2.0 / (p as f64 + 1.0)
                };
                let got = r.integrate(-1.0, 1.0, |x| x.powi(p as i32));
                assert!((got - exact).abs() < 1e-13, "n={n} p={p}: {got} vs {exact}");
            }
        }
    }

    #[test]
    fn normal_expectations_match_moments() {
        assert!((expect_standard_normal(|_| 1.0) - 1.0).abs() < 1e-14);
        assert!((expect_standard_normal(|s| s * s) - 1.0).abs() < 1e-13);
        assert!((expect_standard_normal(|s| s.powi(4)) - 3.0).abs() < 1e-12);
        // E[cos s] = e^{−1/2}.
        assert!((expect_standard_normal(f64::cos) - (-0.5f64).exp()).abs() < 1e-14);
    }
}
