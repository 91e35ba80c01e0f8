//! §15 warm pools: the descriptor, the ledger and its conservation, and claim charging.

use super::energy::check_component;
use crate::compat::OptionExt;
use crate::error::{ensure, fail, Code, R};
use crate::json::{self, Value};
use crate::wire::{self, Digest};

pub const POOL_TYPE: &str = "application/vnd.sandbox-attest.warmpool+json";
pub const ENTRY_TYPE: &str = "application/vnd.sandbox-attest.warmpool-entry+json";

fn name_ok(s: &str) -> bool {
    let b = s.as_bytes();
    (1..=128).contains(&b.len())
        && b[0].is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || b"._-".contains(c))
}

/// State of one item.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Resident,
    Claimed,
    Evicted,
}

struct Item {
    id: String,
    state: State,
    provision: u64,
    residency: u64,
    last_end: i64,
    /// every component of its provisioning figure, then of each accrual, in ledger order (§15.4).
    components: Vec<Value>,
}

/// A claim entry: its address, payload and item.
struct Claim {
    address: Digest,
    payload: Value,
    item: usize,
}

/// The verified ledger.
#[derive(Default)]
pub struct Ledger {
    pub pool_id: Digest,
    pub name: String,
    pub host: String,
    pub manifest: String,
    pub head: Digest,
    pub entries: usize,
    pub drawn: u64,
    pub claimed: u64,
    pub evicted: u64,
    pub closed: bool,
    pub claims: Vec<Digest>,
    items: Vec<Item>,
    claim_entries: Vec<Claim>,
    created_ms: i64,
    last_ms: i64,
}

impl Ledger {
    /// counts returns (provisioned, resident, claimed, evicted).
    pub fn counts(&self) -> [usize; 4] {
        let n = |s: State| self.items.iter().filter(|i| i.state == s).count();
        [self.items.len(), n(State::Resident), n(State::Claimed), n(State::Evicted)]
    }
    /// outstanding is what resident items have drawn so far.
    pub fn outstanding(&self) -> R<u64> {
        let mut t = 0u64;
        for i in self.items.iter().filter(|i| i.state == State::Resident) {
            t = wire::add(t, wire::add(i.provision, i.residency)?)?;
        }
        Ok(t)
    }
}

fn open_pool(env: &Value, hosts: Option<&[String]>) -> R<Ledger> {
    let want = wire::Expect { payload_type: POOL_TYPE, limit: json::DEFAULT_LIMIT, signers: None };
    let o = wire::open_envelope(env, &want)?;
    let p = &o.payload;
    let ok = wire::exact_members(p, &["kind", "name", "host", "manifest", "created_ms"])
        && p.get("kind").and_then(Value::as_str) == Some("pool")
        && p.get("name").and_then(Value::as_str).has(name_ok)
        && p.get("host").has(wire::is_didkey)
        && p.get("manifest").has(wire::is_digest)
        && p.get("created_ms").and_then(Value::as_int).has(|n| n >= 0);
    ensure(ok, "BadPoolEntry")?;
    let host = p.get("host").and_then(Value::as_str).unwrap_or("").to_string();
    ensure(o.signers.contains(&host), "BadPoolEntry")?;
    if let Some(h) = hosts {
        ensure(o.signers.iter().any(|s| h.contains(s)), "UnknownSigner")?;
    }
    Ok(Ledger {
        pool_id: o.address,
        name: p.get("name").and_then(Value::as_str).unwrap_or("").to_string(),
        host,
        manifest: p.get("manifest").and_then(Value::as_str).unwrap_or("").to_string(),
        head: wire::chain_genesis("sandbox.warmpool/1", &[o.address]),
        created_ms: p.get("created_ms").and_then(Value::as_int).unwrap_or(0),
        last_ms: i64::MIN,
        ..Ledger::default()
    })
}

