//! The files `occam fit --out DIR` writes, each atomically: `posterior.json` (observed data left
//! out unless asked for), `bound.csv`, `bound.svg`, a table `posterior_NAME.csv` of every latent
//! variable (means, variances, a mixture index's most probable component), a Hinton diagram
//! of every latent vector or matrix mean, and for each chain `chain_NAME.csv` (per-step state
//! marginals and the Viterbi path, or smoothed means and standard deviations) with its figure
//! `chain_NAME.svg`; for PCA-type models (y ~ Gaussian(dot(W, X) …)) the reconstruction
//! `reconstruction_Y.csv`/`.svg` and the projection onto the principal subspace
//! `projection_X.csv`/`.svg` ([`crate::latent::pca_outputs`]); last the saved fit `fit.json`
//! ([`occam::saved`]) that `occam predict --fit DIR` and `occam fit --init-from DIR` read.

use std::path::Path;

use occam::atomic;
use occam::error::{Error, Result};
use occam::Outcome;

use crate::{hinton, summary, svg, table};
use occam::lower::Compiled;
use occam::model::Loaded;
use occam::Fitted;
use std::io;

/// The mean of a variable as a matrix for a Hinton diagram, if it is a vector or matrix.
fn matrix_of(loaded: &Loaded, c: &Compiled, v: usize) -> Option<(usize, usize, Vec<f64>)> {
    let var = &loaded.model.variables[v];
    // A chain's marginals (steps × states, thousands of squares) are drawn as `chain_NAME.svg`:
    // state probabilities over time with the Viterbi path, or smoothed means with bands.
    if matches!(&var.node, occam_lang::ir::Node::Stochastic { distribution, .. }
        if distribution == "MarkovChain" || distribution == "GaussianMarkovChain")
    {
        return None;
    }
    let node = c.var_nodes[v];
    let mean = c.vmp.mean(node)?;
    let n = c.vmp.elements(node);
    if mean.len() < 2 || mean.len() > 20_000 || n == 0 {
        return None;
    }
    let vlen = mean.len() / n;
    let (rows, cols) = match (var.plates.len(), vlen) {
        (0, _) => match c.vmp.kind(node) {
            occam_core::moments::MomentKind::Wishart { d } => (d, d),
            _ => (1, vlen),
        },
        (1, 1) => (1, n),
        (_, _) => {
            let first = loaded.model.plates[var.plates[0]].size as usize;
            (first, mean.len() / first.max(1))
        }
    };
    Some((rows, cols, mean))
}

/// Writes the files of a fit into `dir`; `include_data` keeps the observed data's values in
/// `posterior.json` (by default each observed variable is a stub naming its data file).
pub fn write_outputs(dir: &Path, fitted: &Fitted, include_data: bool) -> Result<()> {
    write_outputs_listed(dir, fitted, include_data).map(|_| ())
}

/// [`write_outputs`], returning the names of the files written, in the order written.
pub fn write_outputs_listed(
    dir: &Path,
    fitted: &Fitted,
    include_data: bool,
) -> Result<Vec<String>> {
    let (loaded, c, o) = (fitted.loaded(), fitted.compiled(), fitted.outcome());
    let report = crate::json::Report::new(loaded, c, o, include_data);
    let mut out = Files {
        dir,
        names: Vec::new(),
    };
    write_files(&mut out, loaded, c, o, &report)?;
    // The fit itself, for `occam predict --fit DIR` and `occam fit --init-from DIR`.
    out.write(
        occam::saved::FILE_NAME.into(),
        fitted.saved().to_json().as_bytes(),
    )?;
    Ok(out.names)
}

/// Whether `name` is one of the files `occam fit --out` writes.
fn is_fit_output(name: &str) -> bool {
    let ext_ok = |n: &str, prefix: &str, exts: &[&str]| {
        n.strip_prefix(prefix).is_some_and(|rest| {
            exts.iter()
                .any(|e| rest.ends_with(e) && rest.len() > e.len())
        })
    };
    matches!(
        name,
        "posterior.json" | "bound.csv" | "bound.svg" | occam::saved::FILE_NAME
    ) || ext_ok(name, "posterior_", &[".csv"])
        || ext_ok(name, "hinton_", &[".svg"])
        || ext_ok(name, "chain_", &[".csv", ".svg"])
        || ext_ok(name, "reconstruction_", &[".csv", ".svg"])
        || ext_ok(name, "projection_", &[".csv", ".svg"])
}

/// Checks, after the model has loaded and before the fit, that `dir` can take the outputs:
/// an existing directory is checked as [`atomic::check_dir`] does; a new one is not created
/// (a model with an error leaves nothing behind), only its parent is checked.
pub fn check_out_dir(dir: &Path) -> Result<()> {
    if dir.exists() {
        return atomic::check_dir(dir);
    }
    // The nearest existing ancestor must be a writable directory.
    let ancestor = dir
        .ancestors()
        .skip(1)
        .map(|a| {
            if a.as_os_str().is_empty() {
                Path::new(".")
            } else {
                a
            }
        })
        .find(|a| a.exists())
        .unwrap_or(Path::new("."));
    if !ancestor.is_dir() {
        return Err(Error::io(
            dir,
            format!(
                "cannot write output here: {} exists and is not a directory",
                ancestor.display()
            ),
        ));
    }
    atomic::check_dir(ancestor).map_err(|e| match e {
        Error::Io { message, .. } => Error::io(dir, message),
        e => e,
    })
}

