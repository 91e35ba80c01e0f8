//! JCP §4.6 standing grants: mint policies and mint ledgers.

use super::chain::{child_of, resolve};
use super::grant::{open_grant, Effective, Grant};
use super::pattern::{check_lists, scope_inside, Scope};
use crate::compat::OptionExt;
use crate::error::{ensure, fail, Code, R};
use crate::json::Value;
use crate::wire::{self, Digest};

pub const POLICY_TYPE: &str = "application/vnd.jcp.mintpolicy+json";
pub const MINT_TYPE: &str = "application/vnd.jcp.mint+json";
pub const EVENT_TYPE: &str = "application/vnd.jcp.event+json";
/// §4.6: a policy is at most 8192 payload bytes (`BadPolicy`).
pub const LIMIT: usize = 8192;
/// §4.6: a mint ledger entry is at most 4096 payload bytes (`BadMintEntry`).
pub const ENTRY_LIMIT: usize = 4096;
/// §4.6: a signed event is at most 16384 payload bytes (`OversizeInput`).
pub const EVENT_LIMIT: usize = 16384;

/// A verified mint policy.
pub struct Policy {
    pub address: Digest,
    pub grant: Digest,
    pub issuer: String,
    pub minter: String,
    pub triggers: Vec<(String, String, Option<String>)>,
    pub t_holder: String,
    pub t_scope: Scope,
    pub t_uj: u64,
    pub t_calls: Option<u64>,
    pub t_lifetime: u64,
    pub t_depth: u64,
    pub max_children: u64,
    pub max_total_uj: u64,
    pub rate_count: u64,
    pub rate_window: u64,
    pub nbf_ms: u64,
    pub exp_ms: u64,
}

fn name_ok(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_lowercase()
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"._:/-".contains(c))
}

fn int_min(v: Option<&Value>, min: i64) -> R<u64> {
    match v.and_then(Value::as_int) {
        Some(n) if n >= min => Ok(n as u64),
        _ => fail("BadPolicy"),
    }
}

fn strs(v: Option<&Value>) -> R<Vec<String>> {
    let a = v.and_then(Value::as_arr).ok_or(Code("BadPolicy"))?;
    a.iter().map(|x| x.as_str().map(str::to_string).ok_or(Code("BadPolicy"))).collect()
}

fn did(v: Option<&Value>) -> R<String> {
    v.filter(|x| wire::is_didkey(x)).and_then(Value::as_str).map(str::to_string).ok_or(Code("BadPolicy"))
}

fn trigger(t: &Value) -> R<(String, String, Option<String>)> {
    let keys = t.keys();
    let ok = t.is_obj() && keys.iter().all(|k| ["type", "source", "signed_by"].contains(k));
    let ty = t.get("type").and_then(Value::as_str).filter(|s| name_ok(s));
    let src = t.get("source").and_then(Value::as_str).filter(|s| name_ok(s));
    match (ok, ty, src) {
        (true, Some(a), Some(b)) => Ok((a.into(), b.into(), t.get("signed_by").map(|x| did(Some(x))).transpose()?)),
        _ => fail("BadPolicy"),
    }
}

const POLICY_MEMBERS: &[&str] =
    &["grant", "issuer", "minter", "triggers", "template", "max_children", "max_total_uj", "rate", "nbf_ms", "exp_ms"];
const TEMPLATE_MEMBERS: &[&str] = &["holder", "resources", "actions", "uj", "calls", "lifetime_ms", "depth"];

