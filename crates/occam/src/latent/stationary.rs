//! Test support for the hand-derived updates of the latent models: after a factor's update the
//! bound must be at a maximum in that factor's parameters, checked by central differences.

/// Asserts that `bound` is at a maximum along the coordinate `poke` moves (by ±h): the central
/// slope is below `tol` times the curvature (or 1), and the curvature is negative.
pub(crate) fn assert_maximum<M: Clone>(
    what: &str,
    m: &M,
    bound: &dyn Fn(&M) -> f64,
    h: f64,
    tol: f64,
    poke: &dyn Fn(&mut M, f64),
) {
    let b0 = bound(m);
    let mut up = m.clone();
    poke(&mut up, h);
    let mut down = m.clone();
    poke(&mut down, -h);
    let (bu, bd) = (bound(&up), bound(&down));
    let (g, curv) = ((bu - bd) / (2.0 * h), (bu + bd - 2.0 * b0) / (h * h));
    assert!(
        g.abs() < tol * curv.abs().max(1.0),
        "{what}: bound slope {g} (curvature {curv}) after its update"
    );
    assert!(curv < 0.0, "{what}: not a maximum (curvature {curv})");
}
