//! The spot likelihood (4.12): the spot and background multinomials of (4.7) marginalised under
//! their Dirichlet priors u, v into two Pólya (Dirichlet-multinomial) factors (4.10)–(4.11),
//! and the two alternative image models of §4.5.1, missing (4.22) and obscured (4.23).

use occam_core::special::ln_gamma;

use super::image::{inside, Image};

/// ln of (4.11): ln Γ(Σu) − ln Γ(Σu + Σn) + Σ_k [ln Γ(u_k + n_k) − ln Γ(u_k)], the probability of
/// one ordered sequence of pixels with bin counts `n` under a Dirichlet(u)-distributed
/// multinomial.
pub fn ln_polya(n: &[u32], u: &[f64]) -> f64 {
    let (su, sn) = (u.iter().sum::<f64>(), n.iter().sum::<u32>() as f64);
    let per_bin: f64 = n
        .iter()
        .zip(u)
        .filter(|(&c, _)| c > 0)
        .map(|(&c, &a)| ln_gamma(a + c as f64) - ln_gamma(a))
        .sum();
    ln_gamma(su) - ln_gamma(su + sn) + per_bin
}

/// Spot j's sub-image I_j prepared for many evaluations of (4.12): its pixels' coordinates,
/// local bin indices and raw intensities, and per occupied bin the tables
/// ln Γ(u_k + c) − ln Γ(u_k) for c up to the bin's count (likewise for v).
#[derive(Clone, Debug)]
pub struct SubImage {
    /// Pixel coordinates (x, y).
    pub xy: Vec<[f64; 2]>,
    /// Each pixel's index into the occupied bins.
    local: Vec<u16>,
    /// Raw intensities.
    pub raw: Vec<f64>,
    /// The sub-image's count in each occupied bin.
    total: Vec<u32>,
    /// Global bin index of each occupied bin.
    pub bins: Vec<usize>,
    tab_u: Vec<Vec<f64>>,
    tab_v: Vec<Vec<f64>>,
    /// ln Γ(Σu) − ln Γ(Σu + n) for n = 0..=N.
    norm_u: Vec<f64>,
    norm_v: Vec<f64>,
    /// ln P(I_j) with every pixel background: (4.12) with an empty ellipse.
    all_background: f64,
    /// The sub-image's first column and row, and its side.
    origin: (usize, usize),
    side: usize,
}

fn tables(bins: &[usize], total: &[u32], u: &[f64]) -> Vec<Vec<f64>> {
    bins.iter()
        .zip(total)
        .map(|(&k, &t)| {
            let base = ln_gamma(u[k]);
            (0..=t).map(|c| ln_gamma(u[k] + c as f64) - base).collect()
        })
        .collect()
}

fn norms(u: &[f64], n: usize) -> Vec<f64> {
    let s: f64 = u.iter().sum();
    let base = ln_gamma(s);
    (0..=n).map(|c| base - ln_gamma(s + c as f64)).collect()
}

impl SubImage {
    /// Spot j's sub-image of `img` with quantised `bins` and pseudo-counts u, v.
    pub fn new(img: &Image, bins: &[u16], j: usize, u: &[f64], v: &[f64]) -> Self {
        let l = &img.layout;
        let (x0, y0) = l.origin(j);
        let mut slot = vec![u16::MAX; u.len()];
        let (mut xy, mut local, mut raw, mut total, mut occupied) =
            (vec![], vec![], vec![], vec![], vec![]);
        for y in y0..y0 + l.spacing {
            for x in x0..x0 + l.spacing {
                let b = bins[y * img.width + x] as usize;
                if slot[b] == u16::MAX {
                    slot[b] = occupied.len() as u16;
                    occupied.push(b);
                    total.push(0);
                }
                total[slot[b] as usize] += 1;
                xy.push([x as f64, y as f64]);
                local.push(slot[b]);
                raw.push(img.at(x, y));
            }
        }
        let n = xy.len();
        let (tab_u, tab_v) = (tables(&occupied, &total, u), tables(&occupied, &total, v));
        let (norm_u, norm_v) = (norms(u, n), norms(v, n));
        let all_background = norm_u[0]
            + norm_v[n]
            + tab_v
                .iter()
                .zip(&total)
                .map(|(t, &c)| t[c as usize])
                .sum::<f64>();
        SubImage {
            tab_u,
            tab_v,
            norm_u,
            norm_v,
            all_background,
            origin: (x0, y0),
            side: l.spacing,
            xy,
            local,
            raw,
            total,
            bins: occupied,
        }
    }

    /// The bin counts of the whole sub-image (global bins, length `k`).
    pub fn counts(&self, k: usize) -> Vec<u32> {
        let mut c = vec![0; k];
        for (&b, &t) in self.bins.iter().zip(&self.total) {
            c[b] = t;
        }
        c
    }

    /// ln P(I_j | c, r) of (4.12) and the mean raw intensity of the spot pixels (None when the
    /// ellipse holds no pixel centre). Only the pixels in the ellipse's bounding box are visited:
    /// the all-background value is corrected for the bins the spot pixels take. `scratch` holds
    /// the occupied bins' spot counts (left zeroed) and `touched` the bins touched.
    pub fn ln_lik(
        &self,
        c: [f64; 2],
        r: [f64; 2],
        scratch: &mut Vec<u32>,
        touched: &mut Vec<u16>,
    ) -> (f64, Option<f64>) {
        if !(r[0] > 0.0 && r[1] > 0.0) {
            return (self.all_background, None);
        }
        scratch.resize(self.total.len(), 0);
        touched.clear();
        let (x0, y0) = (self.origin.0 as f64, self.origin.1 as f64);
        let hi = (self.side - 1) as f64;
        let range = |c: f64, r: f64, o: f64| {
            let lo = (c - r - o).ceil().clamp(0.0, hi + 1.0) as usize;
            let up = (c + r - o).floor().clamp(-1.0, hi);
            (lo, if up < 0.0 { 0 } else { up as usize + 1 })
        };
        let (xa, xb) = range(c[0], r[0], x0);
        let (ya, yb) = range(c[1], r[1], y0);
        let (mut n, mut sum) = (0usize, 0.0);
        for y in ya..yb {
            for x in xa..xb {
                let i = y * self.side + x;
                let p = self.xy[i];
                if inside(p[0], p[1], c, r) {
                    let b = self.local[i];
                    if scratch[b as usize] == 0 {
                        touched.push(b);
                    }
                    scratch[b as usize] += 1;
                    n += 1;
                    sum += self.raw[i];
                }
            }
        }
        let total = self.xy.len();
        let mut ll = self.all_background - self.norm_u[0] - self.norm_v[total]
            + self.norm_u[n]
            + self.norm_v[total - n];
        for &b in touched.iter() {
            let i = b as usize;
            let (s, t) = (scratch[i] as usize, self.total[i] as usize);
            ll += self.tab_u[i][s] + self.tab_v[i][t - s] - self.tab_v[i][t];
            scratch[i] = 0;
        }
        (ll, (n > 0).then(|| sum / n as f64))
    }
}
