//! §5.5.2–§5.5.4 exec policies: form, verification and the decision.

use crate::compat::OptionExt;
use crate::error::{ensure, Code, R};
use crate::json::{self, Value};
use crate::wire::{self, Digest};

pub const POLICY_TYPE: &str = "application/vnd.sandbox-attest.exec-policy+json";
const TYPE_TAG: &str = "sandbox-attest/exec-policy/1";

fn list(p: &Value, name: &str) -> R<Vec<String>> {
    let a = p.get(name).and_then(Value::as_arr).ok_or(Code("BadExecPolicy"))?;
    a.iter().map(|x| x.as_str().map(str::to_string).ok_or(Code("ExecPolicyBadDigest"))).collect()
}

/// check_policy checks a policy payload (§5.5.3) in its order: members, type and mode, list
/// types (`BadExecPolicy`); entries (`ExecPolicyBadDigest`); order (`ExecPolicyUnsorted`); repeats
/// (`ExecPolicyDuplicate`).
pub fn check_policy(p: &Value) -> R<()> {
    ensure(wire::exact_members(p, &["type", "mode", "allow", "deny"]), "BadExecPolicy")?;
    ensure(p.get("type").and_then(Value::as_str) == Some(TYPE_TAG), "BadExecPolicy")?;
    ensure(p.get("mode").and_then(Value::as_str).has(|m| m == "allowlist" || m == "denylist"), "BadExecPolicy")?;
    let (allow, deny) = (list(p, "allow")?, list(p, "deny")?);
    for l in [&allow, &deny] {
        ensure(l.iter().all(|d| wire::parse_digest_str(d).is_ok()), "ExecPolicyBadDigest")?;
    }
    for l in [&allow, &deny] {
        ensure(l.windows(2).all(|w| w[0].as_bytes() <= w[1].as_bytes()), "ExecPolicyUnsorted")?;
    }
    for l in [&allow, &deny] {
        ensure(l.windows(2).all(|w| w[0] != w[1]), "ExecPolicyDuplicate")?;
    }
    Ok(())
}

/// open verifies a signed policy (§5.5.3), optionally bound to an expected address.
pub fn open(env: &Value, stewards: Option<&[String]>, bound: Option<&Digest>) -> R<(Digest, Value)> {
    let want = wire::Expect { payload_type: POLICY_TYPE, limit: json::DEFAULT_LIMIT, signers: stewards };
    let o = wire::open_envelope(env, &want)?;
    check_policy(&o.payload)?;
    ensure(bound.none_or(|b| *b == o.address), "ExecPolicyMismatch")?;
    Ok((o.address, o.payload))
}

/// make builds a policy from edits: lists sorted and deduplicated, then checked.
pub fn make(mode: &Value, allow: &Value, deny: &Value) -> R<(Digest, Value)> {
    let norm = |v: &Value| -> R<Value> {
        let a = v.as_arr().ok_or(Code("BadExecPolicy"))?;
        let mut s: Vec<String> =
            a.iter().map(|x| x.as_str().map(str::to_string).ok_or(Code("ExecPolicyBadDigest"))).collect::<R<_>>()?;
        s.sort();
        s.dedup();
        Ok(Value::Arr(s.into_iter().map(Value::Str).collect()))
    };
    let p = Value::obj(vec![
        ("type", Value::str(TYPE_TAG)),
        ("mode", mode.clone()),
        ("allow", norm(allow)?),
        ("deny", norm(deny)?),
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
