//! Hidden Markov chains (module `hmm`): the scaled forward algorithm against the sum over every
//! state path at a fixed θ; the forward–backward gradient of the unconstrained log joint against
//! central differences, and the collapsed (η) form against it; the exact evidence (module
//! `hmm_exact`) against a plain Monte Carlo mean of p(D | θ) over prior draws.

use rand::SeedableRng;

use super::collapsed::Collapsed;
use super::density::{ln_f, log_lik, log_sum_exp, Theta};
use super::flat::{recognise, Flat};
use super::proposal::prior_draw;
use super::unconstrained::{log_joint, to_theta};
use crate::{DataSet, Model};

fn flat(text: &str, name: &str, rows: usize, v: Vec<f64>) -> Flat {
    let mut d = DataSet::new();
    d.insert_array(name, rows, v.len() / rows, v, None).unwrap();
    let m = Model::from_source("m.occam", text, &d).unwrap();
    recognise(m.loaded()).unwrap()
}

/// Gaussian emissions, Normal–Gamma priors: two sequences of four steps.
fn gaussian() -> Flat {
    flat(
        "plate K = 2\nplates S, T from data x\np0 ~ Dirichlet(1.5) over K\n\
         A[K] ~ Dirichlet(1) over K\nz[S] over T ~ MarkovChain(initial = p0, transition = A)\n\
         tau[K] ~ Gamma(2, 2)\nmu[K] ~ Gaussian(0, 0.5 * tau)\nx[S, T] ~ Gaussian(mu[z], tau[z])\n",
        "x",
        2,
        vec![-1.1, -0.7, 1.9, 2.2, 0.3, -1.4, -0.9, 2.6],
    )
}

/// Categorical emissions over three values, one sequence of `t` steps.
fn categorical(x: Vec<f64>) -> Flat {
    flat(
        "plate K = 2\nplate C = 3\nplates S, T from data x\np0 ~ Dirichlet(1) over K\n\
         A[K] ~ Dirichlet(1.5) over K\ne[K] ~ Dirichlet(1) over C\n\
         z[S] over T ~ MarkovChain(initial = p0, transition = A)\nx[S, T] ~ Categorical(e[z])\n",
        "x",
        1,
        x,
    )
}

fn point(d: usize) -> Vec<f64> {
    (0..d)
        .map(|i| 0.3 * ((i as f64 * 1.7).sin()) + 0.1 * i as f64 - 0.2)
        .collect()
}

/// ln p(D | θ) as the sum over all K^T paths of every sequence.
fn brute(f: &Flat, theta: &Theta) -> f64 {
    let c = f.chain.as_ref().unwrap();
    let (k, t_len) = (f.k, c.steps);
    let mut total = 0.0;
    for s in 0..f.n {
        let mut terms = Vec::new();
        for code in 0..k.pow(t_len as u32) {
            let path: Vec<usize> = (0..t_len).map(|t| code / k.pow(t as u32) % k).collect();
            let mut v = theta[c.initial][path[0]].ln();
            for t in 0..t_len {
                if t > 0 {
                    v += theta[c.transition][path[t - 1] * k + path[t]].ln();
                }
                for o in &f.obs {
                    v += ln_f(f, theta, &o.lik, o.values[s * t_len + t], path[t], t);
                }
            }
            terms.push(v);
        }
        total += log_sum_exp(&terms);
    }
    total
}

#[test]
fn forward_sums_every_state_path() {
    for f in [gaussian(), categorical(vec![0.0, 2.0, 2.0, 1.0, 0.0, 2.0])] {
        let d = f.dimension();
        for shift in [0.0, 0.7, -1.3] {
            let eta: Vec<f64> = point(d).iter().map(|v| v + shift).collect();
            let (theta, _) = to_theta(&f, &eta);
            let (a, b) = (log_lik(&f, &theta), brute(&f, &theta));
            assert!((a - b).abs() < 1e-10 * (1.0 + b.abs()), "{a} vs {b}");
        }
    }
}

#[test]
fn gradient_matches_central_differences() {
    for f in [gaussian(), categorical(vec![0.0, 2.0, 2.0, 1.0, 0.0])] {
        let d = f.dimension();
        for shift in [0.0, 0.5] {
            let eta: Vec<f64> = point(d).iter().map(|v| v + shift).collect();
            let mut g = vec![0.0; d];
            log_joint(&f, &eta, Some(&mut g));
            let c = Collapsed::new(&f);
            let mut gc = vec![0.0; d];
            let (fc, _) = c.tempered(&eta, 1.0, &mut gc);
            assert!((fc - log_joint(&f, &eta, None)).abs() < 1e-9 * (1.0 + fc.abs()));
            for j in 0..d {
                let h = 1e-5 * (1.0 + eta[j].abs());
                let (mut p, mut m) = (eta.clone(), eta.clone());
                p[j] += h;
                m[j] -= h;
                let fd = (log_joint(&f, &p, None) - log_joint(&f, &m, None)) / (2.0 * h);
                assert!(
                    (fd - g[j]).abs() < 1e-6 * (1.0 + g[j].abs()),
                    "{j}: {fd} vs {}",
                    g[j]
                );
                assert!(
                    (gc[j] - g[j]).abs() < 1e-9 * (1.0 + g[j].abs()),
                    "collapsed {j}"
                );
            }
        }
    }
}

#[test]
fn exact_evidence_matches_prior_monte_carlo() {
    let f = categorical(vec![0.0, 0.0, 2.0, 2.0, 0.0]);
    let exact = super::hmm::exact(&f, &super::Options::default()).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let draws = 200_000;
    let lw: Vec<f64> = (0..draws)
        .map(|_| log_lik(&f, &prior_draw(&f, &mut rng)))
        .collect();
    let s = super::importance::summarise(&lw);
    eprintln!("exact {exact:.5}, prior MC {:.5} ± {:.5}", s.log_z, s.se);
    assert!(s.se < 0.01, "se {}", s.se);
    assert!(
        (s.log_z - exact).abs() < 3.0 * s.se,
        "{} vs {exact}",
        s.log_z
    );
}
