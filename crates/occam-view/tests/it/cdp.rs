//! A small Chrome DevTools Protocol client for the browser tests: headless Chromium (Debian's
//! `chromium`, installed by scripts/setup-browser) driven over `--remote-debugging-pipe` (JSON
//! messages ended by a NUL byte on file descriptors 3 and 4). The two descriptors are named
//! pipes that `sh` opens for the browser, so no `unsafe` and no WebSocket client is needed.
#![allow(dead_code)]

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Width and height of the page the tests look at, in CSS pixels.
pub const VIEWPORT: (u32, u32) = (1280, 900);

/// A headless Chromium with one page attached.
pub struct Browser {
    child: Child,
    to: File,
    from: BufReader<File>,
    next: u64,
    session: String,
    /// Events received while waiting for answers (console messages, exceptions, ...).
    pub events: Vec<Value>,
    _dir: tempfile::TempDir,
}

impl Browser {
    /// Starts Chromium and opens a blank page; `None` (the test says SKIPPED) without it.
    pub fn launch() -> Option<Browser> {
        let found = Command::new("chromium")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            eprintln!("SKIPPED: no `chromium` on PATH (scripts/setup-browser installs it)");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let (inp, out) = (dir.path().join("in"), dir.path().join("out"));
        for p in [&inp, &out] {
            assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
        }
        let profile = dir.path().join("profile");
        let child = Command::new("sh")
            .args([
                "-c",
                "exec chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
                 --remote-debugging-pipe --user-data-dir=\"$2\" about:blank 3<\"$0\" 4>\"$1\"",
            ])
            .arg(&inp)
            .arg(&out)
            .arg(&profile)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The shell opens `in` first, then `out`: open them in the same order.
        let to = OpenOptions::new().write(true).open(&inp).unwrap();
        let from = BufReader::new(File::open(&out).unwrap());
        let mut b = Browser {
            child,
            to,
            from,
            next: 0,
            session: String::new(),
            events: Vec::new(),
            _dir: dir,
        };
        let target = b.browser_call("Target.createTarget", json!({"url": "about:blank"}));
        let attached = b.browser_call(
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        b.session = attached["sessionId"].as_str().unwrap().to_string();
        b.call("Runtime.enable", json!({}));
        b.call("Page.enable", json!({}));
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": VIEWPORT.0, "height": VIEWPORT.1, "deviceScaleFactor": 1, "mobile": false}),
        );
        Some(b)
    }

    fn send(&mut self, msg: Value) -> u64 {
        self.next += 1;
        let mut msg = msg;
        msg["id"] = json!(self.next);
        let mut bytes = msg.to_string().into_bytes();
        bytes.push(0);
        self.to.write_all(&bytes).unwrap();
        self.to.flush().unwrap();
        self.next
    }

    fn answer(&mut self, id: u64, what: &str) -> Value {
        loop {
            let mut raw = Vec::new();
            let n = self.from.read_until(0, &mut raw).unwrap();
            assert!(n > 0, "chromium closed the pipe while answering {what}");
            raw.pop();
            let m: Value = serde_json::from_slice(&raw).unwrap();
            if m["id"].as_u64() == Some(id) {
                if let Some(e) = m.get("error") {
                    panic!("{what}: {e}");
                }
                return m["result"].clone();
            }
            self.events.push(m);
        }
    }

