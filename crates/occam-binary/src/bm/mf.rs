//! Mean field for Boltzmann machines: damped sequential updates with annealing and restarts.
//!
//! Update (Lawrence (4.10)–(4.11)): m_k ← (1 − d) m_k + d · tanh((h_k + Σ_j w_kj m_j)/T).
//! Bound at the model's own temperature (Lawrence (4.12)–(4.14), corrected: the printed Σ_ij counts
//! every pair twice, the pair sum over i<j matches (4.10); see docs/seed-corrections.md):
//!   log Z ≥ L(m) = c + ½ mᵀWm + hᵀm + Σ_i H₂(m_i).
//! L is concave in each m_k separately, so a damped move toward the coordinate maximiser never
//! decreases it: the sweeps at T = 1 are monotone for every damping d ∈ (0, 1].

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::error::{BmError, Result};
use super::model::{dot, BoltzmannMachine};
use super::Quality;
use occam_core::special::binary_entropy_pm;

/// Options of the mean-field solver.
#[derive(Debug, Clone)]
pub struct MeanFieldOptions {
    /// Damping d ∈ (0, 1]; 1 = undamped.
    pub damping: f64,
    /// Annealing temperatures (multiples of the model temperature), run before the final T = 1 phase.
    pub schedule: Vec<f64>,
    /// Sweeps per annealing temperature.
    pub sweeps_per_temperature: usize,
    /// Maximal sweeps at T = 1.
    pub max_sweeps: usize,
    /// Stop when max |Δm| in a sweep is below this.
    pub tol: f64,
    /// Number of random restarts (the best bound is kept); at least 1.
    pub restarts: usize,
    /// Seed of the initial means m ~ U(−0.1, 0.1).
    pub seed: u64,
    /// Optional initial means (used by the first restart instead of a random draw).
    pub init: Option<Vec<f64>>,
}

impl Default for MeanFieldOptions {
    fn default() -> Self {
        Self {
            damping: 0.5,
            schedule: vec![8.0, 4.0, 2.0, 1.5, 1.2],
            sweeps_per_temperature: 20,
            max_sweeps: 5000,
            tol: 1e-12,
            restarts: 5,
            seed: 0,
            init: None,
        }
    }
}

/// Mean-field result.
#[derive(Debug, Clone)]
pub struct MeanFieldResult {
    /// The mean-field lower bound on log Z.
    pub log_z: f64,
    /// Always [`Quality::LowerBound`].
    pub quality: Quality,
    /// ⟨s_i⟩ = m_i.
    pub means: Vec<f64>,
    /// The natural parameters μ_i = h_i + Σ_j w_ij m_j at the end (m = tanh μ at a fixed point).
    pub fields: Vec<f64>,
    /// Whether the final phase met the tolerance.
    pub converged: bool,
    /// Sweeps in the final phase of the best restart.
    pub sweeps: usize,
}

/// The mean-field bound L(m) (module doc).
pub fn mf_bound(bm: &BoltzmannMachine, m: &[f64]) -> f64 {
    let n = bm.n();
    let w = bm.weights();
    let h = bm.thresholds();
    let mut acc = bm.offset();
    for i in 0..n {
        acc += m[i] * (h[i] + 0.5 * dot(&w[i * n..(i + 1) * n], m)) + binary_entropy_pm(m[i]);
    }
    acc
}

/// One damped sequential sweep at inverse temperature `beta`; returns max |Δm|.
#[inline]
pub fn mf_sweep(bm: &BoltzmannMachine, m: &mut [f64], beta: f64, damping: f64) -> f64 {
    let n = bm.n();
    let w = bm.weights();
    let h = bm.thresholds();
    let mut delta: f64 = 0.0;
    for k in 0..n {
        let field = h[k] + dot(&w[k * n..(k + 1) * n], m);
        let new = (1.0 - damping) * m[k] + damping * (beta * field).tanh();
        delta = delta.max((new - m[k]).abs());
        m[k] = new;
    }
    delta
}

fn check_opts(o: &MeanFieldOptions, n: usize) -> Result<()> {
    if o.damping.is_nan() || o.damping <= 0.0 || o.damping > 1.0 {
        return Err(BmError::InvalidOption {
            option: "damping",
            why: format!("must be in (0, 1], got {}", o.damping),
        });
    }
    if o.restarts == 0 {
        return Err(BmError::InvalidOption {
            option: "restarts",
            why: "must be ≥ 1".into(),
        });
    }
    if o.schedule.iter().any(|t| !(t.is_finite() && *t > 0.0)) {
        return Err(BmError::InvalidOption {
            option: "schedule",
            why: "temperatures must be finite and > 0".into(),
        });
    }
    if let Some(i) = &o.init {
        if i.len() != n || i.iter().any(|x| x.is_nan() || x.abs() > 1.0) {
            return Err(BmError::InvalidOption {
                option: "init",
                why: format!("need {n} values in [−1, 1]"),
            });
        }
    }
    Ok(())
}

