//! A variable's posterior as arrays: each parameter (mean, variance or covariance, shape and rate,
//! concentration, probabilities, ...) as values shaped by the variable's plates followed by the
//! parameter's own dimensions, row-major, the way NumPy lays them out.

use serde_json::Value;

use crate::lower::Compiled;
use crate::model::Loaded;
use crate::report::json;

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

/// Flattens one element's JSON value (number, list, list of lists) into `out`; returns its shape.
fn flatten(v: &Value, out: &mut Vec<f64>) -> Option<Vec<usize>> {
    match v {
        Value::Number(n) => {
            out.push(n.as_f64().unwrap_or(f64::NAN));
            Some(Vec::new())
        }
        Value::Array(items) => {
            let mut inner = None;
            for it in items {
                let s = flatten(it, out)?;
                if inner.as_ref().is_some_and(|i| *i != s) {
                    return None;
                }
                inner = Some(s);
            }
            let mut shape = vec![items.len()];
            shape.extend(inner.unwrap_or_default());
            Some(shape)
        }
        _ => None,
    }
}

/// Per-element JSON values → one array: plate dimensions (if they account for every element)
/// followed by the element's own; elements given as `null` become NaN.
fn param(name: &str, per_element: &[Value], plates: &[usize]) -> Option<Param> {
    let item = per_element
        .iter()
        .find(|v| !v.is_null())
        .and_then(|v| flatten(v, &mut Vec::new()))?;
    let len: usize = item.iter().product();
    let mut values = Vec::with_capacity(per_element.len() * len);
    for v in per_element {
        if v.is_null() {
            values.extend(std::iter::repeat_n(f64::NAN, len));
        } else if flatten(v, &mut values)? != item {
            return None;
        }
    }
    let n = per_element.len();
    let mut shape = if plates.iter().product::<usize>() == n {
        plates.to_vec()
    } else {
        vec![n]
    };
    shape.extend(item);
    Some(Param {
        name: name.to_string(),
        shape,
        values,
    })
}

/// The posterior of variable `v` of a fitted model.
pub fn of(loaded: &Loaded, c: &Compiled, v: usize) -> Posterior {
    let report = json::variable(loaded, c, v);
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
    let mut params = Vec::new();
    if let Some(Value::Object(map)) = report.get("parameters") {
        for (name, list) in map {
            if let Value::Array(items) = list {
                params.extend(param(name, items, &sizes));
            }
        }
    }
    if let Some(Value::Array(items)) = report.get("moments") {
        params.extend(param("moments", items, &sizes));
    }
    let text = |k: &str| {
        report
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    Posterior {
        name: var.name.clone(),
        distribution: text("distribution"),
        role: text("role"),
        plates,
        params,
    }
}
