//! A readable posterior summary.

use std::fmt::Write;

use occam_core::prelude::*;

use crate::driver::Outcome;
use crate::lower::Compiled;
use crate::model::Loaded;
use crate::report::json::{distribution, role};

/// Elements shown per variable before eliding.
const SHOW: usize = 12;

fn num(x: f64) -> String {
    if x == 0.0 || (1e-3..1e5).contains(&x.abs()) {
        format!("{x:.4}")
    } else {
        format!("{x:.3e}")
    }
}

/// `x[N, D] over Q`.
pub fn signature(loaded: &Loaded, v: usize) -> String {
    let var = &loaded.model.variables[v];
    let mut s = var.name.clone();
    if !var.plates.is_empty() {
        s.push_str(&format!(
            "[{}]",
            loaded.model.plate_names(&var.plates).join(", ")
        ));
    }
    if let Some(&q) = var.event_plates.first() {
        s.push_str(&format!(" over {}", loaded.model.plates[q].name));
    }
    s
}

/// One line per element (or a digest) of the posterior of node `node`.
fn describe(c: &Compiled, node: NodeId) -> Vec<String> {
    let vmp = &c.vmp;
    let kind = vmp.kind(node);
    let n = vmp.elements(node);
    let len = kind.len();
    let u = vmp.moments(node);
    let mut lines = Vec::new();
    match kind {
        MomentKind::Categorical { k } => {
            let sums: Vec<f64> = (0..k).map(|j| (0..n).map(|e| u[e * k + j]).sum()).collect();
            let used: Vec<String> = sums
                .iter()
                .enumerate()
                .filter(|(_, s)| **s > 0.5)
                .map(|(j, s)| format!("{}: {:.1}", j, s))
                .collect();
            lines.push(format!(
                "{} of {k} categories in use (expected counts {})",
                used.len(),
                used.join(", ")
            ));
        }
        _ => {
            let mean = vmp.mean(node).unwrap_or_default();
            let vlen = mean.len().checked_div(n).unwrap_or(0);
            for e in 0..n.min(SHOW) {
                let m = &mean[e * vlen..(e + 1) * vlen];
                let ue = &u[e * len..(e + 1) * len];
                let list = |xs: &[f64]| xs.iter().map(|x| num(*x)).collect::<Vec<_>>().join(", ");
                let text = match kind {
                    MomentKind::Gaussian { d: 1 } => {
                        format!(
                            "{} ± {}",
                            num(m[0]),
                            num((ue[1] - ue[0] * ue[0]).max(0.0).sqrt())
                        )
                    }
                    MomentKind::Gaussian { d } => {
                        let sd: Vec<f64> = (0..d)
                            .map(|i| (ue[d + i * d + i] - ue[i] * ue[i]).max(0.0).sqrt())
                            .collect();
                        format!("[{}] ± [{}]", list(m), list(&sd))
                    }
                    _ if vlen == 1 => num(m[0]),
                    _ => format!("[{}]", list(m)),
                };
                lines.push(format!("[{e}] {text}"));
            }
            if n > SHOW {
                lines.push(format!("... ({} elements)", n));
            }
        }
    }
    lines
}

/// The text summary of a fit.
pub fn summary(loaded: &Loaded, c: &Compiled, o: &Outcome) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "model {}", loaded.file_name);
    let _ = writeln!(
        s,
        "lower bound L = {:.6} after {} iterations ({})",
        o.bound + 0.0,
        o.iterations,
        if o.converged {
            "converged"
        } else {
            "not converged"
        }
    );
    if o.restart_bounds.len() > 1 {
        let _ = writeln!(
            s,
            "restarts: {} (kept #{} with seed {}; bounds {})",
            o.restart_bounds.len(),
            o.best_restart + 1,
            o.seed,
            o.restart_bounds
                .iter()
                .map(|b| format!("{b:.3}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for w in &o.warnings {
        let _ = writeln!(s, "warning: {w}");
    }
    let _ = writeln!(s, "\nposterior:");
    for v in 0..loaded.model.variables.len() {
        let r = role(loaded, v, c);
        if matches!(r, "observed" | "data") {
            continue;
        }
        let _ = writeln!(
            s,
            "  {} ~ {} ({r})",
            signature(loaded, v),
            distribution(loaded, v)
        );
        for line in describe(c, c.var_nodes[v]) {
            let _ = writeln!(s, "      {line}");
        }
    }
    for a in crate::latent::ard::ard(loaded, c) {
        let _ = writeln!(s, "\n{}", crate::latent::ard::summary_line(&a));
    }
    s
}
