//! `occam compare --method ...` and `--plate NAME=SIZES`: several evidence estimates per model
//! in one table (model × method, ± standard errors, posterior model probabilities per method,
//! seconds per method), and one model file swept over a plate's size.

use occam::evidence::{compare_evidence, Evidence, EvidenceRow, Method, Options};
use occam::{Model, Observer, Settings};
use occam_report::evidence::{best_per_method, compare_json, plate_sizes, row_margins};

use super::compare::{probability, CompareArgs};
use super::progress::Bar;
use crate::error::{Error, Result};

/// The methods asked for (`vb` when none is).
pub fn methods(given: Option<&[String]>) -> Result<Vec<Method>> {
    let Some(given) = given else {
        return Ok(vec![Method::Vb]);
    };
    let mut out: Vec<Method> = Vec::new();
    for s in given {
        let m = Method::parse(s).map_err(|e| match e {
            Error::Usage(m) => Error::Usage(format!("--{m}")),
            e => e,
        })?;
        if !out.contains(&m) {
            out.push(m);
        }
    }
    if out.is_empty() {
        return Err(Error::Usage("--method: give at least one method".into()));
    }
    Ok(out)
}

/// The models of a plate sweep `NAME=SIZES` over the one model given.
pub fn sweep(models: &[Model], spec: &str) -> Result<Vec<Model>> {
    let [model] = models else {
        return Err(Error::Usage(format!(
            "--plate sweeps one model file, got {}",
            models.len()
        )));
    };
    let bad = || {
        Error::Usage(format!(
            "--plate {spec}: give NAME=FROM..TO or NAME=A,B,C with sizes from 1, e.g. K=1..6"
        ))
    };
    let (name, list) = spec.split_once('=').ok_or_else(bad)?;
    let list = plate_sizes(list).ok_or_else(bad)?;
    list.iter()
        .map(|&k| {
            model.with_plate(name.trim(), k).map_err(|e| match e {
                Error::Usage(m) => Error::Usage(format!("--{m}")),
                e => e,
            })
        })
        .collect()
}

/// The plate of `--plate NAME=SIZES` (the sweep's warm starts run along it).
pub fn swept_plate(a: &CompareArgs) -> Option<String> {
    let spec = a.plate.as_deref()?;
    spec.split_once('=')
        .map(|(name, _)| name.trim().to_string())
}

