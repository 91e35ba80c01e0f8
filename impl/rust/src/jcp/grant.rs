//! JCP §4.1 the grant object: opening, form, and the effective grant.

use super::pattern::{check_lists, Scope};
use crate::compat::OptionExt;
use crate::error::{ensure, fail, Code, R};
use crate::json::Value;
use crate::wire::{self, Digest};

/// §4.1: a grant's payload is at most 8192 bytes.
pub const GRANT_LIMIT: usize = 8192;
pub const GRANT_TYPE: &str = "application/vnd.jcp.grant+json";

/// A budget, each dimension `None` when unlimited (or, in a stated grant, left out).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Budget {
    pub uj: Option<u64>,
    pub calls: Option<u64>,
    pub wall_ms: Option<u64>,
}

/// An opened grant as stated: members left out are None.
#[derive(Clone, Debug)]
pub struct Grant {
    pub address: Digest,
    pub payload: Value,
    pub issuer: String,
    pub holder: String,
    pub parent: Option<Digest>,
    pub resources: Option<Vec<String>>,
    pub actions: Option<Vec<String>>,
    pub budget: Budget,
    pub nbf_ms: Option<u64>,
    pub exp_ms: u64,
    pub depth: Option<u64>,
    pub mint: Option<(Digest, Digest)>,
}

/// An effective grant (§4.1 "Omission inherits"): every member resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Effective {
    pub address: Digest,
    pub issuer: String,
    pub holder: String,
    pub parent: Option<Digest>,
    pub scope: Scope,
    pub budget: Budget,
    pub nbf_ms: u64,
    pub exp_ms: u64,
    pub depth: u64,
}

const MEMBERS: &[&str] =
    &["issuer", "holder", "parent", "scope", "budget", "nbf_ms", "exp_ms", "depth", "nonce", "mint"];

/// The length of GRANT_LIMIT bytes in base64: 4·⌈8192/3⌉.
const GRANT_TEXT_LIMIT: usize = 10924;

/// open_grant opens a grant envelope in the order of §4.1.
pub fn open_grant(env: &Value) -> R<Grant> {
    let raw = wire::parse_envelope_raw(env)?;
    ensure(raw.payload_type == GRANT_TYPE, "WrongPayloadType")?;
    // §4.1: the size is checked first on the base64 text, whatever its characters (10924
    // characters, counted in UTF-16 code units as sandbox-attest §2.9 says, carry 8192 bytes),
    // then the signature count, then the decoded bytes.
    ensure(wire::text_len(raw.payload_text) <= GRANT_TEXT_LIMIT, "GrantTooLarge")?;
    ensure(raw.sigs.len() == 1, "BadSignature")?;
    let e = raw.decode()?;
    ensure(e.payload.len() <= GRANT_LIMIT, "GrantTooLarge")?;
    let signers = e.verify_signatures()?;
    let payload = crate::json::parse_canonical(&e.payload, GRANT_LIMIT)?;
    let g = grant_form(&payload, wire::blake3(&e.payload))?;
    ensure(signers[0] == g.issuer, "BadSignature")?;
    Ok(g)
}

fn non_neg(v: &Value) -> R<u64> {
    match v.as_int() {
        Some(n) if n >= 0 => Ok(n as u64),
        _ => fail("BadGrant"),
    }
}

fn string_list(v: &Value) -> R<Vec<String>> {
    let a = v.as_arr().ok_or(Code("BadGrant"))?;
    a.iter().map(|x| x.as_str().map(str::to_string).ok_or(Code("BadGrant"))).collect()
}

fn did(p: &Value, name: &str) -> R<String> {
    let s = p.get(name).and_then(Value::as_str).ok_or(Code("BadGrant"))?;
    wire::didkey_decode(s).map_err(|_| Code("BadGrant"))?;
    Ok(s.to_string())
}

fn budget_form(v: &Value) -> R<Budget> {
    let keys = v.keys();
    ensure(v.is_obj() && !keys.is_empty(), "BadGrant")?;
    ensure(keys.iter().all(|k| ["uj", "calls", "wall_ms"].contains(k)), "BadGrant")?;
    let uj = v.get("uj").map(|x| wire::parse_amount(x).map_err(|_| Code("BadGrant"))).transpose()?;
    Ok(Budget {
        uj,
        calls: v.get("calls").map(non_neg).transpose()?,
        wall_ms: v.get("wall_ms").map(non_neg).transpose()?,
    })
}

type Lists = (Option<Vec<String>>, Option<Vec<String>>);

