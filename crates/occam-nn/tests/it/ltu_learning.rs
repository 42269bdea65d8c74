//! Learning: the data sets, the training loop's heuristics, weight normalisation and
//! determinism.

use occam_nn::ltu::datasets::{
    crabs, crabs_from_csv, crabs_in_train, pima, pima_from_csv, Dataset,
};
use occam_nn::ltu::error::LtuError;
use occam_nn::ltu::experiments::{run_grid, summarise, table_3_1, Options};
use occam_nn::ltu::icm::{InferenceOptions, UpdateRule};
use occam_nn::ltu::learn::{normalise_weights, train, TrainOptions};
use occam_nn::ltu::network::LtuNetwork;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn count(y: &[f64], v: f64) -> usize {
    y.iter().filter(|&&t| t == v).count()
}

#[test]
fn pima_is_ripleys_split_scaled_to_zero_mean_within_unit_range() {
    let s = pima().unwrap();
    assert_eq!(
        (s.train.n, s.test.n, s.train.d, s.train.k),
        (200, 332, 7, 1)
    );
    // MASS: Pima.tr has 68 diabetic of 200, Pima.te 109 of 332.
    assert_eq!((count(&s.train.y, 1.0), count(&s.test.y, 1.0)), (68, 109));
    for j in 0..7 {
        let col: Vec<f64> = (0..200).map(|p| s.train.input(p)[j]).collect();
        let mean = col.iter().sum::<f64>() / 200.0;
        let max = col.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(mean.abs() < 1e-12, "column {j} mean {mean}");
        assert!((max - 1.0).abs() < 1e-12, "column {j} max |x| {max}");
    }
}

#[test]
fn crabs_split_is_stratified_80_120() {
    let s = crabs().unwrap();
    assert_eq!((s.train.n, s.test.n, s.train.d), (80, 120, 5));
    assert_eq!((count(&s.train.y, 1.0), count(&s.test.y, 1.0)), (40, 60));
    assert_eq!((1..=50).filter(|&i| crabs_in_train(i)).count(), 20);
}

#[test]
fn malformed_csv_is_a_clear_error() {
    let head = "rownames,npreg,glu,bp,skin,bmi,ped,age,type\n";
    let good = format!("{head}1,5,86,68,28,30.2,0.364,24,No\n2,7,195,70,33,25.1,0.163,55,Yes\n");
    assert!(pima_from_csv(&good, &good).is_ok());
    let bad_label = format!("{head}1,5,86,68,28,30.2,0.364,24,Maybe\n");
    match pima_from_csv(&good, &bad_label).unwrap_err() {
        LtuError::Data { file, record, why } => {
            assert_eq!((file.as_str(), record), ("pima_test.csv", 1));
            assert!(why.contains("Maybe"), "{why}");
        }
        e => panic!("unexpected {e}"),
    }
    let bad_number = format!("{head}1,5,x,68,28,30.2,0.364,24,No\n");
    assert!(matches!(
        pima_from_csv(&bad_number, &good),
        Err(LtuError::Data { record: 1, .. })
    ));
    assert!(matches!(
        crabs_from_csv("rownames,sp,sex,FL\n1,B,M,8.1\n"),
        Err(LtuError::Data { record: 0, .. })
    ));
    assert!(matches!(
        Dataset::new("x", 2, 1, vec![0.0; 4], vec![1.0, 0.0]),
        Err(LtuError::NotBipolar { .. })
    ));
}

#[test]
fn weight_normalisation_balances_norms_and_keeps_the_mapping() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
    let net = LtuNetwork::random(&[4, 6, 3, 2], 1.0, &mut rng).unwrap();
    let mut normed = net.clone();
    normalise_weights(&mut normed);
    for _ in 0..200 {
        let x: Vec<f64> = (0..4).map(|_| rng.random_range(-2.0..2.0)).collect();
        assert_eq!(net.forward(&x).unwrap(), normed.forward(&x).unwrap());
    }
    for l in 0..2 {
        let (layer, next) = (&normed.layers()[l], &normed.layers()[l + 1]);
        for j in 0..layer.n_out() {
            let w_in: f64 = layer.row(j)[..layer.n_in()].iter().map(|w| w * w).sum();
            let w_out: f64 = (0..next.n_out()).map(|i| next.weight(i, j).powi(2)).sum();
            assert!((w_in.sqrt() - w_out.sqrt()).abs() < 1e-9 * (1.0 + w_out.sqrt()));
        }
    }
}

