use std::path::PathBuf;

use super::*;
use crate::data::{parse_csv, read_selected};

fn faithful() -> Table {
    let text =
        "rownames,eruptions,waiting\n1,3.6,79\n# a comment\n2,1.8,54\n3,3.333,74\n4,2.283,62\n";
    parse_csv("x", "f.csv", text).unwrap()
}

fn cols(c: &[&str]) -> Selection {
    Selection {
        columns: Some(c.iter().map(|s| s.to_string()).collect()),
        ..Selection::default()
    }
}

fn rows(spec: &str) -> Selection {
    Selection {
        rows: Some(parse_rows(spec, "x").unwrap()),
        ..Selection::default()
    }
}

#[test]
fn columns_by_name_position_and_range_count_from_zero() {
    let t = faithful();
    let by_name = t.select(&cols(&["eruptions", "waiting"])).unwrap();
    assert_eq!((by_name.rows, by_name.cols), (4, 2));
    assert_eq!(
        by_name.values,
        [3.6, 79.0, 1.8, 54.0, 3.333, 74.0, 2.283, 62.0]
    );
    assert_eq!(by_name.header.as_deref().unwrap(), ["eruptions", "waiting"]);
    for same in [&["1", "2"][..], &["1..3"], &["1.."], &["1..", "..0"][..1]] {
        assert_eq!(
            t.select(&cols(same)).unwrap().values,
            by_name.values,
            "{same:?}"
        );
    }
    let first = t.select(&cols(&["..1"])).unwrap();
    assert_eq!(first.values, [1.0, 2.0, 3.0, 4.0]);
    // Order as written, repeats allowed (as pandas' `df.iloc[:, [2, 1]]`).
    let swapped = t.select(&cols(&["2", "eruptions"])).unwrap();
    assert_eq!(&swapped.values[..2], &[79.0, 3.6]);
}

#[test]
fn unknown_columns_name_the_file_the_argument_and_the_nearest_name() {
    let t = faithful();
    let sel = Selection {
        arg: "--data `x=f.csv:wait`".into(),
        ..cols(&["wait"])
    };
    let e = t.select(&sel).unwrap_err().to_string();
    assert_eq!(
        e,
        "f.csv: no column `wait` in --data `x=f.csv:wait`; did you mean `waiting`? (columns: rownames, eruptions, waiting; or positions 0 to 2)"
    );
    let e = t.select(&cols(&["Eruption"])).unwrap_err().to_string();
    assert!(e.contains("did you mean `eruptions`?"), "{e}");
    let e = t.select(&cols(&["3"])).unwrap_err().to_string();
    assert!(
        e.contains("column 3 is past the last (counted from 0)") && e.contains("positions 0 to 2"),
        "{e}"
    );
    for bad in ["2..2", "1..4", "x..2"] {
        let e = t.select(&cols(&[bad])).unwrap_err().to_string();
        assert!(e.starts_with("f.csv: "), "{bad}: {e}");
    }
    // The 1-based `cut -f` ranges of earlier versions are refused, never read shifted by one.
    let e = t.select(&cols(&["2-3"])).unwrap_err().to_string();
    assert!(e.contains("a range of positions is written A..B"), "{e}");
    // A table without a header (an array) says so.
    let mut a = faithful();
    a.header = None;
    let e = a.select(&cols(&["waiting"])).unwrap_err().to_string();
    assert!(e.contains("(no column names; positions 0 to 2)"), "{e}");
}

#[test]
fn rows_count_from_zero_with_the_end_excluded() {
    let t = faithful();
    let head = t.select(&rows("..2")).unwrap();
    let tail = t.select(&rows("2..")).unwrap();
    assert_eq!(head.values, t.values[..6]);
    assert_eq!(tail.values, t.values[6..]);
    assert_eq!(t.select(&rows("1")).unwrap().values, [2.0, 1.8, 54.0]);
    assert_eq!(t.select(&rows("..50%")).unwrap().values, head.values);
    // Messages name the file's own line (past the comment) and column.
    let one = t.select(&Selection {
        rows: Some(parse_rows("1..3", "x").unwrap()),
        ..cols(&["waiting"])
    });
    let one = one.unwrap();
    assert_eq!(one.values, [54.0, 74.0]);
    assert_eq!(one.position(0), (4, 3));
    assert_eq!(one.position(1), (5, 3));
    let e = t.select(&rows("3..9")).unwrap_err().to_string();
    assert!(e.contains("the file has 4 data rows (0..4)"), "{e}");
    let e = t.select(&rows("4..")).unwrap_err().to_string();
    assert!(e.contains("select no rows"), "{e}");
}

