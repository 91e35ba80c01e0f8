//! §5.5.2–§5.5.4 exec policies: form, verification and the decision.

use crate::compat::OptionExt;
use crate::error::{ensure, Code, R};
use crate::json::{self, Value};
use crate::wire::{self, Digest};

pub const POLICY_TYPE: &str = "application/vnd.sandbox-attest.exec-policy+json";
const TYPE_TAG: &str = "sandbox-attest/exec-policy/1";

/// §5.5.3: a list holds at most 65,536 entries.
const MAX_ENTRIES: usize = 65536;

/// check_list is one list of §5.5.3's order: a JSON list of at most 65,536 entries
/// (`BadExecPolicy`), then entry by entry from the first: a digest (`ExecPolicyBadDigest`), not
/// equal to the entry before it (`ExecPolicyDuplicate`), not sorting before it (`ExecPolicyUnsorted`).
fn check_list(v: Option<&Value>) -> R<()> {
    let a = v.and_then(Value::as_arr).ok_or(Code("BadExecPolicy"))?;
    ensure(a.len() <= MAX_ENTRIES, "BadExecPolicy")?;
    let mut prev: Option<&str> = None;
    for x in a {
        let d = x.as_str().filter(|d| wire::parse_digest_str(d).is_ok()).ok_or(Code("ExecPolicyBadDigest"))?;
        if let Some(p) = prev {
            ensure(p != d, "ExecPolicyDuplicate")?;
            ensure(p.as_bytes() <= d.as_bytes(), "ExecPolicyUnsorted")?;
        }
        prev = Some(d);
    }
    Ok(())
}

/// check_policy checks a policy payload in §5.5.3's order: exactly the four members, type, mode
/// (`BadExecPolicy`), then the whole allow list and only then the deny list (`check_list`).
pub fn check_policy(p: &Value) -> R<()> {
    ensure(wire::exact_members(p, &["type", "mode", "allow", "deny"]), "BadExecPolicy")?;
    ensure(p.get("type").and_then(Value::as_str) == Some(TYPE_TAG), "BadExecPolicy")?;
    ensure(p.get("mode").and_then(Value::as_str).has(|m| m == "allowlist" || m == "denylist"), "BadExecPolicy")?;
    check_list(p.get("allow"))?;
    check_list(p.get("deny"))
}

/// open verifies a signed policy (§5.5.3), optionally bound to an expected address.
pub fn open(env: &Value, stewards: Option<&[String]>, bound: Option<&Digest>) -> R<(Digest, Value)> {
    let want = wire::Expect { payload_type: POLICY_TYPE, limit: json::DEFAULT_LIMIT, signers: stewards };
    let o = wire::open_envelope(env, &want)?;
    check_policy(&o.payload)?;
    ensure(bound.none_or(|b| *b == o.address), "ExecPolicyMismatch")?;
    Ok((o.address, o.payload))
}

/// make builds a policy from edits (§5.5.3): the mode first (`BadExecPolicy`), then every entry
/// of allow, then of deny, a digest (`ExecPolicyBadDigest`); each list sorted, repeats dropped.
pub fn make(mode: &Value, allow: &Value, deny: &Value) -> R<(Digest, Value)> {
    ensure(mode.as_str().has(|m| m == "allowlist" || m == "denylist"), "BadExecPolicy")?;
    let digests = |v: &Value| -> R<Vec<String>> {
        let a = v.as_arr().ok_or(Code("BadExecPolicy"))?;
        a.iter()
            .map(|x| x.as_str().filter(|d| wire::parse_digest_str(d).is_ok()).map(str::to_string))
            .collect::<Option<Vec<_>>>()
            .ok_or(Code("ExecPolicyBadDigest"))
    };
    let (allow, deny) = (digests(allow)?, digests(deny)?);
    let norm = |mut s: Vec<String>| {
        s.sort();
        s.dedup();
        Value::Arr(s.into_iter().map(Value::Str).collect())
    };
    let p = Value::obj(vec![
        ("type", Value::str(TYPE_TAG)),
        ("mode", mode.clone()),
        ("allow", norm(allow)),
        ("deny", norm(deny)),
    ]);
    check_policy(&p)?;
    Ok((wire::address(&p), p))
}

/// decide applies §5.5.4: deny wins, then the mode; returns (allowed, rule).
pub fn decide(p: &Value, digest: &str) -> R<(bool, &'static str)> {
    check_policy(p)?;
    let on = |name: &str| p.get(name).and_then(Value::as_arr).has(|a| a.iter().any(|x| x.as_str() == Some(digest)));
    if on("deny") {
        return Ok((false, "denied"));
    }
    let listed = on("allow");
    Ok(match p.get("mode").and_then(Value::as_str) {
        Some("allowlist") if listed => (true, "allowed"),
        Some("allowlist") => (false, "not-allowed"),
        _ if listed => (true, "allowed"),
        _ => (true, "default"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allow: &str, deny: &str) -> Value {
        let t = format!(r#"{{"type":"{TYPE_TAG}","mode":"allowlist","allow":{allow},"deny":{deny}}}"#);
        json::parse_strict(t.as_bytes()).unwrap()
    }

    // §5.5.3: the whole allow list before the deny list; entry by entry digest, repeat, order.
    #[test]
    fn check_order() {
        let (a, b) = (format!("\"blake3:{}\"", "a".repeat(64)), format!("\"blake3:{}\"", "b".repeat(64)));
        assert_eq!(check_policy(&policy(&format!("[{b},{a}]"), r#"["x"]"#)), Err(Code("ExecPolicyUnsorted")));
        assert_eq!(check_policy(&policy(r#"["x"]"#, "1")), Err(Code("ExecPolicyBadDigest")));
        assert_eq!(check_policy(&policy(&format!(r#"[{a},{a},"x"]"#), "[]")), Err(Code("ExecPolicyDuplicate")));
        assert_eq!(check_policy(&policy(&format!(r#"[{b},{a},"x"]"#), "[]")), Err(Code("ExecPolicyUnsorted")));
        assert_eq!(check_policy(&policy(&format!("[{a},{b}]"), "[]")), Ok(()));
    }
}
