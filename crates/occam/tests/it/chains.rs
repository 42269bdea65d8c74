//! Chains written in the model language (`MarkovChain`, `GaussianMarkovChain`), through the
//! library: structured q against the unrolled mean-field model on the same data, ragged lengths
//! read from data, the per-step reports, and located errors for malformed chains.

use occam::chains::chain;
use occam::{DataSet, Model, Settings};
use occam_report::FittedReport;

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn data(arrays: &[(&str, usize, usize, Vec<f64>)]) -> DataSet {
    let mut d = DataSet::new();
    for (name, rows, cols, v) in arrays {
        d.insert_array(name, *rows, *cols, v.clone(), None).unwrap();
    }
    d
}

fn fit(text: &str, d: &DataSet, settings: &Settings) -> occam::Fitted {
    Model::from_source("m.occam", text, d)
        .and_then(|m| m.fit(settings))
        .unwrap_or_else(|e| panic!("{}", e.render_plain()))
}

/// The error text a malformed model gives (from loading or fitting).
fn error(text: &str, d: &DataSet) -> String {
    match Model::from_source("m.occam", text, d).and_then(|m| m.fit(&Settings::default())) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.render_plain(),
    }
}

/// Known-parameter HMM tables (BayesPy's `hmm_known`): p0, A, emission table P.
fn known_tables() -> Vec<(&'static str, usize, usize, Vec<f64>)> {
    vec![
        ("p0", 1, 2, vec![0.6, 0.4]),
        ("A", 2, 2, vec![0.7, 0.3, 0.4, 0.6]),
        ("P", 2, 3, vec![0.1, 0.4, 0.5, 0.6, 0.3, 0.1]),
    ]
}

const SYMBOLS: [f64; 8] = [1.0, 0.0, 2.0, 1.0, 2.0, 2.0, 0.0, 2.0];

/// With every parameter known, the chain's bound is the exact ln p(y) (q is the exact posterior)
/// and the unrolled mean-field model (one Categorical q per step) stays below it.
#[test]
fn structured_q_is_exact_and_beats_the_unrolled_mean_field_model_with_known_parameters() {
    let tables = "plate K = 2\nplate C = 3\ndata p0 over K\ndata A[K] over K\ndata P[K] over C\n";
    let mut d = known_tables();
    let mut unrolled = known_tables();
    d.push(("y", SYMBOLS.len(), 1, SYMBOLS.to_vec()));
    let chain = format!(
        "{tables}plate T from data y\nz over T ~ MarkovChain(initial = p0, transition = A)\n\
         y[T] ~ Categorical(P[z])\n"
    );
    let structured = fit(&chain, &data(&d), &Settings::default()).bound();
    // Exact ln p(y) by enumerating the 2⁸ state paths.
    let (p0, a, p) = (
        [0.6, 0.4],
        [[0.7, 0.3], [0.4, 0.6]],
        [[0.1, 0.4, 0.5], [0.6, 0.3, 0.1]],
    );
    let mut total = 0.0f64;
    for path in 0..1usize << SYMBOLS.len() {
        let z = |t: usize| (path >> t) & 1;
        let mut pr = p0[z(0)] * p[z(0)][SYMBOLS[0] as usize];
        for t in 1..SYMBOLS.len() {
            pr *= a[z(t - 1)][z(t)] * p[z(t)][SYMBOLS[t] as usize];
        }
        total += pr;
    }
    assert!(
        (structured - total.ln()).abs() < 1e-12,
        "{structured} vs enumeration {}",
        total.ln()
    );
    // The same model unrolled by hand, as in examples/models/hmm.occam.
    let mut mf = tables.to_string();
    for t in 0..SYMBOLS.len() {
        mf.push_str(&match t {
            0 => "z0 ~ Categorical(p0)\n".to_string(),
            _ => format!("z{t} ~ Categorical(A[z{}])\n", t - 1),
        });
        mf.push_str(&format!("y{t} ~ Categorical(P[z{t}])\nobserve y{t}\n"));
        unrolled.push((
            ["y0", "y1", "y2", "y3", "y4", "y5", "y6", "y7"][t],
            1,
            1,
            vec![SYMBOLS[t]],
        ));
    }
    for seed in 0..3 {
        let s = Settings {
            seed,
            ..Settings::default()
        };
        let mean_field = fit(&mf, &data(&unrolled), &s).bound();
        eprintln!("seed {seed}: mean-field {mean_field}, structured {structured} (exact)");
        assert!(
            mean_field < structured - 1e-6,
            "seed {seed}: mean-field {mean_field} vs structured {structured}"
        );
    }
}

