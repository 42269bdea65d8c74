//! A readable posterior summary.

use std::fmt::Write;

use occam_core::prelude::*;

use occam::lower::Compiled;
use occam::model::Loaded;
use occam::posterior::{distribution, role};
use occam::Outcome;
use occam_lang::ir::PlateSource;

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

/// The label of each element of variable `v` when one of its plates takes its size from the
/// columns of a data file with a header: the column names there, indices elsewhere
/// (`[2, height]`); `None` when no plate has names (elements are then `[e]`).
pub fn element_labels(loaded: &Loaded, v: usize) -> Option<Vec<String>> {
    let var = &loaded.model.variables[v];
    let names: Vec<Option<&Vec<String>>> = var
        .plates
        .iter()
        .map(|&p| match &loaded.model.plates[p].source {
            PlateSource::Data { data, axis: 1 } => loaded
                .data
                .tables
                .get(data)
                .and_then(|t| t.header.as_ref())
                .filter(|h| h.len() as u64 == loaded.model.plates[p].size),
            _ => None,
        })
        .collect();
    if names.iter().all(Option::is_none) {
        return None;
    }
    let sizes: Vec<usize> = var
        .plates
        .iter()
        .map(|&p| loaded.model.plates[p].size as usize)
        .collect();
    let n: usize = sizes.iter().product();
    let mut out = Vec::with_capacity(n.min(SHOW));
    for e in 0..n.min(SHOW) {
        let mut rest = e;
        let mut parts = vec![String::new(); sizes.len()];
        for i in (0..sizes.len()).rev() {
            let c = rest % sizes[i];
            rest /= sizes[i];
            parts[i] = names[i].map_or_else(|| c.to_string(), |h| h[c].clone());
        }
        out.push(format!("[{}]", parts.join(", ")));
    }
    Some(out)
}

/// The names of a vector variable's components when its event plate counts the columns of a
/// data file with a header (`B over C` with `plates N, C from data X`).
pub fn event_names(loaded: &Loaded, v: usize) -> Option<Vec<String>> {
    let &q = loaded.model.variables[v].event_plates.first()?;
    let plate = &loaded.model.plates[q];
    match &plate.source {
        PlateSource::Data { data, axis: 1 } => loaded
            .data
            .tables
            .get(data)?
            .header
            .clone()
            .filter(|h| h.len() as u64 == plate.size),
        _ => None,
    }
}

/// One line per element (or a digest) of the posterior of node `node`; `labels` name the
/// elements (default `[e]`), `names` the components of a vector (default: a bracketed list).
fn describe(
    c: &Compiled,
    node: NodeId,
    labels: Option<&[String]>,
    names: Option<&[String]>,
) -> Vec<String> {
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
            // A Gamma's random shape: its sd by quadrature (the family's usual parameter `sd`).
            let shape_sd = matches!(kind, MomentKind::GammaShape)
                .then(|| occam::posterior::columns(c, node, true))
                .and_then(|cols| cols.into_iter().find(|col| col.name == "sd"))
                .map(|col| col.values)
                .filter(|sd| sd.len() == n);
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
                        match names.filter(|n| n.len() == d) {
                            Some(names) => (0..d)
                                .map(|i| format!("{} {} ± {}", names[i], num(m[i]), num(sd[i])))
                                .collect::<Vec<_>>()
                                .join(", "),
                            None => format!("[{}] ± [{}]", list(m), list(&sd)),
                        }
                    }
                    MomentKind::GammaShape => match shape_sd.as_deref() {
                        Some(sd) => format!("{} ± {}", num(m[0]), num(sd[e])),
                        None => num(m[0]),
                    },
                    _ if vlen == 1 => num(m[0]),
                    _ => format!("[{}]", list(m)),
                };
                match labels.and_then(|l| l.get(e)) {
                    Some(l) => lines.push(format!("{l} {text}")),
                    None => lines.push(format!("[{e}] {text}")),
                }
            }
            if n > SHOW {
                lines.push(format!("... ({} elements)", n));
            }
        }
    }
    lines
}

