//! What a bound term is: the ELBO's own expectation, a lower bound on it, or an estimate of it.
//! Every family declares the kind of its term ([`super::ExpFamily::bound_quality`]); a node's
//! term has its family's kind, and a model's bound the worst kind among its nodes (an estimate
//! over a bound over an exact term). `occam compare` ranks models only when their bounds are of
//! one kind: a Jaakkola–Jordan bound sits below the ELBO it bounds, so beside an exact ELBO its
//! model is penalised by the looseness of the bound, not by the evidence.

use std::fmt;

/// The kind of a bound term (module docs), ordered from best to worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BoundQuality {
    /// The ELBO's own expectation ⟨ln p⟩ − ⟨ln q⟩, in closed form or by a deterministic
    /// quadrature whose error is below 1e-9 (the logit families' Gauss–Hermite/Legendre rule).
    Exact,
    /// A true lower bound on that expectation (a local variational bound: Jaakkola–Jordan,
    /// Böhning): the total stays below the log evidence, by more than the ELBO does.
    LowerBound,
    /// An estimate (importance sampling): neither equal to nor guaranteed below the ELBO.
    Approximate,
}

impl BoundQuality {
    /// The name reports print: `exact`, `lower bound`, `approximate`.
    pub fn name(self) -> &'static str {
        match self {
            BoundQuality::Exact => "exact",
            BoundQuality::LowerBound => "lower bound",
            BoundQuality::Approximate => "approximate",
        }
    }

    /// The kind of a sum of terms of these kinds: the worst of them (`Exact` for none).
    pub fn total(kinds: impl IntoIterator<Item = BoundQuality>) -> BoundQuality {
        kinds.into_iter().max().unwrap_or(BoundQuality::Exact)
    }
}

impl fmt::Display for BoundQuality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::BoundQuality::*;
    use super::*;

    #[test]
    fn the_total_is_the_worst_kind() {
        assert_eq!(BoundQuality::total([]), Exact);
        assert_eq!(BoundQuality::total([Exact, Exact]), Exact);
        assert_eq!(BoundQuality::total([Exact, LowerBound, Exact]), LowerBound);
        assert_eq!(BoundQuality::total([Approximate, LowerBound]), Approximate);
        assert_eq!(LowerBound.to_string(), "lower bound");
    }
}
