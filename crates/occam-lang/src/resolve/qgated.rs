//! The gated q-block: `q joint(s, x)` over a mixture index `s` and the GaussianARD vectors `x`
//! it gates (a mixture of Bayesian PCA, Winn §3.3): q(x_n, s_n = k) = r_nk N(x_nk | m_nk, Σ_k),
//! the core's gated linear block (`Graph::gated_q`).
//!
//! Checked here, at the statement: the block names one Categorical and one GaussianARD, and
//! the GaussianARD is replicated over the plate the Categorical takes values in (one vector per
//! component). The rest of the layout (`x` read by one `dot(W, x)`, that dot by one `+ mu`, that
//! sum by one mixture over `s`) is the engine's to check, and the lowering places its error at
//! the statement too.

use std::collections::HashMap;

use super::Resolver;
use crate::ast;
use crate::diag::{Code, Diagnostic};
use crate::ir;
use crate::span::Span;

const HINT: &str = "`q joint(s, x)` names a mixture index `s[N] ~ Categorical(pi)` and the \
                    vectors `x[N, K] over Q ~ GaussianARD(0, 1)` it gates through \
                    `m[N, K, D] = dot(W, x) + mu`, `t[N, D] ~ Gaussian(m[N, s], tau)`";

impl Resolver<'_, '_> {
    /// A block with a GaussianARD member: the gated block, once its two members are checked.
    pub(super) fn gated_structure(
        &mut self,
        q: &ast::QDecl,
        members: &[(usize, Span)],
    ) -> Option<ir::QBlock> {
        let by_family: HashMap<&str, Vec<(usize, Span)>> =
            members.iter().fold(HashMap::new(), |mut acc, &(m, span)| {
                let family = self.vars[m].dist.map_or("", |d| d.name);
                acc.entry(family).or_default().push((m, span));
                acc
            });
        let one = |family: &str| match by_family.get(family).map(Vec::as_slice) {
            Some(&[only]) => Some(only),
            _ => None,
        };
        let (Some((s, _)), Some((x, x_span)), 2) =
            (one("Categorical"), one("GaussianARD"), members.len())
        else {
            self.error(
                Diagnostic::new(
                    Code::Misuse,
                    q.span,
                    "a q-block with a GaussianARD holds one Categorical and the one GaussianARD \
                     it gates, nothing else",
                )
                .label("the q-block")
                .hint(HINT),
            );
            return None;
        };
        let categories = self.vars[s].event;
        if let Some(k) = categories.filter(|k| !self.vars[x].plates.contains(k)) {
            let (xn, sn, kn) = (
                self.vars[x].name.clone(),
                self.vars[s].name.clone(),
                self.plates[k].name.clone(),
            );
            self.error(
                Diagnostic::new(
                    Code::Misuse,
                    x_span,
                    format!(
                        "`{xn}` is not replicated over {kn}, the plate `{sn}` takes values in: \
                         the gated block keeps one vector per component"
                    ),
                )
                .label(format!("not over {kn}"))
                .note(self.vars[x].name_span, format!("`{xn}` declared here"))
                .hint(HINT),
            );
            return None;
        }
        Some(ir::QBlock {
            members: vec![s, x],
            evidence: Vec::new(),
            span: q.span,
            kind: ir::QKind::Gated,
        })
    }
}