/// Two interleaved classes that no single hyperplane separates: +1 iff |x₁| < 0.5.
fn stripe(n: usize, seed: u64) -> Dataset {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let x: Vec<f64> = (0..2 * n).map(|_| rng.random_range(-1.0..1.0)).collect();
    let y = (0..n)
        .map(|p| if x[2 * p].abs() < 0.5 { 1.0 } else { -1.0 })
        .collect();
    Dataset::new("stripe", 2, 1, x, y).unwrap()
}

#[test]
fn learning_solves_a_problem_no_single_unit_can() {
    let data = stripe(60, 1);
    for rule in [UpdateRule::Icm, UpdateRule::Thesis] {
        let mut opts = TrainOptions::thesis(4, 100.0);
        opts.inference.rule = rule;
        let best = (0..4)
            .map(|seed| {
                let r = train(&data, &opts, seed).unwrap();
                // Keep-best: the returned network has the smallest training error seen.
                let min = *r.train_errors.iter().min().unwrap();
                assert_eq!(r.train_errors[r.best_round], min);
                assert_eq!(r.network.count_errors(&data.x, &data.y).unwrap(), min);
                min
            })
            .min()
            .unwrap();
        // A linear unit gets at best about a quarter wrong; two hidden units suffice.
        assert!(best <= 2, "{rule:?}: best training error {best} of 60");
    }
}

#[test]
fn without_keep_best_the_last_network_is_returned() {
    let data = stripe(40, 2);
    let mut opts = TrainOptions::thesis(3, 10.0);
    opts.keep_best = false;
    opts.rounds = 3;
    opts.inference = InferenceOptions::icm(50);
    let r = train(&data, &opts, 9).unwrap();
    assert_eq!(r.best_round, 3);
    assert_eq!(r.train_errors.len(), 4);
    assert_eq!(r.smo_iterations.len(), 3);
    assert_eq!(
        r.network.count_errors(&data.x, &data.y).unwrap(),
        r.train_errors[3]
    );
}

#[test]
fn grid_results_do_not_depend_on_the_thread_count() {
    let split = crabs().unwrap();
    let mut opts = TrainOptions::thesis(5, 10.0);
    opts.rounds = 2;
    let run = |threads| {
        occam_core::threads::on_threads(threads, || {
            run_grid(&split, &[1.0, 10.0], &[3, 5], 2, &opts, 11).unwrap()
        })
        .unwrap()
    };
    let (one, two) = (run(1), run(2));
    assert_eq!(one, two);
    assert_eq!(one.len(), 8);
    assert_ne!(one[0].seed, one[1].seed);
}

#[test]
fn invalid_training_options_are_errors() {
    let data = stripe(10, 3);
    let mut opts = TrainOptions::thesis(0, 1.0);
    assert!(matches!(
        train(&data, &opts, 0),
        Err(LtuError::InvalidOption { name: "hidden", .. })
    ));
    opts.hidden = vec![2];
    opts.c = -1.0;
    assert!(matches!(
        train(&data, &opts, 0),
        Err(LtuError::InvalidOption { name: "C", .. })
    ));
    opts.c = 1.0;
    opts.init_scale = 0.0;
    assert!(train(&data, &opts, 0).is_err());
}

#[test]
fn invalid_grids_are_errors() {
    let opts = Options {
        inits: 0,
        ..Options::default()
    };
    assert!(matches!(
        table_3_1(&opts),
        Err(LtuError::InvalidOption { name: "grid", .. })
    ));
    let split = crabs().unwrap();
    assert!(summarise(&split, &[], (2.0, 6.08)).is_err());
    let none = run_grid(&split, &[1.0], &[], 3, &TrainOptions::thesis(2, 1.0), 0).unwrap();
    assert!(none.is_empty());
}
