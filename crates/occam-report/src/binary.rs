//! The binary-network tools' reports (`occam-binary`: Boltzmann machines and sigmoid belief
//! networks): their errors as library errors, and the figure and tables of every reproduction,
//! written atomically.

use std::path::Path;

use occam_binary::bm::cli as bm;
use occam_binary::bm::BmError;
use occam_binary::sbn::cli as sbn;
use occam_binary::sbn::SbnError;

use crate::figure::{line_chart, Figure, Reference, Series};
use occam::atomic;
use occam::error::{Error, Result};

/// A Boltzmann-machine error as a library error (bad options are usage errors, bad files input
/// errors).
pub fn bm_err(e: BmError) -> Error {
    match e {
        BmError::InvalidOption { .. } => Error::Usage(e.to_string()),
        BmError::Io { .. }
        | BmError::Parse { .. }
        | BmError::Data(_)
        | BmError::InvalidModel(_)
        | BmError::TooManyUnits { .. } => Error::Input(e.to_string()),
        #[allow(unreachable_patterns)]
        _ => Error::Run(e.to_string()),
    }
}

/// A sigmoid-belief-network error as a library error.
pub fn sbn_err(e: SbnError) -> Error {
    match e {
        SbnError::Option { .. } => Error::Usage(e.to_string()),
        SbnError::Parse { .. }
        | SbnError::Io { .. }
        | SbnError::UnitOutOfRange { .. }
        | SbnError::Cycle { .. }
        | SbnError::DuplicateParent { .. }
        | SbnError::NotFinite { .. }
        | SbnError::Length { .. }
        | SbnError::TooManyHidden { .. } => Error::Input(e.to_string()),
        #[allow(unreachable_patterns)]
        _ => Error::Run(e.to_string()),
    }
}

/// File stem of a reproduction's outputs: NAME with `-` and `.` replaced by `_`.
pub fn stem(name: &str) -> String {
    name.replace(['-', '.'], "_")
}

fn write_text(path: &Path, text: &str) -> Result<()> {
    atomic::write(path, text.as_bytes())
}

fn figure(title: &str, x_label: &str, y_label: &str, series: Vec<Series>) -> Figure {
    Figure {
        title: title.into(),
        x_label: x_label.into(),
        y_label: y_label.into(),
        series,
        references: Vec::new(),
    }
}

/// The figure of a Boltzmann-machine reproduction, written as `<dir>/<stem>.svg` (the library has
/// already written the CSV and JSON tables). The Lawrence toy also gets its learning trajectories
/// as `<stem>_trace.csv`.
pub fn bm_figure(dir: &Path, stem: &str, r: &bm::ReproductionReport, seed: u64) -> Result<()> {
    use bm::ReproductionReport as R;
    let fig = match r {
        R::SkFig4(sk) => {
            let pts = |f: fn(&occam_binary::bm::sk::SkRow) -> f64| {
                sk.rows.iter().map(|row| (row.sigma2, f(row))).collect()
            };
            figure(
                &format!(
                    "Leisink & Kappen Fig. 4: SK model, N = {}, σ₁ = {} ({} networks per σ₂)",
                    sk.options.n, sk.options.sigma1, sk.options.networks
                ),
                "σ₂",
                "η (fraction of the gap to log Z closed)",
                vec![
                    Series::new("η mf→tm", pts(|r| r.eta_mf_tm)),
                    Series::new("η tm→to", pts(|r| r.eta_tm_to)),
                ],
            )
        }
        R::LawrenceFig42(rows) => figure(
            "Lawrence Fig. 4.2: mixture mean field on random 10-unit BMs",
            "mixture components M",
            "error",
            vec![
                Series::new(
                    "Σ sq. correlation error",
                    rows.iter()
                        .map(|r| (r.components as f64, r.sum_sq_corr_error))
                        .collect(),
                ),
                Series::new(
                    "bound gap ln Z − L",
                    rows.iter().map(|r| (r.components as f64, r.gap)).collect(),
                ),
            ],
        ),
        R::LawrenceToy(rows) => {
            // The trajectories behind the library's table: the same variants, steps and seed.
            use occam_binary::bm::learn::toy_run;
            let variants = occam_binary::bm::learn::TOY_VARIANTS;
            let mut csv = String::from("variant,step,bias0,bias1,weight\n");
            let mut series = Vec::new();
            for (name, phase, init) in variants {
                let run = toy_run(phase, init, 400, seed).map_err(bm_err)?;
                let mut pts = Vec::with_capacity(run.trace.len());
                for (k, st) in run.trace.iter().enumerate() {
                    csv += &format!(
                        "{name},{},{},{},{}\n",
                        k + 1,
                        st.thresholds[0],
                        st.thresholds[1],
                        st.weights[0]
                    );
                    pts.push(((k + 1) as f64, 0.5 * (st.thresholds[0] + st.thresholds[1])));
                }
                series.push(Series::new(name, pts));
            }
            write_text(&dir.join(format!("{stem}_trace.csv")), &csv)?;
            let target = rows.first().map_or(2f64.ln() / 4.0, |r| r.target);
            let mut f = figure(
                "Lawrence §4.5.2 toy: biases during learning, by negative phase Q⁻",
                "learning step",
                "mean bias ½(b₁ + b₂)",
                series,
            );
            f.references.push(Reference {
                label: format!("ln 2 / 4 = {target:.4}"),
                y: target,
            });
            f
        }
    };
    write_text(&dir.join(format!("{stem}.svg")), &line_chart(&fig))
}

fn num(v: &serde_json::Value, key: &str) -> Result<f64> {
    v[key]
        .as_f64()
        .ok_or_else(|| Error::Run(format!("reproduction report has no number `{key}`")))
}

