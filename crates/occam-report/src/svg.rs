//! The bound-against-iteration plot, drawn with plotters' SVG backend (no system fonts needed).

use plotters::prelude::*;

use occam::error::{Error, Result};

fn plot_err(e: impl std::fmt::Display) -> Error {
    Error::Run(format!("cannot draw the plot: {e}"))
}

/// An SVG line plot of the bound against the iteration.
pub fn bound_plot(title: &str, trace: &[f64]) -> Result<String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (720, 440)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let finite: Vec<f64> = trace.iter().copied().filter(|v| v.is_finite()).collect();
        let (mut lo, mut hi) = finite
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        if !lo.is_finite() {
            (lo, hi) = (-1.0, 1.0);
        }
        let pad = ((hi - lo) * 0.05).max(1e-9 * (1.0 + hi.abs()));
        let n = trace.len().max(2) as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(90)
            .build_cartesian_2d(1f64..n, (lo - pad)..(hi + pad))
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .x_desc("iteration")
            .y_desc("lower bound L(Q)")
            .draw()
            .map_err(plot_err)?;
        chart
            .draw_series(LineSeries::new(
                trace
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| v.is_finite())
                    .map(|(i, &v)| ((i + 1) as f64, v)),
                BLUE.stroke_width(2),
            ))
            .map_err(plot_err)?;
        root.present().map_err(plot_err)?;
    }
    Ok(out)
}

/// Escapes text for SVG/XML.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plot_is_svg() {
        let s = bound_plot("t", &[-10.0, -5.0, -4.5]).unwrap();
        assert!(s.starts_with("<svg") || s.contains("<svg"), "{s}");
        assert!(s.contains("</svg>"));
        let s = bound_plot("one", &[-1.0]).unwrap();
        assert!(s.contains("</svg>"));
    }
}
