//! C2–C10 ops: sandbox-attest §4–§16.

use super::input::{need, need_arr};
use crate::attest::{
    attestation, audit, energy, execpolicy, fleet, fstree, journal, manifest, merkle, runrecord, unit, warmpool,
};
use crate::error::{ensure, Code, R};
use crate::json::Value;
use crate::wire;

static NULL: Value = Value::Null;

/// member returns the member `name`, or null when absent (so the verifier, not the adapter,
/// decides what a missing part means).
pub fn member<'a>(input: &'a Value, name: &str) -> &'a Value {
    input.get(name).unwrap_or(&NULL)
}

/// call performs a C2–C10 op, or returns None when `op` is not one.
pub fn call(op: &str, input: &Value) -> Option<R<Value>> {
    let m = |n: &str| member(input, n);
    Some(match op {
        "journal.head" => need_arr(input, "events")
            .and_then(|e| journal::head(e))
            .map(|h| Value::obj(vec![("head", journal::head_value(&h))])),
        "journal.verify" => journal_verify(input),
        "journal.prove" => journal_prove(input),
        "journal.verify_inclusion" => journal::verify_inclusion(m("head"), m("event"), m("proof")).map(|_| Value::Null),
        "journal.verify_consistency" => {
            journal::verify_consistency(m("older"), m("newer"), m("path")).map(|_| Value::Null)
        }
        "energy.chain.genesis" => energy_genesis(input),
        "energy.component.check" => energy::check_component(m("component"))
            .map(|(uj, p)| Value::obj(vec![("uj", wire::amount(uj)), ("provenance", Value::str(p.name()))])),
        "energy.receipt.verify" => receipt_verify(input),
        "energy.chain.verify" => energy_chain(input),
        "unit.address" => unit::unit_id(m("unit")).map(|d| Value::obj(vec![("unit_id", wire::digest_value(&d))])),
        "attestation.verify" => attestation_verify(input),
        "attestation.verify_interval" => attestation_interval(input),
        "audit.verify" => audit_verify(input),
        "runrecord.genesis" => runrecord_genesis(input),
        "runrecord.verify" => runrecord_verify(input),
        "runrecord.append" => runrecord_append(input),
        "runrecord.resume" => runrecord_resume(input),
        "runrecord.energy" => runrecord_energy(input),
        "fstree.root" => fstree_root(input),
        "fstree.parse_dir" => fstree_parse_dir(input),
        "fleet.build" => fleet_build(input),
        "fleet.verify_membership" => fleet_membership(input),
        "fleet.verify_consistency" => fleet_consistency(input),
        "warmpool.verify" => warmpool_verify(input),
        "warmpool.claim_charged" => required_hosts(input)
            .and_then(|hs| warmpool::claim_charged(m("ledger"), Some(&hs), m("claim"), m("receipt")))
            .map(|_| Value::Null),
        "execpolicy.open" => execpolicy_open(input),
        "execpolicy.make" => execpolicy::make(m("mode"), m("allow"), m("deny")).map(policy_out),
        "execpolicy.decide" => execpolicy::decide(m("policy"), m("digest").as_str().unwrap_or(""))
            .map(|(a, r)| Value::obj(vec![("allowed", Value::Bool(a)), ("rule", Value::str(r))])),
        "manifest.ingest" => source(input).and_then(|b| manifest::ingest(&b).map_err(|r| Code(r.code))),
        "manifest.refusals" => manifest_refusals(input),
        "manifest.verify" => manifest_verify(input),
        "manifest.satisfies" => manifest_satisfies(input),
        "merkle.sha256.root" => sha_root(input),
        "merkle.sha256.verify_inclusion" => sha_inclusion(input),
        "merkle.sha256.verify_consistency" => sha_consistency(input),
        _ => return None,
    })
}

/// §11.3 `fstree.parse_dir`: `entries` (their number) and `address` (the object's content address).
fn fstree_parse_dir(input: &Value) -> R<Value> {
    let text = super::input::need_str(input, "text").unwrap_or("");
    let entries = fstree::parse_dir(text.as_bytes())?;
    let address = wire::address(&crate::json::parse_strict(text.as_bytes())?);
    Ok(Value::obj(vec![("entries", Value::Num(entries.len() as f64)), ("address", wire::digest_value(&address))]))
}

