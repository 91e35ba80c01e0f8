//! §8 replay journals: events, tree heads and proofs.

use super::merkle::{self, blake3};
use crate::compat::OptionExt;
use crate::error::{ensure, fail, Code, R};
use crate::json::{self, Value};
use crate::wire::{self, Digest};

/// The members each event type lists besides `type` and `seq` (§8.2 table).
fn members(ty: &str) -> Option<&'static [&'static str]> {
    Some(match ty {
        "process.start" => &["pid", "argv", "binary"],
        "exec.decision" => &["policy", "digest", "path", "route", "rule", "allowed", "source", "pid"],
        "stdio.chunk" => &["stream", "chunk", "digest", "length"],
        "file.write" => &["path", "digest", "size"],
        "process.exit" => &["pid", "code", "signal"],
        _ => return None,
    })
}

fn int_at_least(v: &Value, min: i64) -> bool {
    v.as_int().has(|n| n >= min)
}

fn non_empty(v: &Value) -> bool {
    v.as_str().has(|s| !s.is_empty())
}

fn one_of(v: &Value, set: &[&str]) -> bool {
    v.as_str().has(|s| set.contains(&s))
}

/// is_signal says whether a value is `SIG` followed by capitals and digits.
pub fn is_signal(s: &str) -> bool {
    s.strip_prefix("SIG").has(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit()))
}

fn member_ok(ty: &str, name: &str, v: &Value) -> bool {
    match (ty, name) {
        (_, "pid") => int_at_least(v, 1),
        (_, "binary" | "policy") => wire::is_digest(v),
        ("exec.decision", "digest") => *v == Value::Null || wire::is_digest(v),
        (_, "digest") => wire::is_digest(v),
        (_, "argv") => v.as_arr().has(|a| a.iter().all(|x| x.as_str().is_some())),
        (_, "path") => non_empty(v),
        (_, "route") => one_of(v, &["direct", "interpreter", "loader"]),
        (_, "rule") => one_of(v, &["denied", "allowed", "not-allowed", "default", "timeout", "changed"]),
        (_, "allowed") => v.as_bool().is_some(),
        (_, "source") => one_of(v, &["cache", "hash", "timeout"]),
        (_, "stream") => one_of(v, &["stdin", "stdout", "stderr"]),
        (_, "chunk") => int_at_least(v, 0),
        (_, "length" | "size") => wire::parse_amount(v).is_ok(),
        (_, "code") => *v == Value::Null || v.as_int().has(|n| (0..=255).contains(&n)),
        (_, "signal") => *v == Value::Null || v.as_str().has(is_signal),
        _ => false,
    }
}

/// check_event applies §8.2 item 3 in its order: type, unknown members, then each member.
pub fn check_event(e: &Value) -> R<()> {
    let m = e.as_obj().ok_or(Code("MalformedEvent"))?;
    // A missing or non-string `type` is a missing member (c4-event-*-missing-type), not an unknown type.
    let ty = e.get("type").and_then(Value::as_str).ok_or(Code("MalformedEvent"))?;
    let listed = members(ty).ok_or(Code("UnknownEventType"))?;
    for (k, _) in m {
        ensure(k == "type" || k == "seq" || listed.contains(&k.as_str()), "UnknownEventField")?;
    }
    ensure(e.get("seq").has(|s| int_at_least(s, 0)), "MalformedEvent")?;
    for name in listed {
        let v = e.get(name).ok_or(Code("MalformedEvent"))?;
        ensure(member_ok(ty, name, v), "MalformedEvent")?;
    }
    if ty == "process.exit" {
        let nulls = [e.get("code"), e.get("signal")].iter().filter(|v| **v == Some(&Value::Null)).count();
        ensure(nulls == 1, "MalformedEvent")?;
    }
    Ok(())
}

