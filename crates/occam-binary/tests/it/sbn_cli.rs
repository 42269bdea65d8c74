//! CSV formats and the CLI functions: round trips, errors that name file and line, and the
//! loglik / learn / repro entry points.

use occam_binary::sbn::cli::{self, LearnCliOptions, LoglikOptions, ReproOptions, Reproduction};
use occam_binary::sbn::{exact, gen, io, Evidence, SbnError};

const NET: &str = "# 2-unit net\nunit,parent,weight\n0,,0.5\n1,,-0.25\n1,0,1.5\n";

#[test]
fn sbn_network_csv_round_trips() {
    let (sbn, _) = gen::saul_246(1.0, 1.0, 3).unwrap();
    let text = io::write_sbn(&sbn);
    let back = io::parse_sbn(&text, "mem").unwrap();
    assert_eq!(sbn, back);
}

#[test]
fn sbn_data_csv_round_trips() {
    let d = occam_binary::sbn::repro::bars_dataset();
    let back = io::parse_data(&io::write_data(&d), "mem").unwrap();
    assert_eq!(d, back);
}

#[test]
fn sbn_parse_errors_name_file_and_line() {
    let e = io::parse_sbn("unit,parent,weight\n0,,x\n", "net.csv").unwrap_err();
    assert_eq!(
        e,
        SbnError::Parse {
            file: "net.csv".into(),
            line: 2,
            why: "weight 'x' is not a number".into()
        }
    );
    let e = io::parse_sbn("unit,weight\n", "net.csv").unwrap_err();
    assert!(matches!(e, SbnError::Parse { line: 1, .. }));
    let e = io::parse_sbn("unit,parent,weight\n1,0,1\n0,1,1\n", "cyc.csv").unwrap_err();
    assert!(e.to_string().contains("cycle"), "{e}");
    let e = io::parse_data("3,4\n0,1\n1,2\n", "d.csv").unwrap_err();
    assert_eq!(
        e,
        SbnError::Parse {
            file: "d.csv".into(),
            line: 3,
            why: "value '2' is not 0 or 1".into()
        }
    );
    let e = io::parse_data("3,4\n0\n", "d.csv").unwrap_err();
    assert!(matches!(e, SbnError::Parse { line: 2, .. }));
    assert!(io::parse_data("", "d.csv").is_err());
}

#[test]
fn sbn_loglik_reports_every_method_and_exact_matches() {
    let data = "1\n0\n1\n";
    let methods: Vec<String> = ["exact", "mf", "mixture:2", "first", "third"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let r = cli::loglik_text(NET, "net.csv", data, "d.csv", &methods, 0).unwrap();
    assert_eq!(r.rows.len(), 2);
    let sbn = io::parse_sbn(NET, "n").unwrap();
    for (k, v) in [false, true].into_iter().enumerate() {
        let ll = exact::log_likelihood(&sbn, &Evidence::from_pairs(2, &[(1, v)]).unwrap()).unwrap();
        assert!((r.rows[k].results[0].value - ll).abs() < 1e-12);
        for a in &r.rows[k].results {
            assert!(a.value <= ll + 1e-10);
        }
    }
    let csv = r.to_csv();
    assert!(csv.starts_with("pattern,exact,exact_is_lower_bound,mf,"));
    assert_eq!(csv.lines().count(), 3);
    assert!(r.to_json().contains("\"mixture:2\""));
}

#[test]
fn sbn_loglik_rejects_bad_method_and_unknown_unit() {
    let e = cli::loglik_text(NET, "n", "1\n0\n", "d", &["nope".to_string()], 0).unwrap_err();
    assert!(matches!(e, SbnError::Option { .. }));
    let e = cli::loglik_text(NET, "n", "7\n0\n", "d.csv", &["mf".to_string()], 0).unwrap_err();
    assert!(e.to_string().contains("d.csv"), "{e}");
    let e = cli::loglik(&LoglikOptions {
        sbn_path: "/nonexistent/net.csv".into(),
        data_path: "/nonexistent/d.csv".into(),
        methods: vec!["mf".into()],
        seed: 0,
    })
    .unwrap_err();
    assert!(matches!(e, SbnError::Io { .. }));
}

#[test]
fn sbn_loglik_from_files() {
    let dir = std::env::temp_dir().join(format!("occam_sbn_cli_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (net, data) = (dir.join("net.csv"), dir.join("d.csv"));
    std::fs::write(&net, NET).unwrap();
    std::fs::write(&data, "1\n1\n").unwrap();
    let r = cli::loglik(&LoglikOptions {
        sbn_path: net,
        data_path: data,
        methods: vec!["third".into()],
        seed: 1,
    })
    .unwrap();
    assert_eq!(r.rows.len(), 1);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn sbn_learn_improves_the_exact_likelihood() {
    let data = io::write_data(&occam_binary::sbn::repro::bars_dataset());
    let o = LearnCliOptions {
        layers: Some(vec![1, 8, 16]),
        method: "mf".into(),
        steps: 30,
        rate: 1.0,
        init_scale: 0.1,
        seed: 3,
        ..Default::default()
    };
    let r = cli::learn_text(&o, None, &data, "bars.csv").unwrap();
    assert!(
        r.objective.last().unwrap() > &r.objective[0],
        "{:?}",
        r.objective
    );
    let ll = r.exact_loglik.unwrap();
    assert!(ll < -gen::bars_entropy() + 1e-12 && ll > -11.1, "{ll}");
    assert!(io::parse_sbn(&r.sbn_csv, "out").unwrap().n_units() == 25);
    let bad = LearnCliOptions {
        coding: "x".into(),
        layers: Some(vec![1, 8, 16]),
        ..Default::default()
    };
    assert!(matches!(
        cli::learn_text(&bad, None, &data, "bars.csv"),
        Err(SbnError::Option { .. })
    ));
}

#[test]
fn sbn_repro_entry_points_run_small() {
    let j = cli::repro(&ReproOptions {
        which: Reproduction::LawrenceFig24,
        seed: 1,
        size: 2,
    })
    .unwrap();
    assert!(j.contains("mean_relative_error"));
    let j = cli::repro(&ReproOptions {
        which: Reproduction::LkTable1,
        seed: 1,
        size: 2,
    })
    .unwrap();
    assert_eq!(j.matches("\"eta\"").count(), 16);
    assert!(Reproduction::parse("nope").is_err());
}

#[test]
fn sbn_shipped_data_files_match_their_generators_and_run_through_loglik() {
    let net = include_str!("../../data/sbn/saul_246_seed0.csv");
    let bars = include_str!("../../data/sbn/bars_4x4.csv");
    let (sbn, _) = gen::saul_246(1.0, 1.0, 0).unwrap();
    assert_eq!(io::parse_sbn(net, "saul_246_seed0.csv").unwrap(), sbn);
    assert_eq!(
        io::parse_data(bars, "bars_4x4.csv").unwrap(),
        occam_binary::sbn::repro::bars_dataset()
    );
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data/sbn/");
    let r = cli::loglik(&LoglikOptions {
        sbn_path: format!("{dir}saul_246_seed0.csv").into(),
        data_path: format!("{dir}saul_246_bottom_off.csv").into(),
        methods: vec!["exact".into(), "mf".into(), "chain".into(), "third".into()],
        seed: 0,
    })
    .unwrap();
    let v: Vec<f64> = r.rows[0].results.iter().map(|a| a.value).collect();
    assert!(
        v[1] <= v[2] + 1e-12 && v[2] <= v[0] && v[1] <= v[3] && v[3] <= v[0],
        "{v:?}"
    );
}
