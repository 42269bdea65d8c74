//! Table 3.1 of the thesis, reproduced in distribution: LTU networks on Ripley's Pima split and
//! the crabs (fixed stratified 80/120 split), over the thesis's whole (C, H) grid with one
//! initialisation per setting (the thesis used ten; the full grid runs in the
//! `ltu_table_3_1` example, whose numbers are recorded in `data/README.md`).
//!
//! Thesis: Pima best 63, average 73.97 test errors (of 332); crabs best 2, average 6.08 (of 120).
//! Measured here (seed 2000): Pima best 65, average 72.22; crabs best 3, average 5.92. Seeds 1–5
//! gave Pima best 63–66, average 68.9–72.7; crabs best 3–5, average 5.6–5.9. The bands below are
//! the thesis's numbers widened for the unknown seeds and for taking the best of 9 and 12
//! networks rather than of 90 and 120.

use occam_nn::ltu::experiments::{table_3_1, Options, Table};

#[test]
fn table_3_1_best_and_average_test_errors_are_near_the_thesis() {
    let opts = Options {
        inits: 1,
        ..Options::default()
    };
    let table = table_3_1(&opts).unwrap();
    let (pima, crabs) = (&table.summaries[0], &table.summaries[1]);
    eprintln!("{}", table.to_markdown());
    assert_eq!(
        (pima.dataset.as_str(), pima.nets, pima.n_test),
        ("pima", 9, 332)
    );
    assert_eq!(
        (crabs.dataset.as_str(), crabs.nets, crabs.n_test),
        ("crabs", 12, 120)
    );
    assert_eq!((pima.thesis_best, pima.thesis_average), (63.0, 73.97));
    assert_eq!((crabs.thesis_best, crabs.thesis_average), (2.0, 6.08));

    assert!(
        (56..=70).contains(&pima.best_test_errors),
        "Pima best {} (thesis 63)",
        pima.best_test_errors
    );
    assert!(
        (66.0..=80.0).contains(&pima.average_test_errors),
        "Pima average {} (thesis 73.97)",
        pima.average_test_errors
    );
    assert!(
        (1..=6).contains(&crabs.best_test_errors),
        "crabs best {} (thesis 2)",
        crabs.best_test_errors
    );
    assert!(
        (4.0..=8.0).contains(&crabs.average_test_errors),
        "crabs average {} (thesis 6.08)",
        crabs.average_test_errors
    );
    // Every network beats the majority class (Pima: 109 diabetic in the test set; crabs: 60/60).
    for net in &table.nets {
        let majority = if net.dataset == "pima" { 109 } else { 60 };
        assert!(net.test_errors < majority, "{net:?}");
    }

    // The results round-trip through the files written for the CLI.
    let dir = std::env::temp_dir().join(format!("occam-ltu-table-{}", std::process::id()));
    table.write_dir(&dir).unwrap();
    let json = std::fs::read_to_string(dir.join("table_3_1.json")).unwrap();
    let back: Table = serde_json::from_str(&json).unwrap();
    assert_eq!(back, table);
    let csv = std::fs::read_to_string(dir.join("table_3_1_nets.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 21);
    let md = std::fs::read_to_string(dir.join("table_3_1.md")).unwrap();
    assert!(md.contains("Best LTU (measured)"));
    std::fs::remove_dir_all(&dir).unwrap();
}