/// Runs mean field from `m` in place: annealing phase, then sweeps at T = 1 until converged.
/// Returns (converged, sweeps at T = 1).
pub fn mf_solve_from(bm: &BoltzmannMachine, m: &mut [f64], o: &MeanFieldOptions) -> (bool, usize) {
    for &t in &o.schedule {
        for _ in 0..o.sweeps_per_temperature {
            mf_sweep(bm, m, 1.0 / t, o.damping);
        }
    }
    for s in 1..=o.max_sweeps {
        if mf_sweep(bm, m, 1.0, o.damping) < o.tol {
            return (true, s);
        }
    }
    (false, o.max_sweeps)
}

/// Mean field with restarts; returns the best bound found.
pub fn mean_field(bm: &BoltzmannMachine, o: &MeanFieldOptions) -> Result<MeanFieldResult> {
    let n = bm.n();
    check_opts(o, n)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(o.seed);
    let mut best: Option<MeanFieldResult> = None;
    for r in 0..o.restarts {
        let mut m: Vec<f64> = match (&o.init, r) {
            (Some(i), 0) => i.clone(),
            _ => (0..n).map(|_| rng.random_range(-0.1..0.1)).collect(),
        };
        let (converged, sweeps) = mf_solve_from(bm, &mut m, o);
        let b = mf_bound(bm, &m);
        if best.as_ref().is_none_or(|x| b > x.log_z) {
            let mut f = vec![0.0; n];
            bm.fields(&m, &mut f);
            best = Some(MeanFieldResult {
                log_z: b,
                quality: Quality::LowerBound,
                means: m,
                fields: f,
                converged,
                sweeps,
            });
        }
    }
    Ok(best.expect("restarts ≥ 1"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::exact::exact_log_z;

    fn bm(n: usize, scale: f64) -> BoltzmannMachine {
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..i {
                let v = ((((i * 31 + j * 17) % 23) as f64) / 11.0 - 1.0) * scale;
                w[i * n + j] = v;
                w[j * n + i] = v;
            }
        }
        let h = (0..n).map(|i| ((i % 5) as f64 - 2.0) * 0.1).collect();
        BoltzmannMachine::new(w, h, 0.0).unwrap()
    }

    #[test]
    fn sweeps_are_monotone_and_below_exact() {
        let b = bm(10, 0.6);
        let lz = exact_log_z(&b).unwrap();
        let mut m: Vec<f64> = (0..10).map(|i| 0.05 * i as f64 - 0.2).collect();
        let mut prev = mf_bound(&b, &m);
        for _ in 0..200 {
            mf_sweep(&b, &mut m, 1.0, 0.7);
            let now = mf_bound(&b, &m);
            assert!(now >= prev - 1e-12, "decrease {prev} -> {now}");
            prev = now;
        }
        assert!(prev <= lz);
        let r = mean_field(&b, &MeanFieldOptions::default()).unwrap();
        assert!(r.converged);
        assert!(r.log_z <= lz && r.log_z >= prev - 1e-9);
        // fixed point: m = tanh(field)
        for (m, f) in r.means.iter().zip(&r.fields) {
            assert!((m - f.tanh()).abs() < 1e-9);
        }
    }

    #[test]
    fn exact_for_independent_units() {
        let h = vec![0.5, -0.3, 1.7];
        let b = BoltzmannMachine::new(vec![0.0; 9], h.clone(), 0.1).unwrap();
        let r = mean_field(&b, &MeanFieldOptions::default()).unwrap();
        assert!((r.log_z - exact_log_z(&b).unwrap()).abs() < 1e-12);
    }

    #[test]
    fn bad_options_rejected() {
        let b = bm(3, 0.1);
        let o = MeanFieldOptions {
            damping: 0.0,
            ..Default::default()
        };
        assert!(mean_field(&b, &o).is_err());
        let o = MeanFieldOptions {
            init: Some(vec![0.0; 2]),
            ..Default::default()
        };
        assert!(mean_field(&b, &o).is_err());
    }

    /// Gradients of the mean-field bound match central differences: ∂L/∂m_i = α_i (58),
    /// ∂L/∂h_i = m_i, ∂L/∂w_ij = m_i m_j (Lawrence (4.15)).
    #[test]
    fn bound_gradients_match_finite_differences() {
        let b = bm(6, 0.9);
        let m: Vec<f64> = (0..6).map(|i| 0.3 * i as f64 - 0.8).collect();
        let e = 1e-6;
        let mut f = vec![0.0; 6];
        b.fields(&m, &mut f);
        for k in 0..6 {
            let (mut p, mut q) = (m.clone(), m.clone());
            p[k] += e;
            q[k] -= e;
            let fd = (mf_bound(&b, &p) - mf_bound(&b, &q)) / (2.0 * e);
            assert!((fd - (f[k] - m[k].atanh())).abs() < 1e-7);
            let (mut bp, mut bq) = (b.clone(), b.clone());
            bp.thresholds_mut()[k] += e;
            bq.thresholds_mut()[k] -= e;
            let fd = (mf_bound(&bp, &m) - mf_bound(&bq, &m)) / (2.0 * e);
            assert!((fd - m[k]).abs() < 1e-8);
            for j in 0..k {
                let (mut bp, mut bq) = (b.clone(), b.clone());
                bp.set_pair(k, j, b.w(k, j) + e);
                bq.set_pair(k, j, b.w(k, j) - e);
                let fd = (mf_bound(&bp, &m) - mf_bound(&bq, &m)) / (2.0 * e);
                assert!((fd - m[k] * m[j]).abs() < 1e-8);
            }
        }
    }
}