/// [`write_outputs_listed`] as one replacement of the directory: the files are written into a
/// fresh sibling directory `.NAME.occam-PID.new`, which is then renamed to `dir` (the previous
/// run's directory is renamed aside first and removed after). A run killed at any point leaves
/// `dir` holding one whole run, old or new, never a mix (killed between the two renames, `dir`
/// is missing and `.NAME.occam-PID.old` holds the previous run). A directory holding anything
/// but `occam fit` outputs (the user's own files) is never replaced: the files are then written
/// into it one by one, each atomically.
pub fn write_outputs_swapped(
    dir: &Path,
    fitted: &Fitted,
    include_data: bool,
) -> Result<Vec<String>> {
    let io_err = |p: &Path, e: io::Error| Error::io(p, e);
    let replaceable = match std::fs::read_dir(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => true,
        Err(e) => return Err(io_err(dir, e)),
        // A symbolic link is written through, never replaced.
        Ok(_) if std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) => false,
        Ok(entries) => {
            let mut ok = true;
            for e in entries {
                let e = e.map_err(|e| io_err(dir, e))?;
                let name = e.file_name();
                let name = name.to_string_lossy();
                let is_file = e.file_type().is_ok_and(|t| t.is_file());
                if !(is_file && (is_fit_output(&name) || name.starts_with(".occam-"))) {
                    ok = false;
                    break;
                }
            }
            ok
        }
    };
    let base = dir.file_name().map(|b| b.to_string_lossy().into_owned());
    let (Some(base), true) = (base, replaceable) else {
        return write_outputs_listed(dir, fitted, include_data);
    };
    let parent = match dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(p) => p.to_path_buf(),
        None => Path::new(".").to_path_buf(),
    };
    atomic::ensure_dir(&parent)?;
    let pid = std::process::id();
    let fresh = parent.join(format!(".{base}.occam-{pid}.new"));
    let old = parent.join(format!(".{base}.occam-{pid}.old"));
    let _ = std::fs::remove_dir_all(&fresh);
    std::fs::create_dir(&fresh).map_err(|e| io_err(&fresh, e))?;
    let names = match write_outputs_listed(&fresh, fitted, include_data) {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&fresh);
            return Err(e);
        }
    };
    let swapped = (|| {
        if dir.exists() {
            let _ = std::fs::remove_dir_all(&old);
            std::fs::rename(dir, &old).map_err(|e| io_err(dir, e))?;
        }
        std::fs::rename(&fresh, dir).map_err(|e| io_err(dir, e))
    })();
    if let Err(e) = swapped {
        let _ = std::fs::remove_dir_all(&fresh);
        if old.exists() && !dir.exists() {
            let _ = std::fs::rename(&old, dir);
        }
        return Err(e);
    }
    let _ = std::fs::remove_dir_all(&old);
    Ok(names)
}

/// The output directory, and the names written into it so far.
struct Files<'a> {
    dir: &'a Path,
    names: Vec<String>,
}

impl Files<'_> {
    /// Writes `name` atomically and records it.
    fn write(&mut self, name: String, bytes: &[u8]) -> Result<()> {
        atomic::write(&self.dir.join(&name), bytes)?;
        self.names.push(name);
        Ok(())
    }
}

fn write_files(
    out: &mut Files<'_>,
    loaded: &Loaded,
    c: &Compiled,
    o: &Outcome,
    report: &crate::json::Report<'_>,
) -> Result<()> {
    atomic::ensure_dir(out.dir)?;
    // Streamed into the temporary file, from the engine's arrays (no JSON tree, no whole-file
    // string: either ran out of memory on a report of millions of values).
    atomic::write_json_pretty(&out.dir.join("posterior.json"), report)?;
    out.names.push("posterior.json".into());
    let mut csv = String::from("iteration,bound\n");
    for (i, b) in o.bound_trace.iter().enumerate() {
        csv.push_str(&format!("{},{b}\n", i + 1));
    }
    out.write("bound.csv".into(), csv.as_bytes())?;
    let title = format!(
        "{}: L = {:.4}",
        loaded
            .path
            .file_name()
            .map_or(loaded.file_name.clone(), |f| f
                .to_string_lossy()
                .into_owned()),
        o.bound
    );
    out.write(
        "bound.svg".into(),
        svg::bound_plot(&title, &o.bound_trace)?.as_bytes(),
    )?;
    for (v, var) in loaded.model.variables.iter().enumerate() {
        if !matches!(
            occam::posterior::role(loaded, v, c),
            "latent" | "map" | "deterministic"
        ) {
            continue;
        }
        let latent = occam::posterior::role(loaded, v, c) == "latent";
        if let Some(text) = table::variable_csv(loaded, c, v, latent) {
            out.write(format!("posterior_{}.csv", var.name), text.as_bytes())?;
        }
        if let Some((rows, cols, values)) = matrix_of(loaded, c, v) {
            let title = format!(
                "{} (posterior mean, {rows}×{cols})",
                summary::signature(loaded, v)
            );
            let s = hinton::hinton(&title, rows, cols, &values)?;
            out.write(format!("hinton_{}.svg", var.name), s.as_bytes())?;
        }
    }
    for ch in occam::chains::chains(loaded, c) {
        let name = &ch.variable;
        out.write(format!("chain_{name}.csv"), ch.to_csv().as_bytes())?;
        let s = crate::chain_figure::chain_plot(&ch)?;
        out.write(format!("chain_{name}.svg"), s.as_bytes())?;
    }
    for a in occam::latent::ard::ard(loaded, c) {
        let s = crate::latent::ard::relevance_hinton(&a)?;
        let name = format!("hinton_{}_relevance.svg", a.variable);
        out.write(name, s.as_bytes())?;
    }
    for (name, bytes) in crate::latent::pca_outputs::files(loaded, c)? {
        out.write(name, &bytes)?;
    }
    Ok(())
}