#[test]
fn a_seeded_shuffle_splits_rows_into_disjoint_complementary_parts() {
    let n = 101;
    let text: String = std::iter::once("v\n".to_string())
        .chain((0..n).map(|r| format!("{r}\n")))
        .collect();
    let t = parse_csv("x", "v.csv", &text).unwrap();
    let train = t.select(&rows("..80%,shuffle=7")).unwrap();
    let test = t.select(&rows("80%..,shuffle=7")).unwrap();
    // ⌊101 · 80 / 100⌋ = 80 rows to train on, 21 to test.
    assert_eq!((train.rows, test.rows), (80, 21));
    let mut all: Vec<f64> = train.values.iter().chain(&test.values).copied().collect();
    all.sort_by(f64::total_cmp);
    assert_eq!(all, (0..n).map(|r| r as f64).collect::<Vec<_>>());
    // The file's order within each part; random, yet the same for the same seed.
    assert!(train.values.windows(2).all(|w| w[0] < w[1]));
    assert_ne!(train.values, t.values[..80]);
    assert_eq!(t.select(&rows("..80%,shuffle=7")).unwrap(), train);
    assert_ne!(t.select(&rows("..80%,shuffle=8")).unwrap(), train);
    // Each value is on line value + 2 of the file.
    for i in 0..test.rows {
        assert_eq!(test.position(i).0, test.values[i] as usize + 2);
    }
}

#[test]
fn specs_split_into_file_columns_and_rows() {
    let (f, s) = split("d/f.csv:a,b@2..", "x=d/f.csv:a,b@2..").unwrap();
    assert_eq!(f, PathBuf::from("d/f.csv"));
    assert_eq!(s.columns, Some(vec!["a".to_string(), "b".to_string()]));
    assert_eq!(
        s.rows,
        Some(RowSpec {
            start: Some(Bound::Row(2)),
            end: None,
            shuffle: None
        })
    );
    let (f, s) = split("f.csv@..50", "x=f.csv@..50").unwrap();
    assert_eq!((f, s.columns), (PathBuf::from("f.csv"), None));
    // A Windows path keeps its drive's and directories' colons.
    let (f, s) = split(r"C:\data\f.csv", "x").unwrap();
    assert_eq!((f, s.is_all()), (PathBuf::from(r"C:\data\f.csv"), true));
    let (f, s) = split(r"C:\data\f.csv:a@..5", "x").unwrap();
    assert_eq!(f, PathBuf::from(r"C:\data\f.csv"));
    assert_eq!(s.columns, Some(vec!["a".to_string()]));
    let (f, s) = split("C:f.csv", "x").unwrap();
    assert_eq!((f, s.is_all()), (PathBuf::from("C:f.csv"), true));
    // A missing file whose name holds `@` is the missing file, not bad rows.
    let (f, _) = split("no@such.csv", "x").unwrap();
    assert_eq!(f, PathBuf::from("no@such.csv"));
}

