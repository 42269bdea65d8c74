//! `cargo run -p occam-lang --example check -- FILE [NAME=ROWSxCOLS ...]`:
//! compiles a model and prints its diagnostics or its IR as JSON.
//! Set `OCCAM_PLAIN=1` for plain-text diagnostics.

use occam_lang::{compile, DataShapes};

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: check FILE [NAME=ROWSxCOLS ...]");
        std::process::exit(2);
    };
    let source = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let mut data = DataShapes::new();
    for a in args {
        let parsed = a.split_once('=').and_then(|(n, s)| {
            let (r, c) = s.split_once('x')?;
            Some((n.to_string(), r.parse().ok()?, c.parse().ok()?))
        });
        match parsed {
            Some((n, r, c)) => data.insert(&n, r, c),
            None => {
                eprintln!("bad data shape `{a}`, expected NAME=ROWSxCOLS");
                std::process::exit(2);
            }
        }
    }
    match compile(&source, &path, &data) {
        Ok(model) => match serde_json::to_string_pretty(&model) {
            Ok(json) => println!("{json}"),
            Err(e) => eprintln!("{e}"),
        },
        Err(d) => {
            if std::env::var_os("OCCAM_PLAIN").is_some() {
                eprint!("{}", d.render_plain());
            } else {
                eprint!("{}", d.render_fancy(true));
            }
            std::process::exit(1);
        }
    }
}
