//! Leisink & Kappen Fig. 5 in miniature: means and correlations as derivatives of the bound at its
//! optimum (B_to) are closer to the exact statistics than mean field's, Error as in (44).
use occam_binary::bm::exact::exact;
use occam_binary::bm::mf::{mean_field, MeanFieldOptions};
use occam_binary::bm::sk::sk_network;
use occam_binary::bm::third_order::{third_order_from, ThirdOrderOptions};

fn rms(a: &[f64], b: &[f64]) -> f64 {
    (a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>() / a.len() as f64).sqrt()
}

#[test]
fn bm_third_order_statistics_beat_mean_field() {
    let n = 10;
    for &(s1, s2) in &[(0.1, 0.3), (0.5, 0.5), (0.3, 0.8)] {
        let (mut rm, mut rc) = (0.0, 0.0);
        let nets = 25;
        for k in 0..nets {
            let bm = sk_network(n, s1, s2, 500 + k).unwrap();
            let ex = exact(&bm).unwrap();
            let mf = mean_field(
                &bm,
                &MeanFieldOptions {
                    seed: k,
                    ..Default::default()
                },
            )
            .unwrap();
            let to = third_order_from(&bm, &mf.fields, mf.log_z, &ThirdOrderOptions::default());
            let pairs: Vec<(usize, usize)> =
                (0..n).flat_map(|i| (0..i).map(move |j| (i, j))).collect();
            let exc: Vec<f64> = pairs
                .iter()
                .map(|&(i, j)| ex.correlations[i * n + j])
                .collect();
            let mfc: Vec<f64> = pairs
                .iter()
                .map(|&(i, j)| mf.means[i] * mf.means[j])
                .collect();
            let toc: Vec<f64> = pairs
                .iter()
                .map(|&(i, j)| to.correlations[i * n + j])
                .collect();
            rm += rms(&to.means, &ex.means) / rms(&mf.means, &ex.means) / nets as f64;
            rc += rms(&toc, &exc) / rms(&mfc, &exc) / nets as f64;
        }
        eprintln!("sigma1 {s1} sigma2 {s2}: mean error ratio third/MF: means {rm:.3}, correlations {rc:.3}");
        assert!(
            rm < 1.0 && rc < 1.0,
            "third order not better at ({s1}, {s2}): {rm} {rc}"
        );
    }
}
