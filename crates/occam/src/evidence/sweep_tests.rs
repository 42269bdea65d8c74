//! The early stop of a plate sweep's warm start (module `sweep`): where the warm fit was
//! stopped because its bound could not pass the default fit's, the same warm fit run to its
//! end is not kept either, so the stop gives nothing back on the VIBES tutorial.

use super::sweep::{fit_swept, warm_starts};
use crate::driver::Settings;
use crate::{DataSet, Model};

fn tutorial() -> Model {
    let root =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/vibes_tutorial");
    let mut data = DataSet::new();
    data.insert_file("x", &root.join("x.csv")).unwrap();
    Model::from_file(root.join("mixture.occam"), &data).unwrap()
}

#[test]
fn a_warm_start_stopped_early_would_not_have_been_kept() {
    let base = tutorial();
    let settings = Settings::default();
    let once = Settings {
        restarts: 1,
        ..settings.clone()
    };
    let mut previous = None;
    let mut stopped = Vec::new();
    for k in 1..=5 {
        let m = base.with_plate("K", k).unwrap();
        let (f, w) = fit_swept(&m, previous.as_ref(), Some("K"), &settings, &mut ()).unwrap();
        if let Some(w) = w.filter(|w| w.stopped) {
            assert!(!w.kept);
            let starts = warm_starts(previous.as_ref().unwrap(), &m, "K", 1).unwrap();
            let full = m.fit_started(&once, &starts, &mut ()).unwrap().bound();
            eprintln!(
                "K = {k}: stopped at {:.4}, run to the end {full:.4}, default {:.4}",
                w.warm_bound, w.default_bound
            );
            assert!(
                full <= w.default_bound + w.tolerance,
                "K = {k}: {full} would be kept"
            );
            assert!(w.warm_bound <= full + 1e-9 * full.abs());
            assert_eq!(f.bound().to_bits(), w.default_bound.to_bits());
            stopped.push(k);
        }
        previous = Some(f);
    }
    // Measured: K = 2 (the split of one component reaches the default optimum) and K = 3.
    assert!(!stopped.is_empty(), "no warm start stopped early");
}
