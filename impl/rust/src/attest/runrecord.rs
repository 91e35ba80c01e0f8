//! §13 durable run records: segments, phase rules, the wire form, resumption and energy.

use super::energy::Provenance;
use crate::compat::OptionExt;
use crate::error::{ensure, fail, Code, R};
use crate::json::{self, Value};
use crate::wire::{self, Digest};

/// §13.5: a line is at most 64 KiB.
pub const LINE_LIMIT: usize = 64 * 1024;

/// genesis is head₀ = BLAKE3("sandbox.runrecord/1" ‖ unit_id ‖ grants_id).
pub fn genesis(unit_id: &Digest, grants_id: &Digest) -> Digest {
    wire::chain_genesis("sandbox.runrecord/1", &[*unit_id, *grants_id])
}

fn snapshot_ok(s: &Value) -> bool {
    let keys = s.keys();
    s.is_obj()
        && keys.iter().all(|k| ["fs_root", "manifest", "memory"].contains(k))
        && s.get("fs_root").has(wire::is_digest)
        && s.get("manifest").has(wire::is_digest)
        && s.get("memory").none_or(wire::is_digest)
}

/// basis_figure says whether a string is a §13.2 decimal numeral, `[0-9]+(\.[0-9]+)?`, by syntax
/// alone: leading and trailing zeros are kept as written.
fn basis_figure(s: &str) -> bool {
    let (int, frac) = s.split_once('.').unwrap_or((s, "0"));
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    digits(int) && digits(frac)
}

fn resumed_ok(s: &Value) -> bool {
    let keys = s.keys();
    let base = ["kind", "snapshot", "at_ms", "idle_uj", "idle_provenance", "idle_source"];
    let prov = s.get("idle_provenance").and_then(Value::as_str).and_then(Provenance::parse);
    let basis = s.get("idle_basis");
    let basis_ok = basis.none_or(|b| {
        b.as_obj().has(|m| (1..=32).contains(&m.len()) && m.iter().all(|(_, v)| v.as_str().has(basis_figure)))
    });
    keys.iter().all(|k| base.contains(k) || *k == "idle_basis")
        && base.iter().all(|k| keys.contains(k))
        && s.get("snapshot").has(snapshot_ok)
        && s.get("idle_uj").has(|u| wire::parse_amount(u).is_ok())
        && prov.is_some()
        && s.get("idle_source").and_then(Value::as_str).has(|x| (1..=256).contains(&crate::wire::text_len(x)))
        && basis_ok
        && (prov == Some(Provenance::Measured) || basis.is_some())
}

/// §13.2a: the DSSE payload type under whose PAE a hand-off is signed.
pub const MOVED_TYPE: &str = "application/vnd.sandbox.runrecord.moved+json";

/// moved_ok is the form of a `moved` segment (§13.2a): exactly its members, `head` a digest, `to`
/// 1 to 256 characters, `signer` a did:key, `sig` the canonical padded base64 of 64 bytes.
fn moved_ok(s: &Value) -> bool {
    wire::exact_members(s, &["kind", "at_ms", "head", "to", "signer", "sig"])
        && s.get("head").has(wire::is_digest)
        && s.get("to").and_then(Value::as_str).has(|t| (1..=256).contains(&wire::text_len(t)))
        && s.get("signer").has(wire::is_didkey)
        && s.get("sig").and_then(Value::as_str).and_then(wire::b64_decode).has(|b| b.len() == 64)
}

/// check_handoff is §13.2a's check of a well-formed `moved` segment following head `prev`: its
/// `head` is `prev` and its `sig` verifies under `signer` over PAE(type, JCS of the segment
/// without `sig`); `BadHandoff` otherwise.
fn check_handoff(s: &Value, prev: &Digest) -> R<()> {
    let named = s.get("head").and_then(|h| wire::parse_digest(h).ok());
    ensure(named.as_ref() == Some(prev), "BadHandoff")?;
    let m = |k: &str| s.get(k).cloned().unwrap_or(Value::Null);
    let unsigned =
        Value::obj(vec![("at_ms", m("at_ms")), ("head", m("head")), ("kind", m("kind")), ("signer", m("signer")), ("to", m("to"))]);
    let msg = wire::pae(MOVED_TYPE, &json::canonical_bytes(&unsigned));
    let pk = s.get("signer").and_then(Value::as_str).map(wire::didkey_decode).ok_or(Code("BadHandoff"))?;
    let sig = s.get("sig").and_then(Value::as_str).and_then(wire::b64_decode).ok_or(Code("BadHandoff"))?;
    let pk = pk.map_err(|_| Code("BadHandoff"))?;
    wire::ed25519_verify(&pk, &msg, &sig).map_err(|_| Code("BadHandoff"))
}

