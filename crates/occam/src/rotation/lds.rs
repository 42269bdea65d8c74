//! Rotations of a linear dynamical system's state space (BayesPy's `RotateGaussianMarkovChain`
//! with `RotateGaussianARD` for the dynamics and the emission): after every sweep, x_t → R x_t,
//! A → R A R⁻¹ and C → C R⁻¹ jointly, with R chosen by the same L-BFGS as the PCA rotation to
//! maximise the exact bound ([`super::lds_objective`]).
//!
//! Applicable (checked on the model, a located error otherwise): `dot(C, x)` (either order) with x
//! a `GaussianMarkovChain` without inputs, read only there, and C a latent GaussianARD/MvGaussian
//! vector over x's state plate, read only there; x's `dynamics` a latent `A[D] over D ~
//! GaussianARD(...)` over the state plate, read only by x. ARD precisions of A and C over the
//! state plate (`GaussianARD(mean = 0, precision = alpha)`, `alpha` used only there) are
//! re-optimised with R; any other prior of A must have zero mean and one precision for all rows,
//! and is held, as are x_0's prior and the noise precisions (which keeps the change exact).

use occam_core::engine::Vmp;
use occam_core::error::RunError;
use occam_core::graph::NodeId;
use occam_core::linalg::{inverse_and_log_det, transpose};
use occam_lang::ir::{Expr, ExprOp, Node};

use super::lds_objective::{self, Dynamics, Lds, RowPrior};
use super::{best_rotation, Factor, NotRotatable, Product, Scan};

/// A linear dynamical system rotated as a whole (see the module doc).
#[derive(Clone, Debug)]
pub struct ChainRotation {
    /// The chain x.
    pub(super) chain: Factor,
    /// The dynamics A, with its ARD precision.
    pub(super) dynamics: Factor,
    /// The emission C, with its ARD precision.
    pub(super) emission: Factor,
    /// The state dimension.
    pub(super) d: usize,
}

/// Whether variable v is a Gaussian Markov chain.
fn is_chain(scan: &Scan<'_>, v: usize) -> bool {
    let spec = occam_core::engine::GAUSSIAN_MARKOV_CHAIN;
    matches!(&scan.loaded.model.variables[v].node,
        Node::Stochastic { distribution, .. } if spec.is_named(distribution))
}

/// The product's chain operand and its other operand, if one of `a`, `b` is a Gaussian chain.
pub(super) fn chain_operand<'e>(
    scan: &Scan<'_>,
    a: &'e Expr,
    b: &'e Expr,
) -> Option<(&'e Expr, &'e Expr)> {
    let chain = |e: &Expr| matches!(&e.op, ExprOp::Var(r) if is_chain(scan, r.var));
    if chain(b) {
        Some((b, a))
    } else if chain(a) {
        Some((a, b))
    } else {
        None
    }
}

/// The chain rotation of `dot(C, x)`, given (x, C); or why it cannot be rotated.
pub(super) fn detect(
    scan: &Scan<'_>,
    (x, c): (&Expr, &Expr),
) -> std::result::Result<ChainRotation, NotRotatable> {
    let m = &scan.loaded.model;
    let ExprOp::Var(xr) = &x.op else {
        unreachable!("chain_operand gives a variable")
    };
    let (xv, var) = (xr.var, &m.variables[xr.var]);
    let Node::Stochastic { args, .. } = &var.node else {
        unreachable!("a chain is stochastic")
    };
    if xr.is_mixture() || scan.uses[xv] != 1 {
        return Err(NotRotatable::SharedChain {
            place: scan.place(xv),
            uses: scan.uses[xv],
        });
    }
    let arg = |slot: &str| args.iter().find(|a| a.slot == slot).map(|a| &a.value);
    if arg("control").is_some() || arg("inputs").is_some() {
        return Err(NotRotatable::ChainInputs {
            place: scan.place(xv),
        });
    }
    let state = var.event_plates[0];
    let (cv, plate) = scan.factor(c)?;
    if plate != state {
        return Err(NotRotatable::NotOverState {
            place: scan.place(cv),
        });
    }
    let Some(ExprOp::Var(ar)) = arg("dynamics").map(|e| &e.op) else {
        return Err(NotRotatable::DynamicsNotVariable {
            place: scan.place(xv),
        });
    };
    let a = &m.variables[ar.var];
    let gaussian = matches!(&a.node, Node::Stochastic { distribution, .. }
        if distribution == "GaussianARD" || distribution == "MvGaussian");
    if !gaussian
        || a.plates != [state]
        || a.event_plates != [state]
        || ar.is_mixture()
        || a.observed
        || a.map
        || scan.uses[ar.var] != 1
    {
        return Err(NotRotatable::Dynamics {
            place: scan.place(ar.var),
            name: a.name.clone(),
        });
    }
    Ok(ChainRotation {
        chain: scan.make(xv, state),
        dynamics: scan.make(ar.var, state),
        emission: scan.make(cv, state),
        d: m.plates[state].size as usize,
    })
}

