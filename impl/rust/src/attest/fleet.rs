//! §16 fleet records: items, the sum tree, receipts, membership and consistency proofs.

use crate::compat::OptionExt;
use crate::error::{ensure, fail, Code, R};
use crate::json::{self, Value};
use crate::wire::{self, Digest};

pub const RECEIPT_TYPE: &str = "application/vnd.sandbox-attest.fleet-receipt+json";

/// A node of the sum tree: (hash, energy sum).
pub type Node = (Digest, u64);

fn id_ok(s: &str) -> bool {
    let b = s.as_bytes();
    (1..=200).contains(&b.len())
        && b[0].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || b"._:/@+-".contains(c))
}

/// check_item checks an item's shape (§16.1, `BadFleetItem`) and returns its energy.
pub fn check_item(v: &Value) -> R<u64> {
    let ok = wire::exact_members(v, &["item", "head", "energy_uj", "outcome"])
        && v.get("item").and_then(Value::as_str).has(id_ok)
        && v.get("head").has(wire::is_digest)
        && v.get("outcome").and_then(Value::as_str).has(|o| ["completed", "failed", "abandoned"].contains(&o));
    ensure(ok, "BadFleetItem")?;
    wire::parse_amount(v.get("energy_uj").unwrap_or(&Value::Null)).map_err(|_| Code("BadFleetItem"))
}

/// leaf is (H(0x00 ‖ JCS(item)), energy_uj).
pub fn leaf(v: &Value) -> R<Node> {
    let e = check_item(v)?;
    let mut b = vec![0u8];
    b.extend_from_slice(&json::canonical_bytes(v));
    Ok((wire::blake3(&b), e))
}

/// node combines two children (§16.2), refusing a sum above 2⁶⁴−1 (`EnergyOverflow`).
pub fn node(l: &Node, r: &Node) -> R<Node> {
    let mut b = Vec::with_capacity(81);
    b.push(1u8);
    b.extend_from_slice(&l.0);
    b.extend_from_slice(&l.1.to_be_bytes());
    b.extend_from_slice(&r.0);
    b.extend_from_slice(&r.1.to_be_bytes());
    Ok((wire::blake3(&b), l.1.checked_add(r.1).ok_or(Code("EnergyOverflow"))?))
}

fn split(n: usize) -> usize {
    let mut k = 1;
    while k * 2 < n {
        k *= 2;
    }
    k
}

/// root computes the sum tree's root over leaves (empty: (H(""), 0)).
pub fn root(leaves: &[Node]) -> R<Node> {
    match leaves.len() {
        0 => Ok((wire::blake3(b""), 0)),
        1 => Ok(leaves[0]),
        n => {
            let k = split(n);
            node(&root(&leaves[..k])?, &root(&leaves[k..])?)
        }
    }
}

/// path_len is the length of PATH(m, D[n]).
pub fn path_len(m: u64, n: u64) -> usize {
    if n <= 1 {
        return 0;
    }
    let k = split(n as usize) as u64;
    1 + if m < k { path_len(m, k) } else { path_len(m - k, n - k) }
}

/// proof_len is the length of PROOF(m, D[n]).
pub fn proof_len(m: u64, n: u64) -> usize {
    fn sub(m: u64, n: u64, b: bool) -> usize {
        if m == n {
            return usize::from(!b);
        }
        let k = split(n as usize) as u64;
        1 + if m <= k { sub(m, k, b) } else { sub(m - k, n - k, false) }
    }
    if m == 0 || m > n {
        return 0;
    }
    sub(m, n, true)
}

/// A verified fleet receipt.
pub struct Receipt {
    pub fleet: String,
    pub host: String,
    pub size: u64,
    pub root: Node,
    pub start_ms: i64,
    pub end_ms: i64,
}

/// receipt_value builds the receipt payload of a fleet (the object a host signs, §16.3).
pub fn receipt_value(fleet: &str, host: &str, items: &[Value], start_ms: i64, end_ms: i64) -> R<Value> {
    let mut leaves = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for it in items {
        leaves.push(leaf(it)?);
        let id = it.get("item").and_then(Value::as_str).unwrap_or("");
        ensure(!seen.contains(&id), "DuplicateFleetItem")?;
        seen.push(id);
    }
    let (h, sum) = root(&leaves)?;
    Ok(Value::obj(vec![
        ("kind", Value::str("fleet")),
        ("fleet", Value::str(fleet)),
        ("host", Value::str(host)),
        ("size", Value::Num(leaves.len() as f64)),
        ("root", wire::digest_value(&h)),
        ("total_uj", wire::amount(sum)),
        ("start_ms", Value::int(start_ms)),
        ("end_ms", Value::int(end_ms)),
    ]))
}

