//! What `fit --out` writes for PCA-type models (an observed Gaussian y whose mean is dot(W, X),
//! possibly plus other terms, as in BPCA and BayesPy's PCA): the reconstruction of the data from
//! the posterior means, ⟨y⟩ = ⟨W⟩ᵀ⟨X⟩ + ⟨other terms⟩ (under the factorised q the mean of a product
//! of independent factors is the product of their means), and the projection of the data onto
//! the principal subspace, the posterior means ⟨x_n⟩ of the scores.
//!
//! Of the two factors, the scores are the one without an ARD precision (the other's columns are
//! switched on and off), or the larger when that does not decide. Their coordinates are ordered
//! by the variance of the reconstruction along each, v_k = (Σ_d ⟨w_dk⟩²)(Σ_n ⟨x_nk⟩²)/N, and the
//! scatter shows the two leading ones.

use occam_lang::ir::{ConstValue, Expr, ExprOp, Node};

use crate::latent::figures;
use occam::error::Result;
use occam::lower::Compiled;
use occam::model::Loaded;

/// A PCA-type product in a model: the observed y and the two factors of dot(W, X) in its mean.
struct Product {
    y: usize,
    mean: Expr,
    /// (loadings, scores) variables.
    w: usize,
    x: usize,
}

/// The dot product inside an expression, if it is one of two plain variable references.
fn dot_of(e: &Expr) -> Option<(usize, usize)> {
    match &e.op {
        ExprOp::Dot(a, b) => match (&a.op, &b.op) {
            (ExprOp::Var(ra), ExprOp::Var(rb)) if !ra.is_mixture() && !rb.is_mixture() => {
                Some((ra.var, rb.var))
            }
            _ => None,
        },
        ExprOp::Sum(xs) => xs.iter().find_map(dot_of),
        _ => None,
    }
}

fn has_ard(loaded: &Loaded, v: usize) -> bool {
    let m = &loaded.model;
    matches!(&m.variables[v].node, Node::Stochastic { distribution, args }
        if distribution == "GaussianARD" && args.iter().any(|a| a.slot == "precision"
            && matches!(&a.value.op, ExprOp::Var(r) if m.variables[r.var].plates == m.variables[v].event_plates)))
}

fn products(loaded: &Loaded) -> Vec<Product> {
    let m = &loaded.model;
    let mut out = Vec::new();
    for (y, var) in m.variables.iter().enumerate() {
        let Node::Stochastic { distribution, args } = &var.node else {
            continue;
        };
        if distribution != "Gaussian"
            || !var.observed
            || !loaded.data.tables.contains_key(&var.name)
        {
            continue;
        }
        let Some(mean) = args.iter().find(|a| a.slot == "mean").map(|a| &a.value) else {
            continue;
        };
        let Some((a, b)) = dot_of(mean) else { continue };
        let size = |v: usize| -> u64 {
            m.variables[v]
                .plates
                .iter()
                .map(|&p| m.plates[p].size)
                .product()
        };
        let (w, x) = match (has_ard(loaded, a), has_ard(loaded, b)) {
            (true, false) => (a, b),
            (false, true) => (b, a),
            _ if size(a) > size(b) => (b, a),
            _ => (a, b),
        };
        out.push(Product {
            y,
            mean: mean.clone(),
            w,
            x,
        });
    }
    out
}

/// Posterior means of the variables an expression reads, by variable.
struct Means<'a> {
    loaded: &'a Loaded,
    c: &'a Compiled,
    cache: std::collections::HashMap<usize, Vec<f64>>,
}