/// `examples/models/hmm.occam` (four steps unrolled, mean-field q, Dirichlet and Gaussian–Gamma
/// priors) against the same model with one chain, on the same data: the structured bound is at
/// least as high (best of the same restarts, tolerance 1e-12).
#[test]
fn structured_q_beats_the_unrolled_hmm_example() {
    let ys = [[-2.1, -1.9], [-2.3, -2.0], [2.0, 2.2], [1.8, 2.1]];
    let d: Vec<(&str, usize, usize, Vec<f64>)> = ["y1", "y2", "y3", "y4"]
        .iter()
        .zip(&ys)
        .map(|(n, y)| (*n, 1, 2, y.to_vec()))
        .collect();
    let settings = Settings {
        restarts: 4,
        tol: 1e-12,
        ..Settings::default()
    };
    let unrolled = Model::from_file(root().join("examples/models/hmm.occam"), &data(&d))
        .and_then(|m| m.fit(&settings))
        .unwrap()
        .bound();
    let d = vec![("y", 4, 2, ys.concat())];
    let chain = "plate K = 3\nplate D = 2\nplate T = 4\np0 ~ Dirichlet(1) over K\n\
                 A[K] ~ Dirichlet(1) over K\nz over T ~ MarkovChain(p0, A)\n\
                 mu[K, D] ~ Gaussian(0, 1e-2)\ntau[D] ~ Gamma(1e-3, 1e-3)\n\
                 y[T, D] ~ Gaussian(mu[z], tau)\nobserve y\n";
    let structured = fit(chain, &data(&d), &settings).bound();
    eprintln!("hmm.occam: mean-field {unrolled}, structured {structured}");
    // On these well-separated points q(z) is nearly certain, so both reach the same bound up to
    // round-off (measured: −28.327872090830752 and −28.327872090831306, 2e-14 relative); the
    // strict gap is checked above with known parameters. Both start by default (the unrolled
    // mixture indices from k-means and random labels, the chain from its k-means start): with
    // `init mu = random` every restart of the chain stops at −37.5379, as the unrolled fit did
    // from k-means alone.
    assert!(
        structured >= unrolled - 1e-12 * unrolled.abs(),
        "structured {structured} < mean-field {unrolled}"
    );
}

