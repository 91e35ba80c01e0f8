//! §7.1–§7.5 execution attestations: statement, predicate, signing, verification and bindings.

use super::energy::{self, Provenance};
use super::journal::{self, is_signal};
use super::unit::is_level;
use crate::compat::OptionExt;
use crate::error::{ensure, R};
use crate::json::Value;
use crate::wire::{self, Digest};

pub const STATEMENT_TYPE: &str = "application/vnd.in-toto+json";
/// §7.3 item 3: an attestation payload is at most 64 KiB.
pub const LIMIT: usize = 64 * 1024;

/// A verified attestation.
#[derive(Clone, Debug)]
pub struct Attestation {
    pub address: Digest,
    /// The subject's `sha256` (64 lowercase hex digits), the host's claim until a verifier holding
    /// the unit descriptor checks it (§7.1 item 3, §7.5).
    pub subject_sha256: String,
    pub predicate: Value,
    pub signers: Vec<String>,
}

impl Attestation {
    pub fn host(&self) -> &str {
        self.predicate.get("host").and_then(Value::as_str).unwrap_or("")
    }
    pub fn digest(&self, name: &str) -> Option<Digest> {
        self.predicate.get(name).and_then(|v| wire::parse_digest(v).ok())
    }
    pub fn audit_seq(&self) -> Option<i64> {
        self.predicate.get("audit_seq").and_then(Value::as_int)
    }
}

/// is_hex64 says whether a subject digest is 64 lowercase hexadecimal digits (§7.1 item 2).
fn is_hex64(h: &str) -> bool {
    h.len() == 64 && h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn statement_ok(s: &Value) -> bool {
    let subject_ok = |x: &Value| {
        wire::exact_members(x, &["name", "digest"])
            && x.get("name").and_then(Value::as_str) == Some("unit")
            && x.get("digest").has(|d| {
                wire::exact_members(d, &["blake3", "sha256"])
                    && ["blake3", "sha256"].iter().all(|alg| d.get(alg).and_then(Value::as_str).has(is_hex64))
            })
    };
    wire::exact_members(s, &["_type", "subject", "predicateType", "predicate"])
        && s.get("_type").and_then(Value::as_str) == Some("https://in-toto.io/Statement/v1")
        && s.get("predicateType").and_then(Value::as_str) == Some("https://sandbox-attest.dev/execution/v1")
        && s.get("subject").and_then(Value::as_arr).has(|a| a.len() == 1 && subject_ok(&a[0]))
}

/// stopped_ok: §7.2's optional `stopped`, a code `[A-Z][A-Za-z]{0,63}` (why the host stopped the unit).
fn stopped_ok(v: Option<&Value>) -> bool {
    v.none_or(|v| {
        v.as_str().has(|s| {
            let b = s.as_bytes();
            !b.is_empty() && b.len() <= 64 && b[0].is_ascii_uppercase() && b.iter().all(u8::is_ascii_alphabetic)
        })
    })
}

/// limits_ok: §7.2's optional `limits`, 1–3 of "disk", "memory", "pids", strictly ascending.
fn limits_ok(v: Option<&Value>) -> bool {
    v.none_or(|v| {
        v.as_arr().has(|a| {
            let names: Option<Vec<&str>> = a.iter().map(Value::as_str).collect();
            names.has(|n| {
                !n.is_empty()
                    && n.iter().all(|x| ["disk", "memory", "pids"].contains(x))
                    && n.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes())
            })
        })
    })
}

/// overshoot_ok: §7.2's optional `overshoot_uj`, an amount above 0 (the energy beyond the budget).
fn overshoot_ok(v: Option<&Value>) -> bool {
    v.none_or(|v| wire::parse_amount(v).is_ok_and(|n| n > 0))
}

/// ended_members: an exited or signaled outcome's members, its own one and the optional
/// `stopped`, `limits` and `overshoot_uj` (§7.2 item 2).
fn ended_members(o: &Value, own: &str) -> bool {
    let keys = o.keys();
    keys.iter().all(|k| ["status", own, "stopped", "limits", "overshoot_uj"].contains(k))
        && keys.contains(&own)
        && stopped_ok(o.get("stopped"))
        && limits_ok(o.get("limits"))
        && overshoot_ok(o.get("overshoot_uj"))
}

fn outcome_ok(o: &Value) -> bool {
    match o.get("status").and_then(Value::as_str) {
        Some("exited") => {
            ended_members(o, "exit_code") && o.get("exit_code").and_then(Value::as_int).has(|c| (0..=255).contains(&c))
        }
        Some("signaled") => {
            ended_members(o, "signal") && o.get("signal").and_then(Value::as_str).has(|s| is_signal(s) && s.len() <= 15)
        }
        Some("spawn_failed") => {
            wire::exact_members(o, &["status", "reason"])
                && o.get("reason").and_then(Value::as_str).has(|r| (1..=256).contains(&crate::wire::text_len(r)))
        }
        _ => false,
    }
}

