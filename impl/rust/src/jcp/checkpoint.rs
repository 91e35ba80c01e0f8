//! JCP §4.7 checkpoint logs: the holder's checkpoints and the issuer's amendments.

use super::chain::{narrows, resolve, verify_chain};
use super::grant::{Budget, Effective};
use super::pattern::check_lists;
use crate::compat::OptionExt;
use crate::error::{ensure, fail, Code, R};
use crate::json::Value;
use crate::wire::{self, Digest};

pub const CHECKPOINT_TYPE: &str = "application/vnd.jcp.checkpoint+json";
pub const AMENDMENT_TYPE: &str = "application/vnd.jcp.amendment+json";
/// Entries are bounded like other JCP records (the spec states no figure; 8192 bytes).
pub const LIMIT: usize = 8192;

const COMMON: &[&str] = &["grant", "seq", "prev", "at_ms", "by"];

/// What checkpoint.verify is given.
pub struct Input<'a> {
    pub chain: &'a [Value],
    pub roots: &'a [String],
    pub at_ms: u64,
    pub entries: &'a [Value],
    /// The grant whose log this is: an index into the chain (root 0); None for the leaf.
    pub log_of: Option<usize>,
    pub prefix: Option<(usize, Digest)>,
}

/// The verified log: head, length, amendments, and the chain's grants in force.
pub struct Log {
    pub head: Digest,
    pub length: usize,
    pub amendments: usize,
    pub grants: Vec<Effective>,
}

fn has_exactly(p: &Value, extra: &[&str]) -> bool {
    let keys = p.keys();
    p.is_obj()
        && keys.len() == COMMON.len() + extra.len()
        && keys.iter().all(|k| COMMON.contains(k) || extra.contains(k))
}

fn common_ok(p: &Value) -> bool {
    p.get("grant").has(wire::is_digest)
        && p.get("prev").has(wire::is_digest)
        && p.get("by").has(wire::is_didkey)
        && p.get("seq").and_then(Value::as_int).has(|n| n >= 1)
        && p.get("at_ms").and_then(Value::as_int).has(|n| n >= 0)
}

fn spent(p: &Value) -> Option<(u64, u64, u64)> {
    let s = p.get("spent")?;
    if !wire::exact_members(s, &["uj", "calls", "wall_ms"]) {
        return None;
    }
    let i = |n: &str| s.get(n).and_then(Value::as_int).filter(|x| *x >= 0).map(|x| x as u64);
    Some((wire::parse_amount(s.get("uj")?).ok()?, i("calls")?, i("wall_ms")?))
}

fn checkpoint_form(p: &Value) -> R<()> {
    let ok = has_exactly(p, &["state", "spent", "amendments"])
        && common_ok(p)
        && p.get("state").has(wire::is_digest)
        && spent(p).is_some()
        && p.get("amendments").and_then(Value::as_int).has(|n| n >= 0);
    ensure(ok, "BadCheckpoint")
}

const SET_MEMBERS: &[&str] = &["resources", "actions", "uj", "calls", "wall_ms", "exp_ms", "depth"];

fn amendment_form(p: &Value) -> R<()> {
    let set = p.get("set");
    let ok = has_exactly(p, &["responds_to", "set"])
        && common_ok(p)
        && p.get("responds_to").has(wire::is_digest)
        && set.has(|s| s.is_obj() && !s.keys().is_empty() && s.keys().iter().all(|k| SET_MEMBERS.contains(k)));
    ensure(ok, "BadAmendment")
}

fn list(v: &Value) -> R<Vec<String>> {
    let a = v.as_arr().ok_or(Code("BadAmendment"))?;
    a.iter().map(|x| x.as_str().map(str::to_string).ok_or(Code("BadAmendment"))).collect()
}

fn nat(v: &Value) -> R<u64> {
    v.as_int().filter(|n| *n >= 0).map(|n| n as u64).ok_or(Code("BadAmendment"))
}

/// apply_set replaces each member of `set` in the grant in force.
fn apply_set(e: &Effective, set: &Value) -> R<Effective> {
    let mut n = e.clone();
    for (k, v) in set.as_obj().ok_or(Code("BadAmendment"))? {
        match k.as_str() {
            "resources" => n.scope.resources = list(v)?,
            "actions" => n.scope.actions = list(v)?,
            "uj" => n.budget.uj = Some(wire::parse_amount(v).map_err(|_| Code("BadAmendment"))?),
            "calls" => n.budget.calls = Some(nat(v)?),
            "wall_ms" => n.budget.wall_ms = Some(nat(v)?),
            "exp_ms" => n.exp_ms = nat(v)?,
            "depth" => n.depth = nat(v).and_then(|d| if d <= 15 { Ok(d) } else { fail("BadAmendment") })?,
            _ => return fail("BadAmendment"),
        }
    }
    check_lists(Some(&n.scope.resources), Some(&n.scope.actions), "BadAmendment")?;
    Ok(n)
}