impl ChainRotation {
    /// Its name: `C·x, A`.
    pub fn name(&self) -> String {
        format!(
            "{}·{}, {}",
            self.emission.name, self.chain.name, self.dynamics.name
        )
    }

    /// q(A) as the objective reads it.
    fn dynamics(&self, vmp: &Vmp) -> std::result::Result<Dynamics, RunError> {
        let d = self.d;
        let u = vmp.moments(self.dynamics.node);
        let row = d + d * d;
        let mean: Vec<f64> = u.chunks_exact(row).flat_map(|r| r[..d].to_vec()).collect();
        let covs = u
            .chunks_exact(row)
            .map(|r| (0..d * d).map(|k| r[d + k] - r[k / d] * r[k % d]).collect())
            .collect();
        // Every row's prior precision must be the same (ARD over the columns, or one constant).
        let phi_a = vmp.prior_natural(self.dynamics.node)?;
        let second0 = &phi_a[d..row];
        if !phi_a.chunks_exact(row).all(|p| p[d..] == *second0) {
            return Err(RunError::Schedule(format!(
                "`{}`: its rows' prior precisions differ; it cannot be rotated",
                self.dynamics.name
            )));
        }
        let prior = match self.dynamics.ard {
            Some(alpha) => {
                // A Gamma's ⟨φ_p⟩ = [−⟨b⟩, a − 1].
                let phi = vmp.prior_natural(alpha)?;
                RowPrior::Ard {
                    shape: phi.chunks_exact(2).map(|p| p[1] + 1.0).collect(),
                    rate: phi.chunks_exact(2).map(|p| -p[0]).collect(),
                }
            }
            None => {
                if phi_a
                    .chunks_exact(row)
                    .any(|p| p[..d].iter().any(|&v| v != 0.0))
                {
                    return Err(RunError::Schedule(format!(
                        "`{}`: its rows' prior has a non-zero mean; it cannot be rotated",
                        self.dynamics.name
                    )));
                }
                RowPrior::Held {
                    second: second0.to_vec(),
                }
            }
        };
        Ok(Dynamics { mean, covs, prior })
    }

    /// Everything the objective reads, from the engine's current state.
    pub(super) fn lds(&self, vmp: &Vmp) -> std::result::Result<Lds, RunError> {
        Ok(Lds {
            chain: vmp.gaussian_chain_sums(self.chain.node)?,
            dynamics: self.dynamics(vmp)?,
            emission: Product::side(vmp, &self.emission)?,
        })
    }

    /// Applies R: x → R x, A → R A R⁻¹ (rows kept as marginals), C → C R⁻¹.
    pub(super) fn apply(&self, vmp: &mut Vmp, r: &[f64]) -> std::result::Result<(), RunError> {
        let d = self.d;
        let (r_inv, _) = inverse_and_log_det(r, d).ok_or_else(|| RunError::Numerical {
            node: self.chain.name.clone(),
            element: 0,
            what: "the rotation is not invertible".into(),
        })?;
        let r_inv_t = transpose(&r_inv, d, d);
        vmp.transform_gaussian_chain(self.chain.node, r)?;
        vmp.mix_gaussian_rows(self.dynamics.node, r, &r_inv_t)?;
        vmp.transform_gaussian(self.emission.node, &r_inv_t)
    }

    /// The ARD precisions re-optimised with R.
    fn ard(&self) -> impl Iterator<Item = NodeId> {
        [self.dynamics.ard, self.emission.ard].into_iter().flatten()
    }

    /// One rotation: R by L-BFGS from the identity, applied, and the ARD precisions re-updated.
    /// Returns the rise of the bound the objective predicts (0 when no rotation improves it; then
    /// nothing is changed).
    pub fn step(&self, vmp: &mut Vmp) -> std::result::Result<f64, RunError> {
        let lds = self.lds(vmp)?;
        let Some((r, gain)) = best_rotation(self.d, |r| lds_objective::bound(&lds, r)) else {
            return Ok(0.0);
        };
        self.apply(vmp, &r)?;
        for alpha in self.ard() {
            vmp.update(alpha)?;
        }
        Ok(gain)
    }
}

#[cfg(test)]
mod tests;
