//! The JSON of each endpoint, computed from the session (the server only routes and checks the
//! token).

use std::sync::Arc;

use occam_report::graph::{layout_json, plate_labels};
use occam_report::ModelReport;
use serde_json::{json, Value};

use crate::session::Session;

/// A response: HTTP status and JSON body.
pub type Reply = (u16, Value);

/// `GET /api/status`: the model file, the editor's text, its data, the fit's generation and
/// state (`fitting`, `done`, `error`) and, when done, the bound.
pub fn status(s: &Session) -> Reply {
    let st = s.state();
    let state = if st.error.is_some() {
        "error"
    } else if st.fitted.is_some() {
        "done"
    } else {
        "fitting"
    };
    (
        200,
        json!({
            "model": s.path.display().to_string(),
            "source": st.source,
            "data": st.data_args,
            "generation": st.generation,
            "state": state,
            "bound": st.fitted.as_ref().map(|f| f.bound()),
            "diagnostics": st.error,
        }),
    )
}

/// `GET /api/graph`: the current model's network laid out as `occam graph` draws it (see
/// [`occam_report::graph::layout_json`]).
pub fn graph(s: &Session) -> Reply {
    let st = s.state();
    match &st.model {
        Some(m) => {
            let loaded = m.loaded();
            (200, layout_json(&loaded.model, &plate_labels(loaded)))
        }
        None => (
            409,
            json!({"error": "the model does not check", "diagnostics": st.error}),
        ),
    }
}

/// `GET /api/posterior/NAME`: the variable's entry of `occam fit --json` (same serializer), and
/// for a chain its per-step report (`chains` of the same report), for an ARD precision its
/// relevances (`ard` of the same report).
pub fn posterior(s: &Session, name: &str) -> Reply {
    let st = s.state();
    let Some(f) = &st.fitted else {
        return (
            409,
            json!({"error": "no fit yet: the model is being fitted, or does not check"}),
        );
    };
    let (loaded, c) = (f.loaded(), f.compiled());
    let Some(v) = loaded.model.variables.iter().position(|x| x.name == name) else {
        let names: Vec<&str> = loaded
            .model
            .variables
            .iter()
            .map(|x| x.name.as_str())
            .collect();
        return (
            404,
            json!({"error": format!("no variable `{name}` (variables: {})", names.join(", "))}),
        );
    };
    let chain = occam::chains::chains(loaded, c)
        .into_iter()
        .find(|ch| ch.variable == name)
        .map(|ch| ch.to_json());
    // An ARD precision: its entry of the report's `ard` list (relevance of each column).
    let ard = occam::latent::ard::ard(loaded, c)
        .into_iter()
        .find(|a| a.variable == name)
        .and_then(|a| serde_json::to_value(a).ok());
    (
        200,
        json!({
            "name": name,
            "variable": occam_report::json::variable(loaded, c, v),
            "chain": chain,
            "ard": ard,
        }),
    )
}

/// `POST /api/check` with `{"source": TEXT}` (and optionally `"data": [NAME=FILE, ...]`):
/// `{"ok": true, "report": …}` with `occam check`'s text, or `{"ok": false, "diagnostics": […]}`
/// located as the CLI locates them.
pub fn check(s: &Session, body: &Value) -> Reply {
    let Some(source) = body.get("source").and_then(Value::as_str) else {
        return (
            400,
            json!({"error": "give the model text as {\"source\": …}"}),
        );
    };
    let data = match data_of(s, body) {
        Ok(d) => d,
        Err(r) => return r,
    };
    let checked = s
        .model_of(source, &data.1)
        .and_then(|m| ModelReport::check(&m));
    match checked {
        Ok(report) => (200, json!({"ok": true, "report": report})),
        Err(e) => (
            200,
            json!({"ok": false, "diagnostics": occam_report::check::diagnostics_json(&e)}),
        ),
    }
}

/// `POST /api/fit` with `{"source": TEXT}` (and optionally `"data"`): starts a new fit of the
/// text (its trace replaces the last), or returns the diagnostics of a text that does not check.
pub fn fit(s: &Arc<Session>, body: &Value) -> Reply {
    let Some(source) = body.get("source").and_then(Value::as_str) else {
        return (
            400,
            json!({"error": "give the model text as {\"source\": …}"}),
        );
    };
    let (args, data) = match data_of(s, body) {
        Ok(d) => d,
        Err(r) => return r,
    };
    match s.refit(source.to_string(), args, data) {
        Ok(generation) => (200, json!({"ok": true, "generation": generation})),
        Err(e) => (
            200,
            json!({"ok": false, "diagnostics": occam_report::check::diagnostics_json(&e)}),
        ),
    }
}

/// The data of a request: its `"data"` list checked against the allowed folders, or the
/// session's current data.
fn data_of(s: &Session, body: &Value) -> std::result::Result<(Vec<String>, occam::DataSet), Reply> {
    match body.get("data") {
        None | Some(Value::Null) => {
            let st = s.state();
            Ok((st.data_args.clone(), st.data.clone()))
        }
        Some(Value::Array(items)) => {
            let args: Vec<String> = items
                .iter()
                .map(|v| v.as_str().unwrap_or_default().to_string())
                .collect();
            match s.data_of(&args) {
                Ok(d) => Ok((args, d)),
                Err(e) => {
                    let refused = matches!(&e, occam::Error::Io { message, .. } if message.starts_with("refused"));
                    Err((
                        if refused { 403 } else { 400 },
                        json!({"error": e.to_string()}),
                    ))
                }
            }
        }
        Some(_) => Err((
            400,
            json!({"error": "\"data\" must be a list of NAME=FILE"}),
        )),
    }
}
