//! `occam view` as a process: it refuses a non-local address without --expose before binding,
//! and otherwise prints a loopback URL with a 32-digit token and answers on it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

use crate::common::*;

#[test]
fn a_non_local_bind_without_expose_is_refused() {
    let out = occam()
        .args([
            "view",
            "examples/vibes_tutorial/mixture.occam",
            "--bind",
            "0.0.0.0",
        ])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--bind 0.0.0.0") && err.contains("--expose"),
        "{err}"
    );
}

/// Kills the server when the test ends, passed or not.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn view_prints_a_local_url_with_a_token_and_serves_it() {
    let child = Command::new(assert_cmd::cargo::cargo_bin("occam"))
        .current_dir(root())
        .args(["view", "examples/vibes_tutorial/mixture.occam"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim().rsplit(' ').next().unwrap().to_string();
    let rest = url.strip_prefix("http://127.0.0.1:").expect(&line);
    let (port, token) = rest.split_once("/?token=").expect(&line);
    assert_eq!(token.len(), 32, "{line}");
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()), "{line}");
    let get = |path: &str| {
        let mut s = TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        text
    };
    assert!(get("/").starts_with("HTTP/1.1 403"));
    let page = get(&format!("/?token={token}"));
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("occam view"));
}

#[test]
fn fit_view_serves_the_running_fit_prints_its_summary_and_keeps_serving() {
    let want = json(&succeeded(occam().args([
        "fit",
        "examples/vibes_tutorial/mixture.occam",
        "--json",
    ])));
    let child = Command::new(assert_cmd::cargo::cargo_bin("occam"))
        .current_dir(root())
        .args(["fit", "examples/vibes_tutorial/mixture.occam", "--view"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Killed(child);
    let mut out = BufReader::new(child.0.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("occam fit --view: open ")
        .expect(&line);
    let rest = url.strip_prefix("http://127.0.0.1:").expect(&line);
    let (port, token) = rest.split_once("/?token=").expect(&line);
    // The summary follows when the fit ends: fit's own, with its bound.
    let mut summary = String::new();
    while !summary.contains("iterations") {
        let mut l = String::new();
        assert!(out.read_line(&mut l).unwrap() > 0, "no summary: {summary}");
        summary.push_str(&l);
    }
    let bound = want["bound"].as_f64().unwrap();
    assert!(
        summary.contains(&format!("lower bound L = {bound:.6} after")),
        "{summary}"
    );
    let get = |path: &str| {
        let mut s = TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        text
    };
    // After the summary, the view still answers, with the same fit.
    let status = get(&format!("/api/status?token={token}"));
    let body: serde_json::Value =
        serde_json::from_str(status.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(body["state"], "done", "{body}");
    assert_eq!(body["bound"].as_f64().unwrap(), bound);
    let mu = get(&format!("/api/posterior/mu?token={token}"));
    let mu: serde_json::Value = serde_json::from_str(mu.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(mu["variable"], want["variables"]["mu"]);
    assert!(get("/api/status").starts_with("HTTP/1.1 403"));
}

/// POST `path` with a JSON body to a server on `addr`; the reply's JSON.
fn post(addr: std::net::SocketAddr, path: &str, body: &serde_json::Value) -> serde_json::Value {
    let mut s = TcpStream::connect(addr).unwrap();
    let body = body.to_string();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap();
    let rest = if head.to_ascii_lowercase().contains("chunked") {
        // One chunk, then the empty one.
        let (_, after) = rest.split_once("\r\n").unwrap();
        after.rsplit_once("\r\n0\r\n").unwrap().0.to_string()
    } else {
        rest.to_string()
    };
    serde_json::from_str(&rest).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn the_compare_view_gives_the_numbers_of_compare_json() {
    let cli = json(&succeeded(occam().args([
        "compare",
        "examples/vibes_tutorial/mixture.occam",
        "--plate",
        "K=1..3",
        "--method",
        "vb,bic",
        "--json",
    ])));
    let token = "0123456789abcdef0123456789abcdef";
    let view = std::sync::Arc::new(
        occam_view::start(
            occam_view::Setup {
                model: root().join("examples/vibes_tutorial/mixture.occam"),
                data: vec![],
                settings: occam::Settings::default(),
            },
            &occam_view::Options {
                token: Some(token.into()),
                ..Default::default()
            },
        )
        .unwrap(),
    );
    let serving = std::sync::Arc::clone(&view);
    std::thread::spawn(move || serving.serve());
    let page = post(
        view.addr(),
        &format!("/api/compare?token={token}"),
        &serde_json::json!({"plate": "K=1..3", "methods": ["vb", "bic"]}),
    );
    let (a, b) = (
        page["models"].as_array().expect("models"),
        cli["models"].as_array().unwrap(),
    );
    assert_eq!(a.len(), 3);
    assert_eq!(a.len(), b.len());
    for (p, c) in a.iter().zip(b) {
        let (pn, cn) = (p["model"].as_str().unwrap(), c["model"].as_str().unwrap());
        assert!(pn.ends_with(cn), "{pn} vs {cn}");
        assert_eq!(p["bound"], c["bound"]);
        assert_eq!(p["iterations"], c["iterations"]);
        for (pe, ce) in p["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .zip(c["evidence"].as_array().unwrap())
        {
            for key in [
                "method",
                "kind",
                "log_evidence",
                "se",
                "probability",
                "note",
            ] {
                assert_eq!(pe[key], ce[key], "{key} of {cn}: {pe} vs {ce}");
            }
        }
    }
    let probs: f64 = a
        .iter()
        .map(|m| m["evidence"][0]["probability"].as_f64().unwrap())
        .sum();
    assert!((probs - 1.0).abs() < 1e-12);
    for (k, v) in cli["best"].as_object().unwrap() {
        assert!(page["best"][k]
            .as_str()
            .unwrap()
            .ends_with(v.as_str().unwrap()));
    }
    // Model files named by the page obey the folder rule.
    let refused = post(
        view.addr(),
        &format!("/api/compare?token={token}"),
        &serde_json::json!({"models": ["/etc/hostname"]}),
    );
    assert!(
        refused["error"].as_str().unwrap().contains("refused"),
        "{refused}"
    );
}

/// `fit --view` watches one in-process fit: with a fit over shards or a stream it is refused
/// (exit 2, naming the conflict), not silently ignored.
#[test]
fn fit_view_conflicts_with_shards_and_stream() {
    let model =
        "plates N from data y\nmu ~ Gaussian(0, 0.01)\ny[N] ~ Gaussian(mu, 0.25)\nobserve y\n";
    let f: Vec<(&str, &[u8])> = vec![("y.csv", b"y\n1.0\n2.0\n"), ("m.occam", model.as_bytes())];
    for extra in [
        &["--shards", "y=y*.csv"][..],
        &["--stream", "y=y.csv"][..],
        &["--stream", "y=y.csv", "--chunk-rows", "1"][..],
    ] {
        let args = [&["fit", "m.occam", "--view"][..], extra].concat();
        let (code, _, err) = crate::common::run_in(&f, &args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("--view") && err.contains("cannot be used with"),
            "{err}"
        );
    }
}
