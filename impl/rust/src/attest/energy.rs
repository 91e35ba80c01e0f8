//! §6 energy: components and their provenance, models, receipts and receipt chains.

use crate::compat::OptionExt;
use crate::error::{ensure, fail, Code, R};
use crate::json::Value;
use crate::wire::{self, Digest};

pub const RECEIPT_TYPE: &str = "application/vnd.sandbox-attest.energy-receipt+json";

/// Provenance, weakest last (§6.2 item 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Provenance {
    Measured,
    Attributed,
    Estimated,
}

impl Provenance {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "measured" => Some(Self::Measured),
            "attributed" => Some(Self::Attributed),
            "estimated" => Some(Self::Estimated),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Measured => "measured",
            Self::Attributed => "attributed",
            Self::Estimated => "estimated",
        }
    }
}

/// weakest is the provenance of a sum (§6.2 item 4): estimated when empty.
pub fn weakest(parts: &[Provenance]) -> Provenance {
    if parts.is_empty() {
        return Provenance::Estimated;
    }
    *parts.iter().max().unwrap_or(&Provenance::Estimated)
}

/// mul_div computes ⌊a × b / d⌋ exactly for a, b < 2¹²⁸ (d > 0), or None when the quotient does
/// not fit in 128 bits.
pub fn mul_div(a: u128, b: u128, d: u128) -> Option<u128> {
    // 256-bit product as four 64-bit limbs, little-endian.
    let (a0, a1) = (a as u64 as u128, a >> 64);
    let (b0, b1) = (b as u64 as u128, b >> 64);
    let mut p = [0u128; 4];
    for (i, x) in [a0, a1].iter().enumerate() {
        for (j, y) in [b0, b1].iter().enumerate() {
            let mut carry = x * y;
            let mut k = i + j;
            while carry != 0 {
                let s = p[k] + (carry & 0xffff_ffff_ffff_ffff);
                p[k] = s & 0xffff_ffff_ffff_ffff;
                carry = (carry >> 64) + (s >> 64);
                k += 1;
            }
        }
    }
    // Long division bit by bit.
    let (mut q, mut r) = (0u128, 0u128);
    for bit in (0..256).rev() {
        let top = r >> 127;
        r = (r << 1) | ((p[bit / 64] >> (bit % 64)) & 1);
        if top == 1 || r >= d {
            r = r.wrapping_sub(d);
            if bit >= 128 {
                return None;
            }
            q |= 1 << bit;
        }
    }
    Some(q)
}

fn amount(v: Option<&Value>) -> R<u64> {
    wire::parse_amount(v.ok_or(Code("BadAmount"))?)
}

fn coefficient(c: &Value, name: &str) -> R<u128> {
    c.get(name).and_then(Value::as_int).filter(|n| *n >= 0).map(|n| n as u128).ok_or(Code("BadCoefficients"))
}

/// model_uj evaluates a §6.3 model exactly, checking its inputs and coefficients.
pub fn model_uj(model: &Value) -> R<u128> {
    let name = model.get("name").and_then(Value::as_str).ok_or(Code("UnknownModel"))?;
    let (input, coeffs): (&str, &[&str]) = match name {
        "ccf.cpu/1" => ("vcpu_us", &["min_uw_per_vcpu", "max_uw_per_vcpu", "utilisation_ppm"]),
        "ccf.memory/1" => ("kib_ms", &["uw_per_gib"]),
        "ccf.storage/1" => ("mib_s", &["uw_per_tib"]),
        _ => return fail("UnknownModel"),
    };
    let (i, c) = (model.get("inputs").unwrap_or(&Value::Null), model.get("coefficients").unwrap_or(&Value::Null));
    ensure(wire::exact_members(i, &[input]) && wire::exact_members(c, coeffs), "BadCoefficients")?;
    let x = wire::parse_amount(i.get(input).unwrap_or(&Value::Null))? as u128;
    let k: Vec<u128> = coeffs.iter().map(|n| coefficient(c, n)).collect::<R<_>>()?;
    let out = match name {
        "ccf.cpu/1" => {
            let (min, max, u) = (k[0], k[1], k[2]);
            ensure(min <= max && u <= 1_000_000, "BadCoefficients")?;
            mul_div(x, min * 1_000_000 + u * (max - min), 1_000_000_000_000)
        }
        "ccf.memory/1" => mul_div(x, k[0], (1 << 20) * 1000),
        _ => mul_div(x, k[0], 1 << 20),
    };
    out.ok_or(Code("EstimateMismatch"))
}

const DOMAINS: &[&str] = &["cpu", "memory", "storage", "gpu", "idle", "warmpool"];

