//! §7.7 the audit chain of a steward's domain.

use super::attestation::{self, Attestation};
use crate::compat::OptionExt;
use crate::error::{ensure, fail, R};
use crate::json::Value;
use crate::wire::{self, Digest};

/// genesis is head₀ = BLAKE3("sandbox.audit/1" ‖ domain).
pub fn genesis(domain: &Digest) -> Digest {
    wire::chain_genesis("sandbox.audit/1", &[*domain])
}

/// The result of a verified stretch.
pub struct Stretch {
    pub head: Digest,
    pub seq: i64,
    pub count: usize,
}

fn carries(a: &Attestation, head: &Digest, seq: i64) -> bool {
    a.digest("audit_prev") == Some(*head) && a.audit_seq() == Some(seq)
}

/// classify names the break at index i where the expected link is (head, seq) (§7.7 item 4).
fn classify(list: &[Attestation], i: usize, head: &Digest, seq: i64) -> &'static str {
    let a = &list[i];
    let cites = a.digest("audit_prev");
    if list[i + 1..].iter().any(|x| Some(x.address) == cites) {
        return "AuditReorder";
    }
    if list.get(i + 1).has(|n| carries(n, head, seq)) {
        return "AuditInsert";
    }
    if a.audit_seq() == Some(seq) {
        return "AuditSplice";
    }
    if list[i + 1..].iter().any(|x| carries(x, head, seq)) {
        return "AuditReorder";
    }
    if a.audit_seq().has(|s| s > seq) {
        return "AuditGap";
    }
    "AuditInsert"
}

/// open verifies one attestation (§7.4), then its link (`AuditUnlinked`) and its predicate's host
/// among the domain's (`AuditSplice`): §7.7 item 4, attestation by attestation.
fn open(env: &Value, hosts: Option<&[String]>) -> R<Attestation> {
    let a = attestation::verify(env)?;
    ensure(a.predicate.get("audit_prev").is_some(), "AuditUnlinked")?;
    ensure(hosts.none_or(|h| h.iter().any(|x| x == a.host())), "AuditSplice")?;
    Ok(a)
}

/// verify checks a stretch of a domain's chain from (head, seq) (§7.7 item 4).
pub fn verify(envs: &[Value], domain: &Digest, hosts: Option<&[String]>, from: Option<(Digest, i64)>) -> R<Stretch> {
    let list: Vec<Attestation> = envs.iter().map(|e| open(e, hosts)).collect::<R<_>>()?;
    // In sequence order, each attestation: not a repeat (`AuditInsert`), then not citing a
    // predecessor an earlier one cites (`AuditFork`).
    for (i, a) in list.iter().enumerate() {
        ensure(!list[..i].iter().any(|b| b.address == a.address), "AuditInsert")?;
        ensure(!list[..i].iter().any(|b| b.digest("audit_prev") == a.digest("audit_prev")), "AuditFork")?;
    }
    let (mut head, mut seq) = from.unwrap_or((genesis(domain), 0));
    for i in 0..list.len() {
        if !carries(&list[i], &head, seq + 1) {
            return fail(classify(&list, i, &head, seq + 1));
        }
        head = list[i].address;
        seq += 1;
    }
    Ok(Stretch { head, seq, count: list.len() })
}
