//! JCP §4.5 revocation lists.

use crate::compat::OptionExt;
use crate::error::{ensure, Code, R};
use crate::json::Value;
use crate::wire::{self, Digest};

pub const REVOCATION_TYPE: &str = "application/vnd.jcp.revocation+json";
/// §4.5: a revocation payload is at most 4096 bytes.
pub const REVOCATION_LIMIT: usize = 4096;

/// One verified revocation entry.
#[derive(Clone, Debug)]
pub struct Revocation {
    pub grant: Digest,
    pub by: String,
    pub at_ms: u64,
}

fn form(p: &Value) -> R<()> {
    let ok = wire::exact_members(p, &["grant", "by", "seq", "prev", "at_ms"])
        && p.get("grant").has(wire::is_digest)
        && p.get("prev").has(wire::is_digest)
        && p.get("by").has(wire::is_didkey)
        && p.get("seq").and_then(Value::as_int).has(|n| n >= 1)
        && p.get("at_ms").and_then(Value::as_int).has(|n| n >= 0);
    ensure(ok, "BadRevocation")
}

/// A verified list: its entries, head and length.
pub struct List {
    pub entries: Vec<Revocation>,
    pub head: Digest,
}

/// verify_list checks a revocation list (§4.5) and, when given, that it extends `prefix`.
pub fn verify_list(entries: &[Value], prefix: Option<(usize, Digest)>) -> R<List> {
    let mut head = wire::chain_genesis("jcp.revocation/1", &[]);
    let mut out = Vec::new();
    let mut last_at = 0u64;
    let mut prefix_ok = prefix.none_or(|(n, h)| n == 0 && h == head);
    for (i, env) in entries.iter().enumerate() {
        let o = wire::open_signed_by(env, REVOCATION_TYPE, REVOCATION_LIMIT, "BadRevocation", "by", form)?;
        let p = &o.payload;
        let at = p.get("at_ms").and_then(Value::as_int).unwrap_or(0) as u64;
        let seq_ok = p.get("seq").and_then(Value::as_int) == Some(i as i64 + 1);
        let prev_ok = p.get("prev").and_then(|v| wire::parse_digest(v).ok()) == Some(head);
        ensure(seq_ok && prev_ok && (i == 0 || at >= last_at), "BrokenRevocationList")?;
        last_at = at;
        head = wire::chain_next(&head, p);
        out.push(Revocation {
            grant: wire::parse_digest(p.get("grant").ok_or(Code("BadRevocation"))?)?,
            by: p.get("by").and_then(Value::as_str).unwrap_or("").to_string(),
            at_ms: at,
        });
        if let Some((n, h)) = prefix {
            if n == i + 1 {
                prefix_ok = h == head;
            }
        }
    }
    ensure(prefix_ok, "BrokenRevocationList")?;
    Ok(List { entries: out, head })
}
