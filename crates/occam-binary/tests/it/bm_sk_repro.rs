//! Leisink & Kappen Fig. 4 reproduction on the SK model (N = 20, σ₁ = 0.1), fixed seeds.
//! Checks B_mf ≤ B_tm ≤ B_to ≤ log Z on every network and that the mean η_{mf→tm} falls with σ₂,
//! from above 0.8 at σ₂ = 0.25 (the paper's Fig. 4 is a plot; reference means from an independent
//! NumPy/SciPy run, 5 networks per σ₂ = 0.25 … 2.0: 0.88 / 0.65 / 0.44 / 0.31 / 0.21 / 0.14).

use occam_binary::bm::sk::{sk_reproduction, SkOptions};

#[test]
fn bm_sk_fig4_eta_decreases_and_bounds_are_ordered() {
    let o = SkOptions {
        networks: 8,
        with_tap: false,
        ..Default::default()
    };
    let r = sk_reproduction(&o).unwrap();
    for row in &r.rows {
        eprintln!(
            "sigma2 {:.2}: eta_mf_tm {:.3} eta_tm_to {:.3} gap_mf {:.3} gap_tm {:.3} gap_to {:.3}",
            row.sigma2, row.eta_mf_tm, row.eta_tm_to, row.gap_mf, row.gap_tm, row.gap_to
        );
        assert!(row.ordered, "ordering violated at sigma2 = {}", row.sigma2);
    }
    for n in &r.networks {
        assert!(
            n.b_mf <= n.b_tm && n.b_tm <= n.b_to && n.b_to <= n.log_z,
            "{n:?}"
        );
    }
    assert!(
        r.rows[0].eta_mf_tm > 0.8,
        "eta at 0.25 = {}",
        r.rows[0].eta_mf_tm
    );
    for w in r.rows.windows(2) {
        assert!(
            w[1].eta_mf_tm < w[0].eta_mf_tm,
            "eta not decreasing: {} -> {}",
            w[0].eta_mf_tm,
            w[1].eta_mf_tm
        );
    }
}