fn policy_form(p: &Value, address: Digest) -> R<Policy> {
    ensure(wire::exact_members(p, POLICY_MEMBERS), "BadPolicy")?;
    let trig = p.get("triggers").and_then(Value::as_arr).ok_or(Code("BadPolicy"))?;
    ensure((1..=32).contains(&trig.len()), "BadPolicy")?;
    let triggers = trig.iter().map(trigger).collect::<R<Vec<_>>>()?;
    let t = p.get("template").ok_or(Code("BadPolicy"))?;
    let tk = t.keys();
    ensure(t.is_obj() && tk.iter().all(|k| TEMPLATE_MEMBERS.contains(k)) && tk.len() >= 6, "BadPolicy")?;
    let rate = p.get("rate").ok_or(Code("BadPolicy"))?;
    ensure(wire::exact_members(rate, &["count", "window_ms"]), "BadPolicy")?;
    let amount = |v: Option<&Value>| v.map(wire::parse_amount).transpose().ok().flatten().ok_or(Code("BadPolicy"));
    let pol = Policy {
        address,
        grant: p.get("grant").map(wire::parse_digest).transpose().ok().flatten().ok_or(Code("BadPolicy"))?,
        issuer: did(p.get("issuer"))?,
        minter: did(p.get("minter"))?,
        triggers,
        t_holder: did(t.get("holder"))?,
        t_scope: Scope { resources: strs(t.get("resources"))?, actions: strs(t.get("actions"))? },
        t_uj: amount(t.get("uj"))?,
        t_calls: t.get("calls").map(|c| int_min(Some(c), 0)).transpose()?,
        t_lifetime: int_min(t.get("lifetime_ms"), 1)?,
        t_depth: int_min(t.get("depth"), 0)?,
        max_children: int_min(p.get("max_children"), 1)?,
        max_total_uj: amount(p.get("max_total_uj"))?,
        rate_count: int_min(rate.get("count"), 1)?,
        rate_window: int_min(rate.get("window_ms"), 1)?,
        nbf_ms: int_min(p.get("nbf_ms"), 0)?,
        exp_ms: int_min(p.get("exp_ms"), 0)?,
    };
    ensure(pol.nbf_ms < pol.exp_ms && pol.t_depth <= 15, "BadPolicy")?;
    check_lists(Some(&pol.t_scope.resources), Some(&pol.t_scope.actions), "BadPolicy")?;
    Ok(pol)
}

/// An event as given: its address, its members, and its signers when it came in an envelope.
struct Event {
    address: Digest,
    body: Value,
    signers: Option<Vec<String>>,
    envelope: Option<Value>,
}

/// §4.6: a value with both a `payloadType` and a `signatures` member is an envelope (its address
/// is known once it is opened); any other value is a bare event, addressed by its own JCS bytes.
fn index_event(v: &Value) -> Event {
    if v.get("payloadType").is_some() && v.get("signatures").is_some() {
        return Event { address: [0; 32], body: Value::Null, signers: None, envelope: Some(v.clone()) };
    }
    Event { address: wire::address(v), body: v.clone(), signers: None, envelope: None }
}

/// event_form opens an envelope by §2.4 item 4 (at most 16384 payload bytes, `OversizeInput`
/// before any signature) with one signature (`BadSignature`), then checks the members (`BadEvent`).
fn event_form(ev: &mut Event) -> R<()> {
    if let Some(env) = ev.envelope.clone() {
        let want = wire::Expect { payload_type: EVENT_TYPE, limit: EVENT_LIMIT, signers: None };
        let o = wire::open_envelope(&env, &want)?;
        ensure(o.signers.len() == 1, "BadSignature")?;
        ev.address = o.address;
        ev.body = o.payload;
        ev.signers = Some(o.signers);
    }
    let b = &ev.body;
    let ok = b.is_obj()
        && b.get("type").and_then(Value::as_str).is_some()
        && b.get("source").and_then(Value::as_str).is_some()
        && b.get("at_ms").and_then(Value::as_int).has(|n| n >= 0);
    ensure(ok, "BadEvent")
}

fn entry_form(p: &Value) -> R<()> {
    let d = |n: &str| p.get(n).has(wire::is_digest);
    let ok = wire::exact_members(p, &["policy", "seq", "prev", "event", "child", "uj", "at_ms", "minter"])
        && d("policy")
        && d("prev")
        && d("event")
        && d("child")
        && p.get("seq").and_then(Value::as_int).has(|n| n >= 0)
        && p.get("at_ms").and_then(Value::as_int).has(|n| n >= 0)
        && p.get("uj").has(|v| wire::parse_amount(v).is_ok())
        && p.get("minter").has(wire::is_didkey);
    ensure(ok, "BadMintEntry")
}

/// What standing.verify is given.
pub struct Input<'a> {
    pub policy: &'a Value,
    pub held: &'a [Value],
    pub roots: &'a [String],
    pub entries: &'a [Value],
    pub events: &'a [Value],
    pub children: &'a [Value],
}

/// The verified ledger.
pub struct Ledger {
    pub policy: Digest,
    pub head: Digest,
    pub total_uj: u64,
    pub children: Vec<Digest>,
}

fn open_policy(v: &Value) -> R<Policy> {
    let o =
        wire::open_signed_by(v, POLICY_TYPE, LIMIT, "BadPolicy", "issuer", |p| policy_form(p, [0; 32]).map(|_| ()))?;
    policy_form(&o.payload, o.address)
}

fn within_template(pol: &Policy, c: &Effective, at: u64) -> R<()> {
    let ok = c.holder == pol.t_holder
        && scope_inside(&pol.t_scope, &c.scope)?
        && c.budget.uj.has(|u| u <= pol.t_uj)
        && pol.t_calls.none_or(|tc| c.budget.calls.has(|x| x <= tc))
        && c.depth <= pol.t_depth
        && c.nbf_ms == at
        && c.exp_ms - c.nbf_ms <= pol.t_lifetime;
    ensure(ok, "TemplateExceeded")
}

