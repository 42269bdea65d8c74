//! Importance-sampled nodes (Winn §4.4; engine `sampled`): what the language allows around
//! them, checked before lowering with located errors. A `StudentT` variable must be observed
//! (it is Winn's observed non-exponential-family node Z, whose value weights the samples of its
//! mean), and its mean must be one unselected variable whose q the engine samples: a
//! `Gaussian`, `TruncatedGaussian` or `GaussianMixture2` variable (not an expression, whose
//! parents would each need sampling).

use occam_lang::diag::Code;
use occam_lang::ir::{ExprOp, Model, Node};

use super::SourceRef;
use crate::error::Result;

/// The families whose q the sampler can hold as the mean of Student-t values.
const SAMPLED_MEANS: &[&str] = &["Gaussian", "TruncatedGaussian", "GaussianMixture2"];

/// A located error for a Student-t variable that is latent or whose mean is not one scalar
/// Gaussian-family variable (module docs).
pub(super) fn check(model: &Model, src: SourceRef<'_>) -> Result<()> {
    for var in &model.variables {
        let Node::Stochastic { distribution, args } = &var.node else {
            continue;
        };
        // `FamilySpec::observed_only` marks the families whose values weight samples (StudentT).
        if !occam_core::dist::family(distribution).is_some_and(|f| f.observed_only) {
            continue;
        }
        if !var.observed {
            return Err(src.error(
                Code::Misuse,
                var.span,
                format!("`{}` is Student-t distributed but not observed", var.name),
                "latent Student-t",
                Some(
                    "a `StudentT` variable weights the importance samples of its mean, so it \
                     must be data (`observe NAME`); for a latent heavy-tailed variable write \
                     the scale mixture `lam ~ Gamma(nu * 0.5, nu * 0.5)`, \
                     `x ~ Gaussian(m, tau * lam)` (guide ch. 12)"
                        .into(),
                ),
            ));
        }
        let Some(mean) = args.iter().find(|a| a.slot == "mean").map(|a| &a.value) else {
            continue;
        };
        let family = match &mean.op {
            ExprOp::Var(r) if !r.is_mixture() => match &model.variables[r.var].node {
                Node::Stochastic { distribution, .. } => {
                    occam_core::dist::family(distribution).map(|f| f.name)
                }
                _ => None,
            },
            _ => None,
        };
        if !family.is_some_and(|f| SAMPLED_MEANS.contains(&f)) {
            return Err(src.error(
                Code::Misuse,
                mean.span,
                format!(
                    "the mean of `{}` must be one `Gaussian`, `TruncatedGaussian` or \
                     `GaussianMixture2` variable: its q is importance sampled",
                    var.name
                ),
                "not a sampled variable",
                Some(
                    "declare the mean as its own variable (`mu ~ Gaussian(0, 0.01)`) and write \
                     `StudentT(nu, scale, mean = mu)`"
                        .into(),
                ),
            ));
        }
    }
    Ok(())
}