/// figure checks a ledger figure (§15.2) and returns its sum.
fn figure(v: Option<&Value>) -> R<u64> {
    let list = v.and_then(Value::as_arr).ok_or(Code("BadPoolEntry"))?;
    ensure((1..=16).contains(&list.len()), "BadPoolEntry")?;
    let mut sum = 0u64;
    for c in list {
        let (uj, _) = check_component(c)?;
        let domain_ok =
            c.get("domain").and_then(Value::as_str).has(|d| ["cpu", "memory", "storage", "gpu", "idle"].contains(&d));
        ensure(domain_ok && c.get("ref").is_none(), "BadPoolEntry")?;
        sum = wire::add(sum, uj)?;
    }
    Ok(sum)
}

const SHAPES: &[(&str, &[&str])] = &[
    ("provisioned", &["kind", "seq", "prev", "item", "manifest", "at_ms", "provision"]),
    ("accrued", &["kind", "seq", "prev", "item", "from_ms", "to_ms", "residency"]),
    (
        "claimed",
        &["kind", "seq", "prev", "item", "at_ms", "unit", "grants", "accrued_uj", "provision_uj", "residency_uj"],
    ),
    ("evicted", &["kind", "seq", "prev", "item", "at_ms", "reason", "overhead_uj", "provision_uj", "residency_uj"]),
    ("closed", &["kind", "seq", "prev", "at_ms", "drawn_uj", "claimed_uj", "evicted_uj"]),
];

const REASONS: &[&str] = &["expired", "capacity", "manifest-changed", "host-shutdown", "operator", "failed"];

/// shape checks an entry's member set and forms (`BadPoolEntry`, §6 codes) and returns its figure sum.
fn shape(p: &Value, pool_manifest: &str) -> R<u64> {
    let kind = p.get("kind").and_then(Value::as_str).unwrap_or("");
    let members = SHAPES.iter().find(|(k, _)| *k == kind).map(|(_, m)| *m).ok_or(Code("BadPoolEntry"))?;
    ensure(wire::exact_members(p, members), "BadPoolEntry")?;
    let int = |n: &str| p.get(n).and_then(Value::as_int).has(|x| x >= 0);
    let amount = |n: &str| p.get(n).has(|x| wire::parse_amount(x).is_ok());
    let mut ok = int("seq") && p.get("prev").has(wire::is_digest);
    ok &= kind == "closed" || p.get("item").and_then(Value::as_str).has(name_ok);
    ok &= members.iter().filter(|m| m.ends_with("_ms")).all(|m| int(m));
    ok &= members.iter().filter(|m| m.ends_with("_uj")).all(|m| amount(m));
    ok &= match kind {
        "provisioned" => p.get("manifest").and_then(Value::as_str) == Some(pool_manifest),
        "claimed" => p.get("unit").has(wire::is_digest) && p.get("grants").has(wire::is_digest),
        "evicted" => p.get("reason").and_then(Value::as_str).has(|r| REASONS.contains(&r)),
        _ => true,
    };
    ensure(ok, "BadPoolEntry")?;
    match kind {
        "provisioned" => figure(p.get("provision")),
        "accrued" => figure(p.get("residency")),
        _ => Ok(0),
    }
}

fn figure_list(v: Option<&Value>) -> Vec<Value> {
    v.and_then(Value::as_arr).cloned().unwrap_or_default()
}

fn amt(p: &Value, n: &str) -> u64 {
    p.get(n).and_then(|v| wire::parse_amount(v).ok()).unwrap_or(0)
}

fn int(p: &Value, n: &str) -> i64 {
    p.get(n).and_then(Value::as_int).unwrap_or(0)
}

impl Ledger {
    fn item(&mut self, p: &Value) -> R<&mut Item> {
        let id = p.get("item").and_then(Value::as_str).unwrap_or("");
        self.items.iter_mut().find(|i| i.id == id).ok_or(Code("UnknownItem"))
    }

