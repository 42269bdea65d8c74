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

use std::path::Path;

use occam_studies::spot::{self, figure::figure, Kind, Settings};

fn main() -> occam::Result<()> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| ".".into());
    let seed: u64 = match args.next().map(|s| s.parse()) {
        None => 1,
        Some(Ok(s)) => s,
        Some(Err(e)) => return Err(occam::Error::Run(format!("the seed: {e}"))),
    };
    let dir = Path::new(&dir);
    let img = spot::generate(spot::EXAMPLE, seed);
    let cfg = Settings::default();
    let start = std::time::Instant::now();
    let fits = spot::fit_grid(&img, &cfg).map_err(occam::Error::Run)?;
    let took = start.elapsed().as_secs_f64();
    let mut csv = String::from(
        "spot,kind,true_cx,true_cy,true_rx,true_ry,cx,cx_sd,cy,cy_sd,rx,rx_sd,ry,ry_sd,\
         flag,p_normal,p_missing,p_bad,intensity,intensity_sd,samples,s_eff,s_eff_winn,sweeps,bound\n",
    );
    println!(
        "spot kind     truth (cx, cy, rx, ry)          fit ± sd                                         flag    P     E ± sd         S/S_eff (R alone)   L (approx.)"
    );
    for (t, f) in img.truth.iter().zip(&fits) {
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
    println!("{} spots in {took:.2} s", fits.len());
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
        &fits,
        &format!("synthetic sub-grid, seed {seed}: fitted spots (green NORMAL, red BAD, yellow MISSING), truth in blue"),
    )
    .map_err(occam::Error::Run)?;
    occam::atomic::ensure_dir(dir)?;
    occam::atomic::write(&dir.join("image.csv"), pixels.as_bytes())?;
    occam::atomic::write(&dir.join("spots.csv"), csv.as_bytes())?;
    occam::atomic::write(&dir.join("spots.svg"), svg.as_bytes())?;
    Ok(())
}
