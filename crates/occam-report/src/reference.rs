//! The reference of every distribution and deterministic function, generated from the family
//! table in occam-core (each family's own declaration), so it cannot drift from what the language
//! accepts: `occam help distributions` prints it, and `docs/distributions.md` is a copy that a
//! test keeps equal to it.

use std::fmt::Write;

use occam_core::dist::FAMILIES;
use occam_core::engine::CHAINS;
use occam_core::factor::functions;
use occam_core::spec::{ConstDomain, EventShape, FamilySpec, SlotSpec, ValueKind};

/// The expected statistics (moments) a value of this kind sends to its children.
fn moments(v: ValueKind) -> &'static str {
    match v {
        ValueKind::Real => "⟨x⟩, ⟨x²⟩",
        ValueKind::Positive => "⟨x⟩, ⟨ln x⟩",
        ValueKind::Probability => "⟨ln p⟩, ⟨ln(1 − p)⟩",
        ValueKind::Vector => "⟨x⟩, ⟨x xᵀ⟩",
        ValueKind::Matrix => "⟨Λ⟩, ⟨ln |Λ|⟩",
        ValueKind::Simplex => "⟨ln p_k⟩",
        ValueKind::Categorical => "⟨δ(z = k)⟩ (one-hot probabilities)",
        ValueKind::Binary => "⟨x⟩",
        ValueKind::Count => "⟨x⟩",
    }
}

/// An example constant for a slot, or a parent's name.
fn example_arg(s: &SlotSpec) -> String {
    match s.constant {
        ConstDomain::Real => "0".into(),
        ConstDomain::Positive => "1".into(),
        ConstDomain::Probability => "0.5".into(),
        ConstDomain::Count => "10".into(),
        ConstDomain::Matrix => "identity".into(),
        ConstDomain::Never => format!("{}_parent", s.name),
    }
}

/// A model line using every slot by name.
fn example(f: &FamilySpec) -> String {
    let args: Vec<String> = f
        .slots
        .iter()
        .map(|s| format!("{} = {}", s.name, example_arg(s)))
        .collect();
    let over = match f.event {
        EventShape::Scalar => "",
        EventShape::Vector | EventShape::Matrix | EventShape::Categories => " over D",
    };
    format!("x[N]{over} ~ {}({})", f.name, args.join(", "))
}

