//! The filtered and k-step-ahead predictive of chains against filters written here: the forward
//! algorithm for an HMM (with the posterior-mean transition matrix, and with every parameter
//! known), ⟨state⟩ × A^k past the end, the Kalman filter for an LDS with known parameters; and
//! held-out sequences never change the fitted q.

// The filters are written with indices, as in the textbooks they are checked against.
#![allow(clippy::needless_range_loop)]

use occam::predict::{ChainPredictive, PredictOptions};
use occam::{DataSet, Model, Settings};

const TOL: f64 = 1e-10;

/// Two states, Gaussian emissions with known means and precision 2; `A` known or Dirichlet.
fn hmm_source(known_a: bool) -> String {
    let a = if known_a {
        "data A[K] over K"
    } else {
        "A[K] ~ Dirichlet(1) over K"
    };
    format!(
        "plate K = 2\nplates S, T from data y\ndata L[S]\ndata p0 over K\n{a}\ndata mu[K]\n\
         z[S] over T ~ MarkovChain(initial = p0, transition = A, lengths = L)\n\
         y[S, T] ~ Gaussian(mean = mu[z], precision = 2)\n"
    )
}

const P0: [f64; 2] = [0.7, 0.3];
const A: [f64; 4] = [0.9, 0.1, 0.25, 0.75];
const MU: [f64; 2] = [-1.0, 1.5];

/// Ragged sequences (NaN past the end), with `A` as data when it is known.
fn hmm_data(ys: &[Vec<f64>], known_a: bool) -> DataSet {
    let t = ys.iter().map(Vec::len).max().unwrap();
    let mut y = vec![f64::NAN; ys.len() * t];
    for (s, seq) in ys.iter().enumerate() {
        y[s * t..s * t + seq.len()].copy_from_slice(seq);
    }
    let lengths: Vec<f64> = ys.iter().map(|s| s.len() as f64).collect();
    let mut d = DataSet::new();
    d.insert_array("y", ys.len(), t, y, None).unwrap();
    d.insert_array("L", ys.len(), 1, lengths, None).unwrap();
    d.insert_array("p0", 1, 2, P0.to_vec(), None).unwrap();
    if known_a {
        d.insert_array("A", 2, 2, A.to_vec(), None).unwrap();
    }
    d.insert_array("mu", 2, 1, MU.to_vec(), None).unwrap();
    d
}

fn sequences() -> Vec<Vec<f64>> {
    vec![
        vec![-1.2, -0.8, 1.1, 1.9, 1.4, -0.9, -1.3, 1.6, 1.2],
        vec![1.4, 1.7, -1.1, -0.6, -1.4, 0.2],
    ]
}

fn normal(y: f64, m: f64, tau: f64) -> f64 {
    (tau / (2.0 * std::f64::consts::PI)).sqrt() * (-0.5 * tau * (y - m) * (y - m)).exp()
}

/// The forward algorithm: ρ_t = p(z_t | y_{<t}) for t = 0..len + ahead, and the last filtered
/// p(z_{L−1} | y_{≤L−1}).
fn forward(p0: &[f64], a: &[f64], y: &[f64], ahead: usize) -> (Vec<[f64; 2]>, [f64; 2]) {
    let mut rho = [p0[0], p0[1]];
    let mut out = Vec::new();
    let mut last = rho;
    for t in 0..y.len() + ahead {
        out.push(rho);
        let f = if t < y.len() {
            let w = [
                rho[0] * normal(y[t], MU[0], 2.0),
                rho[1] * normal(y[t], MU[1], 2.0),
            ];
            [w[0] / (w[0] + w[1]), w[1] / (w[0] + w[1])]
        } else {
            rho
        };
        if t + 1 == y.len() {
            last = f;
        }
        rho = [f[0] * a[0] + f[1] * a[2], f[0] * a[1] + f[1] * a[3]];
    }
    (out, last)
}

fn mat_pow(a: &[f64], k: usize) -> [f64; 4] {
    let mut r = [1.0, 0.0, 0.0, 1.0];
    for _ in 0..k {
        r = [
            r[0] * a[0] + r[1] * a[2],
            r[0] * a[1] + r[1] * a[3],
            r[2] * a[0] + r[3] * a[2],
            r[2] * a[1] + r[3] * a[3],
        ];
    }
    r
}