fn journal_verify(input: &Value) -> R<Value> {
    let h = journal::parse_head(member(input, "head"))?;
    journal::verify(need_arr(input, "events")?, &h)?;
    Ok(Value::Null)
}

fn journal_prove(input: &Value) -> R<Value> {
    let i = need(input, "index")?.as_int().ok_or(Code("BadInput"))?;
    // §11.3: an index outside 0 … n − 1 has no leaf to prove.
    let i = usize::try_from(i).map_err(|_| Code("InclusionProofInvalid"))?;
    let p = journal::prove(need_arr(input, "events")?, i)?;
    Ok(Value::obj(vec![("proof", p)]))
}

fn hex32(v: &Value, code: &'static str) -> R<[u8; 32]> {
    let b = v.as_str().and_then(wire::unhex).ok_or(Code(code))?;
    b.try_into().map_err(|_| Code(code))
}

fn hex_list(v: &Value, code: &'static str) -> R<Vec<[u8; 32]>> {
    v.as_arr().ok_or(Code(code))?.iter().map(|x| hex32(x, code)).collect()
}

fn size(v: &Value, code: &'static str) -> R<u64> {
    v.as_int().filter(|n| *n >= 0).map(|n| n as u64).ok_or(Code(code))
}

fn sha_root(input: &Value) -> R<Value> {
    let mut leaves = Vec::new();
    for l in need_arr(input, "leaves")? {
        let b = l.as_str().and_then(wire::unhex).ok_or(Code("BadInput"))?;
        leaves.push(merkle::leaf_hash(merkle::sha256, &b));
    }
    Ok(Value::obj(vec![("root", Value::Str(wire::hex(&merkle::root(merkle::sha256, &leaves))))]))
}

fn sha_inclusion(input: &Value) -> R<Value> {
    const BAD: &str = "InclusionProofInvalid";
    let m = |n: &str| member(input, n);
    let (index, sz) = (size(m("index"), BAD)?, size(m("size"), BAD)?);
    let (leaf, root, path) = (hex32(m("leaf_hash"), BAD)?, hex32(m("root"), BAD)?, hex_list(m("path"), BAD)?);
    merkle::verify_inclusion(merkle::sha256, index, sz, &leaf, &path, &root, BAD)?;
    Ok(Value::Null)
}

fn sha_consistency(input: &Value) -> R<Value> {
    const BAD: &str = "ConsistencyProofInvalid";
    let m = |n: &str| member(input, n);
    let (s1, s2) = (size(m("size1"), BAD)?, size(m("size2"), BAD)?);
    let (r1, r2, path) = (hex32(m("root1"), BAD)?, hex32(m("root2"), BAD)?, hex_list(m("path"), BAD)?);
    merkle::verify_consistency(merkle::sha256, s1, s2, &r1, &r2, &path, BAD)?;
    Ok(Value::Null)
}

/// digest_in reads a digest member of an op's input.
pub fn digest_in(input: &Value, name: &str) -> R<wire::Digest> {
    wire::parse_digest(need(input, name)?)
}

/// hosts reads an optional list of accepted signers.
pub fn hosts(input: &Value, name: &str) -> R<Option<Vec<String>>> {
    super::input::opt(input, name).map(super::input::strings).transpose()
}

/// required_hosts reads the trusted hosts an op cannot run without (§11.3: `hosts` required).
pub fn required_hosts(input: &Value) -> R<Vec<String>> {
    super::input::strings(super::input::need(input, "hosts")?)
}

fn energy_genesis(input: &Value) -> R<Value> {
    let h = energy::genesis(&digest_in(input, "unit_id")?, &digest_in(input, "grants_id")?);
    Ok(Value::obj(vec![("head", wire::digest_value(&h))]))
}

fn receipt_verify(input: &Value) -> R<Value> {
    let hs = hosts(input, "hosts")?;
    let r = energy::verify_receipt(member(input, "envelope"), hs.as_deref())?;
    Ok(Value::obj(vec![
        ("address", wire::digest_value(&r.address)),
        ("total_uj", wire::amount(r.total_uj)),
        ("provenance", Value::str(r.provenance.name())),
    ]))
}

