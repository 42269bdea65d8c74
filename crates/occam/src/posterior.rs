//! A variable's posterior as arrays: each parameter (mean, variance or covariance, shape and rate,
//! concentration, probabilities, ...) as values shaped by the variable's plates followed by the
//! parameter's own dimensions, row-major, the way NumPy lays them out.

use occam_core::prelude::*;
use occam_core::spec::Param as SpecParam;

use crate::lower::Compiled;
use crate::model::Loaded;
use occam_lang::ir::Node;

/// One posterior parameter: `values` row-major with dimensions `shape`; NaN for an element
/// without a posterior (a missing observed entry that is integrated out).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Param {
    /// Parameter name (`mean`, `variance`, `covariance`, `shape`, `rate`, ...).
    pub name: String,
    /// Dimensions: the variable's plate sizes, then the parameter's own (e.g. `[N, D, D]`).
    pub shape: Vec<usize>,
    /// Values, row-major.
    pub values: Vec<f64>,
}

/// The posterior of one variable.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Posterior {
    /// The variable.
    pub name: String,
    /// Its distribution as written in the model (or `deterministic`, `data`).
    pub distribution: String,
    /// `latent`, `observed`, `partly observed`, `map`, `deterministic` or `data`.
    pub role: String,
    /// The family of q where it is not the family written (see [`q_family`]); `None` where it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q_family: Option<String>,
    /// Its plates with their sizes.
    pub plates: Vec<(String, usize)>,
    /// The parameters of q in the family's usual terms, and its moments (`moments`).
    pub params: Vec<Param>,
}

impl Posterior {
    /// The parameter `name`, if this family has it.
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }
}

/// One posterior parameter of every element of a node, before it is shaped by the variable's
/// plates: its name, its per-element dimensions and its values, element after element. The one
/// summary table of a node's posterior ([`columns`]); [`of`] shapes it into [`Param`]s and the
/// JSON report (crate `occam-report`) writes it as per-element lists.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// Parameter name (`mean`, `variance`, `covariance`, `mean_log`, `probabilities`, or one of
    /// the family's usual parameters).
    pub name: String,
    /// The dimensions of one element's value (`[]` for a scalar, `[d]`, `[d, d]`).
    pub item: Vec<usize>,
    /// Values, element after element (row-major within an element).
    pub values: Vec<f64>,
}

impl Column {
    fn new(name: &str, item: Vec<usize>, n: usize) -> Column {
        let len = item.iter().product::<usize>();
        Column {
            name: name.to_string(),
            item,
            values: Vec::with_capacity(n * len),
        }
    }

    /// A column with one value per element.
    fn per_element(
        name: &str,
        item: Vec<usize>,
        u: &[f64],
        len: usize,
        f: impl Fn(&[f64], &mut Vec<f64>),
    ) -> Column {
        let mut c = Column::new(name, item, u.len() / len.max(1));
        for ue in u.chunks(len.max(1)) {
            f(ue, &mut c.values);
        }
        c
    }
}

/// Summaries of the moments by moment kind (the `parameters` of `occam fit --json` that come
/// from ⟨u⟩: mean, variance or covariance, mean log, probabilities), computed from the moments
/// straight into arrays.
fn summaries(c: &Compiled, node: NodeId, kind: MomentKind, u: &[f64], n: usize) -> Vec<Column> {
    let len = kind.len();
    match kind {
        MomentKind::Gaussian { d: 1 } => vec![
            Column::per_element("mean", vec![], u, len, |u, out| out.push(u[0])),
            Column::per_element("variance", vec![], u, len, |u, out| {
                out.push((u[1] - u[0] * u[0]).max(0.0))
            }),
        ],
        MomentKind::Gaussian { d } => vec![
            Column::per_element("mean", vec![d], u, len, |u, out| {
                out.extend_from_slice(&u[..d])
            }),
            Column::per_element("covariance", vec![d, d], u, len, |u, out| {
                for i in 0..d {
                    out.extend((0..d).map(|j| u[d + i * d + j] - u[i] * u[j]));
                }
            }),
        ],
        MomentKind::Gamma => vec![
            Column::per_element("mean", vec![], u, len, |u, out| out.push(u[0])),
            Column::per_element("mean_log", vec![], u, len, |u, out| out.push(u[1])),
        ],
        MomentKind::Wishart { d } => {
            vec![Column::per_element("mean", vec![d, d], u, len, |u, out| {
                out.extend_from_slice(&u[..d * d])
            })]
        }
        MomentKind::Dirichlet { .. } => match c.vmp.mean(node) {
            Some(m) => {
                let mut col = Column::new("mean", vec![len], n);
                col.values = m;
                vec![col]
            }
            None => Vec::new(),
        },
        MomentKind::Categorical { .. } => vec![Column::per_element(
            "probabilities",
            vec![len],
            u,
            len,
            |u, out| out.extend_from_slice(u),
        )],
        MomentKind::Scalar => vec![Column::per_element("mean", vec![], u, len, |u, out| {
            out.push(u[0])
        })],
        // u = [c a, ln a, ln Γ(c a), c a ln(c a)]: the mean from the engine (it knows c).
        MomentKind::GammaShape => {
            let mut cols = Vec::new();
            if let Some(m) = c.vmp.mean(node) {
                let mut col = Column::new("mean", vec![], n);
                col.values = m;
                cols.push(col);
            }
            cols.push(Column::per_element("mean_log", vec![], u, len, |u, out| {
                out.push(u[1])
            }));
            cols
        }
    }
}