impl Means<'_> {
    fn of(&mut self, v: usize) -> Option<&[f64]> {
        if !self.cache.contains_key(&v) {
            let mean = self.c.vmp.mean(self.c.var_nodes[v])?;
            self.cache.insert(v, mean);
        }
        self.cache.get(&v).map(Vec::as_slice)
    }

    /// Element of variable v read at y's element with coordinates `at` over `y_plates`.
    fn element(&self, v: usize, y_plates: &[usize], at: &[usize]) -> Option<usize> {
        let m = &self.loaded.model;
        let mut e = 0;
        for &p in &m.variables[v].plates {
            let i = y_plates.iter().position(|&q| q == p)?;
            e = e * m.plates[p].size as usize + at[i];
        }
        Some(e)
    }

    /// ⟨expr⟩ at y's element `at`; `None` for expressions outside sums of variables, constants
    /// and dot products of two variables.
    fn eval(&mut self, e: &Expr, y_plates: &[usize], at: &[usize]) -> Option<f64> {
        match &e.op {
            ExprOp::Const(ConstValue::Scalar(c)) => Some(*c),
            ExprOp::Var(r) if !r.is_mixture() && e.event.is_none() => {
                let i = self.element(r.var, y_plates, at)?;
                self.of(r.var)?.get(i).copied()
            }
            ExprOp::Sum(xs) => xs.iter().map(|x| self.eval(x, y_plates, at)).sum(),
            ExprOp::Dot(a, b) => {
                let (ExprOp::Var(ra), ExprOp::Var(rb)) = (&a.op, &b.op) else {
                    return None;
                };
                let q = a.event?.size as usize;
                let (ia, ib) = (
                    self.element(ra.var, y_plates, at)?,
                    self.element(rb.var, y_plates, at)?,
                );
                let wa = self.of(ra.var)?.get(ia * q..(ia + 1) * q)?.to_vec();
                let xb = self.of(rb.var)?.get(ib * q..(ib + 1) * q)?;
                Some(wa.iter().zip(xb).map(|(u, v)| u * v).sum())
            }
            _ => None,
        }
    }
}

/// A reconstruction: ⟨y⟩ per element of the data, with the data (row-major, rows × cols).
pub struct Reconstruction {
    /// The observed variable.
    pub variable: String,
    /// Rows and columns of its data.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// ⟨y⟩ for every element.
    pub mean: Vec<f64>,
    /// The data (0 where missing).
    pub data: Vec<f64>,
    /// Which data are present.
    pub present: Vec<bool>,
    /// The data's column names.
    pub header: Vec<String>,
}

fn reconstruction(loaded: &Loaded, c: &Compiled, p: &Product) -> Option<Reconstruction> {
    let var = &loaded.model.variables[p.y];
    let table = loaded.data.tables.get(&var.name)?;
    let sizes: Vec<usize> = var
        .plates
        .iter()
        .map(|&q| loaded.model.plates[q].size as usize)
        .collect();
    let n: usize = sizes.iter().product();
    if n != table.values.len() || sizes.is_empty() {
        return None;
    }
    let mut means = Means {
        loaded,
        c,
        cache: Default::default(),
    };
    let mut at = vec![0; sizes.len()];
    let mut mean = Vec::with_capacity(n);
    for mut e in 0..n {
        for (i, s) in sizes.iter().enumerate().rev() {
            at[i] = e % s;
            e /= s;
        }
        mean.push(means.eval(&p.mean, &var.plates, &at)?);
    }
    let header = table
        .header
        .clone()
        .unwrap_or_else(|| (0..table.cols).map(|j| format!("c{j}")).collect());
    Some(Reconstruction {
        variable: var.name.clone(),
        rows: table.rows,
        cols: table.cols,
        mean,
        data: table.values.to_vec(),
        present: table.present.clone(),
        header,
    })
}

/// A projection: the scores' posterior means, their coordinates ordered by explained variance.
pub struct Projection {
    /// The scores variable.
    pub variable: String,
    /// Number of points.
    pub n: usize,
    /// Latent dimension.
    pub q: usize,
    /// ⟨x_n⟩ (n × q, the model's coordinate order).
    pub means: Vec<f64>,
    /// Coordinates by decreasing variance of the reconstruction along them.
    pub order: Vec<usize>,
    /// That variance per coordinate (model order).
    pub variance: Vec<f64>,
}

fn projection(loaded: &Loaded, c: &Compiled, p: &Product) -> Option<Projection> {
    let x = c.vmp.mean(c.var_nodes[p.x])?;
    let w = c.vmp.mean(c.var_nodes[p.w])?;
    let q = loaded.model.variables[p.x]
        .event_plates
        .first()
        .map(|&e| loaded.model.plates[e].size as usize)?;
    let (n, dw) = (x.len() / q.max(1), w.len() / q.max(1));
    if q == 0 || n == 0 || dw == 0 {
        return None;
    }
    let column = |m: &[f64], k: usize| m.chunks_exact(q).map(|r| r[k] * r[k]).sum::<f64>();
    let variance: Vec<f64> = (0..q)
        .map(|k| column(&w, k) * column(&x, k) / n as f64)
        .collect();
    let mut order: Vec<usize> = (0..q).collect();
    order.sort_by(|&a, &b| variance[b].total_cmp(&variance[a]));
    Some(Projection {
        variable: loaded.model.variables[p.x].name.clone(),
        n,
        q,
        means: x,
        order,
        variance,
    })
}

