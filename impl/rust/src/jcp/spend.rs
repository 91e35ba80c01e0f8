//! JCP §4.3 spend receipts and their replay.

use super::chain::{verify_chain, Hook};
use super::grant::{open_grant, Budget, Effective};
use super::revoke::Revocation;
use crate::compat::OptionExt;
use crate::error::{ensure, Code, R};
use crate::json::Value;
use crate::wire::{self, Digest};
use std::collections::BTreeMap;

pub const SPEND_TYPE: &str = "application/vnd.jcp.spend+json";
/// §4.3: a receipt payload is at most 4096 bytes.
pub const SPEND_LIMIT: usize = 4096;

const MEMBERS: &[&str] = &["grant", "seq", "prev", "uj", "calls", "wall_ms", "at_ms", "host"];
/// §4.3: members a receipt MAY carry besides the eight.
const OPTIONAL: &[&str] = &["cites", "overshoot_uj"];

/// members_ok: every one of the eight members, and no member but those and the optional ones.
fn members_ok(p: &Value) -> bool {
    let keys = p.keys();
    p.is_obj()
        && MEMBERS.iter().all(|m| keys.contains(m))
        && keys.iter().all(|k| MEMBERS.contains(k) || OPTIONAL.contains(k))
}

/// overshoot_ok: §4.3's optional `overshoot_uj` is an amount above 0.
fn overshoot_ok(v: Option<&Value>) -> bool {
    v.none_or(|o| wire::parse_amount(o).is_ok_and(|n| n > 0))
}

/// cites_ok: §4.3's optional `cites` is exactly `{attestation, energy}`, both digests.
fn cites_ok(v: Option<&Value>) -> bool {
    v.none_or(|c| {
        wire::exact_members(c, &["attestation", "energy"])
            && c.get("attestation").has(wire::is_digest)
            && c.get("energy").has(wire::is_digest)
    })
}

/// form is the receipt's form (§4.3, `BadReceipt`): the eight members, and optionally `cites` and
/// `overshoot_uj`.
fn form(p: &Value) -> R<()> {
    let int = |n: &str, min: i64| p.get(n).and_then(Value::as_int).has(|x| x >= min);
    let ok = members_ok(p)
        && cites_ok(p.get("cites"))
        && overshoot_ok(p.get("overshoot_uj"))
        && p.get("grant").has(wire::is_digest)
        && p.get("prev").has(wire::is_digest)
        && p.get("uj").has(|v| wire::parse_amount(v).is_ok())
        && int("seq", 1)
        && int("calls", 0)
        && int("wall_ms", 0)
        && int("at_ms", 0)
        && p.get("host").has(wire::is_didkey);
    ensure(ok, "BadReceipt")
}

/// Per-leaf receipt chain state: head, last seq, last time.
struct LeafState {
    head: Digest,
    seq: i64,
    at_ms: u64,
}

/// What replay was given.
pub struct Replay<'a> {
    pub grants: &'a [Value],
    pub roots: &'a [String],
    pub hosts: &'a [String],
    pub revocations: &'a [Revocation],
    pub hook: Option<Hook<'a>>,
}

/// Used amounts per grant, per dimension.
type Used = BTreeMap<Digest, (u64, u64, u64)>;

/// chain_to collects the envelopes from the root down to `leaf` by parent addresses (`BrokenChain`
/// for a missing grant or a loop), opening each grant (§4.1 codes) only as the walk reaches it.
fn chain_to(by_addr: &BTreeMap<Digest, &Value>, leaf: Digest) -> R<Vec<Value>> {
    let mut out = Vec::new();
    let mut at = Some(leaf);
    while let Some(a) = at {
        let env = *by_addr.get(&a).ok_or(Code("BrokenChain"))?;
        let parent = open_grant(env)?.parent;
        out.push(env.clone());
        ensure(out.len() <= super::chain::MAX_CHAIN, "ChainTooLong")?;
        at = parent;
    }
    out.reverse();
    Ok(out)
}

fn over(limit: Option<u64>, used: u64) -> bool {
    limit.has(|l| used > l)
}

fn debit(used: &mut Used, chain: &[Effective], uj: u64, calls: u64, wall: u64) -> R<()> {
    for g in chain {
        let u = used.entry(g.address).or_insert((0, 0, 0));
        *u = (wire::add(u.0, uj)?, wire::add(u.1, calls)?, wire::add(u.2, wall)?);
        let b: &Budget = &g.budget;
        ensure(!(over(b.uj, u.0) || over(b.calls, u.1) || over(b.wall_ms, u.2)), "Overspend")?;
    }
    Ok(())
}

/// remainder is what is left along a chain (§4.3 "Overshoot"): the least of budget − used in µJ over
/// its grants, 0 when any is spent out; None when no grant limits µJ.
fn remainder(used: &Used, chain: &[Effective]) -> Option<u64> {
    chain
        .iter()
        .filter_map(|g| g.budget.uj.map(|b| b.saturating_sub(used.get(&g.address).map_or(0, |u| u.0))))
        .min()
}

