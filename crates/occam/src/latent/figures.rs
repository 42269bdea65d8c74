//! Figures of the latent-variable studies (SVG by plotters): the digits' confusion matrix.

use plotters::prelude::*;

use crate::error::{Error, Result};

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
