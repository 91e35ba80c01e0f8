//! Every vector of `vectors/*.json` whose class this verifier claims, run through the same
//! operations the adapter serves, each compared in canonical form with its id in the message.

use sbxverify::error::Code;
use sbxverify::json::{self, Mode, Value};
use sbxverify::ops;
use std::path::PathBuf;

#[test]
fn every_claimed_vector_agrees() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../vectors");
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in ["core.json", "durable.json", "grants.json", "standing.json"] {
        let bytes = mark_lone_surrogates(&std::fs::read(dir.join(file)).expect(file));
        let doc = json::parse(&bytes, Mode::Lenient, usize::MAX).expect(file);
        for v in doc.get("vectors").and_then(Value::as_arr).expect("vectors") {
            let class = v.get("class").and_then(Value::as_str).unwrap_or("");
            if !ops::CLASSES.contains(&class) {
                continue;
            }
            let id = v.get("id").and_then(Value::as_str).unwrap_or("?");
            let op = v.get("op").and_then(Value::as_str).unwrap_or("");
            let input = v.get("input").unwrap_or(&Value::Null);
            // What the adapter answers for a request line its reader refuses (sbx-adapter `handle`).
            let got = if json::canonical(input).contains(SENTINEL) {
                Err(Code("LoneSurrogate"))
            } else {
                ops::call(op, input)
            };
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

/// Stands in for a lone surrogate, which a Rust string cannot hold (no vector holds U+FDD0).
const SENTINEL: char = '\u{fdd0}';

/// mark_lone_surrogates rewrites each `\uXXXX` escape of a lone surrogate in JSON text as the
/// escape of SENTINEL, so the file parses and such a vector is answered as the adapter answers
/// its line (`LoneSurrogate`, sandbox-attest §11.2).
fn mark_lone_surrogates(b: &[u8]) -> Vec<u8> {
    let unit = |i: usize| -> Option<u32> {
        let h = b.get(i..i + 6)?;
        if h[0] != b'\\' || h[1] != b'u' {
            return None;
        }
        u32::from_str_radix(std::str::from_utf8(&h[2..]).ok()?, 16).ok()
    };
    let (mut out, mut i) = (Vec::with_capacity(b.len()), 0);
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'\\') {
            out.extend_from_slice(&b[i..i + 2]);
            i += 2;
            continue;
        }
        match unit(i) {
            Some(0xD800..=0xDBFF) if matches!(unit(i + 6), Some(0xDC00..=0xDFFF)) => {
                out.extend_from_slice(&b[i..i + 12]);
                i += 12;
            }
            Some(0xD800..=0xDFFF) => {
                out.extend_from_slice(b"\\ufdd0");
                i += 6;
            }
            _ => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    out
}
