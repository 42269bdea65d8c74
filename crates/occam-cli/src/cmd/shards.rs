//! `occam fit MODEL --shards NAME=GLOB`: a data-parallel fit in one process. Each file matching
//! GLOB (sorted) is the data NAME of one shard; the shards are compiled one by one from their
//! files (no file is concatenated with another) and swept as one process sweeps all the data
//! (`occam::shard`). Prints the bound and the global variables' posteriors (`--json`: one object).

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use occam::data::DataSet;
use occam::shard::{fit_shards, Method, ShardRunOptions, ShardedFitted, SviOptions};
use serde_json::json;

use super::RunArgs;
use crate::error::{Error, Result};

/// The variational-Bayes variant of a sharded fit (`--vb`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Vb {
    /// Every shard's locals, then each global from all shards: the single-process schedule.
    Batch,
    /// Memoized VB (Hughes & Sudderth 2013): one shard at a time, the globals from every shard's
    /// cached statistics; reaches the batch optimum with a bound that never decreases.
    Memoized,
    /// Stochastic VB (Hoffman et al. 2013): each shard (or chunk) a minibatch, natural-gradient
    /// steps of size (t + τ)^−κ; --max-iter counts epochs.
    Svi,
}

/// The options of a fit over shards (`occam fit --shards`, `--stream`).
#[derive(Args, Debug)]
pub struct ShardArgs {
    /// Fit over shards of the data in one process: every file matching GLOB (`*` in its file
    /// name; sorted) is the data NAME of one shard, compiled from its file alone, and the
    /// shards are fitted by --vb (default batch: swept as one process sweeps all the data, from
    /// the sharded start). Prints the bound and the global variables' posteriors. Repeatable
    /// (one glob per data name, each matching as many files). GLOB:COLUMNS@ROWS chooses every
    /// file's columns and rows as --data does.
    #[arg(long = "shards", value_name = "NAME=GLOB", conflicts_with_all = ["data", "out"])]
    pub shards: Vec<String>,
    /// Fit out of core: the rows of one `.npy` file (little-endian float64, C order), Parquet
    /// file (`.parquet`) or CSV file (plain: a header line, no quotes) as data NAME, read
    /// --chunk-rows rows at a time, so a file larger than memory fits (--vb batch or svi;
    /// memory: two chunks' models, whatever the file's size). FILE:COLUMNS chooses columns as
    /// --data does (a text column left out is skipped; a Parquet column left out is not read).
    #[arg(long = "stream", value_name = "NAME=FILE", conflicts_with_all = ["data", "out", "shards"])]
    pub stream: Option<String>,
    /// The rows of each chunk of --stream.
    #[arg(long = "chunk-rows", value_name = "ROWS", default_value_t = 100_000)]
    pub chunk_rows: usize,
    /// How a fit over --shards or --stream updates: `batch` sweeps (the single-process
    /// schedule), `memoized` VB (one shard at a time; --shards only) or stochastic VB `svi` (each
    /// shard or chunk a minibatch; the bound reported is the full bound at the current globals,
    /// every --bound-every epochs).
    #[arg(long = "vb", value_enum, default_value_t = Vb::Batch)]
    pub vb: Vb,
    /// Stochastic VB's forgetting rate κ ∈ (0.5, 1] in the step size ρ_t = (t + τ)^−κ.
    #[arg(long, default_value_t = 0.7)]
    pub kappa: f64,
    /// Stochastic VB's delay τ ≥ 0 in the step size ρ_t = (t + τ)^−κ.
    #[arg(long, default_value_t = 1.0)]
    pub tau: f64,
    /// Stochastic VB: evaluate the full bound every N epochs (a pass of local steps over all the
    /// data at the current globals).
    #[arg(long = "bound-every", value_name = "N", default_value_t = 1)]
    pub bound_every: usize,
    /// Stochastic VB over --shards: minibatches of ROWS rows drawn at random from all the
    /// shards (without replacement within an epoch, from --seed; the same run on any number of
    /// threads), each step's messages scaled by N/|B|; 0: each shard is a minibatch.
    #[arg(long = "batch-rows", value_name = "ROWS", default_value_t = 0)]
    pub batch_rows: usize,
}

impl ShardArgs {
    /// Whether a sharded fit was asked for.
    pub fn given(&self) -> bool {
        !self.shards.is_empty() || self.stream.is_some()
    }