/// The missing entries of a partly observed variable: their posterior predictive mean ± sd
/// (`occam::predict::missing`) in place of the integrated-out element's line, which has no
/// posterior of its own.
fn fill_missing(
    loaded: &Loaded,
    c: &Compiled,
    v: usize,
    labels: Option<&[String]>,
    lines: &mut [String],
) {
    let Some(gone) = occam::posterior::integrated_out(loaded, v, c) else {
        return;
    };
    let name = &loaded.model.variables[v].name;
    // Exact moments need no draws; otherwise 1000 (the summary's sd then within a few %).
    let predict = |draws| {
        let opts = occam::predict::PredictOptions {
            draws,
            ..Default::default()
        };
        match occam::predict::missing(loaded, c, &opts) {
            Ok(all) => all.into_iter().find(|p| &p.name == name),
            Err(_) => None,
        }
    };
    let p = match predict(1) {
        Some(p) if !p.exact => predict(1000),
        p => p,
    };
    let Some(p) = p else { return };
    let n = gone.len();
    if n == 0 || p.mean.len() % n != 0 || lines.len() < n.min(SHOW) {
        return;
    }
    let vlen = p.mean.len() / n;
    for (e, _) in gone.iter().enumerate().take(SHOW).filter(|(_, g)| **g) {
        let text: Vec<String> = (e * vlen..(e + 1) * vlen)
            .map(|j| format!("{} ± {}", num(p.mean[j]), num(p.sd[j])))
            .collect();
        let label = labels
            .and_then(|l| l.get(e).cloned())
            .unwrap_or_else(|| format!("[{e}]"));
        lines[e] = format!("{label} {} (missing: predictive)", text.join(", "));
    }
}

/// A discrete chain's most probable paths (the first sequences and steps; all of them are in
/// `--json` and `--out`).
fn chain_lines(ch: &occam::chains::ChainReport) -> Vec<String> {
    const STEPS: usize = 40;
    const SEQS: usize = 3;
    let mut lines = Vec::new();
    for (s, path) in ch.viterbi.iter().enumerate().take(SEQS) {
        let shown: Vec<String> = path.iter().take(STEPS).map(usize::to_string).collect();
        lines.push(format!(
            "most probable path{}: {}{}",
            if ch.viterbi.len() > 1 {
                format!(" [{s}]")
            } else {
                String::new()
            },
            shown.join(" "),
            if path.len() > STEPS {
                format!(" ... ({} steps)", path.len())
            } else {
                String::new()
            }
        ));
    }
    if ch.viterbi.len() > SEQS {
        lines.push(format!("... ({} sequences)", ch.viterbi.len()));
    }
    lines
}