/// check_segment checks a segment's form (§13.2, `BadSegment`).
pub fn check_segment(s: &Value) -> R<()> {
    let at = || s.get("at_ms").and_then(Value::as_int).has(|n| n >= 0);
    let ok = match s.get("kind").and_then(Value::as_str) {
        Some("executed") => {
            wire::exact_members(s, &["kind", "attestation"]) && s.get("attestation").has(wire::is_digest)
        }
        Some("suspended") => {
            wire::exact_members(s, &["kind", "snapshot", "at_ms"]) && s.get("snapshot").has(snapshot_ok) && at()
        }
        Some("resumed") => resumed_ok(s) && at(),
        Some("moved") => moved_ok(s) && at(),
        Some("closed") => {
            wire::exact_members(s, &["kind", "at_ms", "outcome"])
                && at()
                && s.get("outcome").and_then(Value::as_str).has(|o| ["completed", "failed", "abandoned"].contains(&o))
        }
        _ => false,
    };
    ensure(ok, "BadSegment")
}

/// The phase of a record (§13.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Active,
    Parked,
    Closed,
    Moved,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Active => "active",
            Phase::Parked => "parked",
            Phase::Closed => "closed",
            Phase::Moved => "moved",
        }
    }
}

/// A verified record.
#[derive(Clone, Debug)]
pub struct Record {
    pub unit_id: Digest,
    pub grants_id: Digest,
    pub heads: Vec<Digest>,
    pub segments: Vec<Value>,
    pub phase: Phase,
    pub parked_on: Option<Digest>,
    pub last_at: Option<i64>,
    pub text: String,
}

impl Record {
    pub fn head(&self) -> Digest {
        *self.heads.last().unwrap_or(&[0; 32])
    }

    /// apply checks the phase rules for segment `s` (§13.3) and advances the state.
    pub fn apply(&mut self, s: &Value) -> R<()> {
        ensure(self.phase != Phase::Closed, "RecordClosed")?;
        // §13.3 rule 6: nothing follows a hand-off; a hand-off only of a parked run.
        ensure(self.phase != Phase::Moved, "RunMoved")?;
        let kind = s.get("kind").and_then(Value::as_str).unwrap_or("");
        match kind {
            "executed" | "suspended" => ensure(self.phase == Phase::Active, "PhaseViolation")?,
            "moved" => ensure(self.phase == Phase::Parked, "PhaseViolation")?,
            "resumed" => {
                ensure(self.phase == Phase::Parked, "PhaseViolation")?;
                let snap = s.get("snapshot").map(wire::address);
                ensure(snap == self.parked_on, "SnapshotMismatch")?;
            }
            _ => {}
        }
        if let Some(at) = s.get("at_ms").and_then(Value::as_int) {
            ensure(self.last_at.none_or(|l| at >= l), "TimeRegression")?;
            self.last_at = Some(at);
        }
        match kind {
            "suspended" => {
                self.phase = Phase::Parked;
                self.parked_on = s.get("snapshot").map(wire::address);
            }
            "resumed" => {
                self.phase = Phase::Active;
                self.parked_on = None;
            }
            "closed" => self.phase = Phase::Closed,
            "moved" => self.phase = Phase::Moved,
            _ => {}
        }
        Ok(())
    }

    /// handoff checks a `moved` segment against the record's current head (§13.2a), after the
    /// phase rules and before the stated head (§13.5).
    fn handoff(&self, s: &Value) -> R<()> {
        if s.get("kind").and_then(Value::as_str) == Some("moved") {
            check_handoff(s, &self.head())?;
        }
        Ok(())
    }