#[test]
fn bad_rows_say_how_to_write_them() {
    for bad in [
        "1-200",
        "..x",
        "5..2x",
        "..120%",
        "50%",
        "..5,seed=1",
        "..5,shuffle=-1",
    ] {
        let e = parse_rows(bad, "x=f.csv@bad").unwrap_err().to_string();
        assert!(
            e.contains("write rows as A..B, counted from 0 with B excluded"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn files_whose_names_hold_a_colon_or_an_at_sign_read_whole_or_selected() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("a:b@c.csv");
    std::fs::write(&p, "u,v\n1,2\n3,4\n").unwrap();
    let whole = p.display().to_string();
    let (f, s) = split(&whole, "x").unwrap();
    assert_eq!((f.clone(), s.is_all()), (p.clone(), true));
    let (f, s) = split(&format!("{whole}:v@1.."), "x").unwrap();
    assert_eq!(f, p);
    let t = read_selected("x", &f, &s).unwrap();
    assert_eq!(t.values, [4.0]);
    // Bad rows after a file that exists are an error, not part of a name.
    let e = split(&format!("{whole}@1-2"), "x").unwrap_err().to_string();
    assert!(e.contains("ranges are written with `..`"), "{e}");
}

#[test]
fn an_npz_array_is_chosen_by_name_and_its_columns_by_position() {
    use std::io::Write;
    let npy = |rows: usize, cols: usize, values: &[f64]| {
        let mut header =
            format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend((header.len() as u16).to_le_bytes());
        b.extend(header.as_bytes());
        for v in values {
            b.extend(v.to_le_bytes());
        }
        b
    };
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("d.npz");
    let mut z = zip::ZipWriter::new(std::fs::File::create(&p).unwrap());
    let opts =
        zip::write::FileOptions::default().compression_method(zip::CompressionMethod::Stored);
    z.start_file("X.npy", opts).unwrap();
    z.write_all(&npy(3, 2, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
        .unwrap();
    z.start_file("y.npy", opts).unwrap();
    z.write_all(&npy(3, 1, &[7.0, 8.0, 9.0])).unwrap();
    z.finish().unwrap();
    let read = |spec: &str| {
        let (f, s) = split(&format!("{}{spec}", p.display()), spec).unwrap();
        read_selected("x", &f, &s)
    };
    assert_eq!(read(":X").unwrap().values, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(read(":X,1@1..").unwrap().values, [4.0, 6.0]);
    assert_eq!(read(":y").unwrap().values, [7.0, 8.0, 9.0]);
    // Without a name the array must be named like the data, or be the only one.
    let e = read(":1").unwrap_err().to_string();
    assert!(e.contains("no array named `x` (arrays: X, y)"), "{e}");
    // A row of an array is its 1-based row in messages.
    assert_eq!(read(":X,1@1..").unwrap().position(1), (3, 2));
}

#[test]
fn a_text_column_left_out_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("pima.csv");
    std::fs::write(&p, "rownames,glu,bmi,type\n1,86,30.2,No\n2,195,38.1,Yes\n").unwrap();
    let read = |spec: &str| {
        let (f, s) = split(&format!("{}{spec}", p.display()), spec).unwrap();
        read_selected("x", &f, &s)
    };
    let t = read(":glu,bmi").unwrap();
    assert_eq!(t.values, [86.0, 30.2, 195.0, 38.1]);
    assert_eq!(read(":1..3@1..").unwrap().values, [195.0, 38.1]);
    // Chosen, or the whole file, the text is an error at its cell.
    let e = read(":glu,type").unwrap_err().to_string();
    assert!(
        e.ends_with("pima.csv:2:4: column `type`: `No` is not a number"),
        "{e}"
    );
    let e = read("").unwrap_err().to_string();
    assert!(
        e.ends_with("pima.csv:2:4: column `type`: `No` is not a number"),
        "{e}"
    );
    // A quoted file takes the general reader: the same.
    std::fs::write(&p, "rownames,glu,bmi,type\n1,86,30.2,\"No\"\n").unwrap();
    assert_eq!(read(":glu,bmi").unwrap().values, [86.0, 30.2]);
}

#[test]
fn a_selection_describes_itself_in_its_own_syntax() {
    let t = faithful();
    assert_eq!(t.selection_text(), None);
    let both = t
        .select(&Selection {
            columns: Some(vec!["waiting".into()]),
            rows: Some(parse_rows("1..3", "x").unwrap()),
            ..Selection::default()
        })
        .unwrap();
    assert_eq!(
        both.selection_text().as_deref(),
        Some("columns waiting; rows 1..3")
    );
    let n = 40;
    let text = format!(
        "a\n{}",
        (0..n).map(|i| format!("{i}\n")).collect::<String>()
    );
    let long = parse_csv("x", "l.csv", &text).unwrap();
    let shuffled = long.select(&rows("..50%,shuffle=7")).unwrap();
    let s = shuffled.selection_text().unwrap();
    assert_eq!(
        s,
        "20 rows in 11 runs, from 1..2, 5..6, 7..8, 10..11, 12..15, 18..20, 21..26, 27..29, … (3 more)"
    );
}