fn slot_row(s: &SlotSpec) -> String {
    let parents = if s.kinds.is_empty() {
        "— (constant only)".to_string()
    } else {
        s.kinds
            .iter()
            .map(|k| k.describe())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let aliases = if s.aliases.is_empty() {
        "—".to_string()
    } else {
        s.aliases
            .iter()
            .map(|a| format!("`{a}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "| `{}` | {aliases} | {parents} | {} |",
        s.name,
        s.constant.describe()
    )
}

/// The reference as Markdown.
pub fn distributions() -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Distributions and functions of the Occam language\n");
    let _ = writeln!(
        s,
        "Generated from the family table (`occam help distributions`); every family declares this \
         in its own file under `crates/occam-core/src/dist/` (the chains in \
         `crates/occam-core/src/engine/chain/spec.rs`). A slot takes a constant, or a \
         variable of a kind listed (a conjugate parent, so variational message passing applies); \
         slots are written by name, by an alias, or by position.\n"
    );
    for f in FAMILIES.iter().chain(CHAINS) {
        let chain = CHAINS.contains(f);
        let _ = writeln!(s, "## {}\n", f.name);
        let mut summary = f.summary.chars();
        let first = summary.next().map(|c| c.to_uppercase().to_string());
        let _ = writeln!(s, "{}{}.\n", first.unwrap_or_default(), summary.as_str());
        if !f.aliases.is_empty() {
            let _ = writeln!(s, "Also written: {}.\n", f.aliases.join(", "));
        }
        let event = match f.event {
            _ if chain => {
                "one value per step of its `over` plate (the time plate, joint in q), over its \
                 sequences in `[...]`; the states (or the state plate) come from its parents"
            }
            EventShape::Scalar => "a scalar (no `over` plate)",
            EventShape::Vector => "a vector over its `over` plate",
            EventShape::Matrix => "a square matrix over its `over` plate",
            EventShape::Categories => {
                "one of the categories of its `over` plate (inferred from the probabilities)"
            }
        };
        let _ = writeln!(
            s,
            "- value: {}, {event}; moments sent to children: {}",
            f.value.describe(),
            moments(f.value)
        );
        if !f.params.is_empty() {
            let _ = writeln!(
                s,
                "- reported posterior parameters: {} (besides the moment summaries)",
                f.params.join(", ")
            );
        }
        if f.lowering_target {
            // Not written by users: no example, the same mark for every such family.
            let _ = writeln!(
                s,
                "- a lowering target, not written by users: the language puts it in place of \
                 the family written (see the summary)\n"
            );
        } else {
            let line = match f.name {
            "MarkovChain" => "z[S] over T ~ MarkovChain(initial = p0, transition = A, lengths = L)".to_string(),
            "GaussianMarkovChain" => "x[S] over T ~ GaussianMarkovChain(mean0 = 0, precision0 = identity, dynamics = A, noise = tau, lengths = L)".to_string(),
            // Examples that the generic constants (0, 1, …) would make invalid or unidiomatic.
            "TruncatedGaussian" => "mu ~ TruncatedGaussian(mean = 0, precision = 1, lower = 0, upper = 5)".to_string(),
            "GaussianMixture2" => "mu ~ GaussianMixture2(weight = 0.5, mean1 = -2, precision1 = 1, mean2 = 2, precision2 = 1)".to_string(),
            "StudentT" => "y[N] ~ StudentT(nu = 4, scale = 1, mean = mu)".to_string(),
            _ => example(f),
        };
            let _ = writeln!(s, "- example: `{line}`\n");
        }
        let _ = writeln!(s, "| slot | aliases | variable parents | constants |");
        let _ = writeln!(s, "|---|---|---|---|");
        for slot in f.slots {
            let _ = writeln!(s, "{}", slot_row(slot));
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "## Deterministic functions\n");
    let _ = writeln!(s, "| function | operator | arguments | what |");
    let _ = writeln!(s, "|---|---|---|---|");
    for f in functions() {
        let args = match f.max_args {
            Some(m) if m == f.min_args => m.to_string(),
            Some(m) => format!("{}–{m}", f.min_args),
            None => format!("{} or more", f.min_args),
        };
        let _ = writeln!(
            s,
            "| `{}` | {} | {args} | {} |",
            f.name,
            f.operator.map_or("—".to_string(), |o| format!("`{o}`")),
            f.summary
        );
    }
    let _ = writeln!(s, "\n## Link functions\n");
    let _ = writeln!(
        s,
        "Allowed only as the probability argument of a family, which becomes the listed \
         logit family (see docs/guide/12-beyond-conjugate.md).\n"
    );
    let _ = writeln!(s, "| function | in | becomes | what |");
    let _ = writeln!(s, "|---|---|---|---|");
    for l in occam_lang::catalog::LINKS {
        for (from, _, to) in l.families {
            let form = match *from {
                "Binomial" => format!("`{from}(n, {}(x))`", l.name),
                _ => format!("`{from}({}(x))`", l.name),
            };
            let _ = writeln!(s, "| `{}` | {form} | {to} | {} |", l.name, l.summary);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_and_function_is_listed() {
        let text = distributions();
        for f in FAMILIES.iter().chain(CHAINS) {
            assert!(text.contains(&format!("## {}\n", f.name)), "{}", f.name);
            for slot in f.slots {
                assert!(text.contains(&format!("| `{}` |", slot.name)));
            }
        }
        for f in functions() {
            assert!(text.contains(&format!("| `{}` |", f.name)), "{}", f.name);
        }
        for l in occam_lang::catalog::LINKS {
            assert!(text.contains(&format!("| `{}` |", l.name)), "{}", l.name);
        }
    }

    #[test]
    fn the_page_in_the_repository_is_the_generated_one() {
        let page =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/distributions.md");
        let on_disk = std::fs::read_to_string(&page).unwrap_or_default();
        assert!(
            on_disk == distributions(),
            "docs/distributions.md is out of date: regenerate it with \
             `cargo run -p occam-cli -- help distributions > docs/distributions.md`"
        );
    }
}
