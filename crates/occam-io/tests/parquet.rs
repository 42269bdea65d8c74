//! Parquet data files (`occam_io::data::{read_parquet, ParquetChunks, write_parquet}`): a table
//! written in several row groups reads back exactly, with its missing cells and column names;
//! blocks of rows that cross row groups are the whole file's rows; a text column, a non-finite
//! cell and a file that is not Parquet are errors that name the file (and the cell).

use std::path::Path;
use std::sync::Arc;

use occam_io::data::{read, read_parquet, ParquetChunks, Table};
use parquet::basic::{Repetition, Type as Physical};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;

fn table(rows: usize, cols: usize) -> Table {
    let values: Vec<f64> = (0..rows * cols).map(|i| i as f64 * 0.37 - 5.0).collect();
    let mut present = vec![true; values.len()];
    present[4] = false;
    present[cols * (rows - 1) + 1] = false;
    let values = values
        .iter()
        .zip(&present)
        .map(|(&v, &p)| if p { v } else { 0.0 })
        .collect();
    Table {
        name: "x".into(),
        file: "x".into(),
        rows,
        cols,
        values,
        present,
        header: Some((0..cols).map(|c| format!("col{c}")).collect()),
        csv: false,
        line_shifts: Vec::new(),
        source_columns: None,
        source_rows: None,
    }
}

#[test]
fn a_table_written_in_row_groups_reads_back_exactly_and_by_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.parquet");
    let t = table(23, 3);
    occam_io::data::write_parquet(&path, &t, 5).unwrap();
    let back = read_parquet("x", &path).unwrap();
    assert_eq!(back.rows, 23);
    assert_eq!(back.cols, 3);
    assert_eq!(back.values, t.values);
    assert_eq!(back.present, t.present);
    assert_eq!(back.header, t.header);
    // `--data` reads by extension, and chooses columns by name.
    assert_eq!(read("x", &path).unwrap().values, t.values);
    let chunks = ParquetChunks::open(&path).unwrap();
    for (from, to) in [(0, 23), (3, 12), (5, 10), (22, 23), (7, 7)] {
        let b = chunks.read("x", from, to).unwrap();
        assert_eq!(b.values, t.values[from * 3..to * 3], "rows {from}..{to}");
        assert_eq!(b.present, t.present[from * 3..to * 3], "rows {from}..{to}");
    }
    let e = chunks.read("x", 20, 24).unwrap_err().to_string();
    assert!(
        e.contains("x.parquet") && e.contains("rows 20..24 of 23"),
        "{e}"
    );
}

/// A file with a DOUBLE column `a` (holding `a`) and a text column `name`.
fn with_text(path: &Path, a: &[f64]) {
    let fields = vec![
        Arc::new(
            Type::primitive_type_builder("a", Physical::DOUBLE)
                .with_repetition(Repetition::REQUIRED)
                .build()
                .unwrap(),
        ),
        Arc::new(
            Type::primitive_type_builder("name", Physical::BYTE_ARRAY)
                .with_repetition(Repetition::REQUIRED)
                .build()
                .unwrap(),
        ),
    ];
    let schema = Type::group_type_builder("t")
        .with_fields(fields)
        .build()
        .unwrap();
    let file = std::fs::File::create(path).unwrap();
    let props = Arc::new(WriterProperties::builder().build());
    let mut w = SerializedFileWriter::new(file, Arc::new(schema), props).unwrap();
    let mut g = w.next_row_group().unwrap();
    let mut col = g.next_column().unwrap().unwrap();
    col.typed::<DoubleType>()
        .write_batch(a, None, None)
        .unwrap();
    col.close().unwrap();
    let mut col = g.next_column().unwrap().unwrap();
    let names: Vec<ByteArray> = a.iter().map(|_| ByteArray::from("n")).collect();
    col.typed::<ByteArrayType>()
        .write_batch(&names, None, None)
        .unwrap();
    col.close().unwrap();
    g.close().unwrap();
    w.close().unwrap();
}

#[test]
fn bad_files_and_columns_are_located_errors() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("t.parquet");
    with_text(&text, &[1.0, 2.0, 3.0]);
    let e = read_parquet("x", &text).unwrap_err().to_string();
    assert!(
        e.contains("t.parquet") && e.contains("column 2 `name`") && e.contains("BYTE_ARRAY"),
        "{e}"
    );
    let inf = dir.path().join("inf.parquet");
    let mut t = table(4, 2);
    t.values[5] = f64::INFINITY;
    occam_io::data::write_parquet(&inf, &t, 10).unwrap();
    let e = read_parquet("x", &inf).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{}:3:2: column `col1`: inf", inf.display())),
        "{e}"
    );
    let junk = dir.path().join("junk.parquet");
    std::fs::write(&junk, "a,b\n1,2\n").unwrap();
    let e = read_parquet("x", &junk).unwrap_err().to_string();
    assert!(
        e.contains("junk.parquet") && e.contains("not a Parquet file"),
        "{e}"
    );
    let e = read_parquet("x", &dir.path().join("none.parquet"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("none.parquet"), "{e}");
}

#[test]
fn a_text_column_left_out_is_not_read_and_asked_for_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.parquet");
    with_text(&path, &[1.0, 2.0, 3.0]);
    let spec = format!("{}:a", path.display());
    let (p, sel) = occam_io::data::split_selection(&spec, "--data `x=t.parquet:a`").unwrap();
    let t = occam_io::data::read_selected("x", &p, &sel).unwrap();
    assert_eq!((t.rows, t.cols), (3, 1));
    assert_eq!(t.values, [1.0, 2.0, 3.0]);
    assert_eq!(t.header, Some(vec!["a".to_string()]));
    // By block: the column left out is missing, never decoded.
    let f = ParquetChunks::open(&path).unwrap();
    let keep = f.keep(&["a".to_string()], "").unwrap();
    assert_eq!(keep, [true, false]);
    let b = f.read_columns("x", 1, 3, Some(&keep)).unwrap();
    assert_eq!((b.rows, b.cols), (2, 2));
    assert_eq!((b.values[0], b.values[2]), (2.0, 3.0));
    assert_eq!(b.present, [true, false, true, false]);
    // Asked for by name or position, or with every column: the error names it.
    for wanted in ["name", "1", "0..2"] {
        let spec = format!("{}:{wanted}", path.display());
        let (p, sel) = occam_io::data::split_selection(&spec, "").unwrap();
        let e = occam_io::data::read_selected("x", &p, &sel)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("t.parquet: column 2 `name` holds BYTE_ARRAY values, not numbers")
                && e.contains("leave it out"),
            "{wanted}: {e}"
        );
    }
    let e = read("x", &path).unwrap_err().to_string();
    assert!(e.contains("`FILE:COLUMNS`"), "{e}");
}