    fn browser_call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(json!({"method": method, "params": params}));
        self.answer(id, method)
    }

    /// Calls `method` on the page.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(json!({"method": method, "params": params, "sessionId": self.session}));
        self.answer(id, method)
    }

    /// Opens `url` and waits for its load event.
    pub fn goto(&mut self, url: &str) {
        self.call("Page.navigate", json!({"url": url}));
        self.wait_for("document.readyState === 'complete'", 30);
    }

    /// The value of a JavaScript expression (a promise is awaited).
    pub fn eval(&mut self, expr: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
        );
        if let Some(e) = r.get("exceptionDetails") {
            panic!("{expr}: {e}");
        }
        r["result"]["value"].clone()
    }

    /// Waits until `expr` is truthy; panics after `secs` seconds.
    pub fn wait_for(&mut self, expr: &str, secs: u64) -> Value {
        let start = Instant::now();
        loop {
            let v = self.eval(expr);
            let truthy = match &v {
                Value::Null => false,
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_f64() != Some(0.0),
                Value::String(s) => !s.is_empty(),
                _ => true,
            };
            if truthy {
                return v;
            }
            assert!(
                start.elapsed() < Duration::from_secs(secs),
                "waited {secs} s for {expr}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Clicks the middle of the element `selector` with the mouse (as a user does: the browser
    /// finds the element under the pointer).
    pub fn click(&mut self, selector: &str) {
        let sel = serde_json::to_string(selector).unwrap();
        let at = self.eval(&format!(
            "(() => {{ const e = document.querySelector({sel}); e.scrollIntoView({{block: 'center'}}); \
             const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
        ));
        let (x, y) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
    }

    /// The console errors and uncaught exceptions seen so far.
    pub fn console_errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|m| {
                m["method"] == "Runtime.exceptionThrown"
                    || (m["method"] == "Runtime.consoleAPICalled"
                        && matches!(m["params"]["type"].as_str(), Some("error" | "warning")))
            })
            .map(|m| m["params"].to_string())
            .collect()
    }

    /// A PNG of the page (or of the element `selector`), written to `path`; returns its bytes.
    pub fn screenshot(&mut self, selector: Option<&str>, path: &Path) -> Vec<u8> {
        let mut params = json!({"format": "png"});
        if let Some(sel) = selector {
            let sel = serde_json::to_string(sel).unwrap();
            let r = self.eval(&format!(
                "(() => {{ const r = document.querySelector({sel}).getBoundingClientRect(); \
                 return [r.x + scrollX, r.y + scrollY, r.width, r.height]; }})()"
            ));
            params["clip"] =
                json!({"x": r[0], "y": r[1], "width": r[2], "height": r[3], "scale": 1});
            params["captureBeyondViewport"] = json!(true);
        }
        let shot = self.call("Page.captureScreenshot", params);
        let png = base64_decode(shot["data"].as_str().unwrap());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &png).unwrap();
        png
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard base64 (RFC 4648 §4) with padding.
pub fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => (c - b'A') as u32,
            b'a'..=b'z' => (c - b'a') as u32 + 26,
            b'0'..=b'9' => (c - b'0') as u32 + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        }
    };
    let bytes: Vec<u8> = s.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for quad in bytes.chunks(4) {
        let pad = quad.iter().filter(|&&c| c == b'=').count();
        let n = quad
            .iter()
            .map(|&c| if c == b'=' { 0 } else { val(c) })
            .fold(0u32, |a, v| (a << 6) | v);
        let three = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&three[..3 - pad]);
    }
    out
}

/// The chunks of a PNG file (RFC 2083): its signature, then (type, data) with each chunk's CRC
/// checked; panics on a malformed file.
pub fn png_chunks(png: &[u8]) -> Vec<(String, Vec<u8>)> {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "not a PNG signature");
    let mut at = 8;
    let mut chunks = Vec::new();
    while at < png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        let kind = String::from_utf8(png[at + 4..at + 8].to_vec()).unwrap();
        let data = png[at + 8..at + 8 + len].to_vec();
        let crc = u32::from_be_bytes(png[at + 8 + len..at + 12 + len].try_into().unwrap());
        assert_eq!(crc, crc32(&png[at + 4..at + 8 + len]), "bad CRC of {kind}");
        chunks.push((kind, data));
        at += 12 + len;
    }
    chunks
}

/// Width and height of a PNG, after checking its structure: IHDR first, at least one IDAT, IEND
/// last.
pub fn png_size(png: &[u8]) -> (u32, u32) {
    let chunks = png_chunks(png);
    assert_eq!(chunks[0].0, "IHDR");
    assert!(chunks.iter().any(|c| c.0 == "IDAT"), "no image data");
    assert_eq!(chunks.last().unwrap().0, "IEND");
    let h = &chunks[0].1;
    (
        u32::from_be_bytes(h[0..4].try_into().unwrap()),
        u32::from_be_bytes(h[4..8].try_into().unwrap()),
    )
}

/// CRC-32 (ISO 3309, as PNG uses it).
fn crc32(bytes: &[u8]) -> u32 {
    let mut c = 0xffff_ffffu32;
    for &b in bytes {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// Where the tests' screenshots go: `$OCCAM_VIEW_SHOTS` (scripts/view-screenshots sets it to
/// docs/guide/img), or `screenshots/` in the target directory.
pub fn shots_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("OCCAM_VIEW_SHOTS") {
        return PathBuf::from(d);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("occam-view-screenshots")
}