/// The text summary of a fit.
pub fn summary(loaded: &Loaded, c: &Compiled, o: &Outcome) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "model {}", loaded.file_name);
    // An approximate L (importance-sampled terms) is an estimate, not a lower bound: its
    // headline says so (the kind line below says why).
    let _ = writeln!(
        s,
        "{} L = {:.6} after {} iterations ({})",
        if o.bound_quality == occam::quality::BoundQuality::Approximate {
            "approximate bound"
        } else {
            "lower bound"
        },
        o.bound + 0.0,
        o.iterations,
        if o.converged {
            "converged"
        } else {
            "not converged"
        }
    );
    if o.bound_quality != occam::quality::BoundQuality::Exact {
        // Exact bounds (the ELBO itself) print no kind line: every report before kinds were
        // labelled was of one.
        let _ = writeln!(
            s,
            "bound kind: {}: the terms of {} are {}; see docs/guide/12-beyond-conjugate.md",
            o.bound_quality,
            occam::quality::culprits(loaded, c, o.bound_quality).join(", "),
            match o.bound_quality {
                occam::quality::BoundQuality::Approximate => "estimates of their expectations",
                _ => "local bounds below their expectations, so L is below the ELBO of q",
            }
        );
    }
    if let Some(line) = occam::quality::understated_sds_line(loaded, c) {
        let _ = writeln!(s, "{line}");
    }
    for r in &o.sampled {
        // Importance-sampled nodes (Winn §4.4): S and the effective sample size S_eff = 1/Σw².
        let (lo, hi) = (
            r.samples.iter().min().copied().unwrap_or(0),
            r.samples.iter().max().copied().unwrap_or(0),
        );
        let s_range = if lo == hi {
            format!("{lo}")
        } else {
            format!("{lo}–{hi}")
        };
        // Elements whose q was in closed form (a tilted mixture or truncated prior) were not
        // sampled: said so, without an S.
        let closed = match r.closed_form {
            0 => String::new(),
            k if r.samples.is_empty() => format!(
                "`{}`: q in closed form ({k} element{}, prior tilted by Gaussian messages), not sampled",
                r.node,
                if k == 1 { "" } else { "s" }
            ),
            k => format!("; {k} more in closed form, not sampled"),
        };
        if r.samples.is_empty() {
            // Nothing sampled and nothing in closed form (every element observed): no line.
            if !closed.is_empty() {
                let _ = writeln!(s, "{closed}");
            }
            continue;
        }
        let _ = writeln!(
            s,
            "importance sampled `{}`: S = {s_range}, S_eff ≥ {:.0} (target {:.0}, S at most {}){closed}",
            r.node,
            r.min_s_eff(),
            r.target,
            r.cap
        );
    }
    let _ = writeln!(s, "stop: {}", o.stop);
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
    if !o.components.is_empty() {
        let _ = writeln!(
            s,
            "components in use (expected count ≥ 1): {}",
            o.components
                .iter()
                .map(|c| format!("{} {}/{}", c.variable, c.in_use, c.total))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if let Some(c) = &o.prune_screen {
        let _ = writeln!(
            s,
            "pruning screen: {} deletions screened on {} rows ({} sweeps there), {} passed; {} full trials",
            c.screened, c.rows, c.sweeps, c.passed, o.prune_trials
        );
    }
    if let Some(r) = &o.rotated {
        let _ = writeln!(
            s,
            "rotations: {} ({} steps, bound raised by {:.6} nats)",
            r.pairs.join(", "),
            r.steps,
            r.gain
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
        let q = match occam::posterior::q_family(c, v) {
            Some(q) => format!("; q: {q}, by quadrature"),
            None if occam::posterior::joint_over_classes(c, v) => {
                "; q: one Gaussian over every class's weights, `joint_covariance`".to_string()
            }
            None => String::new(),
        };
        // The posterior's own label where a local bound narrows it (Böhning's, in its logits).
        let understated = if c.vmp.sds_understated_by(c.var_nodes[v]).is_some() {
            "; sds understated: Böhning's bound"
        } else {
            ""
        };
        let _ = writeln!(
            s,
            "  {} ~ {} ({r}{q}{understated})",
            signature(loaded, v),
            distribution(loaded, v)
        );
        let labels = element_labels(loaded, v);
        let names = event_names(loaded, v);
        let mut lines = describe(c, c.var_nodes[v], labels.as_deref(), names.as_deref());
        if r == "partly observed" {
            fill_missing(loaded, c, v, labels.as_deref(), &mut lines);
        }
        for line in lines {
            let _ = writeln!(s, "      {line}");
        }
        if let Some(ch) = occam::chains::chain(loaded, c, v) {
            for line in chain_lines(&ch) {
                let _ = writeln!(s, "      {line}");
            }
        }
    }
    for a in occam::latent::ard::ard(loaded, c) {
        let _ = writeln!(s, "\n{}", crate::latent::ard::summary_line(&a));
    }
    s
}
