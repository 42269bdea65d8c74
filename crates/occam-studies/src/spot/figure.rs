//! The figure of Winn's Fig. 4.3: the image with each spot's posterior-mean ellipse, coloured by
//! its flag (NORMAL green, BAD red, MISSING yellow; a missing spot is drawn at its rough location
//! with the average radii of the others, as Winn does), and the true ellipses in thin blue.

use plotters::prelude::*;

use super::fit::{Flag, SpotFit};
use super::image::Image;

/// Screen pixels per image pixel.
const ZOOM: i32 = 5;

fn plot_err(e: impl std::fmt::Display) -> String {
    format!("cannot draw the spot figure: {e}")
}

fn ellipse(c: [f64; 2], r: [f64; 2]) -> Vec<(i32, i32)> {
    (0..=72)
        .map(|i| {
            let a = i as f64 * std::f64::consts::TAU / 72.0;
            let x = (c[0] + 0.5 + r[0] * a.cos()) * ZOOM as f64;
            let y = (c[1] + 0.5 + r[1] * a.sin()) * ZOOM as f64;
            (x.round() as i32, y.round() as i32 + 30)
        })
        .collect()
}

/// The SVG (grey levels: log intensity between the image's 1st and 99.9th percentiles).
pub fn figure(img: &Image, fits: &[SpotFit], title: &str) -> Result<String, String> {
    let (w, h) = (img.width as i32 * ZOOM, img.height as i32 * ZOOM + 30);
    let mut sorted: Vec<f64> = img.pixels.iter().map(|v| v.max(1.0).ln()).collect();
    sorted.sort_by(f64::total_cmp);
    let lo = sorted[sorted.len() / 100];
    let hi = sorted[sorted.len() * 999 / 1000].max(lo + 1e-9);
    let normal: Vec<&SpotFit> = fits.iter().filter(|f| f.flag != Flag::Missing).collect();
    let avg = |d: usize| normal.iter().map(|f| f.mean[d]).sum::<f64>() / normal.len().max(1) as f64;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (w as u32, h as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        root.draw(&Text::new(
            title.to_string(),
            (6, 8),
            ("sans-serif", 14).into_font(),
        ))
        .map_err(plot_err)?;
        for y in 0..img.height {
            for x in 0..img.width {
                let t = ((img.at(x, y).max(1.0).ln() - lo) / (hi - lo)).clamp(0.0, 1.0);
                let g = (255.0 * t) as u8;
                let (px, py) = (x as i32 * ZOOM, y as i32 * ZOOM + 30);
                root.draw(&Rectangle::new(
                    [(px, py), (px + ZOOM, py + ZOOM)],
                    RGBColor(g, g, g).filled(),
                ))
                .map_err(plot_err)?;
            }
        }
        for (f, t) in fits.iter().zip(&img.truth) {
            if t.kind != super::image::Kind::Missing {
                root.draw(&PathElement::new(
                    ellipse(t.centre, t.radii),
                    BLUE.stroke_width(1),
                ))
                .map_err(plot_err)?;
            }
            let (c, r, colour) = match f.flag {
                Flag::Normal => ([f.mean[0], f.mean[1]], [f.mean[2], f.mean[3]], GREEN),
                Flag::Bad => ([f.mean[0], f.mean[1]], [f.mean[2], f.mean[3]], RED),
                Flag::Missing => (img.layout.rough(f.spot), [avg(2), avg(3)], YELLOW),
            };
            root.draw(&PathElement::new(ellipse(c, r), colour.stroke_width(2)))
                .map_err(plot_err)?;
        }
        root.present().map_err(plot_err)?;
    }
    Ok(out)
}
