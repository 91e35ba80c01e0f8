//! §4.1–§4.2 unit descriptors and `unit_id`.

use crate::compat::OptionExt;
use crate::error::{ensure, Code, R};
use crate::json::Value;
use crate::wire::{self, Digest};

const MEMBERS: &[&str] = &["type", "argv", "entry", "workspace", "manifest", "level", "labels"];

/// chars counts characters as §2.9 does (UTF-16 code units).
fn chars(s: &str) -> usize {
    wire::text_len(s)
}

/// is_level says whether a value is "S0" … "S7".
pub fn is_level(v: &Value) -> bool {
    v.as_str().has(|s| s.len() == 2 && s.starts_with('S') && (b'0'..=b'7').contains(&s.as_bytes()[1]))
}

fn label_name(k: &str) -> bool {
    let b = k.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b[1..].iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._/-".contains(c))
}

fn argv_ok(v: &Value) -> bool {
    v.as_arr().has(|a| {
        (1..=256).contains(&a.len()) && a.iter().all(|x| x.as_str().has(|s| chars(s) <= 4096 && !s.contains('\0')))
    })
}

fn labels_ok(v: &Value) -> bool {
    v.as_obj().has(|m| {
        m.len() <= 32 && m.iter().all(|(k, x)| label_name(k) && x.as_str().has(|s| (1..=256).contains(&chars(s))))
    })
}

/// unit_id checks a descriptor (§4.1, `BadUnit`) and returns its address (§4.2).
pub fn unit_id(u: &Value) -> R<Digest> {
    ensure(u.is_obj() && u.keys().iter().all(|k| MEMBERS.contains(k)), "BadUnit")?;
    ensure(u.get("type").and_then(Value::as_str) == Some("https://sandbox-attest.dev/unit/v1"), "BadUnit")?;
    let (argv, entry) = (u.get("argv"), u.get("entry"));
    ensure(argv.is_some() != entry.is_some(), "BadUnit")?;
    ensure(argv.none_or(argv_ok), "BadUnit")?;
    ensure(entry.none_or(|e| e.as_str().has(|s| (1..=4096).contains(&chars(s)))), "BadUnit")?;
    ensure(u.get("workspace").none_or(wire::is_digest), "BadUnit")?;
    ensure(u.get("manifest").has(wire::is_digest), "BadUnit")?;
    ensure(u.get("level").has(is_level), "BadUnit")?;
    ensure(u.get("labels").none_or(labels_ok), "BadUnit")?;
    Ok(wire::address(u))
}

/// parse_grants_id reads a §4.3 grants_id (`BadUnit` for anything but a digest).
pub fn parse_grants_id(v: &Value) -> R<Digest> {
    wire::parse_digest(v).map_err(|_| Code("BadUnit"))
}