fn backing_ok(p: Provenance, c: &Value) -> bool {
    let has = |n: &str| c.get(n).is_some();
    match p {
        Provenance::Measured => !has("ratio") && !has("shared_uj") && !has("model"),
        Provenance::Attributed => has("ratio") && has("shared_uj") && !has("model"),
        Provenance::Estimated => {
            let m = c.get("model");
            !has("ratio") && !has("shared_uj") && m.has(|m| wire::exact_members(m, &["name", "inputs", "coefficients"]))
        }
    }
}

fn attributed(c: &Value, uj: u64) -> R<()> {
    let r = c.get("ratio").unwrap_or(&Value::Null);
    ensure(wire::exact_members(r, &["numerator", "denominator", "basis"]), "BadRatio")?;
    // §6.2 item 5: `basis` a string of 1–256 characters, counted as `source` is.
    ensure(r.get("basis").and_then(Value::as_str).has(|b| (1..=256).contains(&crate::wire::text_len(b))), "BadRatio")?;
    let (num, den, shared) = (amount(r.get("numerator"))?, amount(r.get("denominator"))?, amount(c.get("shared_uj"))?);
    ensure(den != 0, "BadRatio")?;
    ensure(num <= den, "RatioAboveOne")?;
    ensure(mul_div(shared as u128, num as u128, den as u128) == Some(uj as u128), "AttributionMismatch")
}

/// check_component verifies one component in the order of §6.2 item 5; returns (uj, provenance).
pub fn check_component(c: &Value) -> R<(u64, Provenance)> {
    ensure(c.is_obj(), "BadComponent")?;
    let p = c.get("provenance").and_then(Value::as_str).and_then(Provenance::parse).ok_or(Code("BadProvenance"))?;
    ensure(backing_ok(p, c), "BadProvenance")?;
    let backing: &[&str] = match p {
        Provenance::Measured => &[],
        Provenance::Attributed => &["ratio", "shared_uj"],
        Provenance::Estimated => &["model"],
    };
    let base = ["domain", "uj", "provenance", "source", "ref"];
    ensure(c.keys().iter().all(|k| base.contains(k) || backing.contains(k)), "BadComponent")?;
    ensure(c.get("domain").and_then(Value::as_str).has(|d| DOMAINS.contains(&d)), "BadComponent")?;
    let uj = amount(c.get("uj"))?;
    let src_ok = c.get("source").and_then(Value::as_str).has(|s| (1..=256).contains(&crate::wire::text_len(s)));
    ensure(src_ok && c.get("ref").none_or(wire::is_digest), "BadComponent")?;
    match p {
        Provenance::Attributed => attributed(c, uj)?,
        Provenance::Estimated => {
            let m = model_uj(c.get("model").unwrap_or(&Value::Null))?;
            ensure(m == uj as u128, "EstimateMismatch")?;
        }
        Provenance::Measured => {}
    }
    Ok((uj, p))
}

/// A verified receipt.
#[derive(Clone, Debug)]
pub struct Receipt {
    pub address: Digest,
    pub payload: Value,
    pub unit_id: Digest,
    pub grants_id: Digest,
    pub seq: i64,
    pub prev: Digest,
    pub host: String,
    pub start_ms: i64,
    pub end_ms: i64,
    pub total_uj: u64,
    pub provenance: Provenance,
}

const RECEIPT_MEMBERS: &[&str] =
    &["unit_id", "grants_id", "seq", "prev", "host", "start_ms", "end_ms", "components", "total_uj", "absent"];

fn absent_ok(v: &Value) -> bool {
    v.as_arr().has(|a| {
        let s: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
        a.len() <= 32
            && s.len() == a.len()
            && s.iter().all(|x| (1..=64).contains(&crate::wire::text_len(x)))
            && s.windows(2).all(|w| crate::json::cmp_utf16(w[0], w[1]) == std::cmp::Ordering::Less)
    })
}

/// verify_receipt checks a signed receipt in the order of §6.1 item 6.
pub fn verify_receipt(env: &Value, hosts: Option<&[String]>) -> R<Receipt> {
    let want = wire::Expect { payload_type: RECEIPT_TYPE, limit: crate::json::DEFAULT_LIMIT, signers: hosts };
    let o = wire::open_envelope(env, &want)?;
    let p = &o.payload;
    let (total, provenance) = receipt_form(p)?;
    let int = |n: &str| p.get(n).and_then(Value::as_int).filter(|x| *x >= 0);
    let (start, end) = (int("start_ms").unwrap_or(0), int("end_ms").unwrap_or(0));
    let host = p.get("host").and_then(Value::as_str).unwrap_or("").to_string();
    ensure(o.signers.contains(&host), "ReceiptNotByHost")?;
    let d = |n: &str| wire::parse_digest(p.get(n).unwrap_or(&Value::Null));
    Ok(Receipt {
        address: o.address,
        unit_id: d("unit_id")?,
        grants_id: d("grants_id")?,
        seq: int("seq").unwrap_or(0),
        prev: d("prev")?,
        host,
        start_ms: start,
        end_ms: end,
        total_uj: total,
        provenance,
        payload: o.payload,
    })
}