    fn item_index(&self, p: &Value) -> usize {
        let id = p.get("item").and_then(Value::as_str).unwrap_or("");
        self.items.iter().position(|i| i.id == id).unwrap_or(usize::MAX)
    }

    /// settle applies a claim or an eviction (§15.4, §15.5); returns the stated whole.
    fn settle(&mut self, p: &Value, whole: &str, to: State) -> R<u64> {
        let it = self.item(p)?;
        // §15.4 order: known, resident, not zero, at the end of its residency, the three amounts.
        ensure(it.state == State::Resident, "DoubleClaim")?;
        let w = amt(p, whole);
        ensure(w != 0, "ZeroEnergy")?;
        ensure(int(p, "at_ms") == it.last_end, "AccrualGap")?;
        let (pv, rs) = (amt(p, "provision_uj"), amt(p, "residency_uj"));
        let ok = pv == it.provision && rs == it.residency && wire::add(pv, rs).ok() == Some(w);
        ensure(ok, "AccruedMismatch")?;
        it.state = to;
        Ok(w)
    }

    /// apply applies one entry's rules (§15.3–§15.6).
    fn apply(&mut self, p: &Value, sum: u64, address: Digest) -> R<()> {
        match p.get("kind").and_then(Value::as_str).unwrap_or("") {
            "provisioned" => {
                let id = p.get("item").and_then(Value::as_str).unwrap_or("").to_string();
                ensure(!self.items.iter().any(|i| i.id == id), "DuplicateItem")?;
                ensure(sum != 0, "ZeroEnergy")?;
                self.drawn = wire::add(self.drawn, sum)?;
                let at = int(p, "at_ms");
                let components = figure_list(p.get("provision"));
                let item = Item { id, state: State::Resident, provision: sum, residency: 0, last_end: at, components };
                self.items.push(item);
            }
            "accrued" => {
                let it = self.item(p)?;
                ensure(it.state == State::Resident, "Unattributed")?;
                ensure(int(p, "from_ms") == it.last_end, "AccrualGap")?;
                // §15.3: an empty interval accounts nothing.
                ensure(int(p, "to_ms") > int(p, "from_ms"), "AccrualGap")?;
                it.residency = wire::add(it.residency, sum)?;
                it.components.extend(figure_list(p.get("residency")));
                it.last_end = int(p, "to_ms");
                self.drawn = wire::add(self.drawn, sum)?;
            }
            "claimed" => {
                let w = self.settle(p, "accrued_uj", State::Claimed)?;
                self.claimed = wire::add(self.claimed, w)?;
                self.claims.push(address);
                let item = self.item_index(p);
                self.claim_entries.push(Claim { address, payload: p.clone(), item });
            }
            "evicted" => {
                let w = self.settle(p, "overhead_uj", State::Evicted)?;
                self.evicted = wire::add(self.evicted, w)?;
            }
            _ => {
                ensure(!self.items.iter().any(|i| i.state == State::Resident), "Unattributed")?;
                let (d, c, e) = (amt(p, "drawn_uj"), amt(p, "claimed_uj"), amt(p, "evicted_uj"));
                let ok = d == self.drawn && c == self.claimed && e == self.evicted && c.checked_add(e) == Some(d);
                ensure(ok, "ConservationViolated")?;
                self.closed = true;
            }
        }
        Ok(())
    }
}