fn trigger_matches(pol: &Policy, ev: &Event) -> bool {
    let ty = ev.body.get("type").and_then(Value::as_str);
    let src = ev.body.get("source").and_then(Value::as_str);
    pol.triggers.iter().any(|(t, s, by)| {
        Some(t.as_str()) == ty
            && Some(s.as_str()) == src
            && by.as_ref().none_or(|k| ev.signers.as_ref().has(|ss| ss.len() == 1 && &ss[0] == k))
    })
}

/// verify checks a policy and its ledger in the order of §4.6 "Verification".
pub fn verify(i: &Input) -> R<Ledger> {
    let pol = open_policy(i.policy)?;
    let held = resolve(i.held, i.roots, None)?;
    let (hg, he): &(Grant, Effective) = held.last().ok_or(Code("BrokenChain"))?;
    ensure(pol.grant == hg.address, "BadPolicy")?;
    ensure(pol.issuer == he.issuer, "PolicyNotByIssuer")?;
    ensure(pol.minter == he.holder, "BadPolicy")?;
    // §4.6: every event, then every child, is opened in the order given before any entry is
    // looked at, so a malformed one is refused even when no entry cites it.
    let mut events: Vec<Event> = i.events.iter().map(index_event).collect();
    for ev in events.iter_mut() {
        event_form(ev)?;
    }
    let children: Vec<Grant> = i.children.iter().map(open_grant).collect::<R<_>>()?;
    let mut head = wire::chain_genesis("jcp.mintledger/1", &[pol.address]);
    let (mut total, mut times, mut cited, mut minted) = (0u64, Vec::<u64>::new(), Vec::<Digest>::new(), Vec::new());
    for (n, env) in i.entries.iter().enumerate() {
        let o = wire::open_signed_by(env, MINT_TYPE, ENTRY_LIMIT, "BadMintEntry", "minter", entry_form)?;
        let p = &o.payload;
        let dg = |k: &str| p.get(k).and_then(|v| wire::parse_digest(v).ok()).unwrap_or([0; 32]);
        let at = p.get("at_ms").and_then(Value::as_int).unwrap_or(0) as u64;
        let ev_i = events.iter().position(|e| e.address == dg("event")).ok_or(Code("BadMintEntry"))?;
        let child = children.iter().find(|c| c.address == dg("child")).ok_or(Code("BadMintEntry"))?;
        ensure(at >= he.nbf_ms, "NotYetValid")?;
        ensure(at < he.exp_ms, "Expired")?;
        ensure(child.parent == Some(hg.address), "BrokenChain")?;
        let linked = dg("policy") == pol.address
            && p.get("seq").and_then(Value::as_int) == Some(n as i64 + 1)
            && dg("prev") == head
            && times.last().none_or(|t| at >= *t);
        ensure(linked, "BrokenMintLedger")?;
        head = wire::chain_next(&head, p);
        ensure(p.get("minter").and_then(Value::as_str) == Some(pol.minter.as_str()), "BadMintEntry")?;
        ensure(at >= pol.nbf_ms, "NotYetValid")?;
        ensure(at < pol.exp_ms, "Expired")?;
        let ev = &events[ev_i];
        let ev_at = ev.body.get("at_ms").and_then(Value::as_int).unwrap_or(0) as u64;
        ensure(ev_at <= at, "BadMintEntry")?;
        ensure(!cited.contains(&ev.address), "EventReplayed")?;
        cited.push(ev.address);
        ensure(trigger_matches(&pol, ev), "TriggerMismatch")?;
        ensure(child.mint == Some((pol.address, ev.address)) && child.address == dg("child"), "BadMintEntry")?;
        let ce = child.effective(Some(he));
        child_of(he, &ce)?;
        within_template(&pol, &ce, at)?;
        let uj = wire::parse_amount(p.get("uj").ok_or(Code("BadMintEntry"))?)?;
        ensure(ce.budget.uj == Some(uj), "BadMintEntry")?;
        ensure((n as u64) < pol.max_children, "MintCapExceeded")?;
        total = wire::add(total, uj).map_err(|_| Code("MintBudgetExceeded"))?;
        ensure(total <= pol.max_total_uj, "MintBudgetExceeded")?;
        times.push(at);
        let in_window = times.iter().filter(|t| **t + pol.rate_window > at).count() as u64;
        ensure(in_window <= pol.rate_count, "RateExceeded")?;
        minted.push(child.address);
    }
    Ok(Ledger { policy: pol.address, head, total_uj: total, children: minted })
}
