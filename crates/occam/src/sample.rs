//! Ancestral sampling from the generative model, loaded without its data
//! ([`crate::model::load_without_data`]: plates sized from data take their sizes from the caller,
//! `--plate N=500` on the command line); the draws of the observed variables (those the model
//! attaches data to) come back as tables.

use occam_lang::ir::Node;

use crate::data;
use crate::error::{Error, Result};
use crate::model::Loaded;

/// One observed variable's draw: `rows × cols` values, row-major, with CSV column names.
#[derive(Clone, Debug)]
pub struct Draw {
    /// The variable.
    pub name: String,
    /// Column names (`x`, or `x_1`, `x_2`, …).
    pub header: Vec<String>,
    /// Number of rows (the size of the variable's first plate).
    pub rows: usize,
    /// Number of columns.
    pub cols: usize,
    /// The values, row-major.
    pub values: Vec<f64>,
}

impl Draw {
    /// The draw as CSV text with a header line.
    pub fn to_csv(&self) -> String {
        data::to_csv(&self.header, self.rows, &self.values)
    }
}

/// Draws every observed variable of a model loaded without data (see
/// [`crate::model::load_without_data`]) by ancestral sampling from `seed`.
pub fn draw(loaded: &Loaded, seed: u64) -> Result<Vec<Draw>> {
    let mut c = loaded.compile(false)?;
    let draws = c
        .vmp
        .sample_prior(seed)
        .map_err(|e| crate::driver::run_error(loaded, &c, &e))?;
    let outputs: Vec<usize> = loaded
        .model
        .variables
        .iter()
        .enumerate()
        .filter(|(_, v)| v.observed && matches!(v.node, Node::Stochastic { .. }))
        .map(|(i, _)| i)
        .collect();
    if outputs.is_empty() {
        return Err(Error::Usage(format!(
            "{}: no observed variable to write; mark one with `observe NAME` or `plates N from data NAME`",
            loaded.file_name
        )));
    }
    Ok(outputs
        .into_iter()
        .map(|v| {
            let var = &loaded.model.variables[v];
            let values = draws[c.var_nodes[v].index()].clone();
            let rows = var
                .plates
                .first()
                .map_or(1, |&p| loaded.model.plates[p].size as usize);
            let cols = values.len() / rows.max(1);
            let header: Vec<String> = if cols == 1 {
                vec![var.name.clone()]
            } else {
                (1..=cols).map(|j| format!("{}_{j}", var.name)).collect()
            };
            Draw {
                name: var.name.clone(),
                header,
                rows,
                cols,
                values,
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::DataSet;
    use crate::model::load_source_without_data;
    use std::collections::BTreeMap;
    use std::path::Path;

    const GMM: &str = "plate K = 3\nplates N, D from data y\nalpha ~ Dirichlet(1) over K\n\
        z[N] ~ Categorical(alpha)\nmu[K] over D ~ MvGaussian(mean = 0, precision = identity)\n\
        Lambda[K] over D ~ Wishart(dof = 2, rate = identity)\n\
        y[N] over D ~ MvGaussian(mean = mu[z], precision = Lambda[z])\n";

    #[test]
    fn source_text_is_sampled_like_a_file() {
        let sizes = BTreeMap::from([("N".to_string(), 7), ("D".to_string(), 2)]);
        let given = DataSet::new();
        let l = load_source_without_data(
            Path::new("g.occam"),
            "g.occam".into(),
            GMM.into(),
            &given,
            &sizes,
            None,
        )
        .unwrap();
        let d = draw(&l, 1).unwrap();
        assert_eq!((d[0].name.as_str(), d[0].rows, d[0].cols), ("y", 7, 2));
        assert_eq!(draw(&l, 1).unwrap()[0].values, d[0].values);
        // A missing plate size names the plate; a syntax error is located in the named text.
        let e = load_source_without_data(
            Path::new("g.occam"),
            "g.occam".into(),
            GMM.into(),
            &given,
            &BTreeMap::new(),
            None,
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("plate `N`"), "{e}");
        let e = load_source_without_data(
            Path::new("g.occam"),
            "g.occam".into(),
            "plate K = 3\nmu ~ Gaussian(0, 1\n".into(),
            &given,
            &sizes,
            None,
        )
        .err()
        .unwrap();
        assert!(
            e.render_plain().contains("--> g.occam:3:1"),
            "{}",
            e.render_plain()
        );
    }
}
