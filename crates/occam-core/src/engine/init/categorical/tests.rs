//! The Categorical start from given moments: each row's q is φ = ln u with A = A(φ), the family's
//! own log-partition; a one-hot row's shortcut (the point mass written directly) gives the same bits.

use crate::prelude::*;

/// Rows of given moments for z (K = 3): one-hot rows (one with a −0), soft rows (one with a zero)
/// and a row that is not one-hot though its entries are 0 and 1 (two ones).
const GIVEN: [[f64; 3]; 6] = [
    [0.0, 1.0, 0.0],
    [1.0, 0.0, 0.0],
    [0.2, 0.3, 0.5],
    [-0.0, 0.0, 1.0],
    [1.0, 1.0, 0.0],
    [0.5, 0.0, 0.5],
];

/// Which rows of [`GIVEN`] are one-hot.
const ONE_HOT: [bool; 6] = [true, true, false, true, false, false];

/// A Gaussian mixture x[N] ~ N(μ_z, τ⁻¹) with N = 6 and K = 3, z[N] ~ Cat(α), started from
/// `given` moments.
fn started(given: &[f64]) -> Result<(Vmp, NodeId), RunError> {
    let (n, k) = (GIVEN.len(), 3);
    let mut g = Graph::new();
    let np = g.plate("N", n);
    let kp = g.plate("K", k);
    let concentration = vec![1.0; k];
    let alpha = g
        .add("alpha", Dirichlet { concentration }, &[], [])
        .unwrap();
    let z = g.add("z", Categorical { k }, &[np], [p(alpha)]).unwrap();
    let mu = g.add("mu", Gaussian, &[kp], [c(0.0), c(0.05)]).unwrap();
    let tau = g.add("tau", Gamma { shape: 2.0 }, &[kp], [c(1.0)]).unwrap();
    let x = g
        .add_mixture("x", Gaussian, &[np], &[(z, kp)], [p(mu), p(tau)])
        .unwrap();
    let xs: Vec<f64> = (0..n).map(|i| 3.0 * i as f64).collect();
    g.observe(x, &xs).unwrap();
    g.initialize(z, Init::Moments(given.to_vec()));
    let mut vmp = g.compile().unwrap();
    vmp.initialize(1)?;
    Ok((vmp, z))
}

/// Every row, one-hot or not, holds u = the given moments, φ = ln u and A = the Categorical's own
/// A(ln u) (its softmax), compared bit for bit; the one-hot rows' A is +0 and their own term
/// (the entropy) exactly 0.
#[test]
fn given_moments_start_each_row_at_phi_ln_u_and_its_log_partition() {
    let given: Vec<f64> = GIVEN.concat();
    let (vmp, z) = started(&given).unwrap();
    let q = &vmp.nodes[z.0].q;
    assert_eq!(q.phi.len(), given.len(), "φ is held after the start");
    let family = Categorical { k: 3 };
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for (e, row) in GIVEN.iter().enumerate() {
        let r = e * 3..(e + 1) * 3;
        let phi: Vec<f64> = row.iter().map(|v| v.ln()).collect();
        let a = family.moments(&phi, &mut [0.0; 3]).unwrap();
        assert_eq!(bits(&q.u[r.clone()]), bits(row), "row {e}: u");
        assert_eq!(bits(&q.phi[r.clone()]), bits(&phi), "row {e}: φ");
        assert_eq!(q.a[e].to_bits(), a.to_bits(), "row {e}: A");
        if ONE_HOT[e] {
            assert_eq!(
                q.a[e].to_bits(),
                0.0f64.to_bits(),
                "row {e}: A of a point mass"
            );
            assert_eq!(family.own_term(&q.phi[r.clone()], &q.u[r], q.a[e]), 0.0);
        }
    }
    // The rows that are not one-hot: A = ln Σ u (ln 1 for the soft rows, ln 2 for two ones).
    for (e, want) in [(2, 0.0), (4, 2f64.ln()), (5, 0.0)] {
        assert!((q.a[e] - want).abs() < 1e-15, "row {e}: A {}", q.a[e]);
    }
}

/// Repeated soft rows (a uniform start repeats one row n times) take the previous row's φ and A
/// only when their bits are the same: every row still equals its own φ = ln u and A(ln u), bit
/// for bit, through runs, a return to an earlier row, and a row that differs by a zero's sign.
#[test]
fn repeated_rows_start_at_their_own_phi_and_log_partition() {
    let rows: [[f64; 3]; 6] = [
        [0.2, 0.3, 0.5],
        [0.2, 0.3, 0.5],
        [0.5, 0.0, 0.5],
        [0.5, -0.0, 0.5],
        [0.5, -0.0, 0.5],
        [0.2, 0.3, 0.5],
    ];
    let given: Vec<f64> = rows.concat();
    let (vmp, z) = started(&given).unwrap();
    let q = &vmp.nodes[z.0].q;
    let family = Categorical { k: 3 };
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for (e, row) in rows.iter().enumerate() {
        let r = e * 3..(e + 1) * 3;
        let phi: Vec<f64> = row.iter().map(|v| v.ln()).collect();
        let a = family.moments(&phi, &mut [0.0; 3]).unwrap();
        assert_eq!(bits(&q.u[r.clone()]), bits(row), "row {e}: u");
        assert_eq!(bits(&q.phi[r]), bits(&phi), "row {e}: φ");
        assert_eq!(q.a[e].to_bits(), a.to_bits(), "row {e}: A");
    }
}

/// A row of zeros has no q (ln 0 everywhere: no category left): the start is an error that names
/// the node and the element; the one-hot rows before it do not stop it.
#[test]
fn an_all_zero_row_is_an_error_naming_its_element() {
    let mut given: Vec<f64> = GIVEN.concat();
    given[12..15].copy_from_slice(&[0.0; 3]);
    match started(&given).err() {
        Some(RunError::Numerical { node, element, .. }) => {
            assert_eq!((node.as_str(), element), ("z", 4));
        }
        other => panic!("expected a numerical error at z[4], got {other:?}"),
    }
}
