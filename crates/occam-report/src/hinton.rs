//! Hinton diagrams (Winn's VIBES shows posteriors of matrices this way): one square per entry,
//! area proportional to its magnitude, white for positive and black for negative values.

use plotters::prelude::*;

use occam::error::{Error, Result};

fn plot_err(e: impl std::fmt::Display) -> Error {
    Error::Run(format!("cannot draw the Hinton diagram: {e}"))
}

/// An SVG Hinton diagram of a `rows × cols` matrix (row-major values).
pub fn hinton(title: &str, rows: usize, cols: usize, values: &[f64]) -> Result<String> {
    let cell = (600 / cols.max(rows).max(1)).clamp(4, 40) as i32;
    let (w, h) = (cols as i32 * cell + 20, rows as i32 * cell + 50);
    let mut out = String::new();
    {
        let root =
            SVGBackend::with_string(&mut out, (w.max(200) as u32, h as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        root.draw(&Text::new(
            title.to_string(),
            (10, 8),
            ("sans-serif", 14).into_font(),
        ))
        .map_err(plot_err)?;
        let max = values.iter().fold(
            0.0f64,
            |m, v| if v.is_finite() { m.max(v.abs()) } else { m },
        );
        let (x0, y0) = (10, 36);
        root.draw(&Rectangle::new(
            [(x0, y0), (x0 + cols as i32 * cell, y0 + rows as i32 * cell)],
            RGBColor(128, 128, 128).filled(),
        ))
        .map_err(plot_err)?;
        for r in 0..rows {
            for c in 0..cols {
                let v = values[r * cols + c];
                if !v.is_finite() || max == 0.0 {
                    continue;
                }
                let side = (cell as f64 * (v.abs() / max).sqrt() * 0.9).round() as i32;
                if side == 0 {
                    continue;
                }
                let cx = x0 + c as i32 * cell + cell / 2;
                let cy = y0 + r as i32 * cell + cell / 2;
                let color = if v >= 0.0 { WHITE } else { BLACK };
                root.draw(&Rectangle::new(
                    [
                        (cx - side / 2, cy - side / 2),
                        (cx - side / 2 + side, cy - side / 2 + side),
                    ],
                    color.filled(),
                ))
                .map_err(plot_err)?;
            }
        }
        root.present().map_err(plot_err)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squares_for_nonzero_entries() {
        let s = hinton("m", 2, 2, &[1.0, -0.5, 0.0, 0.25]).unwrap();
        assert!(s.contains("</svg>"));
        // Background plus three non-zero squares (plus the white page).
        assert!(s.matches("<rect").count() >= 4, "{s}");
    }
}