fn energy_chain(input: &Value) -> R<Value> {
    let hs = hosts(input, "hosts")?;
    let head = super::input::opt(input, "head").map(wire::parse_digest).transpose()?;
    let c = energy::verify_chain(
        need_arr(input, "envelopes")?,
        &digest_in(input, "unit_id")?,
        &digest_in(input, "grants_id")?,
        hs.as_deref(),
        head.as_ref(),
    )?;
    Ok(Value::obj(vec![
        ("head", wire::digest_value(&c.head)),
        ("count", Value::Num(c.count as f64)),
        ("total_uj", wire::amount(c.total_uj)),
    ]))
}

fn attestation_verify(input: &Value) -> R<Value> {
    let a = attestation::verify(member(input, "envelope"))?;
    if let Some(e) = super::input::opt(input, "expect") {
        attestation::check_bindings(&a, e)?;
    }
    Ok(Value::obj(vec![("address", wire::digest_value(&a.address)), ("predicate", a.predicate)]))
}

fn attestation_interval(input: &Value) -> R<Value> {
    let events = super::input::opt(input, "events")
        .map(|e| e.as_arr().map(Vec::as_slice).ok_or(Code("BadInput")))
        .transpose()?;
    let (a, r) = attestation::verify_interval(member(input, "envelope"), member(input, "receipt"), events)?;
    Ok(Value::obj(vec![("address", wire::digest_value(&a.address)), ("receipt", wire::digest_value(&r))]))
}

fn audit_verify(input: &Value) -> R<Value> {
    let hs = hosts(input, "hosts")?;
    let from = match super::input::opt(input, "from") {
        None => None,
        Some(f) => Some((digest_in(f, "head")?, need(f, "seq")?.as_int().ok_or(Code("BadInput"))?)),
    };
    let s = audit::verify(need_arr(input, "attestations")?, &digest_in(input, "domain")?, hs.as_deref(), from)?;
    Ok(Value::obj(vec![
        ("head", wire::digest_value(&s.head)),
        ("seq", Value::Num(s.seq as f64)),
        ("count", Value::Num(s.count as f64)),
    ]))
}

fn runrecord_genesis(input: &Value) -> R<Value> {
    let h = runrecord::genesis(&digest_in(input, "unit_id")?, &digest_in(input, "grants_id")?);
    Ok(Value::obj(vec![("head", wire::digest_value(&h))]))
}

fn record_in(input: &Value) -> R<runrecord::Record> {
    let text = super::input::need_str(input, "record")?;
    let ids = match (super::input::opt(input, "unit_id"), super::input::opt(input, "grants_id")) {
        (Some(u), Some(g)) => Some((wire::parse_digest(u)?, wire::parse_digest(g)?)),
        _ => None,
    };
    runrecord::parse(text, ids.as_ref().map(|(u, g)| (u, g)))
}

fn runrecord_verify(input: &Value) -> R<Value> {
    let rec = record_in(input)?;
    if let Some(h) = super::input::opt(input, "expect_head") {
        ensure(wire::parse_digest(h)? == rec.head(), "HeadMismatch")?;
    }
    let (idle, _) = runrecord::idle(&rec)?;
    Ok(Value::obj(vec![
        ("genesis", wire::digest_value(&rec.heads[0])),
        ("head", wire::digest_value(&rec.head())),
        ("heads", Value::Arr(rec.heads.iter().map(wire::digest_value).collect())),
        ("phase", Value::str(rec.phase.name())),
        ("segments", Value::Num(rec.segments.len() as f64)),
        ("idle_uj", wire::amount(idle)),
    ]))
}

fn appended(rec: &runrecord::Record, head: wire::Digest) -> Value {
    Value::obj(vec![("head", wire::digest_value(&head)), ("record", Value::Str(rec.text.clone()))])
}

fn runrecord_append(input: &Value) -> R<Value> {
    let mut rec = record_in(input)?;
    let head = rec.append(member(input, "segment"))?;
    Ok(appended(&rec, head))
}

