//! A small, dependency-free SVG line chart for the reproductions of the binary-network studies:
//! axes with ticks and numeric labels, a title, axis labels, named series with distinct colours
//! and markers, a legend, optional horizontal reference lines and optional error bars.
//!
//! Every series is drawn as exactly one `<polyline class="series">` (carrying the series label in
//! `data-label`), so the figures can be checked mechanically. Points with a non-finite coordinate
//! are skipped; a series with a single point is drawn as its marker.

use std::fmt::Write as _;

use super::svg::escape;

/// One named series of (x, y) points.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// Points; those with a non-finite coordinate are skipped.
    pub points: Vec<(f64, f64)>,
    /// Optional half-widths of error bars, one per point (non-finite or ≤ 0: no bar).
    pub errors: Option<Vec<f64>>,
    /// Draw the line dashed.
    pub dashed: bool,
}

impl Series {
    /// A solid series without error bars.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Series {
            label: label.into(),
            points,
            errors: None,
            dashed: false,
        }
    }

    /// Adds error bars (half-widths, one per point).
    pub fn with_errors(mut self, errors: Vec<f64>) -> Self {
        self.errors = Some(errors);
        self
    }

    /// Draws the series dashed.
    #[allow(dead_code)] // for published reference curves; the studies expose none yet
    pub fn dashed(mut self) -> Self {
        self.dashed = true;
        self
    }
}

/// A horizontal reference line y = `y` (e.g. a bound or a published value).
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// Legend label.
    pub label: String,
    /// Height.
    pub y: f64,
}

/// A line chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Figure {
    /// Title above the plot.
    pub title: String,
    /// Label of the x axis.
    pub x_label: String,
    /// Label of the y axis.
    pub y_label: String,
    /// The series.
    pub series: Vec<Series>,
    /// Horizontal reference lines (dashed, grey-toned).
    pub references: Vec<Reference>,
}

/// Width and height of the view box.
pub const WIDTH: f64 = 760.0;
/// Height of the view box.
pub const HEIGHT: f64 = 480.0;

const LEFT: f64 = 84.0;
const RIGHT: f64 = 220.0; // room for the legend
const TOP: f64 = 46.0;
const BOTTOM: f64 = 62.0;

const COLOURS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];
const REF_COLOURS: [&str; 4] = ["#555555", "#999999", "#333333", "#777777"];

/// Font size (at most `max`) at which `text` fits into `width` (sans-serif, ~0.6 em per char).
fn fit_font(text: &str, max: f64, width: f64) -> f64 {
    let chars = text.chars().count().max(1) as f64;
    (width / (0.6 * chars)).clamp(7.0, max)
}

/// "Nice" tick positions covering [lo, hi] (about `n` ticks), and the step.
fn ticks(lo: f64, hi: f64, n: usize) -> (Vec<f64>, f64) {
    let span = (hi - lo).abs().max(f64::MIN_POSITIVE);
    let raw = span / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil();
    let last = (hi / step).floor();
    let mut t = Vec::new();
    let mut k = first;
    while k <= last + 1e-9 && t.len() < 50 {
        let v = k * step;
        t.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        k += 1.0;
    }
    (t, step)
}

fn tick_label(v: f64, step: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if !(1e-3..1e5).contains(&a) {
        return format!("{v:.1e}");
    }
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
            + usize::from(step / 10f64.powf(step.log10().floor()) == 2.5)
    };
    format!("{v:.decimals$}")
}

/// Padded range of finite values; a degenerate range is widened.
fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if hi - lo <= 1e-12 * (1.0 + lo.abs()) {
        let d = 0.1 * lo.abs().max(1.0);
        return (lo - d, hi + d);
    }
    let pad = 0.05 * (hi - lo);
    (lo - pad, hi + pad)
}

