//! Every vector of `vectors/*.json` whose class this verifier claims, run through the same
//! operations the adapter serves, each compared in canonical form with its id in the message.

use sbxverify::json::{self, Mode, Value};
use sbxverify::ops;
use std::path::PathBuf;

#[test]
fn every_claimed_vector_agrees() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../vectors");
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in ["core.json", "durable.json", "grants.json", "standing.json"] {
        let bytes = std::fs::read(dir.join(file)).expect(file);
        let doc = json::parse(&bytes, Mode::Lenient, usize::MAX).expect(file);
        for v in doc.get("vectors").and_then(Value::as_arr).expect("vectors") {
            let class = v.get("class").and_then(Value::as_str).unwrap_or("");
            if !ops::CLASSES.contains(&class) {
                continue;
            }
            let id = v.get("id").and_then(Value::as_str).unwrap_or("?");
            let op = v.get("op").and_then(Value::as_str).unwrap_or("");
            let got = ops::call(op, v.get("input").unwrap_or(&Value::Null));
            let why = match (v.get("expect"), got) {
                (Some(Value::Str(ok)), Ok(out)) if ok == "ok" => match v.get("output") {
                    Some(want) if json::canonical(want) != json::canonical(&out) => Some("output differs".to_string()),
                    _ => None,
                },
                (Some(Value::Str(_)), Err(code)) => Some(format!("got {code}, want ok")),
                (Some(e), Err(code)) if e.get("error").and_then(Value::as_str) == Some(code.0) => None,
                (Some(e), r) => Some(format!("got {r:?}, want {}", json::canonical(e))),
                (None, _) => Some("no expect".into()),
            };
            checked += 1;
            if let Some(w) = why {
                failures.push(format!("{id}: {w}"));
            }
        }
    }
    assert!(checked > 1000, "only {checked} vectors checked");
    assert!(failures.is_empty(), "{} of {checked} failed:\n{}", failures.len(), failures.join("\n"));
}
