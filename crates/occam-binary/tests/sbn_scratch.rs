use occam_binary::sbn::repro::*;
#[test]
#[ignore]
fn scratch() {
    for (a, b) in [(1.0, 1.0), (1.0, 0.5), (1.0, 2.0)] {
        let t = std::time::Instant::now();
        let r = lk_table_cell(&LkTableOptions { a, b, networks: 40, seed: 0 }).unwrap();
        println!("{:?} {:?}", r, t.elapsed());
    }
}
