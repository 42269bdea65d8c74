//! Stochastic VB (Hoffman, Blei, Wang & Paisley 2013) over shards (`Sharded::svi`): a step's
//! natural parameters are the blend (1 − ρ) φ_old + ρ φ̂ with moments from them (the Gaussian's
//! mean solved from φ by hand); on one shard with ρ₁ = 1 the first step is a batch sweep; on a
//! 2-D mixture the posterior means reach the batch fit's to 1e-2; a seed fixes the run.

use occam_core::engine::{Sharded, SviOptions, Vmp};

use super::shards::{compile, gmm_data, rows, uneven, GMM};

/// Shards of `sizes` consecutive rows of the mixture data `x`.
fn shards(x: &[f64], sizes: &[usize]) -> Vec<Vmp> {
    let tables: &[(&str, usize, &[f64])] = &[("x", 2, x)];
    let mut out = Vec::new();
    let mut from = 0;
    for &s in sizes {
        out.push(compile(GMM, &rows(tables, from, from + s)));
        from += s;
    }
    out
}

/// The order of a stochastic step: the locals, then the globals (the default order updates the
/// k-means-started index last).
fn locals_first(v: &Vmp) -> Vec<occam_core::graph::NodeId> {
    let split = v.split(None).unwrap();
    let (mut l, g): (Vec<_>, Vec<_>) = v
        .default_order()
        .into_iter()
        .partition(|&id| split.is_local(id));
    l.extend(g);
    l
}

#[test]
fn a_step_blends_the_natural_parameters_and_takes_the_moments_from_the_blend() {
    let x = gmm_data(120, 2);
    let mut a = Sharded::new(shards(&x, &[120]), None, None).unwrap();
    a.start(3).unwrap();
    let split = a.split().clone();
    let v = &a.shards()[0];
    let mu = v.node("mu").unwrap();
    let old = v.natural(mu).to_vec();
    // φ̂: the coordinate update (ρ = 1) on a copy in the same state.
    let mut b = Sharded::new(shards(&x, &[120]), None, None).unwrap();
    b.start(3).unwrap();
    let mut full = b.into_shards().remove(0);
    let m = full.local_messages(&split, mu);
    full.step_global(&split, mu, m.clone(), 1.0).unwrap();
    let hat = full.natural(mu).to_vec();
    assert!(old.iter().zip(&hat).any(|(p, q)| (p - q).abs() > 1e-3));
    let rho = 0.3;
    let mut v = a.into_shards().remove(0);
    v.step_global(&split, mu, m, rho).unwrap();
    let phi = v.natural(mu);
    for ((p, o), h) in phi.iter().zip(&old).zip(&hat) {
        assert!((p - ((1.0 - rho) * o + rho * h)).abs() <= 1e-12 * (1.0 + h.abs()));
    }
    // MvGaussian in D = 2: φ = [Λm, −½Λ] per component, ⟨x⟩ = m = (−2 φ₂)⁻¹ φ₁.
    let u = v.moments(mu);
    for k in 0..3 {
        let (f, uk) = (&phi[k * 6..k * 6 + 6], &u[k * 6..k * 6 + 2]);
        let (a11, a12, a21, a22) = (-2.0 * f[2], -2.0 * f[3], -2.0 * f[4], -2.0 * f[5]);
        let det = a11 * a22 - a12 * a21;
        let m = [
            (a22 * f[0] - a12 * f[1]) / det,
            (a11 * f[1] - a21 * f[0]) / det,
        ];
        for d in 0..2 {
            assert!(
                (uk[d] - m[d]).abs() <= 1e-10 * (1.0 + m[d].abs()),
                "{uk:?} vs {m:?}"
            );
        }
    }
}