/// The family's usual parameters of every element (a latent stochastic node's), from its
/// natural parameters (declared in the family's file: `usual_params`), one column per declared
/// parameter in declaration order: `None` for one that no element has.
fn usual(c: &Compiled, node: NodeId, n: usize) -> Vec<(&'static str, Option<Column>)> {
    let Some(dist) = c.vmp.distribution(node) else {
        return Vec::new();
    };
    let len = c.vmp.kind(node).len();
    let phi = c.vmp.natural(node);
    let mut cols: Vec<Option<Column>> = dist.spec().params.iter().map(|_| None).collect();
    let names = dist.spec().params;
    for e in 0..n {
        for (name, p) in dist.usual_params(&phi[e * len..(e + 1) * len]) {
            let Some(at) = names.iter().position(|&q| q == name) else {
                continue;
            };
            let item = match &p {
                SpecParam::Scalar(_) => vec![],
                SpecParam::Vector(v) => vec![v.len()],
                SpecParam::Matrix(m) => vec![m.len(), m.first().map_or(0, Vec::len)],
            };
            let col = cols[at].get_or_insert_with(|| Column::new(name, item, n));
            match p {
                SpecParam::Scalar(x) => col.values.push(x),
                SpecParam::Vector(v) => col.values.extend(v),
                SpecParam::Matrix(m) => m.iter().for_each(|r| col.values.extend(r)),
            }
        }
    }
    names.iter().copied().zip(cols).collect()
}

/// The posterior parameters of every element of `node`: the summaries of its moments by moment
/// kind, then, for a latent stochastic node, the family's usual parameters (each replacing a
/// summary of the same name), in that order. A usual parameter that no element has is an empty
/// column (the JSON report lists it as `[]`).
pub fn columns(c: &Compiled, node: NodeId, latent: bool) -> Vec<Column> {
    let kind = c.vmp.kind(node);
    let n = c.vmp.elements(node);
    let mut cols = summaries(c, node, kind, c.vmp.moments(node), n);
    if latent {
        for (name, col) in usual(c, node, n) {
            match (cols.iter_mut().find(|c| c.name == name), col) {
                (Some(old), Some(col)) => *old = col,
                (Some(_), None) => {}
                (None, col) => cols.push(col.unwrap_or_else(|| Column::new(name, vec![], 0))),
            }
        }
    }
    cols
}

/// The posterior of variable `v` of a fitted model, straight from the engine's arrays: the
/// moment summaries, the family's usual parameters (replacing a summary of the same name) and
/// the moments, each shaped by the variable's plates (when they account for every element) and
/// the parameter's own dimensions; NaN for elements that are integrated out. The same values
/// as the JSON report's `parameters` and `moments`.
pub fn of(loaded: &Loaded, c: &Compiled, v: usize) -> Posterior {
    let var = &loaded.model.variables[v];
    let plates: Vec<(String, usize)> = var
        .plates
        .iter()
        .map(|&p| {
            let p = &loaded.model.plates[p];
            (p.name.clone(), p.size as usize)
        })
        .collect();
    let sizes: Vec<usize> = plates.iter().map(|p| p.1).collect();
    let role = role(loaded, v, c);
    let node = c.var_nodes[v];
    let kind = c.vmp.kind(node);
    let len = kind.len();
    let u = c.vmp.moments(node);
    let n = c.vmp.elements(node);
    let mut cols = columns(c, node, matches!(role, "latent" | "partly observed"));
    cols.sort_by(|a, b| a.name.cmp(&b.name));
    cols.push(Column {
        name: "moments".into(),
        item: vec![len],
        values: u.to_vec(),
    });
    let gone = integrated_out(loaded, v, c);
    let params = cols
        .into_iter()
        .filter(|col| col.values.len() == n * col.item.iter().product::<usize>() && n > 0)
        .map(|mut col| {
            let per = col.item.iter().product::<usize>();
            if let Some(g) = &gone {
                for (e, _) in g.iter().enumerate().filter(|(_, &x)| x) {
                    col.values[e * per..(e + 1) * per].fill(f64::NAN);
                }
            }
            let mut shape = if sizes.iter().product::<usize>() == n {
                sizes.clone()
            } else {
                vec![n]
            };
            shape.extend(col.item);
            Param {
                name: col.name,
                shape,
                values: col.values,
            }
        })
        .collect::<Vec<Param>>();
    let mut params = params;
    if let Some(p) = joint_covariance(c, node, &sizes) {
        params.push(p);
    }
    Posterior {
        name: var.name.clone(),
        distribution: distribution(loaded, v),
        role: role.to_string(),
        q_family: q_family(c, v).map(str::to_string),
        plates,
        params,
    }
}

