//! The CSV readers: examples of every rule, and the direct reader against the `csv` crate's on
//! random texts.

use proptest::prelude::*;

use super::*;

#[test]
fn csv_header_names_are_unique_and_a_byte_order_mark_is_skipped() {
    let e = parse_csv("x", "x.csv", "a,b,a\n1,2,3\n")
        .err()
        .unwrap()
        .to_string();
    assert_eq!(
        e,
        "x.csv:1:3: column name `a` is used twice (columns 1 and 3)"
    );
    let t = parse_csv("x", "x.csv", "\u{feff}a,b\n1,2\n").unwrap();
    assert_eq!(t.header.unwrap(), vec!["a".to_string(), "b".to_string()]);
}

#[test]
fn csv_with_missing_cells() {
    let t = parse_csv("x", "x.csv", "a,b\n1,2\n,NA\nnan,4.5\n").unwrap();
    assert_eq!((t.rows, t.cols), (3, 2));
    assert_eq!(t.present, vec![true, true, false, false, false, true]);
    assert_eq!(t.values[5], 4.5);
}

#[test]
fn csv_errors_name_line_and_column() {
    let e = parse_csv("x", "x.csv", "a,b\n1,2\n3,abc\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "x.csv:3:2: column `b`: `abc` is not a number"
    );
    let e = parse_csv("x", "x.csv", "a,b\n1,inf\n").unwrap_err();
    assert!(e.to_string().starts_with("x.csv:2:2:"), "{e}");
    let e = parse_csv("x", "x.csv", "a,b\n1,2\n3\n").unwrap_err();
    assert!(e.to_string().starts_with("x.csv:3:"), "{e}");
    let e = parse_csv("x", "x.csv", "1,2\n3,4\n").unwrap_err();
    assert!(e.to_string().starts_with("x.csv:1:1:"), "{e}");
}

/// Which texts take the direct reader.
#[test]
fn plain_texts() {
    assert!(plain(b"a,b\n1,2\n"));
    assert!(plain(b"a,b\r\n1,2\r\n"));
    assert!(!plain(b"a,b\r1,2\r"));
    assert!(!plain(b"a,b\n\"1\",2\n"));
    assert!(!plain("a,b\n1,\u{a0}2\n".as_bytes()));
}

/// A refused cell in a late block is placed at its line, past skipped lines of earlier blocks.
#[test]
fn errors_in_late_blocks_name_their_line() {
    let mut text = String::from("# made by hand\nx,y\n");
    for i in 0..500 {
        text += &format!("{i},{}.25\n", i % 7);
        if i % 50 == 0 {
            text += "\n# a comment\n";
        }
    }
    text += "1,zz\n";
    let lines = text.matches('\n').count();
    for block in [1, 7, 64, 1 << 20] {
        let e = direct("x.csv", &text, block, &|_| Ok(Vec::new()))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            format!("x.csv:{lines}:2: column `y`: `zz` is not a number")
        );
    }
}

/// One cell of a random text: numbers written in many ways, missing values, blanks around
/// them, and text that is not a number.
fn cell() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => any::<f64>().prop_map(|v| format!("{v}")),
        3 => (-1e6f64..1e6).prop_map(|v| format!("{v:.17e}")),
        3 => (-1e3f64..1e3).prop_map(|v| format!("{v:.3}")),
        1 => prop::sample::select(vec![
            "", "NA", "na", "NaN", "nan", "inf", "-Infinity", "1e400", "+3", ".5", "5.", "-0",
            "0x10", "abc", "1,5", "#", "1e", "--1",
        ])
        .prop_map(String::from),
        1 => (
            prop::sample::select(vec!["", " ", "\t", " \t "]),
            -9i32..9,
            prop::sample::select(vec!["", " ", "\t\x0b"]),
        )
            .prop_map(|(a, v, b)| format!("{a}{v}{b}")),
    ]
}

/// A random text: optional skipped lines before the header, rows of mostly the right length,
/// empty and comment lines among them, `\n` or `\r\n` line ends, with or without a final one.
fn text() -> impl Strategy<Value = String> {
    let row = prop_oneof![
        12 => prop::collection::vec(cell(), 2..=2),
        1 => prop::collection::vec(cell(), 0..5),
        1 => Just(vec!["#comment".to_string()]),
    ];
    (
        prop::sample::select(vec!["", "\n", "# c\n", " \n"]),
        prop::sample::select(vec!["a,b", " a , b", "a,1", "a", "a,a", ""]),
        prop::collection::vec(row, 0..30),
        prop::bool::ANY,
        prop::bool::ANY,
    )
        .prop_map(|(before, header, rows, crlf, last)| {
            let end = if crlf { "\r\n" } else { "\n" };
            let mut t = format!("{before}{header}");
            for r in rows {
                t += end;
                t += &r.join(",");
            }
            if last {
                t += end;
            }
            t
        })
}