/// Checks the chain predictive of every sequence against the forward algorithm with transition
/// matrix `a`; returns the largest absolute difference seen.
fn check_hmm(p: &ChainPredictive, ys: &[Vec<f64>], a: &[f64], ahead: usize) -> f64 {
    let mut worst: f64 = 0.0;
    assert!(p.discrete);
    assert_eq!((p.states, p.ahead), (2, ahead));
    assert_eq!(
        p.lengths,
        ys.iter().map(Vec::len).collect::<Vec<_>>(),
        "observed lengths"
    );
    let y = &p.targets[0];
    assert_eq!((y.name.as_str(), y.cols, y.exact), ("y", 1, true));
    for (s, seq) in ys.iter().enumerate() {
        let (rho, last) = forward(&P0, a, seq, ahead);
        assert_eq!(p.state[s].len(), (seq.len() + ahead) * 2);
        for (t, r) in rho.iter().enumerate() {
            for k in 0..2 {
                worst = worst.max((p.state[s][t * 2 + k] - r[k]).abs());
            }
            // The emission's predictive: a two-component mixture.
            let mean = r[0] * MU[0] + r[1] * MU[1];
            let second = r[0] * (MU[0] * MU[0] + 0.5) + r[1] * (MU[1] * MU[1] + 0.5);
            let sd = (second - mean * mean).sqrt();
            worst = worst.max((y.mean[s][t] - mean).abs());
            worst = worst.max((y.sd[s][t] - sd).abs());
            let h = if t < seq.len() { 1 } else { t - seq.len() + 1 };
            assert_eq!(p.horizon(s, t), h);
        }
        // (b) k steps past the end: the last filtered marginal times A^k.
        for k in 1..=ahead {
            let ak = mat_pow(a, k);
            let want = [
                last[0] * ak[0] + last[1] * ak[2],
                last[0] * ak[1] + last[1] * ak[3],
            ];
            let t = seq.len() - 1 + k;
            for j in 0..2 {
                worst = worst.max((p.state[s][t * 2 + j] - want[j]).abs());
            }
        }
    }
    worst
}

#[test]
fn hmm_with_known_parameters_is_the_forward_algorithm() {
    let ys = sequences();
    let model = Model::from_source("hmm.occam", &hmm_source(true), &hmm_data(&ys, true)).unwrap();
    let fit = model.fit(&Settings::default()).unwrap();
    let p = fit
        .predict_ahead(&DataSet::new(), 4, &PredictOptions::default())
        .unwrap();
    let worst = check_hmm(&p, &ys, &A, 4);
    println!("known parameters: max |Occam − forward| = {worst:.3e}");
    assert!(worst < TOL, "{worst}");
    // The CSV: one line per sequence and step, horizon 1 in the data, 1..4 past the end.
    let csv = p.to_csv();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "sequence,step,horizon,y_mean,y_sd,y_q0.025,y_q0.5,y_q0.975,z_p_0,z_p_1"
    );
    assert_eq!(lines.len(), 1 + (9 + 4) + (6 + 4));
    assert!(lines[10].starts_with("0,9,1,"), "{}", lines[10]);
    assert!(lines[13].starts_with("0,12,4,"), "{}", lines[13]);
    assert!(lines[14].starts_with("1,0,1,"), "{}", lines[14]);
}

#[test]
fn hmm_with_a_dirichlet_transition_uses_its_posterior_mean() {
    let ys = sequences();
    let model = Model::from_source("hmm.occam", &hmm_source(false), &hmm_data(&ys, false)).unwrap();
    let fit = model.fit(&Settings::default()).unwrap();
    let a_mean = fit
        .posterior("A")
        .unwrap()
        .param("mean")
        .unwrap()
        .values
        .clone();
    // ⟨A⟩ is far from a point mass here (Dirichlet(1) and 13 transitions): the predictive
    // still equals the forward algorithm with ⟨A⟩, the posterior-mean transition matrix.
    assert!((a_mean[0] - A[0]).abs() > 1e-3, "{a_mean:?}");
    let before = fit.saved().to_json();
    let p = fit
        .predict_ahead(&DataSet::new(), 3, &PredictOptions::default())
        .unwrap();
    let worst = check_hmm(&p, &ys, &a_mean, 3);
    println!("Dirichlet A, ⟨A⟩ = {a_mean:?}: max |Occam − forward| = {worst:.3e}");
    assert!(worst < TOL, "{worst}");
    // (d) Held-out sequences: their own filter, and the fitted q is bit for bit unchanged.
    let held: Vec<Vec<f64>> = vec![vec![1.3, 1.8, 1.2, -1.0], vec![-0.7, -1.5, 1.0, 1.1, 1.6]];
    let q = fit
        .predict_ahead(&hmm_data(&held, false), 2, &PredictOptions::default())
        .unwrap();
    let worst = check_hmm(&q, &held, &a_mean, 2);
    assert!(worst < TOL, "{worst}");
    // (The saved form holds every node's φ, u and A; NaN-padded data compare as text.)
    assert!(
        fit.saved().to_json() == before,
        "held-out data changed the fitted q"
    );
    assert_eq!(
        fit.posterior("A").unwrap().param("mean").unwrap().values,
        a_mean
    );
    // Same seed, same numbers.
    let again = fit
        .predict_ahead(&hmm_data(&held, false), 2, &PredictOptions::default())
        .unwrap();
    assert_eq!(again, q);
}