/// open_receipt verifies a signed fleet receipt (§16.3), accepting only signers in `hosts`.
pub fn open_receipt(env: &Value, hosts: &[String]) -> R<Receipt> {
    let want = wire::Expect { payload_type: RECEIPT_TYPE, limit: json::DEFAULT_LIMIT, signers: Some(hosts) };
    let o = wire::open_envelope(env, &want)?;
    let p = &o.payload;
    let int = |n: &str| p.get(n).and_then(Value::as_int).filter(|x| *x >= 0);
    let ok = wire::exact_members(p, &["kind", "fleet", "host", "size", "root", "total_uj", "start_ms", "end_ms"])
        && p.get("kind").and_then(Value::as_str) == Some("fleet")
        && p.get("fleet").and_then(Value::as_str).has(id_ok)
        && p.get("host").has(wire::is_didkey)
        && p.get("root").has(wire::is_digest)
        && p.get("total_uj").has(|t| wire::parse_amount(t).is_ok())
        && int("size").is_some()
        && int("start_ms").is_some()
        && int("end_ms").has(|e| Some(e) >= int("start_ms"));
    ensure(ok, "BadFleetReceipt")?;
    let host = p.get("host").and_then(Value::as_str).unwrap_or("").to_string();
    ensure(o.signers.contains(&host), "BadFleetReceipt")?;
    Ok(Receipt {
        fleet: p.get("fleet").and_then(Value::as_str).unwrap_or("").to_string(),
        host,
        size: int("size").unwrap_or(0) as u64,
        root: (
            wire::parse_digest(&p.get("root").cloned().unwrap_or(Value::Null))?,
            wire::parse_amount(&p.get("total_uj").cloned().unwrap_or(Value::Null))?,
        ),
        start_ms: int("start_ms").unwrap_or(0),
        end_ms: int("end_ms").unwrap_or(0),
    })
}

fn nodes(v: &Value) -> R<Vec<Node>> {
    let a = v.as_arr().ok_or(Code("BadFleetReceipt"))?;
    a.iter()
        .map(|n| {
            let ok = wire::exact_members(n, &["hash", "uj"]);
            let h = n.get("hash").and_then(|x| wire::parse_digest(x).ok());
            let u = n.get("uj").and_then(|x| wire::parse_amount(x).ok());
            match (ok, h, u) {
                (true, Some(h), Some(u)) => Ok((h, u)),
                _ => fail("BadFleetReceipt"),
            }
        })
        .collect()
}

fn size_of(p: &Value, n: &str) -> R<u64> {
    p.get(n).and_then(Value::as_int).filter(|x| *x >= 0).map(|x| x as u64).ok_or(Code("BadFleetReceipt"))
}

/// verify_membership checks a membership proof against a verified receipt (§16.4).
pub fn verify_membership(r: &Receipt, proof: &Value) -> R<(u64, String, u64)> {
    ensure(wire::exact_members(proof, &["kind", "index", "size", "item", "path"]), "BadFleetReceipt")?;
    ensure(proof.get("kind").and_then(Value::as_str) == Some("fleet-membership"), "BadFleetReceipt")?;
    let (index, size) = (size_of(proof, "index")?, size_of(proof, "size")?);
    ensure(size == r.size, "FleetProofSize")?;
    ensure(index < size, "FleetIndexRange")?;
    let item = proof.get("item").unwrap_or(&Value::Null);
    let mut acc = leaf(item)?;
    // §16.4: the path's length first, then each node's form (`BadFleetReceipt`).
    let raw = proof.get("path").unwrap_or(&Value::Null);
    ensure(raw.as_arr().ok_or(Code("BadFleetReceipt"))?.len() == path_len(index, size), "FleetProofSize")?;
    let path = nodes(raw)?;
    let (mut f, mut s) = (index, size - 1);
    for p in &path {
        if f & 1 == 1 || f == s {
            acc = node(p, &acc)?;
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            acc = node(&acc, p)?;
        }
        f >>= 1;
        s >>= 1;
    }
    ensure(acc.0 == r.root.0, "FleetRootMismatch")?;
    ensure(acc.1 == r.root.1, "FleetSumMismatch")?;
    let id = item.get("item").and_then(Value::as_str).unwrap_or("").to_string();
    Ok((index, id, item.get("energy_uj").and_then(|e| wire::parse_amount(e).ok()).unwrap_or(0)))
}

/// verify_consistency checks that r2 is an append-only extension of r1 (§16.5).
pub fn verify_consistency(r1: &Receipt, r2: &Receipt, proof: &Value) -> R<()> {
    ensure(wire::exact_members(proof, &["kind", "size1", "size2", "path"]), "BadFleetReceipt")?;
    ensure(proof.get("kind").and_then(Value::as_str) == Some("fleet-consistency"), "BadFleetReceipt")?;
    let (m, n) = (size_of(proof, "size1")?, size_of(proof, "size2")?);
    ensure(m == r1.size && n == r2.size, "FleetProofSize")?;
    const NA: &str = "FleetNotAppend";
    ensure(r1.fleet == r2.fleet && r1.host == r2.host, NA)?;
    ensure(m <= n && r2.start_ms <= r1.start_ms && r1.end_ms <= r2.end_ms, NA)?;
    let path = nodes(proof.get("path").unwrap_or(&Value::Null))?;
    // From size 0: only an empty path, and the empty tree's root and sum as the earlier receipt's.
    if m == 0 {
        return ensure(path.is_empty() && r1.root == root(&[])?, NA);
    }
    if m == n {
        return ensure(path.is_empty() && r1.root == r2.root, NA);
    }
    // A path of the wrong length does not reproduce the roots: FleetNotAppend (§16.5).
    ensure(path.len() == proof_len(m, n), NA)?;
    let mut p = Vec::with_capacity(path.len() + 1);
    if m.is_power_of_two() {
        p.push(r1.root);
    }
    p.extend_from_slice(&path);
    let (mut f, mut s) = (m - 1, n - 1);
    while f & 1 == 1 {
        f >>= 1;
        s >>= 1;
    }
    let (mut fr, mut sr) = (p[0], p[0]);
    for c in &p[1..] {
        ensure(s != 0, NA)?;
        if f & 1 == 1 || f == s {
            fr = node(c, &fr)?;
            sr = node(c, &sr)?;
            while f & 1 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            sr = node(&sr, c)?;
        }
        f >>= 1;
        s >>= 1;
    }
    ensure(fr == r1.root && sr == r2.root && s == 0, NA)
}
