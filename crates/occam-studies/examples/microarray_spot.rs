//! Winn's microarray spot model (thesis ch. 4) on a synthetic 6 × 6 sub-grid (Winn's images are
//! not public): generates the image for a seed, fits every spot, prints per spot the truth, the
//! posterior means ± sds, S and S_eff (and S_eff of Winn's proposal R alone), the flag with its
//! posterior probability, the intensity and the approximate bound, and writes `image.csv` (the
//! pixels), `spots.csv` (truth and fit per spot) and `spots.svg` (the image with the fitted
//! ellipses) into the directory given (default `.`):
//!
//! ```sh
//! cargo run --release -p occam-studies --example microarray_spot -- examples/microarray_spot 1
//! ```
//!
//! The fit makes Winn's two passes (§4.5.2): every spot under his prior, then the sub-grid's
//! prior (m_c, β_c, m_r, β_r) refitted from the NORMAL spots and every spot fitted again. Each
//! pass's prior and its errors against the truth are printed; the table and the files are the
//! last pass's. `--passes N` after the seed makes N passes (1: no refit).

use std::path::Path;

use occam_studies::spot::{self, figure::figure, GridPrior, Image, Kind, Pass, Settings};

/// The arguments: directory, seed, `--passes N`.
fn args() -> occam::Result<(String, u64, usize)> {
    let bad = |what: &str, e: &dyn std::fmt::Display| occam::Error::Run(format!("{what}: {e}"));
    let (mut pos, mut passes) = (Vec::new(), spot::WINN_PASSES);
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        if a == "--passes" {
            let v = it.next().unwrap_or_default();
            passes = v.parse().map_err(|e| bad("--passes", &e))?;
            if passes == 0 {
                return Err(occam::Error::Run("--passes: at least 1".into()));
            }
        } else {
            pos.push(a);
        }
    }
    if pos.len() > 2 {
        return Err(occam::Error::Run(format!(
            "expected DIR [SEED] [--passes N], got {pos:?}"
        )));
    }
    let mut pos = pos.into_iter();
    let dir = pos.next().unwrap_or_else(|| ".".into());
    let seed = match pos.next() {
        None => 1,
        Some(s) => s.parse().map_err(|e| bad("the seed", &e))?,
    };
    Ok((dir, seed, passes))
}

/// One line for a sub-grid prior.
fn prior_line(what: &str, g: &GridPrior) {
    println!(
        "{what}: m_c offset ({:+.3}, {:+.3}) px, m_r ({:.3}, {:.3}) px, \
         β_c^-1/2 {:.3} px, β_r^-1/2 {:.3} px",
        g.m[0],
        g.m[1],
        g.m[2],
        g.m[3],
        g.beta[0].recip().sqrt(),
        g.beta[1].recip().sqrt()
    );
}

/// Per pass: its prior (after the first, beside it the reading of §4.5.2 not taken, the NORMAL
/// spots' ⟨θ⟩ mean and variance from the pass before: [`GridPrior::moment_match`]), then over
/// the truly normal spots the RMS and largest errors of the centres and radii (px), the flags,
/// the intensity's RMS relative error against the true ellipse's mean pixel and its mean
/// relative sd, and the smallest S_eff.
fn summary(img: &Image, k: usize, p: &Pass, before: Option<&Pass>) -> occam::Result<()> {
    prior_line(&format!("pass {k}: prior"), &p.prior);
    if let Some(b) = before {
        let other = b
            .prior
            .moment_match(img, &b.fits)
            .map_err(occam::Error::Run)?;
        prior_line(&format!("pass {k}: (not taken: ⟨θ⟩ moments)"), &other);
    }
    let (mut ce, mut re, mut ie, mut isd) = (vec![], vec![], vec![], vec![]);
    let (mut right, mut s_eff) = (0, f64::INFINITY);
    for (j, (t, f)) in img.truth.iter().zip(&p.fits).enumerate() {
        let want = match t.kind {
            Kind::Normal => spot::Flag::Normal,
            Kind::Missing => spot::Flag::Missing,
            Kind::Bad => spot::Flag::Bad,
        };
        right += usize::from(f.flag == want);
        if t.kind != Kind::Normal {
            continue;
        }
        ce.extend((0..2).map(|d| f.mean[d] - t.centre[d]));
        re.extend((0..2).map(|d| f.mean[2 + d] - t.radii[d]));
        let e = img.true_intensity(j);
        ie.push((f.intensity[0] - e) / e);
        isd.push(f.intensity[1] / e);
        s_eff = s_eff.min(f.last.s_eff);
    }
    let rms = |v: &[f64]| (v.iter().map(|x| x * x).sum::<f64>() / v.len() as f64).sqrt();
    let max = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    println!(
        "pass {k}: centre error RMS {:.3} max {:.3} px, radius error RMS {:.3} max {:.3} px; \
         flags {right}/{} right; intensity error RMS {:.3}% max {:.3}%, sd mean {:.3}%; \
         S_eff ≥ {s_eff:.0}",
        rms(&ce),
        max(&ce),
        rms(&re),
        max(&re),
        p.fits.len(),
        100.0 * rms(&ie),
        100.0 * max(&ie),
        100.0 * isd.iter().sum::<f64>() / isd.len() as f64
    );
    Ok(())
}