    /// append checks and appends a segment, returning the new head (§13.3, §13.5 line form).
    pub fn append(&mut self, s: &Value) -> R<Digest> {
        check_segment(s)?;
        self.apply(s)?;
        self.handoff(s)?;
        let head = wire::chain_next(&self.head(), s);
        let n = self.segments.len() + 1;
        let line =
            Value::obj(vec![("head", wire::digest_value(&head)), ("n", Value::Num(n as f64)), ("segment", s.clone())]);
        self.text.push_str(&json::canonical(&line));
        self.text.push('\n');
        self.heads.push(head);
        self.segments.push(s.clone());
        Ok(head)
    }
}

fn line_value(line: &str) -> R<Value> {
    ensure(line.len() <= LINE_LIMIT, "BadRecord")?;
    let v = json::parse_canonical(line.as_bytes(), LINE_LIMIT).map_err(|_| Code("BadRecord"))?;
    ensure(v.is_obj(), "BadRecord")?;
    Ok(v)
}

fn header(line: &str, ids: Option<(&Digest, &Digest)>) -> R<Record> {
    let h = line_value(line)?;
    ensure(wire::exact_members(&h, &["format", "grants_id", "head", "unit_id"]), "BadRecord")?;
    ensure(h.get("format").and_then(Value::as_str) == Some("sandbox.runrecord/1"), "BadRecord")?;
    let d = |n: &str| h.get(n).and_then(|v| wire::parse_digest(v).ok()).ok_or(Code("BadRecord"));
    let (unit_id, grants_id, head) = (d("unit_id")?, d("grants_id")?, d("head")?);
    ensure(head == genesis(&unit_id, &grants_id), "GenesisMismatch")?;
    if let Some((u, g)) = ids {
        ensure(*u == unit_id && *g == grants_id, "GenesisMismatch")?;
    }
    Ok(Record {
        unit_id,
        grants_id,
        heads: vec![head],
        segments: vec![],
        phase: Phase::Active,
        parked_on: None,
        last_at: None,
        text: format!("{line}\n"),
    })
}

/// parse reads and verifies a record file from genesis (§13.5), optionally against expected ids.
pub fn parse(text: &str, ids: Option<(&Digest, &Digest)>) -> R<Record> {
    ensure(!text.is_empty(), "BadRecord")?;
    let (body, torn) = match text.rfind('\n') {
        Some(i) => (&text[..i], &text[i + 1..]),
        None => ("", text),
    };
    let mut lines = body.split('\n');
    let first = lines.next().filter(|_| !body.is_empty() || torn.is_empty());
    let first = match first {
        Some(f) => f,
        None => return fail("TornRecord"),
    };
    let mut rec = header(first, ids)?;
    for (i, line) in lines.enumerate() {
        let v = line_value(line)?;
        ensure(wire::exact_members(&v, &["head", "n", "segment"]), "BadRecord")?;
        ensure(v.get("n").and_then(Value::as_int) == Some(i as i64 + 1), "BadRecord")?;
        let stated = v.get("head").and_then(|h| wire::parse_digest(h).ok()).ok_or(Code("BadRecord"))?;
        let seg = v.get("segment").cloned().unwrap_or(Value::Null);
        // §13.5 order within a line: the segment's form, then the §13.3 phase and time rules,
        // and last the stated head.
        let head = wire::chain_next(&rec.head(), &seg);
        check_segment(&seg)?;
        rec.apply(&seg)?;
        rec.handoff(&seg)?;
        ensure(stated == head, "HeadMismatch")?;
        rec.heads.push(head);
        rec.segments.push(seg);
        rec.text.push_str(line);
        rec.text.push('\n');
    }
    ensure(torn.is_empty(), "TornRecord")?;
    Ok(rec)
}

/// idle_uj sums the record's idle energy (§13.6).
pub fn idle(rec: &Record) -> R<(u64, [u64; 3])> {
    let (mut total, mut by) = (0u64, [0u64; 3]);
    for s in rec.segments.iter().filter(|s| s.get("kind").and_then(Value::as_str) == Some("resumed")) {
        let uj = wire::parse_amount(s.get("idle_uj").unwrap_or(&Value::Null))?;
        let p =
            s.get("idle_provenance").and_then(Value::as_str).and_then(Provenance::parse).ok_or(Code("BadSegment"))?;
        total = wire::add(total, uj)?;
        by[p as usize] = wire::add(by[p as usize], uj)?;
    }
    Ok((total, by))
}
