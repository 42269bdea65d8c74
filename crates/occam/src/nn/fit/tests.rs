use super::*;

fn quick() -> NetSpec {
    NetSpec {
        hidden: 3,
        restarts: 2,
        cycles: 2,
        iters_per_cycle: 60,
        ..NetSpec::default()
    }
}

/// `id,x,noise,y` with y = sin(2πx) and an unused id column.
fn sine_csv(n: usize) -> String {
    let mut s = String::from("id,x,y\n");
    for i in 0..n {
        let x = i as f64 / n as f64;
        let y = (2.0 * std::f64::consts::PI * x).sin();
        s.push_str(&format!("{i},{x},{y}\n"));
    }
    s
}

fn table(text: &str) -> Table {
    data::parse_csv("data", "d.csv", text).unwrap()
}

#[test]
fn fit_save_load_predict_gives_the_networks_own_predictions() {
    let dir = tempfile::tempdir().unwrap();
    let t = table(&sine_csv(24));
    let cols = Columns {
        target: Some("y".into()),
        inputs: Some(vec!["x".into()]),
        lags: None,
    };
    let saved = fit_table(&t, &cols, &quick()).unwrap();
    assert_eq!(saved.inputs, vec!["x"]);
    assert!(saved.net.train_rmse < 0.2, "{}", saved.net.train_rmse);
    let path = dir.path().join("net.json");
    saved.save(&path).unwrap();
    let back = SavedNetwork::load(&path).unwrap();
    assert_eq!(back, saved);
    // Prediction finds the input column by name, whatever the column order and extra columns.
    let q = table("y,other,x\n0,5,0.25\n0,5,0.75\n");
    let p = back.predict_table(&q).unwrap();
    assert_eq!(p, saved.net.predict(&[0.25, 0.75]).unwrap());
    assert!(
        (p.mean[0] - 1.0).abs() < 0.25 && (p.mean[1] + 1.0).abs() < 0.25,
        "{p:?}"
    );
    let csv = predictions_csv(&p);
    assert!(csv.starts_with("mean,sd_function,sd_total\n"), "{csv}");
    assert_eq!(csv.lines().count(), 3);
}

#[test]
fn columns_by_number_and_defaults() {
    // Default: the last column is the target, every other column an input.
    let t = table(&sine_csv(20));
    let a = fit_table(&t, &Columns::default(), &quick()).unwrap();
    assert_eq!((a.target.as_str(), a.inputs.len()), ("y", 2));
    // Positions count from 0, as in `--data x=FILE:COLUMNS`: 2 is `y`, 1 is `x`.
    let by_number = Columns {
        target: Some("2".into()),
        inputs: Some(vec!["1".into()]),
        lags: None,
    };
    let b = fit_table(&t, &by_number, &quick()).unwrap();
    assert_eq!(
        (b.target.as_str(), b.inputs.clone()),
        ("y", vec!["x".to_string()])
    );
    // A range of inputs; a position past the last column is a located error.
    let c = fit_table(
        &t,
        &Columns {
            inputs: Some(vec!["0..2".into()]),
            ..Columns::default()
        },
        &quick(),
    )
    .unwrap();
    assert_eq!(c.inputs, vec!["id", "x"]);
    let e = fit_table(
        &t,
        &Columns {
            target: Some("3".into()),
            ..Columns::default()
        },
        &quick(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("column 3 is past the last (counted from 0)"),
        "{e}"
    );
}

#[test]
fn a_time_series_network_predicts_one_step_ahead() {
    let mut s = String::from("year,value\n");
    for i in 0..60 {
        let v = 50.0 + 40.0 * (i as f64 * 0.6).sin();
        s.push_str(&format!("{},{v}\n", 1900 + i));
    }
    let t = table(&s);
    let cols = Columns {
        target: Some("value".into()),
        inputs: None,
        lags: Some(3),
    };
    let saved = fit_table(&t, &cols, &quick()).unwrap();
    assert_eq!(saved.net.inputs, 3);
    let p = saved.predict_table(&t).unwrap();
    assert_eq!(p.mean.len(), 57);
    // A noiseless sinusoid is linear in its last 2 values: the fit is close.
    assert!(saved.net.train_rmse < 4.0, "{}", saved.net.train_rmse);
    // The predictions name their rows: row 3 (the year 1903) is the first, predicted from the
    // three values before it.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("series.csv");
    std::fs::write(&path, &s).unwrap();
    let rows = saved.predict_rows(&path, Some("year")).unwrap();
    assert_eq!(rows.predictions, p);
    assert_eq!(rows.rows, (3..60).collect::<Vec<_>>());
    let years: Vec<f64> = (1903..1960).map(f64::from).collect();
    assert_eq!(rows.time, Some(("year".to_string(), years)));
    let csv = predicted_rows_csv(&rows);
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("row,year,mean,sd_function,sd_total"));
    assert!(lines.next().unwrap().starts_with("3,1903,"), "{csv}");
    assert_eq!(csv.lines().count(), 58);
    // By position too; an unknown column is a located error.
    assert_eq!(
        saved.predict_rows(&path, Some("0")).unwrap().time,
        rows.time
    );
    // Chosen rows of the file: the rows named are the file's own (row 43 is 1943, the first
    // predicted from rows 40, 41 and 42).
    let held_out = crate::data::read_spec("data", &format!("{}@40..", path.display())).unwrap();
    let later = saved.predict_rows_table(&held_out, Some("year")).unwrap();
    assert_eq!(later.rows, (43..60).collect::<Vec<_>>());
    assert_eq!(later.time.as_ref().unwrap().1[0], 1943.0);
    assert_eq!(later.predictions.mean[..], p.mean[40..]);
    let e = saved.predict_rows(&path, Some("when")).unwrap_err();
    assert!(e.to_string().contains("no column `when`"), "{e}");
}

#[test]
fn bad_columns_cells_and_files_are_located_errors() {
    let t = table(&sine_csv(10));
    let e = fit_table(
        &t,
        &Columns {
            target: Some("z".into()),
            ..Columns::default()
        },
        &quick(),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("no column `z` (columns: id, x, y; or positions 0 to 2)"),
        "{e}"
    );
    let t = table("x,y\n0,1\n1,\n2,3\n");
    let e = fit_table(&t, &Columns::default(), &quick()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "d.csv:3:2: column `y`: missing value (networks need every cell)"
    );
    let e = fit_table(&table("y\n1\n2\n"), &Columns::default(), &quick()).unwrap_err();
    assert!(e.to_string().contains("no input columns"), "{e}");
    let bad = NetSpec {
        hidden: 0,
        ..quick()
    };
    let e = fit_table(&table(&sine_csv(10)), &Columns::default(), &bad).unwrap_err();
    assert!(e.is_user_error() && e.to_string().contains("hidden"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.json");
    std::fs::write(&p, "{\"format\": 3}").unwrap();
    let e = SavedNetwork::load(&p).unwrap_err();
    assert!(e.to_string().contains("not a saved network"), "{e}");
    std::fs::write(&p, "{\"hiden\": 3}").unwrap();
    let e = read_spec(&p).unwrap_err();
    assert!(e.to_string().contains("hiden"), "{e}");
}
