//! The text and drawing of an ARD read-off ([`occam::latent::ard`]): the summary line of
//! `occam fit` and the Hinton diagram of the relevances.

use occam::latent::ard::Ard;

/// The summary line of an ARD variable, e.g.
/// `effective dimension 3 of 9 (alpha[Q] of W: 1/⟨alpha⟩ above a quarter of the largest: 0, 2, 6)`.
///
/// For regression weights ([`Ard::inputs`]): `ARD on the inputs of w (alpha[C]): |posterior
/// mean| / sd per input: 0: 12.3, 1: 0.41, …`.
pub fn summary_line(a: &Ard) -> String {
    if let Some(z) = &a.inputs {
        return format!(
            "ARD on the inputs of {} ({}[{}]): |posterior mean| / sd of each coefficient: {} (each input on its own scale: 1/⟨{}⟩ is not compared across inputs)",
            a.weights.join(", "),
            a.variable,
            a.plate,
            z.iter()
                .enumerate()
                .map(|(i, z)| format!("{i}: {z:.3}"))
                .collect::<Vec<_>>()
                .join(", "),
            a.variable
        );
    }
    let on: Vec<String> = a
        .effective
        .iter()
        .enumerate()
        .filter(|(_, &e)| e)
        .map(|(i, _)| i.to_string())
        .collect();
    format!(
        "effective dimension {} of {} ({}[{}] of {}: 1/⟨{}⟩ above a quarter of the largest: {})",
        a.effective_dimension,
        a.relevance.len(),
        a.variable,
        a.plate,
        a.weights.join(", "),
        a.variable,
        if on.is_empty() {
            "none".into()
        } else {
            on.join(", ")
        }
    )
}

/// A Hinton diagram of the relevances 1/⟨α⟩ (one row, one square per column of W).
pub fn relevance_hinton(a: &Ard) -> occam::Result<String> {
    crate::hinton::hinton(
        &format!(
            "1/⟨{}⟩ over {}: effective dimension {}",
            a.variable, a.plate, a.effective_dimension
        ),
        1,
        a.relevance.len(),
        &a.relevance,
    )
}