/// Ragged sequences: lengths (5, 17, 1) from a data input; with the parameters known, the joint
/// bound is the sum of the three sequences fitted on their own, and the report stops each
/// sequence at its length.
#[test]
fn ragged_lengths_from_data_add_up_to_separate_fits() {
    let model = "plate K = 2\nplates S, T from data y\ndata L[S]\ndata p0 over K\n\
                 data A[K] over K\ndata mu[K]\n\
                 z[S] over T ~ MarkovChain(initial = p0, transition = A, lengths = L)\n\
                 y[S, T] ~ Gaussian(mean = mu[z], precision = 4)\n";
    let lengths = [5usize, 17, 1];
    let steps = 17;
    let value = |s: usize, t: usize| ((s * 31 + t * 7) % 11) as f64 / 3.0 - 1.5;
    let tables = |rows: usize, cols: usize, y: Vec<f64>, l: Vec<f64>| {
        data(&[
            ("p0", 1, 2, vec![0.3, 0.7]),
            ("A", 2, 2, vec![0.8, 0.2, 0.35, 0.65]),
            ("mu", 2, 1, vec![-1.0, 1.0]),
            ("y", rows, cols, y),
            ("L", l.len(), 1, l),
        ])
    };
    let mut y = vec![f64::NAN; 3 * steps];
    for (s, &len) in lengths.iter().enumerate() {
        for t in 0..len {
            y[s * steps + t] = value(s, t);
        }
    }
    let l: Vec<f64> = lengths.iter().map(|&n| n as f64).collect();
    let joint = fit(model, &tables(3, steps, y, l), &Settings::default());
    let separate: f64 = lengths
        .iter()
        .enumerate()
        .map(|(s, &len)| {
            let y: Vec<f64> = (0..len).map(|t| value(s, t)).collect();
            fit(
                model,
                &tables(1, len, y, vec![len as f64]),
                &Settings::default(),
            )
            .bound()
        })
        .sum();
    assert!(
        (joint.bound() - separate).abs() <= 1e-9 * separate.abs(),
        "{} vs {separate}",
        joint.bound()
    );
    let z = joint
        .loaded()
        .model
        .variables
        .iter()
        .position(|v| v.name == "z");
    let r = chain(joint.loaded(), joint.compiled(), z.unwrap()).unwrap();
    assert_eq!(r.lengths, lengths);
    assert_eq!(r.viterbi.iter().map(Vec::len).collect::<Vec<_>>(), lengths);
    for (s, &len) in lengths.iter().enumerate() {
        for t in 0..steps {
            let row = r.row(&r.values, s, t);
            if t < len {
                assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            } else {
                assert!(row.iter().all(|v| v.is_nan()), "past the end: NaN");
            }
        }
    }
}

