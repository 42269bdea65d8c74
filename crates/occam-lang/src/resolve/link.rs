//! Link functions in a family's probability (or rate) slot: `Bernoulli(sigmoid(x))` and
//! `Binomial(n, sigmoid(x))` are the logit-parameterised families `BernoulliLogitQuad(x)` and
//! `BinomialLogitQuad(n, x)` of the engine (exact expectations by quadrature), `sigmoid_jj` the
//! Jaakkola–Jordan ones `BernoulliLogit`/`BinomialLogit`, `Poisson(exp(x))` the log-link
//! `PoissonLog(x)`, `Categorical(softmax(x))` `CategoricalSoftmaxQuad(x)` (exact by quadrature for
//! K ≤ 3, Böhning's bound beyond; `softmax_quad` is the same), `softmax_bohning` Böhning's
//! `CategoricalSoftmax(x)` for every K. A link is allowed
//! there only; anywhere else it gets a located error that says where it may go.

use super::Resolver;
use crate::ast::{self, ExprKind};
use crate::catalog::{self, DistSpec};
use crate::diag::{Code, Diagnostic};

/// The guide chapter on non-conjugate factors, named by the errors.
pub(super) const GUIDE: &str = "docs/guide/12-beyond-conjugate.md";

impl Resolver<'_, '_> {
    /// If the probability argument of `spec` is a link function call, the logit family and the
    /// arguments with the call replaced by its argument (named as that family's slot if it was
    /// named);
    /// `Err` after reporting a malformed call.
    pub(super) fn link(
        &mut self,
        spec: &'static DistSpec,
        args: &[ast::Arg],
    ) -> Result<Option<(&'static DistSpec, Vec<ast::Arg>)>, ()> {
        Ok(match self.linked(spec, args) {
            Some(Some(found)) => Some(found),
            Some(None) => return Err(()),
            None => None,
        })
    }

    /// `link`'s search: `None` for no link call, `Some(None)` for a malformed one.
    #[allow(clippy::option_option)]
    fn linked(
        &mut self,
        spec: &'static DistSpec,
        args: &[ast::Arg],
    ) -> Option<Option<(&'static DistSpec, Vec<ast::Arg>)>> {
        let (func, inner, i, target, slot) = self.link_call(spec, args)?;
        if inner.len() != 1 || inner[0].name.is_some() {
            self.error(
                Diagnostic::new(
                    Code::BadArguments,
                    args[i].value.span,
                    format!("`{}` takes one positional argument", func.name),
                )
                .label("one argument: a Gaussian expression")
                .hint(format!(
                    "write `{}({}(x))` with x a Gaussian expression; see {GUIDE}",
                    spec.name, func.name
                )),
            );
            return Some(None);
        }
        let mut out = args.to_vec();
        out[i] = ast::Arg {
            name: args[i].name.as_ref().map(|n| ast::Ident {
                name: slot.to_string(),
                span: n.span,
            }),
            value: inner[0].value.clone(),
            span: args[i].span,
        };
        Some(Some((target, out)))
    }

    /// The link call in `spec`'s probability argument, if any: the function, its arguments,
    /// the argument's position, the family the link makes of `spec` and that family's name of
    /// the slot.
    fn link_call<'a>(
        &self,
        spec: &'static DistSpec,
        args: &'a [ast::Arg],
    ) -> Option<(
        &'a ast::Ident,
        &'a [ast::Arg],
        usize,
        &'static DistSpec,
        &'static str,
    )> {
        // Every link a family has fills the same slot; the call's name picks the link.
        let (_, slot, _) = catalog::LINKS
            .iter()
            .flat_map(|l| l.families.iter())
            .find(|(from, _, _)| *from == spec.name)?;
        let (pos, _) = spec.slot(slot)?;
        let i = args.iter().position(|a| match &a.name {
            Some(n) => spec.slot(&n.name).is_some_and(|(k, _)| k == pos),
            None => false,
        });
        let i = i.or_else(|| {
            let positional = args.iter().take_while(|a| a.name.is_none()).count();
            (pos < positional).then_some(pos)
        })?;
        let ExprKind::Call { func, args: inner } = &args[i].value.kind else {
            return None;
        };
        let to = catalog::LINKS
            .iter()
            .filter(|l| l.name == func.name)
            .flat_map(|l| l.families.iter())
            .find(|(from, _, _)| *from == spec.name)
            .map(|&(_, _, to)| to)?;
        let target = catalog::distribution(to)?;
        let renamed = target.slots.get(pos)?.name;
        Some((func, inner.as_slice(), i, target, renamed))
    }

    /// The error for a link function met as an ordinary function (outside a probability slot).
    pub(super) fn misplaced_link(&self, func: &ast::Ident) -> Option<Diagnostic> {
        let link = catalog::LINKS.iter().find(|l| l.name == func.name)?;
        let (name, families) = (link.name, link.families);
        let what = if families[0].1 == "rate" {
            "rate"
        } else {
            "probability"
        };
        let forms = families
            .iter()
            .map(|(from, _, _)| match *from {
                "Binomial" => format!("`{from}(n, {name}(x))`"),
                _ => format!("`{from}({name}(x))`"),
            })
            .collect::<Vec<_>>()
            .join(" or ");
        Some(
            Diagnostic::new(
                Code::Misuse,
                func.span,
                format!("`{name}` is allowed only as the {what} of a distribution"),
            )
            .label(format!("not inside a {what} slot"))
            .hint(format!(
                "write {forms} with x a Gaussian expression; see {GUIDE}"
            )),
        )
    }
}