fn runrecord_resume(input: &Value) -> R<Value> {
    let mut rec = record_in(input)?;
    ensure(rec.phase != runrecord::Phase::Closed, "RecordClosed")?;
    ensure(rec.phase != runrecord::Phase::Moved, "RunMoved")?;
    ensure(rec.phase == runrecord::Phase::Parked, "PhaseViolation")?;
    let offered = member(input, "offered");
    ensure(Some(wire::address(offered)) == rec.parked_on, "SnapshotMismatch")?;
    ensure(member(input, "environment_satisfies").as_bool() == Some(true), "EnvironmentMismatch")?;
    let idle = member(input, "idle");
    let mut seg = vec![
        ("kind", Value::str("resumed")),
        ("snapshot", offered.clone()),
        ("at_ms", member(input, "at_ms").clone()),
        ("idle_uj", member(idle, "uj").clone()),
        ("idle_provenance", member(idle, "provenance").clone()),
        ("idle_source", member(idle, "source").clone()),
    ];
    if let Some(b) = idle.get("basis") {
        seg.push(("idle_basis", b.clone()));
    }
    let seg = Value::obj(seg);
    let head = rec.append(&seg)?;
    Ok(Value::obj(vec![("segment", seg), ("head", wire::digest_value(&head))]))
}

fn runrecord_energy(input: &Value) -> R<Value> {
    let rec = record_in(input)?;
    let known = member(input, "active_uj");
    let (mut active, mut unresolved) = (0u64, Vec::new());
    for s in rec.segments.iter().filter(|s| s.get("kind").and_then(Value::as_str) == Some("executed")) {
        let a = s.get("attestation").and_then(Value::as_str).unwrap_or("");
        match known.get(a) {
            Some(v) => active = wire::add(active, wire::parse_amount(v)?)?,
            None => unresolved.push(Value::str(a)),
        }
    }
    let (idle, by) = runrecord::idle(&rec)?;
    Ok(Value::obj(vec![
        ("active_uj", wire::amount(active)),
        ("idle_uj", wire::amount(idle)),
        ("total_uj", wire::amount(wire::add(active, idle)?)),
        (
            "idle_by_provenance",
            Value::obj(vec![
                ("measured", wire::amount(by[0])),
                ("attributed", wire::amount(by[1])),
                ("estimated", wire::amount(by[2])),
            ]),
        ),
        ("complete", Value::Bool(unresolved.is_empty())),
        ("unresolved", Value::Arr(unresolved)),
    ]))
}

fn fstree_root(input: &Value) -> R<Value> {
    let (bytes, dirs) = fstree::dir_object(need_arr(input, "entries")?)?;
    Ok(Value::obj(vec![("fs_root", wire::digest_value(&wire::blake3(&bytes))), ("dirs", Value::Num(dirs as f64))]))
}

/// fleet_hosts reads the trusted fleet hosts, a required input with no default (§16.3, §11.3);
/// an empty list accepts nothing.
fn fleet_hosts(input: &Value) -> R<Vec<String>> {
    required_hosts(input)
}

fn fleet_build(input: &Value) -> R<Value> {
    let int = |n: &str| need(input, n).and_then(|v| v.as_int().ok_or(Code("BadInput")));
    fleet::receipt_value(
        super::input::need_str(input, "fleet")?,
        super::input::need_str(input, "host")?,
        need_arr(input, "items")?,
        int("start_ms")?,
        int("end_ms")?,
    )
}

fn fleet_membership(input: &Value) -> R<Value> {
    let r = fleet::open_receipt(member(input, "receipt"), &fleet_hosts(input)?)?;
    let (index, item, uj) = fleet::verify_membership(&r, member(input, "proof"))?;
    Ok(Value::obj(vec![
        ("index", Value::Num(index as f64)),
        ("item", Value::Str(item)),
        ("energy_uj", wire::amount(uj)),
        ("total_uj", wire::amount(r.root.1)),
    ]))
}

fn fleet_consistency(input: &Value) -> R<Value> {
    let hs = fleet_hosts(input)?;
    let r1 = fleet::open_receipt(member(input, "receipt1"), &hs)?;
    let r2 = fleet::open_receipt(member(input, "receipt2"), &hs)?;
    fleet::verify_consistency(&r1, &r2, member(input, "proof"))?;
    Ok(Value::Null)
}