#[test]
fn a_chain_without_ahead_is_a_clear_error() {
    let ys = sequences();
    let fit = Model::from_source("hmm.occam", &hmm_source(true), &hmm_data(&ys, true))
        .unwrap()
        .fit(&Settings::default())
        .unwrap();
    let e = fit
        .predict(
            &DataSet::new(),
            &Default::default(),
            &PredictOptions::default(),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("`z` is a chain") && e.contains("--ahead"), "{e}");
}

const LDS: &str = "plate D = 2\nplates T, O from data y\ndata A[D] over D\ndata C[O] over D\n\
    x over T ~ GaussianMarkovChain(mean0 = 0, precision0 = identity * 1, dynamics = A, noise = 10)\n\
    y[T, O] ~ Gaussian(mean = dot(C, x), precision = 4)\n";

const LA: [[f64; 2]; 2] = [[0.9, -0.3], [0.3, 0.9]];
const LC: [[f64; 2]; 3] = [[1.0, 0.0], [0.5, 1.0], [-0.4, 0.8]];

fn inv(m: &[Vec<f64>]) -> Vec<Vec<f64>> {
    // Gauss–Jordan without pivoting (the matrices here are symmetric positive definite).
    let n = m.len();
    let mut a: Vec<Vec<f64>> = m.to_vec();
    let mut b: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| f64::from(u8::from(i == j))).collect())
        .collect();
    for c in 0..n {
        let p = a[c][c];
        for j in 0..n {
            a[c][j] /= p;
            b[c][j] /= p;
        }
        for r in 0..n {
            if r != c {
                let f = a[r][c];
                for j in 0..n {
                    a[r][j] -= f * a[c][j];
                    b[r][j] -= f * b[c][j];
                }
            }
        }
    }
    b
}