/// The family of variable `v`'s q where it is not the family written in the model: `ShapeGamma`
/// for a `Gamma` or `Exponential` that is the shape of Gammas (Winn Example 2.1: its posterior is
/// no standard family; its mean, sd and moments come by quadrature, `dist/shape_quad.rs`).
pub fn q_family(c: &Compiled, v: usize) -> Option<&'static str> {
    let node = c.var_nodes[v];
    match c.vmp.distribution(node) {
        Some(Dist::ShapeGamma(_)) => Some("ShapeGamma"),
        _ => None,
    }
}

/// The covariance across classes of weights `W[K] over D` whose q is one Gaussian over all K·D
/// of them (the engine's softmax q-block, `Vmp::joint_over_classes`): `joint_covariance` with
/// shape `[K, D, K, D]` (the other plates first, if any), entry `[k, a, k', b]` the covariance
/// of `W[k, a]` and `W[k', b]`. The per-class `covariance` is its diagonal blocks.
fn joint_covariance(c: &Compiled, node: NodeId, sizes: &[usize]) -> Option<Param> {
    let (k, col) = joint_covariance_column(c, node)?;
    let d = col.item[0];
    let n = c.vmp.elements(node);
    let mut shape = if sizes.iter().product::<usize>() == n && sizes.last() == Some(&k) {
        sizes[..sizes.len() - 1].to_vec()
    } else {
        vec![n / k]
    };
    shape.extend([k, d, k, d]);
    Some(Param {
        name: col.name,
        shape,
        values: col.values,
    })
}

/// The joint covariance of the posterior parameter `joint_covariance` as a column with one entry
/// per element (class k of its group of K): item `[D, K·D]`, row a and column k'D + b the
/// covariance of `W[k, a]` and `W[k', b]` — the rows of the group's (K·D) × (K·D) matrix that
/// belong to class k, so the elements' entries in order are the matrices row after row (the
/// values of `[K, D, K, D]`). With K, or `None` if the node has no joint q over its classes (or
/// has not been updated). The JSON report's `joint_covariance`.
pub fn joint_covariance_column(c: &Compiled, node: NodeId) -> Option<(usize, Column)> {
    let cov = c.vmp.joint_covariance(node)?;
    let MomentKind::Gaussian { d } = c.vmp.kind(node) else {
        return None;
    };
    let n = c.vmp.elements(node);
    let k = cov.len().checked_div(n * d * d)?;
    Some((
        k,
        Column {
            name: "joint_covariance".into(),
            item: vec![d, k * d],
            values: cov,
        },
    ))
}

/// Whether variable `v`'s q is one Gaussian over all its classes' weights (the engine's softmax
/// q-block) rather than one per class.
pub fn joint_over_classes(c: &Compiled, v: usize) -> bool {
    c.vmp.joint_over_classes(c.var_nodes[v])
}

/// How a variable takes part in the model.
pub fn role(loaded: &Loaded, v: usize, c: &Compiled) -> &'static str {
    let var = &loaded.model.variables[v];
    match var.node {
        Node::Data => "data",
        Node::Deterministic { .. } => "deterministic",
        Node::Stochastic { .. } => {
            let t = loaded.data.tables.get(&var.name);
            match (var.observed && c.vmp.is_observed(c.var_nodes[v]), t) {
                (true, Some(t)) if t.has_missing() => "partly observed",
                (true, _) => "observed",
                _ if var.map => "map",
                _ => "latent",
            }
        }
    }
}

/// The distribution name as written in the model.
pub fn distribution(loaded: &Loaded, v: usize) -> String {
    match &loaded.model.variables[v].node {
        Node::Stochastic { distribution, .. } => distribution.clone(),
        Node::Deterministic { .. } => "deterministic".into(),
        Node::Data => "data".into(),
    }
}

/// Which elements of variable `v` have no posterior: missing (masked) entries of an observed
/// node without children are integrated out exactly, so their moments and parameters mean
/// nothing. `None` when every element has a posterior.
pub fn integrated_out(loaded: &Loaded, v: usize, c: &Compiled) -> Option<Vec<bool>> {
    let var = &loaded.model.variables[v];
    if !matches!(var.node, Node::Stochastic { .. }) || !var.observed {
        return None;
    }
    let node = c.var_nodes[v];
    if !c.vmp.is_observed(node) {
        return None;
    }
    let t = loaded.data.tables.get(&var.name)?;
    if !t.has_missing() {
        return None;
    }
    let has_children =
        (0..loaded.model.variables.len()).any(|w| w != v && loaded.model.parents(w).contains(&v));
    if has_children {
        return None;
    }
    let n = c.vmp.elements(node);
    if n == 0 || t.present.len() % n != 0 {
        return None;
    }
    let vlen = t.present.len() / n;
    Some(
        t.present
            .chunks(vlen)
            .map(|ch| !ch.iter().all(|&p| p))
            .collect(),
    )
}
