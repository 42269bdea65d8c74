//! A seeded synthetic microarray sub-grid (Winn's images, §4.2, are not public): a grid of
//! spots at known centres, radii and intensities over a noisy background, one missing spot and
//! one spot obscured by scatter; its quantisation into K intensity bins and the Dirichlet
//! pseudo-counts u, v of (4.8)–(4.9).
//!
//! Pixel (x, y) is the unit square centred at (x, y); it is a spot pixel of an ellipse with
//! centre c and radii r when ((x − c_x)/r_x)² + ((y − c_y)/r_y)² ≤ 1 (Winn's partition of I_j
//! into S and B, §4.3.2).

use occam_core::Rng;
use rand::{Rng as _, SeedableRng};
use rand_distr::StandardNormal;

/// The printer's grid (Winn's configuration file): rows × cols spots, `spacing` pixels apart,
/// nominal radius `radius` pixels. Spot (i, j)'s rough location is the centre of its
/// `spacing`² sub-image.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Layout {
    /// Rows of spots.
    pub rows: usize,
    /// Columns of spots.
    pub cols: usize,
    /// Pixels between adjacent spot centres (also the side of each sub-image).
    pub spacing: usize,
    /// The nominal radius in pixels.
    pub radius: f64,
}

impl Layout {
    /// The number of spots.
    pub fn spots(&self) -> usize {
        self.rows * self.cols
    }

    /// Image width and height in pixels.
    pub fn size(&self) -> (usize, usize) {
        (self.cols * self.spacing, self.rows * self.spacing)
    }

    /// Spot j's rough location (row-major j): its sub-image's centre.
    pub fn rough(&self, j: usize) -> [f64; 2] {
        let (i, k) = (j / self.cols, j % self.cols);
        let half = 0.5 * (self.spacing as f64 - 1.0);
        [
            (k * self.spacing) as f64 + half,
            (i * self.spacing) as f64 + half,
        ]
    }

    /// Spot j's sub-image I_j: its first column, first row (side `spacing`).
    pub fn origin(&self, j: usize) -> (usize, usize) {
        (
            (j % self.cols) * self.spacing,
            (j / self.cols) * self.spacing,
        )
    }
}

/// What a spot truly is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A printed spot.
    Normal,
    /// No spot printed: every pixel is background.
    Missing,
    /// A spot obscured by scatter: half the sub-image's pixels are foreground.
    Bad,
}

/// One spot's truth.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrueSpot {
    /// Centre (x, y) in pixels.
    pub centre: [f64; 2],
    /// Radii (r_x, r_y) in pixels.
    pub radii: [f64; 2],
    /// The spot's median foreground intensity above the background.
    pub intensity: f64,
    /// Normal, missing or obscured.
    pub kind: Kind,
}

/// A synthetic sub-grid image with its truth.
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    /// The grid.
    pub layout: Layout,
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Intensities, row-major (y · width + x), in [0, 65535] (16-bit scanner range).
    pub pixels: Vec<f64>,
    /// Each spot's truth, row-major.
    pub truth: Vec<TrueSpot>,
}

impl Image {
    /// The intensity of pixel (x, y).
    pub fn at(&self, x: usize, y: usize) -> f64 {
        self.pixels[y * self.width + x]
    }

    /// f(I_j, θ) of (4.26) at spot j's true ellipse: the mean intensity of the pixels inside it
    /// (NaN when it holds no pixel centre).
    pub fn true_intensity(&self, j: usize) -> f64 {
        let t = &self.truth[j];
        let (x0, y0) = self.layout.origin(j);
        let (mut s, mut n) = (0.0, 0.0);
        for y in y0..y0 + self.layout.spacing {
            for x in x0..x0 + self.layout.spacing {
                if inside(x as f64, y as f64, t.centre, t.radii) {
                    s += self.at(x, y);
                    n += 1.0;
                }
            }
        }
        s / n
    }
}

/// Whether (x, y) lies in the axis-aligned ellipse (c, r); none when a radius is not positive.
pub fn inside(x: f64, y: f64, c: [f64; 2], r: [f64; 2]) -> bool {
    if !(r[0] > 0.0 && r[1] > 0.0) {
        return false;
    }
    let (dx, dy) = ((x - c[0]) / r[0], (y - c[1]) / r[1]);
    dx * dx + dy * dy <= 1.0
}

