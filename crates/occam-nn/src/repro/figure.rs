//! Figures attached to a reproduced table: data as CSV and an SVG drawn with plotters' SVG backend.

use super::ReproError;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A 2-D figure: one or more named series, drawn as points (`scatter`) or lines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// File stem.
    pub name: String,
    /// Caption.
    pub title: String,
    /// x-axis label.
    pub x_label: String,
    /// y-axis label.
    pub y_label: String,
    /// (series name, points).
    pub series: Vec<(String, Vec<[f64; 2]>)>,
    /// Draw points instead of lines.
    pub scatter: bool,
}

/// Drawing a figure failed: plotters' message, and the figure.
#[derive(Debug, thiserror::Error)]
#[error("{why}")]
pub struct PlotError {
    /// The figure's name.
    pub figure: String,
    /// What plotters reported.
    pub why: String,
}

fn plot_err(path: &Path) -> impl Fn(PlotError) -> ReproError + '_ {
    move |e| ReproError::Io {
        path: path.display().to_string(),
        source: std::io::Error::other(e),
    }
}

impl Figure {
    fn plot_error(&self, e: impl std::fmt::Display) -> PlotError {
        PlotError {
            figure: self.name.clone(),
            why: e.to_string(),
        }
    }

    /// CSV text: `series,x,y`.
    pub fn to_csv(&self) -> String {
        let mut s = String::from("series,x,y\n");
        for (name, pts) in &self.series {
            for p in pts {
                s.push_str(&format!(
                    "\"{}\",{},{}\n",
                    name.replace('"', "'"),
                    p[0],
                    p[1]
                ));
            }
        }
        s
    }

    /// The SVG text.
    pub fn to_svg(&self) -> Result<String, PlotError> {
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (720, 440)).into_drawing_area();
            root.fill(&WHITE).map_err(|e| self.plot_error(e))?;
            let all: Vec<[f64; 2]> = self
                .series
                .iter()
                .flat_map(|s| s.1.iter().copied())
                .filter(|p| p[0].is_finite() && p[1].is_finite())
                .collect();
            let range = |i: usize| {
                let (lo, hi) = all
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                        (a.min(p[i]), b.max(p[i]))
                    });
                if lo.is_finite() {
                    let pad = ((hi - lo) * 0.05).max(1e-9 * (1.0 + hi.abs()));
                    (lo - pad)..(hi + pad)
                } else {
                    -1.0..1.0
                }
            };
            let mut chart = ChartBuilder::on(&root)
                .caption(&self.title, ("sans-serif", 16))
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(70)
                .build_cartesian_2d(range(0), range(1))
                .map_err(|e| self.plot_error(e))?;
            chart
                .configure_mesh()
                .x_desc(self.x_label.as_str())
                .y_desc(self.y_label.as_str())
                .draw()
                .map_err(|e| self.plot_error(e))?;
            let colours = [BLUE, RED, BLACK, GREEN, MAGENTA];
            for (i, (_, pts)) in self.series.iter().enumerate() {
                let c = colours[i % colours.len()];
                if self.scatter {
                    chart
                        .draw_series(pts.iter().map(|p| Circle::new((p[0], p[1]), 4, c.filled())))
                        .map_err(|e| self.plot_error(e))?;
                } else {
                    chart
                        .draw_series(LineSeries::new(
                            pts.iter().map(|p| (p[0], p[1])),
                            c.stroke_width(2),
                        ))
                        .map_err(|e| self.plot_error(e))?;
                }
            }
            root.present().map_err(|e| self.plot_error(e))?;
        }
        Ok(out)
    }

    /// Writes `<name>.csv` and `<name>.svg` into `dir`.
    pub fn write(&self, dir: &Path) -> Result<(), ReproError> {
        let csv = dir.join(format!("{}.csv", self.name));
        occam_io::write(&csv, self.to_csv().as_bytes()).map_err(|source| ReproError::Io {
            path: csv.display().to_string(),
            source,
        })?;
        let svg = dir.join(format!("{}.svg", self.name));
        let text = self.to_svg().map_err(plot_err(&svg))?;
        occam_io::write(&svg, text.as_bytes()).map_err(|source| ReproError::Io {
            path: svg.display().to_string(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_render_as_svg_and_csv() {
        let f = Figure {
            name: "f".into(),
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![
                ("a".into(), vec![[0.0, 1.0], [1.0, 2.0]]),
                ("b".into(), vec![[0.5, 1.5]]),
            ],
            scatter: true,
        };
        let svg = f.to_svg().unwrap();
        assert!(svg.contains("<svg") && svg.contains("</svg>") && svg.contains("<circle"));
        assert_eq!(f.to_csv().lines().count(), 4);
        let lines = Figure {
            scatter: false,
            ..f
        };
        assert!(lines.to_svg().unwrap().contains("<polyline"));
    }
}
