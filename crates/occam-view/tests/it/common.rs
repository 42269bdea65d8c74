//! Starting a view and talking HTTP to it (a few lines over a socket: no client crate needed).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use occam::Settings;
use occam_view::{Options, Setup, View};
use serde_json::Value;

pub const TOKEN: &str = "0123456789abcdef0123456789abcdef";

/// The workspace's examples folder.
pub fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// The settings of every test's fit (the defaults: what `occam fit` runs).
pub fn settings() -> Settings {
    Settings::default()
}

/// A running view of `model` (relative to examples/) with `data` arguments.
pub struct Running {
    pub view: Arc<View>,
    pub addr: SocketAddr,
}

pub fn start(model: &str, data: &[String]) -> Running {
    start_at(&examples().join(model), data)
}

/// A running view of the model file `model`.
pub fn start_at(model: &std::path::Path, data: &[String]) -> Running {
    start_with(model, data, settings())
}

/// A running view of the model file `model` whose fits use `settings`.
pub fn start_with(model: &std::path::Path, data: &[String], settings: Settings) -> Running {
    let setup = Setup {
        model: model.to_path_buf(),
        data: data.to_vec(),
        settings,
    };
    let opts = Options {
        token: Some(TOKEN.into()),
        ..Options::default()
    };
    let view = Arc::new(occam_view::start(setup, &opts).expect("the view starts"));
    let addr = view.addr();
    let serving = Arc::clone(&view);
    std::thread::spawn(move || serving.serve());
    Running { view, addr }
}

/// One request; returns the status and the body.
pub fn request(addr: SocketAddr, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let body = body.unwrap_or("");
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status: u16 = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    (
        status,
        if chunked {
            dechunk(body)
        } else {
            body.to_string()
        },
    )
}

/// The body of a chunked response (hex length, CRLF, data, CRLF, ..., a chunk of length 0).
fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((len, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(len.trim(), 16).unwrap();
        if n == 0 {
            break;
        }
        out.push_str(&after[..n]);
        rest = &after[n + 2..];
    }
    out
}

/// `GET path?token=TOKEN` parsed as JSON, with its status.
pub fn get_json(addr: SocketAddr, path: &str) -> (u16, Value) {
    let sep = if path.contains('?') { '&' } else { '?' };
    let (status, body) = request(addr, "GET", &format!("{path}{sep}token={TOKEN}"), None);
    (
        status,
        serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}")),
    )
}

/// `POST path?token=TOKEN` with a JSON body.
pub fn post_json(addr: SocketAddr, path: &str, body: &Value) -> (u16, Value) {
    let (status, text) = request(
        addr,
        "POST",
        &format!("{path}?token={TOKEN}"),
        Some(&body.to_string()),
    );
    (
        status,
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")),
    )
}

/// Waits until the current fit has ended; returns the status.
pub fn wait_done(addr: SocketAddr) -> Value {
    let start = Instant::now();
    loop {
        let (_, s) = get_json(addr, "/api/status");
        if s["state"] != "fitting" {
            return s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "the fit never ended"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The events of `/api/trace` (the stream ends with the fit): (name, data).
pub fn trace_events(addr: SocketAddr) -> Vec<(String, Value)> {
    let (status, body) = request(addr, "GET", &format!("/api/trace?token={TOKEN}"), None);
    assert_eq!(status, 200);
    body.split("\n\n")
        .filter_map(|frame| {
            let mut name = None;
            let mut data = None;
            for line in frame.lines() {
                if let Some(n) = line.strip_prefix("event: ") {
                    name = Some(n.to_string());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data = Some(serde_json::from_str(d).unwrap());
                }
            }
            Some((name?, data?))
        })
        .collect()
}