/// Background level 600 rising to 900 across the image, multiplicative noise e^{0.25 z}.
fn background(rng: &mut Rng, x: usize, width: usize) -> f64 {
    let level = 600.0 + 300.0 * x as f64 / width as f64;
    let z: f64 = rng.sample(StandardNormal);
    level * (0.25 * z).exp()
}

/// Foreground added to the background: E · e^{0.15 z}.
fn foreground(rng: &mut Rng, e: f64) -> f64 {
    let z: f64 = rng.sample(StandardNormal);
    e * (0.15 * z).exp()
}

/// The grid image for `seed`: centres at the rough location plus N(0, 0.8²) px per axis (cut at
/// ±spacing/5), radii nominal × (1 + 0.1 z) (cut to ±25%), intensities log-uniform on
/// [2000, 20000]; one spot missing and another obscured (each pixel of its sub-image
/// foreground with probability ½), both chosen by the seed.
pub fn generate(layout: Layout, seed: u64) -> Image {
    let mut rng = Rng::seed_from_u64(seed);
    let (width, height) = layout.size();
    let n = layout.spots();
    let missing = rng.random_range(0..n);
    let bad = (missing + 1 + rng.random_range(0..n - 1)) % n;
    let cut = layout.spacing as f64 / 5.0;
    let truth: Vec<TrueSpot> = (0..n)
        .map(|j| {
            let rough = layout.rough(j);
            let mut z = || rng.sample::<f64, _>(StandardNormal);
            let centre = [
                rough[0] + (0.8 * z()).clamp(-cut, cut),
                rough[1] + (0.8 * z()).clamp(-cut, cut),
            ];
            let radii = [
                layout.radius * (1.0 + (0.1 * z()).clamp(-0.25, 0.25)),
                layout.radius * (1.0 + (0.1 * z()).clamp(-0.25, 0.25)),
            ];
            let intensity = (2000f64.ln() + rng.random::<f64>() * 10f64.ln()).exp();
            let kind = if j == missing {
                Kind::Missing
            } else if j == bad {
                Kind::Bad
            } else {
                Kind::Normal
            };
            TrueSpot {
                centre,
                radii,
                intensity,
                kind,
            }
        })
        .collect();
    let mut pixels = vec![0.0; width * height];
    for y in 0..height {
        for x in 0..width {
            let j = (y / layout.spacing) * layout.cols + x / layout.spacing;
            let t = &truth[j];
            let mut v = background(&mut rng, x, width);
            let spot = t.kind != Kind::Missing && inside(x as f64, y as f64, t.centre, t.radii);
            let scatter = t.kind == Kind::Bad && rng.random::<f64>() < 0.5;
            if spot || scatter {
                v += foreground(&mut rng, t.intensity);
            }
            pixels[y * width + x] = v.clamp(0.0, 65535.0);
        }
    }
    Image {
        layout,
        width,
        height,
        pixels,
        truth,
    }
}

/// The image quantised into `k` equal bins over [0, max intensity] (Winn §4.3.2).
pub fn quantise(img: &Image, k: usize) -> Vec<u16> {
    let top = img.pixels.iter().copied().fold(0.0f64, f64::max).max(1.0);
    img.pixels
        .iter()
        .map(|&v| ((v / top * k as f64) as usize).min(k - 1) as u16)
        .collect()
}

/// The Dirichlet pseudo-counts u (spot) and v (background) of (4.8)–(4.9), as Winn sets them:
/// proportional to the whole image's histograms of spot and background pixels plus 1, each
/// summing to the pixels of one sub-image. Spot and background are the rough partition: inside
/// the nominal circle at each rough location, or not.
pub fn pseudo_counts(img: &Image, bins: &[u16], k: usize) -> (Vec<f64>, Vec<f64>) {
    let l = &img.layout;
    let (mut hu, mut hv) = (vec![1.0; k], vec![1.0; k]);
    for y in 0..img.height {
        for x in 0..img.width {
            let j = (y / l.spacing) * l.cols + x / l.spacing;
            let b = bins[y * img.width + x] as usize;
            if inside(x as f64, y as f64, l.rough(j), [l.radius; 2]) {
                hu[b] += 1.0;
            } else {
                hv[b] += 1.0;
            }
        }
    }
    let n = (l.spacing * l.spacing) as f64;
    for h in [&mut hu, &mut hv] {
        let total: f64 = h.iter().sum();
        h.iter_mut().for_each(|c| *c *= n / total);
    }
    (hu, hv)
}
