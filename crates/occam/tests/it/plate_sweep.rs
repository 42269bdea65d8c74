//! The plate sweep's warm start (module `evidence::sweep`): each size K after a smaller one is
//! offered one more candidate start, from the previous size's q(z) with its most used component
//! split, judged as the engine judges candidate starts: by its converged bound against the
//! default fit's best start's, both before pruning, kept only where higher by more than the
//! stopping tolerance. Where it is not kept the fit is the fit of that size alone, bit for bit;
//! on the VIBES tutorial it is kept at K = 4 and 5 and ends there above the fit alone; the sweep
//! is the same bits when run again.

use occam::evidence::{compare_evidence, Method, Options};
use occam::{DataSet, Model, Observer, Settings};

fn tutorial() -> Model {
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/vibes_tutorial");
    let mut data = DataSet::new();
    data.insert_file("x", &root.join("x.csv")).unwrap();
    Model::from_file(root.join("mixture.occam"), &data).unwrap()
}

fn quiet(_: usize) -> Box<dyn Observer> {
    Box::new(())
}

#[test]
fn a_sweep_keeps_the_warm_start_only_where_its_bound_is_higher() {
    let base = tutorial();
    let models: Vec<Model> = (1..=5).map(|k| base.with_plate("K", k).unwrap()).collect();
    let settings = Settings::default();
    let swept =
        occam::compare_swept(&models, &settings, &[], false, Some("K"), &mut quiet).unwrap();
    // 500 rows of 2 values: the stopping tolerance in nats.
    let tol = settings.tol * 1000.0;
    let mut kept = Vec::new();
    for (k, (m, c)) in models.iter().zip(&swept).enumerate() {
        let alone = m.fit(&settings).unwrap();
        let o = alone.outcome();
        // The fit alone's best start, converged, before pruning.
        let before = o.bound_trace[o.prune_start.unwrap() - 1];
        let (alone, got) = (alone.bound(), c.fitted.bound());
        match &c.warm {
            None => {
                assert_eq!(k, 0, "K = {} has no warm start", k + 1);
                assert_eq!(got.to_bits(), alone.to_bits());
            }
            Some(w) => {
                assert_eq!(w.from, k as u64);
                assert_eq!(w.default_bound.to_bits(), before.to_bits());
                if w.kept {
                    assert!(w.warm_bound > before + tol, "K = {}: {w}", k + 1);
                    // Pruning does not lower a bound.
                    assert!(got >= w.warm_bound, "K = {}: {got} after {w}", k + 1);
                    kept.push(k + 1);
                } else {
                    assert_eq!(got.to_bits(), alone.to_bits());
                    assert!(w.warm_bound <= before + tol, "K = {}: {w}", k + 1);
                }
            }
        }
        // Measured on this data set (not implied by the rule, which compares before pruning):
        // no size ends below its fit alone.
        assert!(got >= alone, "K = {}: {got} below {alone}", k + 1);
        eprintln!("K = {}: alone {alone:.4}, swept {got:.4}", k + 1);
    }
    // Measured: the default k-means start leaves K = 4 at -2274.97 and K = 5 at -2262.43; the
    // split of K = 3's fit reaches -2254.28 and -2241.48.
    assert!(kept.contains(&4) && kept.contains(&5), "kept at {kept:?}");
    let again =
        occam::compare_swept(&models, &settings, &[], false, Some("K"), &mut quiet).unwrap();
    for (a, b) in swept.iter().zip(&again) {
        assert_eq!(a.fitted.bound().to_bits(), b.fitted.bound().to_bits());
    }
    // The table of several methods keeps the same fits, and says so in vb's note.
    let opts = Options {
        plate: Some("K".into()),
        ..Options::default()
    };
    let rows = compare_evidence(&models, &settings, &[], &[Method::Vb], &opts, &mut quiet).unwrap();
    for (r, c) in rows.iter().zip(&swept) {
        assert_eq!(r.fitted.bound().to_bits(), c.fitted.bound().to_bits());
        let occam::evidence::Evidence::Estimate(e) = &r.evidence[0] else {
            panic!("vb applies")
        };
        assert_eq!(
            e.note.contains("warm start from K"),
            c.warm.is_some(),
            "{}",
            e.note
        );
    }
}

#[test]
fn without_a_plate_or_with_falling_sizes_nothing_is_warm_started() {
    let base = tutorial();
    let models: Vec<Model> = [3, 2]
        .iter()
        .map(|&k| base.with_plate("K", k).unwrap())
        .collect();
    let settings = Settings::default();
    for plate in [None, Some("K")] {
        let c = occam::compare_swept(&models, &settings, &[], false, plate, &mut quiet).unwrap();
        assert!(c.iter().all(|c| c.warm.is_none()));
    }
}
