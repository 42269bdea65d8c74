//! `POST /api/compare`: the compare view. The editor's model swept over a plate's sizes
//! (`{"plate": "K=1..6"}`), or it and other model files (`{"models": [FILE, ...]}`, read under
//! the folder rule), fitted on the view's data and compared by the evidence methods asked for
//! (`{"methods": ["vb", "bic", ...]}`, default `vb`): the JSON of `occam compare --method ...
//! --json` (bounds, each method's estimate and posterior model probability, the best per
//! method), from the same library call. Bounds of different kinds (exact, lower bound,
//! approximate) are refused unless `{"mixed_bounds": true}`, as `--mixed-bounds`.

use occam::evidence::{compare_evidence, Method, Options};
use occam::Model;
use occam_report::evidence::{compare_json, plate_sizes};
use serde_json::{json, Value};

use crate::api::Reply;
use crate::session::Session;

/// The largest number of models one request compares.
const MAX_MODELS: usize = 32;

/// Answers `POST /api/compare` (see the module documentation).
pub fn compare(s: &Session, body: &Value) -> Reply {
    match run(s, body) {
        Ok(v) => (200, v),
        Err((code, message)) => (code, json!({"error": message})),
    }
}

fn run(s: &Session, body: &Value) -> Result<Value, (u16, String)> {
    let bad = |m: String| (400u16, m);
    let methods: Vec<Method> = match body.get("methods") {
        None | Some(Value::Null) => vec![Method::Vb],
        Some(Value::Array(list)) => {
            let mut out = Vec::new();
            for m in list {
                let m = Method::parse(m.as_str().unwrap_or_default())
                    .map_err(|e| bad(e.to_string()))?;
                if !out.contains(&m) {
                    out.push(m);
                }
            }
            out
        }
        Some(_) => return Err(bad("\"methods\" must be a list of method names".into())),
    };
    if methods.is_empty() {
        return Err(bad("give at least one method".into()));
    }
    let (source, data) = {
        let st = s.state();
        (st.source.clone(), st.data.clone())
    };
    let base = s.model_of(&source, &data).map_err(|e| bad(e.to_string()))?;
    let mut models = vec![base.clone()];
    if let Some(files) = body.get("models").and_then(Value::as_array) {
        for f in files {
            let path = s
                .resolve(f.as_str().unwrap_or_default())
                .map_err(|e| (403, e.to_string()))?;
            models.push(Model::from_file(&path, &data).map_err(|e| bad(e.to_string()))?);
        }
    }
    let mut swept = None;
    if let Some(spec) = body.get("plate").and_then(Value::as_str) {
        if models.len() > 1 {
            return Err(bad(
                "a plate sweep varies the editor's model: give no \"models\"".into(),
            ));
        }
        let (name, list) = spec
            .split_once('=')
            .ok_or_else(|| bad(format!("plate {spec}: give NAME=FROM..TO or NAME=A,B,C")))?;
        let list = plate_sizes(list).ok_or_else(|| bad(format!("plate {spec}: sizes from 1")))?;
        // Before building them: a sweep's models are compiled one by one.
        if list.len() > MAX_MODELS {
            return Err(bad(format!("at most {MAX_MODELS} models at once")));
        }
        swept = Some(name.trim().to_string());
        models = list
            .iter()
            .map(|&k| base.with_plate(name.trim(), k))
            .collect::<occam::Result<_>>()
            .map_err(|e| bad(e.to_string()))?;
    }
    if models.len() > MAX_MODELS {
        return Err(bad(format!("at most {MAX_MODELS} models at once")));
    }
    let settings = s.settings();
    let mixed_bounds = match body.get("mixed_bounds") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(bad("\"mixed_bounds\" must be true or false".into())),
    };
    let opts = Options {
        seed: settings.seed,
        mixed_bounds,
        plate: swept,
        ..Options::default()
    };
    let rows = compare_evidence(&models, settings, &[], &methods, &opts, &mut |_| {
        Box::new(()) as Box<dyn occam::Observer>
    })
    .map_err(|e| bad(e.to_string()))?;
    Ok(compare_json(&rows, &methods))
}