/// Runs the comparison by `methods` and prints it.
pub fn run(
    a: &CompareArgs,
    models: &[Model],
    settings: &Settings,
    priors: &[f64],
    methods: &[Method],
) -> Result<()> {
    let opts = Options {
        samples: a.samples,
        seed: a.run.seed,
        widen: a.widen,
        max_assignments: a.max_assignments,
        temperatures: a.temperatures,
        chains: a.chains,
        ais_moves: occam::evidence::AisMoves::parse(&a.ais_moves)?,
        folds: a.folds,
        mixed_bounds: a.mixed_bounds,
        plate: swept_plate(a),
        ..Options::default()
    };
    let rows = compare_evidence(models, settings, priors, methods, &opts, &mut |i| {
        Box::new(Bar::new(models[i].name())) as Box<dyn Observer>
    })
    .map_err(|e| match e {
        Error::Usage(m) => Error::Usage(format!("--{m}")),
        e => e,
    })?;
    super::compare_extras::average(a, &rows, methods)?;
    super::compare_extras::plot(a, &rows, methods)?;
    let name = |r: &EvidenceRow| r.fitted.loaded().file_name.clone();
    let best = best_per_method(&rows, methods);
    if a.json {
        outln!("{}", compare_json(&rows, methods));
        return Ok(());
    }
    let width = rows.iter().map(|r| name(r).len()).max().unwrap_or(5).max(5);
    outln!(
        "{:<width$}  {:<7}  {:<18}  {:>14}  {:>8}  {:>9}  {:>8}  note",
        "model",
        "method",
        "kind",
        "ln p(D) nats",
        "± se",
        "P(model)",
        "seconds"
    );
    for r in &rows {
        for (j, e) in r.evidence.iter().enumerate() {
            let model = if j == 0 { name(r) } else { String::new() };
            match e {
                Evidence::Estimate(e) => outln!(
                    "{:<width$}  {:<7}  {:<18}  {:>14.4}  {:>8}  {:>9}  {:>8.3}  {}",
                    model,
                    e.method.name(),
                    e.kind.label(),
                    e.log_evidence,
                    e.se.map_or("-".into(), |s| format!("{s:.4}")),
                    r.probability[j].map_or("-".into(), probability),
                    e.seconds,
                    e.note
                ),
                Evidence::NotApplicable { method, reason } => outln!(
                    "{:<width$}  {:<7}  {:<18}  {:>14}  {:>8}  {:>9}  {:>8}  {}",
                    model,
                    method.name(),
                    "n/a",
                    "-",
                    "-",
                    "-",
                    "-",
                    reason
                ),
            }
        }
    }
    let margins = row_margins(&rows, methods);
    for (j, (m, b)) in methods.iter().zip(&best).enumerate() {
        let unreliable = rows.iter().any(|r| r.evidence[j].unreliable());
        // How clearly it wins: `by X nats over Y`, and why that is weak when it is.
        let margin = margins[j].as_ref().map_or(String::new(), |g| {
            format!(" ({})", g.describe(|i| name(&rows[i])))
        });
        match b {
            // A ranking over an estimate flagged unreliable says so on the line a reader acts on.
            Some(b) if unreliable => outln!(
                "best by {}: {b}{margin} (UNRELIABLE: some estimates are flagged, see their notes; \
                 check with exact, more --samples or --temperatures, or vbsym)",
                m.name()
            ),
            Some(b) => outln!("best by {}: {b}{margin}", m.name()),
            None => outln!("best by {}: - (not every model has it)", m.name()),
        }
    }
    if let Some(line) = disagreement(methods, &best, &margins) {
        outln!("{line}");
    }
    for r in &rows {
        for w in &r.fitted.outcome().warnings {
            eprintln!("warning: {}: {w}", name(r));
        }
    }
    Ok(())
}

/// When the methods (other than `cv`, which ranks held-out prediction, not evidence) pick
/// different best models, one line saying so, and whether every margin behind those picks is
/// weak: then the data do not choose between the models, whatever the table's order.
fn disagreement(
    methods: &[Method],
    best: &[Option<String>],
    margins: &[Option<occam::evidence::Margin>],
) -> Option<String> {
    let picks: Vec<(usize, &String)> = (0..methods.len())
        .filter(|&j| methods[j] != Method::Cv)
        .filter_map(|j| best[j].as_ref().map(|b| (j, b)))
        .collect();
    let first = picks.first()?.1;
    if picks.iter().all(|(_, b)| *b == first) {
        return None;
    }
    // Grouped by the model picked, in the order of the methods: `vb → A; exact, is → B`.
    let mut groups: Vec<(&String, Vec<&str>)> = Vec::new();
    for (j, b) in &picks {
        match groups.iter_mut().find(|(g, _)| g == b) {
            Some((_, ms)) => ms.push(methods[*j].name()),
            None => groups.push((b, vec![methods[*j].name()])),
        }
    }
    let list: Vec<String> = groups
        .iter()
        .map(|(b, ms)| format!("{} → {b}", ms.join(", ")))
        .collect();
    let all_weak = picks
        .iter()
        .all(|(j, _)| margins[*j].as_ref().is_some_and(|g| g.weak().is_some()));
    Some(if all_weak {
        format!(
            "the methods disagree ({}), each by a weak margin: the data do not choose between \
             these models",
            list.join("; ")
        )
    } else {
        format!(
            "the methods disagree ({}); see each margin above",
            list.join("; ")
        )
    })
}