/// replay verifies receipts in order (§4.3 "Verifying spend") and returns the remaining budget of
/// every grant a receipt debited, by address: `{uj, calls, wall_ms}`, unlimited as null; and the
/// overshoot recorded under each grant (§4.3 "Overshoot"), by address, only where above 0.
pub fn replay(r: &Replay, receipts: &[Value]) -> R<(Value, Value)> {
    // §4.3: the grants given are a store indexed by address (the digest of the payload decoded
    // from canonical base64, `BadEnvelope` otherwise); a grant is opened only when a receipt's
    // chain reaches it.
    let mut by_addr: BTreeMap<Digest, &Value> = BTreeMap::new();
    for env in r.grants {
        let bytes = env.get("payload").and_then(Value::as_str).and_then(wire::b64_decode).ok_or(Code("BadEnvelope"))?;
        by_addr.entry(wire::blake3(&bytes)).or_insert(env);
    }
    let mut leaves: BTreeMap<Digest, LeafState> = BTreeMap::new();
    let mut used: Used = BTreeMap::new();
    let mut last: BTreeMap<Digest, Effective> = BTreeMap::new();
    let mut overshoot: BTreeMap<Digest, u64> = BTreeMap::new();
    for env in receipts {
        let o = wire::open_signed_by(env, SPEND_TYPE, SPEND_LIMIT, "BadReceipt", "host", form)?;
        let p = &o.payload;
        let host = p.get("host").and_then(Value::as_str).unwrap_or("");
        ensure(r.hosts.iter().any(|h| h == host), "UntrustedHost")?;
        let leaf = wire::parse_digest(p.get("grant").ok_or(Code("BadReceipt"))?)?;
        let at = p.get("at_ms").and_then(Value::as_int).unwrap_or(0) as u64;
        let st = leaves.entry(leaf).or_insert(LeafState {
            head: wire::chain_genesis("jcp.spend/1", &[leaf]),
            seq: 0,
            at_ms: 0,
        });
        let prev_ok = p.get("prev").and_then(|v| wire::parse_digest(v).ok()) == Some(st.head);
        let seq_ok = p.get("seq").and_then(Value::as_int) == Some(st.seq + 1);
        ensure(prev_ok && seq_ok && (st.seq == 0 || at >= st.at_ms), "BrokenReceiptChain")?;
        st.head = wire::chain_next(&st.head, p);
        st.seq += 1;
        st.at_ms = at;
        let chain = verify_chain(&chain_to(&by_addr, leaf)?, r.roots, at, r.revocations, r.hook)?;
        let amt = |n: &str| p.get(n).and_then(Value::as_int).unwrap_or(0) as u64;
        let uj = wire::parse_amount(p.get("uj").ok_or(Code("BadReceipt"))?)?;
        if let Some(o) = p.get("overshoot_uj") {
            // A receipt stating an overshoot debits exactly the remainder along its chain.
            ensure(remainder(&used, &chain) == Some(uj), "BadOvershoot")?;
            let o = wire::parse_amount(o)?;
            for g in &chain {
                let e = overshoot.entry(g.address).or_insert(0);
                *e = wire::add(*e, o)?;
            }
        }
        debit(&mut used, &chain, uj, amt("calls"), amt("wall_ms"))?;
        for g in chain {
            last.insert(g.address, g);
        }
    }
    let rem = |l: Option<u64>, u: u64| l.map(|l| l - u);
    let mut out = Vec::new();
    for (addr, (uj, calls, wall)) in &used {
        let b = last[addr].budget;
        let int = |x: Option<u64>| x.map(|n| Value::Num(n as f64)).unwrap_or(Value::Null);
        out.push((
            wire::digest_text(addr),
            Value::obj(vec![
                ("uj", rem(b.uj, *uj).map(wire::amount).unwrap_or(Value::Null)),
                ("calls", int(rem(b.calls, *calls))),
                ("wall_ms", int(rem(b.wall_ms, *wall))),
            ]),
        ));
    }
    let over = overshoot.iter().map(|(a, n)| (wire::digest_text(a), wire::amount(*n))).collect();
    Ok((Value::Obj(out), Value::Obj(over)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt(extra: &str) -> Value {
        let d = format!("blake3:{}", "a".repeat(64));
        let host = wire::didkey_encode(&wire::testkey_public("host"));
        let t = format!(
            r#"{{"grant":"{d}","seq":1,"prev":"{d}","uj":"1","calls":1,"wall_ms":0,"at_ms":0,"host":"{host}"{extra}}}"#
        );
        crate::json::parse_strict(t.as_bytes()).unwrap()
    }

    // jcp §4.3 (spec change from issue 17): an optional `cites` of exactly two digests.
    #[test]
    fn cites_form() {
        let d = format!("blake3:{}", "b".repeat(64));
        assert_eq!(form(&receipt("")), Ok(()));
        assert_eq!(form(&receipt(&format!(r#","cites":{{"attestation":"{d}","energy":"{d}"}}"#))), Ok(()));
        for bad in [
            format!(r#","cites":{{"attestation":"{d}","energy":"{d}","x":1}}"#),
            format!(r#","cites":{{"attestation":"{d}"}}"#),
            format!(r#","cites":{{"attestation":"{d}","energy":"sha256:00"}}"#),
            format!(r#","cites":["{d}","{d}"]"#),
            r#","cites":null"#.to_string(),
        ] {
            assert_eq!(form(&receipt(&bad)), Err(Code("BadReceipt")), "{bad}");
        }
    }

    // jcp §4.3 "Overshoot": an optional `overshoot_uj`, an amount above 0.
    #[test]
    fn overshoot_form() {
        assert_eq!(form(&receipt(r#","overshoot_uj":"5""#)), Ok(()));
        for bad in [r#","overshoot_uj":"0""#, r#","overshoot_uj":5"#, r#","overshoot_uj":"-1""#, r#","overshoot_uj":null"#] {
            assert_eq!(form(&receipt(bad)), Err(Code("BadReceipt")), "{bad}");
        }
    }
}
