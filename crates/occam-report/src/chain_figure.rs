//! The chain figures `occam fit --out` writes (plotters' SVG backend): a discrete chain's state
//! marginals q(z_t = k) over time, one panel per sequence (the first four), with the Viterbi path
//! as coloured dots along the top; a Gaussian chain's smoothed means with ±2 sd bands, one panel
//! per state dimension (the first four) of the first sequence.

use plotters::prelude::*;

use occam::chains::ChainReport;
use occam::error::{Error, Result};

fn plot_err(e: impl std::fmt::Display) -> Error {
    Error::Run(format!("cannot draw the chain plot: {e}"))
}

/// At most this many panels.
const PANELS: usize = 4;

fn colour(k: usize) -> RGBColor {
    let (r, g, b) = Palette99::pick(k).to_rgba().rgb();
    RGBColor(r, g, b)
}

/// The figure of one chain as SVG text.
pub fn chain_plot(r: &ChainReport) -> Result<String> {
    let panels = if r.is_discrete() {
        r.lengths.len().min(PANELS)
    } else {
        r.states.min(PANELS)
    }
    .max(1);
    let mut out = String::new();
    {
        let root =
            SVGBackend::with_string(&mut out, (760, 60 + 220 * panels as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let title = if r.is_discrete() {
            format!(
                "{} ~ {}: q(state) per step, dots = Viterbi path",
                r.variable, r.family
            )
        } else {
            format!(
                "{} ~ {}: smoothed mean ± 2 sd{}",
                r.variable,
                r.family,
                if r.lengths.len() > 1 {
                    " (sequence 0)"
                } else {
                    ""
                }
            )
        };
        let root = root.titled(&title, ("sans-serif", 16)).map_err(plot_err)?;
        for (i, area) in root.split_evenly((panels, 1)).iter().enumerate() {
            if r.is_discrete() {
                discrete_panel(area, r, i)?;
            } else {
                gaussian_panel(area, r, i)?;
            }
        }
        root.present().map_err(plot_err)?;
    }
    Ok(out)
}

fn discrete_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    r: &ChainReport,
    s: usize,
) -> Result<()> {
    let len = r.lengths[s];
    let mut chart = ChartBuilder::on(area)
        .caption(format!("sequence {s} ({len} steps)"), ("sans-serif", 13))
        .margin(8)
        .x_label_area_size(28)
        .y_label_area_size(44)
        .build_cartesian_2d(0f64..(len.max(2) - 1) as f64, 0f64..1.1f64)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc("step")
        .y_desc("q(state)")
        .draw()
        .map_err(plot_err)?;
    for k in 0..r.states {
        let c = colour(k);
        chart
            .draw_series(LineSeries::new(
                (0..len).map(|t| (t as f64, r.row(&r.values, s, t)[k])),
                c.stroke_width(2),
            ))
            .map_err(plot_err)?
            .label(format!("state {k}"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
    }
    if let Some(path) = r.viterbi.get(s) {
        chart
            .draw_series(
                path.iter()
                    .enumerate()
                    .map(|(t, &k)| Circle::new((t as f64, 1.05), 3, colour(k).filled())),
            )
            .map_err(plot_err)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(plot_err)?;
    Ok(())
}

fn gaussian_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    r: &ChainReport,
    i: usize,
) -> Result<()> {
    let len = r.lengths.first().copied().unwrap_or(0);
    let pts: Vec<(f64, f64, f64)> = (0..len)
        .map(|t| {
            (
                t as f64,
                r.row(&r.values, 0, t)[i],
                2.0 * r.row(&r.sds, 0, t)[i],
            )
        })
        .filter(|(_, m, b)| m.is_finite() && b.is_finite())
        .collect();
    let (mut lo, mut hi) = pts
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |acc, p| {
            (acc.0.min(p.1 - p.2), acc.1.max(p.1 + p.2))
        });
    if !lo.is_finite() || !hi.is_finite() {
        (lo, hi) = (-1.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(1e-9);
    let mut chart = ChartBuilder::on(area)
        .caption(format!("state dimension {i}"), ("sans-serif", 13))
        .margin(8)
        .x_label_area_size(28)
        .y_label_area_size(54)
        .build_cartesian_2d(0f64..(len.max(2) - 1) as f64, (lo - pad)..(hi + pad))
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc("step")
        .y_desc("x")
        .draw()
        .map_err(plot_err)?;
    let band: Vec<(f64, f64)> = pts
        .iter()
        .map(|p| (p.0, p.1 + p.2))
        .chain(pts.iter().rev().map(|p| (p.0, p.1 - p.2)))
        .collect();
    chart
        .draw_series(std::iter::once(Polygon::new(band, BLUE.mix(0.2).filled())))
        .map_err(plot_err)?;
    chart
        .draw_series(LineSeries::new(
            pts.iter().map(|p| (p.0, p.1)),
            BLUE.stroke_width(2),
        ))
        .map_err(plot_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(discrete: bool) -> ChainReport {
        let (steps, states) = (5, 2);
        let values: Vec<f64> = (0..2 * steps * states)
            .map(|i| if i % 2 == 0 { 0.25 } else { 0.75 })
            .collect();
        ChainReport {
            variable: "z".into(),
            family: if discrete {
                "MarkovChain"
            } else {
                "GaussianMarkovChain"
            },
            lengths: vec![5, 3],
            steps,
            states,
            sds: if discrete {
                Vec::new()
            } else {
                vec![0.5; values.len()]
            },
            values,
            viterbi: if discrete {
                vec![vec![1; 5], vec![0; 3]]
            } else {
                Vec::new()
            },
        }
    }

    #[test]
    fn figures_have_one_line_per_state_or_dimension_and_the_path() {
        let svg = chain_plot(&report(true)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("Viterbi"));
        // Two sequences × two states, plus their two legend entries per panel (axes are drawn
        // with width 1).
        let series = svg
            .split("<polyline")
            .filter(|p| p.split("/>").next().unwrap().contains("stroke-width=\"2\""))
            .count();
        assert_eq!(series, 2 * 2 + 2 * 2, "{svg}");
        // One dot per step of each path.
        assert_eq!(svg.matches("<circle").count(), 5 + 3);
        let svg = chain_plot(&report(false)).unwrap();
        assert!(svg.contains("± 2 sd"));
        assert_eq!(svg.matches("<polygon").count(), 2);
    }

    #[test]
    fn csv_and_json_stop_at_each_sequence_end() {
        let r = report(true);
        let csv = r.to_csv();
        assert_eq!(csv.lines().count(), 1 + 5 + 3);
        assert!(csv.starts_with("sequence,step,p_0,p_1,viterbi\n0,0,0.25,0.75,1\n"));
        let j = r.to_json();
        assert_eq!(j["marginals"][1].as_array().unwrap().len(), 3);
        assert_eq!(j["viterbi"][0].as_array().unwrap().len(), 5);
        let g = report(false).to_csv();
        assert!(g.starts_with("sequence,step,mean_0,mean_1,sd_0,sd_1\n"));
    }
}