/// The LDS example: the bound never decreases, the smoothed standard deviations are positive, and
/// the report and the `--out` files carry means, sds and the figure.
#[test]
fn lds_example_reports_smoothed_means_with_bands() {
    let mut d = DataSet::new();
    d.insert_file("y", &root().join("examples/models/lds/y.csv"))
        .unwrap();
    let fitted = Model::from_file(root().join("examples/models/lds.occam"), &d)
        .and_then(|m| {
            m.fit(&Settings {
                max_iter: 60,
                ..Settings::default()
            })
        })
        .unwrap();
    let trace = &fitted.outcome().bound_trace;
    assert!(trace.windows(2).all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()));
    let j = fitted.report_json();
    let x = &j["chains"]["x"];
    assert_eq!(x["family"], "GaussianMarkovChain");
    assert_eq!(x["means"][0].as_array().unwrap().len(), 80);
    let sds: Vec<f64> = x["sds"][0]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap().iter().map(|v| v.as_f64().unwrap()))
        .collect();
    assert_eq!(sds.len(), 160);
    assert!(sds.iter().all(|&s| s > 0.0 && s < 1.0), "{sds:?}");
    let dir = std::env::temp_dir().join(format!("occam-chain-lds-{}", std::process::id()));
    occam_report::outputs::write_outputs(&dir, &fitted, false).unwrap();
    let csv = std::fs::read_to_string(dir.join("chain_x.csv")).unwrap();
    assert!(csv.starts_with("sequence,step,mean_0,mean_1,sd_0,sd_1\n"));
    assert_eq!(csv.lines().count(), 81);
    assert!(std::fs::read_to_string(dir.join("chain_x.svg"))
        .unwrap()
        .contains("<polygon"));
    // The chain's figure, not a Hinton diagram of its 80 × 2 marginal means.
    assert!(!dir.join("hinton_x.svg").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Malformed chains are located errors (file:line:column), never a panic.
#[test]
fn malformed_chains_are_located_errors() {
    let y = |n: usize| ("y", n, 1, vec![0.0; n]);
    let cases: &[(&str, &str, &str)] = &[
        (
            "plate K = 2\nplate C = 3\nplate T from data y\np0 ~ Dirichlet(1) over K\n\
             A[K] ~ Dirichlet(1) over C\nz over T ~ MarkovChain(p0, A)\ny[T] ~ Gaussian(0, 1)\n",
            "m.occam:6:",
            "must be square",
        ),
        (
            "plate K = 2\nplate T from data y\np0 ~ Dirichlet(1) over K\n\
             A[K] ~ Dirichlet(1) over K\nz ~ MarkovChain(p0, A)\ny[T] ~ Gaussian(0, 1)\n",
            "m.occam:5:1",
            "needs its time plate",
        ),
        (
            "plate K = 2\nplate T from data y\np0 ~ Dirichlet(1) over K\n\
             A[K] ~ Dirichlet(1) over K\nz[T] over T ~ MarkovChain(p0, A)\ny[T] ~ Gaussian(0, 1)\n",
            "m.occam:5:",
            "also one of its sequence plates",
        ),
        (
            "plate K = 2\nplate T from data y\np0 ~ Dirichlet(1) over K\n\
             A ~ Dirichlet(1) over K\nz over T ~ MarkovChain(p0, A)\ny[T] ~ Gaussian(0, 1)\n",
            "m.occam:5:",
            "must be square",
        ),
        (
            "plate T from data y\nz over T ~ MarkovChain(1, 1)\ny[T] ~ Gaussian(0, 1)\n",
            "m.occam:2:",
            "states of `z` are unknown",
        ),
        (
            "plate K = 2\nplate T from data y\nA[K] ~ Dirichlet(1) over K\n\
             z over T ~ MarkovChain(1, A, lengths = 9)\ny[T] ~ Gaussian(0, 1)\n",
            "m.occam:4:",
            "lengths of MarkovChain `z` must be a count",
        ),
        (
            "plate K = 2\nplate T from data y\nA[K] ~ Dirichlet(1) over K\n\
             tau ~ Gamma(1, 1)\nz over T ~ MarkovChain(1, A, lengths = tau)\n\
             y[T] ~ Gaussian(0, 1)\n",
            "m.occam:5:",
            "must be a data input over the sequences",
        ),
        (
            "plate D = 2\nplate T from data y\nx over T ~ GaussianMarkovChain(0, identity, 1, 1)\n\
             y[T] ~ Gaussian(0, 1)\n",
            "m.occam:3:",
            "state plate of `x` are unknown",
        ),
        (
            "plate D = 2\nplate E = 3\nplate T from data y\nA[D] over E ~ GaussianARD(0, 1)\n\
             x over T ~ GaussianMarkovChain(0, identity, A, 1)\ny[T] ~ Gaussian(0, 1)\n",
            "m.occam:5:",
            "must be square",
        ),
        (
            "plate K = 2\nplate T from data y\np0 ~ Dirichlet(1) over K\n\
             A[K] ~ Dirichlet(1) over K\nz over T ~ MarkovChain(p0, A)\ny[T] ~ Gaussian(0, 1)\n\
             init z = 0.5\n",
            "m.occam:5:",
            "the chain `z` cannot start at the value 0.5",
        ),
    ];
    for (text, place, what) in cases {
        let e = error(text, &data(&[y(4)]));
        assert!(e.contains(place) && e.contains(what), "{text}\n→ {e}");
    }
    // A length longer than the time plate names the data cell.
    let text = "plate K = 2\nplates S, T from data y\ndata L[S]\nA[K] ~ Dirichlet(1) over K\n\
                z[S] over T ~ MarkovChain(1, A, lengths = L)\ny[S, T] ~ Gaussian(0, 1)\n";
    let e = error(
        text,
        &data(&[("y", 2, 3, vec![0.0; 6]), ("L", 2, 1, vec![3.0, 4.0])]),
    );
    assert!(
        e.contains("<array L>") && e.contains("length 4 of sequence 1"),
        "{e}"
    );
    // An observed value past a sequence's end is located at the child that reads the chain.
    let text = "plate K = 2\nplates S, T from data y\ndata L[S]\nA[K] ~ Dirichlet(1) over K\n\
                z[S] over T ~ MarkovChain(1, A, lengths = L)\nmu[K] ~ Gaussian(0, 1)\n\
                y[S, T] ~ Gaussian(mu[z], 1)\n";
    let e = error(
        text,
        &data(&[("y", 2, 3, vec![0.0; 6]), ("L", 2, 1, vec![3.0, 2.0])]),
    );
    assert!(
        e.contains("m.occam:7:1") && e.contains("reads step 2 of sequence 1"),
        "{e}"
    );
    // The regime picking a chain's transition matrix is one per sequence, not per step.
    let text = "plate K = 2\nplate M = 2\nplates S, T from data y\nw ~ Dirichlet(1) over M\n\
                r[S, T] ~ Categorical(w)\nA[M, K] ~ Dirichlet(1) over K\n\
                z[S] over T ~ MarkovChain(1, A[r])\ny[S, T] ~ Gaussian(0, 1)\n";
    let e = error(text, &data(&[("y", 2, 3, vec![0.0; 6])]));
    assert!(
        e.contains("m.occam:7:") && e.contains("`r` is in plate T"),
        "{e}"
    );
    // A chain cannot be observed.
    let text = "plate K = 2\nplate T from data z\nA[K] ~ Dirichlet(1) over K\n\
                z over T ~ MarkovChain(1, A)\n";
    let e = error(text, &data(&[("z", 4, 1, vec![0.0; 4])]));
    assert!(
        e.contains("m.occam:4:1") && e.contains("cannot be observed"),
        "{e}"
    );
}

/// `transition = A[r]`: a regime per sequence picks the transition matrix (the chain's parameters
/// are a mixture). On `examples/models/hmm_regimes` (12 sequences, a sticky and a switching
/// regime, `generate_chains.py`) every sequence goes to its simulated regime, the sticky regime's
/// matrix has the large diagonal, and the bound never decreases.
#[test]
fn regime_example_assigns_every_sequence_to_its_regime() {
    let mut d = DataSet::new();
    d.insert_file("y", &root().join("examples/models/hmm_regimes/y.csv"))
        .unwrap();
    let fitted = Model::from_file(root().join("examples/models/hmm_regimes.occam"), &d)
        .and_then(|m| m.fit(&Settings::default()))
        .unwrap_or_else(|e| panic!("{}", e.render_plain()));
    let trace = &fitted.outcome().bound_trace;
    assert!(trace.windows(2).all(|w| w[1] >= w[0] - 1e-9 * w[0].abs()));
    let j = fitted.report_json();
    let q: Vec<f64> = j["variables"]["r"]["moments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row[1].as_f64().unwrap())
        .collect();
    let truth =
        std::fs::read_to_string(root().join("examples/models/hmm_regimes/r_true.csv")).unwrap();
    let truth: Vec<f64> = truth.lines().skip(1).map(|l| l.parse().unwrap()).collect();
    let same = q
        .iter()
        .zip(&truth)
        .filter(|(q, t)| (**q > 0.5) == (**t == 1.0))
        .count();
    assert!(
        same == 12 || same == 0,
        "{same} of 12 sequences agree: {q:?}"
    );
    // ⟨ln A[m, j, k]⟩: the sticky regime (simulated 0) stays, the other one switches.
    let a = &j["variables"]["A"]["moments"];
    let la = |m: usize, from: usize, to: usize| a[m * 2 + from][to].as_f64().unwrap();
    let sticky = if same == 12 { 0 } else { 1 };
    for from in 0..2 {
        assert!(la(sticky, from, from) > la(sticky, from, 1 - from), "{a}");
        assert!(
            la(1 - sticky, from, from) < la(1 - sticky, from, 1 - from),
            "{a}"
        );
    }
}

/// The LDS example recovers the simulated dynamics (a rotation by 0.3 rad per step damped by
/// 0.98, `examples/models/generate_chains.py`) up to the usual invertible map of the state: the
/// eigenvalues of the posterior mean of A are the rotation's, r·e^{±iθ}.
#[test]
fn lds_example_recovers_the_rotation_eigenvalues() {
    let mut d = DataSet::new();
    d.insert_file("y", &root().join("examples/models/lds/y.csv"))
        .unwrap();
    let fitted = Model::from_file(root().join("examples/models/lds.occam"), &d)
        .and_then(|m| m.fit(&Settings::default()))
        .unwrap();
    let a = fitted.posterior("A").unwrap();
    let m = &a.param("mean").unwrap().values;
    let (tr, det) = (m[0] + m[3], m[0] * m[3] - m[1] * m[2]);
    let disc = det - tr * tr / 4.0;
    assert!(disc > 0.0, "complex eigenvalues (a rotation): {m:?}");
    let (r, theta) = (det.sqrt(), disc.sqrt().atan2(tr / 2.0));
    eprintln!("LDS: |λ| = {r:.4} (simulated 0.98), arg λ = {theta:.4} (simulated 0.3)");
    assert!((r - 0.98).abs() < 0.03, "|λ| = {r}");
    assert!((theta - 0.3).abs() < 0.03, "arg λ = {theta}");
}

/// `init z = random` on a chain starts q at a path drawn from the chain's prior, which breaks the
/// symmetry between the states as `init mu = random` does; with no start given the chain starts
/// from k-means over the emissions (as a mixture index does), so the HMM written from the
/// distribution reference reaches the same optimum. A chain held at the symmetric prior start
/// (`init z = prior`, nothing else random) collapses — every state's parameters get the same
/// updates — and the fit says so.
#[test]
fn init_random_on_a_chain_breaks_the_symmetry_between_the_states() {
    let dir = root().join("examples/models");
    let text = std::fs::read_to_string(dir.join("hmm_chain.occam")).unwrap();
    let mut d = DataSet::new();
    for name in ["y", "L"] {
        d.insert_file(name, &dir.join(format!("hmm_chain/{name}.csv")))
            .unwrap();
    }
    let with = |init: &str| text.replace("init mu = random", init);
    let settings = Settings {
        restarts: 3,
        ..Settings::default()
    };
    let best = -222.29606;
    let identical = |f: &occam::Fitted| {
        f.outcome()
            .warnings
            .iter()
            .any(|w| matches!(w, occam::Warning::IdenticalComponents { .. }))
    };
    for init in [
        "init z = random",
        "init mu = random",
        "init z = random(seed = 4)",
        "",
    ] {
        let f = fit(&with(init), &d, &settings);
        assert!((f.bound() - best).abs() < 1e-4, "{init:?}: {}", f.bound());
        assert!(!identical(&f), "{init:?}: {:?}", f.outcome().warnings);
    }
    let collapsed = fit(&with("init z = prior"), &d, &settings);
    assert!(collapsed.bound() < best - 50.0, "{}", collapsed.bound());
    assert!(identical(&collapsed), "{:?}", collapsed.outcome().warnings);
    // Nothing in that start depends on the seed: the three restarts are one fit, and it says so.
    assert!(
        collapsed
            .outcome()
            .warnings
            .iter()
            .any(|w| matches!(w, occam::Warning::RestartsIdentical { restarts: 3, .. })),
        "{:?}",
        collapsed.outcome().warnings
    );
}

/// A categorical HMM whose emission table starts at a random draw (`init B = random`), written
/// with `B` before the chain, on data from a 3-state HMM (issue 25). The default order updates `B`
/// before the chain (both start informatively; the later node last), so `B`'s first update read
/// the chain's symmetric prior q and forgot its draw: every seed stopped after 2 sweeps at the
/// symmetric point, the states identical. Now the chain takes its own start there (k-means over
/// the emissions, as with no `init`): for every seed the states differ, the bound is far above the
/// symmetric point's, and the best bound over the seeds is that of the order that updates the
/// chain first (`--order z,p0,A,B`, which reads `B`'s draw).
#[test]
fn a_chain_starts_apart_when_a_parent_updated_before_it_has_a_random_start() {
    use rand::{Rng as _, SeedableRng as _};
    let (s, t, c) = (4usize, 100usize, 6usize);
    let a = [[0.9, 0.05, 0.05], [0.05, 0.9, 0.05], [0.05, 0.05, 0.9]];
    // Each state favours two symbols, not neighbours (k-means over the symbols' indices is not
    // the answer).
    let b = [
        [0.3, 0.03, 0.05, 0.5, 0.1, 0.02],
        [0.05, 0.02, 0.4, 0.08, 0.05, 0.4],
        [0.03, 0.5, 0.05, 0.02, 0.3, 0.1],
    ];
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(25);
    let mut draw = |p: &[f64]| {
        let u: f64 = rng.random();
        let mut acc = 0.0;
        p.iter()
            .position(|&q| {
                acc += q;
                u < acc
            })
            .unwrap_or(p.len() - 1)
    };
    let mut y = Vec::with_capacity(s * t);
    for _ in 0..s {
        let mut z = draw(&[1.0 / 3.0; 3]);
        for step in 0..t {
            if step > 0 {
                z = draw(&a[z]);
            }
            y.push(draw(&b[z]) as f64);
        }
    }
    let d = data(&[("y", s, t, y)]);
    let model = "plate K = 3\nplate C = 6\nplates S, T from data y\n\
                 p0 ~ Dirichlet(1) over K\nA[K] ~ Dirichlet(1) over K\n\
                 B[K] ~ Dirichlet(1) over C\n\
                 z[S] over T ~ MarkovChain(initial = p0, transition = A)\n\
                 y[S, T] ~ Categorical(B[z])\ninit B = random\n";
    let identical = |f: &occam::Fitted| {
        f.outcome()
            .warnings
            .iter()
            .any(|w| matches!(w, occam::Warning::IdenticalComponents { .. }))
    };
    let seeds = 0..6u64;
    let chain_first = Some(["z", "p0", "A", "B"].map(String::from).to_vec());
    let reference: Vec<f64> = seeds
        .clone()
        .map(|seed| {
            let settings = Settings {
                seed,
                order: chain_first.clone(),
                ..Settings::default()
            };
            fit(model, &d, &settings).bound()
        })
        .collect();
    // The symmetric point (the chain and `B` at their priors), where every seed stopped.
    let symmetric = fit(
        &model.replace("init B = random", "init z = prior"),
        &d,
        &Settings::default(),
    );
    assert!(identical(&symmetric), "{:?}", symmetric.outcome().warnings);
    let mut bounds = Vec::new();
    for seed in seeds {
        let f = fit(
            model,
            &d,
            &Settings {
                seed,
                ..Settings::default()
            },
        );
        assert!(!identical(&f), "seed {seed}: {:?}", f.outcome().warnings);
        // The states' emission rows differ: the largest difference of two rows' means.
        let p = f.posterior("B").unwrap();
        let m = &p.param("mean").unwrap().values;
        let spread = (0..c)
            .map(|j| {
                let col = [m[j], m[c + j], m[2 * c + j]];
                col.iter().cloned().fold(f64::MIN, f64::max)
                    - col.iter().cloned().fold(f64::MAX, f64::min)
            })
            .fold(0.0, f64::max);
        assert!(spread > 0.2, "seed {seed}: rows of B {m:?}");
        assert!(
            f.bound() > symmetric.bound() + 30.0,
            "seed {seed}: {}",
            f.bound()
        );
        bounds.push(f.bound());
    }
    eprintln!(
        "default order: {bounds:?}; chain first: {reference:?}; symmetric: {}",
        symmetric.bound()
    );
    let best = |v: &[f64]| v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    // The best bound over the seeds is the best the order that reads `B`'s draw finds.
    let (got, want) = (best(&bounds), best(&reference));
    assert!((got - want).abs() <= 1e-6 * want.abs(), "{got} vs {want}");
}
