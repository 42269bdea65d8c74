//! Figures of the latent-variable studies (SVG by plotters): the digits' confusion matrix (with
//! its CSV), and the scatter plots of PCA-type fits (projections onto the principal subspace,
//! data against reconstructions).

use plotters::prelude::*;

use occam::error::{Error, Result};

fn plot_err(e: impl std::fmt::Display) -> Error {
    Error::Run(format!("cannot draw the figure: {e}"))
}

/// An SVG confusion matrix: row = true class, column = predicted class, each cell shaded by its
/// share of the row and labelled with its count.
pub fn confusion_matrix(title: &str, confusion: &[Vec<usize>]) -> Result<String> {
    let k = confusion.len();
    let cell = 40i32;
    let (x0, y0) = (70i32, 60i32);
    let (w, h) = (x0 + k as i32 * cell + 20, y0 + k as i32 * cell + 50);
    let mut out = String::new();
    {
        let root =
            SVGBackend::with_string(&mut out, (w.max(300) as u32, h as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let font = ("sans-serif", 14).into_font();
        root.draw(&Text::new(title.to_string(), (10, 8), font.clone()))
            .map_err(plot_err)?;
        root.draw(&Text::new(
            "predicted".to_string(),
            (x0 + k as i32 * cell / 2 - 30, y0 - 38),
            font.clone(),
        ))
        .map_err(plot_err)?;
        root.draw(&Text::new(
            "true".to_string(),
            (10, y0 + k as i32 * cell / 2),
            font.clone(),
        ))
        .map_err(plot_err)?;
        for (r, row) in confusion.iter().enumerate() {
            let total = row.iter().sum::<usize>().max(1) as f64;
            let ri = r as i32;
            root.draw(&Text::new(
                r.to_string(),
                (x0 - 16, y0 + ri * cell + cell / 2 - 7),
                font.clone(),
            ))
            .map_err(plot_err)?;
            root.draw(&Text::new(
                r.to_string(),
                (x0 + ri * cell + cell / 2 - 4, y0 - 18),
                font.clone(),
            ))
            .map_err(plot_err)?;
            for (c, &n) in row.iter().enumerate() {
                let share = n as f64 / total;
                let shade = (255.0 * (1.0 - share)).round() as u8;
                let colour = if r == c {
                    RGBColor(shade, 255 - (255 - shade) / 3, shade)
                } else {
                    RGBColor(255, shade, shade)
                };
                let (cx, cy) = (x0 + c as i32 * cell, y0 + ri * cell);
                root.draw(&Rectangle::new(
                    [(cx, cy), (cx + cell, cy + cell)],
                    colour.filled(),
                ))
                .map_err(plot_err)?;
                root.draw(&Rectangle::new(
                    [(cx, cy), (cx + cell, cy + cell)],
                    RGBColor(200, 200, 200),
                ))
                .map_err(plot_err)?;
                if n > 0 {
                    root.draw(&Text::new(
                        n.to_string(),
                        (cx + 6, cy + cell / 2 - 7),
                        ("sans-serif", 12).into_font(),
                    ))
                    .map_err(plot_err)?;
                }
            }
        }
        let wrong: usize = confusion
            .iter()
            .enumerate()
            .map(|(r, row)| {
                row.iter()
                    .enumerate()
                    .filter(|(c, _)| *c != r)
                    .map(|(_, n)| n)
                    .sum::<usize>()
            })
            .sum();
        let all: usize = confusion.iter().flatten().sum();
        root.draw(&Text::new(
            format!(
                "{wrong} of {all} misclassified ({:.2} %)",
                100.0 * wrong as f64 / all.max(1) as f64
            ),
            (10, y0 + k as i32 * cell + 16),
            font,
        ))
        .map_err(plot_err)?;
        root.present().map_err(plot_err)?;
    }
    Ok(out)
}

/// The confusion matrix as CSV: a header `true,0,1,…`, then one row per true class with the
/// number of its images predicted as each class.
pub fn confusion_csv(confusion: &[Vec<usize>]) -> String {
    let k = confusion.len();
    let mut out = String::from("true");
    (0..k).for_each(|c| out.push_str(&format!(",{c}")));
    out.push('\n');
    for (r, row) in confusion.iter().enumerate() {
        out.push_str(&r.to_string());
        row.iter().for_each(|n| out.push_str(&format!(",{n}")));
        out.push('\n');
    }
    out
}

/// At most this many points are drawn in a scatter plot (every k-th beyond it).
pub const MAX_SCATTER_POINTS: usize = 20_000;

/// An SVG scatter plot of `points` (non-finite ones skipped; thinned to every k-th past
/// [`MAX_SCATTER_POINTS`]), with the diagonal y = x drawn when `diagonal`.
pub fn scatter(
    title: &str,
    (x_label, y_label): (&str, &str),
    points: &[(f64, f64)],
    diagonal: bool,
) -> Result<String> {
    let step = points.len().div_ceil(MAX_SCATTER_POINTS).max(1);
    let shown: Vec<(f64, f64)> = points
        .iter()
        .step_by(step)
        .copied()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
        .collect();
    let range = |f: fn(&(f64, f64)) -> f64| {
        let (lo, hi) = shown
            .iter()
            .map(f)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        if lo.is_finite() && hi > lo {
            let pad = 0.05 * (hi - lo);
            (lo - pad, hi + pad)
        } else if lo.is_finite() {
            (lo - 1.0, lo + 1.0)
        } else {
            (-1.0, 1.0)
        }
    };
    let (mut xr, mut yr) = (range(|p| p.0), range(|p| p.1));
    if diagonal {
        let (lo, hi) = (xr.0.min(yr.0), xr.1.max(yr.1));
        (xr, yr) = ((lo, hi), (lo, hi));
    }
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (640, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 15))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(xr.0..xr.1, yr.0..yr.1)
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .draw()
            .map_err(plot_err)?;
        if diagonal {
            chart
                .draw_series(LineSeries::new(
                    [(xr.0, xr.0), (xr.1, xr.1)],
                    RGBColor(160, 160, 160).stroke_width(1),
                ))
                .map_err(plot_err)?;
        }
        chart
            .draw_series(
                shown
                    .iter()
                    .map(|&p| Circle::new(p, 2, RGBColor(31, 119, 180).mix(0.6).filled())),
            )
            .map_err(plot_err)?;
        root.present().map_err(plot_err)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confusion_csv_has_a_row_per_true_class() {
        let csv = confusion_csv(&[vec![5, 1], vec![0, 7]]);
        assert_eq!(csv, "true,0,1\n0,5,1\n1,0,7\n");
    }

    #[test]
    fn scatter_draws_every_point_up_to_the_cap() {
        let pts: Vec<(f64, f64)> = (0..50).map(|i| (i as f64, (i * i) as f64)).collect();
        let svg = scatter("t", ("x", "y"), &pts, true).unwrap();
        assert_eq!(svg.matches("<circle").count(), 50);
        let many: Vec<(f64, f64)> = (0..45_000).map(|i| (i as f64, 0.0)).collect();
        let svg = scatter("t", ("x", "y"), &many, false).unwrap();
        assert_eq!(svg.matches("<circle").count(), 15_000);
    }
}