    /// The method, its options checked (the minibatch order's seed is the fit's).
    pub fn method(&self, seed: u64) -> Result<Method> {
        if self.batch_rows > 0 && !matches!(self.vb, Vb::Svi) {
            return Err(Error::Usage(format!(
                "--batch-rows {} applies to stochastic VB only (--vb svi); batch and memoized VB use every row each sweep",
                self.batch_rows
            )));
        }
        Ok(match self.vb {
            Vb::Batch => Method::Batch,
            Vb::Memoized => Method::Memoized,
            Vb::Svi => {
                let options = SviOptions {
                    kappa: self.kappa,
                    tau: self.tau,
                    seed,
                    bound_every: self.bound_every,
                    batch_rows: self.batch_rows,
                };
                options
                    .check()
                    .map_err(|e| Error::Usage(format!("--vb svi: {e}")))?;
                Method::Stochastic(options)
            }
        })
    }
}

/// The shards' data: for every `NAME=GLOB`, its files in order; every glob must match the same
/// number of files (shard s takes the s-th file of each).
pub fn shard_data(args: &[String]) -> Result<Vec<DataSet>> {
    let mut out: Vec<DataSet> = Vec::new();
    for arg in args {
        let Some((name, pattern)) = arg
            .split_once('=')
            .filter(|(n, p)| !n.is_empty() && !p.is_empty())
        else {
            return Err(Error::Usage(format!(
                "bad --shards `{arg}`: expected NAME=GLOB, e.g. --shards 'x=parts/x-*.npy'"
            )));
        };
        // `NAME=GLOB:COLUMNS@ROWS`: every file's columns and rows, as `--data` chooses them.
        let (glob, sel) = occam::data::split_selection(pattern, &format!("--shards `{arg}`"))
            .map_err(occam::Error::from)?;
        let pattern = glob.to_str().unwrap_or(pattern);
        let mut files = matching(pattern)?;
        files.sort();
        if files.is_empty() {
            return Err(Error::Usage(format!(
                "--shards `{arg}`: no file matches `{pattern}`"
            )));
        }
        if out.is_empty() {
            out = vec![DataSet::new(); files.len()];
        } else if out.len() != files.len() {
            return Err(Error::Usage(format!(
                "--shards `{arg}` matches {} files, an earlier --shards {}",
                files.len(),
                out.len()
            )));
        }
        for (d, f) in out.iter_mut().zip(&files) {
            d.insert_selected(name, f, &sel)?;
        }
    }
    Ok(out)
}

/// The files matching `pattern`, whose last component may hold `*` (any run of characters);
/// the directories before it are taken literally (a shard list is one directory of parts).
fn matching(pattern: &str) -> Result<Vec<PathBuf>> {
    let path = std::path::Path::new(pattern);
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let parts: Vec<&str> = name.split('*').collect();
    let fits = |file: &str| {
        let (first, last) = (parts[0], parts[parts.len() - 1]);
        if parts.len() == 1 {
            return file == first;
        }
        if !file.starts_with(first) || file.len() < first.len() + last.len() {
            return false;
        }
        let mut rest = &file[first.len()..file.len() - last.len()];
        if !file.ends_with(last) {
            return false;
        }
        for mid in &parts[1..parts.len() - 1] {
            match rest.find(mid) {
                Some(at) => rest = &rest[at + mid.len()..],
                None => return false,
            }
        }
        true
    };
    let entries = std::fs::read_dir(&dir)
        .map_err(|e| Error::Usage(format!("--shards: {}: {e}", dir.display())))?;
    Ok(entries
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .filter(|e| e.file_name().to_str().is_some_and(fits))
        .map(|e| {
            if dir == std::path::Path::new(".")
                && path.parent().is_none_or(|p| p.as_os_str().is_empty())
            {
                PathBuf::from(e.file_name())
            } else {
                e.path()
            }
        })
        .collect())
}

