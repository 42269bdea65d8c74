//! Lowering of the chain q-blocks: `z[S] over T ~ MarkovChain(...)` to
//! [`Graph::markov_chain`] and `x[S] over T ~ GaussianMarkovChain(...)` to
//! [`Graph::gaussian_markov_chain`]. The IR gives the chain's plates with the time plate last and
//! its states (or state vector) as its event plate; the rows of `transition`/`dynamics` and the
//! per-dimension `noise` are gathered along the state plate; `lengths` comes from a data input
//! (or a constant) and is checked against the time plate here, with the data file's place. An
//! indexed parameter of a discrete chain (`transition = A[r]`, r per sequence) makes the chain's
//! parameters a mixture ([`Graph::markov_chain_mixture`]).
//! `control = B, inputs = u` lower to [`Graph::gaussian_markov_chain_with_inputs`] (u's values
//! read from its data table, B's rows the fifth parent).

use occam_core::dist::SlotInput;
use occam_core::prelude::*;
use occam_core::spec::ConstDomain;
use occam_lang::diag::Code;
use occam_lang::ir::{self, ConstValue, ExprOp};

use super::{Lowering, Use};
use crate::data::DataSet;
use crate::error::Result;

/// What each slot of a chain takes (the engine's parent slots, in the spec's order): a discrete
/// chain over `d` states, or a Gaussian one with state dimension `d`.
pub fn inputs(discrete: bool, d: usize) -> Vec<SlotInput> {
    if discrete {
        let dir = MomentKind::Dirichlet { k: d };
        vec![
            SlotInput::single(dir),
            SlotInput {
                kind: dir,
                stack: d,
            },
        ]
    } else {
        let g = MomentKind::Gaussian { d };
        vec![
            SlotInput::single(g),
            SlotInput::single(MomentKind::Wishart { d }),
            SlotInput { kind: g, stack: d },
            SlotInput {
                kind: MomentKind::Gamma,
                stack: d,
            },
        ]
    }
}

