//! Safe by default: no token or a wrong one is refused on every route, data outside the model's
//! and data's folders is refused, and a non-local address needs `expose`.

use std::net::{IpAddr, Ipv4Addr};

use serde_json::json;

use crate::common::*;

#[test]
fn every_route_needs_the_token() {
    let v = start("vibes_tutorial/mixture.occam", &[]);
    let wrong = "ffffffffffffffffffffffffffffffff";
    for (method, path) in [
        ("GET", "/"),
        ("GET", "/api/status"),
        ("GET", "/api/graph"),
        ("GET", "/api/trace"),
        ("GET", "/api/posterior/mu"),
        ("POST", "/api/check"),
        ("POST", "/api/fit"),
        ("GET", "/no/such/page"),
    ] {
        let body = Some(r#"{"source": "plate N = 3"}"#);
        let (none, _) = request(v.addr, method, path, body);
        assert_eq!(none, 403, "{method} {path} without a token");
        let (bad, _) = request(v.addr, method, &format!("{path}?token={wrong}"), body);
        assert_eq!(bad, 403, "{method} {path} with a wrong token");
        let (short, _) = request(
            v.addr,
            method,
            &format!("{path}?token={}", &TOKEN[..31]),
            body,
        );
        assert_eq!(short, 403, "{method} {path} with a prefix of the token");
    }
    let (ok, page) = request(v.addr, "GET", &format!("/?token={TOKEN}"), None);
    assert_eq!(ok, 200);
    assert!(page.contains("<svg id=\"graph\"") && !page.contains("/*SCRIPT*/"));
}

#[test]
fn data_outside_the_models_folder_is_refused() {
    let v = start("vibes_tutorial/mixture.occam", &[]);
    let source = std::fs::read_to_string(examples().join("vibes_tutorial/mixture.occam")).unwrap();
    let outside = examples().join("../Cargo.toml").canonicalize().unwrap();
    for file in [
        "../../Cargo.toml".to_string(),
        outside.display().to_string(),
        "/etc/hostname".to_string(),
    ] {
        for path in ["/api/check", "/api/fit"] {
            let (code, r) = post_json(
                v.addr,
                path,
                &json!({"source": source, "data": [format!("x={file}")]}),
            );
            assert_eq!(code, 403, "{path} with x={file}: {r}");
            assert!(r["error"].as_str().unwrap().contains("refused"), "{r}");
        }
    }
    // Inside the folder (relative to the working directory, as the command line's): accepted.
    let (code, r) = post_json(
        v.addr,
        "/api/check",
        &json!({"source": source, "data": ["x=../../examples/vibes_tutorial/x.csv"]}),
    );
    assert_eq!(code, 200, "{r}");
    assert_eq!(r["ok"], true, "{r}");
}

/// The page's relative data paths resolve as the command line's `--data` do: against the
/// working directory the view started in (cargo runs the tests in the crate's folder). So the
/// page can send back the arguments the view started with, and a path relative to the model's
/// folder is not found.
#[test]
fn the_pages_relative_paths_resolve_like_the_command_lines() {
    let given = "x=../../examples/vibes_tutorial/x.csv".to_string();
    let v = start("vibes_tutorial/mixture.occam", std::slice::from_ref(&given));
    let status = wait_done(v.addr);
    assert_eq!(status["data"], json!([given]));
    let source = status["source"].as_str().unwrap().to_string();
    let (code, r) = post_json(
        v.addr,
        "/api/fit",
        &json!({"source": source, "data": status["data"]}),
    );
    assert_eq!(code, 200, "{r}");
    assert_eq!(r["ok"], true, "{r}");
    let again = wait_done(v.addr);
    assert_eq!(again["bound"], status["bound"]);
    // Relative to the model's folder, the same file is another path here: not found.
    let (code, r) = post_json(
        v.addr,
        "/api/check",
        &json!({"source": source, "data": ["x=x.csv"]}),
    );
    assert_eq!(code, 400, "{r}");
    assert!(r["error"].as_str().unwrap().contains("x.csv"), "{r}");
    // And the folder rule holds for relative paths too: the workspace's Cargo.toml is refused.
    let (code, r) = post_json(
        v.addr,
        "/api/check",
        &json!({"source": source, "data": ["x=../../Cargo.toml"]}),
    );
    assert_eq!(code, 403, "{r}");
}

#[test]
fn a_non_local_address_needs_expose() {
    let opts = occam_view::Options {
        bind: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        ..Default::default()
    };
    let e = opts.address().unwrap_err().to_string();
    assert!(e.contains("--expose") && e.contains("0.0.0.0"), "{e}");
    let exposed = occam_view::Options {
        expose: true,
        ..opts
    };
    assert!(exposed.address().is_ok());
    assert!(occam_view::Options::default().address().is_ok());
}
