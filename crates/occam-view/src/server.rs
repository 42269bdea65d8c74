//! The HTTP server: binds, checks the token of every request, routes to [`crate::api`], streams
//! the trace, and serves the embedded page.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;

use occam::{Error, Result};
use serde_json::Value;
use tiny_http::{Header, Method, Request, Response, Server};

use crate::session::Session;
use crate::{api, token, Options};

const PAGE: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const PLOTS: &str = include_str!("assets/plots.js");
const COMPARE: &str = include_str!("assets/compare.js");
const WISHART: &str = include_str!("assets/wishart.js");
const STYLE: &str = include_str!("assets/style.css");

/// The largest request body read (a model text is a few kB).
const MAX_BODY: u64 = 1 << 20;

/// A bound server with its session; [`View::serve`] answers requests until the process ends.
pub struct View {
    server: Arc<Server>,
    session: Arc<Session>,
    token: String,
    addr: SocketAddr,
}

impl View {
    /// Binds `opts`' address (refusing a non-loopback one without `expose`), draws the token and
    /// starts the first fit of the session's model.
    pub fn start(session: Arc<Session>, opts: &Options) -> Result<View> {
        let view = View::bind(session, opts)?;
        let (source, args, data) = {
            let st = view.session.state();
            (st.source.clone(), st.data_args.clone(), st.data.clone())
        };
        // A model that does not check still opens: the page shows its diagnostics.
        let _ = view.session.refit(source, args, data);
        Ok(view)
    }

    /// Binds `opts`' address for `session` as it is (a finished fit is shown, nothing is
    /// started).
    pub fn bind(session: Arc<Session>, opts: &Options) -> Result<View> {
        let want = opts.address()?;
        let server = Server::http(want)
            .map_err(|e| Error::Usage(format!("cannot listen on {want}: {e}")))?;
        let addr = server
            .server_addr()
            .to_ip()
            .ok_or_else(|| Error::Run("the server has no IP address".into()))?;
        let token = match &opts.token {
            Some(t) => t.clone(),
            None => token::fresh()?,
        };
        Ok(View {
            server: Arc::new(server),
            session,
            token,
            addr,
        })
    }

    /// The page's address, with the token.
    pub fn url(&self) -> String {
        format!("http://{}/?token={}", self.addr, self.token)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The session (its state and traces).
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// Makes [`View::serve`] return (after the requests in hand).
    pub fn stop(&self) {
        self.server.unblock();
    }

    /// Answers requests, each on a thread of its own, until the process ends or
    /// [`View::stop`].
    pub fn serve(&self) {
        for request in self.server.incoming_requests() {
            let session = Arc::clone(&self.session);
            let token = self.token.clone();
            std::thread::spawn(move || handle(&session, &token, request));
        }
    }
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).expect("ASCII header")
}

fn respond(request: Request, status: u16, content_type: &str, body: String) {
    let response = Response::from_string(body)
        .with_status_code(status)
        .with_header(header("Content-Type", content_type))
        .with_header(header("Cache-Control", "no-store"))
        .with_header(header("X-Content-Type-Options", "nosniff"));
    // A client that went away needs no answer.
    let _ = request.respond(response);
}

fn respond_json(request: Request, (status, body): api::Reply) {
    respond(request, status, "application/json", body.to_string());
}

/// The value of query parameter `key`.
fn query<'u>(url: &'u str, key: &str) -> Option<&'u str> {
    let q = url.split_once('?')?.1;
    q.split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

/// Decodes the `%XX` escapes of a path segment.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
            Some(x) if b[i] == b'%' => {
                out.push(x);
                i += 3;
            }
            _ => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn handle(session: &Arc<Session>, token: &str, mut request: Request) {
    let url = request.url().to_string();
    let given = query(&url, "token").map(str::to_string).or_else(|| {
        request
            .headers()
            .iter()
            .find(|h| h.field.equiv("X-Occam-Token"))
            .map(|h| h.value.to_string())
    });
    if !given.is_some_and(|g| token::matches(&g, token)) {
        return respond(
            request,
            403,
            "text/plain; charset=utf-8",
            "403: this view needs the token printed by `occam view`\n".into(),
        );
    }
    let path = url.split('?').next().unwrap_or("").to_string();
    let method = request.method().clone();
    match (&method, path.as_str()) {
        (Method::Get, "/") => {
            let page = PAGE.replace("/*STYLE*/", STYLE).replace(
                "/*SCRIPT*/",
                &format!("{PLOTS}\n{WISHART}\n{COMPARE}\n{SCRIPT}"),
            );
            respond(request, 200, "text/html; charset=utf-8", page)
        }
        (Method::Get, "/api/status") => respond_json(request, api::status(session)),
        (Method::Get, "/api/graph") => respond_json(request, api::graph(session)),
        (Method::Get, "/api/trace") => stream_trace(session, request),
        (Method::Get, p) if p.starts_with("/api/posterior/") => {
            let name = unescape(&p["/api/posterior/".len()..]);
            respond_json(request, api::posterior(session, &name))
        }
        (Method::Post, "/api/check")
        | (Method::Post, "/api/fit")
        | (Method::Post, "/api/compare") => {
            let mut body = String::new();
            let read = request.as_reader().take(MAX_BODY).read_to_string(&mut body);
            let parsed: Option<Value> = read.ok().and_then(|_| serde_json::from_str(&body).ok());
            let Some(body) = parsed else {
                return respond_json(
                    request,
                    (400, serde_json::json!({"error": "the body must be JSON"})),
                );
            };
            let reply = match path.as_str() {
                "/api/check" => api::check(session, &body),
                "/api/compare" => crate::compare::compare(session, &body),
                _ => api::fit(session, &body),
            };
            respond_json(request, reply)
        }
        _ => respond(
            request,
            404,
            "text/plain; charset=utf-8",
            format!("404: no {path}\n"),
        ),
    }
}

/// `GET /api/trace`: the current fit's events as server-sent events, from its first sweep on,
/// until it ends. Written on the raw connection: tiny_http's chunked writer would hold small
/// events back until 8 kB had gathered.
fn stream_trace(session: &Arc<Session>, request: Request) {
    let trace = Arc::clone(&session.state().trace);
    let mut out = request.into_writer();
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\
                Connection: close\r\n\r\n";
    if out
        .write_all(head.as_bytes())
        .and_then(|()| out.flush())
        .is_ok()
    {
        // The reader closing the connection ends the stream; nothing to report.
        let _ = trace.stream(&mut out);
    }
}
