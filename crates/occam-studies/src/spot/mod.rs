//! Winn's microarray spot model (thesis ch. 4, (4.1)–(4.28)) reproduced on synthetic spots:
//! Winn's Drosophila images are not public, so [`image`] generates a seeded sub-grid with known
//! centres, radii and intensities, a missing spot and an obscured one.
//!
//! Per spot j, the centre c_j and radii r_j of an axis-aligned ellipse have Gaussian priors with
//! Gaussian means and Gamma precisions (4.1)–(4.5); the pixels of the sub-image I_j inside the
//! ellipse are spot pixels, the rest background, each set's quantised intensities a multinomial
//! marginalised under a Dirichlet (u for spots, v for background) into a Pólya factor
//! (4.10)–(4.12) ([`polya`]). That likelihood is not exponential-family, so I_j is an
//! importance-sampled node: its four parents are drawn jointly from the product of their
//! posteriors without I_j's message (4.16) and weighted by the likelihood (4.18)–(4.20)
//! ([`sampler`]); the conjugate rest is VMP ([`fit`]). Each spot is then flagged NORMAL, MISSING
//! or BAD by comparing the bound with the missing- and obscured-spot models (4.22)–(4.25), and its
//! intensity is the weighted mean of the spot pixels' mean (4.28). As Winn does (§4.5.2), the
//! sub-grid's prior (m_c, β_c, m_r, β_r) is then refitted from the first pass's NORMAL spots and
//! every spot fitted again under it ([`refit`], [`fit_grid_passes`]).
//!
//! Where it lives: the engine's importance-sampled nodes (`occam-core`'s `engine/sampled`) sample
//! one scalar node with a non-exponential-family prior or Student-t children; here the sampled
//! node is an observed image whose four Gaussian parents are drawn jointly, and its likelihood is
//! a geometric partition of pixels no modelling-language factor expresses. So the model is a
//! hand-derived study beside the engine, reusing its numerics (ln Γ, the Gamma KL and ⟨ln γ⟩,
//! the `Sampling` settings and seeded `Rng`, the engine's adaptation rule and its bound form).
//!
//! Spots are independent given the hyper-parameters (Winn §4.5.2), fitted one after another on
//! one thread; the draws are keyed by seed, spot and pass, so a seed gives the same bits.

// The four axes (c_x, c_y, r_x, r_y) index several arrays at once.
#![allow(clippy::needless_range_loop)]

pub mod figure;
pub mod fit;
pub mod image;
pub mod polya;
pub mod proposal;
pub mod refit;
pub mod sampler;

#[cfg(test)]
mod tests;

pub use fit::{fit_spot, Flag, Settings, SpotFit, SpotPrior};
pub use image::{generate, Image, Kind, Layout};
pub use refit::GridPrior;

use polya::SubImage;

/// The layout of the example: a 6 × 6 sub-grid, spots 20 pixels apart, nominal radius 5.5.
pub const EXAMPLE: Layout = Layout {
    rows: 6,
    cols: 6,
    spacing: 20,
    radius: 5.5,
};

/// An image prepared for fitting: its bins and the pseudo-counts u, v of (4.8)–(4.9).
#[derive(Clone, Debug)]
pub struct Prepared<'a> {
    /// The image.
    pub img: &'a Image,
    /// The fit's settings.
    pub cfg: Settings,
    /// Each pixel's bin.
    pub bins: Vec<u16>,
    /// Spot pseudo-counts.
    pub u: Vec<f64>,
    /// Background pseudo-counts.
    pub v: Vec<f64>,
}

impl<'a> Prepared<'a> {
    /// Quantises `img` into `cfg.bins` bins and sets u, v from the whole image (Winn §4.3.2).
    pub fn new(img: &'a Image, cfg: Settings) -> Self {
        let bins = image::quantise(img, cfg.bins);
        let (u, v) = image::pseudo_counts(img, &bins, cfg.bins);
        Prepared {
            img,
            cfg,
            bins,
            u,
            v,
        }
    }

    /// Spot j's sub-image.
    pub fn sub_image(&self, j: usize) -> SubImage {
        SubImage::new(self.img, &self.bins, j, &self.u, &self.v)
    }

    /// Fits spot j with Winn's first-pass prior ([`GridPrior::winn`]); an error names the spot.
    pub fn fit(&self, j: usize) -> Result<SpotFit, String> {
        self.fit_with(j, &GridPrior::winn(&self.img.layout))
    }

    /// Fits spot j under the sub-grid prior `prior`; an error names the spot.
    pub fn fit_with(&self, j: usize, prior: &GridPrior) -> Result<SpotFit, String> {
        let prior = prior.spot(&self.img.layout, j);
        fit_spot(&self.sub_image(j), &self.u, &self.v, &prior, &self.cfg, j)
    }
}

/// Fits every spot of `img` once, under Winn's first-pass prior; an error names the spot.
pub fn fit_grid(img: &Image, cfg: &Settings) -> Result<Vec<SpotFit>, String> {
    let p = Prepared::new(img, *cfg);
    (0..img.layout.spots()).map(|j| p.fit(j)).collect()
}

/// Passes over the grid as Winn made them (§4.5.2): one pass under his prior, then the prior
/// refitted from it and every spot fitted again.
pub const WINN_PASSES: usize = 2;

/// One pass over the grid: the prior it used and the fits.
#[derive(Clone, Debug, PartialEq)]
pub struct Pass {
    /// The sub-grid prior of this pass.
    pub prior: GridPrior,
    /// Every spot's fit under it.
    pub fits: Vec<SpotFit>,
}

/// `passes` passes over `img` (at least one): the first under Winn's prior, each later one under
/// the prior refitted from the pass before ([`GridPrior::refit`]). The draws are keyed as in a
/// single pass, so the passes differ only through the prior. An error names the pass and spot.
pub fn fit_grid_passes(img: &Image, cfg: &Settings, passes: usize) -> Result<Vec<Pass>, String> {
    let p = Prepared::new(img, *cfg);
    let mut out: Vec<Pass> = Vec::with_capacity(passes);
    for k in 0..passes.max(1) {
        let prior = match out.last() {
            None => GridPrior::winn(&img.layout),
            Some(prev) => prev
                .prior
                .refit(img, &prev.fits)
                .map_err(|e| format!("pass {}: {e}", k + 1))?,
        };
        let fits = (0..img.layout.spots())
            .map(|j| p.fit_with(j, &prior))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("pass {}: {e}", k + 1))?;
        out.push(Pass { prior, fits });
    }
    Ok(out)
}