const REQUIRED: &[&str] =
    &["unit_id", "grants_id", "manifest", "exec_policy", "energy", "journal", "outcome", "interval", "host", "level"];
const OPTIONAL: &[&str] = &["audit_prev", "audit_seq", "run_head"];

fn predicate_ok(p: &Value) -> bool {
    let keys = p.keys();
    let int = |v: Option<&Value>, min: i64| v.and_then(Value::as_int).has(|n| n >= min);
    let energy = p.get("energy").has(|e| {
        wire::exact_members(e, &["receipt", "total_uj", "provenance"])
            && e.get("receipt").has(wire::is_digest)
            && e.get("total_uj").has(|t| wire::parse_amount(t).is_ok())
            && e.get("provenance").and_then(Value::as_str).and_then(Provenance::parse).is_some()
    });
    let journal = p.get("journal").has(|j| {
        wire::exact_members(j, &["root", "events"]) && j.get("root").has(wire::is_digest) && int(j.get("events"), 0)
    });
    let interval = p.get("interval").has(|i| {
        wire::exact_members(i, &["start_ms", "end_ms"])
            && int(i.get("start_ms"), 0)
            && int(i.get("end_ms"), 0)
            && i.get("start_ms").and_then(Value::as_int) <= i.get("end_ms").and_then(Value::as_int)
    });
    p.is_obj()
        && REQUIRED.iter().all(|k| keys.contains(k))
        && keys.iter().all(|k| REQUIRED.contains(k) || OPTIONAL.contains(k))
        && ["unit_id", "grants_id", "manifest", "exec_policy"].iter().all(|k| p.get(k).has(wire::is_digest))
        && energy
        && journal
        && p.get("outcome").has(outcome_ok)
        && interval
        && p.get("host").has(wire::is_didkey)
        && p.get("level").has(is_level)
        && p.get("audit_prev").is_some() == p.get("audit_seq").is_some()
        && p.get("audit_prev").none_or(wire::is_digest)
        && p.get("audit_seq").none_or(|s| int(Some(s), 1))
        && p.get("run_head").none_or(wire::is_digest)
}

/// verify checks an attestation in the order of §7.4 items 1–3 (no bindings).
pub fn verify(env: &Value) -> R<Attestation> {
    let want = wire::Expect { payload_type: STATEMENT_TYPE, limit: LIMIT, signers: None };
    let o = wire::open_envelope(env, &want)?;
    ensure(o.payload.is_obj(), "BadEnvelope")?;
    ensure(statement_ok(&o.payload), "BadStatement")?;
    let p = o.payload.get("predicate").cloned().unwrap_or(Value::Null);
    ensure(predicate_ok(&p), "BadPredicate")?;
    let digests = o.payload.get("subject").and_then(|s| s.as_arr()).and_then(|a| a[0].get("digest"));
    let hex = digests.and_then(|d| d.get("blake3"));
    let subject_sha256 = digests.and_then(|d| d.get("sha256")).and_then(Value::as_str).unwrap_or("").to_string();
    let unit = p.get("unit_id").and_then(Value::as_str).unwrap_or("");
    ensure(hex.and_then(Value::as_str).map(|h| format!("blake3:{h}")).as_deref() == Some(unit), "SubjectMismatch")?;
    let host = p.get("host").and_then(Value::as_str).unwrap_or("");
    ensure(o.signers.iter().any(|s| s == host), "SignerNotHost")?;
    Ok(Attestation { address: o.address, subject_sha256, predicate: p, signers: o.signers })
}

/// check_bindings compares what the verifier knows with the predicate (§7.5 table order). A
/// member of `expect` that is absent is not known; `run_head` or `audit_prev` null means "none".
pub fn check_bindings(a: &Attestation, expect: &Value) -> R<()> {
    let p = &a.predicate;
    let same = |given: &str, have: Option<&Value>| match expect.get(given) {
        None => true,
        Some(v) => have.unwrap_or(&Value::Null) == v,
    };
    ensure(same("host", p.get("host")), "HostMismatch")?;
    ensure(same("unit_id", p.get("unit_id")), "UnitMismatch")?;
    if let Some(unit) = expect.get("unit") {
        // The descriptor itself: its address against unit_id, then the SHA-256 of the same
        // canonical bytes against the subject's sha256 (§7.5).
        ensure(a.digest("unit_id") == Some(wire::address(unit)), "UnitMismatch")?;
        let sha = wire::hex(&super::merkle::sha256(crate::json::canonical(unit).as_bytes()));
        ensure(sha == a.subject_sha256, "SubjectMismatch")?;
    }
    ensure(same("grants_id", p.get("grants_id")), "GrantsMismatch")?;
    ensure(same("manifest", p.get("manifest")), "ManifestMismatch")?;
    ensure(same("exec_policy", p.get("exec_policy")), "PolicyMismatch")?;
    let (e, j) = (p.get("energy").unwrap_or(&Value::Null), p.get("journal").unwrap_or(&Value::Null));
    ensure(same("receipt", e.get("receipt")) && same("total_uj", e.get("total_uj")), "ReceiptMismatch")?;
    ensure(same("journal_root", j.get("root")) && same("journal_events", j.get("events")), "JournalMismatch")?;
    ensure(same("run_head", p.get("run_head")), "RunHeadMismatch")?;
    ensure(same("audit_prev", p.get("audit_prev")), "AuditPrevMismatch")
}