#[test]
fn lds_with_known_parameters_is_the_kalman_filter() {
    let ys: Vec<[f64; 3]> = vec![
        [0.8, 0.1, -0.5],
        [0.5, 0.9, 0.2],
        [0.1, 1.2, 0.6],
        [-0.4, 0.7, 0.9],
        [-0.6, 0.1, 0.4],
        [-0.9, -0.6, 0.1],
    ];
    let mut d = DataSet::new();
    d.insert_array("y", ys.len(), 3, ys.concat(), None).unwrap();
    d.insert_array("A", 2, 2, LA.concat(), None).unwrap();
    d.insert_array("C", 3, 2, LC.concat(), None).unwrap();
    let fit = Model::from_source("lds.occam", LDS, &d)
        .unwrap()
        .fit(&Settings::default())
        .unwrap();
    let before = fit.saved().to_json();
    let ahead = 3;
    let p = fit
        .predict_ahead(&DataSet::new(), ahead, &PredictOptions::default())
        .unwrap();
    assert!(!p.discrete);
    assert_eq!((p.states, p.lengths.clone()), (2, vec![ys.len()]));
    let y = &p.targets[0];
    assert_eq!((y.cols, y.exact), (3, true));
    // The Kalman filter in covariance form: x_0 ~ N(0, I), Q = I/10, R = I/4.
    let mut m = vec![0.0; 2];
    let mut pcov = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
    let mut worst: f64 = 0.0;
    for t in 0..ys.len() + ahead {
        // The predictive at step t: state N(m, P), y_o ~ N(c_oᵀm, c_oᵀPc_o + 1/4).
        let u = &p.state[0][t * 6..(t + 1) * 6];
        for i in 0..2 {
            worst = worst.max((u[i] - m[i]).abs());
            for j in 0..2 {
                worst = worst.max((u[2 + i * 2 + j] - (pcov[i][j] + m[i] * m[j])).abs());
            }
        }
        for (o, c) in LC.iter().enumerate() {
            let mean = c[0] * m[0] + c[1] * m[1];
            let var: f64 = (0..2)
                .map(|i| (0..2).map(|j| c[i] * pcov[i][j] * c[j]).sum::<f64>())
                .sum::<f64>()
                + 0.25;
            worst = worst.max((y.mean[0][t * 3 + o] - mean).abs());
            worst = worst.max((y.sd[0][t * 3 + o] - var.sqrt()).abs());
        }
        // Update with y_t (while there are data): K = P Cᵀ (C P Cᵀ + R)⁻¹.
        if t < ys.len() {
            let cp: Vec<Vec<f64>> = LC
                .iter()
                .map(|c| {
                    (0..2)
                        .map(|j| c[0] * pcov[0][j] + c[1] * pcov[1][j])
                        .collect()
                })
                .collect();
            let s: Vec<Vec<f64>> = (0..3)
                .map(|a| {
                    (0..3)
                        .map(|b| {
                            cp[a][0] * LC[b][0]
                                + cp[a][1] * LC[b][1]
                                + if a == b { 0.25 } else { 0.0 }
                        })
                        .collect()
                })
                .collect();
            let si = inv(&s);
            let gain: Vec<Vec<f64>> = (0..2)
                .map(|i| {
                    (0..3)
                        .map(|b| (0..3).map(|a| cp[a][i] * si[a][b]).sum())
                        .collect()
                })
                .collect();
            let resid: Vec<f64> = (0..3)
                .map(|o| ys[t][o] - LC[o][0] * m[0] - LC[o][1] * m[1])
                .collect();
            for i in 0..2 {
                m[i] += (0..3).map(|o| gain[i][o] * resid[o]).sum::<f64>();
            }
            let mut np = pcov.clone();
            for i in 0..2 {
                for j in 0..2 {
                    np[i][j] -= (0..3).map(|o| gain[i][o] * cp[o][j]).sum::<f64>();
                }
            }
            pcov = np;
        }
        // Predict: m ← A m, P ← A P Aᵀ + Q.
        let am = [
            LA[0][0] * m[0] + LA[0][1] * m[1],
            LA[1][0] * m[0] + LA[1][1] * m[1],
        ];
        let mut np = vec![vec![0.0; 2]; 2];
        for i in 0..2 {
            for j in 0..2 {
                np[i][j] = (0..2)
                    .map(|a| {
                        (0..2)
                            .map(|b| LA[i][a] * pcov[a][b] * LA[j][b])
                            .sum::<f64>()
                    })
                    .sum::<f64>()
                    + if i == j { 0.1 } else { 0.0 };
            }
        }
        m = am.to_vec();
        pcov = np;
    }
    println!("LDS: max |Occam − Kalman| = {worst:.3e}");
    assert!(worst < TOL, "{worst}");
    assert!(fit.saved().to_json() == before);
}

/// The LDS example (learnt dynamics, rotated C·x): a saved fit loads (C is saved in the linear
/// kernel's shared form) and predicts ahead bit for bit as the live fit; the state's predictive
/// spreads as the horizon grows.
#[test]
fn a_saved_lds_predicts_ahead_the_same_bits() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut d = DataSet::new();
    d.insert_file("y", &root.join("examples/models/lds/y.csv"))
        .unwrap();
    let fit = Model::from_file(root.join("examples/models/lds.occam"), &d)
        .unwrap()
        .fit(&Settings::default())
        .unwrap();
    let opts = PredictOptions::default();
    let live = fit.predict_ahead(&DataSet::new(), 5, &opts).unwrap();
    let text = fit.saved().to_json();
    let back = occam::saved::SavedFit::from_json("fit.json", &text).unwrap();
    let loaded = occam::Fitted::from_saved(&back).unwrap();
    let again = loaded.predict_ahead(&DataSet::new(), 5, &opts).unwrap();
    assert_eq!(
        again, live,
        "save → load → predict ahead gives the same bits"
    );
    let y = &live.targets[0];
    let t = live.lengths[0];
    assert!(y.exact);
    assert!(y.sd[0][(t + 4) * y.cols] > y.sd[0][t * y.cols]);
}