/// A reading's table with its values as bits, or its error's text.
type Outcome =
    std::result::Result<(Vec<String>, usize, Vec<u64>, Vec<bool>, Vec<(usize, usize)>), String>;

/// The parsed table with its values as bits (so that −0 and 0 differ), or the error's text.
fn outcome(r: Result<Parsed>) -> Outcome {
    r.map(|(h, n, v, p, s)| (h, n, v.iter().map(|x| x.to_bits()).collect(), p, s))
        .map_err(|e| e.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// The direct reader gives the `csv` crate's table or error, bit for bit, in any blocks, with
    /// the same line numbers (the file's: the crate's own lag behind after skipped lines, and
    /// `Lines` recounts them) and the same line shifts. A last line that is a comment without a
    /// line end is a one-field row to the `csv` crate, a comment to the direct reader: such texts
    /// are left out.
    #[test]
    fn direct_reading_equals_the_csv_crate(t in text(), block in 1usize..200) {
        prop_assume!(plain(t.as_bytes()));
        prop_assume!(!t.rsplit('\n').next().unwrap_or("").starts_with('#'));
        prop_assert_eq!(outcome(direct("x.csv", &t, block, &|_| Ok(Vec::new()))), outcome(general("x.csv", &t, &|_| Ok(Vec::new()))));
    }

    /// Every cell's position is its place in the file: the line of its row (after skipped
    /// lines, in any blocks) and its column, through either reader.
    #[test]
    fn positions_are_the_files_lines(t in text(), block in 1usize..200) {
        prop_assume!(!t.rsplit('\n').next().unwrap_or("").starts_with('#'));
        let readings = [direct("x.csv", &t, block, &|_| Ok(Vec::new())), general("x.csv", &t, &|_| Ok(Vec::new()))];
        for (h, rows, values, present, line_shifts) in readings.into_iter().flatten() {
            let table = Table {
                name: "x".into(),
                file: "x.csv".into(),
                rows,
                cols: h.len(),
                values: values.into(),
                present,
                header: Some(h),
                csv: true,
                line_shifts,
                source_columns: None,
                source_rows: None,
            };
            // The file's data lines, in order: neither empty nor a comment, after the header.
            let lines: Vec<(usize, &str)> = t
                .split('\n')
                .map(|l| l.strip_suffix('\r').unwrap_or(l))
                .enumerate()
                .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
                .skip(1)
                .collect();
            prop_assert_eq!(lines.len(), rows);
            for i in 0..rows * table.cols {
                let (line, column) = table.position(i);
                let (want, text) = lines[i / table.cols];
                prop_assert_eq!((line, column), (want + 1, i % table.cols + 1));
                let cell = text.split(',').nth(column - 1).unwrap().trim();
                if table.present[i] {
                    prop_assert_eq!(cell.parse::<f64>().ok(), Some(table.values[i]));
                }
            }
        }
    }
}

/// The general reader's lines are the file's, past comment and empty lines, lone `\r` line ends
/// and line ends inside quotes (the `csv` crate's own positions lag behind there).
#[test]
fn general_reading_counts_the_files_lines() {
    let text = "\"é\nz\",b\r0,0\r\r# note\n3,x\n";
    assert!(!plain(text.as_bytes()));
    let e = parse_csv("x", "x.csv", text).unwrap_err().to_string();
    assert_eq!(e, "x.csv:6:2: column `b`: `x` is not a number");
    let t = parse_csv("x", "x.csv", &text.replace('x', "5")).unwrap();
    // The header takes lines 1 and 2; rows 0 and 1 are on lines 3 and 6.
    assert_eq!(t.line_shifts, vec![(0, 1), (1, 3)]);
    assert_eq!((t.position(1), t.position(2)), ((3, 2), (6, 1)));
    let e = parse_csv("x", "x.csv", "é,b\n# c\n\n1,2,3\n")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("x.csv:4:"), "{e}");
}

#[test]
fn a_numpy_scalar_repr_is_named_with_the_fix() {
    let e = parse_csv("x", "x.csv", "a,b\n1,np.float64(1.5)\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "x.csv:2:2: column `b`: `np.float64(1.5)` is not a number: it is how NumPy prints a \
         scalar (its repr); write the number itself, `1.5` (convert with float(v) or v.item() \
         before writing, or write the array with numpy.savetxt)"
    );
    let e = parse_csv("x", "x.csv", "a,b\n1,int64(3)\n").unwrap_err();
    assert!(
        e.to_string().contains("write the number itself, `3`"),
        "{e}"
    );
    // Other text keeps the short message.
    for cell in ["abc", "f(1.5)", "np.float64(x)", "float64(1.5"] {
        let e = parse_csv("x", "x.csv", &format!("a,b\n1,{cell}\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("x.csv:2:2: column `b`: `{cell}` is not a number")
        );
    }
}
