//! C11–C19 ops: JCP §4.1–§4.5.

use super::input::{need, need_arr, need_str, opt, strings};
use crate::error::{ensure, Code, R};
use crate::jcp::{chain, checkpoint, grant, grantset, pattern, revoke, spend, standing};
use crate::json::Value;
use crate::wire;

/// call performs a C11–C19 op, or returns None when `op` is not one.
pub fn call(op: &str, input: &Value) -> Option<R<Value>> {
    Some(match op {
        "grant.open" => grant_open(input),
        "pattern.covers" => pattern_covers(input),
        "scope.covers" => scope_covers(input),
        "budget.within" => budget_within(input),
        "chain.verify" => chain_verify(input),
        "spend.replay" => spend_replay(input),
        "revocations.verify" => revocations_verify(input),
        "grantset.id" => need_arr(input, "grants").and_then(|g| grantset::set_id(g)).map(id_out),
        "standing.verify" => standing_verify(input),
        "checkpoint.verify" => checkpoint_verify(input),
        "grantset.check" => need(input, "doc").and_then(grantset::check_doc).map(id_out),
        _ => return None,
    })
}

fn id_out(d: wire::Digest) -> Value {
    Value::obj(vec![("grants_id", wire::digest_value(&d))])
}

fn grant_open(input: &Value) -> R<Value> {
    let g = grant::open_grant(need(input, "envelope")?)?;
    Ok(Value::obj(vec![("address", wire::digest_value(&g.address)), ("payload", g.payload)]))
}

fn pattern_covers(input: &Value) -> R<Value> {
    let c = pattern::pattern_covers(need_str(input, "parent")?, need_str(input, "child")?)?;
    Ok(Value::obj(vec![("covers", Value::Bool(c))]))
}

fn scope_of(v: &Value) -> R<pattern::Scope> {
    Ok(pattern::Scope { resources: strings(need(v, "resources")?)?, actions: strings(need(v, "actions")?)? })
}

fn scope_covers(input: &Value) -> R<Value> {
    let c = pattern::scope_covers(&scope_of(need(input, "parent")?)?, &scope_of(need(input, "child")?)?)?;
    Ok(Value::obj(vec![("covers", Value::Bool(c))]))
}

/// effective_budget reads a budget in its effective form (§4.3): exactly uj (an amount), calls and
/// wall_ms (each an integer ≥ 0 or null), else `BadGrant`.
fn effective_budget(v: &Value) -> R<grant::Budget> {
    ensure(wire::exact_members(v, &["uj", "calls", "wall_ms"]), "BadGrant")?;
    let limit = |name: &str| -> R<Option<u64>> {
        match need(v, name)? {
            Value::Null => Ok(None),
            x => x.as_int().filter(|n| *n >= 0).map(|n| Some(n as u64)).ok_or(Code("BadGrant")),
        }
    };
    let uj = wire::parse_amount(need(v, "uj")?).map_err(|_| Code("BadGrant"))?;
    Ok(grant::Budget { uj: Some(uj), calls: limit("calls")?, wall_ms: limit("wall_ms")? })
}

fn budget_within(input: &Value) -> R<Value> {
    let p = effective_budget(need(input, "parent")?)?;
    let c = effective_budget(need(input, "child")?)?;
    Ok(Value::obj(vec![("within", Value::Bool(chain::budget_within(&p, &c)))]))
}

/// time reads a non-negative integer time member.
pub fn time(input: &Value, name: &str) -> R<u64> {
    need(input, name)?.as_int().filter(|n| *n >= 0).map(|n| n as u64).ok_or(Code("BadInput"))
}

/// revocations reads and verifies an optional revocation list given as entries.
pub fn revocations(input: &Value) -> R<Vec<revoke::Revocation>> {
    match opt(input, "revocations") {
        None => Ok(vec![]),
        Some(v) => Ok(revoke::verify_list(v.as_arr().ok_or(Code("BadInput"))?, None)?.entries),
    }
}

fn chain_verify(input: &Value) -> R<Value> {
    let roots = strings(need(input, "roots")?)?;
    let revs = revocations(input)?;
    let g = chain::verify_chain(need_arr(input, "chain")?, &roots, time(input, "at_ms")?, &revs, None)?;
    Ok(Value::obj(vec![("grants", Value::Arr(g.iter().map(grant::effective_value).collect()))]))
}

fn spend_replay(input: &Value) -> R<Value> {
    let roots = strings(need(input, "roots")?)?;
    let hosts = strings(need(input, "hosts")?)?;
    let revs = revocations(input)?;
    let r = spend::Replay {
        grants: need_arr(input, "grants")?,
        roots: &roots,
        hosts: &hosts,
        revocations: &revs,
        hook: None,
    };
    let (remaining, overshoot) = spend::replay(&r, need_arr(input, "receipts")?)?;
    Ok(Value::obj(vec![("remaining", remaining), ("overshoot", overshoot)]))
}

fn revocations_verify(input: &Value) -> R<Value> {
    let l = revoke::verify_list(need_arr(input, "entries")?, prefix(input)?)?;
    Ok(Value::obj(vec![("head", wire::digest_value(&l.head)), ("length", Value::Num(l.entries.len() as f64))]))
}

fn standing_verify(input: &Value) -> R<Value> {
    let roots = strings(need(input, "roots")?)?;
    let i = standing::Input {
        policy: need(input, "policy")?,
        held: need_arr(input, "held")?,
        roots: &roots,
        entries: need_arr(input, "entries")?,
        events: need_arr(input, "events")?,
        children: need_arr(input, "children")?,
    };
    let l = standing::verify(&i)?;
    Ok(Value::obj(vec![
        ("policy", wire::digest_value(&l.policy)),
        ("head", wire::digest_value(&l.head)),
        ("length", Value::Num(l.children.len() as f64)),
        ("total_uj", wire::amount(l.total_uj)),
        ("children", Value::Arr(l.children.iter().map(wire::digest_value).collect())),
    ]))
}

/// prefix reads an optional `{length, head}`.
pub fn prefix(input: &Value) -> R<Option<(usize, wire::Digest)>> {
    match opt(input, "prefix") {
        None => Ok(None),
        Some(p) => {
            let n = need(p, "length")?.as_int().filter(|n| *n >= 0).ok_or(Code("BadInput"))?;
            Ok(Some((n as usize, wire::parse_digest(need(p, "head")?)?)))
        }
    }
}

fn checkpoint_verify(input: &Value) -> R<Value> {
    let roots = strings(need(input, "roots")?)?;
    let i = checkpoint::Input {
        chain: need_arr(input, "chain")?,
        roots: &roots,
        at_ms: time(input, "at_ms")?,
        entries: need_arr(input, "entries")?,
        log_of: opt(input, "log_of")
            .map(|v| v.as_int().filter(|n| *n >= 0).map(|n| n as usize).ok_or(Code("BadInput")))
            .transpose()?,
        prefix: prefix(input)?,
    };
    let l = checkpoint::verify(&i)?;
    Ok(Value::obj(vec![
        ("head", wire::digest_value(&l.head)),
        ("length", Value::Num(l.length as f64)),
        ("amendments", Value::Num(l.amendments as f64)),
        ("grants", Value::Arr(l.grants.iter().map(grant::effective_value).collect())),
    ]))
}
