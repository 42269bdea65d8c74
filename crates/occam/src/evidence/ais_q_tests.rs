//! The path from q (module `ais_q`) against the path from the prior on a tight and a wide
//! cluster under the VIBES tutorial's vague priors (K = 2, Dirichlet(0.001)): how many chains
//! hold both clusters along the path, and how their final log weights spread. The estimates
//! themselves are checked against the exact evidence in the integration tests
//! (`evidence_ais_vague`); this records why the prior's path fails there. Measured (64 chains,
//! seed 1; fractions with both clusters held at β = (0.1, 0.2, …, 1)^4):
//! prior, T = 250: 0.89 0.70 0.41 0.17 0.08 0.00 0.02 0.02 0.00 0.00, final ln w −47.65 to −44.26;
//! prior, T = 1000: 0.83 0.80 0.41 0.14 0.05 0.02 0.00 0.00 0.00 0.00, −46.13 to −44.40;
//! from q, T = 250: 1.00 at every tenth, −34.90 to −33.76 (exact ln p(D) −34.24).

use rand::rngs::StdRng;
use rand::SeedableRng;

use super::ais::Chain;
use super::ais_q::Base;
use super::flat::{recognise, Flat};
use super::importance::block_seed;
use crate::{DataSet, Model, Settings};

const TIGHT_AND_WIDE: [f64; 12] = [
    -5.02, -4.95, -5.01, -4.98, -5.05, -4.99, 4.1, 6.3, 5.2, 3.8, 4.9, 6.0,
];

fn fitted() -> crate::Fitted {
    let text = "plate K = 2\nplate N from data x\npi ~ Dirichlet(0.001) over K\n\
                mu[K] ~ Gaussian(mean = 0, precision = 0.01)\n\
                gamma[K] ~ Gamma(shape = 0.001, rate = 0.001)\nz[N] ~ Categorical(pi)\n\
                x[N] ~ Gaussian(mean = mu[z], precision = gamma[z])\n";
    let mut d = DataSet::new();
    d.insert_array("x", 12, 1, TIGHT_AND_WIDE.to_vec(), None)
        .unwrap();
    let settings = Settings {
        tol: 1e-12,
        max_iter: 5000,
        restarts: 3,
        ..Settings::default()
    };
    Model::from_source("m.occam", text, &d)
        .unwrap()
        .fit(&settings)
        .unwrap()
}

/// Per tenth of the path, the fraction of `chains` chains with both components holding rows;
/// and every chain's final log weight.
fn trace(flat: &Flat, base: Option<&Base>, steps: usize, chains: usize) -> (Vec<f64>, Vec<f64>) {
    let mut both = vec![0.0; 10];
    let mut ln_w = Vec::new();
    for c in 0..chains {
        let mut rng = StdRng::seed_from_u64(block_seed(1, c as u64));
        let mut occupied = Vec::new();
        ln_w.push(Chain::new(flat, base, None, &mut rng).run(steps, &mut rng, Some(&mut occupied)));
        for (j, b) in both.iter_mut().enumerate() {
            if occupied[(j + 1) * steps / 10 - 1] == 2 {
                *b += 1.0 / chains as f64;
            }
        }
    }
    (both, ln_w)
}

fn spread(ln_w: &[f64]) -> String {
    let mut w: Vec<f64> = ln_w.to_vec();
    w.sort_by(f64::total_cmp);
    format!(
        "min {:.2}, median {:.2}, max {:.2}",
        w[0],
        w[w.len() / 2],
        w[w.len() - 1]
    )
}

#[test]
fn from_q_the_chains_keep_both_clusters_where_from_the_prior_they_merge() {
    let f = fitted();
    let flat = recognise(f.loaded()).unwrap();
    let base = Base::new(&flat, &f).unwrap();
    let chains = 64;
    let (prior, prior_w) = trace(&flat, None, 250, chains);
    let (prior_long, prior_long_w) = trace(&flat, None, 1000, chains);
    let (from_q, q_w) = trace(&flat, Some(&base), 250, chains);
    for (name, both, w) in [
        ("prior, T = 250", &prior, &prior_w),
        ("prior, T = 1000", &prior_long, &prior_long_w),
        ("q, T = 250", &from_q, &q_w),
    ] {
        let both: Vec<String> = both.iter().map(|b| format!("{b:.2}")).collect();
        eprintln!(
            "{name}: both occupied at β = (0.1..1)^4: [{}]; final ln w {}",
            both.join(" "),
            spread(w)
        );
    }
    // From q both clusters stay held all along; from the prior (almost) every chain has merged
    // them by the end, however many temperatures.
    assert!(from_q.iter().all(|&b| b > 0.9), "{from_q:?}");
    assert!(
        prior[9] < 0.1 && prior_long[9] < 0.1,
        "{prior:?} {prior_long:?}"
    );
}