/// receipt_form checks a receipt payload's form, the §6.1 item 6 checks after the envelope and
/// before the signer (`BadEnergyReceipt`, `EnergyBadInterval`, component codes,
/// `EnergyTotalMismatch`); returns its total and weakest provenance.
pub fn receipt_form(p: &Value) -> R<(u64, Provenance)> {
    let int = |n: &str| p.get(n).and_then(Value::as_int).filter(|x| *x >= 0);
    let form = wire::exact_members(p, RECEIPT_MEMBERS)
        && p.get("unit_id").has(wire::is_digest)
        && p.get("grants_id").has(wire::is_digest)
        && p.get("prev").has(wire::is_digest)
        && p.get("host").has(wire::is_didkey)
        && int("seq").is_some()
        && int("start_ms").is_some()
        && int("end_ms").is_some()
        && p.get("components").and_then(Value::as_arr).has(|c| c.len() <= 256);
    ensure(form, "BadEnergyReceipt")?;
    let (start, end) = (int("start_ms").unwrap_or(0), int("end_ms").unwrap_or(0));
    ensure(end >= start, "EnergyBadInterval")?;
    ensure(absent_ok(p.get("absent").unwrap_or(&Value::Null)), "BadEnergyReceipt")?;
    // §6.1 item 6: the sum is exact (at most 256 components of at most 2⁶⁴−1 fit in a u128), so
    // components summing above 2⁶⁴−1 equal no total: EnergyTotalMismatch, never AmountOverflow.
    let (mut sum, mut provs) = (0u128, Vec::new());
    for c in p.get("components").and_then(Value::as_arr).map(Vec::as_slice).unwrap_or(&[]) {
        let (uj, pv) = check_component(c)?;
        sum += u128::from(uj);
        provs.push(pv);
    }
    let total = amount(p.get("total_uj"))?;
    ensure(u128::from(total) == sum, "EnergyTotalMismatch")?;
    Ok((total, weakest(&provs)))
}

/// genesis is head₀ of a run's receipt chain (§6.4 item 1).
pub fn genesis(unit_id: &Digest, grants_id: &Digest) -> Digest {
    wire::chain_genesis("sandbox.energy/1", &[*unit_id, *grants_id])
}

/// A verified chain: final head, count and total.
pub struct Chain {
    pub head: Digest,
    pub count: usize,
    pub total_uj: u64,
    pub receipts: Vec<Receipt>,
}

/// verify_chain opens every receipt, then walks them (§6.4 item 3).
pub fn verify_chain(
    envs: &[Value],
    unit_id: &Digest,
    grants_id: &Digest,
    hosts: Option<&[String]>,
    want_head: Option<&Digest>,
) -> R<Chain> {
    let rs: Vec<Receipt> = envs.iter().map(|e| verify_receipt(e, hosts)).collect::<R<_>>()?;
    let mut head = genesis(unit_id, grants_id);
    let mut total = 0u64;
    for (i, r) in rs.iter().enumerate() {
        ensure(r.unit_id == *unit_id && r.grants_id == *grants_id, "EnergyChainSplice")?;
        let expect = i as i64;
        if r.seq > expect {
            let later = rs[i + 1..].iter().any(|x| x.seq == expect);
            return fail(if later { "EnergyChainReorder" } else { "EnergyChainGap" });
        }
        ensure(r.seq == expect, "EnergyChainReorder")?;
        ensure(r.prev == head, "EnergyChainSplice")?;
        ensure(i == 0 || r.start_ms >= rs[i - 1].end_ms, "EnergyIntervalOverlap")?;
        head = wire::chain_next(&head, &r.payload);
        total = wire::add(total, r.total_uj)?;
    }
    if let Some(h) = want_head {
        ensure(*h == head, "EnergyChainHeadMismatch")?;
    }
    Ok(Chain { head, count: rs.len(), total_uj: total, receipts: rs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mul_div_matches_u128_where_it_fits() {
        for (a, b, d) in [(7u128, 9u128, 4u128), (1 << 100, 3, 7), (u64::MAX as u128, u64::MAX as u128, 1 << 70)] {
            assert_eq!(mul_div(a, b, d), Some(a * b / d));
        }
        // 2¹²⁰ × 2¹²⁰ / 2¹²⁰ = 2¹²⁰: the product does not fit 128 bits, the quotient does.
        assert_eq!(mul_div(1 << 120, 1 << 120, 1 << 120), Some(1 << 120));
        assert_eq!(mul_div(1 << 120, 1 << 120, 1), None);
    }
}
