//! Reading a network back: a saved network is a file a user can edit or truncate, so every length
//! and index the predictions rely on is checked before the network is used (a saved VB fit whose
//! θ is one value short would otherwise index past its end in the middle of a prediction).

use super::{Posterior, TrainedNet, MAX_COMPONENTS, MAX_HIDDEN};
use crate::bnn::entropy::Layout;
use crate::bnn::network::{Architecture, NetError};
use crate::bnn::prior::{Gamma, Prior};
use crate::bnn::vb::VbFit;

/// A saved network's inconsistency, as a setting error naming the field.
fn bad(name: &'static str, why: impl Into<String>) -> NetError {
    NetError::Setting {
        name,
        why: why.into(),
    }
}

fn finite(name: &'static str, v: &[f64]) -> Result<(), NetError> {
    match v.iter().position(|x| !x.is_finite()) {
        Some(i) => Err(bad(name, format!("value {} is not a finite number", i + 1))),
        None => Ok(()),
    }
}

fn len(name: &'static str, got: usize, expected: usize) -> Result<(), NetError> {
    if got == expected {
        Ok(())
    } else {
        Err(bad(
            name,
            format!("has {got} values, the network needs {expected}"),
        ))
    }
}

fn arch(a: &Architecture, inputs: usize) -> Result<(), NetError> {
    if a.inputs != inputs {
        return Err(bad(
            "arch.inputs",
            format!("is {}, the network has {inputs} inputs", a.inputs),
        ));
    }
    if a.hidden == 0 || a.hidden > MAX_HIDDEN {
        return Err(bad(
            "arch.hidden",
            format!("is {}, must be 1 to {MAX_HIDDEN}", a.hidden),
        ));
    }
    Ok(())
}

fn gammas(name: &'static str, g: &[Gamma]) -> Result<(), NetError> {
    match g
        .iter()
        .position(|g| !(g.a.is_finite() && g.a > 0.0 && g.b.is_finite() && g.b > 0.0))
    {
        Some(i) => Err(bad(
            name,
            format!("Gamma {} needs a finite positive shape and rate", i + 1),
        )),
        None => Ok(()),
    }
}

fn prior(p: &Prior, weights: usize, hypers: usize) -> Result<(), NetError> {
    len("prior.links", p.links.len(), weights)?;
    len("prior.hyper", p.hyper.len(), hypers)?;
    gammas("prior.hyper", &p.hyper)?;
    for (w, l) in p.links.iter().enumerate() {
        if l[0] >= hypers || (l[1] != usize::MAX && l[1] >= hypers) {
            return Err(bad(
                "prior.links",
                format!(
                    "weight {} links to a hyper-parameter the prior does not have",
                    w + 1
                ),
            ));
        }
    }
    Ok(())
}

fn vb(f: &VbFit, inputs: usize) -> Result<(), NetError> {
    arch(&f.arch, inputs)?;
    if f.components == 0 || f.components > MAX_COMPONENTS {
        return Err(bad(
            "components",
            format!("is {}, must be 1 to {MAX_COMPONENTS}", f.components),
        ));
    }
    let k = f.arch.n_weights();
    len("q", f.q.len(), f.components)?;
    finite("q", &f.q)?;
    let layout = Layout { m: f.components, k };
    len("theta", f.theta.len(), layout.len())?;
    finite("theta", &f.theta)?;
    prior(&f.prior, k, f.hyper.alpha.len())?;
    gammas("hyper.alpha", &f.hyper.alpha)?;
    gammas("hyper.beta", std::slice::from_ref(&f.hyper.beta))
}

impl TrainedNet {
    /// Checks a network read from a file: the scalings' and parameters' lengths match its
    /// architecture, every index is in range and every number the predictions use is finite.
    pub fn check_saved(&self) -> Result<(), NetError> {
        if self.inputs == 0 {
            return Err(bad("inputs", "must be at least 1"));
        }
        len("input_scale.mean", self.input_scale.mean.len(), self.inputs)?;
        len("input_scale.sd", self.input_scale.sd.len(), self.inputs)?;
        len("target_scale.mean", self.target_scale.mean.len(), 1)?;
        len("target_scale.sd", self.target_scale.sd.len(), 1)?;
        for (name, v) in [
            ("input_scale.mean", &self.input_scale.mean),
            ("input_scale.sd", &self.input_scale.sd),
            ("target_scale.mean", &self.target_scale.mean),
            ("target_scale.sd", &self.target_scale.sd),
        ] {
            finite(name, v)?;
        }
        if self
            .input_scale
            .sd
            .iter()
            .chain(&self.target_scale.sd)
            .any(|s| *s <= 0.0)
        {
            return Err(bad("scale", "standard deviations must be positive"));
        }
        match &self.posterior {
            Posterior::Vb(f) => vb(f, self.inputs),
            Posterior::Structure(s) => {
                if s.inputs.is_empty() || s.inputs.iter().any(|&c| c >= self.inputs) {
                    return Err(bad(
                        "inputs",
                        format!(
                            "the kept input columns must be among the {} inputs",
                            self.inputs
                        ),
                    ));
                }
                vb(&s.fit, s.inputs.len())
            }
            Posterior::Evidence(fits) => {
                if fits.is_empty() {
                    return Err(bad("posterior", "an evidence committee needs a network"));
                }
                for f in fits {
                    arch(&f.arch, self.inputs)?;
                    len("w", f.w.len(), f.arch.n_weights())?;
                    finite("w", &f.w)?;
                    prior(&f.prior, f.arch.n_weights(), f.alpha.len())?;
                }
                Ok(())
            }
            Posterior::Hmc(run) => {
                arch(&run.arch, self.inputs)?;
                if run.samples.is_empty() {
                    return Err(bad("samples", "HMC needs at least one sample"));
                }
                len("beta", run.beta.len(), run.samples.len())?;
                finite("beta", &run.beta)?;
                if run.beta.iter().any(|b| *b <= 0.0) {
                    return Err(bad("beta", "noise precisions must be positive"));
                }
                for s in &run.samples {
                    len("samples", s.len(), run.arch.n_weights())?;
                    finite("samples", s)?;
                }
                Ok(())
            }
            Posterior::EarlyStopping(f) => {
                arch(&f.arch, self.inputs)?;
                len("w", f.w.len(), f.arch.n_weights())?;
                finite("w", &f.w)
            }
        }
    }
}
