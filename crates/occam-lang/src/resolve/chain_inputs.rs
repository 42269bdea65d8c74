//! A Gaussian chain's optional inputs, `x[S] over T ~ GaussianMarkovChain(..., control = B,
//! inputs = u)` for x_t = A x_{t−1} + B u_t + noise: checked as a pair, B one row per state over
//! an input plate P, u observed data over the chain's plates (sequences, then time) and P.

use super::expr::Ctx;
use super::{Resolver, Source};
use crate::ast;
use crate::catalog::{DistSpec, ValueKind};
use crate::diag::{Code, Diagnostic};
use crate::ir::{Arg, ExprOp};

impl Resolver<'_, '_> {
    /// `control = B, inputs = u` of a Gaussian chain (x_t = A x_{t−1} + B u_t + noise): both or
    /// neither; B a variable with one row per state (the state plate `q` among its plates), each
    /// over an input plate P; u observed data over the chain's plates (sequences, then time) and
    /// the same P.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn chain_inputs(
        &mut self,
        v: usize,
        spec: &DistSpec,
        dist: &ast::Ident,
        control: &[&ast::Arg],
        inputs: &[&ast::Arg],
        seq_plates: &[usize],
        time: usize,
        q: usize,
    ) -> Option<Vec<Arg>> {
        let name = self.vars[v].name.clone();
        if spec.value == ValueKind::Categorical {
            let a = control.first().or(inputs.first()).expect("one is given");
            self.error(
                Diagnostic::new(
                    Code::BadArguments,
                    a.span,
                    format!("{} `{name}` takes no control inputs", spec.name),
                )
                .label("not a slot of a discrete chain")
                .hint("inputs (`control = B, inputs = u`) belong to a GaussianMarkovChain"),
            );
            return None;
        }
        for (list, what) in [(control, "control"), (inputs, "inputs")] {
            if let [_, second, ..] = list {
                self.error(
                    Diagnostic::new(
                        Code::BadArguments,
                        second.span,
                        format!("`{what}` is given twice"),
                    )
                    .label("second value"),
                );
                return None;
            }
        }
        let plate_names = |r: &Self, ps: &[usize]| {
            ps.iter()
                .map(|&p| r.plates[p].name.clone())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let steps_plates: Vec<usize> = seq_plates.iter().copied().chain([time]).collect();
        let (c, u) = match (control.first(), inputs.first()) {
            (Some(c), Some(u)) => (*c, *u),
            (Some(c), None) => {
                self.error(
                    Diagnostic::new(
                        Code::BadArguments,
                        c.span,
                        format!("`control` of {} `{name}` needs its `inputs`", spec.name),
                    )
                    .label("control without inputs")
                    .hint(format!(
                        "give the observed inputs too: `control = B, inputs = u` with \
                         `data u[{}] over P`",
                        plate_names(self, &steps_plates)
                    )),
                );
                return None;
            }
            (None, Some(u)) => {
                self.error(
                    Diagnostic::new(
                        Code::BadArguments,
                        u.span,
                        format!("`inputs` of {} `{name}` need a `control` matrix", spec.name),
                    )
                    .label("inputs without control")
                    .hint(format!(
                        "add `control = B`, one row per state dimension: `B[{}] over P ~ \
                         GaussianARD(0, 1)` (or data)",
                        self.plates[q].name
                    )),
                );
                return None;
            }
            (None, None) => return Some(Vec::new()),
        };
        let b = self.expr(
            &c.value,
            &Ctx {
                owner: name.clone(),
                plates: seq_plates.to_vec(),
                extra: vec![q],
            },
        )?;
        let b_input = match &b.op {
            ExprOp::Var(r) if !r.is_mixture() && b.plates.contains(&q) => self.vars[r.var].event,
            _ => None,
        };
        let Some(p) = b_input else {
            self.error(
                Diagnostic::new(
                    Code::PlateMismatch,
                    b.span,
                    format!(
                        "control of {} `{name}` needs one row per state: a vector variable in \
                         plate {}",
                        spec.name,
                        self.plate_desc(q)
                    ),
                )
                .label("not rows over the state plate")
                .hint(format!(
                    "declare the rows over the input plate, e.g. `B[{}] over P ~ GaussianARD(0, 1)`",
                    self.plates[q].name
                )),
            );
            return None;
        };
        let ue = self.expr(
            &u.value,
            &Ctx {
                owner: name.clone(),
                plates: steps_plates.clone(),
                extra: Vec::new(),
            },
        )?;
        let want = format!(
            "`data u[{}] over {}`",
            plate_names(self, &steps_plates),
            self.plates[p].name
        );
        let bad = match &ue.op {
            ExprOp::Var(r) if !matches!(self.vars[r.var].source, Source::Data) => Some(format!(
                "inputs of {} `{name}` must be observed data: `{}` is not",
                spec.name, r.name
            )),
            ExprOp::Var(r)
                if r.is_mixture()
                    || self.vars[r.var].plates != steps_plates
                    || self.vars[r.var].event != Some(p) =>
            {
                Some(format!(
                    "inputs `{}` of {} `{name}` must be over the chain's plates [{}] and the \
                     control's input plate {}",
                    r.name,
                    spec.name,
                    plate_names(self, &steps_plates),
                    self.plate_desc(p)
                ))
            }
            ExprOp::Var(_) => None,
            _ => Some(format!(
                "inputs of {} `{name}` must be observed data",
                spec.name
            )),
        };
        if let Some(what) = bad {
            self.error(
                Diagnostic::new(Code::BadArguments, ue.span, what)
                    .label("not the chain's inputs")
                    .note(dist.span, format!("the chain `{name}`"))
                    .hint(format!("declare the inputs as {want}")),
            );
            return None;
        }
        Some(vec![
            Arg {
                slot: "control".into(),
                value: b,
            },
            Arg {
                slot: "inputs".into(),
                value: ue,
            },
        ])
    }
}