fn nums(v: &serde_json::Value) -> Result<Vec<f64>> {
    v.as_array()
        .ok_or_else(|| Error::Run(format!("reproduction report: expected an array, got {v}")))?
        .iter()
        .map(|x| {
            x.as_f64()
                .ok_or_else(|| Error::Run(format!("reproduction report: not a number: {x}")))
        })
        .collect()
}

fn array<'a>(v: &'a serde_json::Value, what: &str) -> Result<&'a Vec<serde_json::Value>> {
    v.as_array()
        .ok_or_else(|| Error::Run(format!("reproduction report has no array `{what}`")))
}

/// Tables (`<stem>.json`, `<stem>.csv`) and figure (`<stem>.svg`) of an SBN reproduction, from the
/// JSON report the library returns.
pub fn sbn_outputs(dir: &Path, stem: &str, which: sbn::Reproduction, json: &str) -> Result<()> {
    use sbn::Reproduction as R;
    let v: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| Error::Run(format!("cannot read the reproduction report: {e}")))?;
    let (csv, fig) = match which {
        R::LawrenceFig24 => {
            let err = nums(&v["mean_relative_error"])?;
            let mut csv = String::from("components,mean_relative_error\n");
            for (m, e) in err.iter().enumerate() {
                csv += &format!("{},{e}\n", m + 1);
            }
            let pts = err
                .iter()
                .enumerate()
                .map(|(m, &e)| ((m + 1) as f64, e))
                .collect();
            (
                csv,
                figure(
                    "Lawrence Fig. 2.4: mixtures on random 2–4–6 sigmoid belief networks",
                    "mixture components M (M = 1: mean field)",
                    "mean relative error |L − ln P| / |ln P|",
                    vec![Series::new("mean relative error", pts)],
                ),
            )
        }
        R::LkTable1 => {
            let cells = array(&v, "cells")?;
            let mut csv =
                String::from("a,b,eta,rel_err_mf,rel_err_first,rel_err_third,order_violations\n");
            let mut by_a: Vec<(f64, Vec<(f64, f64)>)> = Vec::new();
            for c in cells {
                let (a, b, eta) = (num(c, "a")?, num(c, "b")?, num(c, "eta")?);
                csv += &format!(
                    "{a},{b},{eta},{},{},{},{}\n",
                    num(c, "rel_err_mf")?,
                    num(c, "rel_err_first")?,
                    num(c, "rel_err_third")?,
                    num(c, "order_violations")?
                );
                match by_a.iter_mut().find(|(x, _)| *x == a) {
                    Some((_, pts)) => pts.push((b, eta)),
                    None => by_a.push((a, vec![(b, eta)])),
                }
            }
            let series = by_a
                .into_iter()
                .map(|(a, mut pts)| {
                    pts.sort_by(|p, q| p.0.total_cmp(&q.0));
                    Series::new(format!("a = {a}"), pts)
                })
                .collect();
            (
                csv,
                figure(
                    "Leisink & Kappen Table 1: η from Saul's mean field to third order (2–4–6 nets)",
                    "weight span b",
                    "η",
                    series,
                ),
            )
        }
        R::LkLearning => {
            let runs = array(&v["runs"], "runs")?;
            let mut csv =
                String::from("run,error_mf,error_third,loglik_exact,loglik_mf,loglik_third\n");
            let (mut mf, mut third) = (Vec::new(), Vec::new());
            for (k, r) in runs.iter().enumerate() {
                let (e1, e3) = (num(r, "error_mf")?, num(r, "error_third")?);
                csv += &format!(
                    "{},{e1},{e3},{},{},{}\n",
                    k + 1,
                    num(r, "loglik_exact")?,
                    num(r, "loglik_mf")?,
                    num(r, "loglik_third")?
                );
                mf.push(((k + 1) as f64, e1));
                third.push(((k + 1) as f64, e3));
            }
            (
                csv,
                figure(
                    "Leisink & Kappen §5.2: weight error after learning a cascade",
                    "run",
                    "weight error ‖θ − θ_exact‖",
                    vec![
                        Series::new("mean field", mf),
                        Series::new("third order", third),
                    ],
                ),
            )
        }
        R::LawrenceBars => {
            let runs = array(&v["runs"], "runs")?
                .iter()
                .map(nums)
                .collect::<Result<Vec<_>>>()?;
            let bound = num(&v, "generator_bound")?;
            let mut csv = String::from("components,mean_loglik,std_error,runs\n");
            let (mut pts, mut errs) = (Vec::new(), Vec::new());
            for (m, r) in runs.iter().enumerate() {
                let n = r.len() as f64;
                let mean = r.iter().sum::<f64>() / n;
                let se = if r.len() > 1 {
                    (r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0) / n).sqrt()
                } else {
                    0.0
                };
                csv += &format!("{},{mean},{se},{}\n", m + 1, r.len());
                pts.push(((m + 1) as f64, mean));
                errs.push(se);
            }
            let mut f = figure(
                "Lawrence Fig. 2.7: bars problem, 1–8–16 networks learnt with mixtures",
                "mixture components M",
                "true log-likelihood per pattern (nats)",
                vec![Series::new("mean over runs (± s.e.)", pts).with_errors(errs)],
            );
            f.references.push(Reference {
                label: format!("generator bound {bound:.4}"),
                y: bound,
            });
            (csv, f)
        }
    };
    atomic::ensure_dir(dir)?;
    write_text(&dir.join(format!("{stem}.json")), &format!("{json}\n"))?;
    write_text(&dir.join(format!("{stem}.csv")), &csv)?;
    write_text(&dir.join(format!("{stem}.svg")), &line_chart(&fig))
}
