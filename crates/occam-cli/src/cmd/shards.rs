//! `occam fit MODEL --shards NAME=GLOB`: a data-parallel fit in one process. Each file matching
//! GLOB (sorted) is the data NAME of one shard; the shards are compiled one by one from their
//! files (no file is concatenated with another) and swept as one process sweeps all the data
//! (`occam::shard`). Prints the bound and the global variables' posteriors (`--json`: one object).

use std::path::PathBuf;

use occam::data::DataSet;
use occam::shard::{fit_shards, ShardedFitted};
use serde_json::json;

use crate::error::{Error, Result};

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
            d.insert_file(name, f)?;
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

/// Runs the sharded fit and prints it.
pub fn run(
    model: &std::path::Path,
    args: &[String],
    seed: u64,
    max_iter: usize,
    tol: f64,
    as_json: bool,
) -> Result<()> {
    let data = shard_data(args)?;
    let source = occam::model::read_text(model)?;
    let name = model.display().to_string();
    let fit = fit_shards(&name, &source, &data, None, seed, max_iter, tol)?;
    if as_json {
        outln!("{}", report_json(&fit)?);
        return Ok(());
    }
    let (plate, _) = fit.shards[0].plate();
    let rows: Vec<String> = fit.shards.iter().map(|s| s.plate().1.to_string()).collect();
    outln!(
        "{name}: {} shards along plate {plate} (rows {})",
        fit.shards.len(),
        rows.join(", ")
    );
    outln!(
        "bound: {:.6} nats after {} sweeps ({})",
        fit.bound(),
        fit.bound_trace.len(),
        if fit.converged {
            "converged"
        } else {
            "not converged"
        }
    );
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
fn report_json(fit: &ShardedFitted) -> Result<String> {
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
    let rows: Vec<usize> = fit.shards.iter().map(|s| s.plate().1).collect();
    let v = json!({
        "bound": fit.bound(),
        "bound_trace": fit.bound_trace,
        "converged": fit.converged,
        "plate": fit.shards[0].plate().0,
        "shard_rows": rows,
        "values_per_sweep": fit.values_per_sweep,
        "globals": globals,
    });
    serde_json::to_string(&v).map_err(|e| Error::Run(format!("cannot encode JSON: {e}")))
}