fn below_spent(b: &Budget, s: (u64, u64, u64)) -> bool {
    b.uj.has(|l| l < s.0) || b.calls.has(|l| l < s.1) || b.wall_ms.has(|l| l < s.2)
}

/// The walk's state.
struct Walk {
    force: Effective,
    amendments: usize,
    last_cp: Option<(Digest, (u64, u64, u64))>,
}

fn checkpoint_rules(w: &mut Walk, p: &Value, addr: Digest, by: &str) -> R<()> {
    ensure(by == w.force.holder, "NotHolder")?;
    let n = p.get("amendments").and_then(Value::as_int).unwrap_or(0) as usize;
    ensure(n >= w.amendments, "UnacknowledgedAmendment")?;
    ensure(n == w.amendments, "BadCheckpoint")?;
    let s = spent(p).ok_or(Code("BadCheckpoint"))?;
    if let Some((_, prev)) = w.last_cp {
        ensure(s.0 >= prev.0 && s.1 >= prev.1 && s.2 >= prev.2, "BadCheckpoint")?;
    }
    w.last_cp = Some((addr, s));
    Ok(())
}

fn amendment_rules(w: &mut Walk, p: &Value, by: &str) -> R<()> {
    ensure(by == w.force.issuer, "SeparationOfDuties")?;
    let (cp, s) = w.last_cp.ok_or(Code("BadAmendment"))?;
    ensure(p.get("responds_to").and_then(|v| wire::parse_digest(v).ok()) == Some(cp), "BadAmendment")?;
    let next = apply_set(&w.force, p.get("set").ok_or(Code("BadAmendment"))?)?;
    ensure(next.depth <= w.force.depth, "AmendmentWidens")?;
    narrows(&w.force, &next).map_err(|_| Code("AmendmentWidens"))?;
    ensure(next.nbf_ms < next.exp_ms, "BadAmendment")?;
    ensure(!below_spent(&next.budget, s), "BudgetBelowSpent")?;
    w.force = next;
    w.amendments += 1;
    Ok(())
}

/// verify replays the log of one grant of the chain and verifies the chain with the grant in
/// force (§4.7), at `at_ms`.
pub fn verify(i: &Input) -> R<Log> {
    let resolved = resolve(i.chain, i.roots, None)?;
    let idx = i.log_of.unwrap_or(resolved.len() - 1);
    let orig = resolved.get(idx).ok_or(Code("BadInput"))?.1.clone();
    let target = orig.address;
    ensure(orig.issuer != orig.holder, "NotAmendable")?;
    let mut w = Walk { force: orig, amendments: 0, last_cp: None };
    let mut head = wire::chain_genesis("jcp.checkpointlog/1", &[target]);
    let mut last_at = 0u64;
    let mut prefix_ok = i.prefix.none_or(|(n, h)| n == 0 && h == head);
    for (n, env) in i.entries.iter().enumerate() {
        let e = wire::parse_envelope_of(env, |t| t == CHECKPOINT_TYPE || t == AMENDMENT_TYPE)?;
        let is_cp = e.payload_type == CHECKPOINT_TYPE;
        ensure(e.payload.len() <= LIMIT, if is_cp { "BadCheckpoint" } else { "BadAmendment" })?;
        let signers = e.verify_signatures()?;
        let p = crate::json::parse_canonical(&e.payload, LIMIT)?;
        if is_cp {
            checkpoint_form(&p)?
        } else {
            amendment_form(&p)?
        }
        let at = p.get("at_ms").and_then(Value::as_int).unwrap_or(0) as u64;
        let linked = p.get("grant").and_then(|v| wire::parse_digest(v).ok()) == Some(target)
            && p.get("seq").and_then(Value::as_int) == Some(n as i64 + 1)
            && p.get("prev").and_then(|v| wire::parse_digest(v).ok()) == Some(head)
            && (n == 0 || at >= last_at);
        ensure(linked, "BrokenCheckpointLog")?;
        let by = p.get("by").and_then(Value::as_str).unwrap_or("");
        ensure(signers.len() == 1 && signers[0] == by, "BadSignature")?;
        if is_cp {
            checkpoint_rules(&mut w, &p, wire::blake3(&e.payload), by)?;
        } else {
            amendment_rules(&mut w, &p, by)?;
        }
        last_at = at;
        head = wire::chain_next(&head, &p);
        if let Some((len, h)) = i.prefix {
            if len == n + 1 {
                prefix_ok = h == head;
            }
        }
    }
    ensure(prefix_ok, "BrokenCheckpointLog")?;
    let force = w.force.clone();
    let hook = move |e: &Effective| -> R<Effective> {
        if e.address != target {
            return Ok(e.clone());
        }
        // Re-derive the grant in force from this resolution: replace what the amendments set.
        let mut f = e.clone();
        f.scope = force.scope.clone();
        f.budget = force.budget;
        f.exp_ms = force.exp_ms;
        f.depth = force.depth;
        Ok(f)
    };
    let grants = verify_chain(i.chain, i.roots, i.at_ms, &[], Some(&hook))?;
    Ok(Log { head, length: i.entries.len(), amendments: w.amendments, grants })
}