#[test]
fn on_one_shard_the_first_step_is_a_batch_sweep() {
    // One shard holds all the rows (N/|B| = 1) and ρ₁ = (1 + 0)^−1 = 1.
    let x = gmm_data(150, 5);
    let order = locals_first(&compile(GMM, &rows(&[("x", 2, &x)], 0, 150)));
    let mut batch = Sharded::new(shards(&x, &[150]), None, Some(order.clone())).unwrap();
    let mut svi = Sharded::new(shards(&x, &[150]), None, Some(order)).unwrap();
    batch.start(1).unwrap();
    svi.start(1).unwrap();
    let options = SviOptions {
        kappa: 1.0,
        tau: 0.0,
        seed: 0,
        bound_every: 1,
        batch_rows: 0,
    };
    let l = batch.sweep().unwrap();
    // The svi bound is taken after a further local step: the batch's, too.
    let z = batch.shards()[0].node("z").unwrap();
    let mut v = batch.into_shards().remove(0);
    v.update(z).unwrap();
    let fit = svi.svi(1, 0.0, options).unwrap();
    assert_eq!(fit.steps, 1);
    assert!(v.bound() >= l);
    assert_eq!(fit.bound_trace.len(), 1);
    let (a, b) = (fit.bound_trace[0], v.bound());
    assert!((a - b).abs() <= 1e-12 * a.abs(), "svi {a} vs batch {b}");
}

/// ⟨mu_k⟩ of shard 0's replica, components sorted by their first coordinate.
fn means(s: &Sharded) -> Vec<[f64; 2]> {
    let v = &s.shards()[0];
    let m = v.mean(v.node("mu").unwrap()).unwrap();
    let mut out: Vec<[f64; 2]> = m.chunks(2).map(|c| [c[0], c[1]]).collect();
    out.sort_by(|a, b| a[0].total_cmp(&b[0]));
    out
}

#[test]
fn stochastic_vb_reaches_the_batch_posterior_means_and_a_seed_fixes_the_run() {
    let n = 3000;
    let x = gmm_data(n, 7);
    // Uneven shards: each is drawn with probability 1/10, so its messages are scaled by 10.
    let sizes = uneven(n, &[3, 1, 2, 4, 1, 2, 3, 1, 2, 1]);
    let mut batch = Sharded::new(shards(&x, &sizes), None, None).unwrap();
    batch.start(0).unwrap();
    let b = batch.run(1000, 1e-10, false).unwrap();
    assert!(b.converged);
    let options = SviOptions {
        kappa: 0.6,
        tau: 1.0,
        seed: 4,
        bound_every: 5,
        batch_rows: 0,
    };
    let run = |options: SviOptions| {
        let mut s = Sharded::new(shards(&x, &sizes), None, None).unwrap();
        s.start(0).unwrap();
        let fit = s.svi(60, 0.0, options).unwrap();
        (fit, s)
    };
    let (fit, svi) = run(options);
    assert_eq!(fit.steps, 600);
    assert_eq!(fit.epochs, (1..=12).map(|e| 5 * e).collect::<Vec<_>>());
    let (mb, ms) = (means(&batch), means(&svi));
    for (p, q) in mb.iter().zip(&ms) {
        for d in 0..2 {
            assert!((p[d] - q[d]).abs() <= 1e-2, "batch {mb:?} vs svi {ms:?}");
        }
    }
    // The full bound at the stochastic globals is a bound at a q: at most the batch optimum's
    // (same optimum), and close to it.
    let (lb, ls) = (batch.bound(), *fit.bound_trace.last().unwrap());
    assert!(ls <= lb + 1e-9 * lb.abs(), "svi {ls} above batch {lb}");
    assert!(lb - ls <= 1e-4 * lb.abs(), "svi {ls} vs batch {lb}");
    // A seed fixes the minibatch order, so the run; another seed gives another run.
    let (again, svi2) = run(options);
    assert_eq!(again.bound_trace, fit.bound_trace);
    assert_eq!(means(&svi2), ms);
    let (other, _) = run(SviOptions { seed: 5, ..options });
    assert_ne!(other.bound_trace, fit.bound_trace);
}

#[test]
fn step_sizes_outside_robbins_monro_are_refused() {
    let x = gmm_data(40, 1);
    let mut s = Sharded::new(shards(&x, &[20, 20]), None, None).unwrap();
    s.start(0).unwrap();
    let bad = SviOptions {
        kappa: 0.5,
        ..SviOptions::default()
    };
    let err = s.svi(3, 0.0, bad).unwrap_err().to_string();
    assert!(err.contains("κ = 0.5") && err.contains("(0.5, 1]"), "{err}");
}