fn main() -> occam::Result<()> {
    let (dir, seed, passes) = args()?;
    let dir = Path::new(&dir);
    let img = spot::generate(spot::EXAMPLE, seed);
    let cfg = Settings::default();
    let start = std::time::Instant::now();
    let all = spot::fit_grid_passes(&img, &cfg, passes).map_err(occam::Error::Run)?;
    let took = start.elapsed().as_secs_f64();
    for (k, p) in all.iter().enumerate() {
        summary(&img, k + 1, p, k.checked_sub(1).map(|b| &all[b]))?;
    }
    let fits = &all.last().expect("at least one pass").fits;
    let mut csv = String::from(
        "spot,kind,true_cx,true_cy,true_rx,true_ry,cx,cx_sd,cy,cy_sd,rx,rx_sd,ry,ry_sd,\
         flag,p_normal,p_missing,p_bad,intensity,intensity_sd,samples,s_eff,s_eff_winn,sweeps,bound\n",
    );
    println!(
        "spot kind     truth (cx, cy, rx, ry)          fit ± sd                                         flag    P     E ± sd         S/S_eff (R alone)   L (approx.)"
    );
    for (t, f) in img.truth.iter().zip(fits) {
        let kind = match t.kind {
            Kind::Normal => "normal",
            Kind::Missing => "missing",
            Kind::Bad => "obscured",
        };
        let p = f.posterior.iter().copied().fold(0.0, f64::max);
        println!(
            "{:>4} {kind:<8} ({:6.2} {:6.2} {:5.2} {:5.2})  ({:6.2}±{:.2} {:6.2}±{:.2} {:5.2}±{:.2} {:5.2}±{:.2})  {:<7} {:.3} {:7.0}±{:<5.0} {:>5}/{:<4.0} ({:5.1})  {:10.3}",
            f.spot,
            t.centre[0], t.centre[1], t.radii[0], t.radii[1],
            f.mean[0], f.sd[0], f.mean[1], f.sd[1], f.mean[2], f.sd[2], f.mean[3], f.sd[3],
            format!("{:?}", f.flag).to_uppercase(), p,
            f.intensity[0], f.intensity[1],
            f.last.samples, f.last.s_eff, f.last.s_eff_winn, f.bound()
        );
        csv.push_str(&format!(
            "{},{kind},{},{},{},{},{},{},{},{},{},{},{},{},{:?},{},{},{},{},{},{},{},{},{},{}\n",
            f.spot,
            t.centre[0],
            t.centre[1],
            t.radii[0],
            t.radii[1],
            f.mean[0],
            f.sd[0],
            f.mean[1],
            f.sd[1],
            f.mean[2],
            f.sd[2],
            f.mean[3],
            f.sd[3],
            f.flag,
            f.posterior[0],
            f.posterior[1],
            f.posterior[2],
            f.intensity[0],
            f.intensity[1],
            f.last.samples,
            f.last.s_eff,
            f.last.s_eff_winn,
            f.bounds.len(),
            f.bound()
        ));
    }
    println!(
        "{} spots, {} pass(es), in {took:.2} s",
        fits.len(),
        all.len()
    );
    let mut pixels = String::new();
    for y in 0..img.height {
        let row: Vec<String> = (0..img.width)
            .map(|x| format!("{:.0}", img.at(x, y)))
            .collect();
        pixels.push_str(&row.join(","));
        pixels.push('\n');
    }
    let svg = figure(
        &img,
        fits,
        &format!("synthetic sub-grid, seed {seed}: fitted spots (green NORMAL, red BAD, yellow MISSING), truth in blue"),
    )
    .map_err(occam::Error::Run)?;
    occam::atomic::ensure_dir(dir)?;
    occam::atomic::write(&dir.join("image.csv"), pixels.as_bytes())?;
    occam::atomic::write(&dir.join("spots.csv"), csv.as_bytes())?;
    occam::atomic::write(&dir.join("spots.svg"), svg.as_bytes())?;
    Ok(())
}