/// leaves checks every event (§8.2, §8.3 item 1) and returns their leaf hashes.
pub fn leaves(events: &[Value]) -> R<Vec<Digest>> {
    let mut chunks: Vec<(String, i64)> = Vec::new();
    let mut out = Vec::with_capacity(events.len());
    for (i, e) in events.iter().enumerate() {
        check_event(e)?;
        ensure(e.get("seq").and_then(Value::as_int) == Some(i as i64), "EventOutOfOrder")?;
        if e.get("type").and_then(Value::as_str) == Some("stdio.chunk") {
            let stream = e.get("stream").and_then(Value::as_str).unwrap_or("").to_string();
            let n = e.get("chunk").and_then(Value::as_int).unwrap_or(-1);
            let next = chunks.iter().find(|(s, _)| *s == stream).map(|(_, c)| c + 1).unwrap_or(0);
            ensure(n == next, "EventOutOfOrder")?;
            chunks.retain(|(s, _)| *s != stream);
            chunks.push((stream, n));
        }
        out.push(merkle::leaf_hash(blake3, &json::canonical_bytes(e)));
    }
    Ok(out)
}

/// A tree head `{size, root}` (§8.1 item 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Head {
    pub size: u64,
    pub root: Digest,
}

/// parse_head reads a tree head with exactly `size` and `root` (`BadTreeHead`).
pub fn parse_head(v: &Value) -> R<Head> {
    ensure(wire::exact_members(v, &["size", "root"]), "BadTreeHead")?;
    let size = v.get("size").and_then(Value::as_int).filter(|n| *n >= 0).ok_or(Code("BadTreeHead"))?;
    let root = v.get("root").map(wire::parse_digest).transpose().ok().flatten().ok_or(Code("BadTreeHead"))?;
    Ok(Head { size: size as u64, root })
}

pub fn head_value(h: &Head) -> Value {
    Value::obj(vec![("size", Value::Num(h.size as f64)), ("root", wire::digest_value(&h.root))])
}

/// head computes the journal's tree head (§8.3).
pub fn head(events: &[Value]) -> R<Head> {
    let l = leaves(events)?;
    Ok(Head { size: l.len() as u64, root: merkle::root(blake3, &l) })
}

/// verify recomputes the head and compares (`JournalRootMismatch`).
pub fn verify(events: &[Value], want: &Head) -> R<()> {
    ensure(head(events)? == *want, "JournalRootMismatch")
}

/// digests reads a list of digests, refusing with `code`.
pub fn digests(v: &Value, code: &'static str) -> R<Vec<Digest>> {
    let a = v.as_arr().ok_or(Code(code))?;
    a.iter().map(|x| wire::parse_digest(x).map_err(|_| Code(code))).collect()
}

/// verify_inclusion checks an event proof against a head (§8.4 item 2).
pub fn verify_inclusion(head: &Value, event: &Value, proof: &Value) -> R<()> {
    let h = parse_head(head)?;
    check_event(event)?;
    const BAD: &str = "InclusionProofInvalid";
    ensure(wire::exact_members(proof, &["index", "path"]), BAD)?;
    let index = proof.get("index").and_then(Value::as_int).filter(|n| *n >= 0).ok_or(Code(BAD))?;
    ensure(event.get("seq").and_then(Value::as_int) == Some(index), BAD)?;
    let path = digests(proof.get("path").ok_or(Code(BAD))?, BAD)?;
    let leaf = merkle::leaf_hash(blake3, &json::canonical_bytes(event));
    merkle::verify_inclusion(blake3, index as u64, h.size, &leaf, &path, &h.root, BAD)
}

/// verify_consistency checks that `newer` extends `older` (§8.4 item 3).
pub fn verify_consistency(older: &Value, newer: &Value, path: &Value) -> R<()> {
    let (a, b) = (parse_head(older)?, parse_head(newer)?);
    const BAD: &str = "ConsistencyProofInvalid";
    let p = digests(path, BAD)?;
    merkle::verify_consistency(blake3, a.size, b.size, &a.root, &b.root, &p, BAD)
}

/// prove builds the event proof of `index` (§8.4 item 1).
pub fn prove(events: &[Value], index: usize) -> R<Value> {
    let l = leaves(events)?;
    if index >= l.len() {
        return fail("InclusionProofInvalid");
    }
    let p = merkle::path(blake3, index, &l);
    Ok(Value::obj(vec![
        ("index", Value::Num(index as f64)),
        ("path", Value::Arr(p.iter().map(wire::digest_value).collect())),
    ]))
}