/// Runs the sharded fit and prints it: restarts, strict mode and the progress bar (or
/// `--progress N` lines, `bar`) as a normal fit has them.
pub fn run(
    model: &std::path::Path,
    args: &ShardArgs,
    run: &RunArgs,
    as_json: bool,
    bar: &mut super::progress::Bar,
) -> Result<()> {
    let method = args.method(run.seed)?;
    let source = occam::model::read_text(model)?;
    let name = model.display().to_string();
    if run.restarts == 0 {
        return Err(Error::Usage("--restarts 0: give 1 or more".into()));
    }
    let o = ShardRunOptions {
        method,
        seed: run.seed,
        restarts: run.restarts,
        max_iter: run.max_iter,
        tol: run.tol,
        decrease_is_error: run.strict,
    };
    let fit = match &args.stream {
        Some(arg) => {
            let Some((data, file)) = arg
                .split_once('=')
                .filter(|(n, f)| !n.is_empty() && !f.is_empty())
            else {
                return Err(Error::Usage(format!(
                    "bad --stream `{arg}`: expected NAME=FILE, e.g. --stream x=big.npy"
                )));
            };
            let (path, columns) = occam::data::split_selection(file, &format!("--stream `{arg}`"))
                .map_err(occam::Error::from)?;
            let chunk = args.chunk_rows;
            occam::stream::fit_stream_columns(
                &name, &source, data, &path, &columns, chunk, &o, bar,
            )?
        }
        None => {
            let data = shard_data(&args.shards)?;
            fit_shards(&name, &source, &data, None, &o, bar)?
        }
    };
    if as_json {
        outln!("{}", report_json(&fit, method)?);
        return Ok(());
    }
    let (plate, _) = fit.shards[0].plate();
    let rows: Vec<String> = fit.rows.iter().map(|r| r.to_string()).collect();
    let what = if args.stream.is_some() {
        "chunks read in turn"
    } else {
        "shards"
    };
    outln!(
        "{name}: {} {what} along plate {plate} (rows {})",
        fit.rows.len(),
        rows.join(", ")
    );
    let state = if fit.converged {
        "converged"
    } else {
        "not converged"
    };
    match method {
        Method::Stochastic(_) => outln!(
            "bound: {:.6} nats after {} epochs, {} minibatch steps (svi; the full bound at the \
             current globals) ({state})",
            fit.bound(),
            fit.epochs.last().copied().unwrap_or(0),
            fit.steps
        ),
        _ => outln!(
            "bound: {:.6} nats after {} {} ({state})",
            fit.bound(),
            fit.bound_trace.len(),
            if method == Method::Memoized {
                "memoized passes"
            } else {
                "sweeps"
            }
        ),
    }
    if fit.restart_bounds.len() > 1 {
        let b: Vec<String> = fit
            .restart_bounds
            .iter()
            .map(|b| format!("{b:.6}"))
            .collect();
        outln!(
            "restarts: {} (bounds {}); kept restart {} (seed {})",
            b.len(),
            b.join(", "),
            fit.best_restart + 1,
            fit.seed
        );
    }
    for w in &fit.warnings {
        outln!("warning: {w}");
    }
    outln!(
        "per sweep: {} f64 values between the shards and the reduction ({} bytes)",
        fit.values_per_sweep,
        8 * fit.values_per_sweep
    );
    outln!("global posteriors:");
    for g in fit.globals() {
        let p = fit.shards[0].posterior(&g)?;
        for q in p.params {
            let v: Vec<String> = q.values.iter().map(|v| format!("{v:.6}")).collect();
            outln!("  {g} {} {:?}: {}", q.name, q.shape, v.join(" "));
        }
    }
    Ok(())
}

/// The fit as one JSON object: bound, trace, shards' rows, values per sweep, the globals'
/// posterior parameters.
fn report_json(fit: &ShardedFitted, method: Method) -> Result<String> {
    let mut globals = serde_json::Map::new();
    for g in fit.globals() {
        let p = fit.shards[0].posterior(&g)?;
        let params: serde_json::Map<String, serde_json::Value> = p
            .params
            .into_iter()
            .map(|q| (q.name, json!({"shape": q.shape, "values": q.values})))
            .collect();
        globals.insert(g, json!({"distribution": p.distribution, "params": params}));
    }
    let rows = &fit.rows;
    let v = json!({
        "method": method.name(),
        "epochs": fit.epochs,
        "steps": fit.steps,
        "bound": fit.bound(),
        "bound_trace": fit.bound_trace,
        "converged": fit.converged,
        "plate": fit.shards[0].plate().0,
        "shard_rows": rows,
        "values_per_sweep": fit.values_per_sweep,
        "restart_bounds": fit.restart_bounds,
        "best_restart": fit.best_restart,
        "seed": fit.seed,
        "warnings": fit.warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "globals": globals,
    });
    serde_json::to_string(&v).map_err(|e| Error::Run(format!("cannot encode JSON: {e}")))
}