impl Lowering<'_> {
    /// Lowers chain variable `v` (a `Node::Stochastic` whose family is a chain).
    pub(super) fn chain(
        &mut self,
        v: usize,
        spec: &'static occam_core::spec::FamilySpec,
        args: &[ir::Arg],
        data: &DataSet,
    ) -> Result<NodeId> {
        let var = self.var(v).clone();
        if var.observed {
            return Err(self.src.error(
                Code::Misuse,
                var.span,
                format!("the chain `{}` cannot be observed", var.name),
                "observed chain",
                Some("observe its children (the emissions) instead".into()),
            ));
        }
        if let Some(ir::Init::Value(x)) = var.init {
            return Err(self.src.error(
                Code::Misuse,
                var.span,
                format!("the chain `{}` cannot start at the value {x}", var.name),
                "chain with a value as its start",
                Some(
                    "a chain starts from `prior` (its exact q given the parents' starts, the default) \
                     or `random` (a path drawn from the chain's prior)"
                        .into(),
                ),
            ));
        }
        let (&time, seq) = var.plates.split_last().expect("a chain has a time plate");
        let q = var.event_plates[0];
        let d = self.plate_size(q);
        let steps = self.plate_size(time);
        let n_seq: usize = seq.iter().map(|&p| self.plate_size(p)).product();
        let arg = |slot: &str| args.iter().find(|a| a.slot == slot);
        let lengths = match arg("lengths") {
            None => None,
            Some(a) => Some(self.chain_lengths(&var, a, n_seq, steps, data)?),
        };
        let discrete = spec.value == occam_core::spec::ValueKind::Categorical;
        let inputs = inputs(discrete, d);
        let mut parents = Vec::with_capacity(inputs.len());
        // A discrete chain's parameters may be a mixture over per-sequence Categoricals (`A[r]`),
        // read by the engine's chain itself; elsewhere an indexed parent is a gate.
        let mut selectors: Vec<(usize, usize)> = Vec::new();
        for (slot, input) in spec.slots.iter().zip(&inputs) {
            let Some(a) = arg(slot.name) else {
                return Err(self.src.error(
                    Code::MissingSlot,
                    var.span,
                    format!("`{}` needs an argument for `{}`", var.name, slot.name),
                    "missing argument",
                    None,
                ));
            };
            let u = Use {
                input: *input,
                stack_plate: (input.stack > 1).then_some(q),
                slot: &a.slot,
                domain: if slot.constant == ConstDomain::Never {
                    ConstDomain::Real
                } else {
                    slot.constant
                },
            };
            let sel = if discrete { Some(&mut selectors) } else { None };
            parents.push(self.arg(&a.value, u, v, sel)?);
        }
        let control = match (arg("control"), arg("inputs")) {
            (Some(b), Some(u)) if !discrete => {
                Some(self.chain_control(v, &var, b, u, q, d, n_seq * steps, data)?)
            }
            _ => None,
        };
        let plates = self.core_plates(seq);
        let t = self.plates[time];
        let built = if discrete {
            let chain = MarkovChain {
                k: d,
                time: t,
                lengths,
            };
            let ps: [ParentSpec; 2] = parents.try_into().expect("two slots");
            let sel: Vec<(NodeId, PlateId)> = selectors
                .iter()
                .map(|&(c, p)| {
                    (
                        self.nodes[c].expect("parents lowered first"),
                        self.plates[p],
                    )
                })
                .collect();
            self.has_mixture |= !sel.is_empty();
            self.g
                .markov_chain_mixture(&var.name, chain, &plates, &sel, ps)
        } else {
            let chain = GaussianMarkovChain {
                d,
                time: t,
                lengths,
            };
            match control {
                Some((p, u, b)) => {
                    parents.push(b);
                    let ps: [ParentSpec; 5] = parents.try_into().expect("five slots");
                    self.g
                        .gaussian_markov_chain_with_inputs(&var.name, chain, &plates, p, &u, ps)
                }
                None => {
                    let ps: [ParentSpec; 4] = parents.try_into().expect("four slots");
                    self.g.gaussian_markov_chain(&var.name, chain, &plates, ps)
                }
            }
        };
        let kind = if discrete {
            MomentKind::Categorical { k: d }
        } else {
            MomentKind::Gaussian { d }
        };
        let id = built.map_err(|e| self.slot_err(v, args, &e))?;
        match var.init {
            Some(ir::Init::Random { .. }) => self.g.initialize(id, Init::Random),
            Some(ir::Init::Prior) => self.g.initialize(id, Init::Prior),
            _ => {}
        }
        self.record(id, &var.name, v, kind, var.plates.clone());
        Ok(id)
    }

    /// `control = B, inputs = u` of a Gaussian chain with state dimension `d` and `n` (sequence,
    /// step) pairs: the input dimension P, u's values (sequences × steps × P, row-major as the
    /// data holds them) and B's rows as the chain's fifth parent.
    #[allow(clippy::too_many_arguments)]
    fn chain_control(
        &mut self,
        v: usize,
        var: &ir::Variable,
        b: &ir::Arg,
        u: &ir::Arg,
        q: usize,
        d: usize,
        n: usize,
        data: &DataSet,
    ) -> Result<(usize, Vec<f64>, ParentSpec)> {
        let ExprOp::Var(r) = &u.value.op else {
            return Err(self.unsupported(
                u.value.span,
                format!("inputs of `{}` must be data", var.name),
                "declare them as data: `data u[T] over P`",
            ));
        };
        let p = self.plate_size(self.model.variables[r.var].event_plates[0]);
        let Some(t) = data.tables.get(&r.name) else {
            return Err(self.src.error(
                Code::DataShape,
                u.value.span,
                format!("no data for the inputs `{}` of `{}`", r.name, var.name),
                "needs data",
                Some(format!("pass --data {}=FILE", r.name)),
            ));
        };
        if t.values.len() != n * p {
            return Err(self.src.error(
                Code::DataShape,
                u.value.span,
                format!(
                    "`{}` has {} value(s) but the inputs of `{}` need {} ({n} step(s) × {p})",
                    r.name,
                    t.values.len(),
                    var.name,
                    n * p
                ),
                "one input vector per step",
                None,
            ));
        }
        // Missing cells: the data input `u` itself refuses them (a located error) when lowered.
        let values = t.values.to_vec();
        let input = SlotInput {
            kind: MomentKind::Gaussian { d: p },
            stack: d,
        };
        let use_ = Use {
            input,
            stack_plate: Some(q),
            slot: &b.slot,
            domain: ConstDomain::Real,
        };
        let parent = self.arg(&b.value, use_, v, None)?;
        Ok((p, values, parent))
    }

    /// The sequence lengths from `lengths = L`: one non-negative integer per sequence, each at most
    /// the time plate's size.
    fn chain_lengths(
        &self,
        var: &ir::Variable,
        a: &ir::Arg,
        n_seq: usize,
        steps: usize,
        data: &DataSet,
    ) -> Result<Vec<usize>> {
        let time = &self.model.plates[*var.plates.last().expect("time plate")].name;
        match &a.value.op {
            ExprOp::Const(ConstValue::Scalar(x)) => Ok(vec![*x as usize; n_seq]),
            ExprOp::Var(r) => {
                let Some(t) = data.tables.get(&r.name) else {
                    return Err(self.src.error(
                        Code::DataShape,
                        a.value.span,
                        format!("no data for the lengths `{}` of `{}`", r.name, var.name),
                        "needs data",
                        Some(format!("pass --data {}=FILE", r.name)),
                    ));
                };
                if t.values.len() != n_seq {
                    return Err(self.src.error(
                        Code::DataShape,
                        a.value.span,
                        format!(
                            "`{}` has {} value(s) but `{}` has {n_seq} sequence(s)",
                            r.name,
                            t.values.len(),
                            var.name
                        ),
                        "one length per sequence",
                        None,
                    ));
                }
                t.values
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| {
                        if x >= 0.0 && x.fract() == 0.0 && x <= steps as f64 {
                            Ok(x as usize)
                        } else {
                            Err(t.error_at(
                                i,
                                format!(
                                    "length {x} of sequence {i} of `{}` must be an integer from 0 \
                                     to {steps} (the size of the time plate {time})",
                                    var.name
                                ),
                            ))
                        }
                    })
                    .collect()
            }
            _ => Err(self.unsupported(
                a.value.span,
                format!("lengths of `{}` must be data or a count", var.name),
                "declare them as data: `data L[S]`",
            )),
        }
    }
}
