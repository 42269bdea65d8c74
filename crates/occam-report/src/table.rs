//! Per-variable CSV tables of a fit (`posterior_NAME.csv` under `fit --out`): one row per plate
//! element, labelled by its plate coordinates (a data column's name where the plate takes its
//! size from a file's columns), with posterior means, variances where the family has them, and
//! for a Categorical variable its probabilities and most probable category — the cluster
//! assignment of a mixture index.

use occam_core::prelude::*;
use occam_lang::ir::PlateSource;

use occam::data::format_number;
use occam::lower::Compiled;
use occam::model::Loaded;

/// The label of coordinate `c` of plate `p`: the data column's name if the plate counts the
/// columns of a file with a header, the 0-based index otherwise.
fn coordinate(loaded: &Loaded, p: usize, c: usize) -> String {
    let plate = &loaded.model.plates[p];
    if let PlateSource::Data { data, axis: 1 } = &plate.source {
        if let Some(h) = loaded.data.tables.get(data).and_then(|t| t.header.as_ref()) {
            if let Some(name) = h.get(c) {
                return name.clone();
            }
        }
    }
    c.to_string()
}

/// Names of the `d` components of a vector-valued variable: its event plate's labels.
fn components(loaded: &Loaded, v: usize, d: usize) -> Vec<String> {
    match loaded.model.variables[v].event_plates.first() {
        Some(&q) if loaded.model.plates[q].size as usize == d => {
            (0..d).map(|j| coordinate(loaded, q, j)).collect()
        }
        _ => (0..d).map(|j| j.to_string()).collect(),
    }
}

/// Quotes a CSV field when it needs it.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The table of variable `v`, or `None` for a node whose moments are not kept. Variances are
/// given for a `latent` Gaussian, Gamma or Dirichlet variable (a MAP value has none).
pub fn variable_csv(loaded: &Loaded, c: &Compiled, v: usize, latent: bool) -> Option<String> {
    let var = &loaded.model.variables[v];
    let node = c.var_nodes[v];
    let vmp = &c.vmp;
    let kind = vmp.kind(node);
    let n = vmp.elements(node);
    let len = kind.len();
    let u = vmp.moments(node);
    let phi = vmp.natural(node);
    let mean = vmp.mean(node)?;
    if u.len() != n * len || n == 0 {
        return None;
    }
    let vlen = mean.len() / n;
    let mut header: Vec<String> = var
        .plates
        .iter()
        .map(|&p| loaded.model.plates[p].name.clone())
        .collect();
    let names = components(loaded, v, vlen);
    let one = vlen == 1 && !matches!(kind, MomentKind::Categorical { .. });
    let suffix = |what: &str, j: usize| {
        if one {
            what.to_string()
        } else {
            format!("{what}[{}]", names[j])
        }
    };
    let has_variance = latent
        && matches!(
            kind,
            MomentKind::Gaussian { .. } | MomentKind::Gamma | MomentKind::Dirichlet { .. }
        );
    match kind {
        MomentKind::Categorical { k } => {
            header.extend((0..k).map(|j| format!("probability[{j}]")));
            header.push("most_probable".into());
        }
        _ => {
            header.extend((0..vlen).map(|j| suffix("mean", j)));
            if has_variance {
                header.extend((0..vlen).map(|j| suffix("variance", j)));
            }
        }
    }
    let mut out = header
        .iter()
        .map(|h| field(h))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    let sizes: Vec<usize> = var
        .plates
        .iter()
        .map(|&p| loaded.model.plates[p].size as usize)
        .collect();
    for e in 0..n {
        let mut row = Vec::with_capacity(header.len());
        let mut rest = e;
        let mut coords = vec![String::new(); sizes.len()];
        for i in (0..sizes.len()).rev() {
            coords[i] = field(&coordinate(loaded, var.plates[i], rest % sizes[i]));
            rest /= sizes[i];
        }
        row.extend(coords);
        let m = &mean[e * vlen..(e + 1) * vlen];
        let ue = &u[e * len..(e + 1) * len];
        let pe = &phi[e * len..(e + 1) * len];
        match kind {
            MomentKind::Categorical { .. } => {
                row.extend(m.iter().map(|x| format_number(*x)));
                let best = (0..m.len()).fold(0, |b, j| if m[j] > m[b] { j } else { b });
                row.push(best.to_string());
            }
            _ => {
                row.extend(m.iter().map(|x| format_number(*x)));
                let var: Vec<f64> = match kind {
                    _ if !has_variance => Vec::new(),
                    MomentKind::Gaussian { d } => (0..d)
                        .map(|i| (ue[d + i * d + i] - ue[i] * ue[i]).max(0.0))
                        .collect(),
                    // Gamma(a, b): a / b², with a = φ₂ + 1, b = −φ₁ (a point value: 0).
                    MomentKind::Gamma if pe[0] < 0.0 => vec![(pe[1] + 1.0) / (pe[0] * pe[0])],
                    MomentKind::Gamma => vec![0.0],
                    // Dirichlet(α): m_i (1 − m_i) / (α₀ + 1).
                    MomentKind::Dirichlet { .. } => {
                        let a0: f64 = pe.iter().map(|p| p + 1.0).sum();
                        m.iter().map(|x| x * (1.0 - x) / (a0 + 1.0)).collect()
                    }
                    _ => Vec::new(),
                };
                row.extend(var.iter().map(|x| format_number(*x)));
            }
        }
        out.push_str(&row.join(","));
        out.push('\n');
    }
    Some(out)
}
