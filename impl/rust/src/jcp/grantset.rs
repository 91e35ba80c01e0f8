//! JCP §4.1 grant sets and their address, `grants_id`.

use crate::error::{ensure, Code, R};
use crate::json::Value;
use crate::wire::{self, Digest};

/// §4.1: a grant set has at most 256 members.
pub const MAX_SET: usize = 256;

/// set_id computes `grants_id` of addresses given in any order: sorted, each once, digests only.
pub fn set_id(grants: &[Value]) -> R<Digest> {
    ensure(grants.len() <= MAX_SET, "BadGrantSet")?;
    let mut list: Vec<String> = grants
        .iter()
        .map(|g| {
            g.as_str().filter(|s| wire::parse_digest_str(s).is_ok()).map(str::to_string).ok_or(Code("BadGrantSet"))
        })
        .collect::<R<_>>()?;
    list.sort();
    ensure(list.windows(2).all(|w| w[0] != w[1]), "BadGrantSet")?;
    Ok(wire::address(&doc(&list)))
}

fn doc(list: &[String]) -> Value {
    Value::obj(vec![
        ("type", Value::str("jcp.grant-set/1")),
        ("grants", Value::Arr(list.iter().map(|s| Value::str(s)).collect())),
    ])
}

/// check_doc verifies a received grant-set document: exact members, type, ascending digests.
pub fn check_doc(d: &Value) -> R<Digest> {
    ensure(wire::exact_members(d, &["type", "grants"]), "BadGrantSet")?;
    ensure(d.get("type").and_then(Value::as_str) == Some("jcp.grant-set/1"), "BadGrantSet")?;
    let g = d.get("grants").and_then(Value::as_arr).ok_or(Code("BadGrantSet"))?;
    ensure(g.len() <= MAX_SET && g.iter().all(wire::is_digest), "BadGrantSet")?;
    let s: Vec<&str> = g.iter().filter_map(Value::as_str).collect();
    ensure(s.windows(2).all(|w| w[0] < w[1]), "BadGrantSet")?;
    Ok(wire::address(d))
}