/// verify checks a pool ledger in the order of §15.7.
pub fn verify(ledger: &Value, hosts: Option<&[String]>, require_closed: bool) -> R<Ledger> {
    let mut l = open_pool(ledger.get("pool").unwrap_or(&Value::Null), hosts)?;
    let entries = ledger.get("entries").and_then(Value::as_arr).ok_or(Code("BadPoolEntry"))?;
    let host = vec![l.host.clone()];
    for (i, env) in entries.iter().enumerate() {
        let want = wire::Expect { payload_type: ENTRY_TYPE, limit: json::DEFAULT_LIMIT, signers: Some(&host) };
        let o = wire::open_envelope(env, &want)?;
        let p = &o.payload;
        let sum = shape(p, &l.manifest)?;
        let linked = p.get("seq").and_then(Value::as_int) == Some(i as i64)
            && p.get("prev").and_then(|v| wire::parse_digest(v).ok()) == Some(l.head);
        ensure(linked, "PoolChainBroken")?;
        ensure(!l.closed, "PoolClosed")?;
        let t =
            if p.get("kind").and_then(Value::as_str) == Some("accrued") { int(p, "to_ms") } else { int(p, "at_ms") };
        ensure(t >= l.last_ms && t >= l.created_ms, "TimeReversed")?;
        l.last_ms = t;
        l.apply(p, sum, o.address)?;
        l.head = wire::chain_next(&l.head, p);
        l.entries += 1;
    }
    ensure(!require_closed || l.closed, "Unattributed")?;
    Ok(l)
}

/// claim_charged checks that a run's first receipt carries an exact copy of every component of
/// the claimed item's energy, in ledger order, as `warmpool` components citing the claim (§15.4).
/// The ledger is verified first (§15.7, with the trusted hosts); `claim` is the claim entry's
/// address and `receipt` the receipt's payload.
pub fn claim_charged(ledger: &Value, hosts: Option<&[String]>, claim: &Value, receipt: &Value) -> R<()> {
    const NO: &str = "ClaimNotCharged";
    let l = verify(ledger, hosts, false)?;
    super::energy::receipt_form(receipt)?;
    let address = wire::parse_digest(claim).map_err(|_| Code("UnknownItem"))?;
    let c = l.claim_entries.iter().find(|c| c.address == address).ok_or(Code("UnknownItem"))?;
    let same = |r: &str, e: &str| receipt.get(r).is_some() && receipt.get(r) == c.payload.get(e);
    ensure(same("unit_id", "unit") && same("grants_id", "grants"), NO)?;
    ensure(receipt.get("seq").and_then(Value::as_int) == Some(0), NO)?;
    // §15.4: the run's first receipt is the one at seq 0 whose prev is its chain's head₀ (§6.4).
    let id = |n: &str| receipt.get(n).map(wire::parse_digest).transpose().ok().flatten();
    let head0 = match (id("unit_id"), id("grants_id")) {
        (Some(u), Some(g)) => super::energy::genesis(&u, &g),
        _ => return fail(NO),
    };
    ensure(receipt.get("prev").map(wire::parse_digest).transpose().ok().flatten() == Some(head0), NO)?;
    let item = l.items.get(c.item).ok_or(Code("UnknownItem"))?;
    let ref_text = Value::str(&wire::digest_text(&address));
    let want: Vec<Value> = item.components.iter().map(|x| copy_of(x, &ref_text)).collect();
    let mine: Vec<&Value> = receipt
        .get("components")
        .and_then(Value::as_arr)
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .filter(|x| {
            x.get("domain").and_then(Value::as_str) == Some("warmpool")
                && x.get("ref").and_then(|r| wire::parse_digest(r).ok()) == Some(address)
        })
        .collect();
    let exact =
        mine.len() == want.len() && mine.iter().zip(&want).all(|(a, b)| json::canonical(a) == json::canonical(b));
    if !exact || want.is_empty() {
        return fail(NO);
    }
    Ok(())
}

/// copy_of is a component with `domain` replaced by `warmpool` and `ref` added, every other member
/// unchanged (§15.4).
fn copy_of(c: &Value, ref_text: &Value) -> Value {
    let mut members: Vec<(String, Value)> = c
        .as_obj()
        .map(|m| m.iter().filter(|(k, _)| k != "domain" && k != "ref").cloned().collect())
        .unwrap_or_default();
    members.push(("domain".to_string(), Value::str("warmpool")));
    members.push(("ref".to_string(), ref_text.clone()));
    Value::Obj(members)
}