fn marker(out: &mut String, k: usize, x: f64, y: f64, colour: &str) {
    let r = 4.0;
    let _ = match k % 5 {
        0 => writeln!(
            out,
            r#"<circle class="marker" cx="{x:.2}" cy="{y:.2}" r="{r}" fill="{colour}"/>"#
        ),
        1 => writeln!(
            out,
            r#"<rect class="marker" x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{colour}"/>"#,
            x - r,
            y - r,
            2.0 * r,
            2.0 * r
        ),
        2 => writeln!(
            out,
            r#"<polygon class="marker" points="{:.2},{:.2} {:.2},{:.2} {:.2},{:.2}" fill="{colour}"/>"#,
            x,
            y - r - 1.0,
            x - r - 0.5,
            y + r,
            x + r + 0.5,
            y + r
        ),
        3 => writeln!(
            out,
            r#"<polygon class="marker" points="{:.2},{:.2} {:.2},{:.2} {:.2},{:.2} {:.2},{:.2}" fill="{colour}"/>"#,
            x,
            y - r - 1.0,
            x + r + 1.0,
            y,
            x,
            y + r + 1.0,
            x - r - 1.0,
            y
        ),
        _ => writeln!(
            out,
            r#"<circle class="marker" cx="{x:.2}" cy="{y:.2}" r="{r}" fill="white" stroke="{colour}" stroke-width="2"/>"#
        ),
    };
}