fn warmpool_verify(input: &Value) -> R<Value> {
    let hs = hosts(input, "hosts")?;
    let req = member(input, "require_closed").as_bool() == Some(true);
    let l = warmpool::verify(member(input, "ledger"), hs.as_deref(), req)?;
    let [prov, res, cl, ev] = l.counts();
    let n = |x: usize| Value::Num(x as f64);
    Ok(Value::obj(vec![
        ("pool_id", wire::digest_value(&l.pool_id)),
        ("name", Value::str(&l.name)),
        ("host", Value::str(&l.host)),
        ("manifest", Value::str(&l.manifest)),
        ("head", wire::digest_value(&l.head)),
        ("entries", n(l.entries)),
        (
            "items",
            Value::obj(vec![("provisioned", n(prov)), ("resident", n(res)), ("claimed", n(cl)), ("evicted", n(ev))]),
        ),
        ("drawn_uj", wire::amount(l.drawn)),
        ("claimed_uj", wire::amount(l.claimed)),
        ("evicted_uj", wire::amount(l.evicted)),
        ("outstanding_uj", wire::amount(l.outstanding()?)),
        ("closed", Value::Bool(l.closed)),
        ("claims", Value::Arr(l.claims.iter().map(wire::digest_value).collect())),
    ]))
}

fn policy_out((address, policy): (wire::Digest, Value)) -> Value {
    Value::obj(vec![("address", wire::digest_value(&address)), ("policy", policy)])
}

fn execpolicy_open(input: &Value) -> R<Value> {
    let stewards = hosts(input, "stewards")?;
    let bound = super::input::opt(input, "address").map(wire::parse_digest).transpose()?;
    execpolicy::open(member(input, "envelope"), stewards.as_deref(), bound.as_ref()).map(policy_out)
}

/// source reads a devcontainer source given as text or as base64 bytes.
fn source(input: &Value) -> R<Vec<u8>> {
    if let Some(t) = input.get("source").and_then(Value::as_str) {
        return Ok(t.as_bytes().to_vec());
    }
    let b = super::input::need_str(input, "source_b64")?;
    wire::b64_decode(b).ok_or(Code("BadInput"))
}

/// §14.8: an accepted source is `{code: "accepted", members: []}`; a `ManifestParseError` is the
/// op's error (its syntax errors are not compared); a `ManifestRefused` its code and members.
fn manifest_refusals(input: &Value) -> R<Value> {
    match manifest::ingest(&source(input)?) {
        Ok(_) => Ok(Value::obj(vec![("code", Value::str("accepted")), ("members", Value::Arr(vec![]))])),
        Err(r) if r.code == "ManifestParseError" => Err(Code(r.code)),
        Err(r) => Ok(Value::obj(vec![
            ("code", Value::str(r.code)),
            (
                "members",
                Value::Arr(
                    r.members
                        .into_iter()
                        .map(|(p, c)| Value::obj(vec![("pointer", Value::Str(p)), ("code", Value::str(c))]))
                        .collect(),
                ),
            ),
        ])),
    }
}

fn manifest_verify(input: &Value) -> R<Value> {
    let stewards = hosts(input, "stewards")?;
    let (document, doc) = manifest::verify(member(input, "envelope"), stewards.as_deref())?;
    let address = doc.get("address").cloned().unwrap_or(Value::Null);
    Ok(Value::obj(vec![("address", address), ("document", wire::digest_value(&document))]))
}

fn manifest_satisfies(input: &Value) -> R<Value> {
    let r =
        manifest::satisfies(member(input, "manifest"), member(input, "offered"), super::input::opt(input, "address"))?;
    Ok(match r {
        None => Value::obj(vec![("ok", Value::Bool(true))]),
        Some((code, ptrs)) => Value::obj(vec![
            ("ok", Value::Bool(false)),
            ("code", Value::str(code)),
            ("pointers", Value::Arr(ptrs.into_iter().map(Value::Str).collect())),
        ]),
    })
}