fn csv_line(values: impl Iterator<Item = String>) -> String {
    let mut s = values.collect::<Vec<_>>().join(",");
    s.push('\n');
    s
}

/// One output of a PCA-type product: a table (row-major, with its column names) and its figure.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// The file stem: `reconstruction_Y` (⟨y⟩ shaped as the data, the data's header) or
    /// `projection_X` (⟨x_n⟩, coordinates by explained variance, header `X[k]`).
    pub name: String,
    /// Column names.
    pub columns: Vec<String>,
    /// Number of rows.
    pub rows: usize,
    /// The values, row-major, rows × columns.
    pub values: Vec<f64>,
    /// The figure: data against ⟨y⟩, or the two leading coordinates of the projection (none
    /// when the latent space has one dimension).
    pub svg: Option<String>,
}

impl Output {
    /// The table as CSV text (header line, then one line per row; shortest round-trip numbers).
    pub fn csv(&self) -> String {
        let mut csv = csv_line(self.columns.iter().cloned());
        for row in self.values.chunks_exact(self.columns.len().max(1)) {
            csv.push_str(&csv_line(row.iter().map(|v| v.to_string())));
        }
        csv
    }
}

fn reconstruction_output(r: Reconstruction) -> Result<Output> {
    let points: Vec<(f64, f64)> = r
        .data
        .iter()
        .zip(&r.mean)
        .zip(&r.present)
        .filter(|(_, &p)| p)
        .map(|((&d, &m), _)| (d, m))
        .collect();
    let rms = (points.iter().map(|(d, m)| (d - m).powi(2)).sum::<f64>()
        / points.len().max(1) as f64)
        .sqrt();
    let svg = figures::scatter(
        &format!(
            "{}: data against the reconstruction ⟨y⟩ (RMS residual {rms:.4})",
            r.variable
        ),
        ("data", "reconstruction"),
        &points,
        true,
    )?;
    Ok(Output {
        name: format!("reconstruction_{}", r.variable),
        columns: r.header,
        rows: r.rows,
        values: r.mean,
        svg: Some(svg),
    })
}

fn projection_output(pr: Projection) -> Result<Output> {
    let svg = if pr.q >= 2 {
        let (a, b) = (pr.order[0], pr.order[1]);
        let total: f64 = pr.variance.iter().sum::<f64>().max(f64::MIN_POSITIVE);
        let points: Vec<(f64, f64)> = pr.means.chunks_exact(pr.q).map(|r| (r[a], r[b])).collect();
        let label = |k: usize| {
            format!(
                "⟨{}[{k}]⟩ ({:.1} % of the variance)",
                pr.variable,
                100.0 * pr.variance[k] / total
            )
        };
        Some(figures::scatter(
            &format!("{}: projection onto the principal subspace", pr.variable),
            (&label(a), &label(b)),
            &points,
            false,
        )?)
    } else {
        None
    };
    let values = pr
        .means
        .chunks_exact(pr.q)
        .flat_map(|row| pr.order.iter().map(|&k| row[k]))
        .collect();
    Ok(Output {
        name: format!("projection_{}", pr.variable),
        columns: pr
            .order
            .iter()
            .map(|k| format!("{}[{k}]", pr.variable))
            .collect(),
        rows: pr.n,
        values,
        svg,
    })
}

/// The reconstruction and projection of every PCA-type product of a fitted model, in the order
/// `fit --out` writes them. Empty for other models.
pub fn outputs(loaded: &Loaded, c: &Compiled) -> Result<Vec<Output>> {
    let mut out = Vec::new();
    for p in products(loaded) {
        if let Some(r) = reconstruction(loaded, c, &p) {
            out.push(reconstruction_output(r)?);
        }
        if let Some(pr) = projection(loaded, c, &p) {
            out.push(projection_output(pr)?);
        }
    }
    Ok(out)
}

/// The files of every PCA-type product of a fitted model (see [`outputs`]):
/// `reconstruction_Y.csv`/`.svg` and `projection_X.csv`/`.svg` (the figure only when the latent
/// space has two or more dimensions). Empty for other models.
pub fn files(loaded: &Loaded, c: &Compiled) -> Result<Vec<(String, Vec<u8>)>> {
    let mut files = Vec::new();
    for o in outputs(loaded, c)? {
        files.push((format!("{}.csv", o.name), o.csv().into_bytes()));
        if let Some(svg) = o.svg {
            files.push((format!("{}.svg", o.name), svg.into_bytes()));
        }
    }
    Ok(files)
}

#[cfg(test)]
mod tests;