/// The SVG text of a line chart.
pub fn line_chart(f: &Figure) -> String {
    let finite = |&(x, y): &(f64, f64)| x.is_finite() && y.is_finite();
    let (x_lo, x_hi) = range(
        f.series
            .iter()
            .flat_map(|s| s.points.iter().filter(|p| finite(p)).map(|p| p.0)),
    );
    let err = |s: &Series, i: usize| {
        s.errors
            .as_ref()
            .and_then(|e| e.get(i).copied())
            .filter(|e| e.is_finite() && *e > 0.0)
            .unwrap_or(0.0)
    };
    let ys = f.series.iter().flat_map(|s| {
        s.points
            .iter()
            .enumerate()
            .filter(|(_, p)| finite(p))
            .flat_map(move |(i, p)| [p.1 - err(s, i), p.1 + err(s, i)])
    });
    let (y_lo, y_hi) = range(ys.chain(f.references.iter().map(|r| r.y)));
    let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let sx = |x: f64| LEFT + (x - x_lo) / (x_hi - x_lo) * pw;
    let sy = |y: f64| TOP + (y_hi - y) / (y_hi - y_lo) * ph;

    let mut o = String::new();
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif">"#
    );
    let _ = writeln!(
        o,
        r#"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
    );
    let _ = writeln!(
        o,
        r#"<text class="title" x="{:.2}" y="26" font-size="{:.1}" text-anchor="middle">{}</text>"#,
        WIDTH / 2.0,
        fit_font(&f.title, 17.0, WIDTH - 20.0),
        escape(&f.title)
    );
    // Frame, grid and ticks.
    let _ = writeln!(
        o,
        r##"<rect class="frame" x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#000"/>"##
    );
    let (xt, xs) = ticks(x_lo, x_hi, 6);
    for t in xt {
        let x = sx(t);
        let _ = writeln!(
            o,
            r##"<line class="grid" x1="{x:.2}" y1="{TOP}" x2="{x:.2}" y2="{:.2}" stroke="#e5e5e5"/>"##,
            TOP + ph
        );
        let _ = writeln!(
            o,
            r##"<line class="tick" x1="{x:.2}" y1="{:.2}" x2="{x:.2}" y2="{:.2}" stroke="#000"/>"##,
            TOP + ph,
            TOP + ph + 5.0
        );
        let _ = writeln!(
            o,
            r#"<text class="tick-label" x="{x:.2}" y="{:.2}" font-size="12" text-anchor="middle">{}</text>"#,
            TOP + ph + 19.0,
            tick_label(t, xs)
        );
    }
    let (yt, ys) = ticks(y_lo, y_hi, 6);
    for t in yt {
        let y = sy(t);
        let _ = writeln!(
            o,
            r##"<line class="grid" x1="{LEFT}" y1="{y:.2}" x2="{:.2}" y2="{y:.2}" stroke="#e5e5e5"/>"##,
            LEFT + pw
        );
        let _ = writeln!(
            o,
            r##"<line class="tick" x1="{:.2}" y1="{y:.2}" x2="{LEFT}" y2="{y:.2}" stroke="#000"/>"##,
            LEFT - 5.0
        );
        let _ = writeln!(
            o,
            r#"<text class="tick-label" x="{:.2}" y="{:.2}" font-size="12" text-anchor="end">{}</text>"#,
            LEFT - 8.0,
            y + 4.0,
            tick_label(t, ys)
        );
    }
    let _ = writeln!(
        o,
        r#"<text class="axis-label" x="{:.2}" y="{:.2}" font-size="14" text-anchor="middle">{}</text>"#,
        LEFT + pw / 2.0,
        HEIGHT - 16.0,
        escape(&f.x_label)
    );
    let _ = writeln!(
        o,
        r#"<text class="axis-label" x="18" y="{:.2}" font-size="14" text-anchor="middle" transform="rotate(-90 18 {:.2})">{}</text>"#,
        TOP + ph / 2.0,
        TOP + ph / 2.0,
        escape(&f.y_label)
    );

    // Reference lines.
    let lx = LEFT + pw + 16.0;
    let mut ly = TOP + 8.0;
    let mut legend = String::new();
    for (k, r) in f.references.iter().enumerate() {
        if !r.y.is_finite() {
            continue;
        }
        let c = REF_COLOURS[k % REF_COLOURS.len()];
        let y = sy(r.y);
        let _ = writeln!(
            o,
            r#"<line class="reference" data-label="{}" x1="{LEFT}" y1="{y:.2}" x2="{:.2}" y2="{y:.2}" stroke="{c}" stroke-width="1.5" stroke-dasharray="8 4"/>"#,
            escape(&r.label),
            LEFT + pw
        );
        let _ = writeln!(
            legend,
            r#"<line x1="{lx:.2}" y1="{ly:.2}" x2="{:.2}" y2="{ly:.2}" stroke="{c}" stroke-width="1.5" stroke-dasharray="8 4"/>"#,
            lx + 26.0
        );
        let _ = writeln!(
            legend,
            r#"<text class="legend" x="{:.2}" y="{:.2}" font-size="{:.1}">{}</text>"#,
            lx + 32.0,
            ly + 4.0,
            fit_font(&r.label, 12.0, WIDTH - lx - 36.0),
            escape(&r.label)
        );
        ly += 20.0;
    }

    // Series.
    for (k, s) in f.series.iter().enumerate() {
        let c = COLOURS[k % COLOURS.len()];
        let pts: Vec<(usize, f64, f64)> = s
            .points
            .iter()
            .enumerate()
            .filter(|(_, p)| finite(p))
            .map(|(i, &(x, y))| (i, x, y))
            .collect();
        let coords: Vec<String> = pts
            .iter()
            .map(|&(_, x, y)| format!("{:.2},{:.2}", sx(x), sy(y)))
            .collect();
        let dash = if s.dashed {
            r#" stroke-dasharray="6 4""#
        } else {
            ""
        };
        let _ = writeln!(
            o,
            r#"<polyline class="series" data-label="{}" points="{}" fill="none" stroke="{c}" stroke-width="2"{dash}/>"#,
            escape(&s.label),
            coords.join(" ")
        );
        let many = pts.len() > 40;
        for &(i, x, y) in &pts {
            let e = err(s, i);
            if e > 0.0 {
                let (px, y1, y2) = (sx(x), sy(y - e), sy(y + e));
                let _ = writeln!(
                    o,
                    r#"<path class="error-bar" d="M{px:.2},{y1:.2} V{y2:.2} M{:.2},{y1:.2} H{:.2} M{:.2},{y2:.2} H{:.2}" stroke="{c}" fill="none"/>"#,
                    px - 4.0,
                    px + 4.0,
                    px - 4.0,
                    px + 4.0
                );
            }
            // Long trajectories get no per-point markers (they would hide the line).
            if !many || pts.len() == 1 {
                marker(&mut o, k, sx(x), sy(y), c);
            }
        }
        let _ = writeln!(
            legend,
            r#"<line x1="{lx:.2}" y1="{ly:.2}" x2="{:.2}" y2="{ly:.2}" stroke="{c}" stroke-width="2"{dash}/>"#,
            lx + 26.0
        );
        marker(&mut legend, k, lx + 13.0, ly, c);
        let _ = writeln!(
            legend,
            r#"<text class="legend" x="{:.2}" y="{:.2}" font-size="{:.1}">{}</text>"#,
            lx + 32.0,
            ly + 4.0,
            fit_font(&s.label, 12.0, WIDTH - lx - 36.0),
            escape(&s.label)
        );
        ly += 20.0;
    }
    o += &legend;
    o += "</svg>\n";
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks that the tags nest and every numeric coordinate is finite and inside the view box.
    fn check(svg: &str) {
        let mut stack: Vec<String> = Vec::new();
        let mut rest = svg;
        while let Some(i) = rest.find('<') {
            let j = rest[i..].find('>').expect("unclosed tag") + i;
            let tag = &rest[i + 1..j];
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(stack.pop().as_deref(), Some(name.trim()), "{svg}");
            } else {
                let name = tag.split_whitespace().next().unwrap().to_string();
                for attr in [
                    "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "width", "height",
                ] {
                    let key = format!(" {attr}=\"");
                    if let Some(k) = tag.find(&key) {
                        let v = &tag[k + key.len()..];
                        let v: f64 = v[..v.find('"').unwrap()].parse().unwrap();
                        assert!(v.is_finite() && (0.0..=WIDTH).contains(&v), "{tag}");
                        if attr.starts_with('y') || attr == "cy" {
                            assert!(v <= HEIGHT, "{tag}");
                        }
                    }
                }
                if let Some(k) = tag.find(" points=\"") {
                    let v = &tag[k + 9..];
                    for p in v[..v.find('"').unwrap()].split_whitespace() {
                        let (x, y) = p.split_once(',').unwrap();
                        let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
                        assert!(
                            (0.0..=WIDTH).contains(&x) && (0.0..=HEIGHT).contains(&y),
                            "{tag}"
                        );
                    }
                }
                if !tag.ends_with('/') {
                    stack.push(name);
                }
            }
            rest = &rest[j + 1..];
        }
        assert!(stack.is_empty(), "unclosed {stack:?}");
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }

    fn polylines(svg: &str) -> usize {
        svg.matches("<polyline class=\"series\"").count()
    }

    #[test]
    fn chart_has_series_legend_reference_and_error_bars() {
        let f = Figure {
            title: "η vs b <a & b>".into(),
            x_label: "b".into(),
            y_label: "η".into(),
            series: vec![
                Series::new("a = 0.5", vec![(0.5, 0.9), (1.0, 0.8), (2.0, 0.6)]),
                Series::new("a = 1", vec![(0.5, 0.7), (1.0, f64::NAN), (2.0, 0.4)])
                    .with_errors(vec![0.05, 0.1, f64::INFINITY]),
                Series::new("paper", vec![(0.5, 0.85), (2.0, 0.5)]).dashed(),
            ],
            references: vec![Reference {
                label: "bound −3.3791".into(),
                y: -3.3791,
            }],
        };
        let s = line_chart(&f);
        check(&s);
        assert_eq!(polylines(&s), 3);
        for l in ["a = 0.5", "a = 1", "paper", "bound −3.3791"] {
            assert!(s.contains(&format!(">{l}</text>")), "{l}");
        }
        assert!(s.contains("&lt;a &amp; b&gt;"));
        assert_eq!(s.matches("class=\"reference\"").count(), 1);
        assert_eq!(s.matches("class=\"error-bar\"").count(), 1);
        assert!(s.contains("stroke-dasharray=\"6 4\""));
    }

    #[test]
    fn degenerate_inputs_stay_inside_the_box() {
        for series in [
            vec![Series::new("one", vec![(3.0, -2.0)])],
            vec![Series::new(
                "nan",
                vec![(f64::NAN, 1.0), (1.0, f64::NEG_INFINITY)],
            )],
            vec![Series::new("empty", vec![])],
            vec![Series::new("flat", vec![(0.0, 0.0), (1.0, 0.0)])],
            vec![],
        ] {
            let s = line_chart(&Figure {
                title: "t".into(),
                series,
                ..Default::default()
            });
            check(&s);
        }
        let s = line_chart(&Figure {
            series: vec![Series::new(
                "long",
                (0..400).map(|i| (i as f64, (i as f64).sin())).collect(),
            )],
            references: vec![Reference {
                label: "r".into(),
                y: f64::NAN,
            }],
            ..Default::default()
        });
        check(&s);
        assert_eq!(polylines(&s), 1);
        assert_eq!(s.matches("class=\"reference\"").count(), 0);
    }

    #[test]
    fn ticks_are_nice_and_cover_the_range() {
        let (t, step) = ticks(-0.03, 1.03, 6);
        assert_eq!(step, 0.2);
        assert_eq!(t.first(), Some(&0.0));
        assert!((t.last().unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(tick_label(0.4, 0.2), "0.4");
        assert_eq!(tick_label(0.25, 0.25), "0.25");
        assert_eq!(tick_label(400.0, 100.0), "400");
    }
}
