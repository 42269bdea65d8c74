//! The collapsed log joint written in η (module `collapsed`) against the one written through θ
//! (module `unconstrained`, itself checked against finite differences): equal values and
//! gradients at β = 1 on models that use every prior and observation family, the tempered
//! gradient against central differences of the tempered value, and a vague prior's draw that
//! underflows θ but keeps a finite density in η.

use super::collapsed::Collapsed;
use super::flat::{recognise, Flat};
use super::unconstrained::log_joint;
use crate::{DataSet, Model};

fn flat(text: &str, data: &[(&str, usize, Vec<f64>)]) -> Flat {
    let mut d = DataSet::new();
    for (name, cols, v) in data {
        d.insert_array(name, v.len() / cols, *cols, v.clone(), None)
            .unwrap();
    }
    let m = Model::from_source("m.occam", text, &d).unwrap();
    recognise(m.loaded()).unwrap()
}

fn point(d: usize) -> Vec<f64> {
    (0..d)
        .map(|i| 0.3 * ((i as f64 * 1.7).sin()) + 0.1 * i as f64 - 0.2)
        .collect()
}

fn models() -> Vec<Flat> {
    vec![
        flat(
            "plate K = 3\nplate N from data x\npi ~ Dirichlet(1.5) over K\n\
             tau[K] ~ Gamma(2, 1)\nmu[K] ~ Gaussian(0, 0.5 * tau)\np[K] ~ Beta(2, 3)\n\
             r[K] ~ Gamma(1.5, 0.5)\nz[N] ~ Categorical(pi)\nx[N] ~ Gaussian(mu[z], tau[z])\n\
             y[N] ~ Bernoulli(p[z])\nc[N] ~ Poisson(r[z])\n",
            &[
                ("x", 1, vec![0.3, -1.2, 2.5, 0.9, 1.1, -0.4]),
                ("y", 1, vec![1.0, 0.0, 1.0, 1.0, 0.0, 1.0]),
                ("c", 1, vec![3.0, 0.0, 5.0, 2.0, 1.0, 4.0]),
            ],
        ),
        flat(
            "plate C = 4\nplate N from data x\nq ~ Dirichlet(0.7) over C\nm ~ Gaussian(1, 0.3)\n\
             t ~ Gamma(3, 2)\nx[N] ~ Gaussian(m, t)\nk[N] ~ Categorical(q)\n",
            &[
                ("x", 1, vec![0.3, -1.2, 2.5, 0.9, 1.1]),
                ("k", 1, vec![0.0, 3.0, 3.0, 1.0, 2.0]),
            ],
        ),
        flat(
            "plate K = 2\nplates N, D from data x\npi ~ Dirichlet(1) over K\n\
             p[K, D] ~ Beta(1, 2)\nz[N] ~ Categorical(pi)\nx[N, D] ~ Bernoulli(p[z])\n",
            &[(
                "x",
                3,
                vec![1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0],
            )],
        ),
    ]
}

#[test]
fn equals_the_log_joint_through_theta() {
    for f in models() {
        let c = Collapsed::new(&f);
        assert_eq!(c.dim, f.dimension());
        let eta = point(c.dim);
        let (mut g1, mut g2) = (vec![0.0; c.dim], vec![0.0; c.dim]);
        let want = log_joint(&f, &eta, Some(&mut g1));
        let (got, lik) = c.tempered(&eta, 1.0, &mut g2);
        assert!(
            (got - want).abs() < 1e-10 * (1.0 + want.abs()),
            "{got} vs {want}"
        );
        assert!((lik - c.log_lik(&eta)).abs() < 1e-12);
        for (a, b) in g1.iter().zip(&g2) {
            assert!(
                (a - b).abs() < 1e-9 * (1.0 + a.abs()),
                "gradient {b} vs {a}"
            );
        }
        // The prior part is F at β = 0.
        let f0 = c.tempered(&eta, 0.0, &mut g2).0;
        assert!((f0 - c.log_prior(&eta, None)).abs() < 1e-12);
        assert!((got - f0 - lik).abs() < 1e-9 * (1.0 + want.abs()));
    }
}

#[test]
fn the_tempered_gradient_matches_finite_differences() {
    for f in models() {
        let c = Collapsed::new(&f);
        let eta = point(c.dim);
        let mut g = vec![0.0; c.dim];
        let mut scratch = vec![0.0; c.dim];
        c.tempered(&eta, 0.37, &mut g);
        for j in 0..c.dim {
            let h = 1e-5 * (1.0 + eta[j].abs());
            let (mut p, mut m) = (eta.clone(), eta.clone());
            p[j] += h;
            m[j] -= h;
            let fd = (c.tempered(&p, 0.37, &mut scratch).0 - c.tempered(&m, 0.37, &mut scratch).0)
                / (2.0 * h);
            assert!(
                (fd - g[j]).abs() < 1e-7 * (1.0 + g[j].abs()),
                "{j}: {fd} vs {}",
                g[j]
            );
        }
    }
}

#[test]
fn an_underflowing_precision_keeps_a_finite_density() {
    // ln τ = −1000: τ is 0 as a double, yet ln N(x; m, τ) = ½(ln τ − ln 2π) − ½ τ (x − m)² and
    // the Gamma prior's density in η are finite.
    let f = flat(
        "plate N from data x\nm ~ Gaussian(0, 1)\nt ~ Gamma(0.001, 0.001)\nx[N] ~ Gaussian(m, t)\n",
        &[("x", 1, vec![0.3, -1.2, 2.5])],
    );
    let c = Collapsed::new(&f);
    let eta = vec![0.5, -1000.0];
    let mut g = vec![0.0; 2];
    let (v, lik) = c.tempered(&eta, 1.0, &mut g);
    let want_lik = 3.0 * 0.5 * (-1000.0 - (2.0 * std::f64::consts::PI).ln());
    assert!((lik - want_lik).abs() < 1e-9, "{lik} vs {want_lik}");
    assert!(
        v.is_finite() && g.iter().all(|x| x.is_finite()),
        "{v} {g:?}"
    );
    assert!(!log_joint(&f, &eta, None).is_finite(), "θ underflows");
}