/// verify_interval checks an attestation against its receipt and, when given, its journal (§7.5).
pub fn verify_interval(env: &Value, receipt: &Value, events: Option<&[Value]>) -> R<(Attestation, Digest)> {
    let a = verify(env)?;
    let p = &a.predicate;
    let host = vec![a.host().to_string()];
    let r = energy::verify_receipt(receipt, Some(&host))?;
    let e = p.get("energy").unwrap_or(&Value::Null);
    ensure(e.get("receipt").and_then(|v| wire::parse_digest(v).ok()) == Some(r.address), "ReceiptMismatch")?;
    ensure(a.digest("unit_id") == Some(r.unit_id), "UnitMismatch")?;
    ensure(a.digest("grants_id") == Some(r.grants_id), "GrantsMismatch")?;
    let iv = p.get("interval").unwrap_or(&Value::Null);
    let same_total = e.get("total_uj").and_then(Value::as_str) == Some(r.total_uj.to_string().as_str());
    let same_iv = iv.get("start_ms").and_then(Value::as_int) == Some(r.start_ms)
        && iv.get("end_ms").and_then(Value::as_int) == Some(r.end_ms);
    let same_prov = e.get("provenance").and_then(Value::as_str) == Some(r.provenance.name());
    ensure(same_total && same_iv && same_prov, "ReceiptMismatch")?;
    if let Some(evs) = events {
        let h = journal::head(evs)?;
        let j = p.get("journal").unwrap_or(&Value::Null);
        let ok = j.get("root").and_then(|v| wire::parse_digest(v).ok()) == Some(h.root)
            && j.get("events").and_then(Value::as_int) == Some(h.size as i64);
        ensure(ok, "JournalMismatch")?;
    }
    Ok((a, r.address))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(t: &str) -> bool {
        outcome_ok(&crate::json::parse_strict(t.as_bytes()).unwrap())
    }

    // §7.2 item 2 (spec changes from issues 14 and 17): optional `limits` and `stopped` on an
    // exited or signaled outcome, never on spawn_failed.
    #[test]
    fn outcome_limits_and_stopped() {
        assert!(ok(r#"{"status":"exited","exit_code":0}"#));
        assert!(ok(r#"{"status":"signaled","signal":"SIGKILL","limits":["memory"]}"#));
        assert!(ok(r#"{"status":"exited","exit_code":1,"limits":["disk","memory","pids"]}"#));
        assert!(ok(r#"{"status":"exited","exit_code":1,"stopped":"BudgetExhausted"}"#));
        assert!(ok(r#"{"status":"signaled","signal":"SIGTERM","stopped":"BudgetExhausted","limits":["pids"]}"#));
        assert!(ok(r#"{"status":"signaled","signal":"SIGTERM","stopped":"BudgetExhausted","overshoot_uj":"12"}"#));
        for bad in [
            r#"{"status":"exited","exit_code":1,"limits":[]}"#,
            r#"{"status":"exited","exit_code":1,"limits":["cpu"]}"#,
            r#"{"status":"exited","exit_code":1,"limits":["pids","memory"]}"#,
            r#"{"status":"exited","exit_code":1,"limits":["memory","memory"]}"#,
            r#"{"status":"exited","exit_code":1,"limits":"memory"}"#,
            r#"{"status":"spawn_failed","reason":"ENOENT","limits":["memory"]}"#,
            r#"{"status":"spawn_failed","reason":"ENOENT","stopped":"BudgetExhausted"}"#,
            r#"{"status":"exited","exit_code":1,"stopped":"budgetExhausted"}"#,
            r#"{"status":"exited","exit_code":1,"stopped":3}"#,
            r#"{"status":"exited","stopped":"BudgetExhausted"}"#,
            r#"{"status":"exited","exit_code":1,"overshoot_uj":"0"}"#,
            r#"{"status":"exited","exit_code":1,"overshoot_uj":12}"#,
            r#"{"status":"spawn_failed","reason":"ENOENT","overshoot_uj":"12"}"#,
        ] {
            assert!(!ok(bad), "{bad}");
        }
    }
}