/// scope_form is §4.1 form item 4: an object of one or both lists, then the resource list
/// (`BadGrant`), each pattern in list order (`BadPattern`), then the action list (`BadGrant`) —
/// the order §4.2 checks a scope in.
fn scope_form(v: &Value) -> R<Lists> {
    let keys = v.keys();
    ensure(v.is_obj() && !keys.is_empty(), "BadGrant")?;
    ensure(keys.iter().all(|k| ["resources", "actions"].contains(k)), "BadGrant")?;
    let resources = v.get("resources").map(string_list).transpose()?;
    if let Some(r) = resources.as_deref() {
        check_lists(Some(r), None, "BadGrant")?;
    }
    let actions = v.get("actions").map(string_list).transpose()?;
    if let Some(a) = actions.as_deref() {
        check_lists(None, Some(a), "BadGrant")?;
    }
    Ok((resources, actions))
}

fn nonce_ok(v: Option<&Value>) -> bool {
    v.and_then(Value::as_str)
        .has(|s| s.len() == 32 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
}

fn mint_form(v: &Value) -> R<(Digest, Digest)> {
    ensure(wire::exact_members(v, &["policy", "event"]), "BadGrant")?;
    let d = |n: &str| v.get(n).map(wire::parse_digest).transpose().ok().flatten().ok_or(Code("BadGrant"));
    Ok((d("policy")?, d("event")?))
}

/// grant_form checks the §4.1 form member by member, in the spec's order (items 1–11): member
/// names, issuer, holder, parent, scope (with its patterns, `BadPattern`), budget, exp_ms, a stated
/// nbf_ms below exp_ms, depth, nonce, mint, and last a root's required members. Every fault but a
/// pattern's is `BadGrant`.
pub fn grant_form(p: &Value, address: Digest) -> R<Grant> {
    ensure(p.is_obj() && p.keys().iter().all(|k| MEMBERS.contains(k)), "BadGrant")?;
    let issuer = did(p, "issuer")?;
    let holder = did(p, "holder")?;
    let parent = match p.get("parent") {
        Some(Value::Null) => None,
        Some(v) => Some(wire::parse_digest(v).map_err(|_| Code("BadGrant"))?),
        None => return fail("BadGrant"),
    };
    let (resources, actions) = p.get("scope").map(scope_form).transpose()?.unwrap_or((None, None));
    let budget = p.get("budget").map(budget_form).transpose()?;
    let exp_ms = non_neg(p.get("exp_ms").ok_or(Code("BadGrant"))?)?;
    // Item 7: only a stated nbf_ms is compared; a window left empty by an omitted one opens and
    // chain verification refuses it (§4.4).
    let nbf_ms = p.get("nbf_ms").map(non_neg).transpose()?;
    ensure(nbf_ms.none_or(|n| n < exp_ms), "BadGrant")?;
    let depth = p.get("depth").map(non_neg).transpose()?;
    ensure(depth.none_or(|d| d <= 15), "BadGrant")?;
    ensure(nonce_ok(p.get("nonce")), "BadGrant")?;
    let mint = match p.get("mint") {
        Some(m) => {
            ensure(parent.is_some(), "BadGrant")?;
            Some(mint_form(m)?)
        }
        None => None,
    };
    if parent.is_none() {
        let full_scope = resources.is_some() && actions.is_some();
        ensure(full_scope && budget.has(|b| b.uj.is_some()) && depth.is_some(), "BadGrant")?;
    }
    Ok(Grant {
        address,
        payload: p.clone(),
        issuer,
        holder,
        parent,
        resources,
        actions,
        budget: budget.unwrap_or_default(),
        nbf_ms,
        exp_ms,
        depth,
        mint,
    })
}

impl Grant {
    /// effective resolves a root (parent None) or a child against its parent's effective grant.
    /// A child's omitted depth is the parent's minus one, saturating at 0 is not done here: the
    /// caller's depth check refuses a parent of depth 0 first.
    pub fn effective(&self, parent: Option<&Effective>) -> Effective {
        let inherit = |own: Option<u64>, from: Option<u64>| own.or(from);
        match parent {
            None => Effective {
                address: self.address,
                issuer: self.issuer.clone(),
                holder: self.holder.clone(),
                parent: self.parent,
                scope: Scope {
                    resources: self.resources.clone().unwrap_or_default(),
                    actions: self.actions.clone().unwrap_or_default(),
                },
                budget: self.budget,
                nbf_ms: self.nbf_ms.unwrap_or(0),
                exp_ms: self.exp_ms,
                depth: self.depth.unwrap_or(0),
            },
            Some(p) => Effective {
                address: self.address,
                issuer: self.issuer.clone(),
                holder: self.holder.clone(),
                parent: self.parent,
                scope: Scope {
                    resources: self.resources.clone().unwrap_or_else(|| p.scope.resources.clone()),
                    actions: self.actions.clone().unwrap_or_else(|| p.scope.actions.clone()),
                },
                budget: Budget {
                    uj: inherit(self.budget.uj, p.budget.uj),
                    calls: inherit(self.budget.calls, p.budget.calls),
                    wall_ms: inherit(self.budget.wall_ms, p.budget.wall_ms),
                },
                nbf_ms: self.nbf_ms.unwrap_or(p.nbf_ms),
                exp_ms: self.exp_ms,
                depth: self.depth.unwrap_or(p.depth.saturating_sub(1)),
            },
        }
    }
}

/// effective_value writes an effective grant as `chain.verify` answers it: `uj` as a string,
/// unlimited as null.
pub fn effective_value(e: &Effective) -> Value {
    let opt_int = |x: Option<u64>| x.map(|n| Value::Num(n as f64)).unwrap_or(Value::Null);
    let strs = |l: &[String]| Value::Arr(l.iter().map(|s| Value::str(s)).collect());
    Value::obj(vec![
        ("address", wire::digest_value(&e.address)),
        ("issuer", Value::str(&e.issuer)),
        ("holder", Value::str(&e.holder)),
        ("parent", e.parent.map(|d| wire::digest_value(&d)).unwrap_or(Value::Null)),
        ("scope", Value::obj(vec![("resources", strs(&e.scope.resources)), ("actions", strs(&e.scope.actions))])),
        (
            "budget",
            Value::obj(vec![
                ("uj", e.budget.uj.map(wire::amount).unwrap_or(Value::Null)),
                ("calls", opt_int(e.budget.calls)),
                ("wall_ms", opt_int(e.budget.wall_ms)),
            ]),
        ),
        ("nbf_ms", Value::Num(e.nbf_ms as f64)),
        ("exp_ms", Value::Num(e.exp_ms as f64)),
        ("depth", Value::Num(e.depth as f64)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(extra: &str) -> Result<Grant, Code> {
        form_exp(10, extra)
    }

    fn form_exp(exp: u64, extra: &str) -> Result<Grant, Code> {
        let k = wire::didkey_encode(&wire::testkey_public("root-issuer"));
        let text = format!(
            r#"{{"issuer":"{k}","holder":"{k}","parent":null,"exp_ms":{exp},"nonce":"{}"{extra}}}"#,
            "0".repeat(32)
        );
        grant_form(&crate::json::parse_strict(text.as_bytes()).unwrap(), wire::blake3(b""))
    }

    // jcp §4.1 form items 4–11: the scope's patterns come before its action list and every later
    // member; a root's window left empty by its default nbf_ms opens.
    #[test]
    fn form_order() {
        let ok = r#","scope":{"resources":["/a/**"],"actions":["read"]},"budget":{"uj":"1"},"depth":1"#;
        assert!(form(ok).is_ok());
        let bad_pattern_and_actions = r#","scope":{"resources":["/a/../b"],"actions":["write","read"]}"#;
        assert_eq!(form(bad_pattern_and_actions).unwrap_err(), Code("BadPattern"));
        let bad_pattern_and_budget = r#","scope":{"resources":["/a/../b"],"actions":["read"]},"budget":{"uj":5}"#;
        assert_eq!(form(bad_pattern_and_budget).unwrap_err(), Code("BadPattern"));
        assert_eq!(form(r#","scope":{"resources":["/a/../b"]},"x":1"#).unwrap_err(), Code("BadGrant"));
        assert_eq!(form(r#","scope":{"resources":["/a/../b"]}"#).unwrap_err(), Code("BadPattern"));
        assert!(form_exp(0, ok).is_ok());
        assert_eq!(form_exp(0, &format!("{ok},\"nbf_ms\":0")).unwrap_err(), Code("BadGrant"));
        assert_eq!(form(&format!("{ok},\"nbf_ms\":10")).unwrap_err(), Code("BadGrant"));
    }

    // sandbox-attest §2.9: characters are UTF-16 code units.
    #[test]
    fn text_len_counts_utf16_units() {
        assert_eq!(wire::text_len("abc"), 3);
        assert_eq!(wire::text_len("é"), 1);
        assert_eq!(wire::text_len("\u{1F600}"), 2);
    }
}
