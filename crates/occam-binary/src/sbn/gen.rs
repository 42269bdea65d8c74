//! Generators of the networks and data sets used by the reproductions.

use super::error::Result;
use super::model::{Evidence, Sbn};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Layered network with every weight ~ U(−w, w) and every bias ~ U(−b, b), 0/1 coding
/// (Saul et al. 1996; Lawrence §2.5 uses w = b = 1 on 2–4–6).
pub fn uniform_layered(
    sizes: &[usize],
    w: f64,
    b: f64,
    rng: &mut Xoshiro256PlusPlus,
) -> Result<Sbn> {
    // draw in a fixed order: for each unit (layer by layer) its bias then its incoming weights
    let total: usize = sizes.iter().sum();
    let mut bias = Vec::with_capacity(total);
    let mut parents = Vec::with_capacity(total);
    let mut off = 0;
    for (l, &sz) in sizes.iter().enumerate() {
        for _ in 0..sz {
            bias.push(b * (2.0 * rng.random::<f64>() - 1.0));
            if l == 0 {
                parents.push(Vec::new());
            } else {
                let prev = sizes[l - 1];
                parents.push(
                    (0..prev)
                        .map(|j| (off - prev + j, w * (2.0 * rng.random::<f64>() - 1.0)))
                        .collect(),
                );
            }
        }
        off += sz;
    }
    Sbn::new(bias, parents)
}

/// Saul's 2–4–6 network with bottom layer clamped to 0 (Lawrence §2.5; LK §5.2, "clamped to −1").
pub fn saul_246(weight_span: f64, bias_span: f64, seed: u64) -> Result<(Sbn, Evidence)> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let sbn = uniform_layered(&[2, 4, 6], weight_span, bias_span, &mut rng)?;
    let ev = Evidence::from_pairs(12, &(6..12).map(|u| (u, false)).collect::<Vec<_>>())?;
    Ok((sbn, ev))
}

/// Converts ±1-coded parameters (θ^{ij}, θ^i) to the 0/1 coding: w = 4θ, b_i = 2θ^i − 2Σ_jθ^{ij}
/// (the inverse of the conversion in [`crate::coding`]).
pub fn from_pm(theta_bias: &[f64], theta_parents: Vec<Vec<(usize, f64)>>) -> Result<Sbn> {
    let mut bias = Vec::with_capacity(theta_bias.len());
    let mut parents = Vec::with_capacity(theta_bias.len());
    for (i, list) in theta_parents.into_iter().enumerate() {
        let s: f64 = list.iter().map(|p| p.1).sum();
        bias.push(2.0 * theta_bias.get(i).copied().unwrap_or(0.0) - 2.0 * s);
        parents.push(list.into_iter().map(|(j, t)| (j, 4.0 * t)).collect());
    }
    Sbn::new(bias, parents)
}

/// Leisink–Kappen cascade network (LK §5.2, Fig. 9): L layers, layer l (1-based) has l units,
/// thresholds ~ N(0, σ₁), weights from layer l to l+1 ~ N(0, σ₂/√l), all in ±1 coding; returned in
/// 0/1 coding. σ are standard deviations.
pub fn cascade(layers: usize, sigma1: f64, sigma2: f64, seed: u64) -> Result<Sbn> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let std = Normal::new(0.0, 1.0).expect("unit normal");
    let mut th = Vec::new();
    let mut parents = Vec::new();
    let mut off = 0;
    for l in 1..=layers {
        for _ in 0..l {
            th.push(sigma1 * std.sample(&mut rng));
            if l == 1 {
                parents.push(Vec::new());
            } else {
                let prev = l - 1;
                let s = sigma2 / (prev as f64).sqrt();
                parents.push(
                    (0..prev)
                        .map(|j| (off - prev + j, s * std.sample(&mut rng)))
                        .collect(),
                );
            }
        }
        off += l;
    }
    from_pm(&th, parents)
}

/// Unit indices of the bottom layer of a cascade with `layers` layers.
pub fn cascade_bottom(layers: usize) -> Vec<usize> {
    let n = layers * (layers + 1) / 2;
    (n - layers..n).collect()
}

/// One 4×4 bars image (Hinton et al. 1995; Lawrence §2.5): orientation with p = ½, each of the
/// 4 bars of that orientation on with p = ½. Pixel (r, c) is index 4r + c.
pub fn bars_sample(rng: &mut Xoshiro256PlusPlus) -> [bool; 16] {
    let horizontal = rng.random::<bool>();
    let mut img = [false; 16];
    for k in 0..4 {
        if rng.random::<bool>() {
            for t in 0..4 {
                let idx = if horizontal { 4 * k + t } else { 4 * t + k };
                img[idx] = true;
            }
        }
    }
    img
}

/// The exact bars distribution: the 30 distinct images with their probabilities
/// (the blank and full images arise from both orientations, so have probability 1/16).
pub fn bars_distribution() -> Vec<([bool; 16], f64)> {
    bars_distribution_k(4)
        .into_iter()
        .map(|(img, p)| {
            let mut a = [false; 16];
            a.copy_from_slice(&img);
            (a, p)
        })
        .collect()
}

/// The exact k×k bars distribution (pixel (r, c) at index k·r + c): orientation with p = ½, each
/// of the k bars of that orientation on with p = ½; duplicates (blank, full) merged.
pub fn bars_distribution_k(k: usize) -> Vec<(Vec<bool>, f64)> {
    let mut out: Vec<(Vec<bool>, f64)> = Vec::new();
    let p = 0.5 / (1u64 << k) as f64;
    for horizontal in [true, false] {
        for mask in 0usize..1 << k {
            let mut img = vec![false; k * k];
            for b in 0..k {
                if (mask >> b) & 1 == 1 {
                    for t in 0..k {
                        let idx = if horizontal { k * b + t } else { k * t + b };
                        img[idx] = true;
                    }
                }
            }
            match out.iter_mut().find(|(x, _)| *x == img) {
                Some(e) => e.1 += p,
                None => out.push((img, p)),
            }
        }
    }
    out
}

/// Entropy of the bars generator (Lawrence §2.5.2) in nats: 3.3791, by enumeration of its 30
/// images (28 with probability 1/32, all-off and all-on with 1/16).
pub fn bars_entropy() -> f64 {
    bars_entropy_k(4)
}

/// Entropy of the k×k bars generator in nats.
pub fn bars_entropy_k(k: usize) -> f64 {
    bars_distribution_k(k)
        .iter()
        .map(|(_, p)| -p * p.ln())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_entropy_matches_enumeration() {
        let d = bars_distribution();
        assert_eq!(d.len(), 30);
        assert!((d.iter().map(|x| x.1).sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((bars_entropy() - 3.3791).abs() < 5e-5);
    }
}
